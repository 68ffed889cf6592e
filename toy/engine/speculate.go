// Speculative decoding: a small draft model guesses a few tokens ahead and
// the model checks all of them in one batched forward pass.

package engine

import (
	"fmt"

	"github.com/toyml/toy/toy/sample"
	"github.com/toyml/toy/toy/tensor"
)

// A Speculator stands in for a Session's one-token steps: Next(id) gives
// the model's logits after id, as Session.Next([]int32{id}) would, but it
// gets them from batched passes over a draft model's guesses:
//
//  1. when it has no logits for id, the draft (a smaller model over the
//     same vocabulary), fed what it has not read of the model's tokens and
//     id, guesses k tokens greedily, one cheap forward pass each;
//  2. the model runs id and the k guesses in one pass, which gives its
//     logits after id — returned — and after each guess, kept;
//  3. while the caller's next tokens are the guesses, Next returns the kept
//     logits with no forward pass at all; at the first token that differs,
//     the model forgets the guesses from there on and step 1 runs again.
//
// The caller draws every token from the same logits, in the same order, as
// without a draft, so the text is the same — with a sampler's seed too —
// and only faster when the draft guesses well: a round costs k cheap steps
// and one batched pass and yields from 1 to k+1 tokens. (Logits from a
// batched pass equal a single token's on toy's exact backends, whose
// products do not depend on the batch.)
//
// The model's session holds the guesses not yet taken; Settle forgets them.
// Between calls the caller may truncate the session (a server starting a
// new reply): a Speculator whose session changed under it forgets its
// guesses, and the draft catches up with whatever the session holds.
type Speculator struct {
	model, draft *Session
	k            int

	guesses []int32        // the draft's guesses of the last round
	logits  *tensor.Tensor // the model's logits after the round's token and each guess
	taken   int            // guesses the caller has taken
	end     int            // len(model.tokens) right after the round

	Drafted, Accepted int // guesses made, and those the caller took
}

// NewSpeculator returns a Speculator for the model's session s with draft
// session d, which guesses k tokens a round (8 if k ≤ 0).
func NewSpeculator(s, d *Session, k int) (*Speculator, error) {
	if d.model.VocabSize() != s.model.VocabSize() {
		return nil, fmt.Errorf("speculative decoding: the draft's vocabulary has %d tokens, the model's %d", d.model.VocabSize(), s.model.VocabSize())
	}
	if k <= 0 {
		k = 8
	}
	return &Speculator{model: s, draft: d, k: k}, nil
}

// Len is how many tokens the model's session holds less the guesses not
// taken: the length of the text so far.
func (p *Speculator) Len() int { return len(p.model.tokens) - p.untaken() }

// untaken is the number of guesses the session holds beyond the text.
func (p *Speculator) untaken() int {
	if p.logits == nil || len(p.model.tokens) != p.end {
		return 0 // no round, or the session was changed under it
	}
	return len(p.guesses) - p.taken
}

// Settle forgets the guesses not taken, leaving the session holding the
// text only.
func (p *Speculator) Settle() {
	p.model.Truncate(p.Len())
	p.guesses, p.logits, p.taken = nil, nil, 0
}

// Next appends id to the text and returns the model's logits after it.
// c, if not nil, is the constraint the next token will be drawn under, in
// its state after id: the draft guesses under a fork of it when it has a
// Fork() method (grammar.Tokens), else freely (its guesses c refuses are
// simply not taken). left is how many tokens the caller may still draw
// after id; no more than that many are guessed. The logits stay valid until
// the next call.
func (p *Speculator) Next(id int32, c sample.Constraint, left int) ([]float32, error) {
	if n := p.untaken(); n > 0 && id == p.guesses[p.taken] {
		p.taken++
		p.Accepted++
		return p.logits.Row(p.taken), nil
	}
	p.Settle()

	// 1. The draft catches up with the text and id, and guesses: at most
	// what the context, the draft's cache and the tokens still wanted
	// leave room for.
	s, d := p.model, p.draft
	d.Truncate(commonPrefix(d.tokens, s.tokens))
	feed := append(append([]int32(nil), s.tokens[len(d.tokens):]...), id)
	n := min(p.k, s.Capacity()-len(s.tokens)-1, left-1, d.Capacity()-len(d.tokens)-len(feed))
	if n <= 0 {
		return s.Next([]int32{id})
	}
	guesses, err := d.guess(feed, n, draftConstraint(c))
	if err != nil {
		return nil, err
	}
	p.Drafted += len(guesses)

	// 2. The model's logits after id and after each guess.
	out, err := s.All(append([]int32{id}, guesses...))
	if err != nil {
		return nil, err
	}
	p.guesses, p.logits, p.taken, p.end = guesses, out, 0, len(s.tokens)
	return out.Row(0), nil
}

// draftConstraint is a copy of c for the draft to guess under, when c can
// fork one (grammar.Tokens.Fork); nil otherwise, and the draft guesses
// freely.
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
