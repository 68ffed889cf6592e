// Package quantize is the gate of toy's quantizer against llama.cpp's: the
// random rows and test models it quantizes, which geninputs writes for
// llama.cpp (llamacpp_quantize.py) and quantize_test.go regenerates for
// toy. Both sides see the same float32 values; the goldens in testdata/
// hold what llama.cpp made of them.
package quantize

import (
	"fmt"
	"math"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/tensor"
)

// RowCase is a set of rows of one kind of values, quantized to every type
// whose block fits the row length.
type RowCase struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	RowLen int    `json:"row_len"`
	Rows   int    `json:"rows"`
	Seed   uint64 `json:"seed"`
}

// RowTypes are the types the row gate quantizes to.
var RowTypes = []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL,
	tensor.IQ4_XS, tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.F16, tensor.BF16, tensor.MXFP4}

// RowCases are the row sets: weights of several distributions and widths,
// and the corner cases of the scale searches (all-zero, constant, tiny,
// sparse, huge and non-finite values, and values whose scaled images are
// rounding ties).
func RowCases() []RowCase {
	var out []RowCase
	add := func(kind string, rowLen, rows int) {
		out = append(out, RowCase{Name: fmt.Sprintf("%s-%d", kind, rowLen), Kind: kind, RowLen: rowLen, Rows: rows, Seed: uint64(len(out) + 1)})
	}
	for _, n := range []int{256, 512, 4096} {
		add("uniform", n, 8)
		add("normal", n, 8)
		add("outliers", n, 8)
	}
	for _, n := range []int{32, 96, 160} { // rows of 32-blocks only
		add("normal", n, 8)
		add("outliers", n, 8)
	}
	for _, kind := range []string{"zeros", "constant", "sparse", "tiny", "subnormal", "signed-zeros", "huge", "halves", "ties", "ramp", "skewed", "nonfinite"} {
		add(kind, 256, 8)
	}
	add("sparse", 96, 8)
	add("constant", 96, 8)
	return out
}

// rng is splitmix64, fully specified here so that the values never change
// with the Go version.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uniform returns a value in [-1, 1).
func (r *rng) uniform() float32 { return float32(int64(r.next()>>40)-1<<23) / (1 << 23) }

// normal returns roughly a standard normal value (the sum of 12 uniforms
// on [0, 1), less 6), in float64 so its rounding is exact everywhere.
func (r *rng) normal() float64 {
	var s float64
	for i := 0; i < 12; i++ {
		s += float64(r.next()>>11) / (1 << 53)
	}
	return s - 6
}

// Values returns the case's Rows × RowLen values.
func (c RowCase) Values() []float32 {
	r := &rng{c.Seed * 0x100000001b3}
	x := make([]float32, c.Rows*c.RowLen)
	for i := range x {
		row := i / c.RowLen
		switch c.Kind {
		case "uniform":
			x[i] = r.uniform()
		case "normal": // weights of a trained layer: σ = 0.02
			x[i] = float32(0.02 * r.normal())
		case "outliers": // one in 64 weights 30× larger
			x[i] = float32(0.02 * r.normal())
			if r.next()%64 == 0 {
				x[i] *= 30
			}
		case "zeros":
		case "constant": // row r: one value, a different one per row
			x[i] = []float32{0.5, -0.25, 3, -1e-3, 1, -7, 0.1, 65504}[row%8]
		case "sparse": // mostly zeros, a few spikes of either sign
			if r.next()%16 == 0 {
				x[i] = r.uniform()
			}
		case "tiny": // scales around ggml's all-zero threshold (1e-15) and fp16's range
			x[i] = r.uniform() * []float32{1e-16, 1e-15, 1e-12, 1e-8, 1e-6, 1e-5, 6e-5, 1e-4}[row%8]
		case "subnormal": // float32 subnormals, and a few normal values
			x[i] = math.Float32frombits(uint32(r.next() % (1 << 23)))
			if r.next()%2 == 0 {
				x[i] = -x[i]
			}
			if row%2 == 1 && r.next()%32 == 0 {
				x[i] = r.uniform()
			}
		case "signed-zeros": // +0 and −0, and a few values
			if r.next()%2 == 0 {
				x[i] = float32(math.Copysign(0, -1))
			}
			if row%2 == 1 && r.next()%8 == 0 {
				x[i] = r.uniform()
			}
		case "huge": // magnitudes up to fp16's limit and beyond
			x[i] = r.uniform() * []float32{1e3, 1e4, 6e4, 1e5, 1e6, 1e2, 3e4, 65504}[row%8]
		case "halves": // multiples of ½ in [−8, 8]: many rounding ties
			x[i] = float32(int(r.next()%33)-16) / 2
		case "ties": // per 32: ±127·2⁻ʳ first, then multiples of ½·2⁻ʳ: Q8_0's x/d are exact halves
			scale := float32(math.Ldexp(1, -row))
			x[i] = float32(int(r.next()%509)-254) / 2 * scale
			if i%32 == 0 {
				x[i] = float32(127-254*(i/32%2)) * scale
			}
		case "nonfinite": // a few infinities or NaNs among normal weights
			x[i] = float32(0.02 * r.normal())
			if r.next()%97 == 0 {
				x[i] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e38}[row%4]
			}
		case "ramp": // evenly spaced values
			x[i] = float32(i%c.RowLen-c.RowLen/2) / float32(c.RowLen) * float32(row+1)
		case "skewed": // all of one sign, offset from zero (the Q*_K mins)
			x[i] = float32(float32(row+1)*0.1) + float32(0.05*r.uniform()) // products rounded: no fused multiply-add
			if row%2 == 1 {
				x[i] = -x[i]
			}
		default:
			panic("quantize: unknown row kind " + c.Kind)
		}
	}
	return x
}

