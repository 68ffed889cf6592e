// q8.c: Q8_0 × Q8_0 matrix multiply and the Q8_0 quantizer of activations.
//
// out[m, n] = Σ_b float(Σ_i xq[m,b,i]·wq[n,b,i]) · (d_x[m,b]·d_w[n,b]), the sum
// over blocks b taken in block order in float32, exactly as toy/tensor/quant's
// dotQ8: the integer dot of a block is exact, and every kernel below adds the
// scaled block sums of one output in the same order, so the fast kernels are
// bit-identical to the reference (and to the pure-Go backend). They get their
// width from computing 16 (AVX-512), 8 (AVX2) or 4 (NEON) outputs at once,
// one per vector lane, never from reordering one output's sum.
#include "toy.h"

// Go fuses `sum += float32(s)·d` into one fused multiply-add on arm64 and not
// on amd64; the kernels follow suit so the results stay bit-identical.
#if defined(__aarch64__)
#define Q8_ACC(sum, s, d) __builtin_fmaf((float)(s), (d), (sum))
#else
#define Q8_ACC(sum, s, d) ((sum) + (float)(s) * (d))
#endif

// toy_quantize_q8_ref writes nblocks Q8_0 blocks of x to dst: per block
// amax = max|x|, d = fp16(amax/127), q = round-half-even(x·127/amax).
TOY_API void toy_quantize_q8_ref(uint8_t *dst, const float *x, int64_t nblocks) {
	for (int64_t b = 0; b < nblocks; b++) {
		const float *xb = x + b * Q8_BLOCK;
		uint8_t *db = dst + b * Q8_BYTES;
		float amax = 0;
		for (int i = 0; i < Q8_BLOCK; i++) {
			float a = xb[i] < 0 ? -xb[i] : xb[i];
			if (a > amax) amax = a;
		}
		float d = amax / 127, id = amax != 0 ? 127 / amax : 0;
		uint16_t h = toy_f32_fp16(d);
		db[0] = (uint8_t)h;
		db[1] = (uint8_t)(h >> 8);
		for (int i = 0; i < Q8_BLOCK; i++) {
			float v = xb[i] * id;
			v = (v + 12582912.0f) - 12582912.0f; // round half to even for |v| < 2²²
			db[2 + i] = (uint8_t)(int8_t)(int32_t)v;
		}
	}
}

// The fast quantizer: the block maximum and the products x·id in vectors,
// rounded half to even by the conversion instruction (the default rounding
// mode, which Go leaves alone); the scale goes through the same scalar code.
TOY_API void toy_quantize_q8(uint8_t *dst, const float *x, int64_t nblocks) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
	const __m512 sign = _mm512_set1_ps(-0.0f);
	for (int64_t b = 0; b < nblocks; b++) {
		const float *xb = x + b * Q8_BLOCK;
		uint8_t *db = dst + b * Q8_BYTES;
		__m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
		float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_andnot_ps(sign, v0), _mm512_andnot_ps(sign, v1)));
		float d = amax / 127, id = amax != 0 ? 127 / amax : 0;
		uint16_t h = toy_f32_fp16(d);
		db[0] = (uint8_t)h;
		db[1] = (uint8_t)(h >> 8);
		__m512 vid = _mm512_set1_ps(id);
		__m512i q0 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v0, vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m512i q1 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v1, vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		_mm_storeu_si128((__m128i *)(db + 2), _mm512_cvtepi32_epi8(q0));
		_mm_storeu_si128((__m128i *)(db + 18), _mm512_cvtepi32_epi8(q1));
	}
#elif defined(__AVX2__)
	const __m256 sign = _mm256_set1_ps(-0.0f);
	for (int64_t b = 0; b < nblocks; b++) {
		const float *xb = x + b * Q8_BLOCK;
		uint8_t *db = dst + b * Q8_BYTES;
		__m256 v[4], m = _mm256_setzero_ps();
		for (int j = 0; j < 4; j++) {
			v[j] = _mm256_loadu_ps(xb + 8 * j);
			m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[j]));
		}
		__m128 h4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
		h4 = _mm_max_ps(h4, _mm_movehl_ps(h4, h4));
		h4 = _mm_max_ss(h4, _mm_movehdup_ps(h4));
		float amax = _mm_cvtss_f32(h4);
		float d = amax / 127, id = amax != 0 ? 127 / amax : 0;
		uint16_t h = toy_f32_fp16(d);
		db[0] = (uint8_t)h;
		db[1] = (uint8_t)(h >> 8);
		__m256 vid = _mm256_set1_ps(id);
		__m256i q[4];
		for (int j = 0; j < 4; j++) q[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[j], vid));
		// packs interleave the 128-bit lanes; the permute puts them back in order
		__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
		p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
		_mm256_storeu_si256((__m256i *)(db + 2), p);
	}
#elif defined(__aarch64__)
	for (int64_t b = 0; b < nblocks; b++) {
		const float *xb = x + b * Q8_BLOCK;
		uint8_t *db = dst + b * Q8_BYTES;
		float32x4_t v[8], m = vdupq_n_f32(0);
		for (int j = 0; j < 8; j++) {
			v[j] = vld1q_f32(xb + 4 * j);
			m = vmaxq_f32(m, vabsq_f32(v[j]));
		}
		float amax = vmaxvq_f32(m);
		float d = amax / 127, id = amax != 0 ? 127 / amax : 0;
		uint16_t h = toy_f32_fp16(d);
		db[0] = (uint8_t)h;
		db[1] = (uint8_t)(h >> 8);
		int8_t q[32];
		for (int j = 0; j < 8; j += 2) {
			int16x8_t s16 = vcombine_s16(vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(v[j], id))),
			                             vqmovn_s32(vcvtnq_s32_f32(vmulq_n_f32(v[j + 1], id))));
			vst1_s8(q + 4 * j, vqmovn_s16(s16));
		}
		__builtin_memcpy(db + 2, q, 32);
	}
