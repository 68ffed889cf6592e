// kq2.c: Q5_K, Q3_K and Q2_K weights × Q8_K activations (toy_quantize_q8k,
// kq.c), the k-quants of Q5_K_M, Q3_K_M and Q2_K files.
//
// Layouts are toy/tensor/quant's (kquant2.go). A Q5_K super-block of 256 weights
// is {fp16 d, fp16 dmin, 12 bytes of six-bit scales and mins as Q4_K's, 32
// bytes of fifth bits, 128 bytes of nibbles as Q4_K's} (176 bytes); a Q3_K
// one {32 bytes of high bits, 64 bytes of bit pairs, 12 bytes of sixteen
// six-bit scales, fp16 d} (110 bytes); a Q2_K one {16 bytes of four-bit
// scale | min << 4, 64 bytes of bit pairs, fp16 d, fp16 dmin} (84 bytes).
//
// out[m, n] is toy/tensor/quant's dotQ5K / dotQ3K / dotQ2K bit for bit: per
// super-block exact integer sums, then Go's float steps in Go's order
// (quant.h's KQ4_ACC for Q5_K and Q2_K, KQ6_ACC for Q3_K):
//
//	Q5_K: dots = Σ_j scale_j·Σ q_w·q_x (8 sub-blocks of 32), mins = Σ_j min_j·Σ q_x
//	Q2_K: dots = Σ_g scale_g·Σ q_w·q_x (16 groups of 16),    mins = Σ_g min_g·Σ q_x
//	      sum += (fp16(d)·x.d)·dots − (fp16(dmin)·x.d)·mins
//	Q3_K: dots = Σ_g (scale_g − 32)·Σ q_w·q_x, q_w in −4 … 3
//	      sum += (fp16(d)·x.d)·dots
//
// The x86 kernels follow kq.c's: each block unpacks to eight vectors of 32
// unsigned quants (Q3_K's q + 4, 0 … 7), sixteen group scales G and sixteen
// coefficients C of the activations' sums of 16 (the mins; Q3_K's −4·G,
// which turns Σ G·(q+4)·x back into Σ G·q·x), and the same GEMV (decode)
// and repacked tiles (prefill) compute Σ G·q·x and Σ C·bsums. arm64 and
// plain x86-64 unpack each block to signed bytes once and use it for every
// activation row, in loops the compiler vectorizes.
#include "quant.h"

#define Q5K_BYTES 176
#define Q3K_BYTES 110
#define Q2K_BYTES 84

// The three types, as the kernels' kind argument.
enum { K2_Q5K, K2_Q3K, K2_Q2K };

TOY_INLINE int64_t k2_bytes(int kind) { return kind == K2_Q5K ? Q5K_BYTES : kind == K2_Q3K ? Q3K_BYTES : Q2K_BYTES; }

// k2_mins: whether the type has mins (the float step subtracts dmin·mins).
TOY_INLINE int k2_mins(int kind) { return kind != K2_Q3K; }

// k2_d, k2_dmin: the block's fp16 scales as float32.
TOY_INLINE float k2_d(int kind, const uint8_t *blk) {
	return toy_fp16_f32(toy_load_u16(blk + (kind == K2_Q5K ? 0 : kind == K2_Q3K ? 108 : 80)));
}
TOY_INLINE float k2_dmin(int kind, const uint8_t *blk) {
	return kind == K2_Q3K ? 0 : toy_fp16_f32(toy_load_u16(blk + (kind == K2_Q5K ? 2 : 82)));
}

// q3k_scales unpacks Q3_K's sixteen six-bit scales (minus 32) from the 12
// bytes s: the low nibbles of bytes 0-7 are scales 0-7's low bits, their
// high nibbles scales 8-15's; bits 2k, 2k+1 of byte 8 + g%4 are scale g's
// top two, k = g/4.
TOY_INLINE void q3k_scales(const uint8_t *s, int8_t sc[16]) {
	for (int g = 0; g < 16; g++) {
		int lo = (g < 8 ? s[g] : s[g - 8] >> 4) & 0xF;
		sc[g] = (int8_t)((lo | (s[8 + g % 4] >> (2 * (g / 4)) & 3) << 4) - 32);
	}
}

