// wordpiece_test.go: WordPiece ids identical to Hugging Face's on the hard
// text set and the WordPiece corpus (testdata/wordpiece.json, made by
// tests/tokenizer/wordpiece.mjs), and the greedy matcher worked by hand.
package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/toy/gguf"
)

type wordpieceGolden struct {
	Configs []struct {
		Name         string `json:"name"`
		Lowercase    bool   `json:"lowercase"`
		StripAccents *bool  `json:"strip_accents"`
	} `json:"configs"`
	Texts []struct {
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"texts"`
	Cases []struct {
		Config    string  `json:"config"`
		Set       string  `json:"set"`
		Text      string  `json:"text"`
		Special   bool    `json:"special"`
		HF        []int32 `json:"hf"`
		HFSpecial []int32 `json:"hf_special"`
		LlamaCpp  []int32 `json:"llamacpp"`
	} `json:"cases"`
}

// bertTokenizers builds bert-base-uncased's tokenizer in each golden config.
func bertTokenizers(t testing.TB) (*wordpieceGolden, map[string]*Tokenizer, map[string]string) {
	t.Helper()
	b, err := os.ReadFile("testdata/wordpiece.json")
	if err != nil {
		t.Fatal(err)
	}
	var g wordpieceGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	toks := map[string]*Tokenizer{}
	for _, c := range g.Configs {
		v := loadVocab(t, "bert")
		v.AddBOS, v.AddEOS, v.UNK = true, true, 100
		v.Lowercase, v.StripAccents = c.Lowercase, c.Lowercase
		if c.StripAccents != nil {
			v.StripAccents = *c.StripAccents
		}
		tok, err := New(v)
		if err != nil {
			t.Fatal(err)
		}
		toks[c.Name] = tok
	}
	texts := map[string]string{}
	for _, x := range g.Texts {
		texts[x.Name] = x.Text
	}
	return &g, toks, texts
}

// TestWordPieceHuggingFace: on every text of the main set, in every config,
// toy gives Hugging Face's ids, with and without [CLS] … [SEP]. The "known"
// texts are where tokenizers.js differs from the Rust tokenizers that
// sentence-transformers runs, and toy follows Rust and llama.cpp there:
// a final capital sigma lowercases to σ per character (JavaScript: ς), and
// an ideograph outside the BMP is a word of its own (tokenizers.js pads only
// BMP ones).
func TestWordPieceHuggingFace(t *testing.T) {
	g, toks, texts := bertTokenizers(t)
	var agree, agreeLlama, compared int
	for _, c := range g.Cases {
		tok, text := toks[c.Config], texts[c.Text]
		got := tok.Encode(text, EncodeOptions{ParseSpecial: c.Special})
		with := tok.Encode(text, EncodeOptions{ParseSpecial: true, AddBOS: tok.AddBOS(), AddEOS: tok.AddEOS()})
		if c.Set == "known" {
			switch c.Text {
			case "wp-final-sigma", "wp-cjk-astral":
				if !slices.Equal(got, c.LlamaCpp) {
					t.Errorf("%s %s: toy %v, llama.cpp %v", c.Config, c.Text, got, c.LlamaCpp)
				}
			default:
				if !slices.Equal(got, c.HF) {
					t.Errorf("%s %s: toy %v, HF %v", c.Config, c.Text, got, c.HF)
				}
			}
			continue
		}
		compared++
		if slices.Equal(got, c.HF) && slices.Equal(with, c.HFSpecial) {
			agree++
		} else {
			t.Errorf("%s %s %q:\n  toy %v\n  HF  %v\n  toy with specials %v\n  HF                %v", c.Config, c.Text, text, got, c.HF, with, c.HFSpecial)
		}
		if slices.Equal(got, c.LlamaCpp) {
			agreeLlama++
		}
	}
	t.Logf("WordPiece: toy = Hugging Face on %d of %d cases; toy = llama.cpp on %d", agree, compared, agreeLlama)
	if compared < 200 {
		t.Fatalf("only %d cases compared", compared)
	}
}

// The greedy longest-match-first rule on a vocabulary small enough to follow
// by hand (GGUF form: "▁" marks a word's first piece). "unaffable" is
// "▁un" + "aff" + "able", not "▁una" + …: "▁unaff" is not a token, "▁una" is
// not either, "▁un" is; then "affable" is not, "aff" is; then "able".
func TestWordPieceByHand(t *testing.T) {
	tok, err := New(Vocab{Model: "bert", Tokens: []string{"[UNK]", "[CLS]", "[SEP]", "▁un", "aff", "able", "▁a", "b", "▁,", "▁x", "▁café"},
		Types: []int32{3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, BOS: 1, EOS: 2, UNK: 0, PAD: -1, AddBOS: true, AddEOS: true, Lowercase: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"unaffable", []int32{3, 4, 5}},
		{"UnAffable, ab", []int32{3, 4, 5, 8, 6, 7}}, // lowercased; "," a word of its own
		{"abx", []int32{0}},                          // "x" is only a word start: the whole word is [UNK]
		{"x\u200bx", []int32{0}},                     // a zero-width space is dropped, not a space: "xx"
		{"x 日x", []int32{9, 0, 9}},                   // an ideograph is a word of its own
		{"CAFÉ", []int32{10}},                        // StripAccents off: é kept
		{"", nil},                                    //
		{"x\u0085x", []int32{0}},                     // NEL is a control character, dropped
		{string(make([]byte, 0)) + "a" + "\xff" + "b", []int32{6, 7}}, // invalid UTF-8 dropped as U+FFFD is
	} {
		got := tok.Encode(c.text, EncodeOptions{})
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	ids := tok.Encode("unaffable, ab", EncodeOptions{AddBOS: true, AddEOS: true})
	if want := []int32{1, 3, 4, 5, 8, 6, 7, 2}; !slices.Equal(ids, want) {
		t.Errorf("with [CLS] and [SEP]: %v, want %v", ids, want)
	}
	if got := tok.Decode(ids); got != "unaffable , ab" {
		t.Errorf("Decode = %q", got)
	}
	var streamed string
	d := tok.NewDecoder()
	for _, id := range ids {
		streamed += d.Push(id)
	}
	if streamed += d.Flush(); streamed != "unaffable , ab" {
		t.Errorf("streamed decode = %q", streamed)
	}
}

// A GGUF BERT vocabulary without ids or normaliser keys takes llama.cpp's
// defaults: [CLS] 101 as BOS, [SEP] 102 as EOS, [UNK] 100, lowercasing and
// accent stripping, both ends added; the keys override them.
func TestWordPieceFromGGUF(t *testing.T) {
	v := loadVocab(t, "bert")
	build := func(edit func(w *gguf.Writer)) *Tokenizer {
		w := gguf.NewWriter()
		w.SetString("general.architecture", "bert")
		w.SetString("tokenizer.ggml.model", "bert")
		w.SetStrings("tokenizer.ggml.tokens", v.Tokens)
		w.SetInt32s("tokenizer.ggml.token_type", v.Types)
		edit(w)
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		tok, err := FromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tok := build(func(*gguf.Writer) {})
	if tok.BOS() != 101 || tok.EOS() != 102 || tok.UNK() != 100 || !tok.AddBOS() || !tok.AddEOS() || tok.Model() != "bert" {
		t.Fatalf("defaults: BOS %d EOS %d UNK %d add %v %v", tok.BOS(), tok.EOS(), tok.UNK(), tok.AddBOS(), tok.AddEOS())
	}
	if got := tok.Encode("Café", EncodeOptions{AddBOS: true, AddEOS: true}); !slices.Equal(got, []int32{101, 7668, 102}) {
		t.Errorf("Café: %v, want [CLS] cafe [SEP]", got)
	}
	tok = build(func(w *gguf.Writer) {
		w.SetBool("tokenizer.ggml.normalizer.lowercase", false)
		w.SetUint32("tokenizer.ggml.cls_token_id", 103)
		w.SetUint32("tokenizer.ggml.seperator_token_id", 0)
		w.SetBool("tokenizer.ggml.add_eos_token", false) // llama.cpp adds [SEP] anyway
	})
	if tok.BOS() != 103 || tok.EOS() != 0 || !tok.AddEOS() {
		t.Errorf("keys: BOS %d EOS %d add EOS %v", tok.BOS(), tok.EOS(), tok.AddEOS())
	}
	if got := tok.Encode("Café", EncodeOptions{}); slices.Equal(got, []int32{7668}) {
		t.Errorf("cased vocabulary lowercased Café: %v", got)
	}
}

// FuzzWordPiece: on any bytes, WordPiece never panics, stays in the
// vocabulary, streams what Decode gives, and is idempotent: without [UNK],
// encoding the decoded text gives the same ids (Decode keeps the word
// boundaries, and the text is already normalised).
func FuzzWordPiece(f *testing.F) {
	g, toks, texts := bertTokenizers(f)
	for _, x := range g.Texts {
		f.Add([]byte(texts[x.Name]), false)
	}
	f.Add([]byte("[CLS] x [SEP]"), true)
	f.Fuzz(func(t *testing.T, data []byte, special bool) {
		s := string(data)
		for name, tok := range toks {
			ids := tok.Encode(s, EncodeOptions{ParseSpecial: special, AddBOS: true, AddEOS: true})
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("%s: id %d out of range", name, id)
				}
			}
			text := tok.Decode(ids)
			d := tok.NewDecoder()
			var sb strings.Builder
			for _, id := range ids {
				sb.WriteString(d.Push(id))
			}
			if sb.WriteString(d.Flush()); sb.String() != text {
				t.Fatalf("%s: streamed %q, Decode %q", name, sb.String(), text)
			}
			if special || slices.Contains(ids, tok.UNK()) {
				continue
			}
			if again := tok.Encode(text, EncodeOptions{AddBOS: true, AddEOS: true}); !slices.Equal(again, ids) {
				t.Fatalf("%s: %q → %v → %q → %v", name, s, ids, text, again)
			}
		}
	})
}
