"""Real place cells: loaders, run epochs, place fields and Bayesian (Poisson) position decoding.

Two rat hippocampal recordings ship with the package (``nelpy_data/``, MIT, nelpy contributors; converted
losslessly from the original MATLAB + binary tracking files, see ``nelpy_data/ATTRIBUTION.md``):

- ``linear-track``: 31 units, ~16 min of running on a linear track, then rest;
- ``w-maze``: 25 units, two ~20 min run sessions on a W-maze with rest between.

The same functions read the original formats (:func:`read_spikes_mat`, :func:`read_position_tracking`) and a
user's own arrays (:class:`Recording` from spike times in seconds and a position track).

Pipeline (each step one function, top to bottom):

1. positions are scaled to the environment's extent (1-D: projected on the track's principal axis; 2-D: the
   largest side), smoothed, and their speed computed; **run epochs** are samples faster than ``speed_min``
   extents per second (rest, where the animal sits or the LED is parked, is dropped);
2. **place fields**: occupancy-normalised rate maps (spike counts per bin / time per bin, both smoothed with a
   Gaussian kernel), Skaggs spatial information, and **field widths** (each contiguous region above 20 % of the
   unit's peak rate whose own peak is at least 1 Hz; width = its length in 1-D, its equivalent diameter
   ``2 sqrt(area / pi)`` in 2-D, in extents);
3. **Bayesian decoding**: spike counts in time windows of the run epochs, rate maps fitted on the other folds
   (contiguous blocks of time), Poisson likelihood with a uniform prior over the bins
   (``icml26.hyperhopfield.memory.poisson_posterior_mean``: the posterior mean is the MHN update), error of the
   posterior mean and of the MAP bin against the tracked position.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: Clock of the original recordings (ticks per second) of the position time stamps.
CLOCK_HZ = 30_000
BUNDLED = ("linear-track", "w-maze")
_BUNDLE_DIR = Path(__file__).parent / "nelpy_data"
_TRACK_DTYPE = np.dtype([("t", "<u4"), ("x", "<u2"), ("y", "<u2"), ("x2", "<u2"), ("y2", "<u2")])
_MAX_UNITS = 10_000
_MAX_SPIKES = 50_000_000


# --- loaders ------------------------------------------------------------------------------------------------------


def read_spikes_mat(path: str | Path) -> list[np.ndarray]:
    """Spike times (seconds) of every non-empty unit of a MatClust ``spikes.mat`` (nested cell arrays of
    structs with a ``time`` field; empty cells and units without spikes are skipped), in file order."""
    import scipy.io

    path = Path(path)
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises ValueError, TypeError, MatReadError... for garbage
        raise ValueError(f"spikes file {path} is not a readable MATLAB file ({exc.__class__.__name__})") from None
    if "spikes" not in mat:
        raise ValueError(f"spikes file {path} has no variable 'spikes' (found {sorted(k for k in mat if k[0] != '_')})")
    units: list[np.ndarray] = []

    def walk(a) -> None:
        a = np.asarray(a)
        if a.dtype.names and "time" in a.dtype.names:
            for rec in a.ravel():
                t = np.asarray(rec["time"], dtype=np.float64).ravel()
                if t.size:
                    units.append(np.sort(t))
        elif a.dtype == object:
            for x in a.ravel():
                walk(x)

    walk(mat["spikes"])
    if not units:
        raise ValueError(f"spikes file {path} holds no unit with spikes")
    return units


def read_position_tracking(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(t, xy)`` from a ``.videoPositionTracking`` file: a text header ending in ``<End settings>``, then
    records ``<time uint32><x uint16><y uint16><x2 uint16><y2 uint16>``; ``t`` (T,) in seconds (clock from the
    header, default 30 kHz), ``xy`` (T, 2) in pixels of the first LED."""
    path = Path(path)
    raw = path.read_bytes()
    end = raw.find(b"<End settings>")
    if not raw.startswith(b"<Start settings>") or end < 0:
        raise ValueError(f"position file {path} has no '<Start settings> ... <End settings>' header")
    header = raw[:end].decode("latin-1")
    clock = CLOCK_HZ
    for line in header.splitlines():
        if line.startswith("clockrate:"):
            try:
                clock = int(line.split(":", 1)[1])
            except ValueError:
                raise ValueError(f"position file {path}: bad clockrate line {line!r}") from None
    if clock <= 0:
        raise ValueError(f"position file {path}: clockrate must be positive; got {clock}")
    body = raw[end + len(b"<End settings>") :].lstrip(b"\r\n")
    n = len(body) // _TRACK_DTYPE.itemsize
    if n < 2:
        raise ValueError(f"position file {path} holds fewer than 2 position records")
    rec = np.frombuffer(body[: n * _TRACK_DTYPE.itemsize], dtype=_TRACK_DTYPE)
    t = rec["t"].astype(np.int64)
    ok = np.concatenate([[True], t[1:] > np.maximum.accumulate(t)[:-1]])  # drop records whose clock steps back
    return t[ok] / clock, np.stack([rec["x"], rec["y"]], 1)[ok].astype(np.float64)


