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
//	q, k, v = x·Wqᵀ, x·Wkᵀ, x·Wvᵀ        (head norms, then RoPE, then Then, on q and k if set)
//	o_h = softmax(q_h·k_gᵀ / √Dh + causal mask)·v_g,   g = h / (H/KV)
//	y = [o_1 … o_H]·Woᵀ
//
// Options vary the scores and the mask (a scale, Gemma 2's soft cap,
// sliding windows, Llama 4's chunks, gpt-oss's sinks, no mask for
// encoders). The projections are either separate (Q, K, V) or fused (QKV,
// rows [Q; K; V], as GPT-2 stores them). What a single family adds beyond
// this lives in its package: a step on q and k after RoPE (Then), or its
// own layer around Attend (Qwen3.5's gate).
type Attention struct {
	Q     *Linear `gguf:"attn_q,optional" shape:"Heads*HeadDim, Embed | 2*Heads*HeadDim, Embed" card:"W_q, query projection"`                 // [H·Dh, D] (gated: 2·H·Dh)
	K     *Linear `gguf:"attn_k,optional" shape:"KVHeads*HeadDim, Embed" card:"W_k, key projection"`                                          // [KV·Dh, D]
	V     *Linear `gguf:"attn_v,optional" shape:"KVHeads*HeadDim, Embed" card:"W_v, value projection"`                                        // [KV·Dh, D]
	QKV   *Linear `gguf:"attn_qkv,optional" shape:"(Heads+2*KVHeads)*HeadDim, Embed" card:"W_qkv, query, key and value projections, stacked"` // [(H+2KV)·Dh, D]
	O     *Linear `gguf:"attn_output" shape:"Embed, Heads*HeadDim" init:"resid" card:"W_o, attention output projection"`                      // [D, H·Dh]
	Norms HeadNorms

	Heads, KVHeads, HeadDim int
	RoPE                    *RoPE // nil: positions are added to the input instead
	// Options vary the scores and the mask; a Scale of 0 means 1/√Dh.
	Options tensor.AttentionOptions
	// Then, when set, transforms q and k [T, H·Dh], [T, KV·Dh] after RoPE,
	// for positions past …: a family's own step (Llama 4's L2 norm and
	// attention temperature, built from HeadRMS and Temperature).
	Then func(q, k *tensor.Tensor, past int) (*tensor.Tensor, *tensor.Tensor)
}

