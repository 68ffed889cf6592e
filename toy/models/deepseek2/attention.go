// Multi-head latent attention, built from toy's tensor ops.

package deepseek2

import (
	"slices"
	"sync"

	"github.com/toyml/toy/toy/nn"
	"github.com/toyml/toy/toy/tensor"
)

// Attention is DeepSeek's multi-head latent attention (MLA; DeepSeek-AI
// 2024, "DeepSeek-V2", arXiv:2405.04434, §2.1). Keys and values come from
// one latent c of width R per token that all heads share, and every query
// and key head ends in Dr rotated features; the key's are one k_r per
// token, shared by the heads too:
//
//	q = x·W_qᵀ   or   q = RMSNorm(x·W_qaᵀ)·W_qbᵀ              [T, H·Dk]
//	[c, k_r] = x·W_kvaᵀ;  c ← RMSNorm(c);  k_r ← RoPE(k_r)     [T, R], [T, Dr]
//	q_h = [q_h^n, RoPE(q_h^r)]                                  Dn + Dr = Dk
//	k_h = [c·K_hᵀ, k_r],  v_h = c·V_hᵀ                         K_h [Dn, R], V_h [Dv, R]
//	o_h = softmax(s·q_h·k_hᵀ + mask)·v_h;   y = [o_1 … o_H]·W_oᵀ
//
// with s = Config.AttnScale and RoPE on adjacent pairs. Older files hold
// K_h and V_h as one attn_kv_b, [K_1; V_1; …; K_H; V_H]; then k_h and v_h
// are decompressed for every head and cached, and the attention is
// multi-head. Newer files split it into attn_k_b (K_hᵀ per head) and
// attn_v_b (V_h), for the "absorbed" form: as q_h·k_hᵀ = [q_h^n·K_h,
// q_h^r]·[c, k_r]ᵀ, the queries absorb K_h and attend over [c, k_r] as one
// key head shared by all (multi-query attention), only [c, k_r] is cached,
// and V_h applies after: o_h = (softmax(·)·c)·V_hᵀ.
//
// Pieces of heads are joined with tensor.ConcatColumns (torch.cat), which
// is differentiable.
type Attention struct {
	Q       *nn.Linear     `gguf:"attn_q,optional" shape:"Heads*KeyDim, Embed" card:"W_q, query projection"`      // queries straight from x (V2-Lite)
	QA      *nn.Linear     `gguf:"attn_q_a,optional" shape:"QLoraRank, Embed" card:"W_qa, query down-projection"` // or through a bottleneck (V2)
	QANorm  *nn.RMSNorm    `gguf:"attn_q_a_norm,optional" shape:"QLoraRank" card:"γ_qa, query bottleneck norm scale"`
	QB      *nn.Linear     `gguf:"attn_q_b,optional" shape:"Heads*KeyDim, QLoraRank" card:"W_qb, query up-projection"`
	KVA     *nn.Linear     `gguf:"attn_kv_a_mqa" shape:"(KVLoraRank+RopeDim), Embed" card:"W_kva, latent and rotated-key projection"` // c and k_r
	KVANorm *nn.RMSNorm    `gguf:"attn_kv_a_norm" shape:"KVLoraRank" card:"γ_kv, latent norm scale"`
	KVB     *nn.Linear     `gguf:"attn_kv_b,optional" shape:"Heads*(KeyDim-RopeDim+ValueDim), KVLoraRank" card:"W_kvb, keys' and values' up-projections, head by head"` // K_1; V_1; …
	KB      *tensor.Tensor `gguf:"attn_k_b.weight,optional" shape:"Heads, KVLoraRank, (KeyDim-RopeDim)" card:"W_kb^h, the heads' key up-projections, transposed"`       // K_hᵀ
	VB      *tensor.Tensor `gguf:"attn_v_b.weight,optional" shape:"Heads, ValueDim, KVLoraRank" card:"W_vb^h, the heads' value up-projections"`                         // V_h
	O       *nn.Linear     `gguf:"attn_output" shape:"Embed, Heads*ValueDim" card:"W_o, attention output projection"`

	Heads, Rank, KeyDim, ValueDim int // H, R, Dk, Dv
	RoPE                          *nn.RoPE
	Scale                         float32 // on the scores q·k

	mu     sync.Mutex
	heads  [][2]*tensor.Tensor // views K_hᵀ, V_h of frozen KB and VB
	viewOf [2]*tensor.Tensor   // the KB and VB they view
}

