"""The paper's headline claims on a zoo of small models trained on real images (scikit-learn digits) and a
synthetic brain with known ground truth, and on real language fMRI (see README "Claims").

- ``performance-predicts-alignment-v2``: across the zoo, alignment (RBF-CKA, sigma = 12) with a brain read out of
  a *trained* reference network correlates with test accuracy, and more (by > 0.15) than with a brain read out of
  an *untrained* reference network (which removes the generic part: wider, better-conditioned features align
  more with anything); on fresh seeds.
- ``hierarchy-v1``: deeper ROIs are best matched by deeper layers.
- ``granger-calibrated-v1``: the bidirectional Granger pipeline on training trajectories is calibrated
  (permutation-null false-positive rate near 5 %) and finds a planted direction; the paper's
  "alignment precedes performance" counts are reported, not asserted.
- ``scale-out-v1``: the alignment table computed by workers (Ray) equals the single-process table.
- ``real-performance-alignment-v4``: on real language fMRI (Alice, 28 listeners, 6 ROIs), word-level GPT-2s with
  lower held-out loss predict the real ROIs better than story-free brains (each listener's time course circularly
  shifted): Spearman rho(-loss, alignment) on the real brain minus the mean rho over K shifted brains > 0.2; its
  A/A puts one shifted brain in the real one's place, its positive plants a fixed-size performance-tracking part.
- ``real-granger-v3``: along the same zoo's training trajectories (a checkpoint every 20 steps), past alignment
  to the real brain Granger-predicts future performance more than the reverse (robust HC3 Wald tests on first
  differences, both directions), beyond the asymmetry the alignment of an independently seeded zoo shows (which
  is generic to learning curves); its A/A compares two such cross-zoo pairings, its positive plants alignment ->
  performance into the first.
- ``real-region-v3``: the final models' story-locked alignment (real minus the mean over K shifted brains,
  noise-ceiling-normalised) is larger in the integrative ROIs (anterior temporal lobes, inferior parietal lobule)
  than in the posterior temporal, premotor and inferior frontal ones.

A review labelled the first two "by construction": the synthetic brain is read out of a trained MLP of the zoo's
own family, so they show that the engine recovers a planted convergence and hierarchy, not that brains converge;
``scale-out`` is labelled too (an equality of two code paths, an integration check rather than a paper claim).

Contract v3: every claim runs a negative control (the effect removed, with its own randomness: for
``performance-predicts-alignment`` an A/A pair of untrained-reference brains) and a positive
control (the effect planted at about its bar: an accuracy-tracking alignment read with noise, 1.25x the delta-r
margin above the generic part in expectation;
the brain's own generator as the zoo; a Granger null where the F-test's assumptions hold; a brain stored in the
features' order). ``MECHANISMS`` probe what the brain carries (learned structure, a layer hierarchy) and whether
the trajectories move; ``MEASURES`` checks RBF-CKA both ways (the generator scores best, a stimulus-shuffled
brain near the null).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.brainconverge.alignment import BrainCache, align_models, align_models_pool, align_models_ray
from icml26.brainconverge.analysis import (
    granger,
    granger_bidirectional,
    granger_null_fpr,
    hierarchy_slope,
    model_alignment,
    performance_correlation,
    planted_pair,
    regional_organisation,
)
from icml26.brainconverge.config import PRESETS
from icml26.brainconverge.data import BrainData, build_net, load_images, synthetic_brain, train_mlp, zoo_specs
from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism

#: Positive control of performance-predicts-alignment: the paper's vision-model correlation.
PAPER_VISION_R = 0.53


def _figure(w=5.5, h=4):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(w, h))


@functools.lru_cache(maxsize=8)  # every claim and its control reuse one world per seed (5 seeds at small)
def world(scale: str, seed: int):
    """Images, the trained and untrained reference networks, their synthetic brains, and the trained zoo."""
    torch.set_num_threads(1)
    cfg = PRESETS[scale]
    sp = load_images(cfg.data, seed=seed, n_stim=cfg.n_stim, n_test=cfg.n_test)
    kw = {"width": cfg.ref_width, "depth": cfg.ref_depth}
    ref = train_mlp(sp, epochs=cfg.ref_epochs, seed=10_000 + seed, name="reference", **kw)
    ref0 = train_mlp(sp, epochs=0, seed=20_000 + seed, name="untrained-reference", **kw)
    brains = {
        "trained": synthetic_brain(ref.net, sp.X_stim, sp.stim_ids, voxels=cfg.voxels, snr=cfg.snr, seed=seed),
        "untrained": synthetic_brain(ref0.net, sp.X_stim, sp.stim_ids, voxels=cfg.voxels, snr=cfg.snr, seed=seed),
    }
    zoo = [train_mlp(sp, **s) for s in zoo_specs(cfg.zoo_models, seed)]
    return sp, ref, zoo, brains


def _caches(brain: BrainData, stim_ids, metric="rbf-cka", shuffle_rng=None):
    rois = brain.roi_responses(stim_ids)
    if shuffle_rng is not None:  # voxel responses shuffled across stimuli (one permutation per subject)
        rois = {s: _permute_rows(r, shuffle_rng) for s, r in rois.items()}
    return {s: BrainCache(r, metric) for s, r in rois.items()}


def _permute_rows(rois: dict, rng):
    perm = rng.permutation(len(next(iter(rois.values()))))
    return {k: v[perm] for k, v in rois.items()}


def _items(models):
    return [{"model": m.name, "step": 0, "net": m.net} for m in models]


#: Offset of the seed stream the A/A arm (a second untrained reference and its brain) draws its randomness from.
AA_STREAM = 7919


@functools.lru_cache(maxsize=8)
def _untrained_twin_brain(scale: str, seed: int) -> BrainData:
    """The A/A arm of the untrained-reference brain: a second untrained reference network (its own
    initialisation) read out by its own voxel maps and noise."""
    cfg = PRESETS[scale]
    sp = world(scale, seed)[0]
    ref0 = train_mlp(sp, epochs=0, seed=50_000 + seed, name="untrained-reference-twin", width=cfg.ref_width,
                     depth=cfg.ref_depth)  # fmt: skip
    return synthetic_brain(ref0.net, sp.X_stim, sp.stim_ids, voxels=cfg.voxels, snr=cfg.snr, seed=seed + AA_STREAM)


@functools.lru_cache(maxsize=32)
def _model_alignment_cached(scale: str, seed: int, kind: str):
    sp, ref, zoo, brains = world(scale, seed)
    brain = _untrained_twin_brain(scale, seed) if kind == "untrained-twin" else brains[kind]
    tab = align_models(_items([*zoo, ref]), sp.X_stim, _caches(brain, sp.stim_ids))
    return model_alignment(tab).set_index("model")["alignment"]


def _model_alignment(scale: str, seed: int, kind: str, shuffle_rng=None):
    """Model-level alignment (zoo and reference) with the ``kind`` brain; shuffled across stimuli by
    ``shuffle_rng`` (not cached), else cached per (scale, seed, kind)."""
    if shuffle_rng is None:
        return _model_alignment_cached(scale, seed, kind)
    sp, ref, zoo, brains = world(scale, seed)
    tab = align_models(_items([*zoo, ref]), sp.X_stim, _caches(brains[kind], sp.stim_ids, shuffle_rng=shuffle_rng))
    return model_alignment(tab).set_index("model")["alignment"]


def planted_alignment(base: np.ndarray, performance: np.ndarray, r: float, rng: np.random.Generator) -> np.ndarray:
    """``base + lam * sd(base) * s``: an accuracy-tracking part measured with noise, ``s = z(z(performance) + e / 2)``
    with ``e ~ N(0, 1)`` per model, so ``s`` correlates with performance at ``rho = 1/sqrt(1.25) ~ 0.89`` in
    expectation.

    ``lam`` sets the *expected* correlation with performance to ``r``: with ``c = corr(base, performance)`` and the
    noise independent of ``base``, ``corr(b + lam s, z) ~ (c + lam rho) / sqrt(1 + 2 lam c rho + lam^2)``; squaring
    ``= r`` gives ``lam^2 (rho^2 - r^2) + 2 lam c rho (1 - r^2) + c^2 - r^2 = 0`` (the larger root). The realised
    correlation scatters around ``r`` with the noise draw, so the plant can miss.
    """
    base, perf = np.asarray(base, float), np.asarray(performance, float)
    z = (perf - perf.mean()) / perf.std()
    noisy = z + 0.5 * rng.standard_normal(len(z))  # (models,) the planted part, read with noise
    s = (noisy - noisy.mean()) / noisy.std()
    rho = 1.0 / np.sqrt(1.25)
    if not 0.0 <= r < rho:
        raise ValueError(f"a planted correlation must lie in [0, {rho:.3f}) with this noise; got {r}")
    c = float(np.corrcoef(base, perf)[0, 1])
    a, b, k = rho**2 - r**2, c * rho * (1.0 - r**2), c**2 - r**2
    lam = (-b + np.sqrt(max(b**2 - a * k, 0.0))) / a
    return base + lam * s * base.std()


#: performance-predicts-alignment-v2's margin on delta r: an A/A pair of untrained-reference brains scatters by up to
#: +-0.12 on one seed at smoke (v1's seeds), so a margin of 0 let a 1-seed A/A hold half the time.
DELTA_R_MARGIN = 0.15
#: Offset of v2's fresh seed stream: the margin was set after seeing v1's seeds (0-4), so v2 is judged on others.
FRESH = 1000


@claim(
    "brainconverge/performance-predicts-alignment-v2",
    statement="Across a zoo of MLPs trained on digits (width 8-128, depth 1-3, 0-30 epochs, 0-60 % label noise), "
    "the Pearson correlation of test accuracy with brain alignment (RBF-CKA sigma = 12, max over layers, mean over "
    "ROIs) is positive, and larger for a brain read out of a trained reference network than for one read out of "
    "an untrained reference network by more than 0.15 (paired, same zoo and stimuli: delta r > 0.15; v1 asked "
    "delta r > 0, which an A/A pair of untrained brains clears on one seed half the time). The margin was set from "
    "v1's seeds; judged on fresh seeds (worlds of seed + 1000)",
    paper="Abstract: higher-performing models develop stronger brain correspondence (r = 0.89 language, 0.53 vision)",
    control="A/A: a second untrained-reference brain (another untrained network, its own voxel maps and noise) in "
    "the trained brain's place: the learned structure removed, both arms generic, delta r scatters around 0 and "
    "the claim must fail",
    positive="the zoo's alignment with the untrained-reference brain plus an accuracy-tracking part read with noise "
    "(its own draw per seed), sized so that its expected correlation with accuracy exceeds the untrained brain's "
    "by 1.25 x the 0.15 margin (capped at 0.85; the realised r scatters around it): can delta r see an effect just "
    "above its bar?",
    mechanisms=("learned-structure",),
    by_construction="review: the synthetic brain is itself a trained digits MLP (random linear read-out of its "
    "layers + noise), so that better-trained digits MLPs align more with it is the premise built into the data "
    "(convergence among networks of one family), not evidence about brains; the claim shows only that the engine "
    "recovers that planted structure and that delta r separates it from the generic part. Not built: a version on "
    "brain data the reference did not generate (real fMRI, or a brain read from a network trained on another task)",
    judge=(
        Interval("Pearson r (accuracy, alignment)", above=0.0),
        Interval("delta r (trained - untrained brain)", above=DELTA_R_MARGIN),
    ),
)
def performance_predicts_alignment(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    seed += FRESH  # v2: judged on fresh seeds
    zoo = world(scale.value, seed)[2]
    acc = np.array([m.accuracy for m in zoo])
    width = np.log2([m.spec["width"] for m in zoo])
    res, align = {}, {}
    # the negative control's line: the A/A untrained brain (own network, voxel maps, noise) in the trained one's place
    studied = "untrained-twin" if arm is Arm.NEGATIVE else "trained"
    for kind, brain_kind in (("trained", studied), ("untrained", "untrained")):
        ma = _model_alignment(scale.value, seed, brain_kind)
        align[kind] = np.array([ma[m.name] for m in zoo])
        res[kind] = performance_correlation(align[kind], acc, covariates=width)
        res[kind]["truth"] = float(ma["reference"])
    if arm is Arm.POSITIVE:  # delta r planted at 1.25x its margin, read with noise, on top of the generic part
        rng = np.random.default_rng([seed, AA_STREAM, 53])
        target = min(res["untrained"]["r"] + 1.25 * DELTA_R_MARGIN, 0.85)
        align["trained"] = planted_alignment(align["untrained"], acc, max(target, 0.0), rng)
        truth = res["trained"]["truth"]
        res["trained"] = performance_correlation(align["trained"], acc, covariates=width) | {"truth": truth}
    r, dr = res["trained"]["r"], res["trained"]["r"] - res["untrained"]["r"]
    holds = r > 0 and dr > DELTA_R_MARGIN
    fig, ax = _figure()
    ax.scatter(acc, align["trained"], label=f"trained-reference brain (r = {r:.2f})")
    ax.scatter(
        acc, align["untrained"], marker="x", label=f"untrained-reference brain (r = {res['untrained']['r']:.2f})"
    )
    ax.set_xlabel("test accuracy")
    ax.set_ylabel("alignment (RBF-CKA, max over layers)")
    ax.legend(fontsize=8)
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "Pearson r (accuracy, alignment)": r,
            "delta r (trained - untrained brain)": dr,
            "r 95% CI low (Fisher z)": res["trained"]["ci_low"],
            "r 95% CI high (Fisher z)": res["trained"]["ci_high"],
            "p-value": res["trained"]["p"],
            "Spearman rho": res["trained"]["spearman"],
            "partial r given log2 width": res["trained"]["partial_r"],
            "alignment of the reference network itself (truth)": res["trained"]["truth"],
            "best zoo alignment": float(align["trained"].max()),
            "models": len(zoo),
        },
        baselines={
            "r with untrained-reference brain": res["untrained"]["r"],
            "partial r given log2 width, untrained brain": res["untrained"]["partial_r"],
        },
        paper={"r (language models)": 0.89, "r (vision models)": 0.53},
        reason="" if holds else f"r = {r:.3f}, delta r = {dr:.3f}",
        figures={"alignment-vs-accuracy": fig},
    )


@claim(
    "brainconverge/hierarchy-v1",
    statement="Among zoo models with >= 3 hooked layers and test accuracy >= 0.7, deeper layers favour the "
    "'semantic' ROI (read from the reference's logits) over the 'early' ROI (read from its first hidden layer): "
    "the least-squares slope of RBF-CKA(semantic) - RBF-CKA(early) against layer depth (fraction of the model's "
    "layers), averaged over models, exceeds 0.02; the mean best-matching depth per ROI is reported",
    paper="regional organisation: vision models align with visual cortical hierarchies; posterior-to-anterior "
    "shift as feature scope grows",
    control="a brain without hierarchy: all three ROIs read the same (first hidden) reference layer (different "
    "voxel maps and noise), so no layer favours one ROI over another: slope ~0 and the claim must fail",
    positive="the brain's generator in the zoo's place: the reference network and a second network trained by its "
    "recipe on its own seed (the hierarchy the brain was built from, read through the same slope)",
    mechanisms=("roi-hierarchy",),
    by_construction="review: the ROIs are read from the layers of a trained digits MLP of the zoo's own family, so "
    "that deeper zoo layers favour the ROI read from its logits restates the layer correspondence of networks "
    "trained alike (the hierarchy is planted), not brain organisation; the claim shows the engine recovers a "
    "planted hierarchy (weakly: slope ~0.04 against the reference's own ~0.14; argmax layers are mostly the first)",
    judge=Interval("depth slope of CKA(semantic) - CKA(early)", above=0.02),
)
def hierarchy(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    sp, ref, zoo, brains = world(scale.value, seed)
    brain = brains["trained"]
    if arm is Arm.POSITIVE:  # the oracle: the generator and its recipe's twin as the 'zoo'
        zoo = [ref, _reference_twin(scale.value, seed)]
    if arm is Arm.NEGATIVE:  # the one change: every ROI reads hidden layer 1
        brain = synthetic_brain(
            ref.net,
            sp.X_stim,
            sp.stim_ids,
            voxels=cfg.voxels,
            snr=cfg.snr,
            seed=seed,
            roi_layers={"early": 0, "late": 0, "semantic": 0},
        )
    chosen = [m for m in zoo if m.spec["depth"] >= 2 and m.accuracy >= cfg.hier_min_accuracy]
    if len(chosen) < 2:
        return ClaimResult(
            "not-measured",
            reason=f"only {len(chosen)} zoo models with >= 3 layers and accuracy >= {cfg.hier_min_accuracy}",
        )
    tab = align_models(_items(chosen), sp.X_stim, _caches(brain, sp.stim_ids))
    per_roi, layer_map = regional_organisation(tab)
    slope = hierarchy_slope(tab, "semantic", "early")
    truth = hierarchy_slope(align_models(_items([ref]), sp.X_stim, _caches(brain, sp.stim_ids)), "semantic", "early")
    fig, ax = _figure()
    im = ax.imshow(layer_map.T.values, aspect="auto", cmap="viridis")
    ax.set_yticks(range(len(layer_map.columns)), layer_map.columns)
    ax.set_xticks(range(len(layer_map.index)), [f"{d:.2f}" for d in layer_map.index], rotation=45)
    ax.set_xlabel("layer depth (fraction of the model's layers)")
    fig.colorbar(im, label="mean RBF-CKA")
    holds = slope > 0.02
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "depth slope of CKA(semantic) - CKA(early)": slope,
            "same slope for the reference network itself (truth)": truth,
            "best depth(semantic) - best depth(early) (argmax, not judged)": per_roi["semantic"] - per_roi["early"],
            **{f"mean best depth, ROI {k}": v for k, v in sorted(per_roi.items())},
            "models": len(chosen),
        },
        paper={"regional organisation": "vision models align with visual cortical hierarchies"},
        reason="" if holds else f"depth slope {slope:.3f}",
        figures={"layer-by-roi": fig},
    )


@functools.lru_cache(maxsize=8)
def _reference_twin(scale: str, seed: int):
    """A second network trained by the reference's recipe (width, depth, epochs) on a seed of its own."""
    cfg = PRESETS[scale]
    sp = world(scale, seed)[0]
    return train_mlp(sp, width=cfg.ref_width, depth=cfg.ref_depth, epochs=cfg.ref_epochs, seed=40_000 + seed,
                     name="reference-twin")  # fmt: skip


