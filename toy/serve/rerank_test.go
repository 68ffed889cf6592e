package serve

import (
	"slices"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
)

// reranker writes the gate's F32 reranker (a BERT cross-encoder: rank
// pooling, pooler and classifier) and loads it.
func reranker(t *testing.T) *toy.Embedder {
	t.Helper()
	e := loadEncoder(t, testmodel.RankSpecs()[0])
	if !e.Reranker() {
		t.Fatal("the reranker gate model is no reranker")
	}
	return e
}

// TestRerank: POST /rerank in Jina's shape scores every document as
// toy.Embedder.Rank does and sorts them best first, top_n cuts the list,
// the TEI shape (texts) answers a list with texts on request, and the
// routes llama.cpp has all answer; bad requests and a non-reranker are
// refused with a clear error.
func TestRerank(t *testing.T) {
	e := reranker(t)
	s, err := NewEmbedding(e, Options{Name: "rr"})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"a cat sat on the mat", "the stock market fell", "kittens are young cats", "paris is in france"}
	want, err := e.Rank("what is a cat?", docs, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var jina struct {
		Model   string `json:"model"`
		Object  string `json:"object"`
		Results []struct {
			Index int     `json:"index"`
			Score float32 `json:"relevance_score"`
		} `json:"results"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	for _, path := range []string{"/rerank", "/v1/rerank", "/reranking", "/v1/reranking"} {
		if code := postJSON(t, s, path, `{"model": "x", "query": "what is a cat?", "documents": ["a cat sat on the mat", "the stock market fell", "kittens are young cats", "paris is in france"]}`, &jina); code != 200 {
			t.Fatalf("%s: status %d", path, code)
		}
		if jina.Model != "rr" || jina.Object != "list" || len(jina.Results) != len(docs) || jina.Usage.PromptTokens == 0 {
			t.Fatalf("%s: %+v", path, jina)
		}
		var seen []int
		for k, r := range jina.Results {
			if r.Score != want[r.Index] {
				t.Errorf("%s: document %d scored %v, Rank %v", path, r.Index, r.Score, want[r.Index])
			}
			if k > 0 && r.Score > jina.Results[k-1].Score {
				t.Errorf("%s: results not sorted best first: %+v", path, jina.Results)
			}
			seen = append(seen, r.Index)
		}
		slices.Sort(seen)
		if !slices.Equal(seen, []int{0, 1, 2, 3}) {
			t.Errorf("%s: indices %v", path, seen)
		}
	}
	best := jina.Results[0]
	postJSON(t, s, "/rerank", `{"query": "what is a cat?", "documents": ["a cat sat on the mat", "the stock market fell", "kittens are young cats", "paris is in france"], "top_n": 1}`, &jina)
	if len(jina.Results) != 1 || jina.Results[0] != best {
		t.Errorf("top_n 1: %+v, want the best %+v", jina.Results, best)
	}
	var tei []struct {
		Index int     `json:"index"`
		Score float32 `json:"score"`
		Text  string  `json:"text"`
	}
	if code := postJSON(t, s, "/rerank", `{"query": "what is a cat?", "texts": ["a cat sat on the mat", "the stock market fell"], "return_text": true}`, &tei); code != 200 || len(tei) != 2 {
		t.Fatalf("TEI: status %d, %+v", code, tei)
	}
	for _, r := range tei {
		if r.Text != docs[r.Index] || r.Score != want[r.Index] {
			t.Errorf("TEI result %+v, want text %q score %v", r, docs[r.Index], want[r.Index])
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"documents": ["a"]}`, `"query" must be provided`},
		{`{"query": "q", "documents": []}`, "non-empty list of strings"},
		{`{"query": "q", "documents": [1, 2]}`, "non-empty list of strings"},
		{`{"query": "q", "documents": ["a"], "top_n": -1}`, "top_n"},
		{`{"query": "q", "documents": ["` + strings.Repeat("word ", 200) + `"]}`, "context"},
		{`{"query": "q"`, "JSON"},
	} {
		var out struct{ Error struct{ Message string } }
		if code := postJSON(t, s, "/rerank", c.body, &out); code != 400 || !strings.Contains(out.Error.Message, c.want) {
			t.Errorf("%.40s: %d %q, want 400 with %q", c.body, code, out.Error.Message, c.want)
		}
	}
	// A reranker embeds nothing; an embedding model reranks nothing.
	var out struct{ Error struct{ Message string } }
	if code := postJSON(t, s, "/v1/embeddings", `{"input": "a"}`, &out); code != 501 || !strings.Contains(out.Error.Message, "reranker") {
		t.Errorf("embeddings from a reranker: %d %q", code, out.Error.Message)
	}
	emb, _ := NewEmbedding(embedder(t), Options{})
	if code := postJSON(t, emb, "/rerank", `{"query": "q", "documents": ["a"]}`, &out); code != 501 || !strings.Contains(out.Error.Message, "no reranker") {
		t.Errorf("rerank by an embedding model: %d %q", code, out.Error.Message)
	}
}
