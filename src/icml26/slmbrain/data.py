"""The synthetic world with ground truth, and validated loaders for users' fMRI, features and word timings.

World (reconstruction of the paper notes' laptop recipe):

1. a probabilistic grammar (PCFG) with subject-verb **agreement** (attractor nouns inside prepositional phrases
   and relative clauses) and a latent **topic** per sentence (Markov switches), so every word carries labels:
   topic, the number the next verb must agree with, tree depth, part of speech;
2. stories = sequences of sentences with word onsets (0.25-0.45 s apart) and TRs of 2 s;
3. a teacher LM trained on the grammar; its contextual states (word-type means removed, restricted to the
   directions a bag of surrounding words predicts least), projected on its own agreement / topic directions and
   mixed by random voxel maps, downsampled with a Lanczos filter, convolved with a canonical HRF and noised
   (independently for each repeated presentation) define a "syntactic" and a "semantic" ROI
   (:func:`icml26.slmbrain.world.simulate_fmri`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26._util.io import check_input_file, load_array

POS = ("DET", "ADJ", "NOUN", "VERB", "PREP", "COMP", "PUNCT")


@dataclass
class Grammar:
    """Vocabulary of the PCFG: per-topic nouns / verbs / adjectives with singular and plural forms."""

    n_topics: int = 3
    nouns_per_topic: int = 6
    verbs_per_topic: int = 4
    adjs_per_topic: int = 3
    p_topic_word: float = 0.7
    """probability a content word comes from the sentence's topic (else from any topic)"""
    p_switch: float = 0.25
    """probability the topic changes between sentences"""
    p_pp: float = 0.3
    p_rc: float = 0.2
    max_depth: int = 3
    words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        w = ["the", "a", "some", "that", "near", "with", ".", "<bos>"]
        for t in range(self.n_topics):
            for i in range(self.nouns_per_topic):
                w += [f"n{t}_{i}", f"n{t}_{i}s"]
            for i in range(self.verbs_per_topic):
                w += [f"v{t}_{i}s", f"v{t}_{i}"]  # 'v0_1s' agrees with a singular subject
            w += [f"j{t}_{i}" for i in range(self.adjs_per_topic)]
        self.words = w
        self.index = {s: i for i, s in enumerate(w)}

    @property
    def vocab_size(self) -> int:
        return len(self.words)


@dataclass
class Corpus:
    """Word ids and per-word ground-truth labels of one stream (a story or the training text)."""

    ids: np.ndarray  # (N,) int
    topic: np.ndarray  # (N,) topic of the sentence
    number: np.ndarray  # (N,) 0 singular / 1 plural: the number the pending verb must agree with (-1: none)
    depth: np.ndarray  # (N,) open constituents (tree depth)
    pos: np.ndarray  # (N,) index into POS


