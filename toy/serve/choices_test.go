package serve

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
	"github.com/toyml/toy/toy/sample"
)

// TestChoices: n choices are n sampling streams, choice i the one a single
// request with seed + i gives; streamed, each chunk names its choice.
func TestChoices(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	const req = `"prompt": "func (b *Buffer) Len() int {", "max_tokens": 10, "temperature": 1, "top_k": 20`
	code, out := post(t, s, "/v1/completions", `{`+req+`, "seed": 42, "n": 3}`)
	if code != 200 {
		t.Fatalf("%d %v", code, out)
	}
	var texts []string
	total := 0.0
	for i := range 3 {
		if field(out, "choices", i, "index") != float64(i) {
			t.Errorf("choices[%d].index = %v", i, field(out, "choices", i, "index"))
		}
		_, one := post(t, s, "/v1/completions", fmt.Sprintf(`{%s, "seed": %d}`, req, 42+i))
		text := field(out, "choices", i, "text").(string)
		if want := field(one, "choices", 0, "text"); text != want {
			t.Errorf("choice %d: %q, want seed %d's %q", i, text, 42+i, want)
		}
		texts = append(texts, text)
		total += field(one, "usage", "completion_tokens").(float64)
	}
	if texts[0] == texts[1] && texts[1] == texts[2] {
		t.Errorf("three choices, one text: %q", texts[0])
	}
	if got := field(out, "usage", "completion_tokens"); got != total {
		t.Errorf("usage.completion_tokens %v, want the choices' sum %v", got, total)
	}

	// Streamed, completions and chat: the chunks of choice i spell its text.
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{` + req + `, "seed": 42, "n": 3, "stream": true}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "func (b *Buffer) Len() int {"}], "max_tokens": 10, "temperature": 1, "top_k": 20, "seed": 42, "n": 3, "stream": true}`},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", c.path, strings.NewReader(c.body)))
		chunks, done := events(t, rec.Body)
		if !done {
			t.Fatalf("%s: no [DONE]", c.path)
		}
		got := make([]strings.Builder, 3)
		roles, finishes := 0, 0
		for _, ch := range chunks {
			i := int(field(ch, "choices", 0, "index").(float64))
			if text, ok := field(ch, "choices", 0, "text").(string); ok {
				got[i].WriteString(text)
			}
			if text, ok := field(ch, "choices", 0, "delta", "content").(string); ok {
				got[i].WriteString(text)
			}
			if field(ch, "choices", 0, "delta", "role") == "assistant" {
				roles++
			}
			if field(ch, "choices", 0, "finish_reason") != nil {
				finishes++
			}
		}
		for i := range 3 {
			if got[i].String() != texts[i] {
				t.Errorf("%s streamed choice %d: %q, want %q", c.path, i, got[i].String(), texts[i])
			}
		}
		if finishes != 3 || (c.path == "/v1/chat/completions" && roles != 3) {
			t.Errorf("%s: %d finish chunks and %d role chunks, want 3 each", c.path, finishes, roles)
		}
	}
}

// TestPenaltiesAndBias: frequency and presence penalties and logit_bias
// give what toy's sampler gives with the same parameters (sample.Params via
// m.Generate), and change the greedy reply.
func TestPenaltiesAndBias(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	ids, _ := m.Encode("func main() {")
	gen := func(p sample.Params) string {
		out, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: 24, Sample: p, Stop: m.Tokenizer.IsEOG})
		if err != nil {
			t.Fatal(err)
		}
		return m.Tokenizer.Decode(out)
	}
	plain := gen(sample.Params{})
	first, _ := m.Generate(ids, toy.GenerateOptions{MaxTokens: 1})
	for _, c := range []struct {
		name, extra string
		p           sample.Params
	}{
		{"frequency and presence", `"frequency_penalty": 1.5, "presence_penalty": 0.5`, sample.Params{FrequencyPenalty: 1.5, PresencePenalty: 0.5}},
		{"presence only", `"presence_penalty": 2`, sample.Params{PresencePenalty: 2}},
		{"ban the greedy first token", fmt.Sprintf(`"logit_bias": {"%d": -100}`, first[0]), sample.Params{LogitBias: map[int32]float32{first[0]: -100}}},
	} {
		want := gen(c.p)
		_, out := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 24, "temperature": 0, `+c.extra+`}`)
		if got := field(out, "choices", 0, "text"); got != want {
			t.Errorf("%s: %q, toy's sampler gives %q", c.name, got, want)
		}
		if want == plain {
			t.Errorf("%s: the reply %q is the unpenalised one", c.name, want)
		}
	}
}
