package serve

import (
	"math"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/defaultmodel"
	"github.com/toyml/toy/toy/gguf"
	"github.com/toyml/toy/toy/tokenizer"
)

// TestOllamaEmbeddings: the legacy POST /api/embeddings gives the vector
// /api/embed gives for the same text; an empty prompt an empty one; no
// embedder, 404.
func TestOllamaEmbeddings(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Embedder: embedder(t)})
	var legacy struct {
		Embedding []float32 `json:"embedding"`
	}
	if code := postJSON(t, s, "/api/embeddings", `{"model": "bert", "prompt": "the cat sat", "keep_alive": "5m", "options": {"num_ctx": 64}}`, &legacy); code != 200 {
		t.Fatalf("status %d", code)
	}
	var embed struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if code := postJSON(t, s, "/api/embed", `{"input": "the cat sat"}`, &embed); code != 200 || len(embed.Embeddings) != 1 {
		t.Fatalf("/api/embed: %d %v", code, embed)
	}
	if len(legacy.Embedding) == 0 || !reflect.DeepEqual(legacy.Embedding, embed.Embeddings[0]) {
		t.Errorf("/api/embeddings %d values, /api/embed %d: differ", len(legacy.Embedding), len(embed.Embeddings[0]))
	}
	if n := norm(legacy.Embedding); math.Abs(n-1) > 1e-4 {
		t.Errorf("norm %v", n)
	}
	var empty map[string]any
	if code := postJSON(t, s, "/api/embeddings", `{"model": "bert", "prompt": ""}`, &empty); code != 200 || !reflect.DeepEqual(empty["embedding"], []any{}) {
		t.Errorf("empty prompt: %d %v", code, empty)
	}
	var bad struct{ Error string }
	if code := postJSON(t, s, "/api/embeddings", `{"model": "bert", "input": "x"}`, &bad); code != 400 || !strings.Contains(bad.Error, "input") {
		t.Errorf("/api/embed's field on /api/embeddings: %d %q", code, bad.Error)
	}
	bare := newServer(t, m, Options{})
	if code := postJSON(t, bare, "/api/embeddings", `{"prompt": "hi"}`, &bad); code != 404 || !strings.Contains(bad.Error, "--embed") {
		t.Errorf("no embedder: %d %q", code, bad.Error)
	}
}

