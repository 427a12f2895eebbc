"""Synthetic multimodal data with a known latent hierarchy, Gromov delta, and validated loaders for users' files.

Generator (``simulate``): a balanced tree of ``depth`` levels and ``branching`` children; every trial is a
random leaf. Each modality m gets a code for the leaf that sums random node vectors along the root-to-leaf
path with level weights ``w_m(l) = decay_m^(l-1)`` (EEG: steep decay = strongly hierarchical; audio: weak
decay; video: only the class level = flat). The class is the ancestor of the leaf at ``class_level``, so the
class component has the same amplitude (weight 1 at level 1) in every modality; the levels below it are
within-class structure. Signals:

- ``eeg`` (N, C, T): per channel and band, amplitude ``exp(0.35 * code)`` of a sinusoid at the band's centre
  frequency with a random phase, plus 1/f (pink) noise; per subject a random channel mixing ``I + 0.2 G``
  and a global gain;
- ``audio`` (N, F_a, T_s) and ``video`` (N, F_v, T_s): feature streams ``code * envelope(t) + noise``; per
  subject a random additive offset and gain.

Ground truth kept: the leaf, the class, the subject, the level weights of each modality.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from icml26._util.io import check_input_file, save_npz

EEG_BANDS_HZ = (4.0, 6.0, 10.0, 14.0, 20.0, 28.0)
#: default level decay per modality; ``0.0`` keeps the class level only (flat)
DEFAULT_DECAY = {"eeg": 0.5, "audio": 0.85, "video": 0.0}


@dataclass
class MultimodalData:
    """Trials of several time-series modalities with labels and subject ids (the one data type of eegmoce).

    ``modalities`` maps a name to a (N, channels/features, time) float array; ``eeg`` comes first.
    """

    modalities: dict[str, np.ndarray]
    y: np.ndarray  # (N,) int class labels 0..n_classes-1
    subject: np.ndarray  # (N,) int subject ids
    fs: float  # EEG sampling rate in Hz
    leaf: np.ndarray | None = None  # (N,) ground-truth leaf (synthetic only)
    decay: dict[str, float] = field(default_factory=dict)  # ground-truth level decay (synthetic only)

    def __post_init__(self) -> None:
        validate(self)

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.y.max()) + 1

    @property
    def names(self) -> list[str]:
        return list(self.modalities)

    def subset(self, idx: np.ndarray) -> MultimodalData:
        return MultimodalData(
            {k: v[idx] for k, v in self.modalities.items()},
            self.y[idx],
            self.subject[idx],
            self.fs,
            None if self.leaf is None else self.leaf[idx],
            dict(self.decay),
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write to ``.npz`` (atomically): one array per modality, ``y``, ``subject``, ``fs``, ``modalities``."""
        extra = {} if self.leaf is None else {"leaf": self.leaf}
        save_npz(
            path,
            y=self.y,
            subject=self.subject,
            fs=np.float64(self.fs),
            modalities=np.array(self.names),
            **self.modalities,
            **extra,
        )


