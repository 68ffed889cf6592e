// f32.c: matrix multiply with F32 and F16 weights, out[M, N] = x[M, K]·w[N, K]ᵀ.
//
// Every output is toy/tensor's dotF32 of an activation row and a weight row,
// in its exact order: four partial sums s_c over k ≡ c (mod 4), the K mod 4
// tail added to s0, then (s0 + s1) + (s2 + s3) — each product rounded before
// its add on amd64, fused into one FMA on arm64, as the Go compiler does.
// The fast kernels keep that order per output and get their width across
// outputs instead, so they are bit-identical to the reference and to the
// pure-Go backend:
//
//   - one activation row (decode): four weight rows per pass, read as four
//     memory streams (see gemv4).
//   - a few rows (a token and a draft's guesses, batched sampling): a vector
//     holds s0..s3 of VL/4 activation rows, four columns of a weight row
//     broadcast (see small_tile).
//   - several rows (prefill, training): the activations are packed
//     transposed, VL rows per vector lane (toy_pack_x), and each weight
//     element is broadcast: vector acc[j][c] holds s_c of VL outputs of
//     weight row j.
//
// F16 weights are multiplied with activations already rounded to fp16 and
// held as float32 (toy_round_f16), as toy/tensor and llama.cpp do; each weight
// tile is widened to float32 once, into the scratch the caller provides.
#include "toy.h"

#if defined(__aarch64__)
#define MADD(acc, a, b) __builtin_fmaf((a), (b), (acc))
#else
#define MADD(acc, a, b) ((acc) + (a) * (b))
#endif

// dot_go is dotF32.
static float dot_go(const float *a, const float *b, int64_t n) {
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	int64_t i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 = MADD(s0, a[i], b[i]);
		s1 = MADD(s1, a[i + 1], b[i + 1]);
		s2 = MADD(s2, a[i + 2], b[i + 2]);
		s3 = MADD(s3, a[i + 3], b[i + 3]);
	}
	for (; i < n; i++) s0 = MADD(s0, a[i], b[i]);
	return (s0 + s1) + (s2 + s3);
}

// toy_round_f16 rounds n floats to the nearest fp16 value, ties to even.
TOY_API void toy_round_f16_ref(float *dst, const float *src, int64_t n) {
	for (int64_t i = 0; i < n; i++) dst[i] = toy_fp16_f32(toy_f32_fp16(src[i]));
}

#if defined(__F16C__)
// The F16C instructions round the same way (and handle subnormals alike).
TOY_API void toy_round_f16(float *dst, const float *src, int64_t n) {
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT)));
	for (; i < n; i++) dst[i] = toy_fp16_f32(toy_f32_fp16(src[i]));
}
#else
TOY_API void toy_round_f16(float *dst, const float *src, int64_t n) { toy_round_f16_ref(dst, src, n); }
#endif

TOY_API void toy_matmul_f32_ref(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++) out[m * N + n] = dot_go(x + m * K, w + n * K, K);
}

TOY_API void toy_matmul_f16_ref(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t k = 0; k < K; k++) scratch[k] = toy_fp16_f32(w[n * K + k]);
		for (int64_t m = 0; m < M; m++) out[m * N + n] = dot_go(xr + m * K, scratch, K);
	}
}

// The references take x as it is: packing is the identity for them.
TOY_API int64_t toy_pack_threshold_ref(void) { return INT64_MAX; }

TOY_API void toy_pack_x_ref(float *dst, const float *x, int64_t M, int64_t K) {
	for (int64_t i = 0; i < M * K; i++) dst[i] = x[i];
}

// ---- 4-lane vectors: one weight row's four partial sums ----

#if defined(__x86_64__)
typedef __m128 v4;
#define V4LOAD(p) _mm_loadu_ps(p)
#define V4ZERO() _mm_setzero_ps()
#define V4MADD(acc, a, b) _mm_add_ps(acc, _mm_mul_ps(a, b))
#define V4STORE(p, v) _mm_storeu_ps(p, v)
#if defined(__F16C__)
#define V4LOADH(p) _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(p)))
#else
TOY_INLINE v4 v4loadh(const uint16_t *p) {
	return _mm_setr_ps(toy_fp16_f32(p[0]), toy_fp16_f32(p[1]), toy_fp16_f32(p[2]), toy_fp16_f32(p[3]));
}
#define V4LOADH(p) v4loadh(p)
#endif
#elif defined(__aarch64__)
typedef float32x4_t v4;
#define V4LOAD(p) vld1q_f32(p)
#define V4ZERO() vdupq_n_f32(0)
#define V4MADD(acc, a, b) vfmaq_f32(acc, a, b)
#define V4STORE(p, v) vst1q_f32(p, v)
#define V4LOADH(p) vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)))
#endif

// ---- one activation row (decode): four weight rows per pass ----
//
// A decode step reads every weight once, so the GEMV runs at the speed the
// core streams memory. It reads four rows at a time from four places — the
// quarters of its row range — rather than adjacent rows: a core keeps more
// lines in flight over four independent streams (on the SmolLM2-shaped
// model's weights, 15.5 GB/s against 11.9 for eight adjacent rows on one
// AVX-512 core), and each stream is prefetched PF bytes ahead.
//
// gemv4 computes *out[r] = dotF32(x, w[r]) for r < 4. With AVX-512 a vector
// holds the four partial sums of all four rows (128-bit lane r: row r's
// s0..s3): the products of 16 columns of each row are transposed by 128-bit
// blocks so that the four adds of one step are, lane for lane, those of
// dotF32 in its order. AVX2 does the same with two rows per vector; other
// targets keep one 4-lane vector per row.

