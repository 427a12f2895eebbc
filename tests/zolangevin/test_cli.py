import json

import numpy as np
import pytest

from icml26.zolangevin.cli import main


def test_sample_verb_reports_diagnostics(capsys, tmp_path):
    out = tmp_path / "x.npy"
    assert (
        main(
            [
                "sample",
                "--target",
                "gmm:d=3",
                "--sampler",
                "vr-zo",
                "--queries",
                "4000",
                "--chains",
                "20",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert 150 <= report["queries_per_chain"] <= report["query_budget_per_chain"] == 200  # never exceeded
    assert report["ksd_imq"] > 0 and np.load(out).shape == (20, 3)


def test_invert_verb_with_a_tiny_prior(capsys, tmp_path):
    prior = tmp_path / "p.pt"
    assert (
        main(["train-prior", "--data", "shapes", "--size", "8", "--steps", "20", "--width", "16", "--out", str(prior)])
        == 0
    )
    capsys.readouterr()
    np.save(tmp_path / "img.npy", np.full((8, 8), 0.2))
    assert (
        main(
            ["invert", "--prior", str(prior), "--image", str(tmp_path / "img.npy"), "--method", "enkg", "--chains", "4"]
        )
        == 0
    )
    assert "psnr_db" in json.loads(capsys.readouterr().out)
    np.save(tmp_path / "wrong.npy", np.zeros((14, 14)))
    with pytest.raises(ValueError, match="needs \\(8, 8\\)"):
        main(["invert", "--prior", str(prior), "--image", str(tmp_path / "wrong.npy")])


def test_bad_cli_input():
    with pytest.raises(ValueError, match="unknown target"):
        main(["sample", "--target", "hmm:d=2", "--queries", "100"])
    with pytest.raises(SystemExit):  # refused at parse time (exit 2)
        main(["sample", "--step", "-0.1", "--queries", "100"])
    with pytest.raises(SystemExit):
        main(["sample", "--queries", "-5"])
