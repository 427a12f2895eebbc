"""Centralized solvers: the noisy power method (NPM) and the accelerated noisy power method (ANPM).

Both compute an orthonormal basis of the top-``k`` eigenspace of a symmetric PSD operator ``A`` of size
``d`` from (possibly inexact) block products ``A X + G``:

- NPM (Hardt & Price 2014):  ``X_{t+1} R_{t+1} = qr(A X_t + G_t)``.
- ANPM (heavy-ball momentum, Xu et al. 2018; analysed by Aguié, Even & Massoulié 2026)::

      Y_{t+1} = A X_t + G_t - beta * X_{t-1} R_t^{-1}        # momentum, R_t from the previous QR
      X_{t+1} R_{t+1} = qr(Y_{t+1}),   X_{-1} = 0

  Without noise, ``X_t`` spans ``p_t(A) X_0`` with ``p_t`` the scaled Chebyshev polynomial of the second
  kind: the ``R^{-1}`` factor undoes the normalisation of the previous step so the three-term recurrence
  ``Z_{t+1} = A Z_t - beta Z_{t-1}`` holds for the unnormalised ``Z_t = X_t R_t ... R_1``. With
  ``beta = lambda_{k+1}^2 / 4`` the error contracts by ``lambda_{k+1} / (lambda_k + sqrt(lambda_k^2 -
  lambda_{k+1}^2))`` per step: ``O(sqrt(lambda_k / (lambda_k - lambda_{k+1})) log(1/eps))`` iterations
  instead of NPM's ``O(lambda_k / (lambda_k - lambda_{k+1}) log(1/eps))``.

Error is measured by ``sin theta``, the sine of the largest principal angle to the reference subspace.
Every iteration also does a Rayleigh–Ritz step on the block (no extra product), which gives the Ritz
values, the residual stopping test and, with ``block_size = p > k`` (Hardt & Price's oversampled block),
the top-``k`` Ritz vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from icml26.noisypower.noise import NoNoise

logger = logging.getLogger(__name__)

__all__ = [
    "PowerResult",
    "accelerated_noisy_power_method",
    "as_block_operator",
    "noisy_power_method",
    "qr_pos",
    "sin_theta",
]

BlockOp = Callable[[np.ndarray], np.ndarray]


def qr_pos(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thin QR with a non-negative diagonal of ``R`` (unique, hence continuous); works batched ``(..., d, k)``."""
    Q, R = np.linalg.qr(Y)
    s = np.sign(np.diagonal(R, axis1=-2, axis2=-1)).copy()  # (..., k)
    s[s == 0] = 1.0
    return Q * s[..., None, :], R * s[..., :, None]


def sin_theta(X: np.ndarray, U: np.ndarray) -> float:
    """Sine of the largest principal angle between span(X) and span(U), both orthonormal ``(d, k)``."""
    if X.shape != U.shape:
        raise ValueError(f"bases must have the same shape; got {X.shape} and {U.shape}")
    # ||(I - U U^T) X||_2: accurate for tiny angles, where sqrt(1 - cos^2) loses all digits below 1e-8
    return float(np.linalg.norm(X - U @ (U.T @ X), 2))


#: largest entry magnitude accepted: a block product sums d products of entries, and the momentum estimate squares
#: an eigenvalue, so entries near 1e300 overflow float64 (the estimate raised OverflowError on entries of 1e300)
MAX_ENTRY = 1e100


def _check_magnitude(scale: float) -> None:
    if scale > MAX_ENTRY:
        raise ValueError(
            f"matrix entries reach {scale:.3g} (> {MAX_ENTRY:.0e}): products and squared eigenvalues overflow float64; "
            "rescale the matrix (its eigenvectors do not change)"
        )


def _check_symmetric_dense(A: np.ndarray, symmetrize: bool) -> np.ndarray:
    if not np.all(np.isfinite(A)):
        raise ValueError("matrix has NaN or inf entries")
    scale = float(np.max(np.abs(A))) if A.size else 0.0
    _check_magnitude(scale)
    asym = float(np.max(np.abs(A - A.T))) if A.size else 0.0
    if asym > 1e-10 * max(scale, 1e-300):
        if not symmetrize:
            raise ValueError(
                f"matrix is not symmetric (max |A - A^T| = {asym:.3g}); pass symmetrize=True "
                "(CLI: --symmetrize) to use (A + A^T) / 2"
            )
        A = 0.5 * (A + A.T)
    return A


