// kq.c: Q4_K and Q6_K weights × Q8_K activations, and the Q8_K quantizer.
//
// Layouts are toy/tensor/quant's (kquant.go). A Q4_K super-block of 256 weights is
// {fp16 d, fp16 dmin, 12 bytes of six-bit scales and mins, 128 bytes of
// nibbles} (144 bytes); a Q6_K one {128 bytes of low nibbles, 64 bytes of
// high bit pairs, 16 int8 scales, fp16 d} (210 bytes). The activations are
// quantized per 256 to the Q8_K block of quant.h (Q8K_BYTES = 320): int8 q[256]
// at 0, the int16 sums of each 16 of them at 256, float32 d at 288, padding.
//
// out[m, n] is toy/tensor/quant's dotQ4K / dotQ6K bit for bit: per super-block the
// integer sums are exact — Q4_K: dots = Σ_j scale_j·Σ q_w·q_x over its eight
// sub-blocks of 32 and mins = Σ_j min_j·(bsums[2j] + bsums[2j+1]); Q6_K:
// dots = Σ_g scale_g·Σ (q_w − 32)·q_x over its sixteen groups of 16 — and the
// float operations are Go's, in Go's order, one super-block after another:
//
//	Q4_K: sum += (fp16(d)·x.d)·dots − (fp16(dmin)·x.d)·mins
//	Q6_K: sum += (fp16(d)·x.d)·dots
//
// with the fused multiply-adds the Go compiler emits on arm64 (KQ4_ACC,
// KQ6_ACC). The x86 kernels keep the weights unsigned (Q6_K's q in 0…63, for
// vpmaddubsw and vpdpbusd) and fold the −32 into the start of the sum as
// −32·Σ_g scale_g·bsums_g, the same integer; NEON's signed dots take q − 32.
// All get their width from many outputs at once, never by reordering one
// output's float sum.
//
// Decode (fewer than KQ_PACK_MIN activation rows) unpacks each weight block
// in registers and uses it at once; prefill repacks tiles of weight rows into
// scratch (toy_kq_scratch bytes) so that each vector lane holds one row.
#include "quant.h"

#define Q4K_BYTES 144
#define Q6K_BYTES 210

// ---------------------------------------------------------------------------
// The Q8_K quantizer.

// toy_quantize_q8k_ref writes nblocks Q8_K blocks of x (256 floats each) to
// dst, as quant's quantizeQ8K: max = the first element of largest |x| (sign
// kept), iscale = −127/max, q = min(127, round-half-even(iscale·x)),
// d = 1/iscale, bsums the sums of each 16 q; all zero when max is 0.
TOY_API void toy_quantize_q8k_ref(uint8_t *dst, const float *x, int64_t nblocks) {
	for (int64_t b = 0; b < nblocks; b++) {
		const float *xb = x + b * QK;
		uint8_t *db = dst + b * Q8K_BYTES;
		float amax = 0, max = 0;
		for (int i = 0; i < QK; i++) {
			float a = xb[i] < 0 ? -xb[i] : xb[i];
			if (a > amax) amax = a, max = xb[i];
		}
		int8_t q[QK];
		int16_t bs[QK / 16];
		float d = 0;
		if (amax != 0) {
			float iscale = -127.0f / max;
			for (int i = 0; i < QK; i++) {
				float v = iscale * xb[i];
				v = (v + 12582912.0f) - 12582912.0f; // round half to even for |v| < 2²²
				if (v > 127) v = 127;
				q[i] = (int8_t)(int32_t)v;
			}
			for (int j = 0; j < QK / 16; j++) {
				int s = 0;
				for (int i = 0; i < 16; i++) s += q[16 * j + i];
				bs[j] = (int16_t)s;
			}
			d = 1 / iscale;
		} else {
			for (int i = 0; i < QK; i++) q[i] = 0;
			for (int j = 0; j < QK / 16; j++) bs[j] = 0;
		}
		__builtin_memcpy(db, q, QK);
		__builtin_memcpy(db + Q8K_BSUMS, bs, sizeof bs);
		__builtin_memcpy(db + Q8K_D, &d, 4);
		for (int i = Q8K_D + 4; i < Q8K_BYTES; i++) db[i] = 0;
	}
}

#if defined(__AVX2__)

// The block maximum in vectors, the first element reaching it by compare
// masks, the products x·iscale in vectors rounded half to even by the
// conversion (the default rounding mode), saturated to int8 (127 caps as
// min(127, ·) does; nothing reaches −128), and the sums of 16 by vpmaddubsw
// against ones.
static void q8k_block(uint8_t *db, const float *xb) {
	const __m256 sign = _mm256_set1_ps(-0.0f);
	__m256 m = _mm256_setzero_ps();
	for (int i = 0; i < QK; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i)));
	__m128 h4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h4 = _mm_max_ps(h4, _mm_movehl_ps(h4, h4));
	h4 = _mm_max_ss(h4, _mm_movehdup_ps(h4));
	float amax = _mm_cvtss_f32(h4);
	if (!(amax != 0)) {
		for (int i = 0; i < Q8K_BYTES; i += 32) _mm256_storeu_si256((__m256i *)(db + i), _mm256_setzero_si256());
		return;
	}
	__m256 va = _mm256_set1_ps(amax);
	int at = 0;
	for (int i = 0; i < QK; i += 8) {
		int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i)), va, _CMP_EQ_OQ));
		if (mask) {
			at = i + __builtin_ctz((unsigned)mask);
			break;
		}
	}
	float iscale = -127.0f / xb[at];
	__m256 vs = _mm256_set1_ps(iscale);
	const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
	__m256i t[8];
	for (int g = 0; g < 8; g++) {
		__m256i q[4];
		for (int j = 0; j < 4; j++) q[j] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 32 * g + 8 * j), vs));
		__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
		p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
		_mm256_storeu_si256((__m256i *)(db + 32 * g), p);
		// lanes 0-3: partial sums of group 2g, lanes 4-7 of group 2g+1
		t[g] = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, p), ones16);
	}
	// hadd twice: [G0 G2 G4 G6 | G1 G3 G5 G7] and [G8 … G14 | G9 … G15]
	__m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(t[0], t[1]), _mm256_hadd_epi32(t[2], t[3]));
	__m256i c = _mm256_hadd_epi32(_mm256_hadd_epi32(t[4], t[5]), _mm256_hadd_epi32(t[6], t[7]));
	__m256i s = _mm256_packs_epi32(a, c); // [G0 G2 … G14 | G1 G3 … G15] as int16
	__m128i ev = _mm256_castsi256_si128(s), od = _mm256_extracti128_si256(s, 1);
	_mm_storeu_si128((__m128i *)(db + Q8K_BSUMS), _mm_unpacklo_epi16(ev, od));
	_mm_storeu_si128((__m128i *)(db + Q8K_BSUMS + 16), _mm_unpackhi_epi16(ev, od));
	float d = 1 / iscale;
	__builtin_memcpy(db + Q8K_D, &d, 4);
	for (int i = Q8K_D + 4; i < Q8K_BYTES; i++) db[i] = 0;
}

