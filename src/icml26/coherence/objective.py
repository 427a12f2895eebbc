"""Coh, the differentiable coherence objective (torch), usable as a regulariser on any non-negative code.

Reconstruction of the paper's objective from its description (a Fréchet-variance loss; see README
"Deviations"). For a batch of B samples with codes A (B, m) >= 0 and sample positions x (B, k):

    f_j     = Fréchet mean of {x_i} weighted by A_ij                 (barycentric map; circular mean on S^1)
    V^col_j = sum_i A_ij d(x_i, f_j)^2 / sum_i A_ij                  (column Fréchet variance)
    g_i     = Fréchet mean of {f_j} weighted by A_ij
    V^row_i = sum_j A_ij d(f_j, g_i)^2 / sum_j A_ij                  (row Fréchet variance)
    cov     = mean_i relu(tau_row - sum_j A_ij) + mean_j relu(tau_col - mean_i A_ij)
    Coh     = mean_j V^col_j + mean_i V^row_i + lambda_cov * cov

The variance terms are scale-free in A; the coverage hinges rule out the trivial minimiser (every feature
firing on a single sample, or on none). A feature that fires on no sample of the batch has ``A_.j = 0`` and
no gradient through its ReLU, so its column hinge alone could never revive it: when the pre-activations
``H`` (A = relu(H)) are given, a dead column's hinge reads ``relu(tau_col - mean_i H_ij)`` instead, which
pushes its pre-activations up until it fires (the coverage condition "every feature is needed", made
effective; like the "ghost gradients" of sparse-autoencoder training). Cost: O(B m k) per batch; the
geometry (an embedding of geodesic or user distances) is computed once, outside training.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["Coh", "coh_loss"]

_EPS = 1e-8


def _wrap(delta: torch.Tensor) -> torch.Tensor:
    return torch.remainder(delta + math.pi, 2 * math.pi) - math.pi


def _means(W: torch.Tensor, P: torch.Tensor, circular: bool) -> torch.Tensor:
    """Weighted Fréchet means: weights W (p, q) over points P (p, k) -> (q, k)."""
    mass = W.sum(0).unsqueeze(1) + _EPS  # (q, 1)
    if circular:
        s = W.T @ torch.sin(P) / mass  # (q, k)
        c = W.T @ torch.cos(P) / mass
        return torch.atan2(s, c + _EPS * (c == 0))
    return W.T @ P / mass


def _sqdist(P: torch.Tensor, Q: torch.Tensor, circular: bool) -> torch.Tensor:
    """Squared distances (p, q); O(p q k)."""
    diff = P.unsqueeze(1) - Q.unsqueeze(0)  # (p, q, k)
    if circular:
        diff = _wrap(diff)
    return (diff**2).sum(-1)


def coh_loss(
    A: torch.Tensor,
    x: torch.Tensor,
    *,
    circular: bool = False,
    lambda_cov: float = 10.0,
    tau_row: float = 0.05,
    tau_col: float = 0.005,
    return_terms: bool = False,
    pre: torch.Tensor | None = None,
):
    """Coh of a batch. ``A`` (B, m) non-negative codes; ``x`` (B, k) sample positions (angles if circular);
    ``pre`` (B, m), optional, the pre-activations with ``A = relu(pre)`` (revives dead columns; see above)."""
    if A.dim() != 2 or x.dim() != 2 or A.shape[0] != x.shape[0]:
        raise ValueError(f"need A (B, m) and x (B, k) with the same B; got {tuple(A.shape)} and {tuple(x.shape)}")
    x = x.to(A.dtype)
    col_mass = A.sum(0)  # (m,)
    row_mass = A.sum(1)  # (B,)
    f = _means(A, x, circular)  # (m, k)  barycentric feature positions
    d_xf = _sqdist(x, f, circular)  # (B, m)
    v_col = (A * d_xf).sum(0) / (col_mass + _EPS)  # (m,)
    g = _means(A.T, f, circular)  # (B, k)
    d_gf = _sqdist(g, f, circular)  # (B, m)
    v_row = (A * d_gf).sum(1) / (row_mass + _EPS)  # (B,)
    live = (col_mass > 0).to(A.dtype)
    covered = (row_mass > 0).to(A.dtype)
    var_col = (v_col * live).sum() / live.sum().clamp_min(1.0)
    var_row = (v_row * covered).sum() / covered.sum().clamp_min(1.0)
    col_use = A.mean(0)  # (m,)
    if pre is not None:  # a dead column's hinge acts on its pre-activations: the ReLU passes it no gradient
        col_use = torch.where(col_mass > 0, col_use, pre.mean(0))
    cov = torch.relu(tau_row - row_mass).mean() + torch.relu(tau_col - col_use).mean()
    total = var_col + var_row + lambda_cov * cov
    if return_terms:
        return total, {"column_variance": var_col, "row_variance": var_row, "coverage": cov}
    return total


class Coh(nn.Module):
    """Coh as a module holding the once-computed sample positions; call with codes and batch indices.

    >>> coh = Coh(positions, circular=True)          # positions (N, k): angles, or an embedding
    >>> loss = recon + lam * coh(codes, batch_idx)    # codes (B, m) >= 0, batch_idx (B,)
    """

    def __init__(
        self,
        positions,
        *,
        circular: bool = False,
        lambda_cov: float = 10.0,
        tau_row: float = 0.05,
        tau_col: float = 0.005,
    ):
        super().__init__()
        pos = torch.as_tensor(positions, dtype=torch.float32)
        pos = pos.unsqueeze(1) if pos.dim() == 1 else pos
        if pos.dim() != 2 or not torch.isfinite(pos).all():
            raise ValueError("positions must be a finite (N,) or (N, k) array")
        self.register_buffer("positions", pos)
        self.circular = circular
        self.lambda_cov = lambda_cov
        self.tau_row = tau_row
        self.tau_col = tau_col

    def forward(
        self,
        A: torch.Tensor,
        idx: torch.Tensor | None = None,
        return_terms: bool = False,
        pre: torch.Tensor | None = None,
    ):
        x = self.positions if idx is None else self.positions[idx]
        return coh_loss(
            A,
            x,
            circular=self.circular,
            lambda_cov=self.lambda_cov,
            tau_row=self.tau_row,
            tau_col=self.tau_col,
            return_terms=return_terms,
            pre=pre,
        )
