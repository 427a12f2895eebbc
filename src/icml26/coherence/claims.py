"""The paper's headline claims, executable, each in three arms (contract v3): the claim, a negative control
(the effect removed; for a comparison an A/A run with its own randomness) and a positive control (the claimed
effect planted at about the claims' bars: an A/A code with the fewest features replaced by coherent ones that
raise its own score by 1.25 x the bar, a known-good arm handicapped to just inside the bar). ``MECHANISMS`` probe
whether Coh's components act; ``MEASURES`` validate the claims' measures both ways (the truth scores best, a null
at the null).

Shared experiment (``experiment.circle_runs``): circle data in R^20 (the angle is hidden from the model;
Coh's geometry is the kNN-geodesic Isomap embedding of the inputs), three autoencoders from the same
initialisation: recon + Coh, recon + L1 (weight swept so its activation density matches Coh's), recon only.
The claims that use it train it once per seed (in-process cache).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.coherence.config import get_config
from icml26.coherence.experiment import (
    ball_codes,
    circle_runs,
    coherent_arc_codes,
    encode,
    l1_twin,
    mnist_runs,
    per_batch_cost,
    token_runs,
    twin,
)
from icml26.coherence.geometry import Geometry, coherence_report
from icml26.coherence.measures import (
    arc_tiling,
    feature_coherence,
    knn_adjacency,
    mean_live,
    support_contiguity,
    token_consistency,
)
from icml26.coherence.topology import arc_contiguity, interleaving_check

ABSTRACT = "abstract"


def _binned_contiguity(codes: np.ndarray, theta: np.ndarray, bins: int) -> float:
    """Mean chance-corrected binned contiguity (``arc_contiguity``) over the live features; reported, not judged."""
    ac = arc_contiguity(codes, theta, bins=bins)
    return float(np.mean(ac["contiguity"][ac["live"]])) if ac["live"].any() else 0.0


#: Offset of the seed stream of the claims versioned after the referee's review of issue 47 (circle-tiling-v2,
#: rotated-mnist-*-v2, token-features-v3, reconstruction-kept-v4; the retired circle-coherent-arcs-v5 and
#: topology-shared-v5, see the README) and of the probes of the models they read: the token lambda (3.0) may have
#: been chosen after seeing seed 1000, so every judged run from here on trains on untouched seeds s + 2000.
#: (History: v2 ran on seeds 0-4, where curvature 3, the retired topology-shared's margin 0.15 and
#: reconstruction-kept's 100x control were fixed; v3/v4 on s + 1000.)
FRESH2 = 2000


def _plot_arcs(theta: np.ndarray, arms: dict[str, np.ndarray], bins: int = 48):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(arms), subplot_kw={"projection": "polar"}, figsize=(4.2 * len(arms), 4.2))
    edges = np.linspace(0, 2 * np.pi, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    b = np.minimum((np.mod(theta, 2 * np.pi) / (2 * np.pi) * bins).astype(int), bins - 1)
    counts = np.maximum(np.bincount(b, minlength=bins), 1)
    for ax, (name, A) in zip(np.atleast_1d(axes), arms.items(), strict=True):
        for j in range(A.shape[1]):
            curve = np.bincount(b, weights=A[:, j], minlength=bins) / counts
            if curve.max() <= 0:
                continue
            curve = curve / curve.max()
            ax.plot(np.r_[centres, centres[0]], 1 + np.r_[curve, curve[0]], lw=1.2)
        ax.set_title(f"{name}: feature tuning on the circle", fontsize=10)
        ax.set_yticks([])
    fig.tight_layout()
    return fig


class _Planted:
    """The planted arm of a positive control: an A/A code with part of its features replaced by coherent arcs, in
    the place of a trained model's result (its reconstruction is the A/A model's; the claims that plant it do not
    judge MSE)."""

    def __init__(self, codes: np.ndarray, mse: float, gains: dict[str, float] | None = None, reached: bool = True):
        self.codes = codes
        self.density = float((codes > 0).mean())
        self.mse = mse
        self.gains = gains or {}  # measure -> the plant's realised gain on the A/A code itself
        self.reached = reached  # False: every feature replaced and some target still short

    def record(self) -> tuple[dict[str, float], str]:
        """The plant's size for a positive arm's ``measured`` (and a reason when its target was not reached)."""
        out = {f"plant gain on the A/A code ({k})": v for k, v in self.gains.items()}
        out["plant target reached"] = float(self.reached)
        why = "" if self.reached else "plant target not reached: every feature replaced and still short of 1.25 x bar"
        return out, why


def word_codes(word_ids: np.ndarray, m: int, rng: np.random.Generator, k: int = 10) -> np.ndarray:
    """Same-word features by construction (n, m): feature j fires (uniform 0.5-1) on every token of one word piece,
    drawn (seeded) among the pieces with at least ``k`` tokens (the most frequent ones if fewer than m have)."""
    ids, counts = np.unique(word_ids, return_counts=True)
    pool = ids[counts >= k] if (counts >= k).sum() >= m else ids[np.argsort(-counts, kind="stable")[:m]]
    words = rng.choice(pool, size=m, replace=len(pool) < m)
    return (word_ids[:, None] == words[None, :]) * rng.uniform(0.5, 1.0, (len(word_ids), m))


# --- planting a coherence gain of a known size (positive controls of the v4 claims) ------------------------------


#: Positive controls plant this multiple of a claim's bar (the design's 1-1.5x): the A/A code's features are
#: replaced, in a seeded random order, by coherent features by construction until every judged measure of the
#: A/A code itself has risen by at least PLANT_FACTOR x its bar. The paired statistic against the baseline is then
#: (A/A scatter) + (plant), so the positive holds only when the run resolves an effect of about the bar's size.
PLANT_FACTOR = 1.25


def _plant(aa, ideal, scores, bars: dict[str, float], seed: int) -> _Planted:
    """``aa``'s codes with the fewest features (seeded order) replaced by coherent columns (rescaled to each
    replaced feature's maximum) that raise each measure in ``scores`` (name -> per-feature scoring function of a
    code matrix) by PLANT_FACTOR x ``bars[name]`` on the A/A code itself. ``ideal`` is one code matrix for every
    measure, or a dict name -> code matrix: then each replaced feature takes its column from the ideal of the first
    measure (in ``scores`` order) still short of its target, so a plant can combine, e.g., compact features for one
    measure and same-word features for another. Every measure here scores features independently, so the plant
    is sized from per-feature scores computed once; the last replaced feature is mixed only partly toward its ideal
    (the smallest weight that still reaches every target, `_finest_mix`), so a plant lands at 1.25 x its bar rather
    than up to one feature's gain past it."""
    ideals = ideal if isinstance(ideal, dict) else {k: ideal for k in scores}
    base = {k: fn(aa.codes) for k, fn in scores.items()}  # name -> (m,) per-feature scores (NaN: dead)
    good = {(src, k): fn(ideals[src]) for src in scores for k, fn in scores.items()}  # scores of each ideal
    order = np.random.default_rng([seed, 53]).permutation(aa.codes.shape[1])

    def mean(v):
        return float(np.nanmean(v)) if np.isfinite(v).any() else 0.0

    def short(planted):
        return [k for k in scores if mean(planted[k]) - mean(base[k]) < PLANT_FACTOR * bars[k]]

    def column(j: int, src: str, t: float) -> np.ndarray:  # (n,) feature j mixed a fraction t toward its ideal
        ideal_j = ideals[src][:, j] * max(float(aa.codes[:, j].max()), 1e-6)  # keep the feature's scale
        return (1.0 - t) * aa.codes[:, j] + t * ideal_j

    planted = {k: v.copy() for k, v in base.items()}
    source: dict[int, str] = {}
    for j in order:
        src = short(planted)[0]
        source[j] = src
        for k in scores:
            planted[k][j] = good[(src, k)][j]
        if not short(planted):
            break
    codes = aa.codes.copy()
    for j, src in source.items():
        codes[:, j] = column(j, src, 1.0)
    reached = bool(source) and not short(planted)
    if reached and len(set(source.values())) > 1:
        # A later ideal also raises an earlier measure (same-word features are compact too), so the earlier ideal's
        # swaps, made before it, overshoot: undo those (latest first) that every target can spare.
        last_src = list(source.values())[-1]
        for j in [j for j, src in reversed(source.items()) if src != last_src]:
            trial = _rescore(planted, scores, aa.codes[:, j], j)
            if not short(trial):
                planted, codes[:, j] = trial, aa.codes[:, j]
                del source[j]
    if reached:  # each ideal's last swap overshoots by up to one feature's gain: mix it only partly (latest first)
        lasts = {src: j for j, src in source.items()}
        for src, j in sorted(lasts.items(), key=lambda kv: -list(source).index(kv[1])):
            t = _finest_mix(lambda t, P=planted, j=j, src=src: not short(_rescore(P, scores, column(j, src, t), j)))
            codes[:, j] = column(j, src, t)
            planted = _rescore(planted, scores, codes[:, j], j)
    gains = {k: mean(planted[k]) - mean(base[k]) for k in scores}
    return _Planted(codes, aa.mse, gains, reached)


