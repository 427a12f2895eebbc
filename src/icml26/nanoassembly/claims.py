"""The paper's headline claims as executable checks (abstract; the paper's text is not public).

Contract v3 (issue 39): every claim runs in three arms that share the data, seeds, measurement and verdict
code: the claim (``Arm.CLAIM``), a negative control with the effect removed (``Arm.NEGATIVE``; for the
comparisons an A/A run on its own seed stream) and a positive control with the effect planted
(``Arm.POSITIVE``). The README's *Claims* section says what changed from v2 and why.

1. ``collision-free-plans-v3``: on *dense* targets (filled 10 x 10 and 21 x 20 blocks, molecules at 30 %
   coverage, x-then-y lattice paths) every plan replays with 0 corridor violations and the worst plan's
   total distance is <= 1.05 x the assignment optimum (v3: the distance of every instance counts, also
   of one the repair could not make schedulable).
2. ``sat-schedules-v4``: on dense 10 x 10 blocks with straight drags, where the no-simultaneity
   constraints bind, the SAT schedule needs fewer layers (makespan) than greedy list scheduling (v3: dense
   blocks instead of Lieb lattices, whose makespan both reach at the precedence bound; the UNSAT half,
   true by construction, is dropped; v4: v3's 10 seeds were chosen after 5 had failed, so v4 is judged
   on fresh instances, seeds + :data:`FRESH`, with the seed count, 10, fixed before its first run).
3. ``rl-beats-scripted-v2``: on tip changes held out from training, the Q-learning agent needs fewer STM
   actions per delivered move than a three-line adaptive set-point rule, at no loss of success.
4. ``assemble-420-v3``: assembling a 420-molecule Lieb lattice with tip changes, the RL agent completes
   the structure and needs fewer STM actions per placed molecule than the adaptive rule (v3: actions, not
   collisions, which both reach at the floor of 0).

``MECHANISMS`` probes the credited components (the min-distance assignment, the conflict repair, SAT's
makespan search, the RL agent's correction of failed manipulations); ``MEASURES`` validates each judged
measure both ways (the truth scores best, a null input at the null).
"""

from __future__ import annotations

import copy
import functools
import logging
import re
import time

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism

logger = logging.getLogger(__name__)

ABSTRACT = "Abstract"

#: Independent seed streams of the arms that need their own randomness (random assignments, random ties,
#: the handicap's idle actions).
_NEGATIVE_STREAM, _HANDICAP_STREAM, _POSITIVE_STREAM = 1, 2, 3
#: The A/A copy of the rule runs on environment seeds this far from every seed the claim arm uses.
A_A_OFFSET = 1_000_000
#: ``sat-schedules-v4`` draws its blocks from claim seed + FRESH: instances no earlier version was judged on.
FRESH = 1000


def _v4_seed(scale: Scale, seed: int) -> int:
    """The instance seed of ``sat-schedules-v4`` (and its probe): seed + FRESH at every scale (the contract
    test judges a one-draw A/A control that holds on smoke seed 0 on two more seeds, so smoke needs no exception)."""
    return seed + FRESH


def _stream(seed: int, stream: int) -> int:
    """An integer seed of ``stream`` for claim seed ``seed``, independent of the claim arm's seeds."""
    return int(np.random.default_rng([seed, stream]).integers(2**31))


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


def _random_assignment(n_molecules: int, n_targets: int, seed: int) -> np.ndarray:
    """Each target gets a random molecule (surplus ones get -1): an assignment that ignores distance."""
    rng = np.random.default_rng(seed)
    target_of = np.full(n_molecules, -1, dtype=int)
    target_of[rng.choice(n_molecules, n_targets, replace=False)] = np.arange(n_targets)
    return target_of


