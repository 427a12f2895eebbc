"""The paper's headline claims, executable, each with a negative control.

Shared experiment (``experiment.circle_runs``): circle data in R^20 (the angle is hidden from the model;
Coh's geometry is the kNN-geodesic Isomap embedding of the inputs), three autoencoders from the same
initialisation: recon + Coh, recon + L1 (weight swept so its activation density matches Coh's), recon only.
The claims that use it train it once per seed (in-process cache).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.coherence.config import get_config
from icml26.coherence.experiment import (
    circle_runs,
    coherent_arc_codes,
    digit_coh_shuffled,
    digit_runs,
    per_batch_cost,
)
from icml26.coherence.geometry import Geometry
from icml26.coherence.topology import arc_contiguity, interleaving_check, vr_diagrams

ABSTRACT = "abstract"


def _arc_stats(codes: np.ndarray, theta: np.ndarray, bins: int) -> tuple[float, float, float, dict]:
    ac = arc_contiguity(codes, theta, bins=bins)
    live = ac["live"]
    if not live.any():
        return 0.0, float("inf"), 0.0, ac
    return float(np.mean(ac["contiguity"][live])), float(np.mean(ac["components"][live])), float(ac["tiling"]), ac


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


@claim(
    "coherence/circle-tiled-by-arcs-v1",
    statement="On circle data embedded in R^20, recon + Coh features are contiguous arcs that tile the circle "
    "(mean contiguity > 0.95) and are more contiguous, with fewer support components, than recon + L1 features "
    "at matched activation density (paired over seeds)",
    paper="abstract: 'if data lies on a circle, coherent features must tile that circle into contiguous arcs'",
    control="L1 in Coh's place (the Coh arm is the density-matched L1 model): both paired differences are 0",
    judge=(
        Interval("contiguity(Coh) - contiguity(L1)", above=0.0),
        Interval("components(L1) - components(Coh)", above=0.0),
        Interval("contiguity(Coh)", above=0.95),
    ),
)
def circle_tiled_by_arcs(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = get_config(scale)
    R = circle_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    ours = R["l1"] if control else R["coh"]  # the one line the control changes
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
    figures = {} if control else {"arcs": _plot_arcs(theta, {"Coh": R["coh"].codes, "L1": R["l1"].codes})}
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        baselines={
            "contiguity(L1)": c_l1,
            "components(L1)": k_l1,
            "tiling(L1)": tile_l1,
            "density(L1)": R["l1"].density,
            "contiguity(recon only)": c_none,
            "components(recon only)": k_none,
        },
        paper={"circle features": "tile the circle into contiguous arcs (qualitative)"},
        figures=figures,
    )


@claim(
    "coherence/topology-shared-v1",
    statement="The H1 bottleneck distance between the Vietoris-Rips diagrams of the samples (true circle) and of "
    "the barycentric feature positions is smaller for Coh codes than for density-matched L1 codes (paired), and "
    "on coherent matrices built by construction every bottleneck distance is within the interleaving bound 2r",
    paper="abstract: coherent matrices induce a bounded interleaving of the VR filtrations of samples and features",
    control="L1 in Coh's place: the paired difference is 0 (the bound part is unchanged)",
    judge=(
        Interval("dB_H1(L1) - dB_H1(Coh)", above=0.0),
        Interval("max dB / bound (constructed)", below=1.0),
    ),
)
def topology_shared(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = get_config(scale)
    R = circle_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    rng = np.random.default_rng(10_000 + seed)
    sub = rng.choice(len(theta), size=min(cfg.topo_points, len(theta)), replace=False)
    latent = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)][sub])  # the truth, never seen by the model
    ours = R["l1"] if control else R["coh"]  # the one line the control changes
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
    ok = measured["dB_H1(L1) - dB_H1(Coh)"] > 0 and measured["max dB / bound (constructed)"] < 1.0
    figures = {}
    if not control:
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
    "coherence/rotation-tuned-features-v1",
    statement="On scikit-learn digits rotated through 36 angles, recon + Coh handed the rotation angle as its "
    "geometry (S^1; side information the L1 and recon-only arms do not get) gives features whose angle tuning "
    "curves are more contiguous, with fewer components, than density-matched recon + L1 features (paired over "
    "seeds); the gain comes from the angle, not from Coh's form: with the angles shuffled it is gone",
    paper="abstract: validated 'in an auto-encoder using synthetic and rotated MNIST datasets'",
    control="Coh trained on randomly permuted angles in Coh's place (same objective, weight and coverage terms; "
    "no angle information)",
    judge=(
        Interval("contiguity(Coh) - contiguity(L1)", above=0.0),
        Interval("components(L1) - components(Coh)", above=0.0),
    ),
)
def rotation_tuned_features(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = get_config(scale)
    R = digit_runs(cfg, seed)
    theta = R["data"].theta[:, 0]
    ours = digit_coh_shuffled(cfg, seed) if control else R["coh"]  # the one line the control changes
    c_ours, k_ours, _, _ = _arc_stats(ours.codes, theta, cfg.n_angles)
    c_l1, k_l1, _, _ = _arc_stats(R["l1"].codes, theta, cfg.n_angles)
    c_none, k_none, _, _ = _arc_stats(R["none"].codes, theta, cfg.n_angles)
    measured = {
        "contiguity(Coh) - contiguity(L1)": c_ours - c_l1,
        "components(L1) - components(Coh)": k_l1 - k_ours,
        "contiguity(Coh)": c_ours,
        "components(Coh)": k_ours,
        "MSE(Coh)": ours.mse,
        "density(Coh)": ours.density,
    }
    ok = measured["contiguity(Coh) - contiguity(L1)"] > 0 and measured["components(L1) - components(Coh)"] > 0
    figures = {} if control else {"angle_tuning": _plot_arcs(theta, {"Coh": R["coh"].codes, "L1": R["l1"].codes})}
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
            "MSE(L1)": R["l1"].mse,
            "density(L1)": R["l1"].density,
            "contiguity(recon only)": c_none,
            "components(recon only)": k_none,
        },
        paper={"rotated MNIST": "Coh validated in an auto-encoder (qualitative)"},
        figures=figures,
    )


@claim(
    "coherence/reconstruction-kept-v1",
    statement="On circle data, recon + Coh reconstructs about as well as recon + L1 at matched activation "
    "density: the paired ratio MSE(Coh) / MSE(L1) stays below 1.5",
    paper="abstract: Coh 'yields not just interpretable features but an interpretable feature space' "
    "(reconstruction is not quantified in the abstract)",
    control="Coh at 100x its weight (lambda_Coh = 10, coherence dominating reconstruction) in place of the "
    "lambda_Coh = 0.1 model (10x was too gentle: a ratio of 1.45 on one smoke seed)",
    judge=Interval("MSE(Coh) / MSE(L1)", below=1.5),
)
def reconstruction_kept(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.coherence.model import fit_autoencoder

    cfg = get_config(scale)
    R = circle_runs(cfg, seed)
    ours = R["coh"]
    if control:  # the one line the control changes: Coh's weight x 100
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
    control="the persistence loss in Coh's place: the ratio is about 1",
    judge=Interval("t(PH loss) / t(Coh)", above=10.0),
)
def cheaper_than_ph_losses(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = get_config(scale)
    cost = per_batch_cost(cfg.timing_n, cfg.timing_m, repeats=cfg.timing_repeats, seed=seed)
    t_ours = cost["ph_s"] if control else cost["coh_s"]  # the one line the control changes
    ratio = cost["ph_s"] / t_ours
    return ClaimResult(
        "holds" if ratio > 10.0 else "fails",
        measured={"t(PH loss) / t(Coh)": ratio, "t(Coh) [s]": t_ours, "n": cfg.timing_n, "m": cfg.timing_m},
        baselines={"t(PH loss) [s]": cost["ph_s"], "t(L1) [s]": cost["l1_s"]},
        reason=f"peer: {cost['peer']}",
    )


CLAIMS = [
    circle_tiled_by_arcs,
    topology_shared,
    rotation_tuned_features,
    reconstruction_kept,
    cheaper_than_ph_losses,
]
