"""The paper's headline claims as executable checks (abstract; the paper's text is not public).

Version 2 (issue 14) of each claim; the v1 claims were retired (see the README's *Claims* section):

1. ``collision-free-plans-v2``: on *dense* targets (filled 10 x 10 and 21 x 20 blocks, molecules at 30 %
   coverage, x-then-y lattice paths) the repaired plans replay with 0 corridor violations at total
   distance <= 1.05 x the assignment optimum (the worst plan that got a schedule); reports the conflicts
   before repair.
2. ``sat-schedules-v2``: the SAT schedule's makespan (layers) is shorter than greedy list scheduling's on
   the same constraints, and on the *unrepaired* constraints of a dense block SAT detects that no
   schedule exists and names a blocking cycle (its UNSAT core).
3. ``rl-beats-scripted-v2``: on tip changes held out from training, the Q-learning agent needs fewer STM
   actions per delivered move than a three-line adaptive set-point rule, at no loss of success.
4. ``assemble-420-v2``: assembling a 420-molecule Lieb lattice with tip changes, the RL agent causes fewer
   collisions per 1,000 STM actions than the adaptive rule, at 100 % completion.

Comparisons are paired per seed (same instance, same environment seeds) and judged by 95 % t-intervals
over seeds; run ``icml26 reproduce nanoassembly --seeds 10`` for the 10 seeds the issue asks for.
"""

from __future__ import annotations

import copy
import functools
import logging
import time

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim

logger = logging.getLogger(__name__)

ABSTRACT = "Abstract"


def _instance(kind: str, n: int, seed: int):
    """Targets of a random structure (spaced two lattice constants, as CO artificial lattices) + molecules."""
    from icml26.nanoassembly.data import blob_sites, lieb_sites, make_instance

    rng = np.random.default_rng(seed)
    targets = lieb_sites(n) if kind == "lieb" else 2 * blob_sites(n, rng)
    return make_instance(targets, int(np.ceil(1.1 * n)), seed=seed)


def _dense_instance(n: int, seed: int, surplus: float = 1.1):
    """A filled near-square block of ``n`` adjacent targets (10 x 10 for 100, 21 x 20 for 420) and
    ``ceil(surplus * n)`` molecules scattered at 30 % coverage of the surface."""
    from icml26.nanoassembly.data import block_sites, make_instance

    return make_instance(block_sites(n), int(np.ceil(surplus * n)), density=0.3, seed=seed)


def _raw_conflicts(starts, targets, metric: str, half_width: float = 0.5):
    """Precedence constraints of the optimal assignment before any repair (the conflicts to repair)."""
    from icml26.nanoassembly.planner import _problems, _waypoints, assign, find_conflicts

    target_of, _ = assign(starts, targets, metric)
    conf = find_conflicts(_waypoints(starts, targets, target_of, {}), metric, half_width)
    return conf, _problems(conf)


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
    ax.set_title(f"{title}: {len(plan.moves)} moves, {layers} layers (colour = layer)")
    ax.legend(loc="upper right", fontsize=7)
    return fig


