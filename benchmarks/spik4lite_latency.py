"""Spik4lite on a CPU: dense vs masked-only vs physically refactored Spikingformer-mini, and our LIF vs a peer's.

    python benchmarks/spik4lite_latency.py [--out benchmarks/results/spik4lite_latency.json] [--repeats 9]

Network: Spikingformer-mini (dim 128, 4 heads, MLP 512, T = 4) on 16 x 16 single-channel inputs, seeded random
weights (latency does not depend on the weights). 50 % of the channels of every prunable pair (stem and MLP
hidden) are either zeroed in place (masked-only: the paper's "computational waste on 0 spikes") or removed
physically (Spik4lite's refactoring). Latency: median of interleaved forwards (eval, no grad) at batch 1 and 32 on
1 and 2 torch threads ('vs dense': the median of the ratios taken within each interleaved repeat); FLOPs (MACs)
and SOPs from the hook counter. Performance goal of the issue: the refactored
latency falls by at least 0.8x the fraction of FLOPs removed; masked-only falls ~0.

LIF peer: SpikingJelly's ``MultiStepLIFNode`` (torch backend) if installed; otherwise (the case on the machine
these numbers come from) the LIF comparison is reported as not run, and our LIF is timed alone.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from icml26.spik4lite.measure import count_ops, interleaved_samples, n_params
from icml26.spik4lite.model import MultiStepLIF, SpikingformerMini, mask_model, refactor


def half_keep(model, seed=0):
    rng = np.random.default_rng(seed)
    keep = {}
    for name, c in model.widths().items():
        m = torch.zeros(c, dtype=torch.bool)
        m[torch.from_numpy(rng.permutation(c)[: c // 2])] = True
        keep[name] = m
    return keep


def lif_times(repeats: int) -> dict:
    x = torch.randn(4, 32, 64, 128) * 2 + 1  # (T, B, N, D) membrane input
    ours = MultiStepLIF()
    out = {"shape": list(x.shape)}
    with torch.no_grad():
        t = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ours(x)
            t.append(time.perf_counter() - t0)
        out["ours_ms"] = 1e3 * float(np.median(t))
    try:
        from spikingjelly.activation_based import neuron
    except ImportError:
        out["spikingjelly_ms"] = None
        out["note"] = "spikingjelly is not installed: the LIF peer comparison was not run"
        return out
    peer = neuron.LIFNode(tau=2.0, step_mode="m", backend="torch", detach_reset=True)
    with torch.no_grad():
        t = []
        for _ in range(repeats):
            peer.reset()
            t0 = time.perf_counter()
            peer(x)
            t.append(time.perf_counter() - t0)
        out["spikingjelly_ms"] = 1e3 * float(np.median(t))
        peer.reset()
        out["spikes_identical"] = bool(torch.equal(peer(x), ours(x)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "spik4lite_latency.json")
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args(argv)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # seeded weights, without touching the caller's global generator
        dense = SpikingformerMini(1, 10, T=4, dim=128, heads=4).eval()
    keep = half_keep(dense)
    masked = mask_model(copy.deepcopy(dense), keep).eval()
    removed = refactor(copy.deepcopy(dense), keep).eval()
    models = {"dense": dense, "masked": masked, "refactored": removed}
    x = torch.rand(32, 1, 16, 16, generator=torch.Generator().manual_seed(1)) * 3
    ops = {k: count_ops(m, x[:8]) for k, m in models.items()}
    rows = []
    for batch in (1, 32):
        for threads in (1, 2):
            samples = interleaved_samples(models, x[:batch], repeats=args.repeats, threads=threads)
            for k, t in samples.items():
                lat = statistics.median(t)
                # vs dense: median of the ratios taken within each interleaved repeat (load bursts cancel)
                ratio = statistics.median(a / b for a, b in zip(t, samples["dense"], strict=True))
                rows.append({"variant": k, "batch": batch, "threads": threads, "latency_ms": 1e3 * lat,
                             "images_per_s": batch / lat, "latency_vs_dense": ratio})  # fmt: skip
    flops = {k: ops[k].total_macs / ops["dense"].total_macs for k in models}
    goal = {}
    for r in rows:
        if r["variant"] == "refactored":
            goal[f"b{r['batch']} t{r['threads']}"] = (1 - r["latency_vs_dense"]) / (1 - flops["refactored"])
    result = {
        "network": "SpikingformerMini(dim=128, heads=4, mlp 512, T=4), 16x16 inputs, 50 % of each pair's channels",
        "params": {k: n_params(m) for k, m in models.items()},
        "flops_vs_dense": flops,
        "sops_vs_dense": {k: ops[k].total_sops / ops["dense"].total_sops for k in models},
        "energy_proxy_uJ_per_image": {k: ops[k].energy_pj * 1e-6 for k in models},
        "rows": rows,
        "latency_drop_over_flops_drop_refactored": goal,
        "lif": lif_times(args.repeats),
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch": torch.__version__,
            "load_avg_1min_at_end": os.getloadavg()[0],
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'variant':12}{'batch':>6}{'thr':>5}{'ms':>10}{'img/s':>10}{'vs dense':>10}")
    for r in rows:
        print(f"{r['variant']:12}{r['batch']:>6}{r['threads']:>5}{r['latency_ms']:>10.2f}{r['images_per_s']:>10.1f}"
              f"{r['latency_vs_dense']:>10.2f}")  # fmt: skip
    print("FLOPs vs dense", {k: round(v, 3) for k, v in flops.items()})
    print("latency drop / FLOPs drop (refactored)", {k: round(v, 2) for k, v in goal.items()})
    print("LIF", result["lif"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
