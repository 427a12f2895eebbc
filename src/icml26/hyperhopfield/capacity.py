"""Capacity of associative memories at matched dimension and matched *intrinsic* query noise.

A space (hyperbolic ball, Euclidean ball, sphere) supplies: patterns drawn uniformly within "max norm" ``R``
(hyperbolic ball of radius ``R`` in H^d; Euclidean ball of radius ``R`` in R^d; the sphere of radius ``R``,
intrinsic dimension d, in R^{d+1}), queries at intrinsic (geodesic) distance exactly ``rho`` from a stored
pattern in a uniformly random direction, its geodesic distance, and its memory.

Retrieval succeeds when the final state is closer to the target than to any other stored pattern *and*
within ``rho / 2`` of it (the noise was at least halved). The capacity of a memory at inverse temperature
``beta`` is found in two stages: the largest ``P`` on a doubling grid with a success rate ``>= 1 - eps`` at ``P``
and every smaller grid value, then a bisection on ``log2 P`` between that value and the next grid value (where
retrieval failed) down to ``resolution`` (default 1/8: capacities are resolved to a factor 2^(1/8) ~ 1.09, so
a log2 ratio of 0.5 spans four steps). The reported capacity is the best over a ``beta`` grid (each memory
tuned alike).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.hyperhopfield import lorentz as L
from icml26.hyperhopfield.memory import EuclideanMemory, HyperbolicMemory, SphereMemory

SPACES = ("hyperbolic", "euclidean", "sphere")


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    u = rng.standard_normal((n, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def sample_hyperbolic_ball(n: int, d: int, R: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` points uniform (Riemannian volume) in the hyperbolic ball of radius ``R`` of H^d -> (n, d+1).

    The radial density is proportional to ``sinh(r)^(d-1)``; sampled by inverse CDF on a fine grid."""
    L.check_radius(R)
    r_grid = np.linspace(0.0, R, 4097)
    # log density, shifted by its max for stability; trapezoid CDF
    logf = (d - 1) * np.log(np.maximum(np.sinh(r_grid), 1e-300)) if d > 1 else np.zeros_like(r_grid)
    f = np.exp(logf - logf.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(r_grid))])
    r = np.interp(rng.random(n) * cdf[-1], cdf, r_grid)
    return L.from_polar(r, _unit(rng, n, d))


