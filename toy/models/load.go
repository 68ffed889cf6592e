// Loading once for every family: declared hyperparameters in, declared
// weights in, their shapes checked.

package models

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/nn"
)

// ReadConfig fills cfg, a pointer to a family's Config holding its defaults,
// from f's metadata under arch: every field tagged `gguf:"KEY"` (see
// gguf.File.ReadConfig), and by convention a field VocabSize from the rows
// of token_embd.weight and a bool TiedOutput from the absence of
// output.weight. Errors name the family.
func ReadConfig(f *gguf.File, arch string, cfg any) error {
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
