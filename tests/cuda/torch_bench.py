"""PyTorch beside toy's CUDA speed test (device.sh): the same Llama shapes
(SmolLM2-135M and Llama-2-7B), random fp16 weights, eager PyTorch with a KV
cache; a 512-token prefill, then 128 greedy decode steps. fp16 weights are
about twice the bytes of toy's Q8_0, so decode (bandwidth-bound) is not a
like-for-like race; it shows what the GPU does with a plain implementation."""
import time
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev, dt = "cuda", torch.float16
SHAPES = {
    "SmolLM2-135M-shaped": dict(V=49152, D=576, L=30, F=1536, H=9, KV=3, Dh=64, base=100000.0),
    "7B-shaped (Llama 2)": dict(V=32000, D=4096, L=32, F=11008, H=32, KV=32, Dh=128, base=10000.0),
}


def rope(x, pos, base):  # x [T, H, Dh], half-split pairs
    Dh = x.shape[-1]
    inv = base ** (-torch.arange(0, Dh, 2, device=dev, dtype=torch.float32) / Dh)
    ang = pos[:, None].float() * inv[None]
    cos, sin = ang.cos()[:, None].to(dt), ang.sin()[:, None].to(dt)
    a, b = x[..., : Dh // 2], x[..., Dh // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def run(name, s, T=512, n=128):
    g = torch.Generator(device=dev).manual_seed(0)
    w = lambda *shape: (torch.randn(*shape, device=dev, dtype=dt, generator=g) * 0.02)
    D, H, KV, Dh = s["D"], s["H"], s["KV"], s["Dh"]
    emb, out = w(s["V"], D), w(s["V"], D)
    layers = [dict(q=w(H * Dh, D), k=w(KV * Dh, D), v=w(KV * Dh, D), o=w(D, H * Dh),
                   gate=w(s["F"], D), up=w(s["F"], D), down=w(D, s["F"])) for _ in range(s["L"])]
    cap = T + n + 1
    kc = [torch.zeros(cap, KV, Dh, device=dev, dtype=dt) for _ in layers]
    vc = [torch.zeros(cap, KV, Dh, device=dev, dtype=dt) for _ in layers]

    def step(ids, past):
        x = emb[ids]
        pos = torch.arange(past, past + len(ids), device=dev)
        for i, p in enumerate(layers):
            h = F.rms_norm(x, (D,), eps=1e-5)
            q = rope((h @ p["q"].T).view(-1, H, Dh), pos, s["base"])
            k = rope((h @ p["k"].T).view(-1, KV, Dh), pos, s["base"])
            kc[i][past:past + len(ids)] = k
            vc[i][past:past + len(ids)] = (h @ p["v"].T).view(-1, KV, Dh)
            K, V = kc[i][: past + len(ids)], vc[i][: past + len(ids)]
            a = F.scaled_dot_product_attention(q.transpose(0, 1)[None], K.transpose(0, 1)[None], V.transpose(0, 1)[None],
                                               is_causal=past == 0, enable_gqa=H != KV)
            x = x + a[0].transpose(0, 1).reshape(-1, H * Dh) @ p["o"].T
            h = F.rms_norm(x, (D,), eps=1e-5)
            x = x + (F.silu(h @ p["gate"].T) * (h @ p["up"].T)) @ p["down"].T
        return F.rms_norm(x[-1:], (D,), eps=1e-5) @ out.T

    with torch.no_grad():
        ids = torch.arange(T, device=dev) * 7919 % s["V"]
        # Warm up on the timed shapes: CUDA loads each kernel on its first
        # use (lazy module loading), and cuBLAS picks per shape.
        logits = step(ids, 0)
        for i in range(4):
            logits = step(logits.argmax(-1), T + i)
        torch.cuda.synchronize()
        t0 = time.time()
        logits = step(ids, 0)
        torch.cuda.synchronize()
        prefill = time.time() - t0
        t0 = time.time()
        for i in range(n):
            nxt = logits.argmax(-1)
            logits = step(nxt, T + i)
        torch.cuda.synchronize()
        dec = time.time() - t0
    print(f"PyTorch {torch.__version__} fp16 {name} on {torch.cuda.get_device_name()}: "
          f"prefill {T / prefill:.0f} tok/s, decode {n / dec:.1f} tok/s")


for name, s in SHAPES.items():
    run(name, s)
