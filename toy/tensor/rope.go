// Rotary position embeddings (Su et al. 2021) and their scalings for
// contexts longer than trained: frequency factors (Llama 3.1), linear
// position interpolation (Chen et al. 2023) and YaRN (Peng et al. 2023).

package tensor

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// RoPEOptions describe a rotary position embedding.
type RoPEOptions struct {
	HeadDim int     // features per head
	Dim     int     // features rotated per head, from the first (even, ≤ HeadDim)
	Base    float32 // θ base
	// NeoX selects half-split pairs (i, i+Dim/2), as qwen2 and later files
	// want; otherwise pairs are adjacent, (2i, 2i+1), as "llama" files want.
	NeoX bool
	// Factors, F32 [Dim/2] or nil, divide each pair's angle: a GGUF file's
	// rope_freqs.weight (Llama 3.1 and later). A constant: no gradient flows
	// to it.
	Factors *Tensor
	Scaling RoPEScaling
}

// RoPEScaling stretches the rotations for contexts longer than the one a
// model was trained on. The zero value scales nothing.
type RoPEScaling struct {
	// FreqScale multiplies every angle: 1/factor for linear scaling
	// ("position interpolation") and for YaRN's interpolated angle; 0 means 1.
	FreqScale float32
	// ExtFactor, 1 for YaRN and 0 otherwise, mixes each pair's original
	// (extrapolated) angle back in by ExtFactor·r_i, where the ramp r_i is
	// 1 for pairs that turn more than BetaFast times over OrigContext
	// positions, 0 for pairs that turn fewer than BetaSlow times, and linear
	// between. With ExtFactor ≠ 0, cos and sin are also multiplied by
	// 1 + 0.1·ln(1/FreqScale) (YaRN's attention temperature, on q and k).
	ExtFactor          float32
	BetaFast, BetaSlow float32
	OrigContext        int
	// AttnFactor multiplies cos and sin (GGUF rope.scaling.attn_factor); 0
	// means 1.
	AttnFactor float32
}

// RoPEParams are RoPEScaling reduced to what each pair's angle needs, in
// ggml's float32 arithmetic: the angle scale, the YaRN mix and ramp bounds
// (in pairs), and the factor on cos and sin. Backends take these.
type RoPEParams struct {
	FreqScale, ExtFactor, RampLow, RampHigh, MScale float32
}

// Params reduces s for rotations of dim features with θ base.
func (s RoPEScaling) Params(dim int, base float32) RoPEParams {
	p := RoPEParams{FreqScale: s.FreqScale, ExtFactor: s.ExtFactor, MScale: s.AttnFactor}
	if p.FreqScale == 0 {
		p.FreqScale = 1
	}
	if p.MScale == 0 {
		p.MScale = 1
	}
	if p.ExtFactor != 0 {
		// The pair that turns n times over the original context has index
		// dim·ln(ctx/(2πn)) / (2 ln base).
		pair := func(turns float32) float32 {
			return float32(dim) * log32(float32(s.OrigContext)/(turns*2*math.Pi)) / (2 * log32(base))
		}
		p.RampLow = max(0, float32(math.Floor(float64(pair(s.BetaFast)))))
		p.RampHigh = min(float32(dim-1), float32(math.Ceil(float64(pair(s.BetaSlow)))))
		p.MScale *= 1 + 0.1*log32(1/p.FreqScale)
	}
	return p
}

func log32(x float32) float32 { return float32(math.Log(float64(x))) }

// angle is pair i's angle from its unscaled one, theta: interpolated by
// FreqScale and, for YaRN, mixed back toward theta by the ramp.
func (p RoPEParams) angle(theta float32, i int) float32 {
	interp := p.FreqScale * theta
	if p.ExtFactor == 0 {
		return interp
	}
	y := (float32(i) - p.RampLow) / max(0.001, p.RampHigh-p.RampLow)
	mix := (1 - min(1, max(0, y))) * p.ExtFactor
	return interp*(1-mix) + theta*mix
}

// RoPE applies rotary position embeddings to x [T, H·Dh], token t at position
// pos0+t. Feature pairs (x_a, x_b) of each head rotate by θ = pos·base^(-2i/ropeDim):
//
//	x_a' = x_a cos θ − x_b sin θ,   x_b' = x_a sin θ + x_b cos θ
//
// With neox false the pairs are adjacent, (2i, 2i+1) — GGUF "llama" files; with
// neox true they are half-split, (i, i+ropeDim/2) — qwen2 and later. Features
// past ropeDim pass through unchanged.
func RoPE(x *Tensor, pos0, headDim, ropeDim int, base float32, neox bool) *Tensor {
	return RoPEWith(x, pos0, RoPEOptions{HeadDim: headDim, Dim: ropeDim, Base: base, NeoX: neox})
}

// RoPEFactors is RoPE with each pair's angle divided by a frequency factor,
// θ_i = pos·base^(-2i/ropeDim) / factors[i], as ggml applies a GGUF file's
// rope_freqs.weight (Llama 3.1 and later stretch the long wavelengths this
// way). factors is F32 [ropeDim/2], or nil for RoPE itself. It is a constant:
// no gradient flows to it.
func RoPEFactors(x, factors *Tensor, pos0, headDim, ropeDim int, base float32, neox bool) *Tensor {
	return RoPEWith(x, pos0, RoPEOptions{HeadDim: headDim, Dim: ropeDim, Base: base, NeoX: neox, Factors: factors})
}