#define PF 1024

// gemv4_tail finishes row r's partial sums s[0..3] from column k on, in
// dotF32's order, and returns the dot product.
#define DEFINE_GEMV4_TAIL(NAME, WT, WSCALAR)                                                                  \
	TOY_INLINE float NAME(float *s, const float *x, const WT *w, int64_t k, int64_t K) {                    \
		for (; k + 4 <= K; k += 4)                                                                         \
			for (int c = 0; c < 4; c++) s[c] = MADD(s[c], x[k + c], WSCALAR(w[k + c]));                    \
		for (; k < K; k++) s[0] = MADD(s[0], x[k], WSCALAR(w[k]));                                         \
		return (s[0] + s[1]) + (s[2] + s[3]);                                                              \
	}

#define F32_SCALAR(v) (v)
DEFINE_GEMV4_TAIL(gemv4_tail_f32, float, F32_SCALAR)
DEFINE_GEMV4_TAIL(gemv4_tail_f16, uint16_t, toy_fp16_f32)

#define PREFETCH4(w, k, WT)                                                                                   \
	do {                                                                                                   \
		if (((k) * (int64_t)sizeof(WT)) % 64 == 0)                                                         \
			for (int r_ = 0; r_ < 4; r_++) __builtin_prefetch((const char *)((w)[r_] + (k)) + PF, 0, 3);     \
	} while (0)

#if defined(__AVX512F__)
// add4 adds the products p0..p3 of rows 0..3 (16 columns each) to acc, in
// four steps of one 128-bit block of columns: step j adds block j of every
// row, lane r of the step holding row r's.
TOY_INLINE __m512 add4(__m512 acc, __m512 p0, __m512 p1, __m512 p2, __m512 p3) {
	__m512 t0 = _mm512_shuffle_f32x4(p0, p1, 0x44), t1 = _mm512_shuffle_f32x4(p0, p1, 0xee); // p0 b0 b1 | p1 b0 b1; b2 b3
	__m512 t2 = _mm512_shuffle_f32x4(p2, p3, 0x44), t3 = _mm512_shuffle_f32x4(p2, p3, 0xee);
	acc = _mm512_add_ps(acc, _mm512_shuffle_f32x4(t0, t2, 0x88)); // block 0 of rows 0..3
	acc = _mm512_add_ps(acc, _mm512_shuffle_f32x4(t0, t2, 0xdd)); // block 1
	acc = _mm512_add_ps(acc, _mm512_shuffle_f32x4(t1, t3, 0x88)); // block 2
	return _mm512_add_ps(acc, _mm512_shuffle_f32x4(t1, t3, 0xdd)); // block 3
}

#define W16_F32(p) _mm512_loadu_ps(p)
#define W16_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))

#define DEFINE_GEMV4(NAME, WT, W16, TAIL)                                                                     \
	TOY_INLINE void NAME(float *out[4], const float *x, const WT *w[4], int64_t K) {                        \
		__m512 acc = _mm512_setzero_ps();                                                                  \
		int64_t k = 0;                                                                                     \
		for (; k + 16 <= K; k += 16) {                                                                     \
			PREFETCH4(w, k, WT);                                                                           \
			__m512 xv = _mm512_loadu_ps(x + k);                                                            \
			acc = add4(acc, _mm512_mul_ps(xv, W16(w[0] + k)), _mm512_mul_ps(xv, W16(w[1] + k)),            \
			           _mm512_mul_ps(xv, W16(w[2] + k)), _mm512_mul_ps(xv, W16(w[3] + k)));                \
		}                                                                                                  \
		float s[16];                                                                                       \
		_mm512_storeu_ps(s, acc);                                                                          \
		for (int r = 0; r < 4; r++) *out[r] = TAIL(s + 4 * r, x, w[r], k, K);                              \
	}
DEFINE_GEMV4(gemv4_f32, float, W16_F32, gemv4_tail_f32)
DEFINE_GEMV4(gemv4_f16, uint16_t, W16_F16, gemv4_tail_f16)

#elif defined(__AVX2__)
// add2 adds the products p0, p1 of two rows (8 columns each) to acc in two
// steps of one 128-bit block of columns, lane r holding row r's.
TOY_INLINE __m256 add2(__m256 acc, __m256 p0, __m256 p1) {
	acc = _mm256_add_ps(acc, _mm256_permute2f128_ps(p0, p1, 0x20)); // block 0 of rows 0, 1
	return _mm256_add_ps(acc, _mm256_permute2f128_ps(p0, p1, 0x31)); // block 1
}

#define W8_F32(p) _mm256_loadu_ps(p)
#define W8_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))

