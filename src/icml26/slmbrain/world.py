"""Assemble the synthetic world: grammar text, stories, the teacher LM, the fMRI it defines, the student family.

The brain (``simulate_fmri``): the teacher's middle-layer word states ``h_t`` (N, d) are projected on the
teacher's own *agreement* directions (least-squares readout of the number the pending verb must agree with
and of tree depth) -> syntactic latents, and on its *topic* directions -> semantic latents. Each voxel of the
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
    for h, s in zip(states_per_story, stories, strict=True):
        z = np.concatenate([(zscore(h) @ dirs[n]) @ mix[n] for n in dirs], 1)  # (N, V)
        y = convolve_hrf(lanczos_downsample(z, s.word_times, s.tr_times), s.tr_times[1] - s.tr_times[0])
        clean.append(zscore(y))  # (n_TR, V) unit signal variance
    noise_sd = 1.0 / np.sqrt(snr)
    train = [y + noise_sd * rng.standard_normal(y.shape) for y in clean[:-1]]
    test = np.stack([clean[-1] + noise_sd * rng.standard_normal(clean[-1].shape) for _ in range(repeats)])
    return train, test, rois


def tr_features(states: np.ndarray, story: Story) -> np.ndarray:
    """``(L, N, d)`` word states -> ``(L, n_TR, d)`` Lanczos-downsampled TR features."""
    return np.stack([lanczos_downsample(s, story.word_times, story.tr_times) for s in states])


def story_features(model: TinyGPT, world: World) -> list[np.ndarray]:
    """Per story, the model's layerwise TR features ``(L+1, n_TR, d)``."""
    return [tr_features(word_states(model, s.corpus.ids), s) for s in world.stories]


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
        hs = [word_states(teacher, s.corpus.ids)[layer] for s in stories]  # per story (N_s, d_teacher)
        fields = ("ids", "topic", "number", "depth", "pos")
        cat = Corpus(*[np.concatenate([getattr(s.corpus, f) for s in stories]) for f in fields])
        dirs = teacher_directions(np.concatenate(hs), cat, cfg.n_topics)
        train, test, rois = simulate_fmri(hs, stories, dirs, cfg.voxels_per_roi, cfg.snr, cfg.repeats, rng)
        _WORLDS[key] = World(cfg, g, text, heldout, stories, teacher, Brain(train, test, rois, layer))
        while len(_WORLDS) > _MAX_WORLDS:
            _WORLDS.pop(next(iter(_WORLDS)))
    return _WORLDS[key]


def student(world: World, width: int, seed: int, trained: bool = True) -> TinyGPT:
    """A student GPT of the given width: trained with the family's fixed token budget (``student_steps``
    batches of ``batch`` windows of the grammar text), or left at its random initialisation."""
    if width < 1:
        raise ValueError(f"student width must be >= 1; got {width}")
    cfg = world.cfg
    key = (width, seed, trained)
    if key not in world.students:
        n_heads = 2 if width % 2 == 0 else 1
        m = TinyGPT(world.grammar.vocab_size, width, cfg.student_layers, n_heads, cfg.ctx, seed=seed * 100 + width)
        if trained:
            train_lm(m, world.text.ids, cfg.student_steps, cfg.batch, seed=seed + width)
        m.eval()
        world.students[key] = m
    return world.students[key]
