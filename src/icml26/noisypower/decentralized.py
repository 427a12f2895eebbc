"""Decentralized PCA over a gossip network: naive gossip power method, DeEPCA, and accelerated DeEPCA.

Node ``i`` holds a local symmetric matrix ``A_i`` (its covariance); the target is the top-``k``
eigenspace of ``A = (1/n) sum_i A_i``. Nodes only talk to graph neighbours, through FastMix
(:func:`icml26.noisypower.network.fastmix`, ``K`` rounds per iteration). States are stacked
``(n_local, d, k)``: every node of the simulated network at once, or the one node of an MPI rank.

- ``"gossip"`` — naive gossip power method: ``X_i <- qr(FastMix(A_i X_i, K))``. Its consensus error
  does not vanish as the iterate converges, so it stalls at a floor set by ``K`` and the heterogeneity.
- ``"deepca"`` — DeEPCA (Ye & Zhang, JMLR 2021), subspace tracking::

      S_i <- FastMix(S_i + A_i X_i^t - A_i X_i^{t-1}, K)       # S_i tracks (1/n) sum_j A_j X_j^t
      X_i^{t+1} = SignAdjust(qr(S_i), X^0)

- ``"accelerated"`` — the accelerated decentralized method (our reconstruction of the paper's algorithm):
  the same tracked product, then the ANPM momentum step applied locally::

      Y_i = S_i - beta X_i^{t-1} (R_i^t)^{-1},   X_i^{t+1} R_i^{t+1} = qr(Y_i)

  The consensus error of ``S_i`` plays the role of the matvec noise ``G_t`` of the noisy power method;
  the momentum is local, so the per-iteration communication (``K`` rounds of one ``d x k`` block to each
  neighbour) is exactly DeEPCA's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from icml26.noisypower.method import qr_pos
from icml26.noisypower.network import (
    SimNetwork,
    fastmix,
    fastmix_contraction,
    fastmix_eta,
    recommended_rounds,
    second_eigenvalue,
    validate_mixing,
)

logger = logging.getLogger(__name__)

__all__ = ["METHODS", "DecentralizedResult", "InsufficientMixingError", "decentralized_pca", "run_decentralized"]

METHODS = ("gossip", "deepca", "accelerated")


class InsufficientMixingError(RuntimeError):
    """Too few gossip rounds per iteration: the tracked products diverged or the error stopped decreasing.

    ``result`` holds the partial :class:`DecentralizedResult`.
    """

    def __init__(self, message: str, result: DecentralizedResult | None = None):
        super().__init__(message)
        self.result = result


@dataclass
class DecentralizedResult:
    """Outcome of a decentralized run.

    Attributes
    ----------
    bases : array (n_local, d, k)
        Each local node's orthonormal basis (all nodes for the simulated network).
    node_ids : array (n_local,)
    n_iter : int
    rounds : int
        Communication rounds (``n_iter * K``).
    bytes_sent : int
        Bytes sent over all links, all nodes (8 bytes per float64, one ``d x k`` block per neighbour per round).
    converged : bool
        Every node reached ``sin theta <= tol``.
    status : str
        ``"converged"``, ``"max-iter"`` or ``"stalled"`` (the error stopped decreasing).
    history : dict of str to list of float
        Per iteration: ``"sin_theta"`` and ``"tan_theta"`` (worst node) when a reference basis was given, else
        ``"residual"`` (the relative residual of the consensus basis, see :func:`run_decentralized`);
        ``"consensus"`` (max ``||X_i - mean X||_F``) and ``"rounds"`` always.
    eigenvalues : array (k,), optional
        Rayleigh-quotient eigenvalue estimates of the consensus basis (reference-free runs only).
    """

    bases: np.ndarray
    node_ids: np.ndarray
    method: str
    K: int
    beta: float
    n_iter: int
    rounds: int
    bytes_sent: int
    converged: bool
    status: str
    mixing_contraction: float
    history: dict[str, list[float]] = field(default_factory=dict)
    eigenvalues: np.ndarray | None = None

    def rounds_to(self, eps: float) -> int | None:
        """Communication rounds until the worst node's ``sin theta`` (reference-free runs: the residual) is at
        most ``eps`` (None if never)."""
        for i, s in enumerate(self.history.get("sin_theta") or self.history.get("residual") or []):
            if s <= eps:
                return (i + 1) * self.K
        return None


def _sign_adjust(X: np.ndarray, R: np.ndarray, X0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeEPCA's SignAdjust: flip columns so ``diag(X_i^T X0) >= 0``; rows of ``R`` flip alongside."""
    s = np.sign(np.einsum("ndk,dk->nk", X, X0))  # (n_local, k)
    s[s == 0] = 1.0
    return X * s[:, None, :], R * s[:, :, None]


