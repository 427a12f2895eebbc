"""behaviorgeo's forced-choice runner in bfloat16 with its element-wise work fused (``runner.compile_elementwise``:
torch.compile of every RMSNorm and gated MLP) against the same runner eager, on one CPU thread, each held against
the bfloat16 compute bound measured in the same run.

    python benchmarks/behaviorgeo_fused.py [--out benchmarks/results/behaviorgeo_fused.json] [--trials 96]
        [--repeats 3]

SmolLM2-135M-Instruct, the 1,060-noun vocabulary, the calibrated ``sum`` scoring the claims run, batches of 32.
The eager and the fused model take turns on the same trials ``--repeats`` times (other jobs share the cores, so
each keeps its best turn); the fused model's compilation is timed apart. FLOPs per trial are counted as in
``behaviorgeo_runner.py`` (``runner.forward_flops``), the bound is the best bfloat16 matmul rate at the model's
own shapes before and after the turns, ``ratio = bound trials/s / measured``. Both bfloat16 runs are compared
with float32 on the same trials: the share of trials with float32's top pick and with its pick pair.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from icml26._util.io import write_json
from icml26.behaviorgeo.data import vocabulary
from icml26.behaviorgeo.lm import load_lm
from icml26.behaviorgeo.runner import compile_elementwise, run_fc_fast

sys.path.insert(0, str(Path(__file__).parent))
from behaviorgeo_runner import matmul_gflops  # the same compute-bound probe as the runner benchmark


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/behaviorgeo_fused.json"))
    ap.add_argument("--trials", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    load = [os.getloadavg()[0]]
    vocab = vocabulary(1060)
    fp32, tok = load_lm("smollm2")
    eager = load_lm("smollm2", dtype=torch.bfloat16)[0]
    fused = load_lm("smollm2", dtype=torch.bfloat16)[0]
    d, ff = fp32.config.hidden_size, fp32.config.intermediate_size

    def bound() -> float:  # GFLOP/s: the best of the model's two matmul shapes
        return max(matmul_gflops(1600, d, ff, torch.bfloat16), matmul_gflops(1600, d, d, torch.bfloat16))

    def run(model, stats=None):
        return run_fc_fast(model, tok, vocab, None, batch=32, max_trials=args.trials, calibrate=True, stats=stats)

    gflops = [bound()]
    run_fc_fast(eager, tok, vocab, None, batch=2, max_trials=2, calibrate=True)  # warm-up (first calls allocate)
    t0 = time.perf_counter()
    compile_elementwise(fused)
    run_fc_fast(fused, tok, vocab, None, batch=32, max_trials=32, calibrate=True)
    compile_s = time.perf_counter() - t0
    best = {"eager": float("inf"), "fused": float("inf")}
    picks, stats = {}, {}
    for _ in range(args.repeats):
        for name, model in (("eager", eager), ("fused", fused)):
            st: dict = {}
            t0 = time.perf_counter()
            picks[name] = run(model, st)
            best[name] = min(best[name], time.perf_counter() - t0)
            stats[name] = st
    gflops.append(bound())
    ref = run(fp32)
    load.append(os.getloadavg()[0])
    bound_gflops = max(gflops)
    rows = {}
    for name in ("eager", "fused"):
        per_trial = stats[name]["flops"] / stats[name]["trials"] / 1e9
        rate = args.trials / best[name]
        df = picks[name]
        top = df.pick1.to_numpy() == ref.pick1.to_numpy()
        rows[f"FC bf16 sum --calibrate, {name}"] = {
            "trials/s": rate,
            "GFLOP/trial": per_trial,
            "achieved GFLOP/s": rate * per_trial,
            "bound trials/s": bound_gflops / per_trial,
            "bound / measured": bound_gflops / per_trial / rate,
            "same top pick as float32": float(top.mean()),
            "same pick pair as float32": float((top & (df.pick2.to_numpy() == ref.pick2.to_numpy())).mean()),
        }
    rows["FC bf16 sum --calibrate, fused"]["speed-up over eager"] = best["eager"] / best["fused"]
    same = picks["eager"].pick1.to_numpy() == picks["fused"].pick1.to_numpy()
    out = {
        "rows": rows,
        "fused vs eager: same top pick": float(np.mean(same)),
        "compile + first batch (s)": compile_s,
        "bf16 bound GFLOP/s (best of before / after)": bound_gflops,
        "bf16 bound GFLOP/s before, after": gflops,
        "trials": args.trials,
        "repeats": args.repeats,
        "load average (1 min) at start, end": load,
        "machine": {
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "threads": 1,
            "torch": torch.__version__,
        },
    }
    write_json(args.out, out)
    for k, r in rows.items():
        print(f"{k}: {r['trials/s']:.2f} trials/s, {r['GFLOP/trial']:.1f} GFLOP/trial, bound/measured "
              f"{r['bound / measured']:.2f}, top pick = fp32 {r['same top pick as float32']:.3f}")  # fmt: skip
    print(f"speed-up {rows['FC bf16 sum --calibrate, fused']['speed-up over eager']:.2f}x; compile {compile_s:.0f} s; "
          f"bound {bound_gflops:.0f} GFLOP/s; load {load}")  # fmt: skip


if __name__ == "__main__":
    main()
