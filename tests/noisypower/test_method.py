"""Centralized NPM / ANPM: against closed forms, a slow unnormalised Chebyshev recurrence, and scipy."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from icml26.noisypower import (
    AdversarialNoise,
    BoundedNoise,
    GaussianNoise,
    accelerated_noisy_power_method,
    noise_bound,
    noisy_power_method,
    sin_theta,
)
from icml26.noisypower.data import dense_problem, sparse_problem
from icml26.noisypower.method import qr_pos
from icml26.noisypower.noise import xu_noise_bound


@pytest.fixture
def problem():
    return dense_problem(60, 3, 0.9, seed=np.random.default_rng(11))


def test_sin_theta_closed_form():
    rng = np.random.default_rng(0)
    theta = 0.3
    Q = np.linalg.qr(rng.standard_normal((10, 3)))[0]
    U = Q[:, :2]
    X = np.column_stack([U[:, 0], np.cos(theta) * U[:, 1] + np.sin(theta) * Q[:, 2]])
    assert sin_theta(X, U) == pytest.approx(np.sin(theta), rel=1e-12)
    assert sin_theta(U @ np.array([[0.0, 1.0], [1.0, 0.0]]), U) < 1e-14  # rotation-invariant
    with pytest.raises(ValueError, match="same shape"):
        sin_theta(X, Q)


def test_qr_pos_batched():
    Y = np.random.default_rng(1).standard_normal((4, 7, 3))
    Q, R = qr_pos(Y)
    assert np.all(np.diagonal(R, axis1=1, axis2=2) >= 0)
    np.testing.assert_allclose(Q @ R, Y, atol=1e-12)
    np.testing.assert_allclose(Q.transpose(0, 2, 1) @ Q, np.broadcast_to(np.eye(3), (4, 3, 3)), atol=1e-12)


@pytest.mark.parametrize("solver", [noisy_power_method, accelerated_noisy_power_method])
def test_converges_to_eigh_subspace(solver, problem):
    res = solver(problem.A, 3, tol=1e-10, seed=0)
    assert res.converged
    vals, vecs = np.linalg.eigh(problem.A)
    assert sin_theta(res.basis, vecs[:, ::-1][:, :3]) < 1e-8
    np.testing.assert_allclose(res.eigenvalues, vals[::-1][:3], rtol=1e-10)
    assert res.n_matvecs >= 3 * res.n_iter


def test_operator_kinds_agree(problem):
    A = problem.A
    kw = dict(tol=1e-9, seed=3, lambda_next=problem.eigvals[3])
    dense = accelerated_noisy_power_method(A, 3, **kw)
    sparse = accelerated_noisy_power_method(sp.csr_array(A), 3, **kw)
    op = accelerated_noisy_power_method(
        LinearOperator(A.shape, matvec=lambda x: A @ x, matmat=lambda X: A @ X), 3, **kw
    )
    fn = accelerated_noisy_power_method(lambda X: A @ X, 3, dim=60, **kw)
    for other in (sparse, op, fn):
        assert other.n_iter == dense.n_iter
        assert sin_theta(other.basis, dense.basis) < 1e-10


def test_anpm_spans_chebyshev_recurrence(problem):
    """Slow reference: the unnormalised three-term recurrence Z_{t+1} = A Z_t - beta Z_{t-1}, Z_{-1} = 0."""
    A, beta, t = problem.A, problem.eigvals[3] ** 2 / 4, 12
    X0 = np.random.default_rng(5).standard_normal((60, 3))
    Z_prev, Z = np.zeros_like(X0), X0.copy()
    for _ in range(t):
        Z_prev, Z = Z, A @ Z - beta * Z_prev
    res = accelerated_noisy_power_method(A, 3, beta=beta, X0=X0, tol=1e-300, max_iter=t)
    assert res.n_iter == t and not res.converged
    assert sin_theta(res.basis, np.linalg.qr(Z)[0]) < 1e-10


def test_anpm_contraction_matches_theory():
    P = dense_problem(200, 2, 0.95, seed=4)
    res = accelerated_noisy_power_method(P.A, 2, lambda_next=P.eigvals[2], tol=1e-11, reference=P.U, seed=1)
    h = np.asarray(res.history["sin_theta"])
    measured = (h[-1] / h[-31]) ** (1 / 30)
    g = 0.95
    predicted = g / (1 + np.sqrt(1 - g**2))  # Chebyshev rate with beta = lambda_{k+1}^2 / 4
    assert measured == pytest.approx(predicted, rel=0.05)
    npm = noisy_power_method(P.A, 2, tol=1e-11, reference=P.U, seed=1)
    assert res.n_iter * 3 < npm.n_iter


def test_auto_momentum_estimates_lambda_next(problem):
    res = accelerated_noisy_power_method(problem.A, 3, beta="auto", tol=1e-9, seed=2)
    assert res.beta == pytest.approx(problem.eigvals[3] ** 2 / 4, rel=1e-6)
    assert res.n_matvecs > 3 * res.n_iter  # the Lanczos estimate is counted


def test_residual_stopping_without_reference(problem):
    res = noisy_power_method(problem.A, 3, tol=1e-9, seed=0)
    assert res.converged and res.history["residual"][-1] <= 1e-9
    assert sin_theta(res.basis, problem.U) < 1e-7


def test_noise_models_norms(problem):
    rng = np.random.default_rng(0)
    X = np.linalg.qr(rng.standard_normal((60, 3)))[0]
    AX = problem.A @ X
    G = GaussianNoise(0.25)(0, X, AX, rng)
    assert np.linalg.norm(G, 2) == pytest.approx(0.25)
    clipped = BoundedNoise(lambda t, X, AX, rng: 10 * np.ones_like(AX), 0.5)(0, X, AX, rng)
    assert np.linalg.norm(clipped, 2) == pytest.approx(0.5)
    adv = AdversarialNoise.at_fraction(2.0, problem.eigvals, problem.top, 3, 1e-3)
    G = adv(0, X, AX, rng)
    assert np.linalg.norm(G, 2) == pytest.approx(2.0 * 1e-3 * (problem.eigvals[2] - problem.eigvals[3]))
    assert np.abs(problem.U.T @ G).max() < 1e-14  # aims outside the target subspace


def test_noise_bounds():
    assert noise_bound(1.0, 0.9, 1e-3) == pytest.approx(1e-4)
    assert xu_noise_bound(1.0, 0.99, 1e-3) == pytest.approx(1e-5 * 0.1)
    with pytest.raises(ValueError, match="lambda_k > lambda_"):
        noise_bound(0.5, 0.9, 1e-3)
    with pytest.raises(ValueError):
        GaussianNoise(-1.0)
    with pytest.raises(ValueError, match="shape"):
        BoundedNoise(lambda t, X, AX, rng: np.ones(3), 1.0)(0, np.eye(4, 2), np.eye(4, 2), None)


@pytest.mark.parametrize("solver", [noisy_power_method, accelerated_noisy_power_method])
def test_adversarial_floor_is_noise_over_gap(solver):
    """Closed form of the lower-bound instance: sin theta settles at level / (lambda_k - lambda_{k+1})."""
    P = dense_problem(80, 2, 0.9, seed=7)
    kw = {} if solver is noisy_power_method else {"lambda_next": P.eigvals[2]}
    for fraction, converges in ((0.3, True), (4.0, False)):
        noise = AdversarialNoise.at_fraction(fraction, P.eigvals, P.top, 2, 1e-6)
        res = solver(P.A, 2, noise=noise, tol=1e-12, max_iter=600, reference=P.U, seed=0, **kw)
        floor = res.history["sin_theta"][-1]
        assert floor == pytest.approx(fraction * 1e-6, rel=0.05)
        assert (res.iterations_to(1e-6) is not None) == converges


def test_sparse_problem_with_anpm():
    P = sparse_problem(3000, 4, gap_ratio=0.9, seed=0)
    res = accelerated_noisy_power_method(P.A, 4, tol=1e-9, reference=P.U, lambda_next=P.eigvals[4], seed=0)
    assert res.converged and sin_theta(res.basis, P.U) <= 1e-9


def test_bad_inputs(problem):
    A = problem.A
    with pytest.raises(ValueError, match="square"):
        noisy_power_method(np.ones((3, 4)), 1)
    nonsym = A.copy()
    nonsym[0, 1] += 1.0
    with pytest.raises(ValueError, match="symmetrize"):
        noisy_power_method(nonsym, 2)
    assert noisy_power_method(nonsym, 2, symmetrize=True, tol=1e-6, seed=0).converged
    with pytest.raises(ValueError, match="symmetric"):
        noisy_power_method(sp.csr_array(nonsym), 2)
    with pytest.raises(ValueError, match="k must be smaller"):
        noisy_power_method(A, 60)
    with pytest.raises(ValueError, match="positive integer"):
        noisy_power_method(A, 0)
    for bad in (np.nan, np.inf):
        B = A.copy()
        B[2, 2] = bad
        with pytest.raises(ValueError, match="NaN or inf"):
            accelerated_noisy_power_method(B, 2)
    with pytest.raises(ValueError, match="dim"):
        noisy_power_method(lambda X: X, 2)
    with pytest.raises(ValueError, match="X0"):
        noisy_power_method(A, 2, X0=np.ones((5, 2)))
    with pytest.raises(ValueError, match="reference"):
        noisy_power_method(A, 2, reference=np.ones((60, 3)))
    with pytest.raises(ValueError, match="beta"):
        accelerated_noisy_power_method(A, 2, beta="fast")
    with pytest.raises(ValueError, match="tol"):
        noisy_power_method(A, 2, tol=0)


def test_block_size_oversampling():
    P = dense_problem(150, 3, 0.97, seed=9)
    vals = P.eigvals
    plain = accelerated_noisy_power_method(P.A, 3, lambda_next=vals[3], tol=1e-9, reference=P.U, seed=0)
    over = accelerated_noisy_power_method(P.A, 3, block_size=6, lambda_next=vals[6], tol=1e-9, reference=P.U, seed=0)
    assert over.basis.shape == (150, 3) and over.converged
    np.testing.assert_allclose(over.eigenvalues, vals[:3], rtol=1e-9)
    assert over.n_iter < plain.n_iter  # the rate is set by lambda_7 / lambda_3 instead of lambda_4 / lambda_3
    with pytest.raises(ValueError, match="block_size"):
        noisy_power_method(P.A, 3, block_size=2)


def test_auto_momentum_on_tiny_problem():
    P = dense_problem(6, 4, 0.8, seed=0)  # too small for ARPACK: falls back to the exact spectrum
    res = accelerated_noisy_power_method(P.A, 4, block_size=5, tol=1e-10, seed=0)
    assert res.converged and res.beta == pytest.approx(P.eigvals[5] ** 2 / 4)


@pytest.mark.parametrize("solver", [noisy_power_method, accelerated_noisy_power_method])
def test_indefinite_matrix_is_refused(solver):
    # eigenvalues -10, 5, 4, ...: the power method locks onto -10 (largest magnitude) and used to report
    # [5, -10] as a converged "top-2" eigenspace; the true top 2 are 5 and 4
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.standard_normal((50, 50)))[0]
    lam = np.r_[-10.0, 5.0, 4.0, np.linspace(1.0, 0.1, 47)]
    with pytest.raises(ValueError, match="not positive semidefinite"):
        solver((Q * lam) @ Q.T, 2, tol=1e-10, seed=0)
    shifted = solver((Q * (lam + 10.0)) @ Q.T, 2, tol=1e-10, seed=0)  # the advertised remedy works
    np.testing.assert_allclose(shifted.eigenvalues - 10.0, [5.0, 4.0], rtol=1e-9)


def test_callable_operator_output_is_validated():
    # a callable returning NaN used to surface as numpy's "Eigenvalues did not converge"
    B = np.diag(np.linspace(1.0, 0.1, 50))

    def nan_op(X):
        Y = B @ X
        Y[0] = np.nan
        return Y

    with pytest.raises(ValueError, match="operator returned NaN or inf"):
        noisy_power_method(nan_op, 3, dim=50, seed=0)
    with pytest.raises(ValueError, match="operator returned shape"):
        accelerated_noisy_power_method(lambda X: (B @ X)[:, :1], 3, dim=50, beta=0.1, seed=0)
    assert noisy_power_method(lambda X: B @ X, 3, dim=50, seed=0, tol=1e-8).converged
