"""The paper's headline claims on the synthetic world (contextual teacher-defined brain, student family; README).

v2 (after a hostile review, issue 30): the brain is built from the teacher's *contextual* signal (word-type
means removed), the best layer is chosen by cross-validation on the training stories, compressions are matched
by damage, and every comparison is against an explicit baseline (untrained student, one-hot word identity).
Contract v3: every claim runs three arms (claim, negative control, positive control), the credited mechanisms
have liveness probes (``MECHANISMS``) and the predictivity measure is checked both ways (``MEASURES``).

- ``alignment-saturates-v2``: the *learned* gain (trained minus untrained student of the same width) rises from
  the smallest to the second-widest student, plateaus to the widest, and the smallest student's shortfall is
  larger in the semantic ROI. Negative: students trained on token-shuffled text. Positive: the brain's own
  generator (its word-level latents) plus noise as the two widest students (an A/A pair), and the same with the
  semantic ROI's directions at half amplitude as the smallest, over one shared untrained baseline.
- ``compression-robust-v2``: compressions matched to +2 % and +10 % held-out LM loss change normalised
  predictivity by < 0.03. Negative: the untrained widest student in every compressed model's place. Positive:
  a predictivity drop of 0.02 planted (features mixed with the untrained student's, calibrated on the training
  stories' CV score) in every compressed model's place.
- ``dissociation-v2``: under the +10 % compressions, (relative probe drop - relative predictivity drop) is
  larger on the teacher's brain than on a brain built from the probe labels (the pipeline's own artefact).
  Negative (A/A): a second label brain with its own voxel maps and noise in the teacher brain's place.
  Positive: that A/A arm with predictivity preserved by 0.075 (1.5x the margin) more than on the artefact baseline.
- ``gptq-exception-v3``: the paper's direction at 4 bits: GPTQ lowers predictivity more than RTN by > 0.01.
  Negative (A/A): GPTQ4 calibrated on an independent batch in RTN4's place. Positive: GPTQ at 2 bits (real
  quantisation damage) in GPTQ4's place.
- ``smollm2-compressed-v1`` (not measured: no real fMRI) is replaced by the real-fMRI claims of
  :mod:`icml26.slmbrain.realclaims` (issue 44): ``alice-learned-gain-v2``, ``alice-compression-v2``,
  ``alice-gptq-v3``. The claims above are kept as **synthetic-world mechanism checks**.
"""

from __future__ import annotations

import copy

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.slmbrain.compress import (
    calibration_batch,
    compress_model,
    gptq_quantize,
    layer_output_error,
    match_damage,
    rtn_quantize,
)
from icml26.slmbrain.config import PRESETS
from icml26.slmbrain.encoding import encode_layers, roi_scores
from icml26.slmbrain.lm import lm_loss, word_states
from icml26.slmbrain.probe import labels, probe_accuracy
from icml26.slmbrain.world import build_world, label_brain, onehot_features, story_features, student, tr_features

ROIS = ("syntactic", "semantic")
#: Offset of the seed stream an A/A arm draws its own randomness from.
AA_STREAM = 7919


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


def _setup(scale: Scale, seed: int):
    import torch

    torch.set_num_threads(1)
    return build_world(PRESETS[scale.value], seed)


def _mean(scores: dict[str, float]) -> float:
    return float(np.mean([scores[r] for r in ROIS]))


def predictivity_of(feats: list[np.ndarray], brain, layer: int | None = None) -> tuple[dict[str, float], int]:
    """Normalised r per ROI of per-story layerwise TR features ``(L, n_TR, p)`` (last story = test) at
    ``layer``, or at the layer with the best leave-stories-out CV score on the *training* stories (never the
    test story; the embedding layer 0 only when it is the only one)."""
    L = feats[0].shape[0]
    layers = [layer] if layer is not None else (range(1, L) if L > 1 else [0])
    best, res = encode_layers(feats[:-1], brain.train, feats[-1], brain.test, layers=layers)
    return roi_scores(res[best], brain.rois), best


_PREDICTIVITY: dict = {}
"""predictivity of the world's own models (teacher, cached students) on its brain: every arm, probe and measure
check of a seed reuses them. Keyed by identity; each value keeps its world alive, so an id is never reused."""


def predictivity(model, world, layer: int | None = None, brain=None) -> tuple[dict[str, float], int]:
    """:func:`predictivity_of` for a model's features on the world's brain (or ``brain``)."""
    owned = brain is None and (model is world.teacher or any(model is m for m in world.students.values()))
    key = (id(world), id(model), layer)
    if owned and key in _PREDICTIVITY:
        return _PREDICTIVITY[key][0]
    out = predictivity_of(story_features(model, world), world.brain if brain is None else brain, layer)
    if owned:
        _PREDICTIVITY[key] = (out, world)
    return out


