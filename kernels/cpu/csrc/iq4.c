// iq4.c: IQ4_NL and MXFP4 weights × Q8_0 activations and IQ4_XS weights ×
// Q8_K activations (toy_quantize_q8k, kq.c): the non-linear 4-bit types,
// whose 4-bit indices select one of 16 levels from a table —
// llama.cpp's kvalues_iq4nl, or for MXFP4 (gpt-oss's experts) the E2M1
// values doubled, kvalues_mxfp4.
//
// Layouts are toy/tensor/quant's (iquant.go, mxfp4.go): an IQ4_NL block of 32
// weights is {fp16 d, 16 bytes of indices: weight i's in the low half of
// byte i for i < 16, the high half of byte i−16 after} (18 bytes), weight
// i = d·level(q_i); an MXFP4 block {exponent byte e, 16 bytes of indices
// laid out as IQ4_NL's} (17 bytes), weight i = level(q_i)·2^(e−128), half
// the E8M0 scale 2^(e−127) because the levels are doubled (e = 0, 1 give
// the subnormals 2⁻¹²⁸, 2⁻¹²⁷; 255 is 2¹²⁷); an IQ4_XS super-block of 256
// {fp16 d, 16-bit scales_h, 4 bytes scales_l, 128 bytes of indices, 16 per
// sub-block of 32 laid out as IQ4_NL's} (136 bytes), sub-block j's six-bit
// scale ls_j = nibble j%2 of scales_l[j/2] | (bits 2j, 2j+1 of scales_h)
// << 4, weight = d·(ls_j − 32)·level(q). The Q8_0 activations come with
// toy_q8_xsum's 128·Σq.
//
// out[m, n] is toy/tensor/quant's bit for bit: IQ4_NL's dotQ32, per block the
// exact integer s = Σ level(q_w)·q_x, then sum += float(s)·(fp16(d_w)·
// fp16(d_x)) (fused on arm64, as Go compiles it); MXFP4's dotMXFP4, the
// same s, then sum += (fp16(d_x)·2^(e−128))·float(s), the product rounded
// before the add on every architecture (Go's explicit conversion); IQ4_XS's
// dotIQ4XS, per super-block the exact integer dots = Σ_j (ls_j − 32)·Σ
// level(q_w)·q_x, then sum += (fp16(d_w)·x.d)·dots (fused on arm64). The
// IQ4_NL and MXFP4 kernels are one set, taking the type as a constant.
// The IQ4_NL levels are signed (−127 … 113)
// and do not fit seven bits, so vpmaddubsw can not take them offset to
// unsigned (pairs would saturate): the x86 kernels either multiply |level|
// by x with level's sign (vpsignb; pairs ≤ 2·127·127 fit int16), or, with
// VNNI's non-saturating vpdpbusd, take level + 128 and subtract 128·Σx
// (IQ4_NL, MXFP4: xsum; IQ4_XS: the activations' sums of 16 times
// −128·scale). The levels come from a 16-entry table: pshufb on x86, tbl
// on NEON.
#include "quant.h"

#define IQ4NL_BYTES 18
#define MXFP4_BYTES 17
#define IQ4XS_BYTES 136

static const int8_t iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// mxfp4_levels are the 16 E2M1 values doubled, 0, 0.5, 1, 1.5, 2, 3, 4, 6
// and their negatives (index 8 is −0, stored as 0): toy/tensor/quant's
// kvaluesMXFP4.
static const int8_t mxfp4_levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// mxfp4_half returns 2^(e−128), half the E8M0 scale of exponent byte e
// (toy/tensor/quant's e8m0Half): the subnormals 2⁻¹²⁸ and 2⁻¹²⁷ for e = 0, 1.
TOY_INLINE float mxfp4_half(uint8_t e) { return toy_bits_f32(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23); }

// The kernels for blocks of 32 (IQ4_NL, MXFP4) take the type t as a
// constant that inlining folds away; these give its block's size, where
// its indices start, its levels and its scale.
enum { T_IQ4NL, T_MXFP4 };
TOY_INLINE int64_t t_bytes(int t) { return t == T_MXFP4 ? MXFP4_BYTES : IQ4NL_BYTES; }
TOY_INLINE int t_qs(int t) { return t == T_MXFP4 ? 1 : 2; }
TOY_INLINE const int8_t *t_levels(int t) { return t == T_MXFP4 ? mxfp4_levels : iq4_levels; }
TOY_INLINE float t_scale(int t, const uint8_t *blk) {
	return t == T_MXFP4 ? mxfp4_half(blk[0]) : toy_fp16_f32(toy_load_u16(blk));
}