@dataclass
class Recording:
    """Spike times of ``N`` units and a position track.

    ``spikes``: list of N arrays of spike times (seconds); ``t`` (T,) increasing sample times (seconds);
    ``pos`` (T, k) positions (k = 1 or 2, any unit, e.g. pixels)."""

    spikes: list[np.ndarray]
    t: np.ndarray
    pos: np.ndarray
    name: str = "recording"

    def __post_init__(self) -> None:
        self.t = np.asarray(self.t, dtype=np.float64).ravel()
        self.pos = np.asarray(self.pos, dtype=np.float64)
        self.pos = self.pos.reshape(len(self.pos), -1) if self.pos.ndim == 1 else self.pos
        if self.pos.ndim != 2 or self.pos.shape[1] not in (1, 2) or len(self.pos) != len(self.t):
            raise ValueError(f"positions must be (T,) or (T, 1|2) with T = {len(self.t)} times; got {self.pos.shape}")
        if len(self.t) < 2 or not np.all(np.isfinite(self.t)) or not np.all(np.isfinite(self.pos)):
            raise ValueError("position track needs at least 2 finite samples")
        if np.any(np.diff(self.t) <= 0):
            raise ValueError("position times must be strictly increasing")
        if not 1 <= len(self.spikes) <= _MAX_UNITS:
            raise ValueError(f"need between 1 and {_MAX_UNITS} units; got {len(self.spikes)}")
        self.spikes = [np.sort(np.asarray(s, dtype=np.float64).ravel()) for s in self.spikes]
        if sum(len(s) for s in self.spikes) > _MAX_SPIKES:
            raise ValueError(f"more than {_MAX_SPIKES} spikes in all (memory)")
        if not all(np.all(np.isfinite(s)) for s in self.spikes):
            raise ValueError("spike times must be finite")

    @property
    def n_units(self) -> int:
        return len(self.spikes)

    def save(self, path: str | Path) -> None:
        """Write the compact bundle format (lossless on a ``CLOCK_HZ`` clock): spike-time and position-time
        differences in ticks (uint32), positions as uint16 when they are integers (pixels), else float64."""
        ticks = [np.round(s * CLOCK_HZ).astype(np.int64) for s in self.spikes]
        pos_int = np.all(self.pos == np.round(self.pos)) and self.pos.min() >= 0 and self.pos.max() < 2**16
        t_ticks = np.round(self.t * CLOCK_HZ).astype(np.int64)
        np.savez_compressed(
            path,
            spike_dticks=np.concatenate([np.diff(t, prepend=0) for t in ticks]).astype(np.uint32),
            unit_counts=np.array([len(t) for t in ticks], dtype=np.int64),
            t_dticks=np.diff(t_ticks, prepend=0).astype(np.uint32),
            pos=self.pos.astype(np.uint16 if pos_int else np.float64),
            name=np.array(self.name),
        )