@functools.lru_cache(maxsize=8)
def trajectories(scale: str, seed: int):
    """(alignment_t, accuracy_t) per epoch for ``traj_models`` MLPs trained slowly from scratch."""
    cfg = PRESETS[scale]
    sp, _, _, brains = world(scale, seed)
    caches = _caches(brains["trained"], sp.stim_ids)
    out = []
    for k in range(cfg.traj_models):
        w = cfg.traj_widths[k % len(cfg.traj_widths)]
        m = train_mlp(
            sp,
            width=w,
            depth=2,
            epochs=cfg.traj_epochs,
            seed=30_000 + 100 * seed + k,
            lr=cfg.traj_lr,
            checkpoint_every=1,
        )
        items = [
            {"model": m.name, "step": e, "net": build_net(m.spec, st, sp.X_train.shape[1])}
            for e, st, _ in m.checkpoints
        ]
        ma = model_alignment(align_models(items, sp.X_stim, caches))["alignment"].to_numpy()
        out.append((m.name, ma, np.array([a for _, _, a in m.checkpoints])))
    return out


@claim(
    "brainconverge/granger-calibrated-v1",
    statement="The bidirectional Granger pipeline (first differences, lag 1-3 by AIC, statsmodels F-test, alpha = "
    "0.05) run on training trajectories (alignment and accuracy per epoch) has a permutation-null false-positive "
    "rate in [0.01, 0.09] and detects a planted direction in trending series of the same length with power > 0.5; "
    "the counts of models with alignment -> accuracy and accuracy -> alignment are reported, not asserted",
    paper="Abstract: past alignment predicts future performance more reliably than the reverse (bidirectional "
    "Granger tests)",
    control="differencing switched off: Granger tests on the trending levels (the pitfall the paper's pipeline "
    "avoids) give spurious causality, the null false-positive rate inflates above 0.09 and the claim must fail",
    positive="the training trajectories replaced by planted trending pairs of the same length and number "
    "(homoscedastic AR(1) increments, coupling 0.6): series on which the F-test is calibrated, through the same "
    "permutation null and the same planted-power check",
    mechanisms=("learning-dynamics",),
    judge=(
        Interval("permutation-null false-positive rate", above=0.01, below=0.09),
        Interval("power on a planted direction", above=0.5),
    ),
)
def granger_calibrated(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    diff = arm is not Arm.NEGATIVE  # the negative control's line: no differencing
    traj = trajectories(scale.value, seed)
    rng = np.random.default_rng([seed, 5])
    if arm is Arm.POSITIVE:  # series on which the test is calibrated, of the trajectories' length and number
        prng = np.random.default_rng([seed, 6])
        T = cfg.traj_epochs + 1
        traj = [(f"planted-{k}", *planted_pair(T, prng, coupling=cfg.planted_coupling)) for k in range(len(traj))]
    a2p = p2a = 0
    for _, al, acc in traj:
        g = granger_bidirectional(al, acc, maxlag=cfg.granger_maxlag, difference=diff)
        a2p += g["p_align_to_perf"] < 0.05
        p2a += g["p_perf_to_align"] < 0.05
    pairs = [(al, acc) for _, al, acc in traj] + [(acc, al) for _, al, acc in traj]
    fpr = granger_null_fpr(pairs, n_perm=cfg.null_perms, rng=rng, maxlag=cfg.granger_maxlag, difference=diff)
    T = cfg.traj_epochs + 1
    planted = [planted_pair(T, rng, coupling=cfg.planted_coupling) for _ in range(cfg.planted_pairs)]
    power = float(np.mean([granger(x, y, maxlag=cfg.granger_maxlag, difference=diff)["p"] < 0.05 for x, y in planted]))
    reverse = float(
        np.mean([granger(y, x, maxlag=cfg.granger_maxlag, difference=diff)["p"] < 0.05 for x, y in planted])
    )
    # independent trending pairs (cause of one planted pair, effect of the next): the test's own calibration
    indep = float(
        np.mean(
            [
                granger(planted[i][0], planted[i - 1][1], maxlag=cfg.granger_maxlag, difference=diff)["p"] < 0.05
                for i in range(len(planted))
            ]
        )
    )
    holds = 0.01 < fpr < 0.09 and power > 0.5
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.5))
    for name, al, acc in traj:
        ax1.plot(al, label=name[:14])
        ax2.plot(acc)
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("alignment (RBF-CKA)")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy")
    ax1.legend(fontsize=6)
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "permutation-null false-positive rate": fpr,
            "power on a planted direction": power,
            "planted reverse direction rejection rate": reverse,
            "false-positive rate on independent trending pairs (not judged)": indep,
            "models with alignment -> accuracy (p < 0.05)": a2p,
            "models with accuracy -> alignment (p < 0.05)": p2a,
            "trajectories": len(traj),
            "checkpoints per trajectory": T,
        },
        paper={"direction": "alignment -> performance more often than the reverse"},
        reason="" if holds else f"null FPR {fpr:.3f}, planted power {power:.2f}",
        figures={"trajectories": fig},
    )


