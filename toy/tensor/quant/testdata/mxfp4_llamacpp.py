#!/usr/bin/env python3
"""mxfp4_llamacpp.py: what llama.cpp itself makes of MXFP4, for toy/tensor/quant's MXFP4 tests
(and toy/tensor's MatMul test, which reads its dot part).

    python3 toy/tensor/quant/testdata/mxfp4_llamacpp.py [OUT]     (default: toy/tensor/quant/testdata/mxfp4.golden.json)

Loads the llama.cpp libraries node-llama-cpp ships (tests/reference/node_modules, `npm ci` there;
the release tests/quantize uses) with ctypes, and records:

  * quantize: blocks of fixed inputs (stored, as float32 bits) and the bytes ggml_quantize_chunk
    writes for GGML_TYPE_MXFP4 (quantize_mxfp4 → quantize_row_mxfp4_ref, what llama-quantize runs);
  * exponents: for every power of two 2^j (j = −147 … 128) and the 256 floats just below it (as
    many as lie in [2^(j−1), 2^j)), the exponent byte a block whose largest magnitude is that float
    gets — the floats for which log2f rounds up to j form a run of c right below 2^j; recorded as
    [j, c, e for those, e below];
  * dequantize: the SHA-256 of dequantize_row_mxfp4 over 256 blocks, block b having e = b and
    nibbles q_i = (i + b) mod 16 (toy's test rebuilds them);
  * dot: activations x [M, K] (float32 bits), their Q8_0 blocks from libggml-cpu's
    quantize_row_q8_0 (the AVX2 build's, the one llama.cpp runs on such CPUs), MXFP4 weight rows
    w [N, K], and each x_m · w_n from ggml_vec_dot_mxfp4_q8_0_generic (float32 bits: toy must give
    these) and from the AVX2 and AVX-512 builds' ggml_vec_dot_mxfp4_q8_0 (for the record).

Only the Python standard library is used; the inputs come from a seeded splitmix64, built from bits.
"""

import array
import ctypes
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
BINS = os.path.join(ROOT, "tests/reference/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64")
MXFP4, Q8_0 = 39, 8


class SplitMix:
    def __init__(self, seed):
        self.s = seed

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        return z ^ (z >> 31)


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def bits_of(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def rand_float(r, lo_exp, hi_exp):
    """A float32 of random sign and mantissa with a biased exponent in [lo_exp, hi_exp]."""
    z = r.next()
    e = lo_exp + (z >> 32) % (hi_exp - lo_exp + 1)
    return f32(((z >> 63) << 31) | (e << 23) | (z & 0x7FFFFF))


def quantize_cases():
    r = SplitMix(39)
    cases = []
    for i in range(8):  # ordinary weights, |x| ~ 2^-8 … 2^3
        cases.append(("normal", [rand_float(r, 119, 130) for _ in range(32)]))
    for i in range(3):  # every exponent at once
        cases.append(("wide", [rand_float(r, 1, 254) for _ in range(32)]))
    # Ties: with amax 4 or 6 the step is d = 0.5, the levels 0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6;
    # midpoints between them, the levels themselves, zeros of both signs, and beyond 6.
    mids = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 6.0, 7.5]
    tie = [4.0] + [m for m in mids[:15]] + [-m for m in mids]
    cases.append(("ties", tie))
    cases.append(("ties-neg", [-v for v in tie]))
    cases.append(("ties-6", [6.0] + tie[1:]))
    for sc in (2.0**-100, 2.0**-20, 2.0**40, 2.0**100):
        cases.append(("ties-scaled", [v * sc for v in tie]))
    # A largest magnitude a few ulps below a power of two (log2f may round it up).
    for p in (8.0, 1.0, 2.0**-60, 2.0**90):
        for m in (1, 3, 40, 70):
            v = f32(bits_of(p) - m)
            x = [rand_float(r, 100, 126) * p for _ in range(32)]
            x[m % 32] = v if m % 2 else -v
            cases.append((f"below-pow2-{m}", x))
    cases.append(("zeros", [0.0] * 32))
    cases.append(("neg-zeros", [-0.0] * 32))
    cases.append(("tiny", [f32(0x00800000 | i) * (-1) ** i for i in range(32)]))  # amax in [2^-126, 2^-125)
    cases.append(("subnormal", [f32(i * 977) for i in range(32)]))
    cases.append(("subnormal-smallest", [f32(1)] + [0.0] * 31))
    cases.append(("huge", [f32(0x7F7FFFFF - i * 12345) * (-1) ** i for i in range(32)]))
    cases.append(("huge-pow2", [2.0**127] + [rand_float(r, 200, 254) for _ in range(31)]))
    nan = [rand_float(r, 120, 128) for _ in range(32)]
    nan[0], nan[17] = f32(0x7FC00000), f32(0xFFC00001)
    cases.append(("nan", nan))
    inf = [rand_float(r, 120, 128) for _ in range(32)]
    inf[5] = float("inf")
    cases.append(("inf", inf))
    ninf = [rand_float(r, 120, 128) for _ in range(32)]
    ninf[20] = float("-inf")
    cases.append(("neg-inf", ninf))
    return cases


