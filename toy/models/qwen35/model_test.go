package qwen35

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy/engine"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/models/internal/builtin"
	"github.com/toyml/toy/toy/tensor"
)

// spec is a tiny Qwen3.5: the delta rule in layers 0 and 2 (one key head
// for two value heads), gated attention in 1 and 3.
func spec(seed uint64) testmodel.Spec {
	return testmodel.Spec{Name: "m", Arch: "qwen35", DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
		FFN: 96, Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Tied: true, Seed: seed,
		Qwen35: &testmodel.Qwen35Spec{KHeads: 1, VHeads: 2, StateDim: 16, ConvL: 4, Interval: 2}}
}

func load(t *testing.T, seed uint64, edit func(w *gguf.Writer)) *Model {
	t.Helper()
	m, err := Load(testmodel.Edited(t, spec(seed), edit))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ids(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32((i*37 + 11) % 300)
	}
	return out
}

func close(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if d := math.Abs(float64(got[j] - want[j])); d > 1e-4 {
			t.Fatalf("%s: logit %d: %g, want %g", what, j, got[j], want[j])
		}
	}
}

// Running a prompt whole, one token at a time, or in uneven pieces (one of
// them longer than 2·snapEvery, which splits its recurrence for a
// snapshot) gives the same logits at every position.
func TestDecodeMatchesPrefill(t *testing.T) {
	m := load(t, 5, func(*gguf.Writer) {})
	x := ids(60)
	V := m.Config.VocabSize
	whole := m.Forward(x, m.NewCache(64)).Float32s()
	cache := m.NewCache(64)
	for i, id := range x[:20] {
		close(t, "one at a time", m.Forward([]int32{id}, cache).Float32s(), whole[i*V:(i+1)*V])
	}
	close(t, "a long piece", m.Forward(x[20:57], cache).Float32s(), whole[20*V:57*V])
	close(t, "a short piece", m.Forward(x[57:], cache).Float32s(), whole[57*V:])
}

// A truncated cache comes back to the state of its first n positions:
// from a snapshot and the kept inputs when n is recent, by running the
// tokens again (engine.Session) when it is not; either way the logits that
// follow are those of a fresh run.
func TestRewind(t *testing.T) {
	m := load(t, 6, func(*gguf.Writer) {})
	x := ids(150)
	V := m.Config.VocabSize
	whole := m.Forward(x, m.NewCache(160)).Float32s()
	at := func(p int) []float32 { return whole[p*V : (p+1)*V] }

	s := engine.NewSession(m, 160)
	for _, piece := range [][]int32{x[:100], x[100:101], x[101:102], x[102:110]} {
		if _, err := s.Next(piece); err != nil {
			t.Fatal(err)
		}
	}
	// Back into the last call (a speculative guess), into the decoded
	// tokens before it, and 40 back (not kept: the session runs them again).
	for _, n := range []int{107, 101, 100, 70, 3} {
		s.Truncate(n)
		if len(s.Tokens()) != n {
			t.Fatalf("truncated to %d, the session holds %d tokens", n, len(s.Tokens()))
		}
		got, err := s.Next(x[n : n+1])
		if err != nil {
			t.Fatal(err)
		}
		close(t, "after truncating", got, at(n))
		// and onward, a few at a time
		got, err = s.Next(x[n+1 : n+5])
		if err != nil {
			t.Fatal(err)
		}
		close(t, "and on", got, at(n+4))
		s.Truncate(110)
		if n := len(s.Tokens()); n < 110 {
			if _, err := s.Next(x[n:110]); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The cache says how far it went back: all the way for positions
	// whose inputs it no longer keeps.
	cache := m.NewCache(160)
	m.Forward(x[:120], cache)
	m.Forward(x[120:121], cache)
	m.Forward(x[121:126], cache) // a speculative check of 5 tokens
	if cache.Truncate(123); cache.Len() != 123 {
		t.Errorf("truncated to 123 (inside the last call): the cache holds %d", cache.Len())
	}
	close(t, "after a short rewind", m.Forward(x[123:124], cache).Float32s(), at(123))
	if cache.Truncate(118); cache.Len() != 118 {
		t.Errorf("truncated to 118 (inside the last long call): the cache holds %d", cache.Len())
	}
	if cache.Truncate(30); cache.Len() != 0 {
		t.Errorf("truncated to 30 (not kept): the cache holds %d, want 0", cache.Len())
	}

	// A long reply later, back to the end of the prompt (another choice,
	// the next chat turn): the state at the prompt's end is kept.
	cache = m.NewCache(160)
	m.Forward(x[:40], cache)
	for i := 40; i < 140; i++ {
		m.Forward(x[i:i+1], cache)
	}
	if cache.Truncate(40); cache.Len() != 40 {
		t.Fatalf("truncated to the prompt's end after 100 tokens: the cache holds %d", cache.Len())
	}
	close(t, "after the prompt", m.Forward(x[40:42], cache).Float32s()[V:], at(41))
	if cache.Truncate(41); cache.Len() != 41 { // inside the call just made
		t.Fatalf("truncated to 41: the cache holds %d", cache.Len())
	}
	close(t, "one more", m.Forward(x[41:42], cache).Float32s(), at(41))
}

// Speculative decoding with a draft of the same family gives the tokens of
// plain greedy decoding: the model rewinds every guess it does not take.
func TestSpeculative(t *testing.T) {
	m, draft := load(t, 7, func(*gguf.Writer) {}), load(t, 8, func(*gguf.Writer) {})
	prompt := ids(12)
	plain, err := engine.Generate(context.Background(), engine.NewSession(m, 128), prompt, engine.Options{MaxTokens: 60})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := engine.Generate(context.Background(), engine.NewSession(m, 128), prompt,
		engine.Options{MaxTokens: 60, Draft: engine.NewSession(draft, 128), DraftTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.IDs, spec.IDs) {
		t.Errorf("with a draft:\n%v\nwithout:\n%v", spec.IDs, plain.IDs)
	}
	if spec.Drafted == 0 || spec.Accepted == spec.Drafted {
		t.Errorf("%d guesses, %d taken: the test wants some of each", spec.Drafted, spec.Accepted)
	}
}

// Files whose metadata disagrees with their tensors, or with what toy
// runs, fail at load with a clear error.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(w *gguf.Writer)
		want string
	}{
		{"inner size", func(w *gguf.Writer) { w.SetUint32("qwen35.ssm.inner_size", 40) }, "inner_size"},
		{"value heads", func(w *gguf.Writer) { w.SetUint32("qwen35.ssm.time_step_rank", 3) }, "value heads"},
		{"state width", func(w *gguf.Writer) {
			w.SetUint32("qwen35.ssm.state_size", 8)
			w.SetUint32("qwen35.ssm.inner_size", 16)
		}, "attn_qkv"},
		{"pattern", func(w *gguf.Writer) { w.SetUint32("qwen35.full_attention_interval", 3) }, "blk."},
		{"rope", func(w *gguf.Writer) { w.SetUint32("qwen35.rope.dimension_count", 40) }, "RoPE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(testmodel.Edited(t, spec(5), c.edit))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	_, err := Load(testmodel.Edited(t, spec(5), func(w *gguf.Writer) {
		w.SetString("qwen35.rope.scaling.type", "yarn")
		w.SetFloat32("qwen35.rope.scaling.factor", 4)
	}))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("RoPE scaling: %v, want ErrUnsupported", err)
	}
}