@functools.cache
def _local_ray(num_cpus: int = 2) -> str:
    """One local Ray instance for every seed of the scale-out claim and its control (Ray needs seconds to start,
    and repeated starts time out on a loaded machine); stopped when the process exits. Returns "" or why not."""
    import atexit

    try:
        import ray
    except ImportError:
        return "Ray is not installed (pip install 'icml26[align]')"
    if not ray.is_initialized():
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except Exception as exc:  # Ray raises bare Exception when its node does not start in time
            return f"a local Ray instance did not start ({exc.__class__.__name__}: {str(exc)[:120]})"
        atexit.register(ray.shutdown)
    return ""


@claim(
    "brainconverge/scale-out-v1",
    statement="The alignment table (model x layer x subject x ROI, RBF-CKA) computed by worker processes (a local "
    "2-CPU Ray instance at small; a process pool at smoke) equals the single-process table: same rows, max "
    "|score difference| <= 1e-12",
    paper="Sec. methods: > 60 million alignment measurements over 630 models (distributed computation)",
    control="the workers skip the match of stimulus ids and use the brain file's row order (sorted ids) while the "
    "features come in the stimulus-split order: scores change and the claim must fail",
    positive="the brain stored in the features' own order (the id match has nothing to undo): the workers must "
    "reproduce the single-process table",
    by_construction="issue 45: an equality of two code paths computing the same function on the same inputs is an "
    "integration check of the Ray/pool path (it belongs in the test suite), not a claim of the paper",
)
def scale_out(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    sp, _, zoo, brains = world(scale.value, seed)
    brain = brains["trained"]
    items = _items(zoo[: cfg.scaleout_models])
    single = align_models(items, sp.X_stim, _caches(brain, sp.stim_ids))
    control = arm is Arm.NEGATIVE
    # how a brain file is typically stored: ids ascending (the positive control: the features' own order)
    order = np.arange(len(sp.stim_ids)) if arm is Arm.POSITIVE else np.argsort(sp.stim_ids)
    stored = BrainData({s: B[order] for s, B in brain.betas.items()}, sp.stim_ids[order], brain.rois)
    worker_ids = stored.stim_ids if control else sp.stim_ids  # the one line the control changes
    caches = _caches(stored, worker_ids)
    if cfg.scaleout_backend == "ray":
        why = _local_ray(2)
        if why:
            return ClaimResult("not-measured", reason=why)
        dist = align_models_ray(items, sp.X_stim, caches)
    else:
        dist = align_models_pool(items, sp.X_stim, caches, workers=2)
    keys = ["model", "step", "layer", "subject", "roi"]
    same_rows = single[keys].equals(dist[keys])
    diff = float(np.max(np.abs(single["score"].to_numpy() - dist["score"].to_numpy()))) if same_rows else float("inf")
    holds = same_rows and diff <= 1e-12
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "max |score difference|": diff,
            "rows": len(single),
            "same rows": float(same_rows),
            "stimuli stored out of the features' order": float(np.sum(order != np.arange(len(order)))),
        },
        paper={"measurements": "> 60 million"},
        reason="" if holds else f"tables differ (max |difference| {diff:.3g})",
    )


