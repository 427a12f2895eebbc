"""Inference with the trained flows as neural ODEs (torchdiffeq): compression, decompression, rollouts.

- :func:`compress`: integrate dx/dtau = u_phi(x, tau) from tau = 1 (data) to tau = 0 (the "flowed"
  representation of each frame); :func:`decompress` integrates back from 0 to 1.
- :func:`simulate`: the "simulated" representation — integrate dx/dt = v_theta(x, tau, s, x_hist) in time at
  a fixed tau, one frame interval at a time (s = t - k inside interval k, the history is the last h + 1
  frames of the rollout).

Solvers: ``"dopri5"`` (adaptive Dormand–Prince, ``rtol``/``atol``, step count capped by ``max_steps``) or
``"rk4"`` (fixed step, ``n_steps`` per unit interval). Every call returns the number of function evaluations
(NFE) — the cost of inference.
"""

from __future__ import annotations

import logging

import torch
from torchdiffeq import odeint

from icml26.dualflow.model import DCFModel

__all__ = ["SOLVERS", "compress", "decompress", "simulate"]

logger = logging.getLogger(__name__)
SOLVERS = ("dopri5", "rk4")


class _Counted(torch.nn.Module):
    """Wrap a vector field f(t, x) and count its evaluations."""

    def __init__(self, field) -> None:
        super().__init__()
        self.field = field
        self.nfe = 0

    def forward(self, t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        self.nfe += 1
        return self.field(t, x)


def _solve(
    field, x: torch.Tensor, t0: float, t1: float, method: str, rtol: float, atol: float, n_steps: int, max_steps: int
) -> tuple[torch.Tensor, int]:
    if method not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {method!r}")
    if t0 == t1:
        return x, 0
    counted = _Counted(field)
    t = torch.tensor([t0, t1], dtype=x.dtype, device=x.device)
    if method == "rk4":
        options = {"step_size": abs(t1 - t0) / n_steps}
        out = odeint(counted, x, t, method="rk4", options=options)
    else:
        out = odeint(counted, x, t, method="dopri5", rtol=rtol, atol=atol, options={"max_num_steps": max_steps})
    return out[-1], counted.nfe


def _compressive_field(model: DCFModel):
    """u_phi as an ODE right-hand side f(tau, x) for the solvers; (B, D) -> (B, D)."""

    def field(tau: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return model.compressive(x, tau.expand(x.shape[0], 1))

    return field


@torch.no_grad()
def compress(
    model: DCFModel,
    x1: torch.Tensor,
    method: str = "dopri5",
    rtol: float = 1e-5,
    atol: float = 1e-5,
    n_steps: int = 8,
    max_steps: int = 2000,
    tau: float = 0.0,
) -> tuple[torch.Tensor, int]:
    """Flow frames from tau = 1 down to level ``tau`` (default 0) with u_phi; (B, D) -> ((B, D), NFE)."""

    return _solve(_compressive_field(model), x1, 1.0, float(tau), method, rtol, atol, n_steps, max_steps)


@torch.no_grad()
def decompress(
    model: DCFModel,
    x0: torch.Tensor,
    method: str = "dopri5",
    rtol: float = 1e-5,
    atol: float = 1e-5,
    n_steps: int = 8,
    max_steps: int = 2000,
    tau: float = 0.0,
) -> tuple[torch.Tensor, int]:
    """Flow states from level ``tau`` (default 0) up to tau = 1 with u_phi; (B, D) -> ((B, D), NFE)."""

    return _solve(_compressive_field(model), x0, float(tau), 1.0, method, rtol, atol, n_steps, max_steps)


@torch.no_grad()
def simulate(
    model: DCFModel,
    init: torch.Tensor,
    n_frames: int,
    tau: float = 0.0,
    dt: float = 1.0,
    method: str = "rk4",
    rtol: float = 1e-5,
    atol: float = 1e-5,
    n_steps: int = 4,
    max_steps: int = 2000,
) -> tuple[torch.Tensor, int]:
    """Roll the dynamical flow forward at fixed tau.

    Parameters
    ----------
    init : tensor of shape (B, h+1, D)
        The last h + 1 states (already at level tau) before the rollout.
    n_frames : int
        Number of future frames to produce.

    Returns
    -------
    (tensor of shape (B, n_frames, D), total NFE)
    """
    B, H, _ = init.shape
    if H != model.history + 1:
        raise ValueError(f"init must hold h + 1 = {model.history + 1} frames; got {H}")
    hist = init.clone()
    tau_col = torch.full((B, 1), float(tau), dtype=init.dtype, device=init.device)
    frames, nfe = [], 0
    for _ in range(n_frames):

        def field(s: torch.Tensor, x: torch.Tensor, hist=hist) -> torch.Tensor:
            return dt * model.dynamical(x, tau_col, s.expand(B, 1), hist)  # dx/ds = dt * dx/dt

        nxt, n = _solve(field, hist[:, -1], 0.0, 1.0, method, rtol, atol, n_steps, max_steps)
        nfe += n
        frames.append(nxt)
        hist = torch.cat([hist[:, 1:], nxt[:, None]], dim=1)
    return torch.stack(frames, dim=1), nfe
