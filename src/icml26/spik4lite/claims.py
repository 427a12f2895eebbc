"""The paper's headline claims at laptop scale (see README "Claims").

- ``zeroing-saves-nothing-v1`` (a *premise check*, labelled so): masking channels leaves CPU latency ~unchanged;
  removing the same channels physically cuts it. This is how dense torch kernels work -- the paper's premise,
  not a finding -- and stays as a guard of the measurement.
- ``refactor-is-exact-v1``: the compact network reproduces the masked network's outputs (float64).
- ``accuracy-kept-v5``: on real images (the shipped Fashion-MNIST subset), with 40 % of every pair's channels
  removed by the gates, Spik4lite (energy loss + proactive compensation) stays within :data:`BAR_PT` points of the
  dense network and above random / L1 / firing-rate pruning; every arm, the dense reference included, runs the
  identical schedule (:func:`~icml26.spik4lite.train.equal_budget_arm`) from the same pretrained network on the same
  minibatches, paired over fresh seeds (seed + :data:`FRESH_SEEDS_V5`). v4's A/A arm ran a handicapped pipeline.
- ``energy-and-latency-v3``: CPU latency of a Spikingformer-mini trained on Fashion-MNIST and refactored by
  Spik4lite vs the dense one (judged at batch 32, one thread); batch 1, SOPs and the energy proxy reported.
  Labelled *by construction* (issue 41): any 50 % removal passes it.

Contract v3: every claim runs three arms (``Arm.CLAIM``, the A/A negative control, the positive control with
the claimed effect planted at the claimed size); ``MECHANISMS`` probes the gates of both claims' Spik4lite rounds
(the fraction of channels they close by themselves against the energy loss ablated; for the accuracy claim also the
damage of removing them against removing random channels); ``MEASURES`` validates test accuracy, the paired
latency ratio and the exactness measure on ground truth and on a null input.
"""

from __future__ import annotations

import copy
import functools
import math

import numpy as np
import torch
from torch import nn

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.spik4lite.config import PRESETS
from icml26.spik4lite.data import load_data
from icml26.spik4lite.measure import (
    E_AC_PJ,
    E_MAC_PJ,
    count_ops,
    interleaved_latency,
    n_params,
    paired_latency_ratio,
)
from icml26.spik4lite.model import SpikingCNN, SpikingformerMini, mask_model, refactor
from icml26.spik4lite.train import (
    RefactorConfig,
    TrainConfig,
    equal_budget_arm,
    evaluate,
    spik4lite,
    train_dense,
)


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 3.8))


