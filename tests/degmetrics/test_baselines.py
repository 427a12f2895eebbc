"""Calibration baselines: split, closed forms, additive doubles against simulated ground truth."""

import numpy as np
import pytest

from icml26.degmetrics.baselines import additive_baseline, calibrated_score, calibration_baselines, split_halves
from icml26.degmetrics.data import simulate
from icml26.degmetrics.evaluate import evaluate
from icml26.degmetrics.metrics import log1p_normalize

KW = {"perturbation_key": "perturbation", "control": "control"}


def test_split_halves_partitions_every_group(small_screen):
    a, b = split_halves(small_screen, seed=1, **KW)
    assert a.n_obs + b.n_obs == small_screen.n_obs
    assert not set(a.obs_names) & set(b.obs_names)
    ca, cb = a.obs["perturbation"].value_counts(), b.obs["perturbation"].value_counts()
    assert set(ca.index) == set(cb.index)
    assert np.all(np.abs(ca - cb[ca.index]) <= 1)
    a2, _ = split_halves(small_screen, seed=1, **KW)
    assert list(a2.obs_names) == list(a.obs_names)


def test_baselines_follow_their_definitions(small_screen):
    real, preds = calibration_baselines(small_screen, scale="counts", seed=2, alpha=0.3, **KW)
    dup, mean, interp = (preds[k].X for k in ("technical_duplicate", "dataset_mean", "interpolated_duplicate"))
    np.testing.assert_allclose(mean, np.tile(dup.mean(0), (dup.shape[0], 1)))
    np.testing.assert_allclose(interp, mean + 0.3 * (dup - mean))
    first, _ = split_halves(small_screen, seed=2, **KW)
    ctrl = log1p_normalize(first[first.obs["perturbation"] == "control"].X).mean(0)
    np.testing.assert_allclose(preds["control_mean"].X[0], ctrl)
    assert "additive" not in preds  # no doubles in this screen
    assert real.n_obs < small_screen.n_obs


def test_single_cell_group_cannot_be_split(small_screen):
    labels = small_screen.obs["perturbation"].astype(str)
    keep = (labels != "P002").to_numpy()
    keep[np.flatnonzero(labels == "P002")[0]] = True
    with pytest.raises(ValueError, match="single-cell perturbations 'P002'"):
        calibration_baselines(small_screen[keep].copy(), scale="counts", **KW)
    with pytest.raises(ValueError, match="alpha"):
        calibration_baselines(small_screen, scale="counts", alpha=2.0, **KW)


def test_calibrated_score_closed_form():
    assert calibrated_score(0.3, 0.3, 0.1) == 0  # lower-is-better metric at the negative baseline
    assert calibrated_score(0.1, 0.3, 0.1) == 1
    assert calibrated_score(0.2, 0.3, 0.1) == pytest.approx(0.5)
    assert calibrated_score(0.4, 0.0, 0.8) == pytest.approx(0.5)  # higher-is-better
    assert np.isnan(calibrated_score(1.0, 0.5, 0.5))


def test_additive_baseline_formula_and_errors():
    mu = np.array([1.0, 1.0])
    singles = {"A": np.array([2.0, 1.0]), "B": np.array([1.0, 0.5])}
    np.testing.assert_allclose(additive_baseline(singles, ["A+B"], mu), [[2.0, 0.5]])
    with pytest.raises(ValueError, match="missing"):
        additive_baseline(singles, ["A+C"], mu)


def test_additive_beats_mean_on_simulated_doubles():
    adata = simulate(
        n_genes=300,
        n_control=150,
        n_perturbations=10,
        cells_per_perturbation=80,
        n_doubles=6,
        p_effect=0.05,
        fold_change=3.0,
        gene_source="gamma",
        library_scale=20,
        seed=5,
    )
    real, preds = calibration_baselines(adata, scale="counts", seed=0, **KW)
    doubles = list(preds["additive"].obs["perturbation"])
    assert len(doubles) == 6 and all("+" in d for d in doubles)
    sub = real[real.obs["perturbation"].astype(str).isin([*doubles, "control"]).to_numpy()].copy()
    mean = preds["dataset_mean"][preds["dataset_mean"].obs["perturbation"].isin(doubles).to_numpy()].copy()
    add = evaluate(preds["additive"], sub, scale="counts", **KW).summary
    base = evaluate(mean, sub, scale="counts", **KW).summary
    assert add["r2w_delta"] > base["r2w_delta"] + 0.2
