"""The synthetic world's ground truth: the teacher (the brain's generator) must score best on every measure,
probes read true labels, and the loaders refuse bad files."""

import numpy as np
import pytest
import torch

from icml26.slmbrain.config import Config
from icml26.slmbrain.data import load_fmri, load_word_timings
from icml26.slmbrain.encoding import encode, roi_scores
from icml26.slmbrain.lm import word_states
from icml26.slmbrain.probe import labels, probe_accuracy
from icml26.slmbrain.world import build_world, story_features, student

torch.set_num_threads(1)

CFG = Config(
    train_words=4000,
    n_stories=5,
    story_words=400,
    voxels_per_roi=20,
    snr=2.0,
    ctx=16,
    teacher_width=16,
    teacher_layers=1,
    teacher_steps=60,
    student_widths=(4,),
    student_layers=1,
    student_steps=10,
)


@pytest.fixture(scope="module")
def world():
    return build_world(CFG, seed=3)


def _scores(feats, w, shuffle=False):
    Y = w.brain.train
    if shuffle:
        rng = np.random.default_rng(0)
        Y = [y[rng.permutation(len(y))] for y in Y]
    layer = w.brain.teacher_layer
    res = encode([f[layer] for f in feats[:-1]], Y, feats[-1][layer], w.brain.test)
    return roi_scores(res, w.brain.rois)


def test_teacher_layer_is_the_best_predictor_of_its_brain(world):
    w = world
    truth = _scores(story_features(w.teacher, w), w)  # the generator's own states: the upper bound
    untrained = _scores(story_features(student(w, 16, seed=0, trained=False), w), w)
    misaligned = _scores(story_features(w.teacher, w), w, shuffle=True)
    for roi in w.brain.rois:
        assert truth[roi] > 0.8, truth
        assert truth[roi] > untrained[roi] + 0.1 and truth[roi] > misaligned[roi] + 0.5
    assert w.brain.test.shape[0] == CFG.repeats and len(w.brain.train) == CFG.n_stories - 1


def test_fmri_noise_matches_the_configured_snr(world):
    rep = world.brain.test  # (R, n_TR, V): the same clean signal (unit variance) + independent noise
    noise = (rep[0] - rep[1]) / np.sqrt(2)
    assert np.var(noise) == pytest.approx(1 / CFG.snr, rel=0.1)


def test_probes_read_true_labels(world):
    stories = world.stories
    for prop in ("agreement", "topic"):
        y = [labels(s.corpus, prop) for s in stories]
        onehot = [np.eye(4)[np.maximum(v, 0)] + 0.01 * np.random.default_rng(0).standard_normal((len(v), 4)) for v in y]
        acc = probe_accuracy(np.concatenate(onehot[:-1]), np.concatenate(y[:-1]), onehot[-1], y[-1])
        assert acc == 1.0  # the true label as the feature: a perfect probe
    states = [word_states(world.teacher, s.corpus.ids)[1] for s in stories]
    y = [labels(s.corpus, "pos") for s in stories]
    chance = np.bincount(y[-1]).max() / len(y[-1])
    acc = probe_accuracy(np.concatenate(states[:-1]), np.concatenate(y[:-1]), states[-1], y[-1])
    assert acc > chance + 0.3  # the teacher's states encode the part of speech (majority class: chance)


def test_loaders_refuse_bad_files(tmp_path):
    bad = tmp_path / "w.csv"
    bad.write_text("word,onset\nthe,2.0\ndog,1.0\n")
    with pytest.raises(ValueError, match="out of order"):
        load_word_timings(bad)
    Y = np.random.default_rng(0).standard_normal((30, 4))
    Y[:, 2] = np.nan
    np.save(tmp_path / "y.npy", Y)
    out, keep = load_fmri(tmp_path / "y.npy", n_tr=30)
    assert out.shape == (1, 30, 3) and keep.tolist() == [True, True, False, True]
    with pytest.raises(ValueError, match="TRs"):
        load_fmri(tmp_path / "y.npy", n_tr=29)
    (tmp_path / "g.npy").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a readable"):
        load_fmri(tmp_path / "g.npy")
