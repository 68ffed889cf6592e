// Package testmodel writes the tiny seeded random-weight GGUF models that the
// gates run in both toy and llama.cpp. The same spec and seed always give the
// same bytes, so tests regenerate the models instead of shipping them and
// check them against the SHA-256 recorded in the goldens.
package testmodel

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// Spec describes one test model.
type Spec struct {
	Name      string       `json:"name"`
	Arch      string       `json:"arch"` // gpt2, llama, qwen2
	DType     tensor.DType `json:"-"`    // type of the weight matrices
	Vocab     string       `json:"vocab"`
	Embed     int          `json:"embed"`
	Layers    int          `json:"layers"`
	FFN       int          `json:"ffn"`
	Heads     int          `json:"heads"`
	KVHeads   int          `json:"kv_heads"`
	Context   int          `json:"context"`
	Tied      bool         `json:"tied"`
	Seed      uint64       `json:"seed"`
	PromptIDs []int32      `json:"prompt_ids"`
	VocabSize int          `json:"vocab_size,omitempty"` // synthetic vocabulary size (Vocab "none")
	// RopeFreqs: Llama 3.1's RoPE, base 500000 with a rope_freqs.weight of
	// frequency factors (llama only).
	RopeFreqs bool `json:"rope_freqs,omitempty"`
	// HeadDim, when not 0, is a head width other than Embed/Heads (written
	// as attention.key_length, as Qwen3's files have it).
	HeadDim int `json:"head_dim,omitempty"`
	// Window, AttnSoftCap, FinalSoftCap: Gemma 2's sliding window and soft
	// caps (gemma2; Window also gemma3).
	Window       int     `json:"window,omitempty"`
	AttnSoftCap  float32 `json:"attn_softcap,omitempty"`
	FinalSoftCap float32 `json:"final_softcap,omitempty"`
	// RopeScaling, RopeScaleFactor, RopeOrigContext: RoPE scaling by
	// metadata, "linear" or "yarn" (llama, qwen2).
	RopeScaling     string  `json:"rope_scaling,omitempty"`
	RopeScaleFactor float32 `json:"rope_scale,omitempty"`
	RopeOrigContext int     `json:"rope_orig_context,omitempty"`
	// Experts and ExpertsUsed: a mixture of experts per layer, E of
	// them, k run per token, each of width FFN (olmoe, llama as Mixtral,
	// qwen3moe).
	Experts     int `json:"experts,omitempty"`
	ExpertsUsed int `json:"experts_used,omitempty"`
	SharedFFN   int `json:"shared_ffn,omitempty"` // a shared expert of this width (qwen2moe)
	// DeepSeek: the latent attention's and the experts' shapes (deepseek2;
	// deepseek.go).
	DeepSeek *DeepSeekSpec `json:"deepseek,omitempty"`
	// Llama4: the experts' width and the mixture layers' period (llama4;
	// llama4.go).
	Llama4 *Llama4Spec `json:"llama4,omitempty"`
	// Lfm2: the layers' kinds and the convolution's taps (lfm2; lfm2.go).
	Lfm2 *Lfm2Spec `json:"lfm2,omitempty"`
	// Qwen35: the delta rule's shape and the layer pattern (qwen35;
	// qwen35.go).
	Qwen35 *Qwen35Spec `json:"qwen35,omitempty"`
	// Glm4: glm4moe's experts, router and prediction layers (glm4.go).
	Glm4 *Glm4Spec `json:"glm4,omitempty"`
	// Ernie: ERNIE 4.5's biases, layer pattern and experts (ernie.go).
	Ernie *ErnieSpec `json:"ernie,omitempty"`
	// TopK, when not 0, is how many of each distribution's most likely
	// tokens the golden keeps (gen_goldens.sh's top_k; 10 otherwise).
	TopK int `json:"top_k,omitempty"`
	// RopeDim, when not 0, rotates only the first RopeDim features of each
	// head (phi2, phi3); LongRoPE adds Phi-3's rope_factors_short and
	// rope_factors_long over RopeOrigContext; SeparateQKV stores phi2's
	// attention as attn_q, attn_k, attn_v rather than attn_qkv (phi.go).
	RopeDim     int  `json:"rope_dim,omitempty"`
	LongRoPE    bool `json:"long_rope,omitempty"`
	SeparateQKV bool `json:"separate_qkv,omitempty"`
	// Pooling: an embedding model's pooling, "mean", "cls", "last",
	// "none" or "rank" (bert, nomic-bert: EmbedSpecs and RankSpecs in
	// bert.go).
	Pooling string `json:"pooling,omitempty"`
	// RankHead: a reranker's classification head (bert with pooling
	// "rank"): "cls" for cls.weight and cls.bias only (jina-reranker-v1),
	// "cls+output" for those and cls.output.weight and cls.output.bias (one
	// label: ms-marco cross-encoders, bge-reranker).
	RankHead string `json:"rank_head,omitempty"`
}

