"""Tiny working invocations of every ``icml26 smoothspike`` verb, mutated by ``tests/cli_harness.py``.

They run in order: ``finetune`` writes the checkpoint the others read. Data: the synthetic pair task (no file).
"""

EXAMPLES = [
    ["finetune", "--task", "synthetic-pair", "--rotation", "learnable", "--dim", "16", "--heads", "2", "--layers", "1",
     "--T", "2", "--max-len", "16", "--steps", "2", "--batch", "8", "--lr", "0.002", "--train-size", "32",
     "--test-size", "16", "--seed", "1", "--out", "{tmp}/model.pt", "--json", "{tmp}/finetune.json"],
    ["analyze", "--checkpoint", "{tmp}/model.pt", "--sentences", "4", "--max-len", "12", "--test-size", "16",
     "--json", "{tmp}/analyze.json"],
    ["fuse", "--checkpoint", "{tmp}/model.pt", "--out", "{tmp}/fused.pt", "--json", "{tmp}/fuse.json"],
]  # fmt: skip
