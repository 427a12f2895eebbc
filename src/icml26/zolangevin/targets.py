"""Targets pi ∝ exp(-f) with known ground truth, and the query-counting black box around f.

Every built-in target exposes the potential ``f`` (the only thing a zeroth-order sampler may query), its
exact gradient (for the first-order oracles ULA and MALA), an exact sampler, the true per-dimension
mean and variance, and a mode assignment with the true mode weights. Arrays are float64 numpy of shape
``(n, d)``; potentials return shape ``(n,)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Banana", "BlackBox", "CallableTarget", "DoubleWell", "GaussianMixture", "make_target"]


class BlackBox:
    """Counts and validates every query of a batched black-box function.

    Parameters
    ----------
    func : callable
        Maps an array of shape ``(m, d)`` to shape ``(m,)`` (scalar output, e.g. a potential) or to
        ``(m, *out_shape)`` when ``out_shape`` is given (a forward model).
    dim : int
        Input dimension ``d``.
    out_shape : tuple of int, optional
        Shape of one output for vector-valued functions.
    name : str
        Used in error messages.

    Attributes
    ----------
    n_queries : int
        Number of points evaluated so far (each row of each batch counts once).
    """

    def __init__(self, func: Callable, dim: int, out_shape: tuple[int, ...] = (), name: str = "f"):
        if not callable(func):
            raise TypeError(f"{name} must be callable, got {type(func).__name__}")
        if int(dim) < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.func, self.dim, self.out_shape, self.name = func, int(dim), tuple(out_shape), name
        self.n_queries = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"{self.name}: queries must have shape (m, {self.dim}), got {x.shape}")
        first = self.n_queries
        try:
            out = self.func(x)
        except Exception as exc:  # a forward model that cannot take a batch fails here
            raise ValueError(
                f"{self.name} failed on a batch of {x.shape[0]} queries of shape {x.shape} "
                f"(queries #{first}..#{first + x.shape[0] - 1}); it must accept a batch (m, {self.dim}): {exc}"
            ) from exc
        out = np.asarray(out, dtype=np.float64)
        expected = (x.shape[0], *self.out_shape)
        if out.shape != expected:
            raise ValueError(
                f"{self.name} returned shape {out.shape} for a batch of shape {x.shape}; expected {expected} "
                f"(queries #{first}..#{first + x.shape[0] - 1})"
            )
        bad = ~np.isfinite(out.reshape(x.shape[0], -1)).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{self.name} returned a non-finite value (NaN or inf) at query #{first + i} "
                f"(row {i} of the batch, x[:3]={np.round(x[i, :3], 4).tolist()})"
            )
        self.n_queries += x.shape[0]
        return out


def _logsumexp(a: np.ndarray) -> np.ndarray:  # over axis 1; faster than scipy's for small K
    m = a.max(1, keepdims=True)
    return (m + np.log(np.exp(a - m).sum(1, keepdims=True)))[:, 0]


class _Target:
    """Common interface: ``potential``, ``grad``, ``score``, ``sample``, ``mean``, ``var``, modes."""

    dim: int
    mean: np.ndarray
    var: np.ndarray
    mode_weights: np.ndarray

    def potential(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def grad(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, x: np.ndarray) -> np.ndarray:
        """∇ log pi(x) = -∇f(x), shape (n, d)."""
        return -self.grad(x)

    def mode_probabilities(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def black_box(self) -> BlackBox:
        """A fresh query-counting black box around the potential."""
        return BlackBox(self.potential, self.dim, name=f"{type(self).__name__}.potential")


@dataclass
class GaussianMixture(_Target):
    """pi(x) = Σ_k w_k N(x; m_k, s_k² I).

    Parameters
    ----------
    means : array of shape (K, d)
    weights : array of shape (K,), positive, normalised on construction
    scales : array of shape (K,), component standard deviations
    """

    means: np.ndarray
    weights: np.ndarray
    scales: np.ndarray

    def __post_init__(self):
        self.means = np.atleast_2d(np.asarray(self.means, dtype=np.float64))
        k, self.dim = self.means.shape
        self.weights = np.broadcast_to(np.asarray(self.weights, dtype=np.float64), (k,)).copy()
        self.scales = np.broadcast_to(np.asarray(self.scales, dtype=np.float64), (k,)).copy()
        if (self.weights <= 0).any() or (self.scales <= 0).any():
            raise ValueError("mixture weights and scales must be positive")
        self.weights /= self.weights.sum()
        w = self.weights[:, None]
        self.mean = (w * self.means).sum(0)
        second = (w * (self.means**2 + self.scales[:, None] ** 2)).sum(0)
        self.var = second - self.mean**2
        self.mode_weights = self.weights

    @classmethod
    def two_modes(cls, dim: int, separation: float = 2.5, weights=(0.5, 0.5)) -> GaussianMixture:
        """Modes at ±separation·e_1 with unit covariance (the notes' prototype target)."""
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        means = np.zeros((2, dim))
        means[0, 0], means[1, 0] = -separation, separation
        return cls(means, np.asarray(weights), np.ones(2))

    def _log_components(self, x):  # (n, K)
        # ‖x - m_k‖² = ‖x‖² - 2 x·m_k + ‖m_k‖²   (n, K)
        sq = np.maximum((x**2).sum(1)[:, None] - 2 * x @ self.means.T + (self.means**2).sum(1)[None], 0.0)
        s2 = self.scales**2
        return np.log(self.weights) - 0.5 * sq / s2 - 0.5 * self.dim * np.log(2 * np.pi * s2)

    def potential(self, x):
        return -_logsumexp(self._log_components(np.asarray(x, dtype=np.float64)))

    def mode_probabilities(self, x):
        """Responsibilities p(k | x), shape (n, K)."""
        a = self._log_components(np.asarray(x, dtype=np.float64))
        return np.exp(a - _logsumexp(a)[:, None])

    def grad(self, x):
        x = np.asarray(x, dtype=np.float64)
        r = self.mode_probabilities(x)  # (n, K)
        # ∇f = Σ_k r_k (x - m_k) / s_k²
        a = r / self.scales**2  # (n, K)
        return a.sum(1, keepdims=True) * x - a @ self.means

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        k = rng.choice(len(self.weights), size=n, p=self.weights)
        return self.means[k] + self.scales[k, None] * rng.standard_normal((n, self.dim))


@dataclass
class Banana(_Target):
    """Twisted Gaussian: x_1 ~ N(0, s²), x_2 | x_1 ~ N(b (x_1² - s²), 1), x_j ~ N(0, 1) for j > 2.

    f(x) = x_1²/(2 s²) + (x_2 - b(x_1² - s²))²/2 + Σ_{j>2} x_j²/2 — not log-concave for b > 0.
    """

    dim: int = 2
    curvature: float = 0.5
    scale: float = 2.0

    def __post_init__(self):
        if self.dim < 2:
            raise ValueError("the banana target needs dim >= 2")
        s2, b = self.scale**2, self.curvature
        self.mean = np.zeros(self.dim)
        self.var = np.ones(self.dim)
        self.var[0] = s2
        self.var[1] = 1.0 + b**2 * 2 * s2**2  # Var(b(x1² - s²)) = b² · 2 s⁴
        self.mode_weights = np.array([1.0])

    def potential(self, x):
        x = np.asarray(x, dtype=np.float64)
        t = x[:, 1] - self.curvature * (x[:, 0] ** 2 - self.scale**2)
        return x[:, 0] ** 2 / (2 * self.scale**2) + 0.5 * t**2 + 0.5 * (x[:, 2:] ** 2).sum(1)

    def grad(self, x):
        x = np.asarray(x, dtype=np.float64)
        t = x[:, 1] - self.curvature * (x[:, 0] ** 2 - self.scale**2)
        g = x.copy()
        g[:, 0] = x[:, 0] / self.scale**2 - 2 * self.curvature * x[:, 0] * t
        g[:, 1] = t
        return g

    def mode_probabilities(self, x):
        return np.ones((len(x), 1))

    def sample(self, n, rng):
        x = rng.standard_normal((n, self.dim))
        x[:, 0] *= self.scale
        x[:, 1] += self.curvature * (x[:, 0] ** 2 - self.scale**2)
        return x


@dataclass
class DoubleWell(_Target):
    """f(x) = barrier · (x_1² - 1)² + tilt · x_1 + Σ_{j>1} x_j²/2: two modes at x_1 ≈ ±1.

    The x_1 marginal is computed by quadrature on a fine grid (exact moments, weights and sampler).
    """

    dim: int = 2
    barrier: float = 1.0
    tilt: float = 0.0

    def __post_init__(self):
        if self.dim < 1:
            raise ValueError(f"dim must be >= 1, got {self.dim}")
        if self.barrier <= 0:
            raise ValueError("barrier must be positive")
        grid = np.linspace(-4.0, 4.0, 40001)
        logp = -(self.barrier * (grid**2 - 1) ** 2 + self.tilt * grid)
        p = np.exp(logp - logp.max())
        p /= np.trapezoid(p, grid)
        self._grid, cdf = grid, np.cumsum(p) * (grid[1] - grid[0])
        self._cdf = cdf / cdf[-1]
        m1 = np.trapezoid(grid * p, grid)
        self.mean = np.zeros(self.dim)
        self.var = np.ones(self.dim)
        self.mean[0], self.var[0] = m1, np.trapezoid((grid - m1) ** 2 * p, grid)
        left = np.trapezoid(np.where(grid < 0, p, 0.0), grid)
        self.mode_weights = np.array([left, 1 - left])

    def potential(self, x):
        x = np.asarray(x, dtype=np.float64)
        return self.barrier * (x[:, 0] ** 2 - 1) ** 2 + self.tilt * x[:, 0] + 0.5 * (x[:, 1:] ** 2).sum(1)

    def grad(self, x):
        x = np.asarray(x, dtype=np.float64)
        g = x.copy()
        g[:, 0] = 4 * self.barrier * x[:, 0] * (x[:, 0] ** 2 - 1) + self.tilt
        return g

    def mode_probabilities(self, x):
        right = (np.asarray(x)[:, 0] >= 0).astype(np.float64)
        return np.stack([1 - right, right], axis=1)

    def sample(self, n, rng):
        x = rng.standard_normal((n, self.dim))
        x[:, 0] = np.interp(rng.uniform(size=n), self._cdf, self._grid)
        return x


class CallableTarget(_Target):
    """A user target on (n, d) -> (n,), optionally with its gradient; no ground truth.

    By default ``func`` is the potential f of pi ∝ exp(-f) (the paper's convention). Pass
    ``log_density=True`` when it returns log pi instead, as emcee's ``log_prob_fn`` and blackjax's
    ``logdensity_fn`` do; ``grad`` then is the gradient of log pi. Either way :meth:`potential` returns f.
    """

    def __init__(self, func: Callable, dim: int, grad: Callable | None = None, *, log_density: bool = False):
        if not callable(func):
            raise TypeError("the target function must be callable")
        if grad is not None and not callable(grad):
            raise TypeError("grad must be callable or None")
        self.dim, self._f, self._grad, self.log_density = int(dim), func, grad, bool(log_density)
        if self.dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.mean = self.var = self.mode_weights = None

    def potential(self, x):
        value = np.asarray(self._f(np.asarray(x, dtype=np.float64)), dtype=np.float64)
        return -value if self.log_density else value

    def grad(self, x):
        if self._grad is None:
            raise ValueError("this target has no gradient; use a zeroth-order sampler")
        g = np.asarray(self._grad(np.asarray(x, dtype=np.float64)), dtype=np.float64)
        return -g if self.log_density else g

    def mode_probabilities(self, x):
        raise ValueError("a user target has no known modes")

    def sample(self, n, rng):
        raise ValueError("a user target has no exact sampler")


#: largest built-in target dimension (chains x directions x d arrays are allocated per step)
MAX_DIM = 10_000


def make_target(spec: str) -> _Target:
    """Parse ``'gmm:d=50'``, ``'gmm:d=10,sep=1.5,w=0.3'``, ``'banana:d=2'``, ``'double-well:d=5,tilt=0.2'``."""
    name, _, rest = spec.partition(":")
    opts: dict[str, float] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"target option {item!r} must look like key=value")
        try:
            opts[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"target option {key!r} must be a number, got {value!r}") from None
        if not np.isfinite(opts[key.strip()]):
            raise ValueError(f"target option {key!r} must be finite, got {value!r}")
    d_value = opts.pop("d", 2)
    if d_value != int(d_value) or not 1 <= d_value <= MAX_DIM:
        # int() would silently turn d=2.5 into 2
        raise ValueError(f"target dimension d must be an integer in [1, {MAX_DIM:,}], got {d_value:g}")
    d = int(d_value)
    known = {"gmm": {"sep", "w"}, "banana": {"b", "s"}, "double-well": {"barrier", "tilt"}}
    if name not in known:
        raise ValueError(f"unknown target {name!r}; choose from {sorted(known)}")
    extra = set(opts) - known[name]
    if extra:
        raise ValueError(f"unknown option(s) {sorted(extra)} for target {name!r}; allowed: d, {sorted(known[name])}")
    if name == "gmm":
        w = opts.get("w", 0.5)
        if not 0 < w < 1:
            raise ValueError(f"gmm weight w must be in (0, 1), got {w}")
        return GaussianMixture.two_modes(d, opts.get("sep", 2.5), (w, 1 - w))
    if name == "banana":
        return Banana(d, opts.get("b", 0.5), opts.get("s", 2.0))
    return DoubleWell(d, opts.get("barrier", 1.0), opts.get("tilt", 0.0))
