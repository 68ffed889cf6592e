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
// the softmax of the k chosen router logits, and is computed so.
//
// DeepSeek's routers vary this (all off in the zero value): Sigmoid scores
// each expert on its own, p = σ(x·Wrᵀ), and Normalize then divides the k
// chosen scores by their sum; Bias is added to the scores only to choose the
// experts, not to weigh them (DeepSeek-V3); Groups limits each token to the
// experts of its GroupsUsed best groups; Scale multiplies the k weights; and
// SharedUngated adds a shared expert's output without a gate.
//
// Llama 4 weighs the experts' inputs instead of their outputs
// (WeightInputs), choosing by the router logits and weighing by their
// sigmoids:
//
//	y = Σ_{e ∈ top-k(x·Wrᵀ)} Down_e(SiLU(Gate_e(p_e·x)) ⊙ Up_e(p_e·x)),   p = σ(x·Wrᵀ)
//
// The experts are stored stacked, as GGUF files hold them:
// one 3-D tensor per projection, expert e's [F, D] (or [D, F]) matrix at
// index e, in any weight type.
//
// Forward chooses the experts with tensor.TopK and then runs them one of
// two ways, with the same result. A long batch, or any pass that trains,
// groups the tokens by expert: each expert runs once on the rows routed to
// it (gathered with tensor.Embedding), and tensor.ScatterAdd adds its
// weighted outputs back to their tokens; the row lists are made on the
// host, so a device backend reads the choice back (one [T, k] download per
// layer). Decode and short batches route instead: tensor.MatMulID runs each
// token's chosen experts from the ids where they are and
// tensor.WeightedSum adds their outputs, so on a device the choice never
// leaves it. Gradients flow to the router through the weights p_e, and to
// the experts' stacks and the input through the chosen experts; the choice
// itself has no gradient.
type MoE struct {
	Router *Linear        `gguf:"ffn_gate_inp" shape:"Experts, Embed" card:"W_r, expert router"`                                                  // [E, D]
	Gate   *tensor.Tensor `gguf:"ffn_gate_exps.weight" shape:"Experts, ExpertFFN, Embed" card:"W_gate^e, experts' gates"`                         // [E, F, D]
	Up     *tensor.Tensor `gguf:"ffn_up_exps.weight" shape:"Experts, ExpertFFN, Embed" card:"W_up^e, experts' up projections"`                    // [E, F, D]
	Down   *tensor.Tensor `gguf:"ffn_down_exps.weight" shape:"Experts, Embed, ExpertFFN" init:"resid" card:"W_down^e, experts' down projections"` // [E, D, F]

	Used      int  // k: experts run per token
	Normalize bool // renormalise the k weights to sum to 1

	// Biases of the experts' products, each optional (gpt-oss).
	GateBias *tensor.Tensor `gguf:"ffn_gate_exps.bias,optional" shape:"Experts, ExpertFFN" card:"b_gate^e, experts' gate biases"` // [E, F]
	UpBias   *tensor.Tensor `gguf:"ffn_up_exps.bias,optional" shape:"Experts, ExpertFFN" card:"b_up^e, experts' up biases"`       // [E, F]
	DownBias *tensor.Tensor `gguf:"ffn_down_exps.bias,optional" shape:"Experts, Embed" card:"b_down^e, experts' down biases"`     // [E, D]
	// Limit > 0 gives the experts gpt-oss's clamped SwiGLU
	// (tensor.SwiGLUOAI with Alpha and Limit) in place of SiLU(g)⊙u.
	Alpha, Limit float32

	// Sigmoid scores the experts by σ(x·Wrᵀ), each on its own, instead of
	// the softmax over all E (DeepSeek-V3, GGUF expert_gating_func 2).
	Sigmoid bool
	// Bias, when present, is added to the scores to choose the experts; the
	// weights stay the unbiased scores (DeepSeek-V3's
	// e_score_correction_bias). A constant: toy does not train it.
	Bias *tensor.Tensor `gguf:"exp_probs_b.bias,optional" shape:"Experts" card:"b_r, expert choice bias (a constant)"` // [E]
	// Scale, when not 0 or 1, multiplies the k weights after Normalize
	// (DeepSeek's routed_scaling_factor, GGUF expert_weights_scale).
	Scale float32
	// Groups > 1 splits the E experts into Groups groups of E/Groups
	// consecutive ones; a token chooses its k experts among those of the
	// GroupsUsed groups whose two best scores sum highest (DeepSeek's
	// group-limited routing, as llama.cpp runs it).
	Groups, GroupsUsed int
	// WeightInputs runs each chosen expert on its weighted input p_e·x and
	// adds the outputs as they are (Llama 4; llama.cpp's weight_before_ffn).
	// The experts are then chosen by the router logits, as Meta's reference
	// and llama.cpp choose them: with Sigmoid the same experts as by the
	// scores, but where σ rounds two logits to one float32.
	WeightInputs bool

	// A shared expert that every token runs, its output weighted by
	// σ(x·w_s) (Qwen2-MoE), or added as it is with SharedUngated
	// (DeepSeek, whose file holds E_s shared experts as one of width
	// E_s·F); nil when the model has none.
	SharedGate    *Linear        `gguf:"ffn_gate_shexp,optional" shape:"SharedFFN, Embed" card:"W_gate^s, shared expert's gate"`                         // [Fs, D]
	SharedUp      *Linear        `gguf:"ffn_up_shexp,optional" shape:"SharedFFN, Embed" card:"W_up^s, shared expert's up projection"`                    // [Fs, D]
	SharedDown    *Linear        `gguf:"ffn_down_shexp,optional" shape:"Embed, SharedFFN" init:"resid" card:"W_down^s, shared expert's down projection"` // [D, Fs]
	SharedWeight  *tensor.Tensor `gguf:"ffn_gate_inp_shexp.weight,optional" shape:"Embed" card:"w_s, shared expert gate"`                                // [D]
	SharedUngated bool

	mu      sync.Mutex
	experts []SwiGLU                  // views of the stacks, one per expert (frozen stacks only)
	viewOf  [6]*tensor.Tensor         // the stacks (and bias stacks) they view
	gateRow *tensor.Tensor            // SharedWeight as a [1, D] matrix (frozen weights only)
	gateOf  *tensor.Tensor            // the SharedWeight it views
	one     *tensor.Tensor            // the constant 1
	ones    map[[2]int]*tensor.Tensor // constant matrices of ones, by shape
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
	case !(m.Scale >= 0 && m.Scale < 1e6):
		return fmt.Errorf("moe: weights scale %g", m.Scale)
	case m.Groups > 1 && (E%m.Groups != 0 || m.GroupsUsed < 1 || m.GroupsUsed > m.Groups || m.Used > m.GroupsUsed*(E/m.Groups)):
		return fmt.Errorf("moe: %d experts used of %d in %d groups, %d of them used", m.Used, E, m.Groups, m.GroupsUsed)
	}
	if m.Bias != nil {
		if err := CheckShape("exp_probs_b.bias", m.Bias, E); err != nil {
			return fmt.Errorf("moe: %w", err)
		}
	}
	for _, b := range []struct {
		name string
		t    *tensor.Tensor
		n    int
	}{{"ffn_gate_exps.bias", m.GateBias, F}, {"ffn_up_exps.bias", m.UpBias, F}, {"ffn_down_exps.bias", m.DownBias, d}} {
		if b.t == nil {
			continue
		}
		if err := CheckShape(b.name, b.t, E, b.n); err != nil {
			return fmt.Errorf("moe: %w", err)
		}
	}
	if !(m.Limit >= 0) || !(m.Alpha >= 0 && m.Alpha < 1e3) {
		return fmt.Errorf("moe: SwiGLU alpha %g, limit %g", m.Alpha, m.Limit)
	}
	if m.SharedDown == nil && m.SharedGate == nil && m.SharedUp == nil && m.SharedWeight == nil {
		return nil
	}
	switch {
	case m.SharedDown == nil || m.SharedGate == nil || m.SharedUp == nil:
		return fmt.Errorf("moe: a shared expert needs ffn_gate_shexp, ffn_up_shexp and ffn_down_shexp")
	case m.SharedUngated && m.SharedWeight != nil:
		return fmt.Errorf("moe: an ungated shared expert with a gate ffn_gate_inp_shexp")
	case !m.SharedUngated && m.SharedWeight == nil:
		return fmt.Errorf("moe: a shared expert needs its gate ffn_gate_inp_shexp")
	}
	Fs := m.SharedGate.W.Dim(0)
	if err := errors.Join(CheckLinear("ffn_gate_shexp", m.SharedGate, Fs, d), CheckLinear("ffn_up_shexp", m.SharedUp, Fs, d),
		CheckLinear("ffn_down_shexp", m.SharedDown, d, Fs)); err != nil {
		return fmt.Errorf("moe: %w", err)
	}
	if m.SharedWeight != nil {
		if err := CheckShape("ffn_gate_inp_shexp.weight", m.SharedWeight, d); err != nil {
			return fmt.Errorf("moe: %w", err)
		}
	}
	return nil
}

