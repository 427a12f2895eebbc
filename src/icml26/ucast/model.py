"""The U-Cast network: a plain U-Net with circular longitude padding and dropout in every residual block.

``UNet`` maps (B, C_in, H, W) -> (B, C_out, H, W). ``UCast`` wraps it as a one-step forecaster (the paper's
Sec. 3): input = the two last frames (t - dt, t) normalised per channel + static fields + time forcings;
output = the increment x_{t+1} - x_t in residual-std units, added back to the last frame. Stochasticity
comes only from dropout (MC dropout): :func:`set_mc_dropout` puts dropout layers in train mode and every
other layer in eval mode, the paper's inference set-up.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml26.ucast.config import ModelConfig

__all__ = ["UCast", "UNet", "set_mc_dropout"]


class LonCircularConv2d(nn.Conv2d):
    """3x3 convolution padded circularly along longitude (last axis) and with zeros along latitude."""

    def __init__(self, c_in: int, c_out: int, kernel_size: int = 3, stride: int = 1) -> None:
        super().__init__(c_in, c_out, kernel_size, stride=stride, padding=0)
        self.pad = kernel_size // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, C, H, W)
        p = self.pad
        x = F.pad(x, (p, p, 0, 0), mode="circular")  # wrap longitude
        x = F.pad(x, (0, 0, p, p))  # zeros beyond the poles
        return super().forward(x)


def _norm(c: int) -> nn.GroupNorm:
    groups = math.gcd(c, 8)
    return nn.GroupNorm(groups, c)


class ResBlock(nn.Module):
    """GN-SiLU-conv-GN-SiLU-**dropout**-conv with a (1x1) skip connection (ADM residual block)."""

    def __init__(self, c_in: int, c_out: int, dropout: float) -> None:
        super().__init__()
        self.norm1, self.conv1 = _norm(c_in), LonCircularConv2d(c_in, c_out)
        self.norm2, self.conv2 = _norm(c_out), LonCircularConv2d(c_out, c_out)
        self.dropout = nn.Dropout(dropout)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return self.skip(x) + h


class SelfAttention(nn.Module):
    """Multi-head self-attention over the H*W grid points (residual), with Linear projections."""

    def __init__(self, c: int, heads: int) -> None:
        super().__init__()
        self.heads = heads if c % heads == 0 else 1
        self.norm = _norm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        tokens = self.norm(x).flatten(2).transpose(1, 2)  # (B, HW, C)
        q, k, v = self.qkv(tokens).reshape(b, h * w, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)  # (B, heads, HW, C/heads)
        out = self.proj(out.transpose(1, 2).reshape(b, h * w, c))
        return x + out.transpose(1, 2).reshape(b, c, h, w)


class UNet(nn.Module):
    """Standard U-Net: ``len(channels)`` levels, ``n_res`` residual blocks per level, skip connections.

    Parameters
    ----------
    c_in, c_out : int
        Input and output channels.
    cfg : ModelConfig

    Notes
    -----
    Inputs of any H x W are accepted: H and W are zero/circularly padded up to a multiple of
    2^(levels-1) and the output is cropped back (the paper's 121 latitudes are not a power of two).
    """

    def __init__(self, c_in: int, c_out: int, cfg: ModelConfig) -> None:
        super().__init__()
        ch = cfg.channels
        self.levels = len(ch)
        self.stem = LonCircularConv2d(c_in, ch[0])
        self.down = nn.ModuleList()
        self.downsample = nn.ModuleList()
        c = ch[0]
        for lv, c_lv in enumerate(ch):
            blocks = []
            for _ in range(cfg.n_res):
                blocks.append(ResBlock(c, c_lv, cfg.dropout))
                c = c_lv
                if lv in cfg.attn_levels:
                    blocks.append(SelfAttention(c, cfg.heads))
            self.down.append(nn.Sequential(*blocks))
            if lv < self.levels - 1:
                self.downsample.append(LonCircularConv2d(c, c, stride=2))
        self.middle = nn.Sequential(
            ResBlock(c, c, cfg.dropout), SelfAttention(c, cfg.heads), ResBlock(c, c, cfg.dropout)
        )
        self.up = nn.ModuleList()
        self.upsample = nn.ModuleList()
        for lv in reversed(range(self.levels)):
            blocks = []
            for i in range(cfg.n_res):
                blocks.append(ResBlock(c + ch[lv] if i == 0 else c, ch[lv], cfg.dropout))  # concat skip
                c = ch[lv]
                if lv in cfg.attn_levels:
                    blocks.append(SelfAttention(c, cfg.heads))
            self.up.append(nn.Sequential(*blocks))
            if lv > 0:
                self.upsample.append(LonCircularConv2d(c, ch[lv - 1]))
                c = ch[lv - 1]
        self.head = nn.Sequential(_norm(c), nn.SiLU(), LonCircularConv2d(c, c_out))
        nn.init.zeros_(self.head[-1].weight)  # start as the persistence forecast
        nn.init.zeros_(self.head[-1].bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, c_in, H, W) -> (B, c_out, H, W)."""
        h_in, w_in = x.shape[-2:]
        m = 2 ** (self.levels - 1)
        ph, pw = (-h_in) % m, (-w_in) % m
        if pw:
            x = F.pad(x, (0, pw, 0, 0), mode="circular")
        if ph:
            x = F.pad(x, (0, 0, 0, ph))
        h = self.stem(x)
        skips = []
        for lv in range(self.levels):
            h = self.down[lv](h)
            skips.append(h)
            if lv < self.levels - 1:
                h = self.downsample[lv](h)
        h = self.middle(h)
        for i, lv in enumerate(reversed(range(self.levels))):
            h = self.up[i](torch.cat([h, skips[lv]], dim=1))
            if lv > 0:
                h = self.upsample[i](F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.head(h)[..., :h_in, :w_in]


class UCast(nn.Module):
    """One-step forecaster x_{t+1} = x_t + std * res_std * UNet([z_{t-1}, z_t, static, forcings]).

    Parameters
    ----------
    cfg : ModelConfig
    n_channels : int
        Prognostic channels C.
    mean, std, res_std : array of shape (C,)
        State normalisation and the std of normalised one-step increments.
    static : array of shape (S, H, W)
        Static fields (land-sea mask, orography; the simulator's forcing pattern), already scaled.
    n_forcings : int
        Scalar forcings per time (sin/cos of year and day progress for ERA5; 0 for the simulator).
    lat, lon : array of shape (H,) and (W,)
        The grid the model was trained on (checked at inference).
    """

    def __init__(
        self,
        cfg: ModelConfig,
        n_channels: int,
        mean: np.ndarray,
        std: np.ndarray,
        res_std: np.ndarray,
        static: np.ndarray,
        lat: np.ndarray,
        lon: np.ndarray,
        n_forcings: int = 0,
        variables: list[str] | None = None,
    ) -> None:
        super().__init__()
        static = np.asarray(static, dtype=np.float32).reshape(-1, len(lat), len(lon))
        self.cfg, self.n_channels, self.n_forcings = cfg, n_channels, n_forcings
        self.variables = list(variables) if variables is not None else [f"ch{i}" for i in range(n_channels)]
        if len(self.variables) != n_channels:
            raise ValueError(f"{len(self.variables)} variable names for {n_channels} channels")
        self.register_buffer("mean", torch.tensor(np.asarray(mean, np.float32)).view(-1, 1, 1))
        self.register_buffer("std", torch.tensor(np.asarray(std, np.float32)).view(-1, 1, 1))
        self.register_buffer("res_std", torch.tensor(np.asarray(res_std, np.float32)).view(-1, 1, 1))
        self.register_buffer("static", torch.tensor(static))  # (S, H, W)
        self.register_buffer("lat", torch.tensor(np.asarray(lat, np.float64)))
        self.register_buffer("lon", torch.tensor(np.asarray(lon, np.float64)))
        c_in = 2 * n_channels + static.shape[0] + n_forcings
        self.net = UNet(c_in, n_channels, cfg)

    @property
    def grid(self) -> tuple[int, int]:
        return int(self.lat.numel()), int(self.lon.numel())

    def normalise(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std

    def denormalise(self, z: torch.Tensor) -> torch.Tensor:
        return z * self.std + self.mean

    def residual(self, z_prev: torch.Tensor, z_cur: torch.Tensor, forcing: torch.Tensor | None = None) -> torch.Tensor:
        """Predicted normalised increment r = (z_{t+1} - z_t) / res_std, shape (B, C, H, W).

        ``z_prev``, ``z_cur``: normalised frames (B, C, H, W); ``forcing``: (B, n_forcings) or None.
        """
        b, _, h, w = z_cur.shape
        parts = [z_prev, z_cur, self.static.unsqueeze(0).expand(b, -1, -1, -1).to(z_cur.dtype)]
        if self.n_forcings:
            if forcing is None or forcing.shape != (b, self.n_forcings):
                raise ValueError(f"forcing must have shape ({b}, {self.n_forcings})")
            parts.append(forcing.to(z_cur.dtype)[:, :, None, None].expand(-1, -1, h, w))
        return self.net(torch.cat(parts, dim=1))

    def step_normalised(self, z_prev: torch.Tensor, z_cur: torch.Tensor, forcing=None) -> torch.Tensor:
        """z_{t+1} = z_t + res_std * r  (normalised state space), shape (B, C, H, W)."""
        return z_cur + self.res_std * self.residual(z_prev, z_cur, forcing)

    def forward(self, x_prev: torch.Tensor, x_cur: torch.Tensor, forcing=None, residual_only: bool = False):
        """Physical-unit step: (B, C, H, W) x 2 -> x_{t+1} of shape (B, C, H, W).

        With ``residual_only`` the inputs are normalised frames and the output is :meth:`residual` (the
        training path, so that DDP sees a ``forward`` call).
        """
        if residual_only:
            return self.residual(x_prev, x_cur, forcing)
        z = self.step_normalised(self.normalise(x_prev), self.normalise(x_cur), forcing)
        return self.denormalise(z)

    def config_dict(self) -> dict:
        """What is needed to rebuild the module (stored in checkpoints)."""
        return {
            "cfg": {**self.cfg.__dict__},
            "n_channels": self.n_channels,
            "mean": self.mean.flatten().tolist(),
            "std": self.std.flatten().tolist(),
            "res_std": self.res_std.flatten().tolist(),
            "static": self.static.numpy().tolist(),
            "lat": self.lat.tolist(),
            "lon": self.lon.tolist(),
            "n_forcings": self.n_forcings,
            "variables": self.variables,
        }

    @classmethod
    def from_config_dict(cls, d: dict) -> UCast:
        cfg = d["cfg"]
        cfg = ModelConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in cfg.items()})
        return cls(
            cfg,
            d["n_channels"],
            d["mean"],
            d["std"],
            d["res_std"],
            np.asarray(d["static"]),
            np.asarray(d["lat"]),
            np.asarray(d["lon"]),
            d["n_forcings"],
            d["variables"],
        )


def set_mc_dropout(model: nn.Module, active: bool = True) -> nn.Module:
    """Eval mode everywhere, then dropout layers back in train mode when ``active`` (MC dropout).

    Calling ``model.eval()`` alone gives a deterministic "ensemble" whose members are all identical.
    """
    model.eval()
    if active:
        for module in model.modules():
            if isinstance(module, nn.Dropout):
                module.train()
    return model
