"""Tiny working invocations of every ``icml26 noisypower`` verb, mutated by ``tests/cli_harness.py``.

The 12 x 12 symmetric PSD matrix (``tests/noisypower/data/matrix.npy``, eigengap 0.5) is a fixture.
"""

from pathlib import Path

MATRIX = str(Path(__file__).parent / "data" / "matrix.npy")

EXAMPLES = [
    ["pca", MATRIX, "-k", "2", "--tol", "1e-6", "--max-iter", "500", "--json", "{tmp}/pca.json"],
    ["pca", MATRIX, "-k", "2", "--method", "npm", "--beta", "0.1", "--seed", "1", "--out", "{tmp}/basis.npy"],
    ["pca", MATRIX, "-k", "1", "--method", "eigsh", "--tol", "1e-8"],
    [
        "decentralized",
        "--nodes",
        "4",
        "--graph",
        "erdos-renyi",
        "--edge-prob",
        "0.9",
        "--dim",
        "8",
        "-k",
        "2",
        "--gap",
        "0.5",
        "--heterogeneity",
        "0.1",
        "--rounds",
        "8",
        "--tol",
        "1e-4",
        "--max-iter",
        "300",
        "--seed",
        "0",
        "--json",
        "{tmp}/dec.json",
    ],
]
EXAMPLES += [
    ["pca", "--suitesparse", "mbeacxc", "--gram", "-k", "1", "--tol", "1e-4", "--json", "{tmp}/mb.json"],
    [
        "decentralized",
        "--suitesparse",
        "mbeacxc",
        "--nodes",
        "4",
        "--graph",
        "ring",
        "-k",
        "1",
        "--rounds",
        "4",
        "--tol",
        "1e-3",
        "--max-iter",
        "100",
    ],
]
