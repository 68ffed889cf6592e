// The row-wise and elementwise ops of tensor.Backend: add/mul/scale, SiLU,
// GELU, SwiGLU (and gpt-oss's clamped form), RMSNorm, LayerNorm, RoPE,
// softmax, attention over the KV cache, embedding gather and column copies.
// Each follows the pure-Go reference in toy/tensor/go_ops.go (see toy.cuh
// for the arithmetic rules).
#include "toy.cuh"

// out = a + b, b of a's length or one row (bn elements) broadcast.
extern "C" __global__ void toy_add(float *out, const float *a, const float *b, long n, long bn) {
	GRID_STRIDE(i, n) out[i] = __fadd_rn(a[i], b[i % bn]);
}

extern "C" __global__ void toy_mul(float *out, const float *a, const float *b, long n, long bn) {
	GRID_STRIDE(i, n) out[i] = __fmul_rn(a[i], b[i % bn]);
}

extern "C" __global__ void toy_scale(float *out, const float *a, float s, long n) {
	GRID_STRIDE(i, n) out[i] = __fmul_rn(a[i], s);
}

// silu(v) = v / (1 + exp(−v)), exp in float64 as Go's math.Exp.
__device__ __forceinline__ float silu(float v) { return __fdiv_rn(v, __fadd_rn(1.0f, (float)exp(-(double)v))); }

extern "C" __global__ void toy_silu(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) out[i] = silu(x[i]);
}

extern "C" __global__ void toy_tanh(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) out[i] = (float)tanh((double)x[i]);
}

// The exact GELU, ½v(1 + erf(v/√2)), in float64 and rounded once, as Go's
// tensor.GELUErf evaluates it.
extern "C" __global__ void toy_gelu_erf(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) {
		double v = (double)x[i];
		out[i] = (float)__dmul_rn(__dmul_rn(0.5, v), __dadd_rn(1.0, erf(__ddiv_rn(v, 1.4142135623730951))));
	}
}

extern "C" __global__ void toy_swiglu(float *out, const float *gate, const float *up, long n) {
	GRID_STRIDE(i, n) out[i] = __fmul_rn(silu(gate[i]), up[i]);
}

// toy_swiglu_oai: gpt-oss's clamped SwiGLU (tensor.SwiGLUOAI), in Go's order
// of operations: x = min(gate, limit), y = clamp(up, −limit, limit),
// out = x/(1 + exp(−alpha·x))·(y + 1), exp in float64 as Go's math.Exp. The
// comparisons let a NaN through, as Go's min and max do.
extern "C" __global__ void toy_swiglu_oai(float *out, const float *gate, const float *up, float alpha, float limit, long n) {
	GRID_STRIDE(i, n) {
		float g = gate[i], u = up[i];
		float x = g > limit ? limit : g;
		float y = u > limit ? limit : u;
		y = y < -limit ? -limit : y;
		float e = (float)exp((double)__fmul_rn(alpha, -x));
		out[i] = __fmul_rn(__fdiv_rn(x, __fadd_rn(1.0f, e)), __fadd_rn(y, 1.0f));
	}
}

// GELU as ggml and toy evaluate it: the input rounded to fp16, tanh-GELU of
// that value in float32 (tanh in float64), the result rounded to fp16.
extern "C" __global__ void toy_gelu(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) {
		float v = x[i];
		if (v <= -10.0f) {
			out[i] = 0.0f;
		} else if (v >= 10.0f) {
			out[i] = v;
		} else {
			const float s2pi = 0.79788456080286535587989211986876f, a = 0.044715f;
			float h = half_to_f32(f32_to_half(v));
			float inner = __fmul_rn(__fmul_rn(s2pi, h), __fadd_rn(1.0f, __fmul_rn(__fmul_rn(a, h), h)));
			float g = __fmul_rn(__fmul_rn(0.5f, h), __fadd_rn(1.0f, (float)tanh((double)inner)));
			out[i] = half_to_f32(f32_to_half(g));
		}
	}
}

