"""Tiny working invocations of every ``icml26 gpm`` verb, mutated by ``tests/cli_harness.py``.

Run in order with ``{tmp}`` replaced by a work directory: ``calibrate`` fits a bank to the 80 x 8 response
CSV kept in ``tests/gpm/data`` (made with ``icml26.gpm.data.simulate(80, 8, default_rng(0))``), ``train``
writes a policy that ``simulate`` uses, and ``session`` reads its answers from ``tests/gpm/data/answers.txt``.
Each takes a few seconds on one core.
"""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
RESPONSES = str(DATA / "responses.csv")

EXAMPLES = [
    ["real-data", "icar-ability", "--path", RESPONSES, "--out", "{tmp}/icar.csv"],
    ["calibrate", RESPONSES, "--model", "2pl", "--dims", "1", "--out", "{tmp}/bank.csv"],
    [
        "train",
        "--bank",
        "{tmp}/bank.csv",
        "--responses",
        RESPONSES,
        "--length",
        "3",
        "--epochs",
        "1",
        "--seed",
        "1",
        "--out",
        "{tmp}/policy.pt",
    ],
    [
        "simulate",
        "--bank",
        "{tmp}/bank.csv",
        "--policy",
        "{tmp}/policy.pt",
        "--selector",
        "random,mfi,gpm",
        "--length",
        "3",
        "--examinees",
        "20",
        "--epochs",
        "1",
        "--seed",
        "1",
    ],
    [
        "session",
        "--bank",
        "{tmp}/bank.csv",
        "--max-items",
        "3",
        "--se",
        "0.3",
        "--seed",
        "1",
        "--answers",
        str(DATA / "answers.txt"),
    ],
]
