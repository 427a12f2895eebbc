"""Diffusion baseline: an EDM forecaster (Karras et al. 2022) over the same U-Net, and its training loop.

A diffusion forecaster draws each member-step by integrating the probability-flow ODE from noise, calling
its denoiser ``2 * n_steps - 1`` times with Heun's method, where U-Cast calls its network once. Unlike
GenCast's, this one has no noise embedding inside the blocks (the noise level enters as one input map) and a
deterministic sampler (no churn). ``paper-latency`` times an untrained one (latency only);
``fast-inference-v2`` trains one with :func:`train_edm` on the same data and compares speed at equal CRPS.

Targets live in U-Cast's residual space r = (z_{t+1} - z_t) / res_std (unit scale, hence sigma_data = 1).

Denoiser with EDM preconditioning (sigma_data = 1)::

    D(x; sigma) = c_skip x + c_out F([c_in x, cond, c_noise]),   c_skip = 1 / (sigma^2 + 1),
    c_out = sigma / sqrt(sigma^2 + 1),  c_in = 1 / sqrt(sigma^2 + 1),  c_noise = log(sigma) / 4
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.model import UNet

__all__ = ["EDMForecaster", "edm_loss", "train_edm"]

#: log-normal training noise levels, ln sigma ~ N(P_MEAN, P_STD^2): EDM's (-1.2, 1.2) is for sigma_data = 0.5;
#: our residuals have unit scale, so the mean moves up by ln 2
P_MEAN, P_STD = -1.2 + float(np.log(2.0)), 1.2


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
        self.n_channels, self.n_cond = n_channels, n_cond
        self.net = UNet(n_channels + n_cond + 1, n_channels, cfg)  # +1: the noise-level map

    def denoise(self, x: torch.Tensor, sigma: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        """D(x; sigma) for x of shape (B, C, H, W), sigma scalar or (B, 1, 1, 1), cond (B, n_cond, H, W)."""
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
        if not 0 < sigma_min < sigma_max:
            raise ValueError(f"need 0 < sigma_min < sigma_max, got {sigma_min}, {sigma_max}")
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
        res_std: torch.Tensor | float = 1.0,
        sigma_max: float = 80.0,
    ) -> torch.Tensor:
        """Ensemble rollout like :func:`icml26.ucast.forecast.rollout`; returns (members, steps, N, C, H, W).

        Each step adds ``res_std`` times a residual sampled with ``n_steps`` Heun steps from ``sigma_max``
        (``res_std`` of shape (C, 1, 1) for a trained model).
        """
        if members < 1 or steps < 1:
            raise ValueError("members and steps must be >= 1")
        if z_prev.shape != z_cur.shape:
            raise ValueError(f"z_prev {tuple(z_prev.shape)} and z_cur {tuple(z_cur.shape)} differ")
        n = z_cur.shape[0]
        a, b = z_prev.repeat(members, 1, 1, 1), z_cur.repeat(members, 1, 1, 1)
        st = static.unsqueeze(0).expand(b.shape[0], -1, -1, -1).to(b.dtype)
        out = []
        for _ in range(steps):
            a, b = b, b + res_std * self.sample(torch.cat([a, b, st], dim=1), n_steps, sigma_max=sigma_max)
            out.append(b.view(members, n, *b.shape[1:]))
        return torch.stack(out, dim=1)


def edm_loss(model: EDMForecaster, r: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
    """EDM denoising loss for residuals ``r`` (B, C, H, W) given ``cond`` (B, n_cond, H, W).

    ln sigma ~ N(P_MEAN, P_STD^2) per sample, x = r + sigma n, and
    L = mean lambda(sigma) |D(x; sigma) - r|^2 with lambda = (sigma^2 + 1) / sigma^2 (sigma_data = 1).
    """
    sigma = torch.exp(P_MEAN + P_STD * torch.randn(r.shape[0], 1, 1, 1, dtype=r.dtype, device=r.device))
    x = r + sigma * torch.randn_like(r)
    weight = (sigma**2 + 1) / sigma**2
    return (weight * (model.denoise(x, sigma, cond) - r) ** 2).mean()


def train_edm(
    model: EDMForecaster,
    z: np.ndarray,
    static: np.ndarray,
    res_std: torch.Tensor,
    cfg: TrainConfig,
    seed: int = 0,
) -> tuple[EDMForecaster, list[float]]:
    """Train the denoiser on windows of normalised trajectories ``z`` (N, T, C, H, W) with U-Cast's optimiser.

    ``cfg`` gives the steps, batch size, learning rate, warm-up + cosine schedule, AdamW settings, gradient
    clipping and EMA decay (:func:`icml26.ucast.train.make_optimizers` / ``lr_factor``, as U-Cast's stages).
    Each step draws ``cfg.batch_size`` windows (z_{t-1}, z_t, z_{t+1}) at random; the target is the residual
    (z_{t+1} - z_t) / res_std, the condition [z_{t-1}, z_t, static]. Returns (EMA model in eval mode, losses).
    """
    from icml26.ucast.train import apply_update, lr_factor, make_optimizers

    z = np.asarray(z, dtype=np.float32)
    if z.ndim != 5:
        raise ValueError(f"z must have shape (N, T, C, H, W), got {z.shape}")
    n_traj, frames, c, h, w = z.shape
    if frames < 3:
        raise ValueError(f"trajectories need >= 3 frames, got {frames}")
    if c != model.n_channels:
        raise ValueError(f"z has {c} channels; the model predicts {model.n_channels}")
    if not np.isfinite(z).all():
        raise ValueError("z contains NaN or inf")
    static = np.asarray(static, np.float32).reshape(-1, h, w) if np.size(static) else np.zeros((0, h, w), np.float32)
    if 2 * c + static.shape[0] != model.n_cond:
        raise ValueError(f"2 x {c} channels + {static.shape[0]} static fields != the model's {model.n_cond} conditions")
    gen = np.random.default_rng(seed)
    zt = torch.as_tensor(z)
    st = torch.as_tensor(static).unsqueeze(0)  # (1, S, H, W)
    model.train()
    optimizers = make_optimizers(model, cfg)
    schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lambda k: lr_factor(k, cfg)) for o in optimizers]
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(cfg.ema_decay), use_buffers=True)
    losses = []
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        for _ in range(cfg.steps):
            b = torch.as_tensor(gen.integers(0, n_traj, cfg.batch_size))
            t = torch.as_tensor(gen.integers(1, frames - 1, cfg.batch_size))
            z_prev, z_cur, z_next = zt[b, t - 1], zt[b, t], zt[b, t + 1]  # (B, C, H, W)
            cond = torch.cat([z_prev, z_cur, st.expand(cfg.batch_size, -1, -1, -1)], dim=1)
            loss = edm_loss(model, (z_next - z_cur) / res_std, cond)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"EDM loss became {loss.item()} at step {len(losses)}")
            apply_update(loss, model, optimizers, schedulers, ema, cfg.grad_clip)
            losses.append(loss.item())
    return copy.deepcopy(ema.module).eval(), losses
