package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toyml/toy/toy"
)

// get sends GET path to s and returns the status, Content-Type and body.
func get(t *testing.T, s *Server, path string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(b)
}

// metricValue reads one sample's value from Prometheus' text exposition: name
// with its labels exactly as written ({a="x",b="y"}); -1 when absent.
func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// TestMetrics: after two completions of one prompt (the second reusing the
// first's cache) and a request to no endpoint, /metrics counts them, their
// tokens and time to first token; the gauges follow the pool; a second
// server counts apart.
func TestMetrics(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 2})
	prompt, generated := 0.0, 0.0
	for range 2 {
		code, out := post(t, s, "/v1/completions", `{"prompt": "func main() {", "max_tokens": 5, "temperature": 0}`)
		if code != 200 {
			t.Fatalf("%d %v", code, out)
		}
		prompt += field(out, "usage", "prompt_tokens").(float64)
		generated += field(out, "usage", "completion_tokens").(float64)
	}
	if code, _, _ := get(t, s, "/nowhere"); code != 404 {
		t.Fatalf("GET /nowhere: %d", code)
	}
	code, ct, text := get(t, s, "/metrics")
	if code != 200 || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: %d %q", code, ct)
	}
	for name, want := range map[string]float64{
		`toy_requests_total{endpoint="/v1/completions",status="200"}`: 2,
		`toy_requests_total{endpoint="other",status="404"}`:           1,
		`toy_prompt_tokens_total`:                                     prompt,
		`toy_generated_tokens_total`:                                  generated,
		`toy_time_to_first_token_seconds_count`:                       2,
		`toy_tokens_per_second_count`:                                 2,
		`toy_prefix_cache_hits_total`:                                 1,
		`toy_slots`:                                                   2,
		`toy_slots_busy`:                                              0,
		`toy_queue_depth`:                                             0,
		`toy_batched_steps_total`:                                     0, // one request at a time
	} {
		if got := metricValue(t, text, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if prompt == 0 || generated == 0 {
		t.Fatalf("prompt %v generated %v tokens", prompt, generated)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} { // a load test watches them stay flat
		if got := metricValue(t, text, name); got <= 0 {
			t.Errorf("%s = %v", name, got)
		}
	}
	if !strings.Contains(text, "# TYPE toy_time_to_first_token_seconds histogram") {
		t.Error("time to first token is not a histogram")
	}

	// Both slots held: busy 2.
	var held []*slot
	for range 2 {
		sl, err := s.pool.acquire(context.Background(), nil, func() {})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, sl)
	}
	_, _, text = get(t, s, "/metrics")
	if got := metricValue(t, text, "toy_slots_busy"); got != 2 {
		t.Errorf("toy_slots_busy with both slots held: %v", got)
	}
	for _, sl := range held {
		s.pool.release(sl)
	}

	other := newServer(t, m, Options{})
	_, _, text = get(t, other, "/metrics")
	if got := metricValue(t, text, `toy_requests_total{endpoint="/v1/completions",status="200"}`); got != -1 {
		t.Errorf("a new server counts %v completions: the registry is shared", got)
	}
	if got := metricValue(t, text, `toy_requests_total{endpoint="/metrics",status="200"}`); got != -1 {
		t.Errorf("the scrape counted itself before it finished: %v", got)
	}
}