def as_block_operator(
    A, *, dim: int | None = None, symmetrize: bool = False
) -> tuple[BlockOp, int, np.ndarray | sp.spmatrix | None]:
    """Turn ``A`` into a block product ``X (d, k) -> A X (d, k)``, validating it.

    Parameters
    ----------
    A : array (d, d), scipy sparse matrix, ``scipy.sparse.linalg.LinearOperator`` or callable
        A symmetric PSD operator. A callable must map a ``(d, k)`` array to ``(d, k)`` and needs ``dim``.
    dim : int, optional
        Dimension ``d`` of a callable operator.
    symmetrize : bool
        Replace a non-symmetric matrix by ``(A + A^T) / 2`` instead of raising.

    Returns
    -------
    matmat : callable, d : int, matrix : the validated matrix (None for operators and callables)
    """
    if sp.issparse(A):
        A = sp.csr_array(A, dtype=float)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"matrix must be square; got shape {A.shape}")
        if not np.all(np.isfinite(A.data)):
            raise ValueError("matrix has NaN or inf entries")
        scale = float(abs(A).max()) if A.nnz else 0.0
        _check_magnitude(scale)
        diff = A - A.T
        asym = float(abs(diff).max()) if diff.nnz else 0.0
        if asym > 1e-10 * max(scale, 1e-300):
            if not symmetrize:
                raise ValueError(
                    f"matrix is not symmetric (max |A - A^T| = {asym:.3g}); pass symmetrize=True to use (A + A^T) / 2"
                )
            A = sp.csr_array(0.5 * (A + A.T))
        return (lambda X: A @ X), A.shape[0], A
    if isinstance(A, LinearOperator):
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"operator must be square; got shape {A.shape}")
        return (lambda X: np.asarray(A.matmat(X))), A.shape[0], None
    if callable(A) and not isinstance(A, np.ndarray):
        if dim is None or dim < 1:
            raise ValueError("a callable operator needs its dimension: dim=d")
        return A, int(dim), None
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix must be square; got shape {A.shape}")
    A = _check_symmetric_dense(A, symmetrize)
    return (lambda X: A @ X), A.shape[0], A


@dataclass
class PowerResult:
    """Outcome of a power-method run.

    Attributes
    ----------
    basis : array (d, k)
        Orthonormal Ritz vectors, ordered by decreasing Ritz value.
    eigenvalues : array (k,)
        Ritz values ``diag(basis^T A basis)`` (descending).
    n_iter : int
        Updates ``X_t -> X_{t+1}`` performed; ``basis`` spans ``X_{n_iter}``.
    n_matvecs : int
        Single-vector products with ``A``: ``(n_iter + 1) * p`` for a block of ``p`` columns (the last
        product gives the Ritz pairs and the stopping test), plus the momentum estimate if one was run.
    converged : bool
        Whether the stopping criterion was met within ``max_iter``.
    beta : float
        Momentum used (0 for NPM).
    history : dict of str to list of float
        ``"sin_theta"`` (when a reference was given) and ``"residual"`` (relative Ritz residual
        ``||A B - B Theta||_F / |theta_1|`` of the top-``k`` Ritz pairs ``(Theta, B)``) of ``X_0 .. X_{n_iter}``;
        ``"noise_norm"`` (spectral norm of ``G_t``) of each update.
    """

    basis: np.ndarray
    eigenvalues: np.ndarray
    n_iter: int
    n_matvecs: int
    converged: bool
    beta: float
    method: str
    history: dict[str, list[float]] = field(default_factory=dict)

    def iterations_to(self, eps: float) -> int | None:
        """Updates until ``sin theta <= eps`` (0 for the start; None when never reached or no reference)."""
        for i, s in enumerate(self.history.get("sin_theta", [])):
            if s <= eps:
                return i
        return None


def estimate_momentum(matmat: BlockOp, d: int, k: int, rng: np.random.Generator) -> tuple[float, int]:
    """``beta = lambda_{k+1}^2 / 4`` from a loose Lanczos estimate of ``lambda_{k+1}`` (ARPACK, tol 1e-6).

    ``k`` is the block size (the momentum targets the first eigenvalue outside the block).

    Returns ``(beta, matvecs used)``. An exact operator is assumed: the estimate is not noise-robust.
    """
    count = [0]

    def mv(x):
        x = np.asarray(x, dtype=float).reshape(d, -1)
        count[0] += x.shape[1]
        return matmat(x)

    if d <= 3 * (k + 1) + 20:  # tiny problem: ARPACK needs k + 1 < d; d products give the exact spectrum
        lam = np.linalg.eigvalsh(mv(np.eye(d)))[::-1]
        return max(float(lam[k]), 0.0) ** 2 / 4.0, count[0]
    op = LinearOperator((d, d), matvec=mv, matmat=mv, dtype=float)
    v0 = rng.standard_normal(d)
    vals = eigsh(op, k=k + 1, which="LA", tol=1e-6, v0=v0, return_eigenvectors=False)
    lam_next = float(np.sort(vals)[::-1][k])
    return max(lam_next, 0.0) ** 2 / 4.0, count[0]


