// Causal self-attention with a KV cache.

package nn

import (
	"fmt"
	"math"
	"sync"

	"github.com/toyml/toy/toy/tensor"
)

// RoPE configures rotary position embeddings (Su et al. 2021).
type RoPE struct {
	Dim  int     // features rotated per head (≤ Dh)
	Base float32 // θ base, 10000 for Llama 2
	NeoX bool    // half-split pairs (qwen2 and later) instead of adjacent pairs
	// Factors [Dim/2], when not nil, divide each pair's angle (Llama 3.1's
	// long-context scaling, GGUF rope_freqs.weight); see tensor.RoPEFactors.
	Factors *tensor.Tensor
	// Scaling stretches positions past the trained context (linear, YaRN);
	// see tensor.RoPEScaling.
	Scaling tensor.RoPEScaling
}

// Attention is multi-head causal self-attention (Vaswani et al. 2017), with
// grouped key/value heads when KVHeads < Heads (Ainslie et al. 2023):
//
//	q, k, v = x·Wqᵀ, x·Wkᵀ, x·Wvᵀ        (per-head RMSNorm or LayerNorm, then RoPE, on q and k if configured)
//	o_h = softmax(q_h·k_gᵀ / √Dh + causal mask)·v_g,   g = h / (H/KV)
//	y = [o_1 … o_H]·Woᵀ
//
// Scale, SoftCap, Window and Chunk vary the scores and the mask (Gemma 2,
// Llama 4).
//
// The projections are either separate (Q, K, V) or fused (QKV, rows [Q; K; V],
// as GPT-2 stores them).
type Attention struct {
	Q   *Linear `gguf:"attn_q,optional"`   // [H·Dh, D]
	K   *Linear `gguf:"attn_k,optional"`   // [KV·Dh, D]
	V   *Linear `gguf:"attn_v,optional"`   // [KV·Dh, D]
	QKV *Linear `gguf:"attn_qkv,optional"` // [(H+2KV)·Dh, D]
	O   *Linear `gguf:"attn_output"`       // [D, H·Dh]

	// QNorm and KNorm, when set, RMS-normalise q and k before RoPE: each
	// head on its own when the weights are [Dh], shared by the heads
	// (Qwen3); the whole projection when they are [H·Dh] and [KV·Dh] (OLMoE).
	QNorm *RMSNorm `gguf:"attn_q_norm,ifset"`
	KNorm *RMSNorm `gguf:"attn_k_norm,ifset"`
	// QLayerNorm and KLayerNorm, when set instead, LayerNorm each head of q
	// and k before RoPE, head h scaled by row h of weights [H, Dh] and
	// [KV, Dh] (Command R+). They read the same tensors as QNorm and KNorm:
	// a model sets the pair it has before loading.
	QLayerNorm *LayerNorm `gguf:"attn_q_norm,ifset"`
	KLayerNorm *LayerNorm `gguf:"attn_k_norm,ifset"`

	Heads, KVHeads, HeadDim int
	RoPE                    *RoPE // nil: positions are added to the input instead

	// Scale multiplies the scores q·k; 0 means 1/√Dh.
	Scale float32
	// SoftCap > 0 caps each score s smoothly: SoftCap·tanh(s/SoftCap)
	// (Gemma 2). Window > 0 lets a position see only the Window most recent
	// positions, itself included (sliding-window attention).
	SoftCap float32
	Window  int
	// Bidirectional drops the causal mask: every position sees every
	// other (encoders such as ViT).
	Bidirectional bool
	// Chunk > 0 lets a position see only the positions of its own chunk of
	// Chunk (0 … Chunk−1, Chunk … 2·Chunk−1, …): Llama 4's chunked local
	// attention.
	Chunk int
	// L2NormEps > 0 RMS-normalises each head of q and k after RoPE, with no
	// weights, x/√(mean(x²) + L2NormEps): Llama 4's "L2 norm" on its RoPE
	// layers, which leaves every query and key head of length √Dh.
	L2NormEps float32
	// Temperature sharpens the attention of positions far into a long
	// context (Llama 4, Ministral 3); its zero value is off.
	Temperature Temperature
	// Sinks, when set, holds a logit per head [H] that joins each softmax
	// as a key with no value (gpt-oss); see tensor.AttentionOptions.
	Sinks *tensor.Tensor `gguf:"attn_sinks.weight,optional"`
	// Gated doubles the query projection [2·H·Dh, D]: each head's 2·Dh
	// outputs are its query and then a gate, and the head's attention
	// output is multiplied by σ(gate) before Wo (Qwen3-Next, Qwen3.5).
	Gated bool
}

