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