// toy_rmsnorm: one block per row of D; w may be null.
extern "C" __global__ void toy_rmsnorm(float *out, const float *x, const float *w, int D, float eps) {
	__shared__ double sh[32];
	const float *xr = x + (size_t)blockIdx.x * D;
	float *orow = out + (size_t)blockIdx.x * D;
	double s = 0;
	for (int i = threadIdx.x; i < D; i += blockDim.x) s += (double)__fmul_rn(xr[i], xr[i]);
	s = block_sum_d(s, sh);
	float mean = (float)(s / D);
	float scale = __fdiv_rn(1.0f, (float)sqrt((double)__fadd_rn(mean, eps)));
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float v = __fmul_rn(xr[i], scale);
		orow[i] = w ? __fmul_rn(v, w[i]) : v;
	}
}

// toy_layernorm: one block per row; w, b may be null.
extern "C" __global__ void toy_layernorm(float *out, const float *x, const float *w, const float *b, int D, float eps) {
	__shared__ double sh[32];
	const float *xr = x + (size_t)blockIdx.x * D;
	float *orow = out + (size_t)blockIdx.x * D;
	double s = 0;
	for (int i = threadIdx.x; i < D; i += blockDim.x) s += (double)xr[i];
	s = block_sum_d(s, sh);
	float mean = (float)(s / D);
	double sq = 0;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float d = __fsub_rn(xr[i], mean);
		sq += (double)__fmul_rn(d, d);
	}
	sq = block_sum_d(sq, sh);
	float var = (float)(sq / D);
	float scale = __fdiv_rn(1.0f, (float)sqrt((double)__fadd_rn(var, eps)));
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		float v = __fmul_rn(__fsub_rn(xr[i], mean), scale);
		if (w) v = __fmul_rn(v, w[i]);
		if (b) v = __fadd_rn(v, b[i]);
		orow[i] = v;
	}
}

// toy_rope: x, out [T, C], heads of headDim; the first ropeDim features of
// each head rotate in pairs (adjacent, or half-split with neox) by
// φ_i = (pos0+t)·s^i, s = base^(−2/ropeDim) given as thetaScale, φ built by
// repeated float32 multiplication as ggml and toy do, then divided by the
// frequency factor ff[i] when ff is not null; then scaled (tensor.RoPEParams):
// θ = fs·φ, and with YaRN (ext ≠ 0) mixed back toward φ by ext·ramp(i); cos
// and sin are multiplied by mscale.
extern "C" __global__ void toy_rope(float *out, const float *x, const float *ff, int T, int C, int pos0, int headDim,
                                    int ropeDim, float thetaScale, int neox, float fs, float ext, float rampLow,
                                    float rampHigh, float mscale) {
	GRID_STRIDE(e, (long)T * C) {
		int t = e / C, c = e % C;
		int h = c - c % headDim, j = c % headDim;
		const float *xr = x + (size_t)t * C;
		if (j >= ropeDim) {
			out[e] = xr[c];
			continue;
		}
		int half = ropeDim / 2, i, a, b;
		if (neox) {
			i = j < half ? j : j - half;
			a = h + i, b = h + i + half;
		} else {
			i = j / 2;
			a = h + 2 * i, b = a + 1;
		}
		float theta = (float)(pos0 + t);
		for (int k = 0; k < i; k++) theta = __fmul_rn(theta, thetaScale);
		if (ff) theta = __fdiv_rn(theta, ff[i]);
		float angle = __fmul_rn(fs, theta);
		if (ext != 0) {
			float y = __fdiv_rn(__fsub_rn((float)i, rampLow), fmaxf(0.001f, __fsub_rn(rampHigh, rampLow)));
			float mix = __fmul_rn(__fsub_rn(1.0f, fminf(1.0f, fmaxf(0.0f, y))), ext);
			angle = __fadd_rn(__fmul_rn(angle, __fsub_rn(1.0f, mix)), __fmul_rn(theta, mix));
		}
		float cs = __fmul_rn((float)cos((double)angle), mscale), sn = __fmul_rn((float)sin((double)angle), mscale);
		float x0 = xr[a], x1 = xr[b];
		out[e] = c == a ? __fsub_rn(__fmul_rn(x0, cs), __fmul_rn(x1, sn)) : __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, cs));
	}
}

