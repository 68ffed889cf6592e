// The mixture-of-experts feed-forward layer.

package nn

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toyml/toy/toy/tensor"
)

// MoE is a sparse mixture of SwiGLU experts (Shazeer et al. 2017; as in
// OLMoE, Muennighoff et al. 2024): a router scores the E experts for each
// token, the k most probable run on it, and their outputs are summed,
// weighted by the router's probabilities:
//
//	p = softmax(x·Wrᵀ)                        over all E experts, per token
//	y = Σ_{e ∈ top-k(p)} p_e · Down_e(SiLU(Gate_e(x)) ⊙ Up_e(x))
//
// OLMoE takes the k weights as they are; with Normalize (Mixtral,
// Qwen3-MoE) they are renormalised to sum to 1, p_e / Σ_{top-k} p — which is
// the softmax of the k chosen router logits, and is computed so. The
// experts are stored stacked, as GGUF files hold them:
// one 3-D tensor per projection, expert e's [F, D] (or [D, F]) matrix at
// index e, in any weight type.
//
// Forward groups the tokens by expert: each expert runs once on the rows
// routed to it (gathered with tensor.Embedding), and tensor.ScatterAdd adds
// its weighted outputs back to their tokens. The routing itself — the top-k
// choice — reads the router's probabilities back to the host (one [T, E]
// download per layer on a device backend). Gradients flow to the router
// through the weights p_e, and to the experts' stacks and the input through
// the chosen experts; the choice itself has no gradient.
type MoE struct {
	Router *Linear        `gguf:"ffn_gate_inp"`         // [E, D]
	Gate   *tensor.Tensor `gguf:"ffn_gate_exps.weight"` // [E, F, D]
	Up     *tensor.Tensor `gguf:"ffn_up_exps.weight"`   // [E, F, D]
	Down   *tensor.Tensor `gguf:"ffn_down_exps.weight"` // [E, D, F]

	Used      int  // k: experts run per token
	Normalize bool // renormalise the k weights to sum to 1

	// A shared expert that every token runs, its output weighted by
	// σ(x·w_s) (Qwen2-MoE); nil when the model has none.
	SharedGate   *Linear        `gguf:"ffn_gate_shexp,optional"`            // [Fs, D]
	SharedUp     *Linear        `gguf:"ffn_up_shexp,optional"`              // [Fs, D]
	SharedDown   *Linear        `gguf:"ffn_down_shexp,optional"`            // [D, Fs]
	SharedWeight *tensor.Tensor `gguf:"ffn_gate_inp_shexp.weight,optional"` // [D]

	mu      sync.Mutex
	experts []SwiGLU          // views of the stacks, one per expert (frozen stacks only)
	viewOf  [3]*tensor.Tensor // the stacks they view
	gateRow *tensor.Tensor    // SharedWeight as a [1, D] matrix (frozen weights only)
	gateOf  *tensor.Tensor    // the SharedWeight it views
	one     *tensor.Tensor    // the constant 1
}

// Check verifies that the router and the three stacks fit together and with
// the width d, and that k is between 1 and E.
func (m *MoE) Check(d int) error {
	if m.Router == nil || m.Gate == nil || m.Up == nil || m.Down == nil {
		return fmt.Errorf("moe: router or expert stacks missing")
	}
	E := m.Router.W.Dim(0)
	F := m.Gate.Dim(1)
	switch {
	case m.Used < 1 || m.Used > E:
		return fmt.Errorf("moe: %d experts used of %d", m.Used, E)
	case m.Router.W.Dim(1) != d:
		return fmt.Errorf("moe: router %v for width %d", m.Router.W.Shape(), d)
	case len(m.Gate.Shape()) != 3 || m.Gate.Dim(0) != E || m.Gate.Dim(2) != d:
		return fmt.Errorf("moe: gate stack %v, want [%d, F, %d]", m.Gate.Shape(), E, d)
	case len(m.Up.Shape()) != 3 || m.Up.Dim(0) != E || m.Up.Dim(1) != F || m.Up.Dim(2) != d:
		return fmt.Errorf("moe: up stack %v, want [%d, %d, %d]", m.Up.Shape(), E, F, d)
	case len(m.Down.Shape()) != 3 || m.Down.Dim(0) != E || m.Down.Dim(1) != d || m.Down.Dim(2) != F:
		return fmt.Errorf("moe: down stack %v, want [%d, %d, %d]", m.Down.Shape(), E, d, F)
	}
	if m.SharedDown == nil && m.SharedGate == nil && m.SharedUp == nil && m.SharedWeight == nil {
		return nil
	}
	if m.SharedDown == nil || m.SharedGate == nil || m.SharedUp == nil || m.SharedWeight == nil {
		return fmt.Errorf("moe: a shared expert needs ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp and ffn_gate_inp_shexp")
	}
	Fs := m.SharedGate.W.Dim(0)
	if err := errors.Join(CheckLinear("ffn_gate_shexp", m.SharedGate, Fs, d), CheckLinear("ffn_up_shexp", m.SharedUp, Fs, d),
		CheckLinear("ffn_down_shexp", m.SharedDown, d, Fs), CheckShape("ffn_gate_inp_shexp.weight", m.SharedWeight, d)); err != nil {
		return fmt.Errorf("moe: %w", err)
	}
	return nil
}

