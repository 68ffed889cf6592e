// ops.c: the row-wise ops around the matrix multiplies — RMSNorm, SiLU,
// SwiGLU and attention over a KV cache — each with its reference.
//
// They follow toy/tensor's pure-Go arithmetic step for step: RMSNorm sums
// squares in double, attention scores are dotF32 in its order, softmax
// subtracts the row maximum (the sink's logit among it, with attention
// sinks), exponentiates in double (terms below 2^-126 are 0: toy_softmax_exp)
// and sums in double (the sink's term last), and the value rows are added in
// key order. With toy_exp_f32 (see toy.h) the results are bit-identical to
// the Go backend's in all the tests.
#include "toy.h"

#if defined(__aarch64__)
#define MADD(acc, a, b) __builtin_fmaf((a), (b), (acc))
#else
#define MADD(acc, a, b) ((acc) + (a) * (b))
#endif

// rmsnorm_row: out = x / sqrt(mean(x²) + eps) ⊙ w (w may be NULL).
TOY_INLINE void rmsnorm_row(float *out, const float *x, const float *w, int64_t D, float eps) {
	double sum = 0;
	for (int64_t i = 0; i < D; i++) sum += (double)(x[i] * x[i]);
	float mean = (float)(sum / (double)D);
	float scale = 1.0f / (float)__builtin_sqrt((double)(mean + eps));
	for (int64_t i = 0; i < D; i++) out[i] = x[i] * scale;
	if (w)
		for (int64_t i = 0; i < D; i++) out[i] = out[i] * w[i];
}

// toy_rmsnorm normalises rows [r0, r1) of x [R, D]; eps is float32 bits.
TOY_API void toy_rmsnorm(float *out, const float *x, const float *w, int64_t D, int64_t r0, int64_t r1, uint32_t eps) {
	for (int64_t r = r0; r < r1; r++) rmsnorm_row(out + r * D, x + r * D, w, D, toy_bits_f32(eps));
}

TOY_API void toy_rmsnorm_ref(float *out, const float *x, const float *w, int64_t D, int64_t r0, int64_t r1,
                             uint32_t eps) {
	for (int64_t r = r0; r < r1; r++) {
		const float *xr = x + r * D;
		float *o = out + r * D;
		double sum = 0;
		for (int64_t i = 0; i < D; i++) sum += (double)(xr[i] * xr[i]);
		float scale = 1.0f / (float)__builtin_sqrt((double)((float)(sum / (double)D) + toy_bits_f32(eps)));
		for (int64_t i = 0; i < D; i++) o[i] = w ? xr[i] * scale * w[i] : xr[i] * scale;
	}
}

// silu(v) = v·σ(v) = v / (1 + e^−v).
TOY_INLINE float silu(float v) { return v / (1.0f + toy_exp_f32(-v)); }

TOY_API void toy_silu(float *out, const float *x, int64_t n) {
	for (int64_t i = 0; i < n; i++) out[i] = silu(x[i]);
}

// toy_swiglu: out = SiLU(gate) ⊙ up.
TOY_API void toy_swiglu(float *out, const float *gate, const float *up, int64_t n) {
	for (int64_t i = 0; i < n; i++) out[i] = silu(gate[i]) * up[i];
}

// The references: the same formula, one element at a time.
__attribute__((optimize("no-tree-vectorize")))
TOY_API void toy_silu_ref(float *out, const float *x, int64_t n) {
	for (int64_t i = 0; i < n; i++) out[i] = silu(x[i]);
}

__attribute__((optimize("no-tree-vectorize"))) TOY_API void toy_swiglu_ref(float *out, const float *gate, const float *up, int64_t n) {
	for (int64_t i = 0; i < n; i++) out[i] = silu(gate[i]) * up[i];
}

// softmax_sink: max-subtracted exponentials, their sum in double, one scale
// — with one more logit, sink, in the max and the sum but not in p (an
// attention sink; none when has_sink is 0), as tensor's softmaxSink: the
// sink's term added after the row's.
TOY_INLINE void softmax_sink(float *p, int64_t n, int has_sink, float sink) {
	float m = p[0];
	for (int64_t s = 1; s < n; s++) m = p[s] > m ? p[s] : m;
	if (has_sink && sink > m) m = sink;
	for (int64_t s = 0; s < n; s++) p[s] = toy_softmax_exp(p[s] - m);
	double sum = 0;
	for (int64_t s = 0; s < n; s++) sum += (double)p[s];
	if (has_sink) sum += (double)toy_softmax_exp(sink - m);
	float inv = (float)(1.0 / sum);
	for (int64_t s = 0; s < n; s++) p[s] *= inv;
}

