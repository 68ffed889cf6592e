package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
)

// embedModel writes the gate's F32 BERT test model (bert-base-uncased's
// vocabulary, mean pooling).
func embedModel(t *testing.T) string {
	t.Helper()
	spec := testmodel.EmbedSpecs()[0]
	path := filepath.Join(t.TempDir(), spec.File())
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// toy embed: JSON with one unit vector per text (arguments, then --file
// lines), the library's vectors; text output with the cosine matrix; bad
// input is status 2.
func TestEmbed(t *testing.T) {
	model := embedModel(t)
	lines := filepath.Join(t.TempDir(), "texts.txt")
	os.WriteFile(lines, []byte("third text\r\n\nfourth one\n"), 0o644)
	status, out, errOut := runToy("embed", model, "a cat sat on the mat", "A kitten!", "--file", lines, "--json")
	if status != 0 {
		t.Fatalf("embed: status %d: %s", status, errOut)
	}
	var got embedOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Format != "toy/embed-v1" || got.Arch != "bert" || got.Pooling != "mean" || got.Normalize != "l2" || got.Dim != 64 || len(got.Data) != 4 ||
		got.Data[2].Text != "third text" || got.Data[1].Tokens != 5 { // [CLS] a kitten ! [SEP]
		t.Fatalf("embed --json: %s", out)
	}
	e, err := toy.LoadEmbedder(model)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want, err := e.Embed([]string{"a cat sat on the mat"}, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for i, v := range got.Data[0].Embedding {
		n += float64(v) * float64(v)
		if v != want[0][i] {
			t.Fatalf("component %d: %v, library %v", i, v, want[0][i])
		}
	}
	if math.Abs(n-1) > 1e-5 {
		t.Errorf("squared length %v, want 1", n)
	}

	status, out, _ = runToy("embed", model, "one", "two", "--normalize", "none", "--pooling", "cls")
	if status != 0 || !strings.HasPrefix(out, "embedding 0 (3 tokens): ") || !strings.Contains(out, "cosine similarity matrix:\n  1.000") {
		t.Fatalf("embed: status %d\n%s", status, out)
	}
	for _, args := range [][]string{{"embed", model}, {"embed"}, {"embed", model, "x", "--normalize", "l1"}, {"embed", model, "x", "--pooling", "max"},
		{"embed", filepath.Join(t.TempDir(), "none.gguf"), "x"}, {"embed", model, "--file", filepath.Join(t.TempDir(), "none.txt")},
		{"embed", model, strings.Repeat("word ", 200)}} {
		if status, _, e := runToy(args...); status != 2 || e == "" {
			t.Errorf("%v: status %d %q, want 2 and a message", args[:min(len(args), 3)], status, e)
		}
	}
	// Too long for the 128 positions: --truncate keeps the first 127 tokens and [SEP].
	if status, out, e := runToy("embed", model, strings.Repeat("word ", 200), "--truncate", "--json"); status != 0 || !strings.Contains(out, `"tokens":128`) {
		t.Errorf("--truncate: status %d %s %.200s", status, e, out)
	}
	// A language model's command refuses the encoder, naming the way to use it.
	if status, _, e := runToy("infer", model, "--prompt-ids", "1 2"); status != 2 || !strings.Contains(e, "LoadEmbedder, toy embed, or toy serve --embed") {
		t.Errorf("infer on an encoder: status %d %q", status, e)
	}
}

// TestRerank: toy rerank prints the documents best first with their score
// and σ(score), equal to toy.Embedder.Rank's; a model that is no reranker
// and a missing query are errors.
func TestRerank(t *testing.T) {
	spec := testmodel.RankSpecs()[0]
	path := filepath.Join(t.TempDir(), spec.File())
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	docs := []string{"a cat sat on the mat", "the stock market fell", "kittens are young cats"}
	status, out, errs := runToy(append([]string{"rerank", path, "--query", "what is a cat?", "--json"}, docs...)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	var got rerankOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	e, err := toy.LoadEmbedder(path)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want, err := e.Rank("what is a cat?", docs, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != len(docs) {
		t.Fatalf("%d results", len(got.Results))
	}
	for k, r := range got.Results {
		if r.Score != want[r.Index] || r.Document != docs[r.Index] || math.Abs(r.Probability-1/(1+math.Exp(-float64(r.Score)))) > 1e-12 {
			t.Errorf("result %+v, want score %v for %q", r, want[r.Index], docs[r.Index])
		}
		if k > 0 && r.Score > got.Results[k-1].Score {
			t.Errorf("not sorted best first: %+v", got.Results)
		}
	}
	if status, _, errs := runToy("rerank", embedModel(t), "--query", "q", "a"); status == 0 || !strings.Contains(errs, "no reranker") {
		t.Errorf("an embedding model: status %d, %q", status, errs)
	}
	if status, _, errs := runToy("rerank", path, "a"); status != 2 || !strings.Contains(errs, "--query") {
		t.Errorf("no query: status %d, %q", status, errs)
	}
}
