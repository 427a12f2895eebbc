"""The flip2 verbs end to end, and bad input: exit 2, one line on stderr, no traceback, no output file."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main
from icml26.flip2.data import make_synthetic

WT = "MKTAYIAKQR"


def _write_variants(path, rows, header="sequence,target"):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


def _good_csv(tmp_path):
    rng = np.random.default_rng(0)
    rows = [(WT, 1.0)]
    for _ in range(150):
        s = list(WT)
        for p in rng.choice(len(WT), size=rng.integers(1, 4), replace=False):
            s[p] = "ACDEFGHIKLMNPQRSTVWY"[rng.integers(20)]
        rows.append(("".join(s), round(float(rng.normal()), 4)))
    uniq = dict(rows)
    return _write_variants(tmp_path / "v.csv", list(uniq.items()))


@pytest.fixture
def wt_fasta(tmp_path):
    p = tmp_path / "wt.fasta"
    p.write_text(f">WT\n{WT}\n")
    return p


def test_list_and_run_gb1(capsys, tmp_path):
    assert icml26_main(["flip2", "list"]) == 0
    assert "low_vs_high" in capsys.readouterr().out
    js = tmp_path / "r.json"
    argv = [
        "flip2",
        "run",
        "--dataset",
        "gb1",
        "--split",
        "low_vs_high",
        "--models",
        "ridge,zsridge",
        "--out",
        str(tmp_path / "leaderboard.csv"),
        "--json",
        str(js),
    ]
    assert icml26_main(argv) == 0
    rows = json.loads(js.read_text())
    assert {r["model"] for r in rows} == {"ridge", "zsridge"} and all(0.2 < r["spearman"] < 0.6 for r in rows)
    assert (tmp_path / "leaderboard.md").exists() and (tmp_path / "leaderboard.png").exists()


def test_make_splits_and_run_on_user_csv(capsys, tmp_path, wt_fasta):
    v = _good_csv(tmp_path)
    out = tmp_path / "splits.csv"
    assert icml26_main(["flip2", "make-splits", str(v), "--wild-type", str(wt_fasta), "--out", str(out)]) == 0
    import pandas as pd

    df = pd.read_csv(out, keep_default_na=False)
    assert {"one_to_many", "by_position", "low_to_high", "random"} <= set(df.columns)
    # the user brings a FLIP2 file with a set column: run uses it
    df2 = df[["sequence", "target"]].assign(set=np.where(df["random"] == "test", "test", "train"))
    f2 = tmp_path / "flip2.csv"
    df2.to_csv(f2, index=False)
    assert icml26_main(["flip2", "run", "--dataset", str(f2), "--wild-type", str(wt_fasta), "--models", "ridge"]) == 0
    assert "published" in capsys.readouterr().out


def test_two_chain_ppi_rows(tmp_path):
    rows = [("MKTA:YIAK", 1.0), ("MKTC:YIAK", 0.5), ("MKTA:YIAR", 0.2), ("MQTA:YIAK", 0.1), ("MKTA:WIAK", 0.3)]
    from icml26.flip2.data import load_flip2_csv

    t = load_flip2_csv(_write_variants(tmp_path / "p.csv", rows), wild_type="MKTA:YIAK")
    assert t.length == 9 and list(t.n_mutations()) == [0, 1, 1, 1, 1]


def _bad(capsys, argv, tmp_path, match=""):
    before = set(tmp_path.iterdir())
    assert icml26_main(["flip2", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and match.lower() in err.lower(), err
    assert set(tmp_path.iterdir()) == before  # no output (or temp file) left behind


def test_bad_input_files(capsys, tmp_path, wt_fasta):
    out = str(tmp_path / "o.csv")
    ms = lambda f, *extra: ["make-splits", str(f), "--wild-type", str(wt_fasta), "--out", out, *extra]  # noqa: E731
    _bad(capsys, ms(tmp_path / "missing.csv"), tmp_path, "does not exist")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    _bad(capsys, ms(empty), tmp_path, "empty")
    _bad(capsys, ms(tmp_path), tmp_path, "directory")
    garbage = tmp_path / "g.csv"
    garbage.write_bytes(bytes(range(256)) * 4)
    _bad(capsys, ms(garbage), tmp_path)
    nocol = _write_variants(tmp_path / "n.csv", [("ACD", 1)], header="seq,y")
    _bad(capsys, ms(nocol), tmp_path, "lacks the column")


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([(WT, 1.0), ("MKTAYIAKQB", 2.0)], "non-canonical"),
        ([(WT, 1.0), ("MKTAYIAKQ", 2.0)], "inconsistent lengths"),
        ([(WT, 1.0), ("MKTAYIAKQA", 2.0), ("MKTAYIAKQA", 3.0)], "conflicting targets"),
        ([(WT, 1.0), ("MKTAYIAKQA", "nan")], "nan"),
        ([(WT, 1.0), ("MKTAYIAKQA", "inf")], "infinite"),
        ([("WWWWWWWWWW", 1.0), ("WWWWWWWWWY", 2.0)], "does not match"),
    ],
)
def test_bad_variant_tables(capsys, tmp_path, wt_fasta, rows, match):
    f = _write_variants(tmp_path / "bad.csv", rows)
    _bad(
        capsys, ["make-splits", str(f), "--wild-type", str(wt_fasta), "--out", str(tmp_path / "o.csv")], tmp_path, match
    )


def test_noncanonical_map_policy(capsys, tmp_path, wt_fasta):
    rows = [(WT, 1.0), ("MKTAYIAKQB", 2.0), ("MKTAYIAKCR", 0.5), ("MKTAYIAAQR", 0.1), ("AKTAYIAKQR", 0.3)] + [
        ("MKT" + a + "YIAKQR", i / 10) for i, a in enumerate("CDEFGHIKLMNPQRSVW")
    ]
    f = _write_variants(tmp_path / "m.csv", rows)
    out = tmp_path / "o.csv"
    assert (
        icml26_main(
            ["flip2", "make-splits", str(f), "--wild-type", str(wt_fasta), "--out", str(out), "--noncanonical", "map"]
        )
        == 0
    )


def test_empty_test_set_and_bad_values(capsys, tmp_path, wt_fasta):
    f = _write_variants(
        tmp_path / "s.csv", [(WT, 1.0), ("MKTAYIAKQA", 2.0), ("MKTAYIAKQC", 3.0)], header="sequence,target"
    )
    g = tmp_path / "s2.csv"
    g.write_text("sequence,target,set\n" + f"{WT},1.0,train\nMKTAYIAKQA,2.0,train\nMKTAYIAKQC,3.0,train\n")
    _bad(
        capsys,
        ["run", "--dataset", str(g), "--wild-type", str(wt_fasta), "--models", "ridge"],
        tmp_path,
        "empty test set",
    )
    for flag, val in [("--max-variants", "0"), ("--max-variants", "-5"), ("--cnn-steps", "0"), ("--bootstrap", "-1")]:
        _bad(capsys, ["run", "--dataset", str(f), flag, val], tmp_path, flag)
    _bad(capsys, ["run", "--dataset", "gb1", "--models", "ridge,magic"], tmp_path, "unknown model")
    _bad(capsys, ["run", "--dataset", "gb1", "--split", "nope", "--models", "ridge"], tmp_path, "not available")
    _bad(capsys, ["run", "--dataset", "gb1", "--out", str(tmp_path / "nodir" / "l.csv")], tmp_path, "does not exist")
    _bad(capsys, ["run", "--dataset", "gb1", "--out", str(tmp_path)], tmp_path, "directory")
    _bad(capsys, ["run", "--dataset", "gb1", "--wild-type", str(wt_fasta)], tmp_path, "csv dataset only")
    _bad(capsys, ["leaderboard", "--datasets", "gb1,unknown"], tmp_path, "unknown dataset")
    out = str(tmp_path / "lb.csv")
    _bad(capsys, ["run", "--dataset", "gb1", "--models", "transformer-pretrained", "--out", out], tmp_path, "MSA")
    bad_wt = tmp_path / "bad.fasta"
    bad_wt.write_text("no header\n")
    _bad(
        capsys,
        ["make-splits", str(f), "--wild-type", str(bad_wt), "--out", str(tmp_path / "o.csv")],
        tmp_path,
        "not fasta",
    )


def test_synthetic_rejects_bad_sizes():
    for kw in ({"L": 0}, {"n_per_wt": -1}, {"noise": float("nan")}, {"noise": -1.0}, {"max_mutations": 50, "L": 10}):
        with pytest.raises(ValueError):
            make_synthetic(**kw)


def test_written_out_choices_match_the_library():
    """cli.py writes the dataset and model names out so that --help loads no pandas; they must not drift."""
    from icml26.flip2 import cli, data, models

    assert cli.DATASETS == ("gb1", *data.MAVENN_SETS, "synthetic")
    assert cli.MODEL_NAMES == models.MODEL_NAMES
