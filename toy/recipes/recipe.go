// The Recipe: a model, its trainable parameters, AdamW and a schedule.

package recipes

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/cohere"
	"github.com/toyml/toy/toy/models/deepseek2"
	"github.com/toyml/toy/toy/models/ernie"
	"github.com/toyml/toy/toy/models/gemma"
	"github.com/toyml/toy/toy/models/glm4"
	"github.com/toyml/toy/toy/models/gpt2"
	"github.com/toyml/toy/toy/models/gptoss"
	"github.com/toyml/toy/toy/models/lfm2"
	"github.com/toyml/toy/toy/models/llama"
	"github.com/toyml/toy/toy/models/llama4"
	"github.com/toyml/toy/toy/models/olmo2"
	"github.com/toyml/toy/toy/models/olmoe"
	"github.com/toyml/toy/toy/models/phi2"
	"github.com/toyml/toy/toy/models/phi3"
	"github.com/toyml/toy/toy/models/qwen35"
	"github.com/toyml/toy/toy/models/starcoder2"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// Model is what a recipe trains: an engine model that lists its weights.
type Model interface {
	engine.Model
	Weights() []nn.Named
}

// Recipe is one training plan in progress.
type Recipe struct {
	Kind     string // "from-scratch", "warm-start", "lora", "qlora"
	Model    Model
	Config   any // the family's Config (llama.Config, gpt2.Config, …)
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

// NewFromScratch starts from fresh random weights for cfg: the Config of
// llama, gpt2, gemma, olmoe, deepseek2, phi2, phi3, starcoder2, olmo2,
// cohere, gptoss or llama4.
func NewFromScratch(cfg any, o Options) (*Recipe, error) {
	if err := o.validate(false); err != nil {
		return nil, err
	}
	var m Model
	switch c := cfg.(type) {
	case llama.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = llama.NewRandom(c, o.Seed)
	case gpt2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = gpt2.NewRandom(c, o.Seed)
	case olmoe.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = olmoe.NewRandom(c, o.Seed)
	case gemma.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = gemma.NewRandom(c, o.Seed)
	case deepseek2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = deepseek2.NewRandom(c, o.Seed)
	case phi2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = phi2.NewRandom(c, o.Seed)
	case phi3.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = phi3.NewRandom(c, o.Seed)
	case starcoder2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = starcoder2.NewRandom(c, o.Seed)
	case olmo2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = olmo2.NewRandom(c, o.Seed)
	case cohere.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = cohere.NewRandom(c, o.Seed)
	case gptoss.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = gptoss.NewRandom(c, o.Seed)
	case llama4.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = llama4.NewRandom(c, o.Seed)
	case lfm2.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = lfm2.NewRandom(c, o.Seed)
	case qwen35.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = qwen35.NewRandom(c, o.Seed)
	case glm4.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = glm4.NewRandom(c, o.Seed)
	case ernie.Config:
		if err := c.Validate(); err != nil {
			return nil, err
		}
		m = ernie.NewRandom(c, o.Seed)
	default:
		return nil, fmt.Errorf("recipes: config %T is not the Config of a family toy trains (llama, gpt2, gemma, olmoe, deepseek2, phi2, phi3, starcoder2, olmo2, cohere, gptoss, llama4, lfm2, qwen35, glm4, ernie)", cfg)
	}
	return newRecipe("from-scratch", m, cfg, o, allWeights(m))
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
	m, cfg, err := build(f)
	if err != nil {
		return nil, fmt.Errorf("warm start %s: %w", path, err)
	}
	params := allWeights(m)
	for _, p := range params {
		p.T.SetRequiresGrad(true)
	}
	r, err := newRecipe("warm-start", m, cfg, o, params)
	if r != nil {
		r.meta = f
	}
	return r, err
}

func newRecipe(kind string, m Model, cfg any, o Options, params []optim.Param) (*Recipe, error) {
	if o.Context > m.ContextLength() {
		return nil, fmt.Errorf("recipes: context %d exceeds the model's %d", o.Context, m.ContextLength())
	}
	opt := optim.NewAdamW()
	opt.WeightDecay = o.WeightDecay
	return &Recipe{Kind: kind, Model: m, Config: cfg, Options: o, Params: params, Opt: opt,
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

// build makes the architecture's model over an open GGUF file.
func build(f *gguf.File) (Model, any, error) {
	arch, err := f.Architecture()
	if err != nil {
		return nil, nil, err
	}
	switch arch {
	case "gpt2":
		m, err := gpt2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "llama", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "granite", "granitemoe", "smollm3", "exaone", "mistral3":
		m, err := llama.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "gemma", "gemma2", "gemma3":
		m, err := gemma.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case olmoe.Arch:
		m, err := olmoe.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case deepseek2.Arch:
		m, err := deepseek2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "phi2":
		m, err := phi2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "phi3":
		m, err := phi3.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case starcoder2.Arch:
		m, err := starcoder2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case olmo2.Arch:
		m, err := olmo2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "command-r", "cohere2":
		m, err := cohere.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case gptoss.Arch:
		m, err := gptoss.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case llama4.Arch:
		m, err := llama4.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "lfm2", "lfm2moe":
		m, err := lfm2.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case qwen35.Arch, qwen35.ArchMoE, qwen35.ArchNext:
		m, err := qwen35.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case "glm4", "glm4moe":
		m, err := glm4.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	case ernie.Arch, ernie.ArchMoE:
		m, err := ernie.Load(f)
		if err != nil {
			return nil, nil, err
		}
		return m, m.Config, nil
	}
	return nil, nil, fmt.Errorf("recipes: cannot train architecture %q", arch)
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
