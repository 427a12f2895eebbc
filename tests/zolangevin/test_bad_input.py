"""Issue 20 for zolangevin: no divergence reported as success, budgets honoured, sizes bounded, safe files."""

import json

import numpy as np
import pytest

from icml26.zolangevin.cli import main
from icml26.zolangevin.prior import ScorePrior
from icml26.zolangevin.targets import make_target


def test_divergence_is_an_error_not_a_result(tmp_path):
    out = tmp_path / "x.npy"
    with pytest.raises(ValueError, match="diverged"):
        main(["sample", "--sampler", "ula", "--step", "5", "--queries", "20000", "--chains", "10", "--out", str(out)])
    assert not out.exists()


def test_query_budget_is_never_exceeded(capsys):
    argv = ["sample", "--target", "gmm:d=5", "--b", "50000", "--queries", "200000", "--chains", "10"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["queries_per_chain"] <= report["query_budget_per_chain"] == 20000
    with pytest.raises(ValueError, match="one step costs"):
        main(["sample", "--target", "gmm:d=50", "--queries", "100", "--chains", "10"])


def test_fractional_dimension_and_huge_sizes_are_refused():
    with pytest.raises(ValueError, match="integer"):
        make_target("gmm:d=2.5")
    for argv in (["--queries", "inf"], ["--queries", "1e12"], ["--chains", "1e12"], ["--b", "1e12"]):
        with pytest.raises(SystemExit):
            main(["sample", *argv])


def test_outputs_checked_before_work_and_named_exactly(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        main(["train-prior", "--data", "shapes", "--size", "8", "--steps", "2", "--out", str(tmp_path / "no" / "p.pt")])
    out = tmp_path / "x.bin"
    assert main(["sample", "--target", "gmm:d=2", "--queries", "400", "--chains", "4", "--out", str(out)]) == 0
    assert np.load(out).shape == (4, 2) and not (tmp_path / "x.bin.npy").exists()


def test_prior_loader_gives_one_line_naming_the_file(tmp_path):
    garbage = tmp_path / "g.pt"
    garbage.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(OSError, match=r"g\.pt is not a zolangevin prior file") as exc:
        ScorePrior.load(garbage)
    assert "\n" not in str(exc.value)


def test_empty_or_mismatched_starts_are_refused_in_one_line():
    from icml26.zolangevin import run_sampler

    target = make_target("gmm:d=3")
    for sampler in ("vr-zo", "mala"):
        with pytest.raises(ValueError, match=r"n_chains, d >= 1"):
            run_sampler(sampler, target, np.zeros((0, 3)), step=0.1, query_budget=100, b=2, q=2)
        with pytest.raises(ValueError, match="target has dimension 3"):
            run_sampler(sampler, target, np.zeros((4, 5)), step=0.1, query_budget=100, b=2, q=2)
