"""Place-cell populations with known ground truth: Gaussian tuning curves, width distributions, Poisson counts.

``f_i(s) = gain exp(-|s - c_i|^2 / (2 w_i^2))`` over a 1-D track or 2-D box ``[0, size]^k``; centres uniform;
widths drawn from an exponential (multi-scale; the paper's construction), log-uniform or constant
distribution. Spike counts are Poisson with mean ``f_i(s) T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH_KINDS = ("exponential", "log-uniform", "constant")
#: Widths are floored here (as a fraction of the environment) so an exponential draw never gives a zero width.
MIN_WIDTH = 1e-4


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite positive number; got {value}")
    return value


def draw_widths(kind: str, n: int, mean_width: float, rng: np.random.Generator, *, spread: float = 100.0) -> np.ndarray:
    """``n`` receptive-field widths with mean ``mean_width``.

    ``exponential``: Exponential(mean); ``log-uniform``: log-uniform over a ``spread``-fold range with the given
    mean; ``constant``: all equal to the mean.
    """
    if kind not in WIDTH_KINDS:
        raise ValueError(f"unknown width distribution {kind!r}; choose from {', '.join(WIDTH_KINDS)}")
    if int(n) < 1:
        raise ValueError(f"number of cells must be >= 1; got {n}")
    mean_width = _positive("mean width", mean_width)
    spread = _positive("spread", spread)
    if kind == "exponential":
        w = rng.exponential(mean_width, int(n))
    elif kind == "log-uniform":
        # mean of log-uniform on [a, a s] is a (s - 1) / ln s
        a = mean_width * np.log(spread) / (spread - 1.0) if spread > 1 else mean_width
        w = a * np.exp(rng.random(int(n)) * np.log(spread))
    else:
        w = np.full(int(n), mean_width)
    return np.maximum(w, MIN_WIDTH * mean_width)


@dataclass
class PlaceCells:
    """A population of Gaussian place cells. ``centers`` (N, k), ``widths`` (N,), ``gain`` peak rate."""

    centers: np.ndarray
    widths: np.ndarray
    gain: float = 1.0
    size: float = 1.0

    def __post_init__(self) -> None:
        self.centers = np.atleast_2d(np.asarray(self.centers, dtype=np.float64))
        if self.centers.shape[0] == 1 and np.ndim(self.widths) == 1 and len(self.widths) > 1:
            self.centers = self.centers.T
        self.widths = np.asarray(self.widths, dtype=np.float64).ravel()
        if len(self.widths) != len(self.centers):
            raise ValueError(f"{len(self.centers)} centres but {len(self.widths)} widths")
        if not (np.all(np.isfinite(self.centers)) and np.all(np.isfinite(self.widths))):
            raise ValueError("centres and widths must be finite")
        if np.any(self.widths <= 0):
            raise ValueError("receptive-field widths must be positive")
        _positive("gain (peak rate)", self.gain)
        _positive("environment size", self.size)

    @property
    def n_cells(self) -> int:
        return len(self.widths)

    @property
    def dim(self) -> int:
        return self.centers.shape[1]

    def rates(self, s: np.ndarray) -> np.ndarray:
        """Mean rates at positions ``s`` (Q, k) or (Q,) for 1-D -> (Q, N)."""
        s = np.asarray(s, dtype=np.float64)
        s = s.reshape(-1, self.dim) if s.ndim < 2 else s
        sq = np.sum((s[:, None, :] - self.centers[None]) ** 2, axis=-1)  # (Q, N)
        return self.gain * np.exp(-sq / (2 * self.widths[None] ** 2))

    def counts(self, s: np.ndarray, rng: np.random.Generator, duration: float = 1.0) -> np.ndarray:
        """Poisson spike counts (Q, N) in a window of ``duration``."""
        return rng.poisson(self.rates(s) * _positive("duration", duration)).astype(np.float64)

    def with_budget(self, budget: float, n_grid: int = 400) -> PlaceCells:
        """The same population with the gain set so the expected total spike count, averaged over the
        environment (a grid), equals ``budget``."""
        budget = _positive("spike budget", budget)
        if self.dim == 1:
            grid = np.linspace(0, self.size, n_grid)[:, None]
        else:
            g = np.linspace(0, self.size, 40)
            grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
        mean_total = (self.rates(grid) / self.gain).sum(axis=1).mean()
        return PlaceCells(self.centers, self.widths, budget / mean_total, self.size)


def place_cells(
    n_cells: int,
    widths: str = "exponential",
    *,
    mean_width: float = 0.05,
    dim: int = 1,
    size: float = 1.0,
    gain: float = 1.0,
    spread: float = 100.0,
    rng: np.random.Generator,
) -> PlaceCells:
    """A population of ``n_cells`` place cells with uniform centres in ``[0, size]^dim``."""
    if int(dim) not in (1, 2):
        raise ValueError(f"environment dimension must be 1 or 2; got {dim}")
    if not 1 <= int(n_cells) <= 1_000_000:
        raise ValueError(f"number of cells must be in [1, 1e6]; got {n_cells}")
    size = _positive("environment size", size)
    c = rng.random((int(n_cells), int(dim))) * size
    w = draw_widths(widths, int(n_cells), mean_width * size, rng, spread=spread)
    return PlaceCells(c, w, gain, size)


def run_session(
    cells: PlaceCells,
    n_windows: int,
    rng: np.random.Generator,
    *,
    window: float = 0.25,
    lap_time: float = 8.0,
    peak_rate: float = 10.0,
) -> tuple[np.ndarray, np.ndarray]:
    """An animal running laps back and forth on the 1-D track (a triangle wave of period ``2 lap_time`` seconds
    with a random phase and 10 % jitter of the speed), observed in ``n_windows`` windows of ``window`` seconds:
    Poisson spike counts (W, N) of cells with peak rate ``peak_rate`` Hz, and the positions (W,)."""
    if cells.dim != 1:
        raise ValueError("run_session simulates a 1-D track")
    n_windows = int(n_windows)
    if not 2 <= n_windows <= 10_000_000 or n_windows * cells.n_cells > 5e8:
        raise ValueError(f"n_windows x cells = {n_windows} x {cells.n_cells} is out of range (memory)")
    window, lap_time, peak_rate = (
        _positive(k, v) for k, v in (("window", window), ("lap time", lap_time), ("peak rate", peak_rate))
    )
    speed = 1.0 + 0.1 * rng.standard_normal(n_windows)  # relative speed per window
    phase = rng.random() * 2 + np.cumsum(speed) * window / lap_time  # laps (2 = out and back)
    s = np.abs(((phase + 1.0) % 2.0) - 1.0) * cells.size  # (W,) triangle wave in [0, size]
    rates = cells.rates(s) / cells.gain * peak_rate  # (W, N) Hz
    return rng.poisson(rates * window).astype(np.float64), s
