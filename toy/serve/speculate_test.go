package serve

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/gguf"
)

// draftOf writes m's file quantized to Q2_K (a draft that often guesses
// wrong) and loads it.
func draftOf(t *testing.T, m *toy.Model) *toy.Model {
	t.Helper()
	f, err := gguf.Open(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, _, err := gguf.QuantizeModel(f, gguf.QuantizeOptions{FileType: gguf.FileQ2_K, Pure: true, AllowRequantize: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "draft-q2_k.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	d, err := toy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSpeculativeServe: a server with a draft model (Options.Draft) gives
// the replies it gives without one — greedy and sampled, n choices, JSON
// mode, log-probs, streamed, and a second request reusing the first's
// cache — whether the draft guesses well (the model itself: every guess
// kept when decoding greedily) or worse (the model in Q2_K); llama-server's
// timings report the guesses.
func TestSpeculativeServe(t *testing.T) {
	m := modelWithTemplate(t)
	plain := newServer(t, m, Options{})
	bodies := []string{
		fmt.Sprintf(`{"model": "x", %s, "max_tokens": 40, "temperature": 0}`, userMsg),
		fmt.Sprintf(`{"model": "x", %s, "max_tokens": 40, "temperature": 0.9, "top_k": 40, "seed": 5, "n": 3, "frequency_penalty": 0.5}`, userMsg),
		fmt.Sprintf(`{"model": "x", %s, "max_tokens": 40, "temperature": 0.8, "seed": 2, "response_format": {"type": "json_object"}}`, userMsg),
		fmt.Sprintf(`{"model": "x", %s, "max_tokens": 25, "temperature": 0.7, "seed": 9, "logprobs": true, "top_logprobs": 2}`, userMsg),
		fmt.Sprintf(`{"model": "x", %s, "max_tokens": 30, "temperature": 0, "stop": ["}"]}`, userMsg),
		`{"model": "x", "prompt": "package main\n\nfunc", "max_tokens": 50, "temperature": 0}`,
	}
	// replies gives the parts of a response that must not depend on the draft.
	replies := func(out map[string]any) string {
		b, _ := json.Marshal(out["choices"])
		return string(b)
	}
	for _, d := range []struct {
		name  string
		draft *toy.Model
	}{{"itself", m}, {"q2_k", draftOf(t, m)}} {
		s := newServer(t, m, Options{Draft: d.draft, DraftTokens: 4})
		drafted, accepted := 0.0, 0.0
		for i, body := range bodies {
			path := "/v1/chat/completions"
			if strings.Contains(body, `"prompt"`) {
				path = "/v1/completions"
			}
			_, want := post(t, plain, path, body)
			code, got := post(t, s, path, body)
			if code != 200 {
				t.Fatalf("draft %s, request %d: status %d: %v", d.name, i, code, got)
			}
			if g, w := replies(got), replies(want); g != w {
				t.Errorf("draft %s, request %d: %s\nwithout a draft: %s", d.name, i, g, w)
			}
			n, _ := field(got, "timings", "draft_n").(float64)
			a, _ := field(got, "timings", "draft_n_accepted").(float64)
			greedy := strings.Contains(body, `"temperature": 0,`)
			if a > n || d.name == "itself" && greedy && a != n {
				t.Errorf("draft %s, request %d: %v of %v guesses kept", d.name, i, a, n)
			}
			drafted, accepted = drafted+n, accepted+a
		}
		// Streamed, the text is the whole reply's.
		body := fmt.Sprintf(`{"model": "x", %s, "max_tokens": 40, "temperature": 0.9, "seed": 4, "stream": true}`, userMsg)
		_, whole := post(t, plain, "/v1/chat/completions", strings.Replace(body, `"stream": true`, `"stream": false`, 1))
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
		s.ServeHTTP(rec, req)
		chunks, done := events(t, rec.Body)
		var text strings.Builder
		for _, c := range chunks {
			if s, ok := field(c, "choices", 0, "delta", "content").(string); ok {
				text.WriteString(s)
			}
		}
		if want, _ := field(whole, "choices", 0, "message", "content").(string); !done || text.String() != want {
			t.Errorf("draft %s, streamed: %q (done %v), whole without a draft: %q", d.name, text.String(), done, want)
		}
		if drafted == 0 {
			t.Errorf("draft %s: no guesses at all", d.name)
		}
		t.Logf("draft %s: %v of %v guesses kept", d.name, accepted, drafted)
	}
}