// attn_keys: the keys query t (position past+t) sees, lo … hi —
// tensor.AttentionOptions.Keys: all past+T keys when bidir_T = T > 0, else
// causal; only the last window positions when window > 0.
TOY_INLINE void attn_keys(int64_t t, int64_t past, int64_t bidir_T, int64_t window, int64_t *lo, int64_t *hi) {
	*hi = bidir_T > 0 ? past + bidir_T - 1 : past + t;
	*lo = window > 0 && past + t - window + 1 > 0 ? past + t - window + 1 : 0;
}

// attn_cap: s ← cap·tanh(s/cap) for each of n scores, when cap > 0 (Gemma 2's
// soft-capping), with tanh in double precision as Go's math.Tanh.
TOY_INLINE void attn_cap(float *p, int64_t n, float cap) {
	if (cap <= 0) return;
	for (int64_t s = 0; s < n; s++) p[s] = cap * toy_tanh_f32(p[s] / cap);
}

// toy_attn_args holds an attention call's shape and options, passed by
// pointer (purego passes at most 15 arguments); attnArgs in backend.go
// mirrors it: six int64, two floats, a pointer, no padding.
typedef struct {
	int64_t H, KV, Dh;  // query heads, KV heads, head size
	int64_t past;       // positions before the first query
	int64_t bidir_T;    // T for bidirectional attention, else 0
	int64_t window;     // sliding window, 0 for none
	float scale, cap;   // score scale; soft cap, 0 for none
	const float *sinks; // one sink logit per query head [H], or NULL
} toy_attn_args;

#if defined(__AVX512F__)
// Heads that share a KV head read the same key and value rows: attn_heads
// takes NH (≤ 4) of them for one query, loading each row once for all.
//
// Scores, sixteen keys at a time: vector m holds keys s+4L+m in its 128-bit
// lanes L, each lane the four partial sums of dotF32 (i ≡ c mod 4). A 4×4
// transpose of 128-bit blocks of four key rows gives the vector of column
// block i of the four keys, multiplied by the head's q[4i..4i+3] in every
// lane and added in block order: per lane, gemv4_f32's adds. Two rounds of
// in-lane shuffles then add (s0 + s1) + (s2 + s3), which puts key s+j in
// lane j.
//
// Softmax per head as softmax_sink, the NH sums in double side by side (one
// chain per head, in key order). Values: o += p·v, key by key, 64 columns of
// the NH heads at a time, each value row loaded once.
#define ATTN_HC 4
#define ATTN_DH 256 // the largest head size it takes

// attn_cols accumulates NH heads' outputs o[h][c … c+16·NV) over the n value
// rows from v0 (stride kc), weights p[h][s].
TOY_INLINE void attn_cols(int NH, int NV, float *const o[], const float *const p[], const float *v0, int64_t kc,
                          int64_t n, int64_t c) {
	__m512 acc[ATTN_HC][4];
	for (int h = 0; h < NH; h++)
		for (int j = 0; j < NV; j++) acc[h][j] = _mm512_setzero_ps();
	for (int64_t s = 0; s < n; s++) {
		const float *vr = v0 + s * kc + c;
		__m512 vv[4];
		for (int j = 0; j < NV; j++) vv[j] = _mm512_loadu_ps(vr + 16 * j);
		for (int h = 0; h < NH; h++) {
			__m512 pb = _mm512_set1_ps(p[h][s]);
			for (int j = 0; j < NV; j++) acc[h][j] = _mm512_add_ps(acc[h][j], _mm512_mul_ps(pb, vv[j]));
		}
	}
	for (int h = 0; h < NH; h++)
		for (int j = 0; j < NV; j++) _mm512_storeu_ps(o[h] + c + 16 * j, acc[h][j]);
}