def validate(d: MultimodalData) -> None:
    """Raise ValueError on anything a user can get wrong: shapes, counts, NaN, labels, subjects, fs."""
    if not d.modalities:
        raise ValueError("no modality given")
    if "eeg" not in d.modalities or next(iter(d.modalities)) != "eeg":
        raise ValueError(f"the first modality must be 'eeg' (EEG-based model); got {list(d.modalities)}")
    y, s = np.asarray(d.y), np.asarray(d.subject)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"labels y must be a non-empty 1-D array; got shape {y.shape}")
    if s.shape != y.shape:
        raise ValueError(f"subject ids must be one per trial: {s.shape} vs {y.shape} labels (missing subject ids?)")
    for name, arr in (("y", y), ("subject", s)):
        if not np.issubdtype(arr.dtype, np.integer):
            if (
                not np.issubdtype(arr.dtype, np.floating)
                or not np.all(np.isfinite(arr))
                or np.any(arr != np.round(arr))
            ):
                raise ValueError(f"{name} must hold integers; got dtype {arr.dtype}")
    if y.min() < 0:
        raise ValueError("labels y must be >= 0")
    d.y, d.subject = y.astype(np.int64), s.astype(np.int64)
    for name, x in d.modalities.items():
        x = np.asarray(x)
        if x.ndim != 3:
            raise ValueError(f"modality {name!r} must be (trials, channels, time); got shape {x.shape}")
        if x.shape[0] != y.shape[0]:
            raise ValueError(
                f"modality {name!r} has {x.shape[0]} trials but there are {y.shape[0]} labels "
                "(mismatched sample counts)"
            )
        if not np.issubdtype(x.dtype, np.number):
            raise ValueError(f"modality {name!r} must be numeric; got dtype {x.dtype}")
        bad = ~np.isfinite(x).all(axis=(1, 2))
        if bad.any():
            raise ValueError(
                f"modality {name!r} has NaN/inf in {int(bad.sum())} trial(s), first at index "
                f"{int(np.argmax(bad))}; drop or interpolate those segments"
            )
        d.modalities[name] = x.astype(np.float64)
    if not (np.isfinite(d.fs) and d.fs > 0):
        raise ValueError(f"sampling rate fs must be a positive number; got {d.fs}")
    d.fs = float(d.fs)


def check_groups(d: MultimodalData, n_folds: int | None) -> None:
    """Grouped CV needs at least two subjects (and ``n_folds`` of them) and every class in training."""
    subjects = np.unique(d.subject)
    if subjects.size < 2:
        raise ValueError("subject-grouped CV needs trials of at least 2 subjects (subject ids all equal)")
    if n_folds is not None and n_folds > subjects.size:
        raise ValueError(f"{n_folds} folds need at least {n_folds} subjects; the data hold {subjects.size}")
    if np.unique(d.y).size < 2:
        raise ValueError("the labels hold a single class; nothing to classify")


# ---------------------------------------------------------------------------------------------------------
# generator


def _tree_codes(rng, depth: int, branching: int, dim: int, weights: np.ndarray) -> np.ndarray:
    """Codes of all leaves: sum over the path of node vectors times the level weight.  -> (n_leaves, dim)"""
    n_leaves = branching**depth
    leaves = np.arange(n_leaves)
    codes = np.zeros((n_leaves, dim))
    for level in range(1, depth + 1):
        node = leaves // branching ** (depth - level)  # ancestor index at this level
        g = rng.standard_normal((branching**level, dim))  # (nodes at level, dim)
        codes += weights[level - 1] * g[node]
    return codes


def _pink_noise(rng, shape: tuple[int, ...]) -> np.ndarray:
    """1/f noise along the last axis, unit variance."""
    T = shape[-1]
    f = np.fft.rfftfreq(T)
    f[0] = f[1]
    spec = (rng.standard_normal((*shape[:-1], f.size)) + 1j * rng.standard_normal((*shape[:-1], f.size))) / np.sqrt(f)
    x = np.fft.irfft(spec, n=T, axis=-1)
    return x / x.std(axis=-1, keepdims=True)


def level_weights(decay: float, depth: int) -> np.ndarray:
    """``w(l) = decay^(l-1)``; decay 0 keeps level 1 only."""
    return np.array([1.0 if l == 0 else decay**l for l in range(depth)])


