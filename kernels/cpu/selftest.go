// A quick check of a loaded library against the pure-Go backend, for toy install.

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/toyml/toy/toy/tensor"
	"github.com/toyml/toy/toy/tensor/quant"
)

// SelfTest runs each kernel of b on small random inputs and compares it with
// tensor.Go{}: matrix products (on b.Exact(); F32, F16, Q8_0, the k-quants
// Q2_K … Q6_K, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS and MXFP4 weights) and
// RMSNorm must be bit-identical; the fused F32/F16 products, SwiGLU and
// attention (with and without sinks) within 1e-5 relative. It returns the
// first difference found.
func SelfTest(b *Backend) error {
	r := rand.New(rand.NewPCG(42, 42))
	randT := func(shape ...int) *tensor.Tensor {
		x := tensor.New(shape...)
		for i := range x.Data() {
			x.Data()[i] = float32(r.NormFloat64())
		}
		return x
	}
	compare := func(op string, got, want *tensor.Tensor, tol float64) error {
		for i, w := range want.Data() {
			g := got.Data()[i]
			if tol == 0 && math.Float32bits(g) != math.Float32bits(w) ||
				math.Abs(float64(g-w)) > tol*(1+math.Abs(float64(w))) {
				return fmt.Errorf("self-test %s (%s): element %d is %v, pure Go gives %v", op, b.Variant(), i, g, w)
			}
		}
		return nil
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0} {
		for _, s := range [][3]int{{1, 64, 33}, {20, 96, 40}} {
			x, wf := randT(s[0], s[1]), randT(s[2], s[1])
			w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), s[2], s[1])
			if err != nil {
				return err
			}
			got, want := tensor.New(s[0], s[2]), tensor.New(s[0], s[2])
			b.Exact().MatMul(got, x, w)
			tensor.Go{}.MatMul(want, x, w)
			if err := compare(fmt.Sprintf("MatMul %v %v", dt, s), got, want, 0); err != nil {
				return err
			}
			if dt != tensor.Q8_0 {
				b.Fused().MatMul(got, x, w)
				if err := compare(fmt.Sprintf("fused MatMul %v %v", dt, s), got, want, 1e-5); err != nil {
					return err
				}
			}
		}
	}
	// The 2- to 6-bit types, decode and prefill: k-quants on whole
	// super-blocks of 256, the others on blocks of 32.
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.Q4_0,
		tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL, tensor.IQ4_XS, tensor.MXFP4} {
		K := 96
		if dt.BlockSize() == quant.QK {
			K = 512
		}
		for _, s := range [][2]int{{1, 33}, {20, 40}} {
			x, wf := randT(s[0], K), randT(s[1], K)
			w, err := tensor.FromBytes(dt, tensor.EncodeRow(nil, wf.Data(), dt), s[1], K)
			if err != nil {
				return err
			}
			got, want := tensor.New(s[0], s[1]), tensor.New(s[0], s[1])
			b.MatMul(got, x, w)
			tensor.Go{}.MatMul(want, x, w)
			if err := compare(fmt.Sprintf("MatMul %v [%d %d %d]", dt, s[0], K, s[1]), got, want, 0); err != nil {
				return err
			}
		}
	}
	x, g, w := randT(3, 64), randT(3, 64), randT(64)
	got, want := tensor.New(3, 64), tensor.New(3, 64)
	b.RMSNorm(got, x, w, 1e-6)
	tensor.Go{}.RMSNorm(want, x, w, 1e-6)
	if err := compare("RMSNorm", got, want, 0); err != nil {
		return err
	}
	b.SwiGLU(got, x, g)
	tensor.Go{}.SwiGLU(want, x, g)
	if err := compare("SwiGLU", got, want, 1e-5); err != nil {
		return err
	}
	q, k, v := randT(3, 64), randT(5, 32), randT(5, 32)
	opt := tensor.AttentionOptions{Scale: 0.25, SoftCap: 2, Window: 2}
	b.Attention(got, q, k, v, 4, 2, 2, opt)
	tensor.Go{}.Attention(want, q, k, v, 4, 2, 2, opt)
	if err := compare("Attention", got, want, 1e-5); err != nil {
		return err
	}
	opt.Sinks = randT(4) // gpt-oss's attention sinks
	b.Attention(got, q, k, v, 4, 2, 2, opt)
	tensor.Go{}.Attention(want, q, k, v, 4, 2, 2, opt)
	return compare("Attention with sinks", got, want, 1e-5)
}