#if defined(__aarch64__)
#define IQ4NL_ACC(sum, s, d) __builtin_fmaf((float)(s), (d), (sum))
#else
#define IQ4NL_ACC(sum, s, d) ((sum) + (float)(s) * (d))
#endif
// MXFP4: the product rounded, then added, on every architecture.
#define MXFP4_ACC(sum, s, d) ((sum) + (d) * (float)(s))
// T_ACC: a block's step for type t, d = d_w·d_x (the same float as d_x·d_w).
#define T_ACC(t, sum, s, d) ((t) == T_MXFP4 ? MXFP4_ACC(sum, s, d) : IQ4NL_ACC(sum, s, d))

// iq4_level returns the level of weight i (0 … 31) of 16 index bytes qs.
TOY_INLINE int iq4_level(const uint8_t *qs, int i) { return iq4_levels[(i < 16 ? qs[i] : qs[i - 16] >> 4) & 0xF]; }

// mxfp4_level returns the doubled level of weight i (0 … 31) of 16 index bytes qs.
TOY_INLINE int mxfp4_level(const uint8_t *qs, int i) { return mxfp4_levels[(i < 16 ? qs[i] : qs[i - 16] >> 4) & 0xF]; }

// iq4xs_scale returns sub-block j's scale ls_j − 32 (−32 … 31).
TOY_INLINE int iq4xs_scale(const uint8_t *blk, int j) {
	int lo = blk[4 + j / 2] >> (4 * (j % 2)) & 0xF, hi = toy_load_u16(blk + 2) >> (2 * j) & 3;
	return (lo | hi << 4) - 32;
}

// ---------------------------------------------------------------------------
// The references: Go's loops.

static float dot_iq4nl_ref(const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * IQ4NL_BYTES, *xb = x + b * Q8_BYTES;
		int32_t s = 0;
		for (int i = 0; i < 32; i++) s += iq4_level(blk + 2, i) * (int32_t)(int8_t)xb[2 + i];
		sum = IQ4NL_ACC(sum, s, toy_fp16_f32(toy_load_u16(blk)) * toy_fp16_f32(toy_load_u16(xb)));
	}
	return sum;
}

static float dot_mxfp4_ref(const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * MXFP4_BYTES, *xb = x + b * Q8_BYTES;
		int32_t s = 0;
		for (int i = 0; i < 32; i++) s += mxfp4_level(blk + 1, i) * (int32_t)(int8_t)xb[2 + i];
		float d = toy_fp16_f32(toy_load_u16(xb)) * mxfp4_half(blk[0]);
		sum = MXFP4_ACC(sum, s, d);
	}
	return sum;
}

static float dot_iq4xs_ref(const uint8_t *w, const uint8_t *x, int64_t nb) {
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *blk = w + b * IQ4XS_BYTES, *xb = x + b * Q8K_BYTES;
		int32_t dots = 0;
		for (int j = 0; j < 8; j++) {
			int32_t dot = 0;
			for (int i = 0; i < 32; i++) dot += iq4_level(blk + 8 + 16 * j, i) * (int32_t)(int8_t)xb[32 * j + i];
			dots += iq4xs_scale(blk, j) * dot;
		}
		sum = KQ6_ACC(sum, toy_fp16_f32(toy_load_u16(blk)) * q8k_d(xb), (float)dots);
	}
	return sum;
}

// toy_matmul_iq4_nl_ref / toy_matmul_mxfp4_ref / toy_matmul_iq4_xs_ref
// compute out[m, n] for m < M and n0 ≤ n < n1, with w [N, K] in IQ4_NL,
// MXFP4 or IQ4_XS, xq [M, K] in Q8_0 (with xsum, toy_q8_xsum's M·K/32
// int32, which the fast IQ4_NL and MXFP4 kernels need) or Q8_K blocks, and
// out [M, N] in float32; scratch, when not NULL, is toy_iq4nl_scratch(K),
// toy_mxfp4_scratch(K) or toy_iq4xs_scratch(K) bytes.
TOY_API void toy_matmul_iq4_nl_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                   int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_iq4nl_ref(w + n * nb * IQ4NL_BYTES, xq + m * nb * Q8_BYTES, nb);
}

TOY_API void toy_matmul_mxfp4_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                 int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_mxfp4_ref(w + n * nb * MXFP4_BYTES, xq + m * nb * Q8_BYTES, nb);
}

TOY_API void toy_matmul_iq4_xs_ref(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                                   int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK;
	for (int64_t n = n0; n < n1; n++)
		for (int64_t m = 0; m < M; m++)
			out[m * N + n] = dot_iq4xs_ref(w + n * nb * IQ4XS_BYTES, xq + m * nb * Q8K_BYTES, nb);
}

// ---------------------------------------------------------------------------
// x86: AVX2, with the VNNI instructions where the variant has them.

#if defined(__AVX2__)

// iq4_table: the levels in both 128-bit halves, as the kernels take them:
// plus 128, unsigned, with VNNI; signed without.
TOY_INLINE __m256i iq4_table(const int8_t *levels) {
	__m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)levels));
