"""The claims' hyperbolicity measure (hyperbolic MDS with a fitted curvature), validated both ways, and the
contract-v3 arms of the claims on ground truth."""

import numpy as np
import pytest

from icml26.claims import Arm, Scale
from icml26.hyperhopfield.capacity import sample_euclidean_ball, sample_hyperbolic_ball
from icml26.hyperhopfield.geometry import hyperbolic_mds_radius
from icml26.hyperhopfield.lorentz import pairwise_dist
from icml26.hyperhopfield.memory import gaussian_posterior_mean, mhn_update


def _euclid(X):
    return np.linalg.norm(X[:, None] - X[None], axis=-1)


@pytest.mark.parametrize("seed", [0, 7])
def test_fitted_radius_sees_curvature_and_its_absence(seed):
    rng = np.random.default_rng(seed)
    H6 = sample_hyperbolic_ball(30, 2, 6.0, rng)
    H3 = sample_hyperbolic_ball(30, 2, 3.0, rng)
    r6 = hyperbolic_mds_radius(pairwise_dist(H6, H6))["R_hyp"]
    r3 = hyperbolic_mds_radius(pairwise_dist(H3, H3))["R_hyp"]
    flat = hyperbolic_mds_radius(_euclid(sample_euclidean_ball(30, 2, 1.0, rng)))["R_hyp"]
    line = hyperbolic_mds_radius(_euclid(rng.random((30, 1))))["R_hyp"]
    assert 4.0 < r6 < 7.0 and 2.0 < r3 < 4.0  # a hyperbolic disc reads about its radius
    assert r6 > r3 + 1.5
    assert flat < 0.5 and line < 0.5  # a flat disc and a line (= a hyperbolic geodesic) are not hyperbolic


def test_fitted_radius_is_scale_free_and_rejects_bad_input():
    rng = np.random.default_rng(1)
    H = sample_hyperbolic_ball(25, 2, 4.0, rng)
    D = pairwise_dist(H, H)
    assert hyperbolic_mds_radius(3.0 * D)["R_hyp"] == pytest.approx(hyperbolic_mds_radius(D)["R_hyp"], rel=0.05)
    with pytest.raises(ValueError, match="square"):
        hyperbolic_mds_radius(np.ones((3, 4)))
    with pytest.raises(ValueError, match="median"):
        hyperbolic_mds_radius(np.zeros((5, 5)))


def test_measure_checks_pass_on_another_seed():
    from icml26.hyperhopfield.claims import MEASURES

    for m in MEASURES:
        assert m.check(3) == [], m.name


def test_positive_arm_of_mmse_is_the_theorem_without_bias():
    """Unit norms: the textbook update (no bias) is already the posterior mean, the positive control's premise."""
    from icml26.hyperhopfield.claims import mmse_problem
    from icml26.hyperhopfield.config import PRESETS

    cfg = PRESETS["smoke"]
    X, _, xi = mmse_problem(cfg, np.random.default_rng(2), unit_norms=True)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    sigma = cfg.mmse_sigma
    assert np.allclose(mhn_update(X, xi[:200], 1 / sigma**2, bias=False), gaussian_posterior_mean(X, xi[:200], sigma))


def test_decoding_negative_control_is_an_aa_run():
    """The A/A control decodes a second constant code with its own centres and noise: not a bit-for-bit tie."""
    from icml26.hyperhopfield.claims import better_decoding

    r = better_decoding(Scale.SMOKE, 4, Arm.NEGATIVE)
    assert r.measured["log(RMSE const / RMSE exp)"] != 0.0
    assert better_decoding(Scale.SMOKE, 4, Arm.POSITIVE).measured["log(RMSE const / RMSE exp)"] > 0


def test_mechanism_probes_live_at_smoke():
    from icml26.hyperhopfield.claims import MECHANISMS

    for m in MECHANISMS:
        assert m.is_live(m(Scale.SMOKE, 1)[m.name]), m.name