// weightType is the type a model of type dt stores matrix name in: a Q4_K
// or Q5_K model keeps the output head and the feed-forward down projections
// in Q6_K, as llama.cpp's Q4_K_M and Q5_K_M mixes do; Q3_K and Q2_K models
// keep the head in Q6_K and the down projections one step up (Q5_K, Q3_K),
// as llama.cpp's Q3_K_M and Q2_K mixes do for some layers.
func weightType(dt tensor.DType, name string) tensor.DType {
	head, down := name == "output.weight", strings.HasSuffix(name, "ffn_down.weight")
	switch {
	case (dt == tensor.Q4_K || dt == tensor.Q5_K) && (head || down),
		(dt == tensor.Q3_K || dt == tensor.Q2_K) && head:
		return tensor.Q6_K
	case dt == tensor.Q3_K && down:
		return tensor.Q5_K
	case dt == tensor.Q2_K && down:
		return tensor.Q3_K
	// IQ4_NL and IQ4_XS: llama.cpp's mixes (no imatrix) at the test shapes
	// (no layer among the first eighth, grouped-query ratio 2) change only
	// the head: Q6_K, or Q8_0 where rows are not whole 256-weight blocks.
	case dt == tensor.IQ4_XS && head:
		return tensor.Q6_K
	case dt == tensor.IQ4_NL && head:
		return tensor.Q8_0
	// MXFP4: llama.cpp's MXFP4_MOE mix, the experts' stacks in MXFP4 and
	// every other matrix in Q8_0 (gpt-oss's releases).
	case dt == tensor.MXFP4 && !strings.Contains(name, "_exps.weight"):
		return tensor.Q8_0
	}
	return dt
}

// File is the model's file name.
func (s Spec) File() string { return s.Name + ".gguf" }

var gpt2Prompt = []int32{15496, 11, 616, 1438, 318, 257, 1332, 2746, 326, 10408, 13, 383, 2068, 7586, 21831, 18045}
var llamaPrompt = []int32{1, 15043, 29892, 590, 1024, 338, 263, 4086, 1058, 5360, 13, 1576, 304, 367, 2691, 29889}