#elif defined(__aarch64__)

static void q8k_block(uint8_t *db, const float *xb) {
	float32x4_t m = vdupq_n_f32(0);
	for (int i = 0; i < QK; i += 4) m = vmaxq_f32(m, vabsq_f32(vld1q_f32(xb + i)));
	float amax = vmaxvq_f32(m);
	if (!(amax != 0)) {
		for (int i = 0; i < Q8K_BYTES; i += 16) vst1q_u8(db + i, vdupq_n_u8(0));
		return;
	}
	float32x4_t va = vdupq_n_f32(amax);
	int at = 0;
	for (int i = 0; i < QK; i += 4) {
		if (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(xb + i)), va))) {
			at = i;
			while (!(xb[at] == amax || -xb[at] == amax)) at++;
			break;
		}
	}
	float iscale = -127.0f / xb[at];
	int16_t bs[16];
	for (int g = 0; g < 16; g++) {
		int16x8_t s16[2];
		for (int h = 0; h < 2; h++) {
			const float *p = xb + 16 * g + 8 * h;
			s16[h] = vcombine_s16(vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(p), iscale))),
			                      vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(p + 4), iscale))));
		}
		int8x16_t q = vcombine_s8(vqmovn_s16(s16[0]), vqmovn_s16(s16[1]));
		vst1q_s8((int8_t *)db + 16 * g, q);
		bs[g] = vaddlvq_s8(q);
	}
	__builtin_memcpy(db + Q8K_BSUMS, bs, sizeof bs);
	float d = 1 / iscale;
	__builtin_memcpy(db + Q8K_D, &d, 4);
	for (int i = Q8K_D + 4; i < Q8K_BYTES; i++) db[i] = 0;
}

#endif

TOY_API void toy_quantize_q8k(uint8_t *dst, const float *x, int64_t nblocks) {
#if defined(__AVX2__) || defined(__aarch64__)
	for (int64_t b = 0; b < nblocks; b++) q8k_block(dst + b * Q8K_BYTES, x + b * QK);
#else
	toy_quantize_q8k_ref(dst, x, nblocks);
#endif
}

// ---------------------------------------------------------------------------
// The references: Go's loops.

static float dot_q4k_ref(const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * Q4K_BYTES, *xb = x + b * Q8K_BYTES;
		const int8_t *xq = (const int8_t *)xb;
		int32_t dots = 0, mins = 0;
		for (int j = 0; j < 8; j++) {
			int sc, mn;
			q4k_scale_min(blk + 4, j, &sc, &mn);
			const uint8_t *qs = blk + 16 + j / 2 * 32;
			int32_t dot = 0;
			for (int i = 0; i < 32; i++) dot += (j % 2 ? qs[i] >> 4 : qs[i] & 0xF) * (int32_t)xq[32 * j + i];
			dots += sc * dot;
			mins += mn * ((int32_t)q8k_bsum(xb, 2 * j) + q8k_bsum(xb, 2 * j + 1));
		}
		float xd = q8k_d(xb);
		float d = toy_fp16_f32(toy_load_u16(blk)) * xd, dmin = toy_fp16_f32(toy_load_u16(blk + 2)) * xd;
		sum = KQ4_ACC(sum, d, (float)dots, dmin, (float)mins);
	}
	return sum;
}

// q6k_quant: weight i's six-bit quant minus 32, as quant's q6KQuant.
TOY_INLINE int q6k_quant(const uint8_t *blk, int i) {
	int half = i / 128, r = i % 128, k = r / 32, l = r % 32;
	int lo = blk[half * 64 + l + 32 * (k % 2)];
	if (k >= 2) lo >>= 4;
	int hi = blk[128 + half * 32 + l] >> (2 * k) & 3;
	return ((lo & 0xF) | hi << 4) - 32;
}

static float dot_q6k_ref(const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * Q6K_BYTES, *xb = x + b * Q8K_BYTES;
		const int8_t *xq = (const int8_t *)xb;
		int32_t dots = 0;
		for (int j = 0; j < 16; j++) {
			int32_t dot = 0;
			for (int i = 16 * j; i < 16 * (j + 1); i++) dot += q6k_quant(blk, i) * (int32_t)xq[i];
			dots += (int8_t)blk[192 + j] * dot;
		}
		float d = toy_fp16_f32(toy_load_u16(blk + 208)) * q8k_d(xb);
		sum = KQ6_ACC(sum, d, (float)dots);
	}
	return sum;
}

// toy_matmul_q4k_ref / toy_matmul_q6k_ref compute out[m, n] for m < M and
// n0 ≤ n < n1, with xq [M, K] in Q8_K blocks (toy_quantize_q8k), w [N, K]
// in Q4_K or Q6_K and out [M, N] in float32. xsum is unused (the signature
// is toy_matmul_q8's); scratch, when not NULL, is toy_kq_scratch(K) bytes
// for the fast kernels.
TOY_API void toy_matmul_q4k_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q4k_ref(w + n * nb * Q4K_BYTES, xq + m * nb * Q8K_BYTES, nb);
}