def _nearest_assignment(starts: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Greedy assignment: each target in turn takes the nearest free molecule (lattice distance)."""
    free = np.ones(len(starts), dtype=bool)
    target_of = np.full(len(starts), -1, dtype=int)
    for k, t in enumerate(targets):
        d = np.abs(starts - t).sum(1) + np.where(free, 0, 10**9)
        j = int(np.argmin(d))
        target_of[j], free[j] = k, False
    return target_of


def _lattice_distance(starts, targets, target_of) -> float:
    moved = target_of >= 0
    return float(np.abs(starts[moved] - targets[target_of[moved]]).sum())


def _serialized(plan):
    """The same plan with one move per layer (the order of its layers): one STM tip, still collision-free."""
    out = copy.copy(plan)
    out.moves = [dict(m, step=k) for k, m in enumerate(plan.moves)]
    out.stats = dict(plan.stats, layers=len(plan.moves))
    return out


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
DENSE_SIZES = {Scale.SMOKE: (36, 100), Scale.SMALL: (100, 420), Scale.PAPER: (100, 420)}


@functools.lru_cache(maxsize=32)
def _dense_plan(n: int, seed: int, arm: Arm) -> dict:
    """One dense block planned in one arm (cached: the arms and the probes share it).

    Returns ``plan`` (None when no schedule was found), ``ratio`` (total lattice distance of the planned
    moves / the assignment optimum, also when they could not be scheduled), ``violations`` (replay),
    the repair's ``swaps``/``parkings`` and ``layers``.
    """
    from icml26.nanoassembly.assembly import plan_assembly, sequential_plan, verify_plan
    from icml26.nanoassembly.schedule import ScheduleInfeasibleError

    starts, targets, shape = _dense_instance(n, seed)
    if arm is Arm.POSITIVE:  # the known-good arm: the framework's plan where it has one, else the complete
        framework = _dense_plan(n, seed, Arm.CLAIM)  # sequential planner; both run one move per layer
        plan = (
            _serialized(framework["plan"]) if framework["plan"] is not None else sequential_plan(starts, targets, shape)
        )
        out = {"swaps": framework["swaps"], "parkings": framework["parkings"]}
    else:
        # the negative control: a random assignment (its own seed stream) sent to the scheduler unrepaired
        negative = arm is Arm.NEGATIVE
        given = _random_assignment(len(starts), len(targets), _stream(seed, _NEGATIVE_STREAM)) if negative else None
        try:
            plan = plan_assembly(
                starts, targets, shape, metric="manhattan", repair_conflicts=not negative, target_of=given
            )
        except ScheduleInfeasibleError as exc:  # no collision-free order of these moves exists
            logger.info("N=%d seed %d (%s): no schedule (%d blocking relations)", n, seed, arm, len(exc.blocking))
            ratio = exc.stats["total_distance"] / exc.stats["optimal_distance"]
            return {"plan": None, "ratio": ratio, "violations": 1, "swaps": 0, "parkings": 0, "layers": 0}
        out = {"swaps": plan.stats["n_swaps"], "parkings": plan.stats["n_parkings"]}
    violations = len(verify_plan(plan))
    ratio = plan.stats["total_distance"] / plan.stats["optimal_distance"]
    return {"plan": plan, "ratio": ratio, "violations": violations, "layers": plan.stats["layers"], **out}


@claim(
    "nanoassembly/collision-free-plans-v3",
    statement="on dense targets (filled 10 x 10 and 21 x 20 blocks, 1.1 N molecules at 30 % coverage, x-then-y "
    "lattice paths) assignment + conflict repair + SAT give plans that replay with 0 corridor violations "
    "(no instance left unschedulable) at total distance <= 1.05 x the assignment optimum on every instance "
    "(also counting the distance of an instance the repair could not make schedulable)",
    paper=f"{ABSTRACT}: collision-free assembly plans that minimize the total distance traveled by molecules",
    control="neither distance minimisation nor conflict repair: a random assignment (its own seed stream) goes "
    "unrepaired to the SAT scheduler, which finds no schedule, at ~1.7 x the optimal distance",
    positive="a known-good planner on the same blocks: the framework's plan where it found one, else a complete "
    "sequential planner (deepest target first, shortest path through the free sites: collision-free by "
    "construction, 1.02-1.03 x the optimum on 21 x 20 blocks), both run one move per layer",
    mechanisms=("min-distance-assignment", "conflict-repair"),
    judge=(
        Interval("plans not collision-free", below=0.5, discrete=True),
        Interval("max distance / optimum", below=1.05),
    ),
)
def collision_free_plans(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    sizes = DENSE_SIZES[scale]
    per_size = {n: _dense_plan(n, seed, arm) for n in sizes}
    cycles = blocked = edges = 0
    for n in sizes:  # the conflicts of the optimal assignment before repair (a property of the data)
        starts, targets, _ = _dense_instance(n, seed)
        conf, problems = _raw_conflicts(starts, targets, "manhattan")
        n_blocked = len(dict.fromkeys(conf.blocked))  # _problems lists the blocking pairs, then one cycle per SCC
        cycles, blocked, edges = cycles + len(problems) - n_blocked, blocked + n_blocked, edges + len(conf.before)
    bad = sum(r["plan"] is None or r["violations"] > 0 for r in per_size.values())
    worst = max(r["ratio"] for r in per_size.values())
    measured = {
        "plans not collision-free": bad,
        "max distance / optimum": worst,
        **{f"distance / optimum (N={n})": r["ratio"] for n, r in per_size.items()},
        "layers (all blocks)": sum(r["layers"] for r in per_size.values()),
        "precedence cycles before repair": cycles,
        "static blockings before repair": blocked,
        "precedence edges before repair": edges,
        "swaps": sum(r["swaps"] for r in per_size.values()),
        "parkings": sum(r["parkings"] for r in per_size.values()),
    }
    holds = bad == 0 and worst < 1.05
    shown = next((r["plan"] for r in per_size.values() if r["plan"] is not None), None)
    figures = {}
    if arm is Arm.CLAIM and shown is not None:
        figures["plan"] = _plan_figure(shown, f"block:{len(shown.targets)} (lattice paths)")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"plans not collision-free": "collision-free plans", "max distance / optimum": "minimal total distance"},
        baselines={"assignment optimum ratio": 1.0},
        elsewhere={"distance / optimum on dense targets, Euclidean [README v1]": "1.02-1.04"},
        reason="" if holds else f"{bad} of {len(sizes)} plans not collision-free; worst distance ratio {worst:.4f}",
        figures=figures,
    )


# ------------------------------------------------------------------------------------------- 2. SAT schedules
SCHEDULE_SIZES = {Scale.SMOKE: (36, 100), Scale.SMALL: (100, 420), Scale.PAPER: (100, 420)}  # (dense, Lieb)


def _shifted(plan, layers: int = 1):
    """The plan with ``layers`` empty layers first: the same schedule, ``layers`` longer (a planted handicap)."""
    out = copy.copy(plan)
    out.moves = [dict(m, step=m["step"] + layers) for m in plan.moves]
    out.stats = dict(plan.stats, layers=plan.stats["layers"] + layers)
    return out


def _makespans(starts, targets, shape, seed: int, arm: Arm, metric: str = "euclidean") -> dict:
    """Layers of "ours" and of the greedy baseline, both on the same repaired constraints and both replayed
    by the verifier. "Ours" is SAT in the claim arm; in both controls it is a second greedy schedule with
    its own random tie-breaking (an A/A pair with the baseline; the negative and the positive control draw
    their ties from different streams), and in the positive control the baseline then carries one planted
    empty layer: the claimed gap of one layer on top of the A/A scatter."""
    from icml26.nanoassembly.assembly import plan_assembly, verify_plan

    t0 = time.perf_counter()
    if arm is Arm.CLAIM:
        ours = plan_assembly(starts, targets, shape, metric)
    else:
        stream = _NEGATIVE_STREAM if arm is Arm.NEGATIVE else _POSITIVE_STREAM
        ours = plan_assembly(starts, targets, shape, metric, scheduler="greedy", tie_seed=_stream(seed, stream))
    seconds = time.perf_counter() - t0
    greedy = plan_assembly(starts, targets, shape, metric, scheduler="greedy")
    if arm is Arm.POSITIVE:
        greedy = _shifted(greedy)
    layers = {
        name: max((m["step"] for m in p.moves), default=-1) + 1 for name, p in (("ours", ours), ("greedy", greedy))
    }
    return {**layers, "violations": len(verify_plan(ours)) + len(verify_plan(greedy)), "seconds": seconds}


@claim(
    "nanoassembly/sat-schedules-v4",
    statement="on the same repaired constraints of a dense 10 x 10 block with straight drags (1.1 N molecules at "
    "30 % coverage), where moves that pass close may not share a layer, the SAT schedule needs fewer layers "
    "(makespan) than greedy list scheduling with critical-path priority (paired per seed; v3's setting, judged "
    "on fresh blocks, seed + 1000, over 10 seeds fixed before the first v4 run)",
    paper=f"{ABSTRACT}: satisfiability solving computes execution schedules in which each molecule has an "
    "empty corridor when it is scheduled to move",
    control="A/A: a second greedy list schedule, its priority ties broken at random (its own seed stream), in "
    "SAT's place: the layer gap scatters around 0",
    positive="A/A plus the claimed gap: a second greedy schedule with random ties (its own seed stream, not the "
    "negative control's) in SAT's place, against the greedy baseline handicapped by one empty first layer "
    "(replayed and counted like every schedule): one layer, the smallest gap there is, planted on the A/A scatter",
    mechanisms=("sat-makespan-search",),
    judge=Interval("greedy - SAT layers (dense block)", above=0.0, discrete=True),
)
def sat_schedules(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    n_dense, n_lieb = SCHEDULE_SIZES[scale]
    seed = _v4_seed(scale, seed)  # v4: fresh instances (and streams), none of which v3 was judged on
    dense = _makespans(*_dense_instance(n_dense, seed), seed, arm)
    lieb = _makespans(*_instance("lieb", n_lieb, seed), seed, arm)  # the paper's structure, reported
    gap = dense["greedy"] - dense["ours"]
    key = "greedy - SAT layers (dense block)"
    holds = gap > 0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            key: gap,
            f"SAT layers (dense N={n_dense})": dense["ours"],
            f"greedy - SAT layers (Lieb N={n_lieb})": lieb["greedy"] - lieb["ours"],
            f"SAT layers (Lieb N={n_lieb})": lieb["ours"],
            "replay violations (all schedules)": dense["violations"] + lieb["violations"],
            f"schedule seconds (Lieb N={n_lieb})": lieb["seconds"],
        },
        baselines={
            f"greedy layers (dense N={n_dense})": dense["greedy"],
            f"greedy layers (Lieb N={n_lieb})": lieb["greedy"],
        },
        paper={key: "schedules by SAT (no number public)"},
        reason="" if holds else f"dense block: greedy {dense['greedy']} layers, SAT {dense['ours']}",
    )


# --------------------------------------------------------------------------------------- 3. RL vs the rule
@functools.lru_cache(maxsize=64)
def _trained_agent(scale: Scale, seed: int):
    """The Q-learning agent after its training episodes on the ``tip-changes`` preset (cached per seed)."""
    from icml26.nanoassembly.agents import QLearningAgent
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    cfg = preset("tip-changes", max_goal_distance=10.0)
    episodes = {Scale.SMOKE: 800, Scale.SMALL: 3000, Scale.PAPER: 20000}[scale]
    agent = QLearningAgent(cfg, seed=seed)
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


class _Unresponsive:
    """The trained Q-agent with the trace outcome hidden: it always acts as if no manipulation had happened
    yet (outcome 0), so it cannot correct a failed or kicked manipulation (the rl-correction ablation)."""

    def __init__(self, agent):
        self.agent = agent

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        _, age = self.agent.state(obs)
        q = self.agent.q[0, age]
        return self.agent.action(obs, int(self.agent.rng.choice(np.flatnonzero(q == q.max()))))


def _cost_per_move(res: dict, max_steps: int) -> float:
    """STM actions per *delivered* move: all actions (a failed move spends ``max_steps``) / successes."""
    s = res["success_rate"]
    if s == 0:
        return float("inf")
    return (s * res["actions_per_success"] + (1 - s) * max_steps) / s


def _arms_policies(arm: Arm, scale: Scale, seed: int, cfg):
    """(policy in the RL slot, its episode-seed offset, the baseline policy) of one arm.

    Claim: the trained Q-agent vs the rule on the same episodes. Negative (A/A): a second rule, on its own
    stream of episode seeds, in the agent's slot. Positive: the rule in the agent's slot vs the rule
    handicapped by 10 % idle STM actions (its own seed stream), the effect planted at a known size.
    """
    from icml26.nanoassembly.agents import AdaptiveSetpoint, IdleHandicap

    rule = AdaptiveSetpoint(cfg)
    if arm is Arm.NEGATIVE:
        return AdaptiveSetpoint(cfg), A_A_OFFSET, rule
    if arm is Arm.POSITIVE:
        return AdaptiveSetpoint(cfg), 0, IdleHandicap(rule, cfg, 0.1, seed=_stream(seed, _HANDICAP_STREAM))
    return _fresh(_trained_agent(scale, seed)[0], seed), 0, rule


RL_EPISODES = {Scale.SMOKE: 200, Scale.SMALL: 600, Scale.PAPER: 3000}


@claim(
    "nanoassembly/rl-beats-scripted-v2",
    statement="on tip changes held out from training (tip states +-1.3 decades, a tip change every ~50 actions, "
    "kicks 0.2 decades earlier), the Q-learning agent needs fewer STM actions per delivered move than a "
    "three-line adaptive set-point rule (raise after a flat trace, lower after a kick), and its success rate "
    "is not lower by more than 1 point",
    paper=f"{ABSTRACT}: reinforcement learning agents execute sequences of STM actions",
    control="A/A: a second copy of the rule, on its own stream of episode seeds, in the agent's place: both "
    "differences scatter around 0",
    positive="the rule in the agent's place against the rule handicapped by 10 % idle STM actions (a 10 % "
    "advantage planted; the trace it reacts to is unchanged)",
    mechanisms=("rl-correction",),
    judge=(
        Interval("rule - RL actions per move (unseen tips)", above=0.0),
        Interval("RL - rule success (unseen tips)", above=-0.01),
    ),
)
def rl_beats_scripted(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import ScriptedPush, evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    episodes = RL_EPISODES[scale]
    res = {}
    for cond in ("tip-changes", "tip-changes-unseen"):
        env = MoveMoleculeEnv(preset(cond))
        ours, offset, baseline = _arms_policies(arm, scale, seed, env.cfg)
        res[cond] = {  # the same episode seeds for every policy (paired), except the A/A copy's own stream
            "rl": evaluate(env, ours, episodes, seed=seed + 101 + offset),
            "rule": evaluate(env, baseline, episodes, seed=seed + 101),
            "push": evaluate(env, ScriptedPush(env.cfg), episodes, seed=seed + 101),
        }
        for r in res[cond].values():
            r["cost"] = _cost_per_move(r, env.cfg.max_steps)
    un = res["tip-changes-unseen"]
    d_cost = un["rule"]["cost"] - un["rl"]["cost"]
    d_success = un["rl"]["success_rate"] - un["rule"]["success_rate"]
    figures = {}
    if arm is Arm.CLAIM:
        curve = _trained_agent(scale, seed)[1]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        w = max(10, len(curve) // 30)
        ax.plot(np.convolve(curve, np.ones(w) / w, mode="valid"), label="Q-learning (training, seen tips)")
        for name, ls in (("rule", "--"), ("push", ":")):
            ax.axhline(res["tip-changes"][name]["cost"], ls=ls, color="k", label=f"{name} (seen tips, per move)")
        ax.set_xlabel("training episode")
        ax.set_ylabel(f"STM actions per move (moving mean, {w})")
        ax.legend(fontsize=7)
        figures["learning-curve"] = fig
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
        reason=""
        if holds
        else f"unseen tips: RL {un['rl']['cost']:.2f} actions per move at {un['rl']['success_rate']:.3f} success, "
        f"rule {un['rule']['cost']:.2f} at {un['rule']['success_rate']:.3f}",
        figures=figures,
    )


# ---------------------------------------------------------------------------------------- 4. assemble 420
ASSEMBLE_SIZES = {Scale.SMOKE: 60, Scale.SMALL: 420, Scale.PAPER: 420}


@functools.lru_cache(maxsize=8)
def _lieb_plan(n: int, seed: int):
    from icml26.nanoassembly.assembly import plan_assembly

    return plan_assembly(*_instance("lieb", n, seed))


def _actions_per_placed(info: dict, n_targets: int) -> float:
    """STM actions per target filled (inf when none was)."""
    placed = round(info["completion"] * n_targets)
    return info["actions"] / placed if placed else float("inf")


@claim(
    "nanoassembly/assemble-420-v3",
    statement="executing the plan of a 420-molecule Lieb lattice in NanoAssemblyGym with tip changes on, the RL "
    "agent completes the structure (completion > 99 %) and needs fewer STM actions per placed molecule than "
    "the three-line adaptive set-point rule on the same plan and environment seeds",
    paper=f"{ABSTRACT}: autonomous assembly of structures containing up to 420 molecules",
    control="A/A: a second copy of the rule, on its own environment seed, in the agent's place: the difference "
    "scatters around 0",
    positive="the rule in the agent's place against the rule handicapped by 10 % idle STM actions (a 10 % "
    "advantage planted)",
    mechanisms=("rl-correction",),
    judge=(
        Interval("rule - RL actions per placed molecule", above=0.0),
        Interval("RL completion", above=0.99, discrete=True),
    ),
)
def assemble_420(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    import matplotlib.pyplot as plt

    from icml26.nanoassembly.agents import ScriptedPush, execute_plan
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import AssembleEnv

    n = ASSEMBLE_SIZES[scale]
    cfg = preset("tip-changes")
    plan = _lieb_plan(n, seed)
    ours, offset, baseline = _arms_policies(arm, scale, seed, cfg)
    env = AssembleEnv(plan, config=cfg, render_mode="rgb_array" if arm is Arm.CLAIM else None)
    env.reset(seed=seed + offset)
    before = env.render()
    info, _ = execute_plan(env, ours, seed=seed + offset)
    after = env.render()
    rule, _ = execute_plan(AssembleEnv(plan, config=cfg), baseline, seed=seed)
    push, _ = execute_plan(AssembleEnv(plan, config=cfg), ScriptedPush(cfg), seed=seed)
    n_targets = len(plan.targets)

    def per_1k(r, key="collisions"):
        return 1000.0 * r[key] / max(r["actions"], 1)

    figures = {}
    if arm is Arm.CLAIM:
        fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
        for ax, img, title in (
            (axes[0], before, f"lieb:{n} before"),
            (axes[1], after, f"after (RL): completion {info['completion']:.0%}, {info['collisions']} collisions"),
        ):
            ax.imshow(img)
            ax.set_title(title, fontsize=9)
            ax.axis("off")
        figures["assembly"] = fig
    d = _actions_per_placed(rule, n_targets) - _actions_per_placed(info, n_targets)
    holds = d > 0 and info["completion"] > 0.99
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "rule - RL actions per placed molecule": d,
            "RL completion": info["completion"],
            "RL actions per placed molecule": _actions_per_placed(info, n_targets),
            "RL kicks per 1k actions": per_1k(info, "kicks"),
            "RL collisions per 1k actions": per_1k(info),
            "RL tip travel (um)": info["tip_travel_nm"] / 1000,
            "RL images": info["images"],
        },
        baselines={
            "rule actions per placed molecule": _actions_per_placed(rule, n_targets),
            "rule completion": rule["completion"],
            "rule kicks per 1k actions": per_1k(rule, "kicks"),
            "rule collisions per 1k actions": per_1k(rule),
            "push actions per placed molecule": _actions_per_placed(push, n_targets),
            "push completion": push["completion"],
            "push collisions per 1k actions": per_1k(push),
        },
        paper={"molecules": 420},
        reason=""
        if holds
        else f"actions per placed molecule: RL {_actions_per_placed(info, n_targets):.2f} vs rule "
        f"{_actions_per_placed(rule, n_targets):.2f}; RL completion {info['completion']:.3f}",
        figures=figures,
    )


# ------------------------------------------------------------------------------------------------ mechanisms
@mechanism(
    "min-distance-assignment",
    component="Hungarian (min-total-distance) assignment of molecules to targets",
    measures="distance of a greedy nearest-molecule assignment / the Hungarian optimum - 1, on the dense blocks "
    "of collision-free-plans (the distance the assignment saves)",
    above=0.01,
)
def min_distance_assignment(scale: Scale, seed: int) -> dict[str, float]:
    from icml26.nanoassembly.planner import assign

    excess = []
    for n in DENSE_SIZES[scale]:
        starts, targets, _ = _dense_instance(n, seed)
        _, optimum = assign(starts, targets, "manhattan")
        excess.append(_lattice_distance(starts, targets, _nearest_assignment(starts, targets)) / optimum - 1)
    return {"min-distance-assignment": float(np.mean(excess)), "max excess": float(np.max(excess))}


@mechanism(
    "conflict-repair",
    component="conflict repair (target swaps, turned lattice paths, parking) of the precedence cycles",
    measures="fraction of the dense blocks of collision-free-plans (whose optimal assignment has precedence "
    "cycles, so no schedule) that the repair makes schedulable",
    above=0.0,
)
def conflict_repair(scale: Scale, seed: int) -> dict[str, float]:
    cyclic = repaired = 0
    for n in DENSE_SIZES[scale]:
        starts, targets, _ = _dense_instance(n, seed)
        _, problems = _raw_conflicts(starts, targets, "manhattan")
        if problems:
            cyclic += 1
            repaired += _dense_plan(n, seed, Arm.CLAIM)["plan"] is not None
    return {"conflict-repair": repaired / cyclic if cyclic else float("nan"), "blocks with cycles": cyclic}


@mechanism(
    "sat-makespan-search",
    component="SAT's search for the minimum makespan under the no-simultaneity constraints",
    measures="SAT layers above the precedence bound (longest chain + 1) on the dense block of sat-schedules: "
    "0 means any level-first order reaches the optimum and SAT has nothing to find",
    above=0.0,
)
def sat_makespan_search(scale: Scale, seed: int) -> dict[str, float]:
    import networkx as nx

    from icml26.nanoassembly.assembly import plan_assembly
    from icml26.nanoassembly.planner import assign, repair

    starts, targets, shape = _dense_instance(SCHEDULE_SIZES[scale][0], _v4_seed(scale, seed))  # v4's blocks
    target_of, _ = assign(starts, targets, "euclidean")
    bound = nx.dag_longest_path_length(repair(starts, targets, target_of, shape).conflicts.graph()) + 1
    layers = plan_assembly(starts, targets, shape).stats["layers"]
    return {"sat-makespan-search": float(layers - bound), "precedence bound": float(bound)}


@functools.lru_cache(maxsize=16)
def _correction_gain(scale: Scale, seed: int) -> dict[str, float]:
    from icml26.nanoassembly.agents import evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    env = MoveMoleculeEnv(preset("tip-changes-unseen"))
    agent = _fresh(_trained_agent(scale, seed)[0], seed)
    cost = {
        name: _cost_per_move(evaluate(env, pol, RL_EPISODES[scale], seed=seed + 101), env.cfg.max_steps)
        for name, pol in (("trained", agent), ("unresponsive", _Unresponsive(_fresh(agent, seed))))
    }
    # the direction of its corrections: raise the set-point after a flat trace, lower it after a kick
    deltas = [
        agent.deltas[int(np.argmax(agent.q[outcome, age])) % len(agent.deltas)]
        for outcome in (1, 4)
        for age in range(3)
    ]
    right = [d > 0 for d in deltas[:3]] + [d < 0 for d in deltas[3:]]
    return {
        "rl-correction": cost["unresponsive"] - cost["trained"],
        "trained actions per move": cost["trained"],
        "unresponsive actions per move": cost["unresponsive"],
        "corrections in the physical direction": float(np.mean(right)),
    }


@mechanism(
    "rl-correction",
    component="the RL agent's correction of failed and kicked manipulations (its response to the current trace)",
    measures="STM actions per delivered move (unseen tips) of the trained Q-agent with the trace outcome hidden "
    "minus those of the trained agent: the actions its corrections save",
    above=0.1,
)
def rl_correction(scale: Scale, seed: int) -> dict[str, float]:
    return _correction_gain(scale, seed)


# ---------------------------------------------------------------------------------------------------- measures
def _violations_per_move(plan) -> float:
    """Moves the replay verifier finds a violation in, per move (the measure of plans not collision-free)."""
    from icml26.nanoassembly.assembly import verify_plan

    bad = {int(m.group(1)) for p in verify_plan(plan) for m in [re.match(r"moves? (\d+)", p)] if m}
    return len(bad) / max(len(plan.moves), 1)


def _replay_check(seed: int) -> dict[str, float]:
    """The replay verifier on a dense 6 x 6 block: the SAT plan (truth: none), the same moves without their
    precedence constraints (an alternative), and the same moves in a random order, one per layer (null)."""
    from icml26.nanoassembly.assembly import plan_assembly

    starts, targets, shape = _dense_instance(36, seed)
    truth = plan_assembly(starts, targets, shape, metric="manhattan")
    unordered = plan_assembly(starts, targets, shape, metric="manhattan", precedence=False)
    shuffled = copy.copy(truth)
    order = np.random.default_rng(seed).permutation(len(truth.moves))
    shuffled.moves = [dict(truth.moves[k], step=i) for i, k in enumerate(order)]
    return {
        "truth": _violations_per_move(truth),
        "no precedence": _violations_per_move(unordered),
        "null": _violations_per_move(shuffled),
    }


def _distance_check(seed: int) -> dict[str, float]:
    """distance / optimum on a dense 10 x 10 block: the Hungarian assignment (truth: 1), the greedy
    nearest-molecule assignment (alternative) and a random assignment (null: no distance minimisation)."""
    from icml26.nanoassembly.planner import assign

    starts, targets, _ = _dense_instance(100, seed)
    target_of, optimum = assign(starts, targets, "manhattan")
    rand = _random_assignment(len(starts), len(targets), seed)
    return {
        "truth": _lattice_distance(starts, targets, target_of) / optimum,
        "nearest": _lattice_distance(starts, targets, _nearest_assignment(starts, targets)) / optimum,
        "null": _lattice_distance(starts, targets, rand) / optimum,
    }


def _makespan_check(seed: int) -> dict[str, float]:
    """greedy - X layers on the first dense 6 x 6 block (seeds from ``seed`` on) where the exact optimum
    beats greedy: X = SAT's optimum (truth), a one-tip schedule (alternative) and a second greedy schedule
    with random ties (null: no better scheduler)."""
    from icml26.nanoassembly.assembly import plan_assembly

    for s in range(seed, seed + 50):
        inst = _dense_instance(36, s)
        greedy = plan_assembly(*inst, scheduler="greedy").stats["layers"]
        sat = plan_assembly(*inst).stats["layers"]
        if sat < greedy:
            break
    else:
        raise RuntimeError("no dense 6 x 6 block within 50 seeds where SAT beats greedy")
    return {
        "truth": greedy - sat,
        "one tip": greedy - plan_assembly(*inst, scheduler="greedy", n_tips=1).stats["layers"],
        "null": greedy
        - plan_assembly(*inst, scheduler="greedy", tie_seed=_stream(s, _NEGATIVE_STREAM)).stats["layers"],
    }


def _move_cost_check(seed: int) -> dict[str, float]:
    """rule - X STM actions per delivered move (unseen tips, 300 paired episodes): X = a tip oracle that reads
    the hidden tip state (truth), the fixed push (alternative), a second rule on its own episodes (null)."""
    from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, TipOracle, evaluate
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import MoveMoleculeEnv

    env = MoveMoleculeEnv(preset("tip-changes-unseen"))

    def cost(policy, s=seed):
        return _cost_per_move(evaluate(env, policy, 300, seed=s), env.cfg.max_steps)

    rule = cost(AdaptiveSetpoint(env.cfg))
    return {
        "truth": rule - cost(TipOracle(env)),
        "push": rule - cost(ScriptedPush(env.cfg)),
        "null": rule - cost(AdaptiveSetpoint(env.cfg), seed + A_A_OFFSET),
    }


def _assembly_cost_check(seed: int, runs: int = 6) -> dict[str, float]:
    """rule - X STM actions per placed molecule executing a 60-molecule Lieb plan with frequent tip changes
    (``tip-changes-unseen``), averaged over ``runs`` environment seeds: X = the tip oracle (truth), the fixed
    push (alternative), a second rule on its own environment seeds (null)."""
    from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, TipOracle, execute_plan
    from icml26.nanoassembly.config import preset
    from icml26.nanoassembly.env import AssembleEnv

    cfg, plan = preset("tip-changes-unseen"), _lieb_plan(60, seed)

    def cost(make_policy, offset=0):
        out = []
        for s in range(seed * runs, seed * runs + runs):
            env = AssembleEnv(plan, config=cfg)
            out.append(_actions_per_placed(execute_plan(env, make_policy(env), seed=s + offset)[0], len(plan.targets)))
        return float(np.mean(out))

    rule = cost(lambda env: AdaptiveSetpoint(cfg))
    return {
        "truth": rule - cost(TipOracle),
        "push": rule - cost(lambda env: ScriptedPush(cfg)),
        "null": rule - cost(lambda env: AdaptiveSetpoint(cfg), A_A_OFFSET),
    }


MEASURES = [
    MeasureCheck(
        "moves with a replay violation, per move", _replay_check, null_band=(0.02, 1.0), higher_is_better=False
    ),
    MeasureCheck("distance / optimum", _distance_check, null_band=(1.3, 10.0), higher_is_better=False, margin=0.01),
    MeasureCheck("greedy - X layers", _makespan_check, null_band=(-1.0, 1.0), margin=0.5),
    MeasureCheck("rule - X actions per delivered move", _move_cost_check, null_band=(-0.6, 0.6), margin=0.5),
    MeasureCheck("rule - X actions per placed molecule", _assembly_cost_check, null_band=(-1.0, 1.0), margin=0.2),
]
MECHANISMS = [min_distance_assignment, conflict_repair, sat_makespan_search, rl_correction]
CLAIMS = [collision_free_plans, sat_schedules, rl_beats_scripted, assemble_420]