// The file's card counts and lists the weights the loaded model holds, and
// is the model's card.
func TestCard(t *testing.T) {
	for _, s := range []testmodel.Spec{spec(5), nextSpec(5)} {
		f := testmodel.Edited(t, s, func(*gguf.Writer) {})
		m, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		k, err := builtin.Card(readConfig, Config.card, New)(f)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, w := range m.Weights() {
			n += int64(w.T.Len())
		}
		if k.ParamCount != n {
			t.Errorf("%s: the card counts %d parameters, the model holds %d", s.Arch, k.ParamCount, n)
		}
		if got, want := m.Card().Render(), k.Render(); got != want {
			t.Errorf("%s: the model's card:\n%s\nthe file's:\n%s", s.Arch, got, want)
		}
	}
}

// nextSpec is a tiny Qwen3-Next: 2 key heads for 4 value heads, read in
// groups; the delta rule's projections fused (ssm_in, ssm_ba); mixtures
// of 4 experts with a shared expert.
func nextSpec(seed uint64) testmodel.Spec {
	return testmodel.Spec{Name: "n", Arch: ArchNext, DType: tensor.Q8_0, Vocab: "none", VocabSize: 300, Embed: 64, Layers: 4,
		FFN: 32, Heads: 4, KVHeads: 2, HeadDim: 32, RopeDim: 8, Context: 256, Tied: true, Seed: seed, Experts: 4, ExpertsUsed: 2,
		SharedFFN: 32, Qwen35: &testmodel.Qwen35Spec{KHeads: 2, VHeads: 4, StateDim: 16, ConvL: 4, Interval: 2, Fused: true}}
}

// Qwen3-Next loads with its value heads grouped, and runs a prompt whole
// or in pieces to the same logits; a file that gives the fused projection
// beside the split ones is refused.
func TestQwen3Next(t *testing.T) {
	m, err := Load(testmodel.Edited(t, nextSpec(9), func(*gguf.Writer) {}))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Blocks[0].(*Block).Delta()
	if !m.Config.Grouped() || !d.Grouped || d.In == nil || d.BA == nil || d.QKV != nil || d.Beta != nil {
		t.Fatalf("qwen3next's delta rule: grouped %v, In %v, BA %v, QKV %v, Beta %v", d.Grouped, d.In != nil, d.BA != nil, d.QKV != nil, d.Beta != nil)
	}
	x := ids(50)
	V := m.Config.VocabSize
	whole := m.Forward(x, m.NewCache(64)).Float32s()
	cache := m.NewCache(64)
	for i, id := range x[:10] {
		close(t, "one at a time", m.Forward([]int32{id}, cache).Float32s(), whole[i*V:(i+1)*V])
	}
	close(t, "the rest", m.Forward(x[10:], cache).Float32s(), whole[10*V:])

	_, err = Load(testmodel.Edited(t, nextSpec(9), func(w *gguf.Writer) {
		if err := w.AddFloat32("blk.0.attn_qkv.weight", tensor.F32, make([]float32, 128*64), 128, 64); err != nil {
			t.Fatal(err)
		}
	}))
	if err == nil || !strings.Contains(err.Error(), "ssm_in") {
		t.Errorf("ssm_in beside attn_qkv: %v, want an error naming both", err)
	}
}