TOY_API void toy_matmul_q6k_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_q6k_ref(w + n * nb * Q6K_BYTES, xq + m * nb * Q8K_BYTES, nb);
}

// ---------------------------------------------------------------------------
// x86: AVX2, with the VNNI instructions where the variant has them.

#if defined(__AVX2__)

// q4k_unpack: the 256 quants of a Q4_K block as bytes 0…15 in weight order
// (vector k = sub-block k); G the scale of each group of 16 weights and C
// the min of each (sub-block j's twice), as int16.
TOY_INLINE void q4k_unpack(const uint8_t *blk, __m256i q[8], __m256i *G, __m256i *C) {
	const __m256i low = _mm256_set1_epi8(0x0F);
	for (int p = 0; p < 4; p++) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * p));
		q[2 * p] = _mm256_and_si256(v, low);
		q[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
	}
	uint64_t mn, sc = q4k_scales(blk + 4, &mn);
	__m128i s = _mm_cvtsi64_si128((long long)sc), m = _mm_cvtsi64_si128((long long)mn);
	*G = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(s, s));
	*C = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m, m));
}

// q6k_unpack: the 256 quants of a Q6_K block as bytes 0…63 (not yet minus
// 32) in weight order; G the 16 group scales and C = −32·G, as int16.
TOY_INLINE void q6k_unpack(const uint8_t *blk, __m256i q[8], __m256i *G, __m256i *C) {
	const __m256i low = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
	for (int h = 0; h < 2; h++) {
		__m256i l0 = _mm256_loadu_si256((const __m256i *)(blk + 64 * h));
		__m256i l1 = _mm256_loadu_si256((const __m256i *)(blk + 64 * h + 32));
		__m256i hb = _mm256_loadu_si256((const __m256i *)(blk + 128 + 32 * h));
		q[4 * h] = _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(hb, 4), m30));
		q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(hb, 2), m30));
		q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(hb, m30));
		q[4 * h + 3] =
		    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low), _mm256_and_si256(_mm256_srli_epi16(hb, 2), m30));
	}
	*G = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
	*C = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(*G, 5));
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)

// AVX-512 decode of Q6_K: eight weight rows at a time, 64 weights per vector
// (64 bytes of low nibbles and the high bit pairs broadcast and shifted per
// half), the block's activations held in four registers, each 16-weight
// group's scale in its 128-bit lane. Each row's lanes fold to eight, the eight
// rows' sums reduce together, and the float steps run on eight lanes. Q4_K:
// q4k_gemv16 below.

TOY_INLINE __m256i kq_fold(__m512i v) {
	return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
}

TOY_INLINE void q6k_gemv8(float *out, const uint8_t *x, const uint8_t *const r[8], int64_t nb, int valid,
                          const uint8_t *pf) {
	const int64_t wb = Q6K_BYTES;
	const __m512i low = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
	const __m512i sh42 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1); // 4 | 2
	const __m512i sh02 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1); // 0 | 2
	// vpermw indices putting group 4p + L's scale in lane L
	const __m512i i0 = _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0,
	                                    0, 0, 0, 0, 0);
	const __m512i gi[4] = {i0, _mm512_add_epi16(i0, _mm512_set1_epi16(4)), _mm512_add_epi16(i0, _mm512_set1_epi16(8)),
	                       _mm512_add_epi16(i0, _mm512_set1_epi16(12))};
	__m256 sum = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 8 * wb; i += 64) __builtin_prefetch(pf + 8 * wb * b + i, 0, 2);
		const uint8_t *xb = x + b * Q8K_BYTES;
		__m512i X[4];
		for (int p = 0; p < 4; p++) X[p] = _mm512_loadu_si512(xb + 64 * p);
		__m256i bs = _mm256_loadu_si256((const __m256i *)(xb + Q8K_BSUMS));
		__m256i f[8];
		uint16_t dh[8];
		for (int n = 0; n < 8; n++) {
			const uint8_t *blk = r[n] + b * wb;
			__m512i w[4], sv[4];
			for (int h = 0; h < 2; h++) {
				__m512i ql = _mm512_loadu_si512(blk + 64 * h);
				__m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + 128 + 32 * h)));
				w[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, low), _mm512_and_si512(_mm512_sllv_epi16(hb, sh42), m30));
				w[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low),
				                               _mm512_and_si512(_mm512_srlv_epi16(hb, sh02), m30));
			}
			__m256i G = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
			for (int p = 0; p < 4; p++) sv[p] = _mm512_permutexvar_epi16(gi[p], _mm512_castsi256_si512(G));
			// −32·Σ scale·bsums: the quants' offset
			__m256i mv = _mm256_madd_epi16(bs, _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(G, 5)));
			dh[n] = toy_load_u16(blk + 208);
			// two sums: vpdpwssd's latency is several cycles
			__m512i a0 = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_maddubs_epi16(w[0], X[0]), sv[0]);
			__m512i a1 = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_maddubs_epi16(w[1], X[1]), sv[1]);
			a0 = _mm512_dpwssd_epi32(a0, _mm512_maddubs_epi16(w[2], X[2]), sv[2]);
			a1 = _mm512_dpwssd_epi32(a1, _mm512_maddubs_epi16(w[3], X[3]), sv[3]);
			f[n] = _mm256_add_epi32(kq_fold(_mm512_add_epi32(a0, a1)), mv);
		}
		__m256 xd = _mm256_set1_ps(q8k_d(xb));
		__m256 fd = _mm256_cvtepi32_ps(kq_reduce8(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]));
		__m256 d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh)), xd);
		sum = _mm256_add_ps(sum, _mm256_mul_ps(d, fd));
	}
	float tmp[8];
	_mm256_storeu_ps(tmp, sum);
	for (int j = 0; j < valid; j++) out[j] = tmp[j];
}

// Q4_K decode, sixteen weight rows a pass laid out as q40_gemv16 does: lane
// L of vector k holds row 4L + k, sixteen quants of it against the matching
// sixteen activations broadcast to every lane. The scales and mins come from
// the rows' 16-byte block heads, q4k_scmn lane by lane, each sub-block's
// scale zero-extended over its row's lane by vpshufb; the vpmaddubsw of a
// sub-block's two halves add in int16 (≤ 4·15·127) before vpdpwssd by the
// scale. The rows' four partial sums (and mins) reduce by unpack-and-add
// rounds into row order, and the float steps run on sixteen lanes.

