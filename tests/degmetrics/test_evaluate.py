"""evaluate() on AnnData: alignment, scales, bad input, and the paper's direction on simulated data."""

import anndata as ad
import numpy as np
import pandas as pd
import pytest

from icml26.degmetrics.baselines import calibration_baselines
from icml26.degmetrics.evaluate import DEGReference, evaluate
from icml26.degmetrics.metrics import log1p_normalize

KW = {"perturbation_key": "perturbation", "control": "control"}


@pytest.fixture(scope="module")
def halves(small_screen):
    return calibration_baselines(small_screen, scale="counts", seed=0, **KW)


def test_counts_and_log1p_give_the_same_scores(small_screen, halves):
    real, preds = halves
    logged = real.copy()
    logged.layers["log"] = log1p_normalize(real.X)
    a = evaluate(preds["technical_duplicate"], real, scale="counts", **KW).table
    b = evaluate(preds["technical_duplicate"], logged, scale="log1p", layer="log", **KW).table
    pd.testing.assert_frame_equal(a, b)


def test_gene_order_is_aligned_by_var_names(halves):
    real, preds = halves
    pred = preds["technical_duplicate"]
    shuffled = pred[:, np.random.default_rng(0).permutation(pred.n_vars)].copy()
    a = evaluate(pred, real, scale="counts", **KW).table
    b = evaluate(shuffled, real, scale="counts", **KW).table
    pd.testing.assert_frame_equal(a, b)


def test_cells_and_pseudobulk_predictions_agree(halves):
    real, preds = halves
    pred = preds["technical_duplicate"]
    twin = pred.copy()
    twin.obs_names = [f"{n}-twin" for n in twin.obs_names]
    cells = ad.concat([pred, twin])  # two identical cells per perturbation: same pseudobulk
    a = evaluate(pred, real, scale="counts", **KW).table
    b = evaluate(cells, real, scale="counts", **KW).table
    pd.testing.assert_frame_equal(a, b)


def test_paper_direction_on_simulated_screen(halves):
    real, preds = halves
    ref = DEGReference.from_anndata(real, scale="counts", **KW)
    s = {k: evaluate(v, ref, **KW).summary for k, v in preds.items()}
    assert s["technical_duplicate"]["r2w_delta"] > s["dataset_mean"]["r2w_delta"] + 0.1
    assert s["technical_duplicate"]["wmse"] < s["dataset_mean"]["wmse"]
    assert abs(s["dataset_mean"]["r2w_delta"]) < 0.2
    assert s["dataset_mean"]["mse"] < s["technical_duplicate"]["mse"]  # the artifact


def test_exact_mean_prediction_has_undefined_pearson_all(halves):
    real, _ = halves
    ref = DEGReference.from_anndata(real, scale="counts", **KW)
    pred = ad.AnnData(np.tile(ref.mu_all, (len(ref.perturbations), 1)), obs={"perturbation": ref.perturbations})
    pred.var_names = ref.genes
    table = evaluate(pred, ref, **KW).table
    assert table["pearson_delta_all"].isna().all()
    assert np.all(table["r2w_delta"] <= 0)


def test_control_reference_pred_follows_cell_eval(halves):
    real, preds = halves
    ref = DEGReference.from_anndata(real, scale="counts", **KW)
    pred = preds["technical_duplicate"]
    ctrl = ad.AnnData(ref.mu_ctrl[None, :], obs={"perturbation": ["control"]})
    ctrl.var_names = ref.genes
    same = ad.concat([pred, ctrl])
    a = evaluate(same, ref, control_reference="pred", **KW).table
    b = evaluate(pred, ref, **KW).table
    np.testing.assert_allclose(a["pearson_delta_ctrl"], b["pearson_delta_ctrl"])
    scaled = ad.concat([pred, ad.AnnData(ctrl.X * 1.3, obs=ctrl.obs, var=ctrl.var)])
    c = evaluate(scaled, ref, control_reference="pred", **KW).table  # predicted control moves the score
    assert not np.allclose(c["pearson_delta_ctrl"], b["pearson_delta_ctrl"])
    with pytest.raises(ValueError, match="needs control cells"):
        evaluate(pred, ref, control_reference="pred", **KW)


def test_vscontrol_weights_differ(halves):
    real, _ = halves
    a = DEGReference.from_anndata(real, scale="counts", deg_mode="vsrest", **KW)
    b = DEGReference.from_anndata(real, scale="counts", deg_mode="vscontrol", **KW)
    np.testing.assert_allclose(b.weights.sum(1), 1)
    assert not np.allclose(a.weights, b.weights)


# ---------------------------------------------------------------- bad input
def test_gene_mismatch_lists_genes(halves):
    real, preds = halves
    pred = preds["technical_duplicate"].copy()
    pred.var_names = [*pred.var_names[:-1], "NOTAGENE"]
    with pytest.raises(ValueError, match=r"missing in pred: \['gene299'\]; only in pred: \['NOTAGENE'\]"):
        evaluate(pred, real, scale="counts", **KW)


def test_perturbation_mismatch_lists_them(halves):
    real, preds = halves
    pred = preds["technical_duplicate"][1:].copy()
    with pytest.raises(ValueError, match=r"perturbations differ: missing in pred: \['P000'\]"):
        evaluate(pred, real, scale="counts", **KW)