// toy_softmax: one block per row of C; with past ≥ 0 row r keeps columns
// ≤ past+r and the rest get 0.
extern "C" __global__ void toy_softmax(float *out, const float *x, int C, int past) {
	__shared__ double sh[32];
	__shared__ float shf[32];
	int r = blockIdx.x;
	int n = past >= 0 ? min(C, past + r + 1) : C;
	const float *xr = x + (size_t)r * C;
	float *orow = out + (size_t)r * C;
	float m = -INFINITY;
	for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, xr[i]);
	m = block_max(m, shf);
	double s = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		float e = (float)exp((double)__fsub_rn(xr[i], m));
		orow[i] = e;
		s += (double)e;
	}
	s = block_sum_d(s, sh);
	float inv = (float)(1.0 / s);
	for (int i = threadIdx.x; i < C; i += blockDim.x) orow[i] = i < n ? __fmul_rn(orow[i], inv) : 0.0f;
}

// dot4 is toy's dotF32: four strided partial sums, (s0+s1)+(s2+s3).
__device__ __forceinline__ float dot4(const float *a, const float *b, int n) {
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 = __fadd_rn(s0, __fmul_rn(a[i], b[i]));
		s1 = __fadd_rn(s1, __fmul_rn(a[i + 1], b[i + 1]));
		s2 = __fadd_rn(s2, __fmul_rn(a[i + 2], b[i + 2]));
		s3 = __fadd_rn(s3, __fmul_rn(a[i + 3], b[i + 3]));
	}
	for (; i < n; i++) s0 = __fadd_rn(s0, __fmul_rn(a[i], b[i]));
	return __fadd_rn(__fadd_rn(s0, s1), __fadd_rn(s2, s3));
}

// attn_keys: the keys query t (position past+t) sees, lo … hi, as
// tensor.AttentionOptions.Keys: all past+bidirT keys when bidirT (the
// launch's T) > 0, else causal; only the last window positions when
// window > 0.
__device__ __forceinline__ void attn_keys(int t, int past, int bidirT, int window, int *lo, int *hi) {
	*hi = bidirT > 0 ? past + bidirT - 1 : past + t;
	*lo = window > 0 ? max(0, past + t - window + 1) : 0;
}

// soft_cap: s ← cap·tanh(s/cap) when cap > 0 (Gemma 2), tanh in double as
// Go's math.Tanh.
__device__ __forceinline__ float soft_cap(float s, float cap) {
	return cap > 0 ? __fmul_rn(cap, (float)tanh((double)__fdiv_rn(s, cap))) : s;
}

