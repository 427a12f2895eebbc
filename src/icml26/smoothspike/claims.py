"""The paper's headline claims at laptop scale (see README "Claims").

- ``bound-holds-v1`` (by construction): the randomized Hadamard transform keeps max |(xDH)_i| under
  sqrt(2 log(2n/δ)/n) with probability >= 1 - δ for n = 64 ... 4096, even on the inputs worst for the plain one.
- ``less-homogenization-v4``: homogenisation as the paper defines it (distinct high-amplitude inputs of a
  neuron receiving identical spike counts in the T = 4 window; each neuron's count entropy across inputs), per
  layer on real SST-2 sentences through an encoder holding MiniLM-L6's weights, plain vs randomized Hadamard;
  bars from a rule fixed before it ran (5 %), fresh seeds, the change planted on an A/A pair as positive control.
- ``better-glue-{sst2,cola,rte}-v1`` and ``better-glue-v6`` (their average): MiniLM-initialised spiking
  students, distilled from a fine-tuned non-spiking MiniLM teacher, with the randomized Hadamard rotations beat
  the unrotated Spikingformer-style baseline on each of SST-2, CoLA (Matthews) and RTE, and on average (paper:
  +8.2 GLUE points), paired over seeds; every model chooses its learning rate from one grid on a validation
  split, every task gets the same steps, batch and grid.
- ``better-glue-cola-v2``: CoLA again, distilled from a teacher that learns CoLA (v1's predicted the majority class;
  v2's recipe was chosen on CoLA's validation split), on a fresh seed stream.
- ``learnable-vs-fixed-v2``: the learnable (Newton-Schulz) rotation scores higher than the fixed one.
- ``fusion-is-exact-v1`` (by construction): folding H2/H3 (and H1's inner uses) into the weights leaves the
  logits unchanged and gives the baseline's parameter count and spike-driven operations (latency: benchmark).

Contract v3: every claim runs three arms (``Arm.CLAIM``; the negative control, an A/A run where it compares
two models; the positive control with the claimed effect planted at the claimed size), ``MECHANISMS`` probes the
components the paper credits (the smoothing of the LIF inputs; the learnable rotation moving) and ``MEASURES``
validates the claims' measures on ground truth and a null.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.smoothspike.analysis import bound, code_stats, max_coordinate_trials, outlier_activations
from icml26.smoothspike.config import PRESETS
from icml26.smoothspike.hadamard import HadamardRotation
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, count_ops, fuse, n_params

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


ROTATED_SITES = ("attn_in", "v", "mlp_in", "hidden")  # the LIF inputs H1 (residual), H2 (value), H3 (MLP) rotate


HOMOG_BAR = 0.05  # a 5 % change: beyond the A/A scatter of v3's negative control (95 % CIs [0.98, 1.03], [0.94, 1.03])
HOMOG_PLANT = 1.25 * HOMOG_BAR  # the positive control's planted change, 1.25 x the bar


@claim(
    "smoothspike/less-homogenization-v4",
    statement="In a spiking encoder holding MiniLM-L6's real weights (6 layers), on SST-2 dev sentences, "
    "SmoothSpike's randomized Hadamard rotations lower the collision rate (per neuron: the fraction of pairs of "
    "distinct high-amplitude inputs, both above V_th and more than 0.1 apart, that get identical spike counts in "
    "the T = 4 window) by more than 5 % and raise each neuron's spike-count entropy across inputs by more than 5 %, "
    "mean over layers and the rotated LIF sites (paired over seeds: collision ratio rotated / plain < 0.95, "
    "entropy ratio > 1.05; the bars follow a rule fixed before this version ran: 5 %, outside the A/A scatter "
    "of v3's negative control; judged on a fresh seed stream, seed + 1000)",
    paper="within a bounded time window, distinct high-amplitude inputs converge to identical spike counts "
    "(information homogenization); SmoothSpike effectively reduces it (abstract)",
    control="A/A: the plain encoder on its own fresh draw of SST-2 dev sentences in the rotated one's place (no "
    "rotation; a sign-flip-only R = D is no null here, as the LIF fires on positive inputs only): the change "
    "scatters around 0 and the claim must fail",
    positive=f"the same A/A pair with the change planted at {HOMOG_PLANT / HOMOG_BAR:g} x the bar: every LIF "
    f"site's collision rate of the partner scaled by {1 - HOMOG_PLANT:g} and its count entropy by "
    f"{1 + HOMOG_PLANT:g}, before the same averaging and verdict",
    judge=[
        Interval("collision rate, rotated / plain", below=1 - HOMOG_BAR),
        Interval("count entropy, rotated / plain", above=1 + HOMOG_BAR),
    ],
)
def less_homogenization(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    seed = seed + 1000  # v4's fresh seed stream (sentences and rotation signs)
    try:
        plain = _minilm_sites(scale.value, seed, "none")
    except ValueError as err:  # the MiniLM data wheel is not installed
        return ClaimResult("not-measured", reason=str(err))
    if arm is Arm.CLAIM:
        rotated = _minilm_sites(scale.value, seed, "hadamard")
    else:  # A/A: the same plain model on a fresh sample of sentences
        rotated = _minilm_sites(scale.value, seed, "none", sentence_stream=1)
        if arm is Arm.POSITIVE:  # the claimed change planted on the A/A partner, per site
            rotated = {**rotated, "per row": [(c * (1 - HOMOG_PLANT), e * (1 + HOMOG_PLANT))
                                              for c, e in rotated["per row"]]}  # fmt: skip
    r_coll = _site_mean(rotated, 0) / _site_mean(plain, 0)
    r_ent = _site_mean(rotated, 1) / _site_mean(plain, 1)
    holds = r_coll < 1 - HOMOG_BAR and r_ent > 1 + HOMOG_BAR
    per_layer, per_layer_plain = {}, {}
    for layer in sorted({lay for lay, _ in plain["rows"]}):
        rows = [i for i, (lay, _) in enumerate(plain["rows"]) if lay == layer]
        for j, what in ((0, "collision rate"), (1, "count entropy [bits]")):
            per_layer[f"{what}, layer {layer}, rotated"] = float(np.nanmean([rotated["per row"][i][j] for i in rows]))
            per_layer_plain[f"{what}, layer {layer}, plain"] = float(np.nanmean([plain["per row"][i][j] for i in rows]))
    # reported, not judged: synthetic activations with 4 outlier channels at 25x, where the result holds by how
    # the outliers are built (a rotation spreads any concentrated vector)
    z = outlier_activations(cfg.homog_n, cfg.homog_samples, seed, gain=cfg.homog_gain)  # (samples, n)
    rot = HadamardRotation(cfg.homog_n, generator=torch.Generator().manual_seed(seed + 1), mix=arm is Arm.CLAIM)
    syn_plain, syn_rot = code_stats(z), code_stats(rot(z))
    fig, ax = _figure()
    x = np.arange(len(plain["per row"]))
    label = {Arm.CLAIM: "randomized Hadamard", Arm.NEGATIVE: "plain, fresh sentences",
             Arm.POSITIVE: "plain, fresh sentences, change planted"}[arm]  # fmt: skip
    ax.plot(x, [r[0] for r in plain["per row"]], "o-", label="plain")
    ax.plot(x, [r[0] for r in rotated["per row"]], "s-", label=label)
    ax.set_xticks(x, [f"{layer}:{site}" for layer, site in plain["rows"]], rotation=90, fontsize=6)
    ax.set_ylabel("collision rate of distinct high-amplitude inputs")
    ax.legend()
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "collision rate, rotated / plain": r_coll,
            "count entropy, rotated / plain": r_ent,
            "collision rate, rotated": _site_mean(rotated, 0),
            "count entropy, rotated [bits]": _site_mean(rotated, 1),
            "residual LIF mean max |input|, rotated / plain": rotated["mean max |input|"] / plain["mean max |input|"],
            "pooled large-input collision (v2's measure), rotated": rotated["pooled collision"],
            "tokens per neuron in the pair statistics": rotated["tokens used"],
            "synthetic outliers: entropy gain [bits]": syn_rot["entropy [bits]"] - syn_plain["entropy [bits]"],
            **per_layer,
        },
        baselines={
            "collision rate, plain": _site_mean(plain, 0),
            "count entropy, plain [bits]": _site_mean(plain, 1),
            "pooled large-input collision (v2's measure), plain": plain["pooled collision"],
            **per_layer_plain,
        },
        paper={"information homogenization": "reduced by SmoothSpike (abstract)"},
        reason="" if holds else f"collision ratio {r_coll:.3f}, entropy ratio {r_ent:.3f}",
        figures={"collision-per-layer": fig},
    )


def _site_mean(stats: dict, j: int) -> float:
    """Mean over the LIF sites (layers x rotated sites) of the per-site collision rate (j = 0) or count entropy
    (j = 1); sites without a distinct high-amplitude pair are skipped for the collision rate."""
    return float(np.nanmean([row[j] for row in stats["per row"]]))


@functools.lru_cache(maxsize=32)  # the plain model's statistics are shared by the claim and its controls
def _minilm_sites(scale_value: str, seed: int, rotation: str, sentence_stream: int = 0) -> dict:
    """Per-neuron homogenisation of the rotated LIF sites of a spiking encoder holding MiniLM-L6's first
    ``homog_layers`` layers, plain or rotated (same weights, :func:`unfuse`), on ``homog_sentences`` SST-2 dev
    sentences drawn with the seed (the seed also draws the rotation's signs); the pair statistics read an evenly
    spaced sample of ``homog_inputs`` of their tokens."""
    from icml26.smoothspike.analysis import spike_report
    from icml26.smoothspike.data import Tokenizer, load_glue
    from icml26.smoothspike.model import load_minilm, unfuse

    cfg = PRESETS[scale_value]
    base = _cached(load_minilm, cfg.homog_layers, n_outputs=2, max_len=cfg.homog_max_len)
    model = base if rotation == "none" else unfuse(base, rotation=rotation, seed=seed)
    dev = _cached(load_glue, "sst2", "dev")
    idx = np.random.default_rng([seed, 48, sentence_stream]).choice(len(dev), cfg.homog_sentences, replace=False)
    ids, mask = _cached(Tokenizer).encode([dev.texts[i] for i in idx], max_len=cfg.homog_max_len)
    with torch.no_grad():
        rows = [r for r in spike_report(model, torch.from_numpy(ids), torch.from_numpy(mask), cfg.homog_inputs)
                if r["site"] in ROTATED_SITES]  # fmt: skip
    resid = [r for r in rows if r["site"] in ("attn_in", "mlp_in")]
    return {
        "mean max |input|": float(np.mean([r["mean max |input|"] for r in resid])),
        "pooled collision": float(np.nanmean([r["large-input collision"] for r in rows])),
        "tokens used": float(min(cfg.homog_inputs, mask.sum())),
        "rows": [(r["layer"], r["site"]) for r in rows],
        "per row": [(r["per-neuron collision rate"], r["per-neuron count entropy [bits]"]) for r in rows],
    }


@functools.lru_cache(maxsize=8)
def _cached(fn, *args, **kwargs):
    return fn(*args, **kwargs)


@functools.lru_cache(maxsize=8)
def _glue_split(scale_value: str, task_name: str):
    """(train, validation, test) of a GLUE task: the validation split is carved from the shipped training subset
    with a fixed draw (the learning-rate choice reads it; never the dev set), the test is the dev set (a fixed
    seeded sample when it is larger than ``glue_test``). The same split for every seed and arm."""
    from icml26.smoothspike.data import load_glue

    cfg = PRESETS[scale_value]
    train, dev = load_glue(task_name, "train"), load_glue(task_name, "dev")
    perm = np.random.default_rng([48, 4]).permutation(len(train))
    val = train.subset(np.sort(perm[: cfg.glue_val]))
    train = train.subset(np.sort(perm[cfg.glue_val : cfg.glue_val + cfg.glue_train]))
    if len(dev) > cfg.glue_test:
        dev = dev.subset(np.sort(np.random.default_rng([48, 5]).choice(len(dev), cfg.glue_test, replace=False)))
    return train, val, dev


def _finetune_config(cfg):
    """The one budget of every GLUE model (teacher, baseline, SmoothSpike, learnable, A/A partners); the learning
    rate is chosen from a grid on the validation split."""
    from icml26.smoothspike.train import FinetuneConfig

    return FinetuneConfig(steps=cfg.glue_steps, batch=cfg.glue_batch, lr=cfg.glue_lrs[0],
                          warmup=max(1, cfg.glue_steps // 10), freeze_embeddings=True)  # fmt: skip


@functools.lru_cache(maxsize=8)
def _teacher(scale_value: str, task_name: str, recipe: str = "v1") -> dict:
    """:func:`_train_teacher` through the disk cache of :mod:`icml26.smoothspike.student_cache`."""
    from icml26.smoothspike import student_cache

    key = student_cache.student_key(PRESETS[scale_value], task=task_name, seed=None, rotation="teacher",
                                    partner=False, recipe=recipe, functions=_training_code())  # fmt: skip
    return student_cache.cached_student(key, lambda: _train_teacher(scale_value, task_name, recipe))


def _train_teacher(scale_value: str, task_name: str, recipe: str = "v1") -> dict:
    """The non-spiking MiniLM-L6 fine-tuned on the task with the students' budget (its rate chosen from
    ``teacher_lrs`` on the validation split; seed 0, shared by every seed and arm): its logits on the training
    texts (the students' distillation targets) and its dev score (the reference ceiling). ``recipe="cola-v2"``:
    better-glue-cola-v2's teacher (``cola_teacher_*`` of the preset: more steps, class-balanced cross-entropy)."""
    import time
    from dataclasses import replace

    from icml26.smoothspike.data import Tokenizer, glue_score, task_metrics
    from icml26.smoothspike.model import MiniLMClassifier
    from icml26.smoothspike.train import finetune_select, predict, teacher_logits

    torch.set_num_threads(1)
    cfg = PRESETS[scale_value]
    train, val, test = _glue_split(scale_value, task_name)
    max_len = cfg.glue_max_len[("sst2", "cola", "rte").index(task_name)]
    tok = _cached(Tokenizer)
    t0 = time.perf_counter()
    fc, lrs = _finetune_config(cfg), cfg.teacher_lrs
    if recipe == "cola-v2":
        fc = replace(fc, steps=cfg.cola_teacher_steps, warmup=max(1, cfg.cola_teacher_steps // 10),
                     class_weight=cfg.cola_teacher_class_weight)  # fmt: skip
        lrs = (cfg.cola_teacher_lr,)
    model, lr, _ = finetune_select(lambda: MiniLMClassifier(cfg.teacher_layers, 2, max_len, seed=0), train, val,
                                   tok, fc, lrs, seed=0)  # fmt: skip
    seconds = time.perf_counter() - t0
    return {
        "logits": teacher_logits(model, train, tok),
        "score": glue_score(task_name, task_metrics(test, predict(model, test, tok))),
        "lr": lr,
        "seconds": seconds,
    }


@functools.lru_cache(maxsize=128)  # predictions and probe numbers only (not the models): every arm shares them
def _trained(scale_value: str, seed: int, task_name: str, rotation: str, partner: bool = False,
             recipe: str = "v1") -> dict:  # fmt: skip
    """:func:`_train_student`, through the disk cache of :mod:`icml26.smoothspike.student_cache` (keyed by the
    preset, these arguments, the training and caching code, the data, the content of the weights and tokenizer
    files and the library versions): the per-task claims, their averages, learnable-vs-fixed and the smoothing
    probe read the same students across ``reproduce`` runs."""
    from icml26.smoothspike import student_cache

    key = student_cache.student_key(
        PRESETS[scale_value], task=task_name, seed=seed, rotation=rotation, partner=partner, recipe=recipe,
        functions=_training_code(),
    )  # fmt: skip
    return student_cache.cached_student(
        key, lambda: _train_student(scale_value, seed, task_name, rotation, partner, recipe)
    )


def _train_student(scale_value: str, seed: int, task_name: str, rotation: str, partner: bool = False,
                   recipe: str = "v1") -> dict:  # fmt: skip
    """One spiking student of the GLUE claims, as its dev labels, predictions, GLUE score and probe numbers. Every
    student holds MiniLM-L6's first ``glue_layers`` layers (rotated ones in the rotated parameterisation of the
    same weights, :func:`unfuse`), distils the MiniLM teacher's logits, and chooses its learning rate from the
    same grid on the validation split. Model and batch seeds are ``2000 + seed`` (v4's stream); ``partner=True``
    is an A/A partner: the same initialisation (head, rotation signs) with its own batch order (``3000 + seed``),
    while the claims' pairs share both. ``recipe="cola-v2"``: distilled from that recipe's teacher, on a fresh
    seed stream (``5000 + seed``; partners ``6000 + seed``)."""
    import time

    from icml26.smoothspike.data import Tokenizer, glue_score, task_metrics
    from icml26.smoothspike.train import build_model, finetune_select, predict

    torch.set_num_threads(1)
    cfg = PRESETS[scale_value]
    train, val, test = _glue_split(scale_value, task_name)
    max_len = cfg.glue_max_len[("sst2", "cola", "rte").index(task_name)]
    tok = _cached(Tokenizer)
    s = (5000 if recipe == "cola-v2" else 2000) + seed  # v4's seed stream (exploratory runs used seed 0)

    def make():
        return build_model("minilm", rotation=rotation, n_outputs=2, seed=s, max_len=max_len, layers=cfg.glue_layers)

    start = _rotation_matrices(make())
    t0 = time.perf_counter()
    teacher = _teacher(scale_value, task_name, recipe)["logits"]
    model, lr, val_scores = finetune_select(make, train, val, tok, _finetune_config(cfg), cfg.glue_lrs,
                                            s + 1000 * partner, teacher)  # fmt: skip
    seconds = time.perf_counter() - t0
    pred = predict(model, test, tok)
    drift = [float((b - a).norm() / a.norm()) for a, b in zip(start, _rotation_matrices(model), strict=True)]
    return {
        "labels": test.labels,
        "pred": pred,
        "score": glue_score(task_name, task_metrics(test, pred)),
        "lr": lr,
        "val": val_scores,
        "seconds": seconds,
        "max input": _residual_max_input(model, test),
        "rotation drift": float(np.mean(drift)) if drift else 0.0,
    }


def _training_code() -> tuple:
    """The functions of this module whose source text enters the student cache's key (what trains, scores and
    caches a student or teacher)."""
    return (_train_student, _train_teacher, _teacher, _trained, _cached, _glue_split, _finetune_config,
            _residual_max_input, _rotation_matrices)  # fmt: skip


def _rotation_matrices(model: SpikingEncoder) -> list[torch.Tensor]:
    from icml26.smoothspike.hadamard import LearnableRotation

    with torch.no_grad():
        return [m.matrix().detach().clone() for m in model.modules() if isinstance(m, LearnableRotation)]


def _handicapped(task: str, pred: np.ndarray, labels: np.ndarray, points: float, rng) -> np.ndarray:
    """The positive controls' plant: ``pred`` with correct answers turned wrong ((y + 1) mod classes), in a seeded
    random order, until the task's GLUE score (accuracy or Matthews, in points) has dropped by at least
    ``points`` (accuracy: exactly round(points % of the items); Matthews: one flip past the mark at most)."""
    from icml26.smoothspike.data import TextTask, glue_score, task_metrics

    classes = int(max(labels.max(), pred.max())) + 1

    def score(p):
        return glue_score(task, task_metrics(TextTask(task, ["x"] * len(labels), labels, ("0", "1")), p))

    out = pred.copy()
    order = rng.permutation(np.flatnonzero(pred == labels))
    if GLUE_METRIC[task] == "accuracy":  # closed form: each flip costs 100 / n points
        flip = order[: min(len(order), round(points / 100 * len(labels)))]
        out[flip] = (labels[flip] + 1) % classes
        return out
    start = score(pred)
    for i in order:
        if start - score(out) >= points:
            break
        out[i] = (labels[i] + 1) % classes
    return out


GLUE_METRIC = {"sst2": "accuracy", "cola": "matthews", "rte": "accuracy"}


def _recipe_of(recipe: str | dict[str, str], task: str) -> str:
    """The teacher recipe of ``task``: one for every task, or per task (better-glue-v7)."""
    return recipe if isinstance(recipe, str) else recipe[task]


def _glue_pair(scale: Scale, seed: int, ours: tuple[str, bool], theirs: str, tasks, plant: float | None,
               recipe: str | dict[str, str] = "v1"):  # fmt: skip
    """Per task: (our score, their score, our run, their run); ``ours`` = (rotation, A/A partner?); ``plant``
    handicaps their answers by that many points (the positive controls); ``recipe``: the teacher recipe (and so
    seed stream), one for all tasks or a dict task -> recipe."""
    from icml26.smoothspike.data import TextTask, glue_score, task_metrics

    out = {}
    for t in tasks:
        a = _trained(scale.value, seed, t, *ours, recipe=_recipe_of(recipe, t))
        b = _trained(scale.value, seed, t, theirs, recipe=_recipe_of(recipe, t))
        their_score = b["score"]
        if plant is not None:
            worse = _handicapped(t, b["pred"], b["labels"], plant, np.random.default_rng([seed, 82]))
            their_score = glue_score(t, task_metrics(TextTask(t, ["x"] * len(worse), b["labels"], ("0", "1")), worse))
        out[t] = (a["score"], their_score, a, b)
    return out


GLUE_NAMES = {"sst2": "SST-2 acc", "cola": "CoLA MCC", "rte": "RTE acc"}
GAIN_KEY = "GLUE gain, mean over the run's tasks [pt]"
GLUE_RECIPE = (
    "Spiking students initialised from MiniLM-L6 (its first layer at small, all 6 at paper) with SmoothSpike's "
    "randomized Hadamard rotations (H1, H2, H3) score higher than the unrotated Spikingformer-style baseline of the "
    "same size, initialisation, distillation teacher, batches, budget and learning-rate grid (each model's rate "
    "chosen on a validation split of the training data; every task the same steps, batch and grid)"
)
GLUE_CONTROL = (
    "A/A: a second baseline (no rotation) trained on its own batch order (seed + 1000) in SmoothSpike's place: "
    "the gain scatters around 0 and the claim must fail"
)
GLUE_POSITIVE = (
    "the same A/A pair with the baseline's dev answers handicapped by the paper's 8.2 GLUE points per task (correct "
    "answers turned wrong in a seeded order until its score drops by 8.2)"
)


def _glue_result(scale: Scale, seed: int, arm: Arm, tasks: tuple[str, ...],
                 recipe: str | dict[str, str] = "v1") -> ClaimResult:  # fmt: skip
    """The GLUE comparison on ``tasks``, shared by the per-task claims and the average: SmoothSpike (or, in the
    controls, the baseline's A/A partner) against the baseline, per task and averaged."""
    ours = ("hadamard", False) if arm is Arm.CLAIM else ("none", True)
    runs = _glue_pair(scale, seed, ours, "none", tasks, PAPER_GAIN_PT if arm is Arm.POSITIVE else None, recipe)
    measured, baselines = {}, {}
    gains = {t: r[0] - r[1] for t, r in runs.items()}
    measured[GAIN_KEY] = float(np.mean(list(gains.values())))
    for t, (ours_score, theirs_score, a, b) in runs.items():
        measured[f"GLUE gain, {GLUE_NAMES[t]} [pt]"] = gains[t]
        measured[f"SmoothSpike {GLUE_NAMES[t]} [pt]"] = ours_score
        measured[f"SmoothSpike lr, {t}"] = a["lr"]
        measured[f"train seconds per model (all rates), {t}"] = a["seconds"]
        baselines[f"baseline {GLUE_NAMES[t]} [pt]"] = theirs_score
        baselines[f"baseline lr, {t}"] = b["lr"]
        teacher = _teacher(scale.value, t, _recipe_of(recipe, t))
        baselines[f"MiniLM ANN teacher (ceiling) {GLUE_NAMES[t]} [pt]"] = teacher["score"]
        baselines[f"chance (majority class) {GLUE_NAMES[t]} [pt]"] = (
            0.0 if t == "cola" else 100 * float(np.bincount(b["labels"]).max() / len(b["labels"]))
        )
    holds = measured[GAIN_KEY] > 0
    fig, ax = _figure()
    x = np.arange(len(runs))
    ax.bar(x - 0.2, [r[1] for r in runs.values()], 0.4, label="baseline (no rotation)")
    ax.bar(x + 0.2, [r[0] for r in runs.values()], 0.4,
           label={Arm.CLAIM: "SmoothSpike (Hadamard)", Arm.NEGATIVE: "baseline A/A partner",
                  Arm.POSITIVE: "A/A partner vs handicapped baseline"}[arm])  # fmt: skip
    ax.set_xticks(x, [GLUE_NAMES[t] for t in runs])
    ax.set_ylabel("GLUE points (dev)")
    ax.legend(fontsize=7)
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={**PAPER_GLUE, "GLUE average gain [pt]": PAPER_GAIN_PT},
        reason="" if holds else "gains " + ", ".join(f"{t} {g:+.1f}" for t, g in gains.items()) + " points",
        figures={"glue-by-task": fig},
    )


def _glue_task_claim(task: str, metric: str):
    """One task's claim (v5's bar, fixed before it ran: the paper's direction, any gain > 0 points)."""

    @claim(
        f"smoothspike/better-glue-{task}-v1",
        statement=f"{GLUE_RECIPE}, in {metric} x 100 on the {task.upper()} dev set (paired over seeds, gain > 0 "
        "points)",
        paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points (no per-task gains "
        "in our notes)",
        control=GLUE_CONTROL,
        positive=GLUE_POSITIVE,
        mechanisms=("smoothing",),
        judge=Interval(f"GLUE gain, {GLUE_NAMES[task]} [pt]", above=0.0, discrete=True),  # steps of 100 / n items
    )
    def better_glue_task(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
        """SmoothSpike - baseline on this one task."""
        if task not in PRESETS[scale.value].glue_task_claims:
            why = "this preset does not run this task's claim"
            return ClaimResult("not-measured", reason=f"not run at {scale.value}: {why} (run --scale paper)")
        return _glue_result(scale, seed, arm, (task,))

    return better_glue_task


better_glue_sst2 = _glue_task_claim("sst2", "accuracy")
better_glue_cola = _glue_task_claim("cola", "Matthews correlation")
better_glue_rte = _glue_task_claim("rte", "accuracy")


@claim(
    "smoothspike/better-glue-cola-v2",
    statement=f"{GLUE_RECIPE}, in Matthews correlation x 100 on the CoLA dev set, with a teacher that learns CoLA: "
    "v1's teacher predicted the majority class, v2's is fine-tuned for 500 steps at lr 1e-4 with class-balanced "
    "cross-entropy (the best of a recipe search on CoLA's validation split, Matthews 0.154 there); the students' "
    "budget is unchanged, the seed stream fresh (5000 + seed) (paired over seeds, gain > 0 points)",
    paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points (no per-task gains in our "
    "notes)",
    control=GLUE_CONTROL,
    positive=GLUE_POSITIVE,
    mechanisms=("smoothing",),
    judge=Interval(f"GLUE gain, {GLUE_NAMES['cola']} [pt]", above=0.0, discrete=True),
)
def better_glue_cola_v2(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    """SmoothSpike - baseline on CoLA, distilled from the CoLA-v2 teacher."""
    return _glue_result(scale, seed, arm, ("cola",), recipe="cola-v2")


@claim(
    "smoothspike/better-glue-v6",
    statement=f"{GLUE_RECIPE}, averaged over the run's GLUE tasks on their dev sets in GLUE points: SST-2 "
    "(accuracy), CoLA (Matthews) and RTE (accuracy, pairs cut at 160 tokens) at small and paper, SST-2 alone at "
    "smoke (paired over seeds, mean gain > 0; v5 averaged SST-2 and CoLA only, RTE being too costly for it at small)",
    paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points",
    control=GLUE_CONTROL,
    positive=GLUE_POSITIVE,
    mechanisms=("smoothing",),
    judge=Interval(GAIN_KEY, above=0.0, discrete=True),
)
def better_glue(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    return _glue_result(scale, seed, arm, PRESETS[scale.value].glue_tasks)


V7_RECIPES = {"sst2": "v1", "cola": "cola-v2"}  # better-glue-v7's tasks and their teachers


@claim(
    "smoothspike/better-glue-v7",
    statement=f"{GLUE_RECIPE}, averaged over SST-2 (accuracy; better-glue-sst2-v1's students) and CoLA (Matthews; "
    "better-glue-cola-v2's students, distilled from the teacher that learns CoLA) on their dev sets, in GLUE "
    "points, at every scale (paired over seeds, mean gain > 0; v6 also averaged RTE and CoLA's majority-class "
    "teacher; RTE is judged alone by better-glue-rte-v1)",
    paper="GLUE average 66.8 (Spikingformer baseline) -> 75.0 (SmoothSpike), +8.2 points",
    control=GLUE_CONTROL,
    positive=GLUE_POSITIVE,
    mechanisms=("smoothing",),
    judge=Interval(GAIN_KEY, above=0.0, discrete=True),
)
def better_glue_v7(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    """SmoothSpike - baseline averaged over SST-2 (v1 teacher) and CoLA (v2 teacher): the same students as the
    two per-task claims (read from the student cache when they ran first)."""
    return _glue_result(scale, seed, arm, tuple(V7_RECIPES), recipe=V7_RECIPES)


LEARN_PLANT_PT = 2.0  # no paper number for learnable over fixed: the smallest gain we would call an improvement


@claim(
    "smoothspike/learnable-vs-fixed-v2",
    statement="The learnable orthogonal rotation (initialised at a randomized Hadamard matrix, msign by the "
    "authors' quintic Newton-Schulz) scores higher than the fixed randomized Hadamard rotation with the same "
    "MiniLM weights, teacher, batches, budget and learning-rate grid, on SST-2 at small (all 3 tasks at paper) "
    "(paired over seeds, gain > 0 points)",
    paper="a learnable orthogonal matrix updated via Newton-Schulz iterations improves adaptability across input "
    "distributions (abstract)",
    control="A/A: a second fixed randomized Hadamard model (the same signs, its own batch order) in the learnable "
    "one's place: the claim must fail",
    positive=f"the same A/A pair with the fixed model's dev answers handicapped by {LEARN_PLANT_PT:g} points (no "
    "paper number for the gap)",
    mechanisms=("learned-rotation",),
    judge=Interval("learnable - fixed, task mean [pt]", above=0.0, discrete=True),
)
def learnable_vs_fixed(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    if not cfg.learn_tasks:
        why = "the learnable rotation's 2 x cost did not fit beside better-glue's trainings (run --scale paper)"
        return ClaimResult("not-measured", reason=f"not run at {scale.value}: {why}")
    ours = ("learnable", False) if arm is Arm.CLAIM else ("hadamard", True)
    runs = _glue_pair(scale, seed, ours, "hadamard", cfg.learn_tasks, LEARN_PLANT_PT if arm is Arm.POSITIVE else None)
    gains = {t: r[0] - r[1] for t, r in runs.items()}
    mean_gain = float(np.mean(list(gains.values())))
    holds = mean_gain > 0.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "learnable - fixed, task mean [pt]": mean_gain,
            **{f"learnable - fixed, {GLUE_NAMES[t]} [pt]": g for t, g in gains.items()},
            **{f"learnable {GLUE_NAMES[t]} [pt]": r[0] for t, r in runs.items()},
            **{f"learnable lr, {t}": r[2]["lr"] for t, r in runs.items()},
        },
        baselines={f"fixed Hadamard {GLUE_NAMES[t]} [pt]": r[1] for t, r in runs.items()},
        paper={"learnable orthogonal vs fixed Hadamard": "learnable improves (abstract; no number)"},
        reason="" if holds else f"mean gain {mean_gain:+.2f} points",
    )


def _residual_max_input(model: SpikingEncoder, test, n_texts: int = 32) -> float:
    """Mean over layers and residual-stream LIF sites (attention and MLP inputs) of the mean max |input| over the
    (non-padding) tokens of the first ``n_texts`` texts."""
    from icml26.smoothspike.data import Tokenizer

    pairs = None if test.pairs is None else list(test.pairs[:n_texts])
    ids, mask = _cached(Tokenizer).encode(list(test.texts[:n_texts]), pairs, max_len=model.cfg.max_len)
    keep = torch.from_numpy(mask).bool()
    model.eval()
    model.record(True)
    try:
        with torch.no_grad():
            model(torch.from_numpy(ids), torch.from_numpy(mask))
        maxima = [float(blk.taps[site].mean(0)[keep].abs().amax(-1).mean())
                  for blk in model.blocks for site in ("attn_in", "mlp_in")]  # fmt: skip
    finally:
        model.record(False)
    return float(np.mean(maxima))


@mechanism(
    "smoothing",
    component="SmoothSpike's randomized Hadamard rotations spreading outlier channels before the LIFs",
    measures="1 - (mean max |input| of the residual-stream LIFs, rotated / plain) in the GLUE claim's fine-tuned "
    "SST-2 encoders on 32 dev sentences: how much the rotation lowers the largest LIF input",
    above=0.2,
)
def smoothing_probe(scale: Scale, seed: int) -> dict[str, float]:
    plain = _trained(scale.value, seed, "sst2", "none")["max input"]
    rotated = _trained(scale.value, seed, "sst2", "hadamard")["max input"]
    return {"smoothing": 1 - rotated / plain, "max |LIF input|, plain": plain, "max |LIF input|, rotated": rotated}


@mechanism(
    "learned-rotation",
    component="the learnable orthogonal rotations, msign(W) by quintic Newton-Schulz, trained with the model",
    measures="||msign(W) after - msign(W) before fine-tuning||_F / ||msign(W) before||_F, mean over the "
    "rotations of an SST-2 student trained with the GLUE recipe for probe_steps (30 at small) at the grid's largest "
    "rate (a fixed rotation reads 0)",
    above=0.01,
)
def learned_rotation_probe(scale: Scale, seed: int) -> float:
    """The GLUE recipe (MiniLM student, teacher, batches) for ``probe_steps`` steps at the grid's largest rate."""
    from dataclasses import replace

    from icml26.smoothspike.data import Tokenizer
    from icml26.smoothspike.train import build_model, finetune

    torch.set_num_threads(1)
    cfg = PRESETS[scale.value]
    train, _, _ = _glue_split(scale.value, "sst2")
    model = build_model("minilm", rotation="learnable", n_outputs=2, seed=seed, max_len=cfg.glue_max_len[0],
                        layers=cfg.glue_layers)  # fmt: skip
    start = _rotation_matrices(model)
    fc = replace(_finetune_config(cfg), steps=cfg.probe_steps, lr=max(cfg.glue_lrs))
    finetune(model, train, _cached(Tokenizer), fc, seed, _teacher(scale.value, "sst2")["logits"])
    return float(np.mean([float((b - a).norm() / a.norm()) for a, b in zip(start, _rotation_matrices(model),
                                                                            strict=True)]))  # fmt: skip


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


def _collision_check(seed: int) -> dict[str, float]:
    """The homogenisation claim's collision rate on inputs with a known code: the truth is an ideal rate code
    (count = input in steps of 0.01: distinct inputs never share a count), the alternative the claims' LIF (tau 2,
    T = 4) on the same inputs (a few count levels), the null inputs that all saturate the LIF (every input above
    2 fires at every step: all distinct inputs collide, rate 1)."""
    from icml26.smoothspike.analysis import homogenization, spike_counts

    gen = torch.Generator().manual_seed(seed)
    z = 1.1 + 1.8 * torch.rand(200, 16, generator=gen, dtype=torch.float64)  # (inputs, neurons)
    sat = 2.5 + torch.rand(200, 16, generator=gen, dtype=torch.float64)
    return {
        "truth": homogenization(z, torch.round(z / 0.01))["collision rate"],
        "LIF, T = 4": homogenization(z, spike_counts(z, 4))["collision rate"],
        "null": homogenization(sat, spike_counts(sat, 4))["collision rate"],
    }


def _gain_readings(seed: int) -> dict[str, float]:
    """The GLUE claim's gain [pt] on the smoke SST-2 dev sample, against the smoke baseline's answers: of the
    truth (the labels), of the baseline handicapped by 4.1, 8.2 (the paper's gain) and 16.4 points, and the null:
    the mean gain of 1,000 pairs of independent uniformly random answerers (no effect; the check asks whether the
    measure is unbiased at the null, not how noisy the sample is)."""
    from icml26.smoothspike.data import task_metrics

    run = _trained("smoke", seed, "sst2", "none")
    labels, base_pred = run["labels"], run["pred"]
    from icml26.smoothspike.data import TextTask

    test = TextTask("sst2", ["x"] * len(labels), labels, ("0", "1"))
    rng = np.random.default_rng([seed, 3])
    base = task_metrics(test, base_pred)["accuracy"]
    out = {"truth": 100 * (1.0 - base)}
    for points in (PAPER_GAIN_PT / 2, PAPER_GAIN_PT, 2 * PAPER_GAIN_PT):
        worse = task_metrics(test, _handicapped("sst2", base_pred, labels, points, rng))["accuracy"]
        out[f"planted {points:g} pt"] = 100 * (base - worse)
    coins = rng.integers(0, 2, (2, 1000, len(labels)))  # (answerer, pair, item)
    out["null"] = 100 * float(np.mean((coins[0] == labels).mean(1) - (coins[1] == labels).mean(1)))
    return out


def _gain_check(seed: int) -> dict[str, float]:
    """The gain of the truth scores best; the null reads 0 +- 1 point (the claim's bar is 0, the paper's gain 8.2)."""
    r = _gain_readings(seed)
    return {"truth": r["truth"], f"planted {PAPER_GAIN_PT:g} pt": r[f"planted {PAPER_GAIN_PT:g} pt"], "null": r["null"]}


def _gain_size_check(seed: int) -> dict[str, float]:
    """A planted gain reads at its size: |reading - 8.2| for a planted 8.2 points (truth: about 0, the 64 dev
    sentences' granularity 1.6 points allows 0.4), planted 4.1 and 16.4 points (alternatives: about 4.1 and 8.2
    off) and the null (about 8.2 off)."""
    r = {k: abs(v - PAPER_GAIN_PT) for k, v in _gain_readings(seed).items() if k != "truth"}
    return {"truth": r.pop(f"planted {PAPER_GAIN_PT:g} pt"), **r}


MEASURES = [
    MeasureCheck("bound exceed rate", _exceed_check, null_band=(0.99, 1.0), higher_is_better=False, margin=0.5),
    MeasureCheck(
        "collision rate of distinct high-amplitude inputs",
        _collision_check,
        null_band=(0.99, 1.0),
        higher_is_better=False,
        margin=0.1,
    ),
    MeasureCheck("accuracy gain [pt]", _gain_check, null_band=(-1.0, 1.0), margin=1.0),
    MeasureCheck(
        "|accuracy gain - 8.2| of a planted 8.2 pt",
        _gain_size_check,
        null_band=(PAPER_GAIN_PT - 1.0, PAPER_GAIN_PT + 1.0),
        higher_is_better=False,
        margin=2.0,
    ),
]
MECHANISMS = [smoothing_probe, learned_rotation_probe]
CLAIMS = [  # the costly homogenisation statistics last
    bound_holds,
    better_glue_sst2,
    better_glue_cola,
    better_glue_cola_v2,
    better_glue_rte,
    better_glue,
    better_glue_v7,
    learnable_vs_fixed,
    fusion_is_exact,
    less_homogenization,
]
