"""The paper's headline claims, executable, each in three arms (contract v3): the claim, a negative control
(the effect removed; for a comparison an A/A run with its own randomness) and a positive control (the claimed
effect planted at about the claims' bars: an A/A code with 14 of 16 features replaced by coherent arcs, a
known-good arm handicapped to just inside the bar). ``MECHANISMS`` probe whether Coh's
components act; ``MEASURES`` validate the claims' measures both ways (the truth scores best, a null at the null).

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
    circle_runs,
    coherent_arc_codes,
    digit_coh_shuffled,
    digit_runs,
    l1_twin,
    per_batch_cost,
)
from icml26.coherence.geometry import Geometry, coherence_report
from icml26.coherence.topology import arc_contiguity, interleaving_check, vr_diagrams

ABSTRACT = "abstract"


def _arc_stats(codes: np.ndarray, theta: np.ndarray, bins: int) -> tuple[float, float, float, dict]:
    """Mean chance-corrected contiguity, mean number of arcs and tiling over the live features (and the raw
    contiguity of contract v2's measure as ``raw_mean``)."""
    ac = arc_contiguity(codes, theta, bins=bins)
    live = ac["live"]
    if not live.any():
        return 0.0, float("inf"), 0.0, {**ac, "raw_mean": 0.0}
    ac["raw_mean"] = float(np.mean(ac["raw_contiguity"][live]))
    return float(np.mean(ac["contiguity"][live])), float(np.mean(ac["components"][live])), float(ac["tiling"]), ac


#: Offset of the seed stream the v3 circle claims (and the probes of the models they read) are judged on. The data's
#: curvature 3, topology-shared's margin 0.15 and reconstruction-kept's 100x control were fixed after seeing v2's
#: seeds (0-4), so their v3 versions run on fresh seeds: seed s trains on circle data and models of seed s + 1000.
FRESH = 1000

#: Share of the A/A code's features the positive controls replace by coherent arcs (14 of 16), sized on v2's seeds
#: (smoke 0-2): the planted H1-bottleneck gain over L1 reads 0.29 / 0.15 / 0.01 against topology-shared's 0.15
#: margin (a half reads 0, the whole ideal code 0.31-0.40), and the planted contiguity ~0.97-0.99 sits just above
#: circle-tiled's 0.95 bar (the ideal code alone, 1.0 and one arc per feature, cannot miss).
PLANTED_SHARE = 0.875


def _circle_arm(cfg, seed: int, arm: Arm):
    """What stands in Coh's place on the circle (``seed`` is already on the fresh stream): Coh (claim), a second
    L1 model (A/A negative control), or that second L1 model with most of its features replaced by coherent arcs
    (positive control, :func:`_planted_arcs`)."""
    if arm is Arm.NEGATIVE:
        return l1_twin(cfg, seed)
    if arm is Arm.POSITIVE:
        return _planted_arcs(l1_twin(cfg, seed), circle_runs(cfg, seed)["data"].theta[:, 0], cfg, seed)
    return circle_runs(cfg, seed)["coh"]


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


def _plot_diagrams(dgms: dict[str, list[np.ndarray]]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(dgms), figsize=(3.6 * len(dgms), 3.6))
    top = max(float(d[:, 1].max()) if len(d) else 0.0 for ds in dgms.values() for d in ds) * 1.05 + 1e-9
    for ax, (name, ds) in zip(np.atleast_1d(axes), dgms.items(), strict=True):
        for k, d in enumerate(ds):
            if len(d):
                ax.scatter(d[:, 0], d[:, 1], s=12, label=f"H{k}")
        ax.plot([0, top], [0, top], "k--", lw=0.8)
        ax.set(xlim=(0, top), ylim=(0, top), xlabel="birth", ylabel="death", title=name)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


class _Planted:
    """The planted arm of a positive control: an A/A code with part of its features replaced by coherent arcs, in
    the place of a trained model's result (its reconstruction is the A/A model's; the claims that plant it do not
    judge MSE)."""

    def __init__(self, codes: np.ndarray, mse: float):
        self.codes = codes
        self.density = float((codes > 0).mean())
        self.mse = mse


def _planted_arcs(aa, theta: np.ndarray, cfg, seed: int) -> _Planted:
    """The A/A model ``aa``'s codes with ``PLANTED_SHARE`` of its features (chosen at random) replaced by the same
    features of a coherent tiling of the circle of ``theta`` (:func:`coherent_arc_codes`, rescaled to each
    replaced feature's own maximum): the claimed effect at about the claims' bars, short of the ideal code."""
    rng = np.random.default_rng([seed, 31])
    ideal = coherent_arc_codes(theta, cfg.n_features, rng)  # (n, m)
    codes = aa.codes.copy()
    swap = rng.choice(cfg.n_features, size=round(PLANTED_SHARE * cfg.n_features), replace=False)
    scale = np.maximum(codes[:, swap].max(0), 1e-6)  # keep each feature's activation scale
    codes[:, swap] = ideal[:, swap] * scale
    return _Planted(codes, aa.mse)


@claim(
    "coherence/circle-tiled-by-arcs-v3",
    statement="On circle data embedded in R^20, recon + Coh features are contiguous arcs that tile the circle "
    "(mean chance-corrected contiguity > 0.95) and are more contiguous, with fewer support components, than "
    "recon + L1 features at matched activation density (paired over seeds). The embedding's curvature 3 was fixed "
    "from v2's seeds; judged on fresh seeds (data and models of seed + 1000)",
    paper="abstract: 'if data lies on a circle, coherent features must tile that circle into contiguous arcs'",
    control="A/A: a second density-matched L1 model (its own initialisation and batch order) in Coh's place: the "
    "paired differences scatter around 0",
    positive="the A/A code (a second L1 model) with 14 of its 16 features (at random) replaced by coherent arcs "
    "tiling the true circle: a planted contiguity ~0.97-0.99, just above the 0.95 bar, in Coh's place, measured "
    "and compared with the same L1 model",
    mechanisms=("coh-penalty",),
    judge=(
        Interval("contiguity(Coh) - contiguity(L1)", above=0.0),
        Interval("components(L1) - components(Coh)", above=0.0),
        Interval("contiguity(Coh)", above=0.95),
    ),
)
def circle_tiled_by_arcs(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    seed += FRESH  # v3: judged on fresh seeds
    R = circle_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    ours = _circle_arm(cfg, seed, arm)
    c_ours, k_ours, tile_ours, _ = _arc_stats(ours.codes, theta, 48)
    c_l1, k_l1, tile_l1, _ = _arc_stats(R["l1"].codes, theta, 48)
    c_none, k_none, _, _ = _arc_stats(R["none"].codes, theta, 48)
    measured = {
        "contiguity(Coh) - contiguity(L1)": c_ours - c_l1,
        "components(L1) - components(Coh)": k_l1 - k_ours,
        "contiguity(Coh)": c_ours,
        "components(Coh)": k_ours,
        "tiling(Coh)": tile_ours,
        "density(Coh)": ours.density,
    }
    ok = measured["contiguity(Coh) - contiguity(L1)"] > 0 and measured["components(L1) - components(Coh)"] > 0
    ok = ok and c_ours > 0.95
    figures = {"arcs": _plot_arcs(theta, {"Coh": R["coh"].codes, "L1": R["l1"].codes})} if arm is Arm.CLAIM else {}
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        baselines={
            "contiguity(L1)": c_l1,
            "components(L1)": k_l1,
            "raw contiguity(L1) (v1's measure)": _arc_stats(R["l1"].codes, theta, 48)[3]["raw_mean"],
            "tiling(L1)": tile_l1,
            "density(L1)": R["l1"].density,
            "contiguity(recon only)": c_none,
            "components(recon only)": k_none,
        },
        paper={"circle features": "tile the circle into contiguous arcs (qualitative)"},
        figures=figures,
    )


@claim(
    "coherence/topology-shared-v3",
    statement="The H1 bottleneck distance between the Vietoris-Rips diagrams of the samples (true circle) and of "
    "the barycentric feature positions is smaller for Coh codes than for density-matched L1 codes by more than "
    "0.15 (paired; on ground truth, arcs tiling the circle score ~0.35-0.4 and untiled features ~0.72-0.82), and "
    "on coherent matrices built by construction every bottleneck distance is within the interleaving bound 2r. The "
    "margin 0.15 and the embedding's curvature 3 were fixed from v2's seeds; judged on fresh seeds (seed + 1000)",
    paper="abstract: coherent matrices induce a bounded interleaving of the VR filtrations of samples and features",
    control="A/A: a second density-matched L1 model (its own initialisation and batch order) in Coh's place: the "
    "paired difference scatters around 0 (the bound part is unchanged)",
    positive="the A/A code (a second L1 model) with 14 of its 16 features (at random) replaced by coherent arcs "
    "tiling the true circle (the theorem's premise, mostly planted; sized on v2's seeds to a gain of about the 0.15 "
    "margin) in Coh's place",
    mechanisms=("coh-penalty", "coverage"),
    judge=(
        Interval("dB_H1(L1) - dB_H1(Coh)", above=0.15),
        Interval("max dB / bound (constructed)", below=1.0),
    ),
)
def topology_shared(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    seed += FRESH  # v3: judged on fresh seeds
    R = circle_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    rng = np.random.default_rng(10_000 + seed)
    sub = rng.choice(len(theta), size=min(cfg.topo_points, len(theta)), replace=False)
    latent = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)][sub])  # the truth, never seen by the model
    ours = _circle_arm(cfg, seed, arm)
    chk_ours = interleaving_check(ours.codes[sub], latent)
    chk_l1 = interleaving_check(R["l1"].codes[sub], latent)
    chk_none = interleaving_check(R["none"].codes[sub], latent)
    ratios = []
    for _ in range(cfg.n_constructed):
        A = coherent_arc_codes(theta[sub], cfg.n_features, rng)
        chk = interleaving_check(A, latent)
        ratios.append(chk["bottleneck_max"] / chk["bound"])
    measured = {
        "dB_H1(L1) - dB_H1(Coh)": chk_l1["bottleneck_H1"] - chk_ours["bottleneck_H1"],
        "max dB / bound (constructed)": max(ratios),
        "dB_H1(Coh)": chk_ours["bottleneck_H1"],
        "features H1 lifetime (Coh)": chk_ours["features_H1_max_life"],
        "bound 2r (Coh)": chk_ours["bound"],
    }
    ok = measured["dB_H1(L1) - dB_H1(Coh)"] > 0.15 and measured["max dB / bound (constructed)"] < 1.0
    figures = {}
    if arm is Arm.CLAIM:
        samples = vr_diagrams(latent.distances(latent.coords, latent.coords))
        dg = {"samples (true circle)": samples}
        for name, res in (("Coh features", R["coh"]), ("L1 features", R["l1"])):
            A = res.codes[sub][:, res.codes[sub].sum(0) > 0]
            f = latent.feature_positions(A)
            dg[name] = vr_diagrams(latent.distances(f, f))
        figures["diagrams"] = _plot_diagrams(dg)
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        baselines={
            "dB_H1(L1)": chk_l1["bottleneck_H1"],
            "features H1 lifetime (L1)": chk_l1["features_H1_max_life"],
            "dB_H1(recon only)": chk_none["bottleneck_H1"],
            "features H1 lifetime (recon only)": chk_none["features_H1_max_life"],
            "samples H1 lifetime": chk_ours["samples_H1_max_life"],
        },
        paper={"theorem": "bounded interleaving of VR filtrations for coherent matrices (no constant recovered)"},
        figures=figures,
    )


