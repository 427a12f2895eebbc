"""The paper's headline claims as executable checks (abstract; the paper's text is not public).

1. ``collision-free-plans``: plans replay with zero corridor violations at total distance within 1 % of
   the assignment optimum, for N = 50, 100, 420 molecules on random instances.
2. ``sat-schedules-scale``: the SAT schedule for 420 molecules is found in seconds on 2 cores.
3. ``rl-beats-scripted``: an RL agent executing STM actions succeeds more often than a fixed-parameter
   push after tip changes, with fewer STM actions per move.
4. ``assemble-420``: an end-to-end episode in NanoAssemblyGym assembles a 420-molecule structure.

Negative controls (``control=True``): the plan without conflict repair, the schedule without its corridor
precedence constraints, and an agent whose Q-table never learns (learning rate 0).
"""

from __future__ import annotations

import functools
import logging
import time

import numpy as np

from icml26.claims import ClaimResult, Scale, claim

logger = logging.getLogger(__name__)

ABSTRACT = "Abstract"


def _instance(kind: str, n: int, seed: int):
    """Targets of a random structure (spaced two lattice constants, as CO artificial lattices) + molecules."""
    from icml26.nanoassembly.data import blob_sites, lieb_sites, make_instance

    rng = np.random.default_rng(seed)
    targets = lieb_sites(n) if kind == "lieb" else 2 * blob_sites(n, rng)
    return make_instance(targets, int(np.ceil(1.1 * n)), seed=seed)


def _plan_figure(plan, title: str):
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.planner import corridor_cells

    fig, ax = plt.subplots(figsize=(6, 6))
    cmap = plt.get_cmap("viridis")
    layers = max(m["step"] for m in plan.moves) + 1 if plan.moves else 1
    for m in plan.moves:
        p = np.asarray(m["path"], dtype=float)
        cells = corridor_cells(p, plan.half_width)
        ax.scatter(cells[:, 0], cells[:, 1], s=10, color=cmap(m["step"] / layers), alpha=0.15, marker="s")
        ax.plot(p[:, 0], p[:, 1], color=cmap(m["step"] / layers), lw=1)
    ax.scatter(*plan.starts.T, s=8, c="k", label="molecules")
    ax.scatter(*plan.targets.T, s=18, facecolors="none", edgecolors="r", label="targets")
    ax.set_aspect("equal")
    ax.set_title(f"{title}: {len(plan.moves)} moves, {layers} SAT layers (colour = layer)")
    ax.legend(loc="upper right", fontsize=7)
    return fig


@claim(
    "nanoassembly/collision-free-plans-v1",
    statement="assignment + corridor repair + SAT schedules replay with 0 corridor violations at total "
    "distance <= 1.01 x the assignment optimum (N = 50, 100, 420)",
    paper=f"{ABSTRACT}: collision-free plans minimizing total distance",
    control="no corridor repair: the raw optimal assignment goes to the scheduler, whose precedence cycles "
    "admit no collision-free schedule (each blocking relation counts as a violation), so the claim must fail",
    by_construction="the targets are spaced two lattice sites apart, so conflicts are few and the repair costs "
    "at most ~0.05 % of the distance: the <= 1.01 x optimum bound holds by how the instances are built "
    "- replaced by collision-free-plans-v2 (issue 14)",
)
def collision_free_plans(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.nanoassembly.assembly import plan_assembly, verify_plan
    from icml26.nanoassembly.schedule import ScheduleInfeasibleError

    sizes = {Scale.SMOKE: [20, 50], Scale.SMALL: [50, 100, 420], Scale.PAPER: [50, 100, 420]}[scale]
    kinds = ["lieb", "blob"] if scale is not Scale.SMOKE else ["blob"]
    ratios, violations, swaps, parkings, fig = [], 0, 0, 0, None
    for n in sizes:
        for kind in kinds:
            starts, targets, shape = _instance(kind, n, seed)
            try:
                plan = plan_assembly(starts, targets, shape, repair_conflicts=not control)  # the control's line
            except ScheduleInfeasibleError as exc:  # no collision-free order of these moves exists
                violations += len(exc.blocking)
                ratios.append(1.0)  # the unrepaired assignment is the optimum itself
                continue
            violations += len(verify_plan(plan))
            ratios.append(plan.stats["total_distance"] / plan.stats["optimal_distance"])
            swaps += plan.stats["n_swaps"]
            parkings += plan.stats["n_parkings"]
            if fig is None and n >= 50:
                fig = _plan_figure(plan, f"{kind}:{n}")
    holds = violations == 0 and max(ratios) <= 1.01
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "replay violations": violations,
            "max distance / optimum": max(ratios),
            "swaps": swaps,
            "parkings": parkings,
        },
        paper={
            "replay violations": "collision-free plans",
            "max distance / optimum": "min total distance (<= 1.01 checked)",
        },
        baselines={"assignment optimum ratio": 1.0},
        reason="" if holds else f"{violations} violations, worst ratio {max(ratios):.4f}",
        figures={"plan": fig} if fig is not None else {},
    )


