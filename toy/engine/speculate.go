// Speculative decoding: a small draft model guesses a few tokens ahead and
// the model checks all of them in one batched forward pass.

package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/toyml/toy/toy/sample"
)

// speculate is Generate with a draft (opts.Draft). Each round:
//
//  1. the draft, fed the last token chosen, guesses k tokens greedily, one
//     forward pass each (cheap: it is small);
//  2. the model runs the last token and the k guesses in one pass, which
//     gives its logits after each of them;
//  3. the sampler draws the next token from the model's logits after the
//     last token, exactly as Generate would; while it draws the draft's
//     guess, the model's logits after that guess are already there, and
//     the next token is drawn from them; at the first token that differs
//     from the guess, or after all k, the round ends;
//  4. both caches forget the positions past what was kept.
//
// Every token is drawn by the same sampler from the same logits, in the
// same order as Generate draws it, so the text is the same — with a
// sampler's seed too — only faster when the draft guesses well: a round
// costs k cheap steps and one batched pass, and yields from 1 to k+1
// tokens. (Logits from a batched pass equal a single token's on toy's
// exact backends, whose products do not depend on the batch.)
func speculate(ctx context.Context, s *Session, prompt []int32, opts Options) (Result, error) {
	var r Result
	d := opts.Draft
	if d.model.VocabSize() != s.model.VocabSize() {
		return r, fmt.Errorf("speculative decoding: the draft's vocabulary has %d tokens, the model's %d", d.model.VocabSize(), s.model.VocabSize())
	}
	k := opts.DraftTokens
	if k <= 0 {
		k = 8
	}
	sampler := sample.New(opts.Sample)
	start := time.Now()
	logits, err := s.Next(prompt)
	if err != nil {
		return r, err
	}
	// The draft catches up with the prompt (keeping what it shares).
	all := slices.Clone(s.tokens)
	d.Truncate(commonPrefix(d.tokens, all))
	pending := all[len(d.tokens):] // tokens the draft has yet to read
	history := slices.Clone(all)

	// draw samples the token after logits, as Generate does; -1 when the
	// constraint allows none.
	draw := func(logits []float32) int32 {
		if opts.Constraint != nil {
			return sampler.SampleConstrained(logits, history, opts.Constraint)
		}
		return sampler.Sample(logits, history)
	}
	// emit takes token id; true when generation ends with it.
	emit := func(id int32) bool {
		r.IDs = append(r.IDs, id)
		history = append(history, id)
		if len(r.IDs) == 1 {
			r.PrefillTime = time.Since(start)
			start = time.Now()
		}
		if opts.OnToken != nil {
			opts.OnToken(id)
		}
		if opts.Stop != nil && opts.Stop(id) {
			r.Reason = "stop"
			return true
		}
		return len(r.IDs) == opts.MaxTokens
	}

	id := draw(logits)
	for {
		if id < 0 {
			r.Reason = "stop"
			break
		}
		if emit(id) {
			break
		}
		if err := ctx.Err(); err != nil {
			r.Reason = "canceled"
			return r, err
		}
		room := s.Capacity() - len(s.tokens)
		if room < 1 {
			r.Reason = "context"
			break
		}
		// 1. The draft's guesses: at most what the context, the draft's
		// cache and the tokens still wanted leave room for.
		n := min(k, room-1, opts.MaxTokens-len(r.IDs), d.Capacity()-len(d.tokens)-len(pending)-1)
		var guesses []int32
		if n > 0 {
			if guesses, err = d.guess(append(pending, id), n, draftConstraint(opts.Constraint)); err != nil {
				return r, err
			}
			pending = nil
		} else {
			pending = append(pending, id) // no guesses this round: the draft reads id later
		}
		r.Drafted += len(guesses)

		// 2. The model's logits after id and after each guess.
		base := len(s.tokens)
		out, err := s.All(append([]int32{id}, guesses...))
		if err != nil {
			return r, err
		}

		// 3. Draw as Generate would, along the guesses while they agree.
		kept, ended := 0, false
		for i := 0; i <= len(guesses); i++ {
			next := draw(out.Row(i))
			if i < len(guesses) && next == guesses[i] {
				kept++
				r.Accepted++
				if ended = emit(next); ended {
					break
				}
				continue
			}
			id = next
			break
		}

		// 4. Keep id and the guesses kept; the draft holds id and the
		// guesses before the last it read (it never read the last).
		s.Truncate(base + 1 + kept)
		switch {
		case len(guesses) == 0:
		case kept == len(guesses):
			pending = guesses[len(guesses)-1:] // it read all but the last guess
		default:
			d.Truncate(base + 1 + kept)
		}
		if ended {
			break
		}
	}
	if r.Reason == "" {
		r.Reason = "length"
	}
	if len(r.IDs) > 0 {
		r.DecodeTime = time.Since(start)
	}
	return r, nil
}

// draftConstraint is a copy of c for the draft to guess under, when c can
// fork one (grammar.Tokens.Fork); nil otherwise, and the draft guesses
// freely (its guesses that c refuses are simply not kept).
func draftConstraint(c sample.Constraint) sample.Constraint {
	f, ok := c.(interface{ Fork() any })
	if !ok {
		return nil
	}
	fc, _ := f.Fork().(sample.Constraint)
	return fc
}

// guess feeds the draft ids and then takes n ≥ 1 greedy steps, under c
// when it is not nil (c follows the guesses), returning the n tokens it
// guessed (the last one not fed back). It stops early where c allows no
// token.
func (d *Session) guess(ids []int32, n int, c sample.Constraint) ([]int32, error) {
	logits, err := d.Next(ids)
	if err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	greedy := sample.New(sample.Params{})
	var out []int32
	for {
		g := sample.Greedy(logits)
		if c != nil {
			if g = greedy.SampleConstrained(logits, nil, c); g < 0 {
				// Nothing allowed: guess no further, and unread the last
				// guess (the caller counts on its not being read).
				if len(out) > 0 {
					d.Truncate(len(d.tokens) - 1)
				}
				return out, nil
			}
		}
		out = append(out, g)
		if len(out) == n {
			return out, nil
		}
		if logits, err = d.Next([]int32{g}); err != nil {
			return nil, fmt.Errorf("draft: %w", err)
		}
	}
}

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
