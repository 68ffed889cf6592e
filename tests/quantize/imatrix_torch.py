#!/usr/bin/python3
"""imatrix_torch.py: PyTorch's importance matrices of the training gate's
llama and mixtral models, for toy's Model.Imatrix to match (imatrix_test.go).

The forward pass is tests/training/torch_ref.py's (PyTorch, float64, written
without toy's code). Every weight matrix is wrapped so that each product
with it adds the squares of the activation rows it multiplies to that
matrix's sums, per expert for the experts' stacks, and counts the rows, as
llama-imatrix defines an importance matrix; a dense matrix's product of
fewer than 16 rows would not count (none here: each chunk is 32 tokens in
one pass). Each chunk of 32 ids runs alone, as from an empty cache.

    go run ./tests/training/gen -out /tmp/toy-training
    /usr/bin/python3 tests/quantize/imatrix_torch.py /tmp/toy-training tests/quantize/testdata

Output: testdata/imatrix-<name>.golden.json: the model's SHA-256, the ids,
the chunk size, and per matrix its sums and counts.
"""
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "training"))
from torch_gguf import read_gguf  # noqa: E402
from torch_ref import llama_forward  # noqa: E402

CHUNK, CHUNKS, VOCAB = 32, 3, 48
IDS = [(i * 11 + 5) % VOCAB for i in range(CHUNK * CHUNKS)]

sums, counts = {}, {}


class Weight(torch.Tensor):
    """A weight matrix that records the rows it multiplies: name, and
    expert (the index taken of an experts' stack, else None)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fname = getattr(func, "__name__", "")
        if fname in ("matmul", "__matmul__", "__rmatmul__"):
            a, b = args[0], args[1]
            if fname == "__rmatmul__":
                a, b = b, a
            if isinstance(b, Weight) and not isinstance(a, Weight):  # x @ W.T: rows of x
                record(b, a.reshape(-1, a.shape[-1]))
            elif isinstance(a, Weight) and not isinstance(b, Weight):  # W[e] @ h: one row h
                record(a, b.reshape(1, -1))
        out = super().__torch_function__(func, types, args, kwargs)
        src = args[0] if args else None
        view = fname in ("__getitem__", "__get__")  # W[e], W.T
        if view and isinstance(out, Weight) and hasattr(src, "wname"):
            out.wname, out.expert = src.wname, src.expert
            if fname == "__getitem__":
                out.expert = int(args[1])
            return out
        return plain(out)


def plain(out):
    """Products and the like are activations, not weights."""
    if isinstance(out, Weight):
        return out.as_subclass(torch.Tensor)
    if isinstance(out, (tuple, list)):
        return type(out)(plain(o) for o in out)
    return out


def record(w, x):
    x = x.detach().to(torch.float64)
    e = w.expert or 0
    n = E[w.wname]
    if w.wname not in sums:
        sums[w.wname] = torch.zeros(n, x.shape[1], dtype=torch.float64)
        counts[w.wname] = [0] * n
    sums[w.wname][e] += (x * x).sum(0)
    counts[w.wname][e] += x.shape[0]


def main(src, dst):
    global E
    for name in ["llama", "mixtral"]:
        meta, W, sha = read_gguf(os.path.join(src, name + ".gguf"))
        sums.clear()
        counts.clear()
        E = {}
        for k, v in list(W.items()):
            if k.startswith("blk.") and v.dim() >= 2:
                w = v.detach().as_subclass(Weight)
                w.wname, w.expert = k, None
                E[k] = v.shape[0] if v.dim() == 3 else 1
                W[k] = w
        with torch.no_grad():
            for c in range(CHUNKS):
                llama_forward(meta, W, torch.tensor(IDS[c * CHUNK:(c + 1) * CHUNK]))
        out = {"name": name, "model_sha256": sha, "chunk": CHUNK, "ids": IDS, "torch": torch.__version__,
               "sums": {k: v.flatten().tolist() for k, v in sorted(sums.items())},
               "counts": {k: v for k, v in sorted(counts.items())}}
        with open(os.path.join(dst, "imatrix-" + name + ".golden.json"), "w") as f:
            json.dump(out, f)
        print(name, len(sums), "matrices:", ", ".join(f"{k} {counts[k]}" for k in sorted(sums))[:300])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
