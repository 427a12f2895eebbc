"""Item calibration: marginal maximum likelihood (with weak priors) from a response matrix with missing values.

The marginal log-likelihood integrates each examinee's ability out on a Gauss-Hermite grid::

    log L = sum_i log sum_q w_q prod_{j observed by i} P_j(theta_q)^x_ij (1 - P_j(theta_q))^(1 - x_ij)

Because the inner product over items is a pair of matrix products ``(N, J) @ (J, Q)``, the whole objective
is one differentiable torch expression of shape (N, Q); it is maximised with L-BFGS. Weak priors keep
3PL and sparse items finite: log a ~ N(0, 1), b ~ N(0, 3^2), c ~ Beta(2, 8) (3PL only).
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import torch

from icml26._util.progress import progress
from icml26.gpm.irt import ItemBank, check_responses, quadrature_grid

logger = logging.getLogger(__name__)


class CalibrationWarning(UserWarning):
    """Items or examinees were excluded from calibration."""


def flag_items(responses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items nobody answered, items everyone answered the same way, examinees with no responses.

    Returns
    -------
    unanswered, constant : bool arrays of shape (n_items,)
    empty_rows : bool array of shape (n_examinees,)
    """
    x = check_responses(responses)
    obs = ~np.isnan(x)
    n_obs = obs.sum(axis=0)
    n_correct = np.nansum(x, axis=0)
    unanswered = n_obs == 0
    constant = ~unanswered & ((n_correct == 0) | (n_correct == n_obs))
    return unanswered, constant, obs.sum(axis=1) == 0


def calibrate(
    responses,
    model: str = "2pl",
    *,
    n_dims: int = 1,
    n_quad: int | None = None,
    max_iter: int = 200,
    dtype=torch.float64,
) -> tuple[ItemBank, np.ndarray]:
    """Fit an item bank by marginal maximum (penalised) likelihood.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN (missing).
    model : {"1pl", "2pl", "3pl", "mirt2pl"}
        ``1pl`` fits one discrimination shared by all items.
    n_dims : int
        Ability dimensions (``mirt2pl`` only; 1 or 2).
    n_quad : int, optional
        Quadrature points per dimension (default 41 for D = 1, 15 for D = 2).
    max_iter : int
        L-BFGS iterations.

    Returns
    -------
    bank : ItemBank
        Parameters of the kept items only.
    kept : int array
        Column indices of the kept items in ``responses``. Items nobody answered or everyone answered
        the same way, and examinees with no responses, are excluded with a :class:`CalibrationWarning`.
    """
    x = check_responses(responses)
    if model not in ("1pl", "2pl", "3pl", "mirt2pl"):
        raise ValueError(f"model must be 1pl, 2pl, 3pl or mirt2pl; got {model!r}")
    if model != "mirt2pl" and n_dims != 1:
        raise ValueError("only model='mirt2pl' takes n_dims > 1")
    if n_dims not in (1, 2):
        raise ValueError("n_dims must be 1 or 2")
    unanswered, constant, empty = flag_items(x)
    if unanswered.any():
        warnings.warn(
            f"excluding {unanswered.sum()} item(s) nobody answered: {np.flatnonzero(unanswered)[:10].tolist()}",
            CalibrationWarning,
            stacklevel=2,
        )
    if constant.any():
        warnings.warn(
            f"excluding {constant.sum()} item(s) everyone answered the same way: "
            f"{np.flatnonzero(constant)[:10].tolist()}",
            CalibrationWarning,
            stacklevel=2,
        )
    if empty.any():
        warnings.warn(f"excluding {empty.sum()} examinee(s) with no responses", CalibrationWarning, stacklevel=2)
    kept = np.flatnonzero(~unanswered & ~constant)
    x = x[~empty][:, kept]
    if x.shape[0] < 2 or kept.size == 0:
        raise ValueError("calibration needs at least 2 examinees with responses and 1 informative item")

    n_quad = n_quad or (41 if n_dims == 1 else 15)
    points_np, logw_np = quadrature_grid(n_dims, n_quad)
    points = torch.as_tensor(points_np, dtype=dtype)  # (Q, D)
    logw = torch.as_tensor(logw_np, dtype=dtype)  # (Q,)
    obs = torch.as_tensor(~np.isnan(x), dtype=dtype)
    xz = torch.as_tensor(np.nan_to_num(x), dtype=dtype)
    correct, wrong = obs * xz, obs * (1 - xz)  # (N, J)
    n_items = x.shape[1]

    # Starting values: b from the logit of the proportion correct, a = 1, c = 0.15 (3PL).
    pc = np.clip(np.nanmean(x, axis=0), 0.02, 0.98)
    b = torch.tensor(-np.log(pc / (1 - pc)) / 1.0, dtype=dtype, requires_grad=True)
    n_a = 1 if model == "1pl" else n_items
    rng = np.random.default_rng(0)
    log_a0 = np.zeros((n_a, n_dims)) + (0.1 * rng.standard_normal((n_a, n_dims)) if n_dims > 1 else 0.0)
    log_a = torch.tensor(log_a0, dtype=dtype, requires_grad=True)
    logit_c = torch.full((n_items,), float(np.log(0.15 / 0.85)), dtype=dtype, requires_grad=(model == "3pl"))
    params = [b, log_a] + ([logit_c] if model == "3pl" else [])

    def negative_log_posterior() -> torch.Tensor:
        a = torch.exp(log_a).expand(n_items, n_dims)  # (J, D)
        logits = points @ a.T - (a.norm(dim=1) * b)[None, :]  # (Q, J)
        if model == "3pl":
            c = torch.sigmoid(logit_c)
            p = c + (1 - c) * torch.sigmoid(logits)
            logp, log1mp = torch.log(p), torch.log1p(-p)
        else:
            logp, log1mp = torch.nn.functional.logsigmoid(logits), torch.nn.functional.logsigmoid(-logits)
        loglik = correct @ logp.T + wrong @ log1mp.T  # (N, Q)
        marginal = torch.logsumexp(loglik + logw, dim=1).sum()
        prior = -0.5 * (log_a**2).sum() - 0.5 * (b / 3.0).pow(2).sum()
        if model == "3pl":
            c = torch.sigmoid(logit_c)
            prior = prior + (torch.log(c) + 7 * torch.log1p(-c)).sum()  # Beta(2, 8)
        return -(marginal + prior) / x.shape[0]

    opt = torch.optim.LBFGS(params, lr=1.0, max_iter=max_iter, line_search_fn="strong_wolfe", tolerance_grad=1e-7)

    bar = progress(total=max_iter, desc=f"calibrating {model}", unit="eval")

    def closure():
        opt.zero_grad()
        loss = negative_log_posterior()
        loss.backward()
        bar.update()  # one evaluation of the marginal likelihood (a terminal progress bar only)
        return loss

    with bar:
        loss = opt.step(closure)
    logger.info(
        "calibrated %d items on %d examinees: -log posterior / N = %.4f", n_items, x.shape[0], float(loss.detach())
    )
    with torch.no_grad():
        a = torch.exp(log_a).expand(n_items, n_dims).numpy().copy()
        c = torch.sigmoid(logit_c).numpy().copy() if model == "3pl" else None
    return ItemBank(a if n_dims > 1 else a[:, 0], b.detach().numpy().copy(), c, model), kept