#else
	toy_quantize_q8_ref(dst, x, nblocks);
#endif
}

// toy_q8_xsum writes 128·Σq of each of nblocks Q8_0 blocks (the correction
// the packed kernel subtracts, see below).
TOY_API void toy_q8_xsum(int32_t *dst, const uint8_t *xq, int64_t nblocks) {
	for (int64_t b = 0; b < nblocks; b++) {
		int32_t s = 0;
		for (int i = 0; i < Q8_BLOCK; i++) s += (int8_t)xq[b * Q8_BYTES + 2 + i];
		dst[b] = 128 * s;
	}
}

TOY_API void toy_q8_xsum_ref(int32_t *dst, const uint8_t *xq, int64_t nblocks) { toy_q8_xsum(dst, xq, nblocks); }

static float dot_q8_ref(const uint8_t *x, const uint8_t *w, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *xb = x + b * Q8_BYTES, *wb = w + b * Q8_BYTES;
		int32_t s = 0;
		for (int i = 2; i < Q8_BYTES; i++) s += (int32_t)(int8_t)xb[i] * (int32_t)(int8_t)wb[i];
		float d = toy_fp16_f32(toy_load_u16(xb)) * toy_fp16_f32(toy_load_u16(wb));
		sum = Q8_ACC(sum, s, d);
	}
	return sum;
}

// toy_matmul_q8_ref computes out[m, n] for m < M and n0 ≤ n < n1, with
// xq [M, K] and w [N, K] in Q8_0 and out [M, N] in float32.
TOY_API void toy_matmul_q8_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                               int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++) out[m * N + n] = dot_q8_ref(xq + m * rb, w + n * rb, nb);
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)

// 16 outputs per vector. Rows 2j and 2j+1 share zmm j (one block each half);
// vpdpbusd multiplies unsigned by signed bytes, so it gets (w+128) and x and
// starts from −128·Σx, which leaves Σ w·x. Eight such vectors reduce to the 16
// block sums in the lane order below; scales and stores follow that order.
static const int32_t q8_perm16[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};
static const int32_t q8_inv16[16] = {0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15};

TOY_INLINE __m512i q8_reduce16(__m512i p[8]) {
	__m512i a[4], b[2];
	for (int j = 0; j < 4; j++)
		a[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2 * j], p[2 * j + 1]),
		                        _mm512_unpackhi_epi32(p[2 * j], p[2 * j + 1]));
	for (int j = 0; j < 2; j++)
		b[j] = _mm512_add_epi32(_mm512_unpacklo_epi64(a[2 * j], a[2 * j + 1]),
		                        _mm512_unpackhi_epi64(a[2 * j], a[2 * j + 1]));
	return _mm512_add_epi32(_mm512_shuffle_i32x4(b[0], b[1], _MM_SHUFFLE(2, 0, 2, 0)),
	                        _mm512_shuffle_i32x4(b[0], b[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// q8_tile16 computes outputs for rows r[0..15] (pointers to their Q8_0 rows)
// against MR activation rows x[0..MR-1], accumulating in lane order.
// pf, when not NULL, holds four places to prefetch from: the rows of the
// next tile, four at a time (4·Q8_BYTES bytes of each per block).
TOY_INLINE void q8_tile16(__m512 acc[], const uint8_t *const x[], int MR, const uint8_t *const r[16],
                          __m512i gidx, int64_t nb, const uint8_t *const *pf) {
	const __m512i bias = _mm512_set1_epi8((char)0x80);
	for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		int64_t off = b * Q8_BYTES;
		__m512i wv[8];
		for (int j = 0; j < 8; j++) {
			__m256i lo = _mm256_loadu_si256((const __m256i *)(r[2 * j] + off + 2));
			__m256i hi = _mm256_loadu_si256((const __m256i *)(r[2 * j + 1] + off + 2));
			wv[j] = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), bias);
		}
		if (pf)
			for (int g = 0; g < 4; g++)
				for (int i = 0; i < 4 * Q8_BYTES; i += 64) __builtin_prefetch(pf[g] + 4 * off + i, 0, 2);
		__m512i sw = _mm512_i32gather_epi32(gidx, (const void *)(r[0] + off), 1);
		__m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(sw));
		for (int i = 0; i < MR; i++) {
			const uint8_t *xb = x[i] + off;
			__m512i xv = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(xb + 2)));
			__m512i negcx = _mm512_sub_epi32(_mm512_setzero_si512(),
			                                 _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, xv));
			__m512i p[8];
			for (int j = 0; j < 8; j++) p[j] = _mm512_dpbusd_epi32(negcx, wv[j], xv);
			__m512 s = _mm512_cvtepi32_ps(q8_reduce16(p));
			__m512 d = _mm512_mul_ps(_mm512_set1_ps(toy_fp16_f32(toy_load_u16(xb))), dw);
			acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(s, d));
		}
	}
}