// kq_rows4: the 16 bytes at off of rows k, 4 + k, 8 + k and 12 + k.
TOY_INLINE __m512i kq_rows4(const uint8_t *const r[16], int k, int64_t off) {
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(r[k] + off)));
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[4 + k] + off)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[8 + k] + off)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[12 + k] + off)), 3);
}

// kq_sum4: lane L of the result holds the sums of the four dwords of lane L
// of p0, p1, p2 and p3, in that order.
TOY_INLINE __m512i kq_sum4(__m512i p0, __m512i p1, __m512i p2, __m512i p3) {
	__m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(p0, p1), _mm512_unpackhi_epi32(p0, p1));
	__m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(p2, p3), _mm512_unpackhi_epi32(p2, p3));
	return _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
}

TOY_INLINE void q4k_gemv16(float *out, const uint8_t *x, const uint8_t *const r[16], int64_t nb, int valid,
                           const uint8_t *pf) {
	const __m512i low = _mm512_set1_epi8(0x0F), m3f = _mm512_set1_epi8(0x3f), m0f = low, m30 = _mm512_set1_epi8(0x30);
	const __m512i sh = _mm512_broadcast_i32x4(_mm_setr_epi32(0, 4, 0, 0));
	// vpshufb controls: the eight mins (bytes 8-15) as int16; scale j over the lane
	const __m512i cmn = _mm512_broadcast_i32x4(
	    _mm_setr_epi8(8, -128, 9, -128, 10, -128, 11, -128, 12, -128, 13, -128, 14, -128, 15, -128));
	__m512i cs[8];
	for (int j = 0; j < 8; j++) cs[j] = _mm512_set1_epi16((short)(0x8000 | j));
	__m512 sum = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const int64_t off = b * Q4K_BYTES;
		if (pf)
			for (int i = 0; i < 16 * Q4K_BYTES; i += 64) __builtin_prefetch(pf + 16 * off + i, 0, 2);
		const uint8_t *xb = x + b * Q8K_BYTES;
		// bsums[2j] + bsums[2j + 1], the activations of sub-block j, as int16
		__m256i bp = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(xb + Q8K_BSUMS)), _mm256_set1_epi16(1));
		__m512i BP = _mm512_broadcast_i32x4(_mm_packs_epi32(_mm256_castsi256_si128(bp), _mm256_extracti128_si256(bp, 1)));
		__m512i H[4], acc[4], mac[4];
		for (int k = 0; k < 4; k++) {
			__m512i h = kq_rows4(r, k, off);
			__m512i u01 = _mm512_shuffle_epi32(h, _MM_SHUFFLE(3, 3, 2, 1));
			__m512i u2 = _mm512_shuffle_epi32(h, _MM_SHUFFLE(3, 3, 3, 3));
			__m512i S = _mm512_unpacklo_epi32(
			    _mm512_and_si512(u01, m3f), _mm512_or_si512(_mm512_and_si512(_mm512_srlv_epi32(u2, sh), m0f),
			                                                 _mm512_and_si512(_mm512_srli_epi32(u01, 2), m30)));
			mac[k] = _mm512_madd_epi16(_mm512_shuffle_epi8(S, cmn), BP);
			__m512i a = _mm512_setzero_si512();
			for (int p = 0; p < 4; p++) {
				const uint8_t *xp = xb + 64 * p;
				__m512i v0 = kq_rows4(r, k, off + 16 + 32 * p), v1 = kq_rows4(r, k, off + 32 + 32 * p);
				__m512i x00 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)xp));
				__m512i x01 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xp + 16)));
				__m512i x10 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xp + 32)));
				__m512i x11 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(xp + 48)));
				__m512i e = _mm512_add_epi16(_mm512_maddubs_epi16(_mm512_and_si512(v0, low), x00),
				                             _mm512_maddubs_epi16(_mm512_and_si512(v1, low), x01));
				__m512i o = _mm512_add_epi16(_mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(v0, 4), low), x10),
				                             _mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(v1, 4), low), x11));
				a = _mm512_dpwssd_epi32(a, e, _mm512_shuffle_epi8(S, cs[2 * p]));
				a = _mm512_dpwssd_epi32(a, o, _mm512_shuffle_epi8(S, cs[2 * p + 1]));
			}
			H[k] = h, acc[k] = a;
		}
		__m512 fd = _mm512_cvtepi32_ps(kq_sum4(acc[0], acc[1], acc[2], acc[3]));
		__m512 fm = _mm512_cvtepi32_ps(kq_sum4(mac[0], mac[1], mac[2], mac[3]));
		// dword 0 of each lane of H[k] holds row 4L + k's d and dmin
		__m512i dd = _mm512_unpacklo_epi64(_mm512_unpacklo_epi32(H[0], H[1]), _mm512_unpacklo_epi32(H[2], H[3]));
		__m512 xd = _mm512_set1_ps(q8k_d(xb));
		__m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd)), xd);
		__m512 dm = _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16))), xd);
		sum = _mm512_add_ps(sum, _mm512_sub_ps(_mm512_mul_ps(d, fd), _mm512_mul_ps(dm, fm)));
	}
	if (valid == 16) {
		_mm512_storeu_ps(out, sum);
		return;
	}
	float tmp[16];
	_mm512_storeu_ps(tmp, sum);
	for (int j = 0; j < valid; j++) out[j] = tmp[j];
}

