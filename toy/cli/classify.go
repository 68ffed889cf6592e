// toy classify and toy convert: image classification with a ViT, and
// converting Hugging Face ViT checkpoints to GGUF (the one command that names
// an architecture's package: the converter is vit's own, vit.FromHF).

package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/models/vit"
	"github.com/toyml/toy/toy/tensor"
)

func classifyFlagSet() (*flag.FlagSet, *int, *bool, *string) {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	k := fs.Int("top-k", 5, "how many classes to print, most probable first (0: all)")
	js := fs.Bool("json", false, `print JSON: {"format":"toy/classify-v1","model":…,"image":…,"top":[{"class","label","prob","logit"}…]}`)
	var device string
	deviceFlag(fs, &device)
	return fs, k, js, &device
}

func classifyFlagsDoc() *flag.FlagSet { fs, _, _, _ := classifyFlagSet(); return fs }

type classifyOutput struct {
	Format string           `json:"format"`
	Model  string           `json:"model"`
	Image  string           `json:"image"`
	Top    []vit.Prediction `json:"top"`
}

func runClassify(args []string, stdout io.Writer) error {
	fs, k, js, device := classifyFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: toy classify MODEL.gguf IMAGE [--top-k 5] [--json]", errUsage)
	}
	if *k < 0 {
		return fmt.Errorf("%w: --top-k %d", errUsage, *k)
	}
	if err := useDevice(*device); err != nil {
		return err
	}
	path, err := resolveModel(pos[0])
	if err != nil {
		return err
	}
	m, err := toy.LoadImageClassifier(path)
	if err != nil {
		return err
	}
	defer m.Close()
	top, err := m.ClassifyFile(pos[1], *k)
	if err != nil {
		return err
	}
	if *js {
		return encodeJSON(stdout, classifyOutput{Format: "toy/classify-v1", Model: pos[0], Image: pos[1], Top: top})
	}
	for _, p := range top {
		fmt.Fprintf(stdout, "%7.3f%%  %s\n", 100*p.Prob, p.Label)
	}
	return nil
}

func convertFlagSet() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	typ := fs.String("type", "f32", "weight matrices as f32, f16, bf16 or q8_0 (norms and biases stay F32)")
	return fs, typ
}

func convertFlagsDoc() *flag.FlagSet { fs, _ := convertFlagSet(); return fs }

func runConvert(args []string, stdout io.Writer) error {
	fs, typ := convertFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: toy convert HF_DIR OUT.gguf [--type f32|f16|bf16|q8_0]", errUsage)
	}
	types := map[string]tensor.DType{"f32": tensor.F32, "f16": tensor.F16, "bf16": tensor.BF16, "q8_0": tensor.Q8_0}
	t, ok := types[strings.ToLower(*typ)]
	if !ok {
		return fmt.Errorf("%w: --type %q (f32, f16, bf16, q8_0)", errUsage, *typ)
	}
	m, err := vit.FromHF(pos[0])
	if err != nil {
		return err
	}
	if err := m.WriteGGUF(pos[1], t); err != nil {
		return failure(err)
	}
	c := m.Config
	fmt.Fprintf(stdout, "wrote %s (vit, %v): %d×%d images, patch %d, width %d, %d layers, %d classes\n",
		pos[1], t, c.ImageSize, c.ImageSize, c.PatchSize, c.Embed, c.Layers, c.Classes)
	return nil
}