// k2_unpack_ref: the block's 256 quants as signed bytes (Q3_K's −4 … 3),
// the sixteen group scales gs and the sixteen coefficients cs of the
// activations' sums of 16 (the mins; 0 for Q3_K), as Go reads them.
TOY_INLINE void k2_unpack_ref(int kind, const uint8_t *blk, int8_t q[QK], int32_t gs[16], int32_t cs[16]) {
	switch (kind) {
	case K2_Q5K:
		for (int i = 0; i < QK; i++) {
			int lo = blk[48 + i / 64 * 32 + i % 32] >> (i % 64 >= 32 ? 4 : 0) & 0xF;
			q[i] = (int8_t)(lo | (blk[16 + i % 32] >> (i / 32) & 1) << 4);
		}
		for (int j = 0; j < 8; j++) {
			int sc, mn;
			q4k_scale_min(blk + 4, j, &sc, &mn);
			gs[2 * j] = gs[2 * j + 1] = sc, cs[2 * j] = cs[2 * j + 1] = mn;
		}
		break;
	case K2_Q3K: {
		for (int i = 0; i < QK; i++) {
			int lo = blk[32 + i / 128 * 32 + i % 32] >> (2 * (i % 128 / 32)) & 3;
			int hi = blk[i % 32] >> (4 * (i / 128) + i % 128 / 32) & 1;
			q[i] = (int8_t)(lo - (hi ? 0 : 4));
		}
		int8_t sc[16];
		q3k_scales(blk + 96, sc);
		for (int g = 0; g < 16; g++) gs[g] = sc[g], cs[g] = 0;
		break;
	}
	default: // K2_Q2K
		for (int i = 0; i < QK; i++) q[i] = (int8_t)(blk[16 + i / 128 * 32 + i % 32] >> (2 * (i % 128 / 32)) & 3);
		for (int g = 0; g < 16; g++) gs[g] = blk[g] & 0xF, cs[g] = blk[g] >> 4;
	}
}

// ---------------------------------------------------------------------------
// The references: Go's loops.

static float dot_k2_ref(int kind, const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * k2_bytes(kind), *xb = x + b * Q8K_BYTES;
		const int8_t *xq = (const int8_t *)xb;
		int8_t q[QK];
		int32_t gs[16], cs[16], dots = 0, mins = 0;
		k2_unpack_ref(kind, blk, q, gs, cs);
		for (int g = 0; g < 16; g++) {
			int32_t dot = 0;
			for (int i = 16 * g; i < 16 * (g + 1); i++) dot += q[i] * (int32_t)xq[i];
			dots += gs[g] * dot;
			mins += cs[g] * q8k_bsum(xb, g);
		}
		float xd = q8k_d(xb);
		float d = k2_d(kind, blk) * xd;
		if (k2_mins(kind))
			sum = KQ4_ACC(sum, d, (float)dots, k2_dmin(kind, blk) * xd, (float)mins);
		else
			sum = KQ6_ACC(sum, d, (float)dots);
	}
	return sum;
}

static void matmul_k2_ref(int kind, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                          int64_t n0, int64_t n1) {
	int64_t nb = K / QK;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_k2_ref(kind, w + n * nb * k2_bytes(kind), xq + m * nb * Q8K_BYTES, nb);
}