// toy_attention: attention of q [T, H·dh] over k, v [S, KV·dh]; one block
// per (token t0+t, head h), t counted within this launch. scores holds S
// floats per block. Query t sees keys lo … hi (attn_keys); scores are
// scaled, then soft-capped by cap when cap > 0. sinks, when not null, holds
// a logit per head [H] that joins each softmax as a key with no value
// (gpt-oss; tensor.AttentionOptions.Sinks): the max is taken over the scores
// and sinks[h], and exp(sinks[h] − max) is added after the scores' sum, as
// Go's softmaxSink.
extern "C" __global__ void toy_attention(float *out, const float *q, const float *k, const float *v, float *scores,
                                         int nHead, int nKV, int dh, int past, int t0, float scale, int S, float cap,
                                         int window, int bidirT, const float *sinks) {
	__shared__ double sh[32];
	__shared__ float shf[32];
	int job = blockIdx.x, t = t0 + job / nHead, h = job % nHead;
	int kvh = h / (nHead / nKV), qc = nHead * dh, kc = nKV * dh;
	int lo, hi;
	attn_keys(t, past, bidirT, window, &lo, &hi);
	int n = hi - lo + 1;
	const float *qr = q + (size_t)t * qc + h * dh;
	const float *k0 = k + (size_t)lo * kc + kvh * dh, *v0 = v + (size_t)lo * kc + kvh * dh;
	float *p = scores + (size_t)job * S;
	float m = -INFINITY;
	for (int s = threadIdx.x; s < n; s += blockDim.x) {
		float sc = soft_cap(__fmul_rn(dot4(k0 + (size_t)s * kc, qr, dh), scale), cap);
		p[s] = sc;
		m = fmaxf(m, sc);
	}
	m = block_max(m, shf);
	if (sinks) m = fmaxf(m, sinks[h]);
	double sum = 0;
	for (int s = threadIdx.x; s < n; s += blockDim.x) {
		float e = (float)exp((double)__fsub_rn(p[s], m));
		p[s] = e;
		sum += (double)e;
	}
	sum = block_sum_d(sum, sh);
	if (sinks) sum += (double)(float)exp((double)__fsub_rn(sinks[h], m));
	float inv = (float)(1.0 / sum);
	for (int s = threadIdx.x; s < n; s += blockDim.x) p[s] = __fmul_rn(p[s], inv);
	__syncthreads();
	float *orow = out + (size_t)t * qc + h * dh;
	for (int i = threadIdx.x; i < dh; i += blockDim.x) {
		float acc = 0;
		const float *vc = v0 + i;
		for (int s = 0; s < n; s++) acc = __fadd_rn(acc, __fmul_rn(p[s], vc[(size_t)s * kc]));
		orow[i] = acc;
	}
}

// Split-K ("flash-decoding") attention, for few queries over a long cache,
// where toy_attention's one block per (token, head) would leave most of the
// GPU idle while each block walks every key: the keys are cut into chunks of
// ATTN_CHUNK, one block per (token, head, chunk) reduces its chunk to a
// partial softmax (toy_attention_chunk), and one block per (token, head)
// merges the chunks (toy_attention_combine). The backend takes this path in
// decode and, a slice of queries at a time, in prefill (see
// Backend.Attention); the arithmetic follows toy_attention (dot4 scores
// scaled with __fmul_rn, exp in float64 of a float32 difference, sums of
// exps in float64), so results stay within float32 rounding of it. Chunks
// are short (64 keys) so that each block's serial walk is too: a block's
// ATTN_THREADS threads split the chunk's keys into groups for the outputs.
#define ATTN_CHUNK 64
#define ATTN_THREADS 256