def load_bundle(path: str | Path) -> Recording:
    """Read a bundle written by :meth:`Recording.save` (the format of the shipped recordings)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            need = {"spike_dticks", "unit_counts", "t_dticks", "pos"}
            if not need <= set(z.files):
                raise ValueError(f"bundle {path} lacks {sorted(need - set(z.files))}")
            d, counts = z["spike_dticks"].astype(np.int64), z["unit_counts"].astype(np.int64)
            t = np.cumsum(z["t_dticks"].astype(np.int64)) / CLOCK_HZ
            pos, name = z["pos"].astype(np.float64), str(z["name"]) if "name" in z.files else path.stem
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"bundle {path} is not a readable .npz file ({exc.__class__.__name__})") from None
    if counts.sum() != len(d) or np.any(counts < 0):
        raise ValueError(f"bundle {path}: unit_counts do not add up to the number of spikes")
    spikes = [np.cumsum(part) / CLOCK_HZ for part in np.split(d, np.cumsum(counts)[:-1])]
    return Recording(spikes, t, pos, name)


def load_recording(
    name: str | None = None, *, units: str | Path | None = None, position: str | Path | None = None
) -> Recording:
    """A shipped recording by ``name`` (``linear-track`` or ``w-maze``), or a user's files: ``units`` is a
    ``spikes.mat`` (MatClust), an ``.npz`` bundle (:meth:`Recording.save`) or an ``.npz`` of one spike-time
    array (seconds) per unit; ``position`` a ``.videoPositionTracking`` file or a ``.npy`` (T, 2|3) array of
    columns ``t`` (seconds), ``x`` [, ``y``] (not needed with a bundle)."""
    if name is not None:
        if name not in BUNDLED:
            raise ValueError(f"unknown recording {name!r}; choose from {', '.join(BUNDLED)}")
        return load_bundle(_BUNDLE_DIR / f"{name}.npz")
    if units is None:
        raise ValueError("give a recording name or a units file")
    units = Path(units)
    if units.suffix.lower() == ".npz":
        try:
            with np.load(units, allow_pickle=False) as z:
                is_bundle = "spike_dticks" in z.files
                raw = None if is_bundle else {k: z[k] for k in z.files}
        except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
            raise ValueError(f"units file {units} is not a readable .npz file ({exc.__class__.__name__})") from None
        arrays = []
        for k, a in (raw or {}).items():  # one unit per array, in the file's order
            if not np.issubdtype(a.dtype, np.number) or a.ndim > 1:
                raise ValueError(
                    f"units file {units}: array {k!r} must be a 1-D numeric array of spike times (seconds); "
                    f"got {a.dtype} {a.shape}"
                )
            arrays.append(a.astype(np.float64).ravel())
        if is_bundle:
            if position is not None:
                raise ValueError("a bundle holds its own positions: drop --position")
            return load_bundle(units)
        spikes = arrays
        if not spikes:
            raise ValueError(f"units file {units} holds no arrays")
    elif units.suffix.lower() == ".mat":
        spikes = read_spikes_mat(units)
    else:
        raise ValueError(f"units file {units} must be a spikes .mat or an .npz (one spike-time array per unit)")
    if position is None:
        raise ValueError("a units file needs a position file (.videoPositionTracking or .npy of t, x[, y])")
    position = Path(position)
    if position.suffix.lower() == ".npy":
        try:
            a = np.load(position, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(
                f"position file {position} is not a readable .npy array ({exc.__class__.__name__})"
            ) from None
        if a.ndim != 2 or a.shape[1] not in (2, 3) or not np.issubdtype(a.dtype, np.number):
            raise ValueError(f"position file {position} must be a (T, 2|3) array of t, x[, y]; got {a.shape}")
        t, pos = a[:, 0], a[:, 1:]
    else:
        t, pos = read_position_tracking(position)
    return Recording(spikes, t, pos, units.stem)


# --- positions, speed, run epochs -----------------------------------------------------------------------------------


def _smooth1d(x: np.ndarray, sigma: float, axis: int = 0) -> np.ndarray:
    from scipy.ndimage import gaussian_filter1d

    return gaussian_filter1d(x, sigma, axis=axis, mode="nearest") if sigma > 0 else x


@dataclass
class Track:
    """Positions scaled to the environment (``pos`` (T, k) in extents, inside [0, 1]^k), speed (extents / s)
    and the run mask."""

    t: np.ndarray
    pos: np.ndarray
    speed: np.ndarray
    run: np.ndarray
    dim: int
    extent: float
    """the environment's size in the recording's units (e.g. pixels per extent)"""


def prepare_track(rec: Recording, *, dim: int | None = None, speed_min: float = 0.05, smooth_s: float = 0.1) -> Track:
    """Scale, smooth and threshold the position track.

    ``dim`` 1 projects 2-D positions on their principal axis (a linear track), 2 keeps them; default: 1 when
    the principal axis carries > 90 % of the moving samples' variance. Positions are smoothed with a Gaussian of
    ``smooth_s`` seconds, speed is the norm of the smoothed gradient, and the run mask keeps samples faster than
    ``speed_min`` extents per second. The extent is the 1st-99th percentile range of the moving samples."""
    if not (np.isfinite(speed_min) and speed_min >= 0):
        raise ValueError(f"speed_min must be finite and non-negative; got {speed_min}")
    if dim not in (None, 1, 2) or (dim == 2 and rec.pos.shape[1] < 2):
        raise ValueError(f"dim must be 1 or 2 (2 needs 2-D positions); got {dim}")
    dt = float(np.median(np.diff(rec.t)))
    pos = _smooth1d(rec.pos, smooth_s / dt)
    raw_speed = np.linalg.norm(np.gradient(pos, rec.t, axis=0), axis=1)
    moving = raw_speed > np.percentile(raw_speed, 50)  # rough mask to fit the axis (rest and parked LED removed)
    if moving.sum() < 10:
        raise ValueError("the position track barely moves: no run epochs to analyse")
    P = pos[moving]
    centre = P.mean(0)
    if P.shape[1] == 2:
        w, V = np.linalg.eigh(np.cov((P - centre).T))
        share = w[-1] / max(w.sum(), 1e-300)
        if dim is None:
            dim = 1 if share > 0.9 else 2
    else:
        dim, V = 1, np.ones((1, 1))
    if dim == 1:
        proj = (pos - centre) @ V[:, -1]  # (T,) along the principal axis
        lo, hi = np.percentile(proj[moving], [1, 99])
        extent = float(hi - lo)
    else:
        lo, hi = np.percentile(P, [1, 99], axis=0)
        extent = float(np.max(hi - lo))
    if not extent > 0:
        raise ValueError("the position track has zero extent")
    scaled = ((proj - lo) / extent)[:, None] if dim == 1 else (pos - lo) / extent
    scaled = np.clip(scaled, 0.0, 1.0)
    speed = raw_speed / extent
    run = speed > speed_min
    if run.sum() < 10:
        raise ValueError(f"fewer than 10 samples faster than speed_min = {speed_min} extents/s")
    return Track(rec.t, scaled, speed, run, int(dim), float(extent))


# --- place fields ---------------------------------------------------------------------------------------------------


@dataclass
class PlaceFields:
    """Occupancy-normalised rate maps and their summaries for ``N`` units on a grid of ``B`` bins."""

    rate: np.ndarray
    """(N, *bins) Hz, NaN where the animal spent less than ``min_occupancy`` seconds"""
    occupancy: np.ndarray
    """(*bins) seconds in each bin during run epochs (smoothed)"""
    edges: list[np.ndarray]
    mean_rate: np.ndarray
    """(N,) spikes per second of run"""
    peak_rate: np.ndarray
    spatial_info: np.ndarray
    """(N,) Skaggs information, bits per spike"""
    widths: list[np.ndarray] = field(default_factory=list)
    """per unit, the widths (extents) of its fields"""
    bin_size: float = 0.0

    @property
    def centers(self) -> np.ndarray:
        """Bin centres (B, k) in extents, in the flattened order of the rate maps."""
        mids = [0.5 * (e[1:] + e[:-1]) for e in self.edges]
        return np.stack(np.meshgrid(*mids, indexing="ij"), -1).reshape(-1, len(mids))

    def place_cells(self, *, min_info: float = 0.5, min_peak: float = 1.0, max_mean: float = 10.0) -> np.ndarray:
        """Indices of units with a place field: spatial information >= ``min_info`` bits/spike, peak rate >=
        ``min_peak`` Hz and mean rate <= ``max_mean`` Hz (putative interneurons fire faster)."""
        ok = (self.spatial_info >= min_info) & (self.peak_rate >= min_peak) & (self.mean_rate <= max_mean)
        return np.flatnonzero(ok)


def _bin_index(pos: np.ndarray, n_bins: int) -> np.ndarray:
    """Flat bin index (T,) of positions (T, k) in [0, 1]^k on an ``n_bins``^k grid."""
    idx = np.minimum((pos * n_bins).astype(np.int64), n_bins - 1)
    return np.ravel_multi_index(tuple(idx.T), (n_bins,) * pos.shape[1])


def _spike_bins(spikes: np.ndarray, track: Track, n_bins: int, keep: np.ndarray) -> np.ndarray:
    """Flat bin indices of the spikes fired in kept (run) samples: each spike takes its nearest sample."""
    i = np.clip(np.searchsorted(track.t, spikes), 1, len(track.t) - 1)
    i -= (spikes - track.t[i - 1]) < (track.t[i] - spikes)  # nearest of the two neighbours
    inside = (spikes >= track.t[0]) & (spikes <= track.t[-1])
    i = i[inside]
    return _bin_index(track.pos[i[keep[i]]], n_bins)


def field_widths(rate_map: np.ndarray, bin_size: float, *, frac: float = 0.2, min_peak: float = 1.0) -> np.ndarray:
    """Widths (extents) of the fields of one rate map (1-D (B,) or 2-D (B, B)): connected regions above
    ``frac`` of the map's peak whose own peak is at least ``min_peak`` Hz. 1-D: the region's length; 2-D: the
    diameter of the disc of the same area."""
    from scipy.ndimage import label

    r = np.nan_to_num(rate_map, nan=0.0)
    peak = r.max(initial=0.0)
    if not peak >= min_peak:
        return np.zeros(0)
    labels, n = label(r > frac * peak)
    out = []
    for k in range(1, n + 1):
        region = labels == k
        if r[region].max() < min_peak:
            continue
        size = region.sum()
        out.append(size * bin_size if r.ndim == 1 else 2 * np.sqrt(size * bin_size**2 / np.pi))
    return np.asarray(out, dtype=np.float64)


def place_fields(
    rec: Recording,
    track: Track,
    *,
    n_bins: int | None = None,
    smooth_bins: float = 1.5,
    min_occupancy: float = 0.1,
    keep: np.ndarray | None = None,
) -> PlaceFields:
    """Rate maps of every unit on an ``n_bins`` grid per axis (default 50 in 1-D, 25 in 2-D) over the run
    samples (``keep``, default ``track.run``): spike counts and occupancy (seconds) per bin, each smoothed with a
    Gaussian of ``smooth_bins`` bins, divided; bins visited less than ``min_occupancy`` s are NaN."""
    from scipy.ndimage import gaussian_filter

    n_bins = int(n_bins or (50 if track.dim == 1 else 25))
    if not 2 <= n_bins <= 1000:
        raise ValueError(f"n_bins must be in [2, 1000]; got {n_bins}")
    keep = track.run if keep is None else keep
    shape = (n_bins,) * track.dim
    dt = np.gradient(track.t)
    occ = np.bincount(_bin_index(track.pos[keep], n_bins), weights=dt[keep], minlength=n_bins**track.dim)
    occ = gaussian_filter(occ.reshape(shape), smooth_bins, mode="constant")
    run_time = float(dt[keep].sum())
    rates, mean_rate = [], []
    for s in rec.spikes:
        b = _spike_bins(s, track, n_bins, keep)
        c = gaussian_filter(
            np.bincount(b, minlength=n_bins**track.dim).reshape(shape).astype(float), smooth_bins, mode="constant"
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            rates.append(np.where(occ >= min_occupancy, c / occ, np.nan))
        mean_rate.append(len(b) / run_time)
    rate = np.stack(rates)  # (N, *bins)
    flat = rate.reshape(len(rate), -1)
    p = np.where(np.isfinite(flat[0]), occ.ravel(), 0.0)
    p = p / p.sum()
    lam = np.nansum(flat * p, axis=1, keepdims=True)  # (N, 1) occupancy-weighted mean rate
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(lam > 0, flat / lam, 0.0)
        terms = np.where(ratio > 0, p * ratio * np.log2(ratio), 0.0)
    info = np.nansum(terms, axis=1)
    bin_size = 1.0 / n_bins
    widths = [field_widths(r, bin_size) for r in rate]
    edges = [np.linspace(0, 1, n_bins + 1)] * track.dim
    return PlaceFields(
        rate, occ, edges, np.array(mean_rate), np.nanmax(flat, axis=1, initial=0.0), info, widths, bin_size
    )


# --- Bayesian decoding ------------------------------------------------------------------------------------------------


def binned_counts(rec: Recording, track: Track, window: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spike counts (W, N) in consecutive windows of ``window`` seconds that lie wholly inside run epochs, with
    the mean position (W, k) and the start time (W,) of each window."""
    if not (np.isfinite(window) and window > 0):
        raise ValueError(f"window must be positive; got {window}")
    edges = np.arange(track.t[0], track.t[-1], window)
    if len(edges) < 3:
        raise ValueError(f"window {window} s is longer than the recording")
    w_idx = np.searchsorted(edges, track.t, side="right") - 1  # (T,) window of each sample
    n_w = len(edges) - 1
    valid = (w_idx >= 0) & (w_idx < n_w)
    all_run = np.ones(n_w, bool)
    np.logical_and.at(all_run, w_idx[valid], track.run[valid])
    n_samp = np.bincount(w_idx[valid], minlength=n_w)
    ok = all_run & (n_samp > 0)
    pos = (
        np.stack([np.bincount(w_idx[valid], weights=track.pos[valid, j], minlength=n_w) for j in range(track.dim)], 1)
        / np.maximum(n_samp, 1)[:, None]
    )
    counts = np.stack([np.histogram(s, edges)[0] for s in rec.spikes], 1).astype(np.float64)  # (W, N)
    return counts[ok], pos[ok], edges[:-1][ok]


