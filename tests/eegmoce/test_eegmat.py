"""Real EEG + ECG (EEGMAT): EDF -> typed channels -> windows -> MultimodalData, from_mne_epochs on real MNE
epochs, R peaks and HRV, the shipped subset, and bad recordings refused in one line."""

from pathlib import Path

import numpy as np
import pytest

mne = pytest.importorskip("mne")

from icml26.eegmoce import from_mne_epochs, load_eegmat  # noqa: E402
from icml26.eegmoce.eegmat import (  # noqa: E402
    EEG_1020,
    channel_types,
    hrv_stream,
    r_peaks,
    read_edf,
    read_eegmat_edf,
    read_subset,
    to_multimodal,
    write_subset,
)

EDF = Path(__file__).parent / "data" / "edf"


def test_channel_types_separate_eeg_ecg_reference_and_others():
    t = channel_types(["EEG Fp1", "EEG Cz", "EEG A2-A1", "ECG ECG", "EOG left", "EMG chin", "Status", "pz"])
    assert t == {
        "EEG Fp1": "eeg",
        "EEG Cz": "eeg",
        "EEG A2-A1": "misc",
        "ECG ECG": "ecg",
        "EOG left": "eog",
        "EMG chin": "emg",
        "Status": "misc",
        "pz": "eeg",
    }


def test_a_real_edf_reads_with_typed_channels():
    raw = read_edf(EDF / "Subject00_1.edf")
    types = dict(zip(raw.ch_names, raw.get_channel_types(), strict=True))
    assert [n for n, k in types.items() if k == "eeg"] == list(EEG_1020)
    assert [k for n, k in types.items() if n.startswith("ECG")] == ["ecg"] and types["EEG A2-A1"] == "misc"
    assert raw.info["sfreq"] == 500.0 and raw.n_times == 8 * 500


def test_edf_directory_end_to_end_to_multimodal_data():
    recs = read_eegmat_edf(EDF, fs=128.0, rest_seconds=None, task_seconds=None)
    assert [(r.subject, r.task) for r in recs] == [
        ("Subject00", 0),
        ("Subject00", 1),
        ("Subject01", 0),
        ("Subject01", 1),
    ]
    d, names = to_multimodal(recs, window_seconds=4.0)
    assert names == ["Subject00", "Subject01"] and d.names == ["eeg", "ecg", "hrv"]
    assert d.modalities["eeg"].shape == (8, 19, 512) and d.modalities["ecg"].shape == (8, 1, 512)
    assert d.modalities["hrv"].shape == (8, 2, 16) and d.fs == 128.0
    assert d.y.tolist() == [0, 0, 1, 1, 0, 0, 1, 1] and d.subject.tolist() == [0] * 4 + [1] * 4
    for s in (0, 1):  # per-subject z-scoring, every channel
        x = d.modalities["eeg"][d.subject == s]
        assert np.allclose(x.mean(axis=(0, 2)), 0, atol=1e-9) and np.allclose(x.std(axis=(0, 2)), 1, atol=1e-6)


def _epochs(types):
    rng = np.random.default_rng(0)
    info = mne.create_info([f"c{i}" for i in range(len(types))], 100.0, types)
    events = np.c_[np.arange(6) * 200, np.zeros(6, int), [1, 2, 1, 2, 1, 2]]
    return mne.EpochsArray(rng.standard_normal((6, len(types), 100)), info, events=events, verbose="error")


def test_from_mne_epochs_on_real_epochs_types_refuses_and_drops():
    ep = _epochs(["eeg", "eeg", "eeg", "ecg", "eog", "stim"])
    with pytest.raises(ValueError, match=r"non-EEG channels \['c4', 'c5'\]"):
        from_mne_epochs(ep, subject=3)
    d = from_mne_epochs(ep, subject=3, drop_other=True)
    assert d.names == ["eeg", "ecg"] and d.modalities["eeg"].shape == (6, 3, 100)
    assert np.array_equal(d.modalities["ecg"][:, 0], ep.get_data()[:, 3]) and d.y.tolist() == [0, 1] * 3
    assert d.subject.tolist() == [3] * 6
    with pytest.raises(ValueError, match="no EEG channel"):
        from_mne_epochs(_epochs(["ecg", "misc"]), subject=0, drop_other=True)


def test_r_peaks_recover_a_known_heart_rate():
    fs, rate = 64.0, 72.0
    t = np.arange(int(60 * fs)) / fs
    beats = np.arange(0.3, 60, 60 / rate)
    ecg = sum(np.exp(-0.5 * ((t - b) / 0.012) ** 2) for b in beats) - 0.3 * np.sin(2 * np.pi * 0.2 * t)
    ecg = -(ecg + 0.05 * np.random.default_rng(1).standard_normal(t.size))  # inverted lead, noise
    p = r_peaks(ecg, fs)
    assert abs(p.size - beats.size) <= 1
    hrv = hrv_stream(ecg, fs, np.array([640, 1280]), 256)
    assert hrv.shape == (2, 2, 16) and np.allclose(hrv[:, 0], rate, rtol=0.03)


def test_the_subset_heart_rate_rises_during_arithmetic():
    recs = read_subset()
    assert len(recs) == 24 and recs[0].eeg.shape == (19, 3840) and recs[0].fs == 64.0
    hr = {(r.subject, r.task): 60 * r.fs / np.median(np.diff(r_peaks(r.ecg[0], r.fs))) for r in recs}
    rises = [hr[s, 1] - hr[s, 0] for s in {r.subject for r in recs}]
    assert all(40 < v < 150 for v in hr.values()) and np.mean(np.array(rises) > 0) >= 0.75


def test_subset_roundtrip_and_loader(tmp_path):
    recs = read_subset()[:4]
    write_subset(recs, tmp_path / "s.npz")
    again = read_subset(tmp_path / "s.npz")
    assert np.allclose(again[1].eeg, recs[1].eeg, rtol=1e-3, atol=1e-8) and again[3].task == recs[3].task
    d, names = load_eegmat(tmp_path / "s.npz", label="count-quality")
    assert names == ["Subject00", "Subject01"] and d.y.tolist() == [0] * 30 + [1] * 30


def test_bad_recordings_one_clear_error(tmp_path):
    (tmp_path / "junk_1.edf").write_bytes(b"0" * 300)
    (tmp_path / "junk_2.edf").write_bytes(b"0" * 300)
    cases = [
        (lambda: read_eegmat_edf(tmp_path / "nope"), "not a directory"),
        (lambda: read_eegmat_edf(EDF.parent), "holds no"),
        (lambda: read_eegmat_edf(tmp_path), "cannot read"),
        (lambda: read_eegmat_edf(EDF, rest_seconds=60), "shorter than the 60"),
        (lambda: read_eegmat_edf(EDF, subjects=["Subject07"]), "no recordings of"),
        (lambda: read_edf(tmp_path / "missing.edf"), "does not exist"),
        (lambda: to_multimodal(read_subset()[:2], label="mood"), "label must be"),
        (lambda: read_subset(EDF / "Subject00_1.edf"), "cannot read"),
    ]
    for make, msg in cases:
        with pytest.raises(ValueError, match=msg):
            make()
    solo = tmp_path / "solo"
    solo.mkdir()
    (solo / "a_1.edf").write_bytes((EDF / "Subject00_1.edf").read_bytes())
    with pytest.raises(ValueError, match="lack their rest"):
        read_eegmat_edf(solo)
