"""Real language fMRI: Brennan et al. (2016), 28 listeners of *Alice in Wonderland* chapter 1, 6 language ROIs.

What ships (``alice/``, CC-BY-4.0, see ``alice/README.md``): the ROI time courses (362 TRs of 2 s x 6 ROIs, 10 mm
and 6 mm spheres), each subject's word-rate, sound-power and motion regressors, the word timings of the
TextGrid, and the book's other chapters (public domain) for training language models that never read chapter 1.
:func:`load_alice` reads the shipped bundle or the authors' original folders.

Timing: the TextGrid's clock includes the 20 s of silence before the (120 %-dilated) story; the first 10 volumes
(20 s) were discarded, so kept volume k is acquired at 20 + 2k s of that clock, and its regressor is the HRF-
convolved signal averaged over the 2 s centred there. Checked in the tests: the word-rate regressor built here
from the TextGrid correlates 0.99 with the authors' own (0.93 if the window is shifted by 1 s).

The encoding model (:func:`encode`): word features -> impulses at word onsets -> convolved with SPM's canonical
HRF on a 0.1 s grid -> averaged within each TR -> ridge regression onto each (subject, ROI) time course, with the
nuisance regressors (word rate, sound power, 6 motion parameters) regressed out first, scored by Pearson r on
held-out **contiguous** blocks of TRs (never random TRs: the BOLD signal's autocorrelation would leak), the
ridge penalty chosen on inner contiguous blocks of the training part only.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

ROIS = ("LATL", "RATL", "LPTL", "LIPL", "LPreM", "LIFG")
TR = 2.0
T0 = 20.0  # acquisition time of the first kept volume on the TextGrid's clock [s]
N_TR = 362
BUNDLE = Path(__file__).with_name("alice")


@dataclass
class Alice:
    """The data set: ``bold`` (S, T, 6) z-scored per subject and ROI, nuisance (S, T, 8), words with onsets [s]."""

    subjects: list[str]
    bold: np.ndarray  # (S, T, R)
    nuisance: np.ndarray | None  # (S, T, q): Alice's word rate, sound power, 6 motion parameters (z-scored)
    words: list[str]
    onsets: np.ndarray  # (W,) seconds on the TextGrid's clock
    offsets: np.ndarray  # (W,)
    rois: tuple[str, ...] = ROIS
    tr: float = TR  # seconds between volumes
    t0: float = T0  # acquisition time of the first volume on the word timings' clock [s]

    @property
    def n_tr(self) -> int:
        return self.bold.shape[1]

    def subset(self, subjects) -> Alice:
        idx = [self.subjects.index(s) for s in subjects]
        nuisance = None if self.nuisance is None else self.nuisance[idx]
        return Alice([self.subjects[i] for i in idx], self.bold[idx], nuisance, self.words, self.onsets,
                     self.offsets, self.rois, self.tr, self.t0)  # fmt: skip

    def to_trs(self, values: np.ndarray) -> np.ndarray:
        """Word-level values (W, d) -> this recording's TR-level regressors (T, d) (see :func:`to_trs`)."""
        return to_trs(self.onsets, values, self.n_tr, tr=self.tr, t0=self.t0)


def _z(a: np.ndarray, axis: int) -> np.ndarray:
    a = np.asarray(a, np.float64)
    sd = a.std(axis=axis, keepdims=True)
    return (a - a.mean(axis=axis, keepdims=True)) / np.where(sd > 0, sd, 1.0)


