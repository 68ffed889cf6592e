#!/usr/bin/env python3
"""fatbin.py: list, and thin in place, the CUDA fat binary inside a shared library.

    python3 tests/cuda/fatbin.py LIB.so                               # the table of entries
    python3 tests/cuda/fatbin.py LIB.so --keep-ptx 90 [--ptx-isa 9.0]  # rewrite LIB.so in place

nvcc puts every translation unit's device code into the library's .nv_fatbin section as one
fat binary ("container"), and each container holds one entry per target: PTX for a virtual
architecture (compute_XX, kind 1) or a cubin, machine code for one GPU (sm_XX, kind 2).
llama.cpp's CUDA build for node-llama-cpp ships 143 containers of 7 entries each, PTX for
compute_75/80/90 and cubins for sm_86/89/120/121: about 129 MB, nearly all of libggml-cuda.so.

--keep-ptx 90 writes zeros over the payload of every entry except the compute_90 PTX. Headers,
offsets and sizes stay as they were, so the ELF file and every container keep their layout,
and the zeros cost nothing once the library is compressed (tests/cuda/llamacpp.sh pack).

Why a zeroed entry is never picked on an sm_90 GPU (an H100/H200): when the CUDA driver loads
a container it takes a cubin only if its major version is the GPU's and its minor version is
not above it (binary compatibility holds within one major version only), so sm_86, sm_89,
sm_120 and sm_121 cubins can never run on sm_90. Failing that it JIT-compiles the PTX of the
highest compute_XX not above the GPU's, which is compute_90 here; compute_75/80 would be taken
only if compute_90 were missing. So on sm_90 the driver reads only the entry that is kept. The
zeroed entries are left in place as they are: rewriting their kind or arch to hide them would
rely on driver behaviour nobody documents. On another GPU (sm_86, say) the driver would pick a
zeroed cubin and fail to load it with an error; the thinned library is for sm_90 only.

--ptx-isa 9.0 also relabels the kept PTX as PTX ISA 9.0. nvcc 13.1 writes `.version 9.1`,
and a driver's JIT compiler accepts PTX up to its own CUDA version only: a 580 driver (CUDA
13.0) refuses 9.1 with cudaErrorUnsupportedPtxVersion ("the provided PTX was compiled with an
unsupported toolchain"), whatever the kernels use. The code nvcc emits for .target sm_90 uses
nothing newer than ISA 9.0: all 143 compute_90 modules of node-llama-cpp 3.21.1, relabelled even
as ISA 7.8, assemble for sm_90 with CUDA 11.8's ptxas (which only warns of an unknown
`used_bytes_mask` pragma). Had one used something newer, the driver's JIT would fail on it at
module load with a message naming it, not compute wrong results. So only the `.version` line and
the entry's ISA version fields change. The payload is zstd-compressed (flag 0x8000; it starts
with the zstd magic), so this step runs the `zstd` command to decompress it and to compress the
edited text again (-19). If the new frame does not fit the entry's padded payload, the entry
absorbs the zeroed entries that follow it in its container (its padded size grows by their
headers and payloads), which keeps the container's total size and the next container's offset.

Layout (little-endian; checked against libggml-cuda.so of node-llama-cpp 3.21.1):

  container header, 16 bytes:
    0x00 u32 magic 0xBA55ED50   0x04 u16 version (1)   0x06 u16 header size (16)
    0x08 u64 size of the entries that follow the header
  entry header, `header size` bytes (0x40, 0x50 or 0x68 seen), then the payload:
    0x00 u16 kind: 1 PTX, 2 cubin (ELF)   0x02 u16 (0x0101)   0x04 u32 header size
    0x08 u64 padded payload size: the next entry starts at entry + header size + this
    0x10 u32 payload bytes in use (the compressed frame; <= padded size)
    0x14 u32 (0x40 on PTX, unknown)   0x18 u16 minor, 0x1a u16 major: the PTX ISA version
    0x1c u32 arch (75 = compute_75 or sm_75)   0x20 u32, 0x24 u32 (name offset, length: 0)
    0x28 u64 flags: 0x1 64-bit, 0x2000 LZ4 payload, 0x8000 zstd payload (0x8011 seen)
    0x30 u64 (0)   0x38 u64 uncompressed payload size

Errors (a message and exit status 1): no .nv_fatbin section, a bad container magic, entries that
run past their container, no compute_XX PTX for the requested arch, a container without one
(its kernels could not run at all), a payload that cannot be edited or does not fit.
Only the Python standard library is used (and the zstd command for --ptx-isa).
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import struct
import subprocess
import sys

MAGIC = 0xBA55ED50
KIND = {1: "PTX", 2: "cubin"}
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000


class FatbinError(Exception):
    pass


def find_section(data, name):
    """The (offset, size) in the file of the ELF64 section called name."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise FatbinError("not a little-endian 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)

    strtab_off = header(shstrndx)[4]
    for i in range(shnum):
        sh_name, _, _, _, off, size = header(i)
        end = data.index(b"\0", strtab_off + sh_name)
        if data[strtab_off + sh_name:end].decode() == name:
            return off, size
    raise FatbinError(f"no {name} section: not a CUDA library, or one without device code")