def simulate(
    n_subjects: int = 8,
    trials: int = 48,
    *,
    depth: int = 3,
    branching: int = 3,
    eeg_channels: int = 8,
    eeg_samples: int = 128,
    fs: float = 128.0,
    audio_dim: int = 16,
    video_dim: int = 12,
    stream_frames: int = 32,
    decay: dict[str, float] | None = None,
    noise: float = 1.0,
    stream_signal: float = 0.12,
    subject_shift: float = 0.5,
    seed: int = 0,
) -> MultimodalData:
    """EEG + audio-like + video-like trials of ``n_subjects`` subjects; classes = level-1 subtrees.

    ``noise`` scales every modality's noise; ``stream_signal`` the amplitude of the audio/video codes (their frame
    noise has s.d. 2 * noise); ``subject_shift`` scales the per-subject mixing, gain and offsets.
    """
    if n_subjects < 1 or trials < 1 or depth < 1 or branching < 2:
        raise ValueError("need n_subjects >= 1, trials >= 1, depth >= 1 and branching >= 2")
    if not all(np.isfinite(v) and v >= 0 for v in (noise, subject_shift, stream_signal)):
        raise ValueError("noise, stream_signal and subject_shift must be finite and >= 0")
    if min(eeg_channels, eeg_samples, audio_dim, video_dim, stream_frames) < 1:
        raise ValueError("channels, samples, feature dimensions and frames must be >= 1")
    unknown = set(decay or {}) - set(DEFAULT_DECAY)
    if unknown:
        raise ValueError(f"decay names unknown modalities {sorted(unknown)}; the generator has {list(DEFAULT_DECAY)}")
    decay = {**DEFAULT_DECAY, **(decay or {})}
    if not all(np.isfinite(v) and 0 <= v <= 1 for v in decay.values()):
        raise ValueError(f"level decays must lie in [0, 1]; got {decay}")
    rng = np.random.default_rng(seed)
    n_bands = len(EEG_BANDS_HZ)
    if max(EEG_BANDS_HZ) >= fs / 2:
        raise ValueError(f"fs = {fs} Hz cannot carry the {max(EEG_BANDS_HZ)} Hz band (Nyquist)")
    codes = {
        "eeg": _tree_codes(rng, depth, branching, eeg_channels * n_bands, level_weights(decay["eeg"], depth)),
        "audio": _tree_codes(rng, depth, branching, audio_dim, level_weights(decay["audio"], depth)),
        "video": _tree_codes(rng, depth, branching, video_dim, level_weights(decay["video"], depth)),
    }
    N = n_subjects * trials
    subject = np.repeat(np.arange(n_subjects), trials)
    leaf = rng.integers(0, branching**depth, N)
    y = leaf // branching ** (depth - 1)  # class = level-1 ancestor
    # EEG: band sinusoids with leaf-specific log amplitudes + pink noise         (N, C, T)
    t = np.arange(eeg_samples) / fs
    amp = np.exp(0.35 * codes["eeg"][leaf]).reshape(N, eeg_channels, n_bands)  # (N, C, B)
    phase = rng.uniform(0, 2 * np.pi, (N, eeg_channels, n_bands))
    waves = np.sin(2 * np.pi * np.asarray(EEG_BANDS_HZ)[:, None] * t[None] + phase[..., None])  # (N, C, B, T)
    eeg = (amp[..., None] * waves).sum(2) + 1.5 * noise * _pink_noise(rng, (N, eeg_channels, eeg_samples))
    mix = np.eye(eeg_channels) + 0.4 * subject_shift * rng.standard_normal((n_subjects, eeg_channels, eeg_channels))
    gain = np.exp(0.6 * subject_shift * rng.standard_normal(n_subjects))
    eeg = gain[subject, None, None] * np.einsum("nij,njt->nit", mix[subject], eeg)
    streams = {}
    for name, dim in (("audio", audio_dim), ("video", video_dim)):
        tt = np.linspace(0, 1, stream_frames)
        env = 1 + 0.3 * np.sin(2 * np.pi * (tt[None] * rng.uniform(1, 3, (N, 1)) + rng.uniform(0, 1, (N, 1))))
        x = stream_signal * codes[name][leaf][:, :, None] * env[:, None, :] + 2.0 * noise * rng.standard_normal(
            (N, dim, stream_frames)
        )
        offset = 2 * subject_shift * rng.standard_normal((n_subjects, dim))
        g = np.exp(0.6 * subject_shift * rng.standard_normal(n_subjects))
        streams[name] = g[subject, None, None] * (x + offset[subject][:, :, None])
    return MultimodalData({"eeg": eeg, **streams}, y, subject, fs, leaf, decay)


# ---------------------------------------------------------------------------------------------------------
# hierarchy measure


