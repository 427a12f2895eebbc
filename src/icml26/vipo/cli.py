"""``icml26 vipo``: make a D4RL-format dataset, train MOPO / MOBILE (+ VIPO) on it, evaluate a policy.

::

    icml26 vipo dataset --env hopper --kind medium --transitions 100000 --out hopper-medium   # D4RL-like, Minari
    icml26 vipo make-dataset --env Pendulum-v1 --quality medium --transitions 20000 --out pend.npz
    icml26 vipo train --dataset pend.npz --algo mopo+vipo --out policy.pt --json train.json
    icml26 vipo evaluate --policy policy.pt --dataset pend.npz --episodes 10
    icml26 vipo train-behaviour --env Hopper-v5 --steps 100000 --out hopper-sac.pt   # for medium/expert data
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_float, bounded_int, finite_float, fraction
from icml26._util.device import add_threads_argument, apply_threads
from icml26._util.io import check_json_output, check_output_path, write_json

QUALITIES = ("random", "medium", "expert", "medium-replay", "medium-expert")
TASKS = ("hopper", "halfcheetah", "walker2d")  # icml26.vipo.mujoco_data.TASKS (kept torch-free here)
KINDS = ("random", "medium", "medium-replay", "expert", "medium-expert")
ALGOS = ("mopo", "mopo+vipo", "mobile", "mobile+vipo")
DATA_SUFFIXES = (".npz", ".hdf5", ".h5")
#: Fewest transitions ``train`` accepts: the dynamics ensemble holds out 10 % of them (at least 10 transitions)
#: to choose its elites and to score the model; on fewer, the normalised score it reports means nothing.
MIN_TRANSITIONS = 100


def _hidden(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(bounded_int(1, 1024, what="memory")(t) for t in text.split(",") if t.strip())
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"in list {text!r}: {exc}") from None
    if not vals or len(vals) > 8:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 to 8 comma-separated layer widths")
    return vals


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 vipo", description="VIPO: value-inconsistency penalised model-based offline RL."
    )
    sub = parser.add_subparsers(dest="verb", required=True)
    seed = bounded_int(0, 2**31 - 1, what="seeds")

    m = sub.add_parser(
        "make-dataset",
        help="generate a D4RL-format dataset from a Gymnasium environment",
        description="Reads only, for MuJoCo medium/expert data, a SAC actor of 'train-behaviour' (--policy); runs a "
        "behaviour policy of the chosen quality in the Gymnasium environment and writes a D4RL-format dataset with "
        "random/expert reference returns (--out), printing the behaviour return. Example: icml26 vipo make-dataset "
        "--env Pendulum-v1 --quality medium --transitions 20000 --out pend.npz",
    )
    m.add_argument(
        "--env", default="Pendulum-v1", help="Gymnasium id (Pendulum-v1, Hopper-v5, HalfCheetah-v5, Walker2d-v5)"
    )
    m.add_argument("--quality", choices=QUALITIES, default="medium", help="behaviour policy quality")
    m.add_argument(
        "--transitions",
        type=bounded_int(MIN_TRANSITIONS, 2_000_000, what="train needs 100; memory"),
        default=20000,
        help="number of transitions",
    )
    m.add_argument("--policy", type=Path, help="SAC actor from train-behaviour (needed for MuJoCo medium/expert)")
    m.add_argument("--seed", type=seed, default=0, help="random seed")
    m.add_argument("--out", type=Path, required=True, help="dataset to write (.npz, .hdf5 or .h5)")

    g = sub.add_parser(
        "dataset",
        help="a D4RL-like MuJoCo data set made with D4RL's recipe (SB3 SAC behaviour), as Minari or D4RL HDF5",
        description="Reads nothing (resumes the SAC run it finds in --work, default OUT.work, if made with the same "
        "recipe); trains stable-baselines3 SAC (RL Zoo's MuJoCo setting) on the Gymnasium v5 task until an "
        "evaluation reaches the medium return (--medium-score D4RL-normalised points) or --max-steps, checkpointing "
        "into --work after every evaluation so a killed run resumes, then writes the data set of --kind "
        "(medium-replay: the run's replay buffer up to the medium policy; medium-expert: half medium, half the same "
        "run continued to --expert-steps) as a Minari data set directory (--out without a suffix) or one D4RL-keyed "
        "file (.hdf5/.h5/.npz); prints the behaviour's return and normalised score, also as JSON (--json). The data "
        "are D4RL-like, not D4RL. "
        "Example: icml26 vipo dataset --env hopper --kind medium --transitions 100000 --out hopper-medium",
    )
    g.add_argument("--env", choices=TASKS, default="hopper", help="MuJoCo task (Gymnasium v5)")
    g.add_argument("--kind", choices=KINDS, default="medium", help="D4RL data-set kind")
    g.add_argument("--transitions", type=bounded_int(MIN_TRANSITIONS, 2_000_000, what="train needs 100; memory"),
                   default=100_000, help="transitions in the data set")  # fmt: skip
    g.add_argument(
        "--max-steps",
        type=bounded_int(1, 10_000_000, what="time"),
        default=300_000,
        help="SAC environment steps at most before the medium policy is taken (the best evaluation then); "
        "a resumed run may raise it",
    )
    g.add_argument(
        "--medium-score",
        type=bounded_float(-100.0, 200.0),
        default=33.0,
        help="D4RL-normalised return at which SAC training stops: the medium policy (D4RL: ~1/3 expert); a resumed "
        "run may change it while no evaluation has reached either value",
    )
    g.add_argument(
        "--expert-steps",
        type=bounded_int(1, 10_000_000, what="time"),
        default=1_000_000,
        help="SAC steps of the expert policy (kinds expert and medium-expert)",
    )
    g.add_argument(
        "--eval-every",
        type=bounded_int(100, 10_000_000),
        default=5000,
        help="SAC steps between evaluations and checkpoints",
    )
    g.add_argument("--eval-episodes", type=bounded_int(1, 100, what="time"), default=5, help="episodes per evaluation")
    g.add_argument(
        "--learning-starts",
        type=bounded_int(1, 1_000_000),
        default=10_000,
        help="uniform random steps before SAC updates (RL Zoo's MuJoCo setting)",
    )
    g.add_argument("--seed", type=seed, default=0, help="random seed (SAC and collection)")
    g.add_argument(
        "--out",
        type=Path,
        required=True,
        help="Minari data set directory to create (no suffix) or a .hdf5/.h5/.npz file",
    )
    g.add_argument(
        "--work",
        type=Path,
        help="SAC checkpoint directory (default: OUT.work); give several kinds the same one to cut them all from "
        "one behaviour run, as D4RL does",
    )
    add_json_argument(g, "the evaluations and the summary")

    t = sub.add_parser(
        "train",
        help="train the dynamics ensemble (NLL or NLL + VIPO) and MOPO / MOBILE on it",
        description="Reads a D4RL-format dataset (--dataset), trains the dynamics ensemble and then the MOPO or "
        "MOBILE policy on it, evaluating in the true environment; writes the policy (--out, .pt) and the learning "
        "curve with model diagnostics (--json), printing the final return. Example: icml26 vipo train --dataset "
        "pend.npz --algo mopo+vipo --out policy.pt --json train.json",
    )
    t.add_argument("--dataset", type=Path, required=True, help="D4RL-format .npz / .hdf5 (ours or a real D4RL file)")
    t.add_argument("--env", help="Gymnasium id; default: the one recorded in the dataset")
    t.add_argument("--algo", choices=ALGOS, default="mopo+vipo", help="policy learner and model training")
    t.add_argument(
        "--phi",
        type=bounded_float(0.0, 100.0, open_low=True, what="the paper uses 1e-4; a larger weight swamps the NLL"),
        default=1e-4,
        help="weight of the VIPO term (+vipo algos)",
    )
    t.add_argument("--normalise-advantage", action="store_true", help="standardise VIPO's A over the batch")
    t.add_argument("--members", type=bounded_int(1, 32, what="memory"), default=7, help="ensemble members")
    t.add_argument("--elites", type=bounded_int(1, 32), default=5, help="elite members (<= members)")
    t.add_argument("--hidden", type=_hidden, default=(200, 200, 200, 200), help="ensemble layer widths")
    t.add_argument("--model-epochs", type=bounded_int(1, 10000, what="time"), default=30, help="dynamics epochs")
    t.add_argument("--steps", type=bounded_int(1, 10_000_000, what="time"), default=20000, help="SAC updates")
    t.add_argument("--policy-hidden", type=_hidden, default=(256, 256), help="actor / critic layer widths")
    t.add_argument("--batch", type=bounded_int(2, 4096, what="memory"), default=256, help="SAC batch size")
    t.add_argument("--rollout-length", type=bounded_int(1, 100), default=1, help="model rollout horizon h")
    t.add_argument(
        "--rollout-batch",
        type=bounded_int(1, 200_000, what="memory"),
        default=5000,
        help="start states per rollout round",
    )
    t.add_argument("--rollout-every", type=bounded_int(1, 100_000), default=250, help="SAC steps between rollouts")
    t.add_argument("--real-ratio", type=fraction, default=0.05, help="share of real transitions in a SAC batch")
    t.add_argument(
        "--penalty",
        type=bounded_float(0.0, 1000.0, what="rewards are O(1-10); a larger penalty leaves only the penalty"),
        default=2.5,
        help="MOPO lambda / MOBILE beta",
    )
    t.add_argument("--eval-every", type=bounded_int(1, 10_000_000), default=1000, help="SAC steps between evaluations")
    t.add_argument("--eval-episodes", type=bounded_int(1, 1000, what="time"), default=5, help="episodes per evaluation")
    t.add_argument(
        "--last-evals", type=bounded_int(1, 1000), default=3, help="score = mean of this many last evaluations"
    )
    t.add_argument("--seed", type=seed, default=0, help="random seed")
    t.add_argument("--out", type=Path, required=True, help="policy file to write (.pt)")
    add_json_argument(t, "the learning curve and model diagnostics")

    e = sub.add_parser(
        "evaluate",
        help="return and normalised score of a trained policy in the true environment",
        description="Reads a policy of 'train' (and optionally a dataset's reference returns, --dataset), runs it "
        "in the true environment and prints the mean return and normalised score, also as JSON (--json). "
        "Example: icml26 vipo evaluate --policy policy.pt --dataset pend.npz --episodes 10",
    )
    e.add_argument("--policy", type=Path, required=True, help="a policy file written by train")
    e.add_argument("--env", help="Gymnasium id; default: the one the policy was trained on")
    e.add_argument("--dataset", type=Path, help="read the random/expert reference returns from this dataset")
    e.add_argument("--ref-min", type=finite_float, help="random reference return (instead of --dataset)")
    e.add_argument("--ref-max", type=finite_float, help="expert reference return (instead of --dataset)")
    e.add_argument("--episodes", type=bounded_int(1, 10000, what="time"), default=10, help="evaluation episodes")
    e.add_argument("--seed", type=seed, default=0, help="first episode seed")
    add_json_argument(e, "the returns")

    b = sub.add_parser(
        "train-behaviour",
        help="online SAC in the true environment: a behaviour policy for datasets",
        description="Reads nothing; trains SAC online in the Gymnasium environment and writes the actor (--out, "
        ".pt) for 'make-dataset --policy', printing the last episodes' mean return. Example: icml26 vipo "
        "train-behaviour --env Hopper-v5 --steps 100000 --out hopper-sac.pt",
    )
    b.add_argument("--env", required=True, help="Gymnasium id")
    b.add_argument("--steps", type=bounded_int(100, 10_000_000, what="time"), default=100_000, help="environment steps")
    b.add_argument("--seed", type=seed, default=0, help="random seed")
    b.add_argument("--out", type=Path, required=True, help="policy file to write (.pt)")
    # CPU-only torch verbs (small MLPs beside a CPU simulator): --threads, one by default where they train
    for verb, threads in (("make-dataset", None), ("dataset", 1), ("train", 1), ("evaluate", None),
                          ("train-behaviour", 1)):  # fmt: skip
        add_threads_argument(sub.choices[verb], default=threads)
    return parser


def _make_dataset(args) -> int:
    from icml26.vipo.data import make_dataset, save_dataset

    check_output_path(args.out, suffixes=DATA_SUFFIXES)
    data = make_dataset(args.env, args.quality, args.transitions, seed=args.seed, policy_file=args.policy)
    save_dataset(args.out, data)
    meta = data["meta"]
    print(
        f"{args.env} {args.quality}: {len(data['observations'])} transitions, behaviour return "
        f"{meta['behaviour_return_mean']:.1f} (random {meta['ref_min_score']:.1f}, "
        f"expert {meta['ref_max_score']:.1f}); "
        f"wrote {args.out}"
    )
    return 0


def _dataset(args) -> int:
    import hashlib

    from icml26.vipo.data import save_dataset
    from icml26.vipo.mujoco_data import BehaviourRecipe, episodes_to_d4rl, make_d4rl_like, write_minari

    out = check_output_path(args.out)
    if out.suffix and out.suffix.lower() not in DATA_SUFFIXES:
        raise ValueError(f"output path {out} must end with {', '.join(DATA_SUFFIXES)} or have no suffix (Minari)")
    check_json_output(args.json)
    if args.kind in ("expert", "medium-expert") and args.expert_steps <= args.max_steps:
        raise ValueError(f"--expert-steps {args.expert_steps} must exceed --max-steps {args.max_steps}")
    work = args.work if args.work is not None else out.with_name(out.name + ".work")
    if work.exists() and not work.is_dir():
        raise NotADirectoryError(f"checkpoint directory {work} exists and is not a directory")
    recipe = BehaviourRecipe(max_steps=args.max_steps, medium_score=args.medium_score, expert_steps=args.expert_steps,
                             eval_every=args.eval_every, eval_episodes=args.eval_episodes,
                             learning_starts=args.learning_starts)  # fmt: skip
    episodes, info = make_d4rl_like(args.env, args.kind, args.transitions, work, recipe, seed=args.seed)
    if out.suffix:
        save_dataset(out, {**episodes_to_d4rl(episodes), "meta": info})
        digest = hashlib.sha256(out.read_bytes()).hexdigest()
    else:
        write_minari(out, episodes, info["env"], f"icml26/{args.env}-{args.kind}-v0", info)
        digest = hashlib.sha256((out / "data" / "main_data.hdf5").read_bytes()).hexdigest()
    steps = sum(len(e["rewards"]) for e in episodes)
    beh = info.get("behaviour", {})
    print(
        f"{args.env} {args.kind} (D4RL-like): {steps} transitions in {len(episodes)} episodes, behaviour return "
        f"{info['behaviour_return_mean']:.1f} (D4RL-normalised {info['behaviour_normalised']:.1f}"
        + (f"; SAC {beh['sac_steps']} steps, medium {'reached' if beh['medium_reached'] else 'NOT reached'}"
           if beh else "")
        + f"); sha256 {digest[:16]}; wrote {out}"
    )  # fmt: skip
    write_json(args.json, {**info, "transitions": steps, "episodes": len(episodes), "sha256": digest, "out": out})
    return 0


def _train(args) -> int:
    import dataclasses

    from icml26.vipo.data import load_dataset, normalised_score, termination_fn
    from icml26.vipo.dynamics import DynamicsConfig, model_error, train_dynamics
    from icml26.vipo.policy import PolicyConfig, save_actor, train_policy

    check_output_path(args.out)
    check_json_output(args.json)
    if args.elites > args.members:
        raise ValueError(f"--elites {args.elites} exceeds --members {args.members}")
    data = load_dataset(args.dataset)  # keys, lengths, NaN; spaces once the env is known
    env_id = args.env or data["meta"].get("env")
    if not env_id:
        raise ValueError(f"dataset {args.dataset} names no environment; pass --env")
    term = termination_fn(env_id)  # refuse an environment without one before any work
    data = {**load_dataset(args.dataset, env_id), "meta": data["meta"]}
    if len(data["observations"]) < MIN_TRANSITIONS:
        raise ValueError(
            f"dataset {args.dataset} holds {len(data['observations'])} transitions; train needs at least "
            f"{MIN_TRANSITIONS} (10 % are held out to choose the elite models and score them)"
        )
    phi = args.phi if args.algo.endswith("+vipo") else 0.0
    dc = DynamicsConfig(
        members=args.members,
        elites=args.elites,
        hidden=args.hidden,
        epochs=args.model_epochs,
        phi=phi,
        normalise_advantage=args.normalise_advantage,
    )
    model, mlog = train_dynamics(data, dc, args.seed, termination_fn=term)
    pc = PolicyConfig(
        algo=args.algo,
        steps=args.steps,
        batch=args.batch,
        hidden=args.policy_hidden,
        rollout_length=args.rollout_length,
        rollout_batch=args.rollout_batch,
        rollout_every=args.rollout_every,
        real_ratio=args.real_ratio,
        penalty=args.penalty,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        last_evals=args.last_evals,
    )
    actor, plog = train_policy(data, model, env_id, pc, term, seed=args.seed)
    meta = data["meta"]
    summary = {
        "env": env_id,
        "algo": args.algo,
        "phi": phi,
        "eval_steps": plog.eval_steps,
        "eval_returns": plog.eval_returns,
        "final_return": plog.final_return,
        "holdout_mse": mlog.holdout_mse[-1] if mlog.holdout_mse else None,
        "value_gap": mlog.value_gap[-1] if mlog.value_gap else None,
        "policy_state_mse": model_error(model, plog.visited_obs, plog.visited_act, plog.visited_next),
        "config": {"dynamics": dataclasses.asdict(dc), "policy": dataclasses.asdict(pc)},
    }
    refs = (meta.get("ref_min_score", float("nan")), meta.get("ref_max_score", float("nan")))
    if all(isinstance(v, float | int) and math.isfinite(v) for v in refs):
        summary["final_score"] = float(
            normalised_score(plog.final_return, meta["ref_min_score"], meta["ref_max_score"])
        )
    save_actor(actor, args.out, extra={"env": env_id, "algo": args.algo, **{k: meta[k] for k in meta if "ref" in k}})
    score = f", normalised {summary['final_score']:.1f}" if "final_score" in summary else ""
    print(
        f"{args.algo} on {env_id}: return {plog.final_return:.1f} (mean of last {pc.last_evals} evaluations){score}; "
        f"policy-state model MSE {summary['policy_state_mse']:.4g}; wrote {args.out}"
    )
    write_json(args.json, summary)
    return 0


def _evaluate(args) -> int:
    import numpy as np

    from icml26.vipo.data import load_dataset, normalised_score
    from icml26.vipo.policy import evaluate_policy, load_actor

    check_json_output(args.json)
    actor = load_actor(args.policy)
    extra = actor.extra
    env_id = args.env or extra.get("env")
    if not env_id:
        raise ValueError(f"policy {args.policy} names no environment; pass --env")
    import gymnasium as gym

    try:
        env = gym.make(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown environment {env_id!r} ({exc.__class__.__name__})") from None
    dims = (env.observation_space.shape[0], env.action_space.shape[0])
    scale = env.action_space.high.astype(np.float32)
    env.close()
    if dims != (actor.obs_dim, actor.act_dim):
        raise ValueError(
            f"policy {args.policy} is for {actor.obs_dim}/{actor.act_dim}-dim observations/actions; "
            f"{env_id} has {dims[0]}/{dims[1]}"
        )
    ref = None
    if args.dataset is not None:
        meta = load_dataset(args.dataset)["meta"]
        if "ref_min_score" not in meta:
            raise ValueError(f"dataset {args.dataset} carries no reference returns; pass --ref-min and --ref-max")
        ref = (meta["ref_min_score"], meta["ref_max_score"])
    elif (args.ref_min is None) != (args.ref_max is None):
        raise ValueError("give both --ref-min and --ref-max, or neither")
    elif args.ref_min is not None:
        ref = (args.ref_min, args.ref_max)
    elif "ref_min_score" in extra:
        ref = (extra["ref_min_score"], extra["ref_max_score"])
    returns, *_ = evaluate_policy(actor, env_id, args.episodes, args.seed, scale)
    out = {"env": env_id, "returns": returns, "mean": float(np.mean(returns)), "std": float(np.std(returns))}
    line = f"{env_id}: return {out['mean']:.1f} +- {out['std']:.1f} over {args.episodes} episodes"
    if ref is not None:
        out["normalised"] = float(normalised_score(out["mean"], *ref))
        line += f"; normalised score {out['normalised']:.1f} (random {ref[0]:.1f}, expert {ref[1]:.1f})"
    print(line)
    write_json(args.json, out)
    return 0


def _train_behaviour(args) -> int:
    from icml26.vipo.data import termination_fn
    from icml26.vipo.policy import save_actor, train_online

    check_output_path(args.out)
    termination_fn(args.env)
    actor, returns = train_online(args.env, args.steps, args.seed)
    save_actor(actor, args.out, extra={"env": args.env, "algo": "online-sac", "train_returns": returns[-10:]})
    last = sum(returns[-10:]) / max(1, len(returns[-10:]))
    print(f"online SAC on {args.env}: {len(returns)} episodes, last-10 mean return {last:.1f}; wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 vipo``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    apply_threads(args)  # SB3 SAC and the ensembles are small networks: more threads only contend
    verbs = {"dataset": _dataset, "make-dataset": _make_dataset, "train": _train, "evaluate": _evaluate,
             "train-behaviour": _train_behaviour}  # fmt: skip
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
