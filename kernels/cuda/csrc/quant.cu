// Matrix products with 2- to 6-bit weights, out[M, N] = x[M, K]·w[N, K]ᵀ,
// and their embedding gathers: the k-quants Q4_K and Q6_K (Q4_K_M files),
// Q5_K, Q3_K and Q2_K against Q8_K activations, Q4_0 and Q5_0 against Q8_0
// activations (from toy_quantize_q8), Q4_1 and Q5_1 against Q8_1 ones (Q8_0's
// plus toy_q8_1_sums), the non-linear IQ4_NL against Q8_0 and IQ4_XS
// against Q8_K, and MXFP4 (E2M1 values under an E8M0 scale) against Q8_0.
// The layouts and arithmetic are toy/tensor's (kquant.go, kquant2.go,
// quant4.go, quant41.go, iquant.go, mxfp4.go): every block's dot product is an exact integer sum, and the
// float scaling runs block after block in the same order and with the same
// roundings as the Go reference, so the products are bit-identical to it.
//
// One warp computes one output column n for up to MT activation rows. The
// k-quant kernels read a super-block cooperatively (each lane 8 weights),
// reduce its integer sums over the warp, then apply the block's scales; the
// 32-weight kernels give each lane one block and add the lanes' terms in
// block order with shuffles.
#include "toy.cuh"

#define MT 8      // activation rows per warp
#define QKK 256   // weights in a k-quant super-block
#define Q4K_BYTES 144
#define Q6K_BYTES 210
#define Q4_0_BYTES 18
#define Q5_0_BYTES 22
#define Q5K_BYTES 176
#define Q3K_BYTES 110
#define Q2K_BYTES 84
#define Q4_1_BYTES 20
#define Q5_1_BYTES 24
#define IQ4_NL_BYTES 18
#define IQ4_XS_BYTES 136
#define MXFP4_BYTES 17

// Weight types, as toy_embed_quant takes them (ggml's type ids).
#define TYPE_Q4_0 2
#define TYPE_Q4_1 3
#define TYPE_Q5_0 6
#define TYPE_Q5_1 7
#define TYPE_Q2_K 10
#define TYPE_Q3_K 11
#define TYPE_Q4_K 12
#define TYPE_Q5_K 13
#define TYPE_Q6_K 14
#define TYPE_IQ4_NL 20
#define TYPE_IQ4_XS 23
#define TYPE_MXFP4 39

// iq4xs_scale: sub-block j's six-bit scale minus 32 (−32 … 31).
__device__ __forceinline__ int iq4xs_scale(int j, const uint8_t *blk) {
	int lo = (blk[4 + j / 2] >> (4 * (j % 2))) & 0xF, hi = (*(const uint16_t *)(blk + 2) >> (2 * j)) & 3;
	return (lo | hi << 4) - 32;
}

