"""Training, the Spik4lite pipeline (gated training -> refactoring rounds -> gate removal -> fine-tuning),
the pruning baselines at matched channel count, and checkpoints."""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from icml26.spik4lite.model import (
    ARCHS,
    ChannelGate,
    SpikingNet,
    add_gates,
    anneal,
    energy_loss,
    get_module,
    keep_from_gates,
    refactor,
    set_temperature,
    strip_gates,
    target_loss,
)

logger = logging.getLogger(__name__)
CKPT_FORMAT = "icml26-spik4lite-v1"


@dataclass
class TrainConfig:
    steps: int = 300
    batch: int = 64
    lr: float = 5e-3
    weight_decay: float = 0.01
    cosine: bool = True  # cosine decay of the learning rate to 0 (a converged dense reference)

    def __post_init__(self):
        if self.steps < 1 or self.batch < 1:
            raise ValueError(f"steps and batch must be positive; got steps={self.steps}, batch={self.batch}")
        lr_ok = math.isfinite(self.lr) and self.lr > 0
        if not lr_ok or not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"lr must be finite and > 0, weight_decay >= 0; got {self.lr}, {self.weight_decay}")


@dataclass
class RefactorConfig:
    mode: str = "energy"  # "energy" (lambda-weighted SOP cost) or "target" (MSE to target_drop)
    lam: float = 0.01
    target_drop: float = 0.4
    threshold: float = 0.5  # channels with mean keep-probability below it are removed
    fraction: float | None = None  # instead: remove exactly this fraction per layer and round (lowest first)
    max_drop: float = 0.5  # cap per layer and round
    rounds: int = 1
    steps_per_round: int = 100
    finetune_steps: int = 100
    lr: float = 2e-3
    gate_lr: float = 2e-2
    tau0: float = 1.0
    tau1: float = 0.5
    compensate: bool = True  # proactive compensation: dropped channels held at their rate, folded at refactoring

    def __post_init__(self):
        if self.mode not in ("energy", "target"):
            raise ValueError(f"mode must be 'energy' or 'target'; got {self.mode!r}")
        for name in ("threshold", "max_drop", "target_drop"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"{name} must be in (0, 1); got {getattr(self, name)}")
        if self.fraction is not None and not 0 <= self.fraction < 1:
            raise ValueError(f"fraction must be in [0, 1); got {self.fraction}")
        if self.rounds < 1 or self.steps_per_round < 1 or self.finetune_steps < 0:
            raise ValueError("rounds and steps_per_round must be >= 1 and finetune_steps >= 0")
        for name in ("lam", "lr", "gate_lr", "tau0", "tau1"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0) or (name != "lam" and v == 0):
                raise ValueError(f"{name} must be finite and {'>= 0' if name == 'lam' else '> 0'}; got {v}")


def build_model(arch: str, in_shape, classes: int, T: int = 4, **kw) -> SpikingNet:
    if arch not in ARCHS:
        raise ValueError(f"unknown model {arch!r}; choose from {', '.join(ARCHS)}")
    return ARCHS[arch](in_channels=in_shape[0], classes=classes, T=T, **kw)


def evaluate(model: nn.Module, x: np.ndarray, y: np.ndarray, batch: int = 256) -> float:
    """Top-1 accuracy in percent."""
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            pred = model(torch.from_numpy(x[i : i + batch])).argmax(1).numpy()
            correct += int((pred == y[i : i + batch]).sum())
    return 100.0 * correct / len(x)


