"""Associative memories: modern Hopfield = MMSE decoder, the Karcher-flow hyperbolic memory, baselines.

- :func:`mhn_update` — the modern Hopfield (dense associative memory) update
  ``xi <- X^T softmax(beta X xi - beta |x_mu|^2 / 2)`` (the bias term makes it exact for unequal norms).
- :func:`gaussian_posterior_mean` / :func:`poisson_posterior_mean` — the MMSE (posterior-mean) decoders under
  a uniform prior over the stored patterns, computed independently from the likelihoods. The paper's lemma:
  under ``xi = x + N(0, sigma^2 I)`` the MHN update with ``beta = 1 / sigma^2`` *is* the posterior mean.
- :class:`HyperbolicMemory` — patterns in the Lorentz model of H^d; weights ``p = softmax(-beta d_H(xi, x)^2/2)``
  (the Euclidean MHN with ``d_H`` in place of ``|xi - x|``); an update moves the state to the weighted
  Fréchet (Karcher) mean of the patterns, computed by Karcher flow ``m <- exp_m(sum_mu p_mu log_m x_mu)``.
  Energy ``E(xi) = -(1/beta) log sum_mu exp(-beta d_H(xi, x_mu)^2 / 2)``; the update is a
  majorise-minimise step of ``E`` (``log-sum-exp`` is convex), so ``E`` never increases.
- :class:`EuclideanMemory` (MHN on R^d), :class:`SphereMemory` (MHN on a sphere of radius R, re-normalised),
  :class:`ClassicalHopfield` (binary, Hebbian).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, softmax

from icml26.hyperhopfield import lorentz as L


def check_beta(beta: float) -> float:
    beta = float(beta)
    if not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta (inverse temperature) must be a finite positive number; got {beta}")
    return beta


def _as_2d(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{what} must be a non-empty 2-D array; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} contain NaN or inf")
    return a


def mhn_update(X: np.ndarray, xi: np.ndarray, beta: float, *, bias: bool = True) -> np.ndarray:
    """One modern Hopfield update. ``X`` (P, d) stored patterns, ``xi`` (Q, d) states -> (Q, d).

    ``bias=True`` adds ``-beta |x_mu|^2 / 2`` to the logits (needed for unequal pattern norms);
    ``bias=False`` is the textbook ``X^T softmax(beta X xi)``.
    """
    beta = check_beta(beta)
    X, xi = _as_2d(X, "patterns"), _as_2d(xi, "states")
    logits = beta * (xi @ X.T)  # (Q, P)
    if bias:
        logits -= 0.5 * beta * np.sum(X**2, axis=1)[None, :]
    return softmax(logits, axis=1) @ X  # (Q, d)


def gaussian_posterior_mean(X: np.ndarray, xi: np.ndarray, sigma: float) -> np.ndarray:
    """``E[x | xi]`` for ``x`` uniform over the rows of ``X`` and ``xi = x + N(0, sigma^2 I)``, from the
    Gaussian log-likelihoods ``-|xi - x_mu|^2 / (2 sigma^2)`` (no Hopfield algebra)."""
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be positive; got {sigma}")
    X, xi = _as_2d(X, "patterns"), _as_2d(xi, "observations")
    sq = np.sum((xi[:, None, :] - X[None, :, :]) ** 2, axis=-1)  # (Q, P), direct differences
    loglik = -sq / (2 * sigma**2)
    return np.exp(loglik - logsumexp(loglik, axis=1, keepdims=True)) @ X


def poisson_log_likelihood(F: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``sum_j r_j log f_j(s_mu) - f_j(s_mu)`` for rates ``F`` (P, N) and counts (Q, N) -> (Q, P)."""
    F = np.asarray(F, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if np.any(F < 0) or not np.all(np.isfinite(F)):
        raise ValueError("rates must be finite and non-negative")
    if np.any(counts < 0) or not np.all(np.isfinite(counts)):
        raise ValueError("spike counts must be finite and non-negative")
    logF = np.log(np.maximum(F, 1e-300))
    return counts @ logF.T - F.sum(axis=1)[None, :]


def poisson_posterior_mean(F: np.ndarray, counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Posterior mean of ``values`` (P, k) given Poisson counts (Q, N), uniform prior over the P stored
    states with rates ``F`` (P, N): a modern Hopfield update whose energy is the Poisson log-likelihood."""
    ll = poisson_log_likelihood(F, counts)  # (Q, P)
    return softmax(ll, axis=1) @ np.asarray(values, dtype=np.float64).reshape(len(F), -1)


def karcher_mean(
    X: np.ndarray, W: np.ndarray, m0: np.ndarray, *, iters: int = 50, tol: float = 1e-10
) -> tuple[np.ndarray, int]:
    """Weighted Fréchet means on H^d by Karcher flow, all queries at once.

    ``X`` (P, D) points, ``W`` (Q, P) rows of weights summing to 1, ``m0`` (Q, D) starting points.
    Iterates ``m <- exp_m(sum_mu W_mu log_m x_mu)`` (the Riemannian gradient step of
    ``sum_mu W_mu d(m, x_mu)^2 / 2`` with unit step) until the step's length is below ``tol`` or ``iters``.
    Returns the means (Q, D) and the iterations used.
    """
    m = m0.copy()
    for it in range(1, iters + 1):
        v = L.to_tangent(m, L.weighted_log_sum(m, X, W))  # (Q, D); tangent projection removes round-off
        m = L.expmap(m, v)
        step = np.sqrt(np.maximum(L.lorentz_inner(v, v), 0.0))
        if step.max(initial=0.0) < tol:
            return m, it
    return m, iters


class HyperbolicMemory:
    """Karcher-flow associative memory on H^d (Lorentz model, float64).

    Parameters
    ----------
    patterns : (P, d+1) points of the hyperboloid (validated; ``project=True`` projects points within reach).
    beta : inverse temperature of the weights ``softmax(-beta d^2 / 2)``.
    karcher_iters : inner Karcher-flow iterations per update (weighted Fréchet mean), stopped at ``tol``.
    """

    def __init__(self, patterns, beta: float = 1.0, *, karcher_iters: int = 20, tol: float = 1e-10, project=False):
        self.patterns = L.check_points(patterns, fix=project, what="patterns")
        if self.patterns.ndim != 2:
            raise ValueError(f"patterns must be a (P, d+1) array; got shape {self.patterns.shape}")
        self.beta = check_beta(beta)
        if int(karcher_iters) < 1:
            raise ValueError(f"karcher_iters must be >= 1; got {karcher_iters}")
        self.karcher_iters = int(karcher_iters)
        self.tol = float(tol)

    @property
    def dim(self) -> int:
        return self.patterns.shape[1] - 1

    def weights(self, xi: np.ndarray) -> np.ndarray:
        """``softmax_mu(-beta d(xi, x_mu)^2 / 2)`` -> (Q, P)."""
        D = L.pairwise_dist(xi, self.patterns)
        return softmax(-0.5 * self.beta * D**2, axis=1)

    def energy(self, xi: np.ndarray) -> np.ndarray:
        """``E(xi) = -(1/beta) log sum_mu exp(-beta d(xi, x_mu)^2 / 2)`` -> (Q,)."""
        xi = L.check_points(np.atleast_2d(xi), fix=True, what="states")
        D = L.pairwise_dist(xi, self.patterns)
        return -logsumexp(-0.5 * self.beta * D**2, axis=1) / self.beta

    def update(self, xi: np.ndarray) -> np.ndarray:
        """One update: the weighted Fréchet mean of the patterns with the weights at ``xi``."""
        m, _ = karcher_mean(self.patterns, self.weights(xi), xi, iters=self.karcher_iters, tol=self.tol)
        return m

    def retrieve(self, queries, n_updates: int = 2, *, project: bool = True) -> np.ndarray:
        """Run ``n_updates`` updates from ``queries`` (Q, d+1) (off-manifold queries are projected when
        within reach; ``project=False`` rejects them)."""
        xi = L.check_points(np.atleast_2d(queries), fix=project, what="queries")
        if xi.shape[1] != self.patterns.shape[1]:
            raise ValueError(f"queries have {xi.shape[1]} coordinates, patterns {self.patterns.shape[1]}")
        for _ in range(int(n_updates)):
            xi = self.update(xi)
        return xi


class EuclideanMemory:
    """Modern Hopfield network on R^d with the bias term (exact MMSE for unequal norms at beta = 1/sigma^2)."""

    def __init__(self, patterns, beta: float = 1.0, *, bias: bool = True):
        self.patterns = _as_2d(patterns, "patterns")
        self.beta = check_beta(beta)
        self.bias = bias

    def energy(self, xi: np.ndarray) -> np.ndarray:
        D2 = np.sum((np.atleast_2d(xi)[:, None, :] - self.patterns[None]) ** 2, axis=-1)
        return -logsumexp(-0.5 * self.beta * D2, axis=1) / self.beta

    def retrieve(self, queries, n_updates: int = 2) -> np.ndarray:
        xi = _as_2d(queries, "queries")
        for _ in range(int(n_updates)):
            xi = mhn_update(self.patterns, xi, self.beta, bias=self.bias)
        return xi


class SphereMemory:
    """Modern Hopfield network on the sphere of radius ``R`` in R^{d+1} (equal norms: no bias needed); each
    update is re-normalised onto the sphere."""

    def __init__(self, patterns, beta: float = 1.0):
        self.patterns = _as_2d(patterns, "patterns")
        norms = np.linalg.norm(self.patterns, axis=1)
        if np.ptp(norms) > 1e-9 * norms.max():
            raise ValueError("sphere patterns must all have the same norm")
        self.R = float(norms[0])
        self.beta = check_beta(beta)

    def retrieve(self, queries, n_updates: int = 2) -> np.ndarray:
        xi = _as_2d(queries, "queries")
        for _ in range(int(n_updates)):
            xi = mhn_update(self.patterns, xi, self.beta, bias=False)
            xi = self.R * xi / np.maximum(np.linalg.norm(xi, axis=1, keepdims=True), 1e-300)
        return xi


class ClassicalHopfield:
    """Binary (+-1) Hopfield network with Hebbian weights ``W = X^T X / N``, zero diagonal, synchronous
    sign updates (capacity ~ 0.138 N for random patterns)."""

    def __init__(self, patterns):
        X = _as_2d(patterns, "patterns")
        if not np.all(np.abs(X) == 1):
            raise ValueError("classical Hopfield patterns must be +-1")
        self.patterns = X
        N = X.shape[1]
        self.W = X.T @ X / N  # (N, N)
        np.fill_diagonal(self.W, 0.0)

    def energy(self, s: np.ndarray) -> np.ndarray:
        s = np.atleast_2d(s)
        return -0.5 * np.einsum("qi,ij,qj->q", s, self.W, s)

    def retrieve(self, queries, n_updates: int = 20) -> np.ndarray:
        s = _as_2d(queries, "queries")
        for _ in range(int(n_updates)):
            new = np.where(s @ self.W >= 0, 1.0, -1.0)
            if np.array_equal(new, s):
                break
            s = new
        return s
