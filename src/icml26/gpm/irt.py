"""Item response theory core: item banks, response probabilities, ability estimation (MLE / MAP / EAP).

Every function is vectorised over examinees: responses are a float array of shape ``(n_examinees, n_items)``
holding 1.0 (correct), 0.0 (wrong) or NaN (not administered / missing).

Model (compensatory multidimensional 3PL, which contains 1PL, 2PL, 3PL and MIRT-2PL)::

    logit_j(theta) = a_j . theta - ||a_j|| b_j            # = a_j (theta - b_j) when D = 1
    P_j(theta)     = c_j + (1 - c_j) sigmoid(logit_j)    # c_j = 0 for 1PL / 2PL / MIRT-2PL
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logsumexp

MODELS = ("1pl", "2pl", "3pl", "mirt2pl")
THETA_BOUND = 6.0  # MLE estimates are clipped to [-6, 6] (all-correct / all-wrong patterns diverge)


@dataclass(frozen=True)
class ItemBank:
    """A calibrated item bank.

    Parameters
    ----------
    a : array of shape (n_items,) or (n_items, n_dims)
        Discriminations (loadings); strictly positive and finite.
    b : array of shape (n_items,)
        Difficulties (for ``D > 1`` the multidimensional difficulty, logit = a.theta - ||a|| b).
    c : array of shape (n_items,), optional
        Lower asymptotes (guessing) in [0, 1); zeros when omitted.
    model : {"1pl", "2pl", "3pl", "mirt2pl"}
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray | None = None
    model: str = "2pl"

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {self.model!r}")
        a = np.asarray(self.a, dtype=float)
        a = a[:, None] if a.ndim == 1 else a
        b = np.asarray(self.b, dtype=float).reshape(-1)
        c = np.zeros_like(b) if self.c is None else np.asarray(self.c, dtype=float).reshape(-1)
        if a.ndim != 2 or a.shape[0] != b.shape[0] or c.shape != b.shape:
            raise ValueError(f"a, b, c must describe the same items; got shapes {a.shape}, {b.shape}, {c.shape}")
        if b.size == 0:
            raise ValueError("an item bank needs at least one item")
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            bad = np.flatnonzero(~(np.isfinite(a) & (a > 0)).all(axis=1))
            raise ValueError(f"discriminations must be finite and > 0; bad items {bad[:10].tolist()}")
        if not np.all(np.isfinite(b)):
            raise ValueError(f"difficulties must be finite; bad items {np.flatnonzero(~np.isfinite(b))[:10].tolist()}")
        if np.any((c < 0) | (c >= 1)) or not np.all(np.isfinite(c)):
            raise ValueError("guessing parameters c must lie in [0, 1)")
        if self.model != "mirt2pl" and a.shape[1] != 1:
            raise ValueError(f"model {self.model!r} is unidimensional but a has {a.shape[1]} columns; use 'mirt2pl'")
        if self.model in ("1pl", "2pl", "mirt2pl") and np.any(c != 0):
            raise ValueError(f"model {self.model!r} has no guessing parameter; use '3pl'")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)

    @property
    def n_items(self) -> int:
        return self.b.shape[0]

    @property
    def n_dims(self) -> int:
        return self.a.shape[1]

    def subset(self, items) -> ItemBank:
        """The bank restricted to ``items`` (indices or boolean mask)."""
        return ItemBank(self.a[items], self.b[items], self.c[items], self.model)

    # ---- response model -------------------------------------------------------------------------
    def logits(self, theta) -> np.ndarray:
        """Logits of shape (n_examinees, n_items) for abilities ``theta`` of shape (n,) or (n, D)."""
        theta = _as_theta(theta, self.n_dims)  # (N, D)
        return theta @ self.a.T - (np.linalg.norm(self.a, axis=1) * self.b)[None, :]

    def prob(self, theta) -> np.ndarray:
        """P(correct) of shape (n_examinees, n_items)."""
        return self.c + (1.0 - self.c) * expit(self.logits(theta))

    def information(self, theta) -> np.ndarray:
        """Fisher information of each item, shape (n_examinees, n_items) (trace for D > 1).

        3PL: I_j = ||a_j||^2 (P - c)^2 (1 - P) / ((1 - c)^2 P); 2PL: ||a_j||^2 P (1 - P).
        """
        p = np.clip(self.prob(theta), 1e-12, 1 - 1e-12)
        a2 = np.sum(self.a**2, axis=1)
        return a2 * (p - self.c) ** 2 * (1 - p) / ((1 - self.c) ** 2 * p)

    def sample(self, theta, rng: np.random.Generator) -> np.ndarray:
        """Simulated 0/1 responses of shape (n_examinees, n_items)."""
        return (rng.random((np.atleast_1d(theta).shape[0], self.n_items)) < self.prob(theta)).astype(float)


