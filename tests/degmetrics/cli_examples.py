"""Tiny working invocations of every ``icml26 degmetrics`` verb, mutated by ``tests/cli_harness.py``.

Run in order with ``{tmp}`` replaced by a work directory: the two ``simulate`` calls write the observed and
the predicted screens that ``score`` and ``baselines`` read. Each finishes in about two seconds on one core.
"""

SIM = ["--preset", "smoke", "--genes", "60", "--control-cells", "40", "--perturbations", "4", "--cells", "12"]

EXAMPLES = [
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
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
        "--pred-scale",
        "counts",
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
