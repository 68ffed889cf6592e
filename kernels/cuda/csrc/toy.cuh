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
