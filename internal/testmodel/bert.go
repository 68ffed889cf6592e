// The BERT-family embedding models of the gates: bert (all-MiniLM, bge) and
// nomic-bert (nomic-embed-text), with bert-base-uncased's WordPiece vocabulary;
// and bert rerankers (cross-encoders: pooling "rank" with a classification head).

package testmodel

import (
	"fmt"
	"math"

	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tensor"
)

// EmbedSpecs returns the embedding gate models (not in Specs: llama.cpp runs
// them through its embedding API, tests/reference/embed.mjs): bert in F32
// with mean pooling (all-MiniLM), in Q8_0 with [CLS] pooling (bge), in F16
// with mean pooling; nomic-bert in F32 with mean pooling (nomic-embed-text).
func EmbedSpecs() []Spec {
	nomic := bertSpec("nomic-bert-f32", tensor.F32, "mean", 24)
	nomic.Arch = "nomic-bert"
	return []Spec{
		bertSpec("bert-f32", tensor.F32, "mean", 21),
		bertSpec("bert-q8_0", tensor.Q8_0, "cls", 22),
		bertSpec("bert-f16", tensor.F16, "mean", 23),
		nomic,
	}
}

func bertSpec(name string, dt tensor.DType, pooling string, seed uint64) Spec {
	return Spec{Name: name, Arch: "bert", DType: dt, Vocab: "bert", Embed: 64, Layers: 2, FFN: 128, Heads: 4, KVHeads: 4,
		Context: 128, Seed: seed, Pooling: pooling}
}

// RankSpecs returns the reranker gate models (llama.cpp runs them through
// its ranking API, tests/reference/rank.mjs): bert cross-encoders with
// pooling "rank", whose score is the classification head on the [CLS]
// state: tanh(cls·h + cls_b), then cls_out·that + cls_out_b, element 0.
// bert-rank-f32 and bert-rank-q8_0 have both layers (ms-marco
// cross-encoders, bge-reranker); in Q8_0 cls.weight is Q8_0 and the one-row
// cls.output.weight F32, as llama-quantize leaves 1-D tensors.
// bert-rank-jina-f32 has cls only (jina-reranker-v1-tiny): its score is
// tanh(cls·h + cls_b)[0].
func RankSpecs() []Spec {
	rank := func(name string, dt tensor.DType, head string, seed uint64) Spec {
		s := bertSpec(name, dt, "rank", seed)
		s.RankHead = head
		return s
	}
	return []Spec{
		rank("bert-rank-f32", tensor.F32, "cls+output", 25),
		rank("bert-rank-q8_0", tensor.Q8_0, "cls+output", 26),
		rank("bert-rank-jina-f32", tensor.F32, "cls", 27),
	}
}

// bertTokenTypes is the token type count the models have (BERT's segments A and B).
const bertTokenTypes = 2

