package card

import (
	"errors"
	"reflect"
	"testing"
)

type declared struct {
	Arch       string
	VocabSize  int     `card:"N_V, vocabulary size"`
	KVHeads    int     `card:"KV, key/value heads"`
	NormEps    float32 `card:"ε, RMSNorm epsilon"`
	TiedOutput bool    `card:"tied, W_u = W_eᵀ"`
	Pooling    string  `card:"pool, pooling"`
	Note       int     // undeclared: not on the card
}

func (d declared) Validate() error {
	if d.VocabSize <= 0 {
		return errors.New("no vocabulary")
	}
	return nil
}

func TestDeclaredHypers(t *testing.T) {
	cfg := declared{VocabSize: 32, KVHeads: 2, NormEps: 1e-5, TiedOutput: true, Note: 9}
	k := Decoder("toy", "a test", cfg)
	want := []Hyper{
		{"N_V", "32", "vocab_size", "vocabulary size"},
		{"KV", "2", "kv_heads", "key/value heads"},
		{"ε", "1e-05", "norm_eps", "RMSNorm epsilon"},
		{"tied", "true", "tied_output", "W_u = W_eᵀ"},
		{"pool", `""`, "pooling", "pooling"},
	}
	if !reflect.DeepEqual(k.Hyper, want) {
		t.Fatalf("hypers\n%v\nwant\n%v", k.Hyper, want)
	}
	parsed, err := ParseCard(k.Render())
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromCard(parsed, &declared{Note: 9})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Arch = "toy"
	if got != cfg {
		t.Errorf("read back %+v, want %+v", got, cfg)
	}
	k.Hyper[0].Value = "0"
	if _, err := FromCard(k, &declared{}); !errors.Is(err, ErrSyntax) {
		t.Errorf("an invalid config from a card: %v", err)
	}
	k.Hyper[1].Value = "two"
	if _, err := FromCard(k, &declared{}); !errors.Is(err, ErrSyntax) {
		t.Errorf("a malformed value: %v", err)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"VocabSize": "vocab_size", "FFN": "ffn", "KVHeads": "kv_heads", "QKVBias": "qkv_bias", "RopeBase": "rope_base", "ExpertFFN": "expert_ffn", "Embed": "embed"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestDrop(t *testing.T) {
	k := Decoder("toy", "a test", declared{VocabSize: 32, NormEps: 1e-5})
	k.DropZero("kv_heads", "norm_eps", "tied_output", "pooling") // norm_eps is not zero: it stays
	k.Drop("vocab_size")
	var keys []string
	for _, h := range k.Hyper {
		keys = append(keys, h.Key)
	}
	if !reflect.DeepEqual(keys, []string{"norm_eps"}) {
		t.Errorf("left %v, want [norm_eps]", keys)
	}
}