def sample_euclidean_ball(n: int, d: int, R: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` points uniform in the Euclidean ball of radius ``R`` in R^d -> (n, d)."""
    return _unit(rng, n, d) * (R * rng.random(n) ** (1.0 / d))[:, None]


def sample_sphere(n: int, d: int, R: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` points uniform on the sphere of radius ``R`` and intrinsic dimension ``d`` -> (n, d+1)."""
    return R * _unit(rng, n, d + 1)


@dataclass(frozen=True)
class Space:
    """One pattern geometry: sampling, intrinsic query noise, geodesic distance, memory."""

    name: str
    d: int
    R: float

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        fn = {"hyperbolic": sample_hyperbolic_ball, "euclidean": sample_euclidean_ball, "sphere": sample_sphere}
        return fn[self.name](n, self.d, self.R, rng)

    def perturb(self, x: np.ndarray, rho: float, rng: np.random.Generator) -> np.ndarray:
        """Points at geodesic distance exactly ``rho`` from each row of ``x``, in random directions."""
        if self.name == "hyperbolic":
            return L.expmap(x, L.random_tangent(x, rho, rng))
        if self.name == "euclidean":
            return x + rho * _unit(rng, len(x), self.d)
        # sphere: rotate by angle rho / R in a random tangent direction
        u = x / self.R
        t = rng.standard_normal(x.shape)
        t -= np.sum(t * u, axis=1, keepdims=True) * u
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        a = rho / self.R
        return self.R * (np.cos(a) * u + np.sin(a) * t)

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Geodesic distances (Q, P)."""
        if self.name == "hyperbolic":
            return L.pairwise_dist(A, B)
        if self.name == "euclidean":
            sq = np.sum(A**2, 1)[:, None] + np.sum(B**2, 1)[None, :] - 2 * A @ B.T
            return np.sqrt(np.maximum(sq, 0.0))
        c = np.clip((A @ B.T) / self.R**2, -1.0, 1.0)
        return self.R * np.arccos(c)

    def memory(self, patterns: np.ndarray, beta: float):
        if self.name == "hyperbolic":
            return HyperbolicMemory(patterns, beta)
        if self.name == "euclidean":
            return EuclideanMemory(patterns, beta)
        return SphereMemory(patterns, beta)


def make_space(name: str, d: int, R: float) -> Space:
    if name not in SPACES:
        raise ValueError(f"unknown space {name!r}; choose from {', '.join(SPACES)}")
    if int(d) < 1:
        raise ValueError(f"dimension must be >= 1; got {d}")
    R = float(R)
    if not np.isfinite(R) or R <= 0:
        raise ValueError(f"radius R must be a finite positive number; got {R}")
    if name == "hyperbolic":
        L.check_radius(R)
    return Space(name, int(d), R)


def retrieval_success(space: Space, X: np.ndarray, out: np.ndarray, target: np.ndarray, rho: float) -> np.ndarray:
    """Per query: nearest stored pattern of the final state is the target and it lies within ``rho / 2``."""
    D = space.pairwise(out, X)  # (Q, P)
    q = np.arange(len(out))
    return (np.argmin(D, axis=1) == target) & (D[q, target] < rho / 2)


@dataclass
class CapacityResult:
    capacity: int
    """Largest P with success >= 1 - eps at it and every smaller doubling-grid value, refined by bisection
    (best beta)."""
    best_beta: float
    censored: bool
    """True when the largest grid value still succeeded (the capacity is a lower bound)."""
    success: dict[float, list[float]]
    """Success rate per beta along ``grid`` (stopped after the first failure), then at the bisection's points."""
    grid: list[int]
    separation: float
    """Median nearest-neighbour geodesic distance between the stored patterns at the largest P tried."""


def estimate_capacity(
    space: Space,
    rho: float,
    *,
    betas: tuple[float, ...],
    p_max: int = 4096,
    n_queries: int = 400,
    n_draws: int = 40,
    eps: float = 0.01,
    n_updates: int = 2,
    resolution: float = 0.125,
    rng: np.random.Generator,
) -> CapacityResult:
    """Capacity of ``space``'s memory at intrinsic query noise ``rho`` (see the module docstring).

    For each tried P, ``n_draws`` fresh pattern sets share ``n_queries`` queries (a stored pattern chosen
    uniformly, moved by exactly ``rho``), so the success rate averages over pattern draws as well. ``resolution``
    is the bisection's final bracket width in log2 P (1 stops at the doubling grid).
    """
    rho = float(rho)
    if not np.isfinite(rho) or rho <= 0:
        raise ValueError(f"noise radius must be positive; got {rho}")
    if p_max < 1 or p_max > 2**20:
        raise ValueError(f"p_max must be in [1, 2^20]; got {p_max}")
    if n_queries * p_max > 2e8:
        raise ValueError(f"n_queries * p_max = {n_queries * p_max:.3g} (Q x P distance matrix) exceeds 2e8 entries")
    if not 0 < resolution <= 1:
        raise ValueError(f"resolution (log2 P) must be in (0, 1]; got {resolution}")
    betas = tuple(float(b) for b in betas)
    grid = [2**k for k in range(int(np.log2(p_max)) + 1)]
    draws = max(1, min(int(n_draws), n_queries))
    sep: list[np.ndarray] = []

    def rates(P: int, which: list[float]) -> dict[float, float]:
        """Success rate at P of each beta in ``which`` (the same pattern sets and queries for all of them)."""
        hits = dict.fromkeys(which, 0)
        for k in range(draws):  # fresh pattern sets: the rate is an average over patterns as well as queries
            X = space.sample(P, rng)
            nq = n_queries // draws + (k < n_queries % draws)
            target = rng.integers(0, P, nq)
            queries = space.perturb(X[target], rho, rng)
            for b in which:
                out = space.memory(X, b).retrieve(queries, n_updates=n_updates)
                hits[b] += int(retrieval_success(space, X, out, target, rho).sum())
        if P >= 2 and (not sep or P > len(sep[0])):
            sep[:] = [X]
        return {b: hits[b] / n_queries for b in which}

    alive = dict.fromkeys(betas, True)
    success: dict[float, list[float]] = {b: [] for b in betas}
    best = {b: 0 for b in betas}
    for P in grid:  # stage 1: doubling
        for b, r in rates(P, [b for b in betas if alive[b]]).items():
            success[b].append(r)
            if r >= 1 - eps:
                best[b] = P
            else:
                alive[b] = False
        if not any(alive.values()):
            break
    censored = any(alive.values())
    for b in betas:  # stage 2: bisection on log2 P between the last success and the first failure
        if alive[b] or best[b] == 0:
            continue
        lo, hi = np.log2(best[b]), np.log2(best[b]) + 1
        while hi - lo > resolution + 1e-9:
            mid = 0.5 * (lo + hi)
            P = round(2**mid)
            if P <= round(2**lo) or P >= round(2**hi):
                break  # the bracket holds no other integer
            r = rates(P, [b])[b]
            success[b].append(r)
            if r >= 1 - eps:
                lo, best[b] = mid, P
            else:
                hi = mid
    b_star = max(betas, key=lambda b: (best[b], -abs(np.log(b))))
    Xs = sep[0] if sep else space.sample(2, rng)
    D = space.pairwise(Xs, Xs)
    np.fill_diagonal(D, np.inf)
    return CapacityResult(best[b_star], b_star, censored, success, grid, float(np.median(D.min(axis=1))))


def float64_radius_limit(rho: float = 0.1, rel_tol: float = 0.01, d: int = 3, seed: int = 0) -> float:
    """Smallest radius (0.5 steps up to 40) at which a distance ``rho`` between two points near radius ``R``
    is computed with a median relative error above ``rel_tol`` in float64 (exp map then arccosh)."""
    rng = np.random.default_rng(seed)
    for R in np.arange(0.5, 40.01, 0.5):
        x = L.from_polar(np.full(64, R), _unit(rng, 64, d))
        y = L.expmap(x, L.random_tangent(x, rho, rng))
        err = np.median(np.abs(L.dist(x, y) - rho)) / rho
        if not err <= rel_tol:
            return float(R)
    return float("inf")