TOY_INLINE void kq_gemv(int q6, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                        int64_t n0, int64_t n1) {
	int64_t nb = K / QK, rb = nb * (q6 ? Q6K_BYTES : Q4K_BYTES);
	if (!q6) {
		for (int64_t n = n0; n < n1; n += 16) {
			int valid = (int)(n1 - n < 16 ? n1 - n : 16);
			const uint8_t *r[16];
			for (int j = 0; j < 16; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
			const uint8_t *pf = n + 48 <= n1 ? w + (n + 32) * rb : NULL; // the rows after the next sixteen
			for (int64_t m = 0; m < M; m++) q4k_gemv16(out + m * N + n, xq + m * nb * Q8K_BYTES, r, nb, valid, m ? NULL : pf);
		}
		return;
	}
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		for (int j = 0; j < 8; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 24 <= n1 ? w + (n + 16) * rb : NULL; // the rows after the next eight
		for (int64_t m = 0; m < M; m++) q6k_gemv8(out + m * N + n, xq + m * nb * Q8K_BYTES, r, nb, valid, m ? NULL : pf);
	}
}

#else

// Decode (one or two activation rows): four weight rows at a time, each
// block unpacked in registers and used at once. Vector k of a block holds
// 32 weights; vpmaddubsw (unsigned weights × signed x, pairs ≤ 2·63·127 fit
// int16) and vpmaddwd by the scale of each group (or vpdpwssd) give int32
// lanes that add up to Σ scale·q_w·q_x; the lanes of the four rows' sums (and
// Q4_K's mins) reduce together, and the float steps run on four lanes, one
// per row, each lane Go's scalar arithmetic.
#define KQ_GEMV_MR 2

TOY_INLINE void kq_gemv4(int q6, float *out, int64_t N, const uint8_t *xq, int MR, const uint8_t *const r[4],
                         int64_t nb, int valid, const uint8_t *pf) {
	const int64_t xrow = nb * Q8K_BYTES, wb = q6 ? Q6K_BYTES : Q4K_BYTES;
	__m128 sum[KQ_GEMV_MR];
	for (int m = 0; m < MR; m++) sum[m] = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 4 * wb; i += 64) __builtin_prefetch(pf + 4 * wb * b + i, 0, 2);
		const uint8_t *xb[KQ_GEMV_MR];
		for (int m = 0; m < MR; m++) xb[m] = xq + m * xrow + b * Q8K_BYTES;
		__m256i acc[KQ_GEMV_MR][4], cor[KQ_GEMV_MR][4];
		uint16_t dh[8];
		for (int n = 0; n < 4; n++) {
			const uint8_t *blk = r[n] + b * wb;
			__m256i q[8], G, C;
			if (q6) {
				q6k_unpack(blk, q, &G, &C);
				dh[n] = toy_load_u16(blk + 208);
			} else {
				q4k_unpack(blk, q, &G, &C);
				dh[n] = toy_load_u16(blk), dh[4 + n] = toy_load_u16(blk + 2);
			}
			// S: the scale of group 2k in int16 element k of the low half,
			// of group 2k+1 in the high half (Q4_K: both sub-block k's)
			__m256i S = _mm256_permute4x64_epi64(
			    _mm256_shuffle_epi8(G, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5,
			                                            8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)),
			    0xD8);
			for (int m = 0; m < MR; m++) {
				__m256i bs = _mm256_loadu_si256((const __m256i *)(xb[m] + Q8K_BSUMS));
				cor[m][n] = _mm256_madd_epi16(bs, C);
				acc[m][n] = q6 ? cor[m][n] : _mm256_setzero_si256();
			}
			for (int k = 0; k < 8; k++) {
				__m256i sv = kq_bcast16(S, k);
				for (int m = 0; m < MR; m++) {
					__m256i xv = _mm256_loadu_si256((const __m256i *)(xb[m] + 32 * k));
					acc[m][n] = DPWSSD256(acc[m][n], _mm256_maddubs_epi16(q[k], xv), sv);
				}
			}
		}
		for (int m = 0; m < MR; m++) {
			__m128 xd = _mm_set1_ps(q8k_d(xb[m]));
			if (q6) {
				__m128 fd = _mm_cvtepi32_ps(kq_reduce4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]));
				__m128 d = _mm_mul_ps(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)dh)), xd);
				sum[m] = _mm_add_ps(sum[m], _mm_mul_ps(d, fd));
			} else {
				__m256 f = _mm256_cvtepi32_ps(kq_reduce8(acc[m][0], acc[m][1], acc[m][2], acc[m][3], cor[m][0],
				                                         cor[m][1], cor[m][2], cor[m][3]));
				__m256 d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh)),
				                         _mm256_set_m128(xd, xd));
				__m256 p = _mm256_mul_ps(d, f); // [d·dots | dmin·mins]
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

TOY_INLINE void kq_gemv(int q6, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                        int64_t n0, int64_t n1) {
	int64_t nb = K / QK, rb = nb * (q6 ? Q6K_BYTES : Q4K_BYTES);
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 12 <= n1 ? w + (n + 8) * rb : NULL; // the rows after the next four
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) kq_gemv4(q6, out + m * N + n, N, xq + m * nb * Q8K_BYTES, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++) kq_gemv4(q6, out + m * N + n, N, xq + m * nb * Q8K_BYTES, 1, r, nb, valid, m ? NULL : pf);
	}
}

#endif

// Prefill (from KQ_PACK_MIN activation rows on): each tile of KR weight rows
// is unpacked once into scratch with vector lane k holding row k — per block,
// 64 vectors of four quants from each row, 16 vectors of each row's group
// scale (as an int16 pair), 8 vectors of its bsums coefficients (Q4_K's mins,
// Q6_K's −32·scales, as int16 pairs), then d and dmin as float32 — and each
// activation row's groups of four quants are broadcast: vpmaddubsw and
// vpmaddwd (vpdpwssd) leave every row's block sum in its own lane, with no
// reduction at all, and the float steps run on KR lanes.
#define KQ_PACK_MIN 4
#define KP_W 0                    // 64 groups of four quants
#define KP_SV (64 * 4 * KR)       // 16 group scales
#define KP_CV (80 * 4 * KR)       // 8 pairs of bsums coefficients
#define KP_D (88 * 4 * KR)        // d
#define KP_DM (89 * 4 * KR)       // dmin
#define KP_BLOCK (90 * 4 * KR)    // bytes per block of a packed tile

