"""Tiny working invocations of every ``icml26 slmbrain`` verb, mutated by ``tests/cli_harness.py``.

Fixtures in ``tests/slmbrain/data`` were written by the package itself (``simulate --scale tiny`` and
``features --scale tiny --model student:4``): ``world.npz`` (4 stories, 20 voxels, 2 test repeats),
``words.csv`` (word,onset) and ``features.npy`` (3 layers, n_TR, 4).
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"
W, CSV, F = str(DATA / "world.npz"), str(DATA / "words.csv"), str(DATA / "features.npy")

EXAMPLES = [
    ["simulate", "--scale", "tiny", "--seed", "1", "--out", "{tmp}/w.npz", "--timings", "{tmp}/w.csv"],
    ["features", "--scale", "tiny", "--model", "student:4", "--timings", CSV, "--tr-times", W, "--out", "{tmp}/f.npy"],
    ["encode", "--features", F, "--fmri", W, "--alphas", "0,5,6", "--json", "{tmp}/e.json", "--out", "{tmp}/r.npy"],
    [
        "compress",
        "--scale",
        "tiny",
        "--model",
        "student:4",
        "--method",
        "gptq",
        "--bits",
        "4",
        "--json",
        "{tmp}/c.json",
    ],
    ["compress", "--scale", "tiny", "--model", "student:4", "--method", "wanda", "--sparsity", "0.5"],
    ["probe", "--scale", "tiny", "--model", "student:4", "--json", "{tmp}/p.json"],
    [
        "alice",
        "--model",
        "student:4",
        "--steps",
        "5",
        "--subjects",
        "2",
        "--layers",
        "0,1",
        "--json",
        "{tmp}/a.json",
        "--out",
        "{tmp}/a.npz",
    ],
]
