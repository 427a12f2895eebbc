"""The four headline claims of Dynamic Compression Flow, on Lorenz-63 latents driving Poisson neurons.

Ground truth is the Lorenz state; every method is fitted on training trials and scored on held-out trials
(see :mod:`icml26.dualflow.experiment`). Margins are fixed in advance and the same for every seed.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from icml26.claims import ClaimResult, Scale, claim
from icml26.dualflow.experiment import N_LATENT, dataset, fit_dcf, fit_linear_baselines, fit_vae
from icml26.dualflow.metrics import seed_consistency

MARGIN_R2 = 0.02  # decoding-R^2 margin DCF must beat the best baseline by
MARGIN_NEIGHBOURS = 0.01  # same for the temporal-neighbour fraction
MARGIN_REC = 0.05  # reconstruction-R^2 margin over the VAE and PCA
MARGIN_CONSISTENCY = 0.05  # cross-seed similarity margin over the VAE

# The two sabotages of the negative controls (keyword overrides of DualFlow in fit_dcf):
UNTRAINED = {"lr": 0.0}  # DCF keeps its random initialisation (only the encoder's running statistics update)
NO_NESTED_DROPOUT = {"nested_dropout": False}  # every latent coordinate kept in every step: nothing orders them


def _latent_figure(scale: Scale, seed: int, regime: str, methods: dict) -> Figure:
    """3-D latent trajectories of each method (first three coordinates) next to the true Lorenz state."""
    data = dataset(scale, seed, regime)
    fig = Figure(figsize=(3.2 * (len(methods) + 1), 3.4))
    panels = {"true Lorenz state": data.latents[-len(next(iter(methods.values()))) :], **methods}
    for i, (name, z) in enumerate(panels.items()):
        ax = fig.add_subplot(1, len(panels), i + 1, projection="3d")
        for trial in z[:4]:
            ax.plot(trial[:, 0], trial[:, 1], trial[:, 2], lw=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([]), ax.set_zticks([])
    fig.suptitle(f"held-out trials, {regime} regime (first 3 coordinates)")
    return fig


@claim(
    "dualflow/better-latents-in-noise-v1",
    statement="in the noise-dominated regime (3 Hz Poisson neurons) the DCF latent decodes the true Lorenz state "
    "(linear R^2, 3 coordinates) and keeps temporal neighbours better than PCA, GPFA and DMD",
    paper="Abstract ('noise-dominated data sets where conventional approaches fail'); velocity decoding table "
    "(DCF 0.304 vs DMD 0.014 from 3-D latents)",
    control="untrained DCF (learning rate 0: the flows and the encoder coupling keep their random "
    "initialisation), whose latent cannot decode the Lorenz state better than PCA, GPFA or DMD",
)
def better_latents_in_noise(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, "noisy", seed, **(UNTRAINED if control else {}))
    base = fit_linear_baselines(scale, seed, "noisy")
    vae = fit_vae(scale, seed, "noisy", seed)
    measured = {
        "DCF decoding R2": dcf.decoding_r2,
        "DCF CCA": dcf.cca,
        "DCF neighbour fraction": dcf.neighbours,
        "DCF distance-lag Spearman": dcf.spearman,
    }
    baselines = {}
    for name, res in {**base, "VAE": vae}.items():
        baselines[f"{name} decoding R2"] = res.decoding_r2
        baselines[f"{name} neighbour fraction"] = res.neighbours
    best_r2 = max(base[n].decoding_r2 for n in ("PCA", "GPFA", "DMD"))
    best_nb = max(base[n].neighbours for n in ("PCA", "GPFA", "DMD"))
    holds = dcf.decoding_r2 > best_r2 + MARGIN_R2 and dcf.neighbours > best_nb + MARGIN_NEIGHBOURS
    reason = (
        ""
        if holds
        else (
            f"DCF decoding R2 {dcf.decoding_r2:.3f} vs best of PCA/GPFA/DMD {best_r2:.3f} (margin {MARGIN_R2}); "
            f"neighbour fraction {dcf.neighbours:.3f} vs {best_nb:.3f} (margin {MARGIN_NEIGHBOURS})"
        )
    )
    fig = _latent_figure(
        scale, seed, "noisy", {"DCF (flowed)": dcf.z_test, **{n: r.z_test for n, r in base.items()}, "VAE": vae.z_test}
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF velocity R2 (3-D)": 0.304, "DMD velocity R2 (3-D)": 0.014},
        figures={"latents": fig},
    )


@claim(
    "dualflow/low-dimensional-support-v1",
    statement="with nested dropout (latent budget 1/p = 10) the D spectrum decays and the effective dimension "
    "K_eff (95 % of sum d_i) is close to the true latent dimension 3 of Lorenz (|K_eff - 3| <= 3)",
    paper="Nested-dropout section; K_eff = 30 at p = 1/50 on the ball and mouse videos",
    control="nested dropout off (every latent coordinate kept in every training step): nothing orders the "
    "scales d_i, so the spectrum cannot decay with the index",
)
def low_dimensional_support(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from scipy.stats import spearmanr

    measured, spectra = {}, {}
    for regime in ("clean", "noisy"):
        est, _ = fit_dcf(scale, seed, regime, seed, **(NO_NESTED_DROPOUT if control else {}))
        d = est.d_
        spectra[regime] = d
        measured[f"K_eff ({regime})"] = est.effective_dim_
        measured[f"d spectrum Spearman vs index ({regime})"] = spearmanr(np.arange(len(d)), d)[0]
        measured[f"d1+d2+d3 share ({regime})"] = d[:3].sum() / d.sum()
        # not the paper's K_eff: coordinates standing out of the noise floor (d_i > 2 x median d)
        measured[f"d_i above 2x median ({regime})"] = int((d > 2 * np.median(d)).sum())
    decays = measured["d spectrum Spearman vs index (clean)"] < -0.9
    close = abs(measured["K_eff (clean)"] - 3) <= 3
    holds = decays and close
    reason = (
        ""
        if holds
        else (
            f"clean regime: K_eff = {measured['K_eff (clean)']:.0f} (true 3, tolerance 3), spectrum Spearman "
            f"{measured['d spectrum Spearman vs index (clean)']:.2f} (needs < -0.9)"
        )
    )
    fig = Figure(figsize=(6, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    for regime, d in spectra.items():
        ax.plot(
            np.arange(1, len(d) + 1),
            d,
            marker="o",
            ms=3,
            label=f"{regime} (K_eff = {measured[f'K_eff ({regime})']:.0f})",
        )
    ax.axvline(3, color="grey", ls="--", lw=0.8, label="true dimension")
    ax.set_xlabel("latent coordinate i"), ax.set_ylabel("d_i"), ax.set_yscale("log"), ax.legend()
    ax.set_title("D spectrum (nested dropout, budget 10)")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        reason=reason,
        paper={"K_eff (videos, p = 1/50)": 30},
        elsewhere={"true latent dimension [our Lorenz-63 data]": 3},
        figures={"spectrum": fig},
    )


@claim(
    "dualflow/reconstruction-v2",
    statement="held-out reconstruction R^2 of DCF compressed to 3 latent coordinates (decoded back) beats the VAE "
    "(3-D latent) and PCA(3) by 0.05; the full round trip is reported but not judged (it goes through an "
    "invertible flow and a square orthonormal coupling, so it is ~1 for any weights)",
    paper="Monkey-reach reconstruction table (firing-rate R^2: DCF 0.999, VAE 0.618, LFADS 0.595)",
    control="untrained DCF (learning rate 0: the encoder coupling and the flows keep their random "
    "initialisation), whose first 3 coordinates carry no learned summary of the counts",
)
def reconstruction(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, "noisy", seed, **(UNTRAINED if control else {}))
    vae = fit_vae(scale, seed, "noisy", seed)
    pca = fit_linear_baselines(scale, seed, "noisy")["PCA"]
    rt = dcf.extra["round trip R2"]
    measured = {
        "DCF round-trip R2": rt,
        "DCF truncated (3 coords) R2": dcf.extra["truncated R2"],
        "DCF truncated R2 vs true rates": dcf.extra["truncated R2 vs rates"],
    }
    baselines = {
        "VAE R2": vae.extra["R2"],
        "PCA(3) R2": pca.extra["R2"],
        "VAE R2 vs true rates": vae.extra["R2 vs rates"],
        "PCA(3) R2 vs true rates": pca.extra["R2 vs rates"],
    }
    truncated = dcf.extra["truncated R2"]
    holds = truncated > vae.extra["R2"] + MARGIN_REC and truncated > pca.extra["R2"] + MARGIN_REC
    fig = Figure(figsize=(6.5, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    names = ["DCF round trip", "DCF truncated K=3", "VAE (3-D)", "PCA(3)"]
    vals = [rt, dcf.extra["truncated R2"], vae.extra["R2"], pca.extra["R2"]]
    ax.bar(names, vals, color=["C0", "C0", "C1", "C2"])
    ax.set_ylabel("held-out R^2 (smoothed counts)"), ax.set_title("reconstruction, noisy regime")
    reason = (
        ""
        if holds
        else f"compressed to 3 coordinates DCF reaches R^2 {truncated:.3f} vs VAE {vae.extra['R2']:.3f} and "
        f"PCA(3) {pca.extra['R2']:.3f}; the paper's 0.999 matches our full round trip ({rt:.3f}), which is "
        "invertible by construction"
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF R2": 0.999, "VAE R2": 0.618, "LFADS R2": 0.595},
        figures={"reconstruction": fig},
    )


@claim(
    "dualflow/identifiable-v1",
    statement="DCF latents (first 3 coordinates, sign-aligned, no permutation) agree across 3 training seeds better "
    "than the VAE's (even allowing the VAE the best permutation)",
    paper="Identifiability section (QR + normalisation + nested dropout: unique up to one sign per component); "
    "cross-seed stability figure",
    control="nested dropout off (every latent coordinate kept in every training step): the ordering the "
    "identifiability argument rests on is gone, so coordinate i of one seed need not match coordinate i of another",
)
def identifiable(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    sabotage = NO_NESTED_DROPOUT if control else {}  # the one line the control changes
    model_seeds = [seed, seed + 1000, seed + 2000]
    dcf = [fit_dcf(scale, seed, "noisy", s, **sabotage)[1].z_test for s in model_seeds]
    vae = [fit_vae(scale, seed, "noisy", s).z_test for s in model_seeds]
    measured = {"DCF cross-seed |cos|": seed_consistency(dcf)}
    # identifiability needs distinct d_i: report each coordinate separately
    for c in range(N_LATENT):
        measured[f"DCF cross-seed |cos| coordinate {c + 1}"] = seed_consistency([z[..., c : c + 1] for z in dcf])
    baselines = {
        "VAE cross-seed |cos| (best permutation)": seed_consistency(vae, allow_permutation=True),
        "VAE cross-seed |cos| (no permutation)": seed_consistency(vae),
    }
    # reported only (the verdict is the noise-dominated regime, fixed in advance): the clean 20 Hz regime
    dcf_clean = [fit_dcf(scale, seed, "clean", s, **sabotage)[1].z_test for s in model_seeds]
    vae_clean = [fit_vae(scale, seed, "clean", s).z_test for s in model_seeds]
    measured["DCF cross-seed |cos| (clean regime)"] = seed_consistency(dcf_clean)
    baselines["VAE cross-seed |cos| (best permutation, clean regime)"] = seed_consistency(vae_clean, True)
    holds = measured["DCF cross-seed |cos|"] > baselines["VAE cross-seed |cos| (best permutation)"] + MARGIN_CONSISTENCY
    reason = (
        ""
        if holds
        else (
            f"DCF {measured['DCF cross-seed |cos|']:.3f} vs VAE "
            f"{baselines['VAE cross-seed |cos| (best permutation)']:.3f} "
            f"(margin {MARGIN_CONSISTENCY})"
        )
    )
    fig = Figure(figsize=(9, 4.5))
    for row, (name, zs) in enumerate((("DCF", dcf), ("VAE", vae))):
        for c in range(N_LATENT):
            ax = fig.add_subplot(2, N_LATENT, row * N_LATENT + c + 1)
            ref = zs[0][0, :, c]
            for k, z in enumerate(zs):
                trace = z[0, :, c]
                sign = np.sign(np.dot(trace - trace.mean(), ref - ref.mean())) or 1.0
                ax.plot(sign * (trace - trace.mean()) / (trace.std() + 1e-12), lw=0.8, label=f"seed {k}")
            ax.set_title(f"{name} coordinate {c + 1}", fontsize=9)
    fig.axes[0].legend(fontsize=7)
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"cross-seed stability": "DCF high; LFADS and CEBRA lower (figure)"},
        figures={"seeds": fig},
    )


CLAIMS = [better_latents_in_noise, low_dimensional_support, reconstruction, identifiable]
