"""Issue 40 item 4: a user's own NWB recording (units, a behavioural SpatialSeries, trials) read, binned and
decoded through the library and the CLI, on a tiny NWB file written here."""

import json
from datetime import UTC, datetime

import numpy as np
import pytest
import torch

pynwb = pytest.importorskip("pynwb")

from icml26.dualflow.cli import main  # noqa: E402
from icml26.dualflow.nwb import read_nwb  # noqa: E402


def _write_nwb(path, n_trials=4, trial_s=3.0, n_units=5, seed=0):
    """Units whose rates follow a known position (place fields) and a Position/SpatialSeries at 50 Hz."""
    from pynwb import NWBHDF5IO, NWBFile
    from pynwb.behavior import Position

    rng = np.random.default_rng(seed)
    nwb = NWBFile("tiny track", "test-0", datetime(2026, 1, 1, tzinfo=UTC))
    t = np.arange(0, n_trials * trial_s, 0.02)
    x = 0.5 + 0.5 * np.sin(2 * np.pi * t / trial_s)  # one run back and forth per trial
    pos = Position(name="Position")
    pos.create_spatial_series(name="track", data=x, timestamps=t, reference_frame="track start")
    nwb.create_processing_module("behavior", "position").add(pos)
    centres = np.linspace(0, 1, n_units)
    for c in centres:  # inhomogeneous Poisson spikes, 40 Hz peak, field width 0.15
        rate = 40 * np.exp(-((x - c) ** 2) / (2 * 0.15**2))
        nwb.add_unit(spike_times=t[rng.random(len(t)) < rate * 0.02])
    for k in range(n_trials):
        nwb.add_trial(start_time=k * trial_s, stop_time=(k + 1) * trial_s)
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)
    return x


def test_read_nwb_bins_units_and_behaviour_per_trial(tmp_path):
    _write_nwb(tmp_path / "rec.nwb")
    counts, behaviour = read_nwb(tmp_path / "rec.nwb", bin_s=0.1)
    assert len(counts) == len(behaviour) == 4
    for c, b in zip(counts, behaviour, strict=True):
        assert c.shape[1] == 5 and b.shape == (len(c), 1) and len(c) >= 29
        assert c.sum() > 0 and 0 <= b.min() and b.max() <= 1
    # each unit fires most where its field is: the count-weighted mean position rises with the field centre
    c, b = np.concatenate(counts), np.concatenate(behaviour)[:, 0]
    assert np.all(np.diff((c * b[:, None]).sum(0) / c.sum(0)) > 0)


def test_read_nwb_errors(tmp_path):
    _write_nwb(tmp_path / "rec.nwb")
    with pytest.raises(ValueError, match="no time series named 'speed'"):
        read_nwb(tmp_path / "rec.nwb", series="speed")
    with pytest.raises(FileNotFoundError):
        read_nwb(tmp_path / "missing.nwb")
    (tmp_path / "junk.nwb").write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match="not a readable NWB file"):
        read_nwb(tmp_path / "junk.nwb")


def test_cli_decode_reads_nwb(tmp_path, capsys):
    _write_nwb(tmp_path / "rec.nwb")
    args = ["decode", str(tmp_path / "rec.nwb"), "--bin", "0.1", "--series", "track", "--folds", "2", "--preset",
            "smoke", "--steps", "20", "--components", "2", "--out", str(tmp_path / "z.npz"), "--json", "-"]  # fmt: skip
    assert main(args) == 0
    scores = json.loads(capsys.readouterr().out)
    assert {"DCF", "PCA"} <= set(scores) and scores["PCA"]["kNN R2"] > 0.3  # place fields: position decodable
    with pytest.raises(ValueError, match="--series"):
        main([*args[:2], "--behaviour", str(tmp_path / "rec.nwb"), "--out", str(tmp_path / "y.npz")])


def _write_continuous_nwb(path, duration_s=12.0, n_units=5, seed=1):
    """The same place-field recording without a trials table: one continuous series."""
    from pynwb import NWBHDF5IO, NWBFile
    from pynwb.behavior import Position

    rng = np.random.default_rng(seed)
    nwb = NWBFile("continuous track", "test-1", datetime(2026, 1, 1, tzinfo=UTC))
    t = np.arange(0, duration_s, 0.02)
    x = 0.5 + 0.5 * np.sin(2 * np.pi * t / 3.0)
    pos = Position(name="Position")
    pos.create_spatial_series(name="track", data=x, timestamps=t, reference_frame="track start")
    nwb.create_processing_module("behavior", "position").add(pos)
    for c in np.linspace(0, 1, n_units):
        nwb.add_unit(spike_times=t[rng.random(len(t)) < 40 * np.exp(-((x - c) ** 2) / (2 * 0.15**2)) * 0.02])
    with NWBHDF5IO(str(path), "w") as io:
        io.write(nwb)


def test_read_nwb_without_trials_cuts_blocks_of_time(tmp_path):
    """Referee (third review) item 4: a recording without a trials table used to become one trial and always be
    refused; it is now cut into equal blocks of time that serve as the trials."""
    _write_continuous_nwb(tmp_path / "cont.nwb")
    counts, behaviour = read_nwb(tmp_path / "cont.nwb", bin_s=0.1, blocks=3)
    assert len(counts) == len(behaviour) == 3
    assert all(abs(len(c) - 40) <= 1 for c in counts)  # 12 s / 3 blocks / 0.1 s bins
    assert sum(c.sum() for c in counts) > 0
    with pytest.raises(ValueError, match="blocks must be an integer >= 2"):
        read_nwb(tmp_path / "cont.nwb", blocks=1)
    with pytest.raises(ValueError, match="decoding needs two"):
        read_nwb(tmp_path / "cont.nwb", bin_s=5.0, blocks=3)  # 4 s blocks hold no two 5 s bins


def test_cli_decode_reads_a_continuous_nwb(tmp_path, capsys):
    _write_continuous_nwb(tmp_path / "cont.nwb")
    args = ["decode", str(tmp_path / "cont.nwb"), "--bin", "0.1", "--blocks", "4", "--folds", "2", "--preset",
            "smoke", "--steps", "20", "--components", "2", "--out", str(tmp_path / "z.npz"), "--json", "-"]  # fmt: skip
    assert main(args) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["PCA"]["kNN R2"] > 0.3
    assert np.load(tmp_path / "z.npz").files == [f"trial_{i:05d}" for i in range(4)]
    with pytest.raises(SystemExit):  # argparse: blocks must be >= 2
        main([*args[:-2], "--blocks", "1"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            main([*args[:-2], "--device", "cuda"])
