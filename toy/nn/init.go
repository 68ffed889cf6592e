// Random initialisation of fresh weights.

package nn

import (
	"math/rand/v2"

	"github.com/toyml/toy/toy/tensor"
)

// Init draws fresh trainable F32 weights from a seeded generator: the same
// seed gives the same weights.
type Init struct {
	r *rand.Rand
}

// NewInit returns an initialiser seeded with seed.
func NewInit(seed uint64) *Init { return &Init{rand.New(rand.NewPCG(seed, 0x696e6974))} } // "init"

// Normal returns a tensor of N(0, std²) values.
func (in *Init) Normal(std float64, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	d := t.Data()
	for i := range d {
		d[i] = float32(in.r.NormFloat64() * std)
	}
	return t.SetRequiresGrad(true)
}

// Fill returns a tensor of shape holding v everywhere.
func (in *Init) Fill(v float32, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	d := t.Data()
	for i := range d {
		d[i] = v
	}
	return t.SetRequiresGrad(true)
}

// Linear returns a projection from in to out features with N(0, std²)
// weights and, if bias, a zero bias.
func (in *Init) Linear(out, inFeatures int, std float64, bias bool) *Linear {
	l := &Linear{W: in.Normal(std, out, inFeatures)}
	if bias {
		l.B = in.Fill(0, out)
	}
	return l
}
