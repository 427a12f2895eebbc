"""Loaders of the recordings (original formats, the shipped bundles, a user's arrays), place fields on ground
truth, Bayesian decoding, and the width likelihood ratios."""

import numpy as np
import pytest

from icml26.hyperhopfield.recordings import (
    BUNDLED,
    Recording,
    decode_position,
    field_widths,
    load_bundle,
    load_recording,
    place_fields,
    prepare_track,
    read_position_tracking,
    read_spikes_mat,
    width_likelihood_ratio,
)


def _synthetic(rng, *, minutes=20.0, rate=60.0, centres=(0.3, 0.7), sigma=0.04, peak=15.0):
    """A rat running laps on a 1-D track (positions in 'pixels' 100-500 along x, y fixed) and Gaussian place
    cells with known centres and width, spikes by thinning a Poisson process; plus one untuned unit."""
    t = np.arange(0, minutes * 60, 1 / rate)
    s = np.abs(((t / 10.0) % 2.0) - 1.0)  # 10 s per lap direction, in [0, 1]
    pos = np.stack([100 + 400 * s, np.full_like(s, 240.0)], 1)
    spikes = []
    for c in centres:
        lam = peak * np.exp(-((s - c) ** 2) / (2 * sigma**2))
        spikes.append(t[rng.random(len(t)) < lam / rate] + 0.5 / rate)
    spikes.append(t[rng.random(len(t)) < 2.0 / rate])  # 2 Hz everywhere
    return Recording(spikes, t, pos, "synthetic"), s


def test_place_fields_recover_centre_width_and_information():
    rng = np.random.default_rng(0)
    rec, _ = _synthetic(rng)
    track = prepare_track(rec, speed_min=0.0)
    assert track.dim == 1 and 0.95 < track.run.mean() <= 1.0
    pf = place_fields(rec, track, n_bins=50, smooth_bins=1.0)
    x = pf.centers[:, 0]
    for i, c in enumerate((0.3, 0.7)):
        peak_at = x[np.nanargmax(pf.rate[i])]
        assert min(abs(peak_at - c), abs(peak_at - (1 - c))) < 0.04  # the axis may come out flipped
        # above 20 % of the peak a Gaussian of sd sigma spans 2 sigma sqrt(2 ln 5) = 3.59 sigma (+ smoothing)
        assert len(pf.widths[i]) == 1 and 0.10 < pf.widths[i][0] < 0.2
    assert pf.spatial_info[0] > 1.5 and pf.spatial_info[2] < 0.1
    assert list(pf.place_cells()) == [0, 1]


def test_decoding_beats_chance_and_uses_the_held_out_fold():
    rng = np.random.default_rng(1)
    centres = tuple(np.linspace(0.05, 0.95, 12))
    rec, _ = _synthetic(rng, centres=centres, minutes=10)
    track = prepare_track(rec, speed_min=0.0)
    res = decode_position(rec, track, window=0.5, folds=4, rng=rng)
    summary = res.summary()
    assert summary["median_error_posterior_mean"] < 0.05 < summary["median_error_chance"] / 3
    with pytest.raises(ValueError, match="folds"):
        decode_position(rec, track, folds=1, rng=rng)


def test_field_widths_thresholds():
    r = np.zeros(50)
    r[10:15] = 5.0
    r[30:32] = 0.5  # below min_peak: no field
    assert field_widths(r, 0.02).tolist() == pytest.approx([0.1])
    assert field_widths(np.zeros(10), 0.1).size == 0
    r2 = np.zeros((10, 10))
    r2[2:4, 2:4] = 3.0
    assert field_widths(r2, 0.1)[0] == pytest.approx(2 * np.sqrt(0.04 / np.pi))


def test_bundles_hold_the_recordings():
    for name, units, spikes in (("linear-track", 31, 28_829), ("w-maze", 25, 518_352)):
        rec = load_recording(name)
        assert rec.n_units == units and sum(len(s) for s in rec.spikes) == spikes
        track = prepare_track(rec)
        assert track.dim == (1 if name == "linear-track" else 2)
        assert 0.1 < track.run.mean() < 0.5  # rest (and the parked LED) dropped
    assert BUNDLED == ("linear-track", "w-maze")


