#!/usr/bin/python3
"""PyTorch twin of toy's training step, written from scratch (no toy code).

For each initial model that `go run ./tests/training/gen -out DIR` writes, it
loads the GGUF weights, runs the fixed batch, and records in float64: the loss,
the gradient of every parameter, and the losses of ten AdamW steps (betas
0.9/0.95, eps 1e-8, weight decay 0.1 on matrices only, global-norm clipping at
1.0, lr 1e-2). Output: testdata/<name>.golden.json. Run with Debian's
python3-torch:

    go run ./tests/training/gen -out /tmp/toy-training
    /usr/bin/python3 tests/training/torch_ref.py /tmp/toy-training tests/training/testdata [NAME…]
"""
import hashlib
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_gguf import read_gguf  # noqa: E402

STEPS, LR, WD, CLIP, PAD, VOCAB = 10, 1e-2, 0.1, 1.0, 0, 48


def rope(x, base, neox, scale=1.0):
    """x [T, H, d]: rotate feature pairs by scale·pos·base^(-2i/d)."""
    T, H, d = x.shape
    i = torch.arange(d // 2, dtype=x.dtype)
    theta = scale * torch.arange(T, dtype=x.dtype)[:, None] * base ** (-2 * i / d)  # [T, d/2]
    c, s = torch.cos(theta)[:, None, :], torch.sin(theta)[:, None, :]
    if neox:
        a, b = x[..., : d // 2], x[..., d // 2:]
    else:
        a, b = x[..., 0::2], x[..., 1::2]
    ra, rb = a * c - b * s, a * s + b * c
    if neox:
        return torch.cat([ra, rb], dim=-1)
    return torch.stack([ra, rb], dim=-1).reshape(T, H, d)


def attention(q, k, v, H, KV, scale=None, cap=0.0, window=0):
    """q [T, H, d], k, v [T, KV, d] → [T, H·d], causal; scores scale·q·k
    (default 1/√d), soft-capped to cap·tanh(s/cap) when cap > 0, and only the
    last window positions seen when window > 0."""
    T, _, d = q.shape
    k = k.repeat_interleave(H // KV, dim=1)
    v = v.repeat_interleave(H // KV, dim=1)
    att = torch.einsum("thd,shd->hts", q, k)
    att = att * scale if scale else att / math.sqrt(d)
    if cap > 0:
        att = cap * torch.tanh(att / cap)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)  # the dtype of q carries through
    if window > 0:
        mask |= torch.tril(torch.ones(T, T, dtype=torch.bool), -window)  # t − s ≥ window
    att = att.masked_fill(mask, float("-inf")).softmax(-1)
    return torch.einsum("hts,shd->thd", att, v).reshape(T, H * d)


def llama_forward(meta, W, ids):
    a = meta["general.architecture"]
    L, H, KV = meta[a + ".block_count"], meta[a + ".attention.head_count"], meta[a + ".attention.head_count_kv"]
    eps, base = meta[a + ".attention.layer_norm_rms_epsilon"], meta[a + ".rope.freq_base"]
    neox = a == "qwen2"
    # Granite's multipliers (absent: none).
    s_e, s_r = meta.get(a + ".embedding_scale", 1.0), meta.get(a + ".residual_scale", 1.0)
    s_a, s_u = meta.get(a + ".attention.scale"), meta.get(a + ".logit_scale", 1.0)

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def lin(x, name):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if name + ".bias" in W else y

    x = W["token_embd.weight"][ids] * s_e
    T = len(ids)
    for l in range(L):
        p = f"blk.{l}."
        h = rms(x, W[p + "attn_norm.weight"])
        q, k, v = lin(h, p + "attn_q"), lin(h, p + "attn_k"), lin(h, p + "attn_v")
        d = q.shape[1] // H
        q = rope(q.reshape(T, H, d), base, neox)
        k = rope(k.reshape(T, KV, d), base, neox)
        x = x + s_r * lin(attention(q, k, v.reshape(T, KV, d), H, KV, scale=s_a), p + "attn_output")
        h = rms(x, W[p + "ffn_norm.weight"])
        if p + "ffn_gate_inp.weight" in W:
            x = x + s_r * moe(h, W, p, meta[a + ".expert_used_count"])
        else:
            x = x + s_r * lin(F.silu(lin(h, p + "ffn_gate")) * lin(h, p + "ffn_up"), p + "ffn_down")
    x = rms(x, W["output_norm.weight"])
    return x @ W.get("output.weight", W["token_embd.weight"]).T / s_u


def moe(h, W, p, k):
    """Mixtral's mixture of experts on h [T, D]: softmax over the router's
    logits, the k most probable experts per token, their probabilities
    renormalised to sum to 1, the weighted sum of their SwiGLU outputs."""
    probs = (h @ W[p + "ffn_gate_inp.weight"].T).softmax(-1)  # [T, E]
    top, idx = probs.topk(k, dim=-1)
    top = top / top.sum(-1, keepdim=True)
    gate, up, down = W[p + "ffn_gate_exps.weight"], W[p + "ffn_up_exps.weight"], W[p + "ffn_down_exps.weight"]
    out = []
    for t in range(h.shape[0]):
        y = 0
        for j in range(k):
            e = int(idx[t, j])
            y = y + top[t, j] * (down[e] @ (F.silu(gate[e] @ h[t]) * (up[e] @ h[t])))
        out.append(y)
    return torch.stack(out)


def gemma_forward(meta, W, ids):
    """Gemma 2 (soft caps, local layers 0, 2, …) and Gemma 3 (per-head q/k
    norms, local layers l mod 6 < 5 with RoPE base 10000, global layers with
    angles divided by rope.scaling.factor)."""
    arch = meta["general.architecture"]
    a = arch + "."
    L, H, KV = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.head_count_kv"]
    eps, base, d = meta[a + "attention.layer_norm_rms_epsilon"], meta[a + "rope.freq_base"], meta[a + "attention.key_length"]
    window = meta[a + "attention.sliding_window"]
    cap, final_cap = meta.get(a + "attn_logit_softcapping", 0.0), meta.get(a + "final_logit_softcapping", 0.0)
    pattern = 2 if arch == "gemma2" else 6
    rope_scale = 1 / meta.get(a + "rope.scaling.factor", 1.0)
    scale = 1 / math.sqrt(d)

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def lin(x, name):
        return x @ W[name + ".weight"].T

    x = W["token_embd.weight"][ids]
    T, D = x.shape
    x = x * math.sqrt(D)
    for l in range(L):
        p = f"blk.{l}."
        local = l % pattern < pattern - 1
        b, s = (10000.0, 1.0) if local and arch == "gemma3" else (base, rope_scale)
        h = rms(x, W[p + "attn_norm.weight"])
        q, k = lin(h, p + "attn_q").reshape(T, H, d), lin(h, p + "attn_k").reshape(T, KV, d)
        if arch == "gemma3":
            q, k = rms(q, W[p + "attn_q_norm.weight"]), rms(k, W[p + "attn_k_norm.weight"])
        q, k = rope(q, b, True, s), rope(k, b, True, s)
        v = lin(h, p + "attn_v").reshape(T, KV, d)
        o = attention(q, k, v, H, KV, scale, cap, window if local else 0)
        x = x + rms(lin(o, p + "attn_output"), W[p + "post_attention_norm.weight"])
        h = rms(x, W[p + "ffn_norm.weight"])
        f = lin(F.gelu(lin(h, p + "ffn_gate"), approximate="tanh") * lin(h, p + "ffn_up"), p + "ffn_down")
        x = x + rms(f, W[p + "post_ffw_norm.weight"])
    x = rms(x, W["output_norm.weight"])
    z = x @ W.get("output.weight", W["token_embd.weight"]).T
    return final_cap * torch.tanh(z / final_cap) if final_cap > 0 else z


def gpt2_forward(meta, W, ids):
    L, H, eps = meta["gpt2.block_count"], meta["gpt2.attention.head_count"], meta["gpt2.attention.layer_norm_epsilon"]

    def ln(x, name):
        return F.layer_norm(x, x.shape[-1:], W[name + ".weight"], W[name + ".bias"], eps)

    def lin(x, name):
        return x @ W[name + ".weight"].T + W[name + ".bias"]

    T = len(ids)
    x = W["token_embd.weight"][ids] + W["position_embd.weight"][:T]
    D = x.shape[1]
    for l in range(L):
        p = f"blk.{l}."
        qkv = lin(ln(x, p + "attn_norm"), p + "attn_qkv")
        q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(T, H, D // H) for i in range(3))
        x = x + lin(attention(q, k, v, H, H), p + "attn_output")
        x = x + lin(F.gelu(lin(ln(x, p + "ffn_norm"), p + "ffn_up"), approximate="tanh"), p + "ffn_down")
    x = ln(x, "output_norm")
    return x @ W["token_embd.weight"].T


def phi3_forward(meta, W, ids):
    """Phi-3: fused attn_qkv [q; k; v] and ffn_up [gate; up], RoPE on
    half-split pairs of the first rope.dimension_count features of each head
    (the rest pass through)."""
    a = "phi3."
    L, H, KV = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.head_count_kv"]
    eps, base, R = meta[a + "attention.layer_norm_rms_epsilon"], meta[a + "rope.freq_base"], meta[a + "rope.dimension_count"]

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def partial_rope(x):
        return torch.cat([rope(x[..., :R], base, True), x[..., R:]], dim=-1)

    x = W["token_embd.weight"][ids]
    T = len(ids)
    for l in range(L):
        p = f"blk.{l}."
        qkv = rms(x, W[p + "attn_norm.weight"]) @ W[p + "attn_qkv.weight"].T
        d = qkv.shape[1] // (H + 2 * KV)
        q, k, v = qkv.split([H * d, KV * d, KV * d], dim=1)
        q, k = partial_rope(q.reshape(T, H, d)), partial_rope(k.reshape(T, KV, d))
        x = x + attention(q, k, v.reshape(T, KV, d), H, KV) @ W[p + "attn_output.weight"].T
        gate, up = (rms(x, W[p + "ffn_norm.weight"]) @ W[p + "ffn_up.weight"].T).chunk(2, dim=-1)
        x = x + (F.silu(gate) * up) @ W[p + "ffn_down.weight"].T
    x = rms(x, W["output_norm.weight"])
    return x @ W.get("output.weight", W["token_embd.weight"]).T


def starcoder2_forward(meta, W, ids):
    """StarCoder2: GPT-2's LayerNorms and GELU MLP with biases around
    grouped-query attention with biases and half-split RoPE."""
    a = "starcoder2."
    L, H, KV = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.head_count_kv"]
    eps, base = meta[a + "attention.layer_norm_epsilon"], meta[a + "rope.freq_base"]

    def ln(x, name):
        return F.layer_norm(x, x.shape[-1:], W[name + ".weight"], W[name + ".bias"], eps)

    def lin(x, name):
        return x @ W[name + ".weight"].T + W[name + ".bias"]

    x = W["token_embd.weight"][ids]
    T, D = len(ids), x.shape[1]
    d = D // H
    for l in range(L):
        p = f"blk.{l}."
        h = ln(x, p + "attn_norm")
        q = rope(lin(h, p + "attn_q").reshape(T, H, d), base, True)
        k = rope(lin(h, p + "attn_k").reshape(T, KV, d), base, True)
        v = lin(h, p + "attn_v").reshape(T, KV, d)
        x = x + lin(attention(q, k, v, H, KV), p + "attn_output")
        x = x + lin(F.gelu(lin(ln(x, p + "ffn_norm"), p + "ffn_up"), approximate="tanh"), p + "ffn_down")
    x = ln(x, "output_norm")
    return x @ W.get("output.weight", W["token_embd.weight"]).T


def deepseek2_forward(meta, W, ids):
    """DeepSeek-V2: multi-head latent attention, written decompressed. The
    latent c = RMSNorm of the first kv_lora_rank features of attn_kv_a_mqa,
    the rest one rotated key part every head shares; queries from attn_q or
    attn_q_a → RMSNorm → attn_q_b, rotated (adjacent pairs) in their last
    rope.dimension_count features; each head's key part and value from c,
    through attn_kv_b or attn_k_b (K_h transposed) and attn_v_b. Then a
    dense SwiGLU in the first leading_dense_block_count layers, else the
    experts (softmax or sigmoid scores; weights divided by their sum if
    expert_weights_norm, times expert_weights_scale) plus an ungated shared
    expert."""
    a = "deepseek2."
    L, H, R = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.kv_lora_rank"]
    eps, base, Dr = meta[a + "attention.layer_norm_rms_epsilon"], meta[a + "rope.freq_base"], meta[a + "rope.dimension_count"]
    split = a + "attention.key_length_mla" in meta
    Dk = meta[a + ("attention.key_length_mla" if split else "attention.key_length")]
    Dv = meta[a + ("attention.value_length_mla" if split else "attention.value_length")]
    Dn = Dk - Dr
    sigmoid = meta.get(a + "expert_gating_func") == 2
    norm, scale = meta.get(a + "expert_weights_norm", False), meta.get(a + "expert_weights_scale", 0.0)

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def lin(x, name):
        return x @ W[name + ".weight"].T

    def swiglu(h, p, s):
        return lin(F.silu(lin(h, p + "ffn_gate" + s)) * lin(h, p + "ffn_up" + s), p + "ffn_down" + s)

    x = W["token_embd.weight"][ids]
    T = len(ids)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for l in range(L):
        p = f"blk.{l}."
        h = rms(x, W[p + "attn_norm.weight"])
        if p + "attn_q.weight" in W:
            q = lin(h, p + "attn_q")
        else:
            q = lin(rms(lin(h, p + "attn_q_a"), W[p + "attn_q_a_norm.weight"]), p + "attn_q_b")
        q = q.reshape(T, H, Dk)
        q = torch.cat([q[..., :Dn], rope(q[..., Dn:], base, False)], dim=-1)
        ckr = lin(h, p + "attn_kv_a_mqa")
        c = rms(ckr[:, :R], W[p + "attn_kv_a_norm.weight"])
        kr = rope(ckr[:, R:].reshape(T, 1, Dr), base, False)
        if split:
            kn = torch.einsum("tr,hrn->thn", c, W[p + "attn_k_b.weight"])
            v = torch.einsum("tr,hvr->thv", c, W[p + "attn_v_b.weight"])
        else:
            kv = lin(c, p + "attn_kv_b").reshape(T, H, Dn + Dv)
            kn, v = kv[..., :Dn], kv[..., Dn:]
        k = torch.cat([kn, kr.expand(T, H, Dr)], dim=-1)
        att = torch.einsum("thd,shd->hts", q, k) / math.sqrt(Dk)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        x = x + lin(torch.einsum("hts,shv->thv", att, v).reshape(T, H * Dv), p + "attn_output")
        h = rms(x, W[p + "ffn_norm.weight"])
        if p + "ffn_gate_inp.weight" not in W:
            x = x + swiglu(h, p, "")
            continue
        logits = h @ W[p + "ffn_gate_inp.weight"].T
        probs = logits.sigmoid() if sigmoid else logits.softmax(-1)
        top, idx = probs.topk(meta[a + "expert_used_count"], dim=-1)
        if norm:
            top = top / top.sum(-1, keepdim=True)
        if scale not in (0.0, 1.0):
            top = top * scale
        gate, up, down = W[p + "ffn_gate_exps.weight"], W[p + "ffn_up_exps.weight"], W[p + "ffn_down_exps.weight"]
        out = []
        for t in range(T):
            y = 0
            for j in range(idx.shape[1]):
                e = int(idx[t, j])
                y = y + top[t, j] * (down[e] @ (F.silu(gate[e] @ h[t]) * (up[e] @ h[t])))
            out.append(y)
        x = x + torch.stack(out) + swiglu(h, p, "_shexp")
    x = rms(x, W["output_norm.weight"])
    return x @ W.get("output.weight", W["token_embd.weight"]).T


def olmo2_forward(meta, W, ids):
    """OLMo 2: no norms before the sublayers, RMSNorm after each; the whole
    query and key projections RMS-normalised before half-split RoPE."""
    a = "olmo2."
    L, H, KV = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.head_count_kv"]
    eps, base = meta[a + "attention.layer_norm_rms_epsilon"], meta[a + "rope.freq_base"]

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    x = W["token_embd.weight"][ids]
    T, D = len(ids), x.shape[1]
    d = D // H
    for l in range(L):
        p = f"blk.{l}."
        q = rms(x @ W[p + "attn_q.weight"].T, W[p + "attn_q_norm.weight"])
        k = rms(x @ W[p + "attn_k.weight"].T, W[p + "attn_k_norm.weight"])
        v = x @ W[p + "attn_v.weight"].T
        q, k = rope(q.reshape(T, H, d), base, True), rope(k.reshape(T, KV, d), base, True)
        y = attention(q, k, v.reshape(T, KV, d), H, KV) @ W[p + "attn_output.weight"].T
        x = x + rms(y, W[p + "post_attention_norm.weight"])
        f = (F.silu(x @ W[p + "ffn_gate.weight"].T) * (x @ W[p + "ffn_up.weight"].T)) @ W[p + "ffn_down.weight"].T
        x = x + rms(f, W[p + "post_ffw_norm.weight"])
    x = rms(x, W["output_norm.weight"])
    return x @ W["output.weight"].T


def cohere_forward(meta, W, ids):
    """Command R / R7B: attention and a SwiGLU side by side on one LayerNorm
    without a bias, adjacent-pair RoPE, a tied head times logit_scale; R7B's
    layers l mod 4 < 3 windowed with RoPE, the others global without."""
    a = meta["general.architecture"] + "."
    L, H, KV = meta[a + "block_count"], meta[a + "attention.head_count"], meta[a + "attention.head_count_kv"]
    eps, base = meta[a + "attention.layer_norm_epsilon"], meta[a + "rope.freq_base"]
    window, pattern = meta.get(a + "attention.sliding_window", 0), meta.get(a + "attention.sliding_window_pattern", 4)

    def ln(x, w):
        return F.layer_norm(x, x.shape[-1:], w, None, eps)

    x = W["token_embd.weight"][ids]
    T, D = len(ids), x.shape[1]
    d = D // H
    for l in range(L):
        p = f"blk.{l}."
        local = window > 0 and l % pattern < pattern - 1
        h = ln(x, W[p + "attn_norm.weight"])
        q, k = (h @ W[p + "attn_q.weight"].T).reshape(T, H, d), (h @ W[p + "attn_k.weight"].T).reshape(T, KV, d)
        if window == 0 or local:
            q, k = rope(q, base, False), rope(k, base, False)
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, KV, d)
        y = attention(q, k, v, H, KV, window=window if local else 0) @ W[p + "attn_output.weight"].T
        f = (F.silu(h @ W[p + "ffn_gate.weight"].T) * (h @ W[p + "ffn_up.weight"].T)) @ W[p + "ffn_down.weight"].T
        x = (f + x) + y
    x = ln(x, W["output_norm.weight"])
    return x @ W["token_embd.weight"].T * meta.get(a + "logit_scale", 1.0)


def qwen35_forward(meta, W, ids):
    """Qwen3.5: every interval-th layer gated attention (query and gate from
    one projection, per-head RMSNorm, NeoX RoPE on the first R features of a
    head, σ(gate) on the output), the others the gated delta rule, written
    from its definition: a depthwise causal convolution and SiLU, L2-normed
    queries and keys, and per value head a state S (key × value) that each
    token decays by e^g and corrects towards v with strength β. Qwen3-Next
    (qwen3next): value head i reads key head i // (Hv/Hk), β and α come
    from one projection (per key head: its value heads' β rows, then their
    α rows), and every layer's MLP is a mixture of experts beside a shared
    expert gated by σ(h·w_s)."""
    a = meta["general.architecture"]
    L, H, KV = meta[a + ".block_count"], meta[a + ".attention.head_count"], meta[a + ".attention.head_count_kv"]
    dh, R = meta[a + ".attention.key_length"], meta[a + ".rope.dimension_count"]
    eps, base, every = meta[a + ".attention.layer_norm_rms_epsilon"], meta[a + ".rope.freq_base"], meta[a + ".full_attention_interval"]
    Hk, Hv, Ds, K = meta[a + ".ssm.group_count"], meta[a + ".ssm.time_step_rank"], meta[a + ".ssm.state_size"], meta[a + ".ssm.conv_kernel"]

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def lin(x, name):
        return x @ W[name + ".weight"].T

    def partial_rope(x):
        return torch.cat([rope(x[..., :R], base, True), x[..., R:]], dim=-1)

    x = W["token_embd.weight"][ids]
    T = len(ids)
    for l in range(L):
        p = f"blk.{l}."
        h = rms(x, W[p + "attn_norm.weight"])
        if (l + 1) % every == 0:
            qg = lin(h, p + "attn_q").reshape(T, H, 2 * dh)
            q, gate = qg[..., :dh], qg[..., dh:].reshape(T, H * dh)
            q = partial_rope(rms(q, W[p + "attn_q_norm.weight"]))
            k = partial_rope(rms(lin(h, p + "attn_k").reshape(T, KV, dh), W[p + "attn_k_norm.weight"]))
            o = attention(q, k, lin(h, p + "attn_v").reshape(T, KV, dh), H, KV) * torch.sigmoid(gate)
            x = x + lin(o, p + "attn_output")
        else:
            m = lin(h, p + "attn_qkv")  # [T, C]
            C = m.shape[1]
            conv = F.conv1d(m.T.unsqueeze(0), W[p + "ssm_conv1d.weight"].unsqueeze(1), padding=K - 1, groups=C)
            m = F.silu(conv[0, :, :T].T)
            kd = Hk * Ds
            r = Hv // Hk
            if a == "qwen3next":
                tile = [i // r for i in range(Hv)]  # value head i reads the key head of its group
            else:
                tile = [i % Hk for i in range(Hv)]  # value head i reads key head i mod Hk
            q = F.normalize(m[:, :kd].reshape(T, Hk, Ds), dim=-1, eps=eps)[:, tile]
            k = F.normalize(m[:, kd:2 * kd].reshape(T, Hk, Ds), dim=-1, eps=eps)[:, tile]
            v = m[:, 2 * kd:].reshape(T, Hv, Ds)
            if a == "qwen3next":
                ba = lin(h, p + "ssm_ba").reshape(T, Hk, 2 * r)
                b_in, a_in = ba[..., :r].reshape(T, Hv), ba[..., r:].reshape(T, Hv)
            else:
                b_in, a_in = lin(h, p + "ssm_beta"), lin(h, p + "ssm_alpha")
            beta = torch.sigmoid(b_in)
            g = W[p + "ssm_a"] * F.softplus(a_in + W[p + "ssm_dt.bias"])
            S = torch.zeros(Hv, Ds, Ds, dtype=x.dtype)
            out = []
            for t in range(T):
                S = S * torch.exp(g[t])[:, None, None]
                u = torch.einsum("hij,hi->hj", S, k[t])
                d = beta[t][:, None] * (v[t] - u)
                S = S + k[t][:, :, None] * d[:, None, :]
                out.append(torch.einsum("hij,hi->hj", S, q[t]) / math.sqrt(Ds))
            o = rms(torch.stack(out), W[p + "ssm_norm.weight"]) * F.silu(lin(h, p + "attn_gate").reshape(T, Hv, Ds))
            x = x + lin(o.reshape(T, Hv * Ds), p + "ssm_out")
        h = rms(x, W[p + "post_attention_norm.weight"])
        if a + ".expert_count" in meta:
            y = moe(h, W, p, meta[a + ".expert_used_count"])
            if p + "ffn_gate_inp_shexp.weight" in W:
                shared = lin(F.silu(lin(h, p + "ffn_gate_shexp")) * lin(h, p + "ffn_up_shexp"), p + "ffn_down_shexp")
                y = y + torch.sigmoid(h @ W[p + "ffn_gate_inp_shexp.weight"])[:, None] * shared
            x = x + y
        else:
            x = x + lin(F.silu(lin(h, p + "ffn_gate")) * lin(h, p + "ffn_up"), p + "ffn_down")
    x = rms(x, W["output_norm.weight"])
    return x @ W.get("output.weight", W["token_embd.weight"]).T


def batch():
    a = [(i * 7 + 3) % VOCAB for i in range(13)]
    b = [(i * i + 5) % VOCAB for i in range(13)]
    b[10:] = [0, 0, 0]
    return [a, b]


def loss_of(meta, W):
    fwd = {"gpt2": gpt2_forward, "gemma2": gemma_forward, "gemma3": gemma_forward, "phi3": phi3_forward,
           "starcoder2": starcoder2_forward, "deepseek2": deepseek2_forward,
           "olmo2": olmo2_forward, "command-r": cohere_forward, "cohere2": cohere_forward, "qwen35": qwen35_forward,
           "qwen3next": qwen35_forward}.get(meta["general.architecture"], llama_forward)
    logits, targets = [], []
    for s in batch():
        ids = [0 if t == PAD else t for t in s[:-1]]
        logits.append(fwd(meta, W, torch.tensor(ids)))
        targets += [-1 if t == PAD else t for t in s[1:]]
    return F.cross_entropy(torch.cat(logits), torch.tensor(targets), ignore_index=-1)


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in sys.argv[3:] or ["llama", "qwen2", "gpt2", "gemma2", "gemma3", "mixtral", "granite", "phi3", "starcoder2", "olmo2", "cohere2",
                                       "deepseek2-lite", "deepseek2", "qwen35", "qwen3next"]:
        meta, W, sha = read_gguf(os.path.join(src, name + ".gguf"))
        loss = loss_of(meta, W)
        loss.backward()
        grads = {k: [float(np.float32(x)) for x in v.grad.flatten().tolist()] for k, v in W.items()}
        for v in W.values():
            v.grad = None
        params = list(W.values())
        decay = [v for v in params if v.dim() >= 2]
        rest = [v for v in params if v.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": rest, "weight_decay": 0.0}],
                                lr=LR, betas=(0.9, 0.95), eps=1e-8)
        losses = []
        for _ in range(STEPS):
            opt.zero_grad()
            l = loss_of(meta, W)
            l.backward()
            torch.nn.utils.clip_grad_norm_(params, CLIP)
            opt.step()
            losses.append(float(l))
        out = {"name": name, "model_sha256": sha, "torch": torch.__version__, "loss": float(loss),
               "grads": grads, "losses": losses,
               "settings": {"steps": STEPS, "lr": LR, "weight_decay": WD, "clip": CLIP, "betas": [0.9, 0.95], "eps": 1e-8}}
        with open(os.path.join(dst, name + ".golden.json"), "w") as f:
            json.dump(out, f)
        print(name, "loss", float(loss), "after", STEPS, "steps", losses[-1])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
