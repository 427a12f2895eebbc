"""Contract v3 pieces of the degmetrics claims: the weightings of the controls, the truth of wmse-loss-v3,
its planted positive arm, the A/A training control, and the measures validated both ways."""

import numpy as np
import pytest

from icml26.degmetrics import claims
from icml26.degmetrics.config import LossConfig, SimConfig
from icml26.degmetrics.data import CONTROL, PERTURBATION_KEY, simulate
from icml26.degmetrics.evaluate import DEGReference
from icml26.degmetrics.metrics import diversity_ratio, score_pseudobulk
from icml26.degmetrics.train import latent_screen, latent_truth, tuned_predictions

TINY = LossConfig(n_train=20, n_test=8, epochs=40,
                  sim=SimConfig(n_genes=120, n_control=60, cells_per_perturbation=20, p_effect=0.05))  # fmt: skip


@pytest.fixture(scope="module")
def screen():
    adata = simulate(SimConfig(n_genes=300, n_control=200, n_perturbations=12, cells_per_perturbation=40), seed=2)
    ref = DEGReference.from_anndata(adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    return ref, adata.uns["truth"]


def test_oracle_weights_sit_on_the_true_degs(screen):
    ref, truth = screen
    w = claims.oracle_weights(truth, list(ref.perturbations))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    order = {p: i for i, p in enumerate(truth["perturbations"])}
    affected = np.asarray(truth["log_fold_change"])[[order[p] for p in ref.perturbations]] != 0
    rows = affected.any(axis=1)
    np.testing.assert_allclose((w * affected).sum(axis=1)[rows], 1.0)


def test_permuted_weights_keep_each_rows_weights_but_not_their_genes(screen):
    ref, truth = screen
    shuffled = claims.reweighted(ref, "permuted", truth, np.random.default_rng(0)).weights
    np.testing.assert_allclose(np.sort(shuffled, axis=1), np.sort(ref.weights, axis=1))
    assert not np.allclose(shuffled, ref.weights)
    assert claims.reweighted(ref, "deg", truth, np.random.default_rng(0)) is ref
    with pytest.raises(ValueError, match="weighting"):
        claims.reweighted(ref, "uniform", truth, np.random.default_rng(0))


def test_planted_weights_blend_the_estimated_and_oracle_weights(screen):
    """The positive controls' plant: w = (1 - a) w_est + a w_oracle, rows still summing to 1, strictly between."""
    ref, truth = screen
    planted = claims.reweighted(ref, "planted", truth, np.random.default_rng(0)).weights
    oracle = claims.oracle_weights(truth, list(ref.perturbations))
    a = claims.ORACLE_SHARE
    assert 0 < a < 1
    np.testing.assert_allclose(planted, (1 - a) * ref.weights + a * oracle)
    np.testing.assert_allclose(planted.sum(axis=1), 1.0)
    assert not np.allclose(planted, oracle) and not np.allclose(planted, ref.weights)


def test_latent_truth_is_the_test_halfs_expected_profile():
    """The truth has the test perturbations' rows in order and is closer to their observation than the mean."""
    s = latent_screen(TINY, seed=1)
    truth = latent_truth(TINY, seed=1, cells=400)
    assert truth.real.shape == s.test.real.shape
    mean = np.tile(s.y_train.mean(axis=0), (len(s.test.real), 1))
    err_truth = np.mean((truth.real - s.test.real) ** 2, axis=1)
    err_mean = np.mean((mean - s.test.real) ** 2, axis=1)
    assert np.mean(err_truth < err_mean) >= 0.75


def test_planted_arm_is_better_on_both_judged_quantities():
    s = latent_screen(TINY, seed=3)
    truth = latent_truth(TINY, seed=3, cells=400)
    rng = np.random.default_rng(3)
    pred = (
        s.test.real.mean(axis=0)
        + 0.5 * (s.test.real - s.test.real.mean(axis=0))
        + 0.01 * rng.normal(size=s.test.real.shape)
    )
    planted = claims._planted(pred, truth)

    def r2w(p):
        return np.nanmean(score_pseudobulk(p, truth.real, truth.weights, truth.mu_ctrl, truth.mu_all)["r2w_delta"])

    assert r2w(planted) > r2w(pred)
    d_pred, d_planted = (diversity_ratio(p, truth.real, truth.weights) for p in (pred, planted))
    assert abs(np.log(d_planted)) == pytest.approx((1 - claims.PLANTED_SHARE) * abs(np.log(d_pred)))


def test_aa_training_control_trains_on_its_own_seed():
    """wmse-loss-v3's negative control: both arms plain MSE, the second on another seed, so they differ."""
    _, same = tuned_predictions(TINY, 0, (3e-3,), ("linear",), deg_weights=False)
    np.testing.assert_array_equal(same["linear/mse"][0], same["linear/wmse"][0])
    _, aa = tuned_predictions(TINY, 0, (3e-3,), ("linear",), deg_weights=False, wmse_seed=7)
    np.testing.assert_array_equal(aa["linear/mse"][0], same["linear/mse"][0])
    assert not np.allclose(aa["linear/wmse"][0], aa["linear/mse"][0])


@pytest.mark.parametrize("seed", [1])
def test_measures_see_the_effect_and_its_absence(seed):
    for check in claims.MEASURES:
        assert check.check(seed) == [], check.name
