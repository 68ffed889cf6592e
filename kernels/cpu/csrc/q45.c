// q45.c: Q4_0 and Q5_0 weights × Q8_0 activations.
//
// Layouts are toy/tensor/quant's (quant4.go): a Q4_0 block of 32 weights is
// {fp16 d, 16 bytes: weight i's nibble in the low half of byte i for i < 16,
// the high half of byte i−16 after} (18 bytes), weight i = d·(q_i − 8); a
// Q5_0 block {fp16 d, 32-bit word of fifth bits (bit i for weight i), the
// nibbles as in Q4_0} (22 bytes), weight i = d·(q_i − 16). The activations
// are Q8_0 (toy_quantize_q8), with toy_q8_xsum's 128·Σq per block.
//
// out[m, n] is toy/tensor/quant's dotQ32 bit for bit: per block the exact integer
// s = Σ (q_w − off)·q_x, then sum += float(s)·(fp16(d_w)·fp16(d_x)) in block
// order (fused on arm64, as Go compiles it). The x86 kernels multiply the
// unsigned quants and start each block's sum at −off·Σq_x (from xsum), the
// same integer; NEON's signed dots take q − off.
#include "quant.h"

#define Q40_BYTES 18
#define Q50_BYTES 22

#if defined(__aarch64__)
#define Q45_ACC(sum, s, d) __builtin_fmaf((float)(s), (d), (sum))
#else
#define Q45_ACC(sum, s, d) ((sum) + (float)(s) * (d))
#endif

// q45_quant returns weight i's quant minus its offset, as quant's
// q4_0Quant / q5_0Quant.
TOY_INLINE int q45_quant(int q5, const uint8_t *blk, int i) {
	const uint8_t *qs = blk + (q5 ? 6 : 2);
	int q = (i < 16 ? qs[i] : qs[i - 16] >> 4) & 0xF;
	if (!q5) return q - 8;
	return (q | (kq_u32(blk + 2) >> i & 1) << 4) - 16;
}

static float dot_q45_ref(int q5, const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	int64_t wb = q5 ? Q50_BYTES : Q40_BYTES;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * wb, *xb = x + b * Q8_BYTES;
		int32_t s = 0;
		for (int i = 0; i < 32; i++) s += q45_quant(q5, blk, i) * (int32_t)(int8_t)xb[2 + i];
		sum = Q45_ACC(sum, s, toy_fp16_f32(toy_load_u16(blk)) * toy_fp16_f32(toy_load_u16(xb)));
	}
	return sum;
}

// toy_matmul_q4_0_ref / toy_matmul_q5_0_ref compute out[m, n] for m < M and
// n0 ≤ n < n1, with xq [M, K] in Q8_0, xsum its toy_q8_xsum (M·K/32 int32;
// the fast kernels need it), w [N, K] in Q4_0 or Q5_0 and out [M, N] in
// float32; scratch, when not NULL, is toy_q45_scratch(K) bytes.
TOY_API void toy_matmul_q4_0_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                 int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q45_ref(0, w + n * nb * Q40_BYTES, xq + m * nb * Q8_BYTES, nb);
}

TOY_API void toy_matmul_q5_0_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                 int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q45_ref(1, w + n * nb * Q50_BYTES, xq + m * nb * Q8_BYTES, nb);
}

#if defined(__AVX2__)

// q45_unpack: the 32 quants of a block as bytes in weight order, 0…15 (Q4_0)
// or 0…31 (Q5_0: the fifth bits spread to bytes by a shuffle, a bit mask and
// a compare).
TOY_INLINE __m256i q45_unpack(int q5, const uint8_t *blk) {
	__m128i v = _mm_loadu_si128((const __m128i *)(blk + (q5 ? 6 : 2)));
	__m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F));
	if (!q5) return q;
	__m256i hb = _mm256_shuffle_epi8(_mm256_set1_epi32((int)kq_u32(blk + 2)),
	                                 _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
	                                                  2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
	const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
	hb = _mm256_cmpeq_epi8(_mm256_and_si256(hb, bit), bit);
	return _mm256_or_si256(q, _mm256_and_si256(hb, _mm256_set1_epi8(0x10)));
}