// routedTokens is the most tokens a forward pass routes with the routed
// products (MoE.routed) rather than grouped ones: decode and short
// batches, where each expert sees a row or two, so nothing is lost by
// running each chosen expert per token, and the routing stays where the
// router ran.
const routedTokens = 8

// Forward maps x [T, D] to [T, D].
func (m *MoE) Forward(x *tensor.Tensor) *tensor.Tensor {
	T, E := x.Rows(), m.Router.W.Dim(0)
	if m.Used < 1 || m.Used > E {
		panic(fmt.Sprintf("MoE: %d experts used of %d", m.Used, E))
	}
	logits := m.Router.Forward(x) // [T, E]
	var probs *tensor.Tensor      // [T, E]
	if m.Sigmoid {
		probs = m.sigmoid(logits)
	} else {
		probs = tensor.Softmax(logits, -1)
	}
	scores := probs // what the routing compares: p, plus the bias if any
	if m.Bias != nil {
		scores = tensor.Add(probs, m.Bias)
	}
	if m.WeightInputs {
		scores = logits // Llama 4: the top k logits, then σ
	}
	var y *tensor.Tensor // [T, D]
	if T <= routedTokens && !m.trains(x) {
		y = m.routed(x, logits, probs, scores)
	} else {
		y = m.grouped(x, logits, probs, scores)
	}
	return m.addShared(x, y)
}

