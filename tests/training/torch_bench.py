#!/usr/bin/env python3
"""Times a training step of a SmolLM2-135M-shaped model in PyTorch, written as a
PyTorch user writes it, for the ratio against

    go test -run '^$' -bench 'StepSmolLM2' -benchtime 2x ./tests/training

The same work as toy's benchmark: B = 4 sequences of T = 128 tokens at once
([B, T, D] throughout), float32, the head tied to the embedding, cross-entropy
over all B·T positions, backward, gradient clipping at 1, AdamW (lr 1e-4,
betas 0.9/0.95, weight decay 0.1); full training, then LoRA (rank 8, scale 2,
on q and v, the rest frozen). Attention is F.scaled_dot_product_attention
(causal, the 3 KV heads repeated for the 9 query heads) where PyTorch has it
(2.0 on); on older PyTorch, as Debian's 1.13, the same product written out.
--compile wraps the model in torch.compile (PyTorch 2; on CPU it needs a C
compiler). The step time printed is the fastest of --steps after a warm-up.

Debian's python3-torch does its matrix products through the system's
libblas.so.3: with the reference BLAS alone (2 GFLOP/s here) a step takes
over two minutes, so install OpenBLAS first (apt-get install
libopenblas0-pthread), as a Debian user timing PyTorch would.

    /usr/bin/python3 tests/training/torch_bench.py --threads 2
    .venv/bin/python tests/training/torch_bench.py --threads 2 --compile
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, L, H, KV, FF, HD = 49152, 576, 30, 9, 3, 1536, 64
B, T = 4, 128


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LoRALinear(nn.Module):
    """y = W x + scale · B A x, with W frozen and B starting at zero."""

    def __init__(self, base, r=8, scale=2.0):
        super().__init__()
        self.base, self.scale = base, scale
        self.a = nn.Parameter(torch.randn(r, base.in_features) * 0.02)
        self.b = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + self.scale * F.linear(F.linear(x, self.a), self.b)


def rotate(x, cos, sin):
    """RoPE on adjacent pairs (2i, 2i+1) of x [B, heads, T, HD]."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def attend(q, k, v):
    k, v = k.repeat_interleave(H // KV, dim=1), v.repeat_interleave(H // KV, dim=1)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = q @ k.transpose(-2, -1) / math.sqrt(HD)
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    return s.masked_fill(mask, float("-inf")).softmax(-1) @ v


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = RMSNorm(D), RMSNorm(D)
        self.q, self.k, self.v = nn.Linear(D, H * HD, bias=False), nn.Linear(D, KV * HD, bias=False), nn.Linear(D, KV * HD, bias=False)
        self.o = nn.Linear(H * HD, D, bias=False)
        self.gate, self.up, self.down = nn.Linear(D, FF, bias=False), nn.Linear(D, FF, bias=False), nn.Linear(FF, D, bias=False)

    def forward(self, x, cos, sin):
        h = self.n1(x)
        q = rotate(self.q(h).view(B, T, H, HD).transpose(1, 2), cos, sin)
        k = rotate(self.k(h).view(B, T, KV, HD).transpose(1, 2), cos, sin)
        v = self.v(h).view(B, T, KV, HD).transpose(1, 2)
        x = x + self.o(attend(q, k, v).transpose(1, 2).reshape(B, T, H * HD))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.norm = RMSNorm(D)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith(("o.weight", "down.weight")) else 0.02
                nn.init.normal_(p, std=std)
        inv = 10000.0 ** (-torch.arange(0, HD, 2, dtype=torch.float32) / HD)
        angles = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, ids):
        x = self.tok(ids)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        return F.linear(self.norm(x), self.tok.weight)  # tied head


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch 2)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    seqs = torch.tensor([[(i * 7919 + s * 104729) % V for i in range(T + 1)] for s in range(B)])
    inputs, targets = seqs[:, :-1], seqs[:, 1:]
    sdpa = "scaled_dot_product_attention" if hasattr(F, "scaled_dot_product_attention") else "attention written out"
    for lora in (False, True):
        model = Model()
        if lora:
            model.requires_grad_(False)
            for b in model.blocks:
                b.q, b.v = LoRALinear(b.q), LoRALinear(b.v)
        params = [p for p in model.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2 and not lora]  # as toy's benchmark: matrices, not norms or adapters
        rest = [p for p in params if p.dim() < 2 or lora]
        opt = torch.optim.AdamW([{"params": decay}, {"params": rest, "weight_decay": 0.0}], lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
        run = torch.compile(model) if a.compile else model
        times = []
        for _ in range(a.steps + 1):
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(run(inputs).reshape(B * T, V), targets.reshape(B * T))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            times.append(time.perf_counter() - t0)
        how = ", torch.compile" if a.compile else ""
        print(f"{'lora' if lora else 'full'} step: {min(times[1:]):.2f} s (threads {a.threads}, torch {torch.__version__}, {sdpa}{how})")


if __name__ == "__main__":
    main()
