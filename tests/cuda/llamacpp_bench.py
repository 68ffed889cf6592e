#!/usr/bin/env python3
"""llamacpp_bench.py: llama.cpp's prefill and decode speed on GGUF files, the way tests/cuda's
TestSpeed measures toy's.

    python3 tests/cuda/llamacpp_bench.py --model FILE.gguf [--model ...] [--lib DIR]
        [--gpu-layers 999] [--threads N] [--prompt 512] [--n 128] [--flash-attn on|off|auto]
        [--kv-type f16|f32|q8_0] [--require-gpu] [--verbose]

It loads llama.cpp's libraries from DIR with ctypes: by default node-llama-cpp's CPU build
(tests/reference/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64), on the GPU machine the
CUDA build that tests/cuda/llamacpp.sh unpacks. ggml_backend_load_all_from_path(DIR) finds the
backends there: libggml-cuda.so when it loads (it needs libcudart.so.13, libcublas.so.13 and the
driver's libcuda.so.1 on the library path) and the best libggml-cpu-*.so for this CPU.

For each model: the prompt is PROMPT token ids, id i = (i*7919) % vocab, as in TestSpeed. A
warm-up decodes the whole prompt and 8 single tokens, so whatever happens on first use (the
CUDA driver JIT-compiling PTX, CUDA graphs being captured, buffers being allocated) happens
before the clock starts for both shapes; then the KV cache is cleared. Timed:

  prefill: one llama_decode of the whole prompt (one batch, one ubatch) and llama_synchronize;
  decode:  N steps of greedy sampling (llama.cpp's greedy sampler: the first maximal logit)
           then llama_decode of that one token and llama_synchronize.

It prints one line per model for people,

  llama.cpp CUDA0 (NVIDIA H200) smollm2-shape-q8_0.gguf: prefill X tok/s (512 tokens in Y ms), decode Z tok/s (128 tokens)

and one JSON line: the figures, the settings, the greedy ids, the backend devices ggml found and
llama.cpp's own lines about offloading, so a run that fell back to the CPU shows. --require-gpu
makes that an error. KV cache types and flash attention are llama.cpp's defaults (F16, auto)
unless given. The ctypes structures below follow include/llama.h of the llama.cpp release
node-llama-cpp 3.21.1 ships (its gitRelease.bundle); load() checks them against the defaults
llama.cpp returns. Only the Python standard library is used.
"""

import argparse
import ctypes
import glob
import json
import os
import re
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CPU_LIBS = os.path.join(ROOT, "tests/reference/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64")

FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}  # enum llama_flash_attn_type
KV_TYPES = {"f32": 0, "f16": 1, "q8_0": 8, "q4_0": 2, "bf16": 30}  # enum ggml_type
DEV_TYPES = {0: "CPU", 1: "GPU", 2: "IGPU", 3: "ACCEL", 4: "META"}  # enum ggml_backend_dev_type


class ModelParams(ctypes.Structure):
    """struct llama_model_params (include/llama.h)."""
    _fields_ = [
        ("devices", ctypes.c_void_p),  # ggml_backend_dev_t *, NULL: all devices
        ("tensor_buft_overrides", ctypes.c_void_p),
        ("n_gpu_layers", ctypes.c_int32),
        ("split_mode", ctypes.c_int),  # enum llama_split_mode
        ("load_mode", ctypes.c_int),  # enum llama_load_mode
        ("lazy_mode", ctypes.c_int),  # enum llama_lazy_mode
        ("main_gpu", ctypes.c_int32),
        ("tensor_split", ctypes.c_void_p),  # const float *
        ("progress_callback", ctypes.c_void_p),
        ("progress_callback_user_data", ctypes.c_void_p),
        ("kv_overrides", ctypes.c_void_p),
        ("vocab_only", ctypes.c_bool),
        ("check_tensors", ctypes.c_bool),
        ("use_extra_bufts", ctypes.c_bool),
        ("no_host", ctypes.c_bool),
        ("no_alloc", ctypes.c_bool),
        ("load_mtp", ctypes.c_bool),
    ]


