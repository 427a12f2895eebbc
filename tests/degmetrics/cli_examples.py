"""Tiny working invocations of every ``icml26 degmetrics`` verb, mutated by ``tests/cli_harness.py``.

Run in order with ``{tmp}`` replaced by a work directory: the two ``simulate`` calls write the observed and
the predicted screens that ``score`` and ``baselines`` read. Each finishes in about two seconds on one core.
"""

SIM = ["--preset", "smoke", "--genes", "60", "--control-cells", "40", "--perturbations", "4", "--cells", "12"]

#: how ``score`` reads both files: perturbation column, control label, raw counts
COUNTS = ["--perturbation-key", "perturbation", "--control", "control", "--data-scale", "counts"]
COUNTS += ["--pred-scale", "counts"]

DISK = ["--cells", "400", "--genes", "30", "--perturbations", "4", "--chunk-cells", "150", "--p-effect", "0.2"]

EXAMPLES = [
    ["simulate-disk", "--out", "{tmp}/disk.h5ad", *DISK, "--seed", "2"],
    [
        "score",
        "--pred",
        "{tmp}/disk.h5ad",
        "--real",
        "{tmp}/disk.h5ad",
        *COUNTS,
        "--stream",
        "--chunk-cells",
        "100",
        "--out",
        "{tmp}/stream.csv",
    ],
    ["simulate", "--out", "{tmp}/real.h5ad", *SIM, "--doubles", "1", "--gene-source", "gamma", "--p-effect", "0.1"],
    [
        "simulate",
        "--out",
        "{tmp}/pred.h5ad",
        *SIM,
        "--doubles",
        "1",
        "--gene-source",
        "gamma",
        "--fold-change",
        "1.5",
        "--control-bias",
        "0.5",
    ],
    [
        "score",
        "--pred",
        "{tmp}/pred.h5ad",
        "--real",
        "{tmp}/real.h5ad",
        *COUNTS,
        "--out",
        "{tmp}/score.csv",
    ],
    [
        "degs",
        "--real",
        "{tmp}/real.h5ad",
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
        "--out",
        "{tmp}/annotated.h5ad",
    ],
    [
        "baselines",
        "--real",
        "{tmp}/real.h5ad",
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
        "--seed",
        "1",
        "--out",
        "{tmp}/baselines.csv",
    ],
]
