"""Causal language models: a tiny GPT family trained locally, and layerwise word-level features of any LM.

Students are GPTs of increasing width ``d`` trained on the grammar with the same token budget; the teacher
is the widest and deepest one, trained longest. :func:`word_states` returns per-layer word states
``(L+1, N, d)`` (embedding output and every block), using a sliding context window. :func:`hf_word_states`
does the same for any local ``transformers`` causal LM (a word's state = its last token's state).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, d)
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d/H)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    """GPT: token + position embeddings, ``n_layers`` pre-LN blocks, tied-free LM head."""

    def __init__(self, vocab: int, d: int, n_layers: int = 2, n_heads: int = 2, ctx: int = 32, seed: int = 0):
        super().__init__()
        if d % n_heads:
            raise ValueError(f"width {d} must be divisible by n_heads {n_heads}")
        self.ctx = ctx
        g = torch.Generator().manual_seed(seed)
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, n_heads) for _ in range(n_layers))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
        with torch.no_grad():  # seeded init from a local generator (never the global torch RNG): matrices
            for name, p in self.named_parameters():  # N(0, 0.02^2), biases 0, LayerNorm gains 1 (GPT-2's init)
                if p.dim() > 1:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                elif name.endswith("bias"):
                    p.zero_()

    def forward(self, ids: torch.Tensor, hidden: bool = False):  # ids (B, T)
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))  # (B, T, d)
        states = [x]
        for b in self.blocks:
            x = b(x)
            states.append(x)
        logits = self.head(self.ln_f(x))  # (B, T, V)
        return (logits, states) if hidden else logits


def train_lm(
    model: TinyGPT, ids: np.ndarray, steps: int, batch: int = 16, lr: float = 3e-3, seed: int = 0
) -> list[float]:
    """Next-token training on random windows of ``ids`` (N,); Adam with cosine decay. Returns the loss curve."""
    rng = np.random.default_rng(seed)
    t = torch.as_tensor(ids, dtype=torch.long)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / max(steps, 1))))
    L = model.ctx + 1
    losses = []
    model.train()
    for _ in range(steps):
        starts = rng.integers(0, len(ids) - L, batch)
        x = torch.stack([t[s : s + L] for s in starts])  # (B, ctx+1)
        loss = F.cross_entropy(model(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    return losses


def _windows(n: int, ctx: int) -> list[tuple[int, int, int]]:
    """Sliding windows ``(start, end, keep_from)``: every kept position sees >= ctx/2 tokens of context (or all)."""
    if n <= ctx:
        return [(0, n, 0)]
    half = max(ctx // 2, 1)
    starts = list(range(0, n - ctx + 1, half))
    if starts[-1] != n - ctx:
        starts.append(n - ctx)
    out, done = [], 0
    for s in starts:
        out.append((s, s + ctx, done - s))  # keep positions not yet covered
        done = s + ctx
    return out


@torch.inference_mode()
def word_states(model: TinyGPT, ids: np.ndarray) -> np.ndarray:
    """Per-layer states of every word of a stream: ``(L+1, N, d)`` float32 (causal, sliding windows, batched)."""
    n = len(ids)
    t = torch.as_tensor(ids, dtype=torch.long, device=_device_of(model))
    wins = _windows(n, model.ctx)
    x = torch.stack([t[s:e] for s, e, _ in wins])  # (W, ctx) windows of equal length
    _, states = model(x, hidden=True)
    h = torch.stack(states)  # (L+1, W, ctx, d)
    out = np.zeros((h.shape[0], n, h.shape[3]), dtype=np.float32)
    for w, (s, e, k) in enumerate(wins):
        out[:, s + k : e] = h[:, w, k:].cpu().numpy()
    return out


@torch.inference_mode()
def lm_loss(model: TinyGPT, ids: np.ndarray) -> float:
    """Mean next-token cross-entropy (nats) over a stream, sliding windows (each target predicted once)."""
    t = torch.as_tensor(ids, dtype=torch.long, device=_device_of(model))
    wins = _windows(len(ids), model.ctx + 1)
    x = torch.stack([t[s:e] for s, e, _ in wins])  # (W, ctx+1)
    lp = F.cross_entropy(model(x[:, :-1]).transpose(1, 2), x[:, 1:], reduction="none")  # (W, ctx)
    mask = torch.zeros_like(lp, dtype=torch.bool)
    for w, (_, _, k) in enumerate(wins):
        mask[w, max(k - 1, 0) :] = True
    return float(lp[mask].mean())


# ------------------------------------------------------------------------------------ real (transformers) LMs
def load_hf_causal_lm(path: str):
    """A local transformers causal LM folder (config + weights) and its tokenizer; never the hub."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from pathlib import Path

    p = Path(path)
    if not p.is_dir() or not (p / "config.json").is_file():
        raise ValueError(f"model {path} is not a local transformers folder with a config.json")
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(p, dtype=torch.float32, local_files_only=True)
        tok = AutoTokenizer.from_pretrained(p, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"model {path} could not be loaded by transformers: {str(exc).splitlines()[0]}") from None
    model.eval()
    return model, tok


@torch.no_grad()
def hf_word_states(model, tokenizer, words: list[str], ctx: int = 256) -> np.ndarray:
    """Per-layer word states ``(L+1, N, d)`` of a transformers causal LM: each word's last-token state."""
    ids, last = [], []
    for i, w in enumerate(words):
        t = tokenizer.encode((" " if i else "") + w, add_special_tokens=False) or [tokenizer.unk_token_id or 0]
        ids += t
        last.append(len(ids) - 1)
    max_pos = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", ctx)
    ctx = min(ctx, int(max_pos))
    ids_t = torch.as_tensor(ids, dtype=torch.long, device=_device_of(model))[None]
    out = None
    for s, e, k in _windows(len(ids), ctx):
        hs = model(ids_t[:, s:e], output_hidden_states=True).hidden_states
        h = torch.stack(hs)[:, 0, k:].float()  # (L+1, T', d)
        if out is None:
            out = np.zeros((h.shape[0], len(ids), h.shape[2]), dtype=np.float32)
        out[:, s + k : e] = h.cpu().numpy()
    return out[:, last]


@torch.no_grad()
def hf_lm_loss(model, ids: np.ndarray, ctx: int = 256) -> float:
    """Mean next-token cross-entropy (nats) of a transformers causal LM over token ids ``(N,)``, in consecutive
    windows of ``ctx + 1`` tokens (each window predicts its last ``ctx``)."""
    t = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=_device_of(model))
    total, count = 0.0, 0
    for k in range(0, len(t) - 1, ctx):
        x = t[None, k : k + ctx + 1]  # (1, <= ctx+1)
        logits = model(input_ids=x[:, :-1]).logits  # (1, T, V)
        total += float(F.cross_entropy(logits[0].float(), x[0, 1:], reduction="sum"))
        count += x.shape[1] - 1
    return total / count


def _device_of(model: torch.nn.Module) -> torch.device:
    """Where the model's weights live (inputs are built there; results come back to the host)."""
    return next(model.parameters()).device
