"""Selectivity-aware measures of coherent features, each chance-corrected against a shuffled null.

Why: a raw contiguity score cannot tell a tuned feature from no tuning at all. A feature that fires on every
sample has one support component covering the space (contiguity 1), and binning scattered firing into a tuning
curve smooths it into an almost flat, "contiguous" curve. So every measure here compares the feature with
itself after its activations are permuted across samples (the same values, no geometry), a spatial-shuffle
control as used for place fields. For a feature ``a`` (n,) and a raw score ``S``:

    score = (S(a) - S0) / (1 - S0),      S0 = mean over fixed permutations p of S(a[p])   (0 when S0 > 0.9)

clipped to [-1, 1]. 1 for a perfectly localised feature, ~0 for a feature that fires everywhere or at random,
negative for one less localised than chance, in between for a feature with several separated bumps. The
permutations are fixed by ``n`` and the shuffle index (a measure, not a random draw), so a score is a
deterministic function of the codes.

- :func:`feature_coherence` — the paper's own definition on the activation matrix: the column Fréchet
  variance ``V^col_j`` around the barycentric position ``f_j``, as ``S_j = 1 - V^col_j / V_total``.
- :func:`support_contiguity` — compactness of the support on the sample graph, without binning and at the
  support's own size: its edge cohesion placed between a scattered (shuffled) and a compact (graph-ball) support of
  the same size, times the mass share of its largest connected component. It has its own normalisation in place
  of the formula above (see the function).
- :func:`arc_tiling` — whether the features tile a circle into contiguous arcs (the paper's picture of circle data):
  the share of the circle covered by one contiguous territory per feature, each credited at most its fair share.
  Its null is 0 by construction (shuffled or non-selective codes make territories of a sample or two).
- :func:`token_consistency` — an interpretability proxy for token features: the share of pairs among a
  feature's top-``k`` activating tokens that are the same word, chance-corrected by the word frequencies.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from icml26.coherence.geometry import Geometry, check_codes, knn_adjacency

__all__ = [
    "arc_tiling",
    "feature_coherence",
    "knn_adjacency",
    "mean_live",
    "support_contiguity",
    "token_consistency",
]

#: Permutations of the shuffled null; fixed, so a measure is a function of its input.
N_SHUFFLES = 8


def _permutations(n: int, n_shuffles: int) -> list[np.ndarray]:
    if int(n_shuffles) < 1:
        raise ValueError(f"n_shuffles must be >= 1; got {n_shuffles}")
    return [np.random.default_rng([n, 7, k]).permutation(n) for k in range(int(n_shuffles))]


#: A null within this of 1 leaves no room to be selective (a feature whose support, shuffled, is still one
#: component covers nearly the whole graph): its score is 0 instead of a ratio of two tiny numbers.
MIN_ROOM = 0.1


def _corrected(raw: np.ndarray, null: np.ndarray) -> np.ndarray:
    """(raw - null) / (1 - null), clipped to [-1, 1], and 0 where the null is within MIN_ROOM of 1 (nothing to
    be selective about)."""
    room = 1.0 - null
    out = np.zeros_like(raw)
    ok = room > MIN_ROOM
    out[ok] = np.clip((raw[ok] - null[ok]) / room[ok], -1.0, 1.0)
    return out


def mean_live(result: dict[str, np.ndarray], key: str) -> float:
    """Mean of ``result[key]`` over the live features (0 when none is live: nothing coherent was learnt)."""
    live = result["live"] & np.isfinite(result[key])
    return float(np.mean(result[key][live])) if live.any() else 0.0


# --- the paper's coherence, per feature --------------------------------------------------------------------------


def _column_scores(A: np.ndarray, geometry: Geometry, total: float) -> np.ndarray:
    """S_j = 1 - V^col_j / V_total for every live column of A (n, m); NaN for dead ones."""
    mass = A.sum(0)  # (m,)
    live = mass > 0
    out = np.full(A.shape[1], np.nan)
    if live.any():
        f = geometry.weighted_means(A[:, live], geometry.coords)  # (m_live, k)  barycentric positions
        d2 = geometry.distances(geometry.coords, f) ** 2  # (n, m_live)
        v_col = (A[:, live] * d2).sum(0) / mass[live]  # (m_live,)  V^col_j
        out[live] = 1.0 - v_col / max(total, 1e-12)
    return out


def feature_coherence(A, geometry: Geometry, *, n_shuffles: int = N_SHUFFLES, rectify: bool = False) -> dict:
    """Per-feature coherence ``1 - V^col_j / V_total`` on ``geometry``, chance-corrected (module docstring).

    Returns ``coherence`` (m,) chance-corrected, ``raw`` (m,) and ``null`` (m,) before correction, ``live``
    (m,) bool and ``support_share`` (m,): the fraction of samples on which each feature fires (a feature that
    fires everywhere has share 1, V^col = V_total, raw 0 and coherence 0).
    """
    A = check_codes(A, rectify=rectify)
    if geometry.n != len(A):
        raise ValueError(f"codes have {len(A)} samples but the geometry has {geometry.n}")
    centre = geometry.weighted_means(np.ones((geometry.n, 1)), geometry.coords)  # (1, k)
    total = float((geometry.distances(geometry.coords, centre)[:, 0] ** 2).mean())  # V_total
    raw = _column_scores(A, geometry, total)
    null = np.mean([_column_scores(A[p], geometry, total) for p in _permutations(len(A), n_shuffles)], axis=0)
    live = A.sum(0) > 0
    score = np.full(A.shape[1], np.nan)
    score[live] = _corrected(raw[live], null[live])
    return {"coherence": score, "raw": raw, "null": null, "live": live, "support_share": (A > 0).mean(0)}


# --- support cohesion on the sample graph ---------------------------------------------------------------------------


def _cohesion(mask: np.ndarray, adjacency: csr_matrix, degree: np.ndarray) -> float:
    """Share of the edge ends of the support ``mask`` (n,) bool that stay inside it: E_in(S) / vol(S)."""
    inside = adjacency[mask][:, mask].sum()
    return float(inside / max(degree[mask].sum(), 1e-12))


def _ball(seed_node: int, size: int, adjacency: csr_matrix, a: np.ndarray) -> np.ndarray:
    """The compact reference: the ``size`` samples nearest to ``seed_node`` in hops (breadth-first order); samples
    the search cannot reach follow by decreasing activation."""
    order = breadth_first_order(adjacency, seed_node, directed=False, return_predecessors=False)
    if len(order) < size:
        rest = np.setdiff1d(np.argsort(-a, kind="stable"), order, assume_unique=False)
        rest = rest[np.argsort(-a[rest], kind="stable")]
        order = np.r_[order, rest]
    mask = np.zeros(len(a), bool)
    mask[order[:size]] = True
    return mask


def support_contiguity(
    A, adjacency, *, rel: float = 0.1, n_shuffles: int = N_SHUFFLES, rectify: bool = False
) -> dict[str, np.ndarray]:
    """Per-feature compactness of the support on the sample graph ``adjacency`` (n, n), at its own support size.

    The support S_j of feature j is the samples where it exceeds ``rel`` x its peak (no binning: every sample
    counts), of size s. Its cohesion ``raw`` = E_in(S) / vol(S) is the share of the edge ends leaving S's samples
    that land in S. Two references of the same size s fix the scale (v2 of this measure; v1's largest-component
    share saturated at 1 for any large support, so a compact broad feature read like one firing everywhere):

    - ``null``: a scattered support, the mean cohesion of S after ``n_shuffles`` fixed permutations of the samples;
    - ``ball``: a compact support, the s samples nearest (in hops) to the feature's peak sample.

        contiguity = (raw - null) / (ball - null)      clipped to [-1, 1]; 0 when ball - null < MIN_ROOM_GRAPH

    so 1 for a support as compact as a graph ball of its size (any size), ~0 for scattered firing, in between for
    several separated blobs, and 0 for a feature firing (nearly) everywhere (no room: the support is the graph).
    ``components`` counts the connected components of S. Returns ``contiguity``, ``raw``, ``null``, ``ball``,
    ``components``, ``support_share`` and ``live``.
    """
    A = check_codes(A, rectify=rectify)
    n, m = A.shape
    if not 0.0 <= rel < 1.0:
        raise ValueError(f"rel must be in [0, 1); got {rel}")
    adjacency = csr_matrix(adjacency)
    if adjacency.shape != (n, n):
        raise ValueError(f"adjacency is {adjacency.shape} but there are {n} samples")
    adjacency = (adjacency.maximum(adjacency.T) > 0).astype(np.float64).tocsr()  # symmetric, unweighted
    degree = np.asarray(adjacency.sum(1)).ravel()  # (n,)
    perms = _permutations(n, n_shuffles)
    live = A.max(0) > 0
    raw, null, ball = (np.full(m, np.nan) for _ in range(3))
    comps, share, largest = np.zeros(m), np.zeros(m), np.full(m, np.nan)
    for j in np.flatnonzero(live):
        a = A[:, j]
        mask = a > rel * a.max()  # (n,) the support S_j
        share[j] = mask.mean()
        raw[j] = _cohesion(mask, adjacency, degree)
        null[j] = np.mean([_cohesion(mask[p], adjacency, degree) for p in perms])
        ball[j] = _cohesion(_ball(int(np.argmax(a)), int(mask.sum()), adjacency, a), adjacency, degree)
        comps[j], lab = connected_components(adjacency[mask][:, mask], directed=False)
        mass = np.bincount(lab, weights=a[mask], minlength=int(comps[j]))
        largest[j] = mass.max() / mass.sum()
    score = np.full(m, np.nan)
    room = ball - null
    ok = live & (room >= MIN_ROOM_GRAPH)
    score[live] = 0.0
    score[ok] = np.clip((raw[ok] - null[ok]) / room[ok], -1.0, 1.0) * largest[ok]
    return {
        "contiguity": score,
        "raw": raw,
        "null": null,
        "ball": ball,
        "components": comps,
        "largest_share": largest,
        "support_share": share,
        "live": live,
    }


#: The compact and the scattered reference of a support must differ by this much in cohesion for the support to
#: be scored at all; below it the support is (nearly) the whole graph or a single sample: scored 0.
MIN_ROOM_GRAPH = 0.02


# --- tiling of a circle -------------------------------------------------------------------------------------------


def _cyclic_runs(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximal runs of equal labels around a cycle: (label of each run, its length)."""
    starts = np.flatnonzero(labels != np.roll(labels, 1))
    if len(starts) == 0:  # one label all the way round
        return labels[:1], np.array([len(labels)])
    return labels[starts], np.diff(np.r_[starts, starts[0] + len(labels)])