// HeadNorms normalise q and k before RoPE, each when set: an RMSNorm of each
// head (weights [Dh], shared by the heads: Qwen3) or of the whole
// projection (weights [H·Dh]: OLMoE), or a LayerNorm of each head, head h
// scaled by row h of weights [H, Dh] (Command R+).
type HeadNorms struct {
	Q Layer `gguf:"attn_q_norm,ifset" shape:"HeadDim | Heads*HeadDim | Heads, HeadDim" card:"γ_q, query norm scale"`
	K Layer `gguf:"attn_k_norm,ifset" shape:"HeadDim | KVHeads*HeadDim | KVHeads, HeadDim" card:"γ_k, key norm scale"`
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

// Apply scales the rows of q [T, C], at positions pos0 …, by their
// temperature, as llama.cpp computes it: the quotient in float32, the
// logarithm in float64, rounded once.
func (tp Temperature) Apply(q *tensor.Tensor, pos0 int) *tensor.Tensor {
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
	if o := a.Options; !(o.Scale >= 0) || !(o.SoftCap >= 0) || o.Window < 0 || o.Chunk < 0 {
		return fmt.Errorf("attention: scale %g, soft cap %g, window %d, chunk %d", o.Scale, o.SoftCap, o.Window, o.Chunk)
	}
	q, kv := a.Heads*a.HeadDim, a.KVHeads*a.HeadDim
	rows := func(l *Linear) int { return l.W.Dim(0) }
	switch {
	case a.QKV != nil:
		if rows(a.QKV) != q+2*kv {
			return fmt.Errorf("attention: fused QKV has %d rows, want %d", rows(a.QKV), q+2*kv)
		}
	case a.Q != nil && a.K != nil && a.V != nil && a.Q.W != nil && a.K.W != nil && a.V.W != nil:
		if (rows(a.Q) != q && rows(a.Q) != 2*q) || rows(a.K) != kv || rows(a.V) != kv {
			return fmt.Errorf("attention: Q, K, V have %d, %d, %d rows, want %d, %d, %d", rows(a.Q), rows(a.K), rows(a.V), q, kv, kv)
		}
	default:
		return fmt.Errorf("attention: needs attn_q, attn_k and attn_v, or attn_qkv")
	}
	if a.O == nil || a.O.W == nil || a.O.W.Dim(1) != q {
		return fmt.Errorf("attention: the output projection must take %d features", q)
	}
	if a.RoPE != nil && (a.RoPE.Dim <= 0 || a.RoPE.Dim > a.HeadDim || a.RoPE.Dim%2 != 0) {
		return fmt.Errorf("attention: RoPE width %d for head width %d", a.RoPE.Dim, a.HeadDim)
	}
	if s := a.Options.Sinks; s != nil && (s.DType() != tensor.F32 || s.Len() != a.Heads) {
		return fmt.Errorf("attention: sinks %v %v, want F32 [%d]", s.DType(), s.Shape(), a.Heads)
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
	var q, k, v *tensor.Tensor
	if a.QKV != nil {
		q, k, v = a.splitQKV(a.QKV.Forward(x))
	} else {
		q, k, v = a.Q.Forward(x), a.K.Forward(x), a.V.Forward(x) // [T, H·Dh], [T, KV·Dh] ×2
	}
	return a.O.Forward(a.Attend(q, k, v, cache))
}

// Attend runs attention on projected q [T, H·Dh], k and v [T, KV·Dh]: the
// head norms, RoPE and Then on q and k, the cache, and the attention of
// every head, returning the heads' outputs [T, H·Dh] before Wo.
func (a *Attention) Attend(q, k, v *tensor.Tensor, cache *KVCache) *tensor.Tensor {
	if cache != nil && cache.Batch != nil {
		return a.attendBatch(q, k, v, cache)
	}
	q, k = headNormed(q, a.Norms.Q, a.HeadDim), headNormed(k, a.Norms.K, a.HeadDim)
	past := 0
	if cache != nil {
		past = cache.Len
	}
	if r := a.RoPE; r != nil {
		o := tensor.RoPEOptions{HeadDim: a.HeadDim, Dim: r.Dim, Base: r.Base, NeoX: r.NeoX, Factors: r.Factors, Scaling: r.Scaling}
		q, k = tensor.RoPEWith(q, past, o), tensor.RoPEWith(k, past, o)
	}
	if a.Then != nil {
		q, k = a.Then(q, k, past)
	}
	keys, values := k, v // [S, KV·Dh] each; without a cache (training) S = T
	if cache != nil {
		keys, values = cache.Append(k, v)
	}
	opt := a.Options
	if opt.Scale == 0 {
		opt.Scale = float32(1 / math.Sqrt(float64(a.HeadDim)))
	}
	return tensor.AttentionWith(q, keys, values, a.Heads, a.KVHeads, past, opt) // [T, H·Dh]
}

// attendBatch attends each sequence of a batch over its own cache: rows
// [at, at+n) of q, k and v are sequence i's next n tokens. Every row's
// result is what Attend gives the sequence alone.
func (a *Attention) attendBatch(q, k, v *tensor.Tensor, b *KVCache) *tensor.Tensor {
	out := tensor.Zeros(q.Rows(), q.Cols())
	at := 0
	for i, c := range b.Batch {
		n := b.Rows[i]
		tensor.SetRows(out, at, a.Attend(q.Slice(at, at+n), k.Slice(at, at+n), v.Slice(at, at+n), c))
		at += n
	}
	return out
}

// HeadRMS RMS-normalises each head of x [T, n·Dh] with no weights,
// x/√(mean(x²) + eps): Llama 4's "L2 norm", which leaves every head of
// length √Dh.
func HeadRMS(x *tensor.Tensor, eps float32, headDim int) *tensor.Tensor {
	return headNorm(x, &RMSNorm{Eps: eps}, headDim)
}

// headNormed applies a head norm (see HeadNorms) to x [T, n·Dh], or returns x
// for none.
func headNormed(x *tensor.Tensor, n Layer, dh int) *tensor.Tensor {
	switch n := n.(type) {
	case nil:
		return x
	case *RMSNorm:
		return headNorm(x, n, dh)
	case *LayerNorm:
		return headLayerNorm(x, n, dh)
	}
	return n.Forward(x)
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

	// Batch, when set, makes this layer's cache a batch of sequences run
	// together (see BatchCache): the rows of the input are Rows[0] tokens
	// of Batch[0], then Rows[1] of Batch[1], and so on; the fields above
	// are unused. Attention attends each over its own cache; a layer that
	// cannot (a recurrent one) panics.
	Batch []*KVCache
	Rows  []int
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
	if c.Batch != nil {
		panic("KVCache: this layer cannot run a batch of sequences")
	}
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

// BatchCache returns the cache of a batch of sequences run together, one
// forward pass for all (engine.NextBatch): caches[i] takes rows[i] tokens,
// the rows of the input in that order. Its Len is 0; positions are each
// sequence's own.
func BatchCache(caches []*Cache, rows []int) *Cache {
	b := &Cache{Layers: make([]*KVCache, len(caches[0].Layers))}
	for l := range b.Layers {
		b.Layers[l] = &KVCache{Rows: rows}
		for _, c := range caches {
			b.Layers[l].Batch = append(b.Layers[l].Batch, c.Layers[l])
		}
	}
	return b
}

// Len is the number of positions the cache holds (0 for a nil cache).
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return c.Layers[0].Len
}

// Positions returns the positions of the next T tokens: Len() … for one
// sequence (0 … for a nil cache), each sequence's own for a batch.
func (c *Cache) Positions(T int) []int32 {
	pos := make([]int32, 0, T)
	var layer *KVCache
	if c != nil {
		layer = c.Layers[0]
	}
	seqs, rows := []*KVCache{layer}, []int{T}
	if layer != nil && layer.Batch != nil {
		seqs, rows = layer.Batch, layer.Rows
	}
	for i, s := range seqs {
		past := 0
		if s != nil {
			past = s.Len
		}
		for t := range rows[i] {
			pos = append(pos, int32(past+t))
		}
	}
	return pos
}

// Layer returns layer i's cache, or nil for a nil cache (training).
func (c *Cache) Layer(i int) *KVCache {
	if c == nil {
		return nil
	}
	return c.Layers[i]
}

// Capacity is the number of positions the cache can hold.
func (c *Cache) Capacity() int {
	if b := c.Layers[0].Batch; b != nil { // a batch of sequences as long
		for _, s := range b[1:] {
			if s.K.Rows() != b[0].K.Rows() {
				panic("Cache: a batch of sequences of different capacities")
			}
		}
		return b[0].K.Rows()
	}
	return c.Layers[0].K.Rows()
}

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
