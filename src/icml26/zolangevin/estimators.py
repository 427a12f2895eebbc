"""Zeroth-order gradient estimators of a black-box f, vectorised over chains, with exact query counts.

All estimators are called as ``g = est(f, x)`` with ``f`` a :class:`~icml26.zolangevin.targets.BlackBox`
(or any batched callable ``(m, d) -> (m,)``) and ``x`` of shape ``(n_chains, d)``; they return ``g`` of
shape ``(n_chains, d)`` and add the number of function evaluations **per chain** of that call to
``est.queries``. ``reset()`` clears the state between runs.

Notation (paper, Sec. 3 as summarised in the notes): the forward difference along ``u`` is
``Δ_u f(x) = (f(x + μ u) - f(x)) / μ``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Coordinatewise", "GaussianSmoothing", "VarianceReduced"]


def _batch_size(b: int | Callable[[int], int], t: int) -> int:
    value = int(b(t)) if callable(b) else int(b)
    if value < 1:
        raise ValueError(f"batch size must be >= 1, got {value} at step {t}")
    return value


def _check(mu: float) -> float:
    mu = float(mu)
    if not mu > 0:
        raise ValueError(f"smoothing radius mu must be positive, got {mu}")
    return mu


class GaussianSmoothing:
    """Batched Gaussian-smoothing estimator (the classical ZO estimator).

    ``g(x) = (1/b) Σ_{i=1..b} Δ_{u_i} f(x) u_i``,  ``u_i ~ N(0, I_d)``  — unbiased for ∇f_μ(x), the gradient
    of the Gaussian-smoothed f; variance ≈ (d + 1)/b · ‖∇f‖², so accuracy needs b ∝ d.

    Parameters
    ----------
    b : int or callable t -> int
        Directions per step (a callable gives a batch schedule).
    mu : float
        Smoothing radius.
    rng : numpy Generator
    Queries per chain and call: ``b + 1``.
    """

    def __init__(self, b: int | Callable[[int], int] = 4, mu: float = 1e-4, rng: np.random.Generator | None = None):
        if not callable(b):
            _batch_size(b, 0)
        self.b, self.mu = b, _check(mu)
        self.rng = rng if rng is not None else np.random.default_rng()
        self.reset()

    def reset(self) -> None:
        self.queries, self.t = 0, 0
        self.last_fx: np.ndarray | None = None

    def next_cost(self, d: int) -> int:
        """Queries per chain the next call will spend (``b + 1``)."""
        return _batch_size(self.b, self.t) + 1

    def __call__(self, f, x: np.ndarray) -> np.ndarray:
        n, d = x.shape
        b = _batch_size(self.b, self.t)
        u = self.rng.standard_normal((n, b, d))  # (n, b, d)
        fx = f(x)  # (n,)
        fu = f((x[:, None, :] + self.mu * u).reshape(n * b, d)).reshape(n, b)
        self.queries += b + 1
        self.t += 1
        self.last_fx = fx
        return np.einsum("nb,nbd->nd", (fu - fx[:, None]) / self.mu, u) / b


class Coordinatewise:
    """Coordinate-wise finite differences: ``g_j = (f(x + μ e_j) - f(x)) / μ`` (``d + 1`` queries per chain).

    With ``central=True``: ``(f(x + μ e_j) - f(x - μ e_j)) / (2μ)`` (``2d`` queries, O(μ²) bias).
    """

    def __init__(self, mu: float = 1e-5, central: bool = False):
        self.mu, self.central = _check(mu), bool(central)
        self.reset()

    def reset(self) -> None:
        self.queries, self.t = 0, 0
        self.last_fx: np.ndarray | None = None  # f(x) of the last call (forward differences only)

    def next_cost(self, d: int) -> int:
        """Queries per chain the next call will spend (``d + 1``, or ``2d`` for central differences)."""
        return 2 * d if self.central else d + 1

    def __call__(self, f, x: np.ndarray) -> np.ndarray:
        n, d = x.shape
        step = self.mu * np.eye(d)  # (d, d)
        plus = f((x[:, None, :] + step[None]).reshape(n * d, d)).reshape(n, d)
        self.t += 1
        if self.central:
            minus = f((x[:, None, :] - step[None]).reshape(n * d, d)).reshape(n, d)
            self.queries += 2 * d
            self.last_fx = None
            return (plus - minus) / (2 * self.mu)
        fx = f(x)
        self.queries += d + 1
        self.last_fx = fx
        return (plus - fx[:, None]) / self.mu


class VarianceReduced:
    """The paper's variance-reduced recursive (SPIDER/SARAH-type) ZO estimator.

    Every ``q`` steps (t mod q = 0) a large-batch refresh: coordinate-wise differences (``refresh="coordinate"``,
    d + 1 queries) or Gaussian smoothing with ``B`` directions (``refresh=B``). In between, a recursive
    correction with ``b`` fresh directions used at **both** consecutive points:

        g_t = g_{t-1} + (1/b) Σ_i [Δ_{u_i} f(x_t) - Δ_{u_i} f(x_{t-1})] u_i        (recursive update)

    Because the same u_i enter both differences, the correction's variance scales with ‖x_t - x_{t-1}‖²
    instead of ‖∇f‖²: a constant b suffices, the batch loses its dependence on d. f(x_{t-1}) is cached,
    so one correction costs ``2b + 1`` queries per chain.

    Parameters
    ----------
    b : int or callable t -> int
        Directions of the recursive correction.
    q : int
        Refresh period (epoch length). The recursion error grows with q·h·d, so q should shrink with d·h.
    refresh : "coordinate" or int
        Large-batch estimator used at refresh steps.
    mu : float
        Smoothing radius of the differences.
    rng : numpy Generator
    """

    def __init__(
        self,
        b: int | Callable[[int], int] = 4,
        q: int = 10,
        refresh: str | int = "coordinate",
        mu: float = 1e-4,
        rng: np.random.Generator | None = None,
    ):
        if not callable(b):
            _batch_size(b, 0)
        if int(q) < 1:
            raise ValueError(f"refresh period q must be >= 1, got {q}")
        self.b, self.q, self.mu, self.refresh = b, int(q), _check(mu), refresh
        self.rng = rng if rng is not None else np.random.default_rng()
        if refresh == "coordinate":
            self._big = Coordinatewise(mu=self.mu)
        elif isinstance(refresh, (int, np.integer)) and not isinstance(refresh, bool) and refresh >= 1:
            self._big = GaussianSmoothing(b=int(refresh), mu=self.mu, rng=self.rng)
        else:
            raise ValueError(f"refresh must be 'coordinate' or a positive batch size, got {refresh!r}")
        self.reset()

    def reset(self) -> None:
        self.queries, self.t = 0, 0
        self._big.reset()
        self._x_prev = self._g_prev = self._f_prev = None

    def next_cost(self, d: int) -> int:
        """Queries per chain the next call will spend: a refresh, or a ``2b + 1`` recursive correction."""
        if self.t % self.q == 0 or self._g_prev is None or self._x_prev.shape[1] != d:
            return self._big.next_cost(d) + (1 if isinstance(self._big, Coordinatewise) and self._big.central else 0)
        return 2 * _batch_size(self.b, self.t) + 1

    def __call__(self, f, x: np.ndarray) -> np.ndarray:
        n, d = x.shape
        if self.t % self.q == 0 or self._g_prev is None or self._x_prev.shape != x.shape:
            before = self._big.queries
            g = self._big(f, x)
            self.queries += self._big.queries - before
            fx = self._big.last_fx  # the refresh already evaluated f(x) (None for central differences)
        else:
            b = _batch_size(self.b, self.t)
            u = self.rng.standard_normal((n, b, d))  # (n, b, d): the SAME directions at x_t and x_{t-1}
            fx = f(x)  # (n,)
            pts = np.concatenate([x[:, None, :] + self.mu * u, self._x_prev[:, None, :] + self.mu * u], axis=1)
            fu = f(pts.reshape(n * 2 * b, d)).reshape(n, 2 * b)
            self.queries += 2 * b + 1
            delta_t = (fu[:, :b] - fx[:, None]) / self.mu  # Δ_u f(x_t)     (n, b)
            delta_prev = (fu[:, b:] - self._f_prev[:, None]) / self.mu  # Δ_u f(x_{t-1}) (n, b)
            g = self._g_prev + np.einsum("nb,nbd->nd", delta_t - delta_prev, u) / b
        if fx is None:
            fx = f(x)
            self.queries += 1
        self._x_prev, self._g_prev, self._f_prev = x.copy(), g, fx
        self.t += 1
        return g