def _optimizer(model: nn.Module, lr: float, wd: float, gate_lr: float | None = None):
    gate = [p for n, p in model.named_parameters() if n.startswith("gates.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("gates.")]
    groups = [{"params": rest, "lr": lr, "weight_decay": wd}]
    if gate:
        groups.append({"params": gate, "lr": gate_lr or lr, "weight_decay": 0.0})
    return torch.optim.AdamW(groups)


def fit(
    model, split, steps: int, batch: int, rng: np.random.Generator, opt, reg=None, on_step=None, cosine=False
) -> None:
    """Plain minibatch training: cross-entropy (+ ``reg(model)``) for ``steps`` seeded minibatches; ``cosine``
    decays every group's learning rate to 0 over the steps (so a network is converged, not caught mid-step)."""
    model.train()
    xtr, ytr = torch.from_numpy(split.x_train), torch.from_numpy(split.y_train)
    lossf = nn.CrossEntropyLoss()
    base = [g["lr"] for g in opt.param_groups]
    for step in range(steps):
        if cosine:
            for g, lr in zip(opt.param_groups, base, strict=True):
                g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * step / steps))
        if on_step is not None:
            on_step(step)
        idx = torch.from_numpy(rng.integers(0, len(xtr), batch))
        loss = lossf(model(xtr[idx]), ytr[idx])
        if reg is not None:
            loss = loss + reg(model, step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def train_dense(arch, split, cfg: TrainConfig, seed: int, T: int = 4, **model_kw) -> SpikingNet:
    """Train the dense baseline network (seeded init and minibatches)."""
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
        model = build_model(arch, split.shape, split.classes, T=T, **model_kw)
    opt = _optimizer(model, cfg.lr, cfg.weight_decay)
    fit(model, split, cfg.steps, cfg.batch, np.random.default_rng(seed), opt, cosine=cfg.cosine)
    return model


def spik4lite(
    model: SpikingNet,
    split,
    cfg: RefactorConfig,
    seed: int,
    batch: int = 64,
    finetune: bool = True,
    select: str = "gates",
    keep_probs: list | None = None,
):
    """The plug-in on a trained network, in place: gates + regulariser with temperature annealing; after each
    round the channels whose keep-probability stayed below threshold are removed physically (optimiser state
    too); then the gates are deleted and the compact static network is fine-tuned.

    ``select="random"`` is a sabotage for negative controls: the same pipeline and budget, but each round
    removes as many channels as the gates would, chosen at random instead of by keep-probability.

    Returns ``(model, history)`` with the per-round keep masks (over the widths at that round); a list passed as
    ``keep_probs`` receives, per round, each gate's mean keep-probability at the moment of removal."""
    if select not in ("gates", "random"):
        raise ValueError(f"select must be 'gates' or 'random'; got {select!r}")
    sel_rng = np.random.default_rng(seed + 4)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 2)
        add_gates(model, split.shape, generator=gen)
    for g in model.gates.values():
        g.compensate = cfg.compensate
    opt = _optimizer(model, cfg.lr, 0.01, cfg.gate_lr)
    rng = np.random.default_rng(seed + 3)
    total = cfg.rounds * cfg.steps_per_round
    history = []

    def reg(m, step):
        if cfg.mode == "energy":
            return energy_loss(m, cfg.lam)
        warm = min(1.0, (step + 1) / max(1, 0.2 * cfg.steps_per_round))  # lambda warm-up over 20 %
        return target_loss(m, cfg.lam * warm, cfg.target_drop)

    for r in range(cfg.rounds):

        def on_step(step, r=r):
            set_temperature(model, anneal(r * cfg.steps_per_round + step, total, cfg.tau0, cfg.tau1))

        for g in model.gates.values():
            g.reset_stats()
        fit(model, split, cfg.steps_per_round, batch, rng, opt, reg=reg, on_step=on_step)
        keep = keep_from_gates(model, cfg.threshold, cfg.max_drop, cfg.fraction)
        if keep_probs is not None:
            keep_probs.append({k: model.gates[k].mean_keep_prob().clone() for k in keep})
        if select == "random":  # same counts, random channels
            keep = {k: torch.from_numpy(sel_rng.permutation(v.numpy())) for k, v in keep.items()}
        history.append({k: v.clone() for k, v in keep.items()})
        rates = {k: model.gates[k].rate_ema.clone() for k in keep} if cfg.compensate else None
        refactor(model, keep, opt, rates=rates)
        logger.info("round %d: widths %s", r, model.widths())
    strip_gates(model)
    if finetune and cfg.finetune_steps:
        fit(model, split, cfg.finetune_steps, batch, rng, _optimizer(model, cfg.lr, 0.01), cosine=True)
    return model, history


EQUAL_BUDGET_METHODS = ("spik4lite", "random", "l1", "rate", "dense")


def equal_budget_arm(model, split, cfg: RefactorConfig, seed: int, batch: int, method: str, counts=None,
                     select_seed: int | None = None, keep_probs: list | None = None):  # fmt: skip
    """One arm of the equal-budget comparison, in place on a trained network. Every arm runs the same schedule on
    the same minibatch stream (``seed + 3``): phase A, ``rounds * steps_per_round`` steps at the constant rate
    ``cfg.lr``; a removal; phase B, ``finetune_steps`` steps cosine-decayed from ``cfg.lr``. Only phase A's objective
    and the removal rule differ between arms:

    - ``spik4lite``: phase A with the gates, the energy loss and the compensation; the gates choose (:func:`spik4lite`);
    - ``random`` / ``l1`` / ``rate``: phase A plain training; the rule keeps ``counts[pair]`` channels;
    - ``dense``: phase A plain training and nothing removed: the dense reference at the same total budget.

    ``select_seed`` seeds the random choice (default ``seed``; an A/A twin of ``random`` passes its own stream)."""
    if method not in EQUAL_BUDGET_METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(EQUAL_BUDGET_METHODS)}")
    if method == "spik4lite":
        model, _ = spik4lite(model, split, cfg, seed, batch=batch, keep_probs=keep_probs)
        return model
    if method != "dense" and counts is None:
        raise ValueError(f"method {method!r} needs the channel counts to keep")
    rng = np.random.default_rng(seed + 3)  # the minibatch stream spik4lite() draws too
    fit(model, split, cfg.rounds * cfg.steps_per_round, batch, rng, _optimizer(model, cfg.lr, 0.01))
    if method != "dense":
        sel = seed if select_seed is None else select_seed
        refactor(model, baseline_keep(model, method, counts, split.x_train[:512], sel))
    if cfg.finetune_steps:
        fit(model, split, cfg.finetune_steps, batch, rng, _optimizer(model, cfg.lr, 0.01), cosine=True)
    return model


