// Package quantize is the gate of toy's quantizer against llama.cpp's: the
// random rows and test models it quantizes, which geninputs writes for
// llama.cpp (llamacpp_quantize.py) and quantize_test.go regenerates for
// toy. Both sides see the same float32 values; the goldens in testdata/
// hold what llama.cpp made of them.
package quantize

import (
	"fmt"
	"math"
	"strings"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
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

// ImatrixCase is a row set quantized with an importance matrix (one value
// per column, shared by all rows, as llama-imatrix writes for a tensor) of
// one kind.
type ImatrixCase struct {
	Rows RowCase
	Kind string
}

// Name is the case's name: the row set's, then the importances' kind.
func (c ImatrixCase) Name() string { return c.Rows.Name + "/" + c.Kind }

// ImatrixCases are every row set with importances of a wide spread, and a
// few row sets with the corner cases: all equal, zero columns, tiny
// (subnormal) and huge values, and a few columns far above the rest.
func ImatrixCases() []ImatrixCase {
	var out []ImatrixCase
	rows := RowCases()
	for _, c := range rows {
		out = append(out, ImatrixCase{c, "spread"})
	}
	corners := map[string]bool{"normal-256": true, "outliers-512": true, "normal-96": true, "skewed-256": true, "sparse-256": true}
	for _, c := range rows {
		if corners[c.Name] {
			for _, kind := range []string{"equal", "zero-columns", "tiny", "huge", "spikes"} {
				out = append(out, ImatrixCase{c, kind})
			}
		}
	}
	return out
}

// Importance returns the case's RowLen importances, finite and ≥ 0 as
// llama.cpp requires. "spread" is (1 + u/2)·2^k with u uniform in [−1, 1)
// and k in −12 … 12 (mean squared activations range over orders of
// magnitude); the other kinds start from it, so that only the corner
// differs.
func (c ImatrixCase) Importance() []float32 {
	r := &rng{c.Rows.Seed*0x9e3779b97f4a7c15 + 0x5851f42d4c957f2d}
	w := make([]float32, c.Rows.RowLen)
	for i := range w {
		m := float32(0.5*r.uniform()) + 1 // product rounded: no fused multiply-add
		k := int(r.next()%25) - 12
		spread := float32(math.Ldexp(float64(m), k))
		switch c.Kind {
		case "spread":
			w[i] = spread
		case "equal": // every column alike
			w[i] = 0.3
		case "zero-columns": // a whole first block of 32 unused, then one column in four
			if i >= 32 && r.next()%4 != 0 {
				w[i] = spread
			}
		case "tiny": // 2⁻¹³⁹ … 1.5·2⁻¹¹⁴: float32 subnormals (and the least normals)
			w[i] = float32(math.Ldexp(float64(m), k-126))
		case "huge": // 2⁸⁷ … 1.5·2¹¹²: the searches' products of sums overflow float32
			w[i] = float32(math.Ldexp(float64(m), k+100))
		case "spikes": // one column in 64 near 2²⁰, the others at most 1.5·2¹²
			w[i] = spread
			if r.next()%64 == 0 {
				w[i] = float32(math.Ldexp(float64(m), 20))
			}
		default:
			panic("quantize: unknown importance kind " + c.Kind)
		}
	}
	return w
}

// ModelCase is a test model quantized to one of llama.cpp's file types.
type ModelCase struct {
	Model string `json:"model"`
	Type  string `json:"type"` // llama-quantize's name: q4_k_m, iq4_xs, …
	Pure  bool   `json:"pure,omitempty"`
	// Imatrix quantizes with ModelImatrix's importance matrix.
	Imatrix bool `json:"imatrix,omitempty"`
	// Output and Embd are the head's and the token embeddings' types (ggml's
	// names), TensorTypes overrides PATTERN=TYPE, LeaveOutput keeps the head:
	// llama-quantize's --output-tensor-type, --token-embedding-type,
	// --tensor-type and --leave-output-tensor.
	Output      string   `json:"output,omitempty"`
	Embd        string   `json:"embd,omitempty"`
	TensorTypes []string `json:"tensor_types,omitempty"`
	LeaveOutput bool     `json:"leave_output,omitempty"`
}

// Name is the case's name: model, type, then "-pure", "-imatrix",
// "-output-T", "-embd-T", "-tt" and "-leave" as they apply.
func (c ModelCase) Name() string {
	name := c.Model + "-" + c.Type
	if c.Pure {
		name += "-pure"
	}
	if c.Imatrix {
		name += "-imatrix"
	}
	if c.Output != "" {
		name += "-output-" + c.Output
	}
	if c.Embd != "" {
		name += "-embd-" + c.Embd
	}
	if len(c.TensorTypes) > 0 {
		name += fmt.Sprintf("-tt%d", len(c.TensorTypes))
	}
	if c.LeaveOutput {
		name += "-leave"
	}
	return name
}

// ModelImatrix is the importance matrix the -imatrix cases quantize a gate
// model with: for every matrix of its blocks, and the head, one positive
// value per column and expert, spread over 2⁻¹² … 2¹² by a hash of the
// name and the index (exact in float32, so the same on both sides).
func ModelImatrix(infos []gguf.TensorInfo) map[string][]float32 {
	out := map[string][]float32{}
	for _, ti := range infos {
		if !(strings.HasPrefix(ti.Name, "blk.") && strings.HasSuffix(ti.Name, ".weight") || ti.Name == "output.weight") ||
			len(ti.Dims) < 2 || strings.Contains(ti.Name, "norm") {
			continue
		}
		n := int(ti.Dims[0])
		if len(ti.Dims) > 2 {
			n *= int(ti.Dims[2])
		}
		h := uint64(14695981039346656037)
		for i := 0; i < len(ti.Name); i++ {
			h = (h ^ uint64(ti.Name[i])) * 1099511628211
		}
		w := make([]float32, n)
		for i := range w {
			x := (&rng{h + uint64(i)}).next()
			w[i] = float32(math.Ldexp(1+float64(x%16)/16, int(x>>8%25)-12))
		}
		out[ti.Name] = w
	}
	return out
}

// Options are the case's options for gguf.QuantizeModel, f the model.
func (c ModelCase) Options(f *gguf.File) (gguf.QuantizeOptions, error) {
	ft, err := gguf.ParseFileType(c.Type)
	if err != nil {
		return gguf.QuantizeOptions{}, err
	}
	opt := gguf.QuantizeOptions{FileType: ft, Pure: c.Pure, LeaveOutput: c.LeaveOutput}
	if c.Imatrix {
		opt.Imatrix = ModelImatrix(f.Tensors)
	}
	for _, d := range []struct {
		name string
		dst  **tensor.DType
	}{{c.Output, &opt.OutputType}, {c.Embd, &opt.TokenEmbeddingType}} {
		if d.name != "" {
			t, err := gguf.ParseDType(d.name)
			if err != nil {
				return opt, err
			}
			*d.dst = &t
		}
	}
	for _, s := range c.TensorTypes {
		o, err := gguf.ParseTensorType(s)
		if err != nil {
			return opt, err
		}
		opt.TensorTypes = append(opt.TensorTypes, o)
	}
	return opt, nil
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

// ModelCases are every gate model in each of its file types, some in
// --pure mixes, some with an importance matrix, some with overrides.
func ModelCases() []ModelCase {
	var out []ModelCase
	for _, s := range ModelSpecs() {
		for _, t := range s.Types {
			out = append(out, ModelCase{Model: s.Name, Type: t})
		}
	}
	for _, c := range [][2]string{{"llama", "q4_k_m"}, {"qwen2", "q3_k_m"}, {"qwen2", "iq4_xs"}, {"qwen2", "q6_k"},
		{"narrow", "q4_k_m"}, {"narrow", "iq4_xs"}, {"olmoe", "mxfp4_moe"}} {
		out = append(out, ModelCase{Model: c[0], Type: c[1], Pure: true})
	}
	// With an importance matrix: weighted rows in every mix, the rules that
	// ask for one (iq4_xs's and q4_0/q5_0's first down projections), and
	// the experts' stacks weighted per expert.
	for _, c := range []ModelCase{{Model: "llama", Type: "q4_k_m"}, {Model: "llama", Type: "q4_0"}, {Model: "llama", Type: "q5_1"},
		{Model: "llama", Type: "iq4_xs"}, {Model: "llama", Type: "q2_k"}, {Model: "llama", Type: "q3_k_m"},
		{Model: "qwen2", Type: "q5_0"}, {Model: "qwen2", Type: "q6_k"}, {Model: "olmoe", Type: "q4_k_m"},
		{Model: "qwen2moe", Type: "iq4_xs"}, {Model: "narrow", Type: "q5_k_m"}} {
		c.Imatrix = true
		out = append(out, c)
	}
	// Overrides: the head's and the embeddings' types (a tied head's too),
	// patterns (the first match wins; one skips the rules' counting of the
	// layers), with --pure, on rows that need a fallback, and the head left.
	return append(out,
		ModelCase{Model: "llama", Type: "q4_k_m", Output: "q8_0", Embd: "q5_k",
			TensorTypes: []string{`blk\.[0-2]\.attn_v=q8_0`, `blk\.0\.ffn_down=iq4_nl`, "ffn_down=q5_0"}},
		ModelCase{Model: "qwen2", Type: "q4_k_m", Output: "q5_0"},
		ModelCase{Model: "qwen2", Type: "q3_k_m", Embd: "q8_0", TensorTypes: []string{"ffn_up=q6_k"}},
		ModelCase{Model: "llama", Type: "q4_k_m", Pure: true, TensorTypes: []string{"ffn_gate=q8_0"}},
		ModelCase{Model: "narrow", Type: "q4_k_m", TensorTypes: []string{"attn=q6_k"}},
		ModelCase{Model: "llama", Type: "q5_k_m", LeaveOutput: true, Imatrix: true},
		ModelCase{Model: "olmoe", Type: "q4_k_m", TensorTypes: []string{"exps=q5_k"}, Output: "f16"})
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