class _Gen:
    def __init__(self, g: Grammar, rng: np.random.Generator):
        self.g, self.rng = g, rng
        self.out: list[tuple[int, int, int, int, int]] = []

    def _content(self, topic: int, n: int) -> tuple[int, int]:
        """A content word's index and topic: the sentence's topic with probability ``p_topic_word``."""
        g, r = self.g, self.rng
        t = topic if r.random() < g.p_topic_word else int(r.integers(g.n_topics))
        return int(r.integers(n)), t

    def emit(self, word: str, topic: int, number: int, depth: int, pos: str) -> None:
        self.out.append((self.g.index[word], topic, number, depth, POS.index(pos)))

    def np_(self, topic: int, depth: int, after: int | None) -> int:
        """NP; returns its own number. ``after``: the number the verb that follows this NP must agree with
        (-1: no verb follows; None: this NP is the subject, so its own number)."""
        g, r = self.g, self.rng
        num = int(r.random() < 0.5)
        cur = num if after is None else after  # label of the NP's words: the agreement still pending
        self.emit(("some" if num else r.choice(["the", "a"])) if r.random() < 0.5 else "the", topic, cur, depth, "DET")
        if r.random() < 0.4:
            i, t = self._content(topic, g.adjs_per_topic)
            self.emit(f"j{t}_{i}", topic, cur, depth, "ADJ")
        i, t = self._content(topic, g.nouns_per_topic)
        self.emit(f"n{t}_{i}" + ("s" if num else ""), topic, cur, depth, "NOUN")
        if depth < g.max_depth:
            u = r.random()
            if u < g.p_pp:  # attractor: "the key near the cabinets" keeps the pending number
                self.emit(r.choice(["near", "with"]), topic, cur, depth + 1, "PREP")
                self.np_(topic, depth + 1, cur)
            elif u < g.p_pp + g.p_rc:  # "the dog that chases the cats": the RC verb agrees with this NP
                self.emit("that", topic, num, depth + 1, "COMP")
                self.vp(topic, depth + 1, num, after=cur)
        return num

    def vp(self, topic: int, depth: int, subj: int, after: int) -> None:
        """Verb agreeing with ``subj`` and its object NP; ``after`` is the agreement pending once the VP ends."""
        g = self.g
        i, t = self._content(topic, g.verbs_per_topic)
        self.emit(f"v{t}_{i}" + ("s" if subj == 0 else ""), topic, after, depth, "VERB")
        self.np_(topic, depth + 1, after)

    def sentence(self, topic: int) -> None:
        subj = self.np_(topic, 0, None)
        self.vp(topic, 0, subj, after=-1)
        self.emit(".", topic, -1, 0, "PUNCT")


def generate_corpus(grammar: Grammar, n_words: int, rng: np.random.Generator, topic0: int | None = None) -> Corpus:
    """Sentences until ``n_words`` words (the last sentence is cut), with Markov topic switches."""
    gen = _Gen(grammar, rng)
    topic = int(rng.integers(grammar.n_topics)) if topic0 is None else topic0
    while len(gen.out) < n_words:
        gen.sentence(topic)
        if rng.random() < grammar.p_switch:
            topic = int(rng.integers(grammar.n_topics))
    a = np.array(gen.out[:n_words])
    return Corpus(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4])


@dataclass
class Story:
    """One story: its words with labels, their onset times (s) and the TR grid."""

    corpus: Corpus
    word_times: np.ndarray  # (N,) seconds, increasing
    tr_times: np.ndarray  # (n_TR,) seconds

    @property
    def n_tr(self) -> int:
        return len(self.tr_times)


def make_stories(grammar: Grammar, n_stories: int, words: int, rng: np.random.Generator, tr: float = 2.0):
    """Stories with word onsets 0.25-0.45 s apart and TRs covering them (10 s of silence at both ends)."""
    out = []
    for _ in range(n_stories):
        c = generate_corpus(grammar, words, rng)
        t = 10.0 + np.cumsum(rng.uniform(0.25, 0.45, words))
        n_tr = int(np.ceil((t[-1] + 10.0) / tr))
        out.append(Story(c, t, tr * np.arange(n_tr) + tr / 2))
    return out


# ----------------------------------------------------------------------------------------------- loaders
def _load_array(path: str | Path, what: str) -> np.ndarray:
    p = check_input_file(path, what=what)
    try:
        loaded = load_array(p, what=what)  # NumPy's header checked first: no pickle advice for a garbage file
        if isinstance(loaded, np.ndarray):
            a = loaded
        else:
            with loaded as z:
                keys = list(z.keys())
                if len(keys) != 1:
                    raise ValueError(f"{what} {p}: a .npz must hold exactly one array, found {keys}")
                a = z[keys[0]]
    except ValueError as exc:
        if "must hold exactly one" in str(exc) or "NumPy's header" in str(exc):
            raise
        raise ValueError(f"{what} {p} is not a readable .npy/.npz array ({exc.__class__.__name__})") from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"{what} {p} is not a readable .npy/.npz array ({exc.__class__.__name__})") from None
    if not isinstance(a, np.ndarray) or a.size == 0 or not np.issubdtype(a.dtype, np.number):
        raise ValueError(f"{what} {p} must hold a non-empty numeric array")
    return a