// Several activation rows: each tile of 16 weight rows is used in a layout
// where vector lane k holds row k — per block, 8 vectors of four bytes (w+128)
// from each row, then the 16 scales as float32 (Q8_PACKED bytes, when stored
// in scratch) — and each activation row's 4-byte groups are broadcast:
// 8 vpdpbusd give the 16 block sums with no reduction at all. Their start,
// −128·Σx of the block (toy_q8_xsum), cancels the +128 that made w unsigned.
#define Q8_PACKED (8 * 64 + 64)


TOY_INLINE uint32_t load_u32(const uint8_t *p) {
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}

// q8_load16 loads block off of the 16 rows r[0..15] in the packed layout
// (lane k = row k): a block of row j and of row j+4 share a zmm (rows 8+j
// and 12+j likewise), a 4×4 transpose of dwords inside each 128-bit lane
// puts four rows' same group side by side, and one 128-bit shuffle per
// vector gathers the four quarters — 32 shuffles a block where 8 gathers
// cost several times that, which decides the speed of a batched decode step
// (a tile serves only a few activation rows there). wv[g] gets group g
// (w+128), *dw the 16 scales (one gather, gidx: byte offsets from r[0]).
TOY_INLINE void q8_load16(__m512i wv[8], __m512 *dw, const uint8_t *const r[16], __m512i gidx, int64_t off) {
	const __m512i bias = _mm512_set1_epi8((char)0x80);
	__m512i v[8], u[8];
	for (int h = 0; h < 2; h++)
		for (int j = 0; j < 4; j++) {
			__m256i lo = _mm256_loadu_si256((const __m256i *)(r[8 * h + j] + off + 2));
			__m256i hi = _mm256_loadu_si256((const __m256i *)(r[8 * h + j + 4] + off + 2));
			v[4 * h + j] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
		}
	for (int h = 0; h < 2; h++) {
		__m512i *s = v + 4 * h, *d = u + 4 * h;
		__m512i t0 = _mm512_unpacklo_epi32(s[0], s[1]), t1 = _mm512_unpackhi_epi32(s[0], s[1]);
		__m512i t2 = _mm512_unpacklo_epi32(s[2], s[3]), t3 = _mm512_unpackhi_epi32(s[2], s[3]);
		d[0] = _mm512_unpacklo_epi64(t0, t2), d[1] = _mm512_unpackhi_epi64(t0, t2);
		d[2] = _mm512_unpacklo_epi64(t1, t3), d[3] = _mm512_unpackhi_epi64(t1, t3);
	}
	// u[a] holds group a of rows 0-3 | group 4+a of rows 0-3 | group a of
	// rows 4-7 | group 4+a of rows 4-7; u[4+a] the same of rows 8-15
	for (int a = 0; a < 4; a++) {
		wv[a] = _mm512_xor_si512(_mm512_shuffle_i32x4(u[a], u[4 + a], _MM_SHUFFLE(2, 0, 2, 0)), bias);
		wv[4 + a] = _mm512_xor_si512(_mm512_shuffle_i32x4(u[a], u[4 + a], _MM_SHUFFLE(3, 1, 3, 1)), bias);
	}
	__m512i sw = _mm512_i32gather_epi32(gidx, (const void *)(r[0] + off), 1);
	*dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(sw));
}

// q8_pack16 packs the rows r[0..15] into pk. pf, when not NULL, is the next
// tile (16 contiguous rows), fetched a block's share at a time.
static void q8_pack16(uint8_t *pk, const uint8_t *const r[16], __m512i gidx, int64_t nb, const uint8_t *pf) {
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * Q8_PACKED;
		int64_t off = b * Q8_BYTES;
		if (pf)
			for (int i = 0; i < 16 * Q8_BYTES; i += 64) __builtin_prefetch(pf + 16 * off + i, 0, 2);
		__m512i wv[8];
		__m512 dw;
		q8_load16(wv, &dw, r, gidx, off);
		for (int g = 0; g < 8; g++) _mm512_storeu_si512(pb + g * 64, wv[g]);
		_mm512_storeu_ps(pb + 512, dw);
	}
}

// q8_small_tile: MR ≤ 8 activation rows (a batched decode step) against the
// tile of rows r[0..15], packed block by block in registers and used at once
// (no scratch round trip). dx and nx hold, for block b and row i at
// [b·MR + i], the row's block scale as float32 and −128·Σx: broadcasts
// straight from memory, where converting and negating them cost three
// vector operations a row and block. Stores the MR rows of out (lane k to
// out[m·N + k], mask: the valid rows).
TOY_INLINE void q8_small_tile(float *out, const uint8_t *xq, const float *dx, const int32_t *nx, int MR,
                              const uint8_t *const r[16], __m512i gidx, int64_t nb, const uint8_t *pf, int64_t N,
                              __mmask16 mask) {
	const int CH = MR <= 3 ? 2 : 1;
	const uint8_t *x[8];
	for (int i = 0; i < MR; i++) x[i] = xq + i * nb * Q8_BYTES;
	__m512 acc[8];
	for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		int64_t off = b * Q8_BYTES;
		if (pf)
			for (int i = 0; i < 16 * Q8_BYTES; i += 64) __builtin_prefetch(pf + 16 * off + i, 0, 2);
		__m512i wv[8];
		__m512 dw;
		q8_load16(wv, &dw, r, gidx, off);
		__m512i isum[2][8];
		for (int i = 0; i < MR; i++) {
			isum[0][i] = _mm512_set1_epi32(nx[b * MR + i]);
			if (CH == 2) isum[1][i] = _mm512_setzero_si512();
		}
		for (int g = 0; g < 8; g++)
			for (int i = 0; i < MR; i++)
				isum[g % CH][i] = _mm512_dpbusd_epi32(isum[g % CH][i], wv[g],
				                                      _mm512_set1_epi32((int32_t)load_u32(x[i] + off + 2 + 4 * g)));
		for (int i = 0; i < MR; i++) {
			__m512i is = CH == 2 ? _mm512_add_epi32(isum[0][i], isum[1][i]) : isum[0][i];
			__m512 d = _mm512_mul_ps(_mm512_set1_ps(dx[b * MR + i]), dw);
			acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_cvtepi32_ps(is), d));
		}
	}
	for (int i = 0; i < MR; i++) _mm512_mask_storeu_ps(out + i * N, mask, acc[i]);
}

