"""behaviorgeo's trial runners on one CPU thread: trials/s of the fast runner in float32 and bfloat16 against the
old runner on the same model, FLOPs per trial, the compute bound of this CPU measured in the same run, and how
far bfloat16's answers agree with float32's.

    python benchmarks/behaviorgeo_runner.py [--out benchmarks/results/behaviorgeo_runner.json] [--model smollm2]

1. **Forced choice**, the 1,060-noun vocabulary, the same trial design (16 candidates):
   - old: ``lm.run_forced_choice`` -- one padded forward pass of each whole prompt (candidates named), the
     candidates' first-token log-probabilities; one trial per forward (batch 1) and batches of 16;
   - new: ``runner.run_fc_fast`` -- the shared prefix cached once, the trial's own tokens plus every candidate's
     answer tokens packed in one row under a tree mask, batches of 32; ``sum`` (all answer tokens, the default),
     ``word`` (first token only: the old scoring, like for like) and ``sum`` calibrated (a second,
     content-free-cue branch in the same packed row: what the claims run); each with the weights in float32 and
     in bfloat16.
2. **bfloat16 vs float32 answers**: the same calibrated trials (``--agree-trials``) scored in both dtypes: the
   share of trials with the same top pick, the same pick pair, and the log-probability differences.
3. **Free association**: old ``lm.run_free_association`` (HF ``generate``, left padding, batches of 16) vs new
   ``runner.run_fa_fast`` (prefix cache, batches of 64) in float32 and bfloat16; 16 new tokens at most.
4. **Compute bound**: fp32 and bf16 matmul GFLOP/s of this CPU at the model's own shapes (tokens x hidden times
   hidden x MLP width, and hidden x hidden), best of the repeats, measured in the same process before and after
   the forced-choice runners (the best of both: other jobs share the cores). FLOPs per trial are counted from
   the model config and the tokens each forward actually computes (``runner.forward_flops``: projections,
   attention products, the LM head where it is applied), so
   ``bound trials/s = GFLOP/s / GFLOP per trial`` (each dtype against its own bound) and
   ``ratio = bound / measured``. Where the rest of the time goes: the share of one bfloat16 calibrated batch's
   CPU time spent in matrix products (torch profiler).
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


def legacy_fc_flops(model, tok, vocab, trials: list[int], batch: int) -> float:
    """FLOPs of the old runner on these trials: every prompt whole (padded to its batch), one logit row."""
    cues, cands = fc_trials(len(vocab), 16, 1, 0)
    total = 0.0
    for s in range(0, len(trials), batch):
        lens = [len(tok(_chat(tok, fc_prompt(vocab[cues[t]], [vocab[c] for c in cands[t]], "word"), True))
                    ["input_ids"]) for t in trials[s : s + batch]]  # fmt: skip
        total += forward_flops(model.config, len(lens) * max(lens), max(lens), len(lens))
    return total / len(trials)


def fc_row(model, tok, vocab, n: int, **kw) -> tuple[dict, object]:
    st: dict = {}
    df, t = timed(lambda: run_fc_fast(model, tok, vocab, None, batch=32, stats=st, max_trials=n, **kw))
    return {"trials/s": n / t, "GFLOP/trial": st["flops"] / st["trials"] / 1e9,
            "tokens computed/trial": st["tokens"] / st["trials"]}, df  # fmt: skip


def matmul_share(model, tok, vocab) -> float:
    """Share of one calibrated batch's CPU time spent in matrix products (mm / addmm / bmm / linear kernels)."""
    from torch.profiler import profile

    with profile() as prof:
        run_fc_fast(model, tok, vocab, None, batch=32, max_trials=32, calibrate=True)
    rows = prof.key_averages()
    total = sum(r.self_cpu_time_total for r in rows)
    mm = sum(r.self_cpu_time_total for r in rows if r.key in ("aten::mm", "aten::addmm", "aten::bmm"))
    return mm / total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/behaviorgeo_runner.json"))
    ap.add_argument("--model", default="smollm2", help="smollm2 or a local transformers folder")
    ap.add_argument("--old-trials", type=int, default=32)
    ap.add_argument("--new-trials", type=int, default=96)
    ap.add_argument("--agree-trials", type=int, default=320)
    ap.add_argument("--fa-runs", type=int, default=64)
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    torch.set_num_threads(1)
    vocab = vocabulary(1060)
    models = {"float32": load_lm(args.model)[0], "bfloat16": load_lm(args.model, dtype=torch.bfloat16)[0]}
    tok = load_lm(args.model)[1]
    model = models["float32"]
    cfg = model.config
    d, ff = cfg.hidden_size, cfg.intermediate_size

    def measure_bound() -> dict:
        return {
            "fp32 GFLOP/s (1600 x d) @ (d x ff)": matmul_gflops(1600, d, ff, torch.float32),
            "fp32 GFLOP/s (1600 x d) @ (d x d)": matmul_gflops(1600, d, d, torch.float32),
            "bf16 GFLOP/s (1600 x d) @ (d x ff)": matmul_gflops(1600, d, ff, torch.bfloat16),
            "bf16 GFLOP/s (1600 x d) @ (d x d)": matmul_gflops(1600, d, d, torch.bfloat16),
        }

    bound = measure_bound()  # again after the runners: on a shared machine the best of both is the bound
    # warm-up of every runner (first calls allocate)
    run_forced_choice(model, tok, vocab, None, batch=2, max_trials=2)
    for m in models.values():
        run_fc_fast(m, tok, vocab, None, batch=2, max_trials=2, calibrate=True)
    res = {}
    _, t = timed(lambda: run_forced_choice(model, tok, vocab, None, batch=1, max_trials=args.old_trials // 2))
    res["old (whole prompt, first token, 1 trial a forward), float32"] = {
        "trials/s": args.old_trials // 2 / t,
        "GFLOP/trial": legacy_fc_flops(model, tok, vocab, list(range(args.old_trials // 2)), 1) / 1e9,
        "dtype": "float32"}  # fmt: skip
    _, t = timed(lambda: run_forced_choice(model, tok, vocab, None, batch=16, max_trials=args.old_trials))
    res["old (whole prompt, first token, batch 16), float32"] = {
        "trials/s": args.old_trials / t,
        "GFLOP/trial": legacy_fc_flops(model, tok, vocab, list(range(args.old_trials)), 16) / 1e9,
        "dtype": "float32"}  # fmt: skip
    picks = {}
    for dt, m in models.items():
        for scoring in ("sum", "word"):
            row, _ = fc_row(m, tok, vocab, args.new_trials, scoring=scoring)
            res[f"new ({scoring}, prefix cache, packed, batch 32), {dt}"] = {**row, "dtype": dt}
        row, picks[dt] = fc_row(m, tok, vocab, args.agree_trials, scoring="sum", calibrate=True)
        res[f"new (sum, calibrated, prefix cache, packed, batch 32), {dt}"] = {**row, "dtype": dt}
    after = measure_bound()
    bound = {k: max(v, after[k]) for k, v in bound.items()}
    peak = {dt: max(v for k, v in bound.items() if k.startswith(p)) for dt, p in (("float32", "fp32"),
                                                                                  ("bfloat16", "bf16"))}  # fmt: skip
    bound["fp32 bound used [GFLOP/s]"], bound["bf16 bound used [GFLOP/s]"] = peak["float32"], peak["bfloat16"]
    for row in res.values():
        row["achieved GFLOP/s"] = row["trials/s"] * row["GFLOP/trial"]
        row["bound trials/s"] = peak[row["dtype"]] / row["GFLOP/trial"]
        row["bound / measured"] = row["bound trials/s"] / row["trials/s"]
    one = res["old (whole prompt, first token, 1 trial a forward), float32"]["trials/s"]
    base = res["old (whole prompt, first token, batch 16), float32"]["trials/s"]
    for row in res.values():
        row["speed-up over old (1 trial a forward)"] = row["trials/s"] / one
        row["speed-up over old (batch 16)"] = row["trials/s"] / base
    a, b = picks["float32"], picks["bfloat16"]
    diff1 = (a.logp1 - b.logp1).abs()
    pairs = zip(a.pick1, a.pick2, b.pick1, b.pick2, strict=True)
    same_pair = [{p, q} == {r, s} for p, q, r, s in pairs]
    top_in = [p in (r, s) for p, r, s in zip(a.pick1, b.pick1, b.pick2, strict=True)]
    agree = {
        "trials (calibrated, sum)": len(a),
        "same top pick": float((a.pick1 == b.pick1).mean()),
        "same pick pair": float(sum(same_pair) / len(a)),
        "top pick of float32 among bfloat16's two picks": float(sum(top_in) / len(a)),
        "|logp1 float32 - logp1 bfloat16| median": float(diff1.median()),
        "|logp1 float32 - logp1 bfloat16| 95th percentile": float(diff1.quantile(0.95)),
        "float32 margin logp1 - logp2, median": float((a.logp1 - a.logp2).median()),
        "float32 logp1 spread over trials (sd)": float(a.logp1.std()),
    }
    profile_share = {dt: matmul_share(m, tok, vocab) for dt, m in models.items()}
    fa = {}
    _, t = timed(lambda: run_free_association(model, tok, vocab, None, runs=1, batch=16, max_new_tokens=16,
                                              max_trials=args.fa_runs // 2))  # fmt: skip
    fa["old (generate, batch 16), float32 runs/s"] = args.fa_runs // 2 / t
    for dt, m in models.items():
        st = {}
        _, t = timed(lambda m=m, st=st: run_fa_fast(m, tok, vocab, None, runs=1, batch=64, max_new_tokens=16,
                                                     stats=st, max_trials=args.fa_runs))  # fmt: skip
        fa[f"new (prefix cache, batch 64), {dt} runs/s"] = args.fa_runs / t
        fa[f"new {dt} GFLOP/run"] = st["flops"] / st["trials"] / 1e9
        fa[f"new {dt} bound / measured"] = peak[dt] * 1e9 / (st["flops"] / st["trials"]) / (args.fa_runs / t)
        fa[f"speed-up {dt} over old"] = fa[f"new (prefix cache, batch 64), {dt} runs/s"] / fa[
            "old (generate, batch 16), float32 runs/s"]  # fmt: skip
    result = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch_threads": 1,
            "load average at the start": load0,
            "load average at the end": os.getloadavg()[0],
        },
        "model": args.model,
        "vocabulary": len(vocab),
        "old prompt": FC_WORD_PROMPT,
        "compute bound": bound,
        "forced choice": res,
        "bfloat16 vs float32 answers": agree,
        "share of CPU time in matrix products (one calibrated batch)": profile_share,
        "free association": fa,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)  # atomic, NaN as null
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