@claim(
    "coherence/rotation-tuned-features-v2",
    statement="On scikit-learn digits rotated through 36 angles, recon + Coh handed the rotation angle as its "
    "geometry (S^1; side information the L1 and recon-only arms do not get) gives features whose angle tuning "
    "curves are more contiguous (chance-corrected), with fewer components, than density-matched recon + L1 "
    "features (paired over seeds); the gain comes from the angle, not from Coh's form: with the angles shuffled "
    "it is gone",
    paper="abstract: validated 'in an auto-encoder using synthetic and rotated MNIST datasets'",
    control="Coh trained on randomly permuted angles in Coh's place (same objective, weight and coverage terms; "
    "no angle information; its own training run)",
    positive="the negative control's code (Coh on shuffled angles) with 14 of its 16 features (at random) replaced "
    "by coherent arcs tiling the rotation angle, in Coh's place",
    mechanisms=("coh-penalty",),
    judge=(
        Interval("contiguity(Coh) - contiguity(L1)", above=0.0),
        Interval("components(L1) - components(Coh)", above=0.0),
    ),
)
def rotation_tuned_features(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = get_config(scale)
    R = digit_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    ours = {Arm.CLAIM: lambda: R["coh"], Arm.NEGATIVE: lambda: digit_coh_shuffled(cfg, seed)}.get(
        arm, lambda: _planted_arcs(digit_coh_shuffled(cfg, seed), theta, cfg, seed)
    )()
    c_ours, k_ours, _, _ = _arc_stats(ours.codes, theta, cfg.n_angles)
    c_l1, k_l1, _, _ = _arc_stats(R["l1"].codes, theta, cfg.n_angles)
    c_none, k_none, _, _ = _arc_stats(R["none"].codes, theta, cfg.n_angles)
    measured = {
        "contiguity(Coh) - contiguity(L1)": c_ours - c_l1,
        "components(L1) - components(Coh)": k_l1 - k_ours,
        "contiguity(Coh)": c_ours,
        "components(Coh)": k_ours,
        "density(Coh)": ours.density,
    }
    ok = measured["contiguity(Coh) - contiguity(L1)"] > 0 and measured["components(L1) - components(Coh)"] > 0
    figures = (
        {}
        if arm is not Arm.CLAIM
        else {"angle_tuning": _plot_arcs(theta, {"Coh": R["coh"].codes, "L1": R["l1"].codes})}
    )
    # At smoke (a few hundred steps) the shuffled-angle control still beats L1 on 2 of 3 seeds: too short a run to
    # tell angle-informed from angle-free Coh, so smoke only exercises the code and the verdict waits for small.
    verdict, reason = ("holds" if ok else "fails"), ""
    if scale is Scale.SMOKE:
        verdict = "not-measured"
        reason = "smoke training is too short to separate Coh with the angle from Coh with shuffled angles"
    return ClaimResult(
        verdict,
        reason=reason,
        measured=measured,
        baselines={
            "contiguity(L1)": c_l1,
            "components(L1)": k_l1,
            "MSE(Coh)": R["coh"].mse,
            "MSE(L1)": R["l1"].mse,
            "density(L1)": R["l1"].density,
            "contiguity(recon only)": c_none,
            "components(recon only)": k_none,
        },
        paper={"rotated MNIST": "Coh validated in an auto-encoder (qualitative)"},
        figures=figures,
    )


#: Positive control of reconstruction-kept: the A/A model's MSE ratio handicapped by this factor (1.5 / 1.25).
PLANTED_MSE_RATIO = 1.2


@claim(
    "coherence/reconstruction-kept-v3",
    statement="On circle data, recon + Coh reconstructs about as well as recon + L1 at matched activation "
    "density: the paired ratio MSE(Coh) / MSE(L1) stays below 1.5. The negative control's 100x weight and the "
    "embedding's curvature 3 were fixed from v2's seeds; judged on fresh seeds (seed + 1000)",
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
    seed += FRESH  # v3: judged on fresh seeds
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
        },
    )


