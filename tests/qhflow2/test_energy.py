"""The benchmark core: generalised eigenproblem, E/F from H, and the measure checked on ground truth."""

import numpy as np
import pytest
import scipy.linalg

from icml26.qhflow2.energy import (
    HamiltonianEvaluator,
    energy_forces_from_h,
    metrics,
    noise_response,
    solve_generalized,
)


def test_solve_generalized_matches_scipy_and_regularises():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    S = A @ A.T + 6 * np.eye(6)
    H = rng.normal(size=(6, 6))
    H = H + H.T
    eps, C = solve_generalized(H, S)
    np.testing.assert_allclose(eps, scipy.linalg.eigh(H, S, eigvals_only=True), atol=1e-10)
    np.testing.assert_allclose(C.T @ S @ C, np.eye(6), atol=1e-10)
    # a duplicated basis function makes S singular: one eigenvalue dropped, the rest still solve H C = S C eps
    B = rng.normal(size=(5, 5))
    S5 = B @ B.T + 5 * np.eye(5)
    P = np.vstack([np.eye(5), np.eye(5)[:1]])  # (6, 5): function 0 appears twice
    S_sing, H_sing = P @ S5 @ P.T, P @ (H[:5, :5]) @ P.T
    eps2, C2 = solve_generalized(H_sing, S_sing)
    assert C2.shape == (6, 5)
    np.testing.assert_allclose(H_sing @ C2, S_sing @ C2 * eps2, atol=1e-8)
    np.testing.assert_allclose(eps2, scipy.linalg.eigh(H[:5, :5], S5, eigvals_only=True), atol=1e-8)


def test_metrics_score_the_truth_zero_and_noise_worse(tiny_ds):
    ds = tiny_ds.subset(range(3))
    ev = [HamiltonianEvaluator(ds.Z, r, ds.basis, ds.xc) for r in ds.R]
    n_occ = int(ds.Z.sum()) // 2
    truth = metrics([e(h) for e, h in zip(ev, ds.H, strict=True)], ds.H, ds, n_occ)
    assert truth["H MAE [uHa]"] == 0 and truth["E MAE [meV]"] < 1e-6 and truth["F MAE [meV/A]"] < 1e-3
    noisy_H = ds.H + 1e-3 * np.random.default_rng(0).normal(size=ds.H.shape)
    noisy_H = 0.5 * (noisy_H + noisy_H.swapaxes(1, 2))
    noisy = metrics([e(h) for e, h in zip(ev, noisy_H, strict=True)], noisy_H, ds, n_occ)
    for k in truth:
        assert noisy[k] > truth[k]


def test_energy_is_variational_and_second_order(water, water_sto3g):
    res = noise_response(water.Z, water.R, water_sto3g["H"], basis="sto-3g", xc="hf", sigmas=[1e-4, 1e-3],
                         draws=3, rng=np.random.default_rng(1))  # fmt: skip
    assert (res["dE"] > 0).all()
    ratio_E = np.abs(res["dE"][1]).mean() / np.abs(res["dE"][0]).mean()
    ratio_F = res["dF"][1].mean() / res["dF"][0].mean()
    assert 40 < ratio_E < 250 and 4 < ratio_F < 25  # 10x sigma: ~100x energy error, ~10x force error


def test_bad_hamiltonians_and_geometries_give_one_clear_error(water):
    for H, why in [(np.zeros((5, 5)), "shape"), (np.zeros((0, 0)), "shape"), (np.full((7, 7), np.nan), "NaN")]:
        with pytest.raises(ValueError, match=why):
            energy_forces_from_h(water.Z, water.R, H, basis="sto-3g", xc="hf")
    for Z, R in [(water.Z[:2], water.R), (water.Z, water.R[:, :2]), (water.Z, np.full_like(water.R, np.nan))]:
        with pytest.raises(ValueError, match=r"need Z|NaN"):
            energy_forces_from_h(Z, R, np.eye(7), basis="sto-3g", xc="hf")
