"""Real place cells: rat hippocampal units on a linear track (nelpy example data, MIT), binned into laps.

The bundled ``data/hippocampus_linear_track.npz`` holds the whole session binned at 50 ms: spike counts of the
31 sorted units (uint8, shape (T, 31)), the animal's position along the track per bin (pixels, float32; the
camera's x axis, the track's long axis) and the bin start times (s). It was made from nelpy/example-data
(``linear-track/spikes.mat`` and ``trajectory.videoPositionTracking``; MIT licence, nelpy contributors; see
``data/LICENSE-nelpy``) by :func:`bin_session` — users with the original files read them with
:func:`read_spikes_mat` and :func:`read_position_tracking` and bin them the same way.

A **lap** is one run from one end of the track to the other: a maximal stretch of bins inside the middle 80 %
of the track whose position moves monotonically (smoothed) from one end zone to the other. Laps are the
trials of the real-data experiment: models are fitted on training laps and the position is decoded on
held-out laps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HippocampusLaps",
    "bin_session",
    "lap_segments",
    "load_linear_track",
    "read_position_tracking",
    "read_spikes_mat",
    "track_range",
]

BUNDLE = Path(__file__).parent / "data" / "hippocampus_linear_track.npz"
CLOCK_RATE = 30_000.0  # position time stamps: ticks of the 30 kHz acquisition clock


def read_spikes_mat(path: str | Path) -> list[np.ndarray]:
    """Spike times (s) of every non-empty unit of a MatClust ``spikes.mat`` (struct arrays with a ``time`` field,
    nested per tetrode), in file order."""
    import scipy.io

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such spikes file: {path}")
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises several types for foreign files
        raise ValueError(f"{path}: not a MATLAB file ({type(exc).__name__})") from None
    if "spikes" not in mat:
        raise ValueError(f"{path}: no 'spikes' variable (found {sorted(k for k in mat if not k.startswith('__'))})")
    units: list[np.ndarray] = []

    def walk(a) -> None:
        if isinstance(a, np.ndarray) and a.dtype == object:
            for v in a.ravel():
                walk(v)
        elif isinstance(a, np.ndarray) and a.dtype.names and "time" in a.dtype.names:
            for rec in a.ravel():
                t = np.asarray(rec["time"], dtype=np.float64).ravel()
                if t.size:
                    units.append(np.sort(t))

    walk(mat["spikes"])
    if not units:
        raise ValueError(f"{path}: no unit with spikes")
    return units


def read_position_tracking(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times in s, x, y) of a ``.videoPositionTracking`` file: a text header ending in ``<End settings>``, then
    records <time uint32><x uint16><y uint16><x2 uint16><y2 uint16> (times on the 30 kHz clock)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such position file: {path}")
    raw = path.read_bytes()
    marker = b"<End settings>\n"
    if marker not in raw[:4096]:
        raise ValueError(f"{path}: no '<End settings>' header; not a videoPositionTracking file")
    body = raw[raw.index(marker) + len(marker) :]
    if len(body) % 12:
        raise ValueError(f"{path}: {len(body)} data bytes is not a whole number of 12-byte records")
    rec = np.frombuffer(body, dtype=[("t", "<u4"), ("x", "<u2"), ("y", "<u2"), ("x2", "<u2"), ("y2", "<u2")])
    return rec["t"] / CLOCK_RATE, rec["x"].astype(np.float64), rec["y"].astype(np.float64)


def bin_session(
    spike_times: list[np.ndarray], t_pos: np.ndarray, x_pos: np.ndarray, bin_s: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts (T, N) of each unit in ``bin_s`` bins over the tracked period, the position per bin (the mean of
    the samples in the bin, interpolated where a bin has none) and the bin start times (T,)."""
    if not bin_s > 0:
        raise ValueError(f"bin_s must be positive; got {bin_s}")
    edges = np.arange(t_pos[0], t_pos[-1], bin_s)
    counts = np.stack([np.histogram(t, edges)[0] for t in spike_times], axis=1)  # (T, N)
    centres = edges[:-1] + bin_s / 2
    x = np.interp(centres, t_pos, x_pos)
    return counts, x, edges[:-1]


