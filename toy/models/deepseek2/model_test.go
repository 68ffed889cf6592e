package deepseek2_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models"
	"github.com/toyml/toy/toy/models/deepseek2"
	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a tiny deepseek2 model with a synthetic vocabulary: V2-Lite's
// layout (split attn_k_b/attn_v_b, queries straight from x), or with lowRank
// V2's (a query bottleneck, attn_kv_b, groups).
func spec(dt tensor.DType, lowRank bool) testmodel.Spec {
	s := testmodel.Spec{Name: "m", Arch: "deepseek2", DType: dt, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 3, FFN: 64,
		Heads: 4, KVHeads: 4, Context: 64, Seed: 5, Experts: 8, ExpertsUsed: 2,
		RopeScaling: "yarn", RopeScaleFactor: 4, RopeOrigContext: 16,
		DeepSeek: &testmodel.DeepSeekSpec{KVLoRARank: 32, NopeDim: 32, RopeDim: 16, ValueDim: 32, SplitKVB: true, DenseLayers: 1,
			ExpertFFN: 32, SharedExperts: 2, Gating: 1, YarnLogMul: 0.0707}}
	if lowRank {
		d := *s.DeepSeek
		d.QLoRARank, d.SplitKVB, d.ValueDim, d.Groups, d.GroupsUsed, d.WeightsScale = 32, false, 64, 4, 2, 16
		s.ExpertsUsed, s.DeepSeek = 3, &d
	}
	return s
}

