// toy's CUDA kernels, compiled from the same sources nvcc compiles
// (kernels/cuda/csrc) with emu.h supplying the CUDA dialect, and the table
// the emulated cuModuleGetFunction looks them up in.
#include "emu.h"
#include "registry.h"

#include "delta.cu"
#include "matmul.cu"
#include "mma.cu"
#include "moe.cu"
#include "ops.cu"
#include "quant.cu"

// Kernels that break the rules on purpose, for the emulator's own tests
// (kernels/cuda/emu_test.go): a module that names them is PTX the test
// writes, never toy's.

// emu_test_diverge: threads from n on exit before a __syncthreads the
// others wait at (barrier divergence).
extern "C" __global__ void emu_test_diverge(float *out, int n) {
	if ((int)threadIdx.x >= n) return;
	__syncthreads();
	out[threadIdx.x] = 1;
}

// emu_test_shfl: a warp reduction, as toy's kernels do it; with a block
// that is not a multiple of 32 the last warp is partial.
extern "C" __global__ void emu_test_shfl(float *out) {
	float v = warp_sum((float)threadIdx.x);
	if (threadIdx.x % WARP == 0) out[threadIdx.x / WARP] = v;
}

const emu_kernel emu_kernels[] = {
	EMU_KERNEL(emu_test_diverge), EMU_KERNEL(emu_test_shfl),
	EMU_KERNEL(toy_quantize_q8), EMU_KERNEL(toy_matmul_q8), EMU_KERNEL(toy_matmul_q8_mma), EMU_KERNEL(toy_matmul_q32_mma), EMU_KERNEL(toy_matmul_q4k_mma), EMU_KERNEL(toy_matmul_q5k_mma), EMU_KERNEL(toy_matmul_q6k_mma), EMU_KERNEL(toy_round_half), EMU_KERNEL(toy_matmul_half),
	EMU_KERNEL(toy_matmul_f32), EMU_KERNEL(toy_gemm_f32), EMU_KERNEL(toy_gemm_half),
	EMU_KERNEL(toy_quantize_q8k), EMU_KERNEL(toy_matmul_q4k), EMU_KERNEL(toy_matmul_q6k), EMU_KERNEL(toy_matmul_q32),
	EMU_KERNEL(toy_matmul_q5k), EMU_KERNEL(toy_matmul_q32k), EMU_KERNEL(toy_q8_1_sums), EMU_KERNEL(toy_matmul_q41),
	EMU_KERNEL(toy_matmul_iq4xs), EMU_KERNEL(toy_embed_quant),
	EMU_KERNEL(toy_add), EMU_KERNEL(toy_mul), EMU_KERNEL(toy_scale), EMU_KERNEL(toy_silu), EMU_KERNEL(toy_tanh), EMU_KERNEL(toy_swiglu), EMU_KERNEL(toy_swiglu_oai),
	EMU_KERNEL(toy_gelu), EMU_KERNEL(toy_gelu_erf), EMU_KERNEL(toy_rmsnorm), EMU_KERNEL(toy_layernorm), EMU_KERNEL(toy_rope),
	EMU_KERNEL(toy_softmax), EMU_KERNEL(toy_attention), EMU_KERNEL(toy_attention_chunk), EMU_KERNEL(toy_attention_combine),
	EMU_KERNEL(toy_embed_f32), EMU_KERNEL(toy_embed_half), EMU_KERNEL(toy_embed_q8), EMU_KERNEL(toy_columns), EMU_KERNEL(toy_place_columns),
	EMU_KERNEL(toy_scatter_add), EMU_KERNEL(toy_topk), EMU_KERNEL(toy_gather_cols), EMU_KERNEL(toy_weighted_sum), EMU_KERNEL(toy_row_sum_recip),
	EMU_KERNEL(toy_matmul_q8_id), EMU_KERNEL(toy_matmul_half_id), EMU_KERNEL(toy_matmul_f32_id), EMU_KERNEL(toy_matmul_q4k_id),
	EMU_KERNEL(toy_matmul_q6k_id), EMU_KERNEL(toy_matmul_q32_id), EMU_KERNEL(toy_matmul_q5k_id), EMU_KERNEL(toy_matmul_q32k_id),
	EMU_KERNEL(toy_matmul_q41_id), EMU_KERNEL(toy_matmul_iq4xs_id),
	EMU_KERNEL(toy_sigmoid), EMU_KERNEL(toy_softplus), EMU_KERNEL(toy_l2_rows), EMU_KERNEL(toy_delta_rule), EMU_KERNEL(toy_causal_conv),
};
const int emu_nkernels = sizeof emu_kernels / sizeof emu_kernels[0];