// warp_sum_i returns the sum of v over the warp to every lane (exact).
__device__ __forceinline__ int warp_sum_i(int v) {
	for (int o = WARP / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// ld16 reads 4 bytes at a 2-byte-aligned address (Q6_K, Q4_0 and Q5_0 blocks
// have even sizes that are not multiples of 4).
__device__ __forceinline__ int ld16(const uint8_t *p) {
	const uint16_t *h = (const uint16_t *)p;
	return (int)((uint32_t)h[0] | ((uint32_t)h[1] << 16));
}

__device__ __forceinline__ float ld_half(const uint8_t *p) { return half_to_f32(*(const uint16_t *)p); }

// q4k_scale_min: sub-block j's six-bit scale and min from the 12 packed bytes s.
__device__ __forceinline__ void q4k_scale_min(int j, const uint8_t *s, int *sc, int *m) {
	if (j < 4) {
		*sc = s[j] & 63, *m = s[j + 4] & 63;
	} else {
		*sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
		*m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

// toy_quantize_q8k: x [nblocks·256] → q int8, d [nblocks], bsums [nblocks·16]:
// per block the element of largest magnitude (the first on ties, sign kept)
// sets iscale = −127/max, q = round-half-even(iscale·x) capped at 127,
// d = 1/iscale, bsums the sums of each 16 q. One warp per block, 8 values a
// lane.
extern "C" __global__ void toy_quantize_q8k(const float *x, int8_t *q, float *d, int *bsums, int nblocks) {
	int b = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (b >= nblocks) return;
	const float *xb = x + (size_t)b * QKK + lane * 8;
	float v[8], amax = 0.0f;
	int at = QKK; // index of the largest |x| this lane has seen
	for (int i = 0; i < 8; i++) {
		v[i] = xb[i];
		if (fabsf(v[i]) > amax) amax = fabsf(v[i]), at = lane * 8 + i;
	}
	for (int o = WARP / 2; o > 0; o >>= 1) {
		float oa = __shfl_xor_sync(0xffffffffu, amax, o);
		int oat = __shfl_xor_sync(0xffffffffu, at, o);
		if (oa > amax || (oa == amax && oat < at)) amax = oa, at = oat;
	}
	int s = 0;
	float iscale = 0.0f;
	if (amax != 0.0f) iscale = __fdiv_rn(-127.0f, x[(size_t)b * QKK + at]);
	for (int i = 0; i < 8; i++) {
		int qi = amax != 0.0f ? min(127, __float2int_rn(__fmul_rn(iscale, v[i]))) : 0;
		q[(size_t)b * QKK + lane * 8 + i] = (int8_t)qi;
		s += qi;
	}
	s += __shfl_xor_sync(0xffffffffu, s, 1); // 16 values: this lane and its neighbour
	if (lane % 2 == 0) bsums[(size_t)b * 16 + lane / 2] = s;
	if (lane == 0) d[b] = amax != 0.0f ? __fdiv_rn(1.0f, iscale) : 0.0f;
}

// toy_matmul_q4k: w [N, K/256 super-blocks of 144 bytes], xq/xd/xs from
// toy_quantize_q8k. Block 128 threads = 4 columns; grid (⌈N/4⌉, ⌈M/MT⌉).
// Lane l reads the 8 quants 8·(l%4) … of sub-block l/4.
__device__ __forceinline__ void matmul_q4k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                           float *out, int M, int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QKK, mt = min(MT, M - m0), j = lane / 4, part = lane % 4;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b = 0; b < nb; b++) {
		const uint8_t *blk = w + ((size_t)n * nb + b) * Q4K_BYTES;
		int sc, m;
		q4k_scale_min(j, blk + 4, &sc, &m);
		const int *qw = (const int *)(blk + 16 + (j / 2) * 32 + 8 * part);
		int shift = 4 * (j % 2);
		int w0 = (qw[0] >> shift) & 0x0F0F0F0F, w1 = (qw[1] >> shift) & 0x0F0F0F0F;
		float dw = ld_half(blk), dmin = ld_half(blk + 2);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				const int *xi = (const int *)(xq + row * K + (size_t)b * QKK + 32 * j + 8 * part);
				int dots = warp_sum_i(sc * __dp4a(w1, xi[1], __dp4a(w0, xi[0], 0)));
				const int *bs = xs + (row * nb + b) * 16;
				int mins = warp_sum_i(part == 0 ? m * (bs[2 * j] + bs[2 * j + 1]) : 0);
				float dx = xd[row * nb + b];
				acc[i] = __fadd_rn(acc[i], __fsub_rn(__fmul_rn(__fmul_rn(dw, dx), (float)dots),
		__fmul_rn(__fmul_rn(dmin, dx), (float)mins)));
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q4k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                          float *out, int M, int K, int N) {
	matmul_q4k(w, xq, xd, xs, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_q4k_id: toy_matmul_q4k for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q4k_id(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                             float *out, const int *ids, long long estride, int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q4k(w + ids[s] * estride, xq + r * K, xd + r * (K / QKK), xs + r * (K / QKK) * 16, out + s * N, 1, K, N, 0);
}

// toy_matmul_q6k: w [N, K/256 super-blocks of 210 bytes], activations as
// toy_matmul_q4k. Lane l reads weights 8l … 8l+7: 8 low-nibble bytes, 8 bytes
// of high bits, all in sub-block l/2.
__device__ __forceinline__ void matmul_q6k(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                           int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QKK, mt = min(MT, M - m0);
	int i0 = 8 * lane, half = i0 / 128, k = i0 % 128 / 32, l = i0 % 32;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b = 0; b < nb; b++) {
		const uint8_t *blk = w + ((size_t)n * nb + b) * Q6K_BYTES;
		const uint8_t *lo = blk + half * 64 + l + 32 * (k % 2), *hi = blk + 128 + half * 32 + l;
		int ls = 4 * (k / 2), hs = 2 * k;
		// the 6-bit quants, 0 … 63 (q + 32), four to a word
		int w0 = ((ld16(lo) >> ls) & 0x0F0F0F0F) | (((ld16(hi) >> hs) & 0x03030303) << 4);
		int w1 = ((ld16(lo + 4) >> ls) & 0x0F0F0F0F) | (((ld16(hi + 4) >> hs) & 0x03030303) << 4);
		int sc = (int8_t)blk[192 + lane / 2];
		float dw = ld_half(blk + 208);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				const int *xi = (const int *)(xq + row * K + (size_t)b * QKK + i0);
				int sx = __dp4a(0x01010101, xi[1], __dp4a(0x01010101, xi[0], 0));
				int dot = __dp4a(w1, xi[1], __dp4a(w0, xi[0], 0)) - 32 * sx;
				int dots = warp_sum_i(sc * dot);
				acc[i] = __fadd_rn(acc[i], __fmul_rn(__fmul_rn(dw, xd[row * nb + b]), (float)dots));
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q6k(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                          int K, int N) {
	matmul_q6k(w, xq, xd, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_q6k_id: toy_matmul_q6k for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q6k_id(const uint8_t *w, const int8_t *xq, const float *xd, float *out,
                                             const int *ids, long long estride, int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q6k(w + ids[s] * estride, xq + r * K, xd + r * (K / QKK), out + s * N, 1, K, N, 0);
}

// q32_dot: the integer dot of one Q4_0 (kind 0), Q5_0 (kind 1), IQ4_NL
// (kind 2: levels, no offset) or MXFP4 (kind 3: levels, after the exponent
// byte) block with 32 Q8_0 activations xi (8 words).
__device__ __forceinline__ int q32_dot(const uint8_t *blk, const int *xi, int kind) {
	bool bits5 = kind == 1;
	const uint8_t *qs = blk + (bits5 ? 6 : kind == 3 ? 1 : 2);
	uint32_t qh = bits5 ? (uint32_t)ld16(blk + 2) : 0;
	int dot = 0, sx = 0;
#pragma unroll
	for (int t = 0; t < 4; t++) { // weights 4t … 4t+3 and 16+4t … 19+4t
		int word = kind == 3 ? ld8(qs + 4 * t) : ld16(qs + 4 * t);
		int lo = word & 0x0F0F0F0F, hi = (word >> 4) & 0x0F0F0F0F;
		if (kind == 2) {
			dot = __dp4a(iq4_levels4(lo), xi[t], __dp4a(iq4_levels4(hi), xi[4 + t], dot));
			continue;
		}
		if (kind == 3) {
			dot = __dp4a(mxfp4_levels4(lo), xi[t], __dp4a(mxfp4_levels4(hi), xi[4 + t], dot));
			continue;
		}
		if (bits5) {
			for (int k = 0; k < 4; k++) {
				lo |= ((qh >> (4 * t + k)) & 1) << (8 * k + 4);
				hi |= ((qh >> (16 + 4 * t + k)) & 1) << (8 * k + 4);
			}
		}
		dot = __dp4a(lo, xi[t], __dp4a(hi, xi[4 + t], dot));
		sx = __dp4a(0x01010101, xi[t], __dp4a(0x01010101, xi[4 + t], sx));
	}
	return kind >= 2 ? dot : dot - (bits5 ? 16 : 8) * sx;
}

// toy_matmul_q32: w [N, K/32 blocks] of Q4_0 (kind 0), Q5_0 (1), IQ4_NL (2)
// or MXFP4 (3), xq/xd from toy_quantize_q8. Lane l takes blocks l, l+32, …;
// each block's term (float)dot·(d_w·d_x) is then added in block order, all
// lanes alike (MXFP4's d_w: e8m0_half of its exponent byte).
// Grid and blocks as toy_matmul_q4k.
__device__ __forceinline__ void matmul_q32(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                           int K, int N, int kind, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / 32, mt = min(MT, M - m0);
	int bytes = kind == 1 ? Q5_0_BYTES : kind == 3 ? MXFP4_BYTES : Q4_0_BYTES; // IQ4_NL's as Q4_0's
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b0 = 0; b0 < nb; b0 += WARP) {
		int b = b0 + lane, have = min(WARP, nb - b0);
		const uint8_t *blk = w + ((size_t)n * nb + min(b, nb - 1)) * bytes;
		float dw;
		if (kind == 3)
			dw = e8m0_half(blk[0]);
		else
			dw = ld_half(blk);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				float t = 0.0f;
				if (b < nb) {
					const int *xi = (const int *)(xq + row * K + (size_t)b * 32);
					t = __fmul_rn((float)q32_dot(blk, xi, kind), __fmul_rn(dw, xd[row * nb + b]));
				}
				for (int k = 0; k < have; k++) acc[i] = __fadd_rn(acc[i], __shfl_sync(0xffffffffu, t, k));
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q32(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                          int K, int N, int kind) {
	matmul_q32(w, xq, xd, out, M, K, N, kind, blockIdx.y * MT);
}

// toy_matmul_q32_id: toy_matmul_q32 for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q32_id(const uint8_t *w, const int8_t *xq, const float *xd, float *out,
                                             const int *ids, long long estride, int xdiv, int K, int N, int kind) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q32(w + ids[s] * estride, xq + r * K, xd + r * (K / QK), out + s * N, 1, K, N, kind, 0);
}

// toy_matmul_q5k: w [N, K/256 super-blocks of 176 bytes], activations as
// toy_matmul_q4k. Lane l reads the 8 quants 8·(l%4) … of sub-block l/4:
// their nibbles as Q4_K's, their fifth bits bit l/4 of 8 high bytes.
__device__ __forceinline__ void matmul_q5k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                           float *out, int M, int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QKK, mt = min(MT, M - m0), j = lane / 4, part = lane % 4;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b = 0; b < nb; b++) {
		const uint8_t *blk = w + ((size_t)n * nb + b) * Q5K_BYTES;
		int sc, m;
		q4k_scale_min(j, blk + 4, &sc, &m);
		const uint8_t *ql = blk + 48 + (j / 2) * 32 + 8 * part, *qh = blk + 16 + 8 * part;
		int shift = 4 * (j % 2);
		int w0 = ((ld16(ql) >> shift) & 0x0F0F0F0F) | (((ld16(qh) >> j) & 0x01010101) << 4);
		int w1 = ((ld16(ql + 4) >> shift) & 0x0F0F0F0F) | (((ld16(qh + 4) >> j) & 0x01010101) << 4);
		float dw = ld_half(blk), dmin = ld_half(blk + 2);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				const int *xi = (const int *)(xq + row * K + (size_t)b * QKK + 32 * j + 8 * part);
				int dots = warp_sum_i(sc * __dp4a(w1, xi[1], __dp4a(w0, xi[0], 0)));
				const int *bs = xs + (row * nb + b) * 16;
				int mins = warp_sum_i(part == 0 ? m * (bs[2 * j] + bs[2 * j + 1]) : 0);
				float dx = xd[row * nb + b];
				acc[i] = __fadd_rn(acc[i], __fsub_rn(__fmul_rn(__fmul_rn(dw, dx), (float)dots),
		__fmul_rn(__fmul_rn(dmin, dx), (float)mins)));
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q5k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                          float *out, int M, int K, int N) {
	matmul_q5k(w, xq, xd, xs, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_q5k_id: toy_matmul_q5k for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q5k_id(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                             float *out, const int *ids, long long estride, int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q5k(w + ids[s] * estride, xq + r * K, xd + r * (K / QKK), xs + r * (K / QKK) * 16, out + s * N, 1, K, N, 0);
}

// q3k_scale: Q3_K group g's six-bit scale minus 32 from the 12 bytes s.
__device__ __forceinline__ int q3k_scale(int g, const uint8_t *s) {
	int lo = (g < 8 ? s[g] : s[g - 8] >> 4) & 0xF;
	return (lo | ((s[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
}

// toy_matmul_q32k: Q3_K (q3 1) or Q2_K (q3 0) weights [N, K/256 super-blocks
// of 110 or 84 bytes], activations as toy_matmul_q4k. Lane l reads weights
// 8l … 8l+7, all in group l/2: 8 bytes of bit pairs (and Q3_K's 8 bytes of
// high bits, its quants as q + 4 in 0 … 7, the 4 taken off as 4·Σx).
__device__ __forceinline__ void matmul_q32k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                            float *out, int M, int K, int N, int q3, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QKK, mt = min(MT, M - m0), bytes = q3 ? Q3K_BYTES : Q2K_BYTES;
	int i0 = 8 * lane, half = i0 / 128, k = i0 % 128 / 32, l = i0 % 32;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b = 0; b < nb; b++) {
		const uint8_t *blk = w + ((size_t)n * nb + b) * bytes;
		const uint8_t *qs = blk + (q3 ? 32 : 16) + half * 32 + l;
		int w0 = (ld16(qs) >> (2 * k)) & 0x03030303, w1 = (ld16(qs + 4) >> (2 * k)) & 0x03030303;
		int sc, mn = 0;
		float dw, dmin = 0.0f;
		if (q3) {
			int hs = 4 * half + k;
			w0 |= ((ld16(blk + l) >> hs) & 0x01010101) << 2;
			w1 |= ((ld16(blk + l + 4) >> hs) & 0x01010101) << 2;
			sc = q3k_scale(lane / 2, blk + 96);
			dw = ld_half(blk + 108);
		} else {
			sc = blk[lane / 2] & 0xF, mn = blk[lane / 2] >> 4;
			dw = ld_half(blk + 80), dmin = ld_half(blk + 82);
		}
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				const int *xi = (const int *)(xq + row * K + (size_t)b * QKK + i0);
				int dot = __dp4a(w1, xi[1], __dp4a(w0, xi[0], 0));
				if (q3) dot -= 4 * __dp4a(0x01010101, xi[1], __dp4a(0x01010101, xi[0], 0));
				int dots = warp_sum_i(sc * dot);
				float dx = xd[row * nb + b];
				if (q3) {
					acc[i] = __fadd_rn(acc[i], __fmul_rn(__fmul_rn(dw, dx), (float)dots));
				} else {
					const int *bs = xs + (row * nb + b) * 16;
					int mins = warp_sum_i(lane % 2 == 0 ? mn * bs[lane / 2] : 0);
					acc[i] = __fadd_rn(acc[i], __fsub_rn(__fmul_rn(__fmul_rn(dw, dx), (float)dots),
		__fmul_rn(__fmul_rn(dmin, dx), (float)mins)));
				}
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q32k(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                           float *out, int M, int K, int N, int q3) {
	matmul_q32k(w, xq, xd, xs, out, M, K, N, q3, blockIdx.y * MT);
}

// toy_matmul_q32k_id: toy_matmul_q32k for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q32k_id(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                              float *out, const int *ids, long long estride, int xdiv, int K, int N,
                                              int q3) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q32k(w + ids[s] * estride, xq + r * K, xd + r * (K / QKK), xs + r * (K / QKK) * 16, out + s * N, 1, K, N,
		q3, 0);
}

// toy_matmul_iq4xs: w [N, K/256 super-blocks of 136 bytes], activations as
// toy_matmul_q4k. Lane l reads weights 8·(l%4) … of sub-block j = l/4: the
// low (l%4 < 2) or high nibbles of 8 of its 16 index bytes, their levels by
// iq4_levels4; dots = Σ_j (ls_j − 32)·dot_j over the warp, then
// acc += (d_w·d_x)·dots, as dotIQ4XS.
__device__ __forceinline__ void matmul_iq4xs(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                             int K, int N, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / QKK, mt = min(MT, M - m0), j = lane / 4, part = lane % 4;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b = 0; b < nb; b++) {
		const uint8_t *blk = w + ((size_t)n * nb + b) * IQ4_XS_BYTES;
		const uint8_t *qs = blk + 8 + 16 * j + 8 * (part % 2);
		int shift = 4 * (part / 2);
		int w0 = iq4_levels4((ld16(qs) >> shift) & 0x0F0F0F0F), w1 = iq4_levels4((ld16(qs + 4) >> shift) & 0x0F0F0F0F);
		int sc = iq4xs_scale(j, blk);
		float dw = ld_half(blk);
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				const int *xi = (const int *)(xq + row * K + (size_t)b * QKK + 32 * j + 8 * part);
				int dots = warp_sum_i(sc * __dp4a(w1, xi[1], __dp4a(w0, xi[0], 0)));
				acc[i] = __fadd_rn(acc[i], __fmul_rn(__fmul_rn(dw, xd[row * nb + b]), (float)dots));
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_iq4xs(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                            int K, int N) {
	matmul_iq4xs(w, xq, xd, out, M, K, N, blockIdx.y * MT);
}

// toy_matmul_iq4xs_id: toy_matmul_iq4xs for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_iq4xs_id(const uint8_t *w, const int8_t *xq, const float *xd, float *out,
                                               const int *ids, long long estride, int xdiv, int K, int N) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_iq4xs(w + ids[s] * estride, xq + r * K, xd + r * (K / QKK), out + s * N, 1, K, N, 0);
}

// toy_q8_1_sums: the s of Q8_1 blocks, from x and the q toy_quantize_q8
// wrote: s = fp16(amax/127 · Σq), as float. One warp per block.
extern "C" __global__ void toy_q8_1_sums(const float *x, const int8_t *q, float *s, int nblocks) {
	int b = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (b >= nblocks) return;
	float amax = warp_max(fabsf(x[(size_t)b * 32 + lane]));
	int sum = warp_sum_i(q[(size_t)b * 32 + lane]);
	if (lane == 0) s[b] = half_to_f32(f32_to_half(__fmul_rn(__fdiv_rn(amax, 127.0f), (float)sum)));
}

// toy_matmul_q41: w [N, K/32 blocks] of Q4_1 (bits5 0) or Q5_1, xq/xd from
// toy_quantize_q8 and xs from toy_q8_1_sums. Lane l takes blocks l, l+32, …;
// each block's terms (float)dot·(d_w·d_x) and m_w·s_x are then added in
// block order, all lanes alike. Grid and blocks as toy_matmul_q4k.
__device__ __forceinline__ void matmul_q41(const uint8_t *w, const int8_t *xq, const float *xd, const float *xs,
                                           float *out, int M, int K, int N, int bits5, int m0) {
	int n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	if (n >= N) return;
	int nb = K / 32, mt = min(MT, M - m0), bytes = bits5 ? Q5_1_BYTES : Q4_1_BYTES;
	float acc[MT];
#pragma unroll
	for (int i = 0; i < MT; i++) acc[i] = 0.0f;
	for (int b0 = 0; b0 < nb; b0 += WARP) {
		int b = b0 + lane, have = min(WARP, nb - b0);
		const uint8_t *blk = w + ((size_t)n * nb + min(b, nb - 1)) * bytes;
		float dw = ld_half(blk), mw = ld_half(blk + 2);
		const uint8_t *qs = blk + (bits5 ? 8 : 4);
		uint32_t qh = bits5 ? (uint32_t)ld16(blk + 4) : 0;
#pragma unroll
		for (int i = 0; i < MT; i++) {
			if (i < mt) {
				size_t row = (size_t)(m0 + i);
				float t = 0.0f, u = 0.0f;
				if (b < nb) {
					const int *xi = (const int *)(xq + row * K + (size_t)b * 32);
					int dot = 0;
#pragma unroll
					for (int c = 0; c < 4; c++) { // weights 4c … 4c+3 and 16+4c … 19+4c
						int word = ld16(qs + 4 * c);
						int lo = word & 0x0F0F0F0F, hi = (word >> 4) & 0x0F0F0F0F;
						if (bits5) {
							for (int e = 0; e < 4; e++) {
								lo |= ((qh >> (4 * c + e)) & 1) << (8 * e + 4);
								hi |= ((qh >> (16 + 4 * c + e)) & 1) << (8 * e + 4);
							}
						}
						dot = __dp4a(lo, xi[c], __dp4a(hi, xi[4 + c], dot));
					}
					t = __fmul_rn((float)dot, __fmul_rn(dw, xd[row * nb + b]));
					u = __fmul_rn(mw, xs[row * nb + b]);
				}
				for (int k = 0; k < have; k++) {
					acc[i] = __fadd_rn(acc[i], __shfl_sync(0xffffffffu, t, k));
					acc[i] = __fadd_rn(acc[i], __shfl_sync(0xffffffffu, u, k));
				}
			}
		}
	}
#pragma unroll
	for (int i = 0; i < MT; i++)
		if (i < mt && lane == 0) out[(size_t)(m0 + i) * N + n] = acc[i];
}

extern "C" __global__ void toy_matmul_q41(const uint8_t *w, const int8_t *xq, const float *xd, const float *xs,
                                          float *out, int M, int K, int N, int bits5) {
	matmul_q41(w, xq, xd, xs, out, M, K, N, bits5, blockIdx.y * MT);
}

// toy_matmul_q41_id: toy_matmul_q41 for a mixture's chosen experts (see
// toy_matmul_q8_id).
extern "C" __global__ void toy_matmul_q41_id(const uint8_t *w, const int8_t *xq, const float *xd, const float *xs,
                                             float *out, const int *ids, long long estride, int xdiv, int K, int N,
                                             int bits5) {
	size_t s = blockIdx.y, r = s / xdiv;
	matmul_q41(w + ids[s] * estride, xq + r * K, xd + r * (K / QK), xs + r * (K / QK), out + s * N, 1, K, N, bits5, 0);
}

// quant_weight returns weight i of a row of the given type, as toy/tensor's
// DecodeRow computes it.
__device__ float quant_weight(const uint8_t *row, int i, int type) {
	switch (type) {
	case TYPE_Q4_K: {
		const uint8_t *blk = row + (size_t)(i / QKK) * Q4K_BYTES;
		int r = i % QKK, j = r / 32, sc, m;
		q4k_scale_min(j, blk + 4, &sc, &m);
		int q = blk[16 + r / 64 * 32 + r % 32];
		q = r % 64 >= 32 ? q >> 4 : q & 0xF;
		return __fsub_rn(__fmul_rn(__fmul_rn(ld_half(blk), (float)sc), (float)q), __fmul_rn(ld_half(blk + 2),
		(float)m));
	}
	case TYPE_Q6_K: {
		const uint8_t *blk = row + (size_t)(i / QKK) * Q6K_BYTES;
		int r = i % QKK, half = r / 128, k = r % 128 / 32, l = r % 32;
		int lo = blk[half * 64 + l + 32 * (k % 2)] >> (4 * (k / 2)) & 0xF;
		int hi = blk[128 + half * 32 + l] >> (2 * k) & 3;
		return __fmul_rn(__fmul_rn(ld_half(blk + 208), (float)(int8_t)blk[192 + r / 16]), (float)((lo | hi << 4) - 32));
	}
	case TYPE_Q5_K: {
		const uint8_t *blk = row + (size_t)(i / QKK) * Q5K_BYTES;
		int r = i % QKK, j = r / 32, sc, m;
		q4k_scale_min(j, blk + 4, &sc, &m);
		int q = blk[48 + r / 64 * 32 + r % 32];
		q = (r % 64 >= 32 ? q >> 4 : q & 0xF) | ((blk[16 + r % 32] >> j) & 1) << 4;
		return __fsub_rn(__fmul_rn(__fmul_rn(ld_half(blk), (float)sc), (float)q), __fmul_rn(ld_half(blk + 2),
		(float)m));
	}
	case TYPE_Q3_K: {
		const uint8_t *blk = row + (size_t)(i / QKK) * Q3K_BYTES;
		int r = i % QKK, q = (blk[32 + r / 128 * 32 + r % 32] >> (2 * (r % 128 / 32))) & 3;
		if (!((blk[r % 32] >> (4 * (r / 128) + r % 128 / 32)) & 1)) q -= 4;
		return __fmul_rn(__fmul_rn(ld_half(blk + 108), (float)q3k_scale(r / 16, blk + 96)), (float)q);
	}
	case TYPE_Q2_K: {
		const uint8_t *blk = row + (size_t)(i / QKK) * Q2K_BYTES;
		int r = i % QKK, q = (blk[16 + r / 128 * 32 + r % 32] >> (2 * (r % 128 / 32))) & 3, sm = blk[r / 16];
		return __fsub_rn(__fmul_rn(__fmul_rn(ld_half(blk + 80), (float)(sm & 0xF)), (float)q),
		                 __fmul_rn(ld_half(blk + 82), (float)(sm >> 4)));
	}
	case TYPE_IQ4_NL: {
		const uint8_t *blk = row + (size_t)(i / 32) * IQ4_NL_BYTES;
		int r = i % 32, q = blk[2 + r % 16];
		q = r >= 16 ? q >> 4 : q & 0xF;
		return __fmul_rn(ld_half(blk), (float)(int8_t)iq4_level(q));
	}
	case TYPE_MXFP4: {
		const uint8_t *blk = row + (size_t)(i / 32) * MXFP4_BYTES;
		int r = i % 32, q = blk[1 + r % 16];
		q = r >= 16 ? q >> 4 : q & 0xF;
		return __fmul_rn((float)(int8_t)mxfp4_level(q), e8m0_half(blk[0]));
	}
	case TYPE_IQ4_XS: {
		const uint8_t *blk = row + (size_t)(i / QKK) * IQ4_XS_BYTES;
		int r = i % QKK, q = blk[8 + r / 32 * 16 + r % 16];
		q = r % 32 >= 16 ? q >> 4 : q & 0xF;
		return __fmul_rn(__fmul_rn(ld_half(blk), (float)iq4xs_scale(r / 32, blk)), (float)(int8_t)iq4_level(q));
	}
	case TYPE_Q4_1:
	case TYPE_Q5_1: {
		bool bits5 = type == TYPE_Q5_1;
		const uint8_t *blk = row + (size_t)(i / 32) * (bits5 ? Q5_1_BYTES : Q4_1_BYTES);
		int r = i % 32, q = blk[(bits5 ? 8 : 4) + r % 16];
		q = r >= 16 ? q >> 4 : q & 0xF;
		if (bits5) q |= (((uint32_t)ld16(blk + 4) >> r) & 1) << 4;
		return __fadd_rn(__fmul_rn(ld_half(blk), (float)q), ld_half(blk + 2));
	}
	default: { // Q4_0, Q5_0
		bool bits5 = type == TYPE_Q5_0;
		const uint8_t *blk = row + (size_t)(i / 32) * (bits5 ? Q5_0_BYTES : Q4_0_BYTES);
		int r = i % 32, q = blk[(bits5 ? 6 : 2) + r % 16];
		q = r >= 16 ? q >> 4 : q & 0xF;
		if (bits5) q |= (((uint32_t)ld16(blk + 2) >> r) & 1) << 4;
		return __fmul_rn(ld_half(blk), (float)(q - (bits5 ? 16 : 8)));
	}
	}
}

// toy_embed_quant: out[t] = row ids[t] of table [V, D] in type, as float32.
// One block per token.
extern "C" __global__ void toy_embed_quant(float *out, const uint8_t *table, const int *ids, int D, int rowBytes,
                                           int type) {
	const uint8_t *row = table + (size_t)ids[blockIdx.x] * rowBytes;
	for (int i = threadIdx.x; i < D; i += blockDim.x) out[(size_t)blockIdx.x * D + i] = quant_weight(row, i, type);
}
