"""The real-data experiment behind ``dualflow/real-place-cells-v2`` (issue 40): position decoding on held-out laps.

Rat hippocampal units on a linear track (:mod:`icml26.dualflow.hippocampus`, bundled, MIT), 100 ms bins,
units above 0.1 Hz, laps cut from the position and split into windows of ``WINDOW`` bins (the trials). Laps go
to 4 folds in pairs (one each way), so each fold holds both running directions; seed s holds out fold s mod 4.
Every method is fitted **unsupervised** on the training laps — DCF, PCA and CEBRA-Time on the smoothed counts
(Gaussian, sigma = 2 bins), GPFA on the counts — with the claims' per-scale budgets of
:data:`icml26.dualflow.experiment.SETTINGS`, and the position is decoded from the 3-D latent of the held-out
laps by least squares (linear R^2) and by 10-nearest-neighbour regression (kNN R^2), both fitted on the
training laps' latents.
"""

from __future__ import annotations

import contextlib
import functools
import io
import warnings
from dataclasses import dataclass

import numpy as np

from icml26.claims import Scale
from icml26.dualflow.baselines import CEBRABaseline, GPFABaseline, PCABaseline
from icml26.dualflow.estimator import DualFlow
from icml26.dualflow.experiment import N_LATENT, SETTINGS, cebra_available
from icml26.dualflow.hippocampus import load_linear_track
from icml26.dualflow.metrics import knn_decoding_r2, latent_decoding_r2

WINDOW, N_FOLDS, REBIN, SMOOTH_BINS = 25, 4, 2, 2.0


@dataclass(frozen=True)
class Windows:
    counts: np.ndarray  # (n, WINDOW, N)
    smoothed: np.ndarray  # (n, WINDOW, N)
    position: np.ndarray  # (n, WINDOW, 1), 0..1 along the track
    fold: np.ndarray  # (n,)
    bin_s: float