// trains reports whether a gradient must reach the layer's weights or x.
func (m *MoE) trains(x *tensor.Tensor) bool {
	for _, t := range []*tensor.Tensor{x, m.Router.W, m.Router.B, m.Gate, m.Up, m.Down, m.GateBias, m.UpBias, m.DownBias} {
		if t != nil && t.RequiresGrad() {
			return true
		}
	}
	return false
}

// routed runs the chosen experts token by token, the choice staying a
// tensor (tensor.TopK, MatMulID): on a device the routing is never read
// back. It gives what grouped gives, in the same order of operations:
// weights gathered per token in ascending expert order, products row by
// row, the weighted outputs added in ascending expert order from zero. No
// gradient (inference; training takes grouped).
func (m *MoE) routed(x, logits, probs, scores *tensor.Tensor) *tensor.Tensor {
	ids := tensor.TopK(scores, m.Used, m.Groups, m.GroupsUsed) // [T, k], ascending
	var w *tensor.Tensor                                       // [T, k]
	switch {
	case m.Normalize && m.Sigmoid:
		p := tensor.GatherColumns(probs, ids)
		w = m.dividedBy(p, tensor.RowSumReciprocal(p)) // the k chosen scores over their sum
	case m.Normalize:
		w = tensor.Softmax(tensor.GatherColumns(logits, ids), -1) // softmax of the k chosen logits
	default:
		w = tensor.GatherColumns(probs, ids) // p[t, e]
	}
	if m.Scale != 0 && m.Scale != 1 {
		w = tensor.Scale(w, m.Scale)
	}
	if m.WeightInputs {
		return m.routedWeightedInputs(x, w, ids)
	}
	g := m.biased(tensor.MatMulID(x, m.Gate, ids), m.GateBias, ids)                           // [T·k, F]: Gate_e(x_t)
	u := m.biased(tensor.MatMulID(x, m.Up, ids), m.UpBias, ids)                               // [T·k, F]: Up_e(x_t)
	h := m.biased(tensor.MatMulID(glu(g, u, m.Alpha, m.Limit), m.Down, ids), m.DownBias, ids) // [T·k, D]: SwiGLU_e(x_t)
	return tensor.WeightedSum(h, w)                                                           // y[t] = Σ_e p[t, e] · SwiGLU_e(x_t)
}