// TestSlots: GET /slots lists every slot; after a request its slot shows
// the request's prompt, cached and decoded tokens; a held slot is
// processing.
func TestSlots(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 3})
	var slots []map[string]any
	list := func() {
		t.Helper()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/slots", nil))
		slots = nil
		if err := jsonDecode(rec.Body, &slots); err != nil || rec.Code != 200 {
			t.Fatalf("GET /slots: %d %v", rec.Code, err)
		}
	}
	list()
	if len(slots) != 3 {
		t.Fatalf("%d slots, want 3", len(slots))
	}
	for i, sl := range slots {
		if sl["id"] != float64(i) || sl["n_ctx"] != float64(s.ctxSize) || sl["is_processing"] != false || sl["n_decoded"] != 0.0 {
			t.Errorf("slot %d: %v", i, sl)
		}
	}
	body := `{"prompt": "func main() {", "max_tokens": 6, "temperature": 0}`
	post(t, s, "/v1/completions", body)
	_, out := post(t, s, "/v1/completions", body)
	list()
	found := false
	for _, sl := range slots {
		if sl["n_prompt_tokens"] == field(out, "usage", "prompt_tokens") {
			found = true
			if sl["n_decoded"] != field(out, "usage", "completion_tokens") || sl["n_prompt_tokens_cache"] != field(out, "usage", "prompt_tokens_details", "cached_tokens") ||
				sl["n_predict"] != 6.0 || sl["is_processing"] != false || field(sl, "next_token", "n_decoded") != sl["n_decoded"] ||
				field(sl, "next_token", "n_remain") != 6-sl["n_decoded"].(float64) {
				t.Errorf("slot after the request: %v; usage %v", sl, out["usage"])
			}
		}
	}
	if !found || field(out, "usage", "prompt_tokens_details", "cached_tokens") == 0.0 {
		t.Errorf("no slot shows the request: %v; usage %v", slots, out["usage"])
	}
	sl, err := s.pool.acquire(context.Background(), nil, func() {})
	if err != nil {
		t.Fatal(err)
	}
	list()
	if slots[sl.id]["is_processing"] != true {
		t.Errorf("held slot %d: %v", sl.id, slots[sl.id])
	}
	s.pool.release(sl)
}

func TestModelByID(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Name: "org/toy-model"})
	code, _, body := get(t, s, "/v1/models/org/toy-model")
	var out map[string]any
	if err := jsonDecode(strings.NewReader(body), &out); err != nil || code != 200 || out["id"] != "org/toy-model" || out["object"] != "model" {
		t.Errorf("GET /v1/models/org/toy-model: %d %s", code, body)
	}
	code, _, body = get(t, s, "/v1/models/gpt-4o")
	out = nil
	if err := jsonDecode(strings.NewReader(body), &out); err != nil || code != 404 ||
		field(out, "error", "code") != "model_not_found" || field(out, "error", "type") != "invalid_request_error" ||
		!strings.Contains(fmt.Sprint(field(out, "error", "message")), "gpt-4o") {
		t.Errorf("GET /v1/models/gpt-4o: %d %s", code, body)
	}
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// TestNewRoutesMethods: the new endpoints answer a wrong method with 405.
func TestNewRoutesMethods(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{})
	for _, c := range []struct{ method, path string }{{"POST", "/metrics"}, {"POST", "/slots"}, {"GET", "/v1/responses"}, {"GET", "/api/embeddings"}} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != 405 {
			t.Errorf("%s %s: %d", c.method, c.path, rec.Code)
		}
	}
}

// TestMetricsUnderLoad: scrapes of /metrics and /slots while four requests
// decode together (run with -race) and the counts after them: every token
// counted, steps batched.
func TestMetricsUnderLoad(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 4})
	var mu sync.Mutex
	generated := 0.0
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			_, out := post(t, s, "/v1/completions", fmt.Sprintf(`{"prompt": "func f%d() {", "max_tokens": 24, "temperature": 0}`, i))
			mu.Lock()
			generated += field(out, "usage", "completion_tokens").(float64)
			mu.Unlock()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for scraping := true; scraping; {
		select {
		case <-done:
			scraping = false
		default:
			get(t, s, "/metrics")
			get(t, s, "/slots")
		}
	}
	_, _, text := get(t, s, "/metrics")
	if got := metricValue(t, text, "toy_generated_tokens_total"); got != generated || generated == 0 {
		t.Errorf("toy_generated_tokens_total %v, the replies %v", got, generated)
	}
	if s.batched && metricValue(t, text, "toy_batched_steps_total") <= 0 {
		t.Errorf("no batched steps counted: %v", metricValue(t, text, "toy_batched_steps_total"))
	}
}