def _worst_angle(X: np.ndarray, U: np.ndarray) -> tuple[float, float]:
    """Largest ``sin theta`` and smallest ``cos theta`` of the principal angles of any local basis to ``U``.

    ``sin theta = ||(I - U U^T) X_i||_2`` (accurate below 1e-8, unlike ``sqrt(1 - cos^2)``).
    """
    UtX = np.einsum("dj,ndk->njk", U, X)  # (n_local, k, k)
    sin = np.linalg.norm(X - U @ UtX, 2, axis=(1, 2))  # (n_local,)
    cos = np.linalg.svd(UtX, compute_uv=False)  # (n_local, k)
    return float(np.max(sin)), float(np.clip(np.min(cos), 0.0, 1.0))


def _consensus_residual(net, product, X_mean: np.ndarray, n_local: int) -> tuple[float, np.ndarray]:
    """Relative residual ``||A Q - Q M||_2 / ||M||_2`` of the consensus basis ``Q = qr(mean_i X_i)``.

    ``A Q = (1/n) sum_i A_i Q`` is one ``allsum`` of the local products (``M = Q^T A Q``); no node needs the
    true eigenspace. A small residual bounds ``sin theta`` by Davis-Kahan (residual x ``||M|| / gap``).
    Returns the residual and the Rayleigh-quotient eigenvalues (descending).
    """
    Q = qr_pos(X_mean)[0]  # (d, k)
    AQ = net.allsum(product(np.broadcast_to(Q, (n_local, *Q.shape))).sum(axis=0)) / net.n_nodes  # (d, k)
    if not np.all(np.isfinite(AQ)):  # a node's product blew up (the same bits everywhere): the next iteration
        return np.inf, np.full(Q.shape[1], np.nan)  # sees it in the tracker or the mean and stops as diverged
    M = Q.T @ AQ
    M = (M + M.T) / 2
    theta = np.linalg.eigvalsh(M)[::-1]
    scale = max(float(np.max(np.abs(theta))), 1e-300)
    return float(np.linalg.norm(AQ - Q @ M, 2)) / scale, theta


