"""slmbrain on real fMRI: GPTQ against RTN where the two differ (SmolLM2-135M's blocks, 4 bits), on the Alice listeners.

On the word-level students the blocks carry almost none of the LM loss, so 3-bit GPTQ and RTN leave them in the
same state (``alice-gptq-differs`` inert). SmolLM2's blocks do carry it (4-bit RTN: +17 % loss), so this is where
the paper's GPTQ exception can be asked: at equal bits and the same per-row grid, does GPTQ lower held-out r more
than RTN does? Both quantise every linear layer of the 30 blocks (embeddings and LM head kept); GPTQ is calibrated
on random 128-token windows of chapters II-XII (the training text, never the scanned chapter I). Output: per
listener r of each model, the paired differences with 95 % t-intervals, LM losses; JSON to ``--out``.

    OMP_NUM_THREADS=1 python benchmarks/slmbrain_alice_gptq.py --calib 8
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
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench", Path(__file__).with_name("slmbrain_alice.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # score(), interval(), book_loss(): the same pipeline as the main benchmark
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/slmbrain_alice_gptq.json"))
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--calib", type=int, default=8, help="calibration windows of 128 tokens")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    story = A.load_alice()
    nc = A.noise_ceiling(story)
    model, tok = A.load_smollm2(True)
    with gzip.open(A.BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
        ids = np.asarray(tok(fh.read())["input_ids"])
    ids = ids[4096:]  # the first 2048 tokens score the LM loss (book_loss): calibrate on the rest
    starts = np.random.default_rng(args.seed).integers(0, len(ids) - 128, args.calib)
    calib = torch.as_tensor(np.stack([ids[s : s + 128] for s in starts]), dtype=torch.long)  # (calib, 128)
    rows = {}
    for label, method in ((f"RTN {args.bits}-bit", "rtn"), (f"GPTQ {args.bits}-bit", "gptq")):
        t = time.perf_counter()
        m = copy.deepcopy(model)
        compress_model(m, method, bits=args.bits, calib=calib if method == "gptq" else None)
        seconds = time.perf_counter() - t
        rows[label] = bench.score(m, tok, story, nc)
        rows[label].pop("_feats")
        rows[label]["compress_seconds"] = seconds
        print(label, {k: rows[label][k] for k in ("r", "r_lo", "r_hi", "lm_loss", "compress_seconds")}, flush=True)
        del m
    rows["SmolLM2-135M"] = bench.score(model, tok, story, nc)
    rows["SmolLM2-135M"].pop("_feats")
    base = np.array(rows["SmolLM2-135M"]["subject_r"])
    r_rtn, r_gptq = (np.array(rows[f"{k} {args.bits}-bit"]["subject_r"]) for k in ("RTN", "GPTQ"))
    result = {
        "bits": args.bits,
        "calibration_windows": args.calib,
        "models": rows,
        "r(RTN) - r(GPTQ)": bench.interval(r_rtn - r_gptq),
        "dr RTN": bench.interval(r_rtn - base),
        "dr GPTQ": bench.interval(r_gptq - base),
        "loss rise RTN": rows[f"RTN {args.bits}-bit"]["lm_loss"] / rows["SmolLM2-135M"]["lm_loss"] - 1,
        "loss rise GPTQ": rows[f"GPTQ {args.bits}-bit"]["lm_loss"] / rows["SmolLM2-135M"]["lm_loss"] - 1,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "models"}, indent=1))


if __name__ == "__main__":
    main()
