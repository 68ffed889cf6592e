// Matrix products with quantized and half-precision weights:
// out[M, N] = x[M, K] · w[N, K]ᵀ, w in its stored form.
//
// Q8_0 weights take Q8_0 activations, quantized on the fly exactly as toy's
// QuantizeQ8_0 does (amax/127 as fp16, q = round-half-even(x·127/amax));
// each block's dot product is an exact int32 sum (__dp4a), scaled by
// d_x·d_w. F16 (BF16) weights take activations rounded to fp16 (bf16), and
// multiply in float32. One warp computes one output column n for up to
// MT activation rows, so each weight row is read once per MT rows.
//
// Where cuBLAS is missing (only the NVIDIA driver installed), F32 products
// use the same row kernel and prompts of F32, F16 and BF16 a tiled GEMM.
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

// toy_matmul_q8: w [N, K/32 blocks of 34 bytes], xq [M, K] int8, xd [M, K/32].
// Block: 128 threads = 4 warps = 4 columns n; grid (⌈N/4⌉, ⌈M/MT⌉).
__device__ __forceinline__ void matmul_q8(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                          int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QK, mt = min(MT, M - m0);
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	const uint8_t *wr = w + (size_t)n * nb * Q8_BYTES;
	// Unrolled so that a lane's loads of several blocks are in flight at
	// once (decode reads each weight once: the loads' latency is the cost);
	// the blocks are still added in order.
#pragma unroll 4
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

extern "C" __global__ void toy_matmul_q8(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M, int K,
                                         int N) {
	matmul_q8(w, xq, xd, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_q8_id: row s of out [S, N] is x_r·w[ids[s]]ᵀ for the mixture's
// stacked weights w [E, N, K] (estride bytes an expert), r = s / xdiv
// (tensor.MatMulID); grid (⌈N/4⌉, S), one activation row a block row.
extern "C" __global__ void toy_matmul_q8_id(const uint8_t *w, const int8_t *xq, const float *xd, float *out,
                                            const int *ids, long long estride, int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q8(w + ids[s] * estride, xq + r * K, xd + r * (K / QK), out + s * N, 1, K, N, 0);
}

// toy_round_half: xh[i] = x[i] as fp16 (bf16 when bf16 != 0), stored as bits.
extern "C" __global__ void toy_round_half(const float *x, uint16_t *xh, int n, int bf16) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) xh[i] = bf16 ? f32_to_bf16(x[i]) : f32_to_half(x[i]);
}

// Element loads of the three float types the F32/F16/BF16 products read:
// float32, and fp16 or bf16 bits widened to float32.
enum { T_F32, T_F16, T_BF16 };

template <int T> __device__ __forceinline__ float load_elem(const void *p, size_t i) {
	if (T == T_F32) return ((const float *)p)[i];
	uint16_t h = ((const uint16_t *)p)[i];
	return T == T_F16 ? half_to_f32(h) : bf16_to_f32(h);
}

// matmul_rows: out[M, N] = x[M, K]·w[N, K]ᵀ with x and w both of type T (for
// F16/BF16, x already rounded by toy_round_half). One warp per column n for
// up to MT activation rows, its lanes striding over k so that each step
// reads 32 consecutive weights. Block: 128 threads = 4 columns; grid
// (⌈N/4⌉, ⌈M/MT⌉). For decode and short prompts.
template <int T> __device__ void matmul_rows(const void *w, const void *x, float *out, int M, int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int mt = min(MT, M - m0);
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int k = lane; k < K; k += WARP) {
		float wv = load_elem<T>(w, (size_t)n * K + k);
#pragma unroll
		for (int i = 0; i < MT; i++)
			if (i < mt) acc[i] += load_elem<T>(x, (size_t)(m0 + i) * K + k) * wv;
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

// toy_matmul_half: w [N, K] fp16 (bf16) bits, xh [M, K] the rounded
// activations.
extern "C" __global__ void toy_matmul_half(const uint16_t *w, const uint16_t *xh, float *out,
                                           int M, int K, int N, int bf16) {
	if (bf16)
		matmul_rows<T_BF16>(w, xh, out, M, K, N, blockIdx.y * MT);
	else
		matmul_rows<T_F16>(w, xh, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_half_id: toy_matmul_half for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_half_id(const uint16_t *w, const uint16_t *xh, float *out, const int *ids,
                                              long long estride, int xdiv, int K, int N, int bf16) {
	size_t s = blockIdx.y, r = s / xdiv;
	const uint8_t *we = (const uint8_t *)w + ids[s] * estride;
	if (bf16)
		matmul_rows<T_BF16>(we, xh + r * K, out + s * N, 1, K, N, 0);
	else
		matmul_rows<T_F16>(we, xh + r * K, out + s * N, 1, K, N, 0);
}

// toy_matmul_f32: w [N, K], x [M, K] float32; without cuBLAS.
extern "C" __global__ void toy_matmul_f32(const float *w, const float *x, float *out, int M, int K, int N) {
	matmul_rows<T_F32>(w, x, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_f32_id: toy_matmul_f32 for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_f32_id(const float *w, const float *x, float *out, const int *ids,
                                             long long estride,
                                             int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_rows<T_F32>((const uint8_t *)w + ids[s] * estride, x + r * K, out + s * N, 1, K, N, 0);
}

// The tiled GEMM for prompts when there is no cuBLAS (a machine with only the
// NVIDIA driver): each block computes a GT×GT tile of out, staging GK-wide
// slices of x and w in shared memory (transposed, padded against bank
// conflicts); each of its 256 threads accumulates a 4×4 grid of outputs
// spaced 16 apart, so a warp's shared-memory reads are conflict-free or
// broadcasts and its global reads and writes are runs of 16 floats.
#define GT 64
#define GK 16

template <int T> __device__ void gemm_tiles(const void *w, const void *x, float *out, int M, int K, int N) {
	__shared__ float xs[GK][GT + 1], ws[GK][GT + 1];
	int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	int m0 = blockIdx.y * GT, n0 = blockIdx.x * GT;
	float acc[4][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
	for (int k0 = 0; k0 < K; k0 += GK) {
		int k = k0 + tx;
		for (int r = ty; r < GT; r += 16) {
			int m = m0 + r, n = n0 + r;
			xs[tx][r] = m < M && k < K ? load_elem<T>(x, (size_t)m * K + k) : 0.0f;
			ws[tx][r] = n < N && k < K ? load_elem<T>(w, (size_t)n * K + k) : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < GK; kk++) {
			float a[4], b[4];
#pragma unroll
			for (int i = 0; i < 4; i++) a[i] = xs[kk][ty + 16 * i], b[i] = ws[kk][tx + 16 * i];
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		int m = m0 + ty + 16 * i;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int n = n0 + tx + 16 * j;
			if (m < M && n < N) out[(size_t)m * N + n] = acc[i][j];
		}
	}
}

// toy_gemm_f32 and toy_gemm_half: out [M, N] = x·wᵀ over GT×GT tiles;
// block 256 threads, grid (⌈N/GT⌉, ⌈M/GT⌉).
extern "C" __global__ void toy_gemm_f32(const float *w, const float *x, float *out, int M, int K, int N) {
	gemm_tiles<T_F32>(w, x, out, M, K, N);
}

extern "C" __global__ void toy_gemm_half(const uint16_t *w, const uint16_t *xh, float *out, int M, int K, int N,
                                         int bf16) {
	if (bf16)
		gemm_tiles<T_BF16>(w, xh, out, M, K, N);
	else
		gemm_tiles<T_F16>(w, xh, out, M, K, N);
}
