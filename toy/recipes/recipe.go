// The Recipe: a model, its trainable parameters, AdamW and a schedule.

package recipes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// Model is what a recipe trains: any registered or user-made model
// (package models).
type Model = models.Model

// Recipe is one training plan in progress.
type Recipe struct {
	Kind     string // "from-scratch", "warm-start", "lora", "qlora"
	Model    Model
	Options  Options
	Params   []optim.Param
	Opt      *optim.AdamW
	Schedule optim.Schedule
	Steps    int // steps done

	// Metadata written into checkpoints and saved models besides the model
	// configuration: a from-scratch model's tokenizer, for instance.
	Extra []gguf.KV

	meta     *gguf.File // source metadata (tokenizer, names) for saved models; nil from scratch
	basePath string     // the base model file of a LoRA recipe
}

// NewFromScratch starts from fresh random weights for cfg: a configuration
// of a registered family (llama.Config, gpt2.Config, … or a user's), built
// by that family's New.
func NewFromScratch(cfg any, o Options) (*Recipe, error) {
	if err := o.validate(false); err != nil {
		return nil, err
	}
	m, err := models.New(cfg, o.Seed)
	if err != nil {
		return nil, fmt.Errorf("recipes: %w", err)
	}
	return NewFromModel(m, o)
}

// NewFromModel trains every weight m holds, from their current values: a
// model built in a program, a notebook or a lab, registered or not. Its
// checkpoints resume through the registry, so a model that is to resume
// (or be loaded by toy.Load) must be of a registered family. Weights must
// list at least one tensor, each under its own name.
func NewFromModel(m Model, o Options) (*Recipe, error) {
	if err := o.validate(false); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("recipes: NewFromModel with a nil model")
	}
	if err := checkWeights(m.Weights()); err != nil {
		return nil, err
	}
	params := allWeights(m)
	for _, p := range params {
		p.T.SetRequiresGrad(true)
	}
	return newRecipe("from-scratch", m, o, params)
}

// checkWeights rejects an empty weight list, a nil tensor and a repeated
// name: each would make a checkpoint that cannot resume.
func checkWeights(ws []nn.Named) error {
	if len(ws) == 0 {
		return errors.New("recipes: the model lists no weights (Weights() is empty)")
	}
	seen := map[string]bool{}
	for _, w := range ws {
		switch {
		case w.Name == "":
			return errors.New("recipes: the model lists a weight with no name")
		case w.T == nil:
			return fmt.Errorf("recipes: the model's weight %s is nil", w.Name)
		case seen[w.Name]:
			return fmt.Errorf("recipes: the model lists the weight %s twice", w.Name)
		}
		seen[w.Name] = true
	}
	return nil
}

// NewWarmStart continues training every weight of the model in a GGUF file
// (quantized weights are expanded to F32 first).
func NewWarmStart(path string, o Options) (*Recipe, error) {
	if err := o.validate(false); err != nil {
		return nil, err
	}
	f, err := floatCopy(path)
	if err != nil {
		return nil, err
	}
	m, err := models.Load(f)
	if err != nil {
		return nil, fmt.Errorf("warm start %s: %w", path, err)
	}
	params := allWeights(m)
	for _, p := range params {
		p.T.SetRequiresGrad(true)
	}
	r, err := newRecipe("warm-start", m, o, params)
	if r != nil {
		r.meta = f
	}
	return r, err
}

func newRecipe(kind string, m Model, o Options, params []optim.Param) (*Recipe, error) {
	if o.Context > m.ContextLength() {
		return nil, fmt.Errorf("recipes: context %d exceeds the model's %d", o.Context, m.ContextLength())
	}
	opt := optim.NewAdamW()
	opt.WeightDecay = o.WeightDecay
	return &Recipe{Kind: kind, Model: m, Options: o, Params: params, Opt: opt,
		Schedule: optim.Cosine{Max: o.LR, Min: o.MinLR, Warmup: o.Warmup, Total: o.Steps}}, nil
}

// constants are tensors a model file holds that are not trained: RoPE's
// frequency factors, Llama 3.1's and LongRoPE's (PyTorch keeps them as the
// inv_freq buffer).
var constants = map[string]bool{"rope_freqs.weight": true, "rope_factors_short.weight": true, "rope_factors_long.weight": true}

// allWeights lists every weight as a parameter, decaying matrices only: not
// vectors, nor norm scales stored as matrices (Command R+'s per-head query
// and key norms, [H, Dh] and [KV, Dh]).
func allWeights(m Model) []optim.Param {
	var ps []optim.Param
	for _, w := range m.Weights() {
		if !constants[w.Name] {
			ps = append(ps, optim.Param{Name: w.Name, T: w.T, Decay: len(w.T.Shape()) >= 2 && !strings.HasSuffix(w.Name, "_norm.weight")})
		}
	}
	return ps
}

// floatCopy reads a GGUF file into writable memory with every tensor as F32.
func floatCopy(path string) (*gguf.File, error) {
	src, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer src.Close()
	w := gguf.NewWriter()
	for _, kv := range src.KV {
		w.Set(kv.Key, kv.Value)
	}
	for _, ti := range src.Tensors {
		v, err := src.Dequantize(ti.Name)
		if err != nil {
			return nil, err
		}
		if err := w.AddFloat32(ti.Name, tensor.F32, v, ti.Shape()...); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return gguf.Parse(buf.Bytes())
}

// LR returns the learning rate of the next step.
func (r *Recipe) LR() float64 { return r.Schedule.LR(r.Steps) }

// Step trains on one batch and returns the loss before the update.
func (r *Recipe) Step(b *engine.Batch) (float32, error) {
	res, err := r.StepResult(b)
	return res.Loss, err
}

// StepResult is Step with the gradient norm and token count.
func (r *Recipe) StepResult(b *engine.Batch) (engine.StepResult, error) {
	if len(b.Inputs) == 0 || len(b.Inputs[0]) > r.Options.Context {
		return engine.StepResult{}, fmt.Errorf("%w: want sequences of at most %d positions", engine.ErrBatch, r.Options.Context)
	}
	res, err := engine.TrainStep(r.Model, r.Params, r.Opt, b, r.LR(), r.Options.Clip)
	if err != nil {
		return res, fmt.Errorf("step %d: %w", r.Steps+1, err)
	}
	r.Steps++
	return res, nil
}

func removeQuiet(path string) { _ = os.Remove(path) }

// ModelConfig describes the model for run logs: its exported Config field
// when it has one (every toy family's model does), else the metadata its
// SetMetadata writes, as a map from key to value.
func (r *Recipe) ModelConfig() any {
	v := reflect.ValueOf(r.Model)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if c := v.FieldByName("Config"); c.IsValid() && c.CanInterface() {
			return c.Interface()
		}
	}
	w := gguf.NewWriter()
	r.Model.SetMetadata(w)
	meta := map[string]any{}
	for _, kv := range w.Metadata() {
		meta[kv.Key] = kv.Value.V
	}
	return meta
}
