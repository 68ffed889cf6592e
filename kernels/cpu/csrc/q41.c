// q41.c: Q4_1 and Q5_1 weights × Q8_1 activations, and the Q8_1 quantizer.
//
// Layouts are toy/tensor/quant's (quant41.go): a Q4_1 block of 32 weights is
// {fp16 d, fp16 m, 16 bytes: weight i's nibble in the low half of byte i for
// i < 16, the high half of byte i−16 after} (20 bytes), weight i = d·q_i + m;
// a Q5_1 block {fp16 d, fp16 m, 32-bit word of fifth bits (bit i for weight
// i), the nibbles as in Q4_1} (24 bytes). The activations are Q8_1 blocks
// {fp16 d, fp16 s, int8 q[32]} (36 bytes): d and q as toy_quantize_q8's,
// s = fp16(d·Σq) with the float32 d = amax/127.
//
// out[m, n] is toy/tensor/quant's dotQ41 bit for bit: per block the exact integer
// s = Σ q_w·q_x (the quants are unsigned, 0 … 31: no offset to fold in),
// then sum += float(s)·(fp16(d_w)·fp16(d_x)) and sum += fp16(m_w)·fp16(s_x),
// block after block (each a fused multiply-add on arm64, as Go compiles it).
// The kernels get their width from many outputs at once, as q45.c's do.
#include "quant.h"

#define Q41_BYTES 20
#define Q51_BYTES 24
#define Q81_BYTES 36

#if defined(__aarch64__)
#define Q41_ACC(sum, s, d, m, sx) __builtin_fmaf((m), (sx), __builtin_fmaf((float)(s), (d), (sum)))
#else
#define Q41_ACC(sum, s, d, m, sx) (((sum) + (float)(s) * (d)) + (m) * (sx))
#endif

void toy_quantize_q8(uint8_t *dst, const float *x, int64_t nblocks);
void toy_quantize_q8_ref(uint8_t *dst, const float *x, int64_t nblocks);

// q81_block finishes a Q8_1 block whose d and q a Q8_0 quantizer wrote to
// q8 (34 bytes): s = fp16(amax/127 · Σq).
TOY_INLINE void q81_block(uint8_t *db, const uint8_t *q8, const float *xb) {
	float amax = 0;
	int32_t s = 0;
	for (int i = 0; i < 32; i++) {
		float a = xb[i] < 0 ? -xb[i] : xb[i];
		if (a > amax) amax = a;
		s += (int8_t)q8[2 + i];
	}
	uint16_t h = toy_f32_fp16(amax / 127 * (float)s);
	db[0] = q8[0], db[1] = q8[1], db[2] = (uint8_t)h, db[3] = (uint8_t)(h >> 8);
	__builtin_memcpy(db + 4, q8 + 2, 32);
}

// toy_quantize_q8_1 / _ref write nblocks Q8_1 blocks of x (32 floats each)
// to dst, as quant's quantizeQ8_1: d and q from toy_quantize_q8 (whose
// variants agree bit for bit), s from the block's float maximum.
TOY_API void toy_quantize_q8_1(uint8_t *dst, const float *x, int64_t nblocks) {
	for (int64_t b = 0; b < nblocks; b++) {
		uint8_t q8[Q8_BYTES];
		toy_quantize_q8(q8, x + 32 * b, 1);
		q81_block(dst + b * Q81_BYTES, q8, x + 32 * b);
	}
}

TOY_API void toy_quantize_q8_1_ref(uint8_t *dst, const float *x, int64_t nblocks) {
	for (int64_t b = 0; b < nblocks; b++) {
		uint8_t q8[Q8_BYTES];
		toy_quantize_q8_ref(q8, x + 32 * b, 1);
		q81_block(dst + b * Q81_BYTES, q8, x + 32 * b);
	}
}

// q41_quant returns weight i's quant, 0 … 15 (Q4_1) or 0 … 31 (Q5_1), as
// quant's q4_1Quant / q5_1Quant.
TOY_INLINE int q41_quant(int q5, const uint8_t *blk, int i) {
	const uint8_t *qs = blk + (q5 ? 8 : 4);
	int q = (i < 16 ? qs[i] : qs[i - 16] >> 4) & 0xF;
	if (!q5) return q;
	return q | (kq_u32(blk + 4) >> i & 1) << 4;
}

static float dot_q41_ref(int q5, const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	int64_t wb = q5 ? Q51_BYTES : Q41_BYTES;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * wb, *xb = x + b * Q81_BYTES;
		int32_t s = 0;
		for (int i = 0; i < 32; i++) s += q41_quant(q5, blk, i) * (int32_t)(int8_t)xb[4 + i];
		float d = toy_fp16_f32(toy_load_u16(blk)) * toy_fp16_f32(toy_load_u16(xb));
		sum = Q41_ACC(sum, s, d, toy_fp16_f32(toy_load_u16(blk + 2)), toy_fp16_f32(toy_load_u16(xb + 2)));
	}
	return sum;
}