def _generator_features(
    world, drop: str | None = None, keep: float = 0.0, noise: float = 0.0, rng: np.random.Generator | None = None
) -> list[np.ndarray]:
    """Per story, the brain's own word-level latents (pooled-standardised, as the voxels read them) downsampled to
    TRs, ``(1, n_TR, k)``; ``drop``: with that ROI's readout directions shrunk to ``keep`` of their amplitude (0:
    projected out); ``noise``: plus independent Gaussian noise of that sd per word and latent (drawn from ``rng``)."""
    brain = world.brain
    cat = np.concatenate(brain.latents)
    mu, sd = cat.mean(0), np.where(cat.std(0) > 0, cat.std(0), 1.0)
    out = []
    for h, story in zip(brain.latents, world.stories, strict=True):
        z = (h - mu) / sd  # (N, k)
        if drop is not None:
            B = brain.directions[drop]  # (k, k_roi), orthonormal columns
            z = z - (1.0 - keep) * (z @ B) @ B.T
        if noise > 0:
            z = z + noise * rng.standard_normal(z.shape)
        out.append(tr_features(z[None], story))
    return out


def lexical_predictivity(world, brain=None) -> dict[str, float]:
    """The one-hot word-identity baseline (FIR ridge on Lanczos-downsampled word counts; cached per world)."""
    key = (id(world), "one-hot", None)
    if brain is None and key in _PREDICTIVITY:
        return _PREDICTIVITY[key][0]
    out = predictivity_of(onehot_features(world), world.brain if brain is None else brain)[0]
    if brain is None:
        _PREDICTIVITY[key] = (out, world)
    return out


#: Positive control of alignment-saturates: the amplitude the planted smallest student keeps of the semantic ROI's
#: directions (0 removes them entirely: noise-free, a rise ~0.29, ~3x the 0.1 bar at smoke seed 0; a half keeps the
#: plant near the bar: 0.104 at smoke seed 0).
PLANTED_SEMANTIC_KEEP = 0.5