// toy_attention_chunk: q [T, H·dh], k, v [S, KV·dh] as for toy_attention
// (query t sees keys lo … hi, attn_keys; kv head h / (H/KV)); grid (T·H,
// chunks), block of ATTN_THREADS threads. Block (job, c), job = t·H + h, takes
// keys lo + c·ATTN_CHUNK … of query t (at most ATTN_CHUNK, none past hi)
// and writes, at r = job·chunks + c, the chunk's largest score m[r], the
// sum of its exps l[r] = Σ exp(s − m[r]) and the unnormalized output
// o[r·dh + i] = Σ exp(s − m[r])·v_s[i]. A chunk that starts after the
// query's last key writes nothing (toy_attention_combine does not read it).
extern "C" __global__ void toy_attention_chunk(float *o, float *m, double *l, const float *q, const float *k,
                                               const float *v, int nHead, int nKV, int dh, int past, float scale,
                                               float cap, int window, int bidirT) {
	__shared__ float p[ATTN_CHUNK];    // the chunk's scores, then their exps
	__shared__ float part[ATTN_THREADS]; // the key groups' partial outputs
	__shared__ double sh[32];
	__shared__ float shf[32];
	int job = blockIdx.x, t = job / nHead, h = job % nHead;
	int kvh = h / (nHead / nKV), qc = nHead * dh, kc = nKV * dh;
	int lo, hi;
	attn_keys(t, past, bidirT, window, &lo, &hi);
	int s0 = lo + blockIdx.y * ATTN_CHUNK, n = min(ATTN_CHUNK, hi + 1 - s0); // keys s0 … s0+n−1
	if (n <= 0) return; // the whole block: no barrier is skipped
	size_t r = (size_t)job * gridDim.y + blockIdx.y;
	const float *qr = q + (size_t)t * qc + h * dh;
	const float *k0 = k + (size_t)s0 * kc + kvh * dh, *v0 = v + (size_t)s0 * kc + kvh * dh;
	// Scores, one key per thread.
	float mx = -INFINITY;
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		float sc = soft_cap(__fmul_rn(dot4(k0 + (size_t)j * kc, qr, dh), scale), cap);
		p[j] = sc;
		mx = fmaxf(mx, sc);
	}
	mx = block_max(mx, shf);
	double sum = 0;
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		float e = (float)exp((double)__fsub_rn(p[j], mx));
		p[j] = e;
		sum += (double)e;
	}
	sum = block_sum_d(sum, sh); // its barriers also publish p
	if (threadIdx.x == 0) {
		m[r] = mx;
		l[r] = sum;
	}
	// Outputs: the block is G groups of dh threads (G = blockDim/dh; one
	// group looping over the features when dh > blockDim); group g sums
	// keys g, g+G, … of the chunk for its feature i, reading v rows
	// coalesced, and the G partial sums are added in group order.
	int G = max(1, (int)blockDim.x / dh);
	float *orow = o + r * dh;
	for (int w = threadIdx.x; w < G * dh; w += blockDim.x) {
		int g = w / dh, i = w % dh;
		float acc = 0;
		for (int j = g; j < n; j += G) acc = __fadd_rn(acc, __fmul_rn(p[j], v0[(size_t)j * kc + i]));
		if (G == 1)
			orow[i] = acc;
		else
			part[w] = acc; // G·dh ≤ blockDim = ATTN_THREADS
	}
	if (G > 1) {
		__syncthreads();
		for (int i = threadIdx.x; i < dh; i += blockDim.x) {
			float acc = part[i];
			for (int g = 1; g < G; g++) acc = __fadd_rn(acc, part[g * dh + i]);
			orow[i] = acc;
		}
	}
}

// toy_attention_combine: out [T, H·dh] from toy_attention_chunk's partial
// results (chunks per (token, head), as its grid); one block per (token t,
// head h). Over the chunks holding keys of query t: M = max m_c, the
// chunk weights w_c = exp(m_c − M), L = Σ l_c·w_c and out = Σ o_c·w_c / L
// (in float64). The weights replace l_c in place, for the block's threads
// to share. With sinks (as toy_attention), M is also over sinks[h] and L
// gains exp(sinks[h] − M) once: the sink joins the merge as a chunk with no
// output; toy_attention_chunk knows nothing of it.
extern "C" __global__ void toy_attention_combine(float *out, const float *o, const float *m, double *l, int nHead,
                                                 int dh, int past, int chunks, int window, int bidirT,
                                                 const float *sinks) {
	__shared__ double sh[32];
	__shared__ float shf[32];
	int job = blockIdx.x, t = job / nHead, h = job % nHead;
	int lo, hi;
	attn_keys(t, past, bidirT, window, &lo, &hi);
	int nc = (hi - lo + ATTN_CHUNK) / ATTN_CHUNK; // chunks with keys of query t
	const float *mr = m + (size_t)job * chunks, *or0 = o + (size_t)job * chunks * dh;
	double *lr = l + (size_t)job * chunks;
	float M = -INFINITY;
	for (int c = threadIdx.x; c < nc; c += blockDim.x) M = fmaxf(M, mr[c]);
	M = block_max(M, shf);
	if (sinks) M = fmaxf(M, sinks[h]);
	double L = 0;
	for (int c = threadIdx.x; c < nc; c += blockDim.x) {
		double w = exp((double)__fsub_rn(mr[c], M));
		L += lr[c] * w;
		lr[c] = w;
	}
	L = block_sum_d(L, sh); // its barriers also publish the weights
	if (sinks) L += (double)(float)exp((double)__fsub_rn(sinks[h], M));
	float *orow = out + (size_t)t * nHead * dh + h * dh;
	for (int i = threadIdx.x; i < dh; i += blockDim.x) {
		double acc = 0;
		for (int c = 0; c < nc; c++) acc += (double)or0[(size_t)c * dh + i] * lr[c];
		orow[i] = (float)(acc / L);
	}
}

