"""Real EEG + ECG: EEG during mental arithmetic (EEGMAT, Zyma et al. 2019, PhysioNet; ODC-By 1.0).

Path from the recordings to :class:`~icml26.eegmoce.data.MultimodalData`::

    EDF --mne.io.read_raw_edf--> typed channels (19 EEG of the 10-20 montage, ECG; the A2-A1 reference
    derivation typed misc) --crop, resample--> continuous Raw --4 s windows--> from_mne_epochs (EEG, ECG)
    + HRV stream from the R peaks of the continuous ECG --per-subject z-scoring--> MultimodalData

Each subject has two recordings: ``<subject>_1.edf`` (resting baseline, 180 s) and ``<subject>_2.edf``
(serial subtraction, 60 s); labels ``task`` = 0 rest / 1 arithmetic, or ``count-quality`` (0 bad / 1 good
counter, from ``subject-info.csv``).

The repository ships a subset (``data/eegmat_64hz.npz``, about 3.7 MB): Subject00-11, the last 60 s of rest and
the first 60 s of arithmetic, resampled to 64 Hz, float16 microvolts, with the counters' quality. It goes
through the same path (each recording wrapped in an ``mne.io.RawArray``), so a user with the 36 EDFs of
PhysioNet runs the same code on all of them: ``load_eegmat("path/to/eeg-during-mental-arithmetic/")``.
"""

from __future__ import annotations

import csv
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26.eegmoce.data import MultimodalData, from_mne_epochs

log = logging.getLogger(__name__)

SUBSET = Path(__file__).parent / "data" / "eegmat_64hz.npz"
#: the 19 EEG electrodes of the 10-20 montage, in EEGMAT's order
EEG_1020 = (
    "Fp1",
    "Fp2",
    "F3",
    "F4",
    "F7",
    "F8",
    "T3",
    "T4",
    "C3",
    "C4",
    "T5",
    "T6",
    "P3",
    "P4",
    "O1",
    "O2",
    "Fz",
    "Cz",
    "Pz",
)
LABELS = ("task", "count-quality")
HRV_FRAMES = 16  # frames of the HRV stream per window


@dataclass
class Recording:
    """One continuous recording: EEG (C, T) and ECG (1, T) in volts at ``fs`` Hz, with its labels."""

    subject: str
    task: int  # 0 rest, 1 mental arithmetic
    eeg: np.ndarray  # (19, T)
    ecg: np.ndarray  # (1, T)
    fs: float
    count_quality: int = -1  # 0 bad, 1 good counter, -1 unknown
    eeg_names: tuple[str, ...] = EEG_1020


# ---------------------------------------------------------------------------------------------------------
# channels and files


def channel_types(names: list[str]) -> dict[str, str]:
    """MNE channel type of each EDF label: ``ECG*`` -> ecg, ``EOG*`` -> eog, ``EMG*`` -> emg, a 10-20 electrode
    (``EEG Fp1`` or ``Fp1``) -> eeg, anything else (the ``A2-A1`` reference derivation, annotations, status) ->
    misc. EDF readers type every signal 'eeg'; the model must not take the ECG or a reference for EEG."""
    out = {}
    for name in names:
        bare = re.sub(r"^(EEG|ECG|EOG|EMG)[\s_-]*", "", name.strip(), flags=re.I)
        head = name.strip().upper()
        if head.startswith("ECG") or head.startswith("EKG"):
            out[name] = "ecg"
        elif head.startswith("EOG"):
            out[name] = "eog"
        elif head.startswith("EMG"):
            out[name] = "emg"
        elif bare.upper() in {e.upper() for e in EEG_1020}:
            out[name] = "eeg"
        else:
            out[name] = "misc"
    return out


def read_edf(path: str | os.PathLike):
    """An EDF as a preloaded ``mne.io.Raw`` with typed channels (:func:`channel_types`), EEG renamed to the bare
    10-20 labels. ValueError naming the file when it cannot be read or lacks EEG or ECG."""
    import mne

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"EDF file {p} does not exist")
    try:
        raw = mne.io.read_raw_edf(p, preload=True, verbose="error")
    except Exception as exc:  # mne raises many types for a damaged header
        why = (str(exc).strip().splitlines() or [""])[0][:160]
        raise ValueError(f"cannot read {p} as EDF ({type(exc).__name__}: {why})") from None
    types = channel_types(raw.ch_names)
    raw.set_channel_types(types, verbose="error")
    rename = {n: re.sub(r"^EEG[\s_-]*", "", n, flags=re.I) for n, t in types.items() if t == "eeg"}
    raw.rename_channels({n: next(e for e in EEG_1020 if e.upper() == r.upper()) for n, r in rename.items()})
    kinds = set(types.values())
    if "eeg" not in kinds or "ecg" not in kinds:
        raise ValueError(f"{p} has no {'EEG' if 'eeg' not in kinds else 'ECG'} channel (labels: {raw.ch_names})")
    return raw


