"""Langevin samplers vectorised over chains: ULA and MALA (first-order oracles), ZO-LMC and VR-ZO-LMC.

All share one update (paper, Langevin step):

    x_{t+1} = x_t - h_t g_t + sqrt(2 h_t) ξ_t,    ξ_t ~ N(0, I_d)

with g_t = ∇f(x_t) (ULA), a batched Gaussian-smoothing estimate (ZO-LMC) or the variance-reduced
recursive estimate (VR-ZO-LMC). MALA adds a Metropolis–Hastings correction. Runs stop after ``n_steps``
or once the per-chain query budget is spent; every result reports its exact query count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .estimators import GaussianSmoothing, VarianceReduced
from .targets import BlackBox

__all__ = ["SAMPLERS", "SampleResult", "langevin", "mala", "run_sampler"]

SAMPLERS = ("ula", "mala", "zo", "vr-zo")


@dataclass
class SampleResult:
    """Output of a sampler run.

    Attributes
    ----------
    final : array of shape (n_chains, d)
        Last state of every chain.
    samples : array of shape (n_kept, n_chains, d)
        States kept after ``burn_in`` every ``thin`` steps (empty when ``thin=0``).
    queries : int
        Function (potential) evaluations per chain.
    grad_evals : int
        Exact-gradient evaluations per chain (0 for zeroth-order samplers).
    n_steps : int
    trace : list of (queries, grad_evals, array (n_chains, d))
        Snapshots at about ``n_snapshots`` evenly spaced query levels (for diagnostics vs queries).
    acceptance : float or None
        Mean MH acceptance rate (MALA only).
    """

    final: np.ndarray
    samples: np.ndarray
    queries: int
    grad_evals: int
    n_steps: int
    trace: list = field(default_factory=list)
    acceptance: float | None = None

    @property
    def cost(self) -> int:
        """Queries plus gradient evaluations per chain."""
        return self.queries + self.grad_evals

    def draws(self) -> np.ndarray:
        """The kept states as (chain, draw, dim), the layout of ArviZ, emcee's ``get_chain`` transposed, blackjax."""
        return np.ascontiguousarray(self.samples.transpose(1, 0, 2))

    def to_inference_data(self, var_name: str = "x"):
        """The kept states as an ``arviz.InferenceData`` (posterior group, dims chain x draw x dim)."""
        try:
            import arviz
        except ImportError as err:
            raise ImportError("to_inference_data needs arviz (pip install arviz); draws() gives the array") from err
        if self.samples.shape[0] == 0:
            raise ValueError("no draws were kept (thin=0 or burn_in >= n_steps)")
        return arviz.from_dict(posterior={var_name: self.draws()})


def _as_black_box(f, dim: int) -> BlackBox:
    if isinstance(f, BlackBox):
        return f
    if hasattr(f, "black_box"):
        return f.black_box()
    return BlackBox(f, dim)


def _step_size(step: float | Callable[[int], float], t: int) -> float:
    h = float(step(t)) if callable(step) else float(step)
    if not (h > 0 and np.isfinite(h)):
        raise ValueError(f"step size must be positive and finite, got {h} at step {t}")
    return h


def _check_dim(target, d: int) -> None:
    """A target that knows its dimension must match x0's (one clear line instead of a failed query)."""
    dim = getattr(target, "dim", None)
    if isinstance(dim, (int, np.integer)) and dim != d:
        raise ValueError(f"x0 has d = {d} coordinates but the target has dimension {dim}")


def _validate(x0, n_steps, query_budget, burn_in, thin) -> np.ndarray:
    x0 = np.array(x0, dtype=np.float64)
    if x0.ndim != 2 or 0 in x0.shape:
        raise ValueError(f"x0 must have shape (n_chains, d) with n_chains, d >= 1, got {x0.shape}")
    if not np.isfinite(x0).all():
        raise ValueError(f"x0 contains NaN or inf (first at chain {int(np.argwhere(~np.isfinite(x0))[0, 0])})")
    if n_steps is None and query_budget is None:
        raise ValueError("give n_steps or query_budget")
    if n_steps is not None and int(n_steps) < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    if query_budget is not None and not float(query_budget) > 0:
        raise ValueError(f"query_budget must be positive, got {query_budget}")
    if int(burn_in) < 0 or int(thin) < 0:
        raise ValueError("burn_in and thin must be >= 0")
    return x0