def _random_keep(model, drop: float, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    keep = {}
    for name, c in model.widths().items():
        mask = torch.ones(c, dtype=torch.bool)
        mask[torch.from_numpy(rng.permutation(c)[: round(drop * c)])] = False
        keep[name] = mask
    return keep


class _BatchSlice(nn.Module):
    """A network that processes only the first ``k`` images of every batch: a workload of exactly ``k / B`` of
    the network's, the planted effect of the latency claims' positive controls (a known-faster arm)."""

    def __init__(self, net: nn.Module, k: int):
        super().__init__()
        self.net, self.k = net, k

    def forward(self, img):  # (B, C, H, W) -> (min(B, k), classes)
        return self.net(img[: self.k])


def _sliced(net: nn.Module, fraction: float, batch: int) -> _BatchSlice:
    return _BatchSlice(net, max(1, round(fraction * batch)))


#: accuracy-kept-v4 ran on seed + 2000 (v3 on 1000-1004, digits); v5 (the equal-budget pipeline, new bars) is judged
#: on seed + FRESH_SEEDS_V5; its bars were fixed from a pilot of the A/A pair on seeds 0-1 (README), never on these
FRESH_SEEDS_V5 = 3000
#: the A/A twin of random pruning draws its channels from seed + AA_STREAM (the random baseline from seed)
AA_STREAM = 7
#: accuracy-kept-v5's tolerance: Spik4lite within BAR_PT points of the equal-budget dense reference
BAR_PT = 1.0
#: accuracy-kept-v5's positive control: the planted network sits this far below dense (2/3 of the bar: the
#: tolerance with a 1.5x margin)
PLANTED_PT = BAR_PT / 1.5
#: the energy loss weight of the energy-and-latency claim's Spik4lite round (RefactorConfig's default)
PROFILE_LAMBDA = 0.01

# The paper's own microbenchmark (3x3 conv, half the input channels removed): removed / dense = 186.2 / 321.5.
PROTOTYPE_REMOVED_RATIO = 186.2 / 321.5


@claim(
    "spik4lite/zeroing-saves-nothing-v1",
    statement="On one CPU thread, masking 50 % of the channels of every prunable pair of a spiking CNN leaves its "
    "measured latency at > 0.85 of the dense latency, while physically removing the same channels brings it "
    "below 0.8 of dense (interleaved medians)",
    paper="abstract: zeroed ('0') spikes waste computation on commodity hardware; only a physically compact "
    "network saves time",
    control="A/A: no physical removal: the 'removed' network is a second masked network with its own random "
    "choice of the same number of channels (its own seed stream), so both ratios scatter around 1 and the "
    "claim must fail",
    positive="a known-faster arm at the paper's size: the 'masked' network is an independent copy of the dense one "
    "(costs exactly dense), the 'removed' one is the dense network on 0.58 of the batch (the paper's "
    "microbenchmark ratio 186.2 / 321.5); the same interleaved timer must see both",
    judge=[Interval("latency masked / dense", above=0.85), Interval("latency removed / dense", below=0.8)],
    by_construction="premise check, not a finding (issue 41): dense torch kernels multiply zeros like any other "
    "value, so masking cannot save time and smaller shapes must; it guards the timer and the refactoring",
)
def zeroing_saves_nothing(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
        dense = SpikingCNN(1, 10, T=cfg.lat_T, widths=(cfg.lat_width,) * 3)
    keep = _random_keep(dense, cfg.lat_drop, np.random.default_rng(seed))
    masked = mask_model(copy.deepcopy(dense), keep)
    if arm is Arm.NEGATIVE:  # A/A: a second masked network, channels from its own seed stream
        other = _random_keep(dense, cfg.lat_drop, np.random.default_rng([seed, 1]))
        removed = mask_model(copy.deepcopy(dense), other)
    elif arm is Arm.POSITIVE:  # planted: exactly dense's cost, and the paper's removed workload
        masked = copy.deepcopy(dense)
        removed = _sliced(copy.deepcopy(dense), PROTOTYPE_REMOVED_RATIO, cfg.lat_batch)
    else:
        removed = refactor(copy.deepcopy(dense), keep)
    x = torch.from_numpy(np.random.default_rng(seed).random((cfg.lat_batch, 1, cfg.lat_hw, cfg.lat_hw), np.float32))
    lat = interleaved_latency({"dense": dense, "masked": masked, "removed": removed}, x, repeats=cfg.lat_repeats)
    macs = {k: count_ops(m, x[:2]).total_macs for k, m in (("dense", dense), ("masked", masked), ("removed", removed))}
    r_mask, r_rem = lat["masked"] / lat["dense"], lat["removed"] / lat["dense"]
    flop_ratio = macs["removed"] / macs["dense"]
    holds = r_mask > 0.85 and r_rem < 0.8
    fig, ax = _figure()
    ax.bar(["dense", "masked", "removed"], [1e3 * lat[k] for k in ("dense", "masked", "removed")])
    ax.set_ylabel(f"CPU latency, batch {cfg.lat_batch}, 1 thread [ms]")
    ax.set_title(f"50 % channels masked vs removed (FLOPs ratio {flop_ratio:.2f})")
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "latency masked / dense": r_mask,
            "latency removed / dense": r_rem,
            "FLOPs removed / dense": flop_ratio,
            # the performance goal, >= 0 when latency falls at least 0.8x as much as FLOPs (reported)
            "latency drop - 0.8 x FLOPs drop (removed)": (1 - r_rem) - 0.8 * (1 - flop_ratio),
            "latency dense [ms]": 1e3 * lat["dense"],
            "latency removed [ms]": 1e3 * lat["removed"],
        },
        baselines={"latency masked [ms]": 1e3 * lat["masked"], "FLOPs masked / dense": macs["masked"] / macs["dense"]},
        paper={"masked (zeroed) spikes": "computational waste on commodity edge devices"},
        elsewhere={
            "latency masked / dense, 3x3 conv 384->384 [prototype]": 348.5 / 321.5,
            "latency removed / dense, same conv [prototype]": PROTOTYPE_REMOVED_RATIO,
        },
        reason="" if holds else f"masked/dense {r_mask:.2f}, removed/dense {r_rem:.2f}",
        figures={"latency-bars": fig},
    )


