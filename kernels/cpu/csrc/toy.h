// toy.h: shared definitions of toy's native CPU kernels.
//
// Every kernel is exported twice: toy_NAME, the fast version for the
// instruction set this library was compiled for (chosen with #if on the
// compiler's target macros), and toy_NAME_ref, the plain C loop it is tested
// against. The Go loader (kernels/cpu) calls them through purego with integer
// arguments only, so float parameters travel as their IEEE bits (uint32_t);
// purego passes at most 15, so a kernel with more takes a pointer to a struct
// of them (toy_attention's toy_attn_args, mirrored in Go).
//
// Layouts are those of package toy/tensor: row-major, a weight matrix w [N, K]
// holds one output feature per row, and a Q8_0 row is K/32 blocks of
// {fp16 d; int8 q[32]} (34 bytes).
#ifndef TOY_H
#define TOY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#define TOY_API __attribute__((visibility("default")))
#define TOY_INLINE static inline __attribute__((always_inline))

#define Q8_BLOCK 32
#define Q8_BYTES 34

TOY_INLINE float toy_bits_f32(uint32_t u) {
	float f;
	__builtin_memcpy(&f, &u, 4);
	return f;
}

TOY_INLINE uint32_t toy_f32_bits(float f) {
	uint32_t u;
	__builtin_memcpy(&u, &f, 4);
	return u;
}

// toy_fp16_f32 converts IEEE binary16 bits to float32 (exact).
TOY_INLINE float toy_fp16_f32(uint16_t h) {
	uint32_t sign = (uint32_t)(h >> 15) << 31;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	if (exp == 0) {
		if (mant == 0) return toy_bits_f32(sign);
		// subnormal: value = mant · 2^-24
		float v = (float)mant * (1.0f / 16777216.0f);
		return sign ? -v : v;
	}
	if (exp == 0x1f) return toy_bits_f32(sign | 0x7f800000u | mant << 13);
	return toy_bits_f32(sign | (exp + 112) << 23 | mant << 13);
}

// toy_f32_fp16 rounds float32 to the nearest binary16, ties to even; overflow
// gives ±Inf (the F16C conversion, and quant.F32ToFP16).
TOY_INLINE uint16_t toy_f32_fp16(float f) {
	uint32_t b = toy_f32_bits(f);
	uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
	int32_t exp = (int32_t)((b >> 23) & 0xff);
	uint32_t mant = b & 0x7fffff;
	if (exp == 0xff) return sign | (mant ? 0x7e00 : 0x7c00);
	int32_t e = exp - 127 + 15;
	if (e >= 0x1f) return sign | 0x7c00;
	if (e <= 0) {
		if (e < -10) return sign;
		mant |= 0x800000;
		uint32_t shift = (uint32_t)(14 - e);
		uint32_t half = 1u << (shift - 1), r = mant >> shift, rest = mant & ((1u << shift) - 1);
		if (rest > half || (rest == half && (r & 1))) r++;
		return sign | (uint16_t)r;
	}
	uint32_t r = (uint32_t)e << 10 | mant >> 13, rest = mant & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (r & 1))) r++;
	return sign | (uint16_t)r;
}

TOY_INLINE uint16_t toy_load_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

// toy_expm1_taylor is e^r − 1 by its Taylor series to r^13, for |r| ≤ 0.35
// (good to a double ulp there): the shared core of toy_exp_f32 and
// toy_tanh_f32.
TOY_INLINE double toy_expm1_taylor(double r) {
	double p = 1.0 / 6227020800.0;
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	return p * r;
}

