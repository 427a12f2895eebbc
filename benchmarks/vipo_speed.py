"""VIPO on a CPU: the cost of the value-inconsistency term, and a full training step vs d3rlpy's CQL / IQL.

    python benchmarks/vipo_speed.py [--out benchmarks/results/vipo_speed.json] [--transitions 10000]

Data: a locally generated Pendulum-v1 'medium' dataset (D4RL keys), written once to a temporary ``.npz`` that
both libraries read.

1. Dynamics-training epoch, paper-sized ensemble (7 members x [200] * 4, SiLU) on one torch thread: NLL only
   (MOPO's model) vs NLL + VIPO (two extra value networks [256] * 3 with targets, one TD step each per batch,
   a model sample and the score-function term). Seconds per epoch (median of ``--epochs``) and the parameters VIPO adds.
   Performance goal of the issue: VIPO adds <= 1.5x.
2. One policy-learning step of MOPO (SAC update, batch 256, [256, 256] nets, with the model rollouts amortised:
   5,000 start states x h = 1 every 250 steps) vs one ``update`` of d3rlpy 2.8.1's CQL and IQL (defaults, batch
   256, CPU) on the same data. d3rlpy declares an older Gymnasium, so it is installed here with ``--no-deps``
   (see the README, Deviations) or runs in the Python named by ``--d3rlpy-python PATH`` (a virtual environment
   with d3rlpy 2.8.1); without either the peer row is skipped with a message.
   Goal: within 2x of CQL.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from icml26.vipo.data import make_dataset, save_dataset, termination_fn
from icml26.vipo.dynamics import DynamicsConfig, GaussianEnsemble, ValuePair, train_dynamics
from icml26.vipo.policy import PolicyConfig, train_policy

PEER = r"""
import json, sys, time
import numpy as np
import d3rlpy
z = np.load(sys.argv[1])
ds = d3rlpy.dataset.MDPDataset(z["observations"], z["actions"], z["rewards"], z["terminals"].astype(np.float32),
                               timeouts=z["timeouts"].astype(np.float32))
