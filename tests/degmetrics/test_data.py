"""Simulator ground truth, the PBMC fit and the validated loader."""

import numpy as np
import pytest
import scipy.sparse as sp

from icml26.degmetrics.config import SimConfig
from icml26.degmetrics.data import (
    fit_negative_binomial,
    load_pbmc_counts,
    pbmc_fit,
    pbmc_path,
    read_perturbation_h5ad,
    simulate,
)
from icml26.degmetrics.metrics import log1p_normalize


def test_nb_fit_recovers_known_parameters():
    rng = np.random.default_rng(0)
    mean = rng.uniform(0.5, 5.0, 300)
    theta = rng.uniform(0.5, 5.0, 300)
    counts = rng.poisson(rng.gamma(theta, mean / theta, size=(6000, 300)))
    m, t = fit_negative_binomial(counts)
    assert np.median(np.abs(m / mean - 1)) < 0.03
    assert np.median(np.abs(t / theta - 1)) < 0.15
    assert np.corrcoef(np.log(t), np.log(theta))[0, 1] > 0.9


@pytest.mark.skipif(pbmc_path() is None, reason="scanpy (which ships the PBMC file) is not installed")
def test_pbmc_counts_are_recovered_integers():
    counts = load_pbmc_counts(None)
    assert counts.shape == (700, 765)
    assert np.all(counts == np.round(counts)) and counts.min() == 0
    dend = load_pbmc_counts()
    assert dend.shape == (240, 765)
    m, t = fit_negative_binomial(dend)
    assert m.size > 700 and np.all(t > 0)
    shipped_m, shipped_t = pbmc_fit()  # the file the simulator reads is exactly this fit
    np.testing.assert_array_equal(m, shipped_m)
    np.testing.assert_array_equal(t, shipped_t)
    with pytest.raises(ValueError, match="no PBMC population"):
        load_pbmc_counts("Neurons")


def test_simulator_ground_truth():
    cfg = SimConfig(
        n_genes=400,
        n_control=300,
        n_perturbations=30,
        cells_per_perturbation=200,
        p_effect=0.05,
        fold_change=4.0,
        control_bias=1.0,
        library_scale=20,
        gene_source="gamma",
    )
    adata = simulate(cfg, seed=1)
    assert adata.shape == (300 + 30 * 200, 400)
    assert sp.issparse(adata.X) and adata.X.format == "csr" and np.issubdtype(adata.X.dtype, np.integer)
    truth = adata.uns["truth"]
    lfc = truth["log_fold_change"]
    assert lfc.shape == (30, 400)
    assert abs((lfc != 0).mean() - 0.05) < 0.015
    np.testing.assert_allclose(np.unique(np.abs(lfc)), [0.0, np.log(4.0)])
    # observed log-ratio of pseudobulks (perturbed vs control) tracks B * shift + effect
    labels = adata.obs["perturbation"].astype(str).to_numpy()
    X = adata.X.toarray().astype(float)
    ctrl = X[labels == "control"].mean(0)
    expressed = ctrl > 1
    for k in range(3):
        obs = np.log(X[labels == f"P{k:03d}"].mean(0)[expressed] / ctrl[expressed])
        true = (truth["generic_shift"] + lfc[k])[expressed]
        assert np.corrcoef(obs, true)[0, 1] > 0.8


def test_control_bias_zero_means_no_shared_shift():
    a = simulate(
        n_genes=200,
        n_control=400,
        n_perturbations=4,
        cells_per_perturbation=400,
        p_effect=0.0,
        control_bias=0.0,
        gene_source="gamma",
        library_scale=20,
        seed=2,
    )
    labels = a.obs["perturbation"].astype(str).to_numpy()
    Xl = log1p_normalize(a.X)
    gap = np.abs(Xl[labels != "control"].mean(0) - Xl[labels == "control"].mean(0))
    b = simulate(
        n_genes=200,
        n_control=400,
        n_perturbations=4,
        cells_per_perturbation=400,
        p_effect=0.0,
        control_bias=2.0,
        gene_source="gamma",
        library_scale=20,
        seed=2,
    )
    Xb = log1p_normalize(b.X)
    gap_b = np.abs(Xb[labels != "control"].mean(0) - Xb[labels == "control"].mean(0))
    assert gap_b.mean() > 3 * gap.mean()


def test_doubles_add_in_log_space():
    a = simulate(
        n_genes=100,
        n_control=20,
        n_perturbations=6,
        cells_per_perturbation=5,
        n_doubles=3,
        gene_source="gamma",
        p_effect=0.2,
        seed=4,
    )
    names = list(a.uns["truth"]["perturbations"])
    lfc = a.uns["truth"]["log_fold_change"]
    for i, n in enumerate(names):
        if "+" in n:
            x, y = n.split("+")
            np.testing.assert_allclose(lfc[i], lfc[names.index(x)] + lfc[names.index(y)])


@pytest.mark.parametrize(
    ("field", "value"),
    [("p_effect", 1.5), ("fold_change", 0.5), ("n_genes", 0), ("control_bias", -1.0), ("gene_source", "mouse")],
)
def test_config_validation(field, value):
    with pytest.raises(ValueError, match=field):
        SimConfig(**{field: value})


def test_loader_validates(tmp_path):
    a = simulate(n_genes=20, n_control=10, n_perturbations=3, cells_per_perturbation=4, gene_source="gamma")
    path = tmp_path / "s.h5ad"
    a.write_h5ad(path)
    assert read_perturbation_h5ad(path, perturbation_key="perturbation", control="control").n_obs == a.n_obs
    with pytest.raises(OSError, match="no such file"):
        read_perturbation_h5ad(tmp_path / "none.h5ad", perturbation_key="perturbation")
    (tmp_path / "bad.h5ad").write_text("not hdf5")
    with pytest.raises(OSError, match="not a readable"):
        read_perturbation_h5ad(tmp_path / "bad.h5ad", perturbation_key="perturbation")
    with pytest.raises(ValueError, match="no column 'guide'"):
        read_perturbation_h5ad(path, perturbation_key="guide")
    with pytest.raises(ValueError, match="no control cells labelled 'NT'"):
        read_perturbation_h5ad(path, perturbation_key="perturbation", control="NT")
