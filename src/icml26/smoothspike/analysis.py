"""Analysis tools: the max-coordinate bound of the randomized Hadamard transform, spike-count entropy,
saturation and homogenisation of a rate code, and a per-layer report of a spiking encoder.

Theorem (the paper's abstract; constant in the Hoeffding form): for unit-norm x, random signs D and the
normalised Hadamard matrix H of order n, ``max_i |(x D H)_i| <= sqrt(2 log(2n / delta) / n)`` with probability
at least 1 - delta, i.e. O(sqrt(log n / n)); without the signs an adversarial x (a row of H) maps to a
standard basis vector, max = 1.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml26.smoothspike.hadamard import hadamard_transform
from icml26.smoothspike.model import MultiStepLIF, SpikingEncoder, rms_norm

__all__ = [
    "bound",
    "collision_rate",
    "homogenization",
    "max_coordinate_trials",
    "outlier_activations",
    "rate_code_error",
    "spike_counts",
    "spike_entropy",
    "spike_report",
]


def bound(n: int, delta: float = 0.05) -> float:
    """sqrt(2 log(2n/delta) / n): the high-probability bound on max |(xDH)_i| for ||x|| = 1."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta}")
    return math.sqrt(2.0 * math.log(2.0 * n / delta) / n)


def _inputs(kind: str, n: int, count: int, gen: torch.Generator) -> torch.Tensor:
    """Unit-norm test inputs (count, n), float64: the worst cases of the plain transform and typical ones."""
    if kind == "hadamard-row":  # H maps a row of itself to a basis vector: the adversary of H without signs
        x = torch.zeros(count, n, dtype=torch.float64)
        x[torch.arange(count), torch.randint(0, n, (count,), generator=gen)] = 1.0
        x = hadamard_transform(x, transpose=True)  # rows of H (e_j Hᵀ), without forming H
    elif kind == "one-hot":
        x = torch.zeros(count, n, dtype=torch.float64)
        x[torch.arange(count), torch.randint(0, n, (count,), generator=gen)] = 1.0
    elif kind == "outliers":  # Gaussian with 4 channels 25x larger (LLM-like outlier channels)
        x = torch.randn(count, n, generator=gen, dtype=torch.float64)
        x[:, :4] *= 25.0
    elif kind == "gaussian":
        x = torch.randn(count, n, generator=gen, dtype=torch.float64)
    else:
        raise ValueError(f"unknown input kind {kind!r}")
    return x / x.norm(dim=1, keepdim=True)


INPUT_KINDS = ("hadamard-row", "one-hot", "outliers", "gaussian")


def max_coordinate_trials(
    n: int, trials: int, seed: int, *, kind: str = "hadamard-row", signs: bool = True
) -> np.ndarray:
    """max_i |(x D H)_i| for ``trials`` (input, sign) draws; ``signs=False`` drops D (the control)."""
    gen = torch.Generator().manual_seed(seed)
    x = _inputs(kind, n, trials, gen)
    if signs:
        x = x * (torch.randint(0, 2, (trials, n), generator=gen) * 2 - 1).to(torch.float64)  # D, one per draw
    return hadamard_transform(x).abs().amax(1).numpy()


def spike_counts(z: torch.Tensor, T: int = 4, *, tau: float = 2.0, v_th: float = 1.0) -> torch.Tensor:
    """Spike counts in 0..T of the multi-step LIF driven by the constant input z (a rate code)."""
    with torch.no_grad():
        return MultiStepLIF(tau, v_th)(z.unsqueeze(0).expand(T, *z.shape)).sum(0)


def spike_entropy(counts: torch.Tensor | np.ndarray, T: int) -> float:
    """Entropy (bits) of the distribution of spike counts 0..T over all neurons and samples (max log2(T+1))."""
    c = np.asarray(counts).astype(np.int64).ravel()
    p = np.bincount(c, minlength=T + 1) / max(len(c), 1)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def rate_code_error(z: torch.Tensor, counts: torch.Tensor) -> float:
    """Relative error ||relu(z) − E[relu(z) | count]|| / ||relu(z)|| of the best decoder that sees only the
    spike count (the conditional mean of each count's inputs): the information about the positive part of the
    input that the rate code loses; 0 when counts determine the inputs, large when distinct inputs collapse
    to one count (homogenisation)."""
    if z.numel() != counts.numel():
        raise ValueError(f"rate_code_error: {z.numel()} inputs but {counts.numel()} counts")
    zp = torch.relu(z.detach()).double().ravel()
    c = counts.ravel().long()
    sums = torch.zeros(int(c.max()) + 1, dtype=torch.float64).index_add_(0, c, zp)
    num = torch.bincount(c).double().clamp_min(1)
    recon = (sums / num)[c]
    den = float(zp.norm())
    return float((zp - recon).norm()) / den if den > 0 else 0.0


def collision_rate(z: torch.Tensor, counts: torch.Tensor, v_th: float = 1.0) -> float:
    """Homogenisation of large inputs: the probability that two random inputs above threshold (distinct
    values, almost surely) receive the same spike count (sum of squared count frequencies among them)."""
    c = counts.ravel()[z.ravel() > v_th].long()
    if len(c) < 2:
        return float("nan")
    p = torch.bincount(c).double() / len(c)
    return float((p**2).sum())