// Temperature multiplies each query at position p, after RoPE, by
// 1 + Scale·ln(⌊(p + Offset)/Floor⌋ + 1): 1 for the first Floor positions
// (less Offset), then growing with the log of the distance. Scale 0 is off.
// Llama 4 counts from position 1 (Offset 1), Ministral 3 from 0.
type Temperature struct {
	Scale  float32
	Floor  int
	Offset float32
}

// apply scales the rows of q [T, C], at positions pos0 …, by their
// temperature, as llama.cpp computes it: the quotient in float32, the
// logarithm in float64, rounded once.
func (tp Temperature) apply(q *tensor.Tensor, pos0 int) *tensor.Tensor {
	return tensor.Mul(q, tp.factors(pos0, q.Rows(), q.Cols()))
}

// lastTemperatures is the factor matrix factors made last. Every layer of a
// model asks for the same one in a forward pass, so keeping it means that a
// device backend uploads it once a pass rather than once a layer.
var lastTemperatures struct {
	sync.Mutex
	key struct {
		tp         Temperature
		pos0, T, C int
	}
	f *tensor.Tensor
}

// factors returns the [T, C] matrix whose row t is the temperature of
// position pos0+t (a constant: it has no gradient).
func (tp Temperature) factors(pos0, T, C int) *tensor.Tensor {
	lt := &lastTemperatures
	lt.Lock()
	defer lt.Unlock()
	key := lt.key
	key.tp, key.pos0, key.T, key.C = tp, pos0, T, C
	if lt.f != nil && key == lt.key {
		return lt.f
	}
	f := make([]float32, T*C)
	for t := range T {
		s := float32(math.Log(math.Floor(float64((float32(pos0+t)+tp.Offset)/float32(tp.Floor)))+1)*float64(tp.Scale) + 1)
		for j := range C {
			f[t*C+j] = s
		}
	}
	lt.key, lt.f = key, tensor.FromFloat32(f, T, C)
	return lt.f
}

// Check verifies that the weights and head counts fit together.
func (a *Attention) Check() error {
	if a.Heads <= 0 || a.KVHeads <= 0 || a.Heads%a.KVHeads != 0 || a.HeadDim <= 0 {
		return fmt.Errorf("attention: %d heads, %d KV heads, head width %d", a.Heads, a.KVHeads, a.HeadDim)
	}
	if !(a.Scale >= 0) || !(a.SoftCap >= 0) || a.Window < 0 || a.Chunk < 0 || !(a.L2NormEps >= 0 && a.L2NormEps < 1) {
		return fmt.Errorf("attention: scale %g, soft cap %g, window %d, chunk %d, L2 norm ε %g", a.Scale, a.SoftCap, a.Window, a.Chunk, a.L2NormEps)
	}
	if tp := a.Temperature; tp.Scale != 0 && (tp.Floor <= 0 || !(tp.Scale > -1e3 && tp.Scale < 1e3) || !(tp.Offset >= 0 && tp.Offset < 1e6)) {
		return fmt.Errorf("attention: temperature scale %g over %d positions from %g", tp.Scale, tp.Floor, tp.Offset)
	}
	q, kv := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	rows := func(l *Linear) int { return l.W.Dim(0) }
	qRows := q
	if a.Gated {
		qRows = 2 * q
	}
	switch {
	case a.Gated && a.QKV != nil:
		return fmt.Errorf("attention: a gated query needs its own attn_q")
	case a.QKV != nil:
		if rows(a.QKV) != q+2*kv {
			return fmt.Errorf("attention: fused QKV has %d rows, want %d", rows(a.QKV), q+2*kv)
		}
	case a.Q != nil && a.K != nil && a.V != nil:
		if rows(a.Q) != qRows || rows(a.K) != kv || rows(a.V) != kv {
			return fmt.Errorf("attention: Q, K, V have %d, %d, %d rows, want %d, %d, %d", rows(a.Q), rows(a.K), rows(a.V), qRows, kv, kv)
		}
	default:
		return fmt.Errorf("attention: needs attn_q, attn_k and attn_v, or attn_qkv")
	}
	if a.O.W.Dim(1) != q {
		return fmt.Errorf("attention: output projection takes %d features, want %d", a.O.W.Dim(1), q)
	}
	if a.RoPE != nil && (a.RoPE.Dim <= 0 || a.RoPE.Dim > a.HeadDim || a.RoPE.Dim%2 != 0) {
		return fmt.Errorf("attention: RoPE width %d for head width %d", a.RoPE.Dim, a.HeadDim)
	}
	if n := a.QLayerNorm; n != nil && n.W != nil && (n.W.DType() != tensor.F32 || n.W.Len() != q) {
		return fmt.Errorf("attention: query head LayerNorm weights %v %v, want F32 [%d, %d]", n.W.DType(), n.W.Shape(), a.Heads, a.HeadDim)
	}
	if n := a.KLayerNorm; n != nil && n.W != nil && (n.W.DType() != tensor.F32 || n.W.Len() != kv) {
		return fmt.Errorf("attention: key head LayerNorm weights %v %v, want F32 [%d, %d]", n.W.DType(), n.W.Shape(), a.KVHeads, a.HeadDim)
	}
	if a.Sinks != nil && (a.Sinks.DType() != tensor.F32 || a.Sinks.Len() != a.Heads) {
		return fmt.Errorf("attention: sinks %v %v, want F32 [%d]", a.Sinks.DType(), a.Sinks.Shape(), a.Heads)
	}
	if r := a.RoPE; r != nil && r.Factors != nil && (r.Factors.DType() != tensor.F32 || r.Factors.Len() != r.Dim/2) {
		return fmt.Errorf("attention: RoPE frequency factors %v %v for RoPE width %d, want F32 [%d]", r.Factors.DType(), r.Factors.Shape(), r.Dim, r.Dim/2)
	}
	return nil
}

