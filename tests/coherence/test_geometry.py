"""Coherence measured: ground truth first, geometries, validation, coverage failures."""

import numpy as np
import pytest

from icml26.coherence.experiment import coherent_arc_codes
from icml26.coherence.geometry import Geometry, check_codes, check_distances, coherence_report, is_coherent


@pytest.fixture
def circle():
    rng = np.random.default_rng(1)
    theta = rng.uniform(0, 2 * np.pi, 300)
    return theta, coherent_arc_codes(theta, 12, rng)


def test_ground_truth_arcs_score_best(circle):
    theta, A = circle
    geo = Geometry.circular(theta)
    truth = coherence_report(A, geo)
    rng = np.random.default_rng(0)
    shuffled = coherence_report(A[rng.permutation(len(A))], geo)  # same activations, scattered samples
    assert truth.score > 0.9 > shuffled.score
    assert truth.sample_coverage == 1.0 and truth.feature_coverage == 1.0
    # feature positions are the arc centres (circular mean of symmetric bumps)
    peaks = theta[A.argmax(0)]
    gap = np.abs((truth.feature_positions[:, 0] - peaks + np.pi) % (2 * np.pi) - np.pi)
    assert gap.max() < 0.2


def test_is_coherent_radius_and_coverage(circle):
    theta, A = circle
    geo = Geometry.circular(theta)
    r = coherence_report(A, geo).column_radius.max()
    assert is_coherent(A, geo, r_col=r + 1e-9)
    assert not is_coherent(A, geo, r_col=0.5 * r)
    A2 = A.copy()
    A2[:, 0] = 0.0  # a dead feature: coverage fails, no crash
    rep = coherence_report(A2, geo)
    assert rep.dead_features[0] and rep.summary()["dead_features"] == 1
    assert not is_coherent(A2, geo, r_col=10.0)


def test_circular_mean_does_not_collapse():
    theta = np.array([0.1, 2 * np.pi - 0.1])  # straddles 0
    A = np.ones((2, 1))
    f = Geometry.circular(theta).feature_positions(A)
    assert min(f[0, 0], 2 * np.pi - f[0, 0]) < 1e-9
    assert coherence_report(A, Geometry.circular(theta)).column_variance[0] == pytest.approx(0.01)


def test_precomputed_matches_euclidean(circle):
    theta, A = circle
    x = np.c_[np.cos(theta), np.sin(theta)]
    D = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    a = coherence_report(A, Geometry.euclidean(x))
    b = coherence_report(A, Geometry.precomputed(D, dim=2))  # MDS of Euclidean distances is an isometry
    np.testing.assert_allclose(a.column_variance, b.column_variance, rtol=1e-6, atol=1e-9)
    assert a.score == pytest.approx(b.score)


def test_geodesic_recovers_circle():
    from icml26.coherence.data import circle_data

    ds = circle_data(300, seed=0)
    geo = Geometry.geodesic(ds.X, 10, 3)
    rng = np.random.default_rng(0)
    A = coherent_arc_codes(ds.theta[:, 0], 10, rng)
    assert coherence_report(A, geo).score > coherence_report(A[rng.permutation(300)], geo).score + 0.3


def test_bad_codes_and_distances():
    with pytest.raises(ValueError, match="negative"):
        check_codes(np.array([[1.0, -0.5], [0.2, 0.1]]))
    assert check_codes(np.array([[1.0, -0.5], [0.2, 0.1]]), rectify=True).min() == 0.0
    with pytest.raises(ValueError, match="NaN"):
        check_codes(np.array([[np.nan, 1.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        check_codes(np.ones(4))
    with pytest.raises(ValueError, match="symmetric"):
        check_distances(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="negative"):
        check_distances(np.array([[0.0, -1.0], [-1.0, 0.0]]))
    with pytest.raises(ValueError, match="diagonal"):
        check_distances(np.array([[1.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="samples"):
        coherence_report(np.ones((3, 2)), Geometry.euclidean(np.zeros((4, 1))))
