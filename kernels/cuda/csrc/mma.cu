// Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4, Q4_K, Q5_K and Q6_K products on the
// tensor cores, for prompts:
// compute capability 8.0 and later (mma.sync with int8 operands), so
// build.sh compiles this file for compute_80 and the backend loads it only
// on such a GPU; older ones keep the row kernels (toy_matmul_q8 in
// matmul.cu, toy_matmul_q4k … in quant.cu) for every row count.
//
// out[M, N] = x[M, K] · w[N, K]ᵀ with x quantized as the row kernels
// quantize it. One mma.sync m16n8k32 takes 32 quants of 16 activation rows
// and of 8 weight rows and gives their 128 exact int32 dots; the scales are
// then applied and the terms added in the order and rounding of toy's Go
// dot products, so every result is Go's to the bit.
#include "toy.cuh"

#define MMA_WM 2  // 16-row tiles a warp: 32 activation rows; a block's 2×2 warps: 64
#define MMA_BM 64

// mma_s8 sets d to the 16×8 int32 product of a 16×32 int8 tile a (row
// major) and a 32×8 one b (column major), c = 0. Per the PTX ISA's fragment
// layout for m16n8k32 with lane = 4·g + t: a[0] holds row g, k 4t…4t+3;
// a[1] row g+8, the same k; a[2] and a[3] the same rows at k 16+4t…; b[0]
// holds column g, k 4t…4t+3, b[1] k 16+4t…; d[0], d[1] are row g, columns
// 2t and 2t+1, d[2], d[3] row g+8. (The emulator does the same exchange
// with shuffles: emu.h.)
__device__ __forceinline__ void mma_s8(int d[4], const int a[4], const int b[2]) {
#if defined(__CUDA_ARCH__)
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
	             "{%10, %10, %10, %10};"
	             : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(0));
#else
	emu_mma_s8_m16n8k32(d, a, b);
#endif
}

// MmaTile is one lane's share of a block's output tile: 2×2 warps, each
// MMA_WM 16-row tiles by WN 8-column tiles (a block: 64 rows by 16·WN
// columns; grid (⌈N/(16·WN)⌉, ⌈M/64⌉)). ra holds the activation rows the
// lane reads (g and g+8 of each 16-row tile), cb the weight rows it reads
// (g of each 8-column tile), cs those whose scales its outputs take (2t
// and 2t+1); rows and columns past M and N read the last one (every lane of
// a warp must take part in mma.sync) and store nothing. acc holds the
// outputs: acc[i][j][c] is row 8·(c/2) + g of tile i, column 2t + c%2 of
// tile j.
template <int WN> struct MmaTile {
	int g, t;
	int ra[MMA_WM][2], cb[WN], cs[WN][2];
	float acc[MMA_WM][WN][4];

	__device__ __forceinline__ MmaTile(int M, int N) {
		int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
		g = lane >> 2, t = lane & 3;
		int m0 = blockIdx.y * MMA_BM + (warp >> 1) * (16 * MMA_WM);
		int n0 = blockIdx.x * (16 * WN) + (warp & 1) * (8 * WN);
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int h = 0; h < 2; h++) ra[i][h] = min(m0 + 16 * i + 8 * h + g, M - 1);
#pragma unroll
		for (int j = 0; j < WN; j++) {
			cb[j] = min(n0 + 8 * j + g, N - 1);
			for (int h = 0; h < 2; h++) cs[j][h] = min(n0 + 8 * j + 2 * t + h, N - 1);
		}
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int j = 0; j < WN; j++)
				for (int c = 0; c < 4; c++) acc[i][j][c] = 0.0f;
	}

	// a sets the A fragments of the 32 quants at k of each activation row.
	__device__ __forceinline__ void a(int frag[MMA_WM][4], const int8_t *xq, int K, size_t k) const {
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int h = 0; h < 2; h++) {
				const int *p = (const int *)(xq + (size_t)ra[i][h] * K + k);
				frag[i][h] = p[t];
				frag[i][2 + h] = p[4 + t];
			}
	}

	// dx sets each activation row's scale of block b, from xd [rows, nb].
	__device__ __forceinline__ void dx(float d[MMA_WM][2], const float *xd, int nb, int b) const {
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int h = 0; h < 2; h++) d[i][h] = xd[(size_t)ra[i][h] * nb + b];
	}

	// store writes the outputs inside M×N.
	__device__ __forceinline__ void store(float *out, int M, int N) const {
		int m0 = blockIdx.y * MMA_BM + (threadIdx.x / WARP >> 1) * (16 * MMA_WM);
		int n0 = blockIdx.x * (16 * WN) + (threadIdx.x / WARP & 1) * (8 * WN);
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int j = 0; j < WN; j++)
				for (int c = 0; c < 4; c++) {
					int r = m0 + 16 * i + 8 * (c >> 1) + g, n = n0 + 8 * j + 2 * t + (c & 1);
					if (r < M && n < N) out[(size_t)r * N + n] = acc[i][j][c];
				}
	}
};

