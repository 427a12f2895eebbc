"""Diffusion baseline for the latency comparison: an EDM sampler (Karras et al. 2022) over the same U-Net.

A diffusion forecaster (GenCast-style) draws each member-step by integrating the probability-flow ODE
from noise, calling its denoiser ``2 * n_steps - 1`` times with Heun's method, where U-Cast calls its network
once. Only latency is compared (weights may be random): the network and grid are identical.

Denoiser with EDM preconditioning (sigma_data = 1)::

    D(x; sigma) = c_skip x + c_out F([c_in x, cond, c_noise]),   c_skip = 1 / (sigma^2 + 1),
    c_out = sigma / sqrt(sigma^2 + 1),  c_in = 1 / sqrt(sigma^2 + 1),  c_noise = log(sigma) / 4
"""

from __future__ import annotations

import torch
from torch import nn

from icml26.ucast.config import ModelConfig
from icml26.ucast.model import UNet

__all__ = ["EDMForecaster"]


class EDMForecaster(nn.Module):
    """Conditional EDM denoiser of the next-step residual given (z_{t-1}, z_t, static).

    Parameters
    ----------
    cfg : ModelConfig
    n_channels, n_cond : int
        Target channels C and conditioning channels (2 C + static + forcings).
    """

    def __init__(self, cfg: ModelConfig, n_channels: int, n_cond: int) -> None:
        super().__init__()
        self.n_channels = n_channels
        self.net = UNet(n_channels + n_cond + 1, n_channels, cfg)  # +1: the noise-level map

    def denoise(self, x: torch.Tensor, sigma: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """D(x; sigma) for x of shape (B, C, H, W), scalar sigma, cond (B, n_cond, H, W)."""
        s2 = sigma**2 + 1
        noise_map = (torch.log(sigma) / 4).expand(x.shape[0], 1, *x.shape[-2:]).to(x.dtype)
        f = self.net(torch.cat([x / s2.sqrt(), cond, noise_map], dim=1))
        return x / s2 + sigma / s2.sqrt() * f

    @torch.no_grad()
    def sample(
        self, cond: torch.Tensor, n_steps: int = 20, sigma_min: float = 0.002, sigma_max: float = 80.0, rho: float = 7.0
    ) -> torch.Tensor:
        """One residual sample per row of ``cond`` with the EDM Heun sampler (2 n_steps - 1 evaluations)."""
        if n_steps < 1:
            raise ValueError("n_steps must be >= 1")
        i = torch.arange(n_steps, dtype=torch.float64)
        sigmas = sigma_max ** (1 / rho) + i / max(1, n_steps - 1) * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))
        sigmas = torch.cat([sigmas**rho, torch.zeros(1, dtype=torch.float64)]).to(cond.device, cond.dtype)
        b, _, h, w = cond.shape
        x = torch.randn(b, self.n_channels, h, w, device=cond.device, dtype=cond.dtype) * sigmas[0]
        for k in range(n_steps):
            s, s_next = sigmas[k], sigmas[k + 1]
            d = (x - self.denoise(x, s, cond)) / s
            x_next = x + (s_next - s) * d
            if s_next > 0:  # Heun correction
                d2 = (x_next - self.denoise(x_next, s_next, cond)) / s_next
                x_next = x + (s_next - s) * 0.5 * (d + d2)
            x = x_next
        return x

    @torch.no_grad()
    def rollout(
        self,
        z_prev: torch.Tensor,
        z_cur: torch.Tensor,
        static: torch.Tensor,
        members: int,
        steps: int,
        n_steps: int = 20,
    ) -> torch.Tensor:
        """Ensemble rollout like :func:`icml26.ucast.forecast.rollout`; returns (members, steps, N, C, H, W)."""
        n = z_cur.shape[0]
        a, b = z_prev.repeat(members, 1, 1, 1), z_cur.repeat(members, 1, 1, 1)
        st = static.unsqueeze(0).expand(b.shape[0], -1, -1, -1)
        out = []
        for _ in range(steps):
            a, b = b, b + self.sample(torch.cat([a, b, st], dim=1), n_steps)
            out.append(b.view(members, n, *b.shape[1:]))
        return torch.stack(out, dim=1)