// toy_matmul_q5k_ref / q3k_ref / q2k_ref compute out[m, n] for m < M and
// n0 ≤ n < n1, with xq [M, K] in Q8_K blocks, w [N, K] in Q5_K, Q3_K or
// Q2_K and out [M, N] in float32. xsum is unused (toy_matmul_q8's
// signature); scratch, when not NULL, is toy_kq2_scratch(K) bytes.
TOY_API void toy_matmul_q5k_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	matmul_k2_ref(K2_Q5K, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q3k_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	matmul_k2_ref(K2_Q3K, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q2k_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	matmul_k2_ref(K2_Q2K, out, xq, w, M, K, N, n0, n1);
}

// ---------------------------------------------------------------------------
// x86: AVX2, with the VNNI instructions where the variant has them.

#if defined(__AVX2__)

// k2_bit moves bit k (0 … 7) of every byte of v to bit `to` and clears the
// rest (16-bit shifts: the bits that cross into the neighbouring byte land
// below or above `to` and are masked off).
TOY_INLINE __m256i k2_bit(__m256i v, int k, int to) {
	__m256i s = k < to ? _mm256_sll_epi16(v, _mm_cvtsi32_si128(to - k)) : _mm256_srl_epi16(v, _mm_cvtsi32_si128(k - to));
	return _mm256_and_si256(s, _mm256_set1_epi8((char)(1 << to)));
}

// k2_unpack: the 256 quants of a block as unsigned bytes in weight order
// (vector k = weights 32k … 32k+31: Q5_K 0 … 31, Q3_K q + 4 in 0 … 7, Q2_K
// 0 … 3), G the scale of each group of 16 weights and C the coefficient of
// its activation sum (Q5_K, Q2_K: the min; Q3_K: −4·G), as int16.
TOY_INLINE void k2_unpack(int kind, const uint8_t *blk, __m256i q[8], __m256i *G, __m256i *C) {
	const __m256i three = _mm256_set1_epi8(3);
	if (kind == K2_Q5K) {
		const __m256i low = _mm256_set1_epi8(0x0F);
		__m256i qh = _mm256_loadu_si256((const __m256i *)(blk + 16));
		for (int p = 0; p < 4; p++) {
			__m256i v = _mm256_loadu_si256((const __m256i *)(blk + 48 + 32 * p));
			q[2 * p] = _mm256_or_si256(_mm256_and_si256(v, low), k2_bit(qh, 2 * p, 4));
			q[2 * p + 1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), low), k2_bit(qh, 2 * p + 1, 4));
		}
		uint64_t mn, sc = q4k_scales(blk + 4, &mn);
		__m128i s = _mm_cvtsi64_si128((long long)sc), m = _mm_cvtsi64_si128((long long)mn);
		*G = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(s, s));
		*C = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m));
	} else if (kind == K2_Q3K) {
		__m256i hm = _mm256_loadu_si256((const __m256i *)blk);
		for (int h = 0; h < 2; h++) {
			__m256i v = _mm256_loadu_si256((const __m256i *)(blk + 32 + 32 * h));
			for (int j = 0; j < 4; j++)
				q[4 * h + j] = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * j)), three),
				                               k2_bit(hm, 4 * h + j, 2));
		}
		// q3k_scales four at a time: low nibbles and high bit pairs
		uint32_t a0 = kq_u32(blk + 96), a1 = kq_u32(blk + 100), t = kq_u32(blk + 104);
		__m128i sc = _mm_setr_epi32((int)((a0 & 0x0f0f0f0f) | (t & 0x03030303) << 4),
		                            (int)((a1 & 0x0f0f0f0f) | (t >> 2 & 0x03030303) << 4),
		                            (int)((a0 >> 4 & 0x0f0f0f0f) | (t >> 4 & 0x03030303) << 4),
		                            (int)((a1 >> 4 & 0x0f0f0f0f) | (t >> 6 & 0x03030303) << 4));
		*G = _mm256_cvtepi8_epi16(_mm_sub_epi8(sc, _mm_set1_epi8(32)));
		*C = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(*G, 2));
	} else {
		for (int h = 0; h < 2; h++) {
			__m256i v = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * h));
			for (int j = 0; j < 4; j++) q[4 * h + j] = _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(2 * j)), three);
		}
		__m128i s = _mm_loadu_si128((const __m128i *)blk);
		*G = _mm256_cvtepu8_epi16(_mm_and_si128(s, _mm_set1_epi8(0x0F)));
		*C = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F)));
	}
}