@dataclass
class DecodeResult:
    error_mean: np.ndarray
    """(W,) |posterior mean - true position| per window, extents"""
    error_map: np.ndarray
    """(W,) |MAP bin centre - true position|"""
    estimate: np.ndarray
    """(W, k) posterior-mean positions"""
    truth: np.ndarray
    chance_median: float
    """median error of a decoder that ignores the spikes (a random window's position)"""
    units_used: float = 0.0
    """mean number of units decoded with per fold"""

    def summary(self) -> dict[str, float]:
        return {
            "units_per_fold": self.units_used,
            "median_error_posterior_mean": float(np.median(self.error_mean)),
            "median_error_map": float(np.median(self.error_map)),
            "median_error_chance": self.chance_median,
            "windows": len(self.error_mean),
        }


def decode_position(
    rec: Recording,
    track: Track,
    *,
    window: float = 0.5,
    folds: int = 5,
    units: np.ndarray | None = None,
    place_cells_only: bool = False,
    n_bins: int | None = None,
    rng: np.random.Generator,
) -> DecodeResult:
    """Cross-validated Bayesian decoding of position from the run windows: the recording's run time is cut into
    ``folds`` contiguous blocks; each block is decoded with rate maps fitted on the others (Poisson likelihood of
    the window's counts, uniform prior over the visited bins; ``units`` picks the units used). With
    ``place_cells_only`` the units are further restricted, fold by fold, to the place cells of the *training*
    folds' rate maps (:meth:`PlaceFields.place_cells`): the held-out block never takes part in the selection."""
    from icml26.hyperhopfield.memory import poisson_log_likelihood

    if not 2 <= int(folds) <= 100:
        raise ValueError(f"folds must be in [2, 100]; got {folds}")
    counts, truth, starts = binned_counts(rec, track, window)
    if len(counts) < 2 * folds:
        raise ValueError(f"only {len(counts)} run windows of {window} s: too few for {folds} folds")
    units = np.arange(rec.n_units) if units is None else np.asarray(units)
    if len(units) == 0:
        raise ValueError("no units to decode with")
    fold_of_sample = np.minimum(
        ((track.t - track.t[0]) / (track.t[-1] - track.t[0] + 1e-9) * folds).astype(int), folds - 1
    )
    fold_of_window = fold_of_sample[np.searchsorted(track.t, starts)]
    est = np.empty_like(truth)
    map_est = np.empty_like(truth)
    sub = Recording([rec.spikes[u] for u in units], rec.t, rec.pos, rec.name)
    n_used: list[int] = []
    for k in range(int(folds)):
        test = fold_of_window == k
        if not test.any():
            continue
        fields = place_fields(sub, track, n_bins=n_bins, keep=track.run & (fold_of_sample != k))
        use = fields.place_cells() if place_cells_only else np.arange(len(units))  # chosen on the training folds
        if len(use) == 0:
            raise ValueError(f"no unit passes the place-cell criteria on the training folds of fold {k}")
        n_used.append(len(use))
        F = fields.rate[use].reshape(len(use), -1).T  # (B, N) Hz
        seen = np.all(np.isfinite(F), axis=1)
        F = np.maximum(F[seen], 1e-3) * window  # expected counts; a floor so a silent bin is not impossible
        centres = fields.centers[seen]
        ll = poisson_log_likelihood(F, counts[test][:, units[use]])  # (Q, B)
        post = np.exp(ll - ll.max(1, keepdims=True))
        post /= post.sum(1, keepdims=True)
        est[test] = post @ centres
        map_est[test] = centres[np.argmax(ll, 1)]
    err = np.linalg.norm(est - truth, axis=1)
    err_map = np.linalg.norm(map_est - truth, axis=1)
    chance = np.linalg.norm(truth[rng.permutation(len(truth))] - truth, axis=1)
    return DecodeResult(err, err_map, est, truth, float(np.median(chance)), float(np.mean(n_used)))