def _init_basis(X0, d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    if X0 is None:
        X0 = rng.standard_normal((d, k))
    X0 = np.asarray(X0, dtype=float)
    if X0.shape != (d, k):
        raise ValueError(f"X0 must have shape {(d, k)} (d, block size); got {X0.shape}")
    return qr_pos(X0)[0]


def _check_k(k: int, d: int) -> None:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")
    if k >= d:
        raise ValueError(f"k must be smaller than the dimension; got k={k}, d={d}")


def _power_loop(
    A,
    k: int,
    *,
    beta: float | str,
    lambda_next: float | None,
    tol: float,
    max_iter: int,
    noise,
    X0,
    seed,
    reference,
    dim,
    symmetrize: bool,
    method: str,
    block_size: int | None,
) -> PowerResult:
    matmat, d, _ = as_block_operator(A, dim=dim, symmetrize=symmetrize)
    _check_k(k, d)
    p = k if block_size is None else block_size
    if not isinstance(p, (int, np.integer)) or not k <= p < d:
        raise ValueError(f"block_size must be an integer with k <= block_size < d; got {block_size!r} (k={k}, d={d})")
    if not (0 < tol < 1) or max_iter < 1:  # tol >= 1 (or inf) stops at once with wrong eigenvalues
        raise ValueError(f"need 0 < tol < 1 and max_iter >= 1; got tol={tol}, max_iter={max_iter}")
    rng = np.random.default_rng(seed)
    noise = NoNoise() if noise is None else noise
    n_matvecs = 0
    if method == "npm":
        beta_val = 0.0
    elif lambda_next is not None:
        beta_val = float(lambda_next) ** 2 / 4.0
    elif isinstance(beta, str):
        if beta != "auto":
            raise ValueError(f"beta must be a number or 'auto'; got {beta!r}")
        beta_val, n_matvecs = estimate_momentum(matmat, d, p, rng)
        logger.info("momentum beta = %.6g from a Lanczos estimate (%d matvecs)", beta_val, n_matvecs)
    else:
        beta_val = float(beta)
    if not (np.isfinite(beta_val) and beta_val >= 0):
        raise ValueError(f"momentum beta must be finite and >= 0; got {beta_val}")
    U = None
    if reference is not None:
        U = np.asarray(reference, dtype=float)
        if U.shape != (d, k):
            raise ValueError(f"reference must have shape {(d, k)}; got {U.shape}")
        U = qr_pos(U)[0]

    X = _init_basis(X0, d, p, rng)  # (d, p) X_0
    X_prev = np.zeros_like(X)  # X_{-1} = 0
    R_inv = np.eye(p)  # R_t^{-1}
    hist: dict[str, list[float]] = {"residual": [], "noise_norm": []}
    if U is not None:
        hist["sin_theta"] = []
    exact = isinstance(noise, NoNoise)
    converged = False
    t = 0
    while True:
        # Rayleigh-Ritz of the current block X_t from the product A X_t the update needs anyway
        AX = np.asarray(matmat(X), dtype=float)  # (d, p) exact product
        if AX.shape != X.shape:
            raise ValueError(f"the operator returned shape {AX.shape} for a block of shape {X.shape}")
        if not np.all(np.isfinite(AX)):
            raise ValueError(f"the operator returned NaN or inf (iteration {t})")
        n_matvecs += p
        H = X.T @ AX  # (p, p)
        theta, V = np.linalg.eigh(0.5 * (H + H.T))
        theta, V = theta[::-1][:k], V[:, ::-1][:, :k]  # top-k Ritz values and coefficients
        basis = X @ V  # (d, k) Ritz vectors
        residual = float(np.linalg.norm(AX @ V - basis * theta)) / max(abs(float(theta[0])), 1e-300)
        hist["residual"].append(residual)
        err = sin_theta(basis, U) if U is not None else residual
        if U is not None:
            hist["sin_theta"].append(err)
        if err <= tol:
            converged = True
            break
        if t == max_iter:
            break
        t += 1
        G = np.zeros_like(AX) if exact else noise(t - 1, X, AX, rng)  # (d, p) perturbation G_t
        Y = AX + G - beta_val * (X_prev @ R_inv) if beta_val > 0 else AX + G  # Eq. ANPM; beta = 0 is NPM
        if not np.all(np.isfinite(Y)):
            raise FloatingPointError(f"iterate became non-finite at iteration {t}; is beta={beta_val:.3g} too large?")
        X_new, R = qr_pos(Y)
        if beta_val > 0:
            R_inv = np.linalg.solve(R, np.eye(p)) if np.all(np.abs(np.diag(R)) > 0) else np.linalg.pinv(R)
        X_prev, X = X, X_new
        hist["noise_norm"].append(0.0 if exact else float(np.linalg.norm(G, 2)))
    if theta[-1] < -1e-8 * max(abs(float(theta[0])), abs(float(theta[-1]))):
        # a negative Rayleigh quotient proves A is not PSD; the power iteration then converges to the
        # eigenvalues of largest *magnitude*, which are not the top-k eigenspace it would report
        raise ValueError(
            f"operator is not positive semidefinite (Ritz value {float(theta[-1]):.6g} < 0): the power method "
            "finds the eigenvalues of largest magnitude, not the largest ones; shift it to A + c I with c >= "
            "-lambda_min"
        )
    if not converged:
        logger.warning("%s did not reach tol=%.1e in %d iterations", method.upper(), tol, max_iter)
    return PowerResult(basis, theta, t, n_matvecs, converged, beta_val, method, hist)


def noisy_power_method(
    A,
    k: int,
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    noise=None,
    X0=None,
    seed=None,
    reference=None,
    dim: int | None = None,
    symmetrize: bool = False,
    block_size: int | None = None,
) -> PowerResult:
    """Noisy power method (NPM): ``X_{t+1} R_{t+1} = qr(A X_t + G_t)``.

    Parameters
    ----------
    A : array (d, d), sparse matrix, LinearOperator or callable ``(d, k) -> (d, k)``
        Symmetric PSD operator.
    k : int
        Target dimension, ``1 <= k < d``.
    tol : float
        Stop when ``sin theta <= tol`` (with ``reference``) or the relative residual ``<= tol`` (without).
    max_iter : int
    noise : callable ``(t, X, AX, rng) -> G``, optional
        Perturbation model (see :mod:`icml26.noisypower.noise`); exact products when omitted.
    X0 : array (d, k), optional
        Starting block; Gaussian when omitted.
    seed : int or Generator, optional
    reference : array (d, k), optional
        Basis of the true subspace, for the ``sin theta`` history and stopping rule.
    dim : int, optional
        Dimension of a callable ``A``.
    symmetrize : bool
        Use ``(A + A^T)/2`` for a non-symmetric matrix instead of raising ``ValueError``.
    block_size : int, optional
        Number ``p >= k`` of columns iterated (Hardt & Price's ``p``; oversampling). The top-``k`` Ritz
        vectors of the ``p``-block are returned; the rate is then set by ``lambda_{p+1} / lambda_k``.
        Default ``k``.

    Returns
    -------
    PowerResult
    """
    return _power_loop(
        A,
        k,
        beta=0.0,
        lambda_next=None,
        tol=tol,
        max_iter=max_iter,
        noise=noise,
        X0=X0,
        seed=seed,
        reference=reference,
        dim=dim,
        symmetrize=symmetrize,
        method="npm",
        block_size=block_size,
    )


def accelerated_noisy_power_method(
    A,
    k: int,
    *,
    beta: float | str = "auto",
    lambda_next: float | None = None,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    noise=None,
    X0=None,
    seed=None,
    reference=None,
    dim: int | None = None,
    symmetrize: bool = False,
    block_size: int | None = None,
) -> PowerResult:
    """Accelerated noisy power method (ANPM), momentum form with the ``R^{-1}`` correction.

    ``Y_{t+1} = A X_t + G_t - beta X_{t-1} R_t^{-1}``, ``X_{t+1} R_{t+1} = qr(Y_{t+1})``.

    Parameters
    ----------
    beta : float or "auto"
        Momentum. The optimal value is ``lambda_{p+1}^2 / 4`` (``p`` the block size, ``k`` by default);
        ``"auto"`` estimates ``lambda_{p+1}`` by a loose Lanczos run (its matvecs are counted). An
        underestimate of ``lambda_{p+1}`` loses acceleration quickly when the gap is small;
        ``beta >= lambda_k^2 / 4`` destroys convergence.
    lambda_next : float, optional
        Known ``lambda_{p+1}``; sets ``beta = lambda_next^2 / 4`` (overrides ``beta``).
    Other parameters
        As :func:`noisy_power_method`.
    """
    return _power_loop(
        A,
        k,
        beta=beta,
        lambda_next=lambda_next,
        tol=tol,
        max_iter=max_iter,
        noise=noise,
        X0=X0,
        seed=seed,
        reference=reference,
        dim=dim,
        symmetrize=symmetrize,
        method="anpm",
        block_size=block_size,
    )