// Forward attends x [T, D] over the cache's past positions and itself, and
// appends this call's keys and values to the cache. With a nil cache (a
// training step over whole sequences) it attends within x alone.
func (a *Attention) Forward(x *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	var q, k, v, gate *tensor.Tensor
	switch {
	case a.QKV != nil:
		q, k, v = a.splitQKV(a.QKV.Forward(x))
	case a.Gated:
		q, gate = a.splitGate(a.Q.Forward(x))
		k, v = a.K.Forward(x), a.V.Forward(x)
	default:
		q, k, v = a.Q.Forward(x), a.K.Forward(x), a.V.Forward(x) // [T, H·Dh], [T, KV·Dh] ×2
	}
	if a.QNorm != nil {
		q = headNorm(q, a.QNorm, a.HeadDim)
	}
	if a.KNorm != nil {
		k = headNorm(k, a.KNorm, a.HeadDim)
	}
	if a.QLayerNorm != nil {
		q = headLayerNorm(q, a.QLayerNorm, a.HeadDim)
	}
	if a.KLayerNorm != nil {
		k = headLayerNorm(k, a.KLayerNorm, a.HeadDim)
	}
	past := 0
	if cache != nil {
		past = cache.Len
	}
	if r := a.RoPE; r != nil {
		o := tensor.RoPEOptions{HeadDim: a.HeadDim, Dim: r.Dim, Base: r.Base, NeoX: r.NeoX, Factors: r.Factors, Scaling: r.Scaling}
		q, k = tensor.RoPEWith(q, past, o), tensor.RoPEWith(k, past, o)
	}
	if a.L2NormEps > 0 {
		l2 := &RMSNorm{Eps: a.L2NormEps}
		q, k = headNorm(q, l2, a.HeadDim), headNorm(k, l2, a.HeadDim)
	}
	if a.Temperature.Scale != 0 {
		q = a.Temperature.apply(q, past)
	}
	keys, values := k, v // [S, KV·Dh] each; without a cache (training) S = T
	if cache != nil {
		keys, values = cache.Append(k, v)
	}
	opt := tensor.AttentionOptions{Scale: a.Scale, SoftCap: a.SoftCap, Window: a.Window, Chunk: a.Chunk, Bidirectional: a.Bidirectional, Sinks: a.Sinks}
	if opt.Scale == 0 {
		opt.Scale = float32(1 / math.Sqrt(float64(a.HeadDim)))
	}
	o := tensor.AttentionWith(q, keys, values, a.Heads, a.KVHeads, past, opt) // [T, H·Dh]
	if gate != nil {
		o = tensor.Mul(o, tensor.Sigmoid(gate))
	}
	return a.O.Forward(o)
}

// splitGate cuts a gated query projection [T, H·2Dh], each head's query
// followed by its gate, into the queries and the gates [T, H·Dh] each.
func (a *Attention) splitGate(qg *tensor.Tensor) (q, gate *tensor.Tensor) {
	T, dh := qg.Rows(), a.HeadDim
	heads := tensor.Reshape(qg, T*a.Heads, 2*dh) // one row per (token, head)
	q = tensor.Reshape(tensor.Columns(heads, 0, dh), T, a.Heads*dh)
	gate = tensor.Reshape(tensor.Columns(heads, dh, 2*dh), T, a.Heads*dh)
	return q, gate
}

// headNorm applies n to x [T, H·Dh] in pieces of n's width: each head on its
// own (weights [Dh], or none), or each whole row (weights [H·Dh]).
func headNorm(x *tensor.Tensor, n *RMSNorm, dh int) *tensor.Tensor {
	T, C := x.Rows(), x.Cols()
	if n.W != nil && n.W.Len() == C {
		return n.Forward(x)
	}
	return tensor.Reshape(n.Forward(tensor.Reshape(x, T*C/dh, dh)), T, C)
}