def test_real_decoding_beats_chance():
    rec = load_recording("linear-track")
    track = prepare_track(rec)
    res = decode_position(rec, track, place_cells_only=True, rng=np.random.default_rng(0))
    s = res.summary()
    assert s["median_error_posterior_mean"] < s["median_error_chance"] / 2
    assert 0 < s["units_per_fold"] <= rec.n_units


def test_place_cells_are_chosen_on_the_training_folds_only(monkeypatch):
    """Each fold's place-cell selection sees the run samples of the training folds only."""
    from icml26.hyperhopfield import recordings

    rec = load_recording("linear-track")
    track = prepare_track(rec)
    seen = []
    original = recordings.place_fields

    def spy(rec_, track_, **kw):
        seen.append(kw["keep"].copy())
        return original(rec_, track_, **kw)

    monkeypatch.setattr(recordings, "place_fields", spy)
    decode_position(rec, track, folds=4, place_cells_only=True, rng=np.random.default_rng(0))
    assert len(seen) >= 2 and all((k & ~track.run).sum() == 0 for k in seen)  # folds with run windows
    assert all(0.3 < k.sum() / track.run.sum() < 0.99 for k in seen)  # each selection sees 3 of 4 blocks


def test_original_formats_and_bundle_round_trip(tmp_path):
    import scipy.io

    # MatClust layout: spikes{day}{epoch}{tetrode}{cell}.time, with empty cells and an empty unit
    unit = np.zeros((1, 1), dtype=[("time", "O"), ("timerange", "O"), ("meanrate", "O")])
    unit[0, 0] = (np.array([[1.0], [2.5], [3.25]]), np.array([[0.0, 4.0]]), np.array([[0.75]]))
    empty_unit = np.zeros((1, 1), dtype=unit.dtype)
    empty_unit[0, 0] = (np.zeros((0, 1)), np.array([[0.0, 4.0]]), np.array([[0.0]]))
    tetrode = np.empty((1, 3), dtype=object)
    tetrode[0, 0], tetrode[0, 1], tetrode[0, 2] = unit, np.zeros((0, 0)), empty_unit
    tetrodes = np.empty((1, 2), dtype=object)
    tetrodes[0, 0], tetrodes[0, 1] = tetrode, np.zeros((0, 0))
    epoch = np.empty((1, 1), dtype=object)
    epoch[0, 0] = tetrodes
    scipy.io.savemat(tmp_path / "spikes.mat", {"spikes": epoch})
    units = read_spikes_mat(tmp_path / "spikes.mat")
    assert len(units) == 1 and units[0].tolist() == [1.0, 2.5, 3.25]

    header = b"<Start settings>\nclockrate: 30000\n<End settings>\n"
    rec = np.zeros(5, dtype=[("t", "<u4"), ("x", "<u2"), ("y", "<u2"), ("x2", "<u2"), ("y2", "<u2")])
    rec["t"] = [0, 500, 1000, 900, 1500]  # one record whose clock steps back
    rec["x"] = [10, 11, 12, 99, 13]
    (tmp_path / "p.videoPositionTracking").write_bytes(header + rec.tobytes())
    t, xy = read_position_tracking(tmp_path / "p.videoPositionTracking")
    assert t.tolist() == pytest.approx([0, 500 / 3e4, 1000 / 3e4, 1500 / 3e4]) and xy[:, 0].tolist() == [10, 11, 12, 13]

    original = load_recording("linear-track")
    original.save(tmp_path / "b.npz")
    again = load_bundle(tmp_path / "b.npz")
    assert all(np.allclose(a, b, rtol=0, atol=1e-9) for a, b in zip(original.spikes, again.spikes, strict=True))
    assert np.array_equal(original.pos, again.pos)

    # a user's arrays: one spike-time array per unit (.npz) and (T, 3) t, x, y (.npy)
    np.savez(tmp_path / "u.npz", a=np.array([0.1, 0.2]), b=np.array([0.3]))
    tt = np.linspace(0, 10, 101)
    np.save(tmp_path / "pos.npy", np.stack([tt, tt * 3, tt * 0], 1))
    user = load_recording(units=tmp_path / "u.npz", position=tmp_path / "pos.npy")
    assert user.n_units == 2 and user.pos.shape == (101, 2)


