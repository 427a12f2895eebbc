"""Tiny working invocations of every ``icml26 zolangevin`` verb, mutated by ``tests/cli_harness.py``.

Run in order in one work directory (``{tmp}``): ``train-prior`` writes the prior ``invert`` reads and
``sample`` the state file. Sizes are smoke sizes (8 x 8 shapes, 20 training steps, 2 chains).
"""

EXAMPLES = [
    [
        "sample",
        "--target",
        "gmm:d=2",
        "--queries",
        "4000",
        "--chains",
        "10",
        "--step",
        "0.1",
        "--b",
        "2",
        "--q",
        "2",
        "--seed",
        "0",
        "--out",
        "{tmp}/x.npy",
    ],
    ["train-prior", "--data", "shapes", "--size", "8", "--steps", "20", "--width", "16", "--out", "{tmp}/prior.pt"],
    ["invert", "--prior", "{tmp}/prior.pt", "--chains", "2", "--sigma-y", "0.1", "--out", "{tmp}/inv.npz"],
]
