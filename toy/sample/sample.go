// Package sample picks the next token from a vector of logits: greedy,
// temperature, top-k, top-p (nucleus), min-p, repetition penalty, OpenAI's
// presence and frequency penalties and logit bias, with a seeded random
// number generator so that the same seed gives the same tokens.
//
// The samplers apply in llama.cpp's default order: logit bias, repetition
// penalty, presence and frequency penalties, top-k, top-p, min-p,
// temperature, then a draw from the remaining distribution. Temperature 0
// (the zero Params) is greedy: the highest logit after the bias and the
// penalties, ties going to the lowest id.
package sample

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Params configures a Sampler. The zero value is greedy decoding.
type Params struct {
	Temperature   float32 // 0: greedy
	TopK          int     // keep the k most likely tokens (0: all)
	TopP          float32 // keep the smallest set with probability ≥ p (0 or 1: all)
	MinP          float32 // drop tokens with p < MinP·p_max (0: none)
	RepeatPenalty float32 // divide positive (multiply negative) logits of recent tokens (0 or 1: off)
	RepeatLastN   int     // how many recent tokens the penalty looks at (0: 64)

	// FrequencyPenalty and PresencePenalty are OpenAI's penalties, over the
	// tokens this Sampler has drawn (the reply, not the prompt): with c_j the
	// times token j was drawn,
	//	logit_j −= FrequencyPenalty·c_j + PresencePenalty·[c_j > 0]
	// (0: off; negative values encourage repetition).
	FrequencyPenalty float32
	PresencePenalty  float32
	// LogitBias is added to the logits of its tokens before anything else;
	// a bias of −100 or less bans the token (its logit becomes −∞).
	LogitBias map[int32]float32

	Seed uint64 // RNG seed
}

// Sampler draws the tokens of one reply; it is not safe for concurrent use.
type Sampler struct {
	p      Params
	rng    *rand.Rand
	buf    []candidate
	counts map[int32]int // times each token was drawn, for the OpenAI penalties
}

type candidate struct {
	id    int32
	logit float32
	p     float64
}

// New returns a sampler with the given parameters.
func New(p Params) *Sampler {
	return &Sampler{p: p, rng: rand.New(rand.NewPCG(p.Seed, 0x746f79))} // "toy"
}

// Greedy returns the id of the largest logit, the lowest id among ties.
func Greedy(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

// Sample picks the next token from logits [V]; history holds the tokens so
// far, prompt included (for the repetition penalty). logits is not modified.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	id := s.sample(s.adjust(logits, history))
	s.record(id)
	return id
}

// record counts a drawn token for the OpenAI penalties.
func (s *Sampler) record(id int32) {
	if s.p.FrequencyPenalty != 0 || s.p.PresencePenalty != 0 {
		if s.counts == nil {
			s.counts = map[int32]int{}
		}
		s.counts[id]++
	}
}

// Constraint limits which tokens may come next (a grammar: grammar.Tokens).
// Mask sets the logits of the refused tokens to −∞; Allows judges one;
// Accept moves past the token drawn.
type Constraint interface {
	Mask(logits []float32)
	Allows(id int32) bool
	Accept(id int32)
}

// SampleConstrained is Sample under c: the draw from the logits with c's
// refused tokens at −∞, which c then Accepts. Greedy decoding first takes its pick from the whole
// vocabulary and keeps it when c allows it — the pick under the mask would
// be the same token — so the mask is made only when the model's favourite
// is refused (llama.cpp's sampler does the same). It returns −1 when c
// refuses every token. logits is not modified.
func (s *Sampler) SampleConstrained(logits []float32, history []int32, c Constraint) int32 {
	adj := s.adjust(logits, history)
	var id int32
	if s.p.Temperature <= 0 {
		if id = Greedy(adj); !c.Allows(id) {
			if len(adj) > 0 && &adj[0] == &logits[0] {
				adj = slices.Clone(adj)
			}
			c.Mask(adj)
			if id = Greedy(adj); math.IsInf(float64(adj[id]), -1) {
				return -1
			}
		}
	} else {
		if len(adj) > 0 && &adj[0] == &logits[0] {
			adj = slices.Clone(adj)
		}
		c.Mask(adj)
		if id = Greedy(adj); math.IsInf(float64(adj[id]), -1) {
			return -1
		}
		id = s.sample(adj)
	}
	s.record(id)
	c.Accept(id)
	return id
}

// adjust applies the logit bias and the penalties, to a copy of logits when
// any is set.
func (s *Sampler) adjust(logits []float32, history []int32) []float32 {
	p := s.p
	copied := false
	own := func() {
		if !copied {
			logits, copied = slices.Clone(logits), true
		}
	}
	for id, b := range p.LogitBias {
		if id < 0 || int(id) >= len(logits) {
			continue
		}
		own()
		if b <= -100 {
			logits[id] = float32(math.Inf(-1))
		} else {
			logits[id] += b
		}
	}
	if p.RepeatPenalty > 0 && p.RepeatPenalty != 1 && len(history) > 0 {
		own()
		penalize(logits, history, p.RepeatPenalty, p.RepeatLastN)
	}
	if len(s.counts) > 0 {
		own()
		for id, c := range s.counts {
			if int(id) < len(logits) {
				logits[id] -= p.FrequencyPenalty*float32(c) + p.PresencePenalty
			}
		}
	}
	return logits
}

// sample draws from the adjusted logits.
func (s *Sampler) sample(logits []float32) int32 {
	p := s.p
	if p.Temperature <= 0 {
		return Greedy(logits)
	}
	c := s.buf[:0]
	for i, v := range logits {
		c = append(c, candidate{id: int32(i), logit: v})
	}
	// Sort by logit, highest first; equal logits by id, so the order (and
	// therefore the draw) does not depend on the sort algorithm.
	slices.SortFunc(c, func(a, b candidate) int {
		if a.logit != b.logit {
			if a.logit > b.logit {
				return -1
			}
			return 1
		}
		return int(a.id - b.id)
	})
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	softmax(c, 1)
	if p.TopP > 0 && p.TopP < 1 {
		var cum float64
		for i := range c {
			cum += c[i].p
			if cum >= float64(p.TopP) {
				c = c[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		limit := c[0].p * float64(p.MinP)
		n := 1
		for n < len(c) && c[n].p >= limit {
			n++
		}
		c = c[:n]
	}
	softmax(c, p.Temperature)
	s.buf = c
	r := s.rng.Float64()
	for _, x := range c {
		r -= x.p
		if r < 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// softmax sets c[i].p = exp((logit_i − max)/temp) / Σ; c is sorted, c[0] the max.
func softmax(c []candidate, temp float32) {
	var sum float64
	for i := range c {
		c[i].p = math.Exp(float64((c[i].logit - c[0].logit) / temp))
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}

// penalize penalises the logits of the last n history tokens in place, as in
// the CTRL paper (Keskar et al. 2019): positive logits divided by the
// penalty, negative ones multiplied by it; each token once. A negative n
// (Params.RepeatLastN) takes the whole history, prompt included: vLLM's
// repetition_penalty, and llama.cpp's repeat_last_n −1.
func penalize(out []float32, history []int32, penalty float32, n int) {
	switch {
	case n < 0:
		n = len(history)
	case n == 0:
		n = 64
	}
	seen := map[int32]bool{}
	for _, id := range history[max(0, len(history)-n):] {
		if id < 0 || int(id) >= len(out) || seen[id] {
			continue
		}
		seen[id] = true
		if out[id] > 0 {
			out[id] /= penalty
		} else {
			out[id] *= penalty
		}
	}
}