def test_bad_files_are_clear_errors(tmp_path):
    garbage = tmp_path / "g.mat"
    garbage.write_text("not matlab")
    with pytest.raises(ValueError, match="not a readable MATLAB"):
        read_spikes_mat(garbage)
    bad = tmp_path / "b.videoPositionTracking"
    bad.write_bytes(b"no header at all")
    with pytest.raises(ValueError, match="header"):
        read_position_tracking(bad)
    with pytest.raises(ValueError, match="unknown recording"):
        load_recording("t-maze")
    with pytest.raises(ValueError, match="position file"):
        load_recording(units=_npz(tmp_path), position=_bad_npy(tmp_path))
    with pytest.raises(ValueError, match="strictly increasing"):
        Recording([np.array([1.0])], np.array([0.0, 0.0, 1.0]), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="barely moves"):
        prepare_track(Recording([np.array([1.0])], np.arange(100.0), np.zeros((100, 2))))
    line = Recording([np.array([1.0])], np.arange(100.0), np.sin(np.arange(100.0) / 5))
    with pytest.raises(ValueError, match="2 needs 2-D"):
        prepare_track(line, dim=2)  # 1-D positions used to override dim=2 silently
    with pytest.raises(ValueError, match="dim must be"):
        prepare_track(line, dim=3)
    p = tmp_path / "m.npz"
    np.savez(p, a=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="1-D numeric"):
        load_recording(units=p, position=_bad_npy(tmp_path))  # a matrix used to become one unit silently


def _npz(tmp_path):
    p = tmp_path / "units.npz"
    np.savez(p, a=np.array([0.5]))
    return p


def _bad_npy(tmp_path):
    p = tmp_path / "pos.npy"
    np.save(p, np.zeros((10, 5)))
    return p


def test_width_likelihood_ratio_prefers_the_true_model():
    rng = np.random.default_rng(2)
    exp = width_likelihood_ratio(rng.exponential(1.0, 400), rng)
    const = width_likelihood_ratio(np.abs(rng.normal(1.0, 0.2, 400)), rng)
    # the constant model is a normal truncated at 0 with its mean >= 0: a half-normal is its nearest to an exponential
    assert exp["LLR exp - constant"] > 0.03 and exp["LLR exp - log-normal"] > 0
    assert const["LLR exp - constant"] < -0.1
    with pytest.raises(ValueError, match="at least"):
        width_likelihood_ratio(np.ones(4), rng)


def test_truncated_width_likelihoods_see_through_the_floor():
    """Above a detection floor an exponential is a shifted exponential: with every model truncated at the floor it
    beats the normal and the log-normal (untruncated, the log-normal won); floored normal widths still lose."""
    rng = np.random.default_rng(3)
    floor = 0.3
    x = rng.exponential(1.0, 8000)
    exp = width_likelihood_ratio(x[x >= floor][:1000], rng, repeats=2, floor=floor)
    # the margin over the truncated log-normal is small (~0.01 per width): it can mimic a shifted exponential
    assert exp["LLR exp - constant"] > 0.02 and exp["LLR exp - log-normal"] > 0
    y = rng.normal(1.0, 0.3, 2000)
    const = width_likelihood_ratio(y[y >= floor][:400], rng, repeats=3, floor=floor)
    assert const["LLR exp - constant"] < -0.1
    with pytest.raises(ValueError, match="floor"):
        width_likelihood_ratio(np.linspace(0.1, 2, 40), rng, floor=0.5)
    # bootstrap duplicates stay in one fold: 10 fields resampled to 40 widths still make 5 folds of whole fields
    idx = np.repeat(np.arange(10), 4)
    r = width_likelihood_ratio(np.linspace(0.5, 3, 10)[idx], rng, repeats=2, floor=0.5, groups=idx)
    assert np.isfinite(r["LLR exp - constant"])
    with pytest.raises(ValueError, match="distinct"):
        width_likelihood_ratio(np.ones(40) + np.arange(40) / 40, rng, groups=np.repeat(np.arange(5), 8))
