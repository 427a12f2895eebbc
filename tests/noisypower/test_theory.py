"""The claims' measures on ground truth: bisection thresholds, Chebyshev predictions (the bound and the exact
tangent), the adversaries, and the v3 measure checks."""

import functools

import numpy as np
import pytest

from icml26.noisypower import AdversarialNoise, accelerated_noisy_power_method, noise_bound, noisy_power_method
from icml26.noisypower.data import dense_problem
from icml26.noisypower.method import sin_theta
from icml26.noisypower.noise import AlternatingNoise, EarlyOnlyNoise
from icml26.noisypower.theory import (
    chebyshev_iterations,
    exact_chebyshev_iterations,
    largest_tolerated,
    textbook_chebyshev_iterations,
    tolerated_noise,
)


@pytest.mark.parametrize("start", [1e-3, 1.0, 3.7, 50.0])
def test_bisection_finds_a_known_threshold(start):
    level, censored = largest_tolerated(lambda x: x <= 3.7, start, steps=12)
    assert not censored
    assert 3.7 / 10 ** (1 / 2**12) <= level <= 3.7


def test_bisection_reports_an_open_bracket():
    assert largest_tolerated(lambda x: True, 1.0, max_expand=3) == (1000.0, True)
    assert largest_tolerated(lambda x: False, 1.0, max_expand=3) == (0.0, True)


def test_slope_of_bisected_thresholds_recovers_the_law():
    """Thresholds built to scale like Delta^1.5 (the earlier bound's order) come out with slope 1.5."""
    delta = np.array([0.1, 0.03, 0.01, 0.003])
    levels = [largest_tolerated(lambda x, dl=dl: x <= 1e-6 * dl**1.5, 1e-6 * dl, steps=12)[0] for dl in delta]
    assert np.polyfit(np.log(delta), np.log(levels), 1)[0] == pytest.approx(1.5, abs=0.01)


def test_npm_push_threshold_matches_its_closed_form_floor():
    """Under the push adversary NPM's error settles at level / (lambda_k - lambda_{k+1}): the tolerated level
    must sit just below eps (lambda_k - lambda_{k+1}), above the floor a transient 1.3x longer can still reach."""
    eps = 1e-5
    for gap_ratio in (0.8, 0.9):
        P = dense_problem(40, 2, gap_ratio, seed=np.random.default_rng(3))
        lam_k, lam_next = P.eigvals[1], P.eigvals[2]
        solve = functools.partial(noisy_power_method, P.A, 2, X0=np.eye(40)[:, :2] + 0.3, reference=P.U)
        n0 = solve(tol=eps, max_iter=10_000).iterations_to(eps)
        level, censored = tolerated_noise(
            solve,
            lambda lv, P=P: AdversarialNoise(lv, P.top[:, 1], P.top[:, 2]),
            eps=eps,
            noiseless_iterations=n0,
            start=noise_bound(lam_k, lam_next, eps),
            steps=10,
        )
        assert not censored
        assert 0.5 <= level / noise_bound(lam_k, lam_next, eps) <= 1.0


@pytest.mark.parametrize("gap_ratio", [0.9, 0.97, 0.99])
def test_chebyshev_prediction_is_exact_for_one_vector(gap_ratio):
    """k = 1: the Chebyshev bound has no top-block slack, so ANPM's iterations equal the prediction."""
    rng = np.random.default_rng(5)
    P = dense_problem(80, 1, gap_ratio, seed=rng)
    X0 = rng.standard_normal((80, 1))
    res = accelerated_noisy_power_method(P.A, 1, lambda_next=P.eigvals[1], tol=1e-8, X0=X0, reference=P.U)
    vals, vecs = np.linalg.eigh(P.A)
    predicted = chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, 1, 1e-8)
    assert abs(res.n_iter - predicted) <= 1
    s0 = sin_theta(X0 / np.linalg.norm(X0), P.U)
    textbook = textbook_chebyshev_iterations(s0 / np.sqrt(1 - s0**2), P.eigvals[0], P.eigvals[1], 1e-8)
    assert textbook >= res.n_iter  # the spectrum-only bound is an upper bound


def test_chebyshev_prediction_bounds_a_block_run():
    rng = np.random.default_rng(6)
    P = dense_problem(80, 3, 0.95, seed=rng)
    X0 = rng.standard_normal((80, 3))
    res = accelerated_noisy_power_method(P.A, 3, lambda_next=P.eigvals[3], tol=1e-7, X0=X0, reference=P.U)
    vals, vecs = np.linalg.eigh(P.A)
    assert chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, 3, 1e-7) >= res.n_iter


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_chebyshev_count_is_anpms_count_for_a_block(seed):
    """k = 4: the exact tangent of p_t(A) X_0 (both diagonals) gives ANPM's iterations to +-1 at every gap, and
    never more than the bound, which charges every top direction at lambda_k."""
    rng = np.random.default_rng(seed)
    for gap_ratio in (0.8, 0.95, 0.99):
        P = dense_problem(80, 4, gap_ratio, seed=rng)
        X0 = rng.standard_normal((80, 4))
        res = accelerated_noisy_power_method(P.A, 4, lambda_next=P.eigvals[4], tol=1e-7, X0=X0, reference=P.U)
        vals, vecs = np.linalg.eigh(P.A)
        exact = exact_chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, 4, 1e-7)
        assert abs(res.n_iter - exact) <= 1
        assert exact <= chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, 4, 1e-7)