# ------------------------------------------------------------------------------------- real language fMRI
#: real-performance-alignment-v1's bar on Spearman's rho (the paper's language-model r is 0.89)
RHO_BAR = 0.5
#: the A/A brain: each listener's time course circularly shifted by at least this many TRs (an independent draw)
MIN_SHIFT = 60


@functools.lru_cache(maxsize=2)
def _alice(scale: str):
    from icml26.brainconverge.alice import load_alice

    data = load_alice()
    return data.subset(data.subjects[: PRESETS[scale].alice_subjects])


def _shifted(bold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each subject's time course circularly shifted by its own offset: the story-brain correspondence removed,
    the BOLD's own autocorrelation and the ROIs' covariance kept (an A/A brain for any model)."""
    T = bold.shape[1]
    return np.stack([np.roll(b, int(rng.integers(MIN_SHIFT, T - MIN_SHIFT)), axis=0) for b in bold])


def _zoo_features(scale: str, seed: int, checkpoints: tuple[int, ...]):
    """The zoo trained on the book (one seed), kept at ``checkpoints``, and each entry's per-layer TR features."""
    from icml26.brainconverge.alice import to_trs
    from icml26.brainconverge.language import train_zoo, word_features

    torch.set_num_threads(1)
    cfg, alice = PRESETS[scale], _alice(scale)
    tok, zoo = train_zoo(cfg.lm_widths, cfg.lm_depths, steps=cfg.lm_steps, checkpoints=checkpoints,
                         context=cfg.lm_context, seed=seed)  # fmt: skip
    feats = [  # (T, d) per layer, per zoo entry; the window is the context the models were trained on
        {k: to_trs(alice.onsets, v) for k, v in word_features(m.net, tok, alice.words, context=cfg.lm_context).items()}
        for m in zoo
    ]
    return zoo, feats


@functools.lru_cache(maxsize=8)
def language_world(scale: str, seed: int):
    """The zoo at its ``lm_checkpoints``, each model's per-layer TR features, and its held-out loss."""
    return _zoo_features(scale, seed, PRESETS[scale].lm_checkpoints)


def _roi_alignment(scale: str, seed: int, bold: np.ndarray) -> np.ndarray:
    """(entries, R): per zoo entry and ROI, held-out encoding r (layer chosen on training blocks), mean over
    listeners."""
    from icml26.brainconverge.alice import encode

    alice = _alice(scale)
    _zoo, feats = language_world(scale, seed)
    return np.stack([encode(f, bold, alice.nuisance).r.mean(0) for f in feats])


def _language_alignment(scale: str, seed: int, bold: np.ndarray) -> np.ndarray:
    """Per zoo entry: held-out encoding r (layer chosen on training blocks), mean over listeners and ROIs."""
    return _roi_alignment(scale, seed, bold).mean(1)


#: real-performance-alignment-v2: rho(real brain) - rho(shifted brain) must exceed this margin (fixed before v2's
#: first run, from v1: its shifted A/A read rho 0.32 on average and up to 0.71, the real brain 0.85)
RHO_MARGIN = 0.2
#: the seed stream v2 and the other issue-45 referee versions are judged on (v1 used seeds 0-4)
REAL_FRESH = 2000


def _model_bootstrap_rho(zoo, perf: np.ndarray, align: np.ndarray, rng: np.random.Generator, n: int = 1000):
    """95 % interval of rho over models: resample the zoo's models (each with all its checkpoints)."""
    from scipy import stats

    names = list(dict.fromkeys(m.name for m in zoo))
    rows = {name: [i for i, m in enumerate(zoo) if m.name == name] for name in names}
    rhos = []
    for _ in range(n):
        idx = np.concatenate([rows[names[k]] for k in rng.integers(0, len(names), len(names))])
        if np.ptp(perf[idx]) > 0 and np.ptp(align[idx]) > 0:
            rhos.append(stats.spearmanr(perf[idx], align[idx])[0])
    return tuple(np.nanpercentile(rhos, [2.5, 97.5])) if rhos else (float("nan"), float("nan"))


#: story-free brains per reference set at small (v2's one shifted brain gave a rho with an s.d. of 0.42 over seeds,
#: wider than the margin it was judged against; the mean of 16 such rhos has about a quarter of that s.d.)
K_SMALL, K_SMOKE = PRESETS["small"].lm_shifts, PRESETS["smoke"].lm_shifts
#: real-performance-alignment-v3's seed stream (v2 was judged on seed + 2000); v4's plant sizes were fixed on it
V3_FRESH = 3000


@functools.lru_cache(maxsize=16)
def _shifted_roi_alignments(scale: str, seed: int, which: int) -> np.ndarray:
    """(K, entries, R): each zoo entry's per-ROI alignment with ``K = lm_shifts`` story-free brains, every
    listener's time course circularly shifted by its own offset drawn from the stream ``[seed, AA_STREAM, which,
    k]``. Only the BOLD changes between brains: the zoo's features are computed once (``language_world``)."""
    return np.stack([_roi_alignment(scale, seed, bold) for bold in _shift_set(scale, seed, which)])


def _shift_set(scale: str, seed: int, which: int) -> list[np.ndarray]:
    """The ``lm_shifts`` story-free brains of set ``which`` (each (S, T, R))."""
    bold = _alice(scale).bold
    return [_shifted(bold, np.random.default_rng([seed, AA_STREAM, which, k])) for k in range(PRESETS[scale].lm_shifts)]


@functools.lru_cache(maxsize=4)
def _aa_roi_alignment(scale: str, seed: int) -> np.ndarray:
    """(entries, R): the zoo's per-ROI alignment with ONE story-free brain, the first of set 2 (the v4 A/A brain in
    the real brain's place)."""
    return _roi_alignment(scale, seed, _shift_set(scale, seed, 2)[0])


@functools.lru_cache(maxsize=4)
def _real_roi_alignment(scale: str, seed: int) -> np.ndarray:
    """(entries, R): the zoo's per-ROI alignment with the real brain."""
    return _roi_alignment(scale, seed, _alice(scale).bold)


#: real-performance-alignment-v4's seed stream (v3 was judged on seed + 3000; v4's positive and region-v3's plant
#: size were fixed from that stream)
V4_FRESH = 4000
#: real-performance-alignment-v4's positive: the FIXED size of the planted performance-tracking part, in s.d. of the
#: brain's own alignments. Fixed before the run, not fitted per seed: the size whose expected Spearman rho with
#: performance is 1.25 x the margin on a base independent of performance (Pearson r = 2 sin(pi x 0.25 / 6) = 0.261
#: for a bivariate normal; lam = r / sqrt(1 - r^2) = 0.27). The realised rho scatters with the base brain's own.
RHO_PLANT = 0.27


def plant_rank_part(align: np.ndarray, performance: np.ndarray, lam: float) -> np.ndarray:
    """``align + lam * sd(align) * z(performance)``: a performance-tracking part of fixed size ``lam`` (in s.d. of the
    alignments themselves) added to one brain's alignments (entries,)."""
    align, perf = np.asarray(align, float), np.asarray(performance, float)
    return align + lam * align.std() * (perf - perf.mean()) / perf.std()


def permutation_p(value: float, null: np.ndarray) -> float:
    """One-sided rank p-value of ``value`` among the ``null`` draws: (1 + #{null >= value}) / (1 + len(null))."""
    null = np.asarray(null, float)
    return float((1 + np.sum(null >= value)) / (1 + null.size))


def _across_model_rhos(zoo, perf: np.ndarray, align: np.ndarray) -> dict[str, float]:
    """The paper's across-models reading beside the pooled rho (not judged): Spearman rho over the final models only,
    and the mean over trained checkpoints (step > 0) of the rho across the models at that checkpoint."""
    from scipy import stats

    steps = sorted({m.step for m in zoo})
    within = []
    for step in steps[1:]:  # step 0: untrained models, their loss differences are initialisation noise
        idx = [i for i, m in enumerate(zoo) if m.step == step]
        within.append(stats.spearmanr(perf[idx], align[idx])[0])
    final = [i for i, m in enumerate(zoo) if m.step == steps[-1]]
    return {
        "Spearman rho over the final models (not judged)": float(stats.spearmanr(perf[final], align[final])[0]),
        "Spearman rho within a checkpoint, mean over trained checkpoints (not judged)": float(np.nanmean(within)),
    }


@claim(
    "brainconverge/real-performance-alignment-v4",
    statement="On real language fMRI (28 listeners of Alice in Wonderland chapter 1, 6 language ROIs), across a zoo "
    "of word-level GPT-2s trained on the book's other chapters (3 widths x 2 depths, 6 checkpoints each), models "
    "with lower held-out loss (chapter XII) predict the real ROIs better than they predict story-free brains: "
    "Spearman rho(-loss, alignment) on the real BOLD minus the mean of the same rho over "
    f"K = {K_SMALL} story-free brains ({K_SMOKE} at smoke) > {RHO_MARGIN}, a story-free brain being every "
    "listener's time course circularly "
    f"shifted (>= {MIN_SHIFT} TRs, an independent offset per listener and brain); alignment = held-out encoding r "
    "(ridge, contiguous 4-block CV with 5-TR gaps, layer chosen on the training blocks, nuisance removed), mean over "
    "listeners and ROIs. The claim's statistic is v3's (one brain's rho minus the mean of K); v4 changes the judged "
    "controls: the A/A puts ONE shifted brain in the real brain's place (v3's A/A averaged K, about a third of the "
    f"null scatter) and the positive plants a fixed size (lam = {RHO_PLANT}). The rank of rho(real) among the K "
    "shifted rhos (a permutation p) and the rho over the final models are reported. Rho pools checkpoints along "
    f"training (6 distinct models). Margin (v2's), K, lam fixed before the judged run; seeds + {V4_FRESH}",
    paper="Abstract: higher-performing models develop stronger brain correspondence (r = 0.89 for language models)",
    control="A/A: one independent story-free brain (of a second set) in the real brain's place, minus the mean rho "
    "of the K reference brains: scatters around 0 with one brain's scatter and must not exceed the margin",
    positive=f"the A/A with a performance-tracking part of FIXED size added to that brain's alignments ({RHO_PLANT} "
    "s.d. of its alignments times z(-loss): expected rho 1.25 x the margin on an independent base, "
    "`plant_rank_part`; not sized per seed): the same rho difference and verdict must see it",
    mechanisms=("story-alignment",),
    judge=(Interval("rho(brain) - mean rho(shifted)", above=RHO_MARGIN),),
)
def real_performance_alignment(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from scipy import stats

    seed += V4_FRESH
    alice = _alice(scale.value)
    zoo, _ = language_world(scale.value, seed)
    perf = -np.array([m.loss for m in zoo])
    shifted_a = _shifted_roi_alignments(scale.value, seed, 1).mean(2)  # (K, entries) the reference set
    rhos_a = np.array([stats.spearmanr(perf, a)[0] for a in shifted_a])  # (K,)
    rho_ref = float(rhos_a.mean())
    if arm is Arm.CLAIM:
        align = _real_roi_alignment(scale.value, seed).mean(1)  # (entries,)
    else:  # the A/A: one independent story-free brain (the first of a second set) in the real brain's place
        align = _aa_roi_alignment(scale.value, seed).mean(1)  # (entries,)
        if arm is Arm.POSITIVE:
            align = plant_rank_part(align, perf, RHO_PLANT)
    rho = float(stats.spearmanr(perf, align)[0])
    diff = rho - rho_ref
    low, high = _model_bootstrap_rho(zoo, perf, align, np.random.default_rng([seed, 71]))
    reference = shifted_a.mean(0)
    holds = diff > RHO_MARGIN
    fig, ax = _figure()
    for name in dict.fromkeys(m.name for m in zoo):
        idx = [i for i, m in enumerate(zoo) if m.name == name]
        ax.plot(perf[idx], align[idx], "o-", ms=4, label=name)
    ax.plot(perf, reference, "k.", ms=3, label=f"mean of {len(shifted_a)} shifted brains")
    ax.set_xlabel("performance (- held-out loss, nats/word)")
    ax.set_ylabel("alignment (held-out encoding r)")
    ax.legend(fontsize=7)
    final = [i for i, m in enumerate(zoo) if m.step == max(c.step for c in zoo)]
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "rho(brain) - mean rho(shifted)": diff,
            "Spearman rho (-loss, alignment), pooled": rho,
            "mean rho on K shifted brains (reference)": rho_ref,
            "rho on one shifted brain, s.d. over the K": float(np.std(rhos_a, ddof=1)),
            "permutation p: rank of rho(brain) among the K shifted rhos": permutation_p(rho, rhos_a),
            "pooled rho 95% interval over models, low (bootstrap, this brain)": low,
            "pooled rho 95% interval over models, high (bootstrap, this brain)": high,
            **_across_model_rhos(zoo, perf, align),
            "Pearson r (-loss, alignment), pooled": float(np.corrcoef(perf, align)[0, 1]),
            "alignment of the final models": float(align[final].mean()),
            "alignment of the final models, shifted brains": float(reference[final].mean()),
            "zoo entries (model x checkpoint)": len(zoo),
            "distinct models": len(set(m.name for m in zoo)),
            "shifted brains per reference": len(shifted_a),
            "listeners": alice.bold.shape[0],
        },
        paper={"r (language models)": 0.89},
        reason="" if holds else f"rho difference {diff:.3f} <= {RHO_MARGIN}",
        figures={"alignment-vs-performance": fig},
    )