def arc_tiling(A, theta, *, min_run: float = 0.25, rectify: bool = False) -> dict:
    """How well the m features of A (n, m) tile the circle of the samples' angles ``theta`` (n,) into arcs.

    Each sample belongs to its most active feature (its territory; a sample with no active feature belongs to
    none). Walking round the circle in angle order, the territories form runs; feature j's tile is its longest run,
    counted only if at least ``min_run`` x a fair tile (n / m samples) long, so the one-or-two-sample runs of
    scattered or non-selective firing never count. Feature j is credited ``p_j = min(tile_j / n, 1 / m)``:

        tiling = sum_j p_j                                                   in [0, 1]

    1 when m contiguous tiles of equal size cover the circle; lower when features bunch (few large tiles, each
    credited only 1/m), split (only a feature's longest arc counts), leave samples uncovered or die; ~0 for codes
    that fire everywhere or at random (their territories change every sample or two; a shuffled code is its null,
    0 up to runs of chance). Returns ``tiling`` (float), ``tile_share`` (m,) the p_j, ``runs`` (number of runs)
    and ``territories`` (features that own some sample).
    """
    A = check_codes(A, rectify=rectify)
    theta = np.asarray(theta, dtype=np.float64).reshape(-1)
    n, m = A.shape
    if len(theta) != n:
        raise ValueError(f"{len(theta)} angles for {n} samples")
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta contains NaN or inf")
    if not 0.0 < min_run <= 1.0:
        raise ValueError(f"min_run must be in (0, 1]; got {min_run}")
    if min_run * n / m < 3:
        raise ValueError(
            f"{n} samples for {m} features leave fewer than 3 samples per counted run at min_run={min_run}: "
            "a tile cannot be told from a flicker"
        )
    order = np.argsort(np.mod(theta, 2 * np.pi), kind="stable")
    codes = A[order]  # (n, m)  samples in angle order
    owner = np.where(codes.max(1) > 0, codes.argmax(1), -1)  # (n,)  each sample's territory (-1: none)
    labels, lengths = _cyclic_runs(owner)
    tile = np.zeros(m)  # (m,)  longest counted run of each feature, in samples
    for j, length in zip(labels, lengths, strict=True):
        if j >= 0 and length >= min_run * n / m:
            tile[j] = max(tile[j], length)
    share = np.minimum(tile / n, 1.0 / m)
    return {
        "tiling": float(share.sum()),
        "tile_share": share,
        "runs": len(lengths),
        "territories": len(np.unique(owner[owner >= 0])),
    }


