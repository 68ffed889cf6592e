package toy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
)

// modelPath is a tiny random-weight llama-arch model written for the examples.
var modelPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toy-example")
	if err != nil {
		panic(err)
	}
	modelPath = filepath.Join(dir, "tiny.gguf")
	spec := testmodel.Spec{Name: "tiny", Arch: "llama", DType: tensor.F32, Vocab: "none", VocabSize: 300,
		Embed: 32, Layers: 2, FFN: 64, Heads: 4, KVHeads: 2, Context: 128, Seed: 1}
	if _, err := testmodel.Write(spec, modelPath); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func ExampleLoad() {
	m, err := toy.Load(modelPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	fmt.Println(m.Arch, m.VocabSize(), m.ContextLength())
	// Output: llama 300 128
}

func ExampleModel_Generate() {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	greedy, _ := m.Generate([]int32{1, 42, 7}, toy.GenerateOptions{MaxTokens: 8})
	again, _ := m.Generate([]int32{1, 42, 7}, toy.GenerateOptions{MaxTokens: 8})
	fmt.Println(len(greedy), fmt.Sprint(greedy) == fmt.Sprint(again))

	sampled, _ := m.Generate([]int32{1, 42, 7}, toy.GenerateOptions{
		MaxTokens: 8,
		Sample:    sample.Params{Temperature: 0.8, TopK: 40, TopP: 0.95, Seed: 1},
	})
	fmt.Println(len(sampled))
	// Output:
	// 8 true
	// 8
}

// A draft model guesses ahead and the model checks its guesses in one
// pass: the tokens are those Generate gives without it. (Here the model
// drafts for itself, so every guess is kept; a real draft is a smaller
// model over the same vocabulary.)
func ExampleGenerateOptions_draft() {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	draft := toy.MustLoad(modelPath)
	defer draft.Close()
	plain, _ := m.Generate([]int32{1, 42, 7}, toy.GenerateOptions{MaxTokens: 12})
	r, _ := m.GenerateContext(context.Background(), []int32{1, 42, 7}, toy.GenerateOptions{MaxTokens: 12, Draft: draft, DraftTokens: 4})
	fmt.Println(fmt.Sprint(r.IDs) == fmt.Sprint(plain), r.Accepted == r.Drafted, r.Drafted > 0)
	// Output: true true true
}

func ExampleModel_Forward() {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	logits, err := m.Forward([]int32{1, 42, 7})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(logits.Shape()) // one row of vocabulary logits per position
	// Output: [3 300]
}

func ExampleModel_Forward_badToken() {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	_, err := m.Forward([]int32{1, 300})
	fmt.Println(err)
	// Output: token id out of range: 300 (vocabulary has 300 tokens)
}

// The KV cache makes decoding one token at a time give the same logits as
// running the whole sequence at once.
func TestIncrementalDecodeMatchesBatch(t *testing.T) {
	m := toy.MustLoad(modelPath)
	defer m.Close()
	ids := []int32{1, 42, 7, 99, 3}
	all, err := m.Forward(ids)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(len(ids))
	for i, id := range ids {
		got, err := s.Next([]int32{id})
		if err != nil {
			t.Fatal(err)
		}
		want := all.Row(i)
		for j := range want {
			if d := got[j] - want[j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("position %d, logit %d: incremental %v, batched %v", i, j, got[j], want[j])
			}
		}
	}
	if _, err := s.Next([]int32{5}); err == nil {
		t.Error("a full session accepted another token")
	}
}