// toy_matmul_q4_1_ref / toy_matmul_q5_1_ref compute out[m, n] for m < M and
// n0 ≤ n < n1, with xq [M, K] in Q8_1 (toy_quantize_q8_1), w [N, K] in Q4_1
// or Q5_1 and out [M, N] in float32. xsum is unused (toy_matmul_q8's
// signature); scratch, when not NULL, is toy_q41_scratch(K) bytes.
TOY_API void toy_matmul_q4_1_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                 int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q41_ref(0, w + n * nb * Q41_BYTES, xq + m * nb * Q81_BYTES, nb);
}

TOY_API void toy_matmul_q5_1_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                 int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q41_ref(1, w + n * nb * Q51_BYTES, xq + m * nb * Q81_BYTES, nb);
}

#if defined(__AVX2__)

// q41_unpack: the 32 quants of a block as bytes in weight order, 0…15 (Q4_1)
// or 0…31 (Q5_1: the fifth bits spread to bytes by a shuffle, a bit mask and
// a compare).
TOY_INLINE __m256i q41_unpack(int q5, const uint8_t *blk) {
	__m128i v = _mm_loadu_si128((const __m128i *)(blk + (q5 ? 8 : 4)));
	__m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F));
	if (!q5) return q;
	__m256i hb = _mm256_shuffle_epi8(_mm256_set1_epi32((int)kq_u32(blk + 4)),
	                                 _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
	                                                  2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
	const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
	hb = _mm256_cmpeq_epi8(_mm256_and_si256(hb, bit), bit);
	return _mm256_or_si256(q, _mm256_and_si256(hb, _mm256_set1_epi8(0x10)));
}

// q41_halves: fp16 at offset off of eight blocks, as float32 lanes.
TOY_INLINE __m256 q41_halves(const uint8_t *const r[8], int64_t at) {
	__m128i h = _mm_setr_epi16((short)toy_load_u16(r[0] + at), (short)toy_load_u16(r[1] + at),
	                           (short)toy_load_u16(r[2] + at), (short)toy_load_u16(r[3] + at),
	                           (short)toy_load_u16(r[4] + at), (short)toy_load_u16(r[5] + at),
	                           (short)toy_load_u16(r[6] + at), (short)toy_load_u16(r[7] + at));
	return _mm256_cvtph_ps(h);
}

// Decode (fewer than Q41_PACK_MIN activation rows): eight weight rows at a
// time, one vector per row and block; the eight block sums reduce to one
// vector and the float steps run on its eight lanes, one per row.
TOY_INLINE void q41_gemv8(int q5, float *out, int64_t N, const uint8_t *xq, int MR, const uint8_t *const r[8],
                          int64_t nb, int valid, const uint8_t *pf) {
	const int64_t wb = q5 ? Q51_BYTES : Q41_BYTES, xrow = nb * Q81_BYTES;
	__m256 sum[2];
	for (int m = 0; m < MR; m++) sum[m] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 8 * wb; i += 64) __builtin_prefetch(pf + 8 * wb * b + i, 0, 2);
		__m256i q[8];
		for (int j = 0; j < 8; j++) q[j] = q41_unpack(q5, r[j] + b * wb);
		__m256 dw = q41_halves(r, b * wb), mw = q41_halves(r, b * wb + 2);
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = xq + m * xrow + b * Q81_BYTES;
			__m256i xv = _mm256_loadu_si256((const __m256i *)(xb + 4)), p[8];
			for (int j = 0; j < 8; j++) p[j] = DPBUSD256(_mm256_setzero_si256(), q[j], xv);
			__m256i s = kq_reduce8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
			__m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(toy_fp16_f32(toy_load_u16(xb))));
			sum[m] = _mm256_add_ps(sum[m], _mm256_mul_ps(_mm256_cvtepi32_ps(s), d));
			sum[m] = _mm256_add_ps(sum[m], _mm256_mul_ps(mw, _mm256_set1_ps(toy_fp16_f32(toy_load_u16(xb + 2)))));
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[8];
		_mm256_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void q41_gemv(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q51_BYTES : Q41_BYTES);
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		for (int j = 0; j < 8; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 24 <= n1 ? w + (n + 16) * rb : NULL; // the rows after the next eight
		int64_t m = 0;
		for (; m + 2 <= M; m += 2)
			q41_gemv8(q5, out + m * N + n, N, xq + m * nb * Q81_BYTES, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++) q41_gemv8(q5, out + m * N + n, N, xq + m * nb * Q81_BYTES, 1, r, nb, valid, m ? NULL : pf);
	}
}

