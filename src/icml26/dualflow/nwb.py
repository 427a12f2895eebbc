"""Read a user's own recording from an NWB 2 file: sorted units' spike times and a behavioural time series,
binned into trials for :func:`icml26.dualflow.real.cross_validated_decoding` (``icml26 dualflow decode x.nwb``).

Needs ``pynwb`` (optional). What is read:

- ``units``: the spike times of every unit (the Units table's ``spike_times`` column);
- a behavioural ``TimeSeries`` (e.g. a ``SpatialSeries`` inside ``processing/behavior/Position``): the one named
  ``series``, or else the only ``SpatialSeries`` in the file; its ``timestamps`` (or ``starting_time`` + ``rate``)
  give the time base;
- ``trials`` (optional): each trial's ``start_time`` / ``stop_time``; without a trials table the series is cut
  into ``blocks`` contiguous blocks of equal duration (default 4), which then serve as the trials (and so as the
  cross-validation folds' units: each fold holds out whole blocks of time).

Counts are binned in ``bin_s`` bins over each trial (clipped to the behaviour's time range); the behaviour per bin
is linearly interpolated at the bin centres.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

__all__ = ["read_nwb"]


def _series(nwb, name: str | None):
    from pynwb import TimeSeries
    from pynwb.behavior import SpatialSeries

    found = [o for o in nwb.objects.values() if isinstance(o, TimeSeries)]
    if name is not None:
        match = [o for o in found if o.name == name]
        if not match:
            raise ValueError(f"no time series named {name!r} (found {sorted(o.name for o in found) or 'none'})")
        return match[0]
    spatial = [o for o in found if isinstance(o, SpatialSeries)]
    if len(spatial) != 1:
        raise ValueError(
            f"{len(spatial)} SpatialSeries in the file: name the behaviour with series= / --series "
            f"(time series found: {sorted(o.name for o in found) or 'none'})"
        )
    return spatial[0]


def read_nwb(path: str | Path, bin_s: float = 0.05, series: str | None = None, blocks: int = 4) -> tuple[list, list]:
    """(counts, behaviour): lists with one (n_bins_i, n_units) count array and one (n_bins_i, k) behaviour array
    per trial of the NWB file at ``path`` — or per block of ``blocks`` equal blocks of time when the file has no
    trials table (see the module docstring)."""
    try:
        from pynwb import NWBHDF5IO
    except ImportError:
        raise ImportError("reading NWB files needs pynwb: pip install pynwb") from None
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such NWB file: {path}")
    if not (np.isfinite(bin_s) and bin_s > 0):
        raise ValueError(f"bin must be a positive number of seconds; got {bin_s}")
    if isinstance(blocks, bool) or not isinstance(blocks, int | np.integer) or blocks < 2:
        raise ValueError(f"blocks must be an integer >= 2 (a continuous recording is cut into blocks); got {blocks!r}")
    try:
        io = NWBHDF5IO(str(path), "r", load_namespaces=True)
        nwb = io.read()
    except Exception as exc:  # h5py / hdmf raise many types for foreign files
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"{path}: not a readable NWB file ({first})") from None
    try:
        if nwb.units is None or len(nwb.units) == 0:
            raise ValueError(f"{path}: no units table with spike times")
        spikes = [np.asarray(nwb.units.get_unit_spike_times(i), dtype=float) for i in range(len(nwb.units))]
        ts = _series(nwb, series)
        data = np.asarray(ts.data[:], dtype=float)
        data = data[:, None] if data.ndim == 1 else data.reshape(len(data), -1)
        t = np.asarray(ts.timestamps[:], dtype=float) if ts.timestamps is not None else (
            float(ts.starting_time or 0.0) + np.arange(len(data)) / float(ts.rate))  # fmt: skip
        if len(t) < 2 or not np.all(np.isfinite(data)):
            raise ValueError(f"{path}: the behaviour {ts.name!r} needs at least 2 finite samples")
        if nwb.trials is not None and len(nwb.trials) > 0:
            bounds = list(zip(nwb.trials["start_time"][:], nwb.trials["stop_time"][:], strict=True))
        else:
            edges = np.linspace(t[0], t[-1], int(blocks) + 1)  # contiguous blocks of equal duration
            bounds = list(itertools.pairwise(edges))
    finally:
        io.close()
    counts, behaviour = [], []
    for start, stop in bounds:
        start, stop = max(float(start), t[0]), min(float(stop), t[-1])
        edges = np.arange(start, stop + 1e-12, bin_s)
        if len(edges) < 3:
            continue  # a trial shorter than two bins (or outside the behaviour's range) is skipped
        counts.append(np.stack([np.histogram(s, edges)[0] for s in spikes], axis=1).astype(float))
        centres = edges[:-1] + bin_s / 2
        behaviour.append(np.stack([np.interp(centres, t, col) for col in data.T], axis=1))
    if len(counts) < 2:
        raise ValueError(
            f"{path}: {len(counts)} trial(s) or block(s) of at least two {bin_s:g} s bins; decoding needs two "
            "(a shorter --bin, or fewer --blocks for a recording without trials)"
        )
    return counts, behaviour
