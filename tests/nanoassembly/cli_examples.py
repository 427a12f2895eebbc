"""Tiny working invocations of every ``icml26 nanoassembly`` verb, mutated by ``tests/cli_harness.py``.

Run in order in one work directory (``{tmp}``): ``plan`` writes the plans the later verbs read, ``train-agent``
the agent ``assemble`` uses. The CSV site files are fixtures in ``tests/nanoassembly/data``.
"""

from pathlib import Path

DATA = Path(__file__).parent / "data"

EXAMPLES = [
    ["plan", "--target", "block:4", "--molecules", "random:6", "--seed", "1", "--out", "{tmp}/plan.json"],
    [
        "plan",
        "--target",
        str(DATA / "target.csv"),
        "--molecules",
        str(DATA / "molecules.csv"),
        "--size",
        "12x12",
        "--half-width",
        "0.5",
        "--tips",
        "2",
        "--out",
        "{tmp}/plan-csv.json",
    ],
    ["verify", "{tmp}/plan.json"],
    ["train-agent", "--episodes", "20", "--seed", "0", "--out", "{tmp}/agent.npz"],
    ["assemble", "--plan", "{tmp}/plan.json", "--agent", "{tmp}/agent.npz", "--seed", "0"],
    ["assemble", "--plan", "{tmp}/plan-csv.json", "--render", "{tmp}/last.png"],
]