#define DEFINE_GEMV4(NAME, WT, W8, TAIL)                                                                      \
	TOY_INLINE void NAME(float *out[4], const float *x, const WT *w[4], int64_t K) {                        \
		__m256 a01 = _mm256_setzero_ps(), a23 = _mm256_setzero_ps();                                      \
		int64_t k = 0;                                                                                     \
		for (; k + 8 <= K; k += 8) {                                                                       \
			PREFETCH4(w, k, WT);                                                                           \
			__m256 xv = _mm256_loadu_ps(x + k);                                                            \
			a01 = add2(a01, _mm256_mul_ps(xv, W8(w[0] + k)), _mm256_mul_ps(xv, W8(w[1] + k)));             \
			a23 = add2(a23, _mm256_mul_ps(xv, W8(w[2] + k)), _mm256_mul_ps(xv, W8(w[3] + k)));             \
		}                                                                                                  \
		float s[16];                                                                                       \
		_mm256_storeu_ps(s, a01);                                                                          \
		_mm256_storeu_ps(s + 8, a23);                                                                      \
		for (int r = 0; r < 4; r++) *out[r] = TAIL(s + 4 * r, x, w[r], k, K);                              \
	}
DEFINE_GEMV4(gemv4_f32, float, W8_F32, gemv4_tail_f32)
DEFINE_GEMV4(gemv4_f16, uint16_t, W8_F16, gemv4_tail_f16)

#else
#define DEFINE_GEMV4(NAME, WT, WLOAD, TAIL)                                                                   \
	TOY_INLINE void NAME(float *out[4], const float *x, const WT *w[4], int64_t K) {                        \
		v4 acc[4] = {V4ZERO(), V4ZERO(), V4ZERO(), V4ZERO()};                                              \
		int64_t k = 0;                                                                                     \
		for (; k + 4 <= K; k += 4) {                                                                       \
			PREFETCH4(w, k, WT);                                                                           \
			v4 xv = V4LOAD(x + k);                                                                         \
			for (int r = 0; r < 4; r++) acc[r] = V4MADD(acc[r], xv, WLOAD(w[r] + k));                      \
		}                                                                                                  \
		float s[16];                                                                                       \
		for (int r = 0; r < 4; r++) V4STORE(s + 4 * r, acc[r]);                                            \
		for (int r = 0; r < 4; r++) *out[r] = TAIL(s + 4 * r, x, w[r], k, K);                              \
	}
DEFINE_GEMV4(gemv4_f32, float, V4LOAD, gemv4_tail_f32)
DEFINE_GEMV4(gemv4_f16, uint16_t, V4LOADH, gemv4_tail_f16)
#endif

// gemv runs rows [n0, n1) of w for the M (< toy_pack_threshold()) rows of x:
// pass i takes row n0 + i of each quarter of the range; the rows left over
// (fewer than four) go through gemv4 again with the last one repeated, its
// extra results written to a dummy.
#define DEFINE_GEMV(NAME, WT, GEMV4)                                                                          \
	TOY_INLINE void NAME(float *out, const float *x, const WT *w, int64_t M, int64_t K, int64_t N, int64_t n0, \
	                     int64_t n1) {                                                                     \
		int64_t q = (n1 - n0) / 4;                                                                         \
		float dummy[4];                                                                                    \
		for (int64_t i = 0; i < q + 4; i++) {                                                              \
			int64_t n[4];                                                                                  \
			if (i < q)                                                                                     \
				for (int r = 0; r < 4; r++) n[r] = n0 + r * q + i;                                         \
			else if (n0 + 4 * q + (i - q) < n1)                                                            \
				for (int r = 0; r < 4; r++) n[r] = n0 + 4 * q + (i - q);                                   \
			else                                                                                           \
				break;                                                                                     \
			const WT *wr[4];                                                                               \
			for (int r = 0; r < 4; r++) wr[r] = w + n[r] * K;                                              \
			for (int64_t m = 0; m < M; m++) {                                                              \
				float *o[4];                                                                               \
				for (int r = 0; r < 4; r++) o[r] = i < q || r == 0 ? out + m * N + n[r] : dummy + r;       \
				GEMV4(o, x + m * K, wr, K);                                                                \
			}                                                                                              \
		}                                                                                                  \
	}
DEFINE_GEMV(gemv_f32, float, gemv4_f32)
DEFINE_GEMV(gemv_f16, uint16_t, gemv4_f16)

// toy_dots computes out[s] = dotF32(x, w + s·stride) for s < n — attention's
// scores, x a query and w its keys — four rows per pass.
void toy_dots(float *out, const float *x, const float *w, int64_t K, int64_t stride, int64_t n) {
	float dummy[4];
	for (int64_t s = 0; s < n; s += 4) {
		const float *wr[4];
		float *o[4];
		for (int r = 0; r < 4; r++) {
			wr[r] = w + (s + r < n ? s + r : n - 1) * stride;
			o[r] = s + r < n ? out + s + r : dummy + r;
		}
		gemv4_f32(o, x, wr, K);
	}
}

// ---- VL-lane vectors: VL activation rows, packed transposed ----

