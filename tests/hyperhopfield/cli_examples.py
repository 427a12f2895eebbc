"""Tiny working invocations of every ``icml26 hyperhopfield`` verb, mutated by ``tests/cli_harness.py``.

``decode --counts`` reads fixtures in ``tests/hyperhopfield/data``: 5 Gaussian place cells on 20 candidate
positions (``rates.npy`` (20, 5), ``positions.npy`` (20,)) and 3 Poisson count vectors (``counts.npy`` (3, 5)).
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"

EXAMPLES = [
    ["fields", "--recording", "linear-track", "--bins", "20", "--out", "{tmp}/f.npz", "--json", "{tmp}/f.json"],
    ["geometry", "--recording", "w-maze", "--boot", "2", "--null", "2", "--json", "{tmp}/b.json"],
    ["decode", "--recording", "linear-track", "--folds", "3", "--window", "1", "--out", "{tmp}/dec.npy"],
    ["geometry", "--cells", "40", "--pairs", "20", "--seed", "1", "--json", "{tmp}/g.json"],
    ["geometry", "--widths", "constant", "--cells", "30", "--pairs", "10", "--out", "{tmp}/g.png"],
    ["capacity", "--dims", "2", "--radius", "2", "--p-max", "8", "--queries", "20", "--json", "{tmp}/c.json"],
    ["capacity", "--dims", "2", "--radius", "1,2", "--models", "hyperbolic", "--p-max", "4", "--queries", "10"],
    ["decode", "--cells", "10", "--queries", "50", "--seed", "2", "--out", "{tmp}/est.npy", "--json", "{tmp}/d.json"],
    [
        "decode",
        "--counts",
        str(DATA / "counts.npy"),
        "--rates",
        str(DATA / "rates.npy"),
        "--positions",
        str(DATA / "positions.npy"),
        "--out",
        "{tmp}/est2.npy",
    ],
]
