// The PTX modules, compiled from csrc/ by build.sh and embedded.

package cuda

import "embed"

//go:embed ptx/*.ptx
var ptxFS embed.FS

// kernelNames lists each module's kernels, as the backend looks them up.
var kernelNames = map[string][]string{
	"matmul.ptx": {"toy_quantize_q8", "toy_matmul_q8", "toy_round_half", "toy_matmul_half",
		"toy_matmul_f32", "toy_gemm_f32", "toy_gemm_half", "toy_matmul_q8_id", "toy_matmul_half_id", "toy_matmul_f32_id"},
	"mma.ptx": {"toy_matmul_q8_mma", "toy_matmul_q32_mma", "toy_matmul_q4k_mma", "toy_matmul_q5k_mma",
		"toy_matmul_q6k_mma"},
	"delta.ptx": {"toy_sigmoid", "toy_softplus", "toy_l2_rows", "toy_delta_rule"},
	"moe.ptx":   {"toy_scatter_add", "toy_topk", "toy_gather_cols", "toy_weighted_sum", "toy_row_sum_recip"},
	"quant.ptx": {"toy_quantize_q8k", "toy_matmul_q4k", "toy_matmul_q6k", "toy_matmul_q32", "toy_matmul_q5k",
		"toy_matmul_q32k", "toy_q8_1_sums", "toy_matmul_q41", "toy_matmul_iq4xs", "toy_embed_quant",
		"toy_matmul_q4k_id", "toy_matmul_q6k_id", "toy_matmul_q32_id", "toy_matmul_q5k_id", "toy_matmul_q32k_id",
		"toy_matmul_q41_id", "toy_matmul_iq4xs_id"},
	"ops.ptx": {"toy_add", "toy_mul", "toy_scale", "toy_silu", "toy_tanh", "toy_swiglu", "toy_swiglu_oai", "toy_gelu", "toy_gelu_erf", "toy_rmsnorm",
		"toy_layernorm", "toy_rope", "toy_softmax", "toy_attention", "toy_attention_chunk", "toy_attention_combine",
		"toy_embed_f32", "toy_embed_half", "toy_embed_q8", "toy_columns", "toy_place_columns", "toy_causal_conv"},
}

// moduleMinMajor is the compute capability (major) a module's PTX targets
// where that is above compute_70's: the backend loads it only on such a GPU.
var moduleMinMajor = map[string]int{"mma.ptx": 8}