// 2 to 8 activation rows (batched decode): tiles of 16 weight rows in order,
// each used by all M rows, the one after next prefetched (one ahead is too
// close from main memory when a tile serves only two or three rows). The
// rows' scales and −128·Σx go to scratch first (8·M·K/32 bytes), for
// q8_small_tile.
static void q8_gemm_small(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M,
                          int64_t K, int64_t N, int64_t n0, int64_t n1, uint8_t *scratch) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	float *dx = (float *)scratch;
	int32_t *nx = (int32_t *)(scratch + 4 * M * nb);
	for (int64_t b = 0; b < nb; b++)
		for (int64_t i = 0; i < M; i++) {
			dx[b * M + i] = _cvtsh_ss(toy_load_u16(xq + i * rb + b * Q8_BYTES));
			nx[b * M + i] = -xsum[i * nb + b];
		}
	for (int64_t n = n0; n < n1; n += 16) {
		int valid = (int)(n1 - n < 16 ? n1 - n : 16);
		__m512i rows = _mm512_min_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
		                                _mm512_set1_epi32(valid - 1));
		__m512i gidx = _mm512_mullo_epi32(rows, _mm512_set1_epi32((int32_t)rb));
		const uint8_t *r[16];
		for (int j = 0; j < 16; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 48 <= n1 ? w + (n + 32) * rb : NULL;
		__mmask16 mask = (__mmask16)((1u << valid) - 1);
		switch (M) { // a constant row count in each call, so that the tile unrolls
#define Q8_SMALL(mr) \
	case mr: q8_small_tile(out + n, xq, dx, nx, mr, r, gidx, nb, pf, N, mask); break;
			Q8_SMALL(2) Q8_SMALL(3) Q8_SMALL(4) Q8_SMALL(5) Q8_SMALL(6) Q8_SMALL(7) Q8_SMALL(8)
#undef Q8_SMALL
		}
	}
}

// q8_packed_rows computes MR ≤ 8 activation rows x[i] (their xsum rows
// xs[i]) against the packed tile pk, into acc[i] (lane k = weight row k).
// A block's integer sum is exact in any order, so with few rows each is
// split in two chains (even and odd groups) to keep enough vpdpbusd in
// flight.
TOY_INLINE void q8_packed_rows(__m512 acc[], const uint8_t *const x[], const int32_t *const xs[], int MR,
                               const uint8_t *pk, int64_t nb) {
	const int CH = MR <= 4 ? 2 : 1;
	for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * Q8_PACKED;
		int64_t off = b * Q8_BYTES;
		__m512i isum[2][8];
		for (int i = 0; i < MR; i++) {
			isum[0][i] = _mm512_set1_epi32(-xs[i][b]);
			if (CH == 2) isum[1][i] = _mm512_setzero_si512();
		}
		for (int g = 0; g < 8; g++) {
			__m512i wv = _mm512_loadu_si512(pb + g * 64);
			for (int i = 0; i < MR; i++)
				isum[g % CH][i] = _mm512_dpbusd_epi32(isum[g % CH][i], wv,
				                                      _mm512_set1_epi32((int32_t)load_u32(x[i] + off + 2 + 4 * g)));
		}
		__m512 dw = _mm512_loadu_ps(pb + 512);
		for (int i = 0; i < MR; i++) {
			__m512i is = CH == 2 ? _mm512_add_epi32(isum[0][i], isum[1][i]) : isum[0][i];
			__m512 d = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(toy_load_u16(x[i] + off))), dw);
			acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_cvtepi32_ps(is), d));
		}
	}
}

// q8_packed_group runs MR rows from m on against the packed tile.
TOY_INLINE void q8_packed_group(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *pk, int64_t m,
                                int MR, int64_t nb, int64_t N, __mmask16 mask) {
	__m512 acc[8];
	const uint8_t *x[8];
	const int32_t *xs[8];
	for (int i = 0; i < MR; i++) x[i] = xq + (m + i) * nb * Q8_BYTES, xs[i] = xsum + (m + i) * nb;
	q8_packed_rows(acc, x, xs, MR, pk, nb);
	for (int i = 0; i < MR; i++) _mm512_mask_storeu_ps(out + (m + i) * N, mask, acc[i]);
}