class Entry:
    """One entry's header fields; off is the header's offset in the file."""

    def __init__(self, data, off, container):
        self.off = off
        self.container = container
        self.kind, _, self.header_size, self.padded = struct.unpack_from("<HHIQ", data, off)
        self.used, _, self.minor, self.major, self.arch = struct.unpack_from("<IIHHI", data, off + 0x10)
        self.flags, _, self.raw_size = struct.unpack_from("<QQQ", data, off + 0x28)

    @property
    def payload(self):
        return self.off + self.header_size

    @property
    def end(self):
        return self.payload + self.padded

    def name(self):
        return ("compute_%d" if self.kind == 1 else "sm_%d") % self.arch


def parse(data, sec_off, sec_size):
    """All entries of all containers in the section, in file order."""
    entries = []
    p, end, n = sec_off, sec_off + sec_size, 0
    while p < end:
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, p)
        if magic != MAGIC:
            raise FatbinError(f"bad fat binary magic {magic:#x} at file offset {p:#x} (want {MAGIC:#x})")
        q, qend = p + hsize, p + hsize + fsize
        if qend > end:
            raise FatbinError(f"container {n} at {p:#x} runs past the end of .nv_fatbin")
        while q < qend:
            e = Entry(data, q, n)
            if e.header_size < 0x40 or e.end > qend:
                raise FatbinError(f"entry at {q:#x} in container {n} is malformed or runs past its container")
            entries.append(e)
            q = e.end
        n += 1
        p = qend
        while p < end and p % 8 and data[p] == 0:  # containers are 8-byte aligned
            p += 1
    return entries


def table(data, entries):
    """Prints one row per kind, arch, ISA version and flags; zeroed counts entries whose
    payload is all zeros (thinned by --keep-ptx)."""
    rows = {}
    for e in entries:
        key = (e.kind, e.arch, e.major, e.minor, e.flags)
        r = rows.setdefault(key, [0, 0, 0, 0])
        r[0] += 1
        r[1] += e.padded
        r[2] += e.raw_size
        r[3] += 1 if data[e.payload:e.end].strip(b"\0") else 0
    containers = len({e.container for e in entries})
    print(f"{containers} containers, {len(entries)} entries")
    print(f"{'kind':6} {'arch':12} {'version':8} {'flags':>9} {'count':>6} {'bytes':>12} {'uncompressed':>13} {'zeroed':>7}")
    total = 0
    for (kind, arch, major, minor, flags), (count, size, raw, live) in sorted(rows.items()):
        name = ("compute_%d" if kind == 1 else "sm_%d") % arch
        total += size
        print(f"{KIND.get(kind, kind):6} {name:12} {major}.{minor:<6} {flags:#9x} {count:6} {size:12} {raw:13} {count - live:7}")
    print(f"{'':6} {'total':12} {'':8} {'':9} {len(entries):6} {total:12}")