#if KQ_VNNI
	t = _mm256_xor_si256(t, _mm256_set1_epi8((char)0x80));
#endif
	return t;
}

// iq4_unpack: the 32 levels of 16 index bytes, in weight order.
TOY_INLINE __m256i iq4_unpack(const uint8_t *qs, __m256i table) {
	__m128i v = _mm_loadu_si128((const __m128i *)qs);
	__m256i idx = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F));
	return _mm256_shuffle_epi8(table, idx);
}

// iq4_dot32: int32 lanes adding up to Σ level·x over 32 weights, w as
// iq4_unpack gives it, wa its absolute values (unused with VNNI): with
// VNNI, Σ (level + 128)·x (the caller subtracts 128·Σx); else
// vpmaddubsw(|level|, x with level's sign).
TOY_INLINE __m256i iq4_dot32(__m256i acc, __m256i w, __m256i wa, __m256i x) {
#if KQ_VNNI
	(void)wa;
	return DPBUSD256(acc, w, x);
#else
	return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(wa, _mm256_sign_epi8(x, w)), _mm256_set1_epi16(1)));
#endif
}

// t_scales8: the scales of block b of eight rows of type t, as float32:
// the fp16 d by vcvtph2ps, or E8M0's half 2^(e−128) built from its bits,
// (e−1) << 23, or 0x00200000 << e for the subnormals of e < 2.
TOY_INLINE __m256 t_scales8(int t, const uint8_t *const r[8], int64_t b) {
	const int64_t o = b * t_bytes(t);
	if (t == T_MXFP4) {
		__m256i e = _mm256_setr_epi32(r[0][o], r[1][o], r[2][o], r[3][o], r[4][o], r[5][o], r[6][o], r[7][o]);
		__m256i nrm = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
		__m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
		return _mm256_castsi256_ps(_mm256_blendv_epi8(nrm, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
	}
	__m128i h = _mm_setr_epi16((short)toy_load_u16(r[0] + o), (short)toy_load_u16(r[1] + o), (short)toy_load_u16(r[2] + o),
	                           (short)toy_load_u16(r[3] + o), (short)toy_load_u16(r[4] + o), (short)toy_load_u16(r[5] + o),
	                           (short)toy_load_u16(r[6] + o), (short)toy_load_u16(r[7] + o));
	return _mm256_cvtph_ps(h);
}

// Decode (fewer than IQ4_PACK_MIN activation rows), IQ4_NL and MXFP4: as
// q45.c's, eight weight rows at a time, one vector per row and block; the
// eight block sums reduce to one vector and the float steps run on its
// eight lanes (sum + float(s)·(d_w·d_x), rounded, then added: both types'
// step on x86).
TOY_INLINE void t_gemv8(int t, float *out, int64_t N, const uint8_t *xq, const int32_t *xsum, int MR,
                        const uint8_t *const r[8], int64_t nb, int valid, const uint8_t *pf) {
	const int64_t xrow = nb * Q8_BYTES, bytes = t_bytes(t);
	const __m256i table = iq4_table(t_levels(t));
	__m256 sum[2];
	for (int m = 0; m < MR; m++) sum[m] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 8 * bytes; i += 64) __builtin_prefetch(pf + 8 * bytes * b + i, 0, 2);
		__m256i q[8], qa[8];
		for (int j = 0; j < 8; j++) q[j] = iq4_unpack(r[j] + b * bytes + t_qs(t), table), qa[j] = _mm256_abs_epi8(q[j]);
		__m256 dw = t_scales8(t, r, b);
		for (int m = 0; m < MR; m++) {
			const uint8_t *xb = xq + m * xrow + b * Q8_BYTES;
			__m256i xv = _mm256_loadu_si256((const __m256i *)(xb + 2)), p[8];
			for (int j = 0; j < 8; j++) p[j] = iq4_dot32(_mm256_setzero_si256(), q[j], qa[j], xv);
			__m256i s = kq_reduce8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
#if KQ_VNNI
			s = _mm256_sub_epi32(s, _mm256_set1_epi32(xsum[m * nb + b]));
#endif
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

// Decode, IQ4_XS: as kq2.c's, four weight rows at a time, each super-block
// unpacked in registers and used at once: vpmaddubsw(|level|, x with
// level's sign), then vpmaddwd (or vpdpwssd) by the sub-block's scale,
// gives int32 lanes adding up to the row's dots; the four rows reduce
// together and the float steps run on four lanes.
TOY_INLINE void iq4xs_gemv4(float *out, int64_t N, const uint8_t *xq, int MR, const uint8_t *const r[4], int64_t nb,
                            int valid, const uint8_t *pf) {
	const int64_t xrow = nb * Q8K_BYTES;
	const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)iq4_levels));
	__m128 sum[2];
	for (int m = 0; m < MR; m++) sum[m] = _mm_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		if (pf)
			for (int i = 0; i < 4 * IQ4XS_BYTES; i += 64) __builtin_prefetch(pf + 4 * IQ4XS_BYTES * b + i, 0, 2);
		const uint8_t *xb[2];
		for (int m = 0; m < MR; m++) xb[m] = xq + m * xrow + b * Q8K_BYTES;
		__m256i acc[2][4];
		float dh[4];
		for (int n = 0; n < 4; n++) {
			const uint8_t *blk = r[n] + b * IQ4XS_BYTES;
			dh[n] = _cvtsh_ss(toy_load_u16(blk));
			for (int m = 0; m < MR; m++) acc[m][n] = _mm256_setzero_si256();
			for (int k = 0; k < 8; k++) {
				__m256i w = iq4_unpack(blk + 8 + 16 * k, table), wa = _mm256_abs_epi8(w);
				__m256i sv = _mm256_set1_epi16((short)iq4xs_scale(blk, k));
				for (int m = 0; m < MR; m++) {
					__m256i xv = _mm256_loadu_si256((const __m256i *)(xb[m] + 32 * k));
					acc[m][n] = DPWSSD256(acc[m][n], _mm256_maddubs_epi16(wa, _mm256_sign_epi8(xv, w)), sv);
				}
			}
		}
		__m128 dw = _mm_loadu_ps(dh);
		for (int m = 0; m < MR; m++) {
			__m128 fd = _mm_cvtepi32_ps(kq_reduce4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]));
			sum[m] = _mm_add_ps(sum[m], _mm_mul_ps(_mm_mul_ps(dw, _mm_set1_ps(q8k_d(xb[m]))), fd));
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		_mm_storeu_ps(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

// Prefill (from IQ4_PACK_MIN activation rows on): each tile of KR weight
// rows is unpacked once into scratch with lane k holding row k (the levels
// four at a time, as iq4_table gives them, then the scales), and each
// activation row's groups of four are broadcast, so that every row's sums
// build up in its own lane.
#define IQ4_PACK_MIN 4
#define IQ4_MR (KR == 16 ? 6 : 4) // activation rows at a time

// IQ4_NL (and MXFP4) tile, per block: 8 vectors of levels, the KR scales
// as float32 (d, or 2^(e−128)).
#define NLP_D (8 * 4 * KR)
#define NLP_BLOCK (9 * 4 * KR)

// IQ4_XS tile, per super-block: 64 vectors of levels; 8 of scales (int32
// with VNNI, for vpmulld; an int16 pair without, for vpmaddwd); 8 of
// int16 pairs −128·scale (VNNI: the coefficients of the activations' sums
// of 16 that take the +128 back out); d as float32.
#define XSP_SV (64 * 4 * KR)
#define XSP_CV (72 * 4 * KR)
#define XSP_D (80 * 4 * KR)
#define XSP_BLOCK (81 * 4 * KR)

TOY_INLINE void t_pack(int t, uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const __m256i table = iq4_table(t_levels(t));
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * NLP_BLOCK;
		for (int h = 0; h < KR / 8; h++) {
			__m256i v[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * t_bytes(t);
				v[i] = iq4_unpack(blk + t_qs(t), table);
				float d = t_scale(t, blk);
				__builtin_memcpy(pb + NLP_D + 4 * (8 * h + i), &d, 4);
			}
			kq_t8(o, v);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

// iq4_pdot: kvi lanes plus Σ level·x over one group of four in each lane,
// the levels wv as packed, x four bytes broadcast: vpdpbusd with VNNI (the
// caller corrects by 128·Σx); else vpsignb and vpmaddubsw on 256 bits (KR
// is 8 without VNNI), wa = |wv|.
#if KQ_VNNI
#define IQ4_PDOT(acc, wv, wa, x) ((void)(wa), KV_DPBUSD((acc), (wv), KV_BCAST(x)))
#else
#define IQ4_PDOT(acc, wv, wa, x)                                                                                      \
	_mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((wa), _mm256_sign_epi8(KV_BCAST(x), (wv))),      \
	                                          _mm256_set1_epi16(1)))
#endif

TOY_INLINE kvi iq4_abs(kvi v) {
#if KQ_VNNI
	return v; // IQ4_PDOT takes no absolute values
#else
	return _mm256_abs_epi8(v);
#endif
}

// t_packed_rows: IQ4_NL and MXFP4 alike, once packed.
TOY_INLINE void t_packed_rows(float *const out[], const uint8_t *const x[], const int32_t *const xs[], int MR,
                                  const uint8_t *pk, int64_t nb, int valid) {
	kvf sum[IQ4_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * NLP_BLOCK;
		kvi acc[2][IQ4_MR]; // two sums per row: vpdpbusd's latency is several cycles
		for (int i = 0; i < MR; i++) {
#if KQ_VNNI
			acc[0][i] = KV_SET1(-xs[i][b]);
#else
			acc[0][i] = KV_ZERO();
#endif
			acc[1][i] = KV_ZERO();
		}
		for (int g = 0; g < 8; g++) {
			kvi wv = KV_LOAD(pb + g * 4 * KR), wa = iq4_abs(wv);
			for (int i = 0; i < MR; i++) acc[g & 1][i] = IQ4_PDOT(acc[g & 1][i], wv, wa, x[i] + b * Q8_BYTES + 2 + 4 * g);
		}
		kvf d = KF_LOAD((const float *)(pb + NLP_D));
		for (int i = 0; i < MR; i++) {
			kvf dx = KF_MUL(d, KF_SET1(toy_fp16_f32(toy_load_u16(x[i] + b * Q8_BYTES))));
			sum[i] = KF_ADD(sum[i], KF_MUL(KF_CVT(KV_ADD(acc[0][i], acc[1][i])), dx));
		}
	}
	for (int i = 0; i < MR; i++) kf_store(out[i], sum[i], valid);
}

static void iq4xs_pack(uint8_t *pk, const uint8_t *const r[KR], int64_t nb) {
	const __m256i table = iq4_table(iq4_levels);
	for (int64_t b = 0; b < nb; b++) {
		uint8_t *pb = pk + b * XSP_BLOCK;
		for (int h = 0; h < KR / 8; h++) { // eight rows at a time: lanes 8h … 8h+7
			__m256i q[8][8], sv[8], cv[8], o[8];
			for (int i = 0; i < 8; i++) {
				const uint8_t *blk = r[8 * h + i] + b * IQ4XS_BYTES;
				for (int k = 0; k < 8; k++) q[i][k] = iq4_unpack(blk + 8 + 16 * k, table);
				int32_t sc[8], pr[8], co[8];
				for (int k = 0; k < 8; k++) {
					sc[k] = iq4xs_scale(blk, k);
					pr[k] = (int32_t)((uint32_t)(uint16_t)sc[k] | (uint32_t)(uint16_t)sc[k] << 16);
					co[k] = (int32_t)((uint32_t)(uint16_t)(-128 * sc[k]) | (uint32_t)(uint16_t)(-128 * sc[k]) << 16);
				}
				sv[i] = _mm256_loadu_si256((const __m256i *)(KQ_VNNI ? sc : pr));
				cv[i] = _mm256_loadu_si256((const __m256i *)co);
				float d = toy_fp16_f32(toy_load_u16(blk));
				__builtin_memcpy(pb + XSP_D + 4 * (8 * h + i), &d, 4);
			}
			for (int k = 0; k < 8; k++) {
				__m256i v[8];
				for (int i = 0; i < 8; i++) v[i] = q[i][k];
				kq_t8(o, v);
				for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + (8 * k + j) * 4 * KR + 32 * h), o[j]);
			}
			kq_t8(o, sv);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + XSP_SV + j * 4 * KR + 32 * h), o[j]);
			kq_t8(o, cv);
			for (int j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(pb + XSP_CV + j * 4 * KR + 32 * h), o[j]);
		}
	}
}

