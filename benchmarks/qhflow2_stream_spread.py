"""How much of the energy error from a predicted Hamiltonian is initialisation noise.

    python benchmarks/qhflow2_stream_spread.py [--seeds 7000-7005] [--streams 4] [--json PATH|-]

At one fixed setting of the SO(2) model (lr 3e-2, 8 channels, the point the tuned claims chose on every judged
seed; the `small` preset: water HF/STO-3G, 100 train / 20 test frames, 300 steps of 8 frames), each seed's split is
trained from ``--streams`` independent seed streams (stream k: initialisation and minibatch order from seed +
10,000 k, as the claims' A/A replicates) and scored on the test frames: H MAE and E MAE (PySCF energy at the
predicted density). Stream 0 is the model the tuned claims judge. Printed per seed: each stream's H and E error and
stream 0's rank on E among the streams. No learning rate, width or threshold is chosen here. One torch thread.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from icml26.qhflow2 import claims as C
from icml26.qhflow2.train import evaluate_h_model

LR, CHANNELS = 3e-2, 8


def seed_range(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--seeds", type=seed_range, default=seed_range("7000-7005"), help="a seed or a range, e.g. 7000-7005"
    )
    ap.add_argument("--streams", type=int, default=4, help="independent seed streams per seed (>= 2)")
    ap.add_argument("--json", help="write the numbers as JSON to PATH, or - for stdout")
    args = ap.parse_args()
    if args.streams < 2:
        ap.error("--streams must be at least 2")
    torch.set_num_threads(1)
    rows = []
    for seed in args.seeds:
        _, test = C._split("small", seed)
        errs = [
            evaluate_h_model(C._grid_model("small", seed, "so2", LR, CHANNELS, k), test) for k in range(args.streams)
        ]
        h = [e["H MAE [uHa]"] / 1e3 for e in errs]  # mHa
        e_mev = [e["E MAE [meV]"] for e in errs]
        rank = 1 + sum(x < e_mev[0] for x in e_mev[1:])
        rows.append({"seed": seed, "H MAE [mHa]": h, "E MAE [meV]": e_mev, "stream 0 rank on E": rank})
        print(
            f"seed {seed}: H {' / '.join(f'{x:.2f}' for x in h)} mHa, E {' / '.join(f'{x:.1f}' for x in e_mev)} meV, "
            f"stream 0 rank {rank} of {args.streams}",
            flush=True,
        )
    if args.json:
        text = json.dumps({"lr": LR, "channels": CHANNELS, "rows": rows}, indent=1)
        if args.json == "-":
            sys.stdout.write(text + "\n")
        else:
            with open(args.json, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
