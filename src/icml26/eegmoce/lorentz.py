"""Lorentz-model operations with a per-call curvature ``K = -c`` (``c = |K| > 0``), written for float64.

A point of the hyperboloid ``H^d_c`` is ``x = (x_0, x_s) in R^{d+1}`` with ``<x, x>_L = -1/c`` and ``x_0 > 0``,
where ``<x, y>_L = -x_0 y_0 + <x_s, y_s>`` (Minkowski inner product). The origin is ``o = (1/sqrt(c), 0)``.
Tangent vectors at the origin have time component 0 and are handled by their spatial part ``v in R^d``.

Numerics (issue "NaN near boundaries"): the arcosh argument is clamped at ``1 + 1e-15``; ``logmap0`` uses
``asinh`` of the spatial norm (no cancellation); ``expmap0`` clamps the dimensionless radius ``sqrt(c)|v|`` at
``MAX_THETA``.
The convention of geoopt's ``Lorentz(k)`` is ``<x, x>_L = -k``, i.e. ``k = 1/c`` (tested against geoopt).
"""

from __future__ import annotations

import torch

#: Largest dimensionless radius ``sqrt(c) * d(o, x)`` kept: ``cosh(20) ~ 2.4e8``, float64 distances still
#: resolve 1e-7 there; ``expmap0`` clamps to it.
MAX_THETA = 20.0
_TINY = 1e-15


def minkowski_dot(x: torch.Tensor, y: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    """``<x, y>_L = -x_0 y_0 + <x_s, y_s>`` over the last axis."""
    out = -x[..., 0] * y[..., 0] + (x[..., 1:] * y[..., 1:]).sum(-1)
    return out.unsqueeze(-1) if keepdim else out


def project(xs: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Lift spatial coordinates onto ``H_c``: ``x_0 = sqrt(1/c + |x_s|^2)``.  (..., d) -> (..., d+1)"""
    x0 = torch.sqrt(1.0 / c + (xs * xs).sum(-1, keepdim=True))
    return torch.cat([x0, xs], dim=-1)


def expmap0(v: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Exponential map at the origin of a tangent vector given by its spatial part.  (..., d) -> (..., d+1)

    ``theta = sqrt(c)|v|``, ``x_0 = cosh(theta)/sqrt(c)``, ``x_s = sinh(theta)/theta * v``; theta clamped at
    ``MAX_THETA``.
    """
    sc = torch.as_tensor(c, dtype=v.dtype, device=v.device).sqrt()
    norm = v.norm(dim=-1, keepdim=True)
    theta = (sc * norm).clamp_max(MAX_THETA)
    small = theta < 1e-8
    safe = torch.where(small, torch.ones_like(theta), theta)
    ratio = torch.where(small, torch.ones_like(theta), torch.sinh(safe) / safe)  # sinh(theta)/theta
    scale = torch.where(small, torch.ones_like(norm), theta / (sc * norm).clamp_min(_TINY))  # clamp shrink
    xs = ratio * scale * v
    return project(xs, c)


def logmap0(x: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Logarithmic map at the origin, spatial part.  (..., d+1) -> (..., d)

    ``theta = asinh(sqrt(c)|x_s|)`` (= sqrt(c) d(o, x)), ``v = theta / (sqrt(c)|x_s|) * x_s``.
    """
    xs = x[..., 1:]
    sc = torch.as_tensor(c, dtype=x.dtype, device=x.device).sqrt()
    u = sc * xs.norm(dim=-1, keepdim=True)
    small = u < 1e-8
    safe = torch.where(small, torch.ones_like(u), u)
    ratio = torch.where(small, torch.ones_like(u), torch.asinh(safe) / safe)
    return ratio * xs


def dist(x: torch.Tensor, y: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Geodesic distance ``arcosh(-c <x, y>_L) / sqrt(c)`` (argument clamped at 1 + 1e-15)."""
    z = (-c * minkowski_dot(x, y)).clamp_min(1.0 + _TINY)
    return torch.acosh(z) / torch.as_tensor(c, dtype=x.dtype).sqrt()


def sqdist_lorentz(x: torch.Tensor, y: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Squared Lorentzian distance ``||x - y||_L^2 = -2/c - 2<x, y>_L`` (>= 0, smooth; used in attention)."""
    return (-2.0 / c - 2.0 * minkowski_dot(x, y)).clamp_min(0.0)


def centroid(x: torch.Tensor, c: torch.Tensor | float, weights: torch.Tensor | None = None, dim: int = -2):
    """Lorentz (weighted) midpoint: ``m = sum_i w_i x_i`` rescaled onto ``H_c`` (Law et al. 2019).

    ``x``: (..., n, d+1) along ``dim``; ``weights``: broadcastable to x without its last axis, >= 0.
    """
    m = x.sum(dim) if weights is None else (weights.unsqueeze(-1) * x).sum(dim)
    norm = (-minkowski_dot(m, m, keepdim=True)).clamp_min(_TINY).sqrt()
    return m / (norm * torch.as_tensor(c, dtype=x.dtype).sqrt())


def logmap(mu: torch.Tensor, x: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Logarithmic map at ``mu`` (full ambient tangent vector).  mu: (..., d+1), x: (..., d+1)"""
    u = x + c * minkowski_dot(mu, x, keepdim=True) * mu  # component of x tangent at mu
    unorm = minkowski_dot(u, u, keepdim=True).clamp_min(_TINY).sqrt()
    return dist(mu, x, c).unsqueeze(-1) * u / unorm


def transport_to_origin(mu: torch.Tensor, v: torch.Tensor, c: torch.Tensor | float) -> torch.Tensor:
    """Parallel transport of ``v`` (tangent at ``mu``) to the origin; returns the spatial part.  -> (..., d)

    ``PT_{mu->o}(v) = v + c<o, v>_L / (1 - c<mu, o>_L) (mu + o)`` with ``<o, v>_L = -v_0/sqrt(c)``.
    """
    sc = torch.as_tensor(c, dtype=v.dtype).sqrt()
    coef = -sc * v[..., :1] / (1.0 + sc * mu[..., :1])
    return v[..., 1:] + coef * mu[..., 1:]


def rescale_curvature(x: torch.Tensor, c_from: torch.Tensor, c_to: torch.Tensor) -> torch.Tensor:
    """Move a point from ``H_{c_from}`` to ``H_{c_to}`` keeping its dimensionless radius (fusion step 2):
    ``expmap0_{c_to}(sqrt(c_from / c_to) * logmap0_{c_from}(x))``."""
    return expmap0(torch.sqrt(c_from / c_to) * logmap0(x, c_from), c_to)