def run_decentralized(
    net,
    A_local,
    k: int,
    *,
    method: str,
    K: int,
    beta: float,
    tol: float,
    max_iter: int,
    X0: np.ndarray,
    reference: np.ndarray | None,
    patience: int = 100,
    divergence: float = 1.0,
    strict: bool = True,
    progress: Callable[[int, float], None] | None = None,
) -> DecentralizedResult:
    """The decentralized loop on any network backend (:class:`SimNetwork` or the MPI one).

    Parameters
    ----------
    net : network
        ``gossip``, ``allsum``, ``allmax``, ``n_nodes``, ``node_ids``, ``degrees`` (of all nodes), ``W``.
    A_local : array (n_local, d, d) or callable
        The local matrices of this process's nodes, or their product: a callable taking the stacked states
        ``X`` (n_local, d, k) and returning ``A_i X_i`` stacked the same way (a sparse matrix or an operator
        that is never formed).
    X0 : array (d, k)
        Common orthonormal start (``X^0``, also the SignAdjust reference).
    reference : array (d, k) or None
        Orthonormal basis of the true top-``k`` eigenspace (diagnostics and stopping only). ``None``: no node
        knows the answer, so convergence is monitored from inside the network: the run stops when the
        consensus distance ``max_i ||X_i - mean X||_F`` and the relative residual of the consensus basis
        (``||A Q - Q M||_2 / ||M||_2``, ``Q = qr(mean X)``, ``M = Q^T A Q``, one extra ``allsum`` of a
        ``d x k`` block per iteration) are both at most ``tol``.
    patience : int
        Stop as ``"stalled"`` when the worst ``tan theta`` (reference-free: the residual) has not halved over
        this many iterations.
    divergence : float
        Raise :class:`InsufficientMixingError` when the trackers' relative disagreement
        ``max_i ||S_i - mean S|| / ||mean S||`` exceeds this (the tracked product is then mostly error).
    strict : bool
        Raise :class:`InsufficientMixingError` when a tracking method (``deepca``, ``accelerated``) stalls:
        with exact tracking they converge linearly, so a stall means too few gossip rounds. The naive
        ``gossip`` method stalls by design (its bias floor) and only reports ``status="stalled"``.
    progress : callable, optional
        Called as ``progress(t, worst_sin_theta)`` after every iteration (the MPI backend's progress bar).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {METHODS}")
    if callable(A_local):
        product, n_local = A_local, len(net.node_ids)
    else:
        A_local = np.asarray(A_local)
        product, n_local = A_local.__matmul__, A_local.shape[0]
    d = X0.shape[0]
    eta = fastmix_eta(second_eigenvalue(net.W))
    rho = fastmix_contraction(net.W, K)
    bytes_per_round = int(net.degrees.sum()) * d * k * 8
    X = np.repeat(X0[None], n_local, axis=0)  # (n_local, d, k) X_i^t
    X_prev = np.zeros_like(X)  # X_i^{t-1}; X^{-1} = 0
    R_inv = np.repeat(np.eye(k)[None], n_local, axis=0)  # (n_local, k, k) (R_i^t)^{-1}
    S = X.copy()  # tracker, S^0 = X^0
    AX_prev = X.copy()  # DeEPCA initialisation A_i X_i^{-1} := X^0, so S^1 = FastMix(A_i X^0)
    watched = ("sin_theta", "tan_theta") if reference is not None else ("residual",)
    hist: dict[str, list[float]] = {**{name: [] for name in watched}, "consensus": [], "rounds": []}
    theta = None
    status, t = "max-iter", 0
    for t in range(1, max_iter + 1):
        AX = product(X)  # (n_local, d, k) local products
        if method == "gossip":
            Y = fastmix(net, AX, K, eta)  # (n_local, d, k)
        else:
            S = fastmix(net, S + AX - AX_prev, K, eta)  # gradient-tracking update
            AX_prev = AX
            Y = S - beta * (X_prev @ R_inv) if beta > 0 else S  # local momentum (accelerated only)
            S_mean = net.allsum(S.sum(axis=0)) / net.n_nodes
            spread = net.allmax(float(np.max(np.linalg.norm(S - S_mean, axis=(1, 2)))))
            scale = float(np.linalg.norm(S_mean))
            if not (np.isfinite(spread) and np.all(np.isfinite(S_mean))) or spread > divergence * max(scale, 1e-300):
                status = "diverged"
                break
        X_new, R = qr_pos(Y)
        X_new, R = _sign_adjust(X_new, R, X0)
        if beta > 0:
            R_inv = np.linalg.inv(R)
        X_prev, X = X, X_new
        X_mean = net.allsum(X.sum(axis=0)) / net.n_nodes
        hist["consensus"].append(net.allmax(float(np.max(np.linalg.norm(X - X_mean, axis=(1, 2))))))
        if not np.all(np.isfinite(X_mean)):  # from an allsum: the same verdict on every process, so all stop
            status = "diverged"  # (a node-local test would let one MPI rank leave while the others wait)
            break
        if reference is not None:
            sin, cos = _worst_angle(X, reference)
            err, cos = net.allmax(sin), -net.allmax(-cos)  # worst node
            hist["sin_theta"].append(err)
            hist["tan_theta"].append(float(np.sqrt(max(0.0, 1.0 - cos**2))) / cos if cos > 0 else np.inf)
            done = err <= tol
        else:
            err, theta = _consensus_residual(net, product, X_mean, n_local)
            hist["residual"].append(err)
            done = err <= tol and hist["consensus"][-1] <= tol
        hist["rounds"].append(t * K)
        if progress is not None:
            progress(t, err)
        if done:
            status = "converged"
            break
        # tan theta falls geometrically from the start (sin theta sits near 1 for a while): the error has
        # stalled when tan theta has not halved over `patience` iterations
        watch = hist[watched[-1]]
        if t > patience and watch[-1] > 0.5 * min(watch[: t - patience]):
            status = "stalled"
            break
    result = DecentralizedResult(
        X,
        net.node_ids,
        method,
        K,
        beta,
        t,
        t * K,
        t * K * bytes_per_round,
        status == "converged",
        status,
        rho,
        hist,
        theta,
    )
    if status in ("stalled", "diverged"):
        last = hist[watched[0]][-1] if hist[watched[0]] else 1.0
        message = (
            f"{method} {status} at iteration {t} (worst {watched[0].replace('_', ' ')} {last:.3g}):"
            f" K={K} gossip rounds shrink disagreement only by rho_K={rho:.3g} on this graph "
            f"(lambda_2={second_eigenvalue(net.W):.4f})"
        )
        if method == "gossip":
            logger.warning("%s; the naive gossip power method has a consensus bias floor", message)
        elif strict:
            raise InsufficientMixingError(
                f"{message}; use more rounds (K={recommended_rounds(net.W)} gives rho_K <= 0.01)", result
            )
        else:
            logger.warning(message)
    return result


def decentralized_pca(
    A_local: np.ndarray,
    k: int,
    *,
    W: np.ndarray,
    method: str = "accelerated",
    K: int = 6,
    beta: float | None = None,
    tol: float = 1e-6,
    max_iter: int = 5000,
    seed=None,
    X0=None,
    reference: np.ndarray | None = None,
    graph=None,
    patience: int | None = None,
    strict: bool = True,
    backend: str = "sim",
    monitor: str = "reference",
) -> DecentralizedResult:
    """Decentralized top-``k`` PCA on the simulated network (vectorised over nodes).

    Parameters
    ----------
    A_local : array (n_nodes, d, d)
        Local symmetric matrices; the target is the top-``k`` eigenspace of their mean.
    k : int
    W : array (n_nodes, n_nodes)
        Gossip matrix (validated: symmetric, doubly stochastic, connected, on ``graph`` when given).
    method : {"gossip", "deepca", "accelerated"}
    K : int
        FastMix rounds per iteration.
    beta : float, optional
        Momentum of the accelerated method; default ``lambda_{k+1}(A)^2 / 4`` from the global spectrum
        (the oracle value the theory assumes). Ignored (0) for the other methods.
    tol : float
        Target worst-node ``sin theta``.
    reference : array (d, k), optional
        True top-``k`` basis; computed with ``numpy.linalg.eigh`` of the mean matrix when omitted.
    monitor : {"reference", "residual"}
        ``"reference"``: stop on the worst node's ``sin theta`` to ``reference``. ``"residual"``: stop, as a
        real deployment must, on the consensus distance and the residual of the consensus basis (see
        :func:`run_decentralized`); ``reference`` is then not used.
    patience : int, optional
        Stall window (iterations); default ``max(100, 3 ln 2 / Delta_k)``, three halving times of the
        non-accelerated method, ``Delta_k = 1 - lambda_{k+1} / lambda_k``.
    strict : bool
        Raise :class:`InsufficientMixingError` when a tracking method stalls or diverges (see
        :func:`run_decentralized`).
    backend : {"sim", "mpi"}
        ``"sim"``: every node in this process, vectorised. ``"mpi"``: one process per node under
        ``mpiexec`` started here (:func:`icml26.noisypower.mpi.run_mpi`); identical results up to rounding.
        On a cluster, run :mod:`icml26.noisypower.mpi` under your own ``mpiexec`` instead.

    Returns
    -------
    DecentralizedResult
    """
    A_local = np.asarray(A_local, dtype=float)
    if A_local.ndim != 3 or A_local.shape[1] != A_local.shape[2]:
        raise ValueError(f"A_local must have shape (n_nodes, d, d); got {A_local.shape}")
    if not np.all(np.isfinite(A_local)):
        raise ValueError("local matrices have NaN or inf entries")
    if A_local.size and np.max(np.abs(A_local)) > 1e100:  # products and squared eigenvalues would overflow
        raise ValueError(
            f"local matrix entries reach {np.max(np.abs(A_local)):.3g} (> 1e100): products overflow float64; rescale"
        )
    if np.max(np.abs(A_local - A_local.transpose(0, 2, 1))) > 1e-10 * max(np.max(np.abs(A_local)), 1e-300):
        raise ValueError("local matrices must be symmetric")
    n, d, _ = A_local.shape
    if not isinstance(k, (int, np.integer)) or not 1 <= k < d:
        raise ValueError(f"need 1 <= k < d; got k={k}, d={d}")
    if not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"K (gossip rounds per iteration) must be a positive integer; got {K!r}")
    if not 0 < tol < 1:  # tol >= 1 (or inf) would report convergence at the first iteration
        raise ValueError(f"tol must be in (0, 1); got {tol}")
    W_shape = np.shape(W)
    if len(W_shape) == 2 and W_shape[0] == W_shape[1] and W_shape[0] != n:  # before the spectral checks,
        # whose message would blame the graph
        raise ValueError(f"mixing matrix is for {W_shape[0]} nodes, data for {n}: need shape ({n}, {n})")
    if W_shape != (n, n):
        raise ValueError(f"mixing matrix must have shape ({n}, {n}) for {n} nodes of data; got {W_shape}")
    W = validate_mixing(W, graph)
    vals, vecs = np.linalg.eigh(A_local.mean(axis=0))
    vals, vecs = vals[::-1], vecs[:, ::-1]
    if reference is None:
        reference = vecs[:, :k]
    if method == "accelerated":
        beta = float(vals[k]) ** 2 / 4.0 if beta is None else float(beta)
    else:
        beta = 0.0
    if patience is None:
        rel_gap = max(1.0 - float(vals[k]) / max(float(vals[k - 1]), 1e-300), 1e-6)
        patience = max(100, int(np.ceil(3 * np.log(2) / rel_gap)))
    if X0 is None:
        X0 = np.random.default_rng(seed).standard_normal((d, k))
    X0, reference = np.asarray(X0, dtype=float), np.asarray(reference, dtype=float)
    for name, M in (("X0", X0), ("reference", reference)):  # a wrong k would silently change the stopping test
        if M.shape != (d, k):
            raise ValueError(f"{name} must have shape {(d, k)} (d, k); got {M.shape}")
        if not np.all(np.isfinite(M)):
            raise ValueError(f"{name} has NaN or inf entries")
    X0 = qr_pos(X0)[0]
    if monitor not in ("reference", "residual"):
        raise ValueError(f"monitor must be 'reference' or 'residual'; got {monitor!r}")
    reference = qr_pos(reference)[0] if monitor == "reference" else None
    if backend == "sim":
        return run_decentralized(
            SimNetwork(W),
            A_local,
            k,
            method=method,
            K=K,
            beta=beta,
            tol=tol,
            max_iter=max_iter,
            X0=X0,
            reference=reference,
            patience=patience,
            strict=strict,
        )
    if backend != "mpi":
        raise ValueError(f"backend must be 'sim' or 'mpi'; got {backend!r}")
    from icml26.noisypower.mpi import run_mpi

    result = run_mpi(
        A_local,
        k,
        W=W,
        method=method,
        K=K,
        beta=beta,
        tol=tol,
        max_iter=max_iter,
        X0=X0,
        reference=reference,
        patience=patience,
    )
    if strict and method != "gossip" and result.status in ("stalled", "diverged"):
        raise InsufficientMixingError(
            f"{method} {result.status} at iteration {result.n_iter} with K={K} gossip rounds "
            f"(rho_K={result.mixing_contraction:.3g}); use more rounds (K={recommended_rounds(W)} gives rho_K <= 0.01)",
            result,
        )
    return result
