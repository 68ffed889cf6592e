// ops.c: the row-wise ops around the matrix multiplies — RMSNorm, SiLU,
// SwiGLU and attention over a KV cache — each with its reference.
//
// They follow toy/tensor's pure-Go arithmetic step for step: RMSNorm sums
// squares in double, attention scores are dotF32 in its order, softmax
// subtracts the row maximum (the sink's logit among it, with attention
// sinks), exponentiates in double and sums in double (the sink's term last),
// and the value rows are added in key order. With toy_exp_f32 (see toy.h) the
// results are bit-identical to the Go backend's in all the tests.
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
	for (int64_t s = 0; s < n; s++) p[s] = toy_exp_f32(p[s] - m);
	double sum = 0;
	for (int64_t s = 0; s < n; s++) sum += (double)p[s];
	if (has_sink) sum += (double)toy_exp_f32(sink - m);
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

// toy_attention computes jobs [j0, j1) of attention, job = t·H + h: query t
// (position past+t) of head h attends to keys lo … hi (attn_keys) of KV head
// h/(H/KV), its softmax joined by head h's sink when a->sinks is set
// (gpt-oss; see tensor.AttentionOptions). q, out [T, H·Dh]; k, v
// [S, KV·Dh]; scratch holds past+T floats.
TOY_API void toy_attention(float *out, const float *q, const float *k, const float *v, const toy_attn_args *a,
                           int64_t j0, int64_t j1, float *scratch) {
	int64_t H = a->H, Dh = a->Dh, qc = H * Dh, kc = a->KV * Dh, group = H / a->KV;
	for (int64_t job = j0; job < j1; job++) {
		int64_t t = job / H, h = job % H, kvh = h / group, lo, hi;
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