class _Recorder:
    def __init__(self, budget, n_steps, n_snapshots, burn_in, thin):
        self.budget, self.n_steps, self.n = budget, n_steps, max(int(n_snapshots), 0)
        self.burn_in, self.thin = int(burn_in), int(thin)
        self.trace, self.kept, self.next_level = [], [], 1

    def __call__(self, t, x, queries, grads):
        if self.thin and t >= self.burn_in and (t - self.burn_in) % self.thin == 0:
            self.kept.append(x.copy())
        if not self.n:
            return
        progress = (queries + grads) / self.budget if self.budget else t / self.n_steps
        while self.next_level <= self.n and progress >= self.next_level / self.n:
            self.trace.append((queries, grads, x.copy()))
            self.next_level += 1


def langevin(
    f,
    x0: np.ndarray,
    *,
    step: float | Callable[[int], float],
    grad: Callable | None = None,
    estimator=None,
    n_steps: int | None = None,
    query_budget: float | None = None,
    burn_in: int = 0,
    thin: int = 0,
    n_snapshots: int = 20,
    rng: np.random.Generator | None = None,
) -> SampleResult:
    """Unadjusted Langevin with an exact gradient (``grad``) or a zeroth-order ``estimator``.

    Parameters
    ----------
    f : BlackBox, target or callable (m, d) -> (m,)
        The potential (negative log density up to a constant); queried only through the estimator.
    x0 : array of shape (n_chains, d)
    step : float or callable t -> float
        Step size h_t > 0 (a callable gives a schedule).
    grad : callable (m, d) -> (m, d), optional
        Exact ∇f (ULA). Exactly one of ``grad`` and ``estimator`` must be given.
    estimator : GaussianSmoothing, Coordinatewise or VarianceReduced, optional
    n_steps, query_budget : int, float
        Stop after n_steps steps or once the per-chain cost (queries + gradient evaluations) reaches the budget.
    burn_in, thin : int
        Keep every ``thin``-th state after ``burn_in`` steps in ``samples`` (none when thin = 0).
    n_snapshots : int
        Snapshots of all chains in ``trace``.
    """
    x = _validate(x0, n_steps, query_budget, burn_in, thin)
    if (grad is None) == (estimator is None):
        raise ValueError("give exactly one of grad (ULA) and estimator (zeroth-order)")
    rng = rng if rng is not None else np.random.default_rng()
    n, d = x.shape
    _check_dim(f, d)
    bb = _as_black_box(f, d) if estimator is not None else None
    if estimator is not None:
        estimator.reset()
    rec = _Recorder(query_budget, n_steps, n_snapshots, burn_in, thin)
    t, grads = 0, 0
    while (n_steps is None or t < n_steps) and (query_budget is None or _cost(estimator, grads) < query_budget):
        if query_budget is not None:  # never overshoot: stop when the next step does not fit the budget
            need = _cost(estimator, grads) + _next_cost(estimator, d)
            if need > query_budget:
                if t == 0:
                    raise ValueError(
                        f"one step costs {_next_cost(estimator, d):,} queries per chain, more than the per-chain "
                        f"budget {query_budget:,.0f}; raise the budget or lower the batch size"
                    )
                break
        h = _step_size(step, t)
        if estimator is not None:
            g = estimator(bb, x)  # (n, d)
        else:
            g = np.asarray(grad(x), dtype=np.float64)
            if g.shape != x.shape or not np.isfinite(g).all():
                raise ValueError(f"grad returned shape {g.shape} or non-finite values at step {t}")
            grads += 1
        x = x - h * g + np.sqrt(2 * h) * rng.standard_normal((n, d))  # Langevin step
        t += 1
        _check_finite(x, t, h)
        rec(t, x, _cost(estimator, 0), grads)
    return SampleResult(
        final=x,
        samples=np.array(rec.kept).reshape(-1, n, d),
        queries=_cost(estimator, 0),
        grad_evals=grads,
        n_steps=t,
        trace=rec.trace,
    )


def _next_cost(estimator, d: int) -> int:
    """Queries (or gradient evaluations) per chain of the next step; 1 for an exact gradient."""
    if estimator is None:
        return 1
    return int(estimator.next_cost(d)) if hasattr(estimator, "next_cost") else 0