def _as_theta(theta, n_dims: int) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    if theta.ndim == 0:
        theta = theta[None]
    if theta.ndim == 1:
        theta = theta[:, None] if n_dims == 1 else theta[None, :]
    if theta.shape[1] != n_dims:
        raise ValueError(f"theta has {theta.shape[1]} dimensions, the bank {n_dims}")
    return theta


def check_responses(responses, n_items: int | None = None) -> np.ndarray:
    """Validate a response matrix: 2-D, values 0, 1 or NaN; returns it as float64."""
    x = np.asarray(responses, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"responses must be a 2-D (examinees, items) matrix; got {x.ndim} dimensions")
    if n_items is not None and x.shape[1] != n_items:
        raise ValueError(f"responses have {x.shape[1]} items, the bank {n_items}")
    obs = ~np.isnan(x)
    bad = obs & (x != 0) & (x != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"responses must be 0, 1 or missing; found {x[i, j]!r} at examinee {i}, item {j}")
    return x


def log_likelihood(bank: ItemBank, theta, responses) -> np.ndarray:
    """Log-likelihood of each examinee's observed responses, shape (n_examinees,)."""
    x = check_responses(responses, bank.n_items)
    p = np.clip(bank.prob(theta), 1e-12, 1 - 1e-12)
    obs = ~np.isnan(x)
    xz = np.where(obs, x, 0.0)
    return np.sum(obs * (xz * np.log(p) + (1 - xz) * np.log1p(-p)), axis=1)


def score_gradient(bank: ItemBank, theta, responses) -> tuple[np.ndarray, np.ndarray]:
    """Score (d log L / d theta) and expected information, for D = 1.

    Returns arrays of shape (n_examinees, n_items): per-item score contributions (0 where missing)
    and per-item Fisher information (0 where missing).
    """
    x = check_responses(responses, bank.n_items)
    p = np.clip(bank.prob(theta), 1e-12, 1 - 1e-12)
    obs = ~np.isnan(x)
    a = np.linalg.norm(bank.a, axis=1)
    c = bank.c
    # d log L_j / d theta = a (x - P)(P - c) / (P (1 - c))   (reduces to a (x - P) for c = 0)
    g = a * (np.where(obs, x, 0.0) - p) * (p - c) / (p * (1 - c))
    info = a**2 * (p - c) ** 2 * (1 - p) / ((1 - c) ** 2 * p)
    return g * obs, info * obs


def estimate_ability(
    bank: ItemBank,
    responses,
    method: str = "map",
    *,
    prior_sd: float = 1.0,
    n_iter: int = 100,
    n_quad: int = 61,
) -> tuple[np.ndarray, np.ndarray]:
    """Ability estimates and standard errors for every examinee.

    Parameters
    ----------
    bank : ItemBank
    responses : array of shape (n_examinees, n_items)
        1.0, 0.0 or NaN (not administered).
    method : {"mle", "map", "eap"}
        ``mle``: Fisher scoring on the log-likelihood, clipped to [-6, 6] (patterns with all answers
        correct or all wrong have no finite MLE). ``map``: Fisher scoring on log-likelihood plus the
        N(0, prior_sd^2 I) log-prior. ``eap``: posterior mean on a Gauss-Hermite grid (D <= 2).
    prior_sd : float
    n_iter : int
        Fisher-scoring iterations (MLE / MAP).
    n_quad : int
        Quadrature points per dimension (EAP).

    Returns
    -------
    theta : array of shape (n_examinees,) or (n_examinees, D)
    se : array of the same shape
        sqrt(diag(I^-1)) for MLE / MAP (I: Fisher information, plus the prior precision for MAP; for D = 1
        that is 1 / sqrt(I)), posterior SD for EAP.
    """
    x = check_responses(responses, bank.n_items)
    if method not in ("mle", "map", "eap"):
        raise ValueError(f"method must be 'mle', 'map' or 'eap'; got {method!r}")
    if prior_sd <= 0:
        raise ValueError("prior_sd must be > 0")
    n_obs = np.sum(~np.isnan(x), axis=1)
    if method == "mle" and np.any(n_obs == 0):
        raise ValueError(f"examinees {np.flatnonzero(n_obs == 0)[:10].tolist()} have no responses: no MLE exists")
    if method == "eap":
        theta, se = _eap(bank, x, prior_sd, n_quad)
    else:
        theta, se = _fisher_scoring(bank, x, 1.0 / prior_sd**2 if method == "map" else 0.0, n_iter)
    if bank.n_dims == 1:
        return theta[:, 0], se[:, 0]
    return theta, se