// Forward maps x [T, D] to [T, D].
func (m *MoE) Forward(x *tensor.Tensor) *tensor.Tensor {
	T, E := x.Rows(), m.Router.W.Dim(0)
	if m.Used < 1 || m.Used > E {
		panic(fmt.Sprintf("MoE: %d experts used of %d", m.Used, E))
	}
	logits := m.Router.Forward(x)       // [T, E]
	probs := tensor.Softmax(logits, -1) // [T, E]
	tokens, slots := route(probs.Float32s(), T, E, m.Used)
	flat := tensor.Reshape(probs, T*E, 1) // p[t, e] at row t·E + e
	if m.Normalize {
		flat, slots = renormalised(logits, slots, T, E, m.Used)
	}
	experts := m.expertViews()
	y := tensor.New(T, x.Cols()) // [T, D], zeros
	for e := range E {
		if len(tokens[e]) == 0 {
			continue
		}
		xe := tensor.Embedding(x, tokens[e])        // [n, D]: gather the n rows routed to e
		he := experts[e].Forward(xe)                // [n, D]: SwiGLU_e of each
		pe := tensor.Embedding(flat, slots[e])      // [n, 1]: their weights p[t, e]
		y = tensor.ScatterAdd(y, tokens[e], he, pe) // y[t] += p[t, e] · SwiGLU_e(x[t])
	}
	if m.SharedDown != nil {
		row, one := m.sharedGate()
		s := (&SwiGLU{Gate: m.SharedGate, Up: m.SharedUp, Down: m.SharedDown}).Forward(x) // [T, D]
		g := tensor.MatMul(x, row)                                                        // [T, 1]
		sg := tensor.Scale(tensor.Add(tensor.Tanh(tensor.Scale(g, 0.5)), one), 0.5)       // σ(g) = (1 + tanh(g/2))/2
		all := make([]int32, T)
		for t := range all {
			all[t] = int32(t)
		}
		y = tensor.ScatterAdd(y, all, s, sg) // y[t] += σ(g_t) · SwiGLU_s(x[t])
	}
	return y
}

// sharedGate returns the shared expert's gate weights as a [1, D] matrix and
// the constant 1, made once for frozen weights (so that a device backend
// uploads them once) and afresh, on the tape, for trainable ones.
func (m *MoE) sharedGate() (row, one *tensor.Tensor) {
	D := m.SharedWeight.Len()
	if m.SharedWeight.RequiresGrad() {
		return tensor.Reshape(m.SharedWeight, 1, D), tensor.FromFloat32([]float32{1}, 1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gateRow == nil || m.gateOf != m.SharedWeight {
		m.gateRow, m.one, m.gateOf = tensor.Reshape(m.SharedWeight, 1, D), tensor.FromFloat32([]float32{1}, 1), m.SharedWeight
	}
	return m.gateRow, m.one
}

// renormalised returns the chosen experts' weights renormalised per token,
// softmax over the k chosen logits, as a column [T·k, 1] with token t's in
// rows t·k …, in expert order, and slots re-pointed at those rows.
func renormalised(logits *tensor.Tensor, slots [][]int32, T, E, k int) (*tensor.Tensor, [][]int32) {
	chosen := make([]int32, 0, T*k) // rows t·E + e of the logits, token by token
	for e := range E {
		chosen = append(chosen, slots[e]...)
	}
	slices.Sort(chosen) // token-major, experts in order within a token
	row := make(map[int32]int32, len(chosen))
	for i, s := range chosen {
		row[s] = int32(i)
	}
	out := make([][]int32, E)
	for e := range E {
		out[e] = make([]int32, len(slots[e]))
		for j, s := range slots[e] {
			out[e][j] = row[s]
		}
	}
	sel := tensor.Embedding(tensor.Reshape(logits, T*E, 1), chosen) // [T·k, 1]: the chosen logits
	w := tensor.Softmax(tensor.Reshape(sel, T, k), -1)              // [T, k]
	return tensor.Reshape(w, T*k, 1), out
}

// route picks the k most probable experts of each of T tokens from p [T·E]
// (ties to the lower index) and returns, per expert, the tokens routed to it
// in order and the positions t·E + e of their probabilities in p.
func route(p []float32, T, E, k int) (tokens, slots [][]int32) {
	tokens, slots = make([][]int32, E), make([][]int32, E)
	chosen := make([]bool, E)
	for t := range T {
		row := p[t*E : (t+1)*E]
		clear(chosen)
		for range k {
			best := -1
			for e, v := range row {
				if !chosen[e] && (best < 0 || v > row[best]) {
					best = e
				}
			}
			chosen[best] = true
		}
		for e, c := range chosen {
			if c {
				tokens[e] = append(tokens[e], int32(t))
				slots[e] = append(slots[e], int32(t*E+e))
			}
		}
	}
	return tokens, slots
}

// expertViews returns expert e's SwiGLU at index e, its matrices views of the
// stacks (tensor.Select). Frozen stacks (loaded from a file) are viewed once
// and the views kept, so a device backend uploads each expert once. Trainable
// stacks are viewed afresh on every call, through the tape, so that
// gradients reach the stacks and optimizer updates are seen.
func (m *MoE) expertViews() []SwiGLU {
	build := func() []SwiGLU {
		out := make([]SwiGLU, m.Gate.Dim(0))
		for e := range out {
			out[e] = SwiGLU{
				Gate: &Linear{W: tensor.Select(m.Gate, e)}, // [F, D]
				Up:   &Linear{W: tensor.Select(m.Up, e)},   // [F, D]
				Down: &Linear{W: tensor.Select(m.Down, e)}, // [D, F]
			}
		}
		return out
	}
	if m.Gate.RequiresGrad() || m.Up.RequiresGrad() || m.Down.RequiresGrad() {
		return build()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if stacks := [3]*tensor.Tensor{m.Gate, m.Up, m.Down}; m.experts == nil || m.viewOf != stacks {
		m.experts, m.viewOf = build(), stacks
	}
	return m.experts
}
