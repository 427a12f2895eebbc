"""Tiny working invocations of every ``icml26 srfpt`` verb, mutated by ``tests/cli_harness.py``.

``sample`` writes the CSV ``search`` reads; the edge list for ``reduce-clique`` is a fixture
(``tests/srfpt/data/graph.txt``: a triangle with a pendant vertex).
"""

from pathlib import Path

GRAPH = str(Path(__file__).parent / "data" / "graph.txt")

EXAMPLES = [
    ["sample", "nguyen-1", "--out", "{tmp}/d.csv", "-n", "20", "--noise", "0.01", "--seed", "1"],
    ["search", "{tmp}/d.csv", "--target", "target", "--max-size", "4", "--constants", "1", "--seed", "0"],
    [
        "search",
        "{tmp}/d.csv",
        "--target",
        "target",
        "--max-depth",
        "2",
        "--ops",
        "add,mul",
        "--json",
        "{tmp}/search.json",
    ],
    ["count", "--max-size", "5", "--vars", "2", "--distinct"],
    ["count", "--max-depth", "2", "--json", "-"],
    ["reduce-clique", "--graph", GRAPH, "-k", "3", "--out", "{tmp}/inst.csv"],
]
EXAMPLES += [
    ["sample", "pmlb-vineyard", "--out", "{tmp}/v.csv", "-n", "40", "--seed", "2"],
    ["search", "{tmp}/v.csv", "--max-size", "3", "--test-fraction", "0.25", "--seed", "1", "--json", "{tmp}/v.json"],
]