// kq_pack writes the packed tile of rows r[0..KR-1], all nb blocks, to pk.
static void kq_pack(int q6, uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const int64_t wb = q6 ? Q6K_BYTES : Q4K_BYTES;
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * KP_BLOCK;
		for (int h = 0; h < KR / 8; h++) { // eight rows at a time: lanes 8h … 8h+7
			__m256i q[8][8], g0[8], g1[8], c[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * wb;
				__m256i G, C;
				if (q6) {
					q6k_unpack(blk, q[i], &G, &C);
					float d = toy_fp16_f32(toy_load_u16(blk + 208));
					__builtin_memcpy(pb + KP_D + 4 * (8 * h + i), &d, 4);
				} else {
					q4k_unpack(blk, q[i], &G, &C);
					float d = toy_fp16_f32(toy_load_u16(blk)), dm = toy_fp16_f32(toy_load_u16(blk + 2));
					__builtin_memcpy(pb + KP_D + 4 * (8 * h + i), &d, 4);
					__builtin_memcpy(pb + KP_DM + 4 * (8 * h + i), &dm, 4);
				}
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
					_mm256_storeu_si256((__m256i *)(pb + KP_W + (8 * k + j) * 4 * KR + 32 * h), o[j]);
			}
			kq_t8(o, g0);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + KP_SV + j * 4 * KR + 32 * h), o[j]);
			kq_t8(o, g1);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + KP_SV + (8 + j) * 4 * KR + 32 * h), o[j]);
			kq_t8(o, c);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + KP_CV + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

#define KQ_MR (KR == 16 ? 6 : 4) // activation rows at a time

// kq_packed_rows: MR activation rows x[i] (Q8_K rows) against the packed
// tile pk; out[i] gets lanes 0 … valid-1.
TOY_INLINE void kq_packed_rows(int q6, float *const out[], const uint8_t *const x[], int MR, const uint8_t *pk,
                               int64_t nb, int valid) {
	kvf sum[KQ_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * KP_BLOCK;
		const uint8_t *xb[KQ_MR];
		kvi acc[KQ_MR], cor[KQ_MR];
		for (int i = 0; i < MR; i++) xb[i] = x[i] + b * Q8K_BYTES, acc[i] = KV_ZERO(), cor[i] = KV_ZERO();
#if KQ_VNNI
		// vpdpbusd sums each scale's weights (Q4_K: 32, Q6_K: 16), one
		// vpmulld scales them: fewer instructions than the pairs below
		const int per = q6 ? 4 : 8; // groups of four weights per scale
		// (two sums per row: vpdpbusd's latency is several cycles)
		for (int j = 0; j < 64 / per; j++) {
			kvi sub[2][KQ_MR];
			for (int i = 0; i < MR; i++) sub[0][i] = sub[1][i] = KV_ZERO();
			for (int t = 0; t < per; t++) {
				int g = per * j + t;
				kvi wv = KV_LOAD(pb + KP_W + g * 4 * KR);
				for (int i = 0; i < MR; i++) sub[t & 1][i] = KV_DPBUSD(sub[t & 1][i], wv, KV_BCAST(xb[i] + 4 * g));
			}
			kvi sv = KV_LOAD(pb + KP_SV + (per / 4 * j) * 4 * KR);
			for (int i = 0; i < MR; i++) acc[i] = KV_ADD(acc[i], KV_MULLO(KV_ADD(sub[0][i], sub[1][i]), sv));
		}
#else
		for (int g = 0; g < 16; g++) {
			kvi sv = KV_LOAD(pb + KP_SV + g * 4 * KR);
			for (int t = 0; t < 4; t++) {
				kvi wv = KV_LOAD(pb + KP_W + (4 * g + t) * 4 * KR);
				for (int i = 0; i < MR; i++)
					acc[i] = KV_DPWSSD(acc[i], KV_MADDUBS(wv, KV_BCAST(xb[i] + 16 * g + 4 * t)), sv);
			}
		}
#endif
		for (int j = 0; j < 8; j++) {
			kvi cv = KV_LOAD(pb + KP_CV + j * 4 * KR);
			for (int i = 0; i < MR; i++) cor[i] = KV_DPWSSD(cor[i], cv, KV_BCAST(xb[i] + Q8K_BSUMS + 4 * j));
		}
		kvf d = KF_LOAD((const float *)(pb + KP_D));
		if (q6) {
			for (int i = 0; i < MR; i++) {
				kvf dx = KF_MUL(d, KF_SET1(q8k_d(xb[i])));
				// acc + cor: the integer dots, their −32 included
				sum[i] = KF_ADD(sum[i], KF_MUL(dx, KF_CVT(KV_ADD(acc[i], cor[i]))));
			}
		} else {
			kvf dm = KF_LOAD((const float *)(pb + KP_DM));
			for (int i = 0; i < MR; i++) {
				kvf xd = KF_SET1(q8k_d(xb[i]));
				kvf dx = KF_MUL(d, xd), dmx = KF_MUL(dm, xd);
				sum[i] = KF_ADD(sum[i], KF_SUB(KF_MUL(dx, KF_CVT(acc[i])), KF_MUL(dmx, KF_CVT(cor[i]))));
			}
		}
	}
	for (int i = 0; i < MR; i++) {
		if (valid == KR) {
			KF_STORE(out[i], sum[i]);
		} else {
			float tmp[KR];
			KF_STORE(tmp, sum[i]);
			for (int j = 0; j < valid; j++) out[i][j] = tmp[j];
		}
	}
}

TOY_INLINE void kq_gemm(int q6, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                    int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / QK, rb = nb * (q6 ? Q6K_BYTES : Q4K_BYTES), xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n += KR) {
		int valid = (int)(n1 - n < KR ? n1 - n : KR);
		const uint8_t *r[KR];
		for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		kq_pack(q6, pk, r, nb);
		int64_t m = 0;
		for (; m + KQ_MR <= M; m += KQ_MR) {
			float *o[KQ_MR];
			const uint8_t *x[KQ_MR];
			for (int i = 0; i < KQ_MR; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow;
			kq_packed_rows(q6, o, x, KQ_MR, pk, nb, valid);
		}
		for (; m + 2 <= M; m += 2) {
			float *o[2] = {out + m * N + n, out + (m + 1) * N + n};
			const uint8_t *x[2] = {xq + m * xrow, xq + (m + 1) * xrow};
			kq_packed_rows(q6, o, x, 2, pk, nb, valid);
		}
		for (; m < M; m++) {
			float *o[1] = {out + m * N + n};
			const uint8_t *x[1] = {xq + m * xrow};
			kq_packed_rows(q6, o, x, 1, pk, nb, valid);
		}
	}
}

