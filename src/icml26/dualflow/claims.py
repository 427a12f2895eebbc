"""The headline claims of Dynamic Compression Flow (v2, issue 16), on Lorenz-63 latents driving Poisson neurons
through nonlinear tuning curves (noise-dominated, 3 Hz).

Ground truth is the Lorenz state and the noise-free rates; every method is fitted on training trials and scored
on held-out trials (see :mod:`icml26.dualflow.experiment`). Comparisons are judged by 95 % intervals of paired
per-seed differences (5 seeds at ``small``); every threshold below was written before the first ``small`` run.

- ``better-latents-v2``: DCF's 3-D latent vs the best of PCA, GPFA and CEBRA-Time (linear and kNN decoding of the
  state, kNN overlap with the true state's neighbours);
- ``low-dimensional-support-v2``: K_eff vs the budget 1/p and vs PCA's dimension; the trained head of the
  spectrum decays;
- ``reconstruction-v3``: reconstruction of the true rates from K = 3 and K = 1/p latent coordinates vs PCA;
- ``identifiable-v2``: cross-seed agreement of the coordinates separated by a spectral gap vs the VAE;
- ``simulated-representation-v2``: the rollout of v_theta at tau = 0 follows the flowed latent better than a
  linear autoregression fitted on the flowed training latents.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.dualflow.experiment import (
    N_LATENT,
    SETTINGS,
    budget_k,
    dataset,
    fit_dcf,
    fit_peers,
    fit_vae,
    n_train,
)
from icml26.dualflow.metrics import seed_consistency

#: The negative controls' sabotages (keyword overrides of DualFlow in fit_dcf):
UNTRAINED = {"lr": 0.0, "n_steps": 1}  # DCF keeps its random initialisation (the EMA statistics see one batch)
NO_NESTED_DROPOUT = {"nested_dropout": False}  # every latent coordinate kept in every step: nothing orders them
NO_DYNAMICS_LOSS = {"weights": (1.0, 0.0, 1.0)}  # beta = 0: v_theta is never trained, the rest is
#: Rule fixed before the run: coordinate i counts as separated when d_i / d_(i+1) > GAP (and d_(i-1) / d_i > GAP
#: for i > 1) in both seeds' spectra; identifiability up to sign needs distinct scales.
GAP = 1.5
HEAD_FRACTION = 0.1  # the "trained head": coordinates unmasked in at least 10 % of training windows


def _coloured_latents(scale: Scale, seed: int, panels: dict[str, np.ndarray]) -> Figure:
    """First three latent coordinates of each method on the held-out trials, coloured by the true Lorenz z."""
    data = dataset(scale, seed)
    truth = data.latents[n_train(scale) :]
    colour = truth[..., 2].ravel()
    panels = {"true Lorenz state": truth, **panels}
    fig = Figure(figsize=(3.0 * len(panels), 3.3))
    for i, (name, z) in enumerate(panels.items()):
        ax = fig.add_subplot(1, len(panels), i + 1, projection="3d")
        flat = z.reshape(-1, z.shape[-1])
        ax.scatter(flat[:, 0], flat[:, 1], flat[:, 2], c=colour, s=1, cmap="viridis", rasterized=True)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([]), ax.set_zticks([])
    fig.suptitle("held-out trials, first 3 coordinates, coloured by the true Lorenz z (noisy, tuning curves)")
    return fig


@claim(
    "dualflow/better-latents-v2",
    statement="on noise-dominated (3 Hz) Poisson neurons with nonlinear tuning curves (PCA(3) of the noise-free "
    "rates decodes the state linearly with R^2 < 0.6), DCF's 3-D flowed latent beats the best of PCA, GPFA and "
    "CEBRA-Time on all three held-out measures: linear decoding R^2 of the Lorenz state, kNN decoding R^2, and "
    "kNN overlap with the true state's 10 nearest neighbours (each paired difference > 0 over 5 seeds)",
    paper="Abstract ('noise-dominated data sets where conventional approaches fail'); velocity decoding table "
    "(3-D latents: DCF 0.304, CEBRA 0.202, DMD 0.014)",
    control="untrained DCF (learning rate 0, one step: the flows and the encoder coupling keep their random "
    "initialisation), whose latent cannot beat the peers",
    judge=[
        Interval("DCF - best peer, linear R2", above=0.0),
        Interval("DCF - best peer, kNN R2", above=0.0),
        Interval("DCF - best peer, kNN overlap", above=0.0),
    ],
)
def better_latents(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed, **(UNTRAINED if control else {}))  # the one line the control changes
    peers = fit_peers(scale, seed)
    vae = fit_vae(scale, seed, seed)
    measured = {"DCF linear R2": dcf.linear_r2, "DCF kNN R2": dcf.knn_r2, "DCF kNN overlap": dcf.overlap}
    baselines = {}
    for name, res in {**peers, "VAE": vae}.items():
        baselines[f"{name} linear R2"] = res.linear_r2
        baselines[f"{name} kNN R2"] = res.knn_r2
        baselines[f"{name} kNN overlap"] = res.overlap
    for key, attr in (("linear R2", "linear_r2"), ("kNN R2", "knn_r2"), ("kNN overlap", "overlap")):
        measured[f"DCF - best peer, {key}"] = getattr(dcf, attr) - max(getattr(r, attr) for r in peers.values())
    diffs = {k: v for k, v in measured.items() if k.startswith("DCF - best peer")}
    holds = all(v > 0 for v in diffs.values())
    reason = "" if holds else "; ".join(f"{k} = {v:+.3f}" for k, v in diffs.items())
    fig = _coloured_latents(scale, seed, {"DCF (flowed)": dcf.z_test, **{n: r.z_test for n, r in peers.items()},
                                          "VAE": vae.z_test})  # fmt: skip
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF velocity R2 (3-D)": 0.304, "CEBRA velocity R2 (3-D)": 0.202, "DMD velocity R2 (3-D)": 0.014},
        figures={"latents": fig},
    )


def head_size(budget: float, m: int) -> int:
    """Coordinates unmasked in at least HEAD_FRACTION of windows: P(K >= i) = (1 - p)^(i - 1) >= fraction."""
    p = 1.0 / budget
    return min(m, 1 + math.floor(math.log(HEAD_FRACTION) / math.log1p(-p))) if p < 1 else 1


@claim(
    "dualflow/low-dimensional-support-v2",
    statement="with nested dropout (budget 1/p = 10) the effective dimension K_eff (95 % of sum d_i) is at most 1/p "
    "and below the 95 %-variance PCA dimension of the same standardised training frames, and the trained head of "
    "the spectrum (coordinates unmasked in >= 10 % of windows) decays: Spearman(d_i, i) < -0.8",
    paper="Nested-dropout section; K_eff = 30 at p = 1/50 on the ball and mouse videos (K_eff below 1/p)",
    control="nested dropout off (every latent coordinate kept in every training step): nothing orders the "
    "scales d_i or keeps the rarely used ones small",
    judge=[
        Interval("K_eff x p", below=1.0),
        Interval("PCA dimension - K_eff", above=0.0),
        Interval("head spectrum Spearman", below=-0.8),
    ],
)
def low_dimensional_support(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from scipy.stats import spearmanr

    est, res = fit_dcf(scale, seed, seed, **(NO_NESTED_DROPOUT if control else {}))
    d, budget = est.d_, float(SETTINGS[scale]["dcf"]["latent_budget"])
    head = head_size(budget, len(d))
    measured = {
        "K_eff": float(est.effective_dim_),
        "K_eff x p": est.effective_dim_ / budget,
        "PCA dimension - K_eff": float(res.extra["PCA dimension"] - est.effective_dim_),
        "head spectrum Spearman": float(spearmanr(np.arange(head), d[:head])[0]),
        "d1+d2+d3 share": float(d[:3].sum() / d.sum()),
    }
    baselines = {"PCA 95 %-variance dimension": float(res.extra["PCA dimension"]), "1/p": budget}
    holds = measured["K_eff x p"] < 1.0 and measured["PCA dimension - K_eff"] > 0
    holds = holds and measured["head spectrum Spearman"] < -0.8
    reason = "" if holds else (
        f"K_eff = {est.effective_dim_} (1/p = {budget:g}, PCA dimension {res.extra['PCA dimension']}); head "
        f"({head} coordinates) Spearman {measured['head spectrum Spearman']:.2f} (needs < -0.8)"
    )  # fmt: skip
    fig = Figure(figsize=(6, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(np.arange(1, len(d) + 1), d, marker="o", ms=3, label=f"d_i (K_eff = {est.effective_dim_})")
    ax.axvline(head + 0.5, color="grey", ls=":", lw=0.8, label=f"trained head ({head})")
    ax.axvline(budget, color="C1", ls="--", lw=0.8, label="1/p")
    ax.axvline(res.extra["PCA dimension"], color="C2", ls="--", lw=0.8, label="PCA 95 % dimension")
    ax.set_xlabel("latent coordinate i"), ax.set_ylabel("d_i"), ax.set_yscale("log"), ax.legend(fontsize=7)
    ax.set_title("D spectrum (noisy, tuning curves)")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"K_eff (videos, p = 1/50)": 30},
        figures={"spectrum": fig},
    )


@claim(
    "dualflow/reconstruction-v3",
    statement="decoded back from its first K latent coordinates (the rest zero), DCF reconstructs the noise-free "
    "rates (smoothed like the counts) of held-out trials better than PCA with the same K, for K = 3 and K = 1/p = "
    "10 (paired R^2 differences > 0); the full round trip is reported, not judged (invertible for any weights)",
    paper="Monkey-reach reconstruction table (firing-rate R^2: DCF 0.999, VAE 0.618, LFADS 0.595)",
    control="untrained DCF (learning rate 0, one step: the encoder coupling and the flows keep their random "
    "initialisation), whose first K coordinates carry no learned summary",
    judge=[
        Interval("DCF - PCA, R2 vs rates K=3", above=0.0),
        Interval("DCF - PCA, R2 vs rates K=1/p", above=0.0),
    ],
)
def reconstruction(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed, **(UNTRAINED if control else {}))
    pca = fit_peers(scale, seed)["PCA"]
    vae = fit_vae(scale, seed, seed)
    K = budget_k(scale)
    measured = {
        "DCF round-trip R2 (smoothed counts)": dcf.extra["round trip R2"],
        "DCF R2 vs rates K=3": dcf.extra["R2 vs rates K=3"],
        "DCF R2 vs rates K=1/p": dcf.extra[f"R2 vs rates K={K}"],
        "DCF - PCA, R2 vs rates K=3": dcf.extra["R2 vs rates K=3"] - pca.extra["R2 vs rates K=3"],
        "DCF - PCA, R2 vs rates K=1/p": dcf.extra[f"R2 vs rates K={K}"] - pca.extra[f"R2 vs rates K={K}"],
    }
    baselines = {
        "PCA R2 vs rates K=3": pca.extra["R2 vs rates K=3"],
        "PCA R2 vs rates K=1/p": pca.extra[f"R2 vs rates K={K}"],
        "VAE R2 vs rates K=3": vae.extra["R2 vs rates K=3"],
    }
    holds = measured["DCF - PCA, R2 vs rates K=3"] > 0 and measured["DCF - PCA, R2 vs rates K=1/p"] > 0
    reason = "" if holds else (
        f"vs true rates: K=3 DCF {measured['DCF R2 vs rates K=3']:.3f} vs PCA {baselines['PCA R2 vs rates K=3']:.3f}; "
        f"K={K} DCF {measured['DCF R2 vs rates K=1/p']:.3f} vs PCA {baselines['PCA R2 vs rates K=1/p']:.3f}"
    )  # fmt: skip
    fig = Figure(figsize=(7, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    names = ["DCF K=3", "PCA K=3", "VAE K=3", f"DCF K={K}", f"PCA K={K}"]
    vals = [measured["DCF R2 vs rates K=3"], baselines["PCA R2 vs rates K=3"], baselines["VAE R2 vs rates K=3"],
            measured["DCF R2 vs rates K=1/p"], baselines["PCA R2 vs rates K=1/p"]]  # fmt: skip
    ax.bar(names, vals, color=["C0", "C2", "C1", "C0", "C2"])
    ax.set_ylabel("held-out R^2 vs true (smoothed) rates"), ax.set_title("reconstruction from K coordinates")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF R2": 0.999, "VAE R2": 0.618, "LFADS R2": 0.595},
        figures={"reconstruction": fig},
    )


def separated(d_a: np.ndarray, d_b: np.ndarray, n: int = N_LATENT) -> list[int]:
    """Indices i < n (0-based) whose scale is separated from both neighbours by GAP in both spectra."""
    out = []
    for i in range(n):
        ok = True
        for d in (d_a, d_b):
            ok &= bool(d[i] / d[i + 1] > GAP) and (i == 0 or bool(d[i - 1] / d[i] > GAP))
        if ok:
            out.append(i)
    return out


@claim(
    "dualflow/identifiable-v2",
    statement="DCF latent coordinates among the first 3 that a spectral gap separates (d_i / d_(i+1) > 1.5 and "
    "d_(i-1) / d_i > 1.5 in both seeds; rule fixed before the run) agree across two training seeds (sign-aligned "
    "|cos|, no permutation) better than the VAE's 3-D latent given its best permutation; no separated coordinate "
    "scores 0",
    paper="Identifiability section (QR + normalisation + nested dropout: unique up to one sign per component); "
    "cross-seed stability figure",
    control="nested dropout off (every latent coordinate kept in every training step): the ordering the "
    "identifiability argument rests on is gone",
    judge=Interval("DCF (separated) - VAE (best permutation) cross-seed |cos|", above=0.0),
)
def identifiable(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    sabotage = NO_NESTED_DROPOUT if control else {}  # the one line the control changes
    fits = [fit_dcf(scale, seed, s, **sabotage) for s in (seed, seed + 1000)]
    vae = [fit_vae(scale, seed, s).z_test for s in (seed, seed + 1000)]
    idx = separated(fits[0][0].d_, fits[1][0].d_)
    dcf_z = [r.z_test for _, r in fits]
    dcf_score = seed_consistency([z[..., idx] for z in dcf_z]) if idx else 0.0
    vae_score = seed_consistency(vae, allow_permutation=True)
    measured = {
        "DCF cross-seed |cos| (separated)": dcf_score,
        "separated coordinates": float(len(idx)),
        "DCF cross-seed |cos| (first 3, no permutation)": seed_consistency(dcf_z),
        "DCF (separated) - VAE (best permutation) cross-seed |cos|": dcf_score - vae_score,
    }
    for c in range(N_LATENT):
        measured[f"DCF cross-seed |cos| coordinate {c + 1}"] = seed_consistency([z[..., c : c + 1] for z in dcf_z])
    baselines = {"VAE cross-seed |cos| (best permutation)": vae_score, "VAE cross-seed |cos|": seed_consistency(vae)}
    holds = dcf_score - vae_score > 0
    reason = "" if holds else (
        f"separated coordinates {[i + 1 for i in idx]}: DCF {dcf_score:.3f} vs VAE (best permutation) {vae_score:.3f}"
    )  # fmt: skip
    fig = Figure(figsize=(9, 4.5))
    for row, (name, zs) in enumerate((("DCF", dcf_z), ("VAE", vae))):
        for c in range(N_LATENT):
            ax = fig.add_subplot(2, N_LATENT, row * N_LATENT + c + 1)
            ref = zs[0][0, :, c]
            for k, z in enumerate(zs):
                trace = z[0, :, c]
                sign = np.sign(np.dot(trace - trace.mean(), ref - ref.mean())) or 1.0
                ax.plot(sign * (trace - trace.mean()) / (trace.std() + 1e-12), lw=0.8, label=f"model seed {k}")
            tag = " (separated)" if row == 0 and c in idx else ""
            ax.set_title(f"{name} coordinate {c + 1}{tag}", fontsize=9)
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


@claim(
    "dualflow/simulated-representation-v2",
    statement="the simulated representation (the h + 1 frames before t = 20 compressed, v_theta integrated at "
    "tau = 0 for 10 frames, latent read with (L D^1/2)^-1) follows the flowed latent of the same held-out frames "
    "(first 3 coordinates) better than a linear autoregression of the same order fitted on the training trials' "
    "flowed latents (latent size and ridge chosen on training trials): error ratio rollout / linear < 1",
    paper="Inference section ('simulated' representation: compress the first frame, integrate v_theta in time at "
    "fixed tau; plotted against the flowed one)",
    control="dynamical loss off (beta = 0: v_theta keeps its random initialisation while the encoder and u_phi "
    "train as before; the linear peer is refitted on that run's flowed latents)",
    judge=Interval("rollout / linear dynamics", below=1.0),
)
def simulated_representation(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed, **(NO_DYNAMICS_LOSS if control else {}))
    ex = dcf.extra
    measured = {
        "rollout / linear dynamics": ex["rollout / linear dynamics"],
        "rollout / persistence": ex["rollout / persistence"],
        "rollout error (relative)": ex["rollout error"],
        "rollout decoding R2": ex["rollout decoding R2"],
    }
    baselines = {
        "linear dynamics error (relative)": ex["linear dynamics error"],
        "persistence error (relative)": ex["persistence error"],
        "linear dynamics: latent dimensions used": ex["VAR latent dimensions"],
    }
    holds = measured["rollout / linear dynamics"] < 1.0
    reason = "" if holds else (
        f"rollout error {ex['rollout error']:.3f} vs linear dynamics {ex['linear dynamics error']:.3f} "
        f"(persistence {ex['persistence error']:.3f}; relative to the flowed latent's variance)"
    )  # fmt: skip
    fig = Figure(figsize=(9, 3))
    for c in range(N_LATENT):
        ax = fig.add_subplot(1, N_LATENT, c + 1)
        ax.plot(ex["flowed latent"][0, :, c], "k-", label="flowed")
        ax.plot(ex["rollout latent"][0, :, c], "C0--", label="simulated (v_theta at tau = 0)")
        ax.plot(ex["linear dynamics latent"][0, :, c], "C2:", label="linear autoregression")
        ax.set_title(f"coordinate {c + 1}", fontsize=9), ax.set_xlabel("frames after t = 20")
    fig.axes[0].legend(fontsize=7)
    fig.tight_layout()
    return ClaimResult("holds" if holds else "fails", measured=measured, baselines=baselines, reason=reason,
                       figures={"rollout": fig})  # fmt: skip


CLAIMS = [better_latents, low_dimensional_support, reconstruction, identifiable, simulated_representation]
