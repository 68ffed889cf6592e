// The CUDA dialect of toy's kernels (../../csrc/*.cu) as plain C++, so that
// g++ compiles the same sources for the emulated driver (see emu.cc):
// the qualifiers, the built-in index variables of the running emulated
// thread, barriers and warp shuffles (which switch fibers), and the device
// intrinsics with the rounding the hardware gives them.
//
// __shared__ variables are static storage in the section "emu_shared"; the
// launcher runs the blocks of a grid one after another on one OS thread and
// fills that section with 0xff bytes (NaN for floats) before each block, so
// a kernel that reads shared memory it did not write sees garbage, as on a
// GPU. Compile with -ffp-contract=off: the kernels round each product where
// they say so (__fmul_rn), and plain a*b+c must not become an FMA either
// unless nvcc would make it one (the emulator is stricter there).
#pragma once
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __shared__ static __attribute__((section("emu_shared")))
#define __restrict__ __restrict
#define __launch_bounds__(...)

struct emu_dim3 {
	unsigned int x, y, z;
};

// The launch geometry of the running block, and the running thread's index.
extern emu_dim3 emu_grid_dim, emu_block_dim, emu_block_idx;
extern const emu_dim3 *emu_thread_idx;
#define gridDim emu_grid_dim
#define blockDim emu_block_dim
#define blockIdx emu_block_idx
#define threadIdx (*emu_thread_idx)

// Barriers (emu.cc): a block-wide one, and the warp-wide exchange of 8
// bytes per lane that shuffles are built on. emu_warp_exchange stores v as
// this lane's value, waits for every lane of the warp, and returns the
// value lane src stored (src outside [0, 32): the lane's own). emu_lane is
// the running thread's lane: its linear index in the block mod 32.
void emu_syncthreads();
uint64_t emu_warp_exchange(unsigned mask, uint64_t v, int src, const char *what);
int emu_lane();

static inline void __syncthreads() { emu_syncthreads(); }

template <typename T> static inline uint64_t emu_bits(T v) {
	static_assert(sizeof(T) <= 8, "shuffle of a value over 8 bytes");
	uint64_t b = 0;
	memcpy(&b, &v, sizeof(T));
	return b;
}
template <typename T> static inline T emu_from_bits(uint64_t b) {
	T v;
	memcpy(&v, &b, sizeof(T));
	return v;
}

// __shfl_down_sync: lane l gets lane l+delta's v (its own when l+delta ≥ 32).
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	int lane = emu_lane();
	int src = (lane % width) + (int)delta < width ? lane + (int)delta : -1;
	return emu_from_bits<T>(emu_warp_exchange(mask, emu_bits(v), src, "__shfl_down_sync"));
}

template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
	int lane = emu_lane();
	int src = (lane % width) >= (int)delta ? lane - (int)delta : -1;
	return emu_from_bits<T>(emu_warp_exchange(mask, emu_bits(v), src, "__shfl_up_sync"));
}

template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
	int lane = emu_lane();
	int src = lane ^ laneMask;
	if (src / width != lane / width) src = -1;
	return emu_from_bits<T>(emu_warp_exchange(mask, emu_bits(v), src, "__shfl_xor_sync"));
}

template <typename T> static inline T __shfl_sync(unsigned mask, T v, int srcLane, int width = 32) {
	int lane = emu_lane();
	int src = (lane / width) * width + srcLane % width;
	return emu_from_bits<T>(emu_warp_exchange(mask, emu_bits(v), src, "__shfl_sync"));
}

// emu_mma_s8_m16n8k32 is mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// with c = 0, in the PTX ISA's fragment layout (mma.cu's mma_s8 says it):
// every lane gathers the rows of a and the columns of b its four outputs
// need from the lanes that hold them, 8 bytes an exchange, as shuffles do.
// Every lane of the warp must call it.
static inline void emu_mma_s8_m16n8k32(int d[4], const int a[4], const int b[2]) {
	int lane = emu_lane(), g = lane >> 2, t = lane & 3;
	uint64_t a01 = (uint32_t)a[0] | (uint64_t)(uint32_t)a[1] << 32;
	uint64_t a23 = (uint32_t)a[2] | (uint64_t)(uint32_t)a[3] << 32;
	uint64_t b01 = (uint32_t)b[0] | (uint64_t)(uint32_t)b[1] << 32;
	int8_t A[2][32], B[2][32]; // rows g and g+8; columns 2t and 2t+1
	for (int s = 0; s < 4; s++) {
		uint64_t lo = emu_warp_exchange(0xffffffffu, a01, 4 * g + s, "mma.sync");
		uint64_t hi = emu_warp_exchange(0xffffffffu, a23, 4 * g + s, "mma.sync");
		for (int i = 0; i < 4; i++) {
			A[0][4 * s + i] = (int8_t)(lo >> (8 * i));
			A[1][4 * s + i] = (int8_t)(lo >> (32 + 8 * i));
			A[0][16 + 4 * s + i] = (int8_t)(hi >> (8 * i));
			A[1][16 + 4 * s + i] = (int8_t)(hi >> (32 + 8 * i));
		}
	}
	for (int c = 0; c < 2; c++)
		for (int s = 0; s < 4; s++) {
			uint64_t v = emu_warp_exchange(0xffffffffu, b01, 4 * (2 * t + c) + s, "mma.sync");
			for (int i = 0; i < 4; i++) {
				B[c][4 * s + i] = (int8_t)(v >> (8 * i));
				B[c][16 + 4 * s + i] = (int8_t)(v >> (32 + 8 * i));
			}
		}
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++) {
			int s = 0;
			for (int k = 0; k < 32; k++) s += (int)A[r][k] * (int)B[c][k];
			d[2 * r + c] = s;
		}
}

// Integer helpers CUDA declares for device code.
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline long max(long a, long b) { return a > b ? a : b; }

// __dp4a: c + the dot product of the four signed bytes of a and b.
static inline int __dp4a(int a, int b, int c) {
	int s = c;
	for (int i = 0; i < 4; i++) s += (int)(int8_t)(a >> (8 * i)) * (int)(int8_t)(b >> (8 * i));
	return s;
}

// Arithmetic rounded to nearest even, never contracted (with
// -ffp-contract=off, a plain operation is exactly one rounding).
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }

// __float2int_rn: round half to even; NaN gives 0, out of range saturates
// (cvt.rni.s32.f32).
static inline int __float2int_rn(float f) {
	if (f != f) return 0;
	if (f >= 2147483648.0f) return INT32_MAX;
	if (f <= -2147483648.0f) return INT32_MIN;
	return (int)nearbyintf(f); // the default rounding mode: to nearest even
}

static inline unsigned __float_as_uint(float f) { return emu_from_bits<unsigned>(emu_bits(f)); }
static inline float __uint_as_float(unsigned u) { return emu_from_bits<float>(emu_bits(u)); }
static inline int __float_as_int(float f) { return emu_from_bits<int>(emu_bits(f)); }
static inline float __int_as_float(int u) { return emu_from_bits<float>(emu_bits(u)); }

#include "cuda_fp16.h"