# ------------------------------------------------------------------------------------ 1. collision-free plans
@claim(
    "nanoassembly/collision-free-plans-v2",
    statement="on dense targets (filled 10 x 10 and 21 x 20 blocks, 1.1 N molecules at 30 % coverage, x-then-y "
    "lattice paths) assignment + conflict repair + SAT give plans that replay with 0 corridor violations "
    "(no instance left unschedulable) at total distance <= 1.05 x the assignment optimum",
    paper=f"{ABSTRACT}: collision-free assembly plans that minimize the total distance traveled by molecules",
    control="no conflict repair: the raw optimal assignment goes to the SAT scheduler, which finds no schedule "
    "on these dense blocks (each such instance counts as not collision-free), so the claim must fail",
    judge=(
        Interval("plans not collision-free", below=0.5),
        Interval("max distance / optimum", below=1.05),
    ),
)
def collision_free_plans(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.nanoassembly.assembly import plan_assembly, verify_plan
    from icml26.nanoassembly.schedule import ScheduleInfeasibleError

    sizes = {Scale.SMOKE: [36, 100], Scale.SMALL: [100, 420], Scale.PAPER: [100, 420]}[scale]
    measured, bad, ratios, fig = {}, 0, [], None
    cycles = blocked = edges = swaps = parkings = 0
    for n in sizes:
        starts, targets, shape = _dense_instance(n, seed)
        conf, problems = _raw_conflicts(starts, targets, "manhattan")  # conflicts before repair (reported)
        n_blocked = len(dict.fromkeys(conf.blocked))  # _problems lists the blocking pairs, then one cycle per SCC
        cycles, blocked, edges = cycles + len(problems) - n_blocked, blocked + n_blocked, edges + len(conf.before)
        try:
            plan = plan_assembly(starts, targets, shape, metric="manhattan", repair_conflicts=not control)  # control
        except ScheduleInfeasibleError as exc:  # no collision-free order of these moves exists
            bad += 1
            measured[f"distance / optimum (N={n})"] = float("nan")
            logger.info("N=%d seed %d: no schedule (%d blocking relations)", n, seed, len(exc.blocking))
            continue
        violations = verify_plan(plan)
        bad += bool(violations)
        ratio = plan.stats["total_distance"] / plan.stats["optimal_distance"]
        measured[f"distance / optimum (N={n})"] = ratio
        ratios.append(ratio)
        swaps, parkings = swaps + plan.stats["n_swaps"], parkings + plan.stats["n_parkings"]
        if fig is None:
            fig = _plan_figure(plan, f"block:{n} (lattice paths)")
    # No plan got a schedule: the claim already fails on "plans not collision-free" (bad == len(sizes)); 1.0
    # keeps the key finite for the runner. It is the true ratio of the control's unrepaired plans, but only a
    # placeholder for repaired ones (their distance is not measured when scheduling fails).
    worst = max(ratios) if ratios else 1.0
    measured = {
        "plans not collision-free": bad,
        "max distance / optimum": worst,
        **measured,
        "precedence cycles before repair": cycles,
        "static blockings before repair": blocked,
        "precedence edges before repair": edges,
        "swaps": swaps,
        "parkings": parkings,
    }
    holds = bad == 0 and worst < 1.05
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"plans not collision-free": "collision-free plans", "max distance / optimum": "minimal total distance"},
        baselines={"assignment optimum ratio": 1.0},
        elsewhere={"distance / optimum on dense targets, Euclidean [README v1]": "1.02-1.04"},
        reason="" if holds else f"{bad} of {len(sizes)} plans not collision-free; worst repaired ratio {worst:.4f}",
        figures={"plan": fig} if fig is not None else {},
    )


# ------------------------------------------------------------------------------------------- 2. SAT schedules
def _core_is_blocking_cycle(blocking) -> bool:
    """Ground-truth check of an UNSAT explanation: its "i must move before j" relations contain a cycle."""
    import networkx as nx

    g = nx.DiGraph((i, j) for i, j, _ in blocking if i != j)
    return bool(blocking) and not nx.is_directed_acyclic_graph(g)


@claim(
    "nanoassembly/sat-schedules-v2",
    statement="on the same repaired constraints the SAT schedule needs fewer layers (makespan) than greedy "
    "list scheduling (critical-path priority) for a 420-molecule Lieb lattice, and on the unrepaired "
    "constraints of a dense 10 x 10 block it detects that no schedule exists and names a blocking cycle",
    paper=f"{ABSTRACT}: satisfiability solving computes execution schedules in which each molecule has an "
    "empty corridor when it is scheduled to move",
    control="greedy list scheduling in SAT's place: the layer gap is 0 and, on the unrepaired block, the greedy "
    "pass gets stuck without naming any blocking molecules, so the claim must fail",
    by_construction="review (referee, issue 14): the second half holds by construction. A cycle in the unrepaired "
    "precedence graph is found by networkx before any SAT call, an UNSAT core of pure precedence clauses can only "
    "be a cycle, a depth-first search (nx.find_cycle) names one as well, and list_schedule was written to name "
    "none. Only the layer gap tests SAT.",
    judge=(
        Interval("greedy - SAT layers (Lieb lattice)", above=0.0),
        Interval("UNSAT core is a blocking cycle", above=0.5),
    ),
)
def sat_schedules(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.nanoassembly.assembly import plan_assembly, verify_plan
    from icml26.nanoassembly.schedule import ScheduleInfeasibleError

    scheduler = "greedy" if control else "sat"  # the one line the control changes
    n = {Scale.SMOKE: 100, Scale.SMALL: 420, Scale.PAPER: 420}[scale]
    starts, targets, shape = _instance("lieb", n, seed)
    ours = plan_assembly(starts, targets, shape, scheduler=scheduler)
    greedy = plan_assembly(starts, targets, shape, scheduler="greedy")
    violations = len(verify_plan(ours)) + len(verify_plan(greedy))
    # the unrepaired constraints of a dense block (every molecule moves: no surplus, no static blocking)
    d_starts, d_targets, d_shape = _dense_instance(36 if scale is Scale.SMOKE else 100, seed, surplus=1.0)
    t0 = time.perf_counter()
    try:
        plan_assembly(d_starts, d_targets, d_shape, metric="manhattan", repair_conflicts=False, scheduler=scheduler)
        blocking, detected = [], False
    except ScheduleInfeasibleError as exc:
        blocking, detected = exc.blocking, True
    unsat_s = time.perf_counter() - t0
    gap = greedy.stats["layers"] - ours.stats["layers"]
    valid = _core_is_blocking_cycle(blocking)
    key = "greedy - SAT layers (Lieb lattice)"
    holds = gap > 0 and valid
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            key: gap,
            "UNSAT core is a blocking cycle": float(valid),
            f"SAT layers (N={n})": ours.stats["layers"],
            f"schedule seconds (N={n})": ours.stats["sat_s"],
            "replay violations (both schedules)": violations,
            "unschedulable block detected": float(detected),
            "blocking relations named": len(blocking),
            "UNSAT detection seconds": unsat_s,
        },
        baselines={f"greedy layers (N={n})": greedy.stats["layers"], f"greedy seconds (N={n})": greedy.stats["sat_s"]},
        paper={key: "schedules by SAT (no number public)"},
        reason="" if holds else f"layer gap {gap}, blocking cycle named: {valid}",
    )


