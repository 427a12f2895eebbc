"""The CLI verbs, end to end on small inputs."""

import json

import pytest

from icml26.srfpt.cli import main


def test_sample_then_search_json(tmp_path, capsys):
    data = tmp_path / "n5.csv"
    assert main(["sample", "nguyen-10", "--out", str(data), "-n", "60", "--seed", "3"]) == 0
    capsys.readouterr()
    assert main(["search", str(data), "--target", "target", "--max-size", "5", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["best"] == "2*sin(x)*cos(y)" and out["best_size"] == 5
    assert out["pareto"][-1]["mse"] < 1e-20


def test_count_recurrence_and_distinct(capsys):
    assert main(["count", "--max-size", "9", "--ops", "sin,cos,add,sub,mul,div", "--vars", "1", "--json", "-"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[8] == {"size": 9, "trees": 1004032}
    assert main(["count", "--max-size", "5", "--vars", "1", "--distinct", "--json", "-"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["distinct"] <= r["trees"] for r in rows)
    assert main(["count", "--max-depth", "2", "--ops", "add", "--vars", "1", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)[-1] == {"depth<=": 2, "trees": 2 + 6 * 6}


def test_reduce_clique(tmp_path, capsys):
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 0\n2 3\n")
    assert main(["reduce-clique", "--graph", str(g), "-k", "3", "--json", "-", "--csv", str(tmp_path / "i.csv")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sr_solvable"] and out["clique_exists"] and out["min_sse"] == pytest.approx(out["tau"])
    assert main(["reduce-clique", "--graph", str(g), "-k", "4", "--json", "-"]) == 0
    assert not json.loads(capsys.readouterr().out)["sr_solvable"]


def test_bad_input_raises_value_error(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,2\n2,4\n3,6\n")
    with pytest.raises(ValueError, match="target column"):
        main(["search", str(data), "--target", "z"])
    with pytest.raises(ValueError, match="unknown operator"):
        main(["search", str(data), "--target", "y", "--ops", "add,hyperbolic"])
    with pytest.raises(ValueError, match="max_trees"):
        main(["search", str(data), "--target", "y", "--max-size", "13"])
    with pytest.raises(ValueError, match="--force"):
        main(["count", "--max-size", "13", "--distinct"])
    with pytest.raises(ValueError, match="constants"):
        main(["count", "--constants", "1,a"])
    with pytest.raises(OSError):
        main(["search", str(tmp_path / "nope.csv"), "--target", "y"])


def test_json_goes_to_a_file_and_the_table_to_the_terminal(tmp_path, capsys):
    out = tmp_path / "count.json"
    assert main(["count", "--max-size", "3", "--vars", "1", "--json", str(out)]) == 0
    assert "labelled trees" in capsys.readouterr().out
    assert json.loads(out.read_text())[-1]["size"] == 3
    with pytest.raises(FileNotFoundError, match="does not exist"):
        main(["count", "--max-size", "3", "--json", str(tmp_path / "missing" / "c.json")])


def test_written_out_operator_names_match_the_primitives():
    """cli.py writes the operator names out so that --help loads no sympy; they must not drift."""
    from icml26.srfpt import cli, primitives

    assert cli.OPS == tuple(primitives.PRIMITIVES) and cli.DEFAULT_OPS == primitives.DEFAULT_OPS
