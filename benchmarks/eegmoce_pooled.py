"""Does MoCE learn when the inputs are z-scored over all subjects pooled (the domain-BN claim's setting)?

    python benchmarks/eegmoce_pooled.py [--seed 0] [--out benchmarks/results/eegmoce_pooled.json]

The shipped EEGMAT subset (12 subjects x 30 windows of 4 s, rest vs mental arithmetic) z-scored over all subjects
pooled (``load_eegmat(normalise="global")``: each subject keeps its own offsets and scales), GroupKFold(4) over
subjects (``--seed``). The two arms of ``eegmat-domain-bn-helps-v3`` at the claims' ``small`` budget (MoCE's
tuned (lr, epochs), ``config.TUNED``): MoCE with domain BN refitted on each held-out subject's unlabeled windows,
and MoCE with pooled BN statistics; beside them the fitted HRV rules on the same pooled inputs (which lose the
per-subject midpoint that "heart rate above 0" exploits under per-subject z-scoring). One seed of folds: a check
that the claim's arms learn, not a verdict.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.eegmoce.config import PRESETS, TUNED
from icml26.eegmoce.eegmat import load_eegmat
from icml26.eegmoce.model import ModelConfig, TrainConfig, cross_validate, folds, rule_cv

torch.set_num_threads(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the folds and initialisations")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "eegmoce_pooled.json"))
    a = ap.parse_args()
    cfg = PRESETS["small"]
    d, _ = load_eegmat(normalise="global")
    lr, epochs = TUNED["moce"]
    tcfg = TrainConfig(
        epochs=epochs,
        lr=lr,
        curvature_lr_scale=cfg.curvature_lr_scale,
        warmup_epochs=cfg.warmup_epochs,
        domains_per_batch=cfg.domains_per_batch,
        trials_per_domain=cfg.trials_per_domain,
    )
    out: dict = {"data": "EEGMAT subset, 12 subjects, pooled z-scoring", "seed": a.seed, "lr": lr, "epochs": epochs}
    out["arms"] = {}
    for arm in ("moce", "moce-no-dbn"):
        t0 = time.perf_counter()
        res = cross_validate(d, arm, ModelConfig(), tcfg, cv=cfg.cv, n_folds=cfg.folds, seed=a.seed)
        out["arms"][arm] = {
            "test_ba": res.balanced_accuracy,
            "test_ba_mean": float(np.mean(res.balanced_accuracy)),
            "seconds": time.perf_counter() - t0,
        }
        print(arm, out["arms"][arm], flush=True)
    splits = folds(d, cfg.cv, cfg.folds, a.seed)
    for rule in ("hr-stump", "hrv-logreg"):
        ba = rule_cv(d, splits, rule)
        out["arms"][rule] = {"test_ba": ba, "test_ba_mean": float(np.mean(ba))}
        print(rule, out["arms"][rule], flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
