"""U-Cast benchmarks: CRPS kernels vs scoringrules/properscoring, MAE vs CRPS training throughput, U-Cast vs
EDM diffusion inference latency. Ours and the peer run interleaved in one process (the CPU is shared).

    python benchmarks/ucast_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.diffusion import EDMForecaster
from icml26.ucast.forecast import rollout
from icml26.ucast.metrics import fair_crps
from icml26.ucast.model import UCast
from icml26.ucast.train import train_stage

OUT = Path(__file__).with_name("results") / "ucast_bench.json"
# one thread for every library: on a shared 2-core machine numba's default thread pool oversubscribes the CPU
os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def interleaved(fns: dict, repeat: int) -> dict[str, float]:
    """Best wall time of each callable, calling them in turn ``repeat`` times."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def bench_crps(m: int, shape: tuple[int, int], repeat: int) -> list[dict]:
    import properscoring as ps
    import scoringrules as sr

    rng = np.random.default_rng(0)
    ens, obs = rng.normal(size=(m, *shape)), rng.normal(size=shape)
    ours = fair_crps(ens, obs)
    sr_numba = sr.crps_ensemble(obs, ens, m_axis=0, estimator="fair")  # numba backend (warm-up / compile)
    sr_numpy = sr.crps_ensemble(obs, ens, m_axis=0, estimator="fair", backend="numpy")
    standard = ps.crps_ensemble(obs, np.moveaxis(ens, 0, -1))
    skill = np.abs(ens - obs).mean(0)
    ps_as_fair = skill - (skill - standard) * m / (m - 1)  # same pair sum, fair normalisation
    times = interleaved(
        {
            "ours sorted": lambda: fair_crps(ens, obs),
            "ours pairwise": lambda: fair_crps(ens, obs, method="pairwise"),
            "scoringrules numba": lambda: sr.crps_ensemble(obs, ens, m_axis=0, estimator="fair"),
            "scoringrules numpy": lambda: sr.crps_ensemble(obs, ens, m_axis=0, estimator="fair", backend="numpy"),
            "properscoring (standard CRPS)": lambda: ps.crps_ensemble(obs, np.moveaxis(ens, 0, -1)),
        },
        repeat,
    )
    err = {
        "ours sorted": 0.0,
        "ours pairwise": float(np.abs(fair_crps(ens, obs, method="pairwise") - ours).max()),
        "scoringrules numba": float(np.abs(sr_numba - ours).max()),
        "scoringrules numpy": float(np.abs(sr_numpy - ours).max()),
        "properscoring (standard CRPS)": float(np.abs(ps_as_fair - ours).max()),
    }
    return [
        {
            "task": f"fair CRPS, M={m}, {shape[0]}x{shape[1]}",
            "impl": k,
            "seconds": v,
            "ratio ours-sorted / this": times["ours sorted"] / v,
            "max abs diff vs ours": err[k],
        }
        for k, v in times.items()
    ]


def _model(cfg: ModelConfig, grid: tuple[int, int], c: int = 2) -> UCast:
    h, w = grid
    ones = np.ones(c, np.float32)
    return UCast(cfg, c, 0 * ones, ones, ones, np.zeros((1, h, w)), np.linspace(-80, 80, h), np.arange(w) * 360 / w)


def bench_training(cfg: ModelConfig, grid: tuple[int, int], steps: int, batch: int) -> list[dict]:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4, 10, 2, *grid)).astype(np.float32)
    rows, rates = [], {}
    for _ in range(2):  # interleave the two stages twice, keep the best
        for stage in ("det", "prob"):
            tc = TrainConfig(stage=stage, steps=steps, batch_size=batch, warmup=1, log_every=10**6)
            t0 = time.perf_counter()
            train_stage(_model(cfg, grid), z, tc)
            rates[stage] = max(rates.get(stage, 0.0), steps * batch / (time.perf_counter() - t0))
    for stage in ("det", "prob"):
        rows.append(
            {
                "task": f"training samples/s, {grid[0]}x{grid[1]}, batch {batch}",
                "impl": f"stage {stage}",
                "samples_per_s": rates[stage],
                "ratio prob / det": rates["prob"] / rates["det"],
            }
        )
    return rows


def bench_latency(cfg: ModelConfig, grid: tuple[int, int], members: int, steps: int, n_steps: int) -> list[dict]:
    torch.manual_seed(0)
    ucast = _model(cfg, grid)
    edm = EDMForecaster(cfg, 2, 2 * 2 + 1).eval()
    z = torch.randn(1, 2, *grid)
    times = interleaved(
        {
            "U-Cast (MC dropout)": lambda: rollout(ucast, z, z, members, steps),
            f"EDM Heun, {n_steps} steps": lambda: edm.rollout(z, z, ucast.static, members, steps, n_steps),
        },
        2,
    )
    t_u = times["U-Cast (MC dropout)"]
    return [
        {
            "task": f"{members}-member x {steps}-step ensemble, {grid[0]}x{grid[1]}",
            "impl": k,
            "seconds": v,
            "speed-up of U-Cast": v / t_u,
        }
        for k, v in times.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = ModelConfig(channels=(16, 32, 64), n_res=1)
    rows = bench_crps(50, (121, 240) if not args.quick else (30, 60), repeat=3)
    rows += bench_training(cfg, (16, 16), steps=20 if not args.quick else 3, batch=16)
    rows += bench_latency(cfg, (16, 16), members=10, steps=10 if not args.quick else 2, n_steps=20)
    for r in rows:
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "machine": f"{platform.processor() or platform.machine()}, 2-core shared CPU",
                "torch": torch.__version__,
                "rows": rows,
            },
            indent=1,
        )
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
