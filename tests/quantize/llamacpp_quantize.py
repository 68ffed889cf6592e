#!/usr/bin/env python3
"""llamacpp_quantize.py: what llama.cpp's own quantizer makes of the gate's inputs.

    python3 tests/quantize/llamacpp_quantize.py INPUTS_DIR OUT_DIR [--dump DIR] [--keep DIR] [--verbose]

INPUTS_DIR is what `go run ./tests/quantize/geninputs -out INPUTS_DIR` wrote (inputs.json,
rows.f32, imatrix.f32, models/*.gguf). This script loads the llama.cpp libraries node-llama-cpp ships
(tests/reference/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64: libggml-base.so,
libllama.v0.4.0.so) with ctypes and

  * quantizes each row set to each type with ggml_quantize_chunk (no importance matrix),
    writing OUT_DIR/rows.golden.json: the SHA-256 of the bytes, and the first 12 hex digits of each row's;
  * quantizes row sets to each type with ggml_quantize_chunk and an importance matrix (one float
    per column, shared by the rows), writing OUT_DIR/rows_imatrix.golden.json in the same form;
  * quantizes each gate model to each file type with llama_model_quantize (as llama-quantize
    MODEL OUT TYPE [--pure] does, without an imatrix), writing OUT_DIR/models.golden.json:
    the SHA-256 of the whole output file, each tensor's type, and the first 12 hex digits
    of the SHA-256 of each tensor's bytes, in the file's order.

--dump DIR writes the raw quantized rows (DIR/ROWCASE.TYPE.bin, DIR/ROWCASE.IMATRIX.TYPE.bin) and
--keep DIR the quantized models, for looking into a difference. --only rows makes both row goldens. Only the Python standard library is used.
"""

import argparse
import ctypes
import hashlib
import json
import os
import struct
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINS = os.path.join(ROOT, "tests/reference/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64")

# ggml's type ids (ggml.h) and llama.cpp's file types (llama.h, enum llama_ftype).
GGML_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q2_K": 10,
              "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "IQ4_NL": 20, "IQ4_XS": 23, "I32": 26,
              "BF16": 30, "MXFP4": 39}
GGML_NAMES = {v: k for k, v in GGML_TYPES.items()}
FTYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q2_k": 10,
          "q3_k_s": 11, "q3_k_m": 12, "q3_k_l": 13, "q4_k_s": 14, "q4_k_m": 15, "q5_k_s": 16,
          "q5_k_m": 17, "q6_k": 18, "iq4_nl": 25, "iq4_xs": 30, "bf16": 32, "mxfp4_moe": 38}


class QuantizeParams(ctypes.Structure):
    """struct llama_model_quantize_params (include/llama.h of the bundled release)."""
    _fields_ = [
        ("nthread", ctypes.c_int32),
        ("ftype", ctypes.c_int),
        ("output_tensor_type", ctypes.c_int),
        ("token_embedding_type", ctypes.c_int),
        ("allow_requantize", ctypes.c_bool),
        ("quantize_output_tensor", ctypes.c_bool),
        ("only_copy", ctypes.c_bool),
        ("pure", ctypes.c_bool),
        ("keep_split", ctypes.c_bool),
        ("dry_run", ctypes.c_bool),
        ("imatrix", ctypes.c_void_p),
        ("kv_overrides", ctypes.c_void_p),
        ("tt_overrides", ctypes.c_void_p),
        ("prune_layers", ctypes.c_void_p),
        ("max_buf_size", ctypes.c_size_t),
    ]


class ImatrixData(ctypes.Structure):
    """struct llama_model_imatrix_data: one matrix's importance; a NULL name ends the list."""
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.POINTER(ctypes.c_float)), ("size", ctypes.c_size_t)]


class TensorOverride(ctypes.Structure):
    """struct llama_model_tensor_override: PATTERN=TYPE (--tensor-type); a NULL pattern ends the list."""
    _fields_ = [("pattern", ctypes.c_char_p), ("type", ctypes.c_int)]


LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