static void q8_gemm_packed(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M,
                           int64_t K, int64_t N, int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += 16) {
		int valid = (int)(n1 - n < 16 ? n1 - n : 16);
		__m512i rows = _mm512_min_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
		                                _mm512_set1_epi32(valid - 1));
		const uint8_t *r[16];
		for (int j = 0; j < 16; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		q8_pack16(pk, r, _mm512_mullo_epi32(rows, _mm512_set1_epi32((int32_t)rb)), nb,
		          n + 32 <= n1 ? w + (n + 16) * rb : NULL);
		__mmask16 mask = (__mmask16)((1u << valid) - 1);
		int64_t m = 0;
		for (; m + 8 <= M; m += 8) q8_packed_group(out + n, xq, xsum, pk, m, 8, nb, N, mask);
		switch (M - m) { // a constant row count in each call, so that the tile unrolls
		case 1: q8_packed_group(out + n, xq, xsum, pk, m, 1, nb, N, mask); break;
		case 2: q8_packed_group(out + n, xq, xsum, pk, m, 2, nb, N, mask); break;
		case 3: q8_packed_group(out + n, xq, xsum, pk, m, 3, nb, N, mask); break;
		case 4: q8_packed_group(out + n, xq, xsum, pk, m, 4, nb, N, mask); break;
		case 5: q8_packed_group(out + n, xq, xsum, pk, m, 5, nb, N, mask); break;
		case 6: q8_packed_group(out + n, xq, xsum, pk, m, 6, nb, N, mask); break;
		case 7: q8_packed_group(out + n, xq, xsum, pk, m, 7, nb, N, mask); break;
		}
	}
}

// toy_matmul_q8 computes out[m, n] for m < M and n0 ≤ n < n1. With xsum (the
// toy_q8_xsum of xq) and scratch (K/32 · 576 bytes) it takes the packed
// layout from 2 activation rows on: up to 8 rows packed in registers (their
// scales in scratch); more with a tile packed once in scratch for all row
// groups. Every path adds the same block sums in the same order, so a row's
// result does not depend on M.
TOY_API void toy_matmul_q8(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                           int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	if (xsum && scratch && M >= 2 && M <= 8) {
		q8_gemm_small(out, xq, xsum, w, M, K, N, n0, n1, scratch);
		return;
	}
	if (xsum && scratch && M >= 2) {
		q8_gemm_packed(out, xq, xsum, w, M, K, N, n0, n1, scratch);
		return;
	}
	const __m512i perm = _mm512_loadu_si512(q8_perm16), inv = _mm512_loadu_si512(q8_inv16);
	// Passes of 16 rows, four adjacent ones from each quarter of the range:
	// four memory streams, each prefetched a pass ahead (see gemv4 in f32.c).
	int64_t q = (n1 - n0) / 16 * 4;
	if (3 * q * rb >= INT32_MAX) q = 0; // gather offsets are 32-bit
	if (q > 0) {
		int32_t offs[16];
		for (int j = 0; j < 16; j++) offs[j] = (int32_t)(((j / 4) * q + j % 4) * rb);
		__m512i gidx = _mm512_permutexvar_epi32(perm, _mm512_loadu_si512(offs));
		for (int64_t i = 0; i < q; i += 4) {
			const uint8_t *r[16], *pf[4];
			for (int j = 0; j < 16; j++) r[j] = w + (n0 + (j / 4) * q + i + j % 4) * rb;
			for (int g = 0; g < 4; g++) pf[g] = r[4 * g] + 4 * rb;
			for (int64_t m = 0; m < M; m++) {
				__m512 acc[1];
				const uint8_t *x[1] = {xq + m * rb};
				q8_tile16(acc, x, 1, r, gidx, nb, m == 0 ? pf : NULL);
				__m512 v = _mm512_permutexvar_ps(inv, acc[0]);
				float *o = out + m * N + n0 + i;
				_mm_storeu_ps(o, _mm512_extractf32x4_ps(v, 0));
				_mm_storeu_ps(o + q, _mm512_extractf32x4_ps(v, 1));
				_mm_storeu_ps(o + 2 * q, _mm512_extractf32x4_ps(v, 2));
				_mm_storeu_ps(o + 3 * q, _mm512_extractf32x4_ps(v, 3));
			}
		}
	}
	// The rows left over (fewer than 16), or all of them: adjacent tiles.
	for (int64_t n = n0 + 4 * q; n < n1; n += 16) {
		int valid = (int)(n1 - n < 16 ? n1 - n : 16);
		const uint8_t *r[16];
		for (int j = 0; j < 16; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		// gather offsets relative to r[0], in lane order
		__m512i rows = _mm512_permutexvar_epi32(perm, _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
		rows = _mm512_min_epi32(rows, _mm512_set1_epi32(valid - 1));
		__m512i gidx = _mm512_mullo_epi32(rows, _mm512_set1_epi32((int32_t)rb));
		__mmask16 mask = (__mmask16)((1u << valid) - 1);
		// The next tile's rows are the 16·rb bytes after this one's: fetch
		// them while this tile computes (main memory is far on a busy host).
		const uint8_t *pfs[4] = {w + (n + 16) * rb, w + (n + 20) * rb, w + (n + 24) * rb, w + (n + 28) * rb};
		const uint8_t *const *pf = n + 32 <= n1 ? pfs : NULL;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) {
			__m512 acc[2];
			const uint8_t *x[2] = {xq + m * rb, xq + (m + 1) * rb};
			q8_tile16(acc, x, 2, r, gidx, nb, m == 0 ? pf : NULL);
			for (int i = 0; i < 2; i++)
				_mm512_mask_storeu_ps(out + (m + i) * N + n, mask, _mm512_permutexvar_ps(inv, acc[i]));
		}
		for (; m < M; m++) {
			__m512 acc[1];
			const uint8_t *x[1] = {xq + m * rb};
			q8_tile16(acc, x, 1, r, gidx, nb, m == 0 ? pf : NULL);
			_mm512_mask_storeu_ps(out + m * N + n, mask, _mm512_permutexvar_ps(inv, acc[0]));
		}
	}
}

#elif defined(__AVX2__)

// 8 outputs per vector, one row per ymm. With AVX-VNNI the block dot is one
// vpdpbusd as in the AVX-512 kernel; without it, |w| times x signed like w
// (vpmaddubsw: two products ≤ 2·127² fit int16) and vpmaddwd to int32.
TOY_INLINE __m256i q8_reduce8(__m256i p[8]) {
	__m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
	__m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
	__m256i a = _mm256_hadd_epi32(h01, h23), b = _mm256_hadd_epi32(h45, h67);
	return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

TOY_INLINE void q8_tile8(__m256 acc[], const uint8_t *const x[], int MR, const uint8_t *const r[8], __m256i gidx,
                         int64_t nb, const uint8_t *pf) {
#if defined(__AVXVNNI__)
	const __m256i bias = _mm256_set1_epi8((char)0x80);
#else
	const __m256i ones = _mm256_set1_epi16(1);
#endif
	const __m256i lo16 = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9,
	                                      12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
	for (int i = 0; i < MR; i++) acc[i] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		int64_t off = b * Q8_BYTES;
		__m256i wv[8];
		for (int j = 0; j < 8; j++) {
			wv[j] = _mm256_loadu_si256((const __m256i *)(r[j] + off + 2));
#if defined(__AVXVNNI__)
			wv[j] = _mm256_xor_si256(wv[j], bias);
#endif
		}
		if (pf)
			for (int i = 0; i < 8 * Q8_BYTES; i += 64) __builtin_prefetch(pf + 8 * off + i, 0, 2);
		__m256i sw = _mm256_i32gather_epi32((const int *)(r[0] + off), gidx, 1);
		sw = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(sw, lo16), 0x08);
		__m256 dw = _mm256_cvtph_ps(_mm256_castsi256_si128(sw));
		for (int i = 0; i < MR; i++) {
			const uint8_t *xb = x[i] + off;
			__m256i xv = _mm256_loadu_si256((const __m256i *)(xb + 2));
			__m256i p[8];
#if defined(__AVXVNNI__)
			__m256i negcx = _mm256_sub_epi32(_mm256_setzero_si256(),
			                                 _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), bias, xv));
			for (int j = 0; j < 8; j++) p[j] = _mm256_dpbusd_avx_epi32(negcx, wv[j], xv);
#else
			for (int j = 0; j < 8; j++)
				p[j] = _mm256_madd_epi16(
				    _mm256_maddubs_epi16(_mm256_sign_epi8(wv[j], wv[j]), _mm256_sign_epi8(xv, wv[j])), ones);
#endif
			__m256 s = _mm256_cvtepi32_ps(q8_reduce8(p));
			__m256 d = _mm256_mul_ps(_mm256_set1_ps(toy_fp16_f32(toy_load_u16(xb))), dw);
			acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(s, d));
		}
	}
}

