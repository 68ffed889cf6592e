// The gated delta rule of Qwen3.5's recurrent layers (tensor.GatedDeltaNet)
// and the two activations around it, σ and softplus. Each follows the
// pure-Go reference in toy/tensor/gdn.go to the rounding (see toy.cuh).
#include "toy.cuh"

// σ(v) = 1/(1 + exp(−v)), exp in float64 as Go's math.Exp.
extern "C" __global__ void toy_sigmoid(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) out[i] = __fdiv_rn(1.0f, __fadd_rn(1.0f, (float)exp(-(double)x[i])));
}

// softplus(v) = v > 20 ? v : log(1 + e^v), in float64 and rounded once (a
// NaN takes the second branch and stays NaN).
extern "C" __global__ void toy_softplus(float *out, const float *x, long n) {
	GRID_STRIDE(i, n) {
		float v = x[i];
		out[i] = v > 20.0f ? v : (float)log1p(exp((double)v));
	}
}

// toy_l2_rows: each row of D values divided by max(‖row‖, eps), one thread
// a row: the squares rounded to float32 and summed in order in float64, the
// norm rounded to float32 (tensor's l2Rows). Go's max passes a NaN through.
extern "C" __global__ void toy_l2_rows(float *y, const float *x, int rows, int D, float eps) {
	GRID_STRIDE(r, rows) {
		const float *xr = x + (size_t)r * D;
		float *yr = y + (size_t)r * D;
		double s = 0;
		for (int i = 0; i < D; i++) s += (double)__fmul_rn(xr[i], xr[i]);
		float nrm = (float)sqrt((double)(float)s);
		float sc = __fdiv_rn(1.0f, (nrm != nrm || nrm > eps) ? nrm : eps);
		for (int i = 0; i < D; i++) yr[i] = __fmul_rn(xr[i], sc);
	}
}

// toy_delta_rule runs the gated delta rule over T tokens, one thread per
// (value head h = blockIdx.x, value feature j): column j of head h's state,
// S[·][j] (D floats, contiguous: the state is value-major), depends on
// nothing but itself, q̂, k̂, v_j, g and β. Per token, in the order of
// tensor's (*gdnRun).forward:
//
//	S' = e^g S;  u = S'[·][j]·k̂;  d = β(v_j − u);  S[·][j] = S' + k̂ d;  o_j = S[·][j]·q̂ / √D
//
// each dot product in dotF32's four partial sums, ((s0+s1)+(s2+s3)). q̂, k̂
// [T, Hk·D] are normalised (toy_l2_rows); value head h reads key head
// h mod Hk. v, out [T, Hv·D]; g, beta [T, Hv]; S [Hv, D·D], left after
// the last token.
extern "C" __global__ void toy_delta_rule(float *S, float *out, const float *qn, const float *kn, const float *v,
                                          const float *g, const float *beta, int T, int Hk, int Hv, int D, float scale) {
	int h = blockIdx.x, j = blockIdx.y * blockDim.x + threadIdx.x;
	if (j >= D) return;
	int kh = h % Hk;
	float *col = S + ((size_t)h * D + j) * D;
	for (int t = 0; t < T; t++) {
		const float *q = qn + ((size_t)t * Hk + kh) * D, *k = kn + ((size_t)t * Hk + kh) * D;
		size_t e = (size_t)t * Hv + h;
		float decay = (float)exp((double)g[e]), b = beta[e];
		float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		int i = 0;
		for (; i + 4 <= D; i += 4) {
			float a0 = __fmul_rn(col[i], decay), a1 = __fmul_rn(col[i + 1], decay);
			float a2 = __fmul_rn(col[i + 2], decay), a3 = __fmul_rn(col[i + 3], decay);
			col[i] = a0, col[i + 1] = a1, col[i + 2] = a2, col[i + 3] = a3;
			s0 = __fadd_rn(s0, __fmul_rn(a0, k[i]));
			s1 = __fadd_rn(s1, __fmul_rn(a1, k[i + 1]));
			s2 = __fadd_rn(s2, __fmul_rn(a2, k[i + 2]));
			s3 = __fadd_rn(s3, __fmul_rn(a3, k[i + 3]));
		}
		for (; i < D; i++) {
			col[i] = __fmul_rn(col[i], decay);
			s0 = __fadd_rn(s0, __fmul_rn(col[i], k[i]));
		}
		float u = __fadd_rn(__fadd_rn(s0, s1), __fadd_rn(s2, s3));
		float d = __fmul_rn(b, __fsub_rn(v[e * D + j], u));
		s0 = s1 = s2 = s3 = 0;
		for (i = 0; i + 4 <= D; i += 4) {
			float a0 = __fadd_rn(col[i], __fmul_rn(k[i], d)), a1 = __fadd_rn(col[i + 1], __fmul_rn(k[i + 1], d));
			float a2 = __fadd_rn(col[i + 2], __fmul_rn(k[i + 2], d)), a3 = __fadd_rn(col[i + 3], __fmul_rn(k[i + 3], d));
			col[i] = a0, col[i + 1] = a1, col[i + 2] = a2, col[i + 3] = a3;
			s0 = __fadd_rn(s0, __fmul_rn(a0, q[i]));
			s1 = __fadd_rn(s1, __fmul_rn(a1, q[i + 1]));
			s2 = __fadd_rn(s2, __fmul_rn(a2, q[i + 2]));
			s3 = __fadd_rn(s3, __fmul_rn(a3, q[i + 3]));
		}
		for (; i < D; i++) {
			col[i] = __fadd_rn(col[i], __fmul_rn(k[i], d));
			s0 = __fadd_rn(s0, __fmul_rn(col[i], q[i]));
		}
		out[e * D + j] = __fmul_rn(__fadd_rn(__fadd_rn(s0, s1), __fadd_rn(s2, s3)), scale);
	}
}