def _fisher_scoring(bank: ItemBank, x: np.ndarray, precision: float, n_iter: int):
    """theta <- theta + (I(theta) + precision)^-1 (score - precision theta), batched over examinees."""
    n, d = x.shape[0], bank.n_dims
    theta = np.zeros((n, d))
    obs = ~np.isnan(x)
    xz = np.where(obs, x, 0.0)
    eye = np.eye(d)
    for _ in range(n_iter):
        p = np.clip(bank.prob(theta), 1e-12, 1 - 1e-12)  # (N, J)
        # w = (P - c) / (P (1 - c)); score = sum_j w (x - P) a_j; info = sum_j w (P - c)(1 - P)/(1 - c) a_j a_j^T
        w = (p - bank.c) / (p * (1 - bank.c)) * obs
        score = ((xz - p) * w) @ bank.a - precision * theta  # (N, D)
        h = w * (p - bank.c) * (1 - p) / (1 - bank.c)  # (N, J)
        info = np.einsum("nj,jd,je->nde", h, bank.a, bank.a) + (precision + 1e-9) * eye  # (N, D, D)
        step = np.linalg.solve(info, score[..., None])[..., 0]
        step = np.clip(step, -1.0, 1.0)  # damped: keeps flat-likelihood patterns from overshooting
        theta = np.clip(theta + step, -THETA_BOUND, THETA_BOUND)
        if np.max(np.abs(step)) < 1e-8:
            break
    p = np.clip(bank.prob(theta), 1e-12, 1 - 1e-12)
    w = (p - bank.c) / (p * (1 - bank.c)) * obs
    h = w * (p - bank.c) * (1 - p) / (1 - bank.c)
    info = np.einsum("nj,jd,je->nde", h, bank.a, bank.a) + precision * eye
    return theta, _standard_errors(info)


def _standard_errors(info: np.ndarray) -> np.ndarray:
    """sqrt(diag(I^-1)) for a batch of information matrices (N, D, D); inf where I is singular.

    For D > 1 the marginal SE of each ability needs the inverse, not 1 / sqrt(I_dd) (which ignores the
    correlation between dimensions and understates the SE).
    """
    if info.shape[1] == 1:
        with np.errstate(divide="ignore"):
            return 1.0 / np.sqrt(info[:, :, 0])
    se = np.full(info.shape[:2], np.inf)
    diag = np.diagonal(info, axis1=1, axis2=2)
    ok = np.linalg.det(info) > 1e-12 * np.maximum(np.prod(diag, axis=1), 1e-300)
    if ok.any():
        se[ok] = np.sqrt(np.diagonal(np.linalg.inv(info[ok]), axis1=1, axis2=2))
    return se


def quadrature_grid(n_dims: int, n_quad: int, prior_sd: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes (n_quad**D, D) and log-weights for the N(0, prior_sd^2 I) prior."""
    if n_dims > 2:
        raise ValueError("quadrature is implemented for D <= 2 (use MAP for more dimensions)")
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_quad)
    logw = np.log(weights / math.sqrt(2 * math.pi))
    grids = np.meshgrid(*[nodes] * n_dims, indexing="ij")
    points = np.stack([g.ravel() for g in grids], axis=1) * prior_sd
    logws = np.meshgrid(*[logw] * n_dims, indexing="ij")
    return points, sum(lw.ravel() for lw in logws)


def grid_log_likelihood(bank: ItemBank, x: np.ndarray, points: np.ndarray) -> np.ndarray:
    """log p(x_i | theta_q) for every examinee and grid point, shape (N, Q), as two matmuls."""
    p = np.clip(bank.prob(points), 1e-12, 1 - 1e-12)  # (Q, J)
    obs = ~np.isnan(x)
    xz = np.where(obs, x, 0.0)
    return (obs * xz) @ np.log(p).T + (obs * (1 - xz)) @ np.log1p(-p).T


def _eap(bank: ItemBank, x: np.ndarray, prior_sd: float, n_quad: int):
    points, logw = quadrature_grid(bank.n_dims, n_quad, prior_sd)
    logpost = grid_log_likelihood(bank, x, points) + logw  # (N, Q)
    post = np.exp(logpost - logsumexp(logpost, axis=1, keepdims=True))
    mean = post @ points  # (N, D)
    var = post @ points**2 - mean**2
    return mean, np.sqrt(np.maximum(var, 0.0))