// Several activation rows (prefill, training), as in the AVX-512 kernel: each
// tile of 8 weight rows is repacked into scratch so that vector lane k holds
// row k, and each activation row's 4-byte groups are broadcast, which leaves
// the 8 block sums in the lanes with no reduction. Per block the packed tile
// holds 8 vectors of four bytes from each row — (w+128) with AVX-VNNI, whose
// vpdpbusd starts from −128·Σx (toy_q8_xsum); without it, per group, w itself
// and then its magnitudes |w| (vpmaddubsw's unsigned operand; the broadcast x
// takes the sign of w, so two products ≤ 2·128·127 fit int16) — then the 8
// scales as float32 (Q8_PACKED8 bytes).
#if defined(__AVXVNNI__)
#define Q8_PACKED8 (8 * 32 + 32)
#define Q8_PACKED8_MIN 2
#else
#define Q8_PACKED8 (16 * 32 + 32)
#define Q8_PACKED8_MIN 3
#endif

TOY_INLINE uint32_t load_u32(const uint8_t *p) {
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}

// q8_pack8 packs the rows r[0..7] from plain loads: the first halves of a
// block of rows j and j+4 share a ymm (the second halves likewise), and a
// 4×4 transpose of dwords inside each 128-bit lane leaves group g of the 8
// rows in order — 16 shuffles a block where building each vector from 8
// scalar loads costs 64. pf, when not NULL, is a later tile (8 contiguous
// rows), fetched a block's share at a time.
static void q8_pack8(uint8_t *pk, const uint8_t *const r[8], __m256i gidx, int64_t nb, const uint8_t *pf) {
	const __m256i lo16 = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9,
	                                      12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * Q8_PACKED8;
		int64_t off = b * Q8_BYTES;
		if (pf)
			for (int i = 0; i < 8 * Q8_BYTES; i += 64) __builtin_prefetch(pf + 8 * off + i, 0, 2);
		__m256i v[8], u[8];
		for (int h = 0; h < 2; h++)
			for (int j = 0; j < 4; j++) {
				__m128i lo = _mm_loadu_si128((const __m128i *)(r[j] + off + 2 + 16 * h));
				__m128i hi = _mm_loadu_si128((const __m128i *)(r[j + 4] + off + 2 + 16 * h));
				v[4 * h + j] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
			}
		for (int h = 0; h < 2; h++) {
			__m256i *s = v + 4 * h, *d = u + 4 * h;
			__m256i t0 = _mm256_unpacklo_epi32(s[0], s[1]), t1 = _mm256_unpackhi_epi32(s[0], s[1]);
			__m256i t2 = _mm256_unpacklo_epi32(s[2], s[3]), t3 = _mm256_unpackhi_epi32(s[2], s[3]);
			d[0] = _mm256_unpacklo_epi64(t0, t2), d[1] = _mm256_unpackhi_epi64(t0, t2);
			d[2] = _mm256_unpacklo_epi64(t1, t3), d[3] = _mm256_unpackhi_epi64(t1, t3);
		}
		for (int g = 0; g < 8; g++) {
#if defined(__AVXVNNI__)
			_mm256_storeu_si256((__m256i *)(pb + g * 32), _mm256_xor_si256(u[g], _mm256_set1_epi8((char)0x80)));
#else
			_mm256_storeu_si256((__m256i *)(pb + g * 64), u[g]);
			_mm256_storeu_si256((__m256i *)(pb + g * 64 + 32), _mm256_sign_epi8(u[g], u[g]));
#endif
		}
		__m256i sw = _mm256_i32gather_epi32((const int *)(r[0] + off), gidx, 1);
		sw = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(sw, lo16), 0x08);
		_mm256_storeu_ps((float *)(pb + Q8_PACKED8 - 32), _mm256_cvtph_ps(_mm256_castsi256_si128(sw)));
	}
}

