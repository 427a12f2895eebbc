"""Verification metrics vs slow references, scoringrules, properscoring and closed forms."""

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.ucast.data import latitude_weights, load_wb2
from icml26.ucast.metrics import (
    deterministic_scores,
    ensemble_scores,
    fair_crps,
    fair_crps_torch,
    lat_weighted_mae_torch,
    rank_histogram,
)

ERA5 = Path(__file__).resolve().parents[1] / "data" / "era5-sample" / "era5-levels-members.nc"


def slow_fair_crps(ens, y):
    """Zamo & Naveau (2018) fair CRPS, written out with loops over members."""
    m = len(ens)
    skill = sum(abs(x - y) for x in ens) / m
    spread = sum(abs(a - b) for a, b in itertools.product(ens, ens)) / (2 * m * (m - 1))
    return skill - spread


@pytest.mark.parametrize("m", [2, 3, 7, 20])
def test_fair_crps_forms_agree_with_loop_reference(m):
    rng = np.random.default_rng(m)
    ens, obs = rng.normal(size=(m, 5, 4)), rng.normal(size=(5, 4))
    ref = np.vectorize(lambda i, j: slow_fair_crps(ens[:, i, j], obs[i, j]))(*np.indices(obs.shape))
    np.testing.assert_allclose(fair_crps(ens, obs, method="sorted"), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fair_crps(ens, obs, method="pairwise"), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.slow  # importing scoringrules JIT-compiles ~9 s; the loop reference above checks the same
def test_fair_crps_matches_scoringrules():
    sr = pytest.importorskip("scoringrules")
    rng = np.random.default_rng(1)
    ens, obs = rng.gamma(2.0, size=(11, 6, 9)), rng.gamma(2.0, size=(6, 9))
    ref = sr.crps_ensemble(obs, ens, m_axis=0, estimator="fair", backend="numpy")
    np.testing.assert_allclose(fair_crps(ens, obs), ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fair_crps(np.moveaxis(ens, 0, -1), obs, member_axis=-1), ref, rtol=1e-6)


@pytest.mark.slow  # scoringrules, as above
def test_fair_crps_relation_to_the_standard_ensemble_crps():
    sr = pytest.importorskip("scoringrules")
    rng = np.random.default_rng(2)
    m = 6
    ens, obs = rng.normal(size=(m, 30)), rng.normal(size=30)
    standard = sr.crps_ensemble(obs, ens, m_axis=0, estimator="nrg", backend="numpy")  # empirical-CDF CRPS
    skill = np.abs(ens - obs).mean(0)
    # standard = skill - S / (2 M^2), fair = skill - S / (2 M (M - 1))  with the same pair sum S
    expected_fair = skill - (skill - standard) * m / (m - 1)
    np.testing.assert_allclose(fair_crps(ens, obs), expected_fair, rtol=1e-6, atol=1e-9)


def test_fair_crps_needs_two_members_and_known_method():
    with pytest.raises(ValueError, match="at least 2 members"):
        fair_crps(np.zeros((1, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="method"):
        fair_crps(np.zeros((2, 3)), np.zeros(3), method="fast")


def test_fair_crps_is_unbiased_for_the_true_distribution():
    """E[CRPS_fair] with M = 2 equals the CRPS of N(0,1) at y: E|X - y| - E|X - X'|/2."""
    rng = np.random.default_rng(3)
    y = 0.7
    ens = rng.normal(size=(2, 400_000))
    closed = y * (2 * 0.758036347776927 - 1) + 2 * np.exp(-(y**2) / 2) / np.sqrt(2 * np.pi) - 1 / np.sqrt(np.pi)
    assert abs(fair_crps(ens, y).mean() - closed) < 5e-3


def test_torch_losses_match_numpy():
    rng = np.random.default_rng(4)
    ens = rng.normal(size=(3, 2, 2, 5, 6))
    obs = rng.normal(size=(2, 2, 5, 6))
    w = latitude_weights(np.linspace(-80, 80, 5))
    ref = (fair_crps(ens, obs) * w[:, None]).mean()
    got = fair_crps_torch(torch.as_tensor(ens), torch.as_tensor(obs), torch.as_tensor(w))
    assert abs(got.item() - ref) < 1e-10
    mae = lat_weighted_mae_torch(torch.as_tensor(ens[0]), torch.as_tensor(obs), torch.as_tensor(w))
    assert abs(mae.item() - (np.abs(ens[0] - obs) * w[:, None]).mean()) < 1e-10


def test_latitude_weights():
    lat = np.linspace(-90, 90, 121)
    w = latitude_weights(lat)
    assert abs(w.mean() - 1) < 1e-12 and w[0] < 1e-12 and w[60] == w.max()
    with pytest.raises(ValueError):
        latitude_weights(np.array([95.0]))


def test_ssr_is_one_for_a_calibrated_ensemble_and_rmse_conventions():
    rng = np.random.default_rng(5)
    m, n, s, c, h, w = 5, 40, 2, 1, 6, 8
    center = rng.normal(size=(n, s, c, h, w))
    truth = center + rng.normal(size=center.shape)  # truth and members exchangeable given the centre
    fc = center + rng.normal(size=(m, *center.shape))
    sc = ensemble_scores(fc, truth, np.ones(h))
    assert np.all(np.abs(sc["ssr"] - 1) < 0.08)
    assert np.all(sc["rmse_per_init"] <= sc["rmse"] + 1e-12)  # Jensen: mean of sqrt <= sqrt of mean
    under = center + 0.3 * rng.normal(size=(m, *center.shape))
    assert np.all(ensemble_scores(under, truth, np.ones(h))["ssr"] < 0.6)
    with pytest.raises(ValueError, match="at least 2 members"):
        ensemble_scores(fc[:1], truth, np.ones(h))


def test_rmse_closed_form_and_deterministic_crps_is_mae():
    truth = np.zeros((2, 1, 1, 2, 2))
    fc = np.stack([np.full_like(truth, 1.0), np.full_like(truth, 3.0)])  # ens mean error 2 everywhere
    fc[:, 1] *= 2  # second init: error 4
    sc = ensemble_scores(fc, truth, np.ones(2))
    assert np.isclose(sc["rmse"][0, 0], np.sqrt((4 + 16) / 2)) and np.isclose(sc["rmse_per_init"][0, 0], 3.0)
    det = deterministic_scores(fc[0], truth, np.ones(2))
    assert np.isclose(det["crps"][0, 0], 1.5)


def test_rank_histogram_flat_for_exchangeable_members():
    rng = np.random.default_rng(6)
    counts = rank_histogram(rng.normal(size=(4, 50_000)), rng.normal(size=50_000), rng)
    assert counts.sum() == 50_000 and len(counts) == 5
    assert np.all(np.abs(counts / 10_000 - 1) < 0.05)
    with pytest.raises(ValueError):
        rank_histogram(np.zeros((1, 3)), np.zeros(3))


@pytest.mark.skipif(not ERA5.is_file(), reason="real ERA5 sample absent (tests/data/era5-sample)")
def test_crps_and_ssr_on_the_real_era5_ensemble():
    ds = load_wb2(ERA5, ["z_500", "t_850"])
    assert list(ds.lat.values[:2]) == [-90.0, -87.0]  # sorted ascending
    z = ds["z_500"].transpose("trajectory", "time", "lat", "lon").values  # (10, 4, 61, 120)
    truth, ens = z[0], z[1:]  # member 0 verifies the other 9 (a perfect-ensemble check)
    ours = fair_crps(ens, truth)
    # the O(M^2) pair form (scoringrules is cross-checked in the slow test above; importing it JIT-compiles)
    np.testing.assert_allclose(ours, fair_crps(ens, truth, method="pairwise"), rtol=1e-6, atol=1e-6)
    sc = ensemble_scores(ens[:, None, :, None], truth[None, :, None], latitude_weights(ds.lat.values))
    assert np.all(sc["crps"] > 0) and np.all(np.isfinite(sc["ssr"]))
    # members of the same ensemble are exchangeable: spread and error of the same order
    assert np.all((sc["ssr"] > 0.3) & (sc["ssr"] < 3.0))


def test_the_true_predictive_distribution_scores_best():
    """Ground truth: members drawn from the truth's own distribution beat shifted, under- and over-dispersed
    ensembles in fair CRPS, and only they have SSR near 1; the truth itself as a forecast has RMSE 0."""
    rng = np.random.default_rng(11)
    m, n, s, c, h, w = 8, 60, 1, 1, 6, 8
    center = rng.normal(size=(n, s, c, h, w))
    truth = center + rng.normal(size=center.shape)

    def ens(shift=0.0, scale=1.0):
        return center + shift + scale * rng.normal(size=(m, *center.shape))

    scores = {
        k: ensemble_scores(e, truth, np.ones(h))
        for k, e in {"true": ens(), "shifted": ens(shift=0.5), "under": ens(scale=0.4), "over": ens(scale=2.0)}.items()
    }
    crps = {k: float(v["crps"].mean()) for k, v in scores.items()}
    assert crps["true"] == min(crps.values()) and crps["true"] < 0.97 * min(
        crps[k] for k in ("shifted", "under", "over")
    )
    assert abs(scores["true"]["ssr"].mean() - 1) < 0.08
    assert scores["under"]["ssr"].mean() < 0.6 and scores["over"]["ssr"].mean() > 1.5
    exact = ensemble_scores(np.repeat(truth[None], 2, axis=0), truth, np.ones(h))
    assert np.all(exact["rmse"] == 0) and np.all(exact["crps"] == 0)