TOY_INLINE void iq4xs_packed_rows(float *const out[], const uint8_t *const x[], int MR, const uint8_t *pk, int64_t nb,
                                  int valid) {
	kvf sum[IQ4_MR];
	for (int i = 0; i < MR; i++) sum[i] = KF_ZERO();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *pb = pk + b * XSP_BLOCK;
		const uint8_t *xb[IQ4_MR];
		kvi acc[IQ4_MR];
		for (int i = 0; i < MR; i++) xb[i] = x[i] + b * Q8K_BYTES, acc[i] = KV_ZERO();
		for (int k = 0; k < 8; k++) {
			kvi sv = KV_LOAD(pb + XSP_SV + k * 4 * KR);
#if KQ_VNNI
			// vpdpbusd sums the sub-block's (level + 128)·x, one vpmulld
			// scales it (two sums per row: vpdpbusd's latency)
			kvi sub[2][IQ4_MR];
			for (int i = 0; i < MR; i++) sub[0][i] = sub[1][i] = KV_ZERO();
			for (int t = 0; t < 8; t++) {
				kvi wv = KV_LOAD(pb + (8 * k + t) * 4 * KR);
				for (int i = 0; i < MR; i++) sub[t & 1][i] = IQ4_PDOT(sub[t & 1][i], wv, wv, xb[i] + 32 * k + 4 * t);
			}
			for (int i = 0; i < MR; i++) acc[i] = KV_ADD(acc[i], KV_MULLO(KV_ADD(sub[0][i], sub[1][i]), sv));
#else
			for (int t = 0; t < 8; t++) {
				kvi wv = KV_LOAD(pb + (8 * k + t) * 4 * KR), wa = iq4_abs(wv);
				for (int i = 0; i < MR; i++)
					acc[i] = KV_DPWSSD(acc[i], _mm256_maddubs_epi16(wa, _mm256_sign_epi8(KV_BCAST(xb[i] + 32 * k + 4 * t), wv)),
					                   sv);
			}
#endif
		}
#if KQ_VNNI
		// −128·Σ_j scale_j·(Σx of sub-block j), from the sums of 16
		for (int j = 0; j < 8; j++) {
			kvi cv = KV_LOAD(pb + XSP_CV + j * 4 * KR);
			for (int i = 0; i < MR; i++) acc[i] = KV_DPWSSD(acc[i], cv, KV_BCAST(xb[i] + Q8K_BSUMS + 4 * j));
		}
#endif
		kvf d = KF_LOAD((const float *)(pb + XSP_D));
		for (int i = 0; i < MR; i++) sum[i] = KF_ADD(sum[i], KF_MUL(KF_MUL(d, KF_SET1(q8k_d(xb[i]))), KF_CVT(acc[i])));
	}
	for (int i = 0; i < MR; i++) kf_store(out[i], sum[i], valid);
}

