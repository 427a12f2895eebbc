"""The paper's headline claims at laptop scale (see README "Claims").

- ``bound-holds-v1`` (by construction): the randomized Hadamard transform keeps max |(xDH)_i| under
  sqrt(2 log(2n/δ)/n) with probability >= 1 - δ for n = 64 ... 4096, even on the inputs worst for the plain one.
- ``less-homogenization-v2``: in an encoder holding MiniLM-L6's real weights, the rotations raise the spike-count
  entropy of the residual-stream LIFs and at least halve their max input (synthetic outliers reported).
- ``better-accuracy-v2``: spiking encoders with the randomized Hadamard rotations beat the unrotated baseline
  from the same initialisation on the offline tweet task (paper: +8.2 GLUE points), paired over seeds.
- ``fusion-is-exact-v1`` (by construction): folding H2/H3 (and H1's inner uses) into the weights leaves the
  logits unchanged and gives the baseline's parameter count and spike-driven operations.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.smoothspike.analysis import bound, code_stats, max_coordinate_trials, outlier_activations
from icml26.smoothspike.config import PRESETS
from icml26.smoothspike.hadamard import HadamardRotation
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, count_ops, fuse, n_params

PAPER_GLUE = {"GLUE average, Spikingformer baseline": 66.8, "GLUE average, SmoothSpike": 75.0}


def _figure(w=5.5, h=3.8):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(w, h))


@claim(
    "smoothspike/bound-holds-v1",
    statement="For unit-norm inputs and n = 64 ... 4096, the randomized Hadamard transform xDH keeps "
    "max_i |(xDH)_i| <= sqrt(2 log(2n/delta)/n) (delta = 0.05) in at least 1 - delta of the (input, sign) draws "
    "at every n, for the input kind worst for the plain transform (rows of H), one-hot, outlier and Gaussian "
    "inputs",
    paper="abstract: the randomized Hadamard transformation bounds the maximum input to O(sqrt(log n / n)) with "
    "high probability (theorem; the constant here is the Hoeffding form)",
    control="no random signs (D = I): H maps its adversarial input (a row of H) to a basis vector, the max "
    "coordinate is 1 at every n and the claim must fail",
    by_construction="an implementation check of a proved theorem (Hoeffding over the random signs), not an "
    "empirical finding: it holds whenever our transform is orthogonal and the signs are drawn per trial",
)
def bound_holds(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    delta = cfg.bound_delta
    measured, worst_rate, slopes = {}, 0.0, []
    fig, ax = _figure()
    for kind in ("hadamard-row", "one-hot", "outliers", "gaussian"):
        means = []
        for n in cfg.bound_ns:
            m = max_coordinate_trials(n, cfg.bound_trials, seed + n, kind=kind, signs=not control)  # the control
            rate = float((m > bound(n, delta)).mean())
            worst_rate = max(worst_rate, rate)
            means.append(float(m.mean()))
            measured[f"exceed rate, {kind}, n={n}"] = rate
        slope = float(np.polyfit(np.log(cfg.bound_ns), np.log(means), 1)[0])
        slopes.append(slope)
        measured[f"log-log slope of mean max vs n, {kind}"] = slope
        ax.loglog(cfg.bound_ns, means, "o-", label=f"mean max |xDH|, {kind}" + " (no D)" * control)
    ax.loglog(cfg.bound_ns, [bound(n, delta) for n in cfg.bound_ns], "k--", label=f"bound, delta={delta}")
    ax.loglog(cfg.bound_ns, [1 / np.sqrt(n) for n in cfg.bound_ns], "k:", label="1/sqrt(n)")
    ax.set_xlabel("n")
    ax.set_ylabel("max coordinate (unit-norm x)")
    ax.legend(fontsize=7)
    holds = worst_rate <= delta
    measured = {"worst exceed rate over n and inputs": worst_rate, **measured}
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines={"delta": delta},
        paper={"max input after randomized Hadamard": "O(sqrt(log n / n)) with high probability (abstract)"},
        reason="" if holds else f"the bound was exceeded in {100 * worst_rate:.1f} % of draws (> delta)",
        figures={"max-vs-n": fig},
    )


@claim(
    "smoothspike/less-homogenization-v2",
    statement="In a spiking encoder holding MiniLM-L6's real weights (tweets as input), SmoothSpike's randomized "
    "Hadamard rotations raise the spike-count entropy of the residual-stream LIFs (attention and MLP inputs, "
    "mean over layers) and at least halve their mean max |input| (paired over seeds: entropy gain > 0 bits, "
    "max ratio < 0.5)",
    paper="SmoothSpike effectively reduces information homogenization (abstract): distinct high-amplitude "
    "inputs converge to identical spike counts without it",
    control="the Hadamard mixing switched off, the random signs kept (R = D, same weights): no channel is "
    "spread, the max ratio is 1 and the claim must fail",
    judge=[
        Interval("residual LIF entropy gain [bits]", above=0.0),
        Interval("residual LIF mean max |input|, rotated / plain", below=0.5),
    ],
)
def less_homogenization(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    try:
        plain = _minilm_sites(scale.value, seed, "none")
    except ValueError as err:  # the MiniLM data wheel is not installed
        return ClaimResult("not-measured", reason=str(err))
    rotated = _minilm_sites(scale.value, seed, "signs" if control else "hadamard")  # the one line the control changes
    gain = rotated["entropy [bits]"] - plain["entropy [bits]"]
    ratio = rotated["mean max |input|"] / plain["mean max |input|"]
    holds = gain > 0.0 and ratio < 0.5
    # reported, not judged: synthetic activations with 4 outlier channels at 25x, where the result holds by how
    # the outliers are built (a rotation spreads any concentrated vector)
    z = outlier_activations(cfg.homog_n, cfg.homog_samples, seed, gain=cfg.homog_gain)  # (samples, n)
    rot = HadamardRotation(cfg.homog_n, generator=torch.Generator().manual_seed(seed + 1), mix=not control)
    syn_plain, syn_rot = code_stats(z), code_stats(rot(z))
    fig, ax = _figure()
    x = np.arange(len(plain["count fractions"]))
    ax.bar(x - 0.2, plain["count fractions"], 0.4, label="plain")
    ax.bar(x + 0.2, rotated["count fractions"], 0.4,
           label="randomized Hadamard" + " [control: signs only]" * control)  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("spike count in T = 4 steps (residual-stream LIFs, MiniLM weights)")
    ax.set_ylabel("fraction of neurons")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "residual LIF entropy gain [bits]": gain,
            "residual LIF mean max |input|, rotated / plain": ratio,
            "residual LIF entropy, rotated [bits]": rotated["entropy [bits]"],
            "residual LIF mean max |input|, rotated": rotated["mean max |input|"],
            "residual LIF large-input collision, rotated": rotated["large-input collision"],
            "synthetic outliers: entropy gain [bits]": syn_rot["entropy [bits]"] - syn_plain["entropy [bits]"],
            "synthetic outliers: rate-code error rotated / plain": syn_rot["rate-code error"]
            / syn_plain["rate-code error"],
        },
        baselines={
            "residual LIF entropy, plain [bits]": plain["entropy [bits]"],
            "residual LIF mean max |input|, plain": plain["mean max |input|"],
            "residual LIF large-input collision, plain": plain["large-input collision"],
        },
        paper={"information homogenization": "reduced by SmoothSpike (abstract)"},
        elsewhere={
            "rate-code error plain, synthetic [prototype]": 0.84,
            "rate-code error rotated, synthetic [prototype]": 0.35,
        },
        reason="" if holds else f"entropy gain {gain:+.3f} bits, max ratio {ratio:.2f}",
        figures={"spike-count-histograms": fig},
    )


@functools.lru_cache(maxsize=32)  # the plain model's statistics are shared by the claim and its control
def _minilm_sites(scale_value: str, seed: int, rotation: str) -> dict:
    """Spike statistics of the residual-stream LIFs (attn_in, mlp_in) of a spiking encoder holding MiniLM-L6's
    first ``homog_layers`` layers, plain or rotated (same weights, :func:`unfuse`), on tweets drawn with the
    seed (the seed also draws the rotation's signs)."""
    from icml26.smoothspike.analysis import spike_report
    from icml26.smoothspike.data import Tokenizer, load_task
    from icml26.smoothspike.model import load_minilm, unfuse

    cfg = PRESETS[scale_value]
    base = _cached(load_minilm, cfg.homog_layers, n_outputs=3, max_len=cfg.homog_max_len)
    model = base if rotation == "none" else unfuse(base, rotation=rotation, seed=seed)
    tweets = _cached(load_task, "tweets")
    idx = np.random.default_rng(seed).choice(len(tweets), cfg.homog_sentences, replace=False)
    ids, mask = _cached(Tokenizer).encode([tweets.texts[i] for i in idx], max_len=cfg.homog_max_len)
    with torch.no_grad():
        rows = [r for r in spike_report(model, torch.from_numpy(ids), torch.from_numpy(mask))
                if r["site"] in ("attn_in", "mlp_in")]  # fmt: skip
    return {
        **{k: float(np.mean([r[k] for r in rows])) for k in ("entropy [bits]", "mean max |input|")},
        "large-input collision": float(np.mean([r["large-input collision"] for r in rows])),
        "count fractions": np.mean([r["count fractions"] for r in rows], axis=0).tolist(),
    }


@functools.lru_cache(maxsize=8)
def _cached(fn, *args, **kwargs):
    return fn(*args, **kwargs)


@functools.lru_cache(maxsize=32)  # the runner does every seed, then every control seed: the baseline is shared
def _accuracy_run(scale_value: str, seed: int, task_name: str, rotation: str) -> dict[str, float]:
    from icml26.smoothspike.data import Tokenizer, load_task
    from icml26.smoothspike.train import FinetuneConfig, build_model, evaluate, finetune

    cfg = PRESETS[scale_value]
    i = cfg.acc_tasks.index(task_name)
    task = _cached(load_task, task_name)  # the built-in real tasks do not depend on the seed
    train, test = task.split(cfg.acc_train[i], cfg.acc_test[i], seed)
    tok = _cached(Tokenizer)
    model = build_model(
        cfg.acc_init,
        rotation=rotation,
        n_outputs=task.n_outputs,
        seed=seed,
        max_len=cfg.acc_max_len,
        dim=cfg.acc_dim,
        layers=cfg.acc_layers,
        heads=4 if cfg.acc_init == "scratch" else 12,
    )
    fc = FinetuneConfig(steps=cfg.acc_steps[i], batch=cfg.acc_batch, lr=cfg.acc_lr)
    finetune(model, train, tok, fc, seed)
    return evaluate(model, test, tok)


@claim(
    "smoothspike/better-accuracy-v2",
    statement="Spiking encoders with SmoothSpike's randomized Hadamard rotations (H1, H2, H3) reach a higher "
    "test accuracy than the unrotated spiking baseline trained from the same initialisation on the same batches "
    "with the same budget, on the 3-class tweet task (paired over seeds, gain > 0 points)",
    paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points",
    control="the Hadamard mixing switched off, the random signs kept (R = D: a model as different from the "
    "baseline as SmoothSpike's, but with no smoothing): the claim must fail",
    judge=Interval("accuracy gain, task mean [pt]", above=0.0),
)
def better_accuracy(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    torch.set_num_threads(1)
    cfg = PRESETS[scale.value]
    arm = "signs" if control else "hadamard"  # the one line the control changes
    measured, baselines, gains = {}, {}, []
    for task_name in cfg.acc_tasks:
        base = _accuracy_run(scale.value, seed, task_name, "none")
        rot = _accuracy_run(scale.value, seed, task_name, arm)
        g = 100 * (rot["accuracy"] - base["accuracy"])
        gains.append(g)
        measured[f"accuracy gain, {task_name} [pt]"] = g
        measured[f"accuracy SmoothSpike, {task_name} [%]"] = 100 * rot["accuracy"]
        measured[f"Matthews SmoothSpike, {task_name}"] = rot["matthews"]
        baselines[f"accuracy baseline, {task_name} [%]"] = 100 * base["accuracy"]
        baselines[f"Matthews baseline, {task_name}"] = base["matthews"]
    mean_gain = float(np.mean(gains))
    holds = mean_gain > 0.0
    fig, ax = _figure()
    x = np.arange(len(cfg.acc_tasks))
    ax.bar(x - 0.2, [baselines[f"accuracy baseline, {t} [%]"] for t in cfg.acc_tasks], 0.4, label="baseline")
    ax.bar(x + 0.2, [measured[f"accuracy SmoothSpike, {t} [%]"] for t in cfg.acc_tasks], 0.4,
           label="SmoothSpike (Hadamard)" + " [control: signs only]" * control)  # fmt: skip
    ax.set_xticks(x, cfg.acc_tasks)
    ax.set_ylabel("test accuracy [%]")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"accuracy gain, task mean [pt]": mean_gain, **measured},
        baselines=baselines,
        paper={**PAPER_GLUE, "GLUE average gain [pt]": 8.2},
        reason="" if holds else f"mean accuracy gain {mean_gain:+.2f} points",
        figures={"accuracy-by-task": fig},
    )