// headLayerNorm LayerNorms each head of x [T, n·Dh] on its own, then scales
// and shifts head h by row h of n's weights and bias [n, Dh]:
//
//	y_h = (x_h − mean(x_h)) / √(var(x_h) + ε) ⊙ w_h + b_h
//
// The weights [n, Dh], row-major, are one row of x's width [n·Dh]: Mul and
// Add apply them to every token's row (and sum their gradients over the
// tokens), with no reshape that a device would see as a new tensor.
func headLayerNorm(x *tensor.Tensor, n *LayerNorm, dh int) *tensor.Tensor {
	T, C := x.Rows(), x.Cols()
	y := tensor.Reshape(tensor.LayerNorm(tensor.Reshape(x, T*C/dh, dh), nil, nil, n.Eps), T, C) // [T·n, Dh] → [T, n·Dh]
	if n.W != nil {
		y = tensor.Mul(y, n.W)
	}
	if n.B != nil {
		y = tensor.Add(y, n.B)
	}
	return y
}

// splitQKV cuts fused projections [T, (H+2KV)·Dh] into q, k and v.
func (a *Attention) splitQKV(qkv *tensor.Tensor) (q, k, v *tensor.Tensor) {
	nq, nkv := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	return tensor.Columns(qkv, 0, nq), tensor.Columns(qkv, nq, nq+nkv), tensor.Columns(qkv, nq+nkv, nq+2*nkv)
}

// KVCache holds one layer's keys and values for the positions seen so far.
// A recurrent layer keeps its running state in State instead (K then only
// sizes the cache).
type KVCache struct {
	K, V  *tensor.Tensor // [capacity, KV·Dh]
	Len   int            // positions filled
	State Recurrent
}

// Recurrent is the memory a recurrent layer keeps in KVCache.State (a gated
// delta rule's matrices, say): it does not grow with the positions seen,
// so it cannot be cut back to any of them as keys and values can. Truncating
// the cache only lowers Len; the layer brings its state back to Len itself,
// from a snapshot and the few recent inputs it keeps.
type Recurrent interface {
	// Rewind returns the position the state can be brought back to for a
	// cache truncated to n < Len: n itself when it keeps a snapshot and
	// the inputs since, else 0 (the positions must be run again).
	Rewind(n int) int
}

// NewKVCache returns an empty cache for capacity positions of width features.
func NewKVCache(capacity, width int) *KVCache {
	return &KVCache{K: tensor.Zeros(capacity, width), V: tensor.Zeros(capacity, width)}
}

// Append stores k, v [T, KV·Dh] after the filled positions and returns views
// of all filled rows. It panics when the cache is full.
func (c *KVCache) Append(k, v *tensor.Tensor) (keys, values *tensor.Tensor) {
	T := k.Rows()
	if c.Len+T > c.K.Rows() {
		panic(fmt.Sprintf("KVCache: %d positions + %d new exceed the context of %d", c.Len, T, c.K.Rows()))
	}
	tensor.SetRows(c.K, c.Len, k)
	tensor.SetRows(c.V, c.Len, v)
	c.Len += T
	return c.K.Slice(0, c.Len), c.V.Slice(0, c.Len)
}

// Cache is the KV cache of a whole model, one KVCache per layer.
type Cache struct {
	Layers []*KVCache
}

// NewCache returns a cache of n layers, each for capacity positions of width features.
func NewCache(layers, capacity, width int) *Cache {
	c := &Cache{Layers: make([]*KVCache, layers)}
	for i := range c.Layers {
		c.Layers[i] = NewKVCache(capacity, width)
	}
	return c
}

// Len is the number of positions the cache holds (0 for a nil cache).
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return c.Layers[0].Len
}

// Layer returns layer i's cache, or nil for a nil cache (training).
func (c *Cache) Layer(i int) *KVCache {
	if c == nil {
		return nil
	}
	return c.Layers[i]
}

// Capacity is the number of positions the cache can hold.
func (c *Cache) Capacity() int { return c.Layers[0].K.Rows() }

// Truncate forgets every position from n on (for rewinding a
// conversation). A recurrent layer that cannot rewind to n forgets more
// (see Recurrent): Len tells what the cache holds afterwards.
func (c *Cache) Truncate(n int) {
	n = max(n, 0)
	for _, l := range c.Layers {
		if l.State != nil && n < l.Len {
			n = min(n, l.State.Rewind(n))
		}
	}
	for _, l := range c.Layers {
		l.Len = min(l.Len, n)
	}
}