TOY_API int64_t toy_iq4nl_scratch(int64_t K) { return K / 32 * NLP_BLOCK + 64; }
TOY_API int64_t toy_mxfp4_scratch(int64_t K) { return K / 32 * NLP_BLOCK + 64; }
TOY_API int64_t toy_iq4xs_scratch(int64_t K) { return K / QK * XSP_BLOCK + 64; }

TOY_INLINE void t_matmul(int t, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32, rb = nb * t_bytes(t), xrow = nb * Q8_BYTES;
	if (scratch && M >= IQ4_PACK_MIN) {
		uint8_t *pk = kq_align(scratch);
		for (int64_t n = n0; n < n1; n += KR) {
			int valid = (int)(n1 - n < KR ? n1 - n : KR);
			const uint8_t *r[KR];
			for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
			t_pack(t, pk, r, nb);
			for (int64_t m = 0; m < M;) {
				int mr = M - m >= IQ4_MR ? IQ4_MR : M - m >= 2 ? 2 : 1;
				float *o[IQ4_MR];
				const uint8_t *x[IQ4_MR];
				const int32_t *xs[IQ4_MR];
				for (int i = 0; i < mr; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow, xs[i] = xsum + (m + i) * nb;
				if (mr == IQ4_MR)
					t_packed_rows(o, x, xs, IQ4_MR, pk, nb, valid);
				else if (mr == 2)
					t_packed_rows(o, x, xs, 2, pk, nb, valid);
				else
					t_packed_rows(o, x, xs, 1, pk, nb, valid);
				m += mr;
			}
		}
		return;
	}
	for (int64_t n = n0; n < n1; n += 8) {
		int valid = (int)(n1 - n < 8 ? n1 - n : 8);
		const uint8_t *r[8];
		for (int j = 0; j < 8; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 24 <= n1 ? w + (n + 16) * rb : NULL; // the rows after the next eight
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) t_gemv8(t, out + m * N + n, N, xq + m * xrow, xsum + m * nb, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++) t_gemv8(t, out + m * N + n, N, xq + m * xrow, xsum + m * nb, 1, r, nb, valid, m ? NULL : pf);
	}
}

TOY_API void toy_matmul_iq4_xs(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                               int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK, rb = nb * IQ4XS_BYTES, xrow = nb * Q8K_BYTES;
	if (scratch && M >= IQ4_PACK_MIN) {
		uint8_t *pk = kq_align(scratch);
		for (int64_t n = n0; n < n1; n += KR) {
			int valid = (int)(n1 - n < KR ? n1 - n : KR);
			const uint8_t *r[KR];
			for (int j = 0; j < KR; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
			iq4xs_pack(pk, r, nb);
			for (int64_t m = 0; m < M;) {
				int mr = M - m >= IQ4_MR ? IQ4_MR : M - m >= 2 ? 2 : 1;
				float *o[IQ4_MR];
				const uint8_t *x[IQ4_MR];
				for (int i = 0; i < mr; i++) o[i] = out + (m + i) * N + n, x[i] = xq + (m + i) * xrow;
				if (mr == IQ4_MR)
					iq4xs_packed_rows(o, x, IQ4_MR, pk, nb, valid);
				else if (mr == 2)
					iq4xs_packed_rows(o, x, 2, pk, nb, valid);
				else
					iq4xs_packed_rows(o, x, 1, pk, nb, valid);
				m += mr;
			}
		}
		return;
	}
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		const uint8_t *pf = n + 12 <= n1 ? w + (n + 8) * rb : NULL; // the rows after the next four
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) iq4xs_gemv4(out + m * N + n, N, xq + m * xrow, 2, r, nb, valid, m ? NULL : pf);
		for (; m < M; m++) iq4xs_gemv4(out + m * N + n, N, xq + m * xrow, 1, r, nb, valid, m ? NULL : pf);
	}
}

