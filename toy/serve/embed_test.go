package serve

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/internal/testmodel"
	"github.com/toyml/toy/toy"
)

// embedder writes the gate's F32 BERT test model (bert-base-uncased's
// vocabulary, mean pooling, 128 positions) and loads it.
func embedder(t *testing.T) *toy.Embedder { return loadEncoder(t, testmodel.EmbedSpecs()[0]) }

// loadEncoder writes a gate encoder model and loads it.
func loadEncoder(t *testing.T, spec testmodel.Spec) *toy.Embedder {
	t.Helper()
	path := filepath.Join(t.TempDir(), spec.File())
	if _, err := testmodel.Write(spec, path); err != nil {
		t.Fatal(err)
	}
	e, err := toy.LoadEmbedder(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// postJSON sends body to path and decodes the answer into out.
func postJSON(t *testing.T, s *Server, path, body string, out any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("POST %s: %d %q: %v", path, rec.Code, rec.Body.String(), err)
	}
	return rec.Code
}

type openAIEmbeddings struct {
	Object string `json:"object"`
	Model  string `json:"model"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct{ Message string } `json:"error"`
}

func (r *openAIEmbeddings) vector(t *testing.T, i int) []float32 {
	t.Helper()
	var v []float32
	if err := json.Unmarshal(r.Data[i].Embedding, &v); err == nil {
		return v
	}
	var s string
	if err := json.Unmarshal(r.Data[i].Embedding, &s); err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	v = make([]float32, len(b)/4)
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return v
}

func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// POST /v1/embeddings on an embedding model served alone: a string, a list
// of strings, token ids with and without [CLS]/[SEP], base64; the vectors
// are the library's, unit length; usage counts the tokens embedded.
func TestOpenAIEmbeddings(t *testing.T) {
	e := embedder(t)
	s, err := NewEmbedding(e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.Embed([]string{"hello world", "a cat"}, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var r openAIEmbeddings
	if code := postJSON(t, s, "/v1/embeddings", `{"model":"x","input":["hello world","a cat"]}`, &r); code != 200 ||
		r.Object != "list" || r.Model != "bert-f32" || len(r.Data) != 2 || r.Data[1].Index != 1 || r.Data[0].Object != "embedding" ||
		r.Usage.PromptTokens != 8 || r.Usage.TotalTokens != 8 { // [CLS] hello world [SEP], [CLS] a cat [SEP]
		t.Fatalf("status %d: %d items, model %q, usage %+v", code, len(r.Data), r.Model, r.Usage)
	}
	if !sameVector(r.vector(t, 0), want[0]) || !sameVector(r.vector(t, 1), want[1]) {
		t.Error("vectors differ from Embedder.Embed's")
	}
	hello := []int32{101, 7592, 2088, 102}
	for _, body := range []string{`{"input":"hello world"}`, `{"input":[101,7592,2088,102]}`, `{"input":[[7592,2088]]}`,
		`{"input":"hello world","encoding_format":"base64"}`} {
		r = openAIEmbeddings{}
		if code := postJSON(t, s, "/v1/embeddings", body, &r); code != 200 || len(r.Data) != 1 || !sameVector(r.vector(t, 0), want[0]) ||
			r.Usage.PromptTokens != len(hello) {
			t.Errorf("%s: status %d, %d items, usage %+v", body, code, len(r.Data), r.Usage)
		}
	}
	r = openAIEmbeddings{}
	if code := postJSON(t, s, "/v1/embeddings", `{"input":"hello world","dimensions":8}`, &r); code != 200 {
		t.Fatalf("dimensions: status %d", code)
	}
	if v := r.vector(t, 0); len(v) != 8 || math.Abs(float64(toy.Cosine(v, want[0][:8]))-1) > 1e-6 || math.Abs(norm(v)-1) > 1e-6 {
		t.Errorf("dimensions 8: %v", v)
	}
	for _, body := range []string{`{"input":[]}`, `{"input":7}`, `{"input":[[1,2],[]]}`, `{"input":[99999]}`, `{"input":"x","encoding_format":"hex"}`,
		`{"input":"x","dimensions":65}`, `{"input":"x","stream":true}`, `{"input":"` + strings.Repeat("word ", 200) + `"}`} {
		r = openAIEmbeddings{}
		if code := postJSON(t, s, "/v1/embeddings", body, &r); code != 400 || r.Error == nil || r.Error.Message == "" {
			t.Errorf("%.60s: status %d, error %+v, want 400 and a message", body, code, r.Error)
		}
	}
	var models struct{ Data []map[string]any }
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	if json.Unmarshal(rec.Body.Bytes(), &models); len(models.Data) != 1 || models.Data[0]["id"] != "bert-f32" {
		t.Errorf("/v1/models: %s", rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/embeddings", nil))
	if rec.Code != 405 {
		t.Errorf("GET /v1/embeddings: %d, want 405", rec.Code)
	}
}

// POST /api/embed: Ollama's shape; inputs cut to the context unless
// truncate is false.
func TestOllamaEmbed(t *testing.T) {
	e := embedder(t)
	s, err := NewEmbedding(e, Options{Name: "all-minilm"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.Embed([]string{"why is the sky blue?"}, toy.EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		PromptEvalCount int         `json:"prompt_eval_count"`
		TotalDuration   int64       `json:"total_duration"`
		Error           string      `json:"error"`
	}
	for _, body := range []string{`{"model":"all-minilm","input":"why is the sky blue?"}`, `{"model":"all-minilm","input":["why is the sky blue?"],"keep_alive":"5m","options":{"temperature":0}}`} {
		if code := postJSON(t, s, "/api/embed", body, &r); code != 200 || r.Model != "all-minilm" || len(r.Embeddings) != 1 ||
			!sameVector(r.Embeddings[0], want[0]) || r.PromptEvalCount != 8 || r.TotalDuration <= 0 {
			t.Errorf("%s: status %d %+v", body, code, r)
		}
	}
	long := strings.Repeat("word ", 200)
	r.Embeddings = nil
	if code := postJSON(t, s, "/api/embed", `{"input":["`+long+`","b"]}`, &r); code != 200 || len(r.Embeddings) != 2 || r.PromptEvalCount != 128+3 {
		t.Errorf("truncated by default: status %d, %d embeddings, %d tokens", code, len(r.Embeddings), r.PromptEvalCount)
	}
	r.Error = ""
	if code := postJSON(t, s, "/api/embed", `{"input":"`+long+`","truncate":false}`, &r); code != 400 || !strings.Contains(r.Error, "longer than the model's context") {
		t.Errorf("truncate false: status %d %q", code, r.Error)
	}
	r.Error = ""
	if code := postJSON(t, s, "/api/embed", `{"input":[1,2]}`, &r); code != 400 || r.Error == "" {
		t.Errorf("token ids: status %d %q, want 400 (Ollama takes text only)", code, r.Error)
	}
}

// A chat server with Options.Embedder serves both; without it the
// embedding endpoints say how to get one.
func TestEmbedderBesideChatModel(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	e := embedder(t)
	s, err := New(m, Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	var r openAIEmbeddings
	if code := postJSON(t, s, "/v1/embeddings", `{"input":"hi"}`, &r); code != 200 || r.Model != "bert-f32" || len(r.Data) != 1 {
		t.Fatalf("status %d, model %q, %d items", code, r.Model, len(r.Data))
	}
	bare, err := New(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r = openAIEmbeddings{}
	if code := postJSON(t, bare, "/v1/embeddings", `{"input":"hi"}`, &r); code != 404 || r.Error == nil || !strings.Contains(r.Error.Message, "--embed") {
		t.Errorf("no embedder: status %d %+v", code, r.Error)
	}
	var o struct{ Error string }
	if code := postJSON(t, bare, "/api/embed", `{"input":"hi"}`, &o); code != 404 || !strings.Contains(o.Error, "--embed") {
		t.Errorf("no embedder, Ollama: status %d %q", code, o.Error)
	}
}

func norm(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return math.Sqrt(n)
}
