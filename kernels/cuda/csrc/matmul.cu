// Matrix products with quantized and half-precision weights:
// out[M, N] = x[M, K] · w[N, K]ᵀ, w in its stored form.
//
// Q8_0 weights take Q8_0 activations, quantized on the fly exactly as toy's
// QuantizeQ8_0 does (amax/127 as fp16, q = round-half-even(x·127/amax));
// each block's dot product is an exact int32 sum (__dp4a), scaled by
// d_x·d_w. F16 (BF16) weights take activations rounded to fp16 (bf16), and
// multiply in float32. One warp computes one output column n for up to
// MT activation rows, so each weight row is read once per MT rows.
#include "toy.cuh"

#define MT 8 // activation rows per warp

// toy_quantize_q8: x [nblocks·32] → q [nblocks·32] int8, d [nblocks] (the
// fp16 scale, as float). One warp per block.
extern "C" __global__ void toy_quantize_q8(const float *x, int8_t *q, float *d, int nblocks) {
	int b = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (b >= nblocks) return;
	float v = x[b * QK + lane];
	float amax = warp_max(fabsf(v));
	float dd = amax / 127.0f;
	float id = amax != 0.0f ? 127.0f / amax : 0.0f;
	q[b * QK + lane] = (int8_t)__float2int_rn(__fmul_rn(v, id));
	if (lane == 0) d[b] = half_to_f32(f32_to_half(dd));
}

// load4 reads 4 int8 quants at p (2-byte aligned: Q8_0 blocks are 34 bytes).
__device__ __forceinline__ int load4(const uint8_t *p) {
	const uint16_t *h = (const uint16_t *)p;
	return (int)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
}

// toy_matmul_q8: w [N, K/32 blocks of 34 bytes], xq [M, K] int8, xd [M, K/32].
// Block: 128 threads = 4 warps = 4 columns n; grid (⌈N/4⌉, ⌈M/MT⌉).
extern "C" __global__ void toy_matmul_q8(const uint8_t *w, const int8_t *xq, const float *xd, float *out,
                                         int M, int K, int N) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	int m0 = blockIdx.y * MT;
	if (n >= N) return;
	int nb = K / QK, mt = min(MT, M - m0);
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	const uint8_t *wr = w + (size_t)n * nb * Q8_BYTES;
	for (int b = lane; b < nb; b += WARP) {
		const uint8_t *blk = wr + (size_t)b * Q8_BYTES;
		float dw = half_to_f32(*(const uint16_t *)blk);
		int wq[8];
#pragma unroll
		for (int j = 0; j < 8; j++) wq[j] = load4(blk + 2 + 4 * j);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				const int *xi = (const int *)(xq + (size_t)(m0 + i) * K + (size_t)b * QK);
				int s = 0;
#pragma unroll
				for (int j = 0; j < 8; j++) s = __dp4a(xi[j], wq[j], s);
				acc[i] += (float)s * (xd[(size_t)(m0 + i) * nb + b] * dw);
			}
		}
	}
	// Reduce only the rows this tile has: one in decode, not MT. mt is the
	// same in the whole warp, so the shuffles stay warp-uniform; the loop is
	// unrolled so that acc stays in registers.
#pragma unroll
	for (int i = 0; i < MT; i++) {
		if (i < mt) {
			float s = warp_sum(acc[i]);
			if (lane == 0) out[(size_t)(m0 + i) * N + n] = s;
		}
	}
}

// toy_round_half: xh[i] = x[i] as fp16 (bf16 when bf16 != 0), stored as bits.
extern "C" __global__ void toy_round_half(const float *x, uint16_t *xh, int n, int bf16) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) xh[i] = bf16 ? f32_to_bf16(x[i]) : f32_to_half(x[i]);
}

// toy_matmul_half: w [N, K] fp16 (bf16) bits, xh [M, K] the rounded
// activations; grid and blocks as toy_matmul_q8.
extern "C" __global__ void toy_matmul_half(const uint16_t *w, const uint16_t *xh, float *out,
                                           int M, int K, int N, int bf16) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	int m0 = blockIdx.y * MT;
	if (n >= N) return;
	int mt = min(MT, M - m0);
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	const uint16_t *wr = w + (size_t)n * K;
	for (int k = lane; k < K; k += WARP) {
		float wv = bf16 ? bf16_to_f32(wr[k]) : half_to_f32(wr[k]);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				uint16_t xv = xh[(size_t)(m0 + i) * K + k];
				acc[i] += (bf16 ? bf16_to_f32(xv) : half_to_f32(xv)) * wv;
			}
		}
	}
	// Reduce only the rows this tile has: one in decode, not MT. mt is the
	// same in the whole warp, so the shuffles stay warp-uniform; the loop is
	// unrolled so that acc stays in registers.
#pragma unroll
	for (int i = 0; i < MT; i++) {
		if (i < mt) {
			float s = warp_sum(acc[i]);
			if (lane == 0) out[(size_t)(m0 + i) * N + n] = s;
		}
	}
}
