"""Assemble the synthetic world: grammar text, stories, the teacher LM, the fMRI it defines, the student family.

The brain (``simulate_fmri``) is driven by the teacher's *contextual* signal: its middle-layer word states
``h_t`` (N, d) minus the mean state of the same word type (:func:`contextual`), so that word identity alone
(a lexical, one-hot model) cannot predict it, restricted to the half of the teacher's directions that a
bag-of-words model of the surrounding words predicts least (:func:`nonlexical_basis`: at the TR level a
voxel sums ~6 words and the FIR model adds 4 TRs, so word-type means alone leave the context's bag of words
predictive). These residuals are projected on the teacher's own *agreement*
directions (least-squares readout of the number the pending verb must agree with and of tree depth) ->
syntactic latents, and on its *topic* directions -> semantic latents. Each voxel of the
"syntactic" ROI is a random mix of the syntactic latents, each of the "semantic" ROI of the semantic ones; the
voxel time series is the Lanczos-downsampled mix convolved with the canonical HRF plus Gaussian noise at the
configured SNR, drawn independently for every presentation (the test story is presented ``repeats`` times).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.slmbrain.config import Config
from icml26.slmbrain.data import Corpus, Grammar, Story, generate_corpus, make_stories
from icml26.slmbrain.encoding import convolve_hrf, lanczos_downsample, zscore
from icml26.slmbrain.lm import TinyGPT, train_lm, word_states


@dataclass
class Brain:
    train: list[np.ndarray]  # per training story (n_TR, V)
    test: np.ndarray  # (R, n_TR, V) repeats of the test story
    rois: dict[str, np.ndarray]  # ROI name -> voxel indices
    teacher_layer: int
    # what the voxels are generated from: per story the word-level states (N_s, k) and the ROI readout bases
    # (k, k_roi), applied to the pooled-standardised states (kept for the claims' planted positive controls)
    latents: list[np.ndarray] | None = None
    directions: dict[str, np.ndarray] | None = None


@dataclass
class World:
    cfg: Config
    grammar: Grammar
    text: Corpus
    heldout: Corpus
    stories: list[Story]
    teacher: TinyGPT
    brain: Brain
    students: dict[tuple, TinyGPT] = field(default_factory=dict)  # (width, seed, trained) -> model


def contextual(states: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Word states ``(N, d)`` minus the mean state of their word type (over the ``N`` words): the part of the
    state that word identity cannot explain (its per-type mean is exactly 0)."""
    ids = np.asarray(ids)
    sums = np.zeros((int(ids.max()) + 1, states.shape[1]))
    np.add.at(sums, ids, states)
    counts = np.bincount(ids, minlength=len(sums))[:, None]
    return states - (sums / np.maximum(counts, 1))[ids]


LEXICAL_WINDOWS = ((0, 0), (1, 2), (3, 6), (7, 14), (15, 30), (31, 60), (-4, -1), (-16, -5))
"""word-offset windows ``(a, b)`` of the lexical design: counts of each word type at positions ``t-b .. t-a``
(the current word, bags of the 30 preceding words and of the next 4: downsampling to TRs mixes a TR's words)"""


LEXICAL_FIT_WORDS = 40000
"""most words of grammar text the bag-of-words model of :func:`nonlexical_basis` is fitted on (4x the training
text, at least 8000: every claim scale reaches the cap; the tiny command-line preset does not)"""


def lexical_design(ids: np.ndarray, vocab: int, windows=LEXICAL_WINDOWS) -> np.ndarray:
    """``(N, vocab * len(windows))`` bag-of-words counts of each window around every word of one stream."""
    ids = np.asarray(ids)
    n = len(ids)
    cum = np.zeros((n + 1, vocab))
    cum[1:] = np.cumsum(np.eye(vocab)[ids], 0)  # cum[i]: counts of words 0 .. i-1
    t = np.arange(n)
    cols = [cum[np.clip(t - a + 1, 0, n)] - cum[np.clip(t - b, 0, n)] for a, b in windows]
    return np.concatenate(cols, 1)