// Prefill: each tile of KR weight rows is unpacked once into scratch with
// lane k holding row k — per block, 8 vectors of four quants from each row,
// then the KR scales d and minima m as float32 — and each activation row's
// groups of four are broadcast: vpdpbusd (or vpmaddubsw + vpmaddwd) leaves
// every row's block sum in its own lane.
#define Q41_PACK_MIN 4
#define Q41P_D (8 * 4 * KR)
#define Q41P_M (9 * 4 * KR)
#define Q41P_BLOCK (10 * 4 * KR)
#define Q41_MR (KR == 16 ? 6 : 4) // activation rows at a time

static void q41_pack(int q5, uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const int64_t wb = q5 ? Q51_BYTES : Q41_BYTES;
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * Q41P_BLOCK;
		for (int h = 0; h < KR / 8; h++) {
			__m256i v[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * wb;
				v[i] = q41_unpack(q5, blk);
				float d = toy_fp16_f32(toy_load_u16(blk)), m = toy_fp16_f32(toy_load_u16(blk + 2));
				__builtin_memcpy(pb + Q41P_D + 4 * (8 * h + i), &d, 4);
				__builtin_memcpy(pb + Q41P_M + 4 * (8 * h + i), &m, 4);
			}
			kq_t8(o, v);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

TOY_INLINE void q41_packed_rows(float *const out[], const uint8_t *const x[], int MR, const uint8_t *pk, int64_t nb,
                                int valid) {
	kvf sum[Q41_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * Q41P_BLOCK;
		kvi acc[2][Q41_MR]; // two sums per row: vpdpbusd's latency is several cycles
		for (int i = 0; i < MR; i++) acc[0][i] = acc[1][i] = KV_ZERO();
		for (int g = 0; g < 8; g++) {
			kvi wv = KV_LOAD(pb + g * 4 * KR);
			for (int i = 0; i < MR; i++)
				acc[g & 1][i] = KV_DPBUSD(acc[g & 1][i], wv, KV_BCAST(x[i] + b * Q81_BYTES + 4 + 4 * g));
		}
		kvf d = KF_LOAD((const float *)(pb + Q41P_D)), mw = KF_LOAD((const float *)(pb + Q41P_M));
		for (int i = 0; i < MR; i++) {
			const uint8_t *xb = x[i] + b * Q81_BYTES;
			kvf dx = KF_MUL(d, KF_SET1(toy_fp16_f32(toy_load_u16(xb))));
			sum[i] = KF_ADD(sum[i], KF_MUL(KF_CVT(KV_ADD(acc[0][i], acc[1][i])), dx));
			sum[i] = KF_ADD(sum[i], KF_MUL(mw, KF_SET1(toy_fp16_f32(toy_load_u16(xb + 2)))));
		}
	}
	for (int i = 0; i < MR; i++) kf_store(out[i], sum[i], valid);
}

TOY_INLINE void q41_gemm(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q51_BYTES : Q41_BYTES), xrow = nb * Q81_BYTES;
	for (int64_t n = n0; n < n1; n += KR) {
		int valid = (int)(n1 - n < KR ? n1 - n : KR);
		const uint8_t *r[KR];
		for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		q41_pack(q5, pk, r, nb);
		int64_t m = 0;
		for (; m + Q41_MR <= M; m += Q41_MR) {
			float *o[Q41_MR];
			const uint8_t *x[Q41_MR];
			for (int i = 0; i < Q41_MR; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow;
			q41_packed_rows(o, x, Q41_MR, pk, nb, valid);
		}
		for (; m + 2 <= M; m += 2) {
			float *o[2] = {out + m * N + n, out + (m + 1) * N + n};
			const uint8_t *x[2] = {xq + m * xrow, xq + (m + 1) * xrow};
			q41_packed_rows(o, x, 2, pk, nb, valid);
		}
		for (; m < M; m++) {
			float *o[1] = {out + m * N + n};
			const uint8_t *x[1] = {xq + m * xrow};
			q41_packed_rows(o, x, 1, pk, nb, valid);
		}
	}
}

TOY_API int64_t toy_q41_scratch(int64_t K) { return K / 32 * Q41P_BLOCK + 64; }

TOY_API void toy_matmul_q4_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= Q41_PACK_MIN)
		q41_gemm(0, out, xq, w, M, K, N, n0, n1, kq_align(scratch));
	else
		q41_gemv(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q5_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= Q41_PACK_MIN)
		q41_gemm(1, out, xq, w, M, K, N, n0, n1, kq_align(scratch));
	else
		q41_gemv(1, out, xq, w, M, K, N, n0, n1);
}

#elif defined(__aarch64__)