// ModelCase is a test model quantized to one of llama.cpp's file types.
type ModelCase struct {
	Model string `json:"model"`
	Type  string `json:"type"` // llama-quantize's name: q4_k_m, iq4_xs, …
	Pure  bool   `json:"pure,omitempty"`
}

// Name is the case's name: model, type and "-pure".
func (c ModelCase) Name() string {
	if c.Pure {
		return c.Model + "-" + c.Type + "-pure"
	}
	return c.Model + "-" + c.Type
}

// AllModelTypes are the file types of llama-quantize that toy writes.
var AllModelTypes = []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k_s", "q3_k_m", "q3_k_l",
	"q4_k_s", "q4_k_m", "q5_k_s", "q5_k_m", "q6_k", "iq4_nl", "iq4_xs", "f16", "bf16", "f32", "mxfp4_moe"}

// mixTypes are the file types with rules by layer position or by model
// shape (grouped-query ratio, expert count).
var mixTypes = []string{"q2_k", "q3_k_m", "q3_k_l", "q4_k_s", "q4_k_m", "q5_k_m", "iq4_nl", "iq4_xs"}

// ModelSpec is a gate model and the file types it is quantized to.
type ModelSpec struct {
	testmodel.Spec
	Types []string
}

// ModelSpecs are the gate models, in F32 and with a synthetic vocabulary
// of 320 tokens (the quantizer reads no vocabulary), small enough to
// quantize many ways in seconds: widths that fit the 256-weight
// super-blocks, and some that do not (ffn 384, width 64) to exercise the
// fallbacks; depths of 8 and 16 so that the rules by layer position (the
// first sixteenth and eighth, the last eighth, every third) apply;
// grouped-query ratios 1, 2 and 4; tied and untied heads; GPT-2's fused
// attn_qkv and position embeddings; 8 experts (the n_expert == 8 rules)
// and 4 (layers read from tensor names).
func ModelSpecs() []ModelSpec {
	spec := func(name, arch string, embed, layers, ffn, heads, kv int, tied bool, seed uint64) testmodel.Spec {
		return testmodel.Spec{Name: name, Arch: arch, DType: tensor.F32, Vocab: "none", VocabSize: 320, Embed: embed,
			Layers: layers, FFN: ffn, Heads: heads, KVHeads: kv, Context: 256, Tied: tied, Seed: seed}
	}
	gemma3 := spec("gemma3", "gemma3", 256, 4, 256, 4, 2, true, 23)
	gemma3.HeadDim, gemma3.Window = 64, 5
	olmoe := spec("olmoe", "olmoe", 256, 2, 256, 4, 4, false, 24)
	olmoe.Experts, olmoe.ExpertsUsed = 8, 2
	qwen2moe := spec("qwen2moe", "qwen2moe", 256, 2, 256, 4, 2, true, 25)
	qwen2moe.Experts, qwen2moe.ExpertsUsed, qwen2moe.SharedFFN = 4, 2, 256
	return []ModelSpec{
		{spec("llama", "llama", 256, 8, 256, 8, 2, false, 20), mixTypes},
		{spec("llama16", "llama", 256, 16, 256, 4, 4, false, 21), []string{"q3_k_m", "q4_k_m"}},
		{spec("qwen2", "qwen2", 256, 2, 384, 4, 2, true, 22), AllModelTypes},
		{gemma3, mixTypes},
		{olmoe, []string{"q2_k", "q4_k_m", "iq4_xs", "mxfp4_moe"}},
		{qwen2moe, []string{"q3_k_m", "q4_k_m", "iq4_xs", "mxfp4_moe"}},
		{spec("gpt2", "gpt2", 256, 2, 256, 4, 4, false, 26), AllModelTypes},
		{spec("narrow", "llama", 64, 2, 128, 4, 2, false, 27), AllModelTypes},
	}
}

// ModelCases are every gate model in each of its file types, and some in
// --pure mixes.
func ModelCases() []ModelCase {
	var out []ModelCase
	for _, s := range ModelSpecs() {
		for _, t := range s.Types {
			out = append(out, ModelCase{Model: s.Name, Type: t})
		}
	}
	for _, c := range []ModelCase{{"llama", "q4_k_m", true}, {"qwen2", "q3_k_m", true}, {"qwen2", "iq4_xs", true},
		{"qwen2", "q6_k", true}, {"narrow", "q4_k_m", true}, {"narrow", "iq4_xs", true}, {"olmoe", "mxfp4_moe", true}} {
		out = append(out, c)
	}
	return out
}

// ForwardCase is the model of the forward gate: an F32 Llama with a real
// vocabulary (Llama 2's) and widths of 256, quantized by toy to Q4_K_M
// (Q4_K, with Q6_K in the head and in layer 1's attn_v and ffn_down), which
// llama.cpp then loads and runs.
func ForwardCase() (testmodel.Spec, ModelCase) {
	s := testmodel.Spec{Name: "llama256", Arch: "llama", DType: tensor.F32, Vocab: "llama2", Embed: 256, Layers: 2, FFN: 512,
		Heads: 4, KVHeads: 2, Context: 256, Tied: false, Seed: 8,
		PromptIDs: []int32{1, 15043, 29892, 590, 1024, 338, 263, 4086, 1058, 5360, 13, 1576, 304, 367, 2691, 29889}}
	return s, ModelCase{Model: s.Name, Type: "q4_k_m"}
}