// Decode (fewer than K2_PACK_MIN activation rows): four weight rows at a
// time, each block unpacked in registers and used at once, as kq.c's
// AVX2 GEMV: vpmaddubsw (pairs ≤ 2·31·127 fit int16) and vpmaddwd by each
// group's scale (or vpdpwssd) give int32 lanes adding up to Σ G·q·x; the
// four rows' sums (and mins) reduce together and the float steps run on
// four lanes, one per row.
#define K2_GEMV_MR 2

#if KR == 16
// Q5_K decode with AVX-512: a block in four vectors of 64 quants, each 64
// nibble bytes giving sub-blocks [2p | 2p+2] (low nibbles) and [2p+1 | 2p+3]
// (high) in its 256-bit halves, the fifth bits added under a byte mask
// (vptestmb of the 32 bytes of bits, broadcast to both halves); the
// activations loaded to match ([x 0-31 | x 64-95], …, once per block for the
// four rows) and each half's sub-block scale from one vpshufb of q4k_scmn. The dots fold
// to 256 bits and reduce with the mins as k2_gemv4's.
TOY_INLINE void q5k_gemv4(float *out, int64_t N, const uint8_t *xq, int MR, const uint8_t *const r[4], int64_t nb,
                          int valid, const uint8_t *pf) {
	const int64_t xrow = nb * Q8K_BYTES;
	const __m512i low = _mm512_set1_epi8(0x0F), five = _mm512_set1_epi8(0x10);
	// sub-blocks (a | b) of vector k: (0 | 2), (1 | 3), (4 | 6), (5 | 7)
	static const int8_t sa[4] = {0, 1, 4, 5}, sb[4] = {2, 3, 6, 7};
	__m512i bit[4], sidx[4];
	for (int k = 0; k < 4; k++) {
		bit[k] = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << sa[k])), _mm256_set1_epi8((char)(1 << sb[k])), 1);
		sidx[k] = _mm512_inserti64x4(_mm512_set1_epi16((short)(0x8000 | sa[k])), _mm256_set1_epi16((short)(0x8000 | sb[k])), 1);
	}
	// the min of group g's sub-block (byte 8 + g/2 of q4k_scmn) as int16
	const __m256i cmin = _mm256_setr_epi8(8, -128, 8, -128, 9, -128, 9, -128, 10, -128, 10, -128, 11, -128, 11, -128, 12,
	                                      -128, 12, -128, 13, -128, 13, -128, 14, -128, 14, -128, 15, -128, 15, -128);
	const __m256i didx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
	__m128 sum[K2_GEMV_MR];
	for (int m = 0; m < MR; m++) sum[m] = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 4 * Q5K_BYTES; i += 64) __builtin_prefetch(pf + 4 * Q5K_BYTES * b + i, 0, 2);
		const uint8_t *xb[K2_GEMV_MR];
		__m512i xv[K2_GEMV_MR][4];
		for (int m = 0; m < MR; m++) {
			xb[m] = xq + m * xrow + b * Q8K_BYTES;
			for (int k = 0; k < 4; k++) {
				const uint8_t *x0 = xb[m] + 128 * (k / 2) + 32 * (k % 2);
				xv[m][k] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x0)),
				                              _mm256_loadu_si256((const __m256i *)(x0 + 64)), 1);
			}
		}
		__m256i acc[K2_GEMV_MR][4], cor[K2_GEMV_MR][4];
		uint32_t dh[4];
		for (int n = 0; n < 4; n++) {
			const uint8_t *blk = r[n] + b * Q5K_BYTES;
			dh[n] = kq_u32(blk);
			__m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + 16)));
			__m512i v0 = _mm512_loadu_si512((const void *)(blk + 48)), v1 = _mm512_loadu_si512((const void *)(blk + 112));
			__m512i q[4] = {_mm512_and_si512(v0, low), _mm512_and_si512(_mm512_srli_epi16(v0, 4), low),
			                _mm512_and_si512(v1, low), _mm512_and_si512(_mm512_srli_epi16(v1, 4), low)};
			__m512i S = _mm512_broadcast_i32x4(q4k_scmn(blk)); // scales | mins, bytes
			__m256i C = _mm256_shuffle_epi8(_mm512_castsi512_si256(S), cmin);
			__m512i a[K2_GEMV_MR];
			for (int m = 0; m < MR; m++) {
				__m256i bs = _mm256_loadu_si256((const __m256i *)(xb[m] + Q8K_BSUMS));
				cor[m][n] = _mm256_madd_epi16(bs, C);
				a[m] = _mm512_setzero_si512();
			}
			for (int k = 0; k < 4; k++) {
				__m512i qk = _mm512_mask_add_epi8(q[k], _mm512_test_epi8_mask(qh, bit[k]), q[k], five);
				__m512i sv = _mm512_shuffle_epi8(S, sidx[k]);
				for (int m = 0; m < MR; m++) a[m] = _mm512_dpwssd_epi32(a[m], _mm512_maddubs_epi16(qk, xv[m][k]), sv);
			}
			for (int m = 0; m < MR; m++)
				acc[m][n] = _mm256_add_epi32(_mm512_castsi512_si256(a[m]), _mm512_extracti64x4_epi64(a[m], 1));
		}
		// [d of the four rows | their dmin]
		__m256 dw = _mm256_permutevar8x32_ps(
		    _mm256_cvtph_ps(_mm_setr_epi32((int)dh[0], (int)dh[1], (int)dh[2], (int)dh[3])), didx);
		for (int m = 0; m < MR; m++) {
			__m128 xd = _mm_set1_ps(q8k_d(xb[m]));
			__m256 f = _mm256_cvtepi32_ps(kq_reduce8(acc[m][0], acc[m][1], acc[m][2], acc[m][3], cor[m][0], cor[m][1],
			                                         cor[m][2], cor[m][3]));
			__m256 p = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set_m128(xd, xd)), f); // [d·dots | dmin·mins]
			sum[m] = _mm_add_ps(sum[m], _mm_sub_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps(p, 1)));
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		_mm_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}
#endif