_NAME = re.compile(r"^(?P<subject>.+)_(?P<condition>[12])\.edf$", re.I)


def read_eegmat_edf(
    directory: str | os.PathLike,
    *,
    fs: float = 64.0,
    rest_seconds: float | None = 60.0,
    task_seconds: float | None = 60.0,
    subjects: list[str] | None = None,
) -> list[Recording]:
    """Recordings of an EEGMAT directory (``<subject>_1.edf`` rest, ``<subject>_2.edf`` arithmetic; PhysioNet's
    names): the last ``rest_seconds`` of rest and the first ``task_seconds`` of arithmetic (``None``: all of it),
    resampled to ``fs``; count quality from ``subject-info.csv`` when present."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d} is not a directory of EDF files")
    for what, seconds in (("rest_seconds", rest_seconds), ("task_seconds", task_seconds)):
        if seconds is not None and not (np.isfinite(seconds) and seconds > 0):
            raise ValueError(f"{what} must be a positive number of seconds or None (all); got {seconds}")
    if not (np.isfinite(fs) and 4.0 <= fs <= 5000.0):
        raise ValueError(f"fs must be a sampling rate in [4, 5000] Hz; got {fs}")
    files = sorted(f for f in d.iterdir() if _NAME.match(f.name))
    if not files:
        raise ValueError(f"{d} holds no <subject>_1.edf / <subject>_2.edf files (EEGMAT naming)")
    pairs: dict[str, dict[int, Path]] = {}
    for f in files:
        m = _NAME.match(f.name)
        pairs.setdefault(m["subject"], {})[int(m["condition"])] = f
    incomplete = sorted(s for s, c in pairs.items() if set(c) != {1, 2})
    if incomplete:
        raise ValueError(f"{d}: subjects {incomplete} lack their rest (_1) or arithmetic (_2) recording")
    if subjects is not None:
        missing = sorted(set(subjects) - set(pairs))
        if missing:
            raise ValueError(f"{d} has no recordings of {missing}")
        pairs = {s: pairs[s] for s in subjects}
    quality = _count_quality(d / "subject-info.csv")
    out = []
    for s in sorted(pairs):
        for cond, seconds in ((1, rest_seconds), (2, task_seconds)):
            raw = read_edf(pairs[s][cond])
            duration = raw.n_times / raw.info["sfreq"]
            if seconds is not None:
                if seconds > duration:
                    raise ValueError(f"{pairs[s][cond]} lasts {duration:.0f} s, shorter than the {seconds} s asked")
                # rest: its end (nearest the task); arithmetic: its start
                tmin = duration - seconds if cond == 1 else 0.0
                raw.crop(tmin, tmin + seconds, include_tmax=False)
            if abs(raw.info["sfreq"] - fs) > 1e-9:
                raw.resample(fs, verbose="error")
            out.append(
                Recording(
                    s,
                    cond - 1,
                    raw.get_data(picks="eeg"),
                    raw.get_data(picks="ecg")[:1],
                    fs,
                    quality.get(s, -1),
                    tuple(raw.copy().pick("eeg").ch_names),
                )
            )
    return out


def _count_quality(path: Path) -> dict[str, int]:
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    try:
        return {r["Subject"].strip(): int(float(r["Count quality"])) for r in rows}
    except (KeyError, ValueError):
        raise ValueError(f"{path}: expected the columns 'Subject' and 'Count quality' (0/1)") from None


# ---------------------------------------------------------------------------------------------------------
# the shipped subset


def write_subset(recordings: list[Recording], path: str | os.PathLike) -> None:
    """Recordings of equal length to a float16 ``.npz`` in microvolts (how ``data/eegmat_64hz.npz`` was made)."""
    from icml26._util.io import save_npz

    lengths = {r.eeg.shape[1] for r in recordings}
    if len(lengths) != 1:
        raise ValueError(f"the subset stores recordings of one length; got {sorted(lengths)} samples")
    save_npz(
        path,
        eeg=np.stack([r.eeg * 1e6 for r in recordings]).astype(np.float16),  # (R, 19, T) uV
        ecg=np.stack([r.ecg * 1e6 for r in recordings]).astype(np.float16),  # (R, 1, T) uV
        subject=np.array([r.subject for r in recordings]),
        task=np.array([r.task for r in recordings]),
        count_quality=np.array([r.count_quality for r in recordings]),
        fs=np.float64(recordings[0].fs),
        channels=np.array(recordings[0].eeg_names),
    )


def read_subset(path: str | os.PathLike = SUBSET) -> list[Recording]:
    """Recordings of a subset ``.npz`` written by :func:`write_subset` (volts, float64)."""
    from icml26._util.io import check_input_file

    p = check_input_file(path, what="EEGMAT subset")
    try:
        with np.load(p, allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
    except Exception as exc:
        raise ValueError(f"cannot read {p} as an EEGMAT subset .npz ({type(exc).__name__})") from None
    need = {"eeg", "ecg", "subject", "task", "fs", "channels"}
    if not need <= set(a):
        raise ValueError(f"{p} is not an EEGMAT subset (needs arrays {sorted(need)})")
    q = a.get("count_quality", np.full(len(a["task"]), -1))
    names = tuple(str(c) for c in a["channels"])
    return [
        Recording(
            str(s), int(t), e.astype(np.float64) * 1e-6, c.astype(np.float64) * 1e-6, float(a["fs"]), int(k), names
        )
        for s, t, e, c, k in zip(a["subject"], a["task"], a["eeg"], a["ecg"], q, strict=True)
    ]


# ---------------------------------------------------------------------------------------------------------
# ECG -> R peaks -> HRV stream


def r_peaks(ecg: np.ndarray, fs: float) -> np.ndarray:
    """Sample indices of the R peaks of one ECG lead (T,): band-pass 5-18 Hz, polarity from the larger tail,
    peaks above 40 % of the 99.5th percentile at least 0.33 s apart (heart rate < 180 bpm)."""
    from scipy.signal import butter, find_peaks, sosfiltfilt

    x = np.asarray(ecg, dtype=np.float64).ravel()
    hi = min(18.0, 0.45 * fs)
    x = sosfiltfilt(butter(3, [5.0, hi], btype="band", fs=fs, output="sos"), x)
    if np.percentile(-x, 99.5) > np.percentile(x, 99.5):  # inverted lead
        x = -x
    peaks, _ = find_peaks(x, height=0.4 * np.percentile(x, 99.5), distance=max(1, int(0.33 * fs)))
    return peaks


def hrv_stream(ecg: np.ndarray, fs: float, starts: np.ndarray, window: int, frames: int = HRV_FRAMES) -> np.ndarray:
    """HRV features of each window of a continuous ECG, as a (N, 2, frames) stream: the instantaneous heart
    rate (bpm, 60 / RR interpolated between beats) and the absolute successive RR difference (ms), sampled at
    ``frames`` times across each window ``[start, start + window)``. R peaks are found on the whole recording,
    so windows see the beats around their edges."""
    peaks = r_peaks(ecg, fs)
    if peaks.size < 3:
        raise ValueError(f"the ECG holds {peaks.size} detectable R peaks; HRV needs at least 3 (flat or noisy lead?)")
    t = peaks / fs
    rr = np.diff(t)  # (P-1,) s, at beat times t[1:]
    hr = 60.0 / rr
    drr = np.abs(np.diff(rr, prepend=rr[0])) * 1e3
    ts = (np.asarray(starts)[:, None] + (np.arange(frames) + 0.5)[None] * window / frames) / fs  # (N, frames) s
    return np.stack([np.interp(ts, t[1:], hr), np.interp(ts, t[1:], drr)], axis=1)  # (N, 2, frames)


# ---------------------------------------------------------------------------------------------------------
# recordings -> MultimodalData


def _raw(rec: Recording):
    import mne

    info = mne.create_info([*rec.eeg_names, "ECG"], rec.fs, ["eeg"] * len(rec.eeg_names) + ["ecg"])
    return mne.io.RawArray(np.concatenate([rec.eeg, rec.ecg]), info, verbose="error")


def to_multimodal(
    recordings: list[Recording],
    *,
    window_seconds: float = 4.0,
    label: str = "task",
    normalise: bool | str = True,
) -> tuple[MultimodalData, list[str]]:
    """Non-overlapping windows of every recording -> EEG (N, 19, W), ECG (N, 1, W) and HRV (N, 2, 16) with the
    subject id of each window; returns the data and the subject names (``subject`` indexes them).

    ``normalise``: z-score every channel (and HRV feature) per subject over all of that subject's windows, both
    conditions, no labels: a label-free per-subject normalisation, as available for a new subject as its
    unlabeled trials are to the domain BN. ``"global"``: z-score every channel over the windows of all subjects
    pooled (one mean and sd per channel), so each subject keeps its own offsets and scales, which only a
    per-subject normalisation inside the model (the domain BN) can remove. ``False``: volts as recorded."""
    import mne

    if normalise not in (True, False, "subject", "global"):
        raise ValueError(f"normalise must be True/'subject', 'global' or False; got {normalise!r}")

    if label not in LABELS:
        raise ValueError(f"label must be one of {LABELS}; got {label!r}")
    if not recordings:
        raise ValueError("no recordings")
    if not (np.isfinite(window_seconds) and window_seconds > 0):
        raise ValueError(f"window_seconds must be a positive number of seconds; got {window_seconds}")
    fs = {r.fs for r in recordings}
    if len(fs) != 1:
        raise ValueError(f"recordings at different sampling rates {sorted(fs)}: resample them first")
    fs = fs.pop()
    names = sorted({r.subject for r in recordings})
    if label == "count-quality" and any(r.count_quality < 0 for r in recordings):
        raise ValueError("count quality unknown for some subjects (no subject-info.csv?)")
    parts = []
    for rec in recordings:
        raw = _raw(rec)
        length = rec.eeg.shape[1] / fs
        if length < window_seconds:  # mne would answer "No events produced"
            raise ValueError(
                f"the recording of {rec.subject} kept {length:g} s, shorter than one {window_seconds:g} s window: keep "
                f"at least {window_seconds:g} s per recording (--seconds 0 keeps all)"
            )
        epochs = mne.make_fixed_length_epochs(raw, window_seconds, preload=True, verbose="error")
        n = len(epochs)
        y = np.full(n, rec.task if label == "task" else rec.count_quality)
        starts = epochs.events[:, 0] - raw.first_samp
        hrv = hrv_stream(rec.ecg[0], fs, starts, epochs.get_data().shape[-1])
        parts.append(from_mne_epochs(epochs, names.index(rec.subject), others={"hrv": hrv}, y=y, relabel=False))
    d = MultimodalData(
        {m: np.concatenate([p.modalities[m] for p in parts]) for m in parts[0].names},
        np.concatenate([p.y for p in parts]),
        np.concatenate([p.subject for p in parts]),
        fs,
    )
    if normalise == "global":
        for x in d.modalities.values():
            x -= x.mean(axis=(0, 2), keepdims=True)
            x /= x.std(axis=(0, 2), keepdims=True) + 1e-12
    elif normalise:
        for s in np.unique(d.subject):
            m = d.subject == s
            for x in d.modalities.values():
                mu = x[m].mean(axis=(0, 2), keepdims=True)
                sd = x[m].std(axis=(0, 2), keepdims=True)
                x[m] = (x[m] - mu) / (sd + 1e-12)
    return d, names


def load_eegmat(
    source: str | os.PathLike = SUBSET,
    *,
    label: str = "task",
    window_seconds: float = 4.0,
    normalise: bool | str = True,
    **read,
) -> tuple[MultimodalData, list[str]]:
    """EEGMAT windows from the shipped subset (default), another subset ``.npz``, or a directory of EDFs (keyword
    arguments ``fs``, ``rest_seconds``, ``task_seconds``, ``subjects`` go to :func:`read_eegmat_edf`;
    ``normalise`` to :func:`to_multimodal`)."""
    p = Path(source)
    if not p.exists():
        raise ValueError(f"{p} does not exist (expected a directory of EEGMAT EDFs or a subset .npz)")
    for what in ("rest_seconds", "task_seconds"):  # each kept recording must hold at least one window
        seconds = read.get(what)
        if seconds is not None and np.isfinite(seconds) and 0 < seconds < window_seconds:
            raise ValueError(
                f"{what} = {seconds:g} s keeps less than one {window_seconds:g} s window per recording; keep at least "
                f"{window_seconds:g} s (or all: None)"
            )
    recs = read_eegmat_edf(p, **read) if p.is_dir() else read_subset(p)
    return to_multimodal(recs, window_seconds=window_seconds, label=label, normalise=normalise)
