"""The synthetic world's ground truth: the teacher (the brain's generator) must score best, an untrained student
far below a trained one, a lexical (one-hot word identity) model below a trained student and far below the
teacher; probes read true labels; the loaders refuse bad files."""

import logging

import numpy as np
import pytest
import torch

from icml26.slmbrain.claims import lexical_predictivity, predictivity, predictivity_of
from icml26.slmbrain.config import Config
from icml26.slmbrain.data import load_fmri, load_word_timings
from icml26.slmbrain.encoding import encode, encode_layers, roi_mean, roi_scores
from icml26.slmbrain.lm import lm_loss, word_states
from icml26.slmbrain.probe import labels, probe_accuracy
from icml26.slmbrain.world import (
    Brain,
    build_world,
    contextual,
    label_brain,
    lexical_design,
    nonlexical_basis,
    story_features,
    student,
)

torch.set_num_threads(1)

CFG = Config(
    train_words=8000,
    n_stories=6,
    story_words=500,
    voxels_per_roi=20,
    snr=2.0,
    ctx=16,
    teacher_width=32,
    teacher_layers=2,
    teacher_steps=250,
    student_widths=(16,),
    student_layers=2,
    student_steps=250,
)


@pytest.fixture(scope="module")
def world():
    return build_world(CFG, seed=3)


def _mean(s):
    return float(np.mean(list(s.values())))


def test_teacher_best_lexical_and_untrained_far_below_trained(world):
    w = world
    truth, _layer = predictivity(w.teacher, w)  # the generator's own states: the upper bound
    trained = predictivity(student(w, 16, seed=0), w)[0]
    untrained = predictivity(student(w, 16, seed=0, trained=False), w)[0]
    lexical = lexical_predictivity(w)
    for roi in w.brain.rois:
        assert truth[roi] > 0.6 and truth[roi] > trained[roi], (truth, trained)
    assert _mean(trained) > _mean(untrained) + 0.15, (trained, untrained)
    # the bag of words in a TR still predicts part of the context (topic persists over sentences): the lexical
    # baseline sits below a trained student and far below the teacher, not at 0 (README, Limits). The
    # teacher-lexical gap is ~0.2 and moves by ~0.01 between CPUs (training is not bit-reproducible across them)
    assert _mean(trained) > _mean(lexical) + 0.05 and _mean(truth) > _mean(lexical) + 0.15, (trained, lexical)
    assert w.brain.test.shape[0] == CFG.repeats and len(w.brain.train) == CFG.n_stories - 1


def test_misaligned_training_fmri_predicts_nothing(world):
    w = world
    f = story_features(w.teacher, w)
    rng = np.random.default_rng(0)
    shuffled = Brain([y[rng.permutation(len(y))] for y in w.brain.train], w.brain.test, w.brain.rois, 0)
    assert _mean(predictivity_of(f, shuffled)[0]) < 0.2


def test_brain_is_contextual_by_construction():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 5, 400)
    h = rng.standard_normal((400, 3)) + 10 * np.eye(5)[ids][:, :3]
    r = contextual(h, ids)
    for t in range(5):  # the per-type mean of the residual is exactly 0: word identity predicts nothing
        assert np.allclose(r[ids == t].mean(0), 0)
    D = lexical_design(np.array([0, 1, 0, 2]), 3, windows=((0, 0), (1, 2), (-1, -1)))
    assert D[2].tolist() == [1, 0, 0, 1, 1, 0, 0, 0, 1]  # word 0 now; words 1, 0 before; word 2 next
    # a direction carried by the bag of preceding words is dropped, a non-lexical one kept
    ids = rng.integers(0, 6, 6000)
    lex = lexical_design(ids, 6, windows=((1, 3),)) @ rng.standard_normal(6)  # a function of the context words
    free = rng.standard_normal(6000)  # no word predicts it
    U = nonlexical_basis(np.stack([lex + 0.1 * free, free], 1), ids, 6, keep=0.5)
    assert abs(U[0, 0]) / np.linalg.norm(U[:, 0]) < 0.1


def test_label_brain_and_best_layer_chosen_without_the_test_story(world, caplog):
    w = world
    lb = label_brain(w, 0)
    assert lb.test.shape == w.brain.test.shape and set(lb.rois) == set(w.brain.rois)
    f = story_features(student(w, 16, seed=0), w)
    B = w.brain
    noise = np.random.default_rng(1).standard_normal(B.test.shape)
    best, res = encode_layers(f[:-1], B.train, f[-1], B.test, layers=[1, 2])
    best_noise, _ = encode_layers(f[:-1], B.train, f[-1], noise, layers=[1, 2])
    assert best == best_noise == max(res, key=lambda i: res[i].cv_score)  # the test story never chooses
    with caplog.at_level(logging.WARNING, logger="icml26.slmbrain.encoding"):
        assert np.isnan(roi_mean(np.full(4, np.nan), "ROI 'x'")) and "no voxel" in caplog.text
    assert roi_mean(np.array([np.nan, 1.0, 3.0])) == 2.0


def test_untrained_lm_loss_is_log_vocab_and_teacher_beats_students(world):
    w = world
    V = w.grammar.vocab_size
    assert lm_loss(student(w, 16, seed=0, trained=False), w.heldout.ids) == pytest.approx(np.log(V), rel=0.01)
    assert lm_loss(w.teacher, w.heldout.ids) < lm_loss(student(w, 16, seed=0), w.heldout.ids) < np.log(V) - 1


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


def test_encode_scores_of_unrelated_brain_are_low(world):
    w = world
    f = story_features(w.teacher, w)
    rng = np.random.default_rng(2)
    Y = [rng.standard_normal(y.shape) for y in w.brain.train]
    res = encode([x[1] for x in f[:-1]], Y, f[-1][1], rng.standard_normal(w.brain.test.shape))
    assert abs(np.nanmean(res.r)) < 0.1 and np.all(np.isfinite(list(roi_scores(res, w.brain.rois).values())))


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
    with pytest.raises(ValueError, match="lacks NumPy"):
        load_fmri(tmp_path / "g.npy")


def test_planted_generator_features_and_the_null_measure(world):
    """The positive control of alignment-saturates and the measure check: the brain's own latents predict both
    ROIs best; with the semantic readout projected out the semantic ROI falls and the syntactic one stays;
    Gaussian features of the same shape predict nothing."""
    from icml26.slmbrain.claims import _generator_features

    full = predictivity_of(_generator_features(world), world.brain)[0]
    blind = predictivity_of(_generator_features(world, drop="semantic"), world.brain)[0]
    trained = predictivity(student(world, 16, seed=0), world)[0]
    for roi in world.brain.rois:
        assert full[roi] > 0.8 and full[roi] > trained[roi], (full, trained)
    assert blind["syntactic"] > full["syntactic"] - 0.05 and blind["semantic"] < full["semantic"] - 0.3, blind
    rng = np.random.default_rng(5)
    noise = [rng.standard_normal(f.shape) for f in _generator_features(world)]
    assert abs(_mean(predictivity_of(noise, world.brain)[0])) < 0.15


def test_the_aa_label_brain_has_its_own_randomness(world):
    """dissociation's negative control: a second label brain with its own voxel maps and noise, never the first."""
    from icml26.slmbrain.claims import AA_STREAM

    a, b = label_brain(world, 0), label_brain(world, AA_STREAM)
    assert a.test.shape == b.test.shape and not np.array_equal(a.test, b.test)
    assert all(not np.array_equal(x, y) for x, y in zip(a.train, b.train, strict=True))
