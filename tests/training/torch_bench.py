#!/usr/bin/python3
"""Times the PyTorch twin's training step on a SmolLM2-135M-shaped model
(B = 4, T = 128, float32, AdamW, clipping), full and LoRA (rank 8 on q, v),
with a fixed thread count, for the ratio against
`go test -run '^$' -bench 'StepSmolLM2' -benchtime 2x ./tests/training`.

    /usr/bin/python3 tests/training/torch_bench.py --threads 2
"""
import argparse
import time

import torch
import torch.nn.functional as F

from torch_ref import attention, rope

V, D, L, H, KV, FF, HD = 49152, 576, 30, 9, 3, 1536, 64


def make(lora):
    g = torch.Generator().manual_seed(1)
    p = {}

    def normal(name, *shape, std=0.02):
        p[name] = (torch.randn(*shape, generator=g) * std).requires_grad_(not lora)

    normal("tok", V, D)
    for l in range(L):
        normal(f"{l}.q", H * HD, D)
        normal(f"{l}.k", KV * HD, D)
        normal(f"{l}.v", KV * HD, D)
        normal(f"{l}.o", D, H * HD)
        normal(f"{l}.gate", FF, D)
        normal(f"{l}.up", FF, D)
        normal(f"{l}.down", D, FF)
        p[f"{l}.n1"] = torch.ones(D, requires_grad=not lora)
        p[f"{l}.n2"] = torch.ones(D, requires_grad=not lora)
        if lora:
            for t in ("q", "v"):
                out = p[f"{l}.{t}"].shape[0]
                p[f"{l}.{t}.a"] = (torch.randn(8, D, generator=g) * 0.02).requires_grad_()
                p[f"{l}.{t}.b"] = torch.zeros(out, 8, requires_grad=True)
    p["norm"] = torch.ones(D, requires_grad=not lora)
    return p


def forward(p, ids, lora):
    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w

    def lin(x, l, t):
        y = x @ p[f"{l}.{t}"].T
        if lora and f"{l}.{t}.a" in p:
            y = y + 2 * (x @ p[f"{l}.{t}.a"].T) @ p[f"{l}.{t}.b"].T
        return y

    T = len(ids)
    x = p["tok"][ids]
    for l in range(L):
        h = rms(x, p[f"{l}.n1"])
        q = rope(lin(h, l, "q").reshape(T, H, HD), 10000.0, False)
        k = rope(lin(h, l, "k").reshape(T, KV, HD), 10000.0, False)
        x = x + lin(attention(q, k, lin(h, l, "v").reshape(T, KV, HD), H, KV), l, "o")
        h = rms(x, p[f"{l}.n2"])
        x = x + lin(F.silu(lin(h, l, "gate")) * lin(h, l, "up"), l, "down")
    return rms(x, p["norm"]) @ p["tok"].T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_default_dtype(torch.float32)
    import torch_ref
    torch_ref.torch.set_default_dtype(torch.float32)
    seqs = [[(i * 7919 + s * 104729) % V for i in range(129)] for s in range(4)]
    for lora in (False, True):
        p = make(lora)
        params = [v for v in p.values() if v.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
        times = []
        for _ in range(a.steps + 1):
            t0 = time.perf_counter()
            opt.zero_grad()
            logits = torch.cat([forward(p, torch.tensor(s[:-1]), lora) for s in seqs])
            loss = F.cross_entropy(logits, torch.tensor(sum((s[1:] for s in seqs), [])))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            times.append(time.perf_counter() - t0)
        print(f"{'lora' if lora else 'full'} step: {min(times[1:]):.2f} s (threads {a.threads}, torch {torch.__version__})")


if __name__ == "__main__":
    main()