TOY_INLINE void attn_heads(int NH, float *out, const float *q, const float *k, const float *v, const toy_attn_args *a,
                           int64_t t, int64_t h0, float *scratch) {
	int64_t H = a->H, Dh = a->Dh, qc = H * Dh, kc = a->KV * Dh, kvh = h0 / (H / a->KV), lo, hi;
	attn_keys(t, a->past, a->bidir_T, a->window, &lo, &hi);
	int64_t n = hi - lo + 1, ps = (n + 15) / 16 * 16;
	const float *k0 = k + lo * kc + kvh * Dh, *v0 = v + lo * kc + kvh * Dh;
	const float *qh[ATTN_HC];
	float *p[ATTN_HC], *o[ATTN_HC];
	for (int h = 0; h < NH; h++)
		qh[h] = q + t * qc + (h0 + h) * Dh, p[h] = scratch + h * ps, o[h] = out + t * qc + (h0 + h) * Dh;
	// q[4i … 4i+3] of each head in all four lanes
	__m512 qb[ATTN_HC][ATTN_DH / 4];
	for (int h = 0; h < NH; h++)
		for (int64_t i = 0; i < Dh / 4; i++) qb[h][i] = _mm512_broadcast_f32x4(_mm_loadu_ps(qh[h] + 4 * i));
	const __m512 scale = _mm512_set1_ps(a->scale);
	for (int64_t s = 0; s < n; s += 16) {
		__m512 acc[ATTN_HC][4];
		for (int h = 0; h < NH; h++)
			for (int m = 0; m < 4; m++) acc[h][m] = _mm512_setzero_ps();
		for (int m = 0; m < 4; m++) {
			const float *r[4];
			for (int L = 0; L < 4; L++) r[L] = k0 + (s + 4 * L + m < n ? s + 4 * L + m : n - 1) * kc;
			for (int64_t c = 0; c < Dh; c += 16) {
				// a decode step finds a sequence's cache in memory: the key rows
				// of the next sixteen keys, and these keys' value rows for the
				// sums after the softmax
				for (int L = 0; L < 4; L++) {
					__builtin_prefetch(r[L] + 16 * kc + c, 0, 3);
					__builtin_prefetch(v0 + (r[L] - k0) + c, 0, 2);
				}
				__m512 p0 = _mm512_loadu_ps(r[0] + c), p1 = _mm512_loadu_ps(r[1] + c);
				__m512 p2 = _mm512_loadu_ps(r[2] + c), p3 = _mm512_loadu_ps(r[3] + c);
				__m512 t0 = _mm512_shuffle_f32x4(p0, p1, 0x44), t1 = _mm512_shuffle_f32x4(p0, p1, 0xee);
				__m512 t2 = _mm512_shuffle_f32x4(p2, p3, 0x44), t3 = _mm512_shuffle_f32x4(p2, p3, 0xee);
				__m512 b[4] = {_mm512_shuffle_f32x4(t0, t2, 0x88), _mm512_shuffle_f32x4(t0, t2, 0xdd),
				               _mm512_shuffle_f32x4(t1, t3, 0x88), _mm512_shuffle_f32x4(t1, t3, 0xdd)};
				for (int h = 0; h < NH; h++)
					for (int i = 0; i < 4; i++) acc[h][m] = _mm512_add_ps(acc[h][m], _mm512_mul_ps(qb[h][c / 4 + i], b[i]));
			}
		}
		for (int h = 0; h < NH; h++) {
			__m512 e01 = _mm512_add_ps(_mm512_shuffle_ps(acc[h][0], acc[h][1], _MM_SHUFFLE(2, 0, 2, 0)),
			                           _mm512_shuffle_ps(acc[h][0], acc[h][1], _MM_SHUFFLE(3, 1, 3, 1)));
			__m512 e23 = _mm512_add_ps(_mm512_shuffle_ps(acc[h][2], acc[h][3], _MM_SHUFFLE(2, 0, 2, 0)),
			                           _mm512_shuffle_ps(acc[h][2], acc[h][3], _MM_SHUFFLE(3, 1, 3, 1)));
			__m512 d = _mm512_add_ps(_mm512_shuffle_ps(e01, e23, _MM_SHUFFLE(2, 0, 2, 0)),
			                         _mm512_shuffle_ps(e01, e23, _MM_SHUFFLE(3, 1, 3, 1)));
			_mm512_storeu_ps(p[h] + s, _mm512_mul_ps(d, scale));
		}
	}
	// softmax_sink for each head, the sums in double side by side
	float mx[ATTN_HC];
	double sum[ATTN_HC];
	for (int h = 0; h < NH; h++) {
		float *ph = p[h], m;
		attn_cap(ph, n, a->cap);
		// the maximum as the loop m = p[s] > m ? p[s] : m from m = p[0]: vmaxps
		// returns its second operand (m) when p[s] is NaN, and the sign of a
		// zero maximum changes no p[s] − m
		__m512 vm = _mm512_set1_ps(ph[0]);
		int64_t s = 0;
		for (; s + 16 <= n; s += 16) vm = _mm512_max_ps(_mm512_loadu_ps(ph + s), vm);
		__mmask16 tail = (__mmask16)((1u << (n - s)) - 1);
		vm = _mm512_mask_max_ps(vm, tail, _mm512_maskz_loadu_ps(tail, ph + s), vm);
		m = _mm512_reduce_max_ps(vm);
		if (a->sinks && a->sinks[h0 + h] > m) m = a->sinks[h0 + h];
		for (int64_t s = 0; s < n; s++) ph[s] = toy_softmax_exp(ph[s] - m);
		mx[h] = m, sum[h] = 0;
	}
	for (int64_t s = 0; s < n; s++)
		for (int h = 0; h < NH; h++) sum[h] += (double)p[h][s];
	for (int h = 0; h < NH; h++) {
		if (a->sinks) sum[h] += (double)toy_softmax_exp(a->sinks[h0 + h] - mx[h]);
		float inv = (float)(1.0 / sum[h]);
		for (int64_t s = 0; s < n; s++) p[h][s] *= inv;
	}
	int64_t c = 0;
	for (; c + 64 <= Dh; c += 64) attn_cols(NH, 4, o, (const float *const *)p, v0, kc, n, c);
	for (; c < Dh; c += 16) attn_cols(NH, 1, o, (const float *const *)p, v0, kc, n, c);
}
#endif

