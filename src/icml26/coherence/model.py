"""Autoencoder with a ReLU code, trained with reconstruction + Coh, + L1, or alone; L1 density matching.

Architecture: D -> hidden -> m (ReLU code A) -> hidden -> D. The decoder's first layer has unit-norm columns
(as in sparse autoencoders), so L1 cannot shrink the code by growing the decoder and Coh / L1 codes are on
the same scale. With ``hidden = 0`` it is a sparse-autoencoder dictionary: A = relu(W_enc x + b), x_hat =
W_dec A + b_dec with unit-norm dictionary atoms (the columns of W_dec), as used on transformer activations.
Penalties (per batch of B samples):

- ``coh``:  MSE + lam * Coh(A, x_batch)              (objective.py; x = the once-computed sample positions)
- ``l1``:   MSE + lam * mean_i sum_j A_ij
- ``none``: MSE
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from icml26._util.progress import progress as progress_bar
from icml26.coherence.geometry import Geometry
from icml26.coherence.objective import Coh

__all__ = ["AutoEncoder", "FitResult", "activation_density", "fit_autoencoder", "fit_l1_matched"]

logger = logging.getLogger(__name__)
PENALTIES = ("coh", "l1", "none")


class _UnitColumnLinear(nn.Linear):
    """Linear layer whose weight columns (one per code feature) are renormalised to unit norm."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        W = self.weight / (self.weight.norm(dim=0, keepdim=True) + 1e-8)  # (hidden, m)
        return nn.functional.linear(z, W, self.bias)


class AutoEncoder(nn.Module):
    def __init__(self, d_in: int, n_features: int = 16, hidden: int = 64):
        super().__init__()
        if hidden == 0:  # SAE dictionary: one linear encoder, unit-norm atoms
            self.encoder = nn.Sequential(nn.Linear(d_in, n_features), nn.ReLU())
            self.decoder = _UnitColumnLinear(n_features, d_in)
            return
        self.encoder = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, n_features), nn.ReLU())
        self.decoder = nn.Sequential(_UnitColumnLinear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, d_in))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        A = self.encoder(x)  # (B, m) >= 0
        return self.decoder(A), A  # (B, D), (B, m)

    def forward_with_pre(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Reconstruction, code ``A = relu(H)`` and the code's pre-activations ``H`` (B, m)."""
        H = self.encoder[:-1](x)
        A = self.encoder[-1](H)
        return self.decoder(A), A, H


def activation_density(A: np.ndarray, rel: float = 0.01) -> float:
    """Fraction of (sample, feature) entries above ``rel`` x that feature's maximum (dead features: 0)."""
    peak = A.max(0, keepdims=True)
    return float(((A > rel * peak) & (peak > 0)).mean())


@dataclass
class FitResult:
    penalty: str
    lam: float
    codes: np.ndarray  # (n, m) codes of the training data
    mse: float  # reconstruction MSE on the training data (per input coordinate)
    density: float
    model: AutoEncoder = field(repr=False)
    history: list[float] = field(default_factory=list, repr=False)


def _positions(geometry: Geometry) -> tuple[np.ndarray, bool]:
    """Sample positions for Coh: angles on the torus, or centred embeddings scaled to unit total variance."""
    if geometry.kind == "circular":
        return geometry.coords, True
    x = geometry.coords - geometry.coords.mean(0)
    return x / np.sqrt((x**2).sum(1).mean() + 1e-12), False


def fit_autoencoder(
    X: np.ndarray,
    *,
    penalty: str = "coh",
    lam: float = 1.0,
    geometry: Geometry | None = None,
    n_features: int = 16,
    hidden: int = 64,
    steps: int = 1000,
    batch_size: int = 256,
    lr: float = 3e-3,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool | None = False,
    coh_kwargs: dict | None = None,
    warmup: float = 0.3,
) -> FitResult:
    """Train one autoencoder; returns the codes of ``X`` and its reconstruction error.

    The penalty weight ramps linearly from 0 to ``lam`` over the first ``warmup`` fraction of the steps, so
    features form under reconstruction before the penalty shapes them (a penalty at full weight from step 0
    kills ReLU features before they carry any signal).
    """
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}; got {penalty!r}")
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or len(X) < 2 or not np.all(np.isfinite(X)):
        raise ValueError(f"X must be a finite (n, D) array with n >= 2; got shape {X.shape}")
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"penalty weight must be finite and >= 0; got {lam}")
    if not (steps >= 1 and batch_size >= 2 and n_features >= 1 and hidden >= 0):
        raise ValueError("steps, batch_size and n_features must be positive (batch_size >= 2), hidden >= 0 (0: SAE)")
    if penalty == "coh" and (geometry is None or geometry.n != len(X)):
        raise ValueError("penalty 'coh' needs a geometry over the same samples as X")
    device = torch.device(device)
    with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's global RNG
        torch.manual_seed(seed)
        model = AutoEncoder(X.shape[1], n_features, hidden).to(device)
    coh = None
    if penalty == "coh":
        pos, circular = _positions(geometry)
        coh = Coh(pos, circular=circular, **(coh_kwargs or {})).to(device)
    Xt = torch.as_tensor(X, device=device)
    gen = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    n, bs = len(X), min(batch_size, len(X))
    history = []
    ramp = max(1, int(warmup * steps))
    bar = progress_bar(range(steps), disable=None if progress is None else not progress, desc=f"fit {penalty}")
    for step in bar:  # progress=None: tqdm's auto, a bar only on a terminal
        w = lam * min(1.0, (step + 1) / ramp)
        idx = torch.randperm(n, generator=gen)[:bs].to(device)
        xb = Xt[idx]
        recon, A, H = model.forward_with_pre(xb)
        loss = ((recon - xb) ** 2).mean()
        if penalty == "coh":
            loss = loss + w * coh(A, idx, pre=H)
        elif penalty == "l1":
            loss = loss + w * A.sum(1).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        history.append(float(loss.detach()))
    with torch.no_grad():
        recon, A = model(Xt)
        mse = float(((recon - Xt) ** 2).mean())
    codes = A.cpu().numpy().astype(np.float64)
    return FitResult(penalty, lam, codes, mse, activation_density(codes), model.cpu(), history)


def fit_l1_matched(
    X: np.ndarray, target_density: float, lams: tuple[float, ...], **kwargs
) -> tuple[FitResult, list[tuple[float, float, float]]]:
    """Sweep the L1 weight over ``lams`` and keep the run whose activation density is closest to
    ``target_density`` (ties: lower MSE). Returns it and the sweep (lam, density, mse)."""
    if not lams:
        raise ValueError("need at least one L1 weight to sweep")
    runs = [fit_autoencoder(X, penalty="l1", lam=lam, **kwargs) for lam in lams]
    best = min(runs, key=lambda r: (abs(r.density - target_density), r.mse))
    return best, [(r.lam, r.density, r.mse) for r in runs]