def nonlexical_basis(states: np.ndarray, ids: np.ndarray, vocab: int, keep: float) -> np.ndarray:
    """``(d, k)`` directions ``u`` of contextual states (word-type means removed) whose projection ``u^T h`` a
    linear bag-of-words model of the surrounding words (:func:`lexical_design`, ridge) explains least: the
    ``k = keep * d`` smallest generalised eigenvectors of ``C_lex u = lambda C u`` (``C``: covariance of the
    states, ``C_lex``: of their lexical prediction); ``lambda`` = the lexical R^2 of the direction."""
    from scipy.linalg import eigh

    X = states - states.mean(0)
    D = lexical_design(ids, vocab)
    D = D - D.mean(0)
    Xh = D @ np.linalg.solve(D.T @ D + np.eye(D.shape[1]), D.T @ X)  # (N, d) ridge prediction
    C = X.T @ X / len(X)
    C_lex = Xh.T @ Xh / len(X)
    _, U = eigh(C_lex, C + 1e-8 * np.trace(C) / len(C) * np.eye(len(C)))  # ascending; U^T C U = I
    k = max(round(keep * len(C)), 1)
    return U[:, :k]


def label_latents(corpus: Corpus, n_topics: int) -> np.ndarray:
    """The probe labels as word-level latents ``(N, 3 + K)``: singular / plural pending, tree depth, topic one-hot."""
    num = np.stack([corpus.number == 0, corpus.number == 1], 1).astype(float)
    return np.concatenate([num, corpus.depth[:, None].astype(float), np.eye(n_topics)[corpus.topic]], 1)


def teacher_directions(states: np.ndarray, corpus: Corpus, n_topics: int) -> dict[str, np.ndarray]:
    """Orthonormal bases ``(d, k)`` of the teacher's least-squares readouts of agreement+depth and of topic."""
    X = zscore(states)
    agree = np.stack(
        [np.where(corpus.number == 0, 1.0, 0.0), np.where(corpus.number == 1, 1.0, 0.0), corpus.depth.astype(float)], 1
    )  # (N, 3)
    topic = np.eye(n_topics)[corpus.topic]  # (N, K)
    out = {}
    for name, T in (("syntactic", agree), ("semantic", topic)):
        W, *_ = np.linalg.lstsq(X, zscore(T), rcond=None)  # (d, k) readout
        out[name] = np.linalg.qr(W)[0]
    return out


def simulate_fmri(
    states_per_story: list[np.ndarray],
    stories: list[Story],
    dirs: dict[str, np.ndarray],
    voxels_per_roi: int,
    snr: float,
    repeats: int,
    rng: np.random.Generator,
) -> tuple:
    """Voxel responses per story from word states (N, d); the last story gets ``repeats`` noisy presentations."""
    mix = {name: rng.standard_normal((B.shape[1], voxels_per_roi)) for name, B in dirs.items()}
    rois, start = {}, 0
    for name in dirs:
        rois[name] = np.arange(start, start + voxels_per_roi)
        start += voxels_per_roi
    clean = []
    mu, sd = _pooled_moments(states_per_story)
    for h, s in zip(states_per_story, stories, strict=True):
        z = np.concatenate([(((h - mu) / sd) @ dirs[n]) @ mix[n] for n in dirs], 1)  # (N, V)
        y = convolve_hrf(lanczos_downsample(z, s.word_times, s.tr_times), s.tr_times[1] - s.tr_times[0])
        clean.append(zscore(y))  # (n_TR, V) unit signal variance
    noise_sd = 1.0 / np.sqrt(snr)
    train = [y + noise_sd * rng.standard_normal(y.shape) for y in clean[:-1]]
    test = np.stack([clean[-1] + noise_sd * rng.standard_normal(clean[-1].shape) for _ in range(repeats)])
    return train, test, rois