// Specs returns the gate models: gpt2, llama and qwen2, each in F32, F16 and
// Q8_0; llama3-f32, a llama with Llama 3.1's RoPE frequency factors; and
// qwen3 in F32 and Q8_0, with per-head query/key norms and heads wider than
// Embed/Heads; olmoe in F32 and Q8_0, a mixture of 8 experts (olmoe.go).
func Specs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0} {
		suffix := map[tensor.DType]string{tensor.F32: "f32", tensor.F16: "f16", tensor.Q8_0: "q8_0"}[dt]
		out = append(out,
			Spec{Name: "gpt2-" + suffix, Arch: "gpt2", DType: dt, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 256,
				Heads: 4, KVHeads: 4, Context: 128, Tied: false, Seed: 2, PromptIDs: gpt2Prompt},
			llamaSpec("llama-"+suffix, dt, 64, 3),
			qwen2Spec("qwen2-"+suffix, dt, 4),
		)
	}
	llama3 := llamaSpec("llama3-f32", tensor.F32, 64, 5)
	llama3.RopeFreqs = true
	out = append(out, llama3)
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0} {
		out = append(out, Spec{Name: "qwen3-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0"}[dt], Arch: "qwen3", DType: dt,
			Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 2, HeadDim: 32, Context: 256, Tied: true, Seed: 6,
			PromptIDs: gpt2Prompt})
	}
	out = append(out, olmoeSpecs()...)
	out = append(out, deepseekSpecs()...)
	out = append(out, moeSpecs()...)
	out = append(out, gemmaSpecs()...)
	out = append(out, ropeScalingSpecs()...)
	out = append(out, phiSpecs()...)
	out = append(out, graniteSpecs()...)
	out = append(out, smollm3Specs()...)
	out = append(out, exaoneSpecs()...)
	out = append(out, cohereSpecs()...)
	out = append(out, mistral3Specs()...)
	out = append(out, starcoder2Specs()...)
	out = append(out, olmo2Specs()...)
	out = append(out, gptossSpecs()...)
	out = append(out, llama4Specs()...)
	out = append(out, lfm2Specs()...)
	out = append(out, qwen35Specs()...)
	out = append(out, glm4Specs()...)
	out = append(out, ernieSpecs()...)
	// Q4_K_M: k-quant super-blocks need widths that are multiples of 256.
	// Q4_0 and Q5_0: older files, and Q4_K_M files of narrower models.
	return append(out,
		llamaSpec("llama-q4_k_m", tensor.Q4_K, 256, 8),
		llamaSpec("llama-q4_0", tensor.Q4_0, 64, 3),
		qwen2Spec("qwen2-q5_0", tensor.Q5_0, 4),
		// Q5_K_M, Q3_K_M and Q2_K mixes (weightType), and the older
		// Q4_1 and Q5_1 with their Q8_1 activations.
		llamaSpec("llama-q5_k_m", tensor.Q5_K, 256, 9),
		llamaSpec("llama-q3_k_m", tensor.Q3_K, 256, 10),
		llamaSpec("llama-q2_k", tensor.Q2_K, 256, 11),
		llamaSpec("llama-q4_1", tensor.Q4_1, 64, 3),
		qwen2Spec("qwen2-q5_1", tensor.Q5_1, 4),
		// The non-linear IQ4_NL (blocks of 32) and IQ4_XS (super-blocks
		// of 256) of LM Studio's and bartowski's uploads (weightType).
		llamaSpec("llama-iq4_nl", tensor.IQ4_NL, 64, 3),
		llamaSpec("llama-iq4_xs", tensor.IQ4_XS, 256, 16))
}

// llamaSpec is the two-layer Llama of the gates in type dt: the llama2
// vocabulary, width embed and a feed-forward twice as wide, 4 heads on 2 KV
// heads.
func llamaSpec(name string, dt tensor.DType, embed int, seed uint64) Spec {
	return Spec{Name: name, Arch: "llama", DType: dt, Vocab: "llama2", Embed: embed, Layers: 2, FFN: 2 * embed,
		Heads: 4, KVHeads: 2, Context: 256, Tied: false, Seed: seed, PromptIDs: llamaPrompt}
}

// qwen2Spec is the two-layer Qwen2 of the gates in type dt: llamaSpec's
// shape at width 64, with the GPT-2 vocabulary and tied embeddings.
func qwen2Spec(name string, dt tensor.DType, seed uint64) Spec {
	return Spec{Name: name, Arch: "qwen2", DType: dt, Vocab: "gpt2", Embed: 64, Layers: 2, FFN: 128,
		Heads: 4, KVHeads: 2, Context: 256, Tied: true, Seed: seed, PromptIDs: gpt2Prompt}
}

