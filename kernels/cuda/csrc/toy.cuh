// Shared helpers of toy's CUDA kernels: warp and block reductions, fp16/bf16
// conversions. The kernels follow the arithmetic of toy's pure-Go backend
// (toy/tensor/go_ops.go): float64 sums in norms and softmax, float64 exp,
// products rounded before they are added (__fmul_rn/__fadd_rn: no FMA
// contraction) where Go does so, so results match it to float32 rounding.
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

#define WARP 32

// GRID_STRIDE loops i over [0, n), a grid-stride loop of every thread.
#define GRID_STRIDE(i, n) for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

__device__ __forceinline__ float warp_sum(float v) {
	for (int o = WARP / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v) {
	for (int o = WARP / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
	for (int o = WARP / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

// block_sum_d returns the sum of v over the block (blockDim.x a multiple of
// 32, at most 1024) to every thread. sh holds 32 doubles.
__device__ __forceinline__ double block_sum_d(double v, double *sh) {
	int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, nw = blockDim.x / WARP;
	v = warp_sum_d(v);
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	double s = 0;
	if (threadIdx.x == 0) {
		for (int i = 0; i < nw; i++) s += sh[i];
		sh[0] = s;
	}
	__syncthreads();
	return sh[0];
}

// block_max returns the maximum of v over the block to every thread.
__device__ __forceinline__ float block_max(float v, float *sh) {
	int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, nw = blockDim.x / WARP;
	v = warp_max(v);
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	if (threadIdx.x == 0) {
		float m = sh[0];
		for (int i = 1; i < nw; i++) m = fmaxf(m, sh[i]);
		sh[0] = m;
	}
	__syncthreads();
	return sh[0];
}

__device__ __forceinline__ float half_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t f32_to_half(float f) { return __half_as_ushort(__float2half_rn(f)); }
__device__ __forceinline__ float bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

// f32_to_bf16 rounds to nearest even, as toy's F32ToBF16 (NaN stays NaN).
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
	uint32_t u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

// Q8_0: blocks of 32 weights, an fp16 scale then 32 int8 quants (34 bytes).
#define QK 32
#define Q8_BYTES 34

// load4 reads 4 int8 quants at p (2-byte aligned: Q8_0 blocks are 34 bytes).
__device__ __forceinline__ int load4(const uint8_t *p) {
	const uint16_t *h = (const uint16_t *)p;
	return (int)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
}

// The 4-bit codebooks of IQ4_NL and MXFP4, the E8M0 scale, an unaligned
// load (quant.cu, mma.cu).

// iq4_level: llama.cpp's kvalues_iq4nl[v] (v = 0 … 15), as its byte: levels
// 0-7 are the bytes of one word, 8-15 of another (no table in memory).
__device__ __forceinline__ uint32_t iq4_level(uint32_t v) {
	unsigned long long t = v < 8 ? 0xF6EADDCFBFAD9881ull : 0x7159453526190D01ull;
	return (uint32_t)(t >> (8 * (v & 7))) & 0xFF;
}

// iq4_levels4: the levels of four indices, one in the low nibble of each
// byte of idx, as four signed bytes.
__device__ __forceinline__ int iq4_levels4(int idx) {
	return (int)(iq4_level(idx & 0xF) | iq4_level((idx >> 8) & 0xF) << 8 | iq4_level((idx >> 16) & 0xF) << 16 |
	             iq4_level((idx >> 24) & 0xF) << 24);
}

// mxfp4_level: llama.cpp's kvalues_mxfp4[v] (the E2M1 values doubled: 0, 1,
// 2, 3, 4, 6, 8, 12 and their negatives), as its byte, like iq4_level.
__device__ __forceinline__ uint32_t mxfp4_level(uint32_t v) {
	unsigned long long t = v < 8 ? 0x0C08060403020100ull : 0xF4F8FAFCFDFEFF00ull;
	return (uint32_t)(t >> (8 * (v & 7))) & 0xFF;
}

// mxfp4_levels4: mxfp4_level of four indices, one in the low nibble of each
// byte of idx, as four signed bytes.
__device__ __forceinline__ int mxfp4_levels4(int idx) {
	return (int)(mxfp4_level(idx & 0xF) | mxfp4_level((idx >> 8) & 0xF) << 8 | mxfp4_level((idx >> 16) & 0xF) << 16 |
	             mxfp4_level((idx >> 24) & 0xF) << 24);
}

// e8m0_half: half the E8M0 scale e, 2^(e−128), as llama.cpp's
// ggml_e8m0_to_fp32_half (e < 2: the subnormals 2⁻¹²⁸, 2⁻¹²⁷; e = 255: 2¹²⁷).
__device__ __forceinline__ float e8m0_half(uint32_t e) {
	return __uint_as_float(e < 2 ? 0x00200000u << e : (e - 1) << 23);
}

// ld8 reads 4 bytes at any address (MXFP4 blocks are 17 bytes).
__device__ __forceinline__ int ld8(const uint8_t *p) {
	return (int)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}