#: the Alice ROIs the paper's "integrative (and limbic)" regions map onto, fixed before the first run: the anterior
#: temporal lobes (the semantic hub, next to the temporal pole's paralimbic cortex) and the inferior parietal
#: lobule (angular gyrus, an integrative hub); the others are posterior temporal, premotor and inferior frontal
INTEGRATIVE = ("LATL", "RATL", "LIPL")


@functools.lru_cache(maxsize=2)
def _roi_ceiling(scale: str) -> np.ndarray:
    """(R,) the real data's leave-one-listener-out noise ceiling, mean over listeners, floored at 0.05."""
    from icml26.brainconverge.alice import noise_ceiling

    alice = _alice(scale)
    return np.clip(noise_ceiling(alice.bold, alice.nuisance).mean(0), 0.05, None)


def _integrative_contrast(r: np.ndarray, ceiling: np.ndarray, rois) -> float:
    """r (R,) per ROI -> mean of r / ceiling over the integrative ROIs minus over the others."""
    profile = r / ceiling
    inside = np.isin(rois, INTEGRATIVE)
    return float(profile[inside].mean() - profile[~inside].mean())


def story_signal(words: list[str], onsets: np.ndarray, listeners: int, rng: np.random.Generator,
                 context: int = 8) -> np.ndarray:  # fmt: skip
    """(listeners, T) a story-locked course no zoo model computes: every word type gets a random 8-d vector, each
    word carries half its own vector and half the mean of the previous ``context`` words' (a slow context part),
    placed at its onset through the HRF (:func:`to_trs`), then read by a random projection per listener and
    standardised."""
    from icml26.brainconverge.alice import to_trs

    types = {w: i for i, w in enumerate(dict.fromkeys(w.lower().strip(".,;:!?'\"()") for w in words))}
    E = rng.standard_normal((len(types), 8))[[types[w.lower().strip(".,;:!?'\"()")] for w in words]]  # (W, 8)
    csum = np.r_[np.zeros((1, 8)), np.cumsum(E, 0)]
    idx = np.arange(len(words))
    past = (csum[idx] - csum[np.maximum(idx - context, 0)]) / np.maximum(np.minimum(idx, context), 1)[:, None]
    X = to_trs(onsets, 0.5 * E + 0.5 * past)  # (T, 8)
    sig = (X @ rng.standard_normal((8, listeners))).T  # (S, T)
    return (sig - sig.mean(1, keepdims=True)) / sig.std(1, keepdims=True)