def zstd(args, stdin):
    out = subprocess.run(["zstd", "-q", *args], input=stdin, capture_output=True)
    if out.returncode != 0:
        raise FatbinError(f"zstd {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def relabel(data, e, isa):
    """The kept entry's new payload: its PTX with `.version` set to isa, compressed as before."""
    frame = bytes(data[e.payload:e.payload + e.used])
    if e.flags & FLAG_LZ4:
        raise FatbinError(f"{e.name()} entry at {e.off:#x}: LZ4 payloads are not handled")
    ptx = zstd(["-d", "-c"], frame) if e.flags & FLAG_ZSTD else frame
    if len(ptx) != e.raw_size and e.flags & FLAG_ZSTD:
        raise FatbinError(f"{e.name()} entry at {e.off:#x}: {len(ptx)} bytes unpacked, header says {e.raw_size}")
    m = re.search(rb"^\.version (\d+)\.(\d+)$", ptx[:4096], re.M)
    if not m:
        raise FatbinError(f"{e.name()} entry at {e.off:#x}: no .version line in its PTX")
    new = ptx[:m.start()] + b".version " + isa.encode() + ptx[m.end():]
    if len(new) != len(ptx):
        raise FatbinError(f"{e.name()} entry at {e.off:#x}: .version {m.group(1).decode()}.{m.group(2).decode()} "
                          f"and {isa} differ in length")
    packed = zstd(["-19", "--no-check", "-c"], new) if e.flags & FLAG_ZSTD else new
    return packed, new


def keep_ptx(path, data, entries, arch, isa):
    kept = [e for e in entries if e.kind == 1 and e.arch == arch]
    if not kept:
        archs = [n for _, n in sorted({((e.kind, e.arch), e.name()) for e in entries})]
        raise FatbinError(f"no compute_{arch} PTX in {path} (it has {', '.join(archs)})")
    containers = {e.container for e in entries}
    missing = containers - {e.container for e in kept}
    if missing:
        raise FatbinError(f"{len(missing)} of {len(containers)} containers have no compute_{arch} PTX "
                          f"(the first is container {min(missing)}): their kernels could not run")
    if len(kept) != len(containers):
        raise FatbinError(f"some container holds more than one compute_{arch} PTX")

    for e in entries:
        if not (e.kind == 1 and e.arch == arch):
            data[e.payload:e.end] = bytes(e.padded)

    merged = 0
    if isa:
        major, minor = (int(x) for x in isa.split("."))
        if shutil.which("zstd") is None and any(e.flags & FLAG_ZSTD for e in kept):
            raise FatbinError("--ptx-isa needs the zstd command (apt-get install zstd)")
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            results = list(pool.map(lambda e: relabel(data, e, isa), kept))
        by_container = {}
        for e in entries:
            by_container.setdefault(e.container, []).append(e)
        for e, (packed, _) in zip(kept, results):
            padded = e.padded
            following = by_container[e.container][by_container[e.container].index(e) + 1:]
            while len(packed) > padded and following:
                nxt = following.pop(0)  # a zeroed entry: take its header and payload
                data[nxt.off:nxt.payload] = bytes(nxt.header_size)
                padded += nxt.header_size + nxt.padded
                merged += 1
            if len(packed) > padded:
                raise FatbinError(f"{e.name()} entry at {e.off:#x}: {len(packed)} bytes after relabelling, "
                                  f"room for {padded}")
            data[e.payload:e.payload + padded] = packed + bytes(padded - len(packed))
            struct.pack_into("<Q", data, e.off + 0x08, padded)
            struct.pack_into("<I", data, e.off + 0x10, len(packed))
            struct.pack_into("<HH", data, e.off + 0x18, minor, major)
        print(f"relabelled {len(kept)} compute_{arch} PTX entries as ISA {isa}; "
              f"{merged} zeroed entries absorbed to make room")
    return kept, results if isa else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lib", help="an ELF shared library with a .nv_fatbin section (libggml-cuda.so)")
    ap.add_argument("--keep-ptx", type=int, metavar="ARCH",
                    help="zero, in place, every entry but the compute_ARCH PTX (90 for an H100/H200)")
    ap.add_argument("--ptx-isa", metavar="X.Y", help="with --keep-ptx: relabel the kept PTX as ISA X.Y (9.0)")
    args = ap.parse_args()
    if args.ptx_isa and not re.fullmatch(r"\d+\.\d+", args.ptx_isa):
        ap.error("--ptx-isa wants MAJOR.MINOR, such as 9.0")
    if args.ptx_isa and args.keep_ptx is None:
        ap.error("--ptx-isa goes with --keep-ptx")
    try:
        with open(args.lib, "rb") as f:
            data = bytearray(f.read())
        sec_off, sec_size = find_section(data, ".nv_fatbin")
        entries = parse(data, sec_off, sec_size)
        if args.keep_ptx is None:
            table(data, entries)
            return
        kept, results = keep_ptx(args.lib, data, entries, args.keep_ptx, args.ptx_isa)
        # Check the result before writing: the same containers walk to the section's end, and
        # every kept payload unpacks to the PTX it should hold.
        after = parse(data, sec_off, sec_size)
        if {e.container for e in after} != {e.container for e in entries}:
            raise FatbinError("internal error: the containers changed")
        if results:
            for e, (packed, ptx) in zip(kept, results):
                frame = bytes(data[e.payload:e.payload + len(packed)])
                if (zstd(["-d", "-c"], frame) if e.flags & FLAG_ZSTD else frame) != ptx:
                    raise FatbinError(f"internal error: the entry at {e.off:#x} does not unpack to its PTX")
        tmp = args.lib + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, args.lib)
        table(data, after)
    except (FatbinError, OSError) as err:
        sys.exit(f"fatbin.py: {args.lib}: {err}")


if __name__ == "__main__":
    main()
