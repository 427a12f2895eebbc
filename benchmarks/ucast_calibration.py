"""What brings U-Cast's spread-skill ratio to 1 at laptop scale: stage-2 knobs the paper names, one at a time.

From the same stage-1 model per seed (``small`` preset), stage 2 is re-run with: the preset (M = 2 members in
the fair CRPS, dropout 0.1, the preset's steps), M = 4 members, twice the steps, and a stage-2 dropout rate
of 0.2 and 0.3 (stage 1 keeps 0.1; the ensembles use the stage-2 rate). Reported per try and seed: the
late-lead (leads > 2) SSR, CRPS and ensemble-mean RMSE of the stage-2 ensemble, and the same for stage-1 MC
dropout. Usage: ``python benchmarks/ucast_calibration.py [--seeds 0 1] [--preset small]``; JSON in
``benchmarks/results/ucast_calibration.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.ucast.data import latitude_weights
from icml26.ucast.experiment import _FORECAST_SEED, _init_indices, stage1, stage2
from icml26.ucast.forecast import rollout
from icml26.ucast.metrics import ensemble_scores

TRIES = {
    "preset (M=2, dropout 0.1)": {},
    "M=4 members in the CRPS loss": {"members": 4},
    "2x stage-2 steps": {"steps": "double"},
    "stage-2 dropout 0.2": {"dropout": 0.2},
    "stage-2 dropout 0.3": {"dropout": 0.3},
}
SKIP = 2


def late_scores(s1, model, seed: int) -> dict[str, float]:
    p = s1.preset
    idx = _init_indices(s1.z_test.shape[0], s1.z_test.shape[1], p.eval_steps, p.n_inits)
    b, t = idx[:, 0], idx[:, 1]
    truth = np.stack([s1.z_test[b, t + k] for k in range(1, p.eval_steps + 1)], axis=1)
    torch.manual_seed(_FORECAST_SEED + 1_000 * seed)
    fc = rollout(
        model,
        torch.as_tensor(s1.z_test[b, t - 1]),
        torch.as_tensor(s1.z_test[b, t]),
        p.eval_members,
        p.eval_steps,
        dropout=True,
    )
    sc = ensemble_scores(fc.transpose(1, 2).numpy(), truth, latitude_weights(s1.lat))
    return {k: float(sc[k].mean(axis=-1)[SKIP:].mean()) for k in ("ssr", "crps", "rmse")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--preset", default="small")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "ucast_calibration.json"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        s1 = stage1(args.preset, seed)
        base = late_scores(s1, s1.det, seed)
        rows.append({"seed": seed, "try": "stage 1 + MC dropout", **base, "seconds": time.perf_counter() - t0})
        print(rows[-1], flush=True)
        for name, kw in TRIES.items():
            kw = dict(kw)
            if kw.get("steps") == "double":
                kw["steps"] = 2 * s1.preset.prob.steps
            t0 = time.perf_counter()
            model, _, _ = stage2(args.preset, seed, "crps", **kw)
            rows.append(
                {"seed": seed, "try": name, **late_scores(s1, model, seed), "seconds": time.perf_counter() - t0}
            )
            print(rows[-1], flush=True)
            stage2.cache_clear()
    summary = {}
    for name in ["stage 1 + MC dropout", *TRIES]:
        sel = [r for r in rows if r["try"] == name]
        summary[name] = {k: float(np.mean([r[k] for r in sel])) for k in ("ssr", "crps", "rmse")}
    out = {
        "preset": args.preset,
        "seeds": args.seeds,
        "rows": rows,
        "mean_over_seeds": summary,
        "note": "2-core shared CPU, one thread; seconds are noisy",
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    for name, v in summary.items():
        print(f"{name:32s} SSR {v['ssr']:.3f}  CRPS {v['crps']:.4f}  RMSE {v['rmse']:.4f}")


if __name__ == "__main__":
    main()
