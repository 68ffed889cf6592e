// Mixture-of-experts combine: tensor.ScatterAdd, which adds each expert's
// weighted output rows back to the tokens they were gathered from. Follows
// scatterAdd in toy/tensor/scatter.go (see toy.cuh for the arithmetic rules).
#include "toy.cuh"

// toy_scatter_add: out [R, C], already holding dst, gets scale[j]·src[j]
// added to row ids[j] for j = 0 … n−1 (scale NULL: 1). One thread per column
// walks the rows in order, so repeated ids add in the CPU's order; each
// product is rounded before the sum (no FMA), as in Go.
extern "C" __global__ void toy_scatter_add(float *out, const float *src, const int *ids, const float *scale, int n, int C) {
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C) return;
	for (int j = 0; j < n; j++) {
		float s = scale ? scale[j] : 1.0f;
		float *o = out + (size_t)ids[j] * C + c;
		*o = __fadd_rn(*o, __fmul_rn(s, src[(size_t)j * C + c]));
	}
}

// Routed products (tensor.TopK, GatherColumns, WeightedSum; the chosen
// experts' products are the *_id matmul kernels): a decode step's routing
// stays on the device. Follows toy/tensor/experts.go.

#define MAX_EXPERTS 1024 // tensor.MaxExperts
#define MAX_GROUPS 64

// bit reports whether bit e of the mask m is set.
__device__ __forceinline__ bool bit(const unsigned *m, int e) { return (m[e >> 5] >> (e & 31)) & 1u; }

// toy_topk: ids [T, k] = the k largest of each row of scores [T, E], in
// ascending index order, ties to the lower index; with groups > 1 only the
// experts of the used best groups (each scoring its two best) compete. One
// thread a token, walking the row in index order as topK and barGroups do.
extern "C" __global__ void toy_topk(const float *scores, int *ids, int T, int E, int k, int groups, int used) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= T) return;
	const float *row = scores + (size_t)t * E;
	unsigned allowed[MAX_EXPERTS / 32], chosen[MAX_EXPERTS / 32];
	int words = (E + 31) / 32;
	for (int i = 0; i < words; i++) allowed[i] = ~0u, chosen[i] = 0;
	if (groups > 1) {
		int n = E / groups;
		unsigned long long keep = 0;
		for (int u = 0; u < used; u++) {
			int best = -1;
			float bs = 0.0f;
			for (int g = 0; g < groups; g++) {
				if ((keep >> g) & 1ull) continue;
				float a = -INFINITY, b = -INFINITY; // the group's best two
				for (int e = g * n; e < (g + 1) * n; e++) {
					float v = row[e];
					if (v > a) {
						b = a;
						a = v;
					} else if (v > b) {
						b = v;
					}
				}
				if (n == 1) b = 0.0f;
				float sc = __fadd_rn(a, b);
				if (best < 0 || sc > bs) best = g, bs = sc;
			}
			keep |= 1ull << best;
		}
		for (int e = 0; e < E; e++)
			if (!((keep >> (e / n)) & 1ull)) allowed[e >> 5] &= ~(1u << (e & 31));
	}
	for (int j = 0; j < k; j++) {
		int best = -1;
		for (int e = 0; e < E; e++)
			if (bit(allowed, e) && !bit(chosen, e) && (best < 0 || row[e] > row[best])) best = e;
		chosen[best >> 5] |= 1u << (best & 31);
	}
	int *out = ids + (size_t)t * k;
	for (int e = 0, j = 0; e < E && j < k; e++)
		if (bit(chosen, e)) out[j++] = e;
}

// toy_gather_cols: out [T, k], out[t, j] = x[t, ids[t, j]] for x [T, E].
extern "C" __global__ void toy_gather_cols(float *out, const float *x, const int *ids, int T, int E, int k) {
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (long)T * k; i += (long)gridDim.x * blockDim.x)
		out[i] = x[(i / k) * E + ids[i]];
}

// toy_weighted_sum: out [T, D], out[t] = Σ_j w[t, j]·h[t·k + j] for h
// [T·k, D], from zero in j order, each product rounded before the sum.
extern "C" __global__ void toy_weighted_sum(float *out, const float *h, const float *w, int T, int k, int D) {
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (long)T * D; i += (long)gridDim.x * blockDim.x) {
		long t = i / D, c = i % D;
		float acc = 0.0f;
		for (int j = 0; j < k; j++) acc = __fadd_rn(acc, __fmul_rn(w[t * k + j], h[(t * k + j) * D + c]));
		out[i] = acc;
	}
}

// toy_row_sum_recip: out [T, 1], out[t] = 1 / Σ_j x[t, j] for x [T, k], the
// sum in j order (tensor.RowSumReciprocal).
extern "C" __global__ void toy_row_sum_recip(float *out, const float *x, int T, int k) {
	for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < T; t += (long)gridDim.x * blockDim.x) {
		float sum = 0.0f;
		for (int j = 0; j < k; j++) sum = __fadd_rn(sum, x[t * k + j]);
		out[t] = __fdiv_rn(1.0f, sum);
	}
}
