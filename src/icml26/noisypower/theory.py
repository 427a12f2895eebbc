"""Measurements the v2 claims compare with theory: tolerated noise by bisection, and Chebyshev predictions.

- :func:`largest_tolerated` — the largest noise level a method tolerates (a monotone yes/no test), found by
  bisection in log space after bracketing.
- :func:`tolerated_noise` — that test for a power method: reach ``eps`` within ``slack`` times its noiseless
  iteration count.
- :func:`chebyshev_iterations` — iterations ANPM needs by the Chebyshev analysis: with ``beta = lambda_{k+1}^2
  / 4`` and exact products, ``X_t`` spans ``p_t(A) X_0`` with ``p_t(x) = (lambda_{k+1}/2)^t U_t(x /
  lambda_{k+1})`` (``U_t`` the Chebyshev polynomial of the second kind), so
  ``tan theta_t <= || diag(p_t(lambda_j) / p_t(lambda_k))_{j > k} Z ||_2`` with ``Z = C_perp C_k^{-1}`` the
  initial tangent matrix (``C = V^T X_0`` in the eigenbasis ``V``).
- :func:`exact_chebyshev_iterations` — the same analysis without the bound: the tangent of ``p_t(A) X_0`` is
  exactly ``|| diag(p_t(lambda_j))_{j > k} Z diag(p_t(lambda_i))_{i <= k}^{-1} ||_2`` (both diagonals), so in
  exact arithmetic ANPM's iteration count *is* this prediction (the accelerated-rate claim's v3 measure).
- :func:`textbook_chebyshev_iterations` — the usual spectrum-only form of the same bound,
  ``tan theta_t <= tan theta_0 (t + 1) / U_t(lambda_k / lambda_{k+1})`` (``|U_t| <= t + 1`` on ``[-1, 1]``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = [
    "chebyshev_iterations",
    "exact_chebyshev_iterations",
    "largest_tolerated",
    "textbook_chebyshev_iterations",
    "tolerated_noise",
]


def largest_tolerated(
    tolerates: Callable[[float], bool],
    start: float,
    *,
    steps: int = 10,
    factor: float = 10.0,
    max_expand: int = 6,
) -> tuple[float, bool]:
    """Largest ``level`` with ``tolerates(level)``, assuming the test is monotone (true below a threshold).

    Brackets the threshold from ``start`` by multiplying or dividing by ``factor`` (at most ``max_expand``
    times each way), then bisects the bracket ``steps`` times in log space.

    Returns
    -------
    (level, censored)
        The largest level found tolerated (the bracket's lower end; 0 when even the smallest tried fails),
        and whether the bracket could not be closed (every level up to ``start * factor**max_expand``
        tolerated, or none down to ``start / factor**max_expand``).
    """
    if not (np.isfinite(start) and start > 0):
        raise ValueError(f"start must be a finite positive level; got {start}")
    if not (np.isfinite(factor) and factor > 1):
        raise ValueError(f"factor must be a finite number > 1; got {factor}")
    if not _is_count(steps, 0) or not _is_count(max_expand, 1):
        raise ValueError(f"steps must be an integer >= 0 and max_expand >= 1; got {steps!r} and {max_expand!r}")
    lo, hi = start, start
    if tolerates(start):
        for _ in range(max_expand):
            hi = lo * factor
            if not tolerates(hi):
                break
            lo = hi
        else:
            return lo, True
    else:
        for _ in range(max_expand):
            lo = hi / factor
            if tolerates(lo):
                break
            hi = lo
        else:
            return 0.0, True
    for _ in range(steps):  # invariant: lo tolerated, hi not
        mid = math.sqrt(lo * hi)
        if tolerates(mid):
            lo = mid
        else:
            hi = mid
    return lo, False


def tolerated_noise(
    solve: Callable[..., object],
    make_noise: Callable[[float], object],
    *,
    eps: float,
    noiseless_iterations: int,
    start: float,
    slack: float = 1.3,
    steps: int = 10,
    seed: int = 0,
) -> tuple[float, bool]:
    """Largest noise level under which ``solve`` reaches ``sin theta <= eps`` within ``slack`` x its noiseless count.

    ``solve(noise=..., tol=..., max_iter=..., seed=...)`` runs the method (a ``PowerResult`` with a
    ``sin_theta`` history); ``make_noise(level)`` builds the perturbation. Every trial uses the same ``seed``,
    so random noise draws the same directions at every level (the test stays monotone).
    """
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite positive accuracy; got {eps}")
    if not _is_count(noiseless_iterations, 1):
        raise ValueError(
            "noiseless_iterations must be a positive integer (did the noiseless run reach eps?); "
            f"got {noiseless_iterations!r}"
        )
    if not (np.isfinite(slack) and slack >= 1):
        raise ValueError(f"slack must be a finite factor >= 1 on the noiseless iterations; got {slack}")
    budget = max(1, math.floor(slack * noiseless_iterations))

    def tolerates(level: float) -> bool:
        res = solve(noise=make_noise(level), tol=eps, max_iter=budget, seed=seed)
        return res.iterations_to(eps) is not None

    return largest_tolerated(tolerates, start, steps=steps)


def _is_count(n, least: int) -> bool:
    return not isinstance(n, bool) and isinstance(n, (int, np.integer)) and n >= least


def _check_rate_inputs(lam_k: float, lam_next: float, eps: float) -> None:
    if not (np.isfinite(lam_k) and np.isfinite(lam_next) and lam_k > lam_next > 0):
        raise ValueError(f"need lambda_k > lambda_(k+1) > 0; got {lam_k} and {lam_next}")
    if not (np.isfinite(eps) and 0 < eps < 1):
        raise ValueError(f"eps must be in (0, 1); got {eps}")


def _u_ratios(x: np.ndarray, x_top: float, t_max: int) -> np.ndarray:
    """``U_t(x_j) / U_t(x_top)`` for ``t = 0 .. t_max`` (rows), by the three-term recurrence, rescaled each step.

    ``x_top > 1`` (where ``U_t`` grows geometrically); the entries of ``x`` lie in ``[-x_top, x_top]``, so every
    ratio stays bounded.
    """
    xs = np.concatenate([[x_top], x])
    prev, cur = np.zeros_like(xs), np.ones_like(xs)  # U_{-1}, U_0
    out = [cur[1:] / cur[0]]
    for _ in range(t_max):
        prev, cur = cur, 2 * xs * cur - prev  # U_{t+1}(x) = 2 x U_t(x) - U_{t-1}(x)
        scale = cur[0]
        prev, cur = prev / scale, cur / scale  # keep the top entry at 1: only ratios matter
        out.append(cur[1:].copy())
    return np.asarray(out)  # (t_max + 1, len(x))


def _tangent_start(eigvals, eigvecs, X0, k: int, eps: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validated eigenvalues (descending) and the start's tangent matrix ``Z = C_perp C_k^{-1}`` ((d - k, k))."""
    eigvals, eigvecs, X0 = np.asarray(eigvals, dtype=float), np.asarray(eigvecs, dtype=float), np.asarray(X0)
    d = eigvals.shape[0]
    if eigvals.ndim != 1 or eigvecs.shape != (d, d) or X0.shape != (d, k) or not _is_count(k, 1) or k >= d:
        raise ValueError(
            f"need eigvals (d,), eigvecs (d, d), X0 (d, k) with 1 <= k < d; got {eigvals.shape}, {eigvecs.shape}, "
            f"{X0.shape}, k = {k!r}"
        )
    if np.any(np.diff(eigvals) > 0):
        raise ValueError("eigvals must be in descending order (eigvecs in the same order)")
    lam_k, lam_next = float(eigvals[k - 1]), float(eigvals[k])
    _check_rate_inputs(lam_k, lam_next, eps)
    C = eigvecs.T @ X0  # (d, k) start in the eigenbasis
    Z = np.linalg.solve(C[:k].T, C[k:].T).T  # (d - k, k) = C_perp C_k^{-1}, the initial tangent matrix
    return eigvals, Z, lam_k, lam_next


def chebyshev_iterations(
    eigvals: np.ndarray, eigvecs: np.ndarray, X0: np.ndarray, k: int, eps: float, t_max: int = 100_000
) -> int | None:
    """First ``t`` at which the Chebyshev bound on ``tan theta_t`` of ANPM (``beta = lambda_{k+1}^2/4``) is <= eps.

    ``eigvals`` (d,) descending with ``eigvecs`` (d, d) in the same order; ``X0`` (d, k) the start.
    """
    eigvals, Z, lam_k, lam_next = _tangent_start(eigvals, eigvecs, X0, k, eps)
    x = eigvals[k:] / lam_next  # in [0, 1]
    t_hi = 64
    while True:
        ratios = _u_ratios(x, lam_k / lam_next, min(t_hi, t_max))  # (t + 1, d - k)
        for t, r in enumerate(ratios):
            if np.linalg.norm(r[:, None] * Z, 2) <= eps:
                return t
        if t_hi >= t_max:
            return None
        t_hi *= 4


def exact_chebyshev_iterations(
    eigvals: np.ndarray, eigvecs: np.ndarray, X0: np.ndarray, k: int, eps: float, t_max: int = 100_000
) -> int | None:
    """First ``t`` at which ``sin theta(p_t(A) X_0, U_k) <= eps``: ANPM's exact-arithmetic iteration count.

    With ``beta = lambda_{k+1}^2 / 4`` and exact products ``X_t`` spans ``p_t(A) X_0``, whose coefficients in
    the eigenbasis are ``diag(p_t(lambda)) C``; its tangent matrix is therefore exactly
    ``T_t = diag(p_t(lambda_j) / p_t(lambda_k))_{j > k} Z diag(p_t(lambda_k) / p_t(lambda_i))_{i <= k}``
    and ``sin theta_t = tan / sqrt(1 + tan^2)`` with ``tan = ||T_t||_2``. Unlike :func:`chebyshev_iterations`
    no top direction is charged at ``lambda_k``, so there is no slack to absorb: for ``k = 1`` both agree.
    """
    eigvals, Z, lam_k, lam_next = _tangent_start(eigvals, eigvecs, X0, k, eps)
    x_perp = eigvals[k:] / lam_next  # in [0, 1]: p_t(lambda_j) / p_t(lambda_k) <= 1
    tan_eps = eps / math.sqrt(1.0 - eps**2)
    t_hi = 64
    while True:
        t_run = min(t_hi, t_max)
        below = _u_ratios(x_perp, lam_k / lam_next, t_run)  # (t + 1, d - k)
        # p_t(lambda_k) / p_t(lambda_i) for each top direction i <= k (1 for i = k), each by its own recurrence
        above = np.column_stack(
            [_u_ratios(np.array([lam_k / lam_next]), lam_i / lam_next, t_run)[:, 0] for lam_i in eigvals[:k]]
        )  # (t + 1, k)
        for t in range(t_run + 1):
            if np.linalg.norm(below[t][:, None] * Z * above[t][None, :], 2) <= tan_eps:
                return t
        if t_hi >= t_max:
            return None
        t_hi *= 4


def textbook_chebyshev_iterations(tan0: float, lam_k: float, lam_next: float, eps: float, t_max: int = 100_000) -> int:
    """First ``t`` with ``tan theta_0 (t + 1) / U_t(lambda_k / lambda_{k+1}) <= eps`` (spectrum-only bound)."""
    _check_rate_inputs(lam_k, lam_next, eps)
    if not (np.isfinite(tan0) and tan0 > 0):
        raise ValueError(f"tan0 must be a finite positive initial tangent; got {tan0}")
    x = lam_k / lam_next
    log_growth = math.acosh(x)  # U_t(cosh a) = sinh((t + 1) a) / sinh a
    for t in range(t_max + 1):
        log_u = (
            math.log(math.sinh((t + 1) * log_growth) / math.sinh(log_growth))
            if t < 700 / log_growth
            else ((t + 1) * log_growth - math.log(2 * math.sinh(log_growth)))
        )
        if math.log(tan0) + math.log(t + 1) - log_u <= math.log(eps):
            return t
    return t_max
