"""The interleaving theorem on coherent matrices, and the contiguity metrics on ground truth."""

import numpy as np
import pytest

from icml26.coherence.experiment import coherent_arc_codes
from icml26.coherence.geometry import Geometry
from icml26.coherence.topology import arc_contiguity, bottleneck, interleaving_check


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bound_holds_on_coherent_matrices(seed):
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0, 2 * np.pi, 150)
    A = coherent_arc_codes(theta, 12, rng)
    for geo in (Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)]), Geometry.circular(theta)):
        chk = interleaving_check(A, geo)
        assert chk["covered"] == 1.0
        assert chk["bottleneck_H0"] <= chk["bound"] + 1e-9
        assert chk["bottleneck_H1"] <= chk["bound"] + 1e-9
        assert chk["features_H1_max_life"] > 0.3  # the feature cloud has the circle's H1


def test_bound_needs_coverage():
    """Samples of half the circle covered by no feature: the bound no longer applies (and is violated)."""
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 150)
    A = coherent_arc_codes(theta, 40, rng)  # narrow arcs: small column radius r
    A[theta > np.pi] = 0.0
    A = A[:, A.sum(0) > 0]
    geo = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)])
    chk = interleaving_check(A, geo)
    assert chk["covered"] == 0.0 and chk["bound"] == np.inf
    assert chk["bottleneck_H1"] > 2 * chk["column_radius"]  # the would-be bound fails without coverage


def test_bottleneck_empty_and_identical():
    d = np.array([[0.0, 1.0], [0.2, 0.5]])
    assert bottleneck(d, d) == 0.0
    assert bottleneck(d, np.zeros((0, 2))) == pytest.approx(0.5)


def test_arc_contiguity_ground_truth():
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 2000)
    arcs = coherent_arc_codes(theta, 8, rng)
    truth = arc_contiguity(arcs, theta)
    assert np.allclose(truth["contiguity"], 1.0) and np.all(truth["components"] == 1) and truth["tiling"] == 1.0
    scattered = np.maximum(np.cos(3 * theta[:, None] + rng.uniform(0, 6, 8)), 0)  # three bumps each
    s = arc_contiguity(scattered, theta)
    assert np.all(s["components"] == 3) and np.all(s["contiguity"] < 0.4)
    dead = arc_contiguity(np.c_[arcs, np.zeros(2000)], theta)
    assert not dead["live"][-1] and np.isnan(dead["contiguity"][-1])


def test_h1_bottleneck_ranks_ground_truth_first():
    """The topology measure of ``topology-shared``, on ground truth: codes that tile the true circle evenly
    score the smallest H1 bottleneck distance; the same number of arcs bunched into three groups (a large gap
    between barycentres) score worse, no better than one global feature (no H1 in feature space at all)."""
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 200)
    geo = Geometry.euclidean(np.c_[np.cos(theta), np.sin(theta)])
    tiled = interleaving_check(coherent_arc_codes(theta, 16, rng), geo)["bottleneck_H1"]
    centres = np.repeat([0.0, 2.0, 4.0], 6)[:16] + rng.uniform(-0.1, 0.1, 16)  # 16 arcs in three bunches
    delta = np.abs((theta[:, None] - centres[None] + np.pi) % (2 * np.pi) - np.pi)
    bunched = interleaving_check(np.where(delta < 1.2, np.cos(np.pi / 2 * delta / 1.2), 0.0), geo)["bottleneck_H1"]
    one = interleaving_check(np.ones((200, 1)) + rng.uniform(0, 0.1, (200, 1)), geo)
    assert one["features_H1_max_life"] == 0.0
    assert tiled < bunched <= one["bottleneck_H1"] + 1e-9
    assert tiled < 0.6 * one["bottleneck_H1"]