// Forward attends x [T, D] over the cache's past positions and itself and
// appends this call's keys and values to the cache (a nil cache: the whole
// sequence, for training). It returns [T, D].
func (a *Attention) Forward(x *tensor.Tensor, cache *nn.KVCache) *tensor.Tensor {
	T, H, Dk, R, Dr := x.Rows(), a.Heads, a.KeyDim, a.Rank, a.RoPE.Dim
	Dn := Dk - Dr
	past := 0
	if cache != nil {
		past = cache.Len
	}
	// rope rotates y [T, n·Dr], n heads of Dr features, at positions past ….
	rope := func(y *tensor.Tensor) *tensor.Tensor {
		return tensor.RoPEWith(y, past, tensor.RoPEOptions{HeadDim: Dr, Dim: Dr, Base: a.RoPE.Base, Scaling: a.RoPE.Scaling})
	}
	var q *tensor.Tensor
	if a.Q != nil {
		q = a.Q.Forward(x) // [T, H·Dk]
	} else {
		q = a.QB.Forward(a.QANorm.Forward(a.QA.Forward(x))) // [T, Rq] → [T, H·Dk]
	}
	qh := tensor.Reshape(q, T*H, Dk)                                                         // row t·H + h: q_h of token t
	qr := tensor.Reshape(rope(tensor.Reshape(tensor.Columns(qh, Dn, Dk), T, H*Dr)), T*H, Dr) // [T·H, Dr]: RoPE(q_h^r)

	ckr := a.KVA.Forward(x)                           // [T, R+Dr]
	c := a.KVANorm.Forward(tensor.Columns(ckr, 0, R)) // [T, R]
	kr := rope(tensor.Columns(ckr, R, R+Dr))          // [T, Dr]

	opt := tensor.AttentionOptions{Scale: a.Scale}
	if a.KVB == nil {
		return a.O.Forward(a.absorbed(q, qr, c, kr, cache, past, opt))
	}

	// Decompressed: every head's key and value, in heads of a common
	// width W = max(Dk, Dv) (the attention op wants one): zeros in q and
	// k add nothing to the scores, and the output's columns past Dv are
	// dropped.
	Dv := a.ValueDim
	W := max(Dk, Dv)
	kv := tensor.Reshape(a.KVB.Forward(c), T*H, Dn+Dv)                                              // [T·H, Dn+Dv]: [c·K_hᵀ, c·V_hᵀ]
	krh := tensor.Reshape(tensor.ConcatColumns(slices.Repeat([]*tensor.Tensor{kr}, H)...), T*H, Dr) // [T·H, Dr]: k_r for every head
	qw := pad(tensor.ConcatColumns(tensor.Columns(qh, 0, Dn), qr), W)                               // [T·H, W]: [q_h^n, RoPE(q_h^r), 0]
	kw := pad(tensor.ConcatColumns(tensor.Columns(kv, 0, Dn), krh), W)                              // [T·H, W]: [c·K_hᵀ, k_r, 0]
	vw := pad(tensor.Columns(kv, Dn, Dn+Dv), W)                                                     // [T·H, W]: [c·V_hᵀ, 0]
	qw, kw, vw = tensor.Reshape(qw, T, H*W), tensor.Reshape(kw, T, H*W), tensor.Reshape(vw, T, H*W) // [T, H·W]
	keys, values := kw, vw
	if cache != nil {
		keys, values = cache.Append(kw, vw)
	}
	o := tensor.AttentionWith(qw, keys, values, H, H, past, opt)                                  // [T, H·W]
	return a.O.Forward(tensor.Reshape(tensor.Columns(tensor.Reshape(o, T*H, W), 0, Dv), T, H*Dv)) // [T, H·Dv] → [T, D]
}

// pad returns x [N, C] with zero columns after it up to width W.
func pad(x *tensor.Tensor, W int) *tensor.Tensor {
	if x.Cols() == W {
		return x
	}
	return tensor.ConcatColumns(x, tensor.Zeros(x.Rows(), W-x.Cols()))
}

// absorbed is the attention of newer files (see Attention): q [T, H·Dk]
// the queries, qr [T·H, Dr] their rotated parts, c [T, R] the latent and
// kr [T, Dr] the rotated key. It returns [o_1·V_1ᵀ … o_H·V_Hᵀ], [T, H·Dv].
func (a *Attention) absorbed(q, qr, c, kr *tensor.Tensor, cache *nn.KVCache, past int, opt tensor.AttentionOptions) *tensor.Tensor {
	T, H, Dk, R, Dr := c.Rows(), a.Heads, a.KeyDim, a.Rank, kr.Cols()
	Dn := Dk - Dr
	views := a.headViews()
	parts := make([]*tensor.Tensor, H)
	for h := range H {
		qn := tensor.Columns(q, h*Dk, h*Dk+Dn)    // [T, Dn]: q_h^n
		parts[h] = tensor.MatMul(qn, views[h][0]) // [T, R]: q_h^n·K_h
	}
	qa := tensor.Reshape(tensor.ConcatColumns(parts...), T*H, R) // row t·H + h: q_h^n·K_h
	qw := tensor.ConcatColumns(qa, qr)                           // [T·H, R+Dr]: [q_h^n·K_h, RoPE(q_h^r)]
	k := tensor.ConcatColumns(c, kr)                             // [T, R+Dr]: [c, k_r], one head for all
	// The values are the keys: each head's output is then [softmax·c,
	// softmax·k_r], of which the first R features are o_h.
	keys := k
	if cache != nil {
		keys, _ = cache.Append(k, k)
	}
	o := tensor.AttentionWith(tensor.Reshape(qw, T, H*(R+Dr)), keys, keys, H, 1, past, opt) // [T, H·(R+Dr)]
	parts = make([]*tensor.Tensor, H)
	for h := range H {
		oh := tensor.Columns(o, h*(R+Dr), h*(R+Dr)+R) // [T, R]: o_h = softmax(·)·c
		parts[h] = tensor.MatMul(oh, views[h][1])     // [T, Dv]: o_h·V_hᵀ
	}
	return tensor.ConcatColumns(parts...) // [T, H·Dv]
}

// headViews returns each head's K_hᵀ [R, Dn] and V_h [Dv, R], views of KB
// and VB (tensor.Select). Frozen weights are viewed once, so that a device
// backend uploads each view once; trainable ones afresh, on the tape, so
// that gradients reach the stacks.
func (a *Attention) headViews() [][2]*tensor.Tensor {
	build := func() [][2]*tensor.Tensor {
		out := make([][2]*tensor.Tensor, a.Heads)
		for h := range out {
			out[h] = [2]*tensor.Tensor{tensor.Select(a.KB, h), tensor.Select(a.VB, h)}
		}
		return out
	}
	if a.KB.RequiresGrad() || a.VB.RequiresGrad() {
		return build()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := [2]*tensor.Tensor{a.KB, a.VB}; a.heads == nil || a.viewOf != w {
		a.heads, a.viewOf = build(), w
	}
	return a.heads
}
