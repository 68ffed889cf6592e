// The reranker gates: BERT cross-encoders (rank pooling, a classification
// head on the [CLS] state) run by llama.cpp's ranking API (rank.mjs, goldens
// from gen_rank_goldens.sh) and by toy.Embedder.Rank, on the pairs of
// rank_texts.json: the same token ids, the same scores; and by a float64
// PyTorch twin (bert_torch.py).
package reference

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/models/bert"
	"github.com/toyml/toy/toy/tensor"
)

type rankGolden struct {
	ModelSHA256 string `json:"model_sha256"`
	Pooling     string `json:"pooling"`
	Pairs       []struct {
		Query    string  `json:"query"`
		Document string  `json:"document"`
		IDs      []int32 `json:"ids"`
		Logit    float64 `json:"logit"`
		Score    float64 `json:"score"` // σ(logit), what rankAll returns
	} `json:"pairs"`
}

// rankTolerance is the largest |Δ logit| allowed against llama.cpp with
// llama.cpp's GELU switched on (bert.Config.ApproxGELU), and against the
// float64 PyTorch twin with the exact GELU. Measured: F32 5.2e-6 and
// 5.1e-7 (jina) against llama.cpp, 2.5e-7 and 2.7e-7 against PyTorch;
// Q8_0 1.2e-7 against llama.cpp (both quantize the activations to 8 bits
// the same way; a value at a rounding boundary could flip a step, hence
// the wider bound).
func rankTolerance(dt tensor.DType) float64 {
	if dt == tensor.Q8_0 {
		return 1e-4
	}
	return 1e-5
}

func TestRerankAgainstLlamaCpp(t *testing.T) {
	dir := *keep
	if dir == "" {
		dir = t.TempDir()
	}
	specs := testmodel.RankSpecs()
	if len(specs) != 3 {
		t.Fatalf("%d reranker specs", len(specs))
	}
	eachBackend(t, func(t *testing.T) {
		for _, spec := range specs {
			t.Run(spec.Name, func(t *testing.T) { checkReranker(t, dir, spec) })
		}
	})
}

func checkReranker(t *testing.T, dir string, spec testmodel.Spec) {
	var g rankGolden
	readJSON(t, filepath.Join("testdata", "rank", spec.Name+".golden.json"), &g)
	e := loadGateEncoder(t, dir, spec, g.ModelSHA256, "gen_rank_goldens.sh")
	if !e.Reranker() || e.Pooling.String() != g.Pooling {
		t.Fatalf("pooling %s, llama.cpp %s", e.Pooling, g.Pooling)
	}
	var inputs [][]int32
	for _, p := range g.Pairs {
		ids, err := e.RankInput(p.Query, p.Document)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, p.IDs) {
			t.Errorf("%q / %q: toy's ids %v, llama.cpp's %v", p.Query, p.Document, ids, p.IDs)
		}
		inputs = append(inputs, p.IDs)
	}
	m := e.Net.(*bert.Model)
	gelu := func(approx bool) {
		for i := range m.Blocks {
			m.Blocks[i].FFN.(*bert.MLP).Approx = approx
		}
	}
	gelu(true) // llama.cpp's GELU: the rest is compared at float32 precision
	scores, err := e.RankIDs(inputs, toy.EmbedOptions{})
	gelu(false)
	if err != nil {
		t.Fatal(err)
	}
	tol, worst := rankTolerance(spec.DType), 0.0
	for i, p := range g.Pairs {
		d := math.Abs(float64(scores[i]) - p.Logit)
		worst = max(worst, d)
		if !(d <= tol) {
			t.Errorf("%q / %q: logit %.7f, llama.cpp %.7f (|Δ| %.2e > %.0e)", p.Query, p.Document, scores[i], p.Logit, d, tol)
		}
		if s := 1 / (1 + math.Exp(-float64(scores[i]))); math.Abs(s-p.Score) > tol {
			t.Errorf("%q / %q: σ(logit) %.7f, llama.cpp's score %.7f", p.Query, p.Document, s, p.Score)
		}
	}
	// Rank itself (the texts, the exact GELU) orders the documents as
	// llama.cpp does wherever llama.cpp's scores are apart.
	byText, err := e.Rank(g.Pairs[0].Query, []string{g.Pairs[0].Document, g.Pairs[1].Document}, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gap := g.Pairs[0].Logit - g.Pairs[1].Logit; math.Abs(gap) > 1e-2 && (gap > 0) != (byText[0] > byText[1]) {
		t.Errorf("Rank orders the first two documents unlike llama.cpp: %v, llama.cpp %v %v", byText, g.Pairs[0].Logit, g.Pairs[1].Logit)
	}
	t.Logf("%s: %d pairs, max |Δ logit| vs llama.cpp %.2e (tolerance %.0e)", spec.Name, len(g.Pairs), worst, tol)

	if spec.DType != tensor.F32 {
		return
	}
	var torch rankGolden
	readJSON(t, filepath.Join("testdata", "rank", spec.Name+".torch.json"), &torch)
	exact, err := e.RankIDs(inputs, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	worst = 0
	for i, p := range torch.Pairs {
		if !slices.Equal(p.IDs, inputs[i]) {
			t.Fatalf("the PyTorch twin ran other ids for pair %d", i)
		}
		worst = max(worst, math.Abs(float64(exact[i])-p.Logit))
	}
	if !(worst <= tol) {
		t.Errorf("max |Δ logit| vs the PyTorch twin %.2e > %.0e", worst, tol)
	}
	t.Logf("%s: max |Δ logit| vs PyTorch (float64, exact GELU) %s", spec.Name, fmt.Sprintf("%.2e", worst))
}
