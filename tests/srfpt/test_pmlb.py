"""Real data: the PMLB loader (bundled sets and PMLB's own .tsv.gz format), the held-out split, a smoke search."""

import gzip
import json

import numpy as np
import pytest

from icml26.srfpt import ExhaustiveSR
from icml26.srfpt.cli import main
from icml26.srfpt.data import PMLB_DIR, PMLB_SETS, heldout_split, load_csv, load_pmlb


@pytest.mark.parametrize(
    ("name", "shape"), [("vineyard", (52, 2)), ("esl", (488, 4)), ("pollen", (3848, 4)), ("cpu_act", (1000, 21))]
)
def test_bundled_sets_load_with_their_shapes(name, shape):
    X, y, names = load_pmlb(name)
    assert X.shape == shape and y.shape == (shape[0],) and len(names) == shape[1]
    assert np.isfinite(X).all() and np.isfinite(y).all() and np.var(y) > 0


def test_pmlb_format_read_from_any_path_and_by_pmlb_name(tmp_path):
    *_, names = load_pmlb("192_vineyard")  # PMLB's own spelling
    assert names == ["lugs_1989", "lugs_1990"]
    # a user's full PMLB file: gzip, tab-separated, 'target' last
    path = tmp_path / "123_toy.tsv.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("a\tb\ttarget\n1\t2\t3\n4\t5\t9\n7\t8\t15\n")
    Xt, yt, nt = load_pmlb(path)
    np.testing.assert_array_equal(Xt, [[1, 2], [4, 5], [7, 8]])
    np.testing.assert_array_equal(yt, [3, 9, 15])
    assert nt == ["a", "b"]
    plain = tmp_path / "toy.tsv"
    plain.write_text("a\tb\ttarget\n1\t2\t3\n4\t5\t9\n")
    assert load_csv(plain, "target")[0].shape == (2, 2)


def test_bad_pmlb_inputs_get_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="neither a bundled PMLB set"):
        load_pmlb("no-such-set")
    bad = tmp_path / "x.tsv.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="gzip"):
        load_pmlb(bad)
    (tmp_path / "y.tsv.gz").write_bytes(gzip.compress(b"a\tb\n1\t2\n3\t4\n"))
    with pytest.raises(ValueError, match="target column"):
        load_pmlb(tmp_path / "y.tsv.gz")


def test_heldout_split_is_a_seeded_partition():
    train, test = heldout_split(100, 0.25, seed=3)
    assert len(test) == 25 and len(np.intersect1d(train, test)) == 0 and len(np.union1d(train, test)) == 100
    again = heldout_split(100, 0.25, seed=3)
    assert np.array_equal(train, again[0]) and not np.array_equal(test, heldout_split(100, 0.25, seed=4)[1])
    for bad in (0.0, 1.0, 0.001):
        with pytest.raises(ValueError):
            heldout_split(100, bad)


def test_smoke_search_on_real_esl_generalises():
    """Size-5 exhaustive search on ESL (488 x 4, integer ratings): the held-out R^2 of the selected model beats the
    best single-feature linear model (the size-1 point of its own front) -- 0.85 vs 0.69 on this split."""
    X, y, names = load_pmlb("esl")
    train, test = heldout_split(len(y), 0.25, seed=0)
    model = ExhaustiveSR(max_size=5).fit(X[train], y[train], names)
    r2 = model.score(X[test], y[test])
    lin = ExhaustiveSR(max_size=1).fit(X[train], y[train], names).score(X[test], y[test])
    assert r2 > 0.8 and r2 > lin + 0.1
    assert {str(s) for s in model.expression_.free_symbols} <= set(names)


def test_cli_sample_pmlb_and_search_with_a_heldout_split(tmp_path, capsys):
    csv = tmp_path / "v.csv"
    assert main(["sample", "pmlb-vineyard", "--out", str(csv)]) == 0
    assert (
        main(["search", str(csv), "--max-size", "3", "--test-fraction", "0.25", "--json", str(tmp_path / "f.json")])
        == 0
    )
    out = json.loads((tmp_path / "f.json").read_text())
    assert out["train_rows"] + out["test_rows"] == 52 and all("test_r2" in p for p in out["pareto"])
    capsys.readouterr()
    # PMLB's .tsv.gz read directly, without a --target (PMLB's column is 'target')
    assert main(["search", str(PMLB_DIR / PMLB_SETS["vineyard"]), "--max-size", "3", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["best_size"] >= 1
    with pytest.raises(ValueError, match="noise"):
        main(["sample", "pmlb-esl", "--noise", "0.1", "--out", str(tmp_path / "e.csv")])
    with pytest.raises(ValueError, match="rows"):
        main(["sample", "pmlb-esl", "-n", "100000", "--out", str(tmp_path / "e.csv")])


def test_cli_refuses_json_equal_to_the_input(tmp_path, capsys):
    csv = tmp_path / "v.csv"
    main(["sample", "pmlb-vineyard", "--out", str(csv)])
    before = csv.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["search", str(csv), "--max-size", "3", "--json", str(csv)])
    assert exc.value.code == 2 and "overwrite" in capsys.readouterr().err
    assert csv.read_bytes() == before
