"""Issue 20 for srfpt: sizes bounded up front, outputs are the files named, loaders name the file and cause."""

import networkx as nx
import pytest

from icml26.srfpt.cli import MAX_REDUCTION_TREES, main


@pytest.mark.parametrize(
    "argv",
    [
        ["count", "--max-size", "100000"],
        ["count", "--max-depth", "40"],
        ["search", "data.csv", "--target", "y", "--max-size", "1e12"],
        ["sample", "nguyen-1", "--out", "x.csv", "-n", "1e12"],
        ["sample", "nguyen-1", "--out", "x.csv", "--noise", "nan"],
        ["reduce-clique", "--graph", "g.txt", "-k", "-1"],
    ],
)
def test_sizes_and_numbers_refused_at_parse_time(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_reduce_clique_on_k60_refuses_instead_of_hanging(tmp_path):
    graph = tmp_path / "k60.txt"
    nx.write_edgelist(nx.complete_graph(60), graph, data=False)
    with pytest.raises(ValueError, match=f"at most {MAX_REDUCTION_TREES:,}"):
        main(["reduce-clique", "--graph", str(graph), "-k", "4", "--csv", str(tmp_path / "i.csv")])
    assert not (tmp_path / "i.csv").exists()
    small = tmp_path / "k4.txt"
    nx.write_edgelist(nx.complete_graph(4), small, data=False)
    with pytest.raises(ValueError, match="larger than the 4 vertices"):
        main(["reduce-clique", "--graph", str(small), "-k", "5"])


def test_sample_writes_csv_only_to_a_csv_name(tmp_path):
    with pytest.raises(ValueError, match=r"must end with \.csv"):
        main(["sample", "nguyen-1", "--out", str(tmp_path / "a.npy")])
    assert not list(tmp_path.iterdir())
    out = tmp_path / "a.csv"
    assert main(["sample", "nguyen-1", "--out", str(out), "-n", "5"]) == 0
    assert out.read_text().startswith("x,target")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        main(["sample", "nguyen-1", "--out", str(tmp_path / "missing" / "a.csv")])


def test_loaders_name_the_file_and_the_cause(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes("caf\xe9,y\n1,2\n3,4\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.csv: not a UTF-8"):
        main(["search", str(latin), "--target", "y"])
    with pytest.raises(ValueError, match=r"latin\.csv: not a UTF-8"):
        main(["reduce-clique", "--graph", str(latin), "-k", "2"])
    with pytest.raises(IsADirectoryError, match="is a directory"):
        main(["search", str(tmp_path), "--target", "y"])
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        main(["reduce-clique", "--graph", str(empty), "-k", "2"])