def read_textgrid(path: str | Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Words and their (onset, offset) in seconds from a Praat TextGrid's word tier (silences 'sp' dropped)."""
    text = Path(path).read_text(encoding="utf-8", errors="strict")
    found = re.findall(r'xmin = ([0-9.eE+-]+)\s+xmax = ([0-9.eE+-]+)\s+text = "([^"]*)"', text)
    rows = [
        (float(a), float(b), w.strip()) for a, b, w in found if w.strip() and w.strip().lower() not in ("sp", "sil")
    ]
    if not rows:
        raise ValueError(f"{path} holds no word intervals (is it a Praat TextGrid with a word tier?)")
    return [w for _, _, w in rows], np.array([a for a, _, _ in rows]), np.array([b for _, b, _ in rows])


def pack_original(root: str | Path, out: str | Path = BUNDLE) -> Path:
    """Convert the authors' folders (``alice_data_shared/``, ``alice_stim_shared/``) into the shipped bundle."""
    root = Path(root)
    data = root / "alice_data_shared"
    subjects = sorted(p.name.split("-")[0] for p in (data / "10mm").glob("s*-timecourses.txt"))
    if not subjects:
        raise FileNotFoundError(f"no s*-timecourses.txt under {data / '10mm'}")
    arrays = {}
    for size in ("10mm", "6mm"):
        arrays[f"bold_{size}"] = np.stack([np.loadtxt(data / size / f"{s}-timecourses.txt") for s in subjects])
    arrays["rate"] = np.stack([np.loadtxt(data / f"{s}-rate.txt") for s in subjects])
    arrays["sndpwr"] = np.stack([np.loadtxt(data / f"{s}-sndpwr.txt") for s in subjects])
    # motion files keep the 10 discarded volumes: drop them
    arrays["motion"] = np.stack([np.loadtxt(next(data.glob(f"{s}-rp_*.txt")))[-N_TR:] for s in subjects])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "alice.npz", subjects=np.array(subjects),
                        **{k: v.astype(np.float32) for k, v in arrays.items()})  # fmt: skip
    words, on, off = read_textgrid(next((root / "alice_stim_shared").glob("*.TextGrid")))
    with open(out / "words.tsv", "w", encoding="utf-8") as fh:
        fh.write("onset\toffset\tword\n")
        fh.writelines(f"{a:.6f}\t{b:.6f}\t{w}\n" for a, b, w in zip(on, off, words))
    return out


def load_alice(path: str | Path | None = None, *, roi_size: str = "10mm") -> Alice:
    """The shipped bundle (``path=None``), a bundle folder, or the authors' original folder (``alice_data_shared``
    and ``alice_stim_shared`` inside it). ``roi_size``: ``"10mm"`` or ``"6mm"`` spheres."""
    if roi_size not in ("10mm", "6mm"):
        raise ValueError(f"roi_size must be '10mm' or '6mm'; got {roi_size!r}")
    folder = BUNDLE if path is None else Path(path)
    if (folder / "alice_data_shared").is_dir():
        import tempfile

        folder = pack_original(folder, Path(tempfile.mkdtemp(prefix="alice-")))
    if not (folder / "alice.npz").is_file() or not (folder / "words.tsv").is_file():
        raise FileNotFoundError(
            f"{folder} holds neither the Alice bundle (alice.npz, words.tsv) nor alice_data_shared/"
        )
    with np.load(folder / "alice.npz", allow_pickle=False) as z:
        subjects = [str(s) for s in z["subjects"]]
        bold = _z(z[f"bold_{roi_size}"], axis=1)
        nuisance = np.concatenate([_z(z["rate"], 1)[..., None], _z(z["sndpwr"], 1)[..., None], _z(z["motion"], 1)], -1)
    table = np.genfromtxt(folder / "words.tsv", delimiter="\t", names=True, dtype=None, encoding="utf-8", comments=None)
    return Alice(subjects, bold, nuisance, [str(w) for w in table["word"]], np.asarray(table["onset"], float),
                 np.asarray(table["offset"], float))  # fmt: skip