#: a chain this far out has diverged (targets here have O(1)-O(100) scales); float64 overflows not far beyond
DIVERGED = 1e30


def _check_finite(x: np.ndarray, t: int, h: float) -> None:
    """Raise ``FloatingPointError`` when a chain has diverged instead of returning 1e38-sized 'samples'."""
    bad = ~np.isfinite(x).all(1) | (np.abs(x).max(1) > DIVERGED)
    if bad.any():
        raise FloatingPointError(
            f"{int(bad.sum())} chain(s) diverged at step {t} (|x| > {DIVERGED:.0e} or not finite); "
            f"the step size h={h:.3g} is too large for this target"
        )


def _cost(estimator, grads: int) -> int:
    return (estimator.queries if estimator is not None else 0) + grads


def mala(
    target,
    x0: np.ndarray,
    *,
    step: float,
    n_steps: int | None = None,
    query_budget: float | None = None,
    burn_in: int = 0,
    thin: int = 0,
    n_snapshots: int = 20,
    rng: np.random.Generator | None = None,
) -> SampleResult:
    """Metropolis-adjusted Langevin (first-order oracle baseline), one f and one ∇f evaluation per step.

    Proposal y = x - h ∇f(x) + sqrt(2h) ξ; accept with probability
    min(1, exp(-f(y) + f(x) - |x - y + h∇f(y)|²/(4h) + |y - x + h∇f(x)|²/(4h))).
    """
    x = _validate(x0, n_steps, query_budget, burn_in, thin)
    h = _step_size(step, 0)
    rng = rng if rng is not None else np.random.default_rng()
    n, d = x.shape
    _check_dim(target, d)
    fx, gx = target.potential(x), target.grad(x)
    cost = 2  # one f and one grad per chain so far
    rec = _Recorder(query_budget, n_steps, n_snapshots, burn_in, thin)
    t, accepted = 0, 0.0
    while (n_steps is None or t < n_steps) and (query_budget is None or cost < query_budget):
        y = x - h * gx + np.sqrt(2 * h) * rng.standard_normal((n, d))
        fy, gy = target.potential(y), target.grad(y)
        cost += 2
        log_q_xy = -((x - y + h * gy) ** 2).sum(1) / (4 * h)  # log q(x | y)
        log_q_yx = -((y - x + h * gx) ** 2).sum(1) / (4 * h)  # log q(y | x)
        log_alpha = -fy + fx + log_q_xy - log_q_yx
        acc = np.log(rng.uniform(size=n)) < log_alpha
        x, fx, gx = np.where(acc[:, None], y, x), np.where(acc, fy, fx), np.where(acc[:, None], gy, gx)
        accepted += acc.mean()
        t += 1
        rec(t, x, cost // 2, cost // 2)
    return SampleResult(
        final=x,
        samples=np.array(rec.kept).reshape(-1, n, d),
        queries=cost // 2,
        grad_evals=cost // 2,
        n_steps=t,
        trace=rec.trace,
        acceptance=accepted / max(t, 1),
    )


def run_sampler(
    name: str,
    target,
    x0: np.ndarray,
    *,
    step: float,
    query_budget: float | None = None,
    n_steps: int | None = None,
    b: int = 4,
    q: int = 10,
    mu: float = 1e-4,
    rng: np.random.Generator | None = None,
    **kwargs,
) -> SampleResult:
    """Run one of ``SAMPLERS`` (``ula``, ``mala``, ``zo``, ``vr-zo``) on a target with a per-chain budget."""
    rng = rng if rng is not None else np.random.default_rng()
    if name == "ula":
        return langevin(
            target, x0, step=step, grad=target.grad, query_budget=query_budget, n_steps=n_steps, rng=rng, **kwargs
        )
    if name == "mala":
        return mala(target, x0, step=step, query_budget=query_budget, n_steps=n_steps, rng=rng, **kwargs)
    if name == "zo":
        est = GaussianSmoothing(b=b, mu=mu, rng=rng)
    elif name == "vr-zo":
        est = VarianceReduced(b=b, q=q, mu=mu, rng=rng)
    else:
        raise ValueError(f"unknown sampler {name!r}; choose from {SAMPLERS}")
    return langevin(target, x0, step=step, estimator=est, query_budget=query_budget, n_steps=n_steps, rng=rng, **kwargs)