#if defined(__AVX512F__)
typedef __m512 vec;
#define VL 16
#define NR 4
#define VLOAD(p) _mm512_loadu_ps(p)
#define VZERO() _mm512_setzero_ps()
#define VSET1(f) _mm512_set1_ps(f)
#define VMADD(acc, a, b) _mm512_add_ps(acc, _mm512_mul_ps(a, b))
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#elif defined(__AVX2__)
typedef __m256 vec;
#define VL 8
#define NR 3
#define VLOAD(p) _mm256_loadu_ps(p)
#define VZERO() _mm256_setzero_ps()
#define VSET1(f) _mm256_set1_ps(f)
#define VMADD(acc, a, b) _mm256_add_ps(acc, _mm256_mul_ps(a, b))
#define VADD(a, b) _mm256_add_ps(a, b)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#elif defined(__x86_64__)
typedef __m128 vec;
#define VL 4
#define NR 3
#define VLOAD(p) _mm_loadu_ps(p)
#define VZERO() _mm_setzero_ps()
#define VSET1(f) _mm_set1_ps(f)
#define VMADD(acc, a, b) _mm_add_ps(acc, _mm_mul_ps(a, b))
#define VADD(a, b) _mm_add_ps(a, b)
#define VSTORE(p, v) _mm_storeu_ps(p, v)
#elif defined(__aarch64__)
typedef float32x4_t vec;
#define VL 4
#define NR 4
#define VLOAD(p) vld1q_f32(p)
#define VZERO() vdupq_n_f32(0)
#define VSET1(f) vdupq_n_f32(f)
#define VMADD(acc, a, b) vfmaq_f32(acc, a, b)
#define VADD(a, b) vaddq_f32(a, b)
#define VSTORE(p, v) vst1q_f32(p, v)
#endif

// toy_pack_x writes x [M, K] transposed in blocks of VL rows: element (m, k)
// goes to dst[(m/VL)·K·VL + k·VL + m%VL]; rows past M are zero. dst holds
// ceil(M/16)·16·K floats (enough for every VL).
TOY_API void toy_pack_x(float *dst, const float *x, int64_t M, int64_t K) {
	for (int64_t mb = 0; mb < M; mb += VL) {
		float *d = dst + mb * K;
		for (int64_t k = 0; k < K; k++)
			for (int l = 0; l < VL; l++) d[k * VL + l] = mb + l < M ? x[(mb + l) * K + k] : 0;
	}
}

// gemm_tile computes out[mb+l, n+j] for l < VL (stored while mb+l < M) and
// j < nr ≤ NR, from packed activations xp (this block's K·VL floats).
TOY_INLINE void gemm_tile(float *out, const float *xp, const float *w, int64_t K, int64_t N, int64_t mvalid, int nr) {
	vec acc[NR][4];
	for (int j = 0; j < nr; j++)
		for (int c = 0; c < 4; c++) acc[j][c] = VZERO();
	int64_t k = 0;
	for (; k + 4 <= K; k += 4)
		for (int c = 0; c < 4; c++) {
			vec xv = VLOAD(xp + (k + c) * VL);
			for (int j = 0; j < nr; j++) acc[j][c] = VMADD(acc[j][c], xv, VSET1(w[j * K + k + c]));
		}
	for (; k < K; k++) {
		vec xv = VLOAD(xp + k * VL);
		for (int j = 0; j < nr; j++) acc[j][0] = VMADD(acc[j][0], xv, VSET1(w[j * K + k]));
	}
	for (int j = 0; j < nr; j++) {
		float s[VL];
		VSTORE(s, VADD(VADD(acc[j][0], acc[j][1]), VADD(acc[j][2], acc[j][3])));
		for (int64_t l = 0; l < mvalid; l++) out[l * N + j] = s[l];
	}
}

// Rows of w per cache block: they stay in L2 while every packed block of x
// passes over them.
#define NB 64

// widen converts n fp16 values to float32.
TOY_INLINE void widen(float *dst, const uint16_t *src, int64_t n) {
	int64_t i = 0;
#if defined(__F16C__)
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#elif defined(__aarch64__)
	for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, V4LOADH(src + i));
#endif
	for (; i < n; i++) dst[i] = toy_fp16_f32(src[i]);
}

// gemm runs over weight rows [n0, n1) of F32 rows wf, or of F16 rows wh
// widened into scratch (NB·K floats) one cache block at a time.
TOY_INLINE void gemm(float *out, const float *xp, const float *wf, const uint16_t *wh, int64_t M, int64_t K,
                     int64_t N, int64_t n0, int64_t n1, float *scratch) {
	for (int64_t nb = n0; nb < n1; nb += NB) {
		int64_t ne = nb + NB < n1 ? nb + NB : n1;
		const float *wblock = wf ? wf + nb * K : scratch;
		if (wh) widen(scratch, wh + nb * K, (ne - nb) * K);
		for (int64_t mb = 0; mb < M; mb += VL) {
			int64_t mvalid = M - mb < VL ? M - mb : VL;
			for (int64_t n = nb; n < ne; n += NR) {
				const float *w = wblock + (n - nb) * K;
				if (ne - n >= NR)
					gemm_tile(out + mb * N + n, xp + mb * K, w, K, N, mvalid, NR);
				else
					gemm_tile(out + mb * N + n, xp + mb * K, w, K, N, mvalid, (int)(ne - n));
			}
		}
	}
}

