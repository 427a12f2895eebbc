"""Tiny working invocations of every ``icml26 dualflow`` verb, mutated by ``tests/cli_harness.py``.

Run in order with ``{tmp}`` replaced by a work directory: ``generate`` writes the trials that ``fit`` learns
from and that ``embed`` / ``simulate`` read with the fitted checkpoint. Each takes a second or two on one core.
"""

EXAMPLES = [
    ["generate", "lorenz", "--trials", "4", "--time", "20", "--neurons", "6", "--out", "{tmp}/spikes.npz"],
    ["generate", "video", "--trials", "2", "--time", "5", "--out", "{tmp}/video.npz"],
    [
        "fit",
        "{tmp}/spikes.npz",
        "--key",
        "smoothed",
        "--preset",
        "smoke",
        "--steps",
        "20",
        "--budget",
        "3",
        "--history",
        "2",
        "--out",
        "{tmp}/model.pt",
    ],
    [
        "embed",
        "{tmp}/model.pt",
        "{tmp}/spikes.npz",
        "--key",
        "smoothed",
        "--components",
        "2",
        "--out",
        "{tmp}/latents.npy",
    ],
    [
        "simulate",
        "{tmp}/model.pt",
        "{tmp}/spikes.npz",
        "--key",
        "smoothed",
        "--frames",
        "3",
        "--tau",
        "0.5",
        "--out",
        "{tmp}/forecast.npy",
    ],
]
