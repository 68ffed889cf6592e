// quant.h: helpers shared by the kernels of the 2- to 6-bit weight types
// (kq.c: Q4_K, Q6_K; kq2.c: Q5_K, Q3_K, Q2_K; q45.c: Q4_0, Q5_0; q41.c:
// Q4_1, Q5_1).
#ifndef TOY_QUANT_H
#define TOY_QUANT_H

#include "toy.h"

TOY_INLINE uint32_t kq_u32(const uint8_t *p) {
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}

// kq_align rounds a scratch pointer up to 64 bytes (callers allot 64 more).
TOY_INLINE uint8_t *kq_align(uint8_t *p) { return (uint8_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

// The Q8_K activation block of the k-quant kernels (toy_quantize_q8k, kq.c):
// 256 int8 q at 0, the int16 sums of each 16 of them at Q8K_BSUMS, float32
// d at Q8K_D, padding to Q8K_BYTES.
#define QK 256
#define Q8K_BYTES 320
#define Q8K_BSUMS 256
#define Q8K_D 288

TOY_INLINE float q8k_d(const uint8_t *xb) {
	float d;
	__builtin_memcpy(&d, xb + Q8K_D, 4);
	return d;
}

TOY_INLINE int16_t q8k_bsum(const uint8_t *xb, int j) {
	int16_t s;
	__builtin_memcpy(&s, xb + Q8K_BSUMS + 2 * j, 2);
	return s;
}

// The float step of a k-quant super-block, as Go computes it: with mins
// (Q4_K, Q5_K, Q2_K) sum += d·dots − dmin·mins, without (Q6_K, Q3_K)
// sum += d·dots, d and dmin already times x.d. On arm64 Go fuses: sum +
// fmsub(d·dots, dmin, mins) (the difference one fused multiply-subtract, the
// sum a plain add), and fma(d, dots, sum).
#if defined(__aarch64__)
#define KQ4_ACC(sum, d, fd, dmin, fm) ((sum) + __builtin_fmaf(-(dmin), (fm), (d) * (fd)))
#define KQ6_ACC(sum, d, fd) __builtin_fmaf((d), (fd), (sum))
#else
#define KQ4_ACC(sum, d, fd, dmin, fm) ((sum) + ((d) * (fd) - (dmin) * (fm)))
#define KQ6_ACC(sum, d, fd) ((sum) + (d) * (fd))
#endif

// q4k_scale_min: sub-block j's six-bit scale and min from the 12 packed bytes
// of a Q4_K or Q5_K block.
TOY_INLINE void q4k_scale_min(const uint8_t *s, int j, int *sc, int *mn) {
	if (j < 4) {
		*sc = s[j] & 63, *mn = s[j + 4] & 63;
	} else {
		*sc = (s[j + 4] & 0xF) | (s[j - 4] >> 6) << 4;
		*mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
	}
}

// q4k_scales unpacks the 12 bytes of six-bit scales and mins: the first four
// of each are the low six bits of bytes 0-3 (scales) and 4-7 (mins); the last
// four take a nibble of bytes 8-11 and the top two bits of bytes 0-3 / 4-7.
// Returns the scales as 8 bytes, *mn the mins.
TOY_INLINE uint64_t q4k_scales(const uint8_t *s, uint64_t *mn) {
	uint32_t u0 = kq_u32(s), u1 = kq_u32(s + 4), u2 = kq_u32(s + 8);
	uint32_t sc_lo = u0 & 0x3f3f3f3f, mn_lo = u1 & 0x3f3f3f3f;
	uint32_t sc_hi = (u2 & 0x0f0f0f0f) | ((u0 >> 2) & 0x30303030);
	uint32_t mn_hi = ((u2 >> 4) & 0x0f0f0f0f) | ((u1 >> 2) & 0x30303030);
	*mn = mn_lo | (uint64_t)mn_hi << 32;
	return sc_lo | (uint64_t)sc_hi << 32;
}

#if defined(__AVX2__)

// 256-bit integer dots: vpdpwssd (int16 pairs) and vpdpbusd (unsigned bytes ×
// signed bytes, four to a lane) where the variant has VNNI, else vpmaddwd
// and vpmaddubsw + vpmaddwd, then an add. The unsigned bytes these kernels
// pass are quants of at most 6 bits, the signed ones activations in
// −127…127: vpmaddubsw's pairs (≤ 2·63·127) never saturate.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define KQ_VNNI 1
#define DPWSSD256(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#define DPBUSD256(acc, a, b) _mm256_dpbusd_epi32((acc), (a), (b))
#elif defined(__AVXVNNI__)
#define KQ_VNNI 1
#define DPWSSD256(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#define DPBUSD256(acc, a, b) _mm256_dpbusd_avx_epi32((acc), (a), (b))
#else
#define KQ_VNNI 0
#define DPWSSD256(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#define DPBUSD256(acc, a, b) \
	_mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((a), (b)), _mm256_set1_epi16(1)))