@functools.lru_cache(maxsize=1)
def windows() -> Windows:
    """The bundled session's laps as windows of WINDOW bins (a lap's remainder is dropped)."""
    laps = load_linear_track(rebin=REBIN)
    c, s, p, lap = [], [], [], []
    for i, (ci, si, pi) in enumerate(zip(laps.counts, laps.smoothed(SMOOTH_BINS), laps.position, strict=True)):
        for k in range(len(ci) // WINDOW):
            sl = slice(k * WINDOW, (k + 1) * WINDOW)
            c.append(ci[sl]), s.append(si[sl]), p.append(pi[sl, None]), lap.append(i)
    fold = (np.array(lap) // 2) % N_FOLDS  # laps alternate direction: pairs keep both in every fold
    return Windows(np.stack(c).astype(float), np.stack(s), np.stack(p), fold, laps.bin_s)


@dataclass(frozen=True)
class PositionResult:
    z_test: np.ndarray  # (n_test, WINDOW, 3)
    position_test: np.ndarray  # (n_test, WINDOW, 1)
    linear_r2: float
    knn_r2: float


def _score(z_train, z_test, held_out: int) -> PositionResult:
    w = windows()
    tr, te = w.fold != held_out, w.fold == held_out
    p_tr, p_te = w.position[tr], w.position[te]
    return PositionResult(
        z_test, p_te, latent_decoding_r2(z_train, p_tr, z_test, p_te), knn_decoding_r2(z_train, p_tr, z_test, p_te)
    )


@functools.lru_cache(maxsize=16)
def fit_method(method: str, scale: Scale, seed: int, model_seed: int) -> PositionResult:
    """Fit ``method`` ("DCF", "PCA", "CEBRA" or "GPFA") on the laps outside fold seed mod 4; score the held-out
    fold."""
    w, cfg = windows(), SETTINGS[scale]
    held_out = seed % N_FOLDS
    tr, te = w.fold != held_out, w.fold == held_out
    if method == "DCF":
        est = DualFlow(**{"random_state": model_seed, **cfg["dcf"]}).fit(w.smoothed[tr])
        z = [est.transform(w.smoothed[m], n_components=N_LATENT) for m in (tr, te)]
    elif method == "PCA":
        pca = PCABaseline(N_LATENT).fit(w.smoothed[tr])
        z = [pca.transform(w.smoothed[m]) for m in (tr, te)]
    elif method == "CEBRA":
        model = CEBRABaseline(N_LATENT, max_iterations=cfg["cebra_iters"], model_architecture=cfg["cebra_model"],
                              seed=model_seed).fit(w.smoothed[tr])  # fmt: skip
        z = [model.transform(w.smoothed[m]) for m in (tr, te)]
    elif method == "GPFA":
        gpfa = GPFABaseline(N_LATENT, bin_size=w.bin_s, em_max_iters=cfg["gpfa_iters"], seed=model_seed)
        with contextlib.redirect_stdout(io.StringIO()):  # elephant prints its progress
            gpfa.fit(w.counts[tr])
            z = [gpfa.transform(w.counts[m]) for m in (tr, te)]
    else:
        raise ValueError(f"method must be DCF, PCA, CEBRA or GPFA; got {method!r}")
    return _score(z[0], z[1], held_out)


def fit_real_peers(scale: Scale, seed: int) -> dict[str, PositionResult]:
    """PCA, GPFA and (when installed) CEBRA-Time on the held-out fold of this seed."""
    out = {"PCA": fit_method("PCA", scale, seed, seed), "GPFA": fit_method("GPFA", scale, seed, seed)}
    if cebra_available():
        out["CEBRA"] = fit_method("CEBRA", scale, seed, seed)
    return out


def cross_validated_decoding(
    X, y, n_folds: int = 4, n_components: int = 3, smooth_bins: float = 2.0, seed: int = 0, **dcf_kwargs
) -> tuple[dict[str, dict[str, float]], list[np.ndarray]]:
    """A user's own binned counts: DCF vs PCA latents, judged by decoding a behavioural variable on held-out trials.

    Parameters
    ----------
    X : array (n_trials, n_time, n_units) or list of (n_time_i, n_units) arrays
        Binned spike counts (or any frames); smoothed in time with a Gaussian of ``smooth_bins`` (0: none).
    y : array (n_trials, n_time[, k]) or list of (n_time_i[, k]) arrays
        The behavioural variable per bin (never shown to the latent models).
    n_folds : int
        Trial i is held out in fold i mod n_folds; each fold fits DCF and PCA on the other trials.
    dcf_kwargs : keyword arguments of :class:`DualFlow` (``random_state`` is ``seed`` + fold); ``latent_budget``
        is capped in each fold at the number of units that vary in its training trials (silent ones are dropped)

    Returns
    -------
    (scores, latents): scores[method] = {"linear R2", "kNN R2"} averaged over folds (with per-fold lists under
    "linear R2 per fold", "kNN R2 per fold"); latents = DCF's held-out latent of every trial, (n_time_i, K).
    """
    from scipy.ndimage import gaussian_filter1d
    from sklearn.decomposition import PCA

    Xs = [np.asarray(t, dtype=float) for t in (list(X) if not isinstance(X, np.ndarray) else X)]
    ys = [np.asarray(t, dtype=float) for t in (list(y) if not isinstance(y, np.ndarray) else y)]
    if len(Xs) != len(ys):
        raise ValueError(f"counts hold {len(Xs)} trials but the behaviour holds {len(ys)}")
    ys = [t[:, None] if t.ndim == 1 else t for t in ys]
    for i, (a, b) in enumerate(zip(Xs, ys, strict=True)):
        if a.ndim != 2 or b.ndim != 2 or len(a) != len(b):
            raise ValueError(
                f"trial {i}: counts {a.shape} and behaviour {b.shape} must share the time axis "
                "((time, units) and (time,) or (time, k))"
            )
        if not np.all(np.isfinite(b)):
            raise ValueError(f"trial {i}: the behaviour contains NaN or infinite values")
    if not 2 <= int(n_folds) <= len(Xs):
        raise ValueError(f"folds must lie in [2, n_trials={len(Xs)}]; got {n_folds}")
    if not 1 <= int(n_components) <= Xs[0].shape[1]:
        raise ValueError(f"components must lie in [1, n_units={Xs[0].shape[1]}]; got {n_components}")
    if smooth_bins < 0:
        raise ValueError(f"smooth must be >= 0 bins; got {smooth_bins}")
    if smooth_bins > 0:
        Xs = [gaussian_filter1d(t, smooth_bins, axis=0, mode="nearest") for t in Xs]
    fold = np.arange(len(Xs)) % int(n_folds)
    scores: dict[str, dict[str, list[float]]] = {m: {"linear R2": [], "kNN R2": []} for m in ("DCF", "PCA")}
    latents: list[np.ndarray | None] = [None] * len(Xs)
    flat = lambda ts: np.concatenate(ts)[None]  # noqa: E731 - (1, sum T, .): one pseudo-trial for the decoders
    for f in range(int(n_folds)):
        tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        train = [Xs[i] for i in tr]
        kwargs = {**dcf_kwargs, "random_state": seed + f}
        n_active = int((np.concatenate(train).std(0) > 0).sum())  # units that vary in this fold's training trials
        if "latent_budget" in kwargs:
            kwargs["latent_budget"] = min(float(kwargs["latent_budget"]), max(n_active, 1))
        with warnings.catch_warnings():  # a unit silent in one fold's training trials is expected: dropped there
            warnings.filterwarnings("ignore", message="dropping .* zero-variance", category=UserWarning)
            est = DualFlow(**kwargs).fit(train)
        z_tr = est.transform([Xs[i] for i in tr], n_components=n_components)
        z_te = est.transform([Xs[i] for i in te], n_components=n_components)
        for i, z in zip(te, z_te, strict=True):
            latents[i] = z
        pca = PCA(n_components).fit(np.concatenate([Xs[i] for i in tr]))
        p_tr, p_te = ([pca.transform(Xs[i]) for i in idx] for idx in (tr, te))
        y_tr, y_te = flat([ys[i] for i in tr]), flat([ys[i] for i in te])
        for name, (a, b) in {"DCF": (z_tr, z_te), "PCA": (p_tr, p_te)}.items():
            scores[name]["linear R2"].append(latent_decoding_r2(flat(a), y_tr, flat(b), y_te))
            scores[name]["kNN R2"].append(knn_decoding_r2(flat(a), y_tr, flat(b), y_te))
    summary = {
        m: {
            "linear R2": float(np.mean(s["linear R2"])),
            "kNN R2": float(np.mean(s["kNN R2"])),
            "linear R2 per fold": s["linear R2"],
            "kNN R2 per fold": s["kNN R2"],
        }
        for m, s in scores.items()
    }
    return summary, latents