# --- width distributions ----------------------------------------------------------------------------------------------


def _truncated_normal_logpdf(x: np.ndarray, mu: float, s: float, floor: float) -> np.ndarray:
    """log density of N(mu, s^2) truncated below at ``floor`` (renormalised over [floor, inf))."""
    from scipy.special import log_ndtr

    z = (x - mu) / s
    return -0.5 * z**2 - np.log(s) - 0.5 * np.log(2 * np.pi) - log_ndtr((mu - floor) / s)


def _truncated_normal_fit(x: np.ndarray, floor: float) -> tuple[float, float]:
    """Maximum-likelihood (mu, sigma) of a normal truncated below at ``floor``, with ``mu >= floor`` (L-BFGS on
    (mu, log sigma) from the moments, analytic gradient; lambda = phi(a) / Phi(a) is the inverse Mills ratio at
    a = (mu - floor) / s). The bound keeps the model a *typical* width with scatter: with mu free, a normal whose
    mean lies far below the floor is an exponential tail above it, and the alternatives would contain the claim."""
    from scipy import optimize
    from scipy.special import log_ndtr

    n = len(x)

    def nll(p):
        mu, s = p[0], np.exp(p[1])
        z, a = (x - mu) / s, (mu - floor) / s
        lam = np.exp(-0.5 * a**2 - 0.5 * np.log(2 * np.pi) - log_ndtr(a))
        f = np.sum(0.5 * z**2) + n * p[1] + n * log_ndtr(a)
        grad = np.array([-np.sum(z) / s + n * lam / s, np.sum(1 - z**2) - n * lam * a])
        return f, grad

    lo = floor if np.isfinite(floor) else None
    p0 = np.array([max(x.mean(), lo if lo is not None else -np.inf), np.log(max(x.std(), 1e-3))])
    res = optimize.minimize(nll, p0, jac=True, method="L-BFGS-B", bounds=[(lo, None), (np.log(1e-4), None)])
    return float(res.x[0]), float(np.exp(res.x[1]))


