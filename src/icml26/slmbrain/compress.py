"""Post-training compression on CPU: round-to-nearest (RTN), GPTQ, magnitude and Wanda pruning.

Applied to every ``nn.Linear`` (and transformers' GPT-2 ``Conv1D``) inside the blocks of a causal LM; the
embeddings and the LM head stay in full precision (the usual practice). Weights are fake-quantised (the
dequantised values are written back in float32), which is what brain-encoding features see.

- RTN: per output channel asymmetric min-max grid with ``2^bits`` levels (Eq. Q1: ``q = clamp(round(w/s) + z)``).
- GPTQ (Frantar et al. 2023): layer by layer, in forward order, from calibration text; for each layer the input
  Hessian ``H = 2 X^T X`` (+ 1 % mean-diagonal damping), its inverse's upper Cholesky factor ``U``; columns are
  quantised one at a time and the error ``(w_j - q_j) / U_jj`` is spread over the not-yet-quantised columns
  (Eq. G1: ``W[:, j+1:] -= err * U[j, j+1:]``). Later layers see the already-quantised earlier ones.
- Magnitude pruning: zero the smallest ``|W_ij|`` per output row. Wanda (Sun et al. 2024): zero the smallest
  ``|W_ij| * ||X_j||_2`` per output row (activation norms from calibration text).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

METHODS = ("rtn", "gptq", "magnitude", "wanda")


def _grid(W: torch.Tensor, bits: float):
    """Per-row asymmetric min-max grid with ``round(2^bits)`` levels (fractional bits = log2 of the levels):
    scale ``(out, 1)``, zero point ``(out, 1)``, largest level."""
    if not 1 <= bits <= 16:
        raise ValueError(f"bits must be in [1, 16]; got {bits}")
    lo, hi = W.min(1, keepdim=True).values.clamp(max=0), W.max(1, keepdim=True).values.clamp(min=0)
    qmax = round(2**bits) - 1
    scale = torch.where(hi > lo, (hi - lo) / qmax, torch.ones_like(hi))
    return scale, torch.round(-lo / scale), qmax


def rtn_quantize(W: torch.Tensor, bits: float) -> torch.Tensor:
    """Eq. Q1: per-output-channel (row) asymmetric round-to-nearest ``(out, in) -> (out, in)`` (dequantised)."""
    scale, zero, qmax = _grid(W, bits)
    return (torch.clamp(torch.round(W / scale) + zero, 0, qmax) - zero) * scale


def gptq_quantize(
    W: torch.Tensor, H: torch.Tensor, bits: float, damp: float = 0.01, block: int = 128, feedback: float = 1.0
) -> torch.Tensor:
    """GPTQ of one layer ``W (out, in)`` given its input Hessian ``H (in, in)``; returns dequantised weights.

    Same per-row grid as RTN (so the comparison at equal bits is fair); dead inputs (``H_jj = 0``) are zeroed.
    ``feedback`` scales the error feedback of Eq. G1: 1 is GPTQ, 0 is RTN (no feedback), -1 a broken GPTQ
    that pushes each column's error onto the later columns with the wrong sign (a negative control).
    """
    W = W.clone().double()
    H = H.clone().double()
    dead = torch.diag(H) == 0
    H[dead, dead] = 1
    W[:, dead] = 0
    scale, zero, qmax = _grid(W, bits)
    scale, zero = scale.double(), zero.double()
    H += damp * torch.mean(torch.diag(H)) * torch.eye(len(H), dtype=H.dtype, device=H.device)
    U = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)  # (in, in)
    Q = torch.zeros_like(W)
    n = W.shape[1]
    for i1 in range(0, n, block):
        i2 = min(i1 + block, n)
        W1, U1 = W[:, i1:i2].clone(), U[i1:i2, i1:i2]
        Q1, E1 = torch.zeros_like(W1), torch.zeros_like(W1)
        for j in range(i2 - i1):
            w, d = W1[:, j], U1[j, j]
            q = (torch.clamp(torch.round(w[:, None] / scale) + zero, 0, qmax) - zero) * scale  # (out, 1)
            Q1[:, j] = q[:, 0]
            err = feedback * (w - q[:, 0]) / d
            W1[:, j:] -= err[:, None] * U1[j, j:][None, :]  # Eq. G1 inside the block
            E1[:, j] = err
        Q[:, i1:i2] = Q1
        W[:, i2:] -= E1 @ U[i1:i2, i2:]  # lazy batch update of the remaining columns
    return Q.float()


def magnitude_prune(W: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Zero the ``sparsity`` fraction of smallest-magnitude weights of every output row."""
    return _prune_by(W, W.abs(), sparsity)


