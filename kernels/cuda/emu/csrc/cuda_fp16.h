// The emulator's stand-in for the toolkit's cuda_fp16.h: the __half type and
// the conversions toy's kernels use, in plain C++ (round to nearest even,
// subnormals, infinities and NaN as the hardware's cvt.rn.f16.f32).
#pragma once
#include <stdint.h>
#include <string.h>

struct __half {
	uint16_t x;
};

static inline __half __ushort_as_half(uint16_t h) { return __half{h}; }
static inline uint16_t __half_as_ushort(__half h) { return h.x; }

static inline float __half2float(__half h) {
	uint32_t s = (uint32_t)(h.x & 0x8000u) << 16, e = (h.x >> 10) & 0x1f, m = h.x & 0x3ffu, u;
	if (e == 0x1f) {
		u = s | 0x7f800000u | (m << 13); // inf, NaN (payload kept)
	} else if (e != 0) {
		u = s | ((e + 112) << 23) | (m << 13);
	} else if (m == 0) {
		u = s;
	} else { // subnormal: m·2^−24, exact in float32
		float f = (float)m * (1.0f / 16777216.0f);
		memcpy(&u, &f, 4);
		u |= s;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

// __float2half_rn rounds to the nearest fp16, ties to even.
static inline __half __float2half_rn(float f) {
	uint32_t u;
	memcpy(&u, &f, 4);
	uint16_t s = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u) return __half{(uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu))}; // NaN stays NaN
	if (a >= 0x477ff000u) return __half{(uint16_t)(s | 0x7c00u)};                       // rounds to ≥ 65520: inf
	if (a < 0x38800000u) {                                                              // below 2^−14: subnormal or 0
		if (a < 0x33000000u) return __half{s};                                        // below 2^−25: rounds to 0 (tie at 2^−25 to even 0)
		uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
		uint32_t shift = 126 - e; // m·2^(e−150) in units of 2^−24: m >> (126−e)
		uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		if (rem > halfway || (rem == halfway && (q & 1))) q++;
		return __half{(uint16_t)(s | q)};
	}
	uint32_t e = (a >> 23) - 112, m = a & 0x7fffffu;
	uint32_t q = (e << 10) | (m >> 13), rem = m & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) q++; // may carry into the exponent: still right
	return __half{(uint16_t)(s | q)};
}
