import matplotlib
import numpy as np
import pytest

from icml26.zolangevin.claims import (
    NLC_TOL,
    _b_star,
    _nlc_errors,
    _off_axis_variance_bias,
    _three_modes,
    fisher_estimate,
)
from icml26.zolangevin.targets import GaussianMixture

matplotlib.use("Agg")


def test_b_star_interpolates_under_the_one_over_b_law():
    # bias(b) = 0.01 + 0.32 / b meets 0.03 at b = 16 exactly; the grid brackets it by 8 and 16
    bs = [1, 2, 4, 8, 16]
    bias = [0.01 + 0.32 / b for b in bs]
    assert _b_star(bs, bias, 0.03) == pytest.approx(16.0)
    bias = [0.01 + 0.2 / b for b in bs[:4]]  # meets 0.03 at b = 10, between the grid's 8 and 16
    assert _b_star([*bs[:4], 16], [*bias, 0.01 + 0.2 / 16], 0.03) == pytest.approx(10.0)
    assert _b_star([1], [0.0], 0.03) == 1.0  # b = 1 passes: the floor
    assert np.isnan(_b_star([1, 2], [0.5, 0.4], 0.03))  # never passes


def test_variance_bias_measure_scores_exact_samples_best():
    target = GaussianMixture.two_modes(20)
    rng = np.random.default_rng(0)
    exact = target.sample(1500, rng)
    hot = exact.copy()
    hot[:, 1:] *= np.sqrt(1.1)  # 10 % too much variance off the mode axis
    assert abs(_off_axis_variance_bias(exact)) < 0.01
    assert _off_axis_variance_bias(hot) == pytest.approx(0.1, abs=0.01)


def test_nlc_errors_and_fisher_score_the_truth_best():
    target = _three_modes(20)
    rng = np.random.default_rng(1)
    exact = target.sample(1500, rng)
    err = _nlc_errors(target, exact)
    assert max(err[k] / t for k, t in NLC_TOL.items()) < 0.8  # the truth meets every tolerance
    assert abs(target.mode_weights.sum() - 1) < 1e-12 and np.allclose(target.mode_weights, [0.2, 0.3, 0.5])
    hot = exact.copy()
    hot[:, 2:] *= np.sqrt(1.3)
    assert _nlc_errors(target, hot)["var err"] == pytest.approx(0.3, abs=0.03)
    # the Fisher estimate is lowest at the truth: heating the law or shifting it raises it
    shifted = exact + np.r_[0.0, 0.0, np.full(18, 0.3)]
    f_exact, f_hot, f_shift = (fisher_estimate(target, x) for x in (exact, hot, shifted))
    assert f_exact < f_hot and f_exact < f_shift
    assert _nlc_errors(target, np.full((5, 20), np.nan))["var err"] == np.inf


def test_three_mode_target_is_not_log_concave():
    target = _three_modes(20)
    # the potential along the segment between two modes rises above both ends: not convex
    a, b = target.means[0], target.means[1]
    line = np.linspace(0, 1, 21)[:, None] * (b - a) + a
    f = target.potential(line)
    assert f[10] > max(f[0], f[-1]) + 0.1


# ---- contract v3: the planted estimators, the probes, the measures


def test_planted_d_free_estimator_heats_the_law_by_h_kappa_over_2b_at_every_d():
    from icml26.zolangevin.claims import DFREE_KAPPA, _DFreeNoise, _run_bias
    from icml26.zolangevin.config import DimensionSweepConfig

    cfg = DimensionSweepConfig(dims=(8, 32), chain_dims=4096, burn_in=50, n_steps=100)
    for d in cfg.dims:
        target = GaussianMixture.two_modes(d)
        x0 = target.sample(cfg.chain_dims // d, np.random.default_rng([3, d]))
        ula = _run_bias(target, cfg, 3, d, x0, grad=target.grad)
        est = _DFreeNoise(target.grad, 1, DFREE_KAPPA, np.random.default_rng([3, d, 4]))
        excess = _run_bias(target, cfg, 3, d, x0, estimator=est) - ula
        assert excess == pytest.approx(cfg.step * DFREE_KAPPA / 2, abs=0.04)  # ~0.12 whatever d


def test_planted_vr_is_charged_vr_queries_and_has_gaussian_smoothings_covariance():
    """The non-log-concave positive control: VR's queries, and the noise of Gaussian smoothing at b_eff
    directions (per-coordinate variance (|g|^2 + g_j^2) / b_eff), unbiased."""
    from icml26.zolangevin.claims import _PlantedVR
    from icml26.zolangevin.estimators import VarianceReduced

    target = _three_modes(20)
    x = target.sample(4000, np.random.default_rng(0))
    planted = _PlantedVR(target.grad, 4, 4, 20, np.random.default_rng(2))
    vr = VarianceReduced(b=4, q=4, rng=np.random.default_rng(1))
    for _ in range(5):
        assert planted.next_cost(20) == vr.next_cost(20)
        planted(target.potential, x[:5])
        vr(target.potential, x[:5])
    assert planted.queries == vr.queries
    g_true = target.grad(x)
    draws = np.stack([planted(target.potential, x) for _ in range(20)])  # (20, n, d)
    err = draws - g_true
    assert abs(err.mean()) < 0.02
    expected = ((g_true**2).sum(1, keepdims=True) + g_true**2) / 20  # (n, d)
    assert (err**2).mean() == pytest.approx(expected.mean(), rel=0.05)


def test_control_variate_probe_sees_the_recursion():
    from icml26.zolangevin.claims import control_variate

    out = control_variate("smoke", 0)
    assert out["control-variate"] > 2 and out["relative MSE VR"] < out["relative MSE plain ZO"]


@pytest.mark.parametrize("seed", [0, 1])
def test_measures_see_the_truth_and_the_null(seed):
    from icml26.zolangevin.claims import MEASURES

    for m in MEASURES:
        assert m.check(seed) == [], m.name
