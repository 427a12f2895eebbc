import numpy as np
import pytest

from icml26.zolangevin import BlackBox, Coordinatewise, GaussianSmoothing, VarianceReduced


def quadratic(d, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((d, d))
    h = a @ a.T / d + np.eye(d)  # SPD Hessian
    c = rng.standard_normal(d)

    def f(x):
        return 0.5 * np.einsum("nd,de,ne->n", x, h, x) + x @ c

    return f, (lambda x: x @ h + c), h


def test_gaussian_smoothing_is_unbiased_on_a_quadratic():
    # E[(f(x+mu u)-f(x))/mu u] = grad f exactly for a quadratic (odd Gaussian moments vanish)
    d = 6
    f, grad, _ = quadratic(d)
    x = np.tile(np.random.default_rng(1).standard_normal(d), (20000, 1))
    est = GaussianSmoothing(b=1, mu=1e-3, rng=np.random.default_rng(2))
    g = est(BlackBox(f, d), x)
    se = g.std(0) / np.sqrt(len(g))
    assert np.all(np.abs(g.mean(0) - grad(x[:1])[0]) < 5 * se)
    # variance ~ (d + 1)/b * |grad|^2 in total (the d-dependence the paper removes)
    total_var = g.var(0).sum()
    assert 0.5 * (d + 1) * (grad(x[:1]) ** 2).sum() < total_var < 2.5 * (d + 1) * (grad(x[:1]) ** 2).sum()


def test_coordinatewise_matches_exact_gradient_and_counts_queries():
    d = 5
    f, grad, _ = quadratic(d)
    x = np.random.default_rng(0).standard_normal((3, d))
    bb = BlackBox(f, d)
    est = Coordinatewise(mu=1e-6)
    assert np.allclose(est(bb, x), grad(x), atol=1e-4)
    assert est.queries == d + 1 and bb.n_queries == 3 * (d + 1)
    central = Coordinatewise(mu=1e-4, central=True)
    assert np.allclose(central(BlackBox(f, d), x), grad(x), atol=1e-6)
    assert central.queries == 2 * d


def test_variance_reduced_query_accounting_is_exact():
    d, n, b, q = 7, 4, 3, 5
    f, _, _ = quadratic(d)
    bb = BlackBox(f, d)
    est = VarianceReduced(b=b, q=q, rng=np.random.default_rng(0))
    x = np.zeros((n, d))
    for _ in range(12):
        est(bb, x)
        x = x + 0.01
    # steps 0, 5, 10 refresh (d + 1); the other 9 steps cost 2b + 1 (f(x_{t-1}) is cached)
    expected = 3 * (d + 1) + 9 * (2 * b + 1)
    assert est.queries == expected and bb.n_queries == n * expected


def test_variance_reduced_reuses_directions_exactly_on_linear_functions():
    # for a linear f, Δ_u f(x_t) - Δ_u f(x_{t-1}) = 0 with the SAME u: the estimate never drifts
    d = 20
    c = np.random.default_rng(3).standard_normal(d)
    f = BlackBox(lambda x: x @ c, d)
    est = VarianceReduced(b=2, q=1000, rng=np.random.default_rng(4))
    x = np.random.default_rng(5).standard_normal((8, d))
    g0 = est(f, x)
    for _ in range(30):
        x = x + np.random.default_rng().standard_normal(x.shape)
        g = est(f, x)
    assert np.allclose(g, g0, atol=1e-6) and np.allclose(g0, c, atol=1e-3)


def test_variance_reduced_error_is_much_smaller_than_plain_for_small_moves():
    d, n = 50, 400
    f, grad, _ = quadratic(d)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, d))
    vr, plain = VarianceReduced(b=4, q=10, rng=rng), GaussianSmoothing(b=4, rng=rng)
    bb = BlackBox(f, d)
    for _ in range(5):  # Langevin-sized moves, h = 1e-3
        x = x + np.sqrt(2e-3) * rng.standard_normal(x.shape)
        g_vr, g_plain = vr(bb, x), plain(bb, x)
    err_vr = ((g_vr - grad(x)) ** 2).sum(1).mean()
    err_plain = ((g_plain - grad(x)) ** 2).sum(1).mean()
    assert err_vr < 0.2 * err_plain


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianSmoothing(b=0),
        lambda: GaussianSmoothing(mu=0.0),
        lambda: VarianceReduced(q=0),
        lambda: VarianceReduced(refresh="diagonal"),
        lambda: Coordinatewise(mu=-1),
    ],
)
def test_bad_hyperparameters_are_rejected(make):
    with pytest.raises(ValueError):
        make()