TOY_INLINE void k2_gemv4(int kind, float *out, int64_t N, const uint8_t *xq, int MR, const uint8_t *const r[4],
                         int64_t nb, int valid, const uint8_t *pf) {
#if KR == 16
	if (kind == K2_Q5K) {
		q5k_gemv4(out, N, xq, MR, r, nb, valid, pf);
		return;
	}
#endif
	const int64_t xrow = nb * Q8K_BYTES, wb = k2_bytes(kind);
	__m128 sum[K2_GEMV_MR];
	for (int m = 0; m < MR; m++) sum[m] = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 4 * wb; i += 64) __builtin_prefetch(pf + 4 * wb * b + i, 0, 2);
		const uint8_t *xb[K2_GEMV_MR];
		for (int m = 0; m < MR; m++) xb[m] = xq + m * xrow + b * Q8K_BYTES;
		__m256i acc[K2_GEMV_MR][4], cor[K2_GEMV_MR][4];
		float dh[8];
		for (int n = 0; n < 4; n++) {
			const uint8_t *blk = r[n] + b * wb;
			__m256i q[8], G, C;
			k2_unpack(kind, blk, q, &G, &C);
			dh[n] = k2_d(kind, blk), dh[4 + n] = k2_dmin(kind, blk);
			// S: the scale of group 2k in int16 element k of the low half,
			// of group 2k+1 in the high half
			__m256i S = _mm256_permute4x64_epi64(
			    _mm256_shuffle_epi8(G, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5,
			                                            8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)),
			    0xD8);
			for (int m = 0; m < MR; m++) {
				__m256i bs = _mm256_loadu_si256((const __m256i *)(xb[m] + Q8K_BSUMS));
				cor[m][n] = _mm256_madd_epi16(bs, C);
				acc[m][n] = k2_mins(kind) ? _mm256_setzero_si256() : cor[m][n];
			}
			for (int k = 0; k < 8; k++) {
				__m256i sv = kq_bcast16(S, k);
				for (int m = 0; m < MR; m++) {
					__m256i xv = _mm256_loadu_si256((const __m256i *)(xb[m] + 32 * k));
					acc[m][n] = DPWSSD256(acc[m][n], _mm256_maddubs_epi16(q[k], xv), sv);
				}
			}
		}
		__m256 dw = _mm256_loadu_ps(dh); // [d of the four rows | their dmin]
		for (int m = 0; m < MR; m++) {
			__m128 xd = _mm_set1_ps(q8k_d(xb[m]));
			if (!k2_mins(kind)) {
				__m128 fd = _mm_cvtepi32_ps(kq_reduce4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]));
				sum[m] = _mm_add_ps(sum[m], _mm_mul_ps(_mm_mul_ps(_mm256_castps256_ps128(dw), xd), fd));
			} else {
				__m256 f = _mm256_cvtepi32_ps(kq_reduce8(acc[m][0], acc[m][1], acc[m][2], acc[m][3], cor[m][0],
				                                         cor[m][1], cor[m][2], cor[m][3]));
				__m256 p = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set_m128(xd, xd)), f); // [d·dots | dmin·mins]
				sum[m] = _mm_add_ps(sum[m], _mm_sub_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps(p, 1)));
			}
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		_mm_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void k2_gemv(int kind, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                        int64_t n0, int64_t n1) {
	int64_t nb = K / QK, rb = nb * k2_bytes(kind);
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 12 <= n1 ? w + (n + 8) * rb : NULL; // the rows after the next four
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) k2_gemv4(kind, out + m * N + n, N, xq + m * nb * Q8K_BYTES, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++) k2_gemv4(kind, out + m * N + n, N, xq + m * nb * Q8K_BYTES, 1, r, nb, valid, m ? NULL : pf);
	}
}

