"""Tiny working invocations of every ``icml26 spik4lite`` verb, mutated by ``tests/cli_harness.py``.

They run in order: ``train`` writes the dense checkpoint the others read. Data: scikit-learn's digits (no file).
"""

EXAMPLES = [
    ["train", "--model", "cnn", "--dim", "8", "--T", "2", "--steps", "3", "--train-size", "64", "--test-size", "32",
     "--out", "{tmp}/dense.pt", "--json", "{tmp}/train.json"],
    ["refactor", "--checkpoint", "{tmp}/dense.pt", "--steps", "2", "--finetune-steps", "1", "--fraction", "0.25",
     "--lambda", "0.01", "--threshold", "0.5", "--train-size", "64", "--test-size", "32", "--out", "{tmp}/compact.pt",
     "--export", "{tmp}/compact.pt2", "--json", "{tmp}/refactor.json"],
    ["refactor", "--checkpoint", "{tmp}/dense.pt", "--method", "l1", "--fraction", "0.5", "--finetune-steps", "1",
     "--train-size", "64", "--test-size", "32", "--out", "{tmp}/l1.pt"],
    ["profile", "--checkpoint", "{tmp}/compact.pt", "--compare", "{tmp}/dense.pt", "--batch-sizes", "1,4",
     "--threads", "1", "--repeats", "2", "--json", "{tmp}/profile.json"],
]  # fmt: skip
