// Loading once for every family: declared hyperparameters in, declared
// weights in, their shapes checked.

package models

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
)

// ErrUnsupported marks files that use features toy does not run yet.
var ErrUnsupported = errors.New("unsupported model feature")

// Unsupported returns nil for no lacking features, else an error wrapping
// ErrUnsupported that names arch and the first.
func Unsupported(arch string, lacking []string) error {
	if len(lacking) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w: %s", arch, ErrUnsupported, lacking[0])
}

// ArchIn returns f's general.architecture, which must be one of archs:
// those the family named family reads.
func ArchIn(f *gguf.File, family string, archs []string) (string, error) {
	arch, err := f.Architecture()
	if err == nil && !slices.Contains(archs, arch) {
		err = fmt.Errorf("%s: architecture %q is not one of %v", family, arch, archs)
	}
	return arch, err
}

// RoPEScalingLacking lists, for a family that runs RoPE unscaled, the
// scaling m's file asks for as llama.cpp reads it: a rope.scaling.type
// (absent: the architecture's default, typ) other than "none" with a
// rope.scaling.factor other than 0 and 1 (either is the identity).
func RoPEScalingLacking(m *gguf.Meta, typ string) []string {
	typ = m.StringOr("rope.scaling.type", typ)
	if factor := m.FloatOr("rope.scaling.factor", 0); typ != "none" && factor != 0 && factor != 1 {
		return []string{fmt.Sprintf("RoPE scaling %q by %g", typ, factor)}
	}
	return nil
}

// WholeHeadRoPE returns m's first error, else an error naming family when
// the file's rope.dimension_count is not dh: the family turns whole heads
// of width dh.
func WholeHeadRoPE(m *gguf.Meta, family string, dh int) error {
	if rot := m.UintOr("rope.dimension_count", dh); m.Err() == nil && rot != dh {
		return fmt.Errorf("%s: RoPE over %d features of heads %d wide (they must be equal)", family, rot, dh)
	}
	return m.Err()
}

// HasTensor reports whether f holds the tensor name.
func HasTensor(f *gguf.File, name string) bool {
	_, err := f.Info(name)
	return err == nil
}

// ReadConfig fills cfg, a pointer to a family's Config holding its defaults,
// from f's metadata under arch, which must be the file's architecture:
// every field tagged `gguf:"KEY"` (see gguf.File.ReadConfig), and by
// convention a field VocabSize from the rows of token_embd.weight and a
// bool TiedOutput from the absence of output.weight. Errors name the family.
func ReadConfig(f *gguf.File, arch string, cfg any) error {
	if a, err := f.Architecture(); err != nil {
		return fmt.Errorf("%s: %w", arch, err)
	} else if a != arch {
		return fmt.Errorf("%s: architecture %q, want %q", arch, a, arch)
	}
	if err := f.ReadConfig(arch, cfg); err != nil {
		return fmt.Errorf("%s: %w", arch, err)
	}
	v := reflect.ValueOf(cfg).Elem()
	if n := v.FieldByName("VocabSize"); n.IsValid() && n.Kind() == reflect.Int {
		emb, err := f.Info("token_embd.weight")
		if err != nil {
			return fmt.Errorf("%s: %w", arch, err)
		}
		n.SetInt(int64(emb.Shape()[0]))
	}
	if t := v.FieldByName("TiedOutput"); t.IsValid() && t.Kind() == reflect.Bool {
		_, err := f.Info("output.weight")
		t.SetBool(errors.Is(err, gguf.ErrNoTensor))
	}
	return nil
}

// LoadWeights fills the tagged weights of m (a pointer to a model struct
// built for cfg, see nn.Load) from f, makes a missing output head the token
// embedding (fields Output *nn.Linear and Embed *nn.Embedding), and checks
// every declared shape against cfg (nn.CheckShapes). Errors name the family.
func LoadWeights(f *gguf.File, arch string, m, cfg any) error {
	if err := nn.Load(f, "", m); err != nil {
		return fmt.Errorf("%s: %w", arch, err)
	}
	Tie(m)
	if err := nn.CheckShapes(m, cfg); err != nil {
		return fmt.Errorf("%s: %w", arch, err)
	}
	return nil
}

// Tie makes m's output head the token embedding when m (a pointer to a
// model struct) has a nil Output *nn.Linear and an Embed *nn.Embedding.
func Tie(m any) {
	v := reflect.ValueOf(m).Elem()
	out, emb := v.FieldByName("Output"), v.FieldByName("Embed")
	if out.IsValid() && emb.IsValid() && out.IsNil() && !emb.IsNil() {
		o, ok1 := out.Addr().Interface().(**nn.Linear)
		e, ok2 := emb.Interface().(*nn.Embedding)
		if ok1 && ok2 {
			*o = &nn.Linear{W: e.W}
		}
	}
}

// GPT2Init returns a fresh initialiser of seed and GPT-2's scales for a
// model of layers layers: std 0.02, and resid 0.02/√(2L) for the
// projections into the residual stream (Radford et al. 2019).
func GPT2Init(seed uint64, layers int) (in *nn.Init, std, resid float64) {
	const gpt2 = 0.02
	return nn.NewInit(seed), gpt2, gpt2 / math.Sqrt(2*float64(layers))
}

// Randomize draws the weights m (a pointer to a model struct built for cfg)
// declares and does not hold yet, as GPT-2 initialises: N(0, 0.02²), the
// projections into the residual stream (tagged init:"resid") with 0.02/√(2L)
// for L layers, norms at 1 (see nn.Init.Randomize); then an output head N(0,
// 0.02²) when cfg has no TiedOutput field or it is false, else the token
// embedding. It returns the initialiser, to draw what a family adds after.
// The same seed gives the same weights.
func Randomize(m, cfg any, layers int, seed uint64) *nn.Init {
	in, std, resid := GPT2Init(seed, layers)
	in.Randomize(m, cfg, std, resid)
	v, c := reflect.ValueOf(m).Elem(), reflect.ValueOf(cfg)
	if c.Kind() == reflect.Pointer {
		c = c.Elem()
	}
	out, emb := v.FieldByName("Output"), v.FieldByName("Embed")
	tied := c.FieldByName("TiedOutput")
	if out.IsValid() && emb.IsValid() && out.IsNil() && !emb.IsNil() && !(tied.IsValid() && tied.Bool()) {
		if e, ok := emb.Interface().(*nn.Embedding); ok && e.W != nil {
			out.Set(reflect.ValueOf(in.Linear(e.W.Rows(), e.W.Cols(), std, false)))
		}
	}
	Tie(m)
	return in
}
