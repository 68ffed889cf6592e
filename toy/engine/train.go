// The training step: forward over a batch, cross-entropy loss, backward,
// gradient clipping and an optimizer update.

package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/toyml/toy/toy/optim"
	"github.com/toyml/toy/toy/tensor"
)

// ErrBatch marks a malformed training batch.
var ErrBatch = errors.New("bad training batch")

// ErrNonFinite marks a NaN or infinite result: from TrainStep, a loss or
// gradient (the step is then skipped and the weights stay as they were);
// from Session.Next and All, the logits (naming the first weight that holds
// a NaN or infinity, when one does).
var ErrNonFinite = errors.New("not finite (NaN or infinite)")

// Batch is B sequences of T training positions. Inputs[b][t] is fed to the
// model and Targets[b][t] is the token it should predict there (the next
// input); a negative target is ignored (padding).
type Batch struct {
	Inputs  [][]int32 // [B][T]
	Targets [][]int32 // [B][T]
}

// NewBatch builds a batch from B token sequences of equal length T+1: inputs
// are tokens 0 … T−1, targets 1 … T (the labels shifted by one). Targets equal
// to pad are ignored (pass −1 when there is no padding).
func NewBatch(seqs [][]int32, vocabSize int, pad int32) (*Batch, error) {
	if len(seqs) == 0 {
		return nil, fmt.Errorf("%w: no sequences", ErrBatch)
	}
	n := len(seqs[0])
	if n < 2 {
		return nil, fmt.Errorf("%w: sequences of %d tokens; need at least 2 (an input and its next token)", ErrBatch, n)
	}
	b := &Batch{}
	for i, s := range seqs {
		if len(s) != n {
			return nil, fmt.Errorf("%w: sequence %d has %d tokens, sequence 0 has %d", ErrBatch, i, len(s), n)
		}
		for j, id := range s {
			if (id < 0 || int(id) >= vocabSize) && id != pad {
				return nil, fmt.Errorf("%w: sequence %d, position %d: token %d out of range for %d tokens", ErrBatch, i, j, id, vocabSize)
			}
		}
		in := append([]int32(nil), s[:n-1]...)
		tg := append([]int32(nil), s[1:]...)
		for t := range tg {
			if pad >= 0 && tg[t] == pad {
				tg[t] = -1
			}
			if pad >= 0 && in[t] == pad {
				in[t] = 0 // a padded input still needs a valid embedding row
			}
		}
		b.Inputs = append(b.Inputs, in)
		b.Targets = append(b.Targets, tg)
	}
	return b, nil
}

// Tokens counts the positions that contribute to the loss.
func (b *Batch) Tokens() int {
	n := 0
	for _, tg := range b.Targets {
		for _, y := range tg {
			if y >= 0 {
				n++
			}
		}
	}
	return n
}

// Loss runs the batch through m and returns the mean cross-entropy over all
// counted positions, recorded on the active tape when there is one:
// loss = Σ_b n_b·CE_b / Σ_b n_b, CE_b the mean over sequence b's n_b positions.
func Loss(m Model, b *Batch) *tensor.Tensor {
	total := b.Tokens()
	var loss *tensor.Tensor
	for i, in := range b.Inputs {
		n := 0
		for _, y := range b.Targets[i] {
			if y >= 0 {
				n++
			}
		}
		if n == 0 {
			continue
		}
		logits := m.Logits(m.Hidden(in, nil)) // [T, V]
		l := tensor.Scale(tensor.CrossEntropy(logits, b.Targets[i]), float32(n)/float32(total))
		if loss == nil {
			loss = l
		} else {
			loss = tensor.Add(loss, l)
		}
	}
	if loss == nil {
		return tensor.New(1)
	}
	return loss
}

// StepResult reports one training step.
type StepResult struct {
	Loss     float32 // before the update
	GradNorm float64 // global gradient norm before clipping
	Tokens   int
}

// TrainStep does forward, loss, backward, clipping to clip (0: none) and
// one AdamW update at learning rate lr.
func TrainStep(m Model, params []optim.Param, opt *optim.AdamW, b *Batch, lr, clip float64) (res StepResult, err error) {
	defer func() {
		if p := recover(); p != nil { // a shape error inside the model
			tensor.Record(nil)
			err = fmt.Errorf("train step: %v", p)
		}
	}()
	if v := m.VocabSize(); len(b.Inputs) > 0 && len(b.Inputs[0]) > m.ContextLength() {
		return res, fmt.Errorf("%w: %d positions exceed the context of %d (vocabulary %d)", ErrBatch, len(b.Inputs[0]), m.ContextLength(), v)
	}
	tape := tensor.NewTape()
	tensor.Record(tape)
	loss := Loss(m, b)
	tensor.Record(nil)
	tape.Backward(loss)
	res.Loss = loss.Data()[0]
	res.GradNorm = optim.ClipGradNorm(params, clip)
	res.Tokens = b.Tokens()
	if l := float64(res.Loss); math.IsNaN(l) || math.IsInf(l, 0) || math.IsNaN(res.GradNorm) || math.IsInf(res.GradNorm, 0) {
		for _, p := range params {
			p.T.ZeroGrad()
		}
		return res, fmt.Errorf("%w (loss %v, gradient norm %v)", ErrNonFinite, res.Loss, res.GradNorm)
	}
	opt.Update(params, lr)
	return res, nil
}