def width_log_likelihoods(train: np.ndarray, test: np.ndarray, *, floor: float = 0.0) -> dict[str, float]:
    """Mean held-out log-likelihood per width of three models fitted (maximum likelihood) on ``train``:
    exponential (multi-scale), log-normal, and normal ("constant" width with a spread), each **truncated at
    ``floor``** (the narrowest width the field detector can report): every density is renormalised over
    ``[floor, inf)``, so a model is not penalised for mass below what could be measured. The truncated exponential
    is the shifted one (memoryless: ``w - floor ~ Exp``); the normal's and log-normal's truncated fits are numeric."""
    train, test = np.asarray(train, float), np.asarray(test, float)
    if len(train) < 3 or np.any(train <= 0) or np.any(test <= 0):
        raise ValueError("need at least 3 positive training widths and positive test widths")
    if floor < 0 or np.any(train < floor) or np.any(test < floor):
        raise ValueError(f"every width must be at or above the floor {floor:.3g}")
    scale = max(train.mean() - floor, 1e-6)  # ML scale of the shifted exponential
    mu, sd = _truncated_normal_fit(train, floor)
    logs = np.log(train)
    lfloor = np.log(floor) if floor > 0 else -np.inf
    mu_l, sd_l = _truncated_normal_fit(logs, lfloor) if floor > 0 else (logs.mean(), max(logs.std(), 1e-6))
    return {
        "exponential": float(np.mean(-np.log(scale) - (test - floor) / scale)),
        "log-normal": float(np.mean(_truncated_normal_logpdf(np.log(test), mu_l, sd_l, lfloor) - np.log(test))),
        "constant": float(np.mean(_truncated_normal_logpdf(test, mu, sd, floor))),
    }