def load_features(path: str | Path) -> tuple[np.ndarray, np.ndarray | None]:
    """A ``(n_TR, p)`` or ``(n_layers, n_TR, p)`` feature array (.npy/.npz); returns it and layer names (None)."""
    a = _load_array(path, "features file").astype(np.float64)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3:
        raise ValueError(f"features file {path}: expected (n_TR, p) or (n_layers, n_TR, p), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"features file {path} holds NaN or inf")
    flat = [k for k in range(len(a)) if np.ptp(a[k], axis=0).max(initial=0.0) == 0]
    if flat:  # every column constant over TRs (e.g. all zero): no encoding model can use it, r would read 0
        raise ValueError(
            f"features file {path}: layer(s) {flat[:5]}{' ...' if len(flat) > 5 else ''} of {len(a)} are constant "
            "over TRs (e.g. all zero); nothing to encode"
        )
    return a, None


def load_fmri(path: str | Path, n_tr: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A TR-aligned ``(n_TR, n_voxels)`` or ``(n_repeats, n_TR, n_voxels)`` array; NaN voxels are masked.

    Returns ``(Y, keep)`` with ``Y`` of shape ``(n_repeats, n_TR, n_kept)`` and ``keep`` the boolean voxel mask.
    Raises ValueError when the TR count differs from ``n_tr`` (the features') or every voxel is NaN.
    """
    Y = _load_array(path, "fMRI file").astype(np.float64)
    if Y.ndim == 2:
        Y = Y[None]
    if Y.ndim != 3:
        raise ValueError(f"fMRI file {path}: expected (n_TR, n_voxels) or (n_repeats, n_TR, n_voxels), got {Y.shape}")
    if n_tr is not None and Y.shape[1] != n_tr:
        raise ValueError(f"fMRI file {path} has {Y.shape[1]} TRs but the features have {n_tr}: they must match")
    if np.isinf(Y).any():
        raise ValueError(f"fMRI file {path} holds inf values")
    keep = ~np.isnan(Y).any(axis=(0, 1))
    if not keep.any():
        raise ValueError(f"fMRI file {path}: every voxel holds NaN")
    std = Y[:, :, keep].std(axis=1).min(axis=0)
    if (std == 0).all():
        raise ValueError(f"fMRI file {path}: every voxel is constant")
    return Y[:, :, keep], keep


def load_word_timings(path: str | Path) -> tuple[list[str], np.ndarray]:
    """A CSV ``word,onset`` (header optional; onsets in seconds, non-decreasing). Returns words and onsets."""
    p = check_input_file(path, what="word timings file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"word timings file {p} is not UTF-8 text") from None
    words, times = [], []
    for i, row in enumerate(csv.reader(text.splitlines())):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise ValueError(f"word timings file {p}, line {i + 1}: expected 'word,onset', got {row!r}")
        try:
            t = float(row[1])
        except ValueError:
            if i == 0:
                continue  # header
            raise ValueError(f"word timings file {p}, line {i + 1}: onset {row[1]!r} is not a number") from None
        if not np.isfinite(t) or t < 0:
            raise ValueError(f"word timings file {p}, line {i + 1}: onset {t} must be finite and >= 0")
        words.append(row[0].strip())
        times.append(t)
    if not words:
        raise ValueError(f"word timings file {p} holds no 'word,onset' rows")
    t = np.asarray(times)
    bad = np.flatnonzero(np.diff(t) < 0)
    if bad.size:
        raise ValueError(
            f"word timings file {p}: onsets out of order at word {bad[0] + 2} ({t[bad[0]]} then {t[bad[0] + 1]})"
        )
    if any(not w for w in words):
        raise ValueError(f"word timings file {p} has an empty word")
    return words, t
