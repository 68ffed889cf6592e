package cudatest

import "github.com/toyml/toy/internal/testmodel"

// deepseekTransfers returns the uploads and downloads of one decode step of
// a deepseek2 gate model: the token id up and the logits down, as for every
// model. The routing stays on the device (nn.MoE's routed products, V3's
// divided sigmoid scores too), the absorbed attention (attn_k_b/attn_v_b
// files) joins its heads with ConcatColumns and the decompressed one
// (attn_kv_b) its pieces with placement matrices, all on the device.
func deepseekTransfers(testmodel.Spec) (up, down int64) { return 1, 1 }