#elif defined(__aarch64__)

// NEON: four weight rows at a time against one or two activation rows;
// the levels by tbl from the 16 index nibbles, kq_dot16, the four rows'
// lanes reduced pairwise, and Go's step on four lanes (fused for IQ4_NL
// and IQ4_XS, not for MXFP4).
TOY_INLINE void iq4_neon_levels(const uint8_t *qs, int8x16_t table, int8x16_t *w0, int8x16_t *w1) {
	uint8x16_t v = vld1q_u8(qs);
	*w0 = vqtbl1q_s8(table, vandq_u8(v, vdupq_n_u8(0x0F)));
	*w1 = vqtbl1q_s8(table, vshrq_n_u8(v, 4));
}

TOY_INLINE void t_neon_rows(int t, float *out, int64_t N, const uint8_t *x, int64_t xrow, int MR, const uint8_t *const r[4],
                            int64_t nb, int valid) {
	const int8x16_t table = vld1q_s8(t_levels(t));
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
		float de[4];
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = r[j] + b * t_bytes(t);
			int8x16_t w0, w1;
			iq4_neon_levels(blk + t_qs(t), table, &w0, &w1);
			for (int m = 0; m < MR; m++) p[m][j] = kq_dot16(kq_dot16(vdupq_n_s32(0), w0, x0[m]), w1, x1[m]);
			if (t == T_MXFP4)
				de[j] = mxfp4_half(blk[0]);
			else
				dh[j] = toy_load_u16(blk);
		}
		float32x4_t dw = t == T_MXFP4 ? vld1q_f32(de) : vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dh)));
		for (int m = 0; m < MR; m++) {
			float32x4_t s = vcvtq_f32_s32(kq_reduce4(p[m][0], p[m][1], p[m][2], p[m][3]));
			float32x4_t d = vmulq_n_f32(dw, toy_fp16_f32(toy_load_u16(x + m * xrow + b * Q8_BYTES)));
			sum[m] = t == T_MXFP4 ? vaddq_f32(sum[m], vmulq_f32(d, s)) : vfmaq_f32(sum[m], s, d);
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		vst1q_f32(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_INLINE void iq4xs_neon_rows(float *out, int64_t N, const uint8_t *x, int64_t xrow, int MR, const uint8_t *const r[4],
                                int64_t nb, int valid) {
	const int8x16_t table = vld1q_s8(iq4_levels);
	float32x4_t sum[2];
	for (int m = 0; m < MR; m++) sum[m] = vdupq_n_f32(0);
	for (int64_t b = 0; b < nb; b++) {
		int32x4_t acc[2][4];
		float dh[4];
		for (int j = 0; j < 4; j++) {
			const uint8_t *blk = r[j] + b * IQ4XS_BYTES;
			dh[j] = toy_fp16_f32(toy_load_u16(blk));
			for (int m = 0; m < MR; m++) acc[m][j] = vdupq_n_s32(0);
			for (int k = 0; k < 8; k++) {
				int8x16_t w0, w1;
				iq4_neon_levels(blk + 8 + 16 * k, table, &w0, &w1);
				int sc = iq4xs_scale(blk, k);
				for (int m = 0; m < MR; m++) {
					const int8_t *xb = (const int8_t *)(x + m * xrow + b * Q8K_BYTES + 32 * k);
					int32x4_t p = kq_dot16(kq_dot16(vdupq_n_s32(0), w0, vld1q_s8(xb)), w1, vld1q_s8(xb + 16));
					acc[m][j] = vmlaq_n_s32(acc[m][j], p, sc);
				}
			}
		}
		float32x4_t dw = vld1q_f32(dh);
		for (int m = 0; m < MR; m++) {
			float32x4_t fd = vcvtq_f32_s32(kq_reduce4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]));
			sum[m] = vfmaq_f32(sum[m], vmulq_n_f32(dw, q8k_d(x + m * xrow + b * Q8K_BYTES)), fd);
		}
	}
	for (int m = 0; m < MR; m++) {
		float tmp[4];
		vst1q_f32(tmp, sum[m]);
		for (int j = 0; j < valid; j++) out[m * N + j] = tmp[j];
	}
}

