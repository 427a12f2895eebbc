"""Issue 20 for degmetrics: sizes bounded up front, outputs atomic, no silently wrong (NaN) results."""

import dataclasses

import numpy as np
import pytest

from icml26 import cli
from icml26.degmetrics.config import MAX_MATRIX_ENTRIES, SimConfig
from icml26.degmetrics.data import simulate
from icml26.degmetrics.evaluate import evaluate
from icml26.registry import SYSTEMS

SMALL = [
    "--preset",
    "smoke",
    "--genes",
    "30",
    "--control-cells",
    "20",
    "--perturbations",
    "3",
    "--cells",
    "8",
    "--gene-source",
    "gamma",
]


@pytest.fixture
def systems():
    s = dict(SYSTEMS)
    s["degmetrics"] = dataclasses.replace(s["degmetrics"], status="implemented")
    return s


def _run(systems, capsys, *argv):
    code = cli.main(["degmetrics", *argv], systems)
    out, err = capsys.readouterr()
    return code, out, err


def test_huge_sizes_are_refused_before_allocation(systems, capsys, tmp_path):
    out = tmp_path / "s.h5ad"
    code, _, err = _run(systems, capsys, "simulate", "--out", str(out), "--preset", "smoke", "--genes", "100000000")
    assert code == 2 and "1,000,000" in err and err.count("\n") == 1
    code, _, err = _run(systems, capsys, "simulate", "--out", str(out), "--preset", "smoke", "--genes", "1000000")
    assert code == 2 and "GiB" in err and "limit" in err and err.count("\n") == 1
    assert not out.exists()
    with pytest.raises(ValueError, match="GiB"):
        SimConfig(n_genes=MAX_MATRIX_ENTRIES // 1000 + 1, n_control=1000, n_perturbations=1, cells_per_perturbation=1)


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--fold-change", "inf", "finite"),
        ("--fold-change", "1e12", "fold_change"),
        ("--control-bias", "1e12", "control_bias"),
        ("--p-effect", "nan", "finite"),
        ("--seed", "-1", ">= 0"),
    ],
)
def test_bad_numbers_give_one_line(systems, capsys, tmp_path, flag, value, message):
    code, _, err = _run(systems, capsys, "simulate", "--out", str(tmp_path / "s.h5ad"), *SMALL, flag, value)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "s.h5ad").exists()


def test_doubles_beyond_the_pairs_are_refused_not_capped(systems, capsys, tmp_path):
    code, _, err = _run(systems, capsys, "simulate", "--out", str(tmp_path / "s.h5ad"), *SMALL, "--doubles", "4")
    assert code == 2 and "only 3 distinct pairs" in err
    # exactly P(P-1)/2 doubles are all produced
    a = simulate(
        SimConfig(
            n_genes=10, n_control=5, n_perturbations=3, cells_per_perturbation=2, n_doubles=3, gene_source="gamma"
        )
    )
    assert sorted(p for p in a.uns["truth"]["perturbations"] if "+" in p) == ["P000+P001", "P000+P002", "P001+P002"]


def test_all_zero_counts_are_an_error_not_nan_metrics(systems, capsys, tmp_path):
    a = simulate(n_genes=20, n_control=10, n_perturbations=3, cells_per_perturbation=4, gene_source="gamma")
    a.X = np.zeros(a.shape)
    with pytest.raises(ValueError, match="every expression value is 0"):
        evaluate(a, a, perturbation_key="perturbation", control="control", scale="counts", pred_scale="counts")
    path = tmp_path / "zero.h5ad"
    a.write_h5ad(path)
    code, _, err = _run(
        systems,
        capsys,
        "score",
        "--pred",
        str(path),
        "--real",
        str(path),
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
        "--pred-scale",
        "counts",
    )
    assert code == 2 and "every expression value is 0" in err and err.count("\n") == 1


def test_undefined_metrics_are_reported(capsys):
    import pandas as pd

    from icml26.degmetrics.cli import _note_undefined

    table = pd.DataFrame({"mse": [0.1, 0.2, 0.3], "r2w_delta": [np.nan, 0.5, np.nan]}, index=["A", "B", "C"])
    _note_undefined(table)
    out = capsys.readouterr().out
    assert "note: r2w_delta is undefined (NaN) for 2 of 3 perturbations (A, C)" in out and "mse" not in out


def test_failed_run_keeps_existing_output_and_checks_it_first(systems, capsys, tmp_path):
    out = tmp_path / "s.h5ad"
    out.write_bytes(b"previous result")
    code, _, _ = _run(systems, capsys, "simulate", "--out", str(out), *SMALL, "--doubles", "9")
    assert code == 2 and out.read_bytes() == b"previous result"
    code, _, err = _run(systems, capsys, "simulate", "--out", str(tmp_path / "missing" / "s.h5ad"), *SMALL)
    assert code == 2 and "does not exist" in err
    code, _, err = _run(systems, capsys, "simulate", "--out", str(tmp_path), *SMALL)
    assert code == 2 and "is a directory" in err


@pytest.mark.parametrize("content", [None, b"", b"\x00\xff garbage"])
def test_bad_h5ad_files_name_the_file(systems, capsys, tmp_path, content):
    path = tmp_path / "x.h5ad"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    code, _, err = _run(
        systems,
        capsys,
        "baselines",
        "--real",
        str(path),
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
    )
    assert code == 2 and str(path) in err and err.count("\n") == 1
    assert ("directory" in err) if content is None else ("not a readable .h5ad" in err)


def test_api_entry_points_check_types():
    from icml26.degmetrics.baselines import calibration_baselines

    a = simulate(n_genes=20, n_control=10, n_perturbations=3, cells_per_perturbation=4, gene_source="gamma")
    with pytest.raises(TypeError, match=r"pred must be an anndata\.AnnData; got ndarray"):
        evaluate(a.X.toarray(), a, perturbation_key="perturbation", control="control", scale="counts")
    with pytest.raises(TypeError, match=r"real must be an anndata\.AnnData"):
        evaluate(a, a.X, perturbation_key="perturbation", control="control", scale="counts")
    with pytest.raises(TypeError, match=r"adata must be an anndata\.AnnData"):
        calibration_baselines(a.X, perturbation_key="perturbation", control="control", scale="counts")
