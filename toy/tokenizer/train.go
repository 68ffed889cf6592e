// train.go: learning a byte-level BPE vocabulary from text.

package tokenizer

import (
	"fmt"
	"sort"

	"github.com/toyml/toy/toy/gguf"
)

// TrainBPE learns a byte-level BPE vocabulary of vocabSize tokens from text
// (Sennrich et al. 2016, on bytes as GPT-2 does): the text is split into words
// by the pre-tokenizer pre ("gpt-2", …), every word starts as its bytes, and
// the most frequent adjacent pair of symbols is merged into a new token until
// the vocabulary is full. Ties go to the pair whose merged text sorts first,
// so the result depends only on the text. The vocabulary holds the 256 byte
// tokens, the merges in order, and "<|endoftext|>" as its last token (BOS and
// EOS, a control token).
func TrainBPE(text string, vocabSize int, pre string) (Vocab, error) {
	split, _, err := preTokenizer(pre)
	if err != nil {
		return Vocab{}, err
	}
	if vocabSize < 257 {
		return Vocab{}, fmt.Errorf("tokenizer: a byte-level vocabulary needs at least 257 tokens, not %d", vocabSize)
	}
	// Count the words; each distinct word is a sequence of symbol ids.
	counts := map[string]int{}
	ends := pretokenize(text, split, nil)
	start := 0
	for _, e := range ends {
		counts[text[start:e]]++
		start = e
	}
	type word struct {
		syms  []int32
		count int
	}
	words := make([]word, 0, len(counts))
	keys := make([]string, 0, len(counts))
	for w := range counts {
		keys = append(keys, w)
	}
	sort.Strings(keys)
	for _, w := range keys {
		syms := make([]int32, len(w))
		for i := 0; i < len(w); i++ {
			syms[i] = int32(w[i])
		}
		words = append(words, word{syms, counts[w]})
	}

	tokens := make([]string, 256, vocabSize)
	for b := range 256 {
		tokens[b] = byteChars[b]
	}
	var merges []string
	type pair struct{ a, b int32 }
	for len(tokens) < vocabSize-1 {
		freq := map[pair]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				freq[pair{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best pair
		bestN := 0
		for p, n := range freq {
			if n > bestN || n == bestN && tokens[p.a]+tokens[p.b] < tokens[best.a]+tokens[best.b] ||
				n == bestN && tokens[p.a]+tokens[p.b] == tokens[best.a]+tokens[best.b] && tokens[p.a] < tokens[best.a] {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break // nothing left worth merging
		}
		id := int32(len(tokens))
		tokens = append(tokens, tokens[best.a]+tokens[best.b])
		merges = append(merges, tokens[best.a]+" "+tokens[best.b])
		for wi := range words {
			s := words[wi].syms
			out := s[:0]
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best.a && s[i+1] == best.b {
					out = append(out, id)
					i++
				} else {
					out = append(out, s[i])
				}
			}
			words[wi].syms = out
		}
	}
	eot := int32(len(tokens))
	tokens = append(tokens, "<|endoftext|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1 // normal
	}
	types[eot] = 3 // control
	return Vocab{Model: "gpt2", Pre: pre, Tokens: tokens, Types: types, Merges: merges,
		BOS: eot, EOS: eot, UNK: -1, PAD: -1}, nil
}

// SetMetadata writes the vocabulary as GGUF tokenizer metadata
// (tokenizer.ggml.*), the keys FromGGUF and llama.cpp read.
func (v Vocab) SetMetadata(w *gguf.Writer) {
	w.SetString("tokenizer.ggml.model", v.Model)
	if v.Pre != "" {
		w.SetString("tokenizer.ggml.pre", v.Pre)
	}
	w.SetStrings("tokenizer.ggml.tokens", v.Tokens)
	if len(v.Types) > 0 {
		w.SetInt32s("tokenizer.ggml.token_type", v.Types)
	}
	if len(v.Scores) > 0 {
		w.SetFloat32s("tokenizer.ggml.scores", v.Scores)
	}
	if len(v.Merges) > 0 {
		w.SetStrings("tokenizer.ggml.merges", v.Merges)
	}
	for _, id := range []struct {
		key string
		id  int32
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"padding", v.PAD}} {
		if id.id >= 0 {
			w.SetUint32("tokenizer.ggml."+id.key+"_token_id", uint32(id.id))
		}
	}
	w.SetBool("tokenizer.ggml.add_bos_token", v.AddBOS)
	w.SetBool("tokenizer.ggml.add_eos_token", v.AddEOS)
}
