// gguf_test.go: the tokenizer read back from GGUF metadata, and bad files.

package tokenizer

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/toyml/toy/toy/gguf"
)

// vocabGGUF writes v as tokenizer.ggml.* metadata and parses it back;
// change edits the writer before it writes.
func vocabGGUF(t *testing.T, v Vocab, change func(w *gguf.Writer)) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetString("tokenizer.ggml.model", v.Model)
	if v.Pre != "" {
		w.SetString("tokenizer.ggml.pre", v.Pre)
	}
	w.SetStrings("tokenizer.ggml.tokens", v.Tokens)
	if v.Scores != nil {
		w.SetFloat32s("tokenizer.ggml.scores", v.Scores)
	}
	w.SetInt32s("tokenizer.ggml.token_type", v.Types)
	if v.Merges != nil {
		w.SetStrings("tokenizer.ggml.merges", v.Merges)
	}
	w.SetUint32("tokenizer.ggml.bos_token_id", uint32(v.BOS))
	w.SetUint32("tokenizer.ggml.eos_token_id", uint32(v.EOS))
	if change != nil {
		change(w)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFromGGUF(t *testing.T) {
	g := loadGolden(t)
	for _, name := range []string{"gpt2", "llama2", "llama3"} {
		v := loadVocab(t, name)
		tok, err := FromGGUF(vocabGGUF(t, v, nil))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := newTokenizer(t, name, "")
		for _, x := range g.Texts {
			s := x.bytes()
			if a, b := tok.Encode(s, EncodeOptions{ParseSpecial: true}), want.Encode(s, EncodeOptions{ParseSpecial: true}); !slices.Equal(a, b) {
				t.Errorf("%s/%s: from GGUF %v, from Vocab %v", name, x.Name, a, b)
			}
		}
		// Defaults as llama.cpp's: SentencePiece and Llama 3 add BOS.
		if wantBOS := name != "gpt2"; tok.AddBOS() != wantBOS {
			t.Errorf("%s: AddBOS() = %v, want %v", name, tok.AddBOS(), wantBOS)
		}
		if name == "llama2" && tok.UNK() != 0 {
			t.Errorf("llama2: UNK() = %d, want 0", tok.UNK())
		}
	}
}

// GLM's vocabularies ("glm4", "chatglm-bpe") split as Llama 3's does, with
// the merges applied, and have no BOS even where the file asks for one (as
// in llama.cpp): the chat template writes [gMASK]<sop> itself.
func TestFromGGUFGLM4(t *testing.T) {
	g := loadGolden(t)
	v := loadVocab(t, "llama3")
	for _, pre := range []string{"glm4", "chatglm-bpe"} {
		tok, err := FromGGUF(vocabGGUF(t, v, func(w *gguf.Writer) {
			w.SetString("tokenizer.ggml.pre", pre)
			w.SetBool("tokenizer.ggml.add_bos_token", true)
		}))
		if err != nil {
			t.Fatalf("%s: %v", pre, err)
		}
		want := newTokenizer(t, "llama3", "dbrx") // Llama 3's expression, merges applied
		for _, x := range g.Texts {
			s := x.bytes()
			if a, b := tok.Encode(s, EncodeOptions{}), want.Encode(s, EncodeOptions{}); !slices.Equal(a, b) {
				t.Errorf("%s/%s: %v, want %v", pre, x.Name, a, b)
			}
		}
		if tok.BOS() != -1 || len(tok.Encode("hi", EncodeOptions{AddBOS: tok.AddBOS()})) != len(tok.Encode("hi", EncodeOptions{})) {
			t.Errorf("%s: BOS %d: a prompt gets a BOS", pre, tok.BOS())
		}
	}
}

func TestFromGGUFBad(t *testing.T) {
	v := loadVocab(t, "gpt2")
	for _, c := range []struct {
		name   string
		change func(w *gguf.Writer)
		want   error
	}{
		{"no tokenizer", func(w *gguf.Writer) {
			*w = *gguf.NewWriter()
			w.SetString("general.architecture", "llama")
		}, ErrNoVocab},
		{"types length", func(w *gguf.Writer) { w.SetInt32s("tokenizer.ggml.token_type", []int32{1, 1, 1}) }, ErrMalformed},
		{"merge of unknown tokens", func(w *gguf.Writer) {
			w.SetStrings("tokenizer.ggml.merges", append(slices.Clone(v.Merges), "no-such-token Ġthe"))
		}, ErrMalformed},
		{"tokens not strings", func(w *gguf.Writer) { w.SetInt32s("tokenizer.ggml.tokens", []int32{1, 2}) }, ErrMalformed},
		{"unknown pre", func(w *gguf.Writer) { w.SetString("tokenizer.ggml.pre", "no-such-pre") }, ErrUnknownPre},
		{"unknown model", func(w *gguf.Writer) { w.SetString("tokenizer.ggml.model", "rwkv") }, ErrUnknownModel},
		{"bos out of range", func(w *gguf.Writer) { w.SetUint32("tokenizer.ggml.bos_token_id", 1<<20) }, ErrMalformed},
	} {
		_, err := FromGGUF(vocabGGUF(t, v, c.change))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}
