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
    nuisance: np.ndarray  # (S, T, 8): word rate, sound power, 6 motion parameters (z-scored)
    words: list[str]
    onsets: np.ndarray  # (W,) seconds on the TextGrid's clock
    offsets: np.ndarray  # (W,)
    rois: tuple[str, ...] = ROIS

    @property
    def n_tr(self) -> int:
        return self.bold.shape[1]

    def subset(self, subjects) -> Alice:
        idx = [self.subjects.index(s) for s in subjects]
        return Alice([self.subjects[i] for i in idx], self.bold[idx], self.nuisance[idx], self.words, self.onsets,
                     self.offsets, self.rois)  # fmt: skip


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
    steps_per_tr = round(tr / dt)
    n_fine = (n_tr + 1) * steps_per_tr + round(t0 / dt)
    fine = np.zeros((n_fine, values.shape[1]))
    idx = np.clip(np.round(np.asarray(onsets) / dt).astype(int), 0, n_fine - 1)
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
    return np.einsum("dr,ar,rm->adm", Vt.T, shrink, UtY)


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