def _scramble_bn(model: torch.nn.Module, gen: torch.Generator) -> None:
    """Random BatchNorm affine parameters and running statistics: a network in a non-trivial state, so that a
    refactoring that mixes up channels shows (freshly initialised BN rows are all alike)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d | torch.nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=gen, dtype=m.weight.dtype))
                m.bias.copy_(0.5 * torch.randn(n, generator=gen, dtype=m.bias.dtype))
                m.running_mean.copy_(0.3 * torch.randn(n, generator=gen, dtype=m.running_mean.dtype))
                m.running_var.copy_(0.2 + torch.rand(n, generator=gen, dtype=m.running_var.dtype))


def _jitter(model: nn.Module, rel: float, gen: torch.Generator) -> nn.Module:
    """Every parameter multiplied by (1 + rel * N(0, 1)), in place: a rounding-level change of the weights."""
    with torch.no_grad():
        for q in model.parameters():
            q.mul_(1 + rel * torch.randn(q.shape, generator=gen, dtype=q.dtype))
    return model


def _log10_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """log10 of the largest absolute difference between two outputs (-300 for bit-identical ones)."""
    return float(np.log10(float((a - b).abs().max()) + 1e-300))


@claim(
    "spik4lite/refactor-is-exact-v1",
    statement="Before fine-tuning, the physically compact network reproduces the outputs of the network with the "
    "same channels zeroed (40 % of every prunable pair; spiking CNN and Spikingformer-mini, float64) to "
    "max |logit difference| < 1e-9, while differing from the dense network",
    paper="refactoring evolves the SNN into a physically compact network (abstract); the demo removes leader "
    "out-channels, their BatchNorm and the follower's in-channels",
    control="a refactoring bug: the BatchNorm running statistics are sliced with the first k channel indices "
    "instead of the kept ones, so the outputs differ and the claim must fail",
    positive="the correct compact network with every weight changed at rounding level (1e-13 relative, the size of "
    "a float64 re-association): a difference far below the claimed 1e-9 that the measure must accept",
    judge=Interval("log10 max |compact - masked| (worst architecture)", below=-9.0),
    by_construction="review: an implementation check, not a finding of the paper: deleting channels whose spikes "
    "are zeroed is an algebraic identity, so the claim holds whenever our slicing is right (its control shows it "
    "can see a slicing bug)",
)
def refactor_is_exact(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    split = load_data("digits", n_test=cfg.exact_images, seed=seed)
    x = torch.from_numpy(split.x_test).double()
    gen = torch.Generator().manual_seed(seed)
    measured, worst = {}, -np.inf
    for net_cls in (SpikingCNN, SpikingformerMini):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            dense = net_cls(1, 10, T=4).double()
        _scramble_bn(dense, gen)
        keep = _random_keep(dense, cfg.exact_drop, np.random.default_rng(seed))
        masked = mask_model(copy.deepcopy(dense), keep).eval()
        compact = refactor(copy.deepcopy(dense), keep, misalign=arm is Arm.NEGATIVE).eval()  # the negative's bug
        if arm is Arm.POSITIVE:
            _jitter(compact, 1e-13, gen)
        with torch.no_grad():
            y_d, y_m, y_c = dense.eval()(x), masked(x), compact(x)
        diff = _log10_diff(y_c, y_m)
        measured[f"max |compact - masked|, {net_cls.arch}"] = 10**diff if diff > -300 else 0.0
        measured[f"max |masked - dense|, {net_cls.arch}"] = float((y_m - y_d).abs().max())
        measured[f"params compact / dense, {net_cls.arch}"] = n_params(compact) / n_params(dense)
        worst = max(worst, diff)
    measured = {"log10 max |compact - masked| (worst architecture)": float(worst), **measured}
    holds = worst < -9.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"refactored SNN": "physically compact (abstract)"},
        reason="" if holds else f"compact and masked outputs differ by up to 10^{worst:.1f}",
    )


def _acc_config(cfg, fraction: float | None = None) -> RefactorConfig:
    return RefactorConfig(
        mode="energy",
        lam=cfg.acc_lam,
        fraction=cfg.acc_fraction if fraction is None else fraction,
        rounds=1,
        steps_per_round=cfg.acc_round_steps,
        finetune_steps=cfg.acc_finetune_steps,
    )


def _scores(model, split) -> tuple[float, float]:
    """(test accuracy [%], energy proxy [pJ/image] on the first 64 test images)."""
    return evaluate(model, split.x_test, split.y_test), count_ops(model, torch.from_numpy(split.x_test[:64])).energy_pj


@functools.lru_cache(maxsize=8)  # shared by the three arms, the gates' probe and the accuracy measure check
def _dense(scale_value: str, seed: int):
    """The data split and the trained dense network of one seed (callers deep-copy it before changing it)."""
    cfg = PRESETS[scale_value]
    split = load_data(cfg.acc_data, n_train=cfg.acc_train, n_test=cfg.acc_test, seed=seed, pool=cfg.acc_pool)
    tc = TrainConfig(steps=cfg.acc_steps, batch=cfg.acc_batch, lr=cfg.acc_lr)
    return split, train_dense(cfg.acc_arch, split, tc, seed, T=cfg.acc_T, **cfg.acc_model_kw)


@functools.lru_cache(maxsize=8)  # the runner does every seed of one arm, then the next arm
def _equal_budget_arms(scale_value: str, seed: int):
    """The data, the pretrained dense network, and the four arms every claim arm of the seed shares: the dense
    reference, random, L1 and firing-rate pruning, each through the identical equal-budget pipeline
    (:func:`equal_budget_arm`), scored as (test accuracy [%], energy proxy [pJ/image])."""
    cfg = PRESETS[scale_value]
    split, dense = _dense(scale_value, seed)
    counts = {k: v - round(cfg.acc_fraction * v) for k, v in dense.widths().items()}
    rc = _acc_config(cfg)
    scores = {
        m: _scores(equal_budget_arm(copy.deepcopy(dense), split, rc, seed, cfg.acc_batch, m, counts), split)
        for m in ("dense", "random", "l1", "rate")
    }
    return split, dense, counts, scores


@functools.lru_cache(maxsize=16)  # the negative and positive arms share the A/A run of a seed
def _candidate_run(scale_value: str, seed: int, method: str) -> tuple[nn.Module, torch.Tensor]:
    """The arm in Spik4lite's place: Spik4lite itself (``method="spik4lite"``), or the A/A twin of random pruning
    (``"random"``, the channels drawn from its own stream, seed + :data:`AA_STREAM`), through the same pipeline.
    Returns the compact fine-tuned network and the keep-probabilities of the channels the gates removed (empty for
    the twin)."""
    cfg = PRESETS[scale_value]
    split, dense, counts, _ = _equal_budget_arms(scale_value, seed)
    probs: list = []
    net = equal_budget_arm(copy.deepcopy(dense), split, _acc_config(cfg), seed, cfg.acc_batch, method, counts,
                           select_seed=seed + AA_STREAM, keep_probs=probs)  # fmt: skip
    if not probs:
        return net, torch.zeros(0)
    widths = dense.widths()
    removed = []
    for k, p in probs[0].items():  # the gates removed the channels of lowest keep-probability (fraction rule)
        removed.append(torch.sort(p).values[: widths[k] - counts[k]])
    return net, torch.cat(removed)


def _gated_round(scale_value: str, seed: int, lam: float, select: str = "gates", compensate: bool = True):
    """The demo's rule on the accuracy claim's dense network: one gated round (the claim's steps), then the channels
    whose mean keep-probability fell below 0.5 removed (at most half a layer), no fine-tuning. Returns the mean
    keep-probabilities of every channel, the fraction removed and the test accuracy of the compact network."""
    cfg = PRESETS[scale_value]
    split, dense = _dense(scale_value, seed)
    probs: list = []
    rc = RefactorConfig(mode="energy", lam=lam, threshold=0.5, rounds=1, steps_per_round=cfg.acc_round_steps,
                        finetune_steps=0, compensate=compensate)  # fmt: skip
    compact, hist = spik4lite(
        copy.deepcopy(dense), split, rc, seed, batch=cfg.acc_batch, finetune=False, select=select, keep_probs=probs
    )
    p = torch.cat(list(probs[0].values()))
    removed = sum(int((~k).sum()) for k in hist[0].values()) / sum(len(k) for k in hist[0].values())
    return p, removed, evaluate(compact, split.x_test, split.y_test)


@mechanism(
    "gates",
    component="Spik4lite's firing-rate-driven Gumbel channel gates trained with the SOP energy loss (with the "
    "proactive compensation of the dropped spikes)",
    measures="fraction of the prunable channels whose mean keep-probability after the accuracy claim's gated round "
    "is below the removal threshold 0.5, minus the same fraction with the energy loss ablated (lambda = 0, the "
    "same round and seed stream: what the task gradient alone closes); reported beside it: the channels the "
    "threshold rule removes, the accuracy drop when they are removed (before fine-tuning) against removing as many "
    "random channels, and with the compensation switched off",
    above=0.1,
)
def gates_probe(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    seed += FRESH_SEEDS_V5  # accuracy-kept-v5's pretrained networks
    split, dense = _dense(scale.value, seed)
    acc_dense = evaluate(dense, split.x_test, split.y_test)
    p, removed, acc = _gated_round(scale.value, seed, cfg.acc_lam)
    p0, _, _ = _gated_round(scale.value, seed, 0.0)
    _, _, acc_rnd = _gated_round(scale.value, seed, cfg.acc_lam, select="random")
    p_nc, removed_nc, acc_nc = _gated_round(scale.value, seed, cfg.acc_lam, compensate=False)
    closed, closed0 = float((p < 0.5).float().mean()), float((p0 < 0.5).float().mean())
    return {
        "gates": closed - closed0,
        "channels closed by the gates (keep-prob < 0.5) [%]": 100 * closed,
        "channels closed with lambda = 0 [%]": 100 * closed0,
        "channels removed by the threshold rule [%]": 100 * removed,
        "min keep-prob": float(p.min()),
        "acc drop when removed, before fine-tuning [pt]": acc_dense - acc,
        "acc drop, the same counts removed at random [pt]": acc_dense - acc_rnd,
        "channels closed without compensation [%]": 100 * float((p_nc < 0.5).float().mean()),
        "acc drop without compensation [pt]": acc_dense - acc_nc,
        "channels removed without compensation [%]": 100 * removed_nc,
    }


@claim(
    "spik4lite/accuracy-kept-v5",
    statement="On real images (Fashion-MNIST, 14 x 14), with 40 % of the channels of every prunable pair of a "
    "spiking CNN removed, Spik4lite (gates + energy loss lambda = 1.5 + proactive compensation, the gates choosing "
    f"the channels, then fine-tuning) keeps test accuracy within {BAR_PT:g} points of the dense network and above the "
    "best of random, L1-magnitude and lowest-firing-rate pruning, every arm (the dense reference too) run through "
    "the identical schedule from the same pretrained network: 100 constant-rate steps, the removal, 200 "
    "cosine steps, on the same minibatches (paired over fresh seeds, seed + 3000)",
    paper="Spik4lite guarantees model accuracy while saving computation (abstract); channels zeroed while "
    "proactively compensating for the eliminated spikes (abstract)",
    control="A/A: the credited component (gates, energy loss, compensation) removed: in Spik4lite's place, the "
    f"identical pipeline with random removal at the same rate, the channels drawn from its own seed stream (seed + "
    f"{AA_STREAM}): a twin of the random-pruning arm, so the gain over the best baseline must vanish and the claim "
    "must fail",
    positive="the claimed effect planted on the fair A/A pair: the twin's accuracy raised, in whole test images, by "
    f"this seed's gap between the dense reference and random pruning less {PLANTED_PT:.2f} points, so that it sits "
    f"{PLANTED_PT:.2f} points below dense (2/3 of the bar) plus the twin-vs-random difference; same dense reference, "
    "baselines and verdict code",
    mechanisms=("gates",),
    judge=[
        Interval("acc Spik4lite - dense [pt]", above=-BAR_PT),
        Interval("acc Spik4lite - best baseline [pt]", above=0.0),
    ],
)
def accuracy_kept(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    seed += FRESH_SEEDS_V5  # v5: judged on fresh seeds
    split, pre, counts, scores = _equal_budget_arms(scale.value, seed)
    method = "spik4lite" if arm is Arm.CLAIM else "random"  # both controls: the A/A twin (its own channel stream)
    net, removed_p = _candidate_run(scale.value, seed, method)
    acc_s4l, e_s4l = _scores(net, split)
    if net.widths() != counts:  # equal compaction, or the comparison means nothing
        raise RuntimeError(f"widths {net.widths()} differ from the baselines' {counts}")
    acc_dense, e_dense = scores["dense"]
    accs = {m: scores[m][0] for m in ("random", "l1", "rate")}
    if arm is Arm.POSITIVE:  # the effect planted on the A/A twin, in whole test images (granularity 100 / n)
        n = len(split.y_test)
        acc_s4l = min(100.0, acc_s4l + round(((acc_dense - PLANTED_PT) - accs["random"]) * n / 100) * 100 / n)
    d_dense, d_best = acc_s4l - acc_dense, acc_s4l - max(accs.values())
    holds = d_dense > -BAR_PT and d_best > 0.0
    kept = sum(net.widths().values()) / sum(pre.widths().values())
    fig, ax = _figure()
    labels, heights = ["dense", arm.value, "random", "L1", "rate"], [acc_dense, acc_s4l, *accs.values()]
    ax.bar(labels, heights)
    ax.set_ylim(max(0, min(heights) - 10), 100)
    ax.set_ylabel("test accuracy [%]")
    ax.set_title(f"{100 * kept:.0f} % channels kept, equal budget ({cfg.acc_arch}, {cfg.acc_data})")
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "acc Spik4lite - dense [pt]": d_dense,
            "acc Spik4lite - best baseline [pt]": d_best,
            "acc Spik4lite - random [pt]": acc_s4l - accs["random"],
            "acc Spik4lite [%]": acc_s4l,
            "acc dense [%]": acc_dense,
            "acc dense before the equal budget [%]": evaluate(pre, split.x_test, split.y_test),
            "energy Spik4lite / dense": e_s4l / e_dense,
            "channels kept [%]": 100 * kept,
            # reported: the gates' decisiveness (the paper's rule removes below 0.5; NaN for the A/A twin)
            "max keep-prob of a removed channel": float(removed_p.max()) if len(removed_p) else math.nan,
            "removed channels with keep-prob < 0.5 [%]": 100 * float((removed_p < 0.5).float().mean())
            if len(removed_p)
            else math.nan,
        },
        baselines={
            **{f"acc {m} pruning [%]": a for m, a in accs.items()},
            **{f"energy {m} pruning / dense": scores[m][1] / e_dense for m in accs},
        },
        paper={"model accuracy": "guaranteed while saving computational and energy costs (abstract)"},
        elsewhere={
            "Spikingformer + Spik4lite, CIFAR-10 top-1 [%] [authors' demo logs]": 94.40,
            "Spikformer + Spik4lite, CIFAR-100 top-1 [%] [authors' demo logs]": 74.18,
            "Spikingformer (dense), CIFAR-10 top-1 [%] [Spikingformer paper, 400 epochs]": 95.81,
        },
        reason="" if holds else f"Spik4lite - dense {d_dense:+.1f} pt, - best baseline {d_best:+.1f} pt",
        figures={"accuracy-by-method": fig},
    )


@mechanism(
    "profile-gates",
    component="the gates of the energy-and-latency claim's Spik4lite round on its trained Spikingformer-mini (the "
    "round's energy loss, lambda = 0.01, 30 gated steps)",
    measures="fraction of the prunable channels whose mean keep-probability after that round is below the removal "
    "threshold 0.5, minus the same fraction with the energy loss ablated (lambda = 0, the same round and seed "
    "stream); reported: the minimum keep-probability. The round removes 50 % of every pair whatever the gates say "
    "(lowest keep-probability first), so this probe tells whether the gates, not the fraction rule, chose",
    above=0.1,
)
def profile_gates_probe(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    split, dense = _dense_for_profile(scale.value, seed)
    closed, low = {}, {}
    for lam in (PROFILE_LAMBDA, 0.0):
        probs: list = []
        rc = RefactorConfig(lam=lam, fraction=cfg.prof_fraction, steps_per_round=cfg.prof_round_steps, finetune_steps=0)
        spik4lite(copy.deepcopy(dense), split, rc, seed, batch=32, finetune=False, keep_probs=probs)
        p = torch.cat(list(probs[0].values()))
        closed[lam], low[lam] = float((p < 0.5).float().mean()), float(p.min())
    return {
        "profile-gates": closed[PROFILE_LAMBDA] - closed[0.0],
        "channels closed (keep-prob < 0.5) [%]": 100 * closed[PROFILE_LAMBDA],
        "channels closed with lambda = 0 [%]": 100 * closed[0.0],
        "min keep-prob": low[PROFILE_LAMBDA],
        "min keep-prob with lambda = 0": low[0.0],
    }


#: energy-and-latency-v3's positive control: the planted workload, 1.5x the claim's 10 % margin below dense
PLANTED_WORKLOAD = 0.85


@functools.lru_cache(maxsize=8)  # the runner does every seed, then every control seed
def _dense_for_profile(scale_value: str, seed: int):
    """The trained dense network of one seed (shared by the three arms; they only read it)."""
    cfg = PRESETS[scale_value]
    split = load_data(cfg.prof_data, n_train=cfg.prof_train, n_test=cfg.prof_batch, seed=seed, pool=cfg.prof_pool)
    tc = TrainConfig(steps=cfg.prof_steps, batch=32)
    return split, train_dense(cfg.prof_arch, split, tc, seed, **cfg.prof_model_kw)


@claim(
    "spik4lite/energy-and-latency-v3",
    statement="A Spikingformer-mini trained on real images (Fashion-MNIST, 14 x 14) and refactored by Spik4lite "
    "(50 % of the channels of every prunable pair removed, the gates choosing them) runs faster than the dense "
    "network on one CPU thread at batch 32 (median paired latency ratio < 0.9); batch 1, 2 threads, SOPs and the "
    "SOP energy proxy are reported, not judged",
    paper="saves computational and energy costs on real edge devices (abstract); the Jetson energy numbers "
    "come from the authors' demo power logs (elsewhere=), the paper's text is not public",
    control="refactoring switched off: the channels a Spik4lite round would remove are only masked (zeroed in "
    "place; a separate network timed against the dense one), so the energy proxy still drops (zero spikes cost "
    "no SOPs) but latency does not, and the claim must fail",
    positive="a known-faster arm at 1.5x the claimed margin: the dense network itself on 0.85 of every batch "
    "(27 of 32 images: a 15 % smaller workload against the claimed 10 %), timed by the same paired timer against "
    "the dense one",
    mechanisms=("profile-gates",),
    judge=Interval("latency refactored / dense, batch 32, 1 thread", below=0.9),
    by_construction="review (issue 41): holds for any 50 % removal -- half the channels deleted means smaller "
    "matrix products, whoever chooses them; an engineering check of the refactoring and the timer, not a finding "
    "of the paper (the profile-gates probe says whether the gates chose the channels)",
)
def energy_and_latency(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    split, dense = _dense_for_profile(scale.value, seed)
    rc = RefactorConfig(fraction=cfg.prof_fraction, steps_per_round=cfg.prof_round_steps, finetune_steps=0)
    if arm is Arm.NEGATIVE:  # mask the channels a Spik4lite round would remove
        probe = copy.deepcopy(dense)
        _, hist = spik4lite(probe, split, rc, seed, batch=32, finetune=False)
        compact = mask_model(copy.deepcopy(dense), hist[0])
    elif arm is Arm.POSITIVE:  # a planted workload of 0.85 of dense's (1.5x the claimed 10 %)
        compact = _sliced(copy.deepcopy(dense), PLANTED_WORKLOAD, cfg.prof_batch)
    else:
        compact, _ = spik4lite(copy.deepcopy(dense), split, rc, seed, batch=32, finetune=False)
    x32 = torch.from_numpy(split.x_test[: cfg.prof_batch])
    ops_d, ops_c = count_ops(dense, x32), count_ops(compact, x32)
    r_lat, t_c, t_d = paired_latency_ratio(compact, dense, x32, repeats=cfg.prof_repeats)
    b1 = compact.net if isinstance(compact, _BatchSlice) else compact  # batch 1 cannot be sliced
    r_b1, _, _ = paired_latency_ratio(b1, dense, x32[:1], repeats=cfg.prof_repeats)
    measured = {
        "latency refactored / dense, batch 32, 1 thread": r_lat,
        "latency refactored / dense, batch 1, 1 thread": r_b1,
        # reported, not judged: zeroed spikes already cut SOPs (the control), and removal cuts MACs by construction
        "energy refactored / dense": ops_c.energy_pj / ops_d.energy_pj,
        "SOPs refactored / dense": ops_c.total_sops / ops_d.total_sops,
        "FLOPs refactored / dense": ops_c.total_macs / ops_d.total_macs,
        "params refactored / dense": n_params(compact) / n_params(dense),
        "energy dense [uJ/image]": ops_d.energy_pj * 1e-6,
        "energy refactored [uJ/image]": ops_c.energy_pj * 1e-6,
        "latency refactored, batch 32, 1 thread [ms]": 1e3 * t_c,
    }
    if scale is not Scale.SMOKE:
        r_2, _, _ = paired_latency_ratio(compact, dense, x32, repeats=cfg.prof_repeats, threads=2)
        measured["latency refactored / dense, batch 32, 2 threads"] = r_2
    r_energy = measured["energy refactored / dense"]
    holds = r_lat < 0.9
    fig, ax = _figure()
    keys = ["energy", "SOPs", "FLOPs", "latency b32"]
    ax.bar(keys, [r_energy, measured["SOPs refactored / dense"], measured["FLOPs refactored / dense"], r_lat])
    ax.axhline(1.0, color="k", ls=":")
    ax.set_ylabel(f"{arm.value} arm / dense")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines={"latency dense, batch 32, 1 thread [ms]": 1e3 * t_d},
        paper={"computational and energy costs": "saved on real edge devices (abstract)"},
        elsewhere={
            "Jetson test-run energy saved, Spikingformer CIFAR-10 [%] [demo power logs, our integration]": 28.0,
            "Jetson test-run energy saved, SDT DVS-Gesture [%] [demo power logs, our integration]": 55.0,
            "E_MAC [pJ] [Horowitz 2014, 45 nm]": E_MAC_PJ,
            "E_AC [pJ] [Horowitz 2014, 45 nm]": E_AC_PJ,
        },
        reason="" if holds else f"batch-32 latency ratio {r_lat:.2f} >= 0.9",
        figures={"energy-latency-ratios": fig},
    )


# ------------------------------------------------------------------------------------ measures, both ways


class _LabelOracle(nn.Module):
    """The ground truth as a network: looks every image up among the test images and answers its label."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, classes: int = 10):
        super().__init__()
        self.table = {img.tobytes(): int(y) for img, y in zip(images, labels, strict=True)}
        self.classes = classes

    def forward(self, img):  # (B, C, H, W) -> (B, classes) one-hot logits
        y = torch.tensor([self.table[i.numpy().tobytes()] for i in img])
        return nn.functional.one_hot(y, self.classes).float()


def _accuracy_check(seed: int) -> dict[str, float]:
    """Test accuracy (``evaluate``, the accuracy claim's measure) of the truth (a label oracle), the trained dense
    network, the same network with 40 % of its channels masked at random (no fine-tuning), and the null: the
    dense network scored against a permutation of the labels (chance, 10 %)."""
    split, dense = _dense("smoke", seed)
    x, y = split.x_test, split.y_test
    pruned = mask_model(copy.deepcopy(dense), _random_keep(dense, 0.4, np.random.default_rng(seed)))
    return {
        "truth": evaluate(_LabelOracle(x, y), x, y),
        "dense network": evaluate(dense, x, y),
        "40 % masked at random": evaluate(pruned, x, y),
        "null": evaluate(dense, x, np.random.default_rng([seed, 2]).permutation(y)),
    }


class _Repeated(nn.Module):
    """A network run ``k`` times on every batch: exactly ``k`` times its work (a planted latency of known size)."""

    def __init__(self, net: nn.Module, k: int):
        super().__init__()
        self.net, self.k = net, k

    def forward(self, img):  # (B, C, H, W) -> (B, classes)
        for _ in range(self.k - 1):
            self.net(img)
        return self.net(img)


#: repeats of the measure checks' paired latency ratios: 11 (the smoke claims') let an identical copy read 0.93-1.03
#: on the loaded shared cores; 31 kept it at 0.955-0.997 (seeds 0-3, load 6), inside the null band of +-0.06
CHECK_REPEATS = 31


def _latency_setup(seed: int):
    cfg = PRESETS["smoke"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        dense = SpikingCNN(1, 10, T=cfg.lat_T, widths=(cfg.lat_width,) * 3)
    x = torch.from_numpy(np.random.default_rng(seed).random((cfg.lat_batch, 1, cfg.lat_hw, cfg.lat_hw), np.float32))
    return cfg, dense, x


def _latency_check(seed: int) -> dict[str, float]:
    """The paired latency ratio (the latency claims' measure) against a dense CNN: the truth is the dense network
    on half of every batch (half the work), the alternative the network with half its channels masked (no time
    saved), the null an independent copy of the dense network (ratio 1 +- 0.08: inside the distance to the claims'
    bars, 0.8-0.9, with room for a loaded CI machine, where an identical copy read 0.955-0.997 at load 6)."""
    cfg, dense, x = _latency_setup(seed)
    masked = mask_model(copy.deepcopy(dense), _random_keep(dense, 0.5, np.random.default_rng(seed)))
    arms = {"truth": _sliced(copy.deepcopy(dense), 0.5, cfg.lat_batch), "masked": masked, "null": copy.deepcopy(dense)}
    return {k: paired_latency_ratio(m, dense, x, repeats=CHECK_REPEATS)[0] for k, m in arms.items()}


def _latency_size_check(seed: int) -> dict[str, float]:
    """A planted latency ratio reads at its size: |ratio - 0.5| against a reference that is the dense network run
    twice, for the dense network run once (the truth: exactly half the reference's work), three times (1.5) and
    twice (the null: an identical workload, about 0.5 off)."""
    _, dense, x = _latency_setup(seed)
    reference = _Repeated(copy.deepcopy(dense), 2)
    arms = {"truth": dense, "run three times": _Repeated(copy.deepcopy(dense), 3), "null": _Repeated(dense, 2)}
    return {k: abs(paired_latency_ratio(m, reference, x, repeats=CHECK_REPEATS)[0] - 0.5) for k, m in arms.items()}


def _exactness_check(seed: int) -> dict[str, float]:
    """log10 max |logit difference| (the exactness claim's measure) between the masked CNN and: the correct compact
    network (the truth, -300), the compact network with mis-sliced BatchNorm statistics, and the null: a network of
    the same widths with its own initialisation (no relation, log10 ~ 0)."""
    split = load_data("digits", n_test=16, seed=seed)
    x = torch.from_numpy(split.x_test).double()
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        dense = SpikingCNN(1, 10, T=4).double()
        stranger = SpikingCNN(1, 10, T=4).double()  # drawn after dense: its own initialisation
    _scramble_bn(dense, gen)
    _scramble_bn(stranger, gen)
    keep = _random_keep(dense, 0.4, np.random.default_rng(seed))
    masked = mask_model(copy.deepcopy(dense), keep).eval()
    arms = {
        "truth": refactor(copy.deepcopy(dense), keep).eval(),
        "mis-sliced BatchNorm": refactor(copy.deepcopy(dense), keep, misalign=True).eval(),
        "null": refactor(stranger, keep).eval(),
    }
    with torch.no_grad():
        y_m = masked(x)
        return {k: _log10_diff(m(x), y_m) for k, m in arms.items()}


MEASURES = [
    MeasureCheck("test accuracy [%]", _accuracy_check, null_band=(2.0, 20.0), margin=1.0),
    MeasureCheck("paired latency ratio", _latency_check, null_band=(0.92, 1.08), higher_is_better=False, margin=0.1),
    MeasureCheck(
        "|paired latency ratio - 0.5| of a planted half workload",
        _latency_size_check,
        null_band=(0.42, 0.58),
        higher_is_better=False,
        margin=0.2,
    ),
    MeasureCheck("log10 max |compact - masked|", _exactness_check, null_band=(-3.0, 3.0), higher_is_better=False),
]
MECHANISMS = [gates_probe, profile_gates_probe]
CLAIMS = [zeroing_saves_nothing, refactor_is_exact, accuracy_kept, energy_and_latency]