// Decode (fewer than Q45_PACK_MIN activation rows): eight weight rows at a
// time, one vector per row and block; the eight block sums reduce to one
// vector and the float steps run on its eight lanes, one per row.
TOY_INLINE void q45_gemv8(int q5, float *out, int64_t N, const uint8_t *xq, const int32_t *xsum, int MR,
                          const uint8_t *const r[8], int64_t nb, int valid, const uint8_t *pf) {
	const int64_t wb = q5 ? Q50_BYTES : Q40_BYTES, xrow = nb * Q8_BYTES;
	const int sh = q5 ? 3 : 4; // xsum is 128·Σq: off·Σq = xsum >> sh
	__m256 sum[2];
	for (int m = 0; m < MR; m++) sum[m] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 8 * wb; i += 64) __builtin_prefetch(pf + 8 * wb * b + i, 0, 2);
		__m256i q[8];
		for (int j = 0; j < 8; j++) q[j] = q45_unpack(q5, r[j] + b * wb);
		__m128i h = _mm_setr_epi16((short)toy_load_u16(r[0] + b * wb), (short)toy_load_u16(r[1] + b * wb),
		                           (short)toy_load_u16(r[2] + b * wb), (short)toy_load_u16(r[3] + b * wb),
		                           (short)toy_load_u16(r[4] + b * wb), (short)toy_load_u16(r[5] + b * wb),
		                           (short)toy_load_u16(r[6] + b * wb), (short)toy_load_u16(r[7] + b * wb));
		__m256 dw = _mm256_cvtph_ps(h);
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = xq + m * xrow + b * Q8_BYTES;
			__m256i xv = _mm256_loadu_si256((const __m256i *)(xb + 2)), p[8];
			for (int j = 0; j < 8; j++) p[j] = DPBUSD256(_mm256_setzero_si256(), q[j], xv);
			__m256i s = kq_reduce8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
			s = _mm256_sub_epi32(s, _mm256_set1_epi32(xsum[m * nb + b] >> sh));
			__m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(toy_load_u16(xb))));
			sum[m] = _mm256_add_ps(sum[m], _mm256_mul_ps(_mm256_cvtepi32_ps(s), d));
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[8];
		_mm256_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

#if KR == 16
// Q4_0 decode with AVX-512: sixteen weight rows at a time, four to a vector
// (row 4L+k in 128-bit lane L of vector k, so the reduction below lands row j
// in lane j). Each 128-bit lane takes one row's 16 bytes: the low nibbles
// against x[0..15] and the high ones against x[16..31], both broadcast to
// every lane; two unpack-and-add rounds reduce the four rows' four partial
// sums each. The fp16 scales come in the same way, from 16-byte loads at the
// block's start, picked out by the first round's unpacks.
TOY_INLINE __m512i q40_rows4(const uint8_t *const r[16], int k, int64_t off) {
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(r[k] + off)));
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[4 + k] + off)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[8 + k] + off)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[12 + k] + off)), 3);
}