def test_missing_control_and_key(halves):
    real, preds = halves
    no_ctrl = real[real.obs["perturbation"] != "control"].copy()
    with pytest.raises(ValueError, match="no control cells labelled 'control'"):
        evaluate(preds["dataset_mean"], no_ctrl, scale="counts", **KW)
    with pytest.raises(ValueError, match="obs has no column 'gene_target'"):
        evaluate(preds["dataset_mean"], real, scale="counts", perturbation_key="gene_target", control="control")
    with pytest.raises(ValueError, match="state the scale"):
        evaluate(preds["dataset_mean"], real, **KW)


def test_wrong_scale_and_bad_values(halves):
    real, preds = halves
    with pytest.raises(ValueError, match="look like raw counts"):
        evaluate(preds["dataset_mean"], real, scale="log1p", **KW)
    with pytest.raises(ValueError, match="looks log1p"):
        evaluate(preds["dataset_mean"], real, scale="counts", pred_scale="counts", **KW)
    bad = preds["dataset_mean"].copy()
    bad.X[0, 0] = np.nan
    with pytest.raises(ValueError, match="pred: contains 1 NaN/inf"):
        evaluate(bad, real, scale="counts", **KW)
    bad.X[0, 0] = -0.5  # GEARS-style negative prediction in a log layer
    with pytest.raises(ValueError, match="pred: negative values"):
        evaluate(bad, real, scale="counts", **KW)


def test_single_cell_perturbation_is_rejected(small_screen):
    labels = small_screen.obs["perturbation"].astype(str)
    keep = (labels != "P001").to_numpy()
    keep[np.flatnonzero(labels == "P001")[0]] = True
    one = small_screen[keep].copy()
    with pytest.raises(ValueError, match=r"single cell.*'P001'"):
        DEGReference.from_anndata(one, scale="counts", **KW)


def test_reference_options_are_not_silently_ignored(halves):
    real, preds = halves
    ref = DEGReference.from_anndata(real, scale="counts", **KW)
    pred = preds["technical_duplicate"]
    with pytest.raises(ValueError, match="deg_mode configure the reference"):
        evaluate(pred, ref, deg_mode="vscontrol", **KW)  # would silently keep the vsrest weights
    with pytest.raises(ValueError, match="layer"):
        evaluate(pred, ref, layer="log", **KW)
    with pytest.raises(ValueError, match="scale='log1p' but the DEGReference was built with scale='counts'"):
        evaluate(pred, ref, scale="log1p", **KW)
    with pytest.raises(ValueError, match="control='ctrl'"):
        evaluate(pred, ref, perturbation_key="perturbation", control="ctrl")
    same = evaluate(pred, ref, scale="counts", **KW).table  # consistent options are fine
    pd.testing.assert_frame_equal(same, evaluate(pred, ref, **KW).table)


@pytest.mark.filterwarnings("ignore:Variable names are not unique:UserWarning")  # anndata, on purpose
def test_duplicated_gene_names_get_a_clear_error(halves):
    real, preds = halves
    names = list(real.var_names)
    names[1] = names[0]
    dup_real, dup_pred = real.copy(), preds["technical_duplicate"].copy()
    dup_real.var_names, dup_pred.var_names = names, names
    a = evaluate(dup_pred, dup_real, scale="counts", **KW).table  # same order: no alignment needed
    pd.testing.assert_frame_equal(a, evaluate(preds["technical_duplicate"], real, scale="counts", **KW).table)
    shuffled = dup_pred[:, ::-1].copy()
    with pytest.raises(ValueError, match=r"duplicated gene names \['gene0'\]"):
        evaluate(shuffled, dup_real, scale="counts", **KW)


def test_annotate_writes_the_weights_and_t_scores_into_varm_and_uns(tmp_path):

    from icml26 import cli
    from icml26.degmetrics.data import simulate

    real = simulate(n_genes=30, n_control=20, n_perturbations=3, cells_per_perturbation=10, gene_source="gamma")
    ref = DEGReference.from_anndata(real, perturbation_key="perturbation", control="control", scale="counts")
    path = tmp_path / "real.h5ad"
    real.write_h5ad(path)
    out = tmp_path / "annotated.h5ad"
    args = ["--real", str(path), "--perturbation-key", "perturbation", "--control", "control", "--data-scale", "counts"]
    assert cli.main(["degmetrics", "degs", *args, "--out", str(out)]) == 0
    back = ad.read_h5ad(out)
    np.testing.assert_allclose(back.varm["degmetrics_weights"].to_numpy().T, ref.weights)
    np.testing.assert_allclose(back.varm["degmetrics_t"][ref.perturbations[1]].to_numpy(), ref.t[1])
    assert list(back.uns["degmetrics"]["perturbations"]) == ref.perturbations
    np.testing.assert_array_equal(back.uns["degmetrics"]["n_deg"], ref.n_deg)
    assert (back.X != real.X).nnz == 0  # the counts are written back untouched
    with pytest.raises(ValueError, match="var_names differ"):
        ref.annotate(real[:, ::-1].copy())
