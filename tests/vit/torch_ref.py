#!/usr/bin/python3
"""PyTorch twin of toy's ViT classifier, written from scratch (no toy code, no
transformers): Dosovitskiy et al. 2020 as Hugging Face's
ViTForImageClassification computes it, in float64.

It reads the gate model that `go run ./tests/vit/gen -out DIR` writes (GGUF,
F32) and records:
  - the logits for the fixed synthetic input (setup.go's Input), the
    cross-entropy loss for class LABEL, and the gradient of every parameter;
  - for each PNG in testdata, the preprocessed pixels as Hugging Face's
    ViTImageProcessor makes them (PIL convert("RGB"), resize BILINEAR to
    32x32, x*(1/255) in float64 rounded to float32, (x - mean)/std in float32)
    and the logits for them.
Output: testdata/gate.golden.json. Run with Debian's python3-torch and
python3-pil:

    go run ./tests/vit/gen -out /tmp/toy-vit
    /usr/bin/python3 tests/vit/torch_ref.py /tmp/toy-vit/gate.gguf tests/vit/testdata
"""
import hashlib
import json
import math
import os
import struct
import sys

import numpy as np
import PIL
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_gguf import read_gguf  # noqa: E402
from PIL import Image

LABEL = 3
IMAGES = ["shrink", "enlarge"]


def vit_forward(meta, W, pixels):
    """pixels [3, R, R] -> logits [K]."""
    D = meta["vit.embedding_length"]
    H = meta["vit.attention.head_count"]
    P = meta["vit.patch_size"]
    eps = meta["vit.attention.layer_norm_epsilon"]
    L = meta["vit.block_count"]
    dh = D // H

    def ln(x, name):
        return F.layer_norm(x, (D,), W[name + ".weight"], W[name + ".bias"], eps)

    def lin(x, name):
        return x @ W[name + ".weight"].T + W[name + ".bias"]

    # Patch embedding: a real strided convolution, [1, D, R/P, R/P] -> [N, D].
    e = F.conv2d(pixels[None], W["v.patch_embd.weight"], W["v.patch_embd.bias"], stride=P)
    e = e.flatten(2).transpose(1, 2)[0]
    x = torch.cat([W["v.class_embd"][None], e]) + W["v.position_embd.weight"]
    S = x.shape[0]
    for l in range(L):
        p = f"v.blk.{l}."
        h = ln(x, p + "ln1")
        q = lin(h, p + "attn_q").view(S, H, dh).transpose(0, 1)
        k = lin(h, p + "attn_k").view(S, H, dh).transpose(0, 1)
        v = lin(h, p + "attn_v").view(S, H, dh).transpose(0, 1)
        a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(dh), dim=-1)  # no mask
        o = (a @ v).transpose(0, 1).reshape(S, D)
        x = x + lin(o, p + "attn_out")
        h = ln(x, p + "ln2")
        u = lin(h, p + "ffn_up")
        u = 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))  # exact GELU
        x = x + lin(u, p + "ffn_down")
    x = ln(x, "v.post_ln")
    return lin(x[0], "cls")


def synthetic_input():
    """setup.go's Input: ((131c + 71y + 37x) mod 97)/48.5 - 1, rounded to float32."""
    x = np.zeros((3, 32, 32), dtype=np.float32)
    for c in range(3):
        for y in range(32):
            for i in range(32):
                x[c, y, i] = np.float32(((131 * c + 71 * y + 37 * i) % 97) / 48.5 - 1)
    return x


def preprocess(path, size, mean, std):
    """ViTImageProcessor, slow path: PIL resize BILINEAR, rescale, normalise."""
    img = Image.open(path).convert("RGB").resize((size, size), resample=Image.BILINEAR)
    a = np.array(img)  # [R, R, 3] uint8
    a = (a.astype(np.float64) * (1 / 255)).astype(np.float32)
    a = (a - np.array(mean, dtype=np.float32)) / np.array(std, dtype=np.float32)
    return a.transpose(2, 0, 1).astype(np.float32), np.array(img).transpose(2, 0, 1)


def main(model, dst):
    meta, W, sha = read_gguf(model)
    x = torch.tensor(synthetic_input().astype(np.float64))
    logits = vit_forward(meta, W, x)
    loss = F.cross_entropy(logits[None], torch.tensor([LABEL]))
    loss.backward()
    grads = {k: [float(np.float32(g)) for g in v.grad.flatten().tolist()] for k, v in W.items()}
    images = []
    with torch.no_grad():
        for name in IMAGES:
            px, u8 = preprocess(os.path.join(dst, name + ".png"), meta["vit.image_size"],
                                meta["vit.image_mean"], meta["vit.image_std"])
            lg = vit_forward(meta, W, torch.tensor(px.astype(np.float64)))
            images.append({"name": name, "rgb8": u8.flatten().tolist(),
                           "pixels": [float(v) for v in px.flatten()], "logits": lg.tolist()})
    out = {"model_sha256": sha, "torch": torch.__version__, "pil": PIL.__version__, "label": LABEL,
           "logits": logits.tolist(), "loss": float(loss), "grads": grads, "images": images}
    with open(os.path.join(dst, "gate.golden.json"), "w") as f:
        json.dump(out, f)
    print("logits", [round(v, 4) for v in logits.tolist()], "loss", float(loss))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