def track_range(x: np.ndarray, window: int = 100) -> tuple[float, float]:
    """The track's two ends: 2nd and 98th percentiles of the position over the bins where the animal moves
    (position range above 5 % of the whole range within ``window`` bins), so a rest box or a long stop does
    not count as track."""
    from scipy.ndimage import maximum_filter1d, minimum_filter1d

    spread = maximum_filter1d(x, window) - minimum_filter1d(x, window)
    active = spread > 0.05 * (x.max() - x.min())
    if active.sum() < 10:
        raise ValueError("the position hardly moves: no track to cut into laps")
    lo, hi = np.percentile(x[active], [2, 98])
    return float(lo), float(hi)


def lap_segments(x: np.ndarray, min_bins: int = 10) -> list[tuple[int, int]]:
    """(start, stop) bin ranges of the laps: maximal stretches strictly inside the middle 80 % of the track that
    enter at one end zone and leave at the other (a run across the track, not a turn-back)."""
    lo, hi = track_range(x)
    a, b = lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)
    inside = (x > a) & (x < b)
    laps, T = [], len(x)
    k = 0
    while k < T:
        if not inside[k]:
            k += 1
            continue
        start = k
        while k < T and inside[k]:
            k += 1
        if start == 0 or k == T or k - start < min_bins:
            continue
        before, after = x[start - 1], x[k]
        if (before <= a and after >= b) or (before >= b and after <= a):  # crossed from one end to the other
            laps.append((start, k))
    return laps


@dataclass
class HippocampusLaps:
    """Laps of the linear-track session.

    Attributes
    ----------
    counts : list of (T_i, N) arrays
        Spike counts per bin on each lap.
    position : list of (T_i,) arrays
        Position along the track (0 at one end, 1 at the other) per bin.
    direction : (n_laps,) array of +1 / -1
        Running direction of each lap.
    bin_s : float
    """

    counts: list[np.ndarray]
    position: list[np.ndarray]
    direction: np.ndarray
    bin_s: float

    def smoothed(self, sigma_bins: float = 2.0) -> list[np.ndarray]:
        """Counts smoothed in time with a Gaussian kernel (the paper smooths spike counts before fitting)."""
        from scipy.ndimage import gaussian_filter1d

        return [gaussian_filter1d(c.astype(np.float64), sigma_bins, axis=0, mode="nearest") for c in self.counts]


def load_linear_track(path: str | Path | None = None, min_rate_hz: float = 0.1, rebin: int = 1) -> HippocampusLaps:
    """The bundled session (or an ``.npz`` with ``counts`` (T, N), ``x`` (T,) and ``bin_s``) cut into laps.

    Units firing below ``min_rate_hz`` over the whole session are dropped; ``rebin`` merges that many bins.
    """
    path = BUNDLE if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with np.load(path) as z:
        missing = {"counts", "x", "bin_s"} - set(z.files)
        if missing:
            raise ValueError(f"{path}: missing arrays {sorted(missing)} (need counts (T, N), x (T,), bin_s)")
        counts, x, bin_s = z["counts"].astype(np.int64), z["x"].astype(np.float64), float(z["bin_s"])
    if counts.ndim != 2 or x.shape != (len(counts),):
        raise ValueError(f"{path}: counts must be (T, N) and x (T,); got {counts.shape} and {x.shape}")
    if int(rebin) < 1:
        raise ValueError(f"rebin must be >= 1; got {rebin}")
    r = int(rebin)
    T = len(counts) // r * r
    counts = counts[:T].reshape(-1, r, counts.shape[1]).sum(1)
    x = x[:T].reshape(-1, r).mean(1)
    bin_s *= r
    keep = counts.sum(0) / (len(counts) * bin_s) >= min_rate_hz
    counts = counts[:, keep]
    lo, hi = track_range(x)
    laps = lap_segments(x)
    pos = [np.clip((x[s:e] - lo) / (hi - lo), 0, 1) for s, e in laps]
    direction = np.array([1 if p[-1] > p[0] else -1 for p in pos])
    return HippocampusLaps([counts[s:e] for s, e in laps], pos, direction, bin_s)