class _RateProbe(nn.Module):
    def __init__(self, channel_dim: int):
        super().__init__()
        self.channel_dim, self.total, self.n = channel_dim, None, 0

    def forward(self, x):
        dims = [d for d in range(x.dim()) if d != self.channel_dim]
        r = x.mean(dim=dims)
        self.total = r if self.total is None else self.total + r
        self.n += 1
        return x


def firing_rates(model: SpikingNet, x: np.ndarray) -> dict[str, torch.Tensor]:
    """Mean input firing rate of every prunable pair's follower, per channel."""
    saved = dict(model.gates)
    probes = {p.name: _RateProbe(p.channel_dim) for p in model.pairs}
    model.gates = nn.ModuleDict(probes)
    model.eval()
    with torch.no_grad():
        for i in range(0, len(x), 256):
            model(torch.from_numpy(x[i : i + 256]))
    model.gates = nn.ModuleDict(saved)
    return {k: p.total / p.n for k, p in probes.items()}


def baseline_keep(model: SpikingNet, method: str, counts: dict[str, int], x: np.ndarray, seed: int):
    """Keep masks with exactly ``counts[pair]`` channels: ``random``, ``l1`` (L1 norm of the leader's filters),
    ``rate`` (highest input firing rate of the follower kept, SCA-like)."""
    rng = np.random.default_rng(seed)
    rates = firing_rates(model, x) if method == "rate" else None
    keep = {}
    for p in model.pairs:
        if p.name not in counts:
            continue
        w = get_module(model, p.leader).layer.weight.detach()
        C = w.shape[0]
        if method == "random":
            score = torch.from_numpy(rng.random(C))
        elif method == "l1":
            score = w.abs().flatten(1).sum(1)
        elif method == "rate":
            score = rates[p.name]
        else:
            raise ValueError(f"unknown pruning method {method!r}; choose random, l1 or rate")
        mask = torch.zeros(C, dtype=torch.bool)
        mask[torch.argsort(score, descending=True)[: counts[p.name]]] = True
        keep[p.name] = mask
    return keep


def prune_baseline(model, method, counts, split, cfg: RefactorConfig, seed: int, batch: int = 64, steps=None):
    """Baseline pruning to the same widths, then the same fine-tuning budget (in place)."""
    refactor(model, baseline_keep(model, method, counts, split.x_train[:512], seed))
    steps = cfg.rounds * cfg.steps_per_round + cfg.finetune_steps if steps is None else steps
    fit(model, split, steps, batch, np.random.default_rng(seed + 3), _optimizer(model, cfg.lr, 0.01), cosine=True)
    return model


# --------------------------------------------------------------------------------------------- checkpoints


def save_checkpoint(model: SpikingNet, path, *, in_shape, classes: int, extra: dict | None = None) -> None:
    """Gate-free weights, the architecture, its widths and the input shape (no pickled code)."""
    from icml26._util.io import atomic_output

    if any(isinstance(g, ChannelGate) for g in model.gates.values()):
        raise ValueError("strip the gates (refactor) before saving a checkpoint")
    payload = {
        "format": CKPT_FORMAT,
        "arch": model.arch,
        "model_kw": dict(model.model_kw),
        "widths": model.widths(),
        "in_shape": list(in_shape),
        "classes": int(classes),
        "state_dict": {k: v for k, v in model.state_dict().items() if not k.startswith("gates.")},
        "extra": extra or {},
    }
    with atomic_output(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path, arch: str | None = None):
    """Rebuild the model a checkpoint describes; ``ValueError`` for files that are not spik4lite checkpoints or
    that are from another architecture than ``arch``."""
    from icml26._util.io import check_input_file

    p = check_input_file(path, what="checkpoint")
    try:
        ck = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for garbage files
        raise ValueError(f"checkpoint {p} is not a readable torch file ({exc.__class__.__name__})") from None
    if not isinstance(ck, dict) or ck.get("format") != CKPT_FORMAT:
        raise ValueError(f"checkpoint {p} is not an icml26 spik4lite checkpoint (written by `icml26 spik4lite train`)")
    if ck["arch"] not in ARCHS:
        raise ValueError(f"checkpoint {p} holds an unknown architecture {ck['arch']!r}")
    if arch is not None and ck["arch"] != arch:
        raise ValueError(f"checkpoint {p} holds a {ck['arch']} network, not {arch}")
    model = build_model(ck["arch"], ck["in_shape"], ck["classes"], **ck["model_kw"])
    # shrink to the stored widths, then load
    keep = {}
    for pr in model.pairs:
        w = ck["widths"].get(pr.name)
        full = model.widths()[pr.name]
        if not isinstance(w, int) or not 1 <= w <= full:
            raise ValueError(f"checkpoint {p}: width of {pr.name!r} is {w!r}, outside 1..{full}")
        keep[pr.name] = torch.arange(full) < w
    refactor(model, keep)
    try:
        model.load_state_dict(ck["state_dict"])
    except RuntimeError as exc:
        raise ValueError(f"checkpoint {p} does not match a {ck['arch']} network: {str(exc).splitlines()[0]}") from None
    return model.eval(), ck


def describe(cfg) -> dict:
    return asdict(cfg)