// Prefill (from K2_PACK_MIN activation rows on): kq.c's packed tiles — per
// block of KR weight rows, 64 vectors of four quants from each row, 16 of
// each row's group scale, 8 of its pairs of sums coefficients (C), then d
// and dmin as float32 — and each activation row's groups of four quants
// broadcast, so that every row's block sums build up in its own lane.
#define K2_PACK_MIN 4
#define K2P_W 0
#define K2P_SV (64 * 4 * KR)
#define K2P_CV (80 * 4 * KR)
#define K2P_D (88 * 4 * KR)
#define K2P_DM (89 * 4 * KR)
#define K2P_BLOCK (90 * 4 * KR)

static void k2_pack(int kind, uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const int64_t wb = k2_bytes(kind);
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * K2P_BLOCK;
		for (int h = 0; h < KR / 8; h++) { // eight rows at a time: lanes 8h … 8h+7
			__m256i q[8][8], g0[8], g1[8], c[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * wb;
				__m256i G, C;
				k2_unpack(kind, blk, q[i], &G, &C);
				float d = k2_d(kind, blk), dm = k2_dmin(kind, blk);
				__builtin_memcpy(pb + K2P_D + 4 * (8 * h + i), &d, 4);
				__builtin_memcpy(pb + K2P_DM + 4 * (8 * h + i), &dm, 4);
#if KQ_VNNI
				// each group scale as an int32, groups 0-7 and 8-15
				g0[i] = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(G));
				g1[i] = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(G, 1));
#else
				// each group scale as an int16 pair, groups 0-7 and 8-15
				__m256i lo = _mm256_unpacklo_epi16(G, G), hi = _mm256_unpackhi_epi16(G, G);
				g0[i] = _mm256_permute2x128_si256(lo, hi, 0x20);
				g1[i] = _mm256_permute2x128_si256(lo, hi, 0x31);
#endif
				c[i] = C;
			}
			for (int k = 0; k < 8; k++) {
				__m256i v[8];
				for (int i = 0; i < 8; i++) v[i] = q[i][k];
				kq_t8(o, v);
				for (int j = 0; j < 8; j++)
					_mm256_storeu_si256((__m256i *)(pb + K2P_W + (8 * k + j) * 4 * KR + 32 * h), o[j]);
			}
			kq_t8(o, g0);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + K2P_SV + j * 4 * KR + 32 * h), o[j]);
			kq_t8(o, g1);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + K2P_SV + (8 + j) * 4 * KR + 32 * h), o[j]);
			kq_t8(o, c);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + K2P_CV + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