// toy_matmul_q8_mma: w [N, K/32 blocks of 34 bytes], xq [M, K] int8 and xd
// [M, K/32] from toy_quantize_q8. Block: 128 threads, warps of 32 rows × 32
// columns; grid (⌈N/64⌉, ⌈M/64⌉). Each block's exact dot is scaled by
// d_x·d_w and added to its output in block order, as Go's dotQ8 does
// (sum += float32(s)·(d_x·d_w)).
extern "C" __global__ void toy_matmul_q8_mma(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                             int K, int N) {
	MmaTile<4> tl(M, N);
	int nb = K / QK, t = tl.t;
	for (int b = 0; b < nb; b++) {
		int a[MMA_WM][4];
		tl.a(a, xq, K, (size_t)b * QK);
		float dx[MMA_WM][2];
		tl.dx(dx, xd, nb, b);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = w + ((size_t)tl.cb[j] * nb + b) * Q8_BYTES;
			int bq[2] = {load4(blk + 2 + 4 * t), load4(blk + 2 + 16 + 4 * t)};
			float dw[2];
			for (int h = 0; h < 2; h++) dw[h] = half_to_f32(*(const uint16_t *)(w + ((size_t)tl.cs[j][h] * nb + b) * Q8_BYTES));
#pragma unroll
			for (int i = 0; i < MMA_WM; i++) {
				int d[4];
				mma_s8(d, a[i], bq);
				for (int c = 0; c < 4; c++)
					tl.acc[i][j][c] = __fadd_rn(tl.acc[i][j][c], __fmul_rn((float)d[c], __fmul_rn(dx[i][c >> 1], dw[c & 1])));
			}
		}
	}
	tl.store(out, M, N);
}

// q32_words: the B fragment of a 32-weight block of Q4_0 (kind 0: d, 16
// bytes of nibbles, q − 8), Q5_0 (1: d, 32 fifth bits, the nibbles, q −
// 16), IQ4_NL (2: d, nibbles into its levels) or MXFP4 (3: an E8M0 byte,
// nibbles into its levels) for lane t: weights 4t … 4t+3 are the low
// nibbles of bytes 4t … 4t+3, weights 16+4t … their high nibbles. The
// offsets become signed bytes as q6k_word's do.
__device__ __forceinline__ void q32_words(int bq[2], const uint8_t *blk, int t, int kind) {
	const uint8_t *qs = blk + (kind == 1 ? 6 : kind == 3 ? 1 : 2);
	int word = kind == 3 ? ld8(qs + 4 * t) : load4(qs + 4 * t);
	int lo = word & 0x0F0F0F0F, hi = (word >> 4) & 0x0F0F0F0F;
	if (kind == 2) {
		bq[0] = iq4_levels4(lo), bq[1] = iq4_levels4(hi);
	} else if (kind == 3) {
		bq[0] = mxfp4_levels4(lo), bq[1] = mxfp4_levels4(hi);
	} else if (kind == 0) {
		lo ^= 0x08080808, hi ^= 0x08080808;
		bq[0] = lo | (((lo >> 3) & 0x01010101) * 0xF0), bq[1] = hi | (((hi >> 3) & 0x01010101) * 0xF0);
	} else {
		uint32_t qh = (uint32_t)load4(blk + 2);
		for (int k = 0; k < 4; k++) {
			lo |= ((qh >> (4 * t + k)) & 1) << (8 * k + 4);
			hi |= ((qh >> (16 + 4 * t + k)) & 1) << (8 * k + 4);
		}
		lo ^= 0x10101010, hi ^= 0x10101010;
		bq[0] = lo | (((lo >> 4) & 0x01010101) * 0xE0), bq[1] = hi | (((hi >> 4) & 0x01010101) * 0xE0);
	}
}