@claim(
    "nanoassembly/sat-schedules-scale-v1",
    statement="the SAT schedule (layered order encoding, CaDiCaL) for 420 molecules is found in seconds "
    "on 2 cores (< 10 s), and every schedule replays without a corridor violation",
    paper=f"{ABSTRACT}: satisfiability solving computes execution schedules; structures up to 420 molecules",
    control="the corridor precedence constraints are dropped from the SAT encoding (only the no-simultaneity "
    "pairs stay): the replay finds occupied corridors and the claim must fail",
    by_construction="the solver gets precedence constraints the repair has already made acyclic, so any "
    "topological order is a valid schedule: the first control tried, a greedy one-move-per-layer topological "
    "schedule without SAT, also replays with 0 violations at N = 420 in ~0.1 s - replaced by sat-schedules-v2 "
    "(issue 14)",
)
def sat_schedules_scale(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.assembly import plan_assembly, verify_plan

    sizes = {Scale.SMOKE: [20, 50], Scale.SMALL: [50, 100, 200, 420], Scale.PAPER: [50, 100, 200, 420, 800]}[scale]
    sat_s, layers, clauses, bad = [], [], [], 0
    for n in sizes:
        starts, targets, shape = _instance("lieb", n, seed)
        plan = plan_assembly(starts, targets, shape, precedence=not control)  # the one line the control changes
        bad += len(verify_plan(plan))
        sat_s.append(plan.stats["sat_s"])
        layers.append(plan.stats["layers"])
        clauses.append(plan.stats["clauses"])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(sizes, sat_s, "o-", label="SAT schedule (all calls)")
    ax.set_xlabel("molecules N")
    ax.set_ylabel("seconds (2-core CPU)")
    ax.set_title("SAT scheduling time vs N")
    ax2 = ax.twinx()
    ax2.plot(sizes, layers, "s--", color="C1", label="layers (makespan)")
    ax2.set_ylabel("layers")
    fig.legend(loc="upper left", bbox_to_anchor=(0.14, 0.86), fontsize=8)
    largest = sizes[-1]
    holds = bad == 0 and sat_s[-1] < 10.0 and (largest >= 420 or scale is Scale.SMOKE)
    verdict = "holds" if holds else "fails"
    reason = "" if holds else f"largest N={largest}: {sat_s[-1]:.1f} s, {bad} replay violations"
    if scale is Scale.SMOKE and holds:
        verdict, reason = "not-measured", f"smoke scale stops at N={largest}; run --scale small for N=420"
    return ClaimResult(
        verdict,
        measured={
            f"SAT seconds at N={largest}": sat_s[-1],
            f"layers at N={largest}": layers[-1],
            f"clauses at N={largest}": clauses[-1],
            "replay violations": bad,
        },
        paper={f"SAT seconds at N={largest}": "seconds (abstract: up to 420 molecules)"},
        reason=reason,
        figures={"sat-time": fig},
    )


@functools.lru_cache(maxsize=8)
def _trained_agent(scale: Scale, seed: int, learn: bool = True):
    """The Q-learning agent after its training episodes; ``learn=False`` (a negative control) runs the same
    episodes with learning rate 0, so the Q-table keeps its initial values: an untrained agent."""
    from icml26.nanoassembly.agents import QLearningAgent
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    cfg = preset("tip-changes", max_goal_distance=10.0)
    episodes = {Scale.SMOKE: 800, Scale.SMALL: 3000, Scale.PAPER: 20000}[scale]
    agent = QLearningAgent(cfg, seed=seed) if learn else QLearningAgent(cfg, seed=seed, alpha=0.0)
    t0 = time.perf_counter()
    curve = agent.train(MoveMoleculeEnv(cfg), episodes, seed=seed)
    logger.info("trained Q-learning agent: %d episodes in %.1f s", episodes, time.perf_counter() - t0)
    return agent, curve


@claim(
    "nanoassembly/rl-beats-scripted-v1",
    statement="after tip changes, the RL agent's per-move success rate exceeds the fixed-parameter push "
    "(by >= 3 points) with no more STM actions per successful move; on a calibrated tip it is not worse",
    paper=f"{ABSTRACT}: RL agents execute sequences of STM actions",
    control="an untrained agent (Q-learning with learning rate 0, so its Q-table stays at the initial values and "
    "it picks level changes at random): it does not beat the fixed push and the claim must fail",
    by_construction="a three-line adaptive rule (raise the coupling after a flat trace, lower it after a kick) "
    "already matches Q-learning (100 % success after tip changes vs the push's 90-93 %): the environment's only "
    "difficulty is a hidden tip offset the current trace reveals - replaced by rl-beats-scripted-v2 (issue 14)",
)
def rl_beats_scripted(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import RandomAgent, ScriptedPush, evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    agent, curve = _trained_agent(scale, seed, learn=not control)  # the one line the control changes
    episodes = {Scale.SMOKE: 150, Scale.SMALL: 600, Scale.PAPER: 3000}[scale]
    res = {}
    for cond in ("calibrated", "tip-changes"):
        env = MoveMoleculeEnv(preset(cond))
        scripted = ScriptedPush(env.cfg)
        res[cond] = {
            "rl": evaluate(env, agent, episodes, seed=seed + 101),
            "scripted": evaluate(env, scripted, episodes, seed=seed + 101),
        }
    rnd = evaluate(
        MoveMoleculeEnv(preset("tip-changes")),
        RandomAgent(MoveMoleculeEnv().action_space, seed),
        episodes // 3,
        seed=seed + 7,
    )
    # success vs a fixed tip offset: where the fixed push breaks down
    offsets = np.linspace(-1.0, 1.0, 9)
    env = MoveMoleculeEnv(preset("calibrated"))
    sweep = {
        name: [
            evaluate(env, pol, max(20, episodes // 10), seed=seed + 3, options={"tip_offset": o})["success_rate"]
            for o in offsets
        ]
        for name, pol in (("Q-learning", agent), ("scripted push", ScriptedPush(env.cfg)))
    }
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    w = max(10, len(curve) // 30)
    ax1.plot(np.convolve(curve, np.ones(w) / w, mode="valid"))
    ax1.set_xlabel("training episode")
    ax1.set_ylabel(f"STM actions per move (moving mean, {w})")
    ax1.set_title("Q-learning on MoveMolecule-v0 (tip changes)")
    for name, ys in sweep.items():
        ax2.plot(offsets, ys, "o-", label=name)
    ax2.set_xlabel("tip-state offset log10(I/V) from calibrated")
    ax2.set_ylabel("per-move success rate")
    ax2.legend()
    tc, cal = res["tip-changes"], res["calibrated"]
    holds = (
        tc["rl"]["success_rate"] >= tc["scripted"]["success_rate"] + 0.03
        and tc["rl"]["actions_per_success"] <= tc["scripted"]["actions_per_success"]
        and cal["rl"]["success_rate"] >= cal["scripted"]["success_rate"] - 0.02
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "RL success (tip changes)": tc["rl"]["success_rate"],
            "RL actions/move (tip changes)": tc["rl"]["actions_per_success"],
            "RL success (calibrated)": cal["rl"]["success_rate"],
        },
        baselines={
            "scripted success (tip changes)": tc["scripted"]["success_rate"],
            "scripted actions/move (tip changes)": tc["scripted"]["actions_per_success"],
            "scripted success (calibrated)": cal["scripted"]["success_rate"],
            "random success (tip changes)": rnd["success_rate"],
        },
        paper={"RL success (tip changes)": "RL executes STM actions (no number public)"},
        reason=""
        if holds
        else f"tip changes: RL {tc['rl']} vs scripted {tc['scripted']}; calibrated RL {cal['rl']['success_rate']:.3f}",
        figures={"success-rate": fig},
    )


@claim(
    "nanoassembly/assemble-420-v1",
    statement="an end-to-end NanoAssemblyGym episode (plan + SAT schedule + RL agent, tip changes on) "
    "assembles a 420-molecule artificial lattice: completion 100 %, 0 collisions",
    paper=f"{ABSTRACT}: autonomous assembly of structures containing up to 420 molecules",
    control="the plan's schedule without its corridor precedence constraints (only the no-simultaneity pairs go "
    "to the SAT solver): molecules are dragged through occupied corridors, hops are blocked and the claim must fail",
    by_construction="the first control tried, an untrained agent (learning rate 0), also assembles the structure "
    "with 100 % completion and 0 collisions (N = 60 on seeds 0-2, N = 420 on seed 0), and so does the fixed "
    "scripted push: with a collision-free plan and a budget of max_steps actions per move, completion does not "
    "depend on the agent - a version in which the agent matters is not yet filed (issue 14 has none)",
)
def assemble_420(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import ScriptedPush, execute_plan
    from icml26.nanoassembly.assembly import plan_assembly
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.data import make_instance, text_sites
    from icml26.nanoassembly.env import AssembleEnv

    n = {Scale.SMOKE: 60, Scale.SMALL: 420, Scale.PAPER: 420}[scale]
    agent, _ = _trained_agent(scale, seed)
    cfg = preset("tip-changes")
    starts, targets, shape = _instance("lieb", n, seed)
    plan = plan_assembly(starts, targets, shape, precedence=not control)  # the one line the control changes
    env = AssembleEnv(plan, config=cfg, render_mode="rgb_array")
    before = env.reset(seed=seed)[0] is not None and env.render()
    info, _ = execute_plan(env, agent, seed=seed)
    after = env.render()
    base, _ = execute_plan(AssembleEnv(plan, config=cfg), ScriptedPush(cfg), seed=seed)
    # the README's picture: the word ICML assembled by the same agent
    s2, t2, shape2 = make_instance(text_sites("ICML"), 60, seed=seed)
    text_env = AssembleEnv(plan_assembly(s2, t2, shape2), config=cfg, render_mode="rgb_array")
    text_info, _ = execute_plan(text_env, agent, seed=seed)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.5))
    for ax, img, title in (
        (axes[0], before, f"lieb:{n} before"),
        (axes[1], after, f"after: completion {info['completion']:.0%}, {info['collisions']} collisions"),
        (axes[2], text_env.render(), f"text:ICML, completion {text_info['completion']:.0%}"),
    ):
        ax.imshow(img)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    holds = info["completion"] == 1.0 and info["collisions"] == 0
    verdict, reason = (
        ("holds" if holds else "fails"),
        "" if holds else f"completion {info['completion']:.3f}, collisions {info['collisions']}",
    )
    if scale is Scale.SMOKE and holds:
        verdict, reason = "not-measured", f"smoke scale assembles {n} molecules; run --scale small for 420"
    return ClaimResult(
        verdict,
        measured={
            "completion": info["completion"],
            "collisions": info["collisions"],
            "tip travel (um)": info["tip_travel_nm"] / 1000,
            "STM actions": info["actions"],
            "images": info["images"],
        },
        baselines={"scripted push completion": base["completion"], "scripted push collisions": base["collisions"]},
        paper={"molecules": 420},
        reason=reason,
        figures={"assembly": fig},
    )


CLAIMS = [collision_free_plans, sat_schedules_scale, rl_beats_scripted, assemble_420]