// RoPEWith is RoPE with all of o: frequency factors and a scaling. Pair i of
// a token at position pos turns by
//
//	θ_i = s·φ_i·(1 − m_i) + φ_i·m_i,   φ_i = pos·base^(-2i/Dim) / factors[i]
//
// with s = FreqScale and m_i = ExtFactor·r_i (YaRN's ramp, see RoPEScaling),
// and cos θ_i, sin θ_i are multiplied by AttnFactor (times YaRN's
// 1 + 0.1·ln(1/s) when ExtFactor ≠ 0). The arithmetic is ggml's, step for step.
func RoPEWith(x *Tensor, pos0 int, o RoPEOptions) *Tensor {
	mustF32("RoPE", "x", x)
	if o.HeadDim <= 0 || x.Cols()%o.HeadDim != 0 || o.Dim <= 0 || o.Dim > o.HeadDim || o.Dim%2 != 0 || pos0 < 0 {
		panic(fmt.Sprintf("RoPE: x %v with head width %d, rope width %d, pos0 %d", x.shape, o.HeadDim, o.Dim, pos0))
	}
	if f := o.Factors; f != nil {
		mustF32("RoPE", "factors", f)
		if f.Len() != o.Dim/2 {
			panic(fmt.Sprintf("RoPE: %d frequency factors for rope width %d, want %d", f.Len(), o.Dim, o.Dim/2))
		}
	}
	if s := o.Scaling; !(s.FreqScale >= 0) || !(s.AttnFactor >= 0) || (s.ExtFactor != 0 && s.OrigContext <= 0) {
		panic(fmt.Sprintf("RoPE: scaling %+v", s))
	}
	b := beFor(x)
	out := newOut(b, x.shape...)
	b.RoPE(out, x, pos0, o)
	record("RoPE", out, func(g *Tensor) []*Tensor {
		// The op is a rotation times a scalar m, so its transpose is the
		// inverse rotation times m.
		d := like(g)
		rope(d, g, pos0, o, -1)
		return []*Tensor{d}
	}, x)
	return out
}

// rope rotates by sign·θ (sign −1 with the same magnitude factor: RoPE's
// gradient).
func rope(out, x *Tensor, pos0 int, o RoPEOptions, sign float32) {
	C, headDim, half := x.Cols(), o.HeadDim, o.Dim/2
	tab := ropeAngles(x.Rows(), pos0, o)
	parallelFor(x.Rows(), 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			cos, sin := tab.cos[t*half:(t+1)*half], tab.sin[t*half:(t+1)*half]
			xr, or := x.f32[t*C:(t+1)*C], out.f32[t*C:(t+1)*C]
			copy(or, xr)
			for h := 0; h < C; h += headDim {
				for i := range cos {
					a, b := h+2*i, h+2*i+1 // adjacent pairs
					if o.NeoX {
						a, b = h+i, h+i+half // half-split pairs
					}
					x0, x1, s := xr[a], xr[b], sign*sin[i]
					or[a] = x0*cos[i] - x1*s
					or[b] = x0*s + x1*cos[i]
				}
			}
		}
	})
}

// ropeTable holds cos θ_i and sin θ_i, each times the magnitude factor, of
// the T positions from pos0 under options o (HeadDim and NeoX, which do not
// change the angles, zero; Factors nil, their values in factors):
// [T·Dim/2] each, position by position.
type ropeTable struct {
	pos0, T  int
	o        RoPEOptions
	factors  []float32
	cos, sin []float32
}

// ropeTables keeps the most recent tables, at most ropeTablesMax of them and
// ropeTableFloats floats in all: a forward pass turns the queries and keys
// of every layer at the same positions, 2L calls that would each compute
// the same cosines and sines (each sequence of a batched decode step its
// own).
var ropeTables struct {
	sync.Mutex
	recent []*ropeTable // the most recent last
	floats int
}

const ropeTablesMax, ropeTableFloats = 64, 1 << 21

// ropeAngles returns the table of T positions from pos0 under o, from
// ropeTables or computed (and kept there).
func ropeAngles(T, pos0 int, o RoPEOptions) *ropeTable {
	var factors []float32
	if o.Factors != nil {
		factors = o.Factors.Data()
	}
	key := o
	key.HeadDim, key.NeoX, key.Factors = 0, false, nil
	rt := &ropeTables
	rt.Lock()
	for i := len(rt.recent) - 1; i >= 0; i-- {
		if t := rt.recent[i]; t.pos0 == pos0 && t.T == T && t.o == key && slices.Equal(t.factors, factors) {
			rt.Unlock()
			return t
		}
	}
	rt.Unlock()
	tab := &ropeTable{pos0: pos0, T: T, o: key, factors: slices.Clone(factors),
		cos: make([]float32, T*o.Dim/2), sin: make([]float32, T*o.Dim/2)}
	// θ_i = pos · base^(-2i/Dim), built by repeated multiplication in float32
	// as ggml does, so the angles round the same way; a frequency factor
	// divides the angle, not the running product.
	thetaScale := float32(math.Pow(float64(o.Base), -2/float64(o.Dim)))
	p := o.Scaling.Params(o.Dim, o.Base)
	half := o.Dim / 2
	parallelFor(T, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			theta := float32(pos0 + t)
			for i := range half {
				phi := theta
				if factors != nil {
					phi = theta / factors[i]
				}
				angle := p.angle(phi, i)
				tab.cos[t*half+i] = float32(math.Cos(float64(angle))) * p.MScale
				tab.sin[t*half+i] = float32(math.Sin(float64(angle))) * p.MScale
				theta *= thetaScale
			}
		}
	})
	rt.Lock()
	defer rt.Unlock()
	rt.recent = append(rt.recent, tab)
	rt.floats += 2 * len(tab.cos)
	for len(rt.recent) > ropeTablesMax || len(rt.recent) > 1 && rt.floats > ropeTableFloats {
		rt.floats -= 2 * len(rt.recent[0].cos)
		rt.recent = slices.Delete(rt.recent, 0, 1)
	}
	return tab
}
