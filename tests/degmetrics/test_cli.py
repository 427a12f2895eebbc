"""The CLI verbs, through the icml26 dispatcher (bad input: one line, exit 2)."""

import dataclasses

import pandas as pd
import pytest

from icml26 import cli
from icml26.registry import SYSTEMS


@pytest.fixture
def systems():
    s = dict(SYSTEMS)
    s["degmetrics"] = dataclasses.replace(s["degmetrics"], status="implemented")
    return s


def test_simulate_baselines_and_score(tmp_path, systems, capsys):
    sim = tmp_path / "sim.h5ad"
    args = [
        "degmetrics",
        "simulate",
        "--out",
        str(sim),
        "--preset",
        "smoke",
        "--genes",
        "120",
        "--perturbations",
        "6",
        "--cells",
        "20",
        "--control-cells",
        "40",
        "--gene-source",
        "gamma",
    ]
    assert cli.main(args, systems) == 0
    table = tmp_path / "baselines.csv"
    common = ["--perturbation-key", "perturbation", "--control", "control"]
    assert (
        cli.main(
            ["degmetrics", "baselines", "--real", str(sim), *common, "--data-scale", "counts", "--out", str(table)],
            systems,
        )
        == 0
    )
    got = pd.read_csv(table, index_col=0)
    assert {"technical_duplicate", "dataset_mean"} <= set(got.index)
    assert "r2w_delta" in got.columns

    import anndata as ad

    from icml26.degmetrics.baselines import calibration_baselines

    real, preds = calibration_baselines(
        ad.read_h5ad(sim), perturbation_key="perturbation", control="control", scale="counts"
    )
    real.write_h5ad(tmp_path / "real.h5ad")
    preds["technical_duplicate"].write_h5ad(tmp_path / "pred.h5ad")
    out = tmp_path / "scores.csv"
    assert (
        cli.main(
            [
                "degmetrics",
                "score",
                "--pred",
                str(tmp_path / "pred.h5ad"),
                "--real",
                str(tmp_path / "real.h5ad"),
                *common,
                "--data-scale",
                "counts",
                "--out",
                str(out),
            ],
            systems,
        )
        == 0
    )
    scores = pd.read_csv(out, index_col=0)
    assert len(scores) == 6 and "wmse" in scores.columns
    assert "r2w_delta" in capsys.readouterr().out


def test_bad_input_is_one_line_exit_2(tmp_path, systems, capsys):
    missing = [
        "degmetrics",
        "score",
        "--pred",
        str(tmp_path / "p.h5ad"),
        "--real",
        str(tmp_path / "r.h5ad"),
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
    ]
    assert cli.main(missing, systems) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and err.count("\n") == 1


def test_help(systems, capsys):
    assert cli.main(["degmetrics", "--help"], systems) == 0
    assert "usage: icml26 degmetrics" in capsys.readouterr().out