def _pooled_moments(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    cat = np.concatenate(arrays)
    sd = cat.std(0)
    return cat.mean(0), np.where(sd > 0, sd, 1.0)


def label_brain(world: World, seed: int) -> Brain:
    """A brain built from the probe labels themselves (contextual part, same mixing, HRF and noise as the
    teacher's brain): what the probes read *is* what the voxels carry (the dissociation claim's control)."""
    cfg, stories = world.cfg, world.stories
    lat = [label_latents(s.corpus, cfg.n_topics) for s in stories]
    ids = np.concatenate([s.corpus.ids for s in stories])
    ctx = np.split(contextual(np.concatenate(lat), ids), np.cumsum([len(x) for x in lat])[:-1])
    k = lat[0].shape[1]
    dirs = {"syntactic": np.eye(k)[:, :3], "semantic": np.eye(k)[:, 3:]}
    rng = np.random.default_rng(seed + 777)
    train, test, rois = simulate_fmri(ctx, stories, dirs, cfg.voxels_per_roi, cfg.snr, cfg.repeats, rng)
    return Brain(train, test, rois, -1)


def tr_features(states: np.ndarray, story: Story) -> np.ndarray:
    """``(L, N, d)`` word states -> ``(L, n_TR, d)`` Lanczos-downsampled TR features."""
    return np.stack([lanczos_downsample(s, story.word_times, story.tr_times) for s in states])


def story_features(model: TinyGPT, world: World) -> list[np.ndarray]:
    """Per story, the model's layerwise TR features ``(L+1, n_TR, d)``."""
    return [tr_features(word_states(model, s.corpus.ids), s) for s in world.stories]


def onehot_features(world: World) -> list[np.ndarray]:
    """The lexical baseline: per story, one-hot word identity downsampled to TRs ``(1, n_TR, V)``."""
    eye = np.eye(world.grammar.vocab_size)
    return [tr_features(eye[s.corpus.ids][None], s) for s in world.stories]


_WORLDS: dict = {}
"""Worlds built in this process, by (config, seed); a world keeps its trained students (the claims and their
controls reuse them on the same seeds). Each world is a few MB; the oldest is dropped beyond ``_MAX_WORLDS``."""
_MAX_WORLDS = 12


def build_world(cfg: Config, seed: int) -> World:
    """Grammar text, stories, trained teacher and the fMRI it defines (cached per config and seed)."""
    key = (cfg, seed)
    if key not in _WORLDS:
        rng = np.random.default_rng(seed)
        g = Grammar(n_topics=cfg.n_topics)
        text = generate_corpus(g, cfg.train_words, rng)
        heldout = generate_corpus(g, max(cfg.train_words // 8, 1000), rng)
        stories = make_stories(g, cfg.n_stories, cfg.story_words, rng)
        teacher = TinyGPT(g.vocab_size, cfg.teacher_width, cfg.teacher_layers, 2, cfg.ctx, seed=seed + 1000)
        train_lm(teacher, text.ids, cfg.teacher_steps, cfg.batch, seed=seed)
        layer = (cfg.teacher_layers + 1) // 2  # middle block
        raw = [word_states(teacher, s.corpus.ids)[layer] for s in stories]  # per story (N_s, d_teacher)
        fields = ("ids", "topic", "number", "depth", "pos")
        cat = Corpus(*[np.concatenate([getattr(s.corpus, f) for s in stories]) for f in fields])
        ctx = contextual(np.concatenate(raw), cat.ids)  # word identity removed: a lexical model cannot predict it
        # the bag of surrounding words still predicts much of it at the TR level (a TR sums ~6 words, FIR
        # delays add 4 TRs): keep the directions that bag predicts least (fitted on a separate long text)
        n_fit = min(LEXICAL_FIT_WORDS, max(4 * cfg.train_words, 8000))  # long: the lexical fit must not underfit
        fit_text = generate_corpus(g, n_fit, rng)
        U = nonlexical_basis(word_states(teacher, fit_text.ids)[layer], fit_text.ids, g.vocab_size, cfg.nonlexical)
        ctx = ctx @ U  # (N, k)
        hs = np.split(ctx, np.cumsum([len(h) for h in raw])[:-1])
        dirs = teacher_directions(ctx, cat, cfg.n_topics)
        train, test, rois = simulate_fmri(hs, stories, dirs, cfg.voxels_per_roi, cfg.snr, cfg.repeats, rng)
        brain = Brain(train, test, rois, layer, hs, dirs)
        _WORLDS[key] = World(cfg, g, text, heldout, stories, teacher, brain)
        while len(_WORLDS) > _MAX_WORLDS:
            _WORLDS.pop(next(iter(_WORLDS)))
    return _WORLDS[key]


def student(world: World, width: int, seed: int, trained: bool = True, shuffled: bool = False) -> TinyGPT:
    """A student GPT of the given width: trained with the family's fixed token budget (``student_steps``
    batches of ``batch`` windows of the grammar text), or left at its random initialisation. ``shuffled``:
    trained on the same tokens in a random order (word frequencies kept, no structure to learn). Odd widths
    get one attention head (heads must divide the width), even widths two."""
    if width < 1:
        raise ValueError(f"student width must be >= 1; got {width}")
    cfg = world.cfg
    key = (width, seed, trained, shuffled)
    if key not in world.students:
        n_heads = 2 if width % 2 == 0 else 1
        m = TinyGPT(world.grammar.vocab_size, width, cfg.student_layers, n_heads, cfg.ctx, seed=seed * 100 + width)
        if trained:
            ids = world.text.ids
            if shuffled:
                ids = np.random.default_rng(seed + 555).permutation(ids)
            train_lm(m, ids, cfg.student_steps, cfg.batch, seed=seed + width)
        m.eval()
        world.students[key] = m
    return world.students[key]
