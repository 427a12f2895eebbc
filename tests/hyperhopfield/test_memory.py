"""Lorentz ops, MHN = posterior mean, Karcher-flow memory: closed forms, peers and ground truth."""

import warnings

import numpy as np
import pytest

from icml26.hyperhopfield import lorentz as L
from icml26.hyperhopfield.capacity import estimate_capacity, make_space, sample_hyperbolic_ball
from icml26.hyperhopfield.memory import (
    ClassicalHopfield,
    HyperbolicMemory,
    gaussian_posterior_mean,
    karcher_mean,
    mhn_update,
    poisson_posterior_mean,
)


def test_exp_log_roundtrip_and_distance():
    rng = np.random.default_rng(1)
    x = sample_hyperbolic_ball(50, 3, 4.0, rng)
    y = sample_hyperbolic_ball(50, 3, 4.0, rng)
    v = L.logmap(x, y)
    assert np.allclose(np.sqrt(L.lorentz_inner(v, v)), L.dist(x, y), rtol=1e-8)
    assert np.allclose(L.expmap(x, v), y, atol=1e-7)
    assert np.allclose(L.lorentz_inner(x, x), -1, atol=1e-9)
    assert np.allclose(L.radius(x), np.arccosh(x[:, 0]))
    # weighted_log_sum matches the explicit (Q, P, D) sum
    W = rng.dirichlet(np.ones(50), size=7)
    M = x[:7]
    explicit = np.einsum("qp,qpd->qd", W, L.logmap(M[:, None, :], y[None, :, :]))
    assert np.allclose(L.weighted_log_sum(M, y, W), explicit, atol=1e-9)


def test_lorentz_matches_geoopt():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        geoopt = pytest.importorskip("geoopt")
    rng = np.random.default_rng(2)
    x, y = sample_hyperbolic_ball(20, 4, 3.0, rng), sample_hyperbolic_ball(20, 4, 3.0, rng)
    man = geoopt.Lorentz()
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    assert np.allclose(man.dist(tx, ty).numpy(), L.dist(x, y), rtol=1e-7)
    assert np.allclose(man.logmap(tx, ty).numpy(), L.logmap(x, y), atol=1e-7)


def test_bad_points_and_radius():
    x = L.from_polar(np.array([1.0]), np.array([[1.0, 0.0]]))
    off = x + np.array([[0.0, 0.1, 0.0]])
    with pytest.raises(ValueError, match="off the hyperboloid"):
        L.check_points(off)
    fixed = L.check_points(off, fix=True)
    assert np.allclose(L.lorentz_inner(fixed, fixed), -1)
    with pytest.raises(ValueError, match="float64 safe radius 12"):
        L.check_radius(20.0)
    with pytest.raises(ValueError, match="float64 safe radius"):
        make_space("hyperbolic", 2, 30.0)
    with pytest.raises(ValueError, match="time coordinate"):
        L.check_points(-x)
    with pytest.raises(ValueError, match="NaN"):
        L.check_points(np.full((1, 3), np.nan))
    for beta in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="beta"):
            mhn_update(np.eye(3), np.ones((1, 3)), beta)


def test_mhn_is_posterior_mean_unequal_norms():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 8)) * rng.uniform(0.3, 2.0, (30, 1))
    sigma = 0.7
    xi = X[rng.integers(0, 30, 100)] + sigma * rng.standard_normal((100, 8))
    post = gaussian_posterior_mean(X, xi, sigma)
    assert np.max(np.abs(mhn_update(X, xi, 1 / sigma**2) - post)) < 1e-10
    assert np.max(np.abs(mhn_update(X, xi, 1 / sigma**2, bias=False) - post)) > 1e-3  # bias needed
    assert np.max(np.abs(mhn_update(X, xi, 2 / sigma**2) - post)) > 1e-3