class ContextParams(ctypes.Structure):
    """struct llama_context_params (include/llama.h)."""
    _fields_ = [
        ("n_ctx", ctypes.c_uint32),
        ("n_batch", ctypes.c_uint32),
        ("n_ubatch", ctypes.c_uint32),
        ("n_seq_max", ctypes.c_uint32),
        ("n_rs_seq", ctypes.c_uint32),
        ("n_outputs_max", ctypes.c_uint32),
        ("n_outputs_max_per_seq", ctypes.c_uint32),
        ("n_threads", ctypes.c_int32),
        ("n_threads_batch", ctypes.c_int32),
        ("ctx_type", ctypes.c_int),  # enum llama_context_type
        ("rope_scaling_type", ctypes.c_int),
        ("pooling_type", ctypes.c_int),
        ("attention_type", ctypes.c_int),
        ("flash_attn_type", ctypes.c_int),  # enum llama_flash_attn_type
        ("rope_freq_base", ctypes.c_float),
        ("rope_freq_scale", ctypes.c_float),
        ("yarn_ext_factor", ctypes.c_float),
        ("yarn_attn_factor", ctypes.c_float),
        ("yarn_beta_fast", ctypes.c_float),
        ("yarn_beta_slow", ctypes.c_float),
        ("yarn_orig_ctx", ctypes.c_uint32),
        ("defrag_thold", ctypes.c_float),
        ("cb_eval", ctypes.c_void_p),
        ("cb_eval_user_data", ctypes.c_void_p),
        ("type_k", ctypes.c_int),  # enum ggml_type
        ("type_v", ctypes.c_int),
        ("abort_callback", ctypes.c_void_p),
        ("abort_callback_data", ctypes.c_void_p),
        ("embeddings", ctypes.c_bool),
        ("offload_kqv", ctypes.c_bool),
        ("no_perf", ctypes.c_bool),
        ("op_offload", ctypes.c_bool),
        ("swa_full", ctypes.c_bool),
        ("kv_unified", ctypes.c_bool),
        ("samplers", ctypes.c_void_p),  # struct llama_sampler_seq_config *
        ("n_samplers", ctypes.c_size_t),
        ("ctx_other", ctypes.c_void_p),
    ]


class Batch(ctypes.Structure):
    """struct llama_batch (include/llama.h)."""
    _fields_ = [
        ("n_tokens", ctypes.c_int32),
        ("token", ctypes.POINTER(ctypes.c_int32)),
        ("embd", ctypes.c_void_p),
        ("pos", ctypes.c_void_p),
        ("n_seq_id", ctypes.c_void_p),
        ("seq_id", ctypes.c_void_p),
        ("logits", ctypes.c_void_p),
    ]


class SamplerChainParams(ctypes.Structure):
    """struct llama_sampler_chain_params (include/llama.h)."""
    _fields_ = [("no_perf", ctypes.c_bool)]


LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


class Log:
    """Collects llama.cpp's and ggml's log lines; prints them with --verbose, warnings and
    errors always (a failure to load or to offload then says why)."""

    def __init__(self, verbose):
        self.verbose = verbose
        self.lines = []
        self.partial = ""
        self.level = 2
        self.callback = LOG_CALLBACK(self.write)

    def write(self, level, text, _user):
        if level != 5:  # GGML_LOG_LEVEL_CONT continues the previous message
            self.level = level
        self.partial += text.decode("utf-8", "replace") if text else ""
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            self.lines.append(line)
            if self.verbose or self.level >= 3:
                sys.stderr.write(f"[llama.cpp] {line}\n")

    def matching(self, pattern, since=0):
        return [l.strip() for l in self.lines[since:] if re.search(pattern, l)]


def pick(dir, pattern, what):
    found = sorted(glob.glob(os.path.join(dir, pattern)))
    if len(found) != 1:
        sys.exit(f"llamacpp_bench.py: want one {what} ({pattern}) in {dir}, found {found or 'none'}")
    return found[0]