TOY_INLINE void q40_gemv16(float *out, int64_t N, const uint8_t *xq, const int32_t *xsum, int MR,
                           const uint8_t *const r[16], int64_t nb, int valid, const uint8_t *pf) {
	const int64_t xrow = nb * Q8_BYTES;
	const __m512i low = _mm512_set1_epi8(0x0F);
	__m512 sum[2];
	for (int m = 0; m < MR; m++) sum[m] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const int64_t off = b * Q40_BYTES;
		if (pf)
			for (int i = 0; i < 16 * Q40_BYTES; i += 64) __builtin_prefetch(pf + 16 * off + i, 0, 2);
		__m512i lo[4], hi[4], dv[4];
		for (int k = 0; k < 4; k++) {
			__m512i v = q40_rows4(r, k, off + 2);
			lo[k] = _mm512_and_si512(v, low), hi[k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
			dv[k] = q40_rows4(r, k, off);
		}
		// dword 0 of each lane of dv[k] holds row 4L+k's scale in its low half
		__m512i d01 = _mm512_unpacklo_epi32(dv[0], dv[1]), d23 = _mm512_unpacklo_epi32(dv[2], dv[3]);
		__m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_unpacklo_epi64(d01, d23)));
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = xq + m * xrow + b * Q8_BYTES;
			__m512i x0 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xb + 2)));
			__m512i x1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xb + 18)));
			__m512i p[4];
			for (int k = 0; k < 4; k++)
				p[k] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[k], x0), hi[k], x1);
			__m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
			__m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
			__m512i s = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
			s = _mm512_sub_epi32(s, _mm512_set1_epi32(xsum[m * nb + b] >> 4));
			__m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(toy_load_u16(xb))));
			sum[m] = _mm512_add_ps(sum[m], _mm512_mul_ps(_mm512_cvtepi32_ps(s), d));
		}
	}
	for (int m = 0; m < MR; m++) {
		if (valid == 16) {
			_mm512_storeu_ps(out + m * N, sum[m]);
			continue;
		}
		float tmp[16];
		_mm512_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void q40_gemv(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M, int64_t K,
                         int64_t N, int64_t n0, int64_t n1) {
	int64_t nb = K / 32, rb = nb * Q40_BYTES;
	for (int64_t n = n0; n < n1; n += 16) {
		int valid = (int)(n1 - n < 16 ? n1 - n : 16);
		const uint8_t *r[16];
		for (int j = 0; j < 16; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 48 <= n1 ? w + (n + 32) * rb : NULL; // the rows after the next sixteen
		int64_t m = 0;
		for (; m + 2 <= M; m += 2)
			q40_gemv16(out + m * N + n, N, xq + m * nb * Q8_BYTES, xsum + m * nb, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++)
			q40_gemv16(out + m * N + n, N, xq + m * nb * Q8_BYTES, xsum + m * nb, 1, r, nb, valid, m ? NULL : pf);
	}
}
#endif

TOY_INLINE void q45_gemv(int q5, float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M,
                         int64_t K, int64_t N, int64_t n0, int64_t n1) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q50_BYTES : Q40_BYTES);
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		for (int j = 0; j < 8; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 24 <= n1 ? w + (n + 16) * rb : NULL; // the rows after the next eight
		int64_t m = 0;
		for (; m + 2 <= M; m += 2)
			q45_gemv8(q5, out + m * N + n, N, xq + m * nb * Q8_BYTES, xsum + m * nb, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++)
			q45_gemv8(q5, out + m * N + n, N, xq + m * nb * Q8_BYTES, xsum + m * nb, 1, r, nb, valid, m ? NULL : pf);
	}
}

// Prefill: each tile of KR weight rows is unpacked once into scratch with
// lane k holding row k — per block, 8 vectors of four quants from each row,
// then the KR scales as float32 — and each activation row's groups of four
// are broadcast: vpdpbusd (or vpmaddubsw + vpmaddwd) leaves every row's block
// sum in its own lane.
#define Q45_PACK_MIN 4
#define QP_D (8 * 4 * KR)
#define QP_BLOCK (9 * 4 * KR)
#define Q45_MR (KR == 16 ? 6 : 4) // activation rows at a time