def read_words(path: str | Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Words with onsets and offsets [s]: a Praat TextGrid, or a table (.tsv/.csv) with ``onset`` and ``word``
    columns (``offset`` optional: the next word's onset stands in)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"word timings {path} do not exist")
    if path.suffix.lower() == ".textgrid":
        words, on, off = read_textgrid(path)
    else:
        table = np.genfromtxt(path, delimiter="," if path.suffix.lower() == ".csv" else "\t", names=True,
                              dtype=None, encoding="utf-8", comments=None)  # fmt: skip
        names = table.dtype.names or ()
        if "onset" not in names or "word" not in names:
            raise ValueError(f"word timings {path} need a header with 'onset' and 'word' columns; got {names}")
        table = np.atleast_1d(table)
        words = [str(w) for w in table["word"]]
        try:
            on = np.asarray(table["onset"], float)
            off = np.asarray(table["offset"], float) if "offset" in names else np.r_[on[1:], on[-1:] + 0.3]
        except ValueError:
            raise ValueError(f"word timings {path}: onsets/offsets must be numbers (seconds)") from None
    if not words or not np.isfinite(on).all() or np.any(np.diff(on) < 0):
        raise ValueError(f"word timings {path}: need at least one word, finite onsets, in time order")
    return words, on, off


def _read_roi_table(path: Path) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """One listener's ROI time courses (T, R): .npy, or a .csv/.tsv/.txt table with an optional header row."""
    if not path.is_file():
        raise FileNotFoundError(f"ROI time courses {path} do not exist")
    if path.suffix.lower() == ".npy":
        try:
            arr, names = np.load(path, allow_pickle=False), None
        except ValueError:
            raise ValueError(f"{path} is not a numeric .npy array") from None
    else:
        delim = "," if path.suffix.lower() == ".csv" else None  # None: any whitespace (tabs included)
        with open(path, encoding="utf-8") as fh:
            first = fh.readline().replace(",", " ").split()
        try:
            [float(x) for x in first]
            names, skip = None, 0
        except ValueError:
            names, skip = tuple(first), 1
        try:
            arr = np.loadtxt(path, delimiter=delim, skiprows=skip, ndmin=2)
        except ValueError:
            raise ValueError(f"{path}: every row after the header must hold one number per ROI") from None
    arr = np.asarray(arr, np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or not np.isfinite(arr).all():
        raise ValueError(f"{path}: need a finite (TRs, ROIs) table; got shape {arr.shape}")
    if names is not None and len(names) != arr.shape[1]:
        raise ValueError(f"{path}: the header names {len(names)} ROIs but the rows hold {arr.shape[1]} numbers")
    return arr, names


def load_timecourses(bold: list[str | Path], words: str | Path, *, tr: float, t0: float = 0.0,
                     min_trs: int = 48) -> Alice:  # fmt: skip
    """A user's own recording in the shape :class:`Alice` has: one ROI table per listener (``bold``: files with
    the same TRs and ROIs, see :func:`_read_roi_table`), the story's word timings (``words``, :func:`read_words`),
    ``tr`` seconds between volumes and ``t0`` the first volume's acquisition time on the words' clock. No
    nuisance regressors (there are none to read); every time course z-scored per listener and ROI."""
    if not bold:
        raise ValueError("give at least one ROI time-course file (one per listener)")
    if not (np.isfinite(tr) and tr > 0) or not np.isfinite(t0):
        raise ValueError(f"tr must be a positive number of seconds and t0 finite; got tr={tr}, t0={t0}")
    tables = [_read_roi_table(Path(p)) for p in bold]
    shapes = {t.shape for t, _ in tables}
    if len(shapes) > 1:
        raise ValueError(f"the listeners' ROI tables differ in shape {sorted(shapes)}: same TRs and ROIs needed")
    headers = {n for _, n in tables if n is not None}
    if len(headers) > 1:
        raise ValueError("the listeners' ROI tables name different ROIs; give them the same columns")
    T, R = tables[0][0].shape
    if T < min_trs:
        raise ValueError(f"{T} TRs: held-out contiguous blocks need at least {min_trs} TRs")
    if np.any(np.stack([t for t, _ in tables]).std(1) == 0):
        raise ValueError("an ROI time course is constant: nothing to predict")
    w, on, off = read_words(words)
    end = t0 + T * tr
    if not np.any((on >= t0 - 32.0) & (on < end)):  # 32 s: the HRF's length
        raise ValueError(f"no word falls inside the scan ({t0:g}-{end:g} s on the words' clock): check --t0/--tr")
    rois = headers.pop() if headers else tuple(f"roi{i}" for i in range(R))
    names = [Path(p).stem for p in bold]
    return Alice(names, _z(np.stack([t for t, _ in tables]), axis=1), None, w, on, off, rois, float(tr), float(t0))


# ------------------------------------------------------------------------------------------- features -> TRs
def spm_hrf(dt: float, length: float = 32.0) -> np.ndarray:
    """SPM's canonical double-gamma HRF (peak ~5 s, undershoot ~15 s, ratio 1/6), sampled every ``dt`` s, sum 1."""
    t = np.arange(0.0, length, dt)
    h = stats.gamma.pdf(t, 6) - stats.gamma.pdf(t, 16) / 6.0
    return h / h.sum()


def to_trs(onsets: np.ndarray, values: np.ndarray, n_tr: int = N_TR, *, tr: float = TR, t0: float = T0,
           dt: float = 0.1) -> np.ndarray:  # fmt: skip
    """Word-level values (W, d) -> TR-level regressors (n_tr, d): impulses at the onsets, HRF, TR averages."""
    values = np.asarray(values, np.float64).reshape(len(onsets), -1)
    onsets = np.asarray(onsets, np.float64)
    pad = max(0.0, tr / 2 - t0, -float(onsets.min(initial=0.0)))  # shift the clock so no index is negative
    onsets, t0 = onsets + pad, t0 + pad
    steps_per_tr = max(1, round(tr / dt))
    dt = tr / steps_per_tr  # a whole number of fine steps per TR
    n_fine = (n_tr + 1) * steps_per_tr + round(t0 / dt)
    fine = np.zeros((n_fine, values.shape[1]))
    idx = np.clip(np.round(onsets / dt).astype(int), 0, n_fine - 1)  # words after the scan fall past the window
    np.add.at(fine, idx, values)
    h = spm_hrf(dt)
    conv = np.apply_along_axis(lambda c: np.convolve(c, h)[:n_fine], 0, fine)
    start = round((t0 - tr / 2) / dt)  # the window centred on each volume's acquisition time
    return conv[start : start + n_tr * steps_per_tr].reshape(n_tr, steps_per_tr, -1).mean(1)


# ------------------------------------------------------------------------------------------- encoding model
def contiguous_folds(n: int, k: int, gap: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs: k contiguous test blocks; ``gap`` TRs either side of a block are left out of
    training so the BOLD autocorrelation cannot carry test signal into the fit."""
    if k < 2 or n < k * (2 * gap + 2):
        raise ValueError(f"cannot cut {n} TRs into {k} contiguous blocks with a {gap}-TR gap")
    edges = np.linspace(0, n, k + 1).astype(int)
    out = []
    for a, b in itertools.pairwise(edges):
        test = np.arange(a, b)
        train = np.r_[np.arange(0, max(a - gap, 0)), np.arange(min(b + gap, n), n)]
        out.append((train, test))
    return out


def _ridge_path(X: np.ndarray, Y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """Ridge coefficients for every alpha at once: (A, d, m), via one SVD of X."""
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    UtY = U.T @ Y  # (r, m)
    shrink = s[None, :] / (s[None, :] ** 2 + alphas[:, None])  # (A, r)
    return (Vt.T[None] * shrink[:, None, :]) @ UtY  # (A, d, r) @ (r, m): one BLAS product per alpha


def _pearson_cols(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(0)
    b = b - b.mean(0)
    den = np.sqrt((a * a).sum(0) * (b * b).sum(0))
    return np.where(den > 0, (a * b).sum(0) / np.where(den > 0, den, 1.0), 0.0)


ALPHAS = np.logspace(-1, 5, 13)


@dataclass
class Encoding:
    """Held-out encoding scores: ``r`` (S, R) averaged over the outer blocks, ``r_blocks`` (folds, S, R), and the
    layer each outer fold chose on its training part (``layers``: one name per fold)."""

    r: np.ndarray
    r_blocks: np.ndarray
    layers: list[str]


def encode(features, bold: np.ndarray, nuisance: np.ndarray | None = None, *, folds: int = 4, gap: int = 5,
           alphas: np.ndarray = ALPHAS) -> Encoding:  # fmt: skip
    """Held-out prediction r of every (subject, ROI) time course from TR-level features.

    ``features``: one (T, d) array, or a dict of them (one per layer): then each outer fold picks the layer with
    the best mean inner-fold r on its own training part, and only that layer is scored on the held-out block.
    ``bold`` (S, T, R), ``nuisance`` (S, T, q) or None. r is Pearson's between prediction and nuisance-cleaned
    BOLD within each held-out block, averaged over blocks. Features and targets are standardised with the
    training part's statistics; each (subject, ROI) gets its ridge penalty from the inner folds.
    """
    layers = features if isinstance(features, dict) else {"features": features}
    bold = np.asarray(bold, np.float64)
    S, T, R = bold.shape
    mats = {}
    for name, F in layers.items():
        F = np.asarray(F, np.float64)
        if F.ndim != 2 or F.shape[0] != T:
            raise ValueError(f"features {name!r} must be (T={T}, d); got {F.shape}")
        if not np.isfinite(F).all():
            raise ValueError(f"features {name!r} contain NaN or inf")
        mats[name] = F
    if not mats:
        raise ValueError("no features given")
    Y_raw = bold.transpose(1, 0, 2).reshape(T, S * R)  # (T, S*R)
    r_blocks, chosen = [], []
    for train, test in contiguous_folds(T, folds, gap):
        Y = _clean(Y_raw, nuisance, train, S, R)
        fits = {name: _fit_block(F, Y, train, gap, alphas) for name, F in mats.items()}
        best = max(fits, key=lambda name: fits[name][0].mean())  # by the training part's inner r only
        _, coef, mu, sd, ym = fits[best]
        pred = (mats[best][test] - mu) / sd @ coef + ym
        # r within the block: concatenated blocks would correlate the training mean (the other blocks') with
        # the block's own level, which slow drift makes anti-correlated with it
        r_blocks.append(_pearson_cols(pred, Y[test]).reshape(S, R))
        chosen.append(best)
    r_blocks = np.stack(r_blocks)
    return Encoding(r_blocks.mean(0), r_blocks, chosen)


def _fit_block(F: np.ndarray, Y: np.ndarray, train: np.ndarray, gap: int, alphas: np.ndarray):
    """Ridge on the training part: (inner r per target at its best alpha, coefficients, feature mean/sd, y mean)."""
    mu, sd = F[train].mean(0), F[train].std(0)
    sd = np.where(sd > 0, sd, 1.0)
    Ftr, Ytr = (F[train] - mu) / sd, Y[train]
    inner = np.zeros((len(alphas), Y.shape[1]))
    for itr, ite in contiguous_folds(len(train), 3, gap):
        B = _ridge_path(Ftr[itr], Ytr[itr] - Ytr[itr].mean(0), alphas)  # (A, d, m)
        inner += np.stack([_pearson_cols(Ftr[ite] @ B[a], Ytr[ite]) for a in range(len(alphas))]) / 3
    best = inner.argmax(0)  # (m,) each target's alpha
    ym = Ytr.mean(0)
    B = _ridge_path(Ftr, Ytr - ym, alphas)
    coef = B[best, :, np.arange(Y.shape[1])].T  # (d, m)
    return inner.max(0), coef, mu, sd, ym


def _clean(Y: np.ndarray, nuisance: np.ndarray | None, train: np.ndarray, S: int, R: int) -> np.ndarray:
    """Y with each subject's nuisance regressors removed, the weights fit on the training TRs only (fit on all
    TRs, the removal would make the training and test parts' relations to word rate opposite by construction)."""
    if nuisance is None:
        return Y
    Y = Y.copy()
    for s in range(S):
        N = np.c_[np.ones(len(Y)), nuisance[s]]
        cols = slice(s * R, (s + 1) * R)
        Y[:, cols] -= N @ np.linalg.lstsq(N[train], Y[train, cols], rcond=None)[0]
    return Y


# ------------------------------------------------------------------------------ RSA / CKA over word-aligned TRs
@dataclass
class Similarity:
    """Held-out representational similarity of features and each listener's ROI pattern: ``score`` (S,) averaged
    over the outer blocks, ``blocks`` (folds, S), and the layer each fold chose on its training part."""

    score: np.ndarray
    blocks: np.ndarray
    layers: list[str]


def _pattern_score(F: np.ndarray, B: np.ndarray, measure: str, band: int) -> float:
    """One listener, one block of n TRs: F (n, d) features, B (n, R) ROI pattern -> RSA or linear CKA over TR pairs
    at least ``band`` TRs apart (nearer pairs share the HRF's and the BOLD's autocorrelation, which would make
    any two smooth series look similar)."""
    n = len(F)
    i, j = np.triu_indices(n, k=max(1, band))
    F = F - F.mean(0)
    B = B - B.mean(0)
    K, L = F @ F.T, B @ B.T  # (n, n) Gram matrices of the centred TR vectors
    if measure == "rsa":  # Spearman between the two RDMs (squared Euclidean distances: the same ranks)
        k = np.diag(K)[i] + np.diag(K)[j] - 2 * K[i, j]
        m = np.diag(L)[i] + np.diag(L)[j] - 2 * L[i, j]
        k, m = stats.rankdata(k), stats.rankdata(m)
        k, m = k - k.mean(), m - m.mean()
    else:  # linear CKA's Gram matrices compared on the off-band pairs, as a correlation of their entries: with
        # centred columns every Gram row sums to 0, so off-diagonal entries share a negative offset that grows with
        # the feature count and would make any two wide matrices look alike
        k, m = K[i, j], L[i, j]
        k, m = k - k.mean(), m - m.mean()
    den = np.sqrt((k @ k) * (m @ m))
    return float(k @ m / den) if den > 0 else 0.0


def similarity(features, bold: np.ndarray, nuisance: np.ndarray | None = None, *, measure: str = "cka",
               folds: int = 4, gap: int = 5, band: int = 10) -> Similarity:  # fmt: skip
    """RSA or linear CKA between model features and each listener's multi-ROI BOLD pattern over TRs.

    ``features``: (T, d) or a dict of layers (each outer fold picks the layer with the best mean score on its
    own training TRs, then scores the held-out block); ``bold`` (S, T, R); the nuisance regressors are removed
    with weights fit on the training TRs, as in :func:`encode`. Features are standardised with the training
    part's statistics. Only TR pairs ``band`` or more apart enter (see :func:`_pattern_score`).
    """
    if measure not in ("rsa", "cka"):
        raise ValueError(f"measure must be 'rsa' or 'cka'; got {measure!r}")
    layers = features if isinstance(features, dict) else {"features": features}
    bold = np.asarray(bold, np.float64)
    S, T, R = bold.shape
    mats = {name: np.asarray(F, np.float64) for name, F in layers.items()}
    for name, F in mats.items():
        if F.ndim != 2 or F.shape[0] != T or not np.isfinite(F).all():
            raise ValueError(f"features {name!r} must be a finite (T={T}, d) array; got {F.shape}")
    if not mats:
        raise ValueError("no features given")
    Y_raw = bold.transpose(1, 0, 2).reshape(T, S * R)
    blocks, chosen = [], []
    for train, test in contiguous_folds(T, folds, gap):
        Y = _clean(Y_raw, nuisance, train, S, R).reshape(T, S, R)
        scaled = {}
        for name, F in mats.items():
            sd = F[train].std(0)
            scaled[name] = (F - F[train].mean(0)) / np.where(sd > 0, sd, 1.0)
        fit = {name: np.mean([_pattern_score(F[train], Y[train, s], measure, band) for s in range(S)])
               for name, F in scaled.items()}  # fmt: skip
        best = max(fit, key=fit.get)
        blocks.append([_pattern_score(scaled[best][test], Y[test, s], measure, band) for s in range(S)])
        chosen.append(best)
    blocks = np.asarray(blocks)
    return Similarity(blocks.mean(0), blocks, chosen)


def similarity_ceiling(bold: np.ndarray, nuisance: np.ndarray | None = None, *, measure: str = "cka",
                       folds: int = 4, gap: int = 5, band: int = 10) -> np.ndarray:  # fmt: skip
    """Leave-one-listener-out ceiling (S,): each listener's pattern against the other listeners' mean pattern,
    scored on the same held-out blocks as :func:`similarity`."""
    bold = np.asarray(bold, np.float64)
    S = bold.shape[0]
    if S < 2:
        raise ValueError("a noise ceiling needs at least two subjects")
    out = np.zeros(S)
    for s in range(S):
        others = np.delete(bold, s, axis=0).mean(0)  # (T, R)
        sub_nuis = None if nuisance is None else nuisance[s : s + 1]
        out[s] = similarity(others, bold[s : s + 1], sub_nuis, measure=measure, folds=folds, gap=gap,
                            band=band).score[0]  # fmt: skip
    return out


def noise_ceiling(bold: np.ndarray, nuisance: np.ndarray | None = None) -> np.ndarray:
    """Leave-one-subject-out ceiling (S, R): r of each subject's (nuisance-cleaned) BOLD with the others' mean."""
    bold = np.asarray(bold, np.float64)
    S, T, _R = bold.shape
    if S < 2:
        raise ValueError("a noise ceiling needs at least two subjects")
    clean = bold.copy()
    if nuisance is not None:
        for s in range(S):
            N = np.c_[np.ones(T), nuisance[s]]
            clean[s] -= N @ np.linalg.lstsq(N, clean[s], rcond=None)[0]
    total = clean.sum(0)
    return np.stack([_pearson_cols(clean[s], (total - clean[s]) / (S - 1)) for s in range(S)])