def wanda_prune(W: torch.Tensor, act_norm: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Wanda: zero the smallest ``|W_ij| * ||X_j||`` per output row (``act_norm`` (in,))."""
    return _prune_by(W, W.abs() * act_norm[None, :], sparsity)


def _prune_by(W: torch.Tensor, score: torch.Tensor, sparsity: float) -> torch.Tensor:
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1); got {sparsity}")
    k = round(sparsity * W.shape[1])  # weights zeroed per output row
    if k == 0:
        return W.clone()
    idx = torch.argsort(score, dim=1)[:, :k]
    out = W.clone()
    out.scatter_(1, idx, 0.0)
    return out


# ----------------------------------------------------------------------------------------- whole models
def _layers(model: nn.Module, everything: bool = False) -> list[tuple[str, nn.Module]]:
    """Linear layers to compress, in forward order (blocks only: not embeddings, not the LM head); with
    ``everything`` also the embeddings (one row per token / position) and the LM head."""
    out = []
    for name, m in model.named_modules():
        is_conv1d = type(m).__name__ == "Conv1D" and hasattr(m, "nf")
        head = "head" in name.split(".")[-1]
        if (isinstance(m, nn.Linear) or is_conv1d) and (everything or not head) and m.weight.dim() == 2:
            out.append((name, m))
        elif everything and isinstance(m, nn.Embedding):
            out.append((name, m))
    return out


def _get_w(m: nn.Module) -> torch.Tensor:
    return m.weight.data.t() if type(m).__name__ == "Conv1D" else m.weight.data  # (out, in)


def _set_w(m: nn.Module, W: torch.Tensor) -> None:
    m.weight.data.copy_(W.t() if type(m).__name__ == "Conv1D" else W)


def _run(model: nn.Module, calib: torch.Tensor) -> None:
    with torch.inference_mode():
        model(calib)


@torch.no_grad()
def compress_model(
    model: nn.Module,
    method: str,
    *,
    bits: float = 4,
    sparsity: float = 0.5,
    calib: torch.Tensor | None = None,
    everything: bool = False,
    feedback: float = 1.0,
) -> dict[str, float]:
    """Compress ``model`` in place. ``calib`` (B, T) token ids is needed by GPTQ and Wanda. ``everything``
    (RTN and magnitude only): also the embeddings and the LM head. ``feedback``: GPTQ's error-feedback scale
    (see :func:`gptq_quantize`).

    Returns per-layer relative output errors ``||X W'^T - X W^T|| / ||X W^T||`` on the calibration inputs (for
    methods with calibration) or relative weight errors (otherwise).
    """
    if method not in METHODS:
        raise ValueError(f"unknown compression method {method!r}; choose from {', '.join(METHODS)}")
    if method in ("gptq", "wanda") and calib is None:
        raise ValueError(f"{method} needs calibration text (token ids)")
    if everything and method not in ("rtn", "magnitude"):
        raise ValueError(f"everything=True (embeddings and LM head too) needs a calibration-free method, not {method}")
    errors = {}
    if calib is not None:  # the calibration tokens go where the weights are
        calib = calib.to(next(model.parameters()).device)
    layers = _layers(model, everything)
    if not layers:
        raise ValueError("the model has no linear layers to compress")
    for name, m in layers:  # forward order; GPTQ/Wanda see the already-compressed earlier layers
        W = _get_w(m).clone().float()
        X = None
        if calib is not None and method in ("gptq", "wanda"):
            acts: list[torch.Tensor] = []

            def grab(_m, inp, _out, acts=acts):
                acts.append(inp[0].detach().reshape(-1, inp[0].shape[-1]))  # (B * T, in)

            h = m.register_forward_hook(grab)
            try:
                _run(model, calib)
            finally:
                h.remove()
            X = torch.cat(acts).float()  # (n_tokens, in)
        if method == "rtn":
            Wq = rtn_quantize(W, bits)
        elif method == "gptq":
            Wq = gptq_quantize(W, 2 * X.T.double() @ X.double(), bits, feedback=feedback)
        elif method == "magnitude":
            Wq = magnitude_prune(W, sparsity)
        else:
            Wq = wanda_prune(W, X.norm(dim=0), sparsity)
        if X is not None:
            errors[name] = float((X @ (Wq - W).T).norm() / (X @ W.T).norm().clamp(min=1e-12))
        else:
            errors[name] = float((Wq - W).norm() / W.norm().clamp(min=1e-12))
        _set_w(m, Wq.to(m.weight.dtype))
    return errors


def match_damage(compress, loss, target: float, lo: float, hi: float, steps: int = 7):
    """Strength ``s`` in ``[lo, hi]`` (damage grows with ``s``) whose relative LM-loss increase is nearest
    ``target``, by bisection. ``compress(s)`` returns a compressed copy, ``loss(model)`` its held-out loss; the
    uncompressed loss is ``loss(compress(lo))``. Returns ``(s, achieved relative increase, compressed model)``
    (the strongest tried when even ``hi`` stays short of the target)."""
    base = loss(compress(lo))
    tried = []
    a, b = lo, hi
    for s in [hi] + [None] * steps:
        s = (a + b) / 2 if s is None else s
        m = compress(s)
        rel = (loss(m) - base) / base
        tried.append((abs(np.log(max(rel, 1e-6) / target)), s, rel, m))
        if s == hi and rel < target:
            break
        a, b = (s, b) if rel < target else (a, s)
    _, s, rel, m = min(tried, key=lambda t: t[0])
    return s, rel, m


def layer_output_error(W: torch.Tensor, Wq: torch.Tensor, X: torch.Tensor) -> float:
    """Squared output error ``||X (Wq - W)^T||_F^2`` of one layer on inputs ``X (n, in)``."""
    return float(((X @ (Wq - W).T) ** 2).sum())


def calibration_batch(ids: np.ndarray, n: int, ctx: int, seed: int = 0) -> torch.Tensor:
    """``(n, ctx)`` random windows of calibration token ids."""
    rng = np.random.default_rng(seed)
    if len(ids) <= ctx:
        raise ValueError(f"calibration text has {len(ids)} tokens; needs more than the context {ctx}")
    starts = rng.integers(0, len(ids) - ctx, n)
    return torch.as_tensor(np.stack([ids[s : s + ctx] for s in starts]), dtype=torch.long)