// NEON: four weight rows at a time against one or two activation rows; each
// block's quants (at most 31, so signed bytes as they are) through
// kq_dot16, the four rows' lanes reduced pairwise, and Go's two fused
// multiply-adds on four lanes.
TOY_INLINE void q41_neon_rows(int q5, float *out, int64_t N, const uint8_t *x, int64_t xrow, int MR,
                              const uint8_t *const r[4], int64_t nb, int valid) {
	const int64_t wb = q5 ? Q51_BYTES : Q41_BYTES;
	const uint8x16_t low = vdupq_n_u8(0x0F), five = vdupq_n_u8(0x10);
	const uint8x16_t bits = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
	const uint8x16_t idx0 = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
	const uint8x16_t idx1 = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
	float32x4_t sum[2];
	for (int m = 0; m < MR; m++) sum[m] = vdupq_n_f32(0);
	for (int64_t b = 0; b < nb; b++) {
		int8x16_t x0[2], x1[2];
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = x + m * xrow + b * Q81_BYTES;
			x0[m] = vld1q_s8((const int8_t *)(xb + 4)), x1[m] = vld1q_s8((const int8_t *)(xb + 20));
		}
		int32x4_t p[2][4];
		uint16_t dh[4], mh[4];
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = r[j] + b * wb;
			uint8x16_t v = vld1q_u8(blk + (q5 ? 8 : 4));
			uint8x16_t lo = vandq_u8(v, low), hi = vshrq_n_u8(v, 4);
			if (q5) {
				uint8x16_t t = vreinterpretq_u8_u32(vdupq_n_u32(kq_u32(blk + 4)));
				lo = vorrq_u8(lo, vandq_u8(vtstq_u8(vqtbl1q_u8(t, idx0), bits), five));
				hi = vorrq_u8(hi, vandq_u8(vtstq_u8(vqtbl1q_u8(t, idx1), bits), five));
			}
			int8x16_t w0 = vreinterpretq_s8_u8(lo), w1 = vreinterpretq_s8_u8(hi);
			for (int m = 0; m < MR; m++) p[m][j] = kq_dot16(kq_dot16(vdupq_n_s32(0), w0, x0[m]), w1, x1[m]);
			dh[j] = toy_load_u16(blk), mh[j] = toy_load_u16(blk + 2);
		}
		float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dh)));
		float32x4_t mw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(mh)));
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = x + m * xrow + b * Q81_BYTES;
			float32x4_t s = vcvtq_f32_s32(kq_reduce4(p[m][0], p[m][1], p[m][2], p[m][3]));
			float32x4_t d = vmulq_n_f32(dw, toy_fp16_f32(toy_load_u16(xb)));
			sum[m] = vfmaq_f32(sum[m], s, d);
			sum[m] = vfmaq_n_f32(sum[m], mw, toy_fp16_f32(toy_load_u16(xb + 2)));
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		vst1q_f32(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void q41_neon(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1) {
	int64_t nb = K / 32, rb = nb * (q5 ? Q51_BYTES : Q41_BYTES), xrow = nb * Q81_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) q41_neon_rows(q5, out + m * N + n, N, xq + m * xrow, xrow, 2, r, nb, valid);
		for (; m < M; m++) q41_neon_rows(q5, out + m * N + n, N, xq + m * xrow, xrow, 1, r, nb, valid);
	}
}

TOY_API int64_t toy_q41_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q41_neon(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q5_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q41_neon(1, out, xq, w, M, K, N, n0, n1);
}

#else

// Plain C (x86-64 without AVX2): each block unpacked once into bytes and
// used by up to eight activation rows, in loops the compiler vectorizes.
TOY_INLINE void q41_generic(int q5, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1) {
	int64_t nb = K / 32, wb = q5 ? Q51_BYTES : Q41_BYTES, rb = nb * wb, xrow = nb * Q81_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = w + n * rb + b * wb;
				int8_t q[32];
				const uint8_t *qs = blk + (q5 ? 8 : 4);
				uint32_t qh = q5 ? kq_u32(blk + 4) : 0;
				for (int i = 0; i < 16; i++) {
					q[i] = (int8_t)((qs[i] & 0xF) | (qh >> i & 1) << 4);
					q[i + 16] = (int8_t)((qs[i] >> 4) | (qh >> (i + 16) & 1) << 4);
				}
				float dw = toy_fp16_f32(toy_load_u16(blk)), mw = toy_fp16_f32(toy_load_u16(blk + 2));
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q81_BYTES;
					int32_t s = 0;
					for (int k = 0; k < 32; k++) s += (int32_t)q[k] * (int8_t)xb[4 + k];
					sum[i] = Q41_ACC(sum[i], s, dw * toy_fp16_f32(toy_load_u16(xb)), mw, toy_fp16_f32(toy_load_u16(xb + 2)));
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

TOY_API int64_t toy_q41_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q41_generic(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q5_1(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                             int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	q41_generic(1, out, xq, w, M, K, N, n0, n1);
}

#endif

TOY_API int64_t toy_q41_scratch_ref(int64_t K) { return toy_q41_scratch(K); }