// ---- a few activation rows (speculative decoding, batched sampling) ----
//
// From 2 rows to SMALL_MAX (toy_pack_threshold() is the next), the rows of
// x are too few to fill the VL lanes of the packed GEMM and too many to run
// the GEMV once per row: that reads each weight once but does every
// product's transposes again for each row. Here a vector holds dotF32's four
// partial sums s0..s3 of MPV = VL/4 activation rows against one weight row:
// lane 4·l + c is s_c of row l. Four columns of a weight row, broadcast to
// every 128-bit block, times four columns of each of the MPV rows (x
// repacked so that they are one load), added in: the order of each sum is
// dotF32's, with no shuffle at all. The tile is 4 weight rows by G ≤ SG
// groups of MPV activation rows. On the SmolLM2-shaped output head (F32,
// 113 MB, one AVX-512 core) 4 rows cost 1.05× one row and 12 rows 1.4×,
// against 1.7× and 3.3× for the GEMV per row and the packed GEMM.
#if VL >= 8
#define MPV (VL / 4)
#if defined(__AVX512F__)
#define SG 3
#define VBCAST4(p) _mm512_broadcast_f32x4(_mm_loadu_ps(p))
#else
#define SG 2
#define VBCAST4(p) _mm256_broadcast_ps((const __m128 *)(p))
#endif
#define SMALL_MAX (SG * MPV) // the most rows the tile takes

// pack_small writes x [M, K] (M ≤ SMALL_MAX) for small_tile: column block
// i of group g (rows g·MPV + l, l < MPV) goes to xs[(g·K/4 + i)·VL + 4·l + c]
// = x[g·MPV + l, 4·i + c]; rows past M are zero. The K mod 4 columns left
// are read from x itself.
TOY_INLINE void pack_small(float *xs, const float *x, int64_t M, int64_t K) {
	int64_t K4 = K / 4, G = (M + MPV - 1) / MPV;
	for (int64_t g = 0; g < G; g++)
		for (int64_t i = 0; i < K4; i++)
			for (int l = 0; l < MPV; l++) {
				int64_t m = g * MPV + l;
				for (int c = 0; c < 4; c++) xs[(g * K4 + i) * VL + 4 * l + c] = m < M ? x[m * K + 4 * i + c] : 0;
			}
}

// small_tile computes out[m, col[j]] for m < M (G groups) and j < nr ≤ 4
// from the packed xs, x itself for the K mod 4 tail, and weight rows w[j].
// F32 rows are broadcast four columns at a time straight from memory; F16
// rows are widened VL columns at a time (VL/4 steps) and each block of four
// broadcast in registers.
// small_block[t] selects block t of four lanes into every block.
static const int32_t small_block[4][16] = {
	{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3},
	{4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7},
	{8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11},
	{12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15},
};
#if defined(__AVX512F__)
#define VLOADH(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VBLOCK(v, t) _mm512_permutexvar_ps(_mm512_loadu_si512(small_block[t]), v)
#else
#define VLOADH(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VBLOCK(v, t) _mm256_permutevar8x32_ps(v, _mm256_loadu_si256((const __m256i *)small_block[t]))
#endif
#define DEFINE_SMALL_TILE(NAME, WT, WSCALAR, WIDE)                                                                 \
	TOY_INLINE void NAME(float *out, const float *xs, const float *x, const WT *const w[], const int64_t col[],   \
	                     int64_t M, int64_t K, int64_t N, int G, int nr) {                                      \
		int64_t K4 = K / 4, i = 0;                                                                              \
		vec acc[4][SG];                                                                                         \
		for (int j = 0; j < nr; j++)                                                                            \
			for (int g = 0; g < G; g++) acc[j][g] = VZERO();                                                    \
		if (WIDE)                                                                                               \
			for (; i + VL / 4 <= K4; i += VL / 4) {                                                             \
				if (i % (64 / (4 * sizeof(WT))) == 0)                                                           \
					for (int j = 0; j < nr; j++) __builtin_prefetch((const char *)(w[j] + 4 * i) + PF, 0, 3);   \
				vec wv[4];                                                                                      \
				for (int j = 0; j < nr; j++) wv[j] = VLOADH(w[j] + 4 * i);                                       \
				for (int t = 0; t < VL / 4; t++) {                                                              \
					vec xv[SG];                                                                                 \
					for (int g = 0; g < G; g++) xv[g] = VLOAD(xs + (g * K4 + i + t) * VL);                      \
					for (int j = 0; j < nr; j++) {                                                              \
						vec wb = VBLOCK(wv[j], t);                                                              \
						for (int g = 0; g < G; g++) acc[j][g] = VMADD(acc[j][g], wb, xv[g]);                    \
					}                                                                                           \
				}                                                                                               \
			}                                                                                                   \
		for (; i < K4; i++) {                                                                                   \
			if (i % (64 / (4 * sizeof(WT))) == 0)                                                               \
				for (int j = 0; j < nr; j++) __builtin_prefetch((const char *)(w[j] + 4 * i) + PF, 0, 3);       \
			vec xv[SG];                                                                                         \
			for (int g = 0; g < G; g++) xv[g] = VLOAD(xs + (g * K4 + i) * VL);                                  \
			for (int j = 0; j < nr; j++) {                                                                      \
				float w4[4];                                                                                    \
				for (int c = 0; c < 4; c++) w4[c] = WSCALAR(w[j][4 * i + c]);                                   \
				vec wb = VBCAST4(w4);                                                                           \
				for (int g = 0; g < G; g++) acc[j][g] = VMADD(acc[j][g], wb, xv[g]);                            \
			}                                                                                                   \
		}                                                                                                       \
		for (int j = 0; j < nr; j++)                                                                            \
			for (int g = 0; g < G; g++) {                                                                       \
				float s[VL];                                                                                    \
				VSTORE(s, acc[j][g]);                                                                           \
				for (int l = 0; l < MPV && g * MPV + l < M; l++) {                                              \
					int64_t m = g * MPV + l;                                                                    \
					float *sc = s + 4 * l;                                                                      \
					for (int64_t k = 4 * K4; k < K; k++) sc[0] = MADD(sc[0], x[m * K + k], WSCALAR(w[j][k]));  \
					out[m * N + col[j]] = (sc[0] + sc[1]) + (sc[2] + sc[3]);                                    \
				}                                                                                               \
			}                                                                                                   \
	}