// Embedding gathers: out[t] = table[ids[t]] as float32, one block per token.
extern "C" __global__ void toy_embed_f32(float *out, const float *table, const int *ids, int D) {
	const float *row = table + (size_t)ids[blockIdx.x] * D;
	for (int i = threadIdx.x; i < D; i += blockDim.x) out[(size_t)blockIdx.x * D + i] = row[i];
}

extern "C" __global__ void toy_embed_half(float *out, const uint16_t *table, const int *ids, int D, int bf16) {
	const uint16_t *row = table + (size_t)ids[blockIdx.x] * D;
	for (int i = threadIdx.x; i < D; i += blockDim.x)
		out[(size_t)blockIdx.x * D + i] = bf16 ? bf16_to_f32(row[i]) : half_to_f32(row[i]);
}

extern "C" __global__ void toy_embed_q8(float *out, const uint8_t *table, const int *ids, int D) {
	const uint8_t *row = table + (size_t)ids[blockIdx.x] * (D / QK) * Q8_BYTES;
	for (int i = threadIdx.x; i < D; i += blockDim.x) {
		const uint8_t *blk = row + (size_t)(i / QK) * Q8_BYTES;
		out[(size_t)blockIdx.x * D + i] = __fmul_rn(half_to_f32(*(const uint16_t *)blk), (float)(int8_t)blk[2 + i % QK]);
	}
}

// toy_columns: out [R, n] = columns [from, from+n) of x [R, C].
extern "C" __global__ void toy_columns(float *out, const float *x, int R, int C, int from, int n) {
	GRID_STRIDE(e, (long)R * n) out[e] = x[(e / n) * C + from + e % n];
}

// toy_place_columns: columns [at, at+n) of out [R, C] = x [R, n]; out's
// other columns are left as they are (ConcatColumns, one part a launch).
extern "C" __global__ void toy_place_columns(float *out, const float *x, int R, int n, int at, int C) {
	GRID_STRIDE(e, (long)R * n) out[(e / n) * C + at + e % n] = x[e];
}

// toy_causal_conv: y [T, C] of a depthwise causal convolution
// (tensor.CausalConv), one thread per element: tap j of channel c reads
// position p = t−L+1+j, row L−1+p of past before position 0 (zeros when
// past is null); the products are rounded and added in tap order.
extern "C" __global__ void toy_causal_conv(float *y, const float *past, const float *x, const float *taps, int T, int C, int L) {
	GRID_STRIDE(e, (long)T * C) {
		int t = (int)(e / C), c = (int)(e % C);
		float s = 0.0f;
		for (int j = 0; j < L; j++) {
			int p = t - L + 1 + j;
			float v = p >= 0 ? x[(size_t)p * C + c] : (past ? past[(size_t)(L - 1 + p) * C + c] : 0.0f);
			float prod = __fmul_rn(v, taps[(size_t)c * L + j]);
			s = j == 0 ? prod : __fadd_rn(s, prod);
		}
		y[e] = s;
	}
}
