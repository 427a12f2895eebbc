"""The paper's headline claims at laptop scale (see README "Claims").

- ``bound-holds-v1`` (by construction): the randomized Hadamard transform keeps max |(xDH)_i| under
  sqrt(2 log(2n/δ)/n) with probability >= 1 - δ for n = 64 ... 4096, even on the inputs worst for the plain one.
- ``less-homogenization-v2``: in an encoder holding MiniLM-L6's real weights, the rotations raise the spike-count
  entropy of the residual-stream LIFs and at least halve their max input (synthetic outliers reported).
- ``better-accuracy-v2``: spiking encoders with the randomized Hadamard rotations beat the unrotated baseline
  from the same initialisation on the offline tweet task (paper: +8.2 GLUE points), paired over seeds.
- ``fusion-is-exact-v1`` (by construction): folding H2/H3 (and H1's inner uses) into the weights leaves the
  logits unchanged and gives the baseline's parameter count and spike-driven operations.

Contract v3: every claim runs three arms (``Arm.CLAIM``; the negative control, an A/A run where it compares
two models; the positive control with the claimed effect planted at the claimed size), ``MECHANISMS`` probes the
smoothing the paper credits (the change in the residual-stream LIFs' max input that the rotation makes, in the
accuracy claim's trained models) and ``MEASURES`` validates the claims' measures on ground truth and a null.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.smoothspike.analysis import bound, code_stats, max_coordinate_trials, outlier_activations
from icml26.smoothspike.config import PRESETS
from icml26.smoothspike.hadamard import HadamardRotation
from icml26.smoothspike.model import EncoderConfig, HaarRotation, SpikingEncoder, count_ops, fuse, n_params

PAPER_GLUE = {"GLUE average, Spikingformer baseline": 66.8, "GLUE average, SmoothSpike": 75.0}
PAPER_GAIN_PT = 8.2  # GLUE average points, SmoothSpike over the Spikingformer baseline


def _figure(w=5.5, h=3.8):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(w, h))


def _sphere_max(n: int, trials: int, seed: int) -> np.ndarray:
    """max_i |u_i| of ``trials`` uniform random unit vectors u in R^n (normalised Gaussians)."""
    u = np.random.default_rng([seed, 17]).standard_normal((trials, n))
    return np.abs(u).max(1) / np.linalg.norm(u, axis=1)


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
    positive="the ideal smoothing planted: every output replaced by a uniform random point of the unit sphere "
    "(what a Haar rotation makes of any input), scored by the same exceed-rate code against the same bound",
    by_construction="an implementation check of a proved theorem (Hoeffding over the random signs), not an "
    "empirical finding: it holds whenever our transform is orthogonal and the signs are drawn per trial",
)
def bound_holds(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    control = arm is Arm.NEGATIVE
    delta = cfg.bound_delta
    measured, worst_rate, slopes = {}, 0.0, []
    fig, ax = _figure()
    for kind in ("hadamard-row", "one-hot", "outliers", "gaussian"):
        means = []
        for n in cfg.bound_ns:
            if arm is Arm.POSITIVE:
                m = _sphere_max(n, cfg.bound_trials, seed + n)
            else:
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
    control="A/A: the Hadamard mixing switched off, the random signs kept (R = D, same weights, its own signs): "
    "no channel is spread, the max ratio scatters around 1 and the claim must fail",
    positive="the oracle rotation: uniformly random (Haar) orthogonal matrices in place of every randomized "
    "Hadamard one (the ideal spreader the theorem's bound describes), same weights, tweets and measurement",
    judge=[
        Interval("residual LIF entropy gain [bits]", above=0.0),
        Interval("residual LIF mean max |input|, rotated / plain", below=0.5),
    ],
)
def less_homogenization(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    control = arm is Arm.NEGATIVE
    try:
        plain = _minilm_sites(scale.value, seed, "none")
    except ValueError as err:  # the MiniLM data wheel is not installed
        return ClaimResult("not-measured", reason=str(err))
    rotated = _minilm_sites(
        scale.value, seed, {Arm.CLAIM: "hadamard", Arm.NEGATIVE: "signs", Arm.POSITIVE: "haar"}[arm]
    )
    gain = rotated["entropy [bits]"] - plain["entropy [bits]"]
    ratio = rotated["mean max |input|"] / plain["mean max |input|"]
    holds = gain > 0.0 and ratio < 0.5
    # reported, not judged: synthetic activations with 4 outlier channels at 25x, where the result holds by how
    # the outliers are built (a rotation spreads any concentrated vector)
    z = outlier_activations(cfg.homog_n, cfg.homog_samples, seed, gain=cfg.homog_gain)  # (samples, n)
    gen = torch.Generator().manual_seed(seed + 1)
    rot = (
        HaarRotation(cfg.homog_n, gen)
        if arm is Arm.POSITIVE
        else HadamardRotation(cfg.homog_n, generator=gen, mix=not control)
    )
    syn_plain, syn_rot = code_stats(z), code_stats(rot(z))
    fig, ax = _figure()
    x = np.arange(len(plain["count fractions"]))
    ax.bar(x - 0.2, plain["count fractions"], 0.4, label="plain")
    ax.bar(x + 0.2, rotated["count fractions"], 0.4,
           label={Arm.CLAIM: "randomized Hadamard", Arm.NEGATIVE: "signs only", Arm.POSITIVE: "Haar"}[arm])  # fmt: skip
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
    first ``homog_layers`` layers, plain or rotated (same weights, :func:`unfuse`; ``"haar"``: uniformly random
    orthogonal rotations in the Hadamard ones' places), on tweets drawn with the seed (the seed also draws the
    rotation's signs)."""
    from icml26.smoothspike.analysis import spike_report
    from icml26.smoothspike.data import Tokenizer, load_task
    from icml26.smoothspike.model import load_minilm, unfuse

    cfg = PRESETS[scale_value]
    base = _cached(load_minilm, cfg.homog_layers, n_outputs=3, max_len=cfg.homog_max_len)
    if rotation == "haar":
        gen = torch.Generator().manual_seed(seed + 7919)
        model = unfuse(base, rotation="hadamard", seed=seed, make_rotation=lambda n: HaarRotation(n, gen))
    else:
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


