// LoRA and QLoRA: low-rank adapters over frozen base weights, saved in
// llama.cpp's adapter format, and merged into a plain model.

package recipes

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// targetNames maps the short target names to GGUF tensor names.
var targetNames = map[string]string{
	"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output", "qkv": "attn_qkv",
	"gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down",
}

// NewLoRA trains rank-r adapters on the target projections of the model in
// path; the base weights stay frozen in whatever type the file stores them.
func NewLoRA(path string, o Options) (*Recipe, error) { return newAdapter("lora", path, o, false) }

// NewQLoRA is NewLoRA over a quantized base: weights the file stores
// quantized (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, MXFP4, or the
// k-quants of a Q4_K_M or other k-quant file) stay so, float weights (F32, F16, BF16) are quantized
// to Q8_0 when loaded;
// gradients flow through them to the adapters.
func NewQLoRA(path string, o Options) (*Recipe, error) { return newAdapter("qlora", path, o, true) }

func newAdapter(kind, path string, o Options, quantize bool) (*Recipe, error) {
	if o.LR == NewOptions(0).LR {
		o.LR = 1e-3 // adapters take a larger step than full fine-tuning
	}
	if err := o.validate(true); err != nil {
		return nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	m, err := models.Load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	linears := nn.FindLinears(m, m.Weights())
	if quantize {
		for _, l := range linears {
			if l.W.DType().BlockSize() == 1 && l.W.Cols()%tensor.Q8_0.BlockSize() == 0 { // not already quantized
				q, err := tensor.FromBytes(tensor.Q8_0, tensor.EncodeRow(nil, l.W.Float32s(), tensor.Q8_0), l.W.Shape()...)
				if err != nil {
					return nil, err
				}
				l.W = q
			}
		}
	}
	in := nn.NewInit(o.Seed)
	var params []optim.Param
	names := make([]string, 0, len(linears))
	for name := range linears {
		names = append(names, name)
	}
	sort.Strings(names)
	found := map[string]bool{}
	for _, name := range names {
		target := name[strings.LastIndex(name, ".")+1:]
		short := ""
		for k, v := range targetNames {
			if v == target {
				short = k
			}
		}
		if !slices.Contains(o.Targets, short) {
			continue
		}
		found[short] = true
		l := linears[name]
		out, inF := l.W.Dim(0), l.W.Dim(1)
		// A starts random and B at zero, so the adapted model starts as the base.
		l.LoRA = &nn.LoRA{
			A:       in.Normal(1/math.Sqrt(float64(inF)), o.Rank, inF),
			B:       in.Fill(0, out, o.Rank),
			Scale:   float32(o.Alpha / float64(o.Rank)),
			Dropout: float32(o.Dropout),
			Seed:    o.Seed,
		}
		params = append(params,
			optim.Param{Name: name + ".weight.lora_a", T: l.LoRA.A, Decay: false},
			optim.Param{Name: name + ".weight.lora_b", T: l.LoRA.B, Decay: false})
	}
	for _, t := range o.Targets {
		if !found[t] {
			f.Close()
			return nil, fmt.Errorf("%s: the model has no %q projections to adapt", kind, t)
		}
	}
	r, err := newRecipe(kind, m, o, params)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.meta, r.basePath = f, path
	return r, nil
}

// SaveAdapter writes the LoRA adapters in llama.cpp's format: general.type
// "adapter", adapter.type "lora", adapter.lora.alpha, and tensors
// "<base>.weight.lora_a" [r, in] and "<base>.weight.lora_b" [out, r].
func (r *Recipe) SaveAdapter(path string) error {
	if r.basePath == "" {
		return fmt.Errorf("recipes: %s recipe has no adapters", r.Kind)
	}
	w := gguf.NewWriter()
	arch, _ := r.meta.Architecture()
	w.SetString("general.architecture", arch)
	w.SetString("general.type", "adapter")
	w.SetString("adapter.type", "lora")
	w.SetFloat32("adapter.lora.alpha", float32(r.Options.Alpha))
	for _, p := range r.Params {
		if err := w.AddFloat32(p.Name, tensor.F32, p.T.Data(), p.T.Shape()...); err != nil {
			return err
		}
	}
	return w.WriteFile(path)
}

// MergeAdapter writes base with the adapter folded in: for every adapted
// projection W ← W + (α/r)·B·A, stored as F32; every other tensor and all
// metadata are copied unchanged.
func MergeAdapter(basePath, adapterPath, outPath string) error {
	base, err := gguf.Open(basePath)
	if err != nil {
		return fmt.Errorf("load %s: %w", basePath, err)
	}
	defer base.Close()
	ad, err := gguf.Open(adapterPath)
	if err != nil {
		return fmt.Errorf("load %s: %w", adapterPath, err)
	}
	defer ad.Close()
	if t, _ := ad.String("general.type"); t != "adapter" {
		return fmt.Errorf("%s: general.type is %q, not a LoRA adapter", adapterPath, t)
	}
	alpha, err := ad.Float32("adapter.lora.alpha")
	if err != nil {
		return fmt.Errorf("%s: %w", adapterPath, err)
	}
	merged := gguf.NewWriter()
	for _, kv := range base.KV {
		merged.Set(kv.Key, kv.Value)
	}
	for _, ti := range base.Tensors {
		a, errA := ad.Dequantize(ti.Name + ".lora_a")
		b, errB := ad.Dequantize(ti.Name + ".lora_b")
		if errA != nil || errB != nil {
			data, _, _ := base.Data(ti.Name)
			if err := merged.AddTensor(ti.Name, ti.Type, data, ti.Shape()...); err != nil {
				return err
			}
			continue
		}
		shape := ti.Shape()
		out, in := shape[0], shape[1]
		ai, _ := ad.Info(ti.Name + ".lora_a")
		rank := ai.Shape()[0]
		if len(shape) != 2 || len(a) != rank*in || len(b) != out*rank {
			return fmt.Errorf("%s: adapter for %s %v has shapes %v and %d values", adapterPath, ti.Name, shape, ai.Shape(), len(b))
		}
		wv, err := base.Dequantize(ti.Name)
		if err != nil {
			return err
		}
		scale := alpha / float32(rank)
		for o := 0; o < out; o++ {
			for k := 0; k < rank; k++ {
				s := scale * b[o*rank+k]
				if s == 0 {
					continue
				}
				row, ar := wv[o*in:(o+1)*in], a[k*in:(k+1)*in]
				for i := range row {
					row[i] += s * ar[i]
				}
			}
		}
		if err := merged.AddFloat32(ti.Name, tensor.F32, wv, shape...); err != nil {
			return err
		}
	}
	return merged.WriteFile(outPath)
}