def floats(vals):
    return array.array("f", vals)


def hexf(vals):
    return floats(vals).tobytes().hex()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "mxfp4.golden.json")
    base = ctypes.CDLL(os.path.join(BINS, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    base.ggml_quantize_chunk.restype = ctypes.c_size_t
    base.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    base.dequantize_row_mxfp4.restype = None
    base.dequantize_row_mxfp4.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]

    def quantize(xs, rows):
        x = floats(xs)
        buf = ctypes.create_string_buffer(len(x) // 32 * 17)
        got = base.ggml_quantize_chunk(MXFP4, x.buffer_info()[0], buf, 0, rows, len(x) // rows, None)
        assert got == len(buf.raw), (got, len(buf.raw))
        return buf.raw

    # Quantize.
    qcases = []
    for name, x in quantize_cases():
        assert len(x) == 32
        qcases.append({"name": name, "x": hexf(x), "q": quantize(x, 1).hex()})

    # Exponent bytes around every power of two.
    def pow2_bits(j):
        if j < -149:
            return 0
        if j >= -126:
            return (j + 127) << 23  # j = 128: +Inf's bits
        return 1 << (j + 149)

    bounds, xs, keys = [], [], []
    for j in range(-147, 129):
        for m in range(0, 257):
            b = pow2_bits(j) - m
            if b <= pow2_bits(j - 1) or (j == 128 and m == 0):  # in [2^(j-1), 2^j)
                continue
            keys.append((j, m))
            xs.extend([f32(b)] + [0.0] * 31)
    q = quantize(xs, len(keys))
    es = {}
    for i, k in enumerate(keys):
        es[k] = q[17 * i]
    for j in range(-147, 129):
        ms = sorted(m for (jj, m) in keys if jj == j and m > 0)
        hi = es[(j, 0)] if (j, 0) in es else None
        run = 0
        while run < len(ms) and es[(j, ms[run])] != es[(j, ms[-1])]:
            run += 1
        lo = es[(j, ms[-1])]
        if hi is not None and run > 0:
            assert es[(j, ms[0])] == hi, j
        assert all(es[(j, m)] == lo for m in ms[run:]), f"2^{j}: the rounded-up floats are not one run"
        up = es[(j, ms[0])] if run else (hi if hi is not None else lo)
        bounds.append([j, run, up, lo])

    # Dequantize 256 blocks, e = b, q_i = (i + b) mod 16.
    blocks = bytearray()
    for b in range(256):
        q_ = [(i + b) % 16 for i in range(32)]
        blocks += bytes([b] + [q_[j] | q_[16 + j] << 4 for j in range(16)])
    y = floats([0.0] * (256 * 32))
    src = ctypes.create_string_buffer(bytes(blocks), len(blocks))
    base.dequantize_row_mxfp4(src, y.buffer_info()[0], len(y))
    deq = {"sha256": hashlib.sha256(y.tobytes()).hexdigest(),
           "first_of_each_block": [bits_of(y[32 * b]) for b in range(0, 256, 17)]}

    # Dots against Q8_0 activations.
    def cpu(name):
        lib = ctypes.CDLL(os.path.join(BINS, name))
        lib.ggml_cpu_init.restype = None
        lib.ggml_cpu_init()
        for f in ("ggml_vec_dot_mxfp4_q8_0", "ggml_vec_dot_mxfp4_q8_0_generic"):
            fn = getattr(lib, f)
            fn.restype = None
            fn.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_void_p,
                           ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.quantize_row_q8_0.restype = None
        lib.quantize_row_q8_0.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        return lib

    avx2, avx512 = cpu("libggml-cpu-haswell.so"), cpu("libggml-cpu-skylakex.so")
    r = SplitMix(4)
    M, N, K = 3, 8, 320  # K: 10 blocks, an odd pair count for the SIMD loops' tails
    x = [rand_float(r, 118, 128) for _ in range(M * K)]
    x[K + 7] = 0.0
    xa = floats(x)
    xq = ctypes.create_string_buffer(M * K // 32 * 34)
    avx2.quantize_row_q8_0(xa.buffer_info()[0], xq, M * K)
    w = bytearray()
    for n in range(N):
        if n < 4:  # quantized weights
            w += quantize([rand_float(r, 115, 128) for _ in range(K)], 1)
        else:  # random bytes, exponents 100 … 155, a few extreme blocks
            for b in range(K // 32):
                z = r.next()
                e = 100 + z % 56
                if n == 7 and b < 4:
                    e = (0, 1, 2, 180)[b]
                w += bytes([e]) + bytes((r.next() >> (8 * (i % 8))) & 0xFF for i in range(16))
    wb = ctypes.create_string_buffer(bytes(w), len(w))
    rb = K // 32 * 17

    def dot(fn, m, n):
        s = ctypes.c_float()
        fn(K, ctypes.byref(s), 0, ctypes.addressof(wb) + n * rb, 0, ctypes.addressof(xq) + m * K // 32 * 34, 0, 1)
        return bits_of(s.value)

    dots = {"M": M, "N": N, "K": K, "x": hexf(x), "q8": xq.raw.hex(), "w": bytes(w).hex(),
            "generic": [dot(avx2.ggml_vec_dot_mxfp4_q8_0_generic, m, n) for m in range(M) for n in range(N)],
            "avx2": [dot(avx2.ggml_vec_dot_mxfp4_q8_0, m, n) for m in range(M) for n in range(N)],
            "avx512": [dot(avx512.ggml_vec_dot_mxfp4_q8_0, m, n) for m in range(M) for n in range(N)]}
    assert dots["generic"] == [dot(avx512.ggml_vec_dot_mxfp4_q8_0_generic, m, n) for m in range(M) for n in range(N)]

    meta = json.load(open(os.path.join(BINS, "_nlcBuildMetadata.json")))
    golden = {
        "source": {
            "llama.cpp": meta["buildOptions"]["llamaCpp"],
            "libggml-base.so": hashlib.sha256(open(os.path.join(BINS, "libggml-base.so"), "rb").read()).hexdigest(),
            "made_by": "toy/tensor/quant/testdata/mxfp4_llamacpp.py",
        },
        "quantize": qcases,
        "exponents": bounds,
        "dequantize": deq,
        "dot": dots,
    }
    with open(out, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"wrote {out}: {len(qcases)} quantized blocks, {len(bounds)} powers of two, "
          f"{M}×{N} dots", file=sys.stderr)


if __name__ == "__main__":
    main()