// llama3RopeFactors returns the frequency factors Llama 3.1's RoPE scaling
// gives a head of width dim: pair i, of wavelength λ = 2π·base^(2i/dim), keeps
// its frequency when λ is short (< ctx/high), is slowed by factor when long
// (> ctx/low), and in between is slowed smoothly; the factor divides the
// angle (as llama.cpp's converter writes rope_freqs.weight). The test model
// uses a tiny original context so that all three cases occur.
func llama3RopeFactors(dim int, base float64) []float32 {
	const factor, low, high, ctx = 8.0, 1.0, 4.0, 64.0
	out := make([]float32, dim/2)
	for i := range out {
		lambda := 2 * math.Pi * math.Pow(base, float64(2*i)/float64(dim))
		switch {
		case lambda < ctx/high:
			out[i] = 1
		case lambda > ctx/low:
			out[i] = factor
		default:
			smooth := (ctx/lambda - low) / (high - low)
			out[i] = float32(1 / ((1-smooth)/factor + smooth))
		}
	}
	return out
}

// BenchSpecs returns random models with SmolLM2-135M's shape (not committed,
// not gated): F32, Q8_0 and Q4_0, and Q4_K_M, Q5_K_M, Q3_K_M and Q6_K at width
// 512 (the k-quants need multiples of 256), with
// a synthetic vocabulary of 49152 tokens.
func BenchSpecs() []Spec {
	var out []Spec
	for _, dt := range []tensor.DType{tensor.F32, tensor.Q8_0, tensor.Q4_0} {
		out = append(out, Spec{Name: "smollm2-shape-" + map[tensor.DType]string{tensor.F32: "f32", tensor.Q8_0: "q8_0", tensor.Q4_0: "q4_0"}[dt],
			Arch: "llama", DType: dt, Vocab: "none", VocabSize: 49152, Embed: 576, Layers: 30, FFN: 1536, Heads: 9, KVHeads: 3,
			Context: 2048, Tied: true, Seed: 7, PromptIDs: llamaPrompt})
	}
	// The k-quant mixes need widths that are multiples of 256: SmolLM2's
	// depth and feed-forward width at width 512 (8 heads of 64, 2 KV heads).
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q5_K, tensor.Q3_K, tensor.Q6_K} {
		out = append(out, Spec{Name: "smollm2-shape-" + map[tensor.DType]string{tensor.Q4_K: "q4_k_m", tensor.Q5_K: "q5_k_m", tensor.Q3_K: "q3_k_m", tensor.Q6_K: "q6_k"}[dt],
			Arch: "llama", DType: dt, Vocab: "none", VocabSize: 49152, Embed: 512, Layers: 30, FFN: 1536, Heads: 8, KVHeads: 2,
			Context: 2048, Tied: true, Seed: 7, PromptIDs: llamaPrompt})
	}
	return out
}

// BenchQwen35Specs are the Qwen3.5-0.8B-shaped benchmark models
// (tests/bench/run.sh with SHAPE=qwen35): 24 layers of width 1024, 18 of
// them the delta rule (16 key and 16 value heads of 128), 6 gated attention
// (8 heads of 256, 2 KV heads, 64 features rotated), the full vocabulary of
// 248320 with the head tied to it; in Q8_0.
func BenchQwen35Specs() []Spec {
	return []Spec{{Name: "qwen35-shape-q8_0", Arch: "qwen35", DType: tensor.Q8_0, Vocab: "none", VocabSize: 248320, Embed: 1024,
		Layers: 24, FFN: 3584, Heads: 8, KVHeads: 2, HeadDim: 256, RopeDim: 64, Context: 4096, Tied: true, Seed: 7,
		PromptIDs: llamaPrompt, Qwen35: &Qwen35Spec{KHeads: 16, VHeads: 16, StateDim: 128, ConvL: 4, Interval: 4}}}
}