// TestOllamaLogprobs: logprobs on /api/generate and /api/chat, whole and
// streamed, in Ollama's shape: one entry per reply token whose pieces make
// the reply, the values /v1/completions reports for the same prompt,
// top_logprobs most likely first; absent unless asked.
func TestOllamaLogprobs(t *testing.T) {
	m := modelWithTemplate(t)
	s := newServer(t, m, Options{})
	_, ref := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 8, "temperature": 0, "logprobs": 3}`)
	wantLps := field(ref, "choices", 0, "logprobs", "token_logprobs").([]any)
	wantToks := field(ref, "choices", 0, "logprobs", "tokens").([]any)
	if len(wantLps) < 2 {
		t.Fatalf("the reference reply has %d tokens", len(wantLps))
	}

	body := `{"model": "m", "prompt": "func main() {", "raw": true, "stream": false, "logprobs": true, "top_logprobs": 3, "options": {"temperature": 0, "num_predict": 8}}`
	code, out := post(t, s, "/api/generate", body)
	if code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	check := func(name string, lps []any, text string) {
		t.Helper()
		var b strings.Builder
		for i, l := range lps {
			b.WriteString(field(l, "token").(string))
			if i < len(wantLps) && (field(l, "token") != wantToks[i] || math.Abs(field(l, "logprob").(float64)-wantLps[i].(float64)) > 1e-9) {
				t.Errorf("%s: token %d %v, /v1/completions %v %v", name, i, l, wantToks[i], wantLps[i])
			}
			top := field(l, "top_logprobs").([]any)
			if len(top) != 3 || field(top, 0, "logprob").(float64) < field(top, 2, "logprob").(float64) ||
				field(top, 0, "token") != field(l, "token") || len(field(l, "bytes").([]any)) != len(field(l, "token").(string)) {
				t.Errorf("%s: token %d: %v", name, i, l)
			}
		}
		if b.String() != text || len(lps) != len(wantLps) {
			t.Errorf("%s: %d log-probs spell %q; reply %q, %d tokens", name, len(lps), b.String(), text, len(wantLps))
		}
	}
	lps, _ := out["logprobs"].([]any)
	check("generate", lps, out["response"].(string))

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/api/generate", strings.NewReader(strings.Replace(body, `"stream": false`, `"stream": true`, 1))))
	var streamed []any
	var text strings.Builder
	for _, l := range ndjson(t, rec.Body) {
		text.WriteString(field(l, "response").(string))
		if more, ok := l["logprobs"].([]any); ok {
			streamed = append(streamed, more...)
		}
	}
	check("generate, streamed", streamed, text.String())

	// chat: the same entries per reply token
	code, out = post(t, s, "/api/chat", `{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false, "logprobs": true, "options": {"temperature": 0, "num_predict": 5}}`)
	lps, _ = out["logprobs"].([]any)
	var b strings.Builder
	for _, l := range lps {
		b.WriteString(field(l, "token").(string))
		if _, has := l.(map[string]any)["top_logprobs"]; has {
			t.Errorf("top_logprobs without asking: %v", l)
		}
	}
	if code != 200 || len(lps) == 0 || b.String() != field(out, "message", "content") {
		t.Errorf("chat: %d, log-probs %v spell %q, content %q", code, lps, b.String(), field(out, "message", "content"))
	}
	_, out = post(t, s, "/api/chat", `{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false, "options": {"num_predict": 3}}`)
	if _, has := out["logprobs"]; has {
		t.Errorf("logprobs without asking: %v", out)
	}
	for _, bad := range []string{`"logprobs": true, "top_logprobs": 21`, `"top_logprobs": 2`} {
		code, out = post(t, s, "/api/generate", `{"prompt": "x", "stream": false, `+bad+`}`)
		if code != 400 || !strings.Contains(out["error"].(string), "top_logprobs") {
			t.Errorf("%s: %d %v", bad, code, out)
		}
	}
}

// withFIM writes toy's default model with FIM token ids set, and loads it.
func withFIM(t *testing.T, pre, suf, mid int) *toy.Model {
	t.Helper()
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w, err := gguf.NewWriterFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	w.SetUint32("tokenizer.ggml.fim_pre_token_id", uint32(pre))
	w.SetUint32("tokenizer.ggml.fim_suf_token_id", uint32(suf))
	w.SetUint32("tokenizer.ggml.fim_mid_token_id", uint32(mid))
	path := filepath.Join(t.TempDir(), "toy-fim.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	m, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestFIM: suffix on /v1/completions runs [BOS] <PRE> prefix <SUF> suffix
// <MID>, as llama-server's infill, and the reply is what the model makes
// of that; a model without FIM tokens refuses it.
func TestFIM(t *testing.T) {
	m := withFIM(t, 3, 4, 5)
	s := newServer(t, m, Options{})
	code, out := post(t, s, "/v1/completions", `{"prompt": "func add(a, b int) int {", "suffix": "}\n", "max_tokens": 8, "temperature": 0}`)
	if code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	tok := m.Tokenizer
	var ids []int32
	if tok.AddBOS() && tok.BOS() >= 0 {
		ids = append(ids, tok.BOS())
	}
	ids = append(ids, 3)
	ids = append(ids, tok.Encode("func add(a, b int) int {", tokenizer.EncodeOptions{})...)
	ids = append(ids, 4)
	ids = append(ids, tok.Encode("}\n", tokenizer.EncodeOptions{})...)
	ids = append(ids, 5)
	if got := field(out, "usage", "prompt_tokens"); got != float64(len(ids)) {
		t.Errorf("prompt %v tokens, want %d", got, len(ids))
	}
	if held := s.pool.slots[0].lm.Tokens(); len(held) < len(ids) || !reflect.DeepEqual(held[:len(ids)], ids) {
		t.Errorf("the slot ran %v, want the prompt %v", held, ids)
	}
	if got, want := field(out, "choices", 0, "text"), greedy(t, m, ids, 8); got != want {
		t.Errorf("infill %q, want %q", got, want)
	}
	_, plain := post(t, s, "/v1/completions", `{"prompt": "func add(a, b int) int {", "max_tokens": 8, "temperature": 0}`)
	if field(plain, "usage", "prompt_tokens") == field(out, "usage", "prompt_tokens") {
		t.Error("suffix made no difference to the prompt")
	}
	if code, out := post(t, s, "/v1/completions", `{"prompt": [1, 2, 3], "suffix": "}"}`); code != 400 || field(out, "error", "param") != "prompt" {
		t.Errorf("token ids with suffix: %d %v", code, out)
	}

	def, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := newServer(t, def, Options{}).fim(); ok {
		t.Skip("the default model has FIM tokens by their texts")
	}
	code, out = post(t, newServer(t, def, Options{}), "/v1/completions", `{"prompt": "a", "suffix": "b"}`)
	if code != 400 || field(out, "error", "param") != "suffix" || !strings.Contains(field(out, "error", "message").(string), "FIM") {
		t.Errorf("no FIM tokens: %d %v", code, out)
	}
}