func load(t *testing.T, s testmodel.Spec) *deepseek2.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := testmodel.Write(s, path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := deepseek2.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoad(t *testing.T) {
	m := load(t, spec(tensor.Q8_0, false))
	c, a, moe := m.Config, &m.Blocks[0].(*deepseek2.Block).Attn, m.MoE(2)
	if c.KeyDim != 48 || c.ValueDim != 32 || c.RopeDim != 16 || c.KVLoraRank != 32 || !c.SplitKVB || c.QLoraRank != 0 ||
		c.DenseLayers != 1 || c.SharedExperts != 2 || c.ExpertGating != "softmax" || c.CacheWidth() != 48 {
		t.Fatalf("config %+v", c)
	}
	if a.Q == nil || a.QA != nil || a.KB.DType() != tensor.Q8_0 || a.KVB != nil || m.MoE(0) != nil || moe == nil ||
		moe.Router.W.DType() != tensor.F32 || moe.SharedDown.W.Dim(1) != 64 || !moe.SharedUngated || moe.SharedWeight != nil {
		t.Fatalf("attention %+v, MoE %+v", a, moe)
	}
	m = load(t, spec(tensor.F32, true))
	if c := m.Config; c.QLoraRank != 32 || c.SplitKVB || c.ExpertGroups != 4 || c.ExpertWeightsScale != 16 || c.CacheWidth() != 4*64 ||
		m.Blocks[2].(*deepseek2.Block).Attn.KVB == nil || m.MoE(2).Groups != 4 || m.MoE(2).Scale != 16 {
		t.Fatalf("config %+v", c)
	}
}

// The attention scale under YaRN, by hand for DeepSeek-V2-Lite's numbers:
// stretch s = 40, mscale_all_dim 0.707 (the file's yarn_log_multiplier
// 0.0707), key heads of 192. llama.cpp's RoPE factor cancels YaRN's own
// temperature, f = 1/(1 + 0.1 ln 40), so that f₀ = f·(1 + 0.1 ln 40) = 1
// and m = 1 + 0.1·0.707·ln 40 = 1.260807; the scale is m²/√192 = 0.114724.
// Without scaling it is 1/√192.
func TestAttnScale(t *testing.T) {
	c := deepseek2.Config{KeyDim: 192, RopeScaling: "yarn", RopeScale: 40, RopeOrigContext: 4096, YarnLogMul: 0.0707}
	m := 1 + 0.1*0.707*math.Log(40)
	if got, want := float64(c.AttnScale()), m*m/math.Sqrt(192); math.Abs(got-want) > 1e-6 {
		t.Errorf("YaRN attention scale %.7f, want %.7f", got, want)
	}
	if got, want := float64(c.RoPEScaling().AttnFactor), 1/(1+0.1*math.Log(40)); math.Abs(got-want) > 1e-6 {
		t.Errorf("RoPE attention factor %.7f, want %.7f", got, want)
	}
	c.RopeScaling, c.RopeScale = "", 0
	if got, want := float64(c.AttnScale()), 1/math.Sqrt(192); math.Abs(got-want) > 1e-7 {
		t.Errorf("unscaled attention scale %.7f, want %.7f", got, want)
	}
}

// The two layouts are one function: a model whose attn_kv_b is built from
// another's attn_k_b and attn_v_b ([K_h; V_h] = [attn_k_b[h]ᵀ; attn_v_b[h]]
// per head) gives the same logits, decompressed multi-head attention on one
// side, absorbed multi-query attention over the latent on the other.
func TestAbsorbedIsDecompressed(t *testing.T) {
	split := load(t, spec(tensor.F32, false))
	c := split.Config
	H, R, Dn, Dv := c.Heads, c.KVLoraRank, c.KeyDim-c.RopeDim, c.ValueDim
	whole := *split
	whole.Config.SplitKVB = false
	whole.CacheWidth = whole.Config.CacheWidth()
	whole.Blocks = make([]models.Block, len(split.Blocks))
	for i := range split.Blocks {
		b := split.Blocks[i].(*deepseek2.Block)
		kb, vb := b.Attn.KB.Data(), b.Attn.VB.Data() // [H, R, Dn], [H, Dv, R]
		w := make([]float32, 0, H*(Dn+Dv)*R)
		for h := range H {
			for n := range Dn {
				for r := range R {
					w = append(w, kb[(h*R+r)*Dn+n])
				}
			}
			w = append(w, vb[h*Dv*R:(h+1)*Dv*R]...)
		}
		whole.Blocks[i] = &deepseek2.Block{AttnNorm: b.AttnNorm, FFNNorm: b.FFNNorm, FFN: b.FFN, Attn: deepseek2.Attention{
			Q: b.Attn.Q, KVA: b.Attn.KVA, KVANorm: b.Attn.KVANorm, O: b.Attn.O,
			KVB:   &nn.Linear{W: tensor.FromFloat32(w, H*(Dn+Dv), R)},
			Heads: H, Rank: R, KeyDim: c.KeyDim, ValueDim: Dv, RoPE: b.Attn.RoPE, Scale: b.Attn.Scale}}
	}
	ids := []int32{5, 17, 250, 3, 99, 42, 7, 120}
	a, b := split.Forward(ids, split.NewCache(8)), whole.Forward(ids, whole.NewCache(8))
	if d := maxDiff(a.Data(), b.Data()); d > 1e-4 {
		t.Fatalf("absorbed and decompressed logits differ by up to %.2e", d)
	}
}

func maxDiff(a, b []float32) float64 {
	worst := 0.0
	for i := range a {
		worst = max(worst, math.Abs(float64(a[i]-b[i])))
	}
	return worst
}

// Metadata that disagrees with the tensors, or describes nothing buildable,
// is an error at load that names the problem.
func TestLyingMetadata(t *testing.T) {
	for _, c := range []struct {
		name    string
		lowRank bool
		edit    func(w *gguf.Writer)
		want    string
	}{
		{"kv rank", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.attention.kv_lora_rank", 16) },
			"attn_kv_a_mqa.weight has shape [48 64], want [32 64]"},
		{"q rank", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.attention.q_lora_rank", 16) }, "attn_q_a_norm.weight is missing"},
		{"direct q", true, func(w *gguf.Writer) { w.SetUint32("deepseek2.attention.q_lora_rank", 0) }, "attn_q_a.weight has shape [32 64], want [0 64]"},
		{"extra q", true, func(w *gguf.Writer) {
			if err := w.AddFloat32("blk.0.attn_q.weight", tensor.F32, make([]float32, 192*64), 192, 64); err != nil {
				t.Fatal(err)
			}
		}, "attn_q.weight is present"},
		{"split", true, func(w *gguf.Writer) {
			w.SetUint32("deepseek2.attention.key_length_mla", 48)
			w.SetUint32("deepseek2.attention.value_length_mla", 64)
		}, "attn_k_b.weight is missing"},
		{"unsplit", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.attention.key_length_mla", 40) }, "attn_q.weight has shape [192 64], want [160 64]"},
		{"shared", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.expert_shared_count", 1) }, "ffn_gate_shexp.weight has shape [64 64], want [32 64]"},
		{"groups", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.expert_group_count", 3) }, "in 3 groups"},
		{"dense", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.leading_dense_block_count", 2) }, "tensor not found: blk.1.ffn_gate.weight"},
		{"gating", false, func(w *gguf.Writer) { w.SetUint32("deepseek2.expert_gating_func", 4) }, "unsupported model feature: expert gating function 4 sqrt_softplus"},
		{"rope scaling", false, func(w *gguf.Writer) { w.SetString("deepseek2.rope.scaling.type", "longrope") }, `unsupported model feature: RoPE scaling "longrope"`},
		{"temperature", false, func(w *gguf.Writer) { w.SetFloat32("deepseek2.attention.temperature_scale", 0.1) }, "unsupported model feature: attention temperature"},
	} {
		_, err := deepseek2.Load(testmodel.Edited(t, spec(tensor.F32, c.lowRank), c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Decoding one token at a time through the KV cache gives the logits of one
// prefill over the same tokens, in both layouts (the cache holds the latent
// in one, every head's keys and values in the other).
func TestDecodeMatchesPrefill(t *testing.T) {
	for _, lowRank := range []bool{false, true} {
		m := load(t, spec(tensor.F32, lowRank))
		ids := []int32{5, 17, 250, 3, 99, 42, 7, 120}
		all := m.Forward(ids, m.NewCache(len(ids))) // [T, V]
		cache := m.NewCache(len(ids))
		worst := 0.0
		for i, id := range ids {
			step := m.Forward([]int32{id}, cache) // [1, V]
			worst = max(worst, maxDiff(step.Row(0), all.Row(i)))
		}
		if worst > 1e-4 {
			t.Fatalf("low-rank %v: decode and prefill logits differ by up to %.2e", lowRank, worst)
		}
	}
}

// Every weight of a fresh model gets a gradient through the latent
// attention and both MoE layers, except the constant choice bias.
func TestGradientsReachEveryWeight(t *testing.T) {
	for _, lowRank := range []bool{false, true} {
		c := deepseek2.Config{VocabSize: 40, ContextLength: 16, Embed: 32, Layers: 2, DenseLayers: 1, FFN: 32, Heads: 2,
			KVLoraRank: 16, KeyDim: 24, ValueDim: 16, RopeDim: 8, SplitKVB: !lowRank, Experts: 4, ExpertsUsed: 2, ExpertFFN: 16,
			SharedExperts: 1, ExpertGating: "softmax", RopeBase: 10000, NormEps: 1e-6}
		if lowRank {
			c.QLoraRank, c.ExpertGating, c.ExpertBias, c.ExpertWeightsNorm, c.ExpertWeightsScale = 16, "sigmoid", true, true, 2.5
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		m := deepseek2.NewRandom(c, 3)
		var n int64
		for _, w := range m.Weights() {
			n += int64(w.T.Len())
		}
		if got := m.Card().ParamCount; got != n { // the card counts the weights the model holds
			t.Errorf("low-rank %v: the card counts %d parameters, the weights hold %d", lowRank, got, n)
		}
		tape := tensor.NewTape()
		tensor.Record(tape)
		loss := tensor.CrossEntropy(m.Forward([]int32{1, 7, 3, 9, 22, 5}, nil), []int32{7, 3, 9, 22, 5, 1})
		tape.Backward(loss)
		tensor.Record(nil)
		for _, w := range m.Weights() {
			g := w.T.Grad()
			if strings.HasSuffix(w.Name, "exp_probs_b.bias") {
				if g != nil {
					t.Errorf("%s: the constant bias got a gradient", w.Name)
				}
				continue
			}
			if g == nil || maxDiff(g.Data(), make([]float32, g.Len())) == 0 {
				t.Errorf("low-rank %v: %s has no gradient", lowRank, w.Name)
			}
		}
	}
}