// routedWeightedInputs runs the chosen experts ids [T, k] on the inputs
// weighted by w [T, k] (Llama 4), token by token, and adds their outputs:
// y[t] = Σ_j SwiGLU_{ids[t, j]}(w[t, j]·x[t]). With k = 1 (Llama 4's
// routing) the weighted rows are x's own, scaled; otherwise each row is
// repeated k times first (a gather whose ids a device backend uploads).
func (m *MoE) routedWeightedInputs(x, w, ids *tensor.Tensor) *tensor.Tensor {
	T, k := w.Rows(), w.Cols()
	xs := x // [T·k, D]: x[t] at row t·k + j
	if k > 1 {
		rows := make([]int32, T*k)
		for i := range rows {
			rows[i] = int32(i / k)
		}
		xs = tensor.Embedding(x, rows)
	}
	xw := tensor.WeightedSum(xs, tensor.Reshape(w, T*k, 1))                                   // [T·k, D]: w[t, j]·x[t]
	g := m.biased(tensor.MatMulID(xw, m.Gate, ids), m.GateBias, ids)                          // [T·k, F]
	u := m.biased(tensor.MatMulID(xw, m.Up, ids), m.UpBias, ids)                              // [T·k, F]
	h := m.biased(tensor.MatMulID(glu(g, u, m.Alpha, m.Limit), m.Down, ids), m.DownBias, ids) // [T·k, D]
	if k == 1 {
		return h
	}
	return tensor.WeightedSum(h, m.onesOf(T, k)) // y[t] = Σ_j h[t·k + j], in j order from zero
}

// biased adds to y [T·k, n], the chosen experts' products, each one's bias
// row of b [E, n] (none when b is nil): gathered on the device as the
// product of the bias stack, seen as [E, n, 1], with a column of ones.
func (m *MoE) biased(y, b, ids *tensor.Tensor) *tensor.Tensor {
	if b == nil {
		return y
	}
	E, n := b.Dim(0), b.Dim(1)
	rows := tensor.MatMulID(m.onesOf(ids.Rows(), 1), tensor.Reshape(b, E, n, 1), ids) // [T·k, n]: b[e]
	return tensor.Add(y, rows)
}

// grouped runs each expert once on the rows routed to it (gathered with
// tensor.Embedding) and adds its weighted outputs back to their tokens
// (tensor.ScatterAdd): one product per expert however many tokens chose
// it, and differentiable. The per-expert row lists are built on the host,
// so on a device the chosen experts come back (one [T, k] download).
func (m *MoE) grouped(x, logits, probs, scores *tensor.Tensor) *tensor.Tensor {
	T, E := x.Rows(), m.Router.W.Dim(0)
	ids := tensor.TopK(scores, m.Used, m.Groups, m.GroupsUsed)
	tokens, slots := route(ids.Int32s(), T, E, m.Used)
	flat := tensor.Reshape(probs, T*E, 1) // p[t, e] at row t·E + e
	switch {
	case m.Normalize && m.Sigmoid:
		flat, slots = m.divided(probs, slots, T, E, m.Used)
	case m.Normalize:
		flat, slots = renormalised(logits, slots, T, E, m.Used)
	}
	if m.Scale != 0 && m.Scale != 1 {
		flat = tensor.Scale(flat, m.Scale)
	}
	experts := m.expertViews()
	y := tensor.New(T, x.Cols()) // [T, D], zeros
	for e := range E {
		if len(tokens[e]) == 0 {
			continue
		}
		xe := tensor.Embedding(x, tokens[e])   // [n, D]: gather the n rows routed to e
		pe := tensor.Embedding(flat, slots[e]) // [n, 1]: their weights p[t, e]
		if m.WeightInputs {
			he := experts[e].Forward(tensor.WeightedSum(xe, pe)) // [n, D]: SwiGLU_e(p[t, e]·x[t])
			y = tensor.ScatterAdd(y, tokens[e], he, nil)         // y[t] += SwiGLU_e(p[t, e]·x[t])
			continue
		}
		he := experts[e].Forward(xe)                // [n, D]: SwiGLU_e of each
		y = tensor.ScatterAdd(y, tokens[e], he, pe) // y[t] += p[t, e] · SwiGLU_e(x[t])
	}
	return y
}