def test_poisson_posterior_mean_brute_force():
    rng = np.random.default_rng(4)
    F = rng.uniform(0.1, 3.0, (12, 5))
    counts = rng.poisson(F[[2, 7]]).astype(float)
    vals = rng.standard_normal((12, 2))
    from scipy.stats import poisson

    logp = np.array([[poisson.logpmf(c, f).sum() for f in F] for c in counts])  # (Q, P) with log k! terms
    w = np.exp(logp - logp.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    assert np.allclose(poisson_posterior_mean(F, counts, vals), w @ vals, atol=1e-12)
    with pytest.raises(ValueError, match="non-negative"):
        poisson_posterior_mean(-F, counts, vals)


def test_karcher_mean_is_frechet_mean_and_energy_descends():
    rng = np.random.default_rng(5)
    X = sample_hyperbolic_ball(6, 2, 2.0, rng)
    w = rng.dirichlet(np.ones(6))[None]
    m, _ = karcher_mean(X, w, X[:1], iters=200, tol=1e-13)
    # the Fréchet objective is minimal at m: every nearby point is worse
    f = lambda p: np.sum(w[0] * L.dist(p, X) ** 2)  # noqa: E731
    for _ in range(20):
        q = L.expmap(m, L.random_tangent(m, 1e-3, rng))
        assert f(q[0]) > f(m[0])
    mem = HyperbolicMemory(sample_hyperbolic_ball(40, 3, 3.0, rng), beta=2.0, karcher_iters=100)
    xi = L.check_points(sample_hyperbolic_ball(10, 3, 3.0, rng))
    e0 = mem.energy(xi)
    for _ in range(4):
        xi = mem.update(xi)
        e1 = mem.energy(xi)
        assert np.all(e1 <= e0 + 1e-9)
        e0 = e1


def test_retrieval_recovers_true_pattern_and_capacity_order():
    rng = np.random.default_rng(6)
    sp = make_space("hyperbolic", 3, 4.0)
    X = sp.sample(32, rng)
    t = rng.integers(0, 32, 50)
    q = sp.perturb(X[t], 0.3, rng)
    assert np.allclose(L.dist(q, X[t]), 0.3, atol=1e-8)  # intrinsic noise radius exactly
    out = HyperbolicMemory(X, beta=400.0).retrieve(q)
    assert np.mean(L.dist(out, X[t]) < 1e-3) > 0.9
    kw = dict(betas=(64.0,), p_max=256, n_queries=200, n_draws=4)
    hyp = estimate_capacity(make_space("hyperbolic", 2, 8.0), 0.5, rng=np.random.default_rng(0), **kw)
    euc = estimate_capacity(make_space("euclidean", 2, 8.0), 0.5, rng=np.random.default_rng(0), **kw)
    assert hyp.capacity > euc.capacity


def test_classical_hopfield_stores_few_patterns():
    rng = np.random.default_rng(7)
    N = 100
    few = np.where(rng.random((5, N)) < 0.5, 1.0, -1.0)
    assert np.array_equal(ClassicalHopfield(few).retrieve(few), few)
    many = np.where(rng.random((60, N)) < 0.5, 1.0, -1.0)
    assert not np.array_equal(ClassicalHopfield(many).retrieve(many), many)


def test_success_measure_scores_truth_best():
    from icml26.hyperhopfield.capacity import float64_radius_limit, retrieval_success

    rng = np.random.default_rng(8)
    for name in ("hyperbolic", "euclidean", "sphere"):
        sp = make_space(name, 3, 4.0)
        X = sp.sample(64, rng)
        t = rng.integers(0, 64, 100)
        assert retrieval_success(sp, X, X[t], t, 0.5).all()  # the true pattern always counts as retrieved
        assert not retrieval_success(sp, X, sp.perturb(X[t], 0.5, rng), t, 0.5).any()  # the query itself never
    assert 12.0 <= float64_radius_limit() <= 20.0  # MAX_RADIUS sits below the measured float64 limit


def test_equal_volume_radius_closed_form():
    from icml26.hyperhopfield.claims import equal_volume_radius

    for R in (1.0, 4.0, 8.0):  # H^2: area 2 pi (cosh R - 1) = pi R_E^2
        assert equal_volume_radius(2, R) == pytest.approx(np.sqrt(2 * (np.cosh(R) - 1)), rel=1e-6)
    assert equal_volume_radius(1, 3.0) == pytest.approx(3.0)  # H^1 is flat


def test_mmse_minimum_at_true_beta_and_moves_without_bias():
    """The one-step MSE over beta is smallest at beta = 1/sigma^2 (the truth) with the bias, elsewhere without."""
    from icml26.hyperhopfield.claims import argmin_refined, mmse_problem
    from icml26.hyperhopfield.config import PRESETS

    cfg = PRESETS["smoke"]
    X, target, xi = mmse_problem(cfg, np.random.default_rng(3))
    grid = np.arange(-1.5, 1.51, 0.125)
    g = {}
    for bias in (True, False):
        mse = [
            np.mean(np.sum((mhn_update(X, xi, 2**k / cfg.mmse_sigma**2, bias=bias) - X[target]) ** 2, 1)) for k in grid
        ]
        g[bias] = argmin_refined(grid, np.array(mse))
    assert abs(g[True]) < 0.1 and g[False] < -0.2


def test_capacity_bisection_resolves_between_grid_values():
    """Doubling finds the bracket [P, 2P); bisection on log2 P narrows it to the stated resolution."""
    space = make_space("euclidean", 2, 30.0)  # capacity ~50: the bracket [32, 64) holds integers to try
    kw = dict(betas=(64.0,), p_max=256, n_queries=200, n_draws=4)
    coarse = estimate_capacity(space, 0.5, rng=np.random.default_rng(0), resolution=1.0, **kw)
    fine = estimate_capacity(space, 0.5, rng=np.random.default_rng(0), resolution=0.125, **kw)
    assert coarse.capacity & (coarse.capacity - 1) == 0  # a power of two: the doubling grid only
    assert coarse.capacity <= fine.capacity < 2 * coarse.capacity  # the same bracket, refined inside it
    assert len(fine.success[64.0]) > len(coarse.success[64.0])  # the bisection tried points inside the bracket
    with pytest.raises(ValueError, match="resolution"):
        estimate_capacity(space, 0.5, rng=np.random.default_rng(0), resolution=0.0, **kw)