// toy_attention computes jobs [j0, j1) of attention, job = t·H + h: query t
// (position past+t) of head h attends to keys lo … hi (attn_keys) of KV head
// h/(H/KV), its softmax joined by head h's sink when a->sinks is set
// (gpt-oss; see tensor.AttentionOptions). q, out [T, H·Dh]; k, v
// [S, KV·Dh]; scratch holds 4·(past+T+16) floats. With AVX-512 and Dh a
// multiple of 16 up to ATTN_DH, consecutive jobs of one query and KV head run together
// (attn_heads); the Go side splits the jobs by whole KV groups.
TOY_API void toy_attention(float *out, const float *q, const float *k, const float *v, const toy_attn_args *a,
                           int64_t j0, int64_t j1, float *scratch) {
	int64_t H = a->H, Dh = a->Dh, qc = H * Dh, kc = a->KV * Dh, group = H / a->KV;
	for (int64_t job = j0; job < j1; job++) {
		int64_t t = job / H, h = job % H, kvh = h / group, lo, hi;
#if defined(__AVX512F__)
		if (Dh % 16 == 0 && Dh <= ATTN_DH) {
			int64_t nh = group - h % group; // the heads left in this KV group
			nh = nh < j1 - job ? nh : j1 - job;
			nh = nh < ATTN_HC ? nh : ATTN_HC;
			switch (nh) {
			case 1: attn_heads(1, out, q, k, v, a, t, h, scratch); break;
			case 2: attn_heads(2, out, q, k, v, a, t, h, scratch); break;
			case 3: attn_heads(3, out, q, k, v, a, t, h, scratch); break;
			default: attn_heads(4, out, q, k, v, a, t, h, scratch); break;
			}
			job += nh - 1;
			continue;
		}
#endif
		attn_keys(t, a->past, a->bidir_T, a->window, &lo, &hi);
		int64_t n = hi - lo + 1;
		const float *qr = q + t * qc + h * Dh;
		const float *k0 = k + lo * kc + kvh * Dh, *v0 = v + lo * kc + kvh * Dh;
		toy_dots(scratch, qr, k0, Dh, kc, n);
		for (int64_t s = 0; s < n; s++) scratch[s] *= a->scale;
		attn_cap(scratch, n, a->cap);
		softmax_sink(scratch, n, a->sinks != NULL, a->sinks ? a->sinks[h] : 0);
		float *o = out + t * qc + h * Dh;
		for (int64_t i = 0; i < Dh; i++) o[i] = 0;
		// The value rows in key order, four per pass over o (same order per
		// element; o stays in registers across the four).
		int64_t s = 0;
		for (; s + 4 <= n; s += 4) {
			const float *r0 = v0 + s * kc, *r1 = r0 + kc, *r2 = r1 + kc, *r3 = r2 + kc;
			float p0 = scratch[s], p1 = scratch[s + 1], p2 = scratch[s + 2], p3 = scratch[s + 3];
			for (int64_t i = 0; i < Dh; i++) o[i] = MADD(MADD(MADD(MADD(o[i], p0, r0[i]), p1, r1[i]), p2, r2[i]), p3, r3[i]);
		}
		for (; s < n; s++) {
			const float *vr = v0 + s * kc;
			float p = scratch[s];
			for (int64_t i = 0; i < Dh; i++) o[i] = MADD(o[i], p, vr[i]);
		}
	}
}