static void q45_pack(int q5, uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const int64_t wb = q5 ? Q50_BYTES : Q40_BYTES;
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * QP_BLOCK;
		for (int h = 0; h < KR / 8; h++) {
			__m256i v[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * wb;
				v[i] = q45_unpack(q5, blk);
				float d = _cvtsh_ss(toy_load_u16(blk));
				__builtin_memcpy(pb + QP_D + 4 * (8 * h + i), &d, 4);
			}
			kq_t8(o, v);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

// q45_dpbusd_bcast: acc + wv·(the four bytes at p in every lane). With
// AVX-512, vpdpbusd's embedded broadcast: GCC leaves a separate vpbroadcastd,
// an extra micro-op for each of the loop's dot instructions.
TOY_INLINE kvi q45_dpbusd_bcast(kvi acc, kvi wv, const uint8_t *p) {
#if KR == 16
	__asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(wv), "m"(*(const int32_t *)p));
	return acc;
#else
	return KV_DPBUSD(acc, wv, KV_BCAST(p));
#endif
}

TOY_INLINE void q45_packed_rows(int q5, float *const out[], const uint8_t *const x[], const int32_t *const xs[],
                                int MR, const uint8_t *pk, int64_t nb, int valid) {
	const int sh = q5 ? 3 : 4;
	kvf sum[Q45_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * QP_BLOCK;
		kvi acc[2][Q45_MR]; // two sums per row: vpdpbusd's latency is several cycles
		for (int i = 0; i < MR; i++) acc[0][i] = KV_SET1(-(xs[i][b] >> sh)), acc[1][i] = KV_ZERO();
		for (int g = 0; g < 8; g++) {
			kvi wv = KV_LOAD(pb + g * 4 * KR);
			for (int i = 0; i < MR; i++)
				acc[g & 1][i] = q45_dpbusd_bcast(acc[g & 1][i], wv, x[i] + b * Q8_BYTES + 2 + 4 * g);
		}
		kvf d = KF_LOAD((const float *)(pb + QP_D));
		for (int i = 0; i < MR; i++) {
			kvf dx = KF_MUL(d, KF_SET1(_cvtsh_ss(toy_load_u16(x[i] + b * Q8_BYTES))));
			sum[i] = KF_ADD(sum[i], KF_MUL(KF_CVT(KV_ADD(acc[0][i], acc[1][i])), dx));
		}
	}
	for (int i = 0; i < MR; i++) kf_store(out[i], sum[i], valid);
}

TOY_INLINE void q45_gemm(int q5, float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M,
                         int64_t K, int64_t N, int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q50_BYTES : Q40_BYTES), xrow = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += KR) {
		int valid = (int)(n1 - n < KR ? n1 - n : KR);
		const uint8_t *r[KR];
		for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		q45_pack(q5, pk, r, nb);
		int64_t m = 0;
		for (; m + Q45_MR <= M; m += Q45_MR) {
			float *o[Q45_MR];
			const uint8_t *x[Q45_MR];
			const int32_t *xs[Q45_MR];
			for (int i = 0; i < Q45_MR; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow, xs[i] = xsum + (m + i) * nb;
			q45_packed_rows(q5, o, x, xs, Q45_MR, pk, nb, valid);
		}
		for (; m + 2 <= M; m += 2) {
			float *o[2] = {out + m * N + n, out + (m + 1) * N + n};
			const uint8_t *x[2] = {xq + m * xrow, xq + (m + 1) * xrow};
			const int32_t *xs[2] = {xsum + m * nb, xsum + (m + 1) * nb};
			q45_packed_rows(q5, o, x, xs, 2, pk, nb, valid);
		}
		for (; m < M; m++) {
			float *o[1] = {out + m * N + n};
			const uint8_t *x[1] = {xq + m * xrow};
			const int32_t *xs[1] = {xsum + m * nb};
			q45_packed_rows(q5, o, x, xs, 1, pk, nb, valid);
		}
	}
}

TOY_API int64_t toy_q45_scratch(int64_t K) { return K / 32 * QP_BLOCK + 64; }

TOY_API void toy_matmul_q4_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= Q45_PACK_MIN)
		q45_gemm(0, out, xq, xsum, w, M, K, N, n0, n1, kq_align(scratch));
	else
#if KR == 16
		q40_gemv(out, xq, xsum, w, M, K, N, n0, n1);
#else
		q45_gemv(0, out, xq, xsum, w, M, K, N, n0, n1);
#endif
}

TOY_API void toy_matmul_q5_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= Q45_PACK_MIN)
		q45_gemm(1, out, xq, xsum, w, M, K, N, n0, n1, kq_align(scratch));
	else
		q45_gemv(1, out, xq, xsum, w, M, K, N, n0, n1);
}

#elif defined(__aarch64__)