def width_likelihood_ratio(
    widths: np.ndarray,
    rng: np.random.Generator,
    *,
    folds: int = 5,
    repeats: int = 20,
    floor: float = 0.0,
    groups: np.ndarray | None = None,
) -> dict:
    """Cross-validated per-width log-likelihood ratios of the exponential model against the constant (normal) and
    log-normal models, all truncated at ``floor`` (``folds``-fold, averaged over ``repeats`` random splits): > 0
    favours exponential. ``groups`` (one label per width, e.g. the original field of a bootstrap resample) keeps
    all widths of a group in one fold, so a resampled duplicate never sits in both training and test folds."""
    w = np.asarray(widths, float)
    groups = np.arange(len(w)) if groups is None else np.asarray(groups)
    if groups.shape != w.shape:
        raise ValueError(f"groups must have one label per width; got {groups.shape} for {w.shape}")
    labels, inverse = np.unique(groups, return_inverse=True)
    if len(labels) < 2 * folds:
        raise ValueError(
            f"need at least {2 * folds} distinct widths for {folds}-fold cross-validation; got {len(labels)}"
        )
    acc = {"exponential": 0.0, "log-normal": 0.0, "constant": 0.0}
    for _ in range(repeats):
        fold = (rng.permutation(len(labels)) % folds)[inverse]  # (len(w),) folds of whole groups
        for k in range(folds):
            ll = width_log_likelihoods(w[fold != k], w[fold == k], floor=floor)
            for m in acc:
                acc[m] += ll[m] * np.mean(fold == k) / repeats
    return {
        "LLR exp - constant": acc["exponential"] - acc["constant"],
        "LLR exp - log-normal": acc["exponential"] - acc["log-normal"],
        **{f"held-out LL {m}": v for m, v in acc.items()},
    }