#: real-region-v2/v3's margin on the story-locked contrast, set before v2's judged run from the A/A (two sets of K
#: shifted brains) on exploration seeds of v2's stream (2000-2003): +0.17, -0.01, -0.07, +0.13 at smoke (s.d. 0.11),
#: +0.00, -0.04, +0.01 at small (s.d. 0.03): above every one of them, about 2 smoke s.d. The real brain is the same on
#: every seed, so v1 had already read its contrast (-0.009) when this margin was fixed: the margin is not a fresh
#: prediction for the real brain, only for the zoo
REGION_MARGIN = 0.2
#: real-region-v3's positive: the FIXED amplitude of the planted story signal (BOLD s.d. units), the median of the
#: sizes v2's secant search found on the earlier stream (seeds 3000-3002 at small: 0.374, 0.480, 0.418)
REGION_PLANT = 0.42


def _planted_region_r(scale: str, seed: int, amplitude: float, final: list[int]) -> np.ndarray:
    """(R,) the final models' r on set b's first story-free brain with ``amplitude`` x :func:`story_signal` added to
    the integrative ROIs, mean over listeners and models."""
    from icml26.brainconverge.alice import encode

    alice = _alice(scale)
    _, feats = language_world(scale, seed)
    inside = np.isin(alice.rois, INTEGRATIVE)
    bold = _shift_set(scale, seed, 2)[0].copy()  # (S, T, R)
    signal = story_signal(alice.words, alice.onsets, bold.shape[0], np.random.default_rng([seed, 89, 0]))
    bold[:, :, inside] += amplitude * signal[:, :, None]
    return np.mean([encode(feats[i], bold, alice.nuisance).r.mean(0) for i in final], axis=0)