// NEON: four weight rows at a time against one or two activation rows;
// each block's quants minus their offset as signed bytes, kq_dot16, the four
// rows' lanes reduced pairwise, and Go's fused multiply-add on four lanes.
TOY_INLINE void q45_neon_rows(int q5, float *out, int64_t N, const uint8_t *x, int64_t xrow, int MR,
                              const uint8_t *const r[4], int64_t nb, int valid) {
	const int64_t wb = q5 ? Q50_BYTES : Q40_BYTES;
	const uint8x16_t low = vdupq_n_u8(0x0F), five = vdupq_n_u8(0x10);
	const uint8x16_t bits = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
	const uint8x16_t idx0 = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
	const uint8x16_t idx1 = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
	const int8x16_t off = vdupq_n_s8(q5 ? 16 : 8);
	float32x4_t sum[2];
	for (int m = 0; m < MR; m++) sum[m] = vdupq_n_f32(0);
	for (int64_t b = 0; b < nb; b++) {
		int8x16_t x0[2], x1[2];
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = x + m * xrow + b * Q8_BYTES;
			x0[m] = vld1q_s8((const int8_t *)(xb + 2)), x1[m] = vld1q_s8((const int8_t *)(xb + 18));
		}
		int32x4_t p[2][4];
		uint16_t dh[4];
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = r[j] + b * wb;
			uint8x16_t v = vld1q_u8(blk + (q5 ? 6 : 2));
			uint8x16_t lo = vandq_u8(v, low), hi = vshrq_n_u8(v, 4);
			if (q5) {
				uint8x16_t t = vreinterpretq_u8_u32(vdupq_n_u32(kq_u32(blk + 2)));
				lo = vorrq_u8(lo, vandq_u8(vtstq_u8(vqtbl1q_u8(t, idx0), bits), five));
				hi = vorrq_u8(hi, vandq_u8(vtstq_u8(vqtbl1q_u8(t, idx1), bits), five));
			}
			int8x16_t w0 = vsubq_s8(vreinterpretq_s8_u8(lo), off), w1 = vsubq_s8(vreinterpretq_s8_u8(hi), off);
			for (int m = 0; m < MR; m++) p[m][j] = kq_dot16(kq_dot16(vdupq_n_s32(0), w0, x0[m]), w1, x1[m]);
			dh[j] = toy_load_u16(blk);
		}
		float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dh)));
		for (int m = 0; m < MR; m++) {
			float32x4_t s = vcvtq_f32_s32(kq_reduce4(p[m][0], p[m][1], p[m][2], p[m][3]));
			float32x4_t d = vmulq_n_f32(dw, toy_fp16_f32(toy_load_u16(x + m * xrow + b * Q8_BYTES)));
			sum[m] = vfmaq_f32(sum[m], s, d);
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		vst1q_f32(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void q45_neon(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q50_BYTES : Q40_BYTES), xrow = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) q45_neon_rows(q5, out + m * N + n, N, xq + m * xrow, xrow, 2, r, nb, valid);
		for (; m < M; m++) q45_neon_rows(q5, out + m * N + n, N, xq + m * xrow, xrow, 1, r, nb, valid);
	}
}

TOY_API int64_t toy_q45_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q45_neon(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q5_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q45_neon(1, out, xq, w, M, K, N, n0, n1);
}

#else

// Plain C (x86-64 without AVX2): each block unpacked once into signed bytes
// and used by up to eight activation rows, in loops the compiler vectorizes.
TOY_INLINE void q45_generic(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1) {
	int64_t nb = K / 32, wb = q5 ? Q50_BYTES : Q40_BYTES, rb = nb * wb, xrow = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = w + n * rb + b * wb;
				int8_t q[32];
				const uint8_t *qs = blk + (q5 ? 6 : 2);
				uint32_t qh = q5 ? kq_u32(blk + 2) : 0;
				for (int i = 0; i < 16; i++) {
					q[i] = (int8_t)(((qs[i] & 0xF) | (qh >> i & 1) << 4) - (q5 ? 16 : 8));
					q[i + 16] = (int8_t)(((qs[i] >> 4) | (qh >> (i + 16) & 1) << 4) - (q5 ? 16 : 8));
				}
				float dw = toy_fp16_f32(toy_load_u16(blk));
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q8_BYTES;
					int32_t s = 0;
					for (int k = 0; k < 32; k++) s += (int32_t)q[k] * (int8_t)xb[2 + k];
					sum[i] = Q45_ACC(sum[i], s, dw * toy_fp16_f32(toy_load_u16(xb)));
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

TOY_API int64_t toy_q45_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q45_generic(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q5_0(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q45_generic(1, out, xq, w, M, K, N, n0, n1);
}

#endif

TOY_API int64_t toy_q45_scratch_ref(int64_t K) { return toy_q45_scratch(K); }