// toy_kq_scratch: the scratch bytes toy_matmul_q4k/q6k need for K (one
// packed tile, plus 64 for alignment).
TOY_API int64_t toy_kq_scratch(int64_t K) { return K / QK * KP_BLOCK + 64; }

TOY_API void toy_matmul_q4k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= KQ_PACK_MIN)
		kq_gemm(0, out, xq, w, M, K, N, n0, n1, kq_align(scratch));
	else
		kq_gemv(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q6k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	if (scratch && M >= KQ_PACK_MIN)
		kq_gemm(1, out, xq, w, M, K, N, n0, n1, kq_align(scratch));
	else
		kq_gemv(1, out, xq, w, M, K, N, n0, n1);
}

#elif defined(__aarch64__)

// NEON: four weight rows at a time against one or two activation rows, each
// block unpacked once into signed bytes (Q6_K's quants minus 32 already) for
// both rows and multiplied 16 at a time (kq_dot16), each group's four int32
// lanes scaled by its scale (vmlaq_n_s32); the four rows' lanes reduce
// pairwise and the float steps run on four lanes with Go's fused
// multiply-adds.
#define KQ_NEON_MR 2

TOY_INLINE void q4k_dot_neon(int32x4_t acc[], const uint8_t *blk, const int8_t *const xq[], int MR, uint64_t sc) {
	const uint8x16_t low = vdupq_n_u8(0x0F);
	for (int m = 0; m < MR; m++) acc[m] = vdupq_n_s32(0);
	for (int p = 0; p < 4; p++) {
		uint8x16_t v0 = vld1q_u8(blk + 16 + 32 * p), v1 = vld1q_u8(blk + 32 + 32 * p);
		int8x16_t l0 = vreinterpretq_s8_u8(vandq_u8(v0, low)), l1 = vreinterpretq_s8_u8(vandq_u8(v1, low));
		int8x16_t h0 = vreinterpretq_s8_u8(vshrq_n_u8(v0, 4)), h1 = vreinterpretq_s8_u8(vshrq_n_u8(v1, 4));
		int32_t s0 = (int32_t)(sc >> (16 * p) & 0xFF), s1 = (int32_t)(sc >> (16 * p + 8) & 0xFF);
		for (int m = 0; m < MR; m++) {
			const int8_t *x = xq[m] + 64 * p;
			int32x4_t lo = kq_dot16(kq_dot16(vdupq_n_s32(0), l0, vld1q_s8(x)), l1, vld1q_s8(x + 16));
			int32x4_t hi = kq_dot16(kq_dot16(vdupq_n_s32(0), h0, vld1q_s8(x + 32)), h1, vld1q_s8(x + 48));
			acc[m] = vmlaq_n_s32(vmlaq_n_s32(acc[m], lo, s0), hi, s1);
		}
	}
}

TOY_INLINE int32x4_t q4k_mins_neon(const uint8_t *xb, uint64_t mn) {
	int16x8_t b0 = vld1q_s16((const int16_t *)(xb + Q8K_BSUMS)), b1 = vld1q_s16((const int16_t *)(xb + Q8K_BSUMS + 16));
	uint8x8_t m8 = vcreate_u8(mn);
	int16x8_t c0 = vreinterpretq_s16_u16(vmovl_u8(vzip1_u8(m8, m8))); // mins of groups 0-7: min 0, 0, 1, 1, …
	int16x8_t c1 = vreinterpretq_s16_u16(vmovl_u8(vzip2_u8(m8, m8)));
	int32x4_t s = vmull_s16(vget_low_s16(b0), vget_low_s16(c0));
	s = vmlal_high_s16(s, b0, c0);
	s = vmlal_s16(s, vget_low_s16(b1), vget_low_s16(c1));
	return vmlal_high_s16(s, b1, c1);
}

TOY_INLINE void q6k_dot_neon(int32x4_t acc[], const uint8_t *blk, const int8_t *const xq[], int MR) {
	const uint8x16_t low = vdupq_n_u8(0x0F), m30 = vdupq_n_u8(0x30);
	const int8x16_t off = vdupq_n_s8(32);
	for (int m = 0; m < MR; m++) acc[m] = vdupq_n_s32(0);
	for (int h = 0; h < 2; h++) {
		for (int e = 0; e < 2; e++) { // the two 16-byte halves of each 32
			uint8x16_t l0 = vld1q_u8(blk + 64 * h + 16 * e), l1 = vld1q_u8(blk + 64 * h + 32 + 16 * e);
			uint8x16_t hb = vld1q_u8(blk + 128 + 32 * h + 16 * e);
			uint8x16_t q[4] = {
			    vorrq_u8(vandq_u8(l0, low), vandq_u8(vshlq_n_u8(hb, 4), m30)),
			    vorrq_u8(vandq_u8(l1, low), vandq_u8(vshlq_n_u8(hb, 2), m30)),
			    vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(hb, m30)),
			    vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(vshrq_n_u8(hb, 2), m30)),
			};
			for (int k = 0; k < 4; k++) {
				int g = 8 * h + 2 * k + e; // weights 16g … 16g+15
				int8x16_t wq = vsubq_s8(vreinterpretq_s8_u8(q[k]), off);
				int32_t sc = (int8_t)blk[192 + g];
				for (int m = 0; m < MR; m++)
					acc[m] = vmlaq_n_s32(acc[m], kq_dot16(vdupq_n_s32(0), wq, vld1q_s8(xq[m] + 16 * g)), sc);
			}
		}
	}
}