TOY_API int64_t toy_iq4nl_scratch(int64_t K) { return 0; }
TOY_API int64_t toy_mxfp4_scratch(int64_t K) { return 0; }
TOY_API int64_t toy_iq4xs_scratch(int64_t K) { return 0; }

TOY_INLINE void t_matmul(int t, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32, rb = nb * t_bytes(t), xrow = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) t_neon_rows(t, out + m * N + n, N, xq + m * xrow, xrow, 2, r, nb, valid);
		for (; m < M; m++) t_neon_rows(t, out + m * N + n, N, xq + m * xrow, xrow, 1, r, nb, valid);
	}
}

TOY_API void toy_matmul_iq4_xs(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                               int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK, rb = nb * IQ4XS_BYTES, xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n += 4) {
		int valid = (int)(n1 - n < 4 ? n1 - n : 4);
		const uint8_t *r[4];
		for (int j = 0; j < 4; j++) r[j] = w + (n + (j < valid ? j : valid - 1)) * rb;
		int64_t m = 0;
		for (; m + 2 <= M; m += 2) iq4xs_neon_rows(out + m * N + n, N, xq + m * xrow, xrow, 2, r, nb, valid);
		for (; m < M; m++) iq4xs_neon_rows(out + m * N + n, N, xq + m * xrow, xrow, 1, r, nb, valid);
	}
}