// vocab is the JSON written by tests/tokenizer/vocab.mjs.
type vocab struct {
	Model     string    `json:"model"`
	Pre       string    `json:"pre"`
	Tokens    []string  `json:"tokens"`
	Scores    []float32 `json:"scores"`
	TokenType []int32   `json:"token_type"`
	Merges    []string  `json:"merges"`
	BOS       int32     `json:"bos"`
	EOS       int32     `json:"eos"`
	UNK       *int32    `json:"unk"`
}

// VocabDir is where the vocabulary files live (tests/reference/vocab).
func VocabDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tests", "reference", "vocab")
}

func loadVocab(name string) (*vocab, error) {
	f, err := os.Open(filepath.Join(VocabDir(), name+".json.gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var v vocab
	return &v, json.NewDecoder(z).Decode(&v)
}

// syntheticVocab is a SentencePiece-style vocabulary of n pieces for the
// benchmark models: <unk>, <s>, </s>, 256 byte tokens, then "▁tokN".
func syntheticVocab(n int) *vocab {
	v := &vocab{Model: "llama", BOS: 1, EOS: 2, UNK: new(int32)}
	for i := 0; i < n; i++ {
		var s string
		t := int32(1)
		switch {
		case i == 0:
			s, t = "<unk>", 2
		case i == 1:
			s, t = "<s>", 3
		case i == 2:
			s, t = "</s>", 3
		case i < 3+256:
			s, t = fmt.Sprintf("<0x%02X>", i-3), 6
		default:
			s = fmt.Sprintf("▁tok%d", i)
		}
		v.Tokens = append(v.Tokens, s)
		v.TokenType = append(v.TokenType, t)
		v.Scores = append(v.Scores, -float32(i))
	}
	return v
}

// SetSyntheticVocab writes the tokenizer metadata of the benchmark models'
// synthetic SentencePiece vocabulary of n pieces, for models built
// elsewhere (tests/cuda writes its speed models with it, so that llama.cpp
// can load the same files).
func SetSyntheticVocab(w *gguf.Writer, n int) { setVocab(w, syntheticVocab(n), "default") }

// setVocab writes vocabulary v as GGUF tokenizer metadata.
func setVocab(w *gguf.Writer, v *vocab, pre string) {
	w.SetString("tokenizer.ggml.model", v.Model)
	w.SetString("tokenizer.ggml.pre", pre)
	w.SetStrings("tokenizer.ggml.tokens", v.Tokens)
	if v.Scores != nil {
		w.SetFloat32s("tokenizer.ggml.scores", v.Scores)
	}
	w.SetInt32s("tokenizer.ggml.token_type", v.TokenType)
	if v.Merges != nil {
		w.SetStrings("tokenizer.ggml.merges", v.Merges)
	}
	w.SetUint32("tokenizer.ggml.bos_token_id", uint32(v.BOS))
	w.SetUint32("tokenizer.ggml.eos_token_id", uint32(v.EOS))
	if v.UNK != nil {
		w.SetUint32("tokenizer.ggml.unknown_token_id", uint32(*v.UNK))
	}
}

// rng is splitmix64: tiny, and fully specified here, so the weights never
// change with the Go version.
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

// addRandom adds the tensor name of the given shape to w, stored as dt:
// mean + scale·u for each value, u uniform in [-1, 1) from the tensor's own
// stream (seedFor), so no tensor's values depend on another's.
func addRandom(w *gguf.Writer, seed uint64, name string, dt tensor.DType, scale, mean float32, shape ...int) error {
	r := seedFor(seed, name)
	n := 1
	for _, d := range shape {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = mean + float32(scale*r.uniform()) // rounded: no fused multiply-add on arm64
	}
	return w.AddFloat32(name, dt, x, shape...)
}

func seedFor(seed uint64, name string) *rng {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d/%s", seed, name)))
	var s uint64
	for _, b := range h[:8] {
		s = s<<8 | uint64(b)
	}
	return &rng{s}
}

// Write generates the model of spec s into path and returns its SHA-256.
func Write(s Spec, path string) (string, error) {
	w, err := build(s)
	if err != nil {
		return "", err
	}
	if err := w.WriteFile(path); err != nil {
		return "", err
	}
	return FileSHA256(path)
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func build(s Spec) (*gguf.Writer, error) {
	var v *vocab
	if s.Vocab == "none" {
		v = syntheticVocab(s.VocabSize)
	} else {
		var err error
		if v, err = loadVocab(s.Vocab); err != nil {
			return nil, fmt.Errorf("testmodel %s: %w", s.Name, err)
		}
	}
	if s.Arch == "phi3" && v.Model == "llama" {
		addPhi3Tokens(v)
	}
	if s.Arch == "bert" || s.Arch == "nomic-bert" {
		return buildBERT(s, v)
	}
	V, D, F, hd := len(v.Tokens), s.Embed, s.FFN, s.Embed/s.Heads
	if s.HeadDim != 0 {
		hd = s.HeadDim
	}
	w := gguf.NewWriter()
	a := s.Arch
	w.SetString("general.architecture", a)
	w.SetString("general.name", "toy test model "+s.Name)
	w.SetUint32("general.file_type", map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q8_0: 7, tensor.Q4_0: 2, tensor.Q5_0: 8,
		tensor.Q4_K: 15, tensor.Q5_K: 17, tensor.Q3_K: 12, tensor.Q2_K: 10, tensor.Q6_K: 18, tensor.Q4_1: 3, tensor.Q5_1: 9,
		tensor.IQ4_NL: 25, tensor.IQ4_XS: 30, tensor.MXFP4: 38}[s.DType])
	w.SetUint32(a+".context_length", uint32(s.Context))
	w.SetUint32(a+".embedding_length", uint32(D))
	w.SetUint32(a+".block_count", uint32(s.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(F))
	w.SetUint32(a+".attention.head_count", uint32(s.Heads))
	if a == "gpt2" {
		w.SetFloat32(a+".attention.layer_norm_epsilon", 1e-5)
	} else if isPhi(a) {
		phiMetadata(w, s, hd)
	} else {
		w.SetUint32(a+".attention.head_count_kv", uint32(s.KVHeads))
		if a == "starcoder2" || a == "command-r" || a == "cohere2" {
			w.SetFloat32(a+".attention.layer_norm_epsilon", 1e-5)
		} else {
			w.SetFloat32(a+".attention.layer_norm_rms_epsilon", 1e-6)
		}
		w.SetUint32(a+".rope.dimension_count", uint32(hd))
		if hd != D/s.Heads {
			w.SetUint32(a+".attention.key_length", uint32(hd))
			w.SetUint32(a+".attention.value_length", uint32(hd))
		}
		base := map[string]float32{"llama": 10000, "qwen2": 1000000, "qwen3": 1000000, "olmoe": 10000, "qwen2moe": 1000000, "qwen3moe": 1000000, "gemma": 10000, "gemma2": 10000, "gemma3": 1000000, "granite": 10000, "granitemoe": 10000, "starcoder2": 100000, "olmo2": 500000, "smollm3": 2000000, "exaone": 1000000, "command-r": 8000000, "cohere2": 50000, "mistral3": 1000000, "gpt-oss": 150000, "llama4": 500000, "lfm2": 1000000, "lfm2moe": 1000000, "qwen35": 10000000, "qwen35moe": 10000000, "qwen3next": 10000000, "glm4": 10000, "glm4moe": 1000000, "ernie4_5": 500000, "ernie4_5-moe": 500000}[a]
		if s.RopeFreqs {
			base = 500000
		}
		w.SetFloat32(a+".rope.freq_base", base)
	}
	if a == "olmoe" {
		olmoeMetadata(w, s)
	} else if a == "deepseek2" {
		deepseekMetadata(w, s)
	} else if a == "llama4" {
		llama4Metadata(w, s)
	} else if a == "lfm2" || a == "lfm2moe" {
		lfm2Metadata(w, s)
	} else if s.Qwen35 != nil {
		qwen35Metadata(w, s)
	} else if a == "glm4" || a == "glm4moe" {
		glm4Metadata(w, s)
	} else if s.Ernie != nil {
		ernieMetadata(w, s)
	} else if s.Experts > 0 {
		moeMetadata(w, s)
	}
	if a == "gemma2" || a == "gemma3" {
		gemmaMetadata(w, s)
	}
	if s.RopeScaling != "" {
		ropeScalingMetadata(w, s)
	}
	if a == "granite" || a == "granitemoe" {
		graniteMetadata(w, s)
	}
	if a == "olmo2" {
		olmo2Metadata(w, s)
	}
	if a == "command-r" || a == "cohere2" {
		cohereMetadata(w, s)
	}
	if a == "mistral3" {
		mistral3Metadata(w, s)
	}
	if a == "gpt-oss" {
		w.SetUint32(a+".attention.sliding_window", uint32(s.Window))
	}
	pre := "default"
	if v.Model == "gpt2" {
		pre = map[string]string{"gpt2": "gpt-2", "qwen2": "qwen2", "qwen3": "qwen2", "qwen2moe": "qwen2", "qwen3moe": "qwen2", "starcoder2": "starcoder", "phi2": "phi-2", "phi3": "gpt-2", "llama4": "llama4", "lfm2": "lfm2", "lfm2moe": "lfm2", "qwen35": "qwen35", "qwen35moe": "qwen35", "qwen3next": "qwen2", "glm4": "glm4", "glm4moe": "glm4"}[a]
	}
	setVocab(w, v, pre)

	add := func(name string, dt tensor.DType, scale, mean float32, shape ...int) error {
		return addRandom(w, s.Seed, name, dt, scale, mean, shape...)
	}
	mat := func(name string, out, in int) error { // weight [out, in] in the model's type
		return add(name, weightType(s.DType, name), 1.5/float32(math.Sqrt(float64(in))), 0, out, in)
	}
	vec := func(name string, n int, mean, scale float32) error { return add(name, tensor.F32, scale, mean, n) }

	errs := []error{add("token_embd.weight", weightType(s.DType, "token_embd.weight"), 1, 0, V, D)}
	if s.RopeFreqs {
		errs = append(errs, w.AddFloat32("rope_freqs.weight", tensor.F32, llama3RopeFactors(hd, 500000), hd/2))
	}
	if isPhi(a) {
		errs = append(errs, phiGlobals(w, s, hd, V, vec)...)
	}
	if a == "gpt2" {
		errs = append(errs, add("position_embd.weight", tensor.F32, 0.5, 0, s.Context, D))
	}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		if isPhi(a) {
			errs = append(errs, phiLayer(s, p, hd, mat, vec)...)
			continue
		}
		if a == "olmo2" {
			errs = append(errs, olmo2Layer(s, p, hd, mat, vec)...)
			continue
		}
		if a == "command-r" || a == "cohere2" {
			errs = append(errs, cohereLayer(s, p, hd, mat, vec, add)...)
			continue
		}
		if a == "gpt-oss" {
			errs = append(errs, gptossLayer(s, p, hd, add, vec)...)
			continue
		}
		if a == "llama4" {
			errs = append(errs, llama4Layer(s, l, p, hd, add, vec)...)
			continue
		}
		if a == "lfm2" || a == "lfm2moe" {
			errs = append(errs, lfm2Layer(s, l, p, hd, add, vec)...)
			continue
		}
		if s.Qwen35 != nil {
			errs = append(errs, qwen35Layer(s, l, p, add, vec)...)
			continue
		}
		if a == "glm4" || a == "glm4moe" {
			errs = append(errs, glm4Layer(s, l, p, hd, add, vec)...)
			continue
		}
		if s.Ernie != nil {
			errs = append(errs, ernieLayer(s, l, p, hd, add, vec)...)
			continue
		}
		errs = append(errs, vec(p+"attn_norm.weight", D, 1, 0.2), vec(p+"ffn_norm.weight", D, 1, 0.2))
		if a == "gpt2" {
			errs = append(errs,
				vec(p+"attn_norm.bias", D, 0, 0.1), vec(p+"ffn_norm.bias", D, 0, 0.1),
				mat(p+"attn_qkv.weight", 3*D, D), vec(p+"attn_qkv.bias", 3*D, 0, 0.1),
				mat(p+"attn_output.weight", D, D), vec(p+"attn_output.bias", D, 0, 0.1),
				mat(p+"ffn_up.weight", F, D), vec(p+"ffn_up.bias", F, 0, 0.1),
				mat(p+"ffn_down.weight", D, F), vec(p+"ffn_down.bias", D, 0, 0.1))
			continue
		}
		if a == "olmoe" {
			errs = append(errs, olmoeLayer(s, p, hd, add, vec)...)
			continue
		}
		if a == "starcoder2" {
			errs = append(errs, starcoder2Layer(s, p, hd, mat, vec)...)
			continue
		}
		if a == "deepseek2" {
			errs = append(errs, deepseekLayer(s, l, p, add)...)
			continue
		}
		q, kv := s.Heads*hd, s.KVHeads*hd
		errs = append(errs, mat(p+"attn_q.weight", q, D), mat(p+"attn_k.weight", kv, D), mat(p+"attn_v.weight", kv, D))
		if a == "qwen2" || a == "qwen2moe" {
			errs = append(errs, vec(p+"attn_q.bias", q, 0, 0.1), vec(p+"attn_k.bias", kv, 0, 0.1), vec(p+"attn_v.bias", kv, 0, 0.1))
		}
		if a == "qwen3" || a == "qwen3moe" || a == "gemma3" {
			errs = append(errs, vec(p+"attn_q_norm.weight", hd, 1, 0.3), vec(p+"attn_k_norm.weight", hd, 1, 0.3))
		}
		errs = append(errs, mat(p+"attn_output.weight", D, q))
		if s.Experts > 0 {
			errs = append(errs, moeLayer(s, p, add)...)
		} else {
			errs = append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
		}
		if a == "gemma2" || a == "gemma3" {
			errs = append(errs, vec(p+"post_attention_norm.weight", D, 1, 0.2), vec(p+"post_ffw_norm.weight", D, 1, 0.2))
		}
	}
	// Output norm weights of mean 0: with a tied head, weights near 1 would
	// make every token predict itself (h ≈ e_t, so h·e_t dominates).
	if a == "lfm2" || a == "lfm2moe" { // llama.cpp's name for LFM2's final norm
		errs = append(errs, vec("token_embd_norm.weight", D, 0, 1.5))
	} else {
		errs = append(errs, vec("output_norm.weight", D, 0, 1.5))
	}
	if a == "gpt2" || a == "starcoder2" {
		errs = append(errs, vec("output_norm.bias", D, 0, 0.1))
	}
	if !s.Tied {
		errs = append(errs, add("output.weight", weightType(s.DType, "output.weight"), 1, 0, V, D))
	}
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("testmodel %s: %w", s.Name, err)
		}
	}
	return w, nil
}

// Edited writes the model of s in a temporary directory, applies edit to its
// metadata, and returns the parsed result: for tests of files whose
// metadata disagrees with their tensors.
func Edited(t testing.TB, s Spec, edit func(w *gguf.Writer)) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), s.File())
	if _, err := Write(s, path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := gguf.NewWriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	edit(w)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}