@functools.lru_cache(maxsize=32)  # the runner does every seed of one arm, then the next: the baseline is shared
def _trained(scale_value: str, seed: int, task_name: str, rotation: str):
    """One fine-tuned encoder of the accuracy claim: ``(model, test task, test predictions)``. Every rotation
    starts from the same seeded initialisation (``unfuse``) and sees the same batches."""
    from icml26.smoothspike.data import Tokenizer, load_task
    from icml26.smoothspike.train import FinetuneConfig, build_model, finetune, predict

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
    return model, test, predict(model, test, tok)


def _handicapped(pred: np.ndarray, labels: np.ndarray, points: float, rng: np.random.Generator) -> np.ndarray:
    """``pred`` with round(points % of the items) of its correct answers turned wrong ((y + 1) mod classes): an
    accuracy exactly ``points`` lower (as far as the test set's granularity allows)."""
    out = pred.copy()
    correct = np.flatnonzero(pred == labels)
    k = min(len(correct), round(points / 100 * len(labels)))
    flip = rng.choice(correct, k, replace=False)
    out[flip] = (labels[flip] + 1) % (int(labels.max()) + 1)
    return out


@claim(
    "smoothspike/better-accuracy-v2",
    statement="Spiking encoders with SmoothSpike's randomized Hadamard rotations (H1, H2, H3) reach a higher "
    "test accuracy than the unrotated spiking baseline trained from the same initialisation on the same batches "
    "with the same budget, on the 3-class tweet task (paired over seeds, gain > 0 points)",
    paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points",
    control="A/A: the Hadamard mixing switched off, the random signs kept (R = D, its own signs: a model as "
    "different from the baseline as SmoothSpike's, but with no smoothing): the claim must fail",
    positive="the baseline handicapped by exactly the paper's +8.2 points (8.2 % of the test items it answers "
    "correctly turned wrong, its own seed stream), against the signs-only model: the A/A model-to-model noise "
    "plus the claimed gain, judged by the same interval",
    mechanisms=("smoothing",),
    judge=Interval("accuracy gain, task mean [pt]", above=0.0),
)
def better_accuracy(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.smoothspike.data import task_metrics

    torch.set_num_threads(1)
    cfg = PRESETS[scale.value]
    rotation = "hadamard" if arm is Arm.CLAIM else "signs"  # both controls compare the signs-only model
    measured, baselines, gains = {}, {}, []
    for task_name in cfg.acc_tasks:
        _, test, base_pred = _trained(scale.value, seed, task_name, "none")
        _, _, rot_pred = _trained(scale.value, seed, task_name, rotation)
        if arm is Arm.POSITIVE:  # the claimed gain planted in the baseline's answers
            base_pred = _handicapped(base_pred, test.labels, PAPER_GAIN_PT, np.random.default_rng([seed, 82]))
        base, rot = task_metrics(test, base_pred), task_metrics(test, rot_pred)
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
           label=f"SmoothSpike (Hadamard), {arm.value} arm")  # fmt: skip
    ax.set_xticks(x, cfg.acc_tasks)
    ax.set_ylabel("test accuracy [%]")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"accuracy gain, task mean [pt]": mean_gain, **measured},
        baselines=baselines,
        paper={**PAPER_GLUE, "GLUE average gain [pt]": PAPER_GAIN_PT},
        reason="" if holds else f"mean accuracy gain {mean_gain:+.2f} points",
        figures={"accuracy-by-task": fig},
    )


