"""Tiny working invocations of every ``icml26 brainconverge`` verb, mutated by ``tests/cli_harness.py``.

Fixtures in ``tests/brainconverge/data`` (regenerate with ``make_fixtures.py`` there): ``zoo.pt`` (4 MLPs of
width 8 on digits, two with per-epoch checkpoints), ``brain.npz`` (a synthetic brain on the zoo's 40 stimuli)
and ``table.csv`` (the alignment table of the two); ``language`` reads the shipped Alice fMRI bundle.
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"

EXAMPLES = [
    ["zoo", "--models", "1", "--n-stim", "20", "--n-test", "20", "--seed", "3", "--out", "{tmp}/zoo.pt"],
    ["brain", "--n-stim", "20", "--n-test", "20", "--voxels", "5", "--epochs", "1", "--out", "{tmp}/brain.npz"],
    ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--out", "{tmp}/t.csv"],
    [
        "align",
        "--zoo",
        str(DATA / "zoo.pt"),
        "--brain",
        str(DATA / "brain.npz"),
        "--metric",
        "mutual-knn",
        "--k",
        "5",
        "--out",
        "{tmp}/t.parquet",
    ],
    ["granger", "--trajectories", str(DATA / "table.csv"), "--maxlag", "1", "--json", "{tmp}/g.json"],
    ["report", "--table", str(DATA / "table.csv"), "--json", "{tmp}/r.json", "--plot", "{tmp}/r.png"],
    # real fMRI: one tiny GPT-2 trained for 4 steps, 2 listeners
    [
        "language",
        "--model",
        "zoo",
        "--widths",
        "16",
        "--depths",
        "1",
        "--steps",
        "4",
        "--subjects",
        "2",
        "--json",
        "{tmp}/lang.json",
    ],
]
