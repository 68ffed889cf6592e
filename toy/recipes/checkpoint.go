// Checkpoints: everything a run needs to continue bit-identically, in one
// GGUF file written atomically.

package recipes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/tensor"
)

// Checkpoint metadata keys.
const (
	keyKind    = "toy.checkpoint.kind"
	keyStep    = "toy.checkpoint.step"
	keyAdam    = "toy.checkpoint.adam_step"
	keyOptions = "toy.checkpoint.options"
	keyBase    = "toy.checkpoint.base"
)

// ErrCheckpoint marks a file that is not a usable toy checkpoint.
var ErrCheckpoint = errors.New("not a toy checkpoint")

// SaveCheckpoint writes the trained parameters, AdamW's moments (tensors
// "adam.m.NAME" and "adam.v.NAME"), the step and the options to path,
// through a temporary file and a rename: a crash or a full disk leaves any
// previous checkpoint at path intact.
func (r *Recipe) SaveCheckpoint(path string) error {
	w := gguf.NewWriter()
	r.setModelMetadata(w)
	opts, _ := json.Marshal(r.Options)
	w.SetString(keyKind, r.Kind)
	w.SetUint64(keyStep, uint64(r.Steps))
	w.SetUint64(keyAdam, uint64(r.Opt.Step))
	w.SetString(keyOptions, string(opts))
	if r.basePath != "" {
		w.SetString(keyBase, r.basePath)
	}
	for _, p := range r.Params {
		if err := w.AddFloat32(p.Name, tensor.F32, p.T.Data(), p.T.Shape()...); err != nil {
			return err
		}
		m, v := r.Opt.M[p.Name], r.Opt.V[p.Name]
		if m == nil {
			m, v = make([]float32, p.T.Len()), make([]float32, p.T.Len())
		}
		if err := w.AddFloat32("adam.m."+p.Name, tensor.F32, m, p.T.Shape()...); err != nil {
			return err
		}
		if err := w.AddFloat32("adam.v."+p.Name, tensor.F32, v, p.T.Shape()...); err != nil {
			return err
		}
	}
	if err := w.WriteFile(path); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// setModelMetadata writes the model's metadata: the source file's (with its
// tokenizer) when there is one, else the configuration's.
func (r *Recipe) setModelMetadata(w *gguf.Writer) {
	if r.meta != nil {
		for _, kv := range r.meta.KV {
			if !strings.HasPrefix(kv.Key, "toy.checkpoint.") {
				w.Set(kv.Key, kv.Value)
			}
		}
		return
	}
	r.Model.SetMetadata(w)
	for _, kv := range r.Extra {
		w.Set(kv.Key, kv.Value)
	}
}

// UseTokenizerOf copies the tokenizer.* metadata of f into the models and
// checkpoints this recipe writes.
func (r *Recipe) UseTokenizerOf(f *gguf.File) {
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			r.Extra = append(r.Extra, kv)
		}
	}
}

// SaveModel writes the model as a plain GGUF file that toy and llama.cpp
// load: every weight (F32 where trained), no optimizer state. For LoRA
// recipes it writes the base with the adapters merged.
func (r *Recipe) SaveModel(path string) error {
	if r.basePath != "" {
		tmp := path + ".adapter.tmp"
		if err := r.SaveAdapter(tmp); err != nil {
			return err
		}
		defer removeQuiet(tmp)
		return MergeAdapter(r.basePath, tmp, path)
	}
	w := gguf.NewWriter()
	r.setModelMetadata(w)
	for _, p := range r.Model.Weights() {
		t := p.T
		var err error
		if t.DType() == tensor.F32 {
			err = w.AddFloat32(p.Name, tensor.F32, t.Data(), t.Shape()...)
		} else {
			err = w.AddTensor(p.Name, t.DType(), t.Bytes(), t.Shape()...)
		}
		if err != nil {
			return err
		}
	}
	return w.WriteFile(path)
}

// Resume reopens a checkpoint written by SaveCheckpoint; the recipe continues
// from the saved step exactly as the uninterrupted run would have.
func Resume(path string) (*Recipe, error) {
	f, err := floatCopy(path)
	if err != nil {
		return nil, err
	}
	kind, err := f.String(keyKind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", path, ErrCheckpoint, err)
	}
	var o Options
	s, err := f.String(keyOptions)
	if err == nil {
		err = json.Unmarshal([]byte(s), &o)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: options: %v", path, ErrCheckpoint, err)
	}
	var r *Recipe
	switch kind {
	case "from-scratch", "warm-start":
		m, err := models.Load(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		params := allWeights(m)
		for _, p := range params {
			p.T.SetRequiresGrad(true)
		}
		if r, err = newRecipe(kind, m, o, params); err != nil {
			return nil, err
		}
		if kind == "warm-start" {
			r.meta = f
		} else {
			r.UseTokenizerOf(f)
		}
	case "lora", "qlora":
		base, err := f.String(keyBase)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", path, ErrCheckpoint, err)
		}
		if r, err = newAdapter(kind, base, o, kind == "qlora"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: %w: unknown kind %q", path, ErrCheckpoint, kind)
	}
	// Parameters (LoRA: the adapters; full recipes already hold them) and moments.
	for _, p := range r.Params {
		for _, dst := range []struct {
			name string
			set  func([]float32)
		}{
			{p.Name, func(v []float32) { copy(p.T.Data(), v) }},
			{"adam.m." + p.Name, func(v []float32) { r.Opt.M[p.Name] = v }},
			{"adam.v." + p.Name, func(v []float32) { r.Opt.V[p.Name] = v }},
		} {
			v, err := f.Dequantize(dst.name)
			if err != nil || len(v) != p.T.Len() {
				return nil, fmt.Errorf("%s: %w: tensor %s: %v", path, ErrCheckpoint, dst.name, err)
			}
			dst.set(v)
		}
	}
	step, err1 := f.Uint32(keyStep)
	adam, err2 := f.Uint32(keyAdam)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrCheckpoint, err)
	}
	r.Steps, r.Opt.Step = int(step), int(adam)
	return r, nil
}
