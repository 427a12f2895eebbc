"""The theorem, executable, and the interpretability metrics.

Interleaving bound (our proof of the paper's statement, see README): let samples X and feature positions
F = {f_j} lie in one metric space, every sample have an active feature and every feature an active sample
(the coverage conditions), and r = max over active (i, j) of d(x_i, f_j) (the column radius). Then the
Hausdorff distance d_H(X, F) <= r, hence the Gromov-Hausdorff distance is <= r and the Vietoris-Rips
persistence diagrams (diameter convention, as ripser) satisfy

    d_B(Dgm_k VR(X), Dgm_k VR(F)) <= 2 r        for every homology degree k.

Metrics: per-feature contiguity (mass inside the largest contiguous region of its support; on the circle
chance-corrected against the same tuning curve with its bins shuffled, so a non-selective feature scores 0)
and number of support components, on the circle (binned angles) or on a kNN graph; feature-space H1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from icml26.coherence.geometry import Geometry, check_codes

__all__ = [
    "arc_contiguity",
    "bottleneck",
    "interleaving_check",
    "max_lifetime",
    "vr_diagrams",
]


def vr_diagrams(D: np.ndarray, maxdim: int = 1) -> list[np.ndarray]:
    """Vietoris-Rips persistence diagrams (ripser) of a distance matrix; the infinite H0 bar is dropped."""
    from ripser import ripser

    D = np.asarray(D, dtype=np.float64)
    if D.shape[0] > 3000:
        raise ValueError(f"{D.shape[0]} points is too many for Vietoris-Rips here; subsample to <= 3000")
    dgms = ripser(D, maxdim=maxdim, distance_matrix=True)["dgms"]
    return [d[np.isfinite(d[:, 1])] if len(d) else d.reshape(0, 2) for d in dgms]


def bottleneck(d1: np.ndarray, d2: np.ndarray) -> float:
    """Bottleneck distance (persim); empty diagrams are allowed."""
    from persim import bottleneck as _bn

    a = d1 if len(d1) else np.zeros((0, 2))
    b = d2 if len(d2) else np.zeros((0, 2))
    if not len(a) and not len(b):
        return 0.0
    if not len(a) or not len(b):  # every point matched to the diagonal
        pts = a if len(a) else b
        return float(((pts[:, 1] - pts[:, 0]) / 2).max())
    return float(_bn(a, b))


def max_lifetime(dgm: np.ndarray) -> float:
    return float((dgm[:, 1] - dgm[:, 0]).max()) if len(dgm) else 0.0


def interleaving_check(
    A, geometry: Geometry, *, maxdim: int = 1, rectify: bool = False, progress: Callable[[str], None] | None = None
) -> dict[str, float]:
    """Bottleneck distances between the VR diagrams of samples and of feature positions, and the bound 2 r.

    Dead features are dropped (they have no position) and uncovered samples make the bound inapplicable:
    ``covered`` is then 0 and ``bound`` is inf. ``progress(stage)`` is called before each of the 3 stages (the
    samples' VR diagrams take most of the time: minutes for a few thousand samples).
    """
    step = progress if progress is not None else (lambda stage: None)
    A = check_codes(A, rectify=rectify)
    live = A.sum(0) > 0
    if live.sum() < 1:
        raise ValueError("no feature is ever active: coverage fails and there are no feature positions")
    A = A[:, live]
    f = geometry.feature_positions(A)  # (m, k)
    d_xf = geometry.distances(geometry.coords, f)  # (n, m)
    r = float(np.where(A > 0, d_xf, 0.0).max())
    covered = bool((A.sum(1) > 0).all())
    step(f"VR diagrams of {len(A)} samples")
    dx = vr_diagrams(geometry.distances(geometry.coords, geometry.coords), maxdim)
    step(f"VR diagrams of {len(f)} feature positions")
    df = vr_diagrams(geometry.distances(f, f), maxdim)
    step("bottleneck distances")
    out = {"column_radius": r, "bound": 2 * r if covered else float("inf"), "covered": float(covered)}
    for k in range(maxdim + 1):
        out[f"bottleneck_H{k}"] = bottleneck(dx[k], df[k])
        out[f"samples_H{k}_max_life"] = max_lifetime(dx[k])
        out[f"features_H{k}_max_life"] = max_lifetime(df[k])
    out["bottleneck_max"] = max(out[f"bottleneck_H{k}"] for k in range(maxdim + 1))
    return out


def _runs_circular(mask: np.ndarray) -> list[np.ndarray]:
    """Index arrays of the maximal runs of True in a circular boolean array."""
    if mask.all():
        return [np.arange(len(mask))]
    if not mask.any():
        return []
    start = int(np.flatnonzero(~mask)[0])  # rotate so a False comes first: no run wraps
    rolled = np.roll(mask, -start)
    runs, cur = [], []
    for i, v in enumerate(rolled):
        if v:
            cur.append((i + start) % len(mask))
        elif cur:
            runs.append(np.asarray(cur))
            cur = []
    if cur:
        runs.append(np.asarray(cur))
    return runs


def _largest_run_share(curve: np.ndarray, rel: float) -> tuple[float, int, np.ndarray]:
    """Share of a tuning curve's support mass in its largest circular run, the number of runs, and that run
    (the support is the bins above ``rel`` x the peak)."""
    support = curve > rel * curve.max()
    runs = _runs_circular(support)
    best = max(runs, key=lambda r: curve[r].sum())
    return float(curve[best].sum() / curve[support].sum()), len(runs), best


def arc_contiguity(
    A, theta, *, bins: int = 48, rel: float = 0.1, n_shuffles: int = 32, rectify: bool = False
) -> dict[str, np.ndarray]:
    """Per-feature contiguity on the circle, chance-corrected so a non-selective feature scores 0.

    The tuning curve of feature j is its mean activation in ``bins`` equal angle bins; its support is the bins
    above ``rel`` x the curve's peak. The raw contiguity ``C`` is the mass in the largest circular run of
    support over the mass of the whole support. A feature that fires everywhere has one run covering the
    circle (``C = 1``) and random scattered firing averages into an almost flat curve (``C`` ~ 0.9), so ``C``
    alone cannot tell a tuned arc from no tuning at all. The reported ``contiguity`` compares ``C`` with its
    value on the same curve with its bins shuffled (``n_shuffles`` fixed permutations: the same tuning values,
    no spatial order), as a spatial-shuffle control does for place fields::

        contiguity = (C - C_shuffled) / (1 - C_shuffled)       (0 when C_shuffled = 1: the support is the circle)

    1 for one arc, ~0 for a flat or randomly scattered curve (it can be negative), in between for several arcs.
    ``raw_contiguity`` keeps ``C``; ``components`` = number of runs; ``live`` marks features that ever fire;
    ``tiling`` = fraction of bins inside some feature's largest run.
    """
    A = check_codes(A, rectify=rectify)
    theta = np.mod(np.asarray(theta, dtype=np.float64).reshape(-1), 2 * np.pi)
    if len(theta) != len(A):
        raise ValueError(f"{len(theta)} angles for {len(A)} samples")
    if int(n_shuffles) < 1:
        raise ValueError(f"n_shuffles must be >= 1; got {n_shuffles}")
    b = np.minimum((theta / (2 * np.pi) * bins).astype(int), bins - 1)
    counts = np.bincount(b, minlength=bins)
    curves = np.stack([np.bincount(b, weights=A[:, j], minlength=bins) for j in range(A.shape[1])], 1)
    curves = curves / np.maximum(counts, 1)[:, None]  # (bins, m)
    m = A.shape[1]
    raw, contig, comps, covered = np.full(m, np.nan), np.full(m, np.nan), np.zeros(m), np.zeros(bins, bool)
    live = curves.max(0) > 0
    perms = [np.random.default_rng([bins, k]).permutation(bins) for k in range(int(n_shuffles))]  # fixed: a measure
    for j in np.flatnonzero(live):
        c = curves[:, j]
        raw[j], comps[j], best = _largest_run_share(c, rel)
        chance = float(np.mean([_largest_run_share(c[p], rel)[0] for p in perms]))
        contig[j] = (raw[j] - chance) / (1.0 - chance) if chance < 1.0 - 1e-12 else 0.0
        covered[best] = True
    return {
        "contiguity": contig,
        "raw_contiguity": raw,
        "components": comps,
        "live": live,
        "tiling": np.float64(covered.mean()),
    }