def gromov_delta(
    X: np.ndarray, n_quadruples: int = 20000, rng: np.random.Generator | None = None, *, metric: str = "euclidean"
) -> tuple[float, float]:
    """Gromov delta by the sampled 4-point condition, vectorised; returns ``(delta, delta_rel)``.

    For a quadruple, with ``S1 = d(x,y) + d(z,w)``, ``S2 = d(x,z) + d(y,w)``, ``S3 = d(x,w) + d(y,z)`` sorted
    ``S(1) >= S(2) >= S(3)``, the four-point delta is ``(S(1) - S(2)) / 2``; ``delta`` is its max over the
    sampled quadruples and ``delta_rel = 2 delta / diam`` (Khrulkov et al. 2020), 0 for a tree metric.
    ``X``: (n, d) points (Euclidean distances) or, with ``metric="precomputed"``, an (n, n) distance matrix.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    if int(n_quadruples) < 1:
        raise ValueError(f"n_quadruples must be >= 1; got {n_quadruples}")
    if metric not in ("euclidean", "precomputed"):
        raise ValueError(f"metric must be 'euclidean' or 'precomputed'; got {metric!r}")
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("points must be a numeric array") from None
    if metric == "precomputed":
        if X.ndim != 2 or X.shape[0] != X.shape[1]:
            raise ValueError(f"a precomputed distance matrix must be square; got shape {X.shape}")
        D = X
    else:
        if X.ndim != 2:
            raise ValueError(f"points must be (n, d); got shape {X.shape}")
        sq = (X * X).sum(1)
        D = np.sqrt(np.maximum(sq[:, None] + sq[None] - 2 * X @ X.T, 0.0))
    if X.shape[0] < 4:
        raise ValueError("Gromov delta needs at least 4 points")
    if not np.all(np.isfinite(D)):
        raise ValueError("distances contain NaN or inf")
    q = rng.integers(0, D.shape[0], (n_quadruples, 4))  # (Q, 4)
    a, b, c, e = q.T
    S = np.stack([D[a, b] + D[c, e], D[a, c] + D[b, e], D[a, e] + D[b, c]], axis=1)  # (Q, 3)
    S.sort(axis=1)
    delta = float(np.max(S[:, 2] - S[:, 1]) / 2)
    diam = float(D.max())
    return delta, (2 * delta / diam if diam > 0 else 0.0)


def hierarchy_features(d: MultimodalData, name: str) -> np.ndarray:
    """Per-trial features on which delta is measured, z-scored within each subject.  -> (N, F)

    EEG: log power at each band's centre frequency per channel (periodogram); other modalities: the time mean
    of each feature stream.
    """
    x = d.modalities[name]
    if name == "eeg":
        spec = np.abs(np.fft.rfft(x, axis=-1)) ** 2  # (N, C, T//2+1)
        freqs = np.fft.rfftfreq(x.shape[-1], 1 / d.fs)
        idx = [int(np.argmin(np.abs(freqs - f))) for f in EEG_BANDS_HZ if f < d.fs / 2]
        feats = np.log(spec[:, :, idx] + 1e-12).reshape(x.shape[0], -1)
    else:
        feats = x.mean(-1)
    out = np.empty_like(feats)
    for s in np.unique(d.subject):
        m = d.subject == s
        out[m] = (feats[m] - feats[m].mean(0)) / (feats[m].std(0) + 1e-9)
    return out


# ---------------------------------------------------------------------------------------------------------
# loaders


def load_npz(path: str | os.PathLike) -> MultimodalData:
    """Read trials from ``.npz``: ``eeg`` (N, C, T), ``y`` (N,), ``subject`` (N,), ``fs`` (Hz), and any other
    (N, F, T) arrays as further modalities (order from the optional ``modalities`` array)."""
    p = check_input_file(path, what="data file")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"cannot read {p} as .npz: {exc}") from None
    except Exception as exc:  # zipfile.BadZipFile and friends
        raise ValueError(f"cannot read {p} as .npz ({type(exc).__name__}: {exc})") from None
    missing = [k for k in ("eeg", "y", "subject") if k not in arrays]
    if "subject" in missing:
        raise ValueError(f"{p} has no 'subject' array: subject ids are needed for subject-grouped CV")
    if missing:
        raise ValueError(f"{p} lacks the arrays {missing} (needs eeg, y, subject, fs)")
    if "fs" not in arrays:
        raise ValueError(f"{p} has no 'fs' (EEG sampling rate in Hz)")
    try:
        fs = float(np.asarray(arrays["fs"]).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"{p}: 'fs' must be one number") from None
    reserved = {"y", "subject", "fs", "modalities", "leaf"}
    if "modalities" in arrays:
        order = [str(m) for m in np.atleast_1d(arrays["modalities"])]
        unknown = [m for m in order if m not in arrays]
        if unknown:
            raise ValueError(f"{p}: modalities {unknown} are listed but not stored")
    else:
        order = ["eeg", *sorted(k for k in arrays if k not in reserved and k != "eeg")]
    leaf = arrays.get("leaf")
    return MultimodalData(
        {m: arrays[m] for m in order},
        arrays["y"],
        arrays["subject"],
        fs,
        None if leaf is None or leaf.shape != arrays["y"].shape else leaf,
    )


#: MNE channel types that are never EEG-model input: refused, or dropped with ``drop_other=True``
NON_SIGNAL_TYPES = ("eog", "stim", "misc", "emg", "resp", "bio", "syst", "exci", "chpi", "ias", "gsr", "temp")


def from_mne_epochs(
    epochs,
    subject: np.ndarray | int,
    others: dict[str, np.ndarray] | None = None,
    y: np.ndarray | None = None,
    *,
    drop_other: bool = False,
    relabel: bool = True,
) -> MultimodalData:
    """Build data from an MNE ``Epochs`` object by channel type: the ``eeg`` channels become the ``eeg`` modality
    (N, C, T) and the ``ecg`` channels (if any) the ``ecg`` modality (N, C_ecg, T); ``others`` adds further
    (N, F, T) modalities. EOG, stimulus, misc and other non-signal channels are refused (ValueError naming them),
    or dropped with ``drop_other=True`` (an EOG or a trigger channel taken for EEG corrupts the spatial filters).
    Labels: ``events[:, 2]`` unless ``y`` is given, mapped to 0..K-1 unless ``relabel=False``.

    Objects without ``get_channel_types`` (duck-typed: ``get_data()``, ``info['sfreq']``, ``events``) are read
    as all-EEG."""
    try:
        data = np.asarray(epochs.get_data())
        fs = float(epochs.info["sfreq"])
    except (AttributeError, KeyError, TypeError) as exc:
        raise ValueError(f"expected an MNE Epochs-like object with get_data() and info['sfreq']: {exc}") from None
    if data.ndim != 3:
        raise ValueError(f"epochs data must be (epochs, channels, times); got shape {data.shape}")
    types = np.asarray(epochs.get_channel_types() if hasattr(epochs, "get_channel_types") else ["eeg"] * data.shape[1])
    names = list(getattr(epochs, "ch_names", [f"ch{i}" for i in range(data.shape[1])]))
    known = {"eeg", "ecg", *NON_SIGNAL_TYPES}
    unsupported = sorted({str(t) for t in types} - known)
    if unsupported:
        raise ValueError(f"channel types {unsupported} are not supported (EEG and ECG are read; EOG/STIM/misc dropped)")
    other = [n for n, t in zip(names, types, strict=True) if t in NON_SIGNAL_TYPES]
    if other and not drop_other:
        raise ValueError(
            f"the epochs hold non-EEG channels {other[:6]}{' ...' if len(other) > 6 else ''} "
            f"({', '.join(sorted({str(t) for t in types if t in NON_SIGNAL_TYPES}))}); "
            "pick EEG/ECG or pass drop_other=True"
        )
    if not np.any(types == "eeg"):
        raise ValueError(f"the epochs hold no EEG channel (types: {sorted({str(t) for t in types})})")
    modalities = {"eeg": data[:, types == "eeg"]}
    if np.any(types == "ecg"):
        modalities["ecg"] = data[:, types == "ecg"]
    labels = np.asarray(epochs.events[:, 2] if y is None else y)
    if relabel:
        _, labels = np.unique(labels, return_inverse=True)
    subj = np.full(data.shape[0], subject) if np.isscalar(subject) else np.asarray(subject)
    return MultimodalData({**modalities, **(others or {})}, labels, subj, fs)
