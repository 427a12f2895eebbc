"""Evaluation metrics of ``papers/dualflow.md`` §7 (reconstruction of the paper's evaluation).

All latents are arrays of shape (n_trials, n_time, k); truths (n_trials, n_time, d).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

__all__ = [
    "heldout_r2",
    "knn_decoding_r2",
    "knn_overlap",
    "latent_decoding_r2",
    "mean_canonical_correlation",
    "pca_dimension",
    "reconstruction_r2",
    "seed_consistency",
    "temporal_neighbour_preservation",
]


def _flat(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 3:
        raise ValueError(f"expected shape (n_trials, n_time, k); got {a.shape}")
    return a.reshape(-1, a.shape[-1])


def heldout_r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Variance-weighted R^2 = 1 - sum (y - yhat)^2 / sum (y - mean y)^2 over all outputs."""
    y, p = _flat(y_true), _flat(y_pred)
    return float(1.0 - ((y - p) ** 2).sum() / ((y - y.mean(0)) ** 2).sum())


def latent_decoding_r2(z_train: np.ndarray, s_train: np.ndarray, z_test: np.ndarray, s_test: np.ndarray) -> float:
    """Linear decoding of the true state from latents: least squares fitted on train trials, R^2 on test trials."""
    Z = np.column_stack([_flat(z_train), np.ones(len(_flat(z_train)))])
    coef, *_ = np.linalg.lstsq(Z, _flat(s_train), rcond=None)
    pred = np.column_stack([_flat(z_test), np.ones(len(_flat(z_test)))]) @ coef
    return heldout_r2(s_test, pred.reshape(*np.shape(s_test)[:2], -1))


def _standardise_columns(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    mean, std = train.mean(0), train.std(0)
    std = np.where(std > 0, std, 1.0)
    return [(a - mean) / std for a in (train, *others)]


def knn_decoding_r2(
    z_train: np.ndarray, s_train: np.ndarray, z_test: np.ndarray, s_test: np.ndarray, n_neighbours: int = 10
) -> float:
    """Nonlinear decoding of the true state: k-nearest-neighbour regression on per-coordinate standardised
    latents (fitted on train trials), R^2 on test trials. Invariant to a scale per coordinate."""
    from sklearn.neighbors import KNeighborsRegressor

    a, b = _standardise_columns(_flat(z_train), _flat(z_test))
    pred = KNeighborsRegressor(n_neighbors=n_neighbours).fit(a, _flat(s_train)).predict(b)
    return heldout_r2(s_test, pred.reshape(*np.shape(s_test)[:2], -1))


def knn_overlap(z: np.ndarray, truth: np.ndarray, n_neighbours: int = 10) -> float:
    """Mean fraction of each frame's ``n_neighbours`` nearest latent neighbours (Euclidean, per-coordinate
    standardised latent) that are also among its ``n_neighbours`` nearest neighbours in the true state.

    1 for the true state itself (or any scaled copy of it); about ``n_neighbours / n_frames`` for noise.
    """
    from sklearn.neighbors import NearestNeighbors

    (a,) = _standardise_columns(_flat(z))
    t = _flat(truth)
    if len(a) != len(t):
        raise ValueError(f"latent and truth hold different frame counts ({len(a)} vs {len(t)})")
    k = int(n_neighbours)
    ia = NearestNeighbors(n_neighbors=k + 1).fit(a).kneighbors(a, return_distance=False)[:, 1:]
    it = NearestNeighbors(n_neighbors=k + 1).fit(t).kneighbors(t, return_distance=False)[:, 1:]
    hits = (ia[:, :, None] == it[:, None, :]).any(-1)
    return float(hits.mean())


def pca_dimension(x: np.ndarray, threshold: float = 0.95, standardise: bool = True) -> int:
    """Fewest principal components holding ``threshold`` of the variance of the frames (features standardised
    as DualFlow standardises them)."""
    f = _flat(x)
    f = f - f.mean(0)
    if standardise:
        std = f.std(0)
        f = f[:, std > 0] / std[std > 0]
    s = np.linalg.svd(f, compute_uv=False) ** 2
    return int(np.searchsorted(np.cumsum(s) / s.sum(), threshold - 1e-12) + 1)


def mean_canonical_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Mean canonical correlation between two sets of variables (frames as samples), via QR + SVD."""
    A, B = _flat(a), _flat(b)
    qa, _ = np.linalg.qr(A - A.mean(0))
    qb, _ = np.linalg.qr(B - B.mean(0))
    s = np.linalg.svd(qa.T @ qb, compute_uv=False)
    return float(np.clip(s[: min(A.shape[1], B.shape[1])], 0, 1).mean())


def temporal_neighbour_preservation(
    z: np.ndarray, n_neighbours: int = 10, window: int = 3, max_lag: int = 10
) -> tuple[float, float]:
    """How well a latent keeps temporal relations.

    Returns
    -------
    fraction : float
        Mean fraction of each frame's ``n_neighbours`` nearest latent neighbours (Euclidean) that lie in the
        same trial within ``window`` steps.
    spearman : float
        Spearman correlation between latent distance and |lag| for all pairs in the same trial with
        1 <= |lag| <= max_lag.
    """
    from sklearn.neighbors import NearestNeighbors

    z = np.asarray(z, dtype=float)
    n_trials, T, _ = z.shape
    flat = _flat(z)
    trial = np.repeat(np.arange(n_trials), T)
    time = np.tile(np.arange(T), n_trials)
    _, idx = NearestNeighbors(n_neighbors=n_neighbours + 1).fit(flat).kneighbors(flat)
    idx = idx[:, 1:]
    near = (trial[idx] == trial[:, None]) & (np.abs(time[idx] - time[:, None]) <= window)
    dists, lags = [], []
    for lag in range(1, max_lag + 1):
        d = np.linalg.norm(z[:, lag:] - z[:, :-lag], axis=-1).ravel()
        dists.append(d)
        lags.append(np.full(d.size, lag))
    rho = spearmanr(np.concatenate(dists), np.concatenate(lags))[0]
    return float(near.mean()), float(rho)


def reconstruction_r2(x_true: np.ndarray, x_rec: np.ndarray) -> float:
    """Held-out reconstruction R^2 (variance-weighted over features)."""
    return heldout_r2(x_true, x_rec)


def seed_consistency(latents: list[np.ndarray], allow_permutation: bool = False) -> float:
    """Mean pairwise |cosine similarity| of centred latent components across seeds (sign-aligned).

    Component i of one seed is compared with component i of the other (DCF is identifiable up to one sign
    per component). With ``allow_permutation`` the best one-to-one matching of components is used instead
    (Hungarian assignment), which is the most favourable reading for a non-identifiable model.
    """
    from scipy.optimize import linear_sum_assignment

    if len(latents) < 2:
        raise ValueError("seed consistency needs latents from at least two seeds")
    scores = []
    for i in range(len(latents)):
        for j in range(i + 1, len(latents)):
            a, b = _flat(latents[i]), _flat(latents[j])
            a = (a - a.mean(0)) / np.linalg.norm(a - a.mean(0), axis=0)
            b = (b - b.mean(0)) / np.linalg.norm(b - b.mean(0), axis=0)
            cos = np.abs(a.T @ b)  # sign alignment = absolute cosine
            if allow_permutation:
                r, c = linear_sum_assignment(-cos)
                scores.append(cos[r, c].mean())
            else:
                scores.append(np.diag(cos).mean())
    return float(np.mean(scores))