# --------------------------------------------------------------------------------------- 3. RL vs the rule
@functools.lru_cache(maxsize=64)
def _trained_agent(scale: Scale, seed: int, learn: bool = True):
    """The Q-learning agent after its training episodes on the ``tip-changes`` preset; ``learn=False`` (a
    negative control) runs the same episodes with learning rate 0, so the Q-table keeps its initial values."""
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


def _fresh(agent, seed: int):
    """The cached agent with its own tie-breaking generator, so that a claim's numbers do not depend on
    which other claim used the cached agent first (its Q-table is shared, read-only)."""
    out = copy.copy(agent)
    out.rng = np.random.default_rng(seed)
    return out


def _cost_per_move(res: dict, max_steps: int) -> float:
    """STM actions per *delivered* move: all actions (a failed move spends ``max_steps``) / successes."""
    s = res["success_rate"]
    if s == 0:
        return float("inf")
    return (s * res["actions_per_success"] + (1 - s) * max_steps) / s


@claim(
    "nanoassembly/rl-beats-scripted-v2",
    statement="on tip changes held out from training (tip states +-1.3 decades, a tip change every ~50 actions, "
    "kicks 0.2 decades earlier), the Q-learning agent needs fewer STM actions per delivered move than a "
    "three-line adaptive set-point rule (raise after a flat trace, lower after a kick), and its success rate "
    "is not lower by more than 1 point",
    paper=f"{ABSTRACT}: reinforcement learning agents execute sequences of STM actions",
    control="an untrained agent (Q-learning with learning rate 0: its Q-table keeps the initial values and it "
    "changes the set-point at random): it does not beat the rule and the claim must fail",
    judge=(
        Interval("rule - RL actions per move (unseen tips)", above=0.0),
        Interval("RL - rule success (unseen tips)", above=-0.01),
    ),
)
def rl_beats_scripted(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    agent, curve = _trained_agent(scale, seed, learn=not control)  # the one line the control changes
    agent = _fresh(agent, seed)
    episodes = {Scale.SMOKE: 200, Scale.SMALL: 600, Scale.PAPER: 3000}[scale]
    res = {}
    for cond in ("tip-changes", "tip-changes-unseen"):
        env = MoveMoleculeEnv(preset(cond))
        res[cond] = {  # the same episode seeds for every policy: paired
            name: evaluate(env, pol, episodes, seed=seed + 101)
            for name, pol in (("rl", agent), ("rule", AdaptiveSetpoint(env.cfg)), ("push", ScriptedPush(env.cfg)))
        }
        for r in res[cond].values():
            r["cost"] = _cost_per_move(r, env.cfg.max_steps)
    un = res["tip-changes-unseen"]
    d_cost = un["rule"]["cost"] - un["rl"]["cost"]
    d_success = un["rl"]["success_rate"] - un["rule"]["success_rate"]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    w = max(10, len(curve) // 30)
    ax.plot(np.convolve(curve, np.ones(w) / w, mode="valid"), label="Q-learning (training, seen tips)")
    for name, ls in (("rule", "--"), ("push", ":")):
        ax.axhline(res["tip-changes"][name]["cost"], ls=ls, color="k", label=f"{name} (seen tips, per delivered move)")
    ax.set_xlabel("training episode")
    ax.set_ylabel(f"STM actions per move (moving mean, {w})")
    ax.legend(fontsize=7)
    holds = d_cost > 0 and d_success > -0.01
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "rule - RL actions per move (unseen tips)": d_cost,
            "RL - rule success (unseen tips)": d_success,
            "RL actions per move (unseen tips)": un["rl"]["cost"],
            "RL success (unseen tips)": un["rl"]["success_rate"],
            "RL actions per move (seen tips)": res["tip-changes"]["rl"]["cost"],
            "RL success (seen tips)": res["tip-changes"]["rl"]["success_rate"],
        },
        baselines={
            "rule actions per move (unseen tips)": un["rule"]["cost"],
            "rule success (unseen tips)": un["rule"]["success_rate"],
            "push actions per move (unseen tips)": un["push"]["cost"],
            "push success (unseen tips)": un["push"]["success_rate"],
            "rule actions per move (seen tips)": res["tip-changes"]["rule"]["cost"],
        },
        paper={"RL success (unseen tips)": "RL executes STM actions (no number public)"},
        reason="" if holds else f"unseen tips: RL {un['rl']} vs rule {un['rule']}",
        figures={"learning-curve": fig},
    )