TOY_API void toy_attention_ref(float *out, const float *q, const float *k, const float *v, const toy_attn_args *a,
                               int64_t j0, int64_t j1, float *scratch) {
	int64_t H = a->H, Dh = a->Dh, qc = H * Dh, kc = a->KV * Dh, group = H / a->KV;
	for (int64_t job = j0; job < j1; job++) {
		int64_t t = job / H, h = job % H, kvh = h / group, lo, hi;
		attn_keys(t, a->past, a->bidir_T, a->window, &lo, &hi);
		int64_t n = hi - lo + 1;
		for (int64_t s = 0; s < n; s++) {
			const float *kr = k + (lo + s) * kc + kvh * Dh, *qr = q + t * qc + h * Dh;
			float d[4] = {0, 0, 0, 0};
			int64_t i = 0;
			for (; i + 4 <= Dh; i += 4)
				for (int c = 0; c < 4; c++) d[c] = MADD(d[c], kr[i + c], qr[i + c]);
			for (; i < Dh; i++) d[0] = MADD(d[0], kr[i], qr[i]);
			scratch[s] = ((d[0] + d[1]) + (d[2] + d[3])) * a->scale;
		}
		attn_cap(scratch, n, a->cap);
		softmax_sink(scratch, n, a->sinks != NULL, a->sinks ? a->sinks[h] : 0);
		for (int64_t i = 0; i < Dh; i++) {
			float o = 0;
			for (int64_t s = 0; s < n; s++) o = MADD(o, scratch[s], v[(lo + s) * kc + kvh * Dh + i]);
			out[t * qc + h * Dh + i] = o;
		}
	}
}

// toy_variant names the instruction set this library was built for, as a
// code the Go loader knows (variantCodes in library.go).
TOY_API int64_t toy_variant(void) {
#if defined(__AVX512F__)
	return 4; // avx512
#elif defined(__AVXVNNI__)
	return 3; // avxvnni
#elif defined(__AVX2__)
	return 2; // avx2
#elif defined(__x86_64__)
	return 1; // x86-64
#elif defined(__ARM_FEATURE_DOTPROD)
	return 6; // neon-dotprod
#elif defined(__aarch64__)
	return 5; // neon
#else
	return 0;
#endif
}

// toy_read reads n bytes (a multiple of 64) and returns their XOR folded to
// 64 bits: the memory-bandwidth probe of the benchmarks. It reads the way the
// decode GEMVs do (f32.c, q8.c): four streams, the quarters of the buffer,
// each prefetched 1 KB ahead — a core keeps more lines in flight that way
// than over one stream, so the probe gives the bandwidth a kernel can reach.
TOY_API uint64_t toy_read(const uint8_t *p, int64_t n) {
	uint64_t acc[8] = {0};
	int64_t q = n / 64 / 4 * 64;
	for (int64_t i = 0; i < q; i += 64)
		for (int s = 0; s < 4; s++) {
			const uint8_t *b = p + s * q + i;
			__builtin_prefetch(b + 1024, 0, 3);
			for (int j = 0; j < 8; j++) {
				uint64_t v;
				__builtin_memcpy(&v, b + 8 * j, 8);
				acc[j] ^= v;
			}
		}
	for (int64_t i = 4 * q; i + 64 <= n; i += 64)
		for (int j = 0; j < 8; j++) {
			uint64_t v;
			__builtin_memcpy(&v, p + i + 8 * j, 8);
			acc[j] ^= v;
		}
	return acc[0] ^ acc[1] ^ acc[2] ^ acc[3] ^ acc[4] ^ acc[5] ^ acc[6] ^ acc[7];
}

// toy_read_ref reads the buffer front to back (the same XOR: order does not
// matter to it).
TOY_API uint64_t toy_read_ref(const uint8_t *p, int64_t n) {
	uint64_t acc[8] = {0};
	for (int64_t i = 0; i + 64 <= n; i += 64)
		for (int j = 0; j < 8; j++) {
			uint64_t v;
			__builtin_memcpy(&v, p + i + 8 * j, 8);
			acc[j] ^= v;
		}
	return acc[0] ^ acc[1] ^ acc[2] ^ acc[3] ^ acc[4] ^ acc[5] ^ acc[6] ^ acc[7];
}