def fn(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


def load(dir, log):
    """Loads libllama and the ggml backends in dir; returns (llama, ggml, notes)."""
    notes = []
    # Try the GPU backends first by hand: ggml's own loader is silent in release builds,
    # so this is the only place the reason (a missing libcudart.so.13, say) shows.
    for path in sorted(glob.glob(os.path.join(dir, "libggml-*.so"))):
        name = os.path.basename(path)
        if name == "libggml-base.so" or name.startswith("libggml-cpu"):
            continue
        try:
            ctypes.CDLL(path)
            notes.append(f"{name}: loads")
        except OSError as err:
            notes.append(f"{name}: does not load: {err}")
            sys.stderr.write(f"llamacpp_bench.py: {name} does not load, so ggml will not use it: {err}\n")
    llama = ctypes.CDLL(pick(dir, "libllama.*so", "libllama"))
    ggml = ctypes.CDLL(pick(dir, "libggml.*so", "libggml (the backend registry)"))

    fn(llama, "llama_log_set", None, LOG_CALLBACK, ctypes.c_void_p)(log.callback, None)
    fn(ggml, "ggml_backend_load_all_from_path", None, ctypes.c_char_p)(dir.encode())
    # After loading the backends: llama_backend_init would otherwise search the
    # executable's folder and the working directory for them.
    fn(llama, "llama_backend_init", None)()

    fn(ggml, "ggml_backend_dev_count", ctypes.c_size_t)
    fn(ggml, "ggml_backend_dev_get", ctypes.c_void_p, ctypes.c_size_t)
    fn(ggml, "ggml_backend_dev_name", ctypes.c_char_p, ctypes.c_void_p)
    fn(ggml, "ggml_backend_dev_description", ctypes.c_char_p, ctypes.c_void_p)
    fn(ggml, "ggml_backend_dev_type", ctypes.c_int, ctypes.c_void_p)

    fn(llama, "llama_model_default_params", ModelParams)
    fn(llama, "llama_context_default_params", ContextParams)
    fn(llama, "llama_model_load_from_file", ctypes.c_void_p, ctypes.c_char_p, ModelParams)
    fn(llama, "llama_model_free", None, ctypes.c_void_p)
    fn(llama, "llama_init_from_model", ctypes.c_void_p, ctypes.c_void_p, ContextParams)
    fn(llama, "llama_free", None, ctypes.c_void_p)
    fn(llama, "llama_model_get_vocab", ctypes.c_void_p, ctypes.c_void_p)
    fn(llama, "llama_vocab_n_tokens", ctypes.c_int32, ctypes.c_void_p)
    fn(llama, "llama_model_n_layer", ctypes.c_int32, ctypes.c_void_p)
    fn(llama, "llama_model_n_params", ctypes.c_uint64, ctypes.c_void_p)
    fn(llama, "llama_model_size", ctypes.c_uint64, ctypes.c_void_p)
    fn(llama, "llama_model_desc", ctypes.c_int32, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)
    fn(llama, "llama_n_ctx", ctypes.c_uint32, ctypes.c_void_p)
    fn(llama, "llama_batch_get_one", Batch, ctypes.POINTER(ctypes.c_int32), ctypes.c_int32)
    fn(llama, "llama_decode", ctypes.c_int32, ctypes.c_void_p, Batch)
    fn(llama, "llama_synchronize", None, ctypes.c_void_p)
    fn(llama, "llama_get_memory", ctypes.c_void_p, ctypes.c_void_p)
    fn(llama, "llama_memory_clear", None, ctypes.c_void_p, ctypes.c_bool)
    fn(llama, "llama_sampler_chain_default_params", SamplerChainParams)
    fn(llama, "llama_sampler_chain_init", ctypes.c_void_p, SamplerChainParams)
    fn(llama, "llama_sampler_chain_add", None, ctypes.c_void_p, ctypes.c_void_p)
    fn(llama, "llama_sampler_init_greedy", ctypes.c_void_p)
    fn(llama, "llama_sampler_sample", ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)
    fn(llama, "llama_sampler_free", None, ctypes.c_void_p)
    fn(llama, "llama_supports_gpu_offload", ctypes.c_bool)
    fn(llama, "llama_print_system_info", ctypes.c_char_p)

    # The layout check: the defaults llama_model_default_params and llama_context_default_params
    # return in this release (src/llama-model.cpp, src/llama-context.cpp). A field out of place
    # shows up as a wrong value here instead of as a crash or a silently different setting.
    mp = llama.llama_model_default_params()
    cp = llama.llama_context_default_params()
    want = [
        (mp.n_gpu_layers, -1), (mp.split_mode, 1), (mp.load_mode, -1), (mp.lazy_mode, 1), (mp.main_gpu, 0),
        (mp.use_extra_bufts, True), (mp.vocab_only, False), (mp.load_mtp, False),
        (cp.n_ctx, 512), (cp.n_batch, 2048), (cp.n_ubatch, 512), (cp.n_seq_max, 1), (cp.n_rs_seq, 0),
        (cp.n_outputs_max, 0), (cp.n_outputs_max_per_seq, 1), (cp.ctx_type, 0), (cp.rope_scaling_type, -1),
        (cp.pooling_type, -1), (cp.attention_type, -1), (cp.flash_attn_type, -1), (cp.yarn_ext_factor, -1.0),
        (cp.yarn_beta_slow, -1.0), (cp.defrag_thold, -1.0), (cp.type_k, 1), (cp.type_v, 1),
        (cp.embeddings, False), (cp.offload_kqv, True), (cp.no_perf, True), (cp.op_offload, True),
        (cp.swa_full, True), (cp.kv_unified, False), (cp.n_samplers, 0), (cp.ctx_other, None),
    ]
    bad = [i for i, (got, exp) in enumerate(want) if got != exp]
    if bad:
        sys.exit(f"llamacpp_bench.py: llama_model_params/llama_context_params layout mismatch "
                 f"(checks {bad} fail): is {dir} the llama.cpp release these structures follow?")
    return llama, ggml, notes


def devices(ggml):
    out = []
    for i in range(ggml.ggml_backend_dev_count()):
        d = ggml.ggml_backend_dev_get(i)
        out.append({"name": ggml.ggml_backend_dev_name(d).decode(),
                    "description": ggml.ggml_backend_dev_description(d).decode(),
                    "type": DEV_TYPES.get(ggml.ggml_backend_dev_type(d), "?")})
    return out


def decode(llama, ctx, tokens):
    """One llama_decode of tokens (a ctypes int32 array), waited for."""
    rc = llama.llama_decode(ctx, llama.llama_batch_get_one(tokens, len(tokens)))
    if rc != 0:
        raise RuntimeError(f"llama_decode of {len(tokens)} tokens returned {rc}")
    llama.llama_synchronize(ctx)


def bench(llama, ggml, log, args, path, devs):
    mark = len(log.lines)
    mp = llama.llama_model_default_params()
    mp.n_gpu_layers = args.gpu_layers
    t0 = time.perf_counter()
    model = llama.llama_model_load_from_file(path.encode(), mp)
    if not model:
        raise RuntimeError(f"llama_model_load_from_file({path}) failed (see the llama.cpp lines above)")
    load_ms = (time.perf_counter() - t0) * 1e3
    ctx = sampler = None
    try:
        vocab = llama.llama_vocab_n_tokens(llama.llama_model_get_vocab(model))
        desc = ctypes.create_string_buffer(256)
        llama.llama_model_desc(model, desc, len(desc))

        cp = llama.llama_context_default_params()
        warm = 8
        cp.n_ctx = args.prompt + max(args.n, warm) + 1
        cp.n_batch = cp.n_ubatch = args.prompt  # the whole prompt in one ubatch, as toy does
        cp.n_threads = cp.n_threads_batch = args.threads
        if args.flash_attn:
            cp.flash_attn_type = FLASH_ATTN[args.flash_attn]
        if args.kv_type:
            cp.type_k = cp.type_v = KV_TYPES[args.kv_type]
        ctx = llama.llama_init_from_model(model, cp)
        if not ctx:
            raise RuntimeError("llama_init_from_model failed (see the llama.cpp lines above)")
        sampler = llama.llama_sampler_chain_init(llama.llama_sampler_chain_default_params())
        llama.llama_sampler_chain_add(sampler, llama.llama_sampler_init_greedy())
        memory = llama.llama_get_memory(ctx)

        prompt = (ctypes.c_int32 * args.prompt)(*[(i * 7919) % vocab for i in range(args.prompt)])
        one = (ctypes.c_int32 * 1)()

        def generate(n):
            ids = []
            for _ in range(n):
                one[0] = llama.llama_sampler_sample(sampler, ctx, -1)
                ids.append(one[0])
                decode(llama, ctx, one)
            return ids

        t0 = time.perf_counter()
        decode(llama, ctx, prompt)
        generate(warm)
        warmup_ms = (time.perf_counter() - t0) * 1e3
        llama.llama_memory_clear(memory, True)

        t0 = time.perf_counter()
        decode(llama, ctx, prompt)
        prefill_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        ids = generate(args.n)
        decode_s = time.perf_counter() - t0

        gpus = [d for d in devs if d["type"] in ("GPU", "IGPU")]
        where = f"{gpus[0]['name']} ({gpus[0]['description']})" if gpus else "CPU"
        # llama.cpp's word on where the weights went: a layer count per device from its
        # "layer N assigned to device X" lines, and its offload and buffer lines.
        by_device = {}
        for line in log.matching(r"assigned to device", mark):
            dev = re.search(r"assigned to device (\S+?),?(\s|$)", line)
            if dev:
                by_device[dev.group(1)] = by_device.get(dev.group(1), 0) + 1
        offload = log.matching(r"offload|buffer size|ggml_cuda_init|Device \d", mark)
        return {
            "engine": "llama.cpp",
            "device": where,
            "model": os.path.basename(path),
            "model_path": os.path.abspath(path),
            "model_desc": desc.value.decode(errors="replace"),
            "model_bytes": llama.llama_model_size(model),
            "model_params": llama.llama_model_n_params(model),
            "layers": llama.llama_model_n_layer(model),
            "vocab": vocab,
            "prefill_tokens": args.prompt,
            "prefill_ms": round(prefill_s * 1e3, 3),
            "prefill_tok_s": round(args.prompt / prefill_s, 2),
            "decode_tokens": args.n,
            "decode_ms": round(decode_s * 1e3, 3),
            "decode_tok_s": round(args.n / decode_s, 2) if args.n else None,
            "load_ms": round(load_ms, 1),
            "warmup_ms": round(warmup_ms, 1),
            "greedy": ids,
            "settings": {
                "gpu_layers": args.gpu_layers, "threads": args.threads, "n_ctx": llama.llama_n_ctx(ctx),
                "n_batch": cp.n_batch, "n_ubatch": cp.n_ubatch,
                "flash_attn": args.flash_attn or "llama.cpp default (auto)",
                "kv_type": args.kv_type or "llama.cpp default (f16)",
                "prompt": "id i = (i*7919) % vocab", "warmup": f"prompt + {warm} tokens, then KV cache cleared",
                "sampler": "llama.cpp greedy (first maximal logit)",
            },
            "layers_by_device": by_device,
            "offload_log": offload[-16:],
        }
    finally:
        if sampler:
            llama.llama_sampler_free(sampler)
        if ctx:
            llama.llama_free(ctx)
        llama.llama_model_free(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a GGUF file (repeatable)")
    ap.add_argument("--lib", default=CPU_LIBS, help="the folder of libllama*.so and the libggml*.so backends")
    ap.add_argument("--gpu-layers", type=int, default=999, help="layers to offload (default 999: all)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads (default: all cores)")
    ap.add_argument("--prompt", type=int, default=512, help="prompt tokens, prefilled in one batch (default 512)")
    ap.add_argument("--n", type=int, default=128, help="greedy decode steps (default 128)")
    ap.add_argument("--flash-attn", choices=sorted(FLASH_ATTN), help="default: llama.cpp's (auto)")
    ap.add_argument("--kv-type", choices=sorted(KV_TYPES), help="K and V cache type (default: llama.cpp's, f16)")
    ap.add_argument("--require-gpu", action="store_true", help="fail unless a GPU backend device is there")
    ap.add_argument("--verbose", action="store_true", help="print llama.cpp's log")
    args = ap.parse_args()
    if args.prompt < 1 or args.n < 0 or args.threads < 1:
        ap.error("--prompt and --threads must be at least 1, --n at least 0")
    lib = os.path.abspath(args.lib)

    log = Log(args.verbose)
    llama, ggml, notes = load(lib, log)
    devs = devices(ggml)
    backend_log = log.matching(r"ggml_cuda_init|Device \d|CUDA")  # what ggml-cuda said at start
    meta = {}
    try:
        with open(os.path.join(lib, "_nlcBuildMetadata.json")) as f:
            meta = json.load(f).get("buildOptions", {})
    except (OSError, ValueError):
        pass
    sys.stderr.write(f"llamacpp_bench.py: {lib}: devices " +
                     ", ".join(f"{d['name']} ({d['type']}: {d['description']})" for d in devs) + "\n")
    if args.require_gpu and not any(d["type"] in ("GPU", "IGPU") for d in devs):
        sys.exit("llamacpp_bench.py: --require-gpu: ggml found no GPU device in " + lib +
                 "".join(f"\n  {n}" for n in notes))

    status = 0
    for path in args.model:
        try:
            r = bench(llama, ggml, log, args, path, devs)
        except RuntimeError as err:
            sys.stderr.write(f"llamacpp_bench.py: {path}: {err}\n")
            status = 1
            continue
        r["llama_cpp_release"] = meta.get("llamaCpp", {}).get("release")
        r["build_gpu"] = meta.get("gpu")
        r["lib"] = lib
        r["devices"] = devs
        r["backend_notes"] = notes
        r["backend_log"] = backend_log
        r["system_info"] = llama.llama_print_system_info().decode(errors="replace").strip()
        if args.require_gpu:
            m = [re.search(r"offloaded (\d+)/(\d+) layers", l) for l in r["offload_log"]]
            m = [x for x in m if x]
            if not m or int(m[-1].group(1)) == 0:
                sys.stderr.write(f"llamacpp_bench.py: {path}: --require-gpu: no layers were offloaded\n")
                status = 1
        print(f"llama.cpp {r['device']} {r['model']}: prefill {r['prefill_tok_s']:.0f} tok/s "
              f"({args.prompt} tokens in {r['prefill_ms']:.1f} ms), decode {r['decode_tok_s'] or 0:.1f} tok/s "
              f"({args.n} tokens); warm-up {r['warmup_ms'] / 1e3:.1f} s", flush=True)
        print(json.dumps(r), flush=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