@claim(
    "coherence/cheaper-than-ph-losses-v1",
    statement="One forward + backward of Coh on a batch of n = 1,024 codes (m = 16) is at least 10x cheaper "
    "than a Vietoris-Rips persistent-homology loss (torch-topological SignatureLoss, H0) on the same batch",
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
    R = circle_runs(get_config(scale), seed + FRESH)  # the models the v3 circle claims read
    v = {
        arm: coherence_report(R[arm].codes, R["geometry"]).summary()["mean_column_variance"] for arm in ("coh", "none")
    }
    return {"coh-penalty": 1.0 - v["coh"] / v["none"], "V_col(Coh)": v["coh"], "V_col(recon only)": v["none"]}


@mechanism(
    "coverage",
    component="the coverage hinges of Coh: every feature needed by some sample, every sample described",
    measures="share of the Coh model's features that fire on some sample (circle data; the coverage condition "
    "asks for all of them)",
    above=0.9,
)
def coverage(scale: Scale, seed: int) -> dict[str, float]:
    R = circle_runs(get_config(scale), seed + FRESH)  # the models the v3 circle claims read
    alive = {arm: float((R[arm].codes.sum(0) > 0).mean()) for arm in ("coh", "l1", "none")}
    return {"coverage": alive["coh"], "live share (L1)": alive["l1"], "live share (recon only)": alive["none"]}


# --- the claims' measures, validated both ways --------------------------------------------------------------------


def _contiguity_check(seed: int) -> dict[str, float]:
    """Mean chance-corrected contiguity of 16 features on 512 angles: coherent arcs (truth), features with two
    or three bumps and sparse random firing (alternatives), dense random firing (the null: no tuning at all;
    contract v2's raw measure gave it ~0.9-1)."""
    rng = np.random.default_rng([seed, 41])
    theta = rng.uniform(0, 2 * np.pi, 512)
    phase = rng.uniform(0, 2 * np.pi, 16)
    codes = {
        "truth": coherent_arc_codes(theta, 16, rng),
        "two bumps": np.maximum(np.cos(2 * theta[:, None] + phase), 0),
        "three bumps": np.maximum(np.cos(3 * theta[:, None] + phase), 0),
        "sparse random": (rng.random((512, 16)) < 0.05) * rng.random((512, 16)),
        "fires everywhere": 1.0 + 0.05 * rng.random((512, 16)),
        "null": rng.random((512, 16)),
    }
    return {k: _arc_stats(A, theta, 48)[0] for k, A in codes.items()}


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
    MeasureCheck("contiguity (chance-corrected)", _contiguity_check, null_band=(-0.1, 0.1), margin=0.3),
    MeasureCheck("H1 bottleneck to the true circle", _bottleneck_check, null_band=(0.7, 0.9), higher_is_better=False),
]
MECHANISMS = [coh_penalty, coverage]
CLAIMS = [
    circle_tiled_by_arcs,
    topology_shared,
    rotation_tuned_features,
    reconstruction_kept,
    cheaper_than_ph_losses,
]
