package serve

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toyml/toy/toy"
)

// logSoftmax is log p_i = x_i − log Σ_j e^{x_j}, in float64.
func logSoftmax(row []float32) []float64 {
	maxv := math.Inf(-1)
	for _, x := range row {
		maxv = math.Max(maxv, float64(x))
	}
	var sum float64
	for _, x := range row {
		sum += math.Exp(float64(x) - maxv)
	}
	out := make([]float64, len(row))
	for i, x := range row {
		out[i] = float64(x) - maxv - math.Log(sum)
	}
	return out
}

// forwardLogprobs runs the prompt and the reply through m.Forward from an
// empty cache — no KV cache reuse, no decoding loop — and returns
// log p(reply_i | prompt, reply_<i) for each reply token, and the
// log-softmax row it came from.
func forwardLogprobs(t *testing.T, m *toy.Model, prompt, reply []int32) ([]float64, [][]float64) {
	t.Helper()
	ids := append(append([]int32{}, prompt...), reply[:len(reply)-1]...)
	logits, err := m.Forward(ids)
	if err != nil {
		t.Fatal(err)
	}
	var lps []float64
	var rows [][]float64
	for i, id := range reply {
		row := logSoftmax(logits.Row(len(prompt) - 1 + i))
		lps, rows = append(lps, row[id]), append(rows, row)
	}
	return lps, rows
}

// TestLogprobsMatchForward: the log-prob the server reports for each greedy
// token is the log-softmax of the logits m.Forward gives for the same ids
// (within 1e-5), in both shapes, whole and streamed; the alternatives are
// the most likely tokens of that distribution, the greedy one first.
func TestLogprobsMatchForward(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	const prompt = "func (b *Buffer) Len() int {"
	ids, _ := m.Encode(prompt)
	reply, err := m.Generate(ids, toy.GenerateOptions{MaxTokens: 12, Stop: m.Tokenizer.IsEOG})
	if err != nil {
		t.Fatal(err)
	}
	want, rows := forwardLogprobs(t, m, ids, reply)
	worst := 0.0
	agree := func(name string, got []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d log-probs, want %d", name, len(got), len(want))
		}
		for i := range got {
			d := math.Abs(got[i] - want[i])
			worst = math.Max(worst, d)
			if d > 1e-5 {
				t.Errorf("%s: token %d log-prob %.7f, m.Forward gives %.7f", name, i, got[i], want[i])
			}
		}
	}

	// /v1/completions, logprobs: 3 (legacy shape).
	body := `{"prompt": "func (b *Buffer) Len() int {", "max_tokens": 12, "temperature": 0, "logprobs": 3}`
	_, out := post(t, s, "/v1/completions", body)
	lp := field(out, "choices", 0, "logprobs")
	var got []float64
	var text strings.Builder
	for i, x := range field(lp, "token_logprobs").([]any) {
		got = append(got, x.(float64))
		tokText := field(lp, "tokens", i).(string)
		if off := field(lp, "text_offset", i).(float64); int(off) != text.Len() {
			t.Errorf("text_offset[%d] = %v, want %d", i, off, text.Len())
		}
		text.WriteString(tokText)
		top := field(lp, "top_logprobs", i).(map[string]any)
		if len(top) == 0 || len(top) > 3 || top[tokText] != x {
			t.Errorf("top_logprobs[%d] = %v: want ≤ 3 entries, the greedy %q among them with %v", i, top, tokText, x)
		}
	}
	agree("completions", got)
	if text.String() != field(out, "choices", 0, "text") {
		t.Errorf("tokens join to %q, text is %q", text.String(), field(out, "choices", 0, "text"))
	}

	// /v1/chat/completions without a template, logprobs with 4 alternatives.
	chatBody := `{"messages": [{"role": "user", "content": "func (b *Buffer) Len() int {"}], "max_tokens": 12, "temperature": 0, "logprobs": true, "top_logprobs": 4`
	_, out = post(t, s, "/v1/chat/completions", chatBody+`}`)
	got = got[:0]
	for i, e := range field(out, "choices", 0, "logprobs", "content").([]any) {
		got = append(got, field(e, "logprob").(float64))
		tok := field(e, "token").(string)
		if b := field(e, "bytes").([]any); len(b) != len(tok) {
			t.Errorf("content[%d]: bytes %v for token %q", i, b, tok)
		}
		top := field(e, "top_logprobs").([]any)
		if len(top) != 4 || field(top, 0, "token") != tok {
			t.Errorf("content[%d].top_logprobs = %v: want 4, the greedy token first", i, top)
		}
		for k := range top { // the alternatives are the distribution's best, in order
			best := topK(rowAsFloat32(rows[i]), 4)
			if want := rows[i][best[k]]; math.Abs(field(top, k, "logprob").(float64)-want) > 1e-5 {
				t.Errorf("content[%d].top_logprobs[%d] = %v, want %v", i, k, field(top, k, "logprob"), want)
			}
		}
	}
	agree("chat", got)

	// Streamed: the chunks' log-probs, in order, are the same.
	for _, c := range []struct{ path, body, key string }{
		{"/v1/chat/completions", chatBody + `, "stream": true}`, "chat"},
		{"/v1/completions", strings.TrimSuffix(body, "}") + `, "stream": true}`, "text"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", c.path, strings.NewReader(c.body)))
		chunks, done := events(t, rec.Body)
		if !done {
			t.Fatalf("%s stream: no [DONE]", c.path)
		}
		got = got[:0]
		for _, ch := range chunks {
			if c.key == "chat" {
				for _, e := range asList(field(ch, "choices", 0, "logprobs", "content")) {
					got = append(got, field(e, "logprob").(float64))
				}
			} else {
				for _, x := range asList(field(ch, "choices", 0, "logprobs", "token_logprobs")) {
					got = append(got, x.(float64))
				}
			}
		}
		agree(c.path+" streamed", got)
	}
	t.Logf("%d tokens: reported log-probs within %.2g of log-softmax(m.Forward)", len(want), worst)
}

func rowAsFloat32(row []float64) []float32 {
	out := make([]float32, len(row))
	for i, x := range row {
		out[i] = float32(x)
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// TestLogprobsStopString: tokens after a stop string are not listed, and
// the listed tokens spell the returned text.
func TestLogprobsStopString(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	_, full := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 20, "temperature": 0}`)
	text := field(full, "choices", 0, "text").(string)
	if len(text) < 12 {
		t.Fatalf("greedy text %q too short", text)
	}
	stop := text[8:11]
	_, out := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 20, "temperature": 0, "logprobs": 0, "stop": `+jsonString(stop)+`}`)
	cut := field(out, "choices", 0, "text").(string)
	var joined strings.Builder
	for _, tok := range field(out, "choices", 0, "logprobs", "tokens").([]any) {
		joined.WriteString(tok.(string))
	}
	if !strings.HasPrefix(joined.String(), cut) || len(joined.String())-len(cut) >= len(stop)+8 || !strings.HasPrefix(text, joined.String()) {
		t.Errorf("stop %q: text %q, tokens spell %q", stop, cut, joined.String())
	}
}