#endif

// The packed (prefill) kernels put one weight row in each 32-bit lane of a
// vector: KR rows per vector, 16 with AVX-512, else 8.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define KR 16
typedef __m512i kvi;
typedef __m512 kvf;
#define KV_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define KV_BCAST(p) _mm512_set1_epi32((int)kq_u32(p))
#define KV_SET1(v) _mm512_set1_epi32(v)
#define KV_ZERO() _mm512_setzero_si512()
#define KV_ADD(a, b) _mm512_add_epi32((a), (b))
#define KV_MULLO(a, b) _mm512_mullo_epi32((a), (b))
#define KV_MADDUBS(a, b) _mm512_maddubs_epi16((a), (b))
#define KV_DPWSSD(acc, a, b) _mm512_dpwssd_epi32((acc), (a), (b))
#define KV_DPBUSD(acc, a, b) _mm512_dpbusd_epi32((acc), (a), (b))
#define KF_LOAD(p) _mm512_loadu_ps(p)
#define KF_SET1(v) _mm512_set1_ps(v)
#define KF_ZERO() _mm512_setzero_ps()
#define KF_CVT(v) _mm512_cvtepi32_ps(v)
#define KF_MUL(a, b) _mm512_mul_ps((a), (b))
#define KF_ADD(a, b) _mm512_add_ps((a), (b))
#define KF_SUB(a, b) _mm512_sub_ps((a), (b))
#define KF_STORE(p, v) _mm512_storeu_ps((p), (v))
#else
#define KR 8
typedef __m256i kvi;
typedef __m256 kvf;
#define KV_LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define KV_BCAST(p) _mm256_set1_epi32((int)kq_u32(p))
#define KV_SET1(v) _mm256_set1_epi32(v)
#define KV_ZERO() _mm256_setzero_si256()
#define KV_ADD(a, b) _mm256_add_epi32((a), (b))
#define KV_MULLO(a, b) _mm256_mullo_epi32((a), (b))
#define KV_MADDUBS(a, b) _mm256_maddubs_epi16((a), (b))
#define KV_DPWSSD(acc, a, b) DPWSSD256((acc), (a), (b))
#define KV_DPBUSD(acc, a, b) DPBUSD256((acc), (a), (b))
#define KF_LOAD(p) _mm256_loadu_ps(p)
#define KF_SET1(v) _mm256_set1_ps(v)
#define KF_ZERO() _mm256_setzero_ps()
#define KF_CVT(v) _mm256_cvtepi32_ps(v)
#define KF_MUL(a, b) _mm256_mul_ps((a), (b))
#define KF_ADD(a, b) _mm256_add_ps((a), (b))
#define KF_SUB(a, b) _mm256_sub_ps((a), (b))
#define KF_STORE(p, v) _mm256_storeu_ps((p), (v))
#endif

// kf_store writes the first valid lanes of v to o.
TOY_INLINE void kf_store(float *o, kvf v, int valid) {
	if (valid == KR) {
		KF_STORE(o, v);
		return;
	}
	float tmp[KR];
	KF_STORE(tmp, v);
	for (int j = 0; j < valid; j++) o[j] = tmp[j];
}