// F32 rows take the narrow loop only (its broadcast is a plain load).
DEFINE_SMALL_TILE(small_tile_f32, float, F32_SCALAR, 0)
DEFINE_SMALL_TILE(small_tile_f16, uint16_t, toy_fp16_f32, 1)

// small_rows runs a small tile over rows [n0, n1) of w: as the GEMV does, a
// pass takes one row from each quarter of the range, so that the weights
// stream from four places (eight streams, two rows from each quarter, read
// memory slower); the rows left over go in adjacent tiles.
#define DEFINE_SMALL_ROWS(NAME, WT, TILE)                                                                      \
	TOY_INLINE void NAME(float *out, const float *xs, const float *x, const WT *w, int64_t M, int64_t K,     \
	                     int64_t N, int64_t n0, int64_t n1, int G) {                                        \
		int64_t q = (n1 - n0) / 4, n = n0 + 4 * q;                                                          \
		const WT *wr[4];                                                                                    \
		int64_t col[4];                                                                                     \
		for (int64_t i = 0; i < q; i++) {                                                                   \
			for (int j = 0; j < 4; j++) col[j] = n0 + j * q + i, wr[j] = w + col[j] * K;                    \
			TILE(out, xs, x, wr, col, M, K, N, G, 4);                                                       \
		}                                                                                                   \
		for (; n < n1; n += 4) {                                                                            \
			int nr = (int)(n1 - n < 4 ? n1 - n : 4);                                                        \
			for (int j = 0; j < nr; j++) col[j] = n + j, wr[j] = w + col[j] * K;                            \
			TILE(out, xs, x, wr, col, M, K, N, G, nr);                                                      \
		}                                                                                                   \
	}
DEFINE_SMALL_ROWS(small_rows_f32, float, small_tile_f32)
DEFINE_SMALL_ROWS(small_rows_f16, uint16_t, small_tile_f16)

// small runs rows [n0, n1) of w for the M ≤ SMALL_MAX rows of x, packed
// into xs (SMALL_MAX·K floats). G is made a constant in each call so that
// the tiles unroll.
#define DEFINE_SMALL(NAME, WT, ROWS)                                                                           \
	TOY_INLINE void NAME(float *out, const float *x, const WT *w, int64_t M, int64_t K, int64_t N, int64_t n0, \
	                     int64_t n1, float *xs) {                                                            \
		pack_small(xs, x, M, K);                                                                            \
		switch ((M + MPV - 1) / MPV) {                                                                      \
		case 1: ROWS(out, xs, x, w, M, K, N, n0, n1, 1); break;                                             \
		case 2: ROWS(out, xs, x, w, M, K, N, n0, n1, 2); break;                                             \
		SMALL_CASE3(ROWS)                                                                                   \
		}                                                                                                   \
	}
#if SG > 2
#define SMALL_CASE3(ROWS) \
	case 3: ROWS(out, xs, x, w, M, K, N, n0, n1, 3); break;
#else
#define SMALL_CASE3(ROWS)
#endif
DEFINE_SMALL(small_f32, float, small_rows_f32)
DEFINE_SMALL(small_f16, uint16_t, small_rows_f16)
#endif

// toy_pack_threshold is the smallest M for which toy_matmul_f32/f16 take x
// packed by toy_pack_x (below it they take x as it is).
TOY_API int64_t toy_pack_threshold(void) {
#if VL >= 8
	return SMALL_MAX + 1;
#else
	return 2;
#endif
}

// toy_matmul_f32 computes out[m, n] for m < M, n0 ≤ n < n1. From
// toy_pack_threshold() rows on, x must be packed by toy_pack_x. scratch holds
// 16·K floats below toy_pack_threshold() rows (x repacked for a few rows),
// and NB·K from it on for F16 (the widened weights).
TOY_API void toy_matmul_f32(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		gemm(out, x, w, NULL, M, K, N, n0, n1, scratch);
		return;
	}
#if VL >= 8
	if (M >= 2 && M <= SMALL_MAX) {
		small_f32(out, x, w, M, K, N, n0, n1, scratch);
		return;
	}
#endif
	gemv_f32(out, x, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_f16(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		gemm(out, xr, NULL, w, M, K, N, n0, n1, scratch);
		return;
	}
#if VL >= 8
	if (M >= 2 && M <= SMALL_MAX) {
		small_f16(out, xr, w, M, K, N, n0, n1, scratch);
		return;
	}
#endif
	gemv_f16(out, xr, w, M, K, N, n0, n1);
}

