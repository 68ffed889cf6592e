package serve

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toyml/toy/toy"
)

// TestParallelSlots: eight requests decode at once, their steps batched,
// and each gets the tokens and log-probs it gets alone — greedy and seeded,
// completions and chat.
func TestParallelSlots(t *testing.T) {
	s := newBatchedServer(t)
	bodies := make([]string, 8)
	for i := range bodies {
		path := "/v1/completions"
		body := fmt.Sprintf(`{"prompt": "func f%d() int {", "max_tokens": %d, "logprobs": 2, "temperature": %d, "seed": %d}`, i, 12+i, i%2, 7*i)
		if i%3 == 2 {
			path = "/v1/chat/completions"
			body = fmt.Sprintf(`{"messages": [{"role": "user", "content": "Say %d things."}], "max_tokens": 10, "logprobs": true, "top_logprobs": 2, "temperature": %d, "seed": %d}`, i, i%2, i)
		}
		bodies[i] = path + " " + body
	}
	run := func(b string) map[string]any {
		path, body, _ := strings.Cut(b, " ")
		code, out := post(t, s, path, body)
		if code != 200 {
			t.Errorf("%s: %d %v", b, code, out)
		}
		return map[string]any{"choices": out["choices"], "usage": out["usage"]}
	}
	alone := make([]map[string]any, len(bodies))
	for i, b := range bodies {
		alone[i] = run(b)
	}
	before := s.pool.batchedSteps
	together := make([]map[string]any, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() { together[i] = run(b) })
	}
	wg.Wait()
	for i := range bodies {
		u := together[i]["usage"].(map[string]any)
		delete(u, "prompt_tokens_details") // the cached prefix depends on the slot
		delete(alone[i]["usage"].(map[string]any), "prompt_tokens_details")
		if !reflect.DeepEqual(alone[i], together[i]) {
			t.Errorf("request %d: beside seven others\n%v\nalone\n%v", i, together[i], alone[i])
		}
	}
	if s.pool.batchedSteps == before {
		t.Error("no step ran several slots together")
	}
}

// TestQueueFull: past the slots, requests wait in the queue; past the
// queue, 503 with Retry-After. A queued streaming request has its headers
// at once.
func TestQueueFull(t *testing.T) {
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 1, Queue: 1})
	ts := httptest.NewServer(s)
	defer ts.Close()
	held, err := s.pool.acquire(context.Background(), nil, func() {})
	if err != nil {
		t.Fatal(err)
	}
	// The queued one: a stream, whose headers come before any token.
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "func", "max_tokens": 2, "stream": true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("queued stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The next finds the queue full.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, waiting := s.pool.counts(); waiting == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r2, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "func", "max_tokens": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 503 || r2.Header.Get("Retry-After") == "" {
		t.Errorf("past the queue: %d, Retry-After %q", r2.StatusCode, r2.Header.Get("Retry-After"))
	}
	s.pool.release(held)
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		done = done || sc.Text() == "data: [DONE]"
	}
	if !done {
		t.Error("the queued stream did not finish once the slot was free")
	}
}

// TestStepsStayTogether: eight greedy requests decoding at once run their
// steps as one batch, not split into the slot whose goroutine woke first
// and the rest (the mean batch over the round stays near eight).
func TestStepsStayTogether(t *testing.T) {
	s := newBatchedServer(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"prompt": "func f%d() int {", "max_tokens": 48, "ignore_eos": true, "temperature": 0, "stream": true}`, i)
			if code := postStatus(t, s, "/v1/completions", body); code != 200 {
				t.Errorf("request %d: %d", i, code)
			}
		})
	}
	wg.Wait()
	s.pool.mu.Lock()
	steps, rows := s.pool.batchedSteps, s.pool.batchedRows
	s.pool.mu.Unlock()
	// Split steps (one slot, then seven) would give a mean near 4.
	if steps == 0 || float64(rows)/float64(steps) < 6 {
		t.Errorf("%d batched steps ran %d slots' steps: %.1f a step, want 6 or more", steps, rows, float64(rows)/float64(max(steps, 1)))
	}
}

// newBatchedServer serves the default model with 8 slots, failing t unless
// the model decodes a batch as it decodes each sequence alone.
func newBatchedServer(t *testing.T) *Server {
	t.Helper()
	m, err := toy.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, m, Options{Parallel: 8})
	if !s.batched {
		t.Fatal("the default model does not decode a batch as it decodes each sequence alone")
	}
	return s
}
