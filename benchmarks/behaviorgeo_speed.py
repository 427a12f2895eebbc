"""behaviorgeo on a CPU: forced-choice trials per second, and RSA on ~500k pairs against rsatoolbox.

    python benchmarks/behaviorgeo_speed.py [--out benchmarks/results/behaviorgeo_speed.json] [--model smollm2]

1. **Forced choice**: the same trials (40-word vocabulary, 16 candidates, chat template, the same prompt naming
   the candidate words) scored by our batched next-token log-probabilities of the candidates' first tokens (one
   forward pass per trial, batches of 16) vs the naive one-prompt-at-a-time way: greedy generation of the
   answer (8 new tokens) for each trial. Model: SmolLM2-135M-
   Instruct (``--model smollm2``, converted once into the user cache) or the tiny random test model
   (``--model tiny``). One torch thread. Goal of the issue: batched >= 10x naive.
2. **RSA**: Pearson r between two 1,000-word similarity matrices over all 499,500 pairs -- ours (numpy) vs
   ``rsatoolbox.rdm.compare(..., method="corr")`` on the same dissimilarities (the peer column is skipped when
   rsatoolbox is not installed) -- plus ours on 500k pairs sampled from a 5,000-word matrix (12.5M pairs: the
   paper's setting). Medians of repeated runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from icml26._util.io import write_json
from icml26.behaviorgeo.data import vocabulary
from icml26.behaviorgeo.geometry import row_cosine, rsa
from icml26.behaviorgeo.lm import load_lm, naive_forced_choice, run_forced_choice


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_fc(model_name: str, n_batched: int, n_naive: int) -> dict:
    vocab = vocabulary(40)
    model, tok = load_lm(model_name, vocab)
    run_forced_choice(model, tok, vocab, None, batch=2, max_trials=2)  # warm-up
    t0 = time.perf_counter()
    run_forced_choice(model, tok, vocab, None, batch=16, max_trials=n_batched)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive_forced_choice(model, tok, vocab, list(range(n_naive)), max_new_tokens=8)
    t_naive = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_forced_choice(model, tok, vocab, None, batch=1, max_trials=n_naive)
    t_single = time.perf_counter() - t0
    out = {
        "model": model_name,
        "trials batched": n_batched,
        "trials naive": n_naive,
        "batched log-prob trials/s": n_batched / t_batched,
        "log-prob, batch 1 trials/s": n_naive / t_single,
        "naive generation trials/s": n_naive / t_naive,
    }
    out["speed-up batched / naive"] = out["batched log-prob trials/s"] / out["naive generation trials/s"]
    return out


def bench_rsa(repeats: int) -> dict:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 20))
    S1, S2 = row_cosine(X), row_cosine(X + rng.normal(size=X.shape))
    out = {"pairs (1,000 words, all)": 1000 * 999 // 2}
    r_ours = rsa(S1, S2, n_pairs=None)
    out["ours [s]"] = median_time(lambda: rsa(S1, S2, n_pairs=None), repeats)
    out["ours r"] = r_ours
    try:
        from rsatoolbox.rdm import RDMs, compare
    except ImportError:
        out["rsatoolbox"] = "not installed: peer column skipped"
    else:
        iu = np.triu_indices(1000, 1)

        def peer():
            a = RDMs((1 - S1[iu])[None], dissimilarity_measure="cosine")
            b = RDMs((1 - S2[iu])[None], dissimilarity_measure="cosine")
            return float(compare(a, b, method="corr")[0, 0])

        out["rsatoolbox r"] = peer()
        out["rsatoolbox [s]"] = median_time(peer, repeats)
        out["speed-up ours / rsatoolbox"] = out["rsatoolbox [s]"] / out["ours [s]"]
    Y = rng.normal(size=(5000, 20))
    T1, T2 = row_cosine(Y), row_cosine(Y + rng.normal(size=Y.shape))
    out["ours, 500k of 12.5M pairs (5,000 words) [s]"] = median_time(lambda: rsa(T1, T2, n_pairs=500_000), repeats)
    out["ours, all 12.5M pairs [s]"] = median_time(lambda: rsa(T1, T2, n_pairs=None), max(1, repeats // 3))
    samples = [rsa(T1, T2, n_pairs=500_000, seed=s) for s in range(5)]
    out["sampled r: sd over 5 pair samples"] = float(np.std(samples, ddof=1))
    out["sampled r - full r"] = float(np.mean(samples) - rsa(T1, T2, n_pairs=None))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/behaviorgeo_speed.json"))
    ap.add_argument("--model", default="smollm2", help="smollm2 or tiny")
    ap.add_argument("--trials", type=int, default=32, help="batched trials (naive runs a quarter)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    result = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "torch_threads": 1},
        "forced choice": bench_fc(args.model, args.trials, max(2, args.trials // 4)),
        "rsa": bench_rsa(args.repeats),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, result)  # atomic, NaN as null
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
