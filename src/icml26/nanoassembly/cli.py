"""``icml26 nanoassembly plan|verify|train-agent|assemble``: thin verbs over the library."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_float, bounded_int, positive_int, seed_int
from icml26._util.io import atomic_output, check_json_output, check_output_path, write_json
from icml26.nanoassembly.data import MAX_SIDE

#: training episodes cost about 1.5 ms each on one core: 100,000 is a few minutes
MAX_EPISODES = 100_000
SEED = seed_int  # the shared 32-bit seed type
PRESETS = ["calibrated", "tip-changes", "tip-changes-unseen"]


def _plan(args) -> int:
    import numpy as np

    from icml26.nanoassembly.assembly import plan_assembly
    from icml26.nanoassembly.data import load_sites_csv, random_molecules, structure

    check_output_path(args.out)
    check_json_output(args.json)
    targets = structure(args.target, np.random.default_rng(args.seed))
    if args.molecules.lower().endswith(".csv"):
        if args.size is None:
            raise ValueError("--size WxH is required when molecules come from a CSV file")
        starts = load_sites_csv(args.molecules)
        shape = args.size
    else:
        if args.size is not None:  # random layouts choose their own surface (about 12 % coverage)
            raise ValueError("--size applies only to a molecules CSV; random:M picks the surface size itself")
        starts, targets, shape = random_molecules(args.molecules, targets, seed=args.seed)
    from icml26._util.progress import progress

    with progress(desc="plan", unit="stage") as bar:  # a repair round per step: a minute for 1,000 molecules

        def stage(name: str) -> None:
            bar.set_postfix_str(name, refresh=False)
            bar.update(1)

        plan = plan_assembly(
            starts, targets, shape, metric=args.metric, half_width=args.half_width, n_tips=args.tips, progress=stage
        )
    plan.save(args.out)
    s = plan.stats
    print(
        f"{len(targets)} targets, {len(starts)} molecules on {shape[0]}x{shape[1]}: "
        f"{s['n_moves']} moves in {s['layers']} layers; "
        f"distance {s['total_distance']:.1f} (optimum {s['optimal_distance']:.1f}), {s['n_swaps']} swaps, "
        f"{s['n_parkings']} parkings; SAT {s['sat_s']:.2f} s -> {args.out}"
    )
    write_json(args.json, {"targets": len(targets), "molecules": len(starts), "surface": list(shape), **s})
    return 0


def _verify(args) -> int:
    from icml26.nanoassembly.assembly import Plan, verify_plan

    check_json_output(args.json)
    problems = verify_plan(Plan.load(args.plan))
    write_json(args.json, {"valid": not problems, "violations": [str(p) for p in problems]})
    for p in problems:
        print(p)
    print(
        "valid: every corridor empty when used, every target filled"
        if not problems
        else f"{len(problems)} violation(s)"
    )
    return 0 if not problems else 1


def _train(args) -> int:
    from icml26.nanoassembly.agents import QLearningAgent, ScriptedPush, evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    if args.algo != "q":
        raise ValueError(
            f"--algo {args.algo!r} is not available: this build ships tabular Q-learning ('q'); SB3 is not a dependency"
        )
    check_output_path(args.out)
    check_json_output(args.json)
    cfg = preset(args.physics, max_goal_distance=10.0)
    agent = QLearningAgent(cfg, seed=args.seed)
    agent.train(MoveMoleculeEnv(cfg), args.episodes, seed=args.seed)
    agent.save(args.out)
    env = MoveMoleculeEnv(preset(args.physics))
    rl, sp = evaluate(env, agent, 200, seed=args.seed + 1), evaluate(env, ScriptedPush(cfg), 200, seed=args.seed + 1)
    print(
        f"saved {args.out}; success {rl['success_rate']:.2f} (scripted push {sp['success_rate']:.2f}), "
        f"actions/move {rl['actions_per_success']:.2f} (scripted {sp['actions_per_success']:.2f})"
    )
    write_json(args.json, {"episodes": args.episodes, "q_learning": rl, "scripted_push": sp})
    return 0


def _assemble(args) -> int:
    from icml26.nanoassembly.agents import QLearningAgent, ScriptedPush, execute_plan
    from icml26.nanoassembly.assembly import Plan, verify_plan
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import AssembleEnv

    if args.render:
        check_output_path(args.render, suffixes=(".gif", ".png"))
    check_json_output(args.json)
    plan = Plan.load(args.plan)
    problems = verify_plan(plan)
    if problems:  # an invalid plan would drag molecules through occupied corridors
        raise ValueError(
            f"{args.plan}: the plan fails verification ({len(problems)} violation(s), first: {problems[0]}); "
            f"see 'icml26 nanoassembly verify {args.plan}'"
        )
    cfg = preset(args.physics)
    policy = ScriptedPush(cfg) if args.agent == "scripted" else QLearningAgent.load(args.agent, cfg)
    env = AssembleEnv(plan, config=cfg, render_mode="rgb_array" if args.render else None)
    every = max(1, len(plan.moves) // 40) * 4 if args.render else 0
    info, frames = execute_plan(env, policy, seed=args.seed, frames_every=every)
    if args.render:
        from PIL import Image

        images = [Image.fromarray(f) for f in frames]
        with atomic_output(args.render) as tmp:
            if Path(args.render).suffix.lower() == ".gif":
                images[0].save(tmp, format="GIF", save_all=True, append_images=images[1:], duration=150, loop=0)
            else:
                images[-1].save(tmp, format="PNG")
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in info.items()}))
    write_json(args.json, info)
    return 0


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 64x64; got {text!r}") from None
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        raise argparse.ArgumentTypeError(f"size {text!r}: width and height must be in [1, {MAX_SIDE}]")
    return w, h


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 nanoassembly", description="STM molecular assembly: plan, verify, train, assemble"
    )
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser(
        "plan",
        help="assign, repair and SAT-schedule an assembly; write plan JSON",
        description="Reads a target structure (a named pattern or a CSV of x,y sites) and the molecules (random or "
        "a CSV of x,y sites), assigns molecules to targets, repairs corridor conflicts, schedules the moves in "
        "layers with a SAT solver and writes the plan to --out (JSON); prints its moves, distance and swaps. "
        "Example: icml26 nanoassembly plan --target text:HI --molecules random:80 --seed 1 --out plan.json",
    )
    p.add_argument("--target", required=True, help="text:WORD, lieb:N, corral:N, block:N, blob:N or a CSV of x,y sites")
    p.add_argument("--molecules", default="random:", help="random:M (M >= targets) or a CSV of x,y sites")
    p.add_argument("--size", type=_size, default=None, help=f"surface WxH, at most {MAX_SIDE} a side (molecules CSV)")
    p.add_argument("--metric", choices=["euclidean", "manhattan"], default="euclidean", help="drag path metric")
    p.add_argument(
        "--half-width",
        type=bounded_float(0.0, 100.0, open_low=True, what="a corridor wider than the largest surface side"),
        default=0.5,
        help="corridor half-width (lattice constants)",
    )
    p.add_argument("--tips", type=positive_int, default=None, help="at most this many moves per layer")
    p.add_argument("--seed", type=SEED, default=0, help="random seed (layouts, blob shapes)")
    p.add_argument("--out", required=True, help="plan JSON file to write")
    add_json_argument(p, "the plan's statistics")
    p.set_defaults(func=_plan)
    p = sub.add_parser(
        "verify",
        help="replay a plan and list every violation (exit 1 if any)",
        description="Reads a plan JSON written by 'plan', replays its moves and prints every violation (a corridor "
        "not empty when used, a target left unfilled), exiting 1 if there is any; writes no file. Example: icml26 "
        "nanoassembly verify plan.json",
    )
    p.add_argument("plan", help="plan JSON file written by 'plan'")
    add_json_argument(p, "the violations found")
    p.set_defaults(func=_verify)
    p = sub.add_parser(
        "train-agent",
        help="train the Q-learning STM agent on MoveMolecule-v0",
        description="Reads nothing; trains a tabular Q-learning agent to drag a molecule with the STM tip in "
        "MoveMolecule-v0 under a physics preset, writes it to --out (.npz) and prints its success rate and actions "
        "per move beside the scripted push. Example: icml26 nanoassembly train-agent --episodes 3000 --physics "
        "tip-changes --out agent.npz",
    )
    p.add_argument("--algo", default="q", help="'q' (tabular Q-learning)")
    p.add_argument(
        "--episodes",
        type=bounded_int(1, MAX_EPISODES, what="training episodes; about 1.5 ms each"),
        default=3000,
        help="training episodes",
    )
    p.add_argument("--physics", choices=PRESETS, default="tip-changes", help="STM physics preset of the environment")
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    p.add_argument("--out", required=True, help="agent .npz file to write")
    add_json_argument(p, "the agent's and the scripted push's success rates")
    p.set_defaults(func=_train)
    p = sub.add_parser(
        "assemble",
        help="execute a verified plan in Assemble-v0 with an agent",
        description="Reads a plan JSON that passes 'verify' and an agent (a saved .npz or the scripted push), "
        "executes the plan's moves in Assemble-v0, prints the outcome as JSON on stdout and writes frames to "
        "--render (.gif, or the last frame to .png). Example: icml26 nanoassembly assemble --plan plan.json "
        "--agent agent.npz --render assembly.gif",
    )
    p.add_argument("--plan", required=True, help="plan JSON file (must pass 'verify')")
    p.add_argument("--agent", default="scripted", help="a saved agent .npz or 'scripted'")
    p.add_argument("--physics", choices=PRESETS, default="tip-changes", help="STM physics preset of the environment")
    p.add_argument("--render", default=None, output=True, help="write frames to a .gif (or the last frame to .png)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    add_json_argument(p, "the assembly's outcome")
    p.set_defaults(func=_assemble)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