// ---- fused multiply-adds (inference only) ----
//
// toy_matmul_f32_fma and toy_matmul_f16_fma give up the Go order for speed:
// each output sums chunks of KC consecutive k, each chunk a running sum of
// fused multiply-adds (c ← fma(x[m,k], w[n,k], c), one rounding per step),
// the chunk sums added in order (s ← s + c). Blocked so, the rounding error
// grows like KC + K/KC rather than K (dotF32's four partial sums: K/4; at
// K = 3072, 112 against 768), for a few percent of the speed. They agree
// with dotF32 to float32 rounding, not bit for bit, so the Go backend calls
// them only where no gradient is computed (see doc.go). Below
// toy_pack_threshold() rows they are toy_matmul_f32/f16 (the decode GEMV
// reads memory at the speed it streams: fusing would not make it faster).
//
// The tile is FM packed blocks of VL activation rows (FM·VL rows) by FN
// weight rows, FM·FN vector accumulators: per k, FM vector loads of x, FN
// broadcasts of w and FM·FN fused multiply-adds — enough independent sums to
// keep both FMA pipes busy through the 4-cycle latency.

#if defined(__FMA__) || defined(__aarch64__)
#define TOY_FMA 1
#define FM 2
#if defined(__AVX512F__)
#define FN 12
#define VFMA(acc, a, b) _mm512_fmadd_ps(a, b, acc)
#elif defined(__AVX2__)
#define FN 6
#define VFMA(acc, a, b) _mm256_fmadd_ps(a, b, acc)
#else
#define FN 8
#define VFMA(acc, a, b) vfmaq_f32(acc, a, b)
#endif
// Rows of w per cache block, a multiple of FN (at most NB, the scratch the
// caller provides for F16).
#define NBF (NB / FN * FN)
#endif

// The references of the fused kernels take x unpacked (toy_pack_threshold_ref
// is never reached). Without FMA instructions (the x86-64 variant) the fused
// kernels are the exact ones, and so are their references.
#if defined(TOY_FMA)
#define KC 64

// dot_fma is one output of the fused kernels: chunk sums of KC fused
// multiply-adds, added in order.
TOY_INLINE float dot_fma(const float *a, const float *b, int64_t n) {
	float s = 0;
	for (int64_t k0 = 0; k0 < n; k0 += KC) {
		float c = 0;
		for (int64_t i = k0; i < n && i < k0 + KC; i++) c = __builtin_fmaf(a[i], b[i], c);
		s += c;
	}
	return s;
}

TOY_API void toy_matmul_f32_fma_ref(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                                    int64_t n0, int64_t n1, float *scratch) {
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++) out[m * N + n] = dot_fma(x + m * K, w + n * K, K);
}

TOY_API void toy_matmul_f16_fma_ref(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                                    int64_t n0, int64_t n1, float *scratch) {
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t k = 0; k < K; k++) scratch[k] = toy_fp16_f32(w[n * K + k]);
		for (int64_t m = 0; m < M; m++) out[m * N + n] = dot_fma(xr + m * K, scratch, K);
	}
}

// fma_tile computes out[mb+l, n+j] for l < fm·VL (stored while < mvalid)
// and j < nr ≤ FN from fm ≤ FM packed blocks xp, xp + VL·K.
TOY_INLINE void fma_tile(float *out, const float *xp, const float *w, int64_t K, int64_t N, int64_t mvalid, int fm,
                         int nr) {
	float tot[FM][FN][VL]; // the sums of the chunks done, in memory: the registers hold acc
	for (int b = 0; b < fm; b++)
		for (int j = 0; j < nr; j++) VSTORE(tot[b][j], VZERO());
	for (int64_t k0 = 0; k0 < K; k0 += KC) {
		int64_t k1 = k0 + KC < K ? k0 + KC : K;
		vec acc[FM][FN];
		for (int b = 0; b < fm; b++)
			for (int j = 0; j < nr; j++) acc[b][j] = VZERO();
		for (int64_t k = k0; k < k1; k++) {
			vec xv[FM];
			for (int b = 0; b < fm; b++) xv[b] = VLOAD(xp + b * VL * K + k * VL);
			for (int j = 0; j < nr; j++) {
				vec wv = VSET1(w[j * K + k]);
				for (int b = 0; b < fm; b++) acc[b][j] = VFMA(acc[b][j], xv[b], wv);
			}
		}
		for (int b = 0; b < fm; b++)
			for (int j = 0; j < nr; j++) VSTORE(tot[b][j], VADD(VLOAD(tot[b][j]), acc[b][j]));
	}
	for (int b = 0; b < fm; b++)
		for (int j = 0; j < nr; j++)
			for (int64_t l = 0; l < VL && b * VL + l < mvalid; l++) out[(b * VL + l) * N + j] = tot[b][j][l];
}

// fma_gemm runs over weight rows [n0, n1) of F32 rows wf, or of F16 rows wh
// widened into scratch (NB·K floats) one cache block at a time.
TOY_INLINE void fma_gemm(float *out, const float *xp, const float *wf, const uint16_t *wh, int64_t M, int64_t K,
                         int64_t N, int64_t n0, int64_t n1, float *scratch) {
	for (int64_t nb = n0; nb < n1; nb += NBF) {
		int64_t ne = nb + NBF < n1 ? nb + NBF : n1;
		const float *wblock = wf ? wf + nb * K : scratch;
		if (wh) widen(scratch, wh + nb * K, (ne - nb) * K);
		for (int64_t mb = 0; mb < M; mb += FM * VL) {
			int64_t mvalid = M - mb < FM * VL ? M - mb : FM * VL;
			float *o = out + mb * N;
			const float *x = xp + mb * K;
			int64_t n = nb;
			switch ((mvalid + VL - 1) / VL) { // fm, constant in each call so that the tile unrolls
#define FMA_TILES(FMC)                                                                                        \
	case FMC:                                                                                                  \
		for (; n + FN <= ne; n += FN) fma_tile(o + n, x, wblock + (n - nb) * K, K, N, mvalid, FMC, FN);      \
		if (n < ne) fma_tile(o + n, x, wblock + (n - nb) * K, K, N, mvalid, FMC, (int)(ne - n));             \
		break;
				FMA_TILES(1)
#if FM > 1
				FMA_TILES(2)
#endif
#if FM > 2
				FMA_TILES(3)
#endif
#if FM > 3
				FMA_TILES(4)
#endif
#undef FMA_TILES
			}
		}
	}
}