#define K2_MR (KR == 16 ? 6 : 4) // activation rows at a time

// k2_packed_rows: MR activation rows x[i] (Q8_K rows) against the packed
// tile pk; out[i] gets lanes 0 … valid-1.
TOY_INLINE void k2_packed_rows(int kind, float *const out[], const uint8_t *const x[], int MR, const uint8_t *pk,
                               int64_t nb, int valid) {
	kvf sum[K2_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * K2P_BLOCK;
		const uint8_t *xb[K2_MR];
		kvi acc[K2_MR], cor[K2_MR];
		for (int i = 0; i < MR; i++) xb[i] = x[i] + b * Q8K_BYTES, acc[i] = KV_ZERO(), cor[i] = KV_ZERO();
#if KQ_VNNI
		// vpdpbusd sums each scale's weights (Q5_K: 32, Q3_K and Q2_K: 16),
		// one vpmulld scales them (two sums per row: vpdpbusd's latency)
		const int per = kind == K2_Q5K ? 8 : 4; // groups of four weights per scale
		for (int j = 0; j < 64 / per; j++) {
			kvi sub[2][K2_MR];
			for (int i = 0; i < MR; i++) sub[0][i] = sub[1][i] = KV_ZERO();
			for (int t = 0; t < per; t++) {
				int g = per * j + t;
				kvi wv = KV_LOAD(pb + K2P_W + g * 4 * KR);
				for (int i = 0; i < MR; i++) sub[t & 1][i] = KV_DPBUSD(sub[t & 1][i], wv, KV_BCAST(xb[i] + 4 * g));
			}
			kvi sv = KV_LOAD(pb + K2P_SV + (per / 4 * j) * 4 * KR);
			for (int i = 0; i < MR; i++) acc[i] = KV_ADD(acc[i], KV_MULLO(KV_ADD(sub[0][i], sub[1][i]), sv));
		}
#else
		for (int g = 0; g < 16; g++) {
			kvi sv = KV_LOAD(pb + K2P_SV + g * 4 * KR);
			for (int t = 0; t < 4; t++) {
				kvi wv = KV_LOAD(pb + K2P_W + (4 * g + t) * 4 * KR);
				for (int i = 0; i < MR; i++)
					acc[i] = KV_DPWSSD(acc[i], KV_MADDUBS(wv, KV_BCAST(xb[i] + 16 * g + 4 * t)), sv);
			}
		}
#endif
		for (int j = 0; j < 8; j++) {
			kvi cv = KV_LOAD(pb + K2P_CV + j * 4 * KR);
			for (int i = 0; i < MR; i++) cor[i] = KV_DPWSSD(cor[i], cv, KV_BCAST(xb[i] + Q8K_BSUMS + 4 * j));
		}
		kvf d = KF_LOAD((const float *)(pb + K2P_D));
		if (!k2_mins(kind)) {
			for (int i = 0; i < MR; i++) {
				kvf dx = KF_MUL(d, KF_SET1(q8k_d(xb[i])));
				// acc + cor: the integer dots, Q3_K's −4 included
				sum[i] = KF_ADD(sum[i], KF_MUL(dx, KF_CVT(KV_ADD(acc[i], cor[i]))));
			}
		} else {
			kvf dm = KF_LOAD((const float *)(pb + K2P_DM));
			for (int i = 0; i < MR; i++) {
				kvf xd = KF_SET1(q8k_d(xb[i]));
				kvf dx = KF_MUL(d, xd), dmx = KF_MUL(dm, xd);
				sum[i] = KF_ADD(sum[i], KF_SUB(KF_MUL(dx, KF_CVT(acc[i])), KF_MUL(dmx, KF_CVT(cor[i]))));
			}
		}
	}
	for (int i = 0; i < MR; i++) kf_store(out[i], sum[i], valid);
}