def homogenization(
    z: torch.Tensor, counts: torch.Tensor, *, v_th: float = 1.0, distinct: float = 0.1, max_inputs: int = 512
) -> dict[str, float]:
    """Information homogenisation of one LIF layer as the paper defines it, per neuron across inputs.

    ``z`` (inputs, neurons): each neuron's input per token (time mean), ``counts`` its spike counts in the window.
    - ``collision rate``: over every neuron and every pair of its high-amplitude inputs (both above ``v_th``)
      that are distinct (differ by more than ``distinct``), the fraction that received identical spike counts;
      nan when no neuron has such a pair;
    - ``count entropy [bits]``: the entropy of each neuron's spike counts across the inputs, mean over neurons
      (0 when a neuron answers every input with the same count).
    At most ``max_inputs`` inputs are used (pairs grow quadratically): when there are more, an evenly spaced
    sample of them (so tokens of every sentence count, not only the first sentences')."""
    if z.shape != counts.shape or z.ndim != 2:
        raise ValueError(f"homogenization needs (inputs, neurons) inputs and counts of one shape; got "
                         f"{tuple(z.shape)} and {tuple(counts.shape)}")  # fmt: skip
    if max_inputs < 2:
        raise ValueError(f"max_inputs must be >= 2; got {max_inputs}")
    keep = torch.linspace(0, z.shape[0] - 1, min(max_inputs, z.shape[0])).round().long().unique()
    z, c = z[keep].double(), counts[keep].long()
    same = distinct_pairs = 0.0
    for j in range(0, z.shape[1], 64):  # neurons in chunks: (inputs, inputs, 64) pair tables
        zj, cj = z[:, j : j + 64], c[:, j : j + 64]
        high = zj > v_th
        pair = high[:, None] & high[None, :] & ((zj[:, None] - zj[None, :]).abs() > distinct)  # each pair twice
        distinct_pairs += float(pair.sum())
        same += float((pair & (cj[:, None] == cj[None, :])).sum())
    n_levels = int(c.max()) + 1 if c.numel() else 1
    freq = torch.zeros(n_levels, c.shape[1], dtype=torch.float64).scatter_add_(
        0, c, torch.ones_like(c, dtype=torch.float64)) / max(c.shape[0], 1)  # fmt: skip
    ent = -(freq * torch.log2(freq.clamp_min(1e-300))).sum(0)  # (neurons,)
    return {
        "collision rate": same / distinct_pairs if distinct_pairs else float("nan"),
        "count entropy [bits]": float(ent.mean()),
        "distinct high-amplitude pairs": distinct_pairs / 2,
    }


def outlier_activations(
    n: int, samples: int, seed: int, *, outliers: int = 4, scale: float = 25.0, gain: float = 1.0
) -> torch.Tensor:
    """Synthetic residual-stream activations (samples, n): Gaussian with ``outliers`` channels ``scale`` times
    larger (the outlier channels of real language models), RMS-normalised and multiplied by ``gain``."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, n, generator=gen)
    x[:, :outliers] *= scale
    return gain * rms_norm(x)


def code_stats(z: torch.Tensor, T: int = 4, v_th: float = 1.0) -> dict[str, float]:
    """Entropy, rate-code error, saturation, large-input collision and max |z| of the LIF rate code of z."""
    if z.ndim == 0 or z.numel() == 0:
        raise ValueError(f"code_stats needs a non-empty (samples, n) tensor; got shape {tuple(z.shape)}")
    if not bool(torch.isfinite(z).all()):
        raise ValueError("code_stats got NaN or infinite activations")
    c = spike_counts(z, T, v_th=v_th)
    return {
        "entropy [bits]": spike_entropy(c, T),
        "rate-code error": rate_code_error(z, c),
        "saturated fraction": float((c == T).double().mean()),
        "silent fraction": float((c == 0).double().mean()),
        "large-input collision": collision_rate(z, c, v_th),
        "mean max |z|": float(z.abs().amax(-1).mean()),
    }


@torch.no_grad()
def spike_report(
    model: SpikingEncoder, ids: torch.Tensor, mask: torch.Tensor | None = None, max_inputs: int = 512
) -> list[dict]:
    """Per layer and LIF site: the spike-count entropy, saturation (count T), silence (count 0), the collision
    rate of above-threshold inputs, the mean max |input| and the histogram of counts 0..T (fractions) of the
    LIF inputs recorded on ``ids``. Padding
    tokens are left out. Inputs are (T, B, L, ·); counts are summed over T. The per-neuron pair statistics
    (:func:`homogenization`) use an evenly spaced sample of at most ``max_inputs`` of the tokens."""
    model.eval()
    model.record(True)
    try:
        model(ids, mask)
        rows = []
        keep = torch.ones(ids.shape, dtype=torch.bool) if mask is None else mask.bool()
        for i, blk in enumerate(model.blocks):
            for site, lif in (("attn_in", blk.lif_in), ("v", blk.lif_v), ("mlp_in", blk.lif_mlp),
                              ("hidden", blk.lif_hidden)):  # fmt: skip
                x = blk.taps[site]  # (T, B, L, D) LIF input
                s = lif(x)
                cnt = s.sum(0)[keep]  # (tokens, D)
                xin = x.mean(0)[keep]
                T = x.shape[0]
                rows.append({
                    "layer": i,
                    "site": site,
                    "entropy [bits]": spike_entropy(cnt.numpy(), T),
                    "firing rate": float(s.mean()),
                    "saturated fraction": float((cnt == T).double().mean()),
                    "silent fraction": float((cnt == 0).double().mean()),
                    "large-input collision": collision_rate(xin, cnt, lif.v_th),
                    **{f"per-neuron {k}": v
                       for k, v in homogenization(xin, cnt, v_th=lif.v_th, max_inputs=max_inputs).items()},
                    "mean max |input|": float(xin.abs().amax(-1).mean()),
                    "count fractions": [float((cnt == k).double().mean()) for k in range(T + 1)],
                })  # fmt: skip
        return rows
    finally:
        model.record(False)
