"""slmbrain: GPTQ calibration block by block on cached activations vs one full forward per layer (SmolLM2-135M).

``compress_model`` collects each layer's calibration inputs block by block: the tokens pass the embeddings once,
each block runs on the cached output of the compressed blocks before it, and layers fed the same tensor (q/k/v,
gate/up) share one pass (about 5 passes of one block per block). The reference path runs the whole model once per
layer (210 forwards for SmolLM2's 30 blocks x 7 layers). Both give the same weights (tests/slmbrain/test_math.py);
this script times them on the same calibration windows (chapters II-XII, 128 tokens each) and checks the weights
agree. ``--blocks N`` keeps the first N of the 30 blocks so that the slow path fits in minutes; the per-layer cost
grows with the square of the depth, the block-wise cost linearly. Writes JSON to ``--out``.

    OMP_NUM_THREADS=1 python benchmarks/slmbrain_gptq_speed.py --blocks 6 --calib 8
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.slmbrain import alice as A
from icml26.slmbrain.compress import compress_model

torch.set_num_threads(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/slmbrain_gptq_speed.json"))
    ap.add_argument("--blocks", type=int, default=6, help="first N transformer blocks kept (30: the whole model)")
    ap.add_argument("--calib", type=int, default=8, help="calibration windows of 128 tokens")
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--skip-per-layer", action="store_true", help="time the block-wise path only")
    args = ap.parse_args()
    model, tok = A.load_smollm2(True)
    model.model.layers = model.model.layers[: args.blocks]
    model.config.num_hidden_layers = args.blocks
    if getattr(model.config, "layer_types", None):
        model.config.layer_types = model.config.layer_types[: args.blocks]
    with gzip.open(A.BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
        ids = np.asarray(tok(fh.read())["input_ids"])[4096:]
    starts = np.random.default_rng(0).integers(0, len(ids) - 128, args.calib)
    calib = torch.as_tensor(np.stack([ids[s : s + 128] for s in starts]), dtype=torch.long)  # (calib, 128)
    result = {"blocks": args.blocks, "calibration_windows": args.calib, "bits": args.bits,
              "torch_threads": torch.get_num_threads()}  # fmt: skip
    done = {}
    for label, blockwise in (("block-wise", True), ("per-layer", False)):
        if label == "per-layer" and args.skip_per_layer:
            continue
        m = copy.deepcopy(model)
        t = time.perf_counter()
        compress_model(m, "gptq", bits=args.bits, calib=calib, blockwise=blockwise)
        result[f"{label} seconds"] = time.perf_counter() - t
        done[label] = m
        print(label, f"{result[f'{label} seconds']:.1f} s", flush=True)
    if len(done) == 2:
        a, b = done["block-wise"], done["per-layer"]
        result["max |weight difference|"] = max(
            float((pa - pb).abs().max()) for pa, pb in zip(a.parameters(), b.parameters(), strict=True)
        )
        result["speed-up"] = result["per-layer seconds"] / result["block-wise seconds"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
