import numpy as np
import pytest
from scipy.stats import multivariate_normal

from icml26.zolangevin import Banana, BlackBox, CallableTarget, DoubleWell, GaussianMixture, make_target


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for j in range(x.shape[1]):
        e = np.zeros(x.shape[1])
        e[j] = eps
        g[:, j] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize(
    "target",
    [
        GaussianMixture(np.array([[0.0, 1, 2], [3, -1, 0]]), np.array([0.3, 0.7]), np.array([1.0, 0.5])),
        Banana(4, curvature=0.5),
        DoubleWell(3, barrier=1.5, tilt=0.2),
    ],
)
def test_gradient_matches_finite_differences(target):
    x = np.random.default_rng(0).standard_normal((5, target.dim))
    assert np.allclose(target.grad(x), fd_grad(target.potential, x), atol=1e-5)


def test_gmm_potential_is_minus_log_density():
    t = GaussianMixture(np.array([[0.0, 1.0], [2.0, -1.0]]), np.array([0.4, 0.6]), np.array([1.0, 0.7]))
    x = np.random.default_rng(1).standard_normal((6, 2))
    dens = 0.4 * multivariate_normal([0, 1], np.eye(2)).pdf(x) + 0.6 * multivariate_normal(
        [2, -1], 0.49 * np.eye(2)
    ).pdf(x)
    assert np.allclose(t.potential(x), -np.log(dens))


@pytest.mark.parametrize(
    "target", [GaussianMixture.two_modes(3, weights=(0.2, 0.8)), Banana(3), DoubleWell(2, tilt=0.4)]
)
def test_exact_sampler_matches_stated_moments_and_mode_weights(target):
    x = target.sample(200_000, np.random.default_rng(2))
    assert np.allclose(x.mean(0), target.mean, atol=0.05 * np.sqrt(target.var).max())
    assert np.allclose(x.var(0), target.var, rtol=0.05)
    assert np.allclose(target.mode_probabilities(x).mean(0), target.mode_weights, atol=0.01)


def test_double_well_tilt_favours_the_left_mode():
    w = DoubleWell(1, tilt=0.5).mode_weights
    assert w[0] > 0.6 and np.isclose(w.sum(), 1)


def test_make_target_parses_and_rejects():
    t = make_target("gmm:d=50")
    assert isinstance(t, GaussianMixture) and t.dim == 50
    assert make_target("double-well:d=3,tilt=0.2").tilt == 0.2
    for bad in ["gmm:d=5,foo=1", "nope:d=2", "gmm:d", "gmm:w=2", "banana:d=x"]:
        with pytest.raises(ValueError):
            make_target(bad)


def test_black_box_rejects_nan_wrong_shape_and_non_batched_functions():
    with pytest.raises(ValueError, match=r"non-finite.*query #2"):
        BlackBox(lambda x: np.where(np.arange(len(x)) == 2, np.nan, 0.0), 2)(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="shape"):
        BlackBox(lambda x: np.zeros((len(x), 2)), 2)(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="accept a batch"):
        BlackBox(lambda x: float(np.dot(x, x)), 2)(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="queries must have shape"):
        BlackBox(lambda x: x.sum(1), 2)(np.zeros((3, 5)))
    bb = BlackBox(lambda x: x.sum(1), 2)
    bb(np.zeros((7, 2)))
    assert bb.n_queries == 7


def test_user_callable_target():
    t = CallableTarget(lambda x: 0.5 * (x**2).sum(1), 3)
    assert t.potential(np.ones((2, 3))).shape == (2,)
    with pytest.raises(ValueError, match="no gradient"):
        t.grad(np.ones((2, 3)))
