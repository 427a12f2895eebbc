import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import expit

from icml26.gpm.data import random_bank
from icml26.gpm.irt import ItemBank, estimate_ability, log_likelihood, score_gradient


def test_probability_matches_closed_form():
    bank = ItemBank([1.5, 0.7], [0.2, -1.0], [0.2, 0.1], "3pl")
    p = bank.prob([0.5])
    assert p.shape == (1, 2)
    expected = [0.2 + 0.8 * expit(1.5 * 0.3), 0.1 + 0.9 * expit(0.7 * 1.5)]
    np.testing.assert_allclose(p[0], expected, rtol=1e-12)


@pytest.mark.parametrize("model", ["2pl", "3pl"])
def test_information_is_variance_of_score(model):
    rng = np.random.default_rng(1)
    bank = random_bank(5, rng, model)
    theta = np.array([0.3])
    p = bank.prob(theta)[0]
    g1, _ = score_gradient(bank, theta, np.ones((1, 5)))
    g0, _ = score_gradient(bank, theta, np.zeros((1, 5)))
    variance = p * g1[0] ** 2 + (1 - p) * g0[0] ** 2  # E[score] = 0, so Var = E[score^2]
    np.testing.assert_allclose(p * g1[0] + (1 - p) * g0[0], 0, atol=1e-12)
    np.testing.assert_allclose(bank.information(theta)[0], variance, rtol=1e-9)


def test_score_is_derivative_of_log_likelihood():
    rng = np.random.default_rng(2)
    bank = random_bank(8, rng, "3pl")
    x = bank.sample(np.array([0.1]), rng)
    h = 1e-6
    num = (log_likelihood(bank, [0.1 + h], x) - log_likelihood(bank, [0.1 - h], x)) / (2 * h)
    g, _ = score_gradient(bank, [0.1], x)
    np.testing.assert_allclose(g.sum(), num[0], rtol=1e-6)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_point_estimates_match_scalar_optimiser(method):
    rng = np.random.default_rng(3)
    bank = random_bank(25, rng, "3pl")
    x = bank.sample(rng.normal(size=6), rng)
    x[rng.random(x.shape) < 0.3] = np.nan
    x[:, 0], x[:, 1] = 1.0, 0.0  # a finite MLE exists for every row
    theta, se = estimate_ability(bank, x, method)
    for i in range(6):

        def nlp(t, i=i):
            return -log_likelihood(bank, [t], x[i : i + 1])[0] + (0.5 * t * t if method == "map" else 0.0)

        ref = optimize.minimize_scalar(nlp, bounds=(-6, 6), method="bounded", options={"xatol": 1e-10}).x
        assert theta[i] == pytest.approx(ref, abs=1e-5)
    assert np.all(se > 0)


def test_eap_matches_numerical_integration():
    rng = np.random.default_rng(4)
    bank = random_bank(10, rng, "2pl")
    x = bank.sample(np.array([0.7]), rng)
    theta, sd = estimate_ability(bank, x, "eap", n_quad=81)

    def post(t, k):
        return t**k * np.exp(log_likelihood(bank, [t], x)[0] - 0.5 * t * t)

    z = integrate.quad(post, -10, 10, args=(0,))[0]
    mean = integrate.quad(post, -10, 10, args=(1,))[0] / z
    second = integrate.quad(post, -10, 10, args=(2,))[0] / z
    assert theta[0] == pytest.approx(mean, abs=1e-6)
    assert sd[0] == pytest.approx(np.sqrt(second - mean**2), abs=1e-6)


def test_mirt_map_matches_optimiser_and_eap_is_close():
    rng = np.random.default_rng(5)
    bank = random_bank(40, rng, "mirt2pl", n_dims=2)
    x = bank.sample(rng.normal(size=(3, 2)), rng)
    theta, se = estimate_ability(bank, x, "map")
    assert theta.shape == (3, 2) and se.shape == (3, 2)
    for i in range(3):
        res = optimize.minimize(
            lambda t, i=i: -log_likelihood(bank, t[None], x[i : i + 1])[0] + 0.5 * t @ t, np.zeros(2)
        )
        np.testing.assert_allclose(theta[i], res.x, atol=1e-4)
    eap, _ = estimate_ability(bank, x, "eap", n_quad=31)
    np.testing.assert_allclose(eap, theta, atol=0.2)


def test_mirt_standard_errors_invert_the_information_matrix():
    # Correlated loadings: the marginal SE is sqrt(diag(I^-1)), larger than 1 / sqrt(I_dd).
    rng = np.random.default_rng(7)
    a = np.tile([[1.5, 1.0], [1.2, 1.1], [1.0, 1.3], [0.9, 0.8]], (5, 1))
    bank = ItemBank(a, rng.normal(size=20), None, "mirt2pl")
    x = bank.sample(rng.normal(size=(3, 2)), rng)
    for method, precision in (("map", 1.0), ("mle", 0.0)):
        x_mixed = x.copy()
        x_mixed[:, :2] = [1.0, 0.0]  # finite MLE
        theta, se = estimate_ability(bank, x_mixed, method)
        p = bank.prob(theta)
        for i in range(3):
            info = (a.T * (p[i] * (1 - p[i]))) @ a + precision * np.eye(2)  # slow obvious reference
            np.testing.assert_allclose(se[i], np.sqrt(np.diag(np.linalg.inv(info))), rtol=1e-6)


def test_estimation_recovers_ability_on_many_examinees():
    rng = np.random.default_rng(6)
    bank = random_bank(200, rng)
    theta = rng.normal(size=3000)
    est, se = estimate_ability(bank, bank.sample(theta, rng), "map")
    rmse = np.sqrt(np.mean((est - theta) ** 2))
    assert rmse < 1.3 * np.mean(se)  # the standard errors are honest
    assert rmse < 0.3


def test_catsim_agrees_on_information_and_probability():
    catsim_irt = pytest.importorskip("catsim.irt")
    rng = np.random.default_rng(7)
    bank = random_bank(30, rng, "3pl")
    info = [catsim_irt.inf(0.4, bank.a[j, 0], bank.b[j], bank.c[j], 1.0) for j in range(30)]
    np.testing.assert_allclose(bank.information([0.4])[0], info, rtol=1e-6)
    np.testing.assert_allclose(
        bank.prob([0.4])[0], catsim_irt.icc(0.4, bank.a[:, 0], bank.b, bank.c, np.ones(30)), rtol=1e-9
    )


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="discriminations"):
        ItemBank([1.0, -0.5], [0.0, 0.0])
    with pytest.raises(ValueError, match="discriminations"):
        ItemBank([1.0, np.nan], [0.0, 0.0])
    with pytest.raises(ValueError, match="guessing"):
        ItemBank([1.0], [0.0], [0.2], "2pl")
    with pytest.raises(ValueError, match="model"):
        ItemBank([1.0], [0.0], model="4pl")
    bank = ItemBank([1.0, 1.2], [0.0, 0.5])
    with pytest.raises(ValueError, match="0, 1 or missing"):
        estimate_ability(bank, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="no responses"):
        estimate_ability(bank, [[np.nan, np.nan]], "mle")
    with pytest.raises(ValueError, match="items"):
        estimate_ability(bank, [[1.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="method"):
        estimate_ability(bank, [[1.0, 0.0]], "bayes")
    # no responses: MAP and EAP return the prior
    theta, se = estimate_ability(bank, [[np.nan, np.nan]], "eap")
    assert theta[0] == pytest.approx(0.0, abs=1e-9) and se[0] == pytest.approx(1.0, abs=1e-6)
