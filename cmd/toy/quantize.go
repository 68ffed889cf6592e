// toy quantize: convert a model's weight matrices to another type.

package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

func quantizeFlagSet() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	typ := fs.String("type", "q8_0", "target type: q8_0, q5_1, q5_0, q4_1, q4_0, f16, bf16 or f32")
	return fs, typ
}

func runQuantize(args []string, stdout io.Writer) error {
	fs, typ := quantizeFlagSet()
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: toy quantize IN.gguf OUT.gguf [--type q8_0|q5_1|q5_0|q4_1|q4_0|f16|bf16|f32]", errUsage)
	}
	types := map[string]tensor.DType{"q8_0": tensor.Q8_0, "q5_1": tensor.Q5_1, "q5_0": tensor.Q5_0, "q4_1": tensor.Q4_1,
		"q4_0": tensor.Q4_0, "f16": tensor.F16, "bf16": tensor.BF16, "f32": tensor.F32}
	t, ok := types[strings.ToLower(*typ)]
	if !ok {
		return fmt.Errorf("%w: --type %q (q8_0, q5_1, q5_0, q4_1, q4_0, f16, bf16, f32)", errUsage, *typ)
	}
	f, err := gguf.Open(pos[0])
	if err != nil {
		return fmt.Errorf("load %s: %w", pos[0], err)
	}
	defer f.Close()
	w, err := gguf.Quantize(f, t)
	if err != nil {
		return err
	}
	if err := w.WriteFile(pos[1]); err != nil {
		return failure(err)
	}
	fmt.Fprintf(stdout, "wrote %s (%v)\n", pos[1], t)
	return nil
}
