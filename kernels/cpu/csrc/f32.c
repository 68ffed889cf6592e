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
//   - one activation row (decode): a 4-lane vector holds s0..s3 of one
//     weight row; eight rows at a time hide the add latency.
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

// gemv_rows computes out[n] = dot_go(x, w_n) for nr ≤ 8 rows starting at w,
// prefetching the 8 rows at pf (the next call's) as it goes.
#define DEFINE_GEMV(NAME, WT, WLOAD, WSCALAR)                                                                 \
	TOY_INLINE void NAME(float *out, const float *x, const WT *w, int64_t K, int nr, const WT *pf) {        \
		v4 acc[8];                                                                                         \
		for (int r = 0; r < nr; r++) acc[r] = V4ZERO();                                                    \
		int64_t k = 0;                                                                                     \
		for (; k + 4 <= K; k += 4) {                                                                       \
			if (pf && (k & 15) == 0) /* the next 8 rows, 8·K elements, in step */                         \
				for (int i = 0; i < 8 * 16 * (int)sizeof(WT); i += 64)                                     \
					__builtin_prefetch((const char *)(pf + 8 * k) + i, 0, 2);                                  \
			v4 xv = V4LOAD(x + k);                                                                         \
			for (int r = 0; r < nr; r++) acc[r] = V4MADD(acc[r], xv, WLOAD(w + r * K + k));               \
		}                                                                                                  \
		for (int r = 0; r < nr; r++) {                                                                     \
			float s[4];                                                                                    \
			V4STORE(s, acc[r]);                                                                            \
			for (int64_t kk = k; kk < K; kk++) s[0] = MADD(s[0], x[kk], WSCALAR(w[r * K + kk]));           \
			out[r] = (s[0] + s[1]) + (s[2] + s[3]);                                                        \
		}                                                                                                  \
	}

#define F32_SCALAR(v) (v)
DEFINE_GEMV(gemv_f32, float, V4LOAD, F32_SCALAR)
DEFINE_GEMV(gemv_f16, uint16_t, V4LOADH, toy_fp16_f32)

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

// toy_pack_threshold is the smallest M for which toy_matmul_f32/f16 take x
// packed by toy_pack_x (below it they take x as it is).
TOY_API int64_t toy_pack_threshold(void) { return VL / 2 > 2 ? VL / 2 : 2; }

// toy_matmul_f32 computes out[m, n] for m < M, n0 ≤ n < n1. From
// toy_pack_threshold() rows on, x must be packed by toy_pack_x. scratch holds
// NB·K floats (F16 only).
TOY_API void toy_matmul_f32(float *out, const float *x, const float *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		gemm(out, x, w, NULL, M, K, N, n0, n1, scratch);
		return;
	}
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = n0; n < n1; n += 8)
			gemv_f32(out + m * N + n, x + m * K, w + n * K, K, n1 - n < 8 ? (int)(n1 - n) : 8,
			         m == 0 && n + 16 <= n1 ? w + (n + 8) * K : NULL);
}

TOY_API void toy_matmul_f16(float *out, const float *xr, const uint16_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, float *scratch) {
	if (M >= toy_pack_threshold()) {
		gemm(out, xr, NULL, w, M, K, N, n0, n1, scratch);
		return;
	}
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = n0; n < n1; n += 8)
			gemv_f16(out + m * N + n, xr + m * K, w + n * K, K, n1 - n < 8 ? (int)(n1 - n) : 8,
			         m == 0 && n + 16 <= n1 ? w + (n + 8) * K : NULL);
}

