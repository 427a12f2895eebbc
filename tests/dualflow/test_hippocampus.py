"""The bundled real place-cell session (nelpy linear track, MIT) and its readers."""

import numpy as np
import pytest

from icml26.dualflow.hippocampus import (
    BUNDLE,
    bin_session,
    lap_segments,
    load_linear_track,
    read_position_tracking,
    read_spikes_mat,
)


def test_bundle_has_licence_and_laps_alternate():
    assert (BUNDLE.parent / "LICENSE-nelpy").is_file()
    laps = load_linear_track(rebin=2)
    assert laps.bin_s == pytest.approx(0.1)
    assert len(laps.counts) >= 40  # 48 runs across the track in the first ~15 min
    assert all(c.shape[1] == laps.counts[0].shape[1] for c in laps.counts)
    # a linear track: runs alternate direction and each lap spans most of the track
    assert np.mean(laps.direction[1:] != laps.direction[:-1]) > 0.9
    assert all(np.ptp(p) > 0.7 for p in laps.position)


def test_lap_segments_on_a_known_trajectory():
    back_and_forth = np.concatenate([np.linspace(0, 1, 50), np.full(20, 1.0), np.linspace(1, 0, 30)] * 3)
    laps = lap_segments(back_and_forth)
    assert len(laps) == 6  # three runs each way (the first starts inside the end zone: not cut)
    turn_back = np.concatenate([np.zeros(20), np.linspace(0, 0.6, 30), np.linspace(0.6, 0, 30), np.zeros(20)])
    assert len(lap_segments(np.concatenate([back_and_forth, turn_back]))) == 6  # a turn-back is not a lap


def test_bin_session_counts_every_spike_in_range():
    t_pos = np.linspace(0.0, 10.0, 601)
    spikes = [np.array([0.01, 0.02, 5.0, 9.99]), np.array([2.5])]
    counts, x, t0 = bin_session(spikes, t_pos, t_pos * 2, bin_s=0.5)
    assert counts.shape == (len(t0), 2) and counts[:, 1].sum() == 1
    assert counts[0, 0] == 2 and x[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="bin_s"):
        bin_session(spikes, t_pos, t_pos, bin_s=0.0)


def test_readers_refuse_foreign_files(tmp_path):
    bad = tmp_path / "x.mat"
    bad.write_bytes(b"not matlab")
    with pytest.raises(ValueError, match="MATLAB"):
        read_spikes_mat(bad)
    with pytest.raises(ValueError, match="End settings"):
        read_position_tracking(bad)
    with pytest.raises(FileNotFoundError):
        read_spikes_mat(tmp_path / "missing.mat")
    np.savez(tmp_path / "u.npz", counts=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="missing arrays"):
        load_linear_track(tmp_path / "u.npz")


def test_position_tracking_round_trip(tmp_path):
    rec = np.zeros(3, dtype=[("t", "<u4"), ("x", "<u2"), ("y", "<u2"), ("x2", "<u2"), ("y2", "<u2")])
    rec["t"], rec["x"], rec["y"] = [30000, 60000, 90000], [1, 2, 3], [4, 5, 6]
    path = tmp_path / "a.videoPositionTracking"
    path.write_bytes(b"<Start settings>\nclockrate: 30000\n<End settings>\n" + rec.tobytes())
    t, x, y = read_position_tracking(path)
    assert np.allclose(t, [1, 2, 3]) and np.allclose(x, [1, 2, 3]) and np.allclose(y, [4, 5, 6])