// q8_packed8_rows computes MR activation rows x[i] (their xsum rows xs[i],
// used with AVX-VNNI) against the packed tile pk, into acc[i] (lane k =
// weight row k).
TOY_INLINE void q8_packed8_rows(__m256 acc[], const uint8_t *const x[], const int32_t *const xs[], int MR,
                                const uint8_t *pk, int64_t nb) {
#if !defined(__AVXVNNI__)
	const __m256i ones = _mm256_set1_epi16(1);
#endif
	for (int i = 0; i < MR; i++) acc[i] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * Q8_PACKED8;
		int64_t off = b * Q8_BYTES;
		__m256i isum[4];
#if defined(__AVXVNNI__)
		for (int i = 0; i < MR; i++) isum[i] = _mm256_set1_epi32(-xs[i][b]);
		for (int g = 0; g < 8; g++) {
			__m256i wv = _mm256_loadu_si256((const __m256i *)(pb + g * 32));
			for (int i = 0; i < MR; i++)
				isum[i] = _mm256_dpbusd_avx_epi32(isum[i], wv, _mm256_set1_epi32((int32_t)load_u32(x[i] + off + 2 + 4 * g)));
		}
#else
		for (int i = 0; i < MR; i++) isum[i] = _mm256_setzero_si256();
		for (int g = 0; g < 8; g++) {
			__m256i ws = _mm256_loadu_si256((const __m256i *)(pb + g * 64));
			__m256i wa = _mm256_loadu_si256((const __m256i *)(pb + g * 64 + 32));
			for (int i = 0; i < MR; i++) {
				__m256i xv = _mm256_sign_epi8(_mm256_set1_epi32((int32_t)load_u32(x[i] + off + 2 + 4 * g)), ws);
				isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(_mm256_maddubs_epi16(wa, xv), ones));
			}
			// keep the compiler from reassociating the sums (it would spill the products)
			for (int i = 0; i < MR; i++) __asm__("" : "+x"(isum[i]));
		}
#endif
		__m256 dw = _mm256_loadu_ps((const float *)(pb + Q8_PACKED8 - 32));
		for (int i = 0; i < MR; i++) {
			__m256 d = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(toy_load_u16(x[i] + off))), dw);
			acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(_mm256_cvtepi32_ps(isum[i]), d));
		}
	}
}

TOY_INLINE void q8_store8(float *o, __m256 v, int valid) {
	if (valid == 8) {
		_mm256_storeu_ps(o, v);
		return;
	}
	float tmp[8];
	_mm256_storeu_ps(tmp, v);
	for (int j = 0; j < valid; j++) o[j] = tmp[j];
}

// q8_packed8_group runs MR rows from m on against the packed tile.
TOY_INLINE void q8_packed8_group(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *pk, int64_t m,
                                 int MR, int64_t nb, int64_t N, int valid) {
	__m256 acc[4];
	const uint8_t *x[4];
	const int32_t *xs[4];
	for (int i = 0; i < MR; i++) x[i] = xq + (m + i) * nb * Q8_BYTES, xs[i] = xsum + (m + i) * nb;
	q8_packed8_rows(acc, x, xs, MR, pk, nb);
	for (int i = 0; i < MR; i++) q8_store8(out + (m + i) * N, acc[i], valid);
}