def test_exact_chebyshev_count_equals_the_bound_for_one_vector():
    rng = np.random.default_rng(4)
    P = dense_problem(60, 1, 0.97, seed=rng)
    X0 = rng.standard_normal((60, 1))
    vals, vecs = np.linalg.eigh(P.A)
    args = (vals[::-1], vecs[:, ::-1], X0, 1, 1e-8)
    assert abs(exact_chebyshev_iterations(*args) - chebyshev_iterations(*args)) <= 1


def test_new_adversaries():
    P = dense_problem(30, 2, 0.9, seed=np.random.default_rng(1))
    rng = np.random.default_rng(0)
    X = np.linalg.qr(rng.standard_normal((30, 2)))[0]
    AX = P.A @ X
    alt = AlternatingNoise(0.2, P.top[:, 1], P.top[:, 2])
    G0, G1 = alt(0, X, AX, rng), alt(1, X, AX, rng)
    assert np.linalg.norm(G0, 2) == pytest.approx(0.2)
    np.testing.assert_allclose(G1, -G0)
    assert np.allclose(
        P.top[:, 2] @ G0, np.linalg.norm(G0, 2) * (X.T @ P.top[:, 1]) / np.linalg.norm(X.T @ P.top[:, 1])
    )
    early = EarlyOnlyNoise(AdversarialNoise(0.2, P.top[:, 1], P.top[:, 2]), until=3)
    assert np.linalg.norm(early(2, X, AX, rng), 2) == pytest.approx(0.2)
    assert not np.any(early(3, X, AX, rng))


def test_theory_and_adversaries_refuse_bad_input():
    P = dense_problem(30, 2, 0.9, seed=np.random.default_rng(1))
    vals, vecs = np.linalg.eigh(P.A)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    X0 = np.ones((30, 2))
    with pytest.raises(ValueError, match="start"):
        largest_tolerated(lambda x: True, 0.0)
    with pytest.raises(ValueError, match="factor"):
        largest_tolerated(lambda x: True, 1.0, factor=1.0)
    with pytest.raises(ValueError, match="steps"):
        largest_tolerated(lambda x: True, 1.0, steps=-1)
    solve = functools.partial(noisy_power_method, P.A, 2, reference=P.U)
    with pytest.raises(ValueError, match="noiseless_iterations"):  # the noiseless run did not reach eps
        tolerated_noise(solve, lambda lv: None, eps=1e-6, noiseless_iterations=None, start=1e-6)
    with pytest.raises(ValueError, match="slack"):
        tolerated_noise(solve, lambda lv: None, eps=1e-6, noiseless_iterations=10, start=1e-6, slack=0.5)
    with pytest.raises(ValueError, match="eps"):
        tolerated_noise(solve, lambda lv: None, eps=0.0, noiseless_iterations=10, start=1e-6)
    with pytest.raises(ValueError, match="descending"):
        chebyshev_iterations(vals[::-1], vecs, X0, 2, 1e-6)
    with pytest.raises(ValueError, match="1 <= k < d"):
        chebyshev_iterations(vals, vecs, X0, 30, 1e-6)
    with pytest.raises(ValueError, match="1 <= k < d"):
        chebyshev_iterations(vals, vecs, X0[:, :1], 2, 1e-6)
    with pytest.raises(ValueError, match="descending"):
        exact_chebyshev_iterations(vals[::-1], vecs, X0, 2, 1e-6)
    with pytest.raises(ValueError, match="eps"):
        exact_chebyshev_iterations(vals, vecs, X0, 2, 1.5)
    with pytest.raises(ValueError, match="lambda_k > lambda_"):
        textbook_chebyshev_iterations(1.0, 0.5, 0.9, 1e-6)
    with pytest.raises(ValueError, match="tan0"):
        textbook_chebyshev_iterations(0.0, 0.9, 0.5, 1e-6)
    with pytest.raises(ValueError, match="dimension"):
        AlternatingNoise(0.1, P.top[:, 1], P.top[:, 2])(0, np.ones((10, 2)), np.ones((10, 2)), None)
    with pytest.raises(ValueError, match="noise level"):
        AlternatingNoise(-0.1, P.top[:, 1], P.top[:, 2])
    with pytest.raises(ValueError, match="finite"):
        AdversarialNoise(0.1, np.full(30, np.nan), P.top[:, 2])
    with pytest.raises(ValueError, match="until"):
        EarlyOnlyNoise(AdversarialNoise(0.1, P.top[:, 1], P.top[:, 2]), until=-1)
    with pytest.raises(ValueError, match="until"):
        EarlyOnlyNoise(AdversarialNoise(0.1, P.top[:, 1], P.top[:, 2]), until=2.5)
    with pytest.raises(TypeError, match="callable"):
        EarlyOnlyNoise(0.1, until=3)