// toy_matmul_f32_fma is toy_matmul_f32 with fused multiply-adds from
// toy_pack_threshold() rows on (x packed by toy_pack_x).
TOY_API void toy_matmul_f32_fma(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		fma_gemm(out, x, w, NULL, M, K, N, n0, n1, scratch);
		return;
	}
	toy_matmul_f32(out, x, w, M, K, N, n0, n1, scratch);
}

TOY_API void toy_matmul_f16_fma(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		fma_gemm(out, xr, NULL, w, M, K, N, n0, n1, scratch);
		return;
	}
	toy_matmul_f16(out, xr, w, M, K, N, n0, n1, scratch);
}
#else
TOY_API void toy_matmul_f32_fma_ref(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                                    int64_t n0, int64_t n1, float *scratch) {
	toy_matmul_f32_ref(out, x, w, M, K, N, n0, n1, scratch);
}
TOY_API void toy_matmul_f16_fma_ref(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                                    int64_t n0, int64_t n1, float *scratch) {
	toy_matmul_f16_ref(out, xr, w, M, K, N, n0, n1, scratch);
}
TOY_API void toy_matmul_f32_fma(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	toy_matmul_f32(out, x, w, M, K, N, n0, n1, scratch);
}
TOY_API void toy_matmul_f16_fma(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, float *scratch) {
	toy_matmul_f16(out, xr, w, M, K, N, n0, n1, scratch);
}
#endif

// ---- the gated delta rule (Qwen3.5's linear attention) ----

// toy_dr_args is the shape of a toy_delta_rule call: T tokens of one value
// head of width D; token t's q̂ and k̂ at t·qs, its v and output at t·vs,
// its decay e^g and β at t·gs; scale (1/√D) as float32 bits.
typedef struct {
	int64_t T, D, qs, vs, gs;
	uint32_t scale, pad;
} toy_dr_args;

// toy_delta_rule runs one value head of the gated delta rule over T tokens
// in the rounding of tensor's (*gdnRun).forward: S [D·D] value-major
// (S[j·D + i] = S[i][j]), left after the last token; per token
//
//	S ← e^g S;  u_j = dotF32(S[·][j], k̂);  S[·][j] += k̂ β(v_j − u_j);  o_j = dotF32(S[·][j], q̂)/√D
//
// u is scratch for D floats.
TOY_API void toy_delta_rule(float *S, const float *q, const float *k, const float *v, float *out, const float *decay,
                            const float *beta, float *u, const toy_dr_args *a) {
	const int64_t D = a->D;
	const float scale = toy_bits_f32(a->scale);
	for (int64_t t = 0; t < a->T; t++) {
		const float *qt = q + t * a->qs, *kt = k + t * a->qs, *vt = v + t * a->vs;
		float *ot = out + t * a->vs;
		const float dec = decay[t * a->gs], b = beta[t * a->gs];
		for (int64_t i = 0; i < D * D; i++) S[i] *= dec; // S' = e^g S
		toy_dots(u, kt, S, D, D, D);                     // u_j = Σ_i S'[i][j] k̂_i
		for (int64_t j = 0; j < D; j++) {
			const float d = b * (vt[j] - u[j]);
			float *col = S + j * D;
			for (int64_t i = 0; i < D; i++) col[i] = MADD(col[i], kt[i], d); // S = S' + k̂ dᵀ
		}
		toy_dots(ot, qt, S, D, D, D); // o_j = Σ_i S[i][j] q̂_i
		for (int64_t j = 0; j < D; j++) ot[j] *= scale;
	}
}

// toy_delta_rule_ref is toy_delta_rule with scalar dot products.
TOY_API void toy_delta_rule_ref(float *S, const float *q, const float *k, const float *v, float *out, const float *decay,
                                const float *beta, float *u, const toy_dr_args *a) {
	const int64_t D = a->D;
	const float scale = toy_bits_f32(a->scale);
	for (int64_t t = 0; t < a->T; t++) {
		const float *qt = q + t * a->qs, *kt = k + t * a->qs, *vt = v + t * a->vs;
		float *ot = out + t * a->vs;
		const float dec = decay[t * a->gs], b = beta[t * a->gs];
		for (int64_t j = 0; j < D; j++) {
			float *col = S + j * D;
			for (int64_t i = 0; i < D; i++) col[i] *= dec;
			const float d = b * (vt[j] - dot_go(col, kt, D));
			for (int64_t i = 0; i < D; i++) col[i] = MADD(col[i], kt[i], d);
			ot[j] = dot_go(col, qt, D) * scale;
		}
	}
}