#else

// Plain C (x86-64 without AVX2): each block's levels unpacked once into
// signed bytes and used by up to eight activation rows, in loops the
// compiler vectorizes.
TOY_INLINE void iq4_bytes(const int8_t *levels, const uint8_t *qs, int8_t q[32]) {
	for (int i = 0; i < 16; i++) q[i] = levels[qs[i] & 0xF], q[i + 16] = levels[qs[i] >> 4];
}

TOY_API int64_t toy_iq4nl_scratch(int64_t K) { return 0; }
TOY_API int64_t toy_mxfp4_scratch(int64_t K) { return 0; }
TOY_API int64_t toy_iq4xs_scratch(int64_t K) { return 0; }

TOY_INLINE void t_matmul(int t, float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                         int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / 32, rb = nb * t_bytes(t), xrow = nb * Q8_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = w + n * rb + b * t_bytes(t);
				int8_t q[32];
				iq4_bytes(t_levels(t), blk + t_qs(t), q);
				float dw = t_scale(t, blk);
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q8_BYTES;
					int32_t s = 0;
					for (int k = 0; k < 32; k++) s += (int32_t)q[k] * (int8_t)xb[2 + k];
					sum[i] = T_ACC(t, sum[i], s, dw * toy_fp16_f32(toy_load_u16(xb)));
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

TOY_API void toy_matmul_iq4_xs(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                               int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	int64_t nb = K / QK, rb = nb * IQ4XS_BYTES, xrow = nb * Q8K_BYTES;
	for (int64_t n = n0; n < n1; n++) {
		for (int64_t m0 = 0; m0 < M; m0 += 8) {
			int mr = (int)(M - m0 < 8 ? M - m0 : 8);
			float sum[8] = {0};
			for (int64_t b = 0; b < nb; b++) {
				const uint8_t *blk = w + n * rb + b * IQ4XS_BYTES;
				int8_t q[QK];
				int32_t sc[8];
				for (int k = 0; k < 8; k++) iq4_bytes(iq4_levels, blk + 8 + 16 * k, q + 32 * k), sc[k] = iq4xs_scale(blk, k);
				float dw = toy_fp16_f32(toy_load_u16(blk));
				for (int i = 0; i < mr; i++) {
					const uint8_t *xb = xq + (m0 + i) * xrow + b * Q8K_BYTES;
					const int8_t *x = (const int8_t *)xb;
					int32_t dots = 0;
					for (int k = 0; k < 8; k++) {
						int32_t s = 0;
						for (int l = 0; l < 32; l++) s += (int32_t)q[32 * k + l] * x[32 * k + l];
						dots += sc[k] * s;
					}
					sum[i] = KQ6_ACC(sum[i], dw * q8k_d(xb), (float)dots);
				}
			}
			for (int i = 0; i < mr; i++) out[(m0 + i) * N + n] = sum[i];
		}
	}
}

#endif

// toy_matmul_iq4_nl and toy_matmul_mxfp4: t_matmul, the variant's kernel
// for blocks of 32, of either type.
TOY_API void toy_matmul_iq4_nl(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                               int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	t_matmul(T_IQ4NL, out, xq, w, M, K, N, n0, n1, xsum, scratch);
}

TOY_API void toy_matmul_mxfp4(float *out, const uint8_t *xq, const uint8_t *w, int64_t M, int64_t K, int64_t N,
                              int64_t n0, int64_t n1, const int32_t *xsum, uint8_t *scratch) {
	t_matmul(T_MXFP4, out, xq, w, M, K, N, n0, n1, xsum, scratch);
}

TOY_API int64_t toy_iq4nl_scratch_ref(int64_t K) { return toy_iq4nl_scratch(K); }
TOY_API int64_t toy_mxfp4_scratch_ref(int64_t K) { return toy_mxfp4_scratch(K); }
TOY_API int64_t toy_iq4xs_scratch_ref(int64_t K) { return toy_iq4xs_scratch(K); }