def load_libs(verbose):
    ggml = ctypes.CDLL(os.path.join(BINS, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    ggml.ggml_row_size.restype = ctypes.c_size_t
    ggml.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    llama = ctypes.CDLL(os.path.join(BINS, "libllama.v0.4.0.so"))
    llama.llama_model_quantize_default_params.restype = QuantizeParams
    llama.llama_model_quantize_default_params.argtypes = []
    llama.llama_model_quantize.restype = ctypes.c_uint32
    llama.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(QuantizeParams)]
    llama.llama_log_set.restype = None
    llama.llama_log_set.argtypes = [LOG_CALLBACK, ctypes.c_void_p]
    if not verbose:
        quiet = LOG_CALLBACK(lambda level, text, user: None)
        llama.llama_log_set(quiet, None)
        llama._quiet = quiet  # keep the callback alive
    llama.llama_backend_init()
    p = llama.llama_model_quantize_default_params()
    # The layout check: the defaults llama.cpp documents (Q8_0, quantize output, 8 GiB buffers).
    if p.ftype != 7 or not p.quantize_output_tensor or p.pure or p.max_buf_size != 8 << 30:
        sys.exit(f"llama_model_quantize_params layout mismatch: ftype={p.ftype} max_buf_size={p.max_buf_size}")
    return ggml, llama


def sha(b):
    return hashlib.sha256(b).hexdigest()


def read_gguf_tensors(path, ggml):
    """The tensors of a GGUF file, in order: (name, ggml type, data bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    pos = 4
    take("I")  # version
    n_tensors, n_kv = take("Q"), take("Q")
    align = 32
    for _ in range(n_kv):
        key = string()
        v = value(take("I"))
        if key == "general.alignment":
            align = v
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, dims, take("I"), take("Q")))
    start = (pos + align - 1) // align * align
    out = []
    for name, dims, t, off in infos:
        rows = 1
        for d in dims[1:]:
            rows *= d
        size = ggml.ggml_row_size(t, dims[0]) * rows
        out.append((name, t, data[start + off:start + off + size]))
    return out, sha(data)


def read_f32(path):
    raw = open(path, "rb").read()
    return (ctypes.c_float * (len(raw) // 4)).from_buffer_copy(raw)


def quantize_rows(ggml, e, tname, x, imatrix, dump, stem):
    """ggml_quantize_chunk of row set e to type tname (imatrix: a pointer or None), as a golden entry."""
    n, rows = e["row_len"], e["rows"]
    t = GGML_TYPES[tname]
    row_size = ggml.ggml_row_size(t, n)
    buf = ctypes.create_string_buffer(row_size * rows)
    got = ggml.ggml_quantize_chunk(t, x, buf, 0, rows, n, imatrix)
    if got != row_size * rows:
        sys.exit(f"{stem} {tname}: ggml_quantize_chunk wrote {got} bytes, want {row_size * rows}")
    b = buf.raw
    if dump:
        with open(os.path.join(dump, f"{stem}.{tname}.bin"), "wb") as f:
            f.write(b)
    return {"sha256": sha(b), "rows": " ".join(sha(b[r * row_size:(r + 1) * row_size])[:12] for r in range(rows))}


def rows_golden(inputs, index, ggml, dump):
    src = read_f32(os.path.join(inputs, "rows.f32"))
    out = []
    for e in index["rows"]:
        x = ctypes.byref(src, 4 * e["offset"])
        for tname in e["types"]:
            out.append({"case": e["name"], "type": tname, **quantize_rows(ggml, e, tname, x, None, dump, e["name"])})
    return out


def imatrix_golden(inputs, index, ggml, dump):
    """The row sets quantized with importance matrices: every type, as llama.cpp ignores it for some."""
    src = read_f32(os.path.join(inputs, "rows.f32"))
    imat = read_f32(os.path.join(inputs, "imatrix.f32"))
    rows = {e["name"]: e for e in index["rows"]}
    out = []
    for m in index["imatrix"]:
        e = rows[m["case"]]
        x = ctypes.byref(src, 4 * e["offset"])
        w = ctypes.byref(imat, 4 * m["offset"])
        for tname in e["types"]:
            q = quantize_rows(ggml, e, tname, x, w, dump, f"{e['name']}.{m['kind']}")
            out.append({"case": e["name"], "imatrix": m["kind"], "type": tname, **q})
    return out


def case_name(c):
    """ModelCase.Name in cases.go."""
    name = c["model"] + "-" + c["type"] + ("-pure" if c.get("pure") else "") + ("-imatrix" if c.get("imatrix") else "")
    name += ("-output-" + c["output"] if c.get("output") else "") + ("-embd-" + c["embd"] if c.get("embd") else "")
    name += (f"-tt{len(c['tensor_types'])}" if c.get("tensor_types") else "") + ("-leave" if c.get("leave_output") else "")
    return name


def ggml_type(name):
    for k, v in GGML_NAMES.items():
        if v.lower() == name.lower():
            return k
    sys.exit(f"unknown ggml type {name}")


def models_golden(inputs, index, ggml, llama, keep, tmp):
    files = {m["name"]: os.path.join(inputs, m["file"]) for m in index["models"]}
    imat = (ctypes.c_float * (os.path.getsize(os.path.join(inputs, "imatrix_models.f32")) // 4)).from_buffer_copy(
        open(os.path.join(inputs, "imatrix_models.f32"), "rb").read())
    order, cases = {}, []
    for c in index["cases"]:
        p = llama.llama_model_quantize_default_params()
        p.ftype = FTYPES[c["type"]]
        p.pure = bool(c.get("pure"))
        p.nthread = 2
        keep_alive = []
        if c.get("imatrix"):
            entries = index["model_imatrix"][c["model"]]
            arr = (ImatrixData * (len(entries) + 1))()
            for i, e in enumerate(entries):
                arr[i].name = e["name"].encode()
                arr[i].data = ctypes.cast(ctypes.byref(imat, 4 * e["offset"]), ctypes.POINTER(ctypes.c_float))
                arr[i].size = e["size"]
            arr[len(entries)].name = None
            p.imatrix = ctypes.cast(arr, ctypes.c_void_p)
            keep_alive.append(arr)
        if c.get("tensor_types"):
            tts = (TensorOverride * (len(c["tensor_types"]) + 1))()
            for i, tt in enumerate(c["tensor_types"]):
                pat, t = tt.rsplit("=", 1)
                tts[i].pattern, tts[i].type = pat.encode(), ggml_type(t)
            tts[len(c["tensor_types"])].pattern = None
            p.tt_overrides = ctypes.cast(tts, ctypes.c_void_p)
            keep_alive.append(tts)
        if c.get("output"):
            p.output_tensor_type = ggml_type(c["output"])
        if c.get("embd"):
            p.token_embedding_type = ggml_type(c["embd"])
        if c.get("leave_output"):
            p.quantize_output_tensor = False
        name = case_name(c)
        dst = os.path.join(keep or tmp, name + ".gguf")
        if llama.llama_model_quantize(files[c["model"]].encode(), dst.encode(), ctypes.byref(p)) != 0:
            sys.exit(f"{name}: llama_model_quantize failed (rerun with --verbose)")
        tensors, file_sha = read_gguf_tensors(dst, ggml)
        if not keep:
            os.remove(dst)
        names = [t[0] for t in tensors]
        if c["model"] not in order:
            order[c["model"]] = names
        elif order[c["model"]] != names:
            sys.exit(f"{name}: tensor order differs from the model's other cases")
        cases.append({"name": name, "model": c["model"], "type": c["type"], "pure": bool(c.get("pure")),
                      **{k: c[k] for k in ("imatrix", "output", "embd", "tensor_types", "leave_output") if c.get(k)},
                      "file_type": FTYPES[c["type"]], "sha256": file_sha,
                      "types": " ".join(GGML_NAMES.get(t[1], str(t[1])) for t in tensors),
                      "tensors": " ".join(sha(t[2])[:12] for t in tensors)})
        print(f"{file_sha}  {name}", file=sys.stderr)
    return order, cases


def forward_golden(inputs, index, ggml, llama, tmp):
    """llama-quantize's file for the forward gate's model, to compare with the one toy wrote."""
    fw = index["forward"]
    p = llama.llama_model_quantize_default_params()
    p.ftype = FTYPES[fw["type"]]
    p.nthread = 2
    dst = os.path.join(tmp, "forward.gguf")
    if llama.llama_model_quantize(os.path.join(inputs, fw["source"]["file"]).encode(), dst.encode(), ctypes.byref(p)) != 0:
        sys.exit("forward: llama_model_quantize failed (rerun with --verbose)")
    _, file_sha = read_gguf_tensors(dst, ggml)
    os.remove(dst)
    if file_sha != fw["sha256"]:
        print(f"WARNING: toy's {fw['file']} ({fw['sha256']}) is not llama-quantize's ({file_sha})", file=sys.stderr)
    return {"model": fw["model"], "type": fw["type"], "source_sha256": fw["source"]["sha256"],
            "llama_quantize_sha256": file_sha, "toy_sha256": fw["sha256"]}


def write_golden(path, g):
    """JSON with one line per top-level entry and per case, for readable diffs."""
    lines = []
    for k, v in g.items():
        if isinstance(v, list):
            items = ",\n  ".join(json.dumps(e) for e in v)
            lines.append(f"{json.dumps(k)}: [\n  {items}\n ]")
        elif isinstance(v, dict) and k == "tensor_order":
            items = ",\n  ".join(f"{json.dumps(m)}: {json.dumps(n)}" for m, n in v.items())
            lines.append(f"{json.dumps(k)}: {{\n  {items}\n }}")
        else:
            lines.append(f"{json.dumps(k)}: {json.dumps(v)}")
    with open(path, "w") as f:
        f.write("{\n " + ",\n ".join(lines) + "\n}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs")
    ap.add_argument("out")
    ap.add_argument("--dump", help="write the raw quantized rows here")
    ap.add_argument("--keep", help="keep the quantized models here")
    ap.add_argument("--verbose", action="store_true", help="show llama.cpp's log")
    ap.add_argument("--only", choices=["rows", "models"], help="make only one of the goldens")
    a = ap.parse_args()
    index = json.load(open(os.path.join(a.inputs, "inputs.json")))
    ggml, llama = load_libs(a.verbose)
    meta = json.load(open(os.path.join(BINS, "_nlcBuildMetadata.json")))
    pkg = json.load(open(os.path.join(ROOT, "tests/reference/node_modules/node-llama-cpp/package.json")))
    reference = {"llama.cpp": meta["buildOptions"]["llamaCpp"]["release"], "node-llama-cpp": pkg["version"],
                 "functions": "ggml_quantize_chunk (imatrix NULL), llama_model_quantize (default params; the cases' imatrix and overrides)"}
    os.makedirs(a.out, exist_ok=True)
    for d in (a.dump, a.keep):
        if d:
            os.makedirs(d, exist_ok=True)
    if a.only != "models":
        g = {"reference": reference, "cases": rows_golden(a.inputs, index, ggml, a.dump)}
        write_golden(os.path.join(a.out, "rows.golden.json"), g)
        ref = dict(reference, functions="ggml_quantize_chunk (imatrix: one float per column, shared by the rows)")
        g = {"reference": ref, "cases": imatrix_golden(a.inputs, index, ggml, a.dump)}
        write_golden(os.path.join(a.out, "rows_imatrix.golden.json"), g)
    if a.only != "rows":
        order, cases = models_golden(a.inputs, index, ggml, llama, a.keep, a.out)
        g = {"reference": reference, "inputs": {m["name"]: m["sha256"] for m in index["models"]},
             "tensor_order": order, "cases": cases, "forward": forward_golden(a.inputs, index, ggml, llama, a.out)}
        write_golden(os.path.join(a.out, "models.golden.json"), g)


if __name__ == "__main__":
    main()