// toy_matmul_q32_mma: w [N, K/32 blocks] of Q4_0 (kind 0, 18 bytes), Q5_0
// (1, 22), IQ4_NL (2, 18) or MXFP4 (3, 17), xq/xd from toy_quantize_q8. As
// toy_matmul_q8_mma; each block's term (float)dot·(d_w·d_x) is added in
// block order, as Go's dot (and toy_matmul_q32) does.
extern "C" __global__ void __launch_bounds__(128, 4) toy_matmul_q32_mma(const uint8_t *w, const int8_t *xq, const float *xd,
                                                                       float *out, int M, int K, int N, int kind) {
	MmaTile<4> tl(M, N);
	int nb = K / QK, t = tl.t;
	int bytes = kind == 1 ? 22 : kind == 3 ? 17 : 18;
	for (int b = 0; b < nb; b++) {
		int a[MMA_WM][4];
		tl.a(a, xq, K, (size_t)b * QK);
		float dx[MMA_WM][2];
		tl.dx(dx, xd, nb, b);
#pragma unroll
		for (int j = 0; j < 4; j++) {
			int bq[2];
			q32_words(bq, w + ((size_t)tl.cb[j] * nb + b) * bytes, t, kind);
			float dw[2];
			for (int h = 0; h < 2; h++) {
				const uint8_t *blk = w + ((size_t)tl.cs[j][h] * nb + b) * bytes;
				dw[h] = kind == 3 ? e8m0_half(blk[0]) : half_to_f32(*(const uint16_t *)blk);
			}
#pragma unroll
			for (int i = 0; i < MMA_WM; i++) {
				int d[4];
				mma_s8(d, a[i], bq);
				for (int c = 0; c < 4; c++)
					tl.acc[i][j][c] = __fadd_rn(tl.acc[i][j][c], __fmul_rn((float)d[c], __fmul_rn(dw[c & 1], dx[i][c >> 1])));
			}
		}
	}
	tl.store(out, M, N);
}

// The k-quants: super-blocks of 256 weights, an fp16 scale d (Q4_K and
// Q5_K also dmin), activations from toy_quantize_q8k (xq int8, xd a scale
// per super-block, xs the sums of each 16 quants). A block's warps are 32
// rows × 16 columns; grid (⌈N/32⌉, ⌈M/64⌉).
#define MMA_QKK 256
#define MMA_Q4K_BYTES 144
#define MMA_Q5K_BYTES 176
#define MMA_Q6K_BYTES 210

// q4k_sm: sub-block j's six-bit scale and min from the 12 packed bytes s.
__device__ __forceinline__ void q4k_sm(int j, const uint8_t *s, int *sc, int *m) {
	if (j < 4) {
		*sc = s[j] & 63, *m = s[j + 4] & 63;
	} else {
		*sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
		*m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
	}
}

