"""Tiny working invocations of every ``icml26 qhflow2`` verb, mutated by ``tests/cli_harness.py``.

They run in order: ``build-dataset`` writes the data the others read, ``train`` the checkpoints; the MACE example
joins them where the optional peer ``mace-torch`` is installed.
"""

import importlib.util

EXAMPLES = [
    ["build-dataset", "--molecule", "water", "--frames", "3", "--basis", "sto-3g", "--xc", "hf", "--temperature",
     "300", "--seed", "0", "--out", "{tmp}/w.npz", "--xyz-out", "{tmp}/w.xyz"],
    ["train", "--data", "{tmp}/w.npz", "--model", "so2", "--steps", "2", "--batch", "2", "--channels", "4",
     "--lmax", "1", "--layers", "1", "--lr", "0.003", "--edge-update", "tp", "--out", "{tmp}/so2.pt", "--json",
     "{tmp}/train.json"],
    ["train", "--data", "{tmp}/w.npz", "--model", "mlip", "--steps", "1", "--channels", "4", "--lmax", "1",
     "--out", "{tmp}/mlip.pt"],
    ["train", "--data", "{tmp}/w.npz", "--model", "tp", "--matched", "--eps-weight", "1", "--eps-from", "0.5",
     "--steps", "1", "--channels", "4", "--lmax", "1", "--layers", "1", "--out", "{tmp}/tp.pt"],
    ["evaluate", "--checkpoint", "{tmp}/so2.pt", "--data", "{tmp}/w.npz", "--frames", "1", "--json", "{tmp}/e.json"],
    ["predict", "{tmp}/w.xyz", "--checkpoint", "{tmp}/so2.pt", "--unit", "angstrom", "--out", "{tmp}/p.npz",
     "--json", "{tmp}/p.json"],
]  # fmt: skip

if importlib.util.find_spec("mace") is not None:  # the optional MLIP peer (mace-torch)
    EXAMPLES.insert(4, ["train", "--data", "{tmp}/w.npz", "--model", "mace", "--steps", "1", "--batch", "2",
                        "--channels", "4", "--lr", "0.01", "--seed", "1", "--out", "{tmp}/mace.pt"])  # fmt: skip
