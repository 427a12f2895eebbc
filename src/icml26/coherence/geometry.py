"""Sample geometries and coherence, measured: barycentric feature positions, Fréchet variances, coverage.

A code is a non-negative matrix ``A`` of shape (n samples, m features). A geometry places the samples in a
metric space where barycentres make sense:

- ``euclidean``: coordinates ``x`` (n, k); the Fréchet mean is the weighted average;
- ``circular``: angles ``theta`` (n, k) on the flat torus T^k (k = 1: the circle); the mean of a weighted set
  of angles is the circular mean per axis (atan2 of the weighted sines and cosines), because a Euclidean
  average of angles (or of points on the circle) collapses toward the centre;
- ``geodesic``: shortest paths on a symmetric kNN graph of the data, computed once, then embedded by classical
  MDS (Isomap) so a barycentre costs O(n k) instead of O(n^2);
- ``precomputed``: a user distance matrix (validated: finite, symmetric, non-negative, zero diagonal),
  embedded by classical MDS the same way.

Everything here is the (reconstructed, see README) definition of the paper's coherence:

    f_j   = sum_i A_ij x_i / sum_i A_ij                    (barycentric map, intrinsic mean on curved spaces)
    V^col_j = sum_i A_ij d(x_i, f_j)^2 / sum_i A_ij        (column Fréchet variance)
    g_i   = sum_j A_ij f_j / sum_j A_ij
    V^row_i = sum_j A_ij d(f_j, g_i)^2 / sum_j A_ij        (row Fréchet variance)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path
from sklearn.neighbors import kneighbors_graph

__all__ = [
    "CoherenceReport",
    "Geometry",
    "check_codes",
    "check_distances",
    "coherence_report",
    "is_coherent",
]

EPS = 1e-12
#: Largest n for which an (n, n) distance structure is built (float64: 8 n^2 bytes, ~0.8 GB at 10,000).
MAX_DENSE_N = 10_000


def check_codes(A, *, rectify: bool = False, name: str = "codes") -> np.ndarray:
    """Validate a sample x feature code matrix: 2-D, finite, non-negative (or clipped at 0 when ``rectify``)."""
    A = np.asarray(A)
    if A.dtype == object or not np.issubdtype(A.dtype, np.number) or np.issubdtype(A.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real numeric array; got dtype {A.dtype}")
    A = A.astype(np.float64)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (samples, features) matrix; got shape {A.shape}")
    if A.shape[0] < 2 or A.shape[1] < 1:
        raise ValueError(f"{name} needs at least 2 samples and 1 feature; got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contain NaN or inf")
    if A.min() < 0:
        if not rectify:
            raise ValueError(
                f"{name} have negative entries (min {A.min():.3g}); coherence is defined for non-negative "
                "activations: pass rectify=True (--rectify) to clip them at 0"
            )
        A = np.maximum(A, 0.0)
    return A


def check_distances(D, n: int | None = None) -> np.ndarray:
    """Validate a distance matrix: square, finite, symmetric, non-negative, zero diagonal."""
    D = np.asarray(D, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"a distance matrix must be square; got shape {D.shape}")
    if n is not None and D.shape[0] != n:
        raise ValueError(f"distance matrix is {D.shape[0]} x {D.shape[0]} but there are {n} samples")
    if not np.all(np.isfinite(D)):
        raise ValueError("distance matrix contains NaN or inf (a disconnected graph?)")
    if D.min() < 0:
        raise ValueError(f"distance matrix has negative entries (min {D.min():.3g})")
    scale = max(float(np.abs(D).max()), 1.0)
    if not np.allclose(D, D.T, atol=1e-8 * scale, rtol=0):
        raise ValueError("distance matrix is not symmetric")
    if np.abs(np.diag(D)).max() > 1e-8 * scale:
        raise ValueError("distance matrix has a non-zero diagonal")
    return D


def _classical_mds(D: np.ndarray, dim: int) -> np.ndarray:
    """Coordinates (n, dim) whose Euclidean distances best match ``D`` (Torgerson scaling)."""
    n = D.shape[0]
    J = np.eye(n) - 1.0 / n  # centring matrix
    B = -0.5 * J @ (D**2) @ J
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:dim]
    return vecs[:, order] * np.sqrt(np.maximum(vals[order], 0.0))


def _wrap(delta):
    """Angle difference wrapped into [-pi, pi)."""
    return (delta + np.pi) % (2 * np.pi) - np.pi


@dataclass
class Geometry:
    """Where the samples live. Build with :meth:`euclidean`, :meth:`circular`, :meth:`geodesic` or
    :meth:`precomputed`; ``coords`` is (n, k): coordinates, or angles for ``circular``."""

    kind: str
    coords: np.ndarray  # (n, k)

    # ---- constructors -------------------------------------------------------------------------------------
    @classmethod
    def euclidean(cls, x) -> Geometry:
        x = np.asarray(x, dtype=np.float64)
        x = x[:, None] if x.ndim == 1 else x
        if x.ndim != 2 or x.shape[0] < 2 or not np.all(np.isfinite(x)):
            raise ValueError(f"positions must be a finite (n, k) array with n >= 2; got shape {x.shape}")
        return cls("euclidean", x)

    @classmethod
    def circular(cls, theta) -> Geometry:
        t = np.asarray(theta, dtype=np.float64)
        t = t[:, None] if t.ndim == 1 else t
        if t.ndim != 2 or t.shape[0] < 2 or not np.all(np.isfinite(t)):
            raise ValueError(f"angles must be a finite (n,) or (n, k) array with n >= 2; got shape {t.shape}")
        return cls("circular", np.mod(t, 2 * np.pi))

    @classmethod
    def precomputed(cls, D, dim: int = 3) -> Geometry:
        D = check_distances(D)
        if D.shape[0] > MAX_DENSE_N:
            raise ValueError(f"{D.shape[0]} samples exceed the {MAX_DENSE_N} a dense distance matrix allows")
        return cls("precomputed", _classical_mds(D, dim))

    @classmethod
    def geodesic(cls, x, n_neighbors: int = 10, dim: int = 3, connect: bool = False) -> Geometry:
        """Shortest-path distances on the symmetric kNN graph of ``x`` (Isomap), embedded in ``dim`` dims.
        A disconnected graph is an error unless ``connect``: then the edges of the Euclidean minimum spanning
        tree are added (the fewest, shortest edges that join the components)."""
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        if x.ndim != 2 or not np.all(np.isfinite(x)):
            raise ValueError(f"data must be a finite (n, d) array; got shape {x.shape}")
        if n > MAX_DENSE_N:
            raise ValueError(f"{n} samples exceed the {MAX_DENSE_N} a geodesic distance matrix allows")
        if not 1 <= n_neighbors < n:
            raise ValueError(f"n_neighbors must be in [1, n); got {n_neighbors} for n = {n}")
        G = kneighbors_graph(x, n_neighbors, mode="distance")
        G = G.maximum(G.T)
        n_comp, _ = connected_components(G, directed=False)
        if n_comp > 1 and connect:
            from scipy.sparse.csgraph import minimum_spanning_tree
            from scipy.spatial.distance import cdist

            mst = minimum_spanning_tree(cdist(x, x))  # (n, n) sparse, n - 1 edges
            G = G.maximum(mst.maximum(mst.T))
            n_comp = 1
        if n_comp > 1:
            raise ValueError(f"the {n_neighbors}-NN graph has {n_comp} components; raise n_neighbors")
        D = shortest_path(G, directed=False)
        return cls("geodesic", _classical_mds(D, dim))

    # ---- metric and means -----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.coords.shape[0]

    def distances(self, P, Q) -> np.ndarray:
        """Distances (len(P), len(Q)) between points given in this geometry's coordinates."""
        P, Q = np.asarray(P, dtype=np.float64), np.asarray(Q, dtype=np.float64)
        diff = P[:, None, :] - Q[None, :, :]
        if self.kind == "circular":
            diff = _wrap(diff)
        return np.sqrt((diff**2).sum(-1))

    def weighted_means(self, W: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Fréchet means (intrinsic on the torus) of ``points`` (p, k) with weight columns ``W`` (p, q)."""
        mass = W.sum(0)[:, None] + EPS  # (q, 1)
        if self.kind == "circular":
            s = W.T @ np.sin(points) / mass  # (q, k)
            c = W.T @ np.cos(points) / mass
            return np.mod(np.arctan2(s, c), 2 * np.pi)
        return W.T @ points / mass

    def feature_positions(self, A: np.ndarray) -> np.ndarray:
        """Barycentric map f_j (m, k); dead features (no mass) get NaN."""
        f = self.weighted_means(A, self.coords)
        f[A.sum(0) <= 0] = np.nan
        return f


@dataclass
class CoherenceReport:
    """Every term of coherence for one code matrix (see module docstring)."""

    feature_positions: np.ndarray  # (m, k); NaN for dead features
    column_variance: np.ndarray  # (m,) V^col_j; NaN for dead features
    row_variance: np.ndarray  # (n,) V^row_i; NaN for uncovered samples
    column_radius: np.ndarray  # (m,) max distance from f_j to a sample in its support
    row_radius: np.ndarray  # (n,) max distance from g_i to a feature in its support
    dead_features: np.ndarray  # (m,) bool: never active (a coverage failure, not an error)
    uncovered_samples: np.ndarray  # (n,) bool: no active feature
    total_variance: float  # Fréchet variance of all samples, uniform weights
    score: float  # 1 - (mean V^col + mean V^row) / (2 * total variance), over live features / covered samples

    @property
    def sample_coverage(self) -> float:
        return float(1.0 - self.uncovered_samples.mean())

    @property
    def feature_coverage(self) -> float:
        return float(1.0 - self.dead_features.mean())

    def summary(self) -> dict[str, float]:
        return {
            "score": self.score,
            "mean_column_variance": float(np.nanmean(self.column_variance)) if self.feature_coverage else np.nan,
            "mean_row_variance": float(np.nanmean(self.row_variance)) if self.sample_coverage else np.nan,
            "max_column_radius": float(np.nanmax(self.column_radius)) if self.feature_coverage else np.nan,
            "max_row_radius": float(np.nanmax(self.row_radius)) if self.sample_coverage else np.nan,
            "sample_coverage": self.sample_coverage,
            "feature_coverage": self.feature_coverage,
            "dead_features": int(self.dead_features.sum()),
            "uncovered_samples": int(self.uncovered_samples.sum()),
            "total_variance": self.total_variance,
        }


def coherence_report(A, geometry: Geometry, *, rectify: bool = False) -> CoherenceReport:
    """Measure coherence of codes ``A`` (n, m) on ``geometry`` (n samples). O(n m k) time and memory."""
    A = check_codes(A, rectify=rectify)
    n, m = A.shape
    if geometry.n != n:
        raise ValueError(f"codes have {n} samples but the geometry has {geometry.n}")
    if n * m > 5e8:
        raise ValueError(f"codes of shape {A.shape} need {8 * n * m / 1e9:.1f} GB per temporary; too large")
    x = geometry.coords  # (n, k)
    dead = A.sum(0) <= 0  # (m,)
    uncovered = A.sum(1) <= 0  # (n,)
    f = geometry.feature_positions(A)  # (m, k)
    live = ~dead
    col_var = np.full(m, np.nan)
    col_rad = np.full(m, np.nan)
    if live.any():
        d_if = geometry.distances(x, f[live])  # (n, m_live)
        Al = A[:, live]
        col_var[live] = (Al * d_if**2).sum(0) / Al.sum(0)
        col_rad[live] = np.where(Al > 0, d_if, 0.0).max(0)
    row_var = np.full(n, np.nan)
    row_rad = np.full(n, np.nan)
    cov = ~uncovered
    if cov.any() and live.any():
        Ar = A[cov][:, live]  # (n_cov, m_live)
        g = geometry.weighted_means(Ar.T, f[live])  # (n_cov, k)
        d_gf = geometry.distances(g, f[live])  # (n_cov, m_live)
        row_var[cov] = (Ar * d_gf**2).sum(1) / Ar.sum(1)
        row_rad[cov] = np.where(Ar > 0, d_gf, 0.0).max(1)
    centre = geometry.weighted_means(np.ones((n, 1)), x)  # (1, k)
    total = float((geometry.distances(x, centre)[:, 0] ** 2).mean())
    if live.any() and cov.any():
        score = 1.0 - (np.nanmean(col_var) + np.nanmean(row_var)) / (2 * max(total, EPS))
    else:
        score = float("nan")
    return CoherenceReport(f, col_var, row_var, col_rad, row_rad, dead, uncovered, total, float(score))


def is_coherent(A, geometry: Geometry, r_col: float, r_row: float | None = None, *, rectify: bool = False) -> bool:
    """Whether ``A`` is coherent at radii (r_col, r_row): every column's support lies within ``r_col`` of its
    barycentre, every row's active features within ``r_row`` of theirs (when given), no dead feature and no
    uncovered sample (the two coverage conditions)."""
    if not (np.isfinite(r_col) and r_col >= 0) or (r_row is not None and not (np.isfinite(r_row) and r_row >= 0)):
        raise ValueError("radii must be finite and non-negative")
    rep = coherence_report(A, geometry, rectify=rectify)
    if rep.dead_features.any() or rep.uncovered_samples.any():
        return False
    ok = bool(np.all(rep.column_radius <= r_col + 1e-12))
    if r_row is not None:
        ok &= bool(np.all(rep.row_radius <= r_row + 1e-12))
    return ok


def knn_adjacency(x, n_neighbors: int = 10) -> csr_matrix:
    """Symmetric kNN adjacency (n, n) used to count connected support components on a general geometry."""
    G = kneighbors_graph(np.asarray(x, dtype=np.float64), n_neighbors, mode="connectivity")
    return G.maximum(G.T).tocsr()