@claim(
    "brainconverge/real-region-v3",
    statement="On real language fMRI (Alice), the zoo's final language models align more with the integrative "
    f"ROIs ({', '.join(INTEGRATIVE)}) than with the others (LPTL, LPreM, LIFG) in their story-locked part: per ROI, "
    f"held-out encoding r on the real BOLD minus the mean r over K = {K_SMALL} ({K_SMOKE} at smoke) story-free "
    "(circularly shifted) brains, "
    "mean over listeners and the final models, divided by the ROI's leave-one-listener-out noise ceiling; "
    f"integrative minus other > {REGION_MARGIN}. The statistic is v2's; v3 changes the judged controls: the A/A puts "
    "ONE shifted brain in the real brain's place (v2 averaged K) and the positive plants a fixed amplitude "
    f"({REGION_PLANT} BOLD s.d., the median of v2's searched sizes; v2 sized it per seed on the realised contrast). "
    "The margin was fixed after v1 had read the real brain's contrast (-0.009): the paper's directional bar (> 0) is "
    f"reported beside it. ROI grouping fixed before v1; margin fixed before v2; seeds + {V4_FRESH}",
    paper="Modality-specific organisation: language models align with limbic and integrative regions",
    control="A/A: one independent story-free brain (of a second set) in the real brain's place, minus the mean of "
    "the K reference brains: scatters around 0 and must not exceed the margin",
    positive=f"the A/A brain with a story-locked signal no zoo model computes (random word-type vectors with a slow "
    f"context part, through the HRF; `story_signal`) added to its integrative ROIs at a FIXED {REGION_PLANT} of the "
    "BOLD's s.d. (not sized per seed): the same encoding, contrast and verdict must see it",
    mechanisms=("story-alignment",),
    judge=(Interval("story-locked contrast, integrative - other", above=REGION_MARGIN),),
)
def real_region(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    seed += V4_FRESH  # the zoos real-performance-alignment-v4 reads (the shifted brains are shared, cached)
    alice = _alice(scale.value)
    zoo, _ = language_world(scale.value, seed)
    final = [i for i, m in enumerate(zoo) if m.step == max(c.step for c in zoo)]
    ceiling = _roi_ceiling(scale.value)
    reference = _shifted_roi_alignments(scale.value, seed, 1)[:, final].mean((0, 1))  # (R,)
    amplitude = 0.0
    if arm is Arm.CLAIM:
        r = _real_roi_alignment(scale.value, seed)[final].mean(0)
    elif arm is Arm.NEGATIVE:  # one story-free brain of the second set
        r = _aa_roi_alignment(scale.value, seed)[final].mean(0)
    else:  # that brain with the story signal in the integrative ROIs, at the fixed amplitude
        amplitude = REGION_PLANT
        r = _planted_region_r(scale.value, seed, amplitude, final)
    story = r - reference  # (R,) the story-locked r per ROI
    contrast = _integrative_contrast(story, ceiling, alice.rois)
    holds = contrast > REGION_MARGIN
    fig, ax = _figure()
    ax.bar(alice.rois, story / ceiling, color=["C1" if roi in INTEGRATIVE else "C0" for roi in alice.rois])
    ax.set_ylabel("story-locked r / noise ceiling (final models)")
    ax.set_title("integrative ROIs in orange")
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "story-locked contrast, integrative - other": contrast,
            "contrast > 0, the paper's directional bar (not judged; 1 = yes)": float(contrast > 0),
            "contrast of the raw normalised r (v1's measure)": _integrative_contrast(r, ceiling, alice.rois),
            "contrast on the shifted reference alone": _integrative_contrast(reference, ceiling, alice.rois),
            **{f"story-locked r / ceiling {roi}": float(v) for roi, v in zip(alice.rois, story / ceiling, strict=True)},
            **{f"noise ceiling {roi}": float(v) for roi, v in zip(alice.rois, ceiling, strict=True)},
            "final models": len(final),
            "planted amplitude (BOLD s.d.; 0 = no plant)": amplitude,
        },
        paper={"regional organisation": "language models -> limbic and integrative regions"},
        reason="" if holds else f"contrast {contrast:.3f} <= {REGION_MARGIN}",
        figures={"roi-profile": fig},
    )


@functools.lru_cache(maxsize=16)
def language_trajectories(scale: str, seed: int):
    """Each zoo model's training trajectory on the real brain: (name, alignment_t, performance_t), with alignment
    the held-out encoding r (mean over listeners and ROIs) and performance the negative held-out loss, at every
    ``lm_traj_every`` steps."""
    from icml26.brainconverge.alice import encode

    cfg, alice = PRESETS[scale], _alice(scale)
    zoo, feats = _zoo_features(scale, seed, tuple(range(0, cfg.lm_steps + 1, cfg.lm_traj_every)))
    align = np.array([encode(f, alice.bold, alice.nuisance).r.mean() for f in feats])
    out = []
    for name in dict.fromkeys(m.name for m in zoo):
        idx = sorted((i for i, m in enumerate(zoo) if m.name == name), key=lambda i: zoo[i].step)
        out.append((name, align[idx], -np.array([zoo[i].loss for i in idx])))
    return out


def _direction(pairs, maxlag: int) -> dict[str, float]:
    """Bidirectional robust Granger over (alignment, performance) pairs: the mean log10 p-value ratio
    log10 p(performance -> alignment) - log10 p(alignment -> performance) (> 0: alignment leads), and counts."""
    logs, a2p, p2a = [], 0, 0
    for al, perf in pairs:
        g = granger_bidirectional(al, perf, maxlag=maxlag, robust=True)
        logs.append(np.log10(g["p_perf_to_align"]) - np.log10(g["p_align_to_perf"]))
        a2p += g["p_align_to_perf"] < 0.05
        p2a += g["p_perf_to_align"] < 0.05
    return {"direction": float(np.mean(logs)), "a2p": a2p, "p2a": p2a}


def plant_direction(cause: np.ndarray, effect: np.ndarray, coupling: float) -> np.ndarray:
    """``effect`` with ``coupling`` s.d. of its own increments times the standardised previous increment of
    ``cause`` added to each increment: a planted "cause leads effect" of known size, trend kept."""
    dc, de = np.diff(cause), np.diff(effect)
    z = (dc - dc.mean()) / (dc.std() + 1e-12)
    de = de + coupling * de.std() * np.r_[0.0, z[:-1]]
    return np.r_[effect[0], effect[0] + np.cumsum(de)]


