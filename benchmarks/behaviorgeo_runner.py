"""behaviorgeo's trial runners on one CPU thread: trials/s of the fast runner against the old one on the same
model, FLOPs per trial, and the compute bound of this CPU measured in the same run.

    python benchmarks/behaviorgeo_runner.py [--out benchmarks/results/behaviorgeo_runner.json] [--model smollm2]

1. **Forced choice**, the 1,060-noun vocabulary, the same trial design (16 candidates):
   - old: ``lm.run_forced_choice`` -- one padded forward pass of each whole prompt (candidates named), batches of
     16, the candidates' first-token log-probabilities;
   - new: ``runner.run_fc_fast`` -- the shared prefix cached once, the trial's own tokens plus every candidate's
     answer tokens packed in one row under a tree mask, batches of 32; ``sum`` (all answer tokens, the default)
     and ``word`` (first token only: the old scoring, like for like), and ``sum`` calibrated (a second,
     content-free-cue branch in the same packed row: what the claims run).
2. **Free association**: old ``lm.run_free_association`` (HF ``generate``, left padding, batches of 16) vs new
   ``runner.run_fa_fast`` (prefix cache, batches of 64); 16 new tokens at most.
3. **Compute bound**: fp32 matmul GFLOP/s of this CPU at the model's own shapes (tokens x hidden times hidden x
   MLP width, and hidden x hidden), best of the repeats, measured right before the runners in the same process;
   bf16 too. FLOPs per trial are counted from the model config and the tokens each forward actually computes
   (``runner.forward_flops``: projections, attention products, the LM head where it is applied), so
   ``bound trials/s = GFLOP/s / GFLOP per trial`` and ``ratio = bound / measured``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from icml26._util.io import write_json
from icml26.behaviorgeo.data import vocabulary
from icml26.behaviorgeo.lm import (
    FC_WORD_PROMPT,
    _chat,
    fc_prompt,
    load_lm,
    run_forced_choice,
    run_free_association,
)
from icml26.behaviorgeo.runner import forward_flops, run_fa_fast, run_fc_fast
from icml26.behaviorgeo.subject import fc_trials


def matmul_gflops(m: int, k: int, n: int, dtype: torch.dtype, repeats: int = 7) -> float:
    a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(5):
            a @ b
        best = min(best, (time.perf_counter() - t0) / 5)
    return 2 * m * k * n / best / 1e9


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def legacy_fc_flops(model, tok, vocab, trials: list[int]) -> float:
    """FLOPs of the old runner on these trials: every prompt whole (padded to its batch of 16), one logit row."""
    cues, cands = fc_trials(len(vocab), 16, 1, 0)
    total = 0.0
    for s in range(0, len(trials), 16):
        lens = [len(tok(_chat(tok, fc_prompt(vocab[cues[t]], [vocab[c] for c in cands[t]], "word"), True))
                    ["input_ids"]) for t in trials[s : s + 16]]  # fmt: skip
        total += forward_flops(model.config, len(lens) * max(lens), max(lens), len(lens))
    return total / len(trials)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/behaviorgeo_runner.json"))
    ap.add_argument("--model", default="smollm2", help="smollm2 or a local transformers folder")
    ap.add_argument("--old-trials", type=int, default=32)
    ap.add_argument("--new-trials", type=int, default=96)
    ap.add_argument("--fa-runs", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(1)
    vocab = vocabulary(1060)
    model, tok = load_lm(args.model)
    cfg = model.config
    d, ff = cfg.hidden_size, cfg.intermediate_size
    bound = {
        "fp32 GFLOP/s (1600 x d) @ (d x ff)": matmul_gflops(1600, d, ff, torch.float32),
        "fp32 GFLOP/s (1600 x d) @ (d x d)": matmul_gflops(1600, d, d, torch.float32),
        "bf16 GFLOP/s (1600 x d) @ (d x ff)": matmul_gflops(1600, d, ff, torch.bfloat16, repeats=3),
    }
    peak = max(v for k, v in bound.items() if k.startswith("fp32"))
    bound["fp32 bound used [GFLOP/s]"] = peak
    # warm-up of both runners (first calls allocate)
    run_forced_choice(model, tok, vocab, None, batch=2, max_trials=2)
    run_fc_fast(model, tok, vocab, None, batch=2, max_trials=2)
    res = {}
    _, t = timed(lambda: run_forced_choice(model, tok, vocab, None, batch=16, max_trials=args.old_trials))
    old_flops = legacy_fc_flops(model, tok, vocab, list(range(args.old_trials)))
    res["old (whole prompt, first token, batch 16)"] = {"trials/s": args.old_trials / t,
                                                         "GFLOP/trial": old_flops / 1e9}  # fmt: skip
    for scoring, cal in (("sum", False), ("word", False), ("sum", True)):
        st: dict = {}
        kw = {"batch": 32, "scoring": scoring, "calibrate": cal, "stats": st, "max_trials": args.new_trials}
        _, t = timed(lambda kw=kw: run_fc_fast(model, tok, vocab, None, **kw))
        name = f"{scoring}{', calibrated' if cal else ''}"
        res[f"new ({name}, prefix cache, packed, batch 32)"] = {
            "trials/s": args.new_trials / t,
            "GFLOP/trial": st["flops"] / st["trials"] / 1e9,
            "tokens computed/trial": st["tokens"] / st["trials"],
        }
    for row in res.values():
        row["achieved GFLOP/s"] = row["trials/s"] * row["GFLOP/trial"]
        row["bound trials/s"] = peak / row["GFLOP/trial"]
        row["bound / measured"] = row["bound trials/s"] / row["trials/s"]
    base = res["old (whole prompt, first token, batch 16)"]["trials/s"]
    for row in res.values():
        row["speed-up over old"] = row["trials/s"] / base
    fa = {}
    _, t = timed(lambda: run_free_association(model, tok, vocab, None, runs=1, batch=16, max_new_tokens=16,
                                              max_trials=args.fa_runs // 2))  # fmt: skip
    fa["old (generate, batch 16) runs/s"] = args.fa_runs // 2 / t
    st = {}
    _, t = timed(lambda: run_fa_fast(model, tok, vocab, None, runs=1, batch=64, max_new_tokens=16, stats=st,
                                     max_trials=args.fa_runs))  # fmt: skip
    fa["new (prefix cache, batch 64) runs/s"] = args.fa_runs / t
    fa["new GFLOP/run"] = st["flops"] / st["trials"] / 1e9
    fa["speed-up"] = fa["new (prefix cache, batch 64) runs/s"] / fa["old (generate, batch 16) runs/s"]
    result = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch_threads": 1,
            "load average at the end": os.getloadavg()[0],
        },
        "model": args.model,
        "vocabulary": len(vocab),
        "old prompt": FC_WORD_PROMPT,
        "compute bound": bound,
        "forced choice": res,
        "free association": fa,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)  # atomic, NaN as null
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