@claim(
    "smoothspike/fusion-is-exact-v1",
    statement="Folding the rotations into the neighbouring weights (fixed randomized Hadamard and learnable "
    "quintic Newton-Schulz rotations, float64, weights perturbed as after training) changes the logits by less "
    "than 1e-9, gives the baseline's parameter count and makes every projection inside the blocks spike-driven",
    paper="the learnable orthogonal matrix can be fused into model weights at inference with no additional "
    "overhead (abstract)",
    control="fusion with the raw learnable parameter W instead of the msign(W) the forward pass uses (the "
    "pitfall of a not-exactly-orthogonal quintic iteration): the logits differ and the claim must fail",
    judge=Interval("log10 max |fused - unfused| (worst model)", below=-9.0),
    by_construction="an implementation check, not a finding: folding a linear map into the adjacent Linear layer "
    "is an algebraic identity, so the claim holds whenever our folding formulas are right (its control shows "
    "it can see a wrong matrix)",
)
def fusion_is_exact(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 1000, (cfg.fuse_sentences, 24), generator=gen)
    mask = (torch.arange(24)[None] < torch.randint(8, 25, (cfg.fuse_sentences, 1), generator=gen)).double()
    measured, worst = {}, -np.inf
    for rotation in ("hadamard", "learnable"):
        ec = EncoderConfig(vocab_size=1000, max_len=24, dim=cfg.fuse_dim, heads=4, layers=cfg.fuse_layers,
                           rotation=rotation, n_outputs=3, norm_gain=2.0)  # fmt: skip
        model = SpikingEncoder(ec, seed=seed).double()
        with torch.no_grad():  # a trained-like state: learnable W drift away from orthogonal
            for name, p in model.named_parameters():
                if name.endswith("weight") and ("h1" in name or "h2" in name or "h3" in name):
                    p.add_(0.05 * torch.randn(p.shape, generator=gen, dtype=p.dtype) / p.shape[-1] ** 0.5)
        model.eval()
        fused = fuse(model, use_raw_parameter=control).eval()  # the one line the control changes
        baseline = SpikingEncoder(EncoderConfig(**{**ec.__dict__, "rotation": "none"}), seed=seed).double()
        with torch.no_grad():
            diff = float((model(ids, mask) - fused(ids, mask)).abs().max())
        ops_f, ops_u = count_ops(fused, ids, mask), count_ops(model, ids, mask)
        measured[f"max |fused - unfused|, {rotation}"] = diff
        measured[f"params fused / baseline, {rotation}"] = n_params(fused) / n_params(baseline)
        measured[f"params unfused / baseline, {rotation}"] = n_params(model) / n_params(baseline)
        measured[f"block MACs per sample (0: spike-driven), fused, {rotation}"] = ops_f["MACs"]
        measured[f"block MACs per sample, unfused, {rotation}"] = ops_u["MACs"]
        measured[f"end MACs per sample, fused, {rotation}"] = ops_f["end MACs"]
        worst = max(worst, np.log10(diff + 1e-300))
    measured = {"log10 max |fused - unfused| (worst model)": float(worst), **measured}
    holds = worst < -9.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"inference overhead after fusion": "none (abstract)"},
        reason="" if holds else f"fused and unfused logits differ by up to 10^{worst:.1f}",
    )


CLAIMS = [bound_holds, less_homogenization, better_accuracy, fusion_is_exact]