TOY_INLINE void kq_neon_rows(int q6, float *out, int64_t N, const uint8_t *x, int64_t xrow, int MR,
                             const uint8_t *const r[4], int64_t nb, int valid) {
	const int64_t wb = q6 ? Q6K_BYTES : Q4K_BYTES;
	float32x4_t sum[KQ_NEON_MR];
	for (int m = 0; m < MR; m++) sum[m] = vdupq_n_f32(0);
	for (int64_t b = 0; b < nb; b++) {
		const int8_t *xb[KQ_NEON_MR];
		for (int m = 0; m < MR; m++) xb[m] = (const int8_t *)(x + m * xrow + b * Q8K_BYTES);
		int32x4_t dv[4][KQ_NEON_MR], mv[4][KQ_NEON_MR];
		uint16_t dh[4], dmh[4];
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = r[j] + b * wb;
			if (q6) {
				q6k_dot_neon(dv[j], blk, xb, MR);
				dh[j] = toy_load_u16(blk + 208);
			} else {
				uint64_t mn, sc = q4k_scales(blk + 4, &mn);
				q4k_dot_neon(dv[j], blk, xb, MR, sc);
				for (int m = 0; m < MR; m++) mv[j][m] = q4k_mins_neon((const uint8_t *)xb[m], mn);
				dh[j] = toy_load_u16(blk), dmh[j] = toy_load_u16(blk + 2);
			}
		}
		float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dh)));
		float32x4_t dmw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dmh)));
		for (int m = 0; m < MR; m++) {
			float32x4_t xd = vdupq_n_f32(q8k_d((const uint8_t *)xb[m]));
			float32x4_t fd = vcvtq_f32_s32(kq_reduce4(dv[0][m], dv[1][m], dv[2][m], dv[3][m]));
			float32x4_t d = vmulq_f32(dw, xd);
			if (q6) {
				sum[m] = vfmaq_f32(sum[m], d, fd);
			} else {
				float32x4_t fm = vcvtq_f32_s32(kq_reduce4(mv[0][m], mv[1][m], mv[2][m], mv[3][m]));
				sum[m] = vaddq_f32(sum[m], vfmsq_f32(vmulq_f32(d, fd), vmulq_f32(dmw, xd), fm));
			}
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		vst1q_f32(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void kq_neon(int q6, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                        int64_t n0, int64_t n1) {
	int64_t nb = K / QK, rb = nb * (q6 ? Q6K_BYTES : Q4K_BYTES), xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) kq_neon_rows(q6, out + m * N + n, N, xq + m * xrow, xrow, 2, r, nb, valid);
		for (; m < M; m++) kq_neon_rows(q6, out + m * N + n, N, xq + m * xrow, xrow, 1, r, nb, valid);
	}
}

TOY_API int64_t toy_kq_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	kq_neon(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q6k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	kq_neon(1, out, xq, w, M, K, N, n0, n1);
}

#else

// Plain C (x86-64 without AVX2): each weight block unpacked once into signed
// bytes and group scales, then used by up to eight activation rows, in loops
// the compiler vectorizes (SSE2 multiply-adds of int16).
TOY_INLINE void kq_generic(int q6, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                           int64_t n0, int64_t n1) {
	int64_t nb = K / QK, wb = q6 ? Q6K_BYTES : Q4K_BYTES, rb = nb * wb, xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		const uint8_t *wr = w + n * rb;
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = wr + b * wb;
				int8_t q[QK];
				int32_t gs[16], mn[8] = {0};
				float dw, dmw = 0;
				if (q6) {
					for (int h = 0; h < 2; h++) {
						const uint8_t *ql = blk + 64 * h, *qh = blk + 128 + 32 * h;
						int8_t *qq = q + 128 * h;
						for (int l = 0; l < 32; l++) {
							qq[l] = (int8_t)(((ql[l] & 0xF) | (qh[l] & 3) << 4) - 32);
							qq[l + 32] = (int8_t)(((ql[l + 32] & 0xF) | (qh[l] >> 2 & 3) << 4) - 32);
							qq[l + 64] = (int8_t)(((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4) - 32);
							qq[l + 96] = (int8_t)(((ql[l + 32] >> 4) | (qh[l] >> 6) << 4) - 32);
						}
					}
					for (int g = 0; g < 16; g++) gs[g] = (int8_t)blk[192 + g];
					dw = toy_fp16_f32(toy_load_u16(blk + 208));
				} else {
					for (int p = 0; p < 4; p++)
						for (int l = 0; l < 32; l++) {
							q[64 * p + l] = (int8_t)(blk[16 + 32 * p + l] & 0xF);
							q[64 * p + 32 + l] = (int8_t)(blk[16 + 32 * p + l] >> 4);
						}
					for (int j = 0; j < 8; j++) {
						int sc, m;
						q4k_scale_min(blk + 4, j, &sc, &m);
						gs[2 * j] = gs[2 * j + 1] = sc, mn[j] = m;
					}
					dw = toy_fp16_f32(toy_load_u16(blk)), dmw = toy_fp16_f32(toy_load_u16(blk + 2));
				}
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q8K_BYTES;
					const int8_t *x = (const int8_t *)xb;
					int32_t dots = 0;
					for (int g = 0; g < 16; g++) {
						int32_t s = 0;
						for (int k = 0; k < 16; k++) s += (int32_t)q[16 * g + k] * x[16 * g + k];
						dots += gs[g] * s;
					}
					float xd = q8k_d(xb);
					if (q6) {
						sum[i] = KQ6_ACC(sum[i], dw * xd, (float)dots);
					} else {
						int32_t mins = 0;
						for (int j = 0; j < 8; j++) mins += mn[j] * ((int32_t)q8k_bsum(xb, 2 * j) + q8k_bsum(xb, 2 * j + 1));
						sum[i] = KQ4_ACC(sum[i], dw * xd, (float)dots, dmw * xd, (float)mins);
					}
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

TOY_API int64_t toy_kq_scratch(int64_t K) { return 0; }

TOY_API void toy_matmul_q4k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	kq_generic(0, out, xq, w, M, K, N, n0, n1);
}

TOY_API void toy_matmul_q6k(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                            int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	kq_generic(1, out, xq, w, M, K, N, n0, n1);
}

#endif

TOY_API int64_t toy_kq_scratch_ref(int64_t K) { return toy_kq_scratch(K); }