// toy_exp_core is e^x in double precision for x within [-104, 89] (x
// clamped to it), the shared part of toy_exp_f32 and toy_softmax_exp.
// toy_exp_f32 is float32(e^x) — what Go's float32(math.Exp(float64(x)))
// gives: both are within about one double ulp of e^x, so the rounding to
// float32 agrees except when e^x lies within a few double ulps of a float32
// rounding boundary (a chance of order 2^-27 per value; the tests compare
// millions of values bit for bit). x = k·ln2 + r, |r| ≤ ln2/2, with ln2 split
// so that k·ln2_hi is exact; e^r by its Taylor series to r^13; 2^k from
// exponent bits in two halves. Branch-free, so that loops over it vectorize
// (build.sh compiles with -fno-trapping-math to let the compiler turn the
// selects into blends).
TOY_INLINE double toy_exp_core(float xf) {
	double x = (double)xf;
	double xc = x < -104.0 ? -104.0 : (x > 89.0 ? 89.0 : x);
	double t = xc * 1.4426950408889634 + 6755399441055744.0; // round to integer by the 1.5·2^52 trick
	double k = t - 6755399441055744.0;
	double r = (xc - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
	double p = toy_expm1_taylor(r) + 1.0;
	// k1 = floor(k/2) by the same trick (k/2 − 1/4 rounds to it), k2 = k − k1;
	// 2^k1 has exponent bits k1 + 1023, the low bits of k1 + 1023 + 2^52.
	// No float-to-integer conversion: the loops around it vectorize on AVX2.
	double k1 = ((k * 0.5 - 0.25) + 6755399441055744.0) - 6755399441055744.0, k2 = k - k1;
	uint64_t b1, b2;
	double e1 = k1 + (1023.0 + 4503599627370496.0), e2 = k2 + (1023.0 + 4503599627370496.0);
	__builtin_memcpy(&b1, &e1, 8);
	__builtin_memcpy(&b2, &e2, 8);
	b1 <<= 52, b2 <<= 52;
	double s1, s2;
	__builtin_memcpy(&s1, &b1, 8);
	__builtin_memcpy(&s2, &b2, 8);
	return p * s1 * s2;
}

TOY_INLINE float toy_exp_f32(float x) {
	float y = (float)toy_exp_core(x);
	y = x < -104.0f ? 0.0f : y;
	y = x > 89.0f ? __builtin_inff() : y;
	return y;
}

// toy_softmax_exp is a softmax's term as tensor's softmaxExp gives it:
// toy_exp_f32(x), or 0 where e^x is below float32's smallest normal number,
// 2^-126. The test is on the double, before the conversion, so that no
// denormal float is ever made: each costs a microcode assist wherever it
// meets an arithmetic instruction. (Past x = 88.8 the conversion gives +Inf
// itself; a softmax's x is at most 0.)
TOY_INLINE float toy_softmax_exp(float x) {
	double d = toy_exp_core(x);
	return (float)(d < 0x1p-126 ? 0.0 : d);
}

// toy_tanh_f32 is float32(tanh x) computed in double precision — what Go's
// float32(math.Tanh(float64(x))) gives, rounding aside as for toy_exp_f32:
// tanh x = m/(m + 2) with m = e^{2x} − 1 for x ≥ 0 (odd symmetry for x < 0).
// m is e^{2x} − 1 by toy_exp_f32's reduction in double; for 2x < 0.34 its
// Taylor series without the leading 1, so that small x lose no digits.
TOY_INLINE float toy_tanh_f32(float xf) {
	double x = (double)xf, a = x < 0 ? -x : x, y = 2 * a, m;
	if (a > 20) return xf < 0 ? -1.0f : 1.0f; // tanh = 1 − 2e^{−40} … rounds to 1
	if (y < 0.34) {
		m = toy_expm1_taylor(y);
	} else {
		double t = y * 1.4426950408889634 + 6755399441055744.0;
		double k = t - 6755399441055744.0;
		double r = (y - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
		uint64_t b;
		double e = k + (1023.0 + 4503599627370496.0); // k ≤ 58: 2^k in one step
		__builtin_memcpy(&b, &e, 8);
		b <<= 52;
		double s;
		__builtin_memcpy(&s, &b, 8);
		m = (toy_expm1_taylor(r) + 1.0) * s - 1.0;
	}
	float r = (float)(m / (m + 2.0));
	return xf < 0 ? -r : r;
}

// toy_dots (f32.c, not exported) computes out[s] = dotF32(x, w + s·stride)
// for s < n: toy/tensor's dotF32 in its order (four partial sums over
// i ≡ c mod 4, the tail into the first, (s0 + s1) + (s2 + s3); products
// rounded on amd64, fused on arm64, as the Go compiler does).
void toy_dots(float *out, const float *x, const float *w, int64_t K, int64_t stride, int64_t n);

#endif
