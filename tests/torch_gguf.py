"""read_gguf: a minimal GGUF v3 reader for the PyTorch twins under tests/
(training, vit), written from the format's description: metadata and F32
tensors, as float64 torch tensors that require gradients."""
import hashlib
import struct

import numpy as np
import torch


def read_gguf(path):
    """Minimal GGUF v3 reader: metadata and F32 tensors."""
    b = open(path, "rb").read()
    off = 0

    def take(fmt):
        nonlocal off
        v = struct.unpack_from("<" + fmt, b, off)
        off += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal off
        n = take("Q")
        s = b[off:off + n].decode()
        off += n
        return s

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert b[:4] == b"GGUF"
    off = 4
    version, nt, nkv = take("I"), take("Q"), take("Q")
    meta = {}
    for _ in range(nkv):
        k = string()
        meta[k] = value(take("I"))
    infos = []
    for _ in range(nt):
        name = string()
        nd = take("I")
        dims = [take("Q") for _ in range(nd)]
        typ, o = take("I"), take("Q")
        assert typ == 0, "F32 only"
        infos.append((name, dims[::-1], o))
    align = meta.get("general.alignment", 32)
    start = (off + align - 1) // align * align
    tensors = {}
    for name, shape, o in infos:
        n = int(np.prod(shape))
        a = np.frombuffer(b, dtype="<f4", count=n, offset=start + o).reshape(shape)
        tensors[name] = torch.tensor(a.astype(np.float64), requires_grad=True)
    return meta, tensors, hashlib.sha256(b).hexdigest()
