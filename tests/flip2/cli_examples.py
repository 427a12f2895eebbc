"""Tiny working invocations of every ``icml26 flip2`` verb, mutated by ``tests/cli_harness.py``.

Fixtures: ``tests/flip2/data/variants.csv`` (120 synthetic variants of a 20-residue protein; columns
sequence, target) and ``tests/flip2/data/wt.fasta`` (its wild type). Both are made up for the tests (CC0).
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"
VARIANTS, WT = str(DATA / "variants.csv"), str(DATA / "wt.fasta")

EXAMPLES = [
    ["list"],
    ["make-splits", VARIANTS, "--wild-type", WT, "--out", "{tmp}/splits.csv", "--seed", "1"],
    ["run", "--dataset", VARIANTS, "--wild-type", WT, "--models", "ridge,blosum62", "--split", "random",
     "--seed", "0", "--bootstrap", "20", "--max-variants", "100", "--out", "{tmp}/lb.csv", "--json", "{tmp}/r.json"],
    ["leaderboard", "--datasets", "gb1", "--models", "ridge", "--json", "{tmp}/lb.json"],
]  # fmt: skip