// matmul_q45k_mma (toy_matmul_q4k_mma, toy_matmul_q5k_mma): Q4_K is 144
// bytes: d, dmin, 12 bytes of eight 6-bit sub-block scales and mins, 128
// bytes of 4-bit quants (sub-blocks 2p and 2p+1 in the low and high
// nibbles of bytes 32p … 32p+31); Q5_K (Q5) 176: a fifth bit of each quant
// in 32 bytes after the scales (bit j of byte l for quant l of sub-block
// j), then the low 4 bits as Q4_K's. Per super-block and output, the
// sub-blocks' exact dots (one mma.sync each) weighted by their scales, and
// the mins against the sums, add up in int32 as Go's dot does; the
// super-block's term is then added in float32, rounded as there.
template <bool Q5>
__device__ __forceinline__ void matmul_q45k_mma(const uint8_t *w, const int8_t *xq, const float *xd, const int *xs,
                                                float *out, int M, int K, int N) {
	const int bytes = Q5 ? MMA_Q5K_BYTES : MMA_Q4K_BYTES;
	MmaTile<2> tl(M, N);
	int nb = K / MMA_QKK, t = tl.t;
	for (int b = 0; b < nb; b++) {
		int dots[MMA_WM][2][4], mins[MMA_WM][2][4];
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int j = 0; j < 2; j++)
				for (int c = 0; c < 4; c++) dots[i][j][c] = mins[i][j][c] = 0;
		for (int sb = 0; sb < 8; sb++) {
			int a[MMA_WM][4], bsum[MMA_WM][2];
			tl.a(a, xq, K, (size_t)b * MMA_QKK + 32 * sb);
#pragma unroll
			for (int i = 0; i < MMA_WM; i++)
				for (int h = 0; h < 2; h++) {
					const int *bs = xs + ((size_t)tl.ra[i][h] * nb + b) * 16 + 2 * sb;
					bsum[i][h] = bs[0] + bs[1];
				}
#pragma unroll
			for (int j = 0; j < 2; j++) {
				const uint8_t *blk = w + ((size_t)tl.cb[j] * nb + b) * bytes;
				const int *qw = (const int *)(blk + (Q5 ? 48 : 16) + (sb / 2) * 32);
				int shift = 4 * (sb % 2);
				int bq[2] = {(qw[t] >> shift) & 0x0F0F0F0F, (qw[4 + t] >> shift) & 0x0F0F0F0F};
				if (Q5) {
					const int *qh = (const int *)(blk + 16);
					bq[0] |= ((qh[t] >> sb) & 0x01010101) << 4;
					bq[1] |= ((qh[4 + t] >> sb) & 0x01010101) << 4;
				}
				int sc[2], mn[2];
				for (int h = 0; h < 2; h++) q4k_sm(sb, w + ((size_t)tl.cs[j][h] * nb + b) * bytes + 4, &sc[h], &mn[h]);
#pragma unroll
				for (int i = 0; i < MMA_WM; i++) {
					int d[4];
					mma_s8(d, a[i], bq);
					for (int c = 0; c < 4; c++) {
						dots[i][j][c] += sc[c & 1] * d[c];
						mins[i][j][c] += mn[c & 1] * bsum[i][c >> 1];
					}
				}
			}
		}
#pragma unroll
		for (int j = 0; j < 2; j++) {
			float dw[2], dmin[2];
			for (int h = 0; h < 2; h++) {
				const uint16_t *hp = (const uint16_t *)(w + ((size_t)tl.cs[j][h] * nb + b) * bytes);
				dw[h] = half_to_f32(hp[0]);
				dmin[h] = half_to_f32(hp[1]);
			}
#pragma unroll
			for (int i = 0; i < MMA_WM; i++)
				for (int c = 0; c < 4; c++) {
					float dx = xd[(size_t)tl.ra[i][c >> 1] * nb + b];
					tl.acc[i][j][c] = __fadd_rn(tl.acc[i][j][c], __fsub_rn(__fmul_rn(__fmul_rn(dw[c & 1], dx), (float)dots[i][j][c]),
					                                                       __fmul_rn(__fmul_rn(dmin[c & 1], dx), (float)mins[i][j][c])));
				}
		}
	}
	tl.store(out, M, N);
}

extern "C" __global__ void __launch_bounds__(128, 4) toy_matmul_q4k_mma(const uint8_t *w, const int8_t *xq, const float *xd,
                                                                       const int *xs, float *out, int M, int K, int N) {
	matmul_q45k_mma<false>(w, xq, xd, xs, out, M, K, N);
}