out = {"d3rlpy": d3rlpy.__version__}
for name, cfg in (("CQL", d3rlpy.algos.CQLConfig(batch_size=256)), ("IQL", d3rlpy.algos.IQLConfig(batch_size=256))):
    algo = cfg.create(device="cpu:0")
    algo.build_with_dataset(ds)
    buf = d3rlpy.dataset.ReplayBuffer(d3rlpy.dataset.InfiniteBuffer(), episodes=ds.episodes)
    steps, times = int(sys.argv[2]), []
    for i in range(steps + 10):
        batch = buf.sample_transition_batch(256)
        t0 = time.perf_counter()
        algo.update(batch)
        if i >= 10:
            times.append(time.perf_counter() - t0)
    out[name] = sorted(times)[len(times) // 2]
print(json.dumps(out))
"""


def epoch_seconds(data, phi: float, epochs: int) -> float:
    cfg = DynamicsConfig(epochs=epochs, phi=phi)  # paper sizes: 7 x [200]*4, values [256]*3
    _, log = train_dynamics(data, cfg, seed=0, termination_fn=termination_fn("Pendulum-v1"))
    return statistics.median(log.epoch_seconds)


def parameter_counts(obs_dim: int, act_dim: int) -> tuple[int, int]:
    """Trainable parameters of the ensemble and of VIPO's value networks (their targets double the latter)."""
    cfg = DynamicsConfig()
    ens = GaussianEnsemble(obs_dim, act_dim, cfg.members, cfg.elites, cfg.hidden)
    vals = ValuePair(obs_dim, cfg.members, cfg.value_hidden, cfg.value_lr, cfg.gamma, cfg.tau)
    count = sum(p.numel() for p in ens.parameters())
    return count, sum(p.numel() for p in [*vals.v_data.parameters(), *vals.v_model.parameters()])


def mopo_step_seconds(data, steps: int) -> float:
    model, _ = train_dynamics(data, DynamicsConfig(epochs=1, phi=0.0), seed=0)
    pc = PolicyConfig(steps=steps, batch=256, rollout_length=1, rollout_batch=5000, rollout_every=250,
                      eval_every=10**9, eval_episodes=1)  # fmt: skip
    t0 = time.perf_counter()
    train_policy(data, model, "Pendulum-v1", pc, termination_fn("Pendulum-v1"), seed=0)
    return (time.perf_counter() - t0) / steps  # includes one final 1-episode evaluation (< 1 % of the time)


def d3rlpy_python(given: Path | None) -> tuple[str | None, str]:
    """The Python that runs the d3rlpy row, or None and why not: ``given`` if it exists, else this interpreter
    when d3rlpy is importable in it (no fixed path: a fresh machine has no virtual environment there)."""
    if given is not None:
        if not given.is_file():
            return None, f"--d3rlpy-python {given} does not exist"
        return str(given), ""
    if importlib.util.find_spec("d3rlpy") is not None:
        return sys.executable, ""
    return None, (
        "d3rlpy is not importable in this environment and no --d3rlpy-python PATH was given "
        "(python -m venv VENV && VENV/bin/pip install d3rlpy==2.8.1, then --d3rlpy-python VENV/bin/python)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/vipo_speed.json"))
    ap.add_argument("--transitions", type=int, default=10000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument(
        "--d3rlpy-python",
        type=Path,
        default=None,
        help="the Python of an environment with d3rlpy 2.8.1 (default: this one, if d3rlpy is importable here)",
    )
    args = ap.parse_args()
    peer_python, why_not = d3rlpy_python(args.d3rlpy_python)
    if peer_python is None:
        print(f"d3rlpy row skipped: {why_not}", file=sys.stderr)
    torch.set_num_threads(1)
    data = make_dataset("Pendulum-v1", "medium", args.transitions, seed=0)
    rows: dict = {}
    t_nll = epoch_seconds(data, 0.0, args.epochs)
    t_vipo = epoch_seconds(data, 1e-4, args.epochs)
    n_ens, n_val = parameter_counts(data["observations"].shape[1], data["actions"].shape[1])
    rows["dynamics epoch"] = {
        "NLL [s]": t_nll,
        "NLL + VIPO [s]": t_vipo,
        "ratio": t_vipo / t_nll,
        "ensemble parameters": n_ens,
        "value-network parameters (x2 with targets)": n_val,
    }
    step = mopo_step_seconds(data, args.steps)
    rows["policy step"] = {"MOPO (ours) [ms]": 1e3 * step}
    with tempfile.TemporaryDirectory() as tmp:
        path = save_dataset(Path(tmp) / "pend.npz", data)
        if peer_python is not None:
            env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            code = "import torch; torch.set_num_threads(1)\n" + PEER
            res = subprocess.run([peer_python, "-c", code, str(path), str(args.steps)], capture_output=True,
                                 text=True, env=env, cwd=tmp, timeout=1800)  # fmt: skip
            if res.returncode == 0:
                peer = json.loads(res.stdout.strip().splitlines()[-1])
                ours = {"d3rlpy": peer["d3rlpy"], "CQL [ms]": 1e3 * peer["CQL"], "IQL [ms]": 1e3 * peer["IQL"]}
                rows["policy step"].update({**ours, "MOPO / CQL": step / peer["CQL"]})
            else:
                rows["policy step"]["peer"] = "d3rlpy failed: " + res.stderr.strip().splitlines()[-1][:200]
        else:
            rows["policy step"]["peer"] = f"not run: {why_not}"
    result = {"machine": {"python": platform.python_version(), "torch": torch.__version__, "threads": 1,
                          "cpu": platform.processor() or platform.machine()},
              "transitions": args.transitions, "rows": rows}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