@claim(
    "brainconverge/real-granger-v3",
    statement="On real language fMRI (Alice), along the training trajectories of a zoo of word-level GPT-2s (3 "
    "widths x 2 depths, 21 checkpoints every 20 steps at small), past alignment (held-out encoding r) predicts "
    "future performance (- held-out loss) more than the reverse, beyond what any learning curve's alignment does: "
    "bidirectional Granger tests on first differences (lag by AIC up to 2, Wald F with HC3 errors) give the "
    "asymmetry A = mean over models of log10 p(perf -> align) - log10 p(align -> perf); A(own alignment) - A(the "
    "same-size model's alignment in an independently seeded zoo) > 0 over seeds. Bar fixed before the first run "
    "(v1 judged A alone: its A/A held on 2 of 3 smoke seeds, so part of A is generic to learning curves; v3: the A/A "
    "takes two zoos of its own, so it shares no term with the claim's difference); seeds + 2000",
    paper="Abstract: past alignment predicts future performance more reliably than the reverse (bidirectional "
    "Granger tests)",
    control="A/A: the claim's difference with both sides cross-zoo (each model's performance against the alignment "
    "of the same-size model of two further, independently seeded zoos, neither of them the claim's reference zoo): "
    "the generic part cancels, so the difference scatters around 0 and the claim must fail",
    positive="the A/A difference with alignment -> performance planted into its first cross-zoo pair: 0.6 s.d. of "
    "performance's increments times the previous standardised alignment increment (the synthetic Granger claim's "
    "coupling), through the same tests and verdict",
    mechanisms=("story-alignment",),
    judge=(Interval("asymmetry: own - other zoo's alignment", above=0.0),),
)
def real_granger(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg, seed = PRESETS[scale.value], seed + REAL_FRESH
    traj = language_trajectories(scale.value, seed)
    perf_of = [perf for _, _, perf in traj]

    def cross(k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each model's performance against the same-size model's alignment in the zoo seeded ``seed + k x AA``."""
        other = language_trajectories(scale.value, seed + k * AA_STREAM)
        return [(al, perf) for (_, al, _), perf in zip(other, perf_of, strict=True)]

    if arm is Arm.CLAIM:
        pairs = [(al, perf) for _, al, perf in traj]
        reference = cross(1)
    else:  # two zoos of its own: no term shared with the claim's difference
        pairs, reference = cross(2), cross(3)
        if arm is Arm.POSITIVE:
            pairs = [(al, plant_direction(al, perf, cfg.lm_planted_coupling)) for al, perf in pairs]
    d, ref = _direction(pairs, cfg.lm_granger_maxlag), _direction(reference, cfg.lm_granger_maxlag)
    diff = d["direction"] - ref["direction"]
    holds = diff > 0
    null = granger_null_fpr(pairs, n_perm=cfg.null_perms // 4 or 1, rng=np.random.default_rng([seed, 83]),
                            maxlag=cfg.lm_granger_maxlag, robust=True)  # fmt: skip
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.5))
    for (name, *_), (al, perf) in zip(traj, pairs, strict=True):
        ax1.plot(al, label=name)
        ax2.plot(perf)
    ax1.set_xlabel(f"checkpoint (every {cfg.lm_traj_every} steps)")
    ax1.set_ylabel("alignment (held-out encoding r)")
    ax2.set_xlabel(f"checkpoint (every {cfg.lm_traj_every} steps)")
    ax2.set_ylabel("performance (- held-out loss)")
    ax1.legend(fontsize=6)
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "asymmetry: own - other zoo's alignment": diff,
            "asymmetry A (alignment leads > 0)": d["direction"],
            "asymmetry of the reference pairs": ref["direction"],
            "models with alignment -> performance (p < 0.05)": d["a2p"],
            "models with performance -> alignment (p < 0.05)": d["p2a"],
            "permutation-null false-positive rate (not judged)": null,
            "models": len(pairs),
            "checkpoints per trajectory": len(pairs[0][0]),
        },
        paper={"direction": "alignment -> performance more often than the reverse"},
        reason="" if holds else f"asymmetry difference {diff:.3f} <= 0",
        figures={"trajectories": fig},
    )


# ------------------------------------------------------------------------------------- mechanisms and measures


@mechanism(
    "learned-structure",
    component="the stimulus structure the synthetic brain carries from its trained reference network",
    measures="RBF-CKA of the reference network with its brain minus with the same brain shuffled across stimuli "
    "(model level: max over layers, mean over ROIs)",
    above=0.05,
)
def learned_structure(scale: Scale, seed: int) -> dict[str, float]:
    seed += FRESH  # the worlds performance-predicts-alignment-v2 reads
    aligned = float(_model_alignment(scale.value, seed, "trained")["reference"])
    shuffled = float(_model_alignment(scale.value, seed, "trained", np.random.default_rng([seed, 98]))["reference"])
    return {"learned-structure": aligned - shuffled, "reference alignment": aligned, "shuffled brain": shuffled}


@mechanism(
    "roi-hierarchy",
    component="the layer hierarchy of the ROIs (early / late / semantic read from hidden 1 / hidden 2 / logits)",
    measures="the reference network's own depth slope of RBF-CKA(semantic) - RBF-CKA(early) on its brain",
    above=0.02,
)
def roi_hierarchy(scale: Scale, seed: int) -> float:
    sp, ref, _, brains = world(scale.value, seed)
    return hierarchy_slope(align_models(_items([ref]), sp.X_stim, _caches(brains["trained"], sp.stim_ids)),
                           "semantic", "early")  # fmt: skip


@mechanism(
    "learning-dynamics",
    component="training trajectories that keep moving (the series the Granger tests read)",
    measures="share of epoch-to-epoch steps in which alignment and accuracy both change (|step| > 1e-4), over "
    "the trajectories",
    above=0.5,
)
def learning_dynamics(scale: Scale, seed: int) -> float:
    moving = [np.mean((np.abs(np.diff(al)) > 1e-4) & (np.abs(np.diff(acc)) > 1e-4))
              for _, al, acc in trajectories(scale.value, seed)]  # fmt: skip
    return float(np.mean(moving))


def _cka_check(seed: int) -> dict[str, float]:
    """Model-level RBF-CKA (sigma = 12; the claims' measure) at smoke size: the brain's generator (truth), the
    best zoo model, and the generator on its brain shuffled across stimuli (null)."""
    zoo = world("smoke", seed)[2]
    ma = _model_alignment("smoke", seed, "trained")
    shuffled = _model_alignment("smoke", seed, "trained", np.random.default_rng([seed, 97]))
    return {
        "truth": float(ma["reference"]),
        "best zoo model": float(max(ma[m.name] for m in zoo)),
        "null": float(shuffled["reference"]),
    }


@mechanism(
    "story-alignment",
    component="the story-locked signal the language models' features predict in the real BOLD",
    measures="held-out encoding r of the best final zoo model on the real time courses minus its mean over the K "
    "story-free (circularly shifted) brains of the v4 claims' reference set, mean over listeners and ROIs (zoos of "
    "seed + 4000)",
    above=0.02,
)
def story_alignment(scale: Scale, seed: int) -> dict[str, float]:
    seed += V4_FRESH  # the zoos the v4 real-brain claims read (cached: no zoo trained for the probe alone)
    zoo, _ = language_world(scale.value, seed)
    real = _real_roi_alignment(scale.value, seed).mean(1)
    shifted = _shifted_roi_alignments(scale.value, seed, 1).mean((0, 2))  # mean over the K story-free brains
    best = int(np.argmin([m.loss for m in zoo]))
    return {"story-alignment": float(real[best] - shifted[best]), "real": float(real[best]),
            "shifted": float(shifted[best])}  # fmt: skip


def _encoding_check(seed: int) -> dict[str, float]:
    """The encoding measure on the real stimulus timing: a brain written from known word features (at the real
    data's level, r ~ 0.3) is predicted best by those features; random word features score at the null."""
    from icml26.brainconverge.alice import encode, to_trs

    alice = _alice("smoke")
    rng = np.random.default_rng([seed, 73])
    W, (S, T, R) = len(alice.words), alice.bold.shape
    words = rng.standard_normal((W, 8))  # (W, 8) the features the brain is written from
    truth = to_trs(alice.onsets, words)
    signal = truth @ rng.standard_normal((8, S * R))
    signal /= signal.std(0)
    noise = alice.bold.transpose(1, 0, 2).reshape(T, S * R)  # the real BOLD as the noise
    brain = (0.35 * signal + noise).reshape(T, S, R).transpose(1, 0, 2)
    half = to_trs(alice.onsets, np.c_[words[:, :4], rng.standard_normal((W, 4))])
    return {
        "truth": float(encode(truth, brain, alice.nuisance).r.mean()),
        "half the features": float(encode(half, brain, alice.nuisance).r.mean()),
        "null": float(encode(to_trs(alice.onsets, rng.standard_normal((W, 8))), brain, alice.nuisance).r.mean()),
    }


MEASURES = [
    MeasureCheck("RBF-CKA alignment", _cka_check, null_band=(0.0, 0.3), margin=0.0),
    MeasureCheck("held-out encoding r (Alice)", _encoding_check, null_band=(-0.03, 0.03), margin=0.02),
]
MECHANISMS = [learned_structure, roi_hierarchy, learning_dynamics, story_alignment]
CLAIMS = [
    performance_predicts_alignment,
    hierarchy,
    granger_calibrated,
    scale_out,
    real_performance_alignment,
    real_granger,
    real_region,
]