# ---------------------------------------------------------------------------------------- 4. assemble 420
@claim(
    "nanoassembly/assemble-420-v2",
    statement="executing the plan of a 420-molecule Lieb lattice in NanoAssemblyGym with tip changes on, the RL "
    "agent causes fewer collisions per 1,000 STM actions than the three-line adaptive set-point rule on the "
    "same plan and seeds, and completes the structure (completion > 99 %)",
    paper=f"{ABSTRACT}: autonomous assembly of structures containing up to 420 molecules",
    control="an untrained agent (learning rate 0) in the trained agent's place: it cannot cause fewer collisions "
    "than the rule on these instances, so the claim must fail",
    judge=(
        Interval("rule - RL collisions per 1k actions", above=0.0),
        Interval("RL completion", above=0.99),
    ),
)
def assemble_420(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, execute_plan
    from icml26.nanoassembly.assembly import plan_assembly
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import AssembleEnv

    n = {Scale.SMOKE: 60, Scale.SMALL: 420, Scale.PAPER: 420}[scale]
    agent, _ = _trained_agent(scale, seed, learn=not control)  # the one line the control changes
    agent = _fresh(agent, seed)
    cfg = preset("tip-changes")
    starts, targets, shape = _instance("lieb", n, seed)
    plan = plan_assembly(starts, targets, shape)
    env = AssembleEnv(plan, config=cfg, render_mode="rgb_array")
    env.reset(seed=seed)
    before = env.render()
    info, _ = execute_plan(env, agent, seed=seed)
    after = env.render()
    rule, _ = execute_plan(AssembleEnv(plan, config=cfg), AdaptiveSetpoint(cfg), seed=seed)
    push, _ = execute_plan(AssembleEnv(plan, config=cfg), ScriptedPush(cfg), seed=seed)

    def per_1k(r):
        return 1000.0 * r["collisions"] / max(r["actions"], 1)

    fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
    for ax, img, title in (
        (axes[0], before, f"lieb:{n} before"),
        (axes[1], after, f"after (RL): completion {info['completion']:.0%}, {info['collisions']} collisions"),
    ):
        ax.imshow(img)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    d = per_1k(rule) - per_1k(info)
    holds = d > 0 and info["completion"] > 0.99
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "rule - RL collisions per 1k actions": d,
            "RL completion": info["completion"],
            "RL collisions per 1k actions": per_1k(info),
            "RL STM actions": info["actions"],
            "RL tip travel (um)": info["tip_travel_nm"] / 1000,
            "RL images": info["images"],
        },
        baselines={
            "rule collisions per 1k actions": per_1k(rule),
            "rule completion": rule["completion"],
            "rule STM actions": rule["actions"],
            "push collisions per 1k actions": per_1k(push),
            "push completion": push["completion"],
            "push STM actions": push["actions"],
        },
        paper={"molecules": 420},
        reason=""
        if holds
        else f"collisions/1k: RL {per_1k(info):.2f} vs rule {per_1k(rule):.2f}; RL completion {info['completion']:.3f}",
        figures={"assembly": fig},
    )


CLAIMS = [collision_free_plans, sat_schedules, rl_beats_scripted, assemble_420]
