"""Tiny working invocations of every ``icml26 behaviorgeo`` verb, mutated by ``tests/cli_harness.py``.

They run in order on the tiny random test model (never SmolLM2): ``run`` writes the trial stores that
``compare`` reads, ``compare`` the JSON that ``report`` reads.
"""

EXAMPLES = [
    ["run", "--model", "tiny", "--paradigm", "fc", "--vocab", "20", "--max-trials", "12", "--batch", "8",
     "--out", "{tmp}/fc", "--json", "{tmp}/fc.json"],
    ["run", "--model", "tiny", "--paradigm", "fc", "--vocab", "20", "--batch", "8", "--resume", "{tmp}/fc"],
    ["run", "--model", "tiny", "--paradigm", "fa", "--vocab", "20", "--runs", "1", "--max-new-tokens", "6",
     "--temperature", "0.7", "--out", "{tmp}/fa"],
    ["compare", "--trials", "{tmp}/fc", "{tmp}/fa", "--model", "tiny", "--strategy", "meaning", "--baselines",
     "none", "--pairs", "100", "--k", "3", "--json", "{tmp}/cmp.json"],
    ["report", "--compare", "{tmp}/cmp.json", "--out", "{tmp}/report.md", "--plot", "{tmp}/rsa.png"],
]  # fmt: skip