extern "C" __global__ void __launch_bounds__(128, 4) toy_matmul_q5k_mma(const uint8_t *w, const int8_t *xq, const float *xd,
                                                                       const int *xs, float *out, int M, int K, int N) {
	matmul_q45k_mma<true>(w, xq, xd, xs, out, M, K, N);
}

// q6k_word: the four quants of weights i … i+3 (i a multiple of 4) of a
// Q6_K super-block (128 bytes of the quants' low 4 bits, 64 of their high
// 2 bits, sixteen int8 scales, d) as int8 q − 32: q ^ 32 is q − 32 for
// q ≥ 32 and q + 32 below, where its bit 5 is set and the byte needs its
// top two bits too.
__device__ __forceinline__ int q6k_word(const uint8_t *blk, int i) {
	int half = i / 128, k = i % 128 / 32, l = i % 32;
	int lo = load4(blk + half * 64 + l + 32 * (k % 2)), hi = load4(blk + 128 + half * 32 + l);
	int x = (((lo >> (4 * (k / 2))) & 0x0F0F0F0F) | (((hi >> (2 * k)) & 0x03030303) << 4)) ^ 0x20202020;
	return x | (((x >> 5) & 0x01010101) * 0xC0);
}

// toy_matmul_q6k_mma: w [N, K/256 super-blocks of 210 bytes], xq and xd
// from toy_quantize_q8k. The scales cover 16 weights: each 32-quant
// mma.sync runs twice, once with the first 16 weights and zeros, once with
// zeros and the second 16, so that each half's exact dot takes its own
// scale; then as the Q4_K kernel, without mins.
extern "C" __global__ void toy_matmul_q6k_mma(const uint8_t *w, const int8_t *xq, const float *xd, float *out, int M,
                                              int K, int N) {
	MmaTile<2> tl(M, N);
	int nb = K / MMA_QKK, t = tl.t;
	for (int b = 0; b < nb; b++) {
		int dots[MMA_WM][2][4];
#pragma unroll
		for (int i = 0; i < MMA_WM; i++)
			for (int j = 0; j < 2; j++)
				for (int c = 0; c < 4; c++) dots[i][j][c] = 0;
		for (int sb = 0; sb < 8; sb++) {
			int a[MMA_WM][4];
			tl.a(a, xq, K, (size_t)b * MMA_QKK + 32 * sb);
#pragma unroll
			for (int j = 0; j < 2; j++) {
				const uint8_t *blk = w + ((size_t)tl.cb[j] * nb + b) * MMA_Q6K_BYTES;
				int first[2] = {q6k_word(blk, 32 * sb + 4 * t), 0}, second[2] = {0, q6k_word(blk, 32 * sb + 16 + 4 * t)};
				int sc[2][2]; // [half of the 32][output column]
				for (int h = 0; h < 2; h++) {
					const int8_t *s = (const int8_t *)(w + ((size_t)tl.cs[j][h] * nb + b) * MMA_Q6K_BYTES + 192);
					sc[0][h] = s[2 * sb];
					sc[1][h] = s[2 * sb + 1];
				}
#pragma unroll
				for (int i = 0; i < MMA_WM; i++) {
					int d0[4], d1[4];
					mma_s8(d0, a[i], first);
					mma_s8(d1, a[i], second);
					for (int c = 0; c < 4; c++) dots[i][j][c] += sc[0][c & 1] * d0[c] + sc[1][c & 1] * d1[c];
				}
			}
		}
#pragma unroll
		for (int j = 0; j < 2; j++) {
			float dw[2];
			for (int h = 0; h < 2; h++)
				dw[h] = half_to_f32(*(const uint16_t *)(w + ((size_t)tl.cs[j][h] * nb + b) * MMA_Q6K_BYTES + 208));
#pragma unroll
			for (int i = 0; i < MMA_WM; i++)
				for (int c = 0; c < 4; c++)
					tl.acc[i][j][c] = __fadd_rn(tl.acc[i][j][c],
					                            __fmul_rn(__fmul_rn(dw[c & 1], xd[(size_t)tl.ra[i][c >> 1] * nb + b]), (float)dots[i][j][c]));
		}
	}
	tl.store(out, M, N);
}
