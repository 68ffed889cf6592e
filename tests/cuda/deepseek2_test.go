package cudatest

import "github.com/toyml/toy/internal/testmodel"

// deepseekTransfers returns the uploads and downloads of one decode step of
// a deepseek2 gate model. Up: the token id; in each layer of the absorbed
// attention (attn_k_b/attn_v_b files), the zeros the heads' q_h^n·K_h and
// o_h·V_hᵀ are added to and, per head, the rows ScatterAdd puts each in
// (the decompressed attention of attn_kv_b files joins its pieces with
// placement matrices that stay on the device); in each MoE layer the
// routing's zeros and three id lists per chosen expert (see the other
// mixtures), and with normalised sigmoid scores (V3) the chosen scores'
// rows and the reciprocals of their sums. Down: the logits, and each MoE
// layer's router scores.
func deepseekTransfers(s testmodel.Spec) (up, down int64) {
	d := s.DeepSeek
	L, moe, H, k := int64(s.Layers), int64(s.Layers-d.DenseLayers), int64(s.Heads), int64(s.ExpertsUsed)
	up = 1
	if d.SplitKVB {
		up += L * (2 + 2*H)
	}
	up += moe * (1 + 3*k)
	if d.Gating == 2 && d.WeightsNorm {
		up += moe * 2
	}
	return up, 1 + moe
}
