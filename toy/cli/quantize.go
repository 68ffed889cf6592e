// toy quantize: convert a model's weights to one of llama.cpp's file types
// (Q4_K_M, IQ4_XS, Q8_0, …), writing what llama-quantize writes.

package cli

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// quantizeUsage lists the file types toy quantize writes.
var quantizeUsage = "toy quantize IN.gguf OUT.gguf [--type " + strings.Join(fileTypeNames(), "|") + "] [--imatrix FILE] [--pure] [--allow-requantize]" +
	" [--output-tensor-type T] [--token-embedding-type T] [--tensor-type PATTERN=T]… [--leave-output-tensor]"

func fileTypeNames() []string {
	var names []string
	for _, ft := range gguf.FileTypes() {
		names = append(names, strings.ToLower(ft.String()))
	}
	return names
}

type quantizeFlags struct {
	typ                *string
	pure               *bool
	requantize         *bool
	imatrix            *string
	output, embeddings *string
	tensorTypes        *stringList
	leaveOutput        *bool
}

func quantizeFlagSet() (*flag.FlagSet, quantizeFlags) {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fl := quantizeFlags{
		typ: fs.String("type", "q8_0", "llama.cpp file type, any case: "+strings.Join(fileTypeNames(), ", ")+
			" (q4_k_m: Q4_K with Q6_K where llama-quantize puts it)"),
		pure:       fs.Bool("pure", false, "every quantizable matrix the type's base type, no per-tensor mix (llama-quantize --pure)"),
		requantize: fs.Bool("allow-requantize", false, "also convert tensors that are already quantized (loses accuracy)"),
		imatrix: fs.String("imatrix", "", "an importance matrix (toy imatrix, llama-imatrix: GGUF or .dat) that weights the rounding "+
			"toward the columns the model leans on"),
		output:      fs.String("output-tensor-type", "", "the head's type (q8_0, q6_k, f16, …), whatever the mix says"),
		embeddings:  fs.String("token-embedding-type", "", "the token embeddings' type, whatever the mix says"),
		tensorTypes: new(stringList),
		leaveOutput: fs.Bool("leave-output-tensor", false, "keep output.weight as it is"),
	}
	fs.Var(fl.tensorTypes, "tensor-type", "PATTERN=TYPE: the matrices whose names the regular expression matches get TYPE "+
		"(repeatable; the first match wins; attn_v=q8_0, blk\\.[0-3]\\.ffn_down=q6_k)")
	return fs, fl
}

// runQuantize quantizes IN to OUT as llama-quantize IN OUT TYPE does
// and prints what it did.
func runQuantize(args []string, stdout io.Writer) error {
	fs, fl := quantizeFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: %s", errUsage, quantizeUsage)
	}
	ft, err := gguf.ParseFileType(*fl.typ)
	if err != nil {
		return fmt.Errorf("%w: --type: %w", errUsage, err)
	}
	opt := gguf.QuantizeOptions{FileType: ft, Pure: *fl.pure, AllowRequantize: *fl.requantize, LeaveOutput: *fl.leaveOutput}
	for _, d := range []struct {
		flag, value string
		dst         **tensor.DType
	}{{"--output-tensor-type", *fl.output, &opt.OutputType}, {"--token-embedding-type", *fl.embeddings, &opt.TokenEmbeddingType}} {
		if d.value == "" {
			continue
		}
		t, err := gguf.ParseDType(d.value)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", errUsage, d.flag, err)
		}
		*d.dst = &t
	}
	for _, s := range *fl.tensorTypes {
		o, err := gguf.ParseTensorType(s)
		if err != nil {
			return fmt.Errorf("%w: --tensor-type: %w", errUsage, err)
		}
		opt.TensorTypes = append(opt.TensorTypes, o)
	}
	var im *gguf.Imatrix
	if *fl.imatrix != "" {
		if im, err = gguf.ReadImatrix(*fl.imatrix); err != nil {
			return fmt.Errorf("--imatrix: %w", err)
		}
		opt.Imatrix = im.Weights()
	}
	in, err := resolveModel(pos[0]) // a MODEL reference, toy-go included
	if err != nil {
		return err
	}
	f, err := gguf.Open(in)
	if err != nil {
		return fmt.Errorf("load %s: %w", pos[0], err)
	}
	defer f.Close()
	w, done, err := gguf.QuantizeModel(f, opt)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	if im != nil { // what llama-quantize records of its importance matrix
		w.SetString("quantize.imatrix.file", *fl.imatrix)
		if len(im.Datasets) > 0 {
			w.SetString("quantize.imatrix.dataset", im.Datasets[0])
		}
		w.SetInt32("quantize.imatrix.entries_count", int32(len(im.Sums)))
		if im.ChunkCount > 0 {
			w.SetInt32("quantize.imatrix.chunks_count", int32(im.ChunkCount))
		}
	}
	if err := w.WriteFile(pos[1]); err != nil {
		return failure(err)
	}
	mix := ft.String()
	if *fl.pure {
		mix += ", pure"
	}
	if im != nil {
		weighted := 0
		for _, q := range done {
			if opt.Imatrix[q.Name] != nil && q.From != q.To {
				weighted++
			}
		}
		mix += fmt.Sprintf(", importance matrix of %d matrices from %d chunks: %d weighted", len(im.Sums), im.ChunkCount, weighted)
		if len(im.Datasets) > 0 {
			mix += " (" + strings.Join(im.Datasets, ", ") + ")"
		}
	}
	fmt.Fprintf(stdout, "wrote %s (%s)\n", pos[1], mix)
	printQuantizeSummary(stdout, done)
	return nil
}

// printQuantizeSummary prints the tensors and bytes of each type written,
// and the sizes before and after.
func printQuantizeSummary(out io.Writer, done []gguf.QuantizedTensor) {
	type row struct {
		count, converted, fallbacks int
		bytes                       int64
	}
	rows := map[tensor.DType]*row{}
	var before, after int64
	for _, q := range done {
		r := rows[q.To]
		if r == nil {
			r = &row{}
			rows[q.To] = r
		}
		r.count++
		r.bytes += q.ToBytes
		if q.From != q.To {
			r.converted++
		}
		if q.Fallback {
			r.fallbacks++
		}
		before += q.FromBytes
		after += q.ToBytes
	}
	types := make([]tensor.DType, 0, len(rows))
	for t := range rows {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b tensor.DType) int { return cmp.Compare(rows[b].bytes, rows[a].bytes) })
	for _, t := range types {
		r := rows[t]
		note := ""
		if kept := r.count - r.converted; kept > 0 {
			note = fmt.Sprintf(", %d kept as they were", kept)
		}
		if r.fallbacks > 0 {
			note += fmt.Sprintf(", %d as a fallback (rows not whole blocks of the chosen type)", r.fallbacks)
		}
		fmt.Fprintf(out, "  %-7v %4d tensors %10s%s\n", t, r.count, mib(r.bytes), note)
	}
	fmt.Fprintf(out, "  size    %s → %s (%.1f%%)\n", mib(before), mib(after), 100*float64(after)/float64(max(before, 1)))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