# --- interpretability proxy for token features --------------------------------------------------------------------


def token_consistency(A, token_ids, *, k: int = 10, rectify: bool = False) -> dict[str, np.ndarray]:
    """Share of same-word pairs among each feature's top-``k`` activating tokens, chance-corrected.

    ``token_ids`` (n,) names the word of every sample (any integer id; for MiniLM tokens, the word-piece id, so
    "same word" means the same word piece). For feature j the raw score is the
    fraction of pairs among its top-k active samples that carry the same id; the null is the same fraction
    for k samples drawn at random (sum_w c_w (c_w - 1) / (n (n - 1)) over word counts c_w). Features active on
    fewer than 2 samples are not scored (NaN). Returns ``consistency``, ``raw``, ``null`` (scalar) and ``live``.
    """
    A = check_codes(A, rectify=rectify)
    ids = np.asarray(token_ids).reshape(-1)
    if len(ids) != len(A):
        raise ValueError(f"{len(ids)} token ids for {len(A)} samples")
    if not int(k) >= 2:
        raise ValueError(f"k must be >= 2; got {k}")
    n, m = A.shape
    counts = np.unique(ids, return_counts=True)[1].astype(np.float64)
    null = float((counts * (counts - 1)).sum() / (n * (n - 1)))
    raw = np.full(m, np.nan)
    for j in range(m):
        active = np.flatnonzero(A[:, j] > 0)
        if len(active) < 2:
            continue
        top = active[np.argsort(-A[active, j], kind="stable")[: int(k)]]
        same = ids[top][:, None] == ids[top][None, :]
        t = len(top)
        raw[j] = (same.sum() - t) / (t * (t - 1))
    live = np.isfinite(raw)
    score = np.full(m, np.nan)
    score[live] = _corrected(raw[live], np.full(live.sum(), null))
    return {"consistency": score, "raw": raw, "null": np.float64(null), "live": live}