# ------------------------------------------------------------------------------------------ scale
@claim(
    "slmbrain/alignment-saturates-v2",
    statement="On a synthetic brain built from a teacher GPT's contextual states (word-type means removed; 2 ROIs), "
    "the learned gain in held-out noise-ceiling-normalised predictivity (trained student minus the untrained "
    "student of the same width; best layer by CV on the training stories; mean of ROIs) rises from the smallest "
    "to the second-widest student by > 0.1, changes by less than 0.05 from the second-widest to the widest "
    "(plateau), and the smallest student's shortfall against the widest is larger in the semantic ROI",
    paper="3B SLMs ~ larger LLMs up to 14B; 1B models degrade, most in semantic regions (abstract)",
    control="students trained on token-shuffled text (the same tokens in random order: word frequencies, no "
    "structure): there is nothing contextual to learn, the learned gain does not rise and the claim must fail",
    positive="a saturating, semantically deficient family planted near the bars: the brain's own generator (its "
    "word-level latents) plus independent noise (sd 0.5; one draw each) as the trained second-widest and widest "
    "students (an A/A pair: a true plateau of 0), the same with the semantic ROI's directions at half amplitude "
    "as the trained smallest; one shared baseline (the untrained widest student) for every width, so the planted "
    "gains are the planted features' differences",
    mechanisms=("learned-context",),
    judge=(
        Interval("rise: G(2nd widest) - G(smallest)", above=0.1),
        Interval("plateau: G(widest) - G(2nd widest)", above=-0.05, below=0.05),
        Interval("semantic shortfall - syntactic shortfall", above=0.0),
    ),
)
def alignment_saturates(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    w = _setup(scale, seed)
    widths = w.cfg.student_widths
    if arm is Arm.POSITIVE:  # the claimed shape planted: noisy generator for the wide, half its semantics small
        rng = np.random.default_rng([seed, AA_STREAM, 17])
        feats = {
            d: _generator_features(w, "semantic" if d == widths[0] else None, PLANTED_SEMANTIC_KEEP, 0.5, rng)
            for d in widths
        }  # each width its own noise draw
        trained = {d: predictivity_of(f, w.brain)[0] for d, f in feats.items()}
    else:  # the negative control trains the students on token-shuffled text
        trained = {d: predictivity(student(w, d, seed, shuffled=arm is Arm.NEGATIVE), w)[0] for d in widths}
    untrained = {d: predictivity(student(w, d, seed, trained=False), w)[0] for d in widths}
    if arm is Arm.POSITIVE:  # one shared baseline: the planted gains are the planted features' differences
        untrained = dict.fromkeys(widths, untrained[widths[-1]])
    gain = {d: {r: trained[d][r] - untrained[d][r] for r in ROIS} for d in widths}
    G = {d: _mean(g) for d, g in gain.items()}
    truth, _ = predictivity(w.teacher, w)
    lex = lexical_predictivity(w)
    small, mid, big = widths[0], widths[-2], widths[-1]
    rise, plateau = G[mid] - G[small], G[big] - G[mid]
    short = {r: gain[big][r] - gain[small][r] for r in ROIS}
    gap = short["semantic"] - short["syntactic"]
    holds = rise > 0.1 and -0.05 < plateau < 0.05 and gap > 0
    fig, ax = _figure()
    for i, roi in enumerate(ROIS):
        ax.plot(widths, [trained[d][roi] for d in widths], "o-", color=f"C{i}", label=f"trained ({roi})")
        ax.plot(widths, [untrained[d][roi] for d in widths], "x--", color=f"C{i}", label=f"untrained ({roi})")
        ax.axhline(truth[roi], ls=":", color=f"C{i}", label=f"teacher ({roi})")
        ax.axhline(lex[roi], ls="-.", color=f"C{i}", lw=0.8, label=f"one-hot words ({roi})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("student width d")
    ax.set_ylabel("normalised r (held-out story)")
    ax.legend(fontsize=6)
    measured = {
        "rise: G(2nd widest) - G(smallest)": rise,
        "plateau: G(widest) - G(2nd widest)": plateau,
        "semantic shortfall - syntactic shortfall": gap,
    }
    for d in widths:
        measured[f"learned gain G, d={d}"] = G[d]
        for r in ROIS:
            measured[f"{r} trained d={d}"] = trained[d][r]
    baselines = {f"teacher (truth) {r}": truth[r] for r in ROIS}
    baselines |= {f"one-hot word identity {r}": lex[r] for r in ROIS}
    for d in widths:
        baselines[f"untrained d={d}, mean of ROIs"] = _mean(untrained[d])
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={
            "3B SLMs vs LLMs up to 14B": "brain predictivity indistinguishable",
            "1B models": "degrade substantially, particularly in semantic language regions",
        },
        elsewhere={"encoding gain 125M -> 30B [Antonello et al. 2023]": "~ +15 %, logarithmic, no plateau"},
        reason="" if holds else f"learned-gain rise {rise:.3f}, plateau {plateau:.3f}, semantic - syntactic {gap:.3f}",
        figures={"predictivity-vs-width": fig},
    )


# ------------------------------------------------------------------------------------- compression
_CACHE: dict = {}
PROBED = ("agreement", "depth", "topic")
METHODS = {  # name -> (method, everything, strength range (lo, hi)); strength: 8 - bits, or sparsity
    "RTN (blocks)": ("rtn", False, (0.0, 8 - np.log2(3))),
    "RTN (blocks + embeddings + LM head)": ("rtn", True, (0.0, 8 - np.log2(3))),
    "magnitude pruning": ("magnitude", False, (0.0, 0.98)),
    "Wanda pruning": ("wanda", False, (0.0, 0.98)),
}


def _base(scale: Scale, seed: int):
    """The world, the widest trained student, its CV-chosen layer and a calibration batch (cached)."""
    key = ("base", scale, seed)
    if key not in _CACHE:
        w = _setup(scale, seed)
        m = student(w, w.cfg.student_widths[-1], seed)
        _CACHE[key] = (w, m, predictivity(m, w)[1], calibration_batch(w.text.ids, 32, m.ctx, seed=seed))
    return _CACHE[key]


def _compressed(model, method: str, strength: float, calib, everything: bool = False):
    m = copy.deepcopy(model)
    if method == "rtn":
        compress_model(m, "rtn", bits=8 - strength, everything=everything)
    elif method == "gptq":
        compress_model(m, "gptq", bits=8 - strength, calib=calib)
    elif strength > 0:
        compress_model(m, method, sparsity=strength, calib=calib, everything=everything)
    return m


def _evaluate(w, m, layer: int, probes: bool, brain=None) -> dict:
    """Normalised r per ROI and their mean at ``layer``, held-out LM loss, probe accuracies at ``layer``."""
    scores, _ = predictivity(m, w, layer=layer, brain=brain)
    out = {"r": _mean(scores), "loss": lm_loss(m, w.heldout.ids), **scores}
    if probes:
        states = [word_states(m, s.corpus.ids)[layer] for s in w.stories]
        out["probe"] = {p: _probe(w, states, p) for p in PROBED}
    return out


def _probe(w, states: list[np.ndarray], prop: str) -> float:
    ytr = np.concatenate([labels(s.corpus, prop) for s in w.stories[:-1]])
    return probe_accuracy(np.concatenate(states[:-1]), ytr, states[-1], labels(w.stories[-1].corpus, prop))


def _chance(w, prop: str) -> float:
    """Accuracy on the test story of always answering the training stories' majority class."""
    ytr = np.concatenate([labels(s.corpus, prop) for s in w.stories[:-1]])
    y = labels(w.stories[-1].corpus, prop)
    return float(np.mean(y[y >= 0] == np.bincount(ytr[ytr >= 0]).argmax()))


def damage_matched(scale: Scale, seed: int, target: float) -> dict[str, tuple[float, float, object]]:
    """Per method, the compressed widest student whose held-out LM loss rises by ``target`` (relative):
    ``name -> (strength, achieved relative increase, model)``. Strength: 8 - bits (RTN) or sparsity."""
    key = ("matched", scale, seed, target)
    if key not in _CACHE:
        w, base, _, calib = _base(scale, seed)
        out = {}
        for name, (method, everything, (lo, hi)) in METHODS.items():
            out[name] = match_damage(
                lambda s, method=method, everything=everything: _compressed(base, method, s, calib, everything),
                lambda m: lm_loss(m, w.heldout.ids),
                target,
                lo,
                hi,
            )
        _CACHE[key] = out
    return _CACHE[key]


def _full(scale: Scale, seed: int, brain_kind: str = "teacher") -> dict:
    key = ("full", scale, seed, brain_kind)
    if key not in _CACHE:
        w, base, layer, _ = _base(scale, seed)
        brain = _brain(w, seed, brain_kind)
        out = _evaluate(w, base, layer, probes=True, brain=brain)
        out["lexical"] = _mean(lexical_predictivity(w, brain))
        _CACHE[key] = out
    return _CACHE[key]


@claim(
    "slmbrain/compression-robust-v2",
    statement="Each of four compressions of the widest student (RTN per row on the blocks; RTN also on the "
    "embeddings and LM head; magnitude and Wanda pruning per row), with its strength (bits / sparsity) matched "
    "to a +2 % and to a +10 % relative increase of held-out LM loss, changes the held-out noise-ceiling-normalised "
    "predictivity of the contextual brain (mean of ROIs, at the uncompressed model's CV-chosen layer) by less "
    "than 0.03: max |delta r| < 0.03 at each damage level",
    paper="brain alignment is remarkably robust to compression: most quantization and pruning methods preserve "
    "neural predictivity (abstract)",
    control="every compressed model replaced by the untrained widest student (the same architecture at its "
    "initial weights: a 'compression' that removes everything training put in the weights): predictivity of "
    "the contextual brain must move by more than 0.03 and the claim must fail",
    positive="a predictivity drop planted at two thirds of the bar in every compressed model's place: the widest "
    "student's features mixed with the untrained one's, (1 - t) F + t U, t set so the training stories' CV score "
    "falls as a 0.02 drop of normalised r would; judged on the held-out story, where it must stay within 0.03",
    mechanisms=("matched-damage",),
    judge=(
        Interval("max |delta r|, +2 % LM loss", below=0.03),
        Interval("max |delta r|, +10 % LM loss", below=0.03),
    ),
)
def compression_robust(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    w, _, layer, _ = _base(scale, seed)
    full = _full(scale, seed)
    measured, baselines, worst = {}, {}, {}
    control = arm is not Arm.CLAIM
    stand_in = None  # a control's model in every compressed model's place, evaluated once
    if arm is Arm.NEGATIVE:  # the untrained widest student: everything training put in the weights removed
        stand_in = _evaluate(w, student(w, w.cfg.student_widths[-1], seed, trained=False), layer, probes=False)
    elif arm is Arm.POSITIVE:  # a predictivity drop planted at two thirds of the bar (calibrated off the test story)
        stand_in = _planted_drop(scale, seed)
        baselines["planted: share t of the untrained student's features"] = stand_in["t"]
        baselines["planted: relative drop of the training stories' CV R^2"] = stand_in["cv drop"]
    fig, ax = _figure()
    for target in w.cfg.damage_targets:
        tag = f"+{100 * target:.0f} % LM loss"
        dr = {}
        for name, (s, rel, m) in damage_matched(scale, seed, target).items():
            ev = stand_in if control else _evaluate(w, m, layer, probes=False)  # the one line the controls change
            dr[name] = ev["r"] - full["r"]
            measured[f"delta r, {name}, {tag}"] = dr[name]
            if arm is not Arm.POSITIVE:  # the planted arm is features, not a model: it has no LM loss
                achieved = ev["loss"] / full["loss"] - 1 if control else rel
                baselines[f"achieved rel. LM-loss increase, {name}, {tag}"] = achieved
            rtn = name.startswith("RTN")
            baselines[f"{'bits' if rtn else 'sparsity'}, {name}, {tag}"] = 8 - s if rtn else s
            ax.scatter(target, dr[name], color=f"C{list(METHODS).index(name)}", label=name if target == 0.02 else None)
        worst[target] = max(abs(v) for v in dr.values())
        measured[f"max |delta r|, {tag}"] = worst[target]
    measured["uncompressed P - one-hot P (above lexical)"] = full["r"] - full["lexical"]
    baselines["uncompressed normalised r"] = full["r"]
    baselines["one-hot word identity normalised r"] = full["lexical"]
    baselines["uncompressed LM loss (nats)"] = full["loss"]
    holds = all(v < 0.03 for v in worst.values())
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel("matched relative LM-loss increase")
    ax.set_ylabel("delta normalised r (held-out story)")
    ax.legend(fontsize=7)
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={"compression": "most quantization and pruning methods preserve neural predictivity"},
        reason="" if holds else "max |delta r| " + ", ".join(f"{v:.3f} at +{100 * t:.0f} %" for t, v in worst.items()),
        figures={"delta-r-vs-damage": fig},
    )


#: Positive control of compression-robust: the drop of normalised predictivity planted, two thirds of the 0.03 bar.
PLANTED_DROP = 0.02


def _planted_drop(scale: Scale, seed: int) -> dict[str, float]:
    """A 'compression' whose predictivity drop is planted at ``PLANTED_DROP``: the widest student's TR features mixed
    with the untrained widest student's, both standardised per column, ``(1 - t) z(F) + t z(U)``, at the CV-chosen
    layer; ``t`` found by bisection so that the cross-validated fit on the *training* stories (himalaya's score,
    -MSE of z-scored voxels, so R^2_cv = 1 + score) falls as a relative drop ``PLANTED_DROP / r`` of the correlation
    would (R^2 scaling by ``(1 - PLANTED_DROP / r)^2``). The held-out story, which every arm is judged on, never
    enters the calibration, so its drop scatters around the plant and the control can miss the bar."""
    key = ("planted-drop", scale, seed)
    if key not in _CACHE:
        w, base, layer, _ = _base(scale, seed)
        full = _full(scale, seed)

        def standardised(model) -> list[np.ndarray]:
            feats = [f[layer] for f in story_features(model, w)]  # per story (n_TR, d)
            cat = np.concatenate(feats)
            return [(f - cat.mean(0)) / (cat.std(0) + 1e-8) for f in feats]

        F = standardised(base)
        U = standardised(student(w, w.cfg.student_widths[-1], seed, trained=False))

        def encoded(t: float):
            feats = [((1 - t) * f + t * u)[None] for f, u in zip(F, U, strict=True)]  # (1, n_TR, d)
            return encode_layers(feats[:-1], w.brain.train, feats[-1], w.brain.test, layers=[0])[1][0]

        r2_0 = 1 + encoded(0.0).cv_score
        goal = r2_0 * (1 - PLANTED_DROP / max(full["r"], 1e-6)) ** 2 - 1
        lo, hi = 0.0, 1.0
        for _ in range(8):  # t to 1/256
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if encoded(mid).cv_score > goal else (lo, mid)
        res = encoded((lo + hi) / 2)
        _CACHE[key] = {
            "r": _mean(roi_scores(res, w.brain.rois)),
            "r at t = 0": _mean(roi_scores(encoded(0.0), w.brain.rois)),
            "t": (lo + hi) / 2,
            "cv drop": 1 - (1 + res.cv_score) / r2_0,
        }
    return _CACHE[key]


def _brain(w, seed: int, brain_kind: str):
    """The brain ``brain_kind`` names: the teacher's (None: the world's), the label brain, or a second label brain
    with its own voxel maps and noise (``labels-aa``, the A/A arm)."""
    if brain_kind == "teacher":
        return None
    return label_brain(w, seed + AA_STREAM if brain_kind == "labels-aa" else seed)


#: Positive control of dissociation: how much more predictivity the planted arm keeps than the label brain
#: (1.5x the claim's 0.05 margin).
PLANTED_DISSOCIATION = 0.075


def _drops(scale: Scale, seed: int, brain_kind: str) -> tuple[dict[str, float], dict[str, float], dict]:
    """Per +10 %-matched compression: relative drop of above-chance probe accuracy (summed over probes; chance =
    the training majority class) and relative drop of normalised predictivity on the brain ``brain_kind``
    ("teacher", "labels": the brain built from the probe labels, or "labels-aa": a second one)."""
    key = ("drops", scale, seed, brain_kind)
    if key in _CACHE:
        return _CACHE[key]
    w, _, layer, _ = _base(scale, seed)
    brain = _brain(w, seed, brain_kind)
    full = _full(scale, seed, brain_kind)
    probe_drop, brain_drop = {}, {}
    above = max(sum(max(full["probe"][p] - _chance(w, p), 0.0) for p in PROBED), 0.05)
    for name, (_, _, m) in damage_matched(scale, seed, max(w.cfg.damage_targets)).items():
        ev = _evaluate(w, m, layer, probes=True, brain=brain)
        probe_drop[name] = sum(full["probe"][p] - ev["probe"][p] for p in PROBED) / above
        brain_drop[name] = (full["r"] - ev["r"]) / max(abs(full["r"]), 1e-6)
    _CACHE[key] = probe_drop, brain_drop, full
    return _CACHE[key]


@claim(
    "slmbrain/dissociation-v2",
    statement="Under the four compressions matched to +10 % held-out LM loss, the dissociation D = relative drop of "
    "above-chance probe accuracy (agreement, depth, topic; CV-chosen layer) - relative drop of normalised "
    "predictivity (both relative drops, positive = worse) is larger on the teacher's contextual brain than on a "
    "brain built from the probe labels themselves (the pipeline's own artefact: TR-level ridge vs word-level "
    "probes), by more than 0.05: D(teacher brain) - D(label brain) > 0.05",
    paper="compression degrades discourse, syntax, and morphology, yet brain predictivity remains largely unchanged "
    "(abstract)",
    control="A/A: a second brain built from the probe labels, with its own voxel maps and noise, in the teacher "
    "brain's place: the difference of dissociations scatters around 0",
    positive="that A/A arm with every relative predictivity drop lowered by 0.075 (predictivity preserved by "
    "0.075 more than on the artefact baseline, 1.5x the claimed margin)",
    mechanisms=("matched-damage",),
    judge=Interval("D(teacher brain) - D(label brain)", above=0.05),
)
def dissociation(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    w = _setup(scale, seed)
    pd, bd, full = _drops(scale, seed, "teacher" if arm is Arm.CLAIM else "labels-aa")  # the line the arms change
    if arm is Arm.POSITIVE:  # the claimed dissociation planted on the A/A arm
        bd = {name: v - PLANTED_DISSOCIATION for name, v in bd.items()}
    pd_l, bd_l, full_l = _drops(scale, seed, "labels")
    D = float(np.mean(list(pd.values())) - np.mean(list(bd.values())))
    D_l = float(np.mean(list(pd_l.values())) - np.mean(list(bd_l.values())))
    stat = D - D_l
    holds = stat > 0.05
    fig, ax = _figure()
    for i, name in enumerate(pd):
        ax.scatter(pd[name], bd[name], color=f"C{i}", label=name)
        ax.scatter(pd_l[name], bd_l[name], color=f"C{i}", marker="x")
    ax.plot([0, 1], [0, 1], "k:", lw=0.7)
    ax.set_xlabel("relative drop of above-chance probe accuracy")
    ax.set_ylabel("relative drop of normalised r (o: teacher brain, x: label brain)")
    ax.set_title("predictivity vs probe accuracy under compression (+10 % LM loss)", fontsize=9)
    ax.legend(fontsize=7)
    measured = {
        "D(teacher brain) - D(label brain)": stat,
        "D(teacher brain)": D,
        "D(label brain)": D_l,
        "mean rel. probe drop": float(np.mean(list(pd.values()))),
        "mean rel. predictivity drop, teacher brain": float(np.mean(list(bd.values()))),
        "mean rel. predictivity drop, label brain": float(np.mean(list(bd_l.values()))),
    }
    for name in pd:
        measured[f"rel. probe drop, {name}"] = pd[name]
        measured[f"rel. predictivity drop, {name}"] = bd[name]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines={
            "uncompressed normalised r, teacher brain": full["r"],
            "uncompressed normalised r, label brain": full_l["r"],
            **{f"uncompressed probe {p}": v for p, v in full["probe"].items()},
            **{f"chance (training majority class) {p}": _chance(w, p) for p in PROBED},
        },
        paper={"probing": "compression degrades discourse, syntax and morphology; predictivity largely unchanged"},
        reason="" if holds else f"D(teacher brain) {D:.3f} vs D(label brain) {D_l:.3f}",
        figures={"predictivity-vs-probe": fig},
    )


@claim(
    "slmbrain/gptq-exception-v3",
    statement="The paper's GPTQ exception at 4 bits: at equal 4 bits and the same per-row grid, GPTQ lowers the "
    "widest student's held-out normalised predictivity more than RTN does, by more than 0.01: delta r RTN4 - "
    "delta r GPTQ4 > 0.01 (paired over seeds); GPTQ's lower output error than RTN on the first block's fc1 "
    "(calibration inputs) is measured on every run",
    paper="GPTQ as a consistent exception to compression robustness (abstract)",
    control="A/A: GPTQ4 calibrated on an independent calibration batch (its own seed stream) in RTN4's place: two "
    "GPTQ4 models, the difference scatters around 0",
    positive="GPTQ at 2 bits (the same algorithm on a 4x coarser grid: real quantisation damage) in GPTQ4's place: "
    "could this pipeline see a GPTQ that damages the model lower predictivity by 0.01?",
    mechanisms=("quantisation-damage-4bit",),
    judge=Interval("delta r RTN4 - delta r GPTQ4", above=0.01),
)
def gptq_exception(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    w, base, layer, calib = _base(scale, seed)
    full = _full(scale, seed)
    if arm is Arm.NEGATIVE:  # A/A: a second GPTQ4 on its own calibration batch as the comparator
        other_calib = calibration_batch(w.text.ids, 32, base.ctx, seed=seed + AA_STREAM)
        ref = _evaluate(w, _compressed(base, "gptq", 4, other_calib), layer, probes=False)
    else:
        ref = _evaluate(w, _compressed(base, "rtn", 4, calib), layer, probes=False)
    bits = 2 if arm is Arm.POSITIVE else 4  # the positive control: a GPTQ that damages the model
    gptq = _evaluate(w, _compressed(base, "gptq", 8 - bits, calib), layer, probes=False)
    errs = _layer_errors(base, calib)
    diff = (ref["r"] - full["r"]) - (gptq["r"] - full["r"])
    holds = diff > 0.01
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "delta r RTN4 - delta r GPTQ4": diff,
            "delta r GPTQ4": gptq["r"] - full["r"],
            "rel. delta LM loss GPTQ4": (gptq["loss"] - full["loss"]) / full["loss"],
            "fc1 output error GPTQ4 / RTN4 (one layer, same inputs)": errs["gptq"] / errs["rtn"],
        },
        baselines={
            "delta r RTN4": ref["r"] - full["r"],
            "rel. delta LM loss RTN4": (ref["loss"] - full["loss"]) / full["loss"],
        },
        paper={"GPTQ": "a consistent exception: lower predictivity than the other compression methods"},
        reason="" if holds else f"RTN4 - GPTQ4 delta r = {diff:.4f}: GPTQ is not 0.01 below RTN",
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


# ------------------------------------------------------------------------------------- mechanisms and measures


@mechanism(
    "learned-context",
    component="what training puts into the students: the contextual (non-lexical) signal the brain is built from",
    measures="held-out-story R^2 of a ridge decoding the brain's word-level contextual latents from the widest "
    "student's word states (all layers), trained student minus the same architecture trained on token-shuffled "
    "text (same tokens and budget, no structure: the ablated reference); read on words, not on the brain",
    above=0.05,
)
def learned_context(scale: Scale, seed: int) -> dict[str, float]:
    w = _setup(scale, seed)
    d = w.cfg.student_widths[-1]
    r2 = {
        kind: _decode_latents(w, student(w, d, seed, trained=kind != "untrained", shuffled=kind == "shuffled"))
        for kind in ("trained", "shuffled", "untrained")
    }
    return {
        "learned-context": r2["trained"] - r2["shuffled"],
        "latent R^2, trained widest": r2["trained"],
        "latent R^2, trained on shuffled text": r2["shuffled"],
        "latent R^2, untrained widest": r2["untrained"],
    }


def _decode_latents(w, model) -> float:
    """R^2 (pooled over the brain's k latents) on the held-out story's words of a ridge (alpha by CV on the training
    stories' words) from the model's word states at every layer ``(N, (L+1) d)`` to the brain's latents ``(N, k)``."""
    from sklearn.linear_model import RidgeCV

    X = [word_states(model, s.corpus.ids).transpose(1, 0, 2).reshape(len(s.corpus.ids), -1) for s in w.stories]
    Y = w.brain.latents
    mu, sd = np.concatenate(X[:-1]).mean(0), np.concatenate(X[:-1]).std(0) + 1e-8
    fit = RidgeCV(alphas=np.logspace(-2, 4, 7)).fit((np.concatenate(X[:-1]) - mu) / sd, np.concatenate(Y[:-1]))
    pred = fit.predict((X[-1] - mu) / sd)  # (N_test, k)
    return float(1 - np.sum((Y[-1] - pred) ** 2) / np.sum((Y[-1] - Y[-1].mean(0)) ** 2))


def _widest_predictivity(scale: Scale, seed: int, trained: bool) -> float:
    """Normalised predictivity (mean of ROIs, CV-chosen layer) of the widest student, trained or not (cached)."""
    key = ("widest", scale, seed, trained)
    if key not in _CACHE:
        w = _setup(scale, seed)
        _CACHE[key] = _mean(predictivity(student(w, w.cfg.student_widths[-1], seed, trained=trained), w)[0])
    return _CACHE[key]


@mechanism(
    "matched-damage",
    component="the damage-matched compressions (RTN, RTN everywhere, magnitude, Wanda) at +10 % LM loss",
    measures="share of the four methods whose matched model reaches at least half the targeted +10 % relative "
    "LM-loss increase (a method that cannot damage the model has nothing to be robust to; live when at least two "
    "of the four can be tested)",
    above=0.4,
)
def matched_damage(scale: Scale, seed: int) -> dict[str, float]:
    target = max(PRESETS[scale.value].damage_targets)
    reached = {name: rel / target for name, (_, rel, _) in damage_matched(scale, seed, target).items()}
    share = float(np.mean([r >= 0.5 for r in reached.values()]))
    return {"matched-damage": share, **{f"achieved / target, {k}": v for k, v in reached.items()}}


@mechanism(
    "quantisation-damage-4bit",
    component="4-bit quantisation of the widest student (GPTQ, with RTN for reference): the damage the paper's "
    "GPTQ exception would show in",
    measures="relative held-out LM-loss increase of the GPTQ4 model (live above 0.5 %, the order of 4-bit GPTQ's "
    "perplexity cost on LLMs)",
    above=0.005,
)
def quantisation_damage_4bit(scale: Scale, seed: int) -> dict[str, float]:
    w, base, _, calib = _base(scale, seed)
    loss = lm_loss(base, w.heldout.ids)
    gptq = lm_loss(_compressed(base, "gptq", 4, calib), w.heldout.ids) / loss - 1
    rtn = lm_loss(_compressed(base, "rtn", 4, calib), w.heldout.ids) / loss - 1
    return {"quantisation-damage-4bit": gptq, "rel. LM-loss increase RTN4": rtn}


def _predictivity_check(seed: int) -> dict[str, float]:
    """Normalised predictivity (mean of ROIs, the claims' measure) at smoke size of the brain's own generator
    (truth), the widest trained and untrained students, and Gaussian noise features of the generator's shape (null:
    the mean over 4 independent draws, about 0; one draw scatters by ~0.02)."""
    w = _setup(Scale.SMOKE, seed)
    truth = _generator_features(w)
    rng = np.random.default_rng(seed + AA_STREAM)
    null = [_mean(predictivity_of([rng.standard_normal(f.shape) for f in truth], w.brain)[0]) for _ in range(4)]
    return {
        "truth": _mean(predictivity_of(truth, w.brain)[0]),
        "widest student": _widest_predictivity(Scale.SMOKE, seed, True),
        "widest student, untrained": _widest_predictivity(Scale.SMOKE, seed, False),
        "null": float(np.mean(null)),
    }


def _planted_drop_check(seed: int) -> dict[str, float]:
    """The drop of normalised predictivity on the held-out story of compression-robust's planted arm (planted at
    ``PLANTED_DROP``, calibrated on the training stories only: truth) and of the same pipeline at t = 0
    (standardised features, nothing mixed in; the null, ~0). At smoke the calibration on two short training stories
    scatters by a factor of ten (0.007, 0.066, 0.026, 0.069 on seeds 0-3; 0.022 [0.005, 0.039] over 5 seeds at
    small), so the check asks only that the planted drop reads above the null by a quarter of its size."""
    planted, full = _planted_drop(Scale.SMOKE, seed), _full(Scale.SMOKE, seed)
    return {"truth": full["r"] - planted["r"], "null": full["r"] - planted["r at t = 0"]}


MEASURES = [
    MeasureCheck("normalised predictivity", _predictivity_check, null_band=(-0.03, 0.03), margin=0.05),
    MeasureCheck("predictivity drop, planted at 0.02", _planted_drop_check, null_band=(-0.005, 0.005), margin=0.005),
]
from icml26.slmbrain.realclaims import REAL_CLAIMS, REAL_MECHANISMS  # noqa: E402  (real fMRI, issue 44)

MECHANISMS = [learned_context, matched_damage, quantisation_damage_4bit, *REAL_MECHANISMS]
CLAIMS = [alignment_saturates, compression_robust, dissociation, gptq_exception, *REAL_CLAIMS]