TOY_INLINE void k2_gemm(int kind, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                        int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / QK, rb = nb * k2_bytes(kind), xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n += KR) {
		int valid = (int)(n1 - n < KR ? n1 - n : KR);
		const uint8_t *r[KR];
		for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		k2_pack(kind, pk, r, nb);
		int64_t m = 0;
		for (; m + K2_MR <= M; m += K2_MR) {
			float *o[K2_MR];
			const uint8_t *x[K2_MR];
			for (int i = 0; i < K2_MR; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow;
			k2_packed_rows(kind, o, x, K2_MR, pk, nb, valid);
		}
		for (; m + 2 <= M; m += 2) {
			float *o[2] = {out + m * N + n, out + (m + 1) * N + n};
			const uint8_t *x[2] = {xq + m * xrow, xq + (m + 1) * xrow};
			k2_packed_rows(kind, o, x, 2, pk, nb, valid);
		}
		for (; m < M; m++) {
			float *o[1] = {out + m * N + n};
			const uint8_t *x[1] = {xq + m * xrow};
			k2_packed_rows(kind, o, x, 1, pk, nb, valid);
		}
	}
}

// toy_kq2_scratch: the scratch bytes toy_matmul_q5k/q3k/q2k need for K (one
// packed tile, plus 64 for alignment).
TOY_API int64_t toy_kq2_scratch(int64_t K) { return K / QK * K2P_BLOCK + 64; }

TOY_INLINE void k2_matmul(int kind, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                          int64_t n0, int64_t n1, uint8_t *scratch) {
	if (scratch && M >= K2_PACK_MIN)
		k2_gemm(kind, out, xq, w, M, K, N, n0, n1, kq_align(scratch));
	else
		k2_gemv(kind, out, xq, w, M, K, N, n0, n1);
}

#else

// arm64 and plain x86-64: each weight block unpacked once into signed bytes
// (k2_unpack_ref) and used by up to eight activation rows, in loops the
// compiler vectorizes (NEON / SSE2 multiply-adds), the float steps Go's
// (fused on arm64).
TOY_INLINE void k2_matmul(int kind, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                          int64_t n0, int64_t n1, uint8_t *scratch) {
	int64_t nb = K / QK, wb = k2_bytes(kind), rb = nb * wb, xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		const uint8_t *wr = w + n * rb;
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = wr + b * wb;
				int8_t q[QK];
				int32_t gs[16], cs[16];
				k2_unpack_ref(kind, blk, q, gs, cs);
				float dw = k2_d(kind, blk), dmw = k2_dmin(kind, blk);
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q8K_BYTES;
					const int8_t *x = (const int8_t *)xb;
					int32_t dots = 0, mins = 0;
					for (int g = 0; g < 16; g++) {
						int32_t s = 0;
						for (int k = 0; k < 16; k++) s += (int32_t)q[16 * g + k] * x[16 * g + k];
						dots += gs[g] * s;
						mins += cs[g] * q8k_bsum(xb, g);
					}
					float xd = q8k_d(xb);
					if (k2_mins(kind))
						sum[i] = KQ4_ACC(sum[i], dw * xd, (float)dots, dmw * xd, (float)mins);
					else
						sum[i] = KQ6_ACC(sum[i], dw * xd, (float)dots);
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

TOY_API int64_t toy_kq2_scratch(int64_t K) { return 0; }

#endif

TOY_API void toy_matmul_q5k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	k2_matmul(K2_Q5K, out, xq, w, M, K, N, n0, n1, scratch);
}

TOY_API void toy_matmul_q3k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	k2_matmul(K2_Q3K, out, xq, w, M, K, N, n0, n1, scratch);
}

TOY_API void toy_matmul_q2k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	k2_matmul(K2_Q2K, out, xq, w, M, K, N, n0, n1, scratch);
}

TOY_API int64_t toy_kq2_scratch_ref(int64_t K) { return toy_kq2_scratch(K); }
