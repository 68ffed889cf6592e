package cudatest

import "github.com/toyml/toy/internal/testmodel"

// deepseekTransfers returns the uploads and downloads of one decode step of
// a deepseek2 gate model: the token id up and the logits down, as for every
// model, when the routing stays on the device (nn.MoE's routed products).
// DeepSeek-V3's router (sigmoid scores divided by their sum) takes the
// grouped products instead: in each MoE layer the chosen experts come down
// (TopK's ids) and, to divide, their scores; up go the zeros the experts'
// outputs are added to, three id lists per chosen expert (the rows it
// gathers, their weights, where ScatterAdd puts them back), the chosen
// scores' rows and the reciprocals of their sums. The attention uploads
// nothing: the absorbed form (attn_k_b/attn_v_b files) joins the heads with
// ConcatColumns, the decompressed one (attn_kv_b) its pieces with placement
// matrices, both on the device.
func deepseekTransfers(s testmodel.Spec) (up, down int64) {
	d := s.DeepSeek
	if !(d.Gating == 2 && d.WeightsNorm) {
		return 1, 1
	}
	moe, k := int64(s.Layers-d.DenseLayers), int64(s.ExpertsUsed)
	return 1 + moe*(1+3*k+2), 1 + 2*moe
}