// buildBERT writes an encoder: metadata and tokenizer as llama.cpp's
// converter writes them for BertModel and NomicBertModel, and seeded random
// weights of the sizes that keep every sublayer's contribution visible after
// the post-norms (matrices U(±1.5/√in), biases U(±0.1), norm weights
// 1 ± 0.2), and a reranker's head (RankHead) after the blocks: cls.weight
// {D, D}, cls.bias, and for "cls+output" cls.output.weight {D, 1},
// cls.output.bias and bert.classifier.output_labels ["LABEL_0"].
func buildBERT(s Spec, v *vocab) (*gguf.Writer, error) {
	V, D, F := len(v.Tokens), s.Embed, s.FFN
	a := s.Arch
	nomic := a == "nomic-bert"
	pooling := map[string]uint32{"none": 0, "mean": 1, "cls": 2, "last": 3, "rank": 4}
	pool, ok := pooling[s.Pooling]
	if !ok {
		return nil, fmt.Errorf("testmodel %s: pooling %q", s.Name, s.Pooling)
	}
	switch {
	case s.RankHead != "" && (nomic || s.Pooling != "rank"),
		s.RankHead != "" && s.RankHead != "cls" && s.RankHead != "cls+output":
		return nil, fmt.Errorf("testmodel %s: rank head %q (%s, pooling %s)", s.Name, s.RankHead, a, s.Pooling)
	}
	clsOutput := s.RankHead == "cls+output"
	w := gguf.NewWriter()
	w.SetString("general.architecture", a)
	w.SetString("general.name", "toy test model "+s.Name)
	w.SetUint32("general.file_type", map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q8_0: 7}[s.DType])
	w.SetUint32(a+".context_length", uint32(s.Context))
	w.SetUint32(a+".embedding_length", uint32(D))
	w.SetUint32(a+".feed_forward_length", uint32(F))
	w.SetUint32(a+".block_count", uint32(s.Layers))
	w.SetUint32(a+".attention.head_count", uint32(s.Heads))
	w.SetFloat32(a+".attention.layer_norm_epsilon", 1e-12)
	w.SetBool(a+".attention.causal", false)
	w.SetUint32(a+".pooling_type", pool)
	if clsOutput {
		w.SetStrings(a+".classifier.output_labels", []string{"LABEL_0"})
	}
	if nomic {
		w.SetFloat32(a+".rope.freq_base", 1000)
	}
	w.SetString("tokenizer.ggml.model", v.Model)
	w.SetString("tokenizer.ggml.pre", "default")
	w.SetStrings("tokenizer.ggml.tokens", v.Tokens)
	w.SetInt32s("tokenizer.ggml.token_type", v.TokenType)
	w.SetUint32("tokenizer.ggml.token_type_count", bertTokenTypes)
	for _, k := range []struct {
		key string
		id  int32
	}{{"bos_token_id", v.BOS}, {"eos_token_id", v.EOS}, {"cls_token_id", v.BOS}, {"seperator_token_id", v.EOS},
		{"unknown_token_id", *v.UNK}, {"padding_token_id", 0}, {"mask_token_id", 103}} {
		w.SetUint32("tokenizer.ggml."+k.key, uint32(k.id))
	}
	w.SetBool("tokenizer.ggml.add_bos_token", true)
	w.SetBool("tokenizer.ggml.add_eos_token", true)

	add := func(name string, dt tensor.DType, scale, mean float32, shape ...int) error {
		return addRandom(w, s.Seed, name, dt, scale, mean, shape...)
	}
	mat := func(name string, out, in int) error {
		return add(name, s.DType, 1.5/float32(math.Sqrt(float64(in))), 0, out, in)
	}
	vec := func(name string, n int, mean, scale float32) error { return add(name, tensor.F32, scale, mean, n) }
	norm := func(name string) []error {
		return []error{vec(name+".weight", D, 1, 0.2), vec(name+".bias", D, 0, 0.1)}
	}
	errs := []error{
		add("token_embd.weight", s.DType, 1, 0, V, D),
		add("token_types.weight", tensor.F32, 0.5, 0, bertTokenTypes, D),
	}
	if !nomic {
		errs = append(errs, add("position_embd.weight", tensor.F32, 0.5, 0, s.Context, D))
	}
	errs = append(errs, norm("token_embd_norm")...)
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		if nomic {
			errs = append(errs, mat(p+"attn_qkv.weight", 3*D, D), mat(p+"attn_output.weight", D, D))
		} else {
			for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_output"} {
				errs = append(errs, mat(p+n+".weight", D, D), vec(p+n+".bias", D, 0, 0.1))
			}
		}
		errs = append(errs, norm(p+"attn_output_norm")...)
		if nomic {
			errs = append(errs, mat(p+"ffn_gate.weight", F, D), mat(p+"ffn_up.weight", F, D), mat(p+"ffn_down.weight", D, F))
		} else {
			errs = append(errs, mat(p+"ffn_up.weight", F, D), vec(p+"ffn_up.bias", F, 0, 0.1),
				mat(p+"ffn_down.weight", D, F), vec(p+"ffn_down.bias", D, 0, 0.1))
		}
		errs = append(errs, norm(p+"layer_output_norm")...)
	}
	if s.RankHead != "" {
		errs = append(errs, mat("cls.weight", D, D), vec("cls.bias", D, 0, 0.1))
	}
	if clsOutput {
		// One row: ggml_n_dims 1, which llama-quantize keeps in F32.
		errs = append(errs, add("cls.output.weight", tensor.F32, 1.5/float32(math.Sqrt(float64(D))), 0, 1, D),
			vec("cls.output.bias", 1, 0, 0.1))
	}
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("testmodel %s: %w", s.Name, err)
		}
	}
	return w, nil
}