// addShared adds the shared expert's output to y, gated or not.
func (m *MoE) addShared(x, y *tensor.Tensor) *tensor.Tensor {
	if m.SharedDown == nil {
		return y
	}
	s := (&SwiGLU{Gate: m.SharedGate, Up: m.SharedUp, Down: m.SharedDown}).Forward(x) // [T, D]
	if m.SharedUngated {
		return tensor.Add(y, s) // y[t] += SwiGLU_s(x[t])
	}
	row, one := m.sharedGate()
	g := tensor.MatMul(x, row)                                                  // [T, 1]
	sg := tensor.Scale(tensor.Add(tensor.Tanh(tensor.Scale(g, 0.5)), one), 0.5) // σ(g) = (1 + tanh(g/2))/2
	return tensor.Add(y, tensor.WeightedSum(s, sg))                             // y[t] += σ(g_t) · SwiGLU_s(x[t])
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
	chosen, out := tokenMajor(slots, T, E, k)
	sel := tensor.Embedding(tensor.Reshape(logits, T*E, 1), chosen) // [T·k, 1]: the chosen logits
	w := tensor.Softmax(tensor.Reshape(sel, T, k), -1)              // [T, k]
	return tensor.Reshape(w, T*k, 1), out
}

// tokenMajor returns the chosen slots t·E + e of all experts sorted token
// by token (experts in order within a token), and slots re-pointed at their
// rows in that list.
func tokenMajor(slots [][]int32, T, E, k int) (chosen []int32, out [][]int32) {
	chosen = make([]int32, 0, T*k)
	for e := range E {
		chosen = append(chosen, slots[e]...)
	}
	slices.Sort(chosen)
	row := make(map[int32]int32, len(chosen))
	for i, s := range chosen {
		row[s] = int32(i)
	}
	out = make([][]int32, E)
	for e := range E {
		out[e] = make([]int32, len(slots[e]))
		for j, s := range slots[e] {
			out[e][j] = row[s]
		}
	}
	return chosen, out
}

// onesOf returns a constant [rows, cols] of ones, made once per shape so
// that a device backend uploads it once.
func (m *MoE) onesOf(rows, cols int) *tensor.Tensor {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]int{rows, cols}
	if m.ones[key] == nil {
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = 1
		}
		if m.ones == nil {
			m.ones = map[[2]int]*tensor.Tensor{}
		}
		m.ones[key] = tensor.FromFloat32(v, rows, cols)
	}
	return m.ones[key]
}

// sigmoid returns σ(x) = (1 + tanh(x/2))/2 elementwise for x [T, E].
func (m *MoE) sigmoid(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Scale(tensor.Add(tensor.Tanh(tensor.Scale(x, 0.5)), m.onesOf(1, x.Cols())), 0.5)
}

