"""bert_torch.py: the PyTorch twin of toy's BERT and nomic-bert encoders, in
float64, written from Hugging Face's BertModel and nomic-bert definitions
(post-LayerNorm blocks, exact GELU x*Phi(x), absolute positions for bert;
rotary half-split positions, a fused QKV and SwiGLU for nomic-bert), over the
same GGUF file. It embeds the token ids of a llama.cpp golden (embed.mjs) and
prints the pooled vectors, not normalised, as one JSON object:

    /usr/bin/python3 tests/reference/bert_torch.py MODEL.gguf GOLDEN.json > OUT.json

    {"model_sha256": "...", "pooling": "mean", "inputs": [{"ids": [...], "vector": [...]}]}

Only F32 files (tests/torch_gguf.py reads F32 tensors). gen_embed_goldens.sh
runs it for bert-f32 and nomic-bert-f32 into testdata/embed/NAME.torch.json.

A reranker (pooling "rank", a cross-encoder) and a ranking golden (rank.mjs,
with "pairs"): the raw score of each pair's ids, llama.cpp's rank pooling of
the [CLS] state h: h = tanh(cls.weight h + cls.bias) if the file has
cls.weight (BertPooler, or the dense layer of a RoBERTa classification head),
h = cls.output.weight h + cls.output.bias if it has cls.output.weight (the
classifier, or out_proj), and the score is h[0]; all tokens of token type 0,
as llama.cpp embeds them (Hugging Face's cross-encoders would give the
document type 1):

    {"model_sha256": "...", "pooling": "rank", "pairs": [{"ids": [...], "logit": 0.83, "score": 0.70}]}

with score = sigmoid(logit), what rank.mjs's rankAll returns.
gen_rank_goldens.sh runs it for bert-rank-f32 and bert-rank-jina-f32 into
testdata/rank/NAME.torch.json.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_gguf import read_gguf  # noqa: E402

POOLING = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}


def rope_neox(x, base):
    """Rotate x [T, H, Dh] by position: pairs (i, i + Dh/2), angle t * base^(-2i/Dh)."""
    T, _, dh = x.shape
    half = dh // 2
    inv = base ** (-torch.arange(half, dtype=torch.float64) * 2 / dh)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]  # [T, Dh/2]
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def encode(meta, w, ids):
    arch = meta["general.architecture"]
    nomic = arch == "nomic-bert"
    D = meta[arch + ".embedding_length"]
    H = meta[arch + ".attention.head_count"]
    L = meta[arch + ".block_count"]
    eps = meta[arch + ".attention.layer_norm_epsilon"]
    dh = D // H
    T = len(ids)
    ln = lambda x, name: F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], eps)
    lin = lambda x, name: x @ w[name + ".weight"].T + (w[name + ".bias"] if name + ".bias" in w else 0)

    x = w["token_embd.weight"][torch.tensor(ids)]
    if "token_types.weight" in w:
        x = x + w["token_types.weight"][0]  # token_type_ids = 0
    if not nomic:
        x = x + w["position_embd.weight"][:T]
    x = ln(x, "token_embd_norm")
    for l in range(L):
        p = f"blk.{l}."
        if nomic:
            q, k, v = lin(x, p + "attn_qkv").split(D, dim=-1)
        else:
            q, k, v = lin(x, p + "attn_q"), lin(x, p + "attn_k"), lin(x, p + "attn_v")
        q, k, v = (t.reshape(T, H, dh) for t in (q, k, v))
        if nomic:
            base = meta[arch + ".rope.freq_base"]
            q, k = rope_neox(q, base), rope_neox(k, base)
        scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(dh)  # no mask: bidirectional
        o = torch.einsum("hts,shd->thd", scores.softmax(dim=-1), v).reshape(T, D)
        x = ln(x + lin(o, p + "attn_output"), p + "attn_output_norm")
        if nomic:
            f = lin(F.silu(lin(x, p + "ffn_gate")) * lin(x, p + "ffn_up"), p + "ffn_down")
        else:
            f = lin(F.gelu(lin(x, p + "ffn_up")), p + "ffn_down")  # exact GELU, as BertIntermediate's "gelu"
        x = ln(x + f, p + "layer_output_norm")
    return x


def rank_head(w, h):
    """llama.cpp's rank pooling of the [CLS] state h [D]: the raw score."""
    if "cls.weight" in w:
        h = torch.tanh(w["cls.weight"] @ h + w.get("cls.bias", 0))
    if "cls.output.weight" in w:
        h = w["cls.output.weight"] @ h + w.get("cls.output.bias", 0)
    return h[0]


def main():
    path, golden = sys.argv[1], sys.argv[2]
    meta, w, sha = read_gguf(path)
    w = {k: v.detach() for k, v in w.items()}
    arch = meta["general.architecture"]
    pooling = POOLING[meta.get(arch + ".pooling_type", 0)]
    golden = json.load(open(golden))
    ref = {"engine": "PyTorch " + torch.__version__, "dtype": "float64", "gelu": "exact"}
    if pooling == "rank":
        pairs = []
        for p in golden["pairs"]:
            with torch.no_grad():
                logit = rank_head(w, encode(meta, w, p["ids"])[0]).item()
            pairs.append({"ids": p["ids"], "logit": logit, "score": 1 / (1 + math.exp(-logit))})
        json.dump({"model_sha256": sha, "pooling": pooling, "pairs": pairs,
                   "reference": {**ref, "token_type": 0, "score": "sigmoid(logit)"}}, sys.stdout)
        sys.stdout.write("\n")
        return
    out = []
    for inp in golden["inputs"]:
        with torch.no_grad():
            h = encode(meta, w, inp["ids"])
        e = {"mean": h.mean(dim=0), "cls": h[0], "last": h[-1], "none": h[-1]}[pooling]
        out.append({"ids": inp["ids"], "vector": e.tolist()})
    json.dump({"model_sha256": sha, "pooling": pooling, "inputs": out,
               "reference": ref}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