def _residual_max_input(model: SpikingEncoder, test, n_texts: int = 32) -> float:
    """Mean over layers and residual-stream LIF sites (attention and MLP inputs) of the mean max |input|."""
    from icml26.smoothspike.analysis import spike_report
    from icml26.smoothspike.data import Tokenizer

    ids, mask = _cached(Tokenizer).encode(list(test.texts[:n_texts]), max_len=model.cfg.max_len)
    with torch.no_grad():
        rows = [r for r in spike_report(model, torch.from_numpy(ids), torch.from_numpy(mask))
                if r["site"] in ("attn_in", "mlp_in")]  # fmt: skip
    return float(np.mean([r["mean max |input|"] for r in rows]))


@mechanism(
    "smoothing",
    component="SmoothSpike's randomized Hadamard rotations spreading outlier channels before the LIFs",
    measures="1 - (mean max |input| of the residual-stream LIFs, rotated / plain) in the accuracy claim's "
    "fine-tuned encoders on 32 test tweets: how much the rotation lowers the largest LIF input",
    above=0.2,
)
def smoothing_probe(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    task_name = cfg.acc_tasks[0]
    plain, test, _ = _trained(scale.value, seed, task_name, "none")
    rotated, _, _ = _trained(scale.value, seed, task_name, "hadamard")
    m_plain, m_rot = _residual_max_input(plain, test), _residual_max_input(rotated, test)
    return {
        "smoothing": 1 - m_rot / m_plain,
        "max |LIF input|, plain": m_plain,
        "max |LIF input|, rotated": m_rot,
    }


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
    positive="the correct fused model with every weight changed at rounding level (1e-13 relative, a float64 "
    "re-association): a difference far below the claimed 1e-9 that the measure must accept",
)
def fusion_is_exact(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
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
        fused = fuse(model, use_raw_parameter=arm is Arm.NEGATIVE).eval()  # the negative control's bug
        if arm is Arm.POSITIVE:  # rounding-level changes of the fused weights
            with torch.no_grad():
                for p in fused.parameters():
                    p.mul_(1 + 1e-13 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
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


# ------------------------------------------------------------------------------------ measures, both ways


def _exceed_check(seed: int) -> dict[str, float]:
    """The bound claim's exceed rate (fraction of draws with max |coordinate| above the bound, n = 256): the truth
    is the ideal spreader (uniform points of the sphere), the alternative the transform without its random signs
    on its adversary (rows of H), the null no transform at all on one-hot inputs (every draw exceeds)."""
    n, trials = 256, 400
    b = bound(n, 0.05)
    one_hot_max = np.ones(trials)  # max |x_i| of a one-hot unit vector, untransformed
    return {
        "truth": float((_sphere_max(n, trials, seed) > b).mean()),
        "xH without signs, rows of H": float(
            (max_coordinate_trials(n, trials, seed, kind="hadamard-row", signs=False) > b).mean()
        ),
        "null": float((one_hot_max > b).mean()),
    }


def _max_ratio_check(seed: int) -> dict[str, float]:
    """The homogenisation claim's max ratio (residual LIFs' mean max |input|, rotated / plain, MiniLM weights at
    smoke size): the truth is the ideal spreader (Haar rotations), the null rotations that spread nothing
    (random signs only: an orthogonal change of basis that keeps every outlier where it was)."""
    plain = _minilm_sites("smoke", seed, "none")["mean max |input|"]
    return {
        "truth": _minilm_sites("smoke", seed, "haar")["mean max |input|"] / plain,
        "null": _minilm_sites("smoke", seed, "signs")["mean max |input|"] / plain,
    }


def _gain_readings(seed: int) -> dict[str, float]:
    """The accuracy claim's gain [pt] on the smoke test tweets, against the smoke baseline's answers: of the truth
    (the labels), of the baseline handicapped by 4.1, 8.2 (the paper's gain) and 16.4 points, and the null: the
    mean gain of 1,000 pairs of independent uniformly random answerers (no effect; a single pair on 64 tweets
    scatters by +-8 points, the mean of 1,000 by +-0.3: the check asks whether the measure is unbiased at the
    null, not how noisy 64 tweets are)."""
    from icml26.smoothspike.data import task_metrics

    cfg = PRESETS["smoke"]
    _, test, base_pred = _trained("smoke", seed, cfg.acc_tasks[0], "none")
    rng = np.random.default_rng([seed, 3])
    base = task_metrics(test, base_pred)["accuracy"]
    out = {"truth": 100 * (task_metrics(test, test.labels)["accuracy"] - base)}
    for points in (PAPER_GAIN_PT / 2, PAPER_GAIN_PT, 2 * PAPER_GAIN_PT):
        worse = task_metrics(test, _handicapped(base_pred, test.labels, points, rng))["accuracy"]
        out[f"planted {points:g} pt"] = 100 * (base - worse)
    coins = rng.integers(0, test.n_outputs, (2, 1000, len(test.labels)))  # (answerer, pair, item)
    out["null"] = 100 * float(np.mean((coins[0] == test.labels).mean(1) - (coins[1] == test.labels).mean(1)))
    return out


def _gain_check(seed: int) -> dict[str, float]:
    """The gain of the truth scores best; the null reads 0 +- 1 point (the claim's bar is 0, the paper's gain 8.2)."""
    r = _gain_readings(seed)
    return {"truth": r["truth"], f"planted {PAPER_GAIN_PT:g} pt": r[f"planted {PAPER_GAIN_PT:g} pt"], "null": r["null"]}


def _gain_size_check(seed: int) -> dict[str, float]:
    """A planted gain reads at its size: |reading - 8.2| for a planted 8.2 points (truth: about 0, the 64 tweets'
    granularity 1.6 points allows 0.4), planted 4.1 and 16.4 points (alternatives: about 4.1 and 8.2 off) and the
    null (about 8.2 off)."""
    r = {k: abs(v - PAPER_GAIN_PT) for k, v in _gain_readings(seed).items() if k != "truth"}
    return {"truth": r.pop(f"planted {PAPER_GAIN_PT:g} pt"), **r}


MEASURES = [
    MeasureCheck("bound exceed rate", _exceed_check, null_band=(0.99, 1.0), higher_is_better=False, margin=0.5),
    MeasureCheck("residual LIF max |input| ratio", _max_ratio_check, null_band=(0.9, 1.1), higher_is_better=False),
    MeasureCheck("accuracy gain [pt]", _gain_check, null_band=(-1.0, 1.0), margin=1.0),
    MeasureCheck(
        "|accuracy gain - 8.2| of a planted 8.2 pt",
        _gain_size_check,
        null_band=(PAPER_GAIN_PT - 1.0, PAPER_GAIN_PT + 1.0),
        higher_is_better=False,
        margin=2.0,
    ),
]
MECHANISMS = [smoothing_probe]
CLAIMS = [bound_holds, less_homogenization, better_accuracy, fusion_is_exact]
