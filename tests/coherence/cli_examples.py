"""Tiny working invocations of every ``icml26 coherence`` verb, mutated by ``tests/cli_harness.py``.

Fixtures in ``tests/coherence/data`` (see its README): 40 coherent arc codes on the circle, their angles and
their chord distances.
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"
CODES, THETA, DIST = (str(DATA / f) for f in ("codes.npy", "theta.npy", "distances.npy"))

EXAMPLES = [
    ["fit", "--data", "circle", "-n", "64", "--steps", "5", "--features", "4", "--out", "{tmp}/c.npz"],
    [
        "fit",
        "--data",
        "circle",
        "-n",
        "64",
        "--steps",
        "5",
        "--penalty",
        "l1",
        "--lam",
        "0.01",
        "--json",
        "{tmp}/f.json",
    ],
    ["fit", "--data", "rotated-mnist", "-n", "36", "--steps", "3", "--features", "4", "--json", "{tmp}/m.json"],
    ["score", CODES, "--positions", THETA, "--geometry", "circular", "--r-col", "1.5", "--json", "{tmp}/s.json"],
    ["score", CODES, "--distances", DIST, "--topology"],
]
