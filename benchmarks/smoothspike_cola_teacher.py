"""CoLA teacher recipe search (issue 48): can the non-spiking MiniLM-L6 teacher of the GLUE claims learn CoLA within the
students' budget? Each recipe fine-tunes the teacher on the shipped CoLA training subset minus the claims' 400
validation items and scores Matthews correlation on those validation items -- carved from CoLA's TRAIN subset, the
dev set is never read.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/smoothspike_cola_teacher.py 3e-5:100 1e-4:100 1e-4:100:balanced

A recipe is ``lr:steps[:balanced]`` (batch 16, warm-up steps // 10, frozen word embeddings, as in the claims).
Writes benchmarks/results/smoothspike_cola_teacher.json (one row per recipe).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from icml26.smoothspike.claims import _finetune_config, _glue_split
from icml26.smoothspike.config import PRESETS
from icml26.smoothspike.data import Tokenizer, task_metrics
from icml26.smoothspike.model import MiniLMClassifier
from icml26.smoothspike.train import finetune, predict

OUT = Path(__file__).parent / "results" / "smoothspike_cola_teacher.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipes", nargs="+", help="lr:steps or lr:steps:balanced")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = Tokenizer()
    train, val, _ = _glue_split("small", "cola")  # the claims' split; the dev part is not used
    base = _finetune_config(PRESETS["small"])
    rows = []
    for recipe in args.recipes:
        lr, steps, *rest = recipe.split(":")
        weight = rest[0] if rest else None
        fc = replace(base, lr=float(lr), steps=int(steps), warmup=max(1, int(steps) // 10), class_weight=weight)
        t0 = time.perf_counter()
        model = MiniLMClassifier(PRESETS["small"].teacher_layers, 2, PRESETS["small"].glue_max_len[1], seed=0)
        losses = finetune(model, train, tok, fc, seed=0)
        pred = predict(model, val, tok)
        m = task_metrics(val, pred)
        rows.append({"lr": fc.lr, "steps": fc.steps, "class_weight": weight, "val matthews": m["matthews"],
                     "val accuracy": m["accuracy"], "predicted acceptable": float(pred.mean()),
                     "val acceptable": float(val.labels.mean()), "loss, last 10 steps": float(np.mean(losses[-10:])),
                     "seconds": time.perf_counter() - t0})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