static void q8_gemm_packed8(float *out, const uint8_t *xq, const int32_t *xsum, const uint8_t *w, int64_t M,
                            int64_t K, int64_t N, int64_t n0, int64_t n1, uint8_t *pk) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		int32_t off[8];
		for (int j = 0; j < 8; j++) {
			int jj = j < valid ? j : valid - 1;
			r[j] = w + (n + jj) * rb;
			off[j] = (int32_t)(jj * rb);
		}
		// the tile after next, as in the AVX-512 kernel
		q8_pack8(pk, r, _mm256_loadu_si256((const __m256i *)off), nb, n + 24 <= n1 ? w + (n + 16) * rb : NULL);
		int64_t m = 0;
		for (; m + 4 <= M; m += 4) q8_packed8_group(out + n, xq, xsum, pk, m, 4, nb, N, valid);
		switch (M - m) { // a constant row count in each call, so that the tile unrolls
		case 1: q8_packed8_group(out + n, xq, xsum, pk, m, 1, nb, N, valid); break;
		case 2: q8_packed8_group(out + n, xq, xsum, pk, m, 2, nb, N, valid); break;
		case 3: q8_packed8_group(out + n, xq, xsum, pk, m, 3, nb, N, valid); break;
		}
	}
}

// toy_matmul_q8 computes out[m, n] for m < M and n0 ≤ n < n1. With xsum (the
// toy_q8_xsum of xq) and scratch (K/32 · 576 bytes) it takes the packed path
// from Q8_PACKED8_MIN activation rows on: the pack pays off from 2 rows with
// AVX-VNNI, from 3 without (each row's products cost more there).
TOY_API void toy_matmul_q8(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                           int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	if (xsum && scratch && M >= Q8_PACKED8_MIN) {
		q8_gemm_packed8(out, xq, xsum, w, M, K, N, n0, n1, scratch);
		return;
	}
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		int32_t off[8];
		for (int j = 0; j < 8; j++) {
			int jj = j < valid ? j : valid - 1;
			r[j] = w + (n + jj) * rb;
			off[j] = (int32_t)(jj * rb);
		}
		__m256i gidx = _mm256_loadu_si256((const __m256i *)off);
		const uint8_t *pf = n + 16 <= n1 ? w + (n + 8) * rb : NULL; // the next tile, as in the AVX-512 kernel
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) {
			__m256 acc[2];
			const uint8_t *x[2] = {xq + m * rb, xq + (m + 1) * rb};
			q8_tile8(acc, x, 2, r, gidx, nb, m == 0 ? pf : NULL);
			for (int i = 0; i < 2; i++) {
				float tmp[8];
				_mm256_storeu_ps(tmp, acc[i]);
				for (int j = 0; j < valid; j++) out[(m + i) * N + n + j] = tmp[j];
			}
		}
		for (; m < M; m++) {
			__m256 acc[1];
			const uint8_t *x[1] = {xq + m * rb};
			q8_tile8(acc, x, 1, r, gidx, nb, m == 0 ? pf : NULL);
			float tmp[8];
			_mm256_storeu_ps(tmp, acc[0]);
			for (int j = 0; j < valid; j++) out[m * N + n + j] = tmp[j];
		}
	}
}

#elif defined(__aarch64__)

// 4 outputs per vector, one row per int32x4 of partial sums, reduced with
// pairwise adds to [r0 r1 r2 r3]. sdot where the CPU has it (ARMv8.2 dotprod),
// else widening multiplies (two products ≤ 2·127² fit int16).
TOY_INLINE int32x4_t q8_dot_block(int8x16_t w0, int8x16_t w1, int8x16_t x0, int8x16_t x1) {
#if defined(__ARM_FEATURE_DOTPROD)
	return vdotq_s32(vdotq_s32(vdupq_n_s32(0), w0, x0), w1, x1);
#else
	int16x8_t a = vmlal_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(x0)), vget_high_s8(w0), vget_high_s8(x0));
	int16x8_t b = vmlal_s8(vmull_s8(vget_low_s8(w1), vget_low_s8(x1)), vget_high_s8(w1), vget_high_s8(x1));
	return vpadalq_s16(vpaddlq_s16(a), b);
#endif
}

TOY_API void toy_matmul_q8(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                           int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / Q8_BLOCK, rb = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		for (int64_t m = 0; m < M; m++) {
			const uint8_t *x = xq + m * rb;
			float32x4_t acc = vdupq_n_f32(0);
			for (int64_t b = 0; b < nb; b++) {
				int64_t off = b * Q8_BYTES;
				int8x16_t x0 = vld1q_s8((const int8_t *)(x + off + 2)), x1 = vld1q_s8((const int8_t *)(x + off + 18));
				int32x4_t p[4];
				for (int j = 0; j < 4; j++)
					p[j] = q8_dot_block(vld1q_s8((const int8_t *)(r[j] + off + 2)),
					                    vld1q_s8((const int8_t *)(r[j] + off + 18)), x0, x1);
				int32x4_t s = vpaddq_s32(vpaddq_s32(p[0], p[1]), vpaddq_s32(p[2], p[3]));
				uint16_t h[4] = {toy_load_u16(r[0] + off), toy_load_u16(r[1] + off), toy_load_u16(r[2] + off),
				                 toy_load_u16(r[3] + off)};
				float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
				float32x4_t d = vmulq_f32(vdupq_n_f32(toy_fp16_f32(toy_load_u16(x + off))), dw);
				acc = vfmaq_f32(acc, vcvtq_f32_s32(s), d);
			}
			float tmp[4];
			vst1q_f32(tmp, acc);
			for (int j = 0; j < valid; j++) out[m * N + n + j] = tmp[j];
		}
	}
}

#else

TOY_API void toy_matmul_q8(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                           int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	toy_matmul_q8_ref(out, xq, w, M, K, N, n0, n1, xsum, scratch);
}

#endif