#: Bisection steps of the partial last swap (the mixing weight is resolved to 2^-MIX_STEPS).
MIX_STEPS = 10


def _finest_mix(reaches) -> float:
    """The smallest mixing weight t in (0, 1] (to 2^-MIX_STEPS, by bisection) with ``reaches(t)`` true, given
    ``reaches(1)``; the plant of a partial last swap lands at its target instead of up to one feature's gain past
    it (the scores need not be monotone in t: the weight returned always reaches)."""
    lo, hi = 0.0, 1.0
    for _ in range(MIX_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def _rescore(planted: dict, scores, col: np.ndarray, j: int) -> dict:
    """``planted`` (name -> per-feature scores) with feature j's scores replaced by those of column ``col``."""
    out = {k: v.copy() for k, v in planted.items()}
    for k, fn in scores.items():
        out[k][j] = fn(col[:, None])[0]
    return out


def _plant_record(ours, arm: Arm) -> tuple[dict[str, float], str]:
    """A positive arm's plant size (gain on the A/A code, target reached) for ``measured``, and its reason."""
    return ours.record() if arm is Arm.POSITIVE else ({}, "")


def _mean(v: np.ndarray) -> float:
    return float(np.nanmean(v)) if np.isfinite(v).any() else 0.0


def _plant_whole(
    aa, ideal: np.ndarray, gain, bar: float, seed: int, *, common_scale: bool = False, name: str = "score"
) -> _Planted:
    """``aa``'s codes with the fewest features (seeded order) replaced by the same columns of ``ideal`` (rescaled
    to each feature's maximum, or with ``common_scale`` to the code's largest activation: a measure that compares
    features sample by sample, like the tiling's most-active feature, needs planted arcs as strong as any feature
    they replace or meet) that raise ``gain(codes)`` (a code-level score's gain over ``aa`` itself: 0 for the
    A/A code) to PLANT_FACTOR x ``bar``. For scores that are not per-feature (the H1 bottleneck, the tiling of the
    circle), so each prefix is scored; the last swap is mixed only partly (the smallest weight that still
    reaches, `_finest_mix`). Every feature replaced and still short: the all-swapped code, marked not reached
    (its ``record`` says so in the positive arm's measured; the positive then reads no-power). ``name`` labels the
    gain recorded."""
    order = np.random.default_rng([seed, 53]).permutation(aa.codes.shape[1])
    scale = np.full(aa.codes.shape[1], aa.codes.max()) if common_scale else aa.codes.max(0)
    scale = np.maximum(scale, 1e-6)
    codes = aa.codes.copy()

    def reaches(C: np.ndarray) -> bool:
        return gain(C) >= PLANT_FACTOR * bar

    def mixed(C: np.ndarray, j: int, t: float) -> np.ndarray:  # C with feature j mixed a fraction t to its ideal
        out = C.copy()
        out[:, j] = (1.0 - t) * aa.codes[:, j] + t * ideal[:, j] * scale[j]
        return out

    reached = False
    for j in order:
        before = codes
        codes = mixed(before, j, 1.0)
        if reaches(codes):
            codes = mixed(before, j, _finest_mix(lambda t, C=before, j=j: reaches(mixed(C, j, t))))
            reached = True
            break
    return _Planted(codes, aa.mse, {name: float(gain(codes))}, reached)


#: Bar of circle-tiling-v1/v2 (fixed before v1's first judged run, the circle claims' 0.1): Coh's features tile the
#: true circle better than density-matched L1's by 0.1 of the circle. Its measure was designed on two smoke seeds
#: (2000, 2001: smoke-sized data and models, Coh 0.42 / 0.36, L1 0.51 / 0.55, ideal arcs 0.90), where L1 is not at
#: the measure's ceiling as it is on coherence and compactness (v4's referee item 4). v1's positive control was
#: broken: planted arcs rescaled to each replaced feature's maximum (0 for a dead one) lost the most-active
#: comparison to stronger neighbours, so replacing every feature *lowered* the A/A tiling at small (seed 2000:
#: 0.79 -> 0.74; ideal arcs at one scale 0.92). v2 plants them at the code's largest activation; claim, negative,
#: bar and measure unchanged.
TILING_BAR = 0.1


@claim(
    "coherence/circle-tiling-v2",
    statement="On circle data embedded in R^20 (the circle experiment of reconstruction-kept-v4, same models, seeds "
    "+ 2000), recon + Coh features tile the true circle into contiguous arcs better than recon + L1 features at "
    "matched density: the share of the circle covered by one contiguous territory per feature (each sample's most "
    "active feature; a feature credited only its longest run and at most a fair share 1/m; 1: m equal tiles, "
    "~0.9: jittered ideal arcs, 0: scattered or non-selective firing) is higher by more than 0.1, paired over "
    "seeds. The paper's 'tile the circle' judged where L1 is not at the ceiling (smoke: L1 ~0.5). v2: the positive "
    "control's arcs planted at one common scale (v1's plant could lower the tiling)",
    paper="abstract: 'if data lies on a circle, coherent features must tile that circle into contiguous arcs'",
    control="A/A: a second density-matched L1 model (its own initialisation and batch order) in Coh's place: the "
    "paired difference scatters around 0",
    positive="the A/A code with the fewest features (seeded order; the last one mixed only partly) replaced by "
    "coherent arcs tiling the true circle, at the code's largest activation, that raise its own tiling by 1.25 x the "
    "bar (0.125), in Coh's place",
    mechanisms=("coh-penalty", "coverage"),
    judge=Interval("tiling(Coh) - tiling(L1)", above=TILING_BAR),
)
def circle_tiling(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    seed += FRESH2
    R = circle_runs(cfg, seed)
    theta = R["data"].theta[:, 0]

    def tiling(A: np.ndarray) -> dict:
        return arc_tiling(A, theta)

    if arm is Arm.CLAIM:
        ours = R["coh"]
    else:
        aa = l1_twin(cfg, seed)
        base = tiling(aa.codes)["tiling"]
        ideal = coherent_arc_codes(theta, cfg.n_features, np.random.default_rng([seed, 31]))
        ours = aa
        if arm is Arm.POSITIVE:
            ours = _plant_whole(
                aa, ideal, lambda C: tiling(C)["tiling"] - base, TILING_BAR, seed, common_scale=True, name="tiling"
            )
    t = {k: tiling(v.codes) for k, v in (("ours", ours), ("l1", R["l1"]), ("none", R["none"]))}
    gain = t["ours"]["tiling"] - t["l1"]["tiling"]
    plant, why = _plant_record(ours, arm)
    return ClaimResult(
        "holds" if gain > TILING_BAR else "fails",
        measured={
            "tiling(Coh) - tiling(L1)": gain,
            "tiling(Coh)": t["ours"]["tiling"],
            "tiles credited (Coh)": int((t["ours"]["tile_share"] > 0).sum()),
            "runs round the circle (Coh)": t["ours"]["runs"],
            "density(Coh)": ours.density,
        },
        reason=why,
        baselines={
            "tiling(L1)": t["l1"]["tiling"],
            "tiles credited (L1)": int((t["l1"]["tile_share"] > 0).sum()),
            "tiling(recon only)": t["none"]["tiling"],
            "density(L1)": R["l1"].density,
            **plant,
        },
        paper={"circle features": "tile the circle into contiguous arcs (qualitative)"},
    )


def _half_arcs(theta: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Narrow coherent arcs (half-width 0.2) that tile only the half circle [0, pi): samples in the other half
    are uncovered."""
    centres = np.sort(rng.uniform(0.1, np.pi - 0.1, m))
    delta = np.abs((theta[:, None] - centres[None, :] + np.pi) % (2 * np.pi) - np.pi)  # (n, m)
    half = 0.2
    return np.where(delta < half, np.cos(np.pi / 2 * delta / half), 0.0)


@claim(
    "coherence/interleaving-bound-v1",
    statement="Theorem check (the paper's theorem, in our proof's form; not an empirical claim): for a code with "
    "both coverage conditions (every sample has an active feature, every feature an active sample) and column "
    "radius r, the bottleneck distances between the VR diagrams (H0, H1) of the samples and of the barycentric "
    "feature positions are at most 2r; checked on coherent matrices built by construction (arcs tiling 400 "
    "points of the circle): max dB / 2r < 1",
    paper="abstract: 'coherent matrices induce a bounded interleaving between the Vietoris-Rips filtrations of "
    "samples and features'",
    control="coverage removed: the arcs tile only half the circle (the other half's samples have no feature) and "
    "2r is taken over the active pairs as if the premise held: the features miss the circle's H1, so dB exceeds 2r",
    positive="the negative control's half tiling with coverage restored by one wide feature over the uncovered half "
    "(the premise holds again, so the bound must)",
    judge=Interval("max dB / 2r", below=1.0),
)
def interleaving_bound(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    rng = np.random.default_rng([seed, 61])
    theta = rng.uniform(0, 2 * np.pi, cfg.topo_points)
    geo = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)])
    ratios, lives = [], []
    for _ in range(cfg.n_constructed):
        if arm is Arm.CLAIM:
            A = coherent_arc_codes(theta, cfg.n_features, rng)
        else:
            A = _half_arcs(theta, cfg.n_features, rng)
            A = A[:, A.sum(0) > 0]
            if arm is Arm.POSITIVE:
                A = np.c_[A, (A.sum(1) == 0).astype(float)]  # one feature on the uncovered samples
        chk = interleaving_check(A, geo)
        r = chk["column_radius"]
        ratios.append(chk["bottleneck_max"] / (2 * r))
        lives.append(chk["features_H1_max_life"])
    worst = max(ratios)
    return ClaimResult(
        "holds" if worst < 1.0 else "fails",
        measured={
            "max dB / 2r": worst,
            "mean dB / 2r": float(np.mean(ratios)),
            "features H1 lifetime": float(np.mean(lives)),
        },
        paper={"theorem": "bounded interleaving of VR filtrations for coherent matrices (no constant recovered)"},
    )


# --- rotated real MNIST ---------------------------------------------------------------------------------------------

#: Bar of the two rotated-MNIST claims (fixed before their first judged run): mean chance-corrected coherence of
#: the features' angle tuning, Coh minus density-matched L1, above 0.1.
MNIST_BAR = 0.1


def _mnist_claim(scale: Scale, seed: int, arm: Arm, which: str) -> ClaimResult:
    """Shared body of the two rotated-MNIST claims; ``which`` is ``"angle"`` or ``"pixel"`` (Coh's geometry)."""
    cfg = get_config(scale)
    seed += FRESH2
    R = mnist_runs(cfg, seed)
    held = R["heldout"]  # v2: judged on digits no model trained on (Coh-angle trained on the training digits' angle)
    theta = held.theta[:, 0]
    angle = Geometry.circular(held.theta)  # evaluation geometry: the held-out images' rotation angle on S^1

    def score(A):
        return feature_coherence(A, angle)["coherence"]

    def on_heldout(res) -> _Planted:
        return _Planted(encode(res, held.X), res.mse)

    l1 = on_heldout(R[f"l1-{which}"])
    if arm is Arm.CLAIM:
        ours = on_heldout(R[f"coh-{which}"])
    else:
        aa = on_heldout(twin(cfg, seed, "mnist", f"l1-{which}"))
        ideal = coherent_arc_codes(theta, cfg.n_features, np.random.default_rng([seed, 31]))
        ours = aa if arm is Arm.NEGATIVE else _plant(aa, ideal, {"coherence": score}, {"coherence": MNIST_BAR}, seed)
    none = on_heldout(R["none"])
    c = {k: _mean(score(v.codes)) for k, v in (("ours", ours), ("l1", l1), ("none", none))}
    contig = {k: _binned_contiguity(v.codes, theta, cfg.n_angles) for k, v in (("ours", ours), ("l1", l1))}
    gain = c["ours"] - c["l1"]
    plant, why = _plant_record(ours, arm)
    figures = {}
    if arm is Arm.CLAIM:
        figures["angle_tuning"] = _plot_arcs(theta, {f"Coh ({which})": ours.codes, "L1": l1.codes}, bins=cfg.n_angles)
    return ClaimResult(
        "holds" if gain > MNIST_BAR else "fails",
        measured={
            "coherence(Coh) - coherence(L1)": gain,
            "coherence(Coh)": c["ours"],
            "binned contiguity(Coh)": contig["ours"],
            "density(Coh)": ours.density,
            "MSE(Coh) (training digits)": ours.mse,
            "held-out images": len(theta),
        },
        reason=why,
        baselines={
            "coherence(L1)": c["l1"],
            "binned contiguity(L1)": contig["l1"],
            "density(L1)": l1.density,
            "MSE(L1) (training digits)": l1.mse,
            "coherence(recon only)": c["none"],
            "MSE(recon only)": R["none"].mse,
            **plant,
        },
        paper={"rotated MNIST": "Coh validated in an auto-encoder (qualitative)"},
        figures=figures,
    )


@claim(
    "coherence/rotated-mnist-angle-v2",
    statement="On real 28x28 MNIST digits rotated through 36 angles, recon + Coh handed the rotation angle as its "
    "geometry (S^1: side information that the L1 and recon-only arms do not get) learns features whose angle "
    "tuning is more coherent (the paper's coherence 1 - V_col/V_total on the angle, chance-corrected against "
    "shuffled samples) than recon + L1 features at matched density, by more than 0.1. v2: judged on the codes of "
    "held-out digits (never trained on, so Coh's training objective on the angle is not the judged quantity); "
    "paired over untouched seeds (seed + 2000)",
    paper="abstract: Coh validated 'in an auto-encoder using synthetic and rotated MNIST datasets'",
    control="A/A: a second L1 model at the matched weight (its own initialisation and batch order) in Coh's place",
    positive="that A/A code with the fewest features (seeded order) replaced by arcs tiling the angle that raise its "
    "own coherence by 1.25 x the bar (0.125), in Coh's place",
    mechanisms=("coh-penalty-mnist",),
    judge=Interval("coherence(Coh) - coherence(L1)", above=MNIST_BAR),
)
def rotated_mnist_angle(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    return _mnist_claim(scale, seed, arm, "angle")


@claim(
    "coherence/rotated-mnist-pixel-graph-v2",
    statement="On the same rotated MNIST, recon + Coh on the pixel-space kNN graph (10-NN, geodesic, joined by "
    "the Euclidean minimum spanning tree; no side information) learns features whose angle tuning is more "
    "coherent than recon + L1 features at matched density, by more than 0.1 (same measure, held-out digits and "
    "seeds as rotated-mnist-angle-v2)",
    paper="abstract: Coh validated 'in an auto-encoder using synthetic and rotated MNIST datasets' (the geometry "
    "Coh used there is not recovered)",
    control="A/A: a second L1 model at the weight matched to this Coh arm's density, in Coh's place",
    positive="that A/A code with the fewest features (seeded order) replaced by arcs tiling the angle that raise its "
    "own coherence by 1.25 x the bar (0.125), in Coh's place",
    mechanisms=("coh-penalty-mnist",),
    judge=Interval("coherence(Coh) - coherence(L1)", above=MNIST_BAR),
)
def rotated_mnist_pixel_graph(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    return _mnist_claim(scale, seed, arm, "pixel")


# --- MiniLM token embeddings of SST-2 ---------------------------------------------------------------------------

#: Bars of token-features-v1/v2/v3 (fixed before v1's first judged run, unchanged): Coh's dictionary features beat
#: L1's by 0.1 in support compactness on the embeddings' 10-NN graph and by 0.05 in top-token consistency (both
#: chance-corrected). v3 judges them on held-out sentences' codes (fixed before v3's run).
TOKEN_BARS = {"contiguity": 0.1, "consistency": 0.05}


@claim(
    "coherence/token-features-v3",
    statement="On MiniLM-L6 (a BERT-architecture encoder) contextual token embeddings of SST-2 word pieces, an SAE "
    "dictionary (32 atoms) trained with recon + Coh (on the training tokens' kNN-geodesic geometry) encodes the "
    "word pieces of held-out sentences (never trained on; no sentence shared) into features whose support is more "
    "compact on the held-out embeddings' 10-NN graph (size-aware, chance-corrected, by > 0.1) and whose top-10 "
    "activating held-out tokens more often carry the same word-piece id (chance-corrected, by > 0.05) than an SAE "
    "trained with recon + L1 at matched density (paired over untouched seeds, seed + 2000). v3: judged on held-out "
    "codes, not on the training tokens whose graph Coh trained on (v2)",
    paper="abstract: Coh validated 'in a token embedding of BERT using language data'",
    control="A/A: a second SAE with the matched L1 weight (its own initialisation and batch order) in Coh's place",
    positive="that A/A dictionary's held-out codes with the fewest features (seeded order) replaced by bumps over "
    "the 20 nearest held-out tokens of a random one and by same-word features (each firing on every held-out "
    "token of one frequent word piece) until each measure has risen by 1.25 x its bar (swaps the same-word features "
    "make unnecessary undone, each ideal's last swap mixed only partly), in Coh's place",
    mechanisms=("coh-penalty-tokens",),
    judge=(
        Interval("contiguity(Coh) - contiguity(L1)", above=TOKEN_BARS["contiguity"]),
        Interval("consistency(Coh) - consistency(L1)", above=TOKEN_BARS["consistency"]),
    ),
)
def token_features(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    seed += FRESH2
    try:
        R = token_runs(cfg, seed)
    except ValueError as exc:  # transformers or the MiniLM data wheel missing
        return ClaimResult("not-measured", reason=str(exc))
    held = R["heldout"]  # v3: word pieces of sentences no dictionary trained on
    adj = knn_adjacency(held.X, 10)
    scores = {
        "contiguity": lambda A: support_contiguity(A, adj)["contiguity"],
        "consistency": lambda A: token_consistency(A, held.groups)["consistency"],
    }

    def on_heldout(res) -> _Planted:
        return _Planted(encode(res, held.X), res.mse)

    if arm is Arm.CLAIM:
        ours = on_heldout(R["coh"])
    else:
        aa = on_heldout(twin(cfg, seed, "tokens", "l1"))
        rng = np.random.default_rng([seed, 71])
        ideal = {  # compact bumps for the support measure, same-word features for consistency
            "contiguity": ball_codes(held.X, cfg.token_features, rng),
            "consistency": word_codes(held.groups, cfg.token_features, rng),
        }
        ours = aa if arm is Arm.NEGATIVE else _plant(aa, ideal, scores, TOKEN_BARS, seed)
    codes = {"ours": ours.codes, "l1": encode(R["l1"], held.X), "none": encode(R["none"], held.X)}
    s = {name: {k: _mean(fn(A)) for k, A in codes.items()} for name, fn in scores.items()}
    plant, why = _plant_record(ours, arm)
    measured = {
        "contiguity(Coh) - contiguity(L1)": s["contiguity"]["ours"] - s["contiguity"]["l1"],
        "consistency(Coh) - consistency(L1)": s["consistency"]["ours"] - s["consistency"]["l1"],
        "contiguity(Coh)": s["contiguity"]["ours"],
        "consistency(Coh)": s["consistency"]["ours"],
        "density(Coh) (held out)": ours.density,
        "MSE(Coh) (training tokens)": ours.mse,
        "held-out tokens": len(held.X),
    }
    ok = all(measured[f"{k}(Coh) - {k}(L1)"] > bar for k, bar in TOKEN_BARS.items())
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        baselines={
            "contiguity(L1)": s["contiguity"]["l1"],
            "consistency(L1)": s["consistency"]["l1"],
            "contiguity(recon only)": s["contiguity"]["none"],
            "consistency(recon only)": s["consistency"]["none"],
            "density(L1) (held out)": float((codes["l1"] > 0).mean()),
            "MSE(L1) (training tokens)": R["l1"].mse,
            "MSE(recon only) (training tokens)": R["none"].mse,
            **plant,
        },
        paper={"BERT token embedding": "Coh validated on language data (qualitative)"},
        reason=why,
    )


#: Positive control of reconstruction-kept: the A/A model's MSE ratio handicapped by this factor (1.5 / 1.25).
PLANTED_MSE_RATIO = 1.2


@claim(
    "coherence/reconstruction-kept-v4",
    statement="Engineering check (not a claim of the paper; kept, not counted): on circle data, recon + Coh "
    "reconstructs about as well as recon + L1 at matched activation density: the paired ratio MSE(Coh) / MSE(L1) "
    "stays below 1.5. The negative control's 100x weight and the embedding's curvature 3 were fixed from v2's seeds; "
    "v4: judged on untouched seeds (seed + 2000)",
    paper="abstract: Coh 'yields not just interpretable features but an interpretable feature space' "
    "(reconstruction is not quantified in the abstract)",
    control="Coh at 100x its weight (lambda_Coh = 10, coherence dominating reconstruction) in place of the "
    "lambda_Coh = 0.1 model (fixed in v2: 10x gave a ratio of 1.45 on one smoke seed)",
    positive="a known-good arm handicapped to just inside the bar: a second density-matched L1 model (its own "
    "initialisation) with its MSE multiplied by 1.2, so the ratio to the L1 arm is 1.2 x its A/A scatter around 1 "
    "(the bar 1.5 is 1.25x the plant)",
    mechanisms=("coh-penalty",),
    judge=Interval("MSE(Coh) / MSE(L1)", below=1.5),
)
def reconstruction_kept(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.coherence.model import fit_autoencoder

    cfg = get_config(scale)
    seed += FRESH2  # v4: judged on untouched seeds
    R = circle_runs(cfg, seed)
    ours = R["coh"]
    if arm is Arm.POSITIVE:  # the A/A model, handicapped by the planted ratio
        twin = l1_twin(cfg, seed)
        ours = _Planted(twin.codes, PLANTED_MSE_RATIO * twin.mse)
    if arm is Arm.NEGATIVE:  # the one line the control changes: Coh's weight x 100
        ours = fit_autoencoder(
            R["data"].X,
            penalty="coh",
            lam=100 * cfg.lam_coh,
            geometry=R["geometry"],
            n_features=cfg.n_features,
            hidden=cfg.hidden,
            steps=cfg.steps,
            batch_size=cfg.batch_size,
            seed=seed,
        )
    ratio = ours.mse / R["l1"].mse
    return ClaimResult(
        "holds" if ratio < 1.5 else "fails",
        measured={
            "MSE(Coh) / MSE(L1)": ratio,
            "MSE(Coh)": ours.mse,
            "density(Coh)": ours.density,
            "density gap |Coh - L1|": abs(ours.density - R["l1"].density),
        },
        baselines={
            "MSE(L1)": R["l1"].mse,
            "density(L1)": R["l1"].density,
            "L1 weight chosen": R["l1"].lam,
            "MSE(recon only)": R["none"].mse,
            **({"planted MSE ratio on the A/A model": PLANTED_MSE_RATIO} if arm is Arm.POSITIVE else {}),
        },
    )


@claim(
    "coherence/cheaper-than-ph-losses-v1",
    statement="Engineering check (not a claim of the paper; kept, not counted): one forward + backward of Coh "
    "on a batch of n = 1,024 codes (m = 16) is at least 10x cheaper than a Vietoris-Rips persistent-homology "
    "loss (torch-topological SignatureLoss, H0) on the same batch",
    paper="abstract: Coh is 'a differentiable objective function based on Fréchet variance' (no timing printed)",
    control="A/A: the persistence loss in Coh's place, timed in its own second run (the ratio scatters around 1)",
    positive="a known-good arm in Coh's place: the L1 penalty (one sum; known to be >> 10x cheaper than a PH loss)",
    judge=Interval("t(PH loss) / t(Coh)", above=10.0),
)
def cheaper_than_ph_losses(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    cost = per_batch_cost(cfg.timing_n, cfg.timing_m, repeats=cfg.timing_repeats, seed=seed)
    t_ours = {  # the arms differ only in the loss timed in Coh's place
        Arm.CLAIM: lambda: cost["coh_s"],
        Arm.NEGATIVE: lambda: per_batch_cost(cfg.timing_n, cfg.timing_m, repeats=cfg.timing_repeats, seed=seed)["ph_s"],
        Arm.POSITIVE: lambda: cost["l1_s"],
    }[arm]()
    ratio = cost["ph_s"] / t_ours
    return ClaimResult(
        "holds" if ratio > 10.0 else "fails",
        measured={"t(PH loss) / t(Coh)": ratio, "t(Coh) [s]": t_ours, "n": cfg.timing_n, "m": cfg.timing_m},
        baselines={"t(PH loss) [s]": cost["ph_s"], "t(L1) [s]": cost["l1_s"]},
        reason=f"peer: {cost['peer']}",
    )


# --- credited mechanisms and their liveness probes ---------------------------------------------------------------


@mechanism(
    "coh-penalty",
    component="the Fréchet-variance terms of Coh (features clustered in sample space, samples in feature space)",
    measures="1 - mean column Fréchet variance of the Coh model's codes / that of the recon-only model's codes, "
    "on the geometry Coh trains with (circle data; 0: the penalty changes nothing)",
    above=0.1,
)
def coh_penalty(scale: Scale, seed: int) -> dict[str, float]:
    R = circle_runs(get_config(scale), seed + FRESH2)  # the models the circle claims read
    v = {
        arm: coherence_report(R[arm].codes, R["geometry"]).summary()["mean_column_variance"] for arm in ("coh", "none")
    }
    return {"coh-penalty": 1.0 - v["coh"] / v["none"], "V_col(Coh)": v["coh"], "V_col(recon only)": v["none"]}


@mechanism(
    "coh-penalty-mnist",
    component="Coh's Fréchet-variance terms on rotated MNIST (both Coh arms: the angle and the pixel kNN graph)",
    measures="1 - mean column Fréchet variance of each Coh arm's codes / that of the recon-only codes, on the "
    "geometry that arm trains with; the smaller of the two (0: the penalty changes nothing)",
    above=0.1,
)
def coh_penalty_mnist(scale: Scale, seed: int) -> dict[str, float]:
    R = mnist_runs(get_config(scale), seed + FRESH2)  # the models the MNIST claims read
    out = {}
    for which in ("angle", "pixel"):
        v = {
            a: coherence_report(R[a].codes, R[which]).summary()["mean_column_variance"]
            for a in (f"coh-{which}", "none")
        }
        out[f"V_col reduction ({which})"] = 1.0 - v[f"coh-{which}"] / v["none"]
    return {"coh-penalty-mnist": min(out.values()), **out}


@mechanism(
    "coh-penalty-tokens",
    component="Coh's Fréchet-variance terms on the MiniLM token dictionary",
    measures="1 - mean column Fréchet variance of the Coh dictionary's codes / that of the recon-only dictionary's, "
    "on the kNN-geodesic geometry Coh trains with (0: the penalty changes nothing)",
    above=0.1,
)
def coh_penalty_tokens(scale: Scale, seed: int) -> dict[str, float]:
    try:
        R = token_runs(get_config(scale), seed + FRESH2)
    except ValueError:  # transformers or the MiniLM wheel missing: nothing to probe
        return {"coh-penalty-tokens": float("nan")}
    v = {a: coherence_report(R[a].codes, R["geometry"]).summary()["mean_column_variance"] for a in ("coh", "none")}
    return {"coh-penalty-tokens": 1.0 - v["coh"] / v["none"], "V_col(Coh)": v["coh"], "V_col(recon only)": v["none"]}


@mechanism(
    "coverage",
    component="the coverage hinges of Coh: every feature needed by some sample, every sample described",
    measures="share of the Coh model's features that fire on some sample (circle data; the coverage condition "
    "asks for all of them)",
    above=0.9,
)
def coverage(scale: Scale, seed: int) -> dict[str, float]:
    R = circle_runs(get_config(scale), seed + FRESH2)  # the models the circle claims read
    alive = {arm: float((R[arm].codes.sum(0) > 0).mean()) for arm in ("coh", "l1", "none")}
    return {"coverage": alive["coh"], "live share (L1)": alive["l1"], "live share (recon only)": alive["none"]}


# --- the claims' measures, validated both ways --------------------------------------------------------------------


def _circle_cases(seed: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Known cases on 512 angles, 16 features each: coherent arcs (truth), two and three bumps per feature
    (scattered: several separated arcs), 10 % random firing (scattered, no geometry), a feature that fires
    everywhere (non-selective) and dense random firing (the null)."""
    rng = np.random.default_rng([seed, 41])
    theta = rng.uniform(0, 2 * np.pi, 512)
    phase = rng.uniform(0, 2 * np.pi, 16)
    return theta, {
        "truth": coherent_arc_codes(theta, 16, rng),
        "two bumps": np.maximum(np.cos(2 * theta[:, None] + phase), 0),
        "three bumps": np.maximum(np.cos(3 * theta[:, None] + phase), 0),
        "random 10%": (rng.random((512, 16)) < 0.1) * rng.random((512, 16)),
        "fires everywhere": 1.0 + 0.05 * rng.random((512, 16)),
        "null": rng.random((512, 16)),
    }


def _coherence_check(seed: int) -> dict[str, float]:
    """The paper's coherence (chance-corrected) of the known cases on S^1."""
    theta, codes = _circle_cases(seed)
    geo = Geometry.circular(theta)
    return {k: mean_live(feature_coherence(A, geo), "coherence") for k, A in codes.items()}


def _support_check(seed: int) -> dict[str, float]:
    """Support compactness (size-aware, no binning) of the known cases on the circle's 10-NN graph."""
    theta, codes = _circle_cases(seed)
    adj = knn_adjacency(np.c_[np.cos(theta), np.sin(theta)], 10)
    return {k: mean_live(support_contiguity(A, adj), "contiguity") for k, A in codes.items()}


def _tiling_check(seed: int) -> dict[str, float]:
    """Tiling of the circle by the known cases (512 angles, 16 features), plus arcs tiling only half the circle
    (bunched: every feature credited at most half its fair share)."""
    theta, codes = _circle_cases(seed)
    codes["half circle"] = _half_arcs(theta, 16, np.random.default_rng([seed, 44]))
    return {k: arc_tiling(A, theta)["tiling"] for k, A in codes.items()}


def _consistency_check(seed: int) -> dict[str, float]:
    """Top-token consistency on 2,000 tokens of a Zipf vocabulary: features that each fire on one word (truth),
    features whose top tokens are half one word and half random (alternative), random codes (the null)."""
    rng = np.random.default_rng([seed, 43])
    ids = np.minimum(rng.zipf(1.3, 2000), 400)
    words = np.unique(ids)[:32]
    word_codes = (ids[:, None] == words[None, :]) * rng.uniform(0.5, 1.0, (2000, 32))
    half = word_codes.copy()
    half[rng.random((2000, 32)) < 0.5] = 0.0
    half += (rng.random((2000, 32)) < 0.05) * rng.uniform(0.5, 1.0, (2000, 32))
    return {
        "truth": mean_live(token_consistency(word_codes, ids), "consistency"),
        "half one word": mean_live(token_consistency(half, ids), "consistency"),
        "null": mean_live(token_consistency(rng.random((2000, 32)), ids), "consistency"),
    }


def _bottleneck_check(seed: int) -> dict[str, float]:
    """H1 bottleneck distance to the true circle (200 samples) of 16 features' barycentres: arcs tiling the
    circle (truth), the same arcs bunched into three groups (alternative), and one global feature (the null:
    no H1 in feature space, the distance saturates at half the samples' H1 lifetime, ~0.82)."""
    rng = np.random.default_rng([seed, 42])
    theta = rng.uniform(0, 2 * np.pi, 200)
    geo = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)])
    centres = np.repeat([0.0, 2.0, 4.0], 6)[:16] + rng.uniform(-0.1, 0.1, 16)
    delta = np.abs((theta[:, None] - centres[None] + np.pi) % (2 * np.pi) - np.pi)
    codes = {
        "truth": coherent_arc_codes(theta, 16, rng),
        "bunched arcs": np.where(delta < 1.2, np.cos(np.pi / 2 * delta / 1.2), 0.0),
        "null": np.ones((200, 1)) + rng.uniform(0, 0.1, (200, 1)),
    }
    return {k: interleaving_check(A, geo)["bottleneck_H1"] for k, A in codes.items()}


MEASURES = [
    MeasureCheck("coherence 1 - V_col/V_total (chance-corrected)", _coherence_check, null_band=(-0.1, 0.1), margin=0.5),
    MeasureCheck(
        "support compactness on the sample graph (v2: size-aware)", _support_check, null_band=(-0.1, 0.1), margin=0.3
    ),
    MeasureCheck("tiling of the circle by contiguous territories", _tiling_check, null_band=(-0.05, 0.05), margin=0.3),
    MeasureCheck("top-token consistency (chance-corrected)", _consistency_check, null_band=(-0.1, 0.1), margin=0.2),
    MeasureCheck("H1 bottleneck to the true circle", _bottleneck_check, null_band=(0.7, 0.9), higher_is_better=False),
]
MECHANISMS = [coh_penalty, coh_penalty_mnist, coh_penalty_tokens, coverage]
CLAIMS = [
    circle_tiling,
    rotated_mnist_angle,
    rotated_mnist_pixel_graph,
    token_features,
    interleaving_bound,
    reconstruction_kept,
    cheaper_than_ph_losses,
]
