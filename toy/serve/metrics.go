// metrics.go: what the server shows of its work — GET /metrics in
// Prometheus' text exposition (prometheus/client_golang, one registry per
// Server) and llama-server's GET /slots.

package serve

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are a Server's Prometheus collectors, in a registry of its own
// (two servers in one process count apart).
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec // by endpoint and status
	prompt     prometheus.Counter
	generated  prometheus.Counter
	firstToken prometheus.Histogram // seconds from arrival to the first token
	speed      prometheus.Histogram // a request's decode tokens/s
}

// newMetrics makes s's collectors; the gauges and the pool's counters are
// read from s.pool when scraped.
func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toy_requests_total",
		Help: "HTTP requests answered, by endpoint (the route's path, \"other\" for none) and status."}, []string{"endpoint", "status"})
	m.prompt = prometheus.NewCounter(prometheus.CounterOpts{Name: "toy_prompt_tokens_total",
		Help: "Prompt tokens of finished generations (cached ones included)."})
	m.generated = prometheus.NewCounter(prometheus.CounterOpts{Name: "toy_generated_tokens_total",
		Help: "Tokens generated, over every choice."})
	m.firstToken = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "toy_time_to_first_token_seconds",
		Help:    "Seconds from a generation's arrival (queue wait included) to its first token.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}})
	m.speed = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "toy_tokens_per_second",
		Help:    "A generation's decode speed: tokens after the first over the time after the prompt.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}})
	busy := func() float64 { b, _ := s.pool.counts(); return float64(b) }
	waiting := func() float64 { _, q := s.pool.counts(); return float64(q) }
	locked := func(v *int) func() float64 {
		return func() float64 {
			s.pool.mu.Lock()
			defer s.pool.mu.Unlock()
			return float64(*v)
		}
	}
	m.reg.MustRegister(collectors.NewGoCollector(), // go_goroutines, go_memstats_…
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), // process_resident_memory_bytes, …
		m.requests, m.prompt, m.generated, m.firstToken, m.speed,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toy_slots_busy", Help: "Slots generating now."}, busy),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toy_slots", Help: "Slots (--parallel)."},
			func() float64 { return float64(len(s.pool.slots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toy_queue_depth", Help: "Requests waiting for a slot."}, waiting),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toy_prefix_cache_hits_total",
			Help: "Generations that reused a cached prompt prefix."}, locked(&s.pool.hits)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toy_batched_steps_total",
			Help: "Forward passes that ran several slots' steps as one batch."}, locked(&s.pool.batchedSteps)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "toy_batched_rows_total",
			Help: "Slots' steps run in batched forward passes (over toy_batched_steps_total: the mean batch)."}, locked(&s.pool.batchedRows)),
	)
	return m
}

// registerMetrics adds GET /metrics and GET /slots to s.
func (s *Server) registerMetrics() {
	s.metrics = newMetrics(s)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /slots", s.handleSlots)
}

// request counts an answered request; pattern is the route that took it
// ("POST /v1/chat/completions"), "" for none.
func (m *metrics) request(pattern string, status int) {
	if m == nil {
		return
	}
	endpoint := "other"
	if pattern != "" {
		_, endpoint, _ = strings.Cut(pattern, " ")
	}
	m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
}

// generation records a finished generation that arrived at start and got
// its slot at acquired.
func (m *metrics) generation(res *outcome, start, acquired time.Time) {
	if m == nil || res == nil {
		return
	}
	m.prompt.Add(float64(res.prompt))
	m.generated.Add(float64(res.generated))
	if res.generated > 0 {
		m.firstToken.Observe((acquired.Sub(start) + res.prefillTime).Seconds())
	}
	if v := perSecond(res); v > 0 {
		m.speed.Observe(v)
	}
}

// slotInfo is one entry of GET /slots, in llama-server's shape (the
// fields toy has).
type slotInfo struct {
	ID           int  `json:"id"`
	NCtx         int  `json:"n_ctx"`
	IsProcessing bool `json:"is_processing"`
	// The request holding the slot (while is_processing), else the last one.
	NPromptTokens int     `json:"n_prompt_tokens"`
	NCached       int     `json:"n_prompt_tokens_cache"`
	NDecoded      int     `json:"n_decoded"`
	NPredict      int     `json:"n_predict"`
	Seconds       float64 `json:"t_elapsed_s"` // since the request took the slot; 0 when idle
	// NextToken is llama-server's progress object.
	NextToken struct {
		HasNextToken bool `json:"has_next_token"`
		NRemain      int  `json:"n_remain"`
		NDecoded     int  `json:"n_decoded"`
	} `json:"next_token"`
}

// handleSlots answers GET /slots: one entry per slot, as llama-server's.
func (s *Server) handleSlots(w http.ResponseWriter, r *http.Request) {
	s.pool.mu.Lock()
	out := make([]slotInfo, len(s.pool.slots))
	for i, sl := range s.pool.slots {
		out[i] = slotInfo{ID: sl.id, NCtx: s.ctxSize, IsProcessing: sl.busy, NPromptTokens: sl.prompt,
			NCached: sl.cached, NDecoded: sl.decoded, NPredict: sl.maxToken}
		if !sl.started.IsZero() && sl.busy {
			out[i].Seconds = time.Since(sl.started).Seconds()
		}
		nt := &out[i].NextToken
		nt.HasNextToken, nt.NRemain, nt.NDecoded = sl.busy, max(0, sl.maxToken-sl.decoded), sl.decoded
	}
	s.pool.mu.Unlock()
	writeJSON(w, 200, out)
}