// q4k_scmn returns the eight scales (bytes 0-7) and eight mins (bytes 8-15)
// of a Q4_K block, or of a Q5_K one (the same first 16 bytes): q4k_scales in
// one vector.
TOY_INLINE __m128i q4k_scmn(const uint8_t *blk) {
	__m128i v = _mm_loadu_si128((const __m128i *)blk); // d, dmin | u0 | u1 | u2
	__m128i u01 = _mm_shuffle_epi32(v, _MM_SHUFFLE(3, 3, 2, 1)), u2 = _mm_shuffle_epi32(v, _MM_SHUFFLE(3, 3, 3, 3));
	__m128i lo = _mm_and_si128(u01, _mm_set1_epi32(0x3f3f3f3f));
	__m128i hi = _mm_or_si128(_mm_and_si128(_mm_srlv_epi32(u2, _mm_setr_epi32(0, 4, 0, 0)), _mm_set1_epi32(0x0f0f0f0f)),
	                          _mm_and_si128(_mm_srli_epi32(u01, 2), _mm_set1_epi32(0x30303030)));
	return _mm_unpacklo_epi32(lo, hi);
}

// kq_bcast16 broadcasts int16 element k of each 128-bit half of S over that half.
TOY_INLINE __m256i kq_bcast16(__m256i S, int k) {
	return _mm256_shuffle_epi8(S, _mm256_set1_epi16((short)(0x0100 + 0x0202 * k)));
}

// The sums of eight vectors of int32, in order.
TOY_INLINE __m256i kq_reduce8(__m256i p0, __m256i p1, __m256i p2, __m256i p3, __m256i p4, __m256i p5, __m256i p6,
                              __m256i p7) {
	__m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
	__m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(p4, p5), _mm256_hadd_epi32(p6, p7));
	return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

// The sums of four vectors of int32, in order.
TOY_INLINE __m128i kq_reduce4(__m256i p0, __m256i p1, __m256i p2, __m256i p3) {
	__m256i e = _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
	return _mm_add_epi32(_mm256_castsi256_si128(e), _mm256_extracti128_si256(e, 1));
}

// kq_t8 transposes eight rows of eight 32-bit words: o[c] lane r = v[r] lane c.
TOY_INLINE void kq_t8(__m256i o[8], const __m256i v[8]) {
	__m256i t[8], s[8];
	for (int i = 0; i < 4; i++) {
		t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
		t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
	}
	for (int i = 0; i < 2; i++) {
		s[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
		s[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
		s[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
		s[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
	}
	for (int i = 0; i < 4; i++) {
		o[i] = _mm256_permute2x128_si256(s[i], s[4 + i], 0x20);
		o[4 + i] = _mm256_permute2x128_si256(s[i], s[4 + i], 0x31);
	}
}

#elif defined(__aarch64__)

// kq_dot16 returns four int32 lanes adding up to Σ w·x over 16 signed bytes:
// sdot where the CPU has it, else widening multiplies (pairs ≤ 2·128·127 fit
// int16) and a pairwise widening add.
TOY_INLINE int32x4_t kq_dot16(int32x4_t acc, int8x16_t w, int8x16_t x) {
#if defined(__ARM_FEATURE_DOTPROD)
	return vdotq_s32(acc, w, x);
#else
	int16x8_t p = vmlal_s8(vmull_s8(vget_low_s8(w), vget_low_s8(x)), vget_high_s8(w), vget_high_s8(x));
	return vpadalq_s16(acc, p);
#endif
}

// The sums of four vectors of int32, in order.
TOY_INLINE int32x4_t kq_reduce4(int32x4_t p0, int32x4_t p1, int32x4_t p2, int32x4_t p3) {
	return vpaddq_s32(vpaddq_s32(p0, p1), vpaddq_s32(p2, p3));
}

#endif

#endif