// divided returns the chosen experts' scores divided by their sum per
// token, p_e / Σ_{top-k} p, as a column [T·k, 1] ordered as renormalised
// orders it, and slots re-pointed at its rows. toy has no division op: 1/s
// is one Newton step from r₀ = 1/s computed on the host (from the chosen
// scores, read back), r = r₀(2 − s·r₀), which is 1/s to rounding and has
// its derivative, −r₀² = −1/s², so the gradient reaches every chosen score.
// (llama.cpp also clamps s to at least 6.1e-5, which k sigmoid scores reach
// only when all are that small; toy does not.)
func (m *MoE) divided(probs *tensor.Tensor, slots [][]int32, T, E, k int) (*tensor.Tensor, [][]int32) {
	chosen, out := tokenMajor(slots, T, E, k)
	w := tensor.Reshape(tensor.Embedding(tensor.Reshape(probs, T*E, 1), chosen), T, k) // [T, k]
	s := tensor.MatMul(w, m.onesOf(1, k))                                              // [T, 1]: Σ_k w
	r0 := make([]float32, T)
	for i, p := range w.Float32s() { // token-major: token i/k's experts
		r0[i/k] += p
	}
	for t := range r0 {
		r0[t] = 1 / r0[t]
	}
	return tensor.Reshape(m.dividedByWith(w, s, tensor.FromFloat32(r0, T, 1)), T*k, 1), out
}

// dividedBy divides each row of w [T, k] by its sum, given c0 [T, 1], the
// reciprocals of the sums (tensor.RowSumReciprocal): divided's Newton step,
// as the routed products take it, with c0 made where w is.
func (m *MoE) dividedBy(w, c0 *tensor.Tensor) *tensor.Tensor {
	return m.dividedByWith(w, tensor.MatMul(w, m.onesOf(1, w.Cols())), c0)
}

// dividedByWith is one Newton step for 1/s from c0 ≈ 1/s, s [T, 1] the row
// sums of w, then w times it: r = 2c₀ − s·c₀², which is 1/s to rounding and
// has its derivative.
func (m *MoE) dividedByWith(w, s, c0 *tensor.Tensor) *tensor.Tensor {
	r := tensor.Add(tensor.Scale(c0, 2), tensor.Scale(tensor.Mul(tensor.Mul(s, c0), c0), -1)) // [T, 1]: 2r₀ − s·r₀² = 1/s
	return tensor.Mul(w, tensor.MatMul(r, m.onesOf(w.Cols(), 1)))                             // [T, k]
}

// route turns the chosen experts ids [T·k] (tensor.TopK's, ascending per
// token) into, per expert, the tokens routed to it in order and the
// positions t·E + e of their scores in a [T, E] matrix.
func route(ids []int32, T, E, k int) (tokens, slots [][]int32) {
	tokens, slots = make([][]int32, E), make([][]int32, E)
	for i, e := range ids {
		t := i / k
		tokens[e] = append(tokens[e], int32(t))
		slots[e] = append(slots[e], int32(t*E)+e)
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
		row := func(b *tensor.Tensor, e int) *tensor.Tensor {
			if b == nil {
				return nil
			}
			return tensor.Select(b, e)
		}
		out := make([]SwiGLU, m.Gate.Dim(0))
		for e := range out {
			out[e] = SwiGLU{
				Gate:  &Linear{W: tensor.Select(m.Gate, e), B: row(m.GateBias, e)}, // [F, D], [F]
				Up:    &Linear{W: tensor.Select(m.Up, e), B: row(m.UpBias, e)},     // [F, D], [F]
				Down:  &Linear{W: tensor.Select(m.Down, e), B: row(m.DownBias, e)}, // [D, F], [D]
				Alpha: m.Alpha, Limit: m.Limit,
			}
		}
		return out
	}
	stacks := [6]*tensor.Tensor{m.Gate, m.Up, m.Down, m.GateBias, m.UpBias, m.DownBias}
	for _, s := range stacks {
		if s != nil && s.RequiresGrad() {
			return build()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.experts == nil || m.viewOf != stacks {
		for _, s := range stacks {
			if s != nil {
				s.ShareStorage() // the routed products read the stacks whole: one copy on a device
			}
		}
		m.experts, m.viewOf = build(), stacks
	}
	return m.experts
}
