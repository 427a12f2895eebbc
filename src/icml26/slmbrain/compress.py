"""Post-training compression on CPU: round-to-nearest (RTN), GPTQ, magnitude and Wanda pruning.

Applied to every ``nn.Linear`` (and transformers' GPT-2 ``Conv1D``) inside the blocks of a causal LM; the
embeddings and the LM head stay in full precision (the usual practice). Weights are fake-quantised (the
dequantised values are written back in float32), which is what brain-encoding features see.

- RTN: per output channel asymmetric min-max grid with ``2^bits`` levels (Eq. Q1: ``q = clamp(round(w/s) + z)``).
- GPTQ (Frantar et al. 2023): layer by layer, in forward order, from calibration text; for each layer the input
  Hessian ``H = 2 X^T X`` (+ 1 % mean-diagonal damping), its inverse's upper Cholesky factor ``U``; columns are
  quantised one at a time and the error ``(w_j - q_j) / U_jj`` is spread over the not-yet-quantised columns
  (Eq. G1: ``W[:, j+1:] -= err * U[j, j+1:]``). Later layers see the already-quantised earlier ones. The inputs
  are collected block by block on cached activations (each block's input computed once from the compressed
  blocks before it), not by one forward of the whole model per layer; both give the same weights.
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


def _compress_one(m: nn.Module, method: str, X: torch.Tensor | None, bits: float, sparsity: float,
                  feedback: float) -> float:  # fmt: skip
    """Compress one layer in place from its calibration inputs ``X (n_tokens, in)`` (None: calibration-free).
    Returns its relative output error ``||X (W' - W)^T|| / ||X W^T||`` (relative weight error without ``X``)."""
    W = _get_w(m).clone().float()  # (out, in)
    if method == "rtn":
        Wq = rtn_quantize(W, bits)
    elif method == "gptq":
        Wq = gptq_quantize(W, 2 * X.T.double() @ X.double(), bits, feedback=feedback)  # H = 2 X^T X
    elif method == "magnitude":
        Wq = magnitude_prune(W, sparsity)
    else:
        Wq = wanda_prune(W, X.norm(dim=0), sparsity)
    _set_w(m, Wq.to(m.weight.dtype))
    if X is None:
        return float((Wq - W).norm() / W.norm().clamp(min=1e-12))
    return float((X @ (Wq - W).T).norm() / (X @ W.T).norm().clamp(min=1e-12))


def _per_layer(model, layers, calib, method, bits, sparsity, feedback) -> dict[str, float]:
    """The reference path: one full forward of the model per layer to collect that layer's inputs."""
    errors = {}
    for name, m in layers:  # forward order; GPTQ/Wanda see the already-compressed earlier layers
        X = None
        if calib is not None and method in ("gptq", "wanda"):
            acts: list[torch.Tensor] = []
            h = m.register_forward_hook(lambda _m, inp, _out, acts=acts: acts.append(inp[0].detach().flatten(0, -2)))
            try:
                with torch.inference_mode():
                    model(calib)
            finally:
                h.remove()
            X = torch.cat(acts).float()  # (n_tokens, in)
        errors[name] = _compress_one(m, method, X, bits, sparsity, feedback)
    return errors


def _blocks(model: nn.Module, layers: list[tuple[str, nn.Module]]) -> list[tuple[str, nn.Module]] | None:
    """The transformer blocks in forward order as ``(name, block)``: the longest ``nn.ModuleList`` whose children
    hold every layer to compress (TinyGPT's ``blocks``, Llama's ``model.layers``, GPT-2's ``transformer.h``);
    None when no such list holds them all."""
    best = None
    for prefix, ml in model.named_modules():
        if not isinstance(ml, nn.ModuleList) or len(ml) == 0 or (best is not None and len(ml) <= len(best)):
            continue
        blocks = [(f"{prefix}.{i}" if prefix else str(i), b) for i, b in enumerate(ml)]
        if all(any(name.startswith(b + ".") for b, _ in blocks) for name, _ in layers):
            best = blocks
    return best


class _Stop(Exception):
    """Raised by the first block's pre-hook once its inputs are caught: the rest of the model need not run."""


def _first_block_inputs(model: nn.Module, block: nn.Module, calib: torch.Tensor) -> tuple[tuple, dict]:
    """What the model hands its first block on ``calib``: hidden states ``(B, T, d)`` first, then anything else
    (a transformers model's attention mask, positions and rotary tables), reused unchanged by every block."""
    got: dict = {}

    def catch(_m, args, kwargs):
        got["args"], got["kwargs"] = args, kwargs
        raise _Stop

    h = block.register_forward_pre_hook(catch, with_kwargs=True)
    extra = {"use_cache": False} if hasattr(model, "config") else {}  # a transformers model: no KV cache
    try:
        model(calib, **extra)
    except _Stop:
        pass
    finally:
        h.remove()
    if "args" not in got:
        raise ValueError("the model never called its first transformer block on the calibration tokens")
    return got["args"], got["kwargs"]


def _blockwise(model, blocks, layers, calib, method, bits, sparsity, feedback) -> dict[str, float]:
    """Block by block on cached activations (standard GPTQ practice). The calibration tokens go through the
    embeddings once; each block then runs on its cached input, the output of the already-compressed blocks
    before it. Inside a block one pass hooks every layer not yet compressed; the first of them to run, and every
    other one fed that very tensor (Llama's q/k/v, gate/up: inputs computed before any of them ran), are
    compressed together, and the block runs again for the next group. So every layer sees the inputs the
    layer-by-layer path gives it, at (groups + 1) passes of one block per block: about 5 forwards of the model
    in all instead of one per layer."""
    args, kwargs = _first_block_inputs(model, blocks[0][1], calib)
    x = args[0]  # (B, T, d) hidden states entering block 0
    errors = {}
    for prefix, block in blocks:
        todo = [(name, m) for name, m in layers if name.startswith(prefix + ".")]
        while todo:
            seen: list[tuple[nn.Module, torch.Tensor]] = []  # (layer, its input) in the order they ran
            hooks = [m.register_forward_hook(lambda mod, i, _o, seen=seen: seen.append((mod, i[0]))) for _, m in todo]
            try:
                block(x, *args[1:], **kwargs)
            finally:
                for h in hooks:
                    h.remove()
            if not seen:
                raise ValueError(f"block {prefix} never ran its layers {', '.join(n for n, _ in todo)}")
            first = seen[0][1]
            group = {id(mod) for mod, inp in seen if inp is first}
            for name, m in [(n, m) for n, m in todo if id(m) in group]:  # forward (named) order
                errors[name] = _compress_one(m, method, first.detach().flatten(0, -2).float(), bits, sparsity,
                                             feedback)  # fmt: skip
            todo = [(n, m) for n, m in todo if id(m) not in group]
        out = block(x, *args[1:], **kwargs)  # the compressed block's output feeds the next one
        x = out[0] if isinstance(out, tuple) else out
    return errors


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
    blockwise: bool = True,
) -> dict[str, float]:
    """Compress ``model`` in place. ``calib`` (B, T) token ids is needed by GPTQ and Wanda. ``everything``
    (RTN and magnitude only): also the embeddings and the LM head. ``feedback``: GPTQ's error-feedback scale
    (see :func:`gptq_quantize`). ``blockwise`` (GPTQ and Wanda): collect the layers' inputs block by block on
    cached activations (:func:`_blockwise`); False runs one full forward per layer (the slow reference, same
    result), which is also used when the layers do not all sit in one list of blocks.

    Returns per-layer relative output errors ``||X W'^T - X W^T|| / ||X W^T||`` on the calibration inputs (for
    methods with calibration) or relative weight errors (otherwise).
    """
    if method not in METHODS:
        raise ValueError(f"unknown compression method {method!r}; choose from {', '.join(METHODS)}")
    if method in ("gptq", "wanda") and calib is None:
        raise ValueError(f"{method} needs calibration text (token ids)")
    if everything and method not in ("rtn", "magnitude"):
        raise ValueError(f"everything=True (embeddings and LM head too) needs a calibration-free method, not {method}")
    layers = _layers(model, everything)
    if not layers:
        raise ValueError("the model has no linear layers to compress")
    if method not in ("gptq", "wanda"):
        calib = None  # RTN and magnitude need no inputs
    if calib is None:
        return _per_layer(model, layers, None, method, bits, sparsity, feedback)
    calib = calib.to(next(model.parameters()).device)  # the calibration tokens go where the weights are
    blocks = _blocks(model, layers) if blockwise else None
    if blocks is None:
        return _per_layer(model, layers, calib, method, bits, sparsity, feedback)
    return _blockwise(model, blocks, layers, calib, method, bits, sparsity, feedback)


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
