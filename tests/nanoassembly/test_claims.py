"""Pieces of the claims (issues 14 and 39): greedy list scheduling, the UNSAT core, the adaptive rule,
the measures' ground truth; the controls (random assignment, A/A greedy, idle handicap, tip oracle, the
complete sequential planner), the mechanisms' probes and the measure checks."""

import networkx as nx
import numpy as np
import pytest

from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, evaluate
from icml26.nanoassembly.assembly import plan_assembly, verify_plan
from icml26.nanoassembly.claims import _cost_per_move, _dense_instance, _raw_conflicts
from icml26.nanoassembly.config import preset
from icml26.nanoassembly.data import lieb_sites, make_instance
from icml26.nanoassembly.env import MoveMoleculeEnv
from icml26.nanoassembly.schedule import ScheduleInfeasibleError


def _core_is_blocking_cycle(blocking) -> bool:
    """Ground-truth check of an UNSAT explanation: its "i must move before j" relations contain a cycle."""
    g = nx.DiGraph((i, j) for i, j, _ in blocking if i != j)
    return bool(blocking) and not nx.is_directed_acyclic_graph(g)


@pytest.mark.parametrize("seed", [0, 1])
def test_greedy_list_schedule_is_valid_and_never_beats_sat(seed):
    starts, targets, shape = make_instance(lieb_sites(60), 66, seed=seed)
    sat = plan_assembly(starts, targets, shape)
    greedy = plan_assembly(starts, targets, shape, scheduler="greedy")
    assert verify_plan(greedy) == [] and verify_plan(sat) == []
    assert greedy.stats["layers"] >= sat.stats["layers"]  # SAT's makespan is the minimum
    one_tip = plan_assembly(starts, targets, shape, scheduler="greedy", n_tips=1)
    assert one_tip.stats["layers"] == len(one_tip.moves) and verify_plan(one_tip) == []


def test_unknown_scheduler():
    starts, targets, shape = make_instance(lieb_sites(10), 12, seed=0)
    with pytest.raises(ValueError, match="scheduler"):
        plan_assembly(starts, targets, shape, scheduler="magic")


def test_core_check_on_known_relations():
    assert _core_is_blocking_cycle([(1, 2, "a"), (2, 1, "b")])
    assert _core_is_blocking_cycle([(1, 2, ""), (2, 3, ""), (3, 1, "")])
    assert not _core_is_blocking_cycle([(1, 2, ""), (2, 3, "")])
    assert not _core_is_blocking_cycle([])


def test_dense_unrepaired_block_is_unsat_with_a_blocking_cycle():
    """The unrepaired constraints of a dense block have precedence cycles: SAT must say so and name one; the
    greedy baseline gets stuck without naming anyone."""
    starts, targets, shape = _dense_instance(36, 0, surplus=1.0)
    conf, problems = _raw_conflicts(starts, targets, "manhattan")
    assert problems and not conf.blocked  # ground truth: cycles exist, no static molecule (all move)
    with pytest.raises(ScheduleInfeasibleError) as sat:
        plan_assembly(starts, targets, shape, metric="manhattan", repair_conflicts=False)
    assert _core_is_blocking_cycle(sat.value.blocking)
    with pytest.raises(ScheduleInfeasibleError) as greedy:
        plan_assembly(starts, targets, shape, metric="manhattan", repair_conflicts=False, scheduler="greedy")
    assert not _core_is_blocking_cycle(greedy.value.blocking)


def test_distance_ratio_is_exactly_one_without_conflicts():
    """Ground truth of the distance measure: a conflict-free instance is planned at the optimum itself."""
    starts = np.array([[2, 8], [5, 8], [8, 8]])  # three molecules straight above three targets
    targets = np.array([[2, 2], [5, 2], [8, 2]])
    plan = plan_assembly(starts, targets, (12, 12), metric="manhattan")
    assert verify_plan(plan) == []
    assert plan.stats["total_distance"] == pytest.approx(plan.stats["optimal_distance"]) == 18.0
    assert plan.stats["n_swaps"] == plan.stats["n_parkings"] == 0


def test_cost_per_delivered_move():
    assert _cost_per_move({"success_rate": 1.0, "actions_per_success": 3.0}, 20) == 3.0
    assert _cost_per_move({"success_rate": 0.5, "actions_per_success": 4.0}, 20) == pytest.approx(24.0)
    assert _cost_per_move({"success_rate": 0.0, "actions_per_success": float("nan")}, 20) == float("inf")


def _obs(spikes, kicked, du, drag=1.0, age=0.0):
    return np.array([3.0, 0.0, spikes, 0.0, kicked, du, drag, age], dtype=np.float32)


def test_adaptive_rule_raises_after_flat_and_lowers_after_kick():
    cfg = preset("calibrated")
    rule = AdaptiveSetpoint(cfg, step=0.2)

    def margin(action):  # invert the env's log map of bias and current
        env = MoveMoleculeEnv(cfg)
        return env._decode(action)[1] - cfg.u_nominal

    assert margin(rule(_obs(0.0, 0.0, 0.0, drag=0.0))) == pytest.approx(cfg.push_margin, abs=1e-3)
    assert margin(rule(_obs(0.0, 0.0, 0.5))) == pytest.approx(0.7, abs=1e-3)  # flat trace: up one step
    assert margin(rule(_obs(0.75, 1.0, 0.5))) == pytest.approx(0.1, abs=1e-3)  # kick: down two steps
    assert margin(rule(_obs(0.5, 0.0, 0.5))) == pytest.approx(0.5, abs=1e-3)  # moved: keep
    assert margin(rule(_obs(0.0, 0.0, 0.8))) == pytest.approx(1.0, abs=1e-3)
    assert margin(rule(_obs(0.0, 1.0, -0.5))) == pytest.approx(-0.6, abs=1e-3)  # stays on the ladder


def test_adaptive_rule_beats_fixed_push_after_tip_changes():
    env = MoveMoleculeEnv(preset("tip-changes-unseen"))
    rule = evaluate(env, AdaptiveSetpoint(env.cfg), 150, seed=3)
    push = evaluate(env, ScriptedPush(env.cfg), 150, seed=3)
    assert rule["success_rate"] > push["success_rate"]


def test_unseen_preset_differs_from_training():
    seen, unseen = preset("tip-changes"), preset("tip-changes-unseen")
    assert unseen.tip_change_interval < seen.tip_change_interval
    assert unseen.tip_offset_range > seen.tip_offset_range and unseen.jump_margin < seen.jump_margin


def test_turning_a_lattice_path_round_breaks_a_cycle_at_no_cost():
    from icml26.nanoassembly.planner import _first_flip, find_conflicts, move_path, path_length

    assert move_path((1, 0), (3, 2), "manhattan", y_first=True).tolist() == [[1, 0], [1, 2], [3, 2]]
    assert path_length(move_path((1, 0), (3, 2), "manhattan", True)) == path_length(
        move_path((1, 0), (3, 2), "manhattan")
    )
    # A: (1,0) -> (3,2) along x first crosses B's start (2,0); B: (2,0) -> (0,2) crosses A's start (1,0)
    wps = [np.array([[1, 0], [3, 2]]), np.array([[2, 0], [0, 2]])]
    assert not nx.is_directed_acyclic_graph(find_conflicts(wps, "manhattan", 0.5).graph())
    move = _first_flip([0, 1], wps, set(), set(), "manhattan", 0.5)
    assert move is not None
    assert nx.is_directed_acyclic_graph(find_conflicts(wps, "manhattan", 0.5, {move}).graph())
    assert _first_flip([0, 1], wps, set(), set(), "euclidean", 0.5) is None  # straight drags have no corner


def test_dense_lattice_block_is_repaired():
    """10 x 10 block, seed 3: before path turning the repair left a precedence cycle (no schedule)."""
    starts, targets, shape = _dense_instance(100, 3)
    plan = plan_assembly(starts, targets, shape, metric="manhattan")
    assert verify_plan(plan) == []
    assert 1.0 <= plan.stats["total_distance"] / plan.stats["optimal_distance"] < 1.05


# ------------------------------------------------------------------ review of issue 14: input checks, ground truth
def test_greedy_scheduler_rejects_bad_tip_budget_instead_of_hanging():
    from icml26.nanoassembly.planner import Conflicts
    from icml26.nanoassembly.schedule import list_schedule

    starts, targets, shape = make_instance(lieb_sites(10), 12, seed=0)
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="n_tips"):
            plan_assembly(starts, targets, shape, scheduler="greedy", n_tips=bad)
    conf = Conflicts(moves=[(0, 0), (1, 0)])
    paths = [np.array([[0.0, 0.0], [3.0, 0.0]]), np.array([[0.0, 5.0], [3.0, 5.0]])]
    with pytest.raises(ValueError, match="n_tips"):
        list_schedule(conf, paths, n_tips=0)  # used to loop for ever: no move ever fits a layer
    with pytest.raises(ValueError, match="one path per move"):
        list_schedule(conf, paths[:1])
    with pytest.raises(ValueError, match="parking"):
        list_schedule(Conflicts(moves=conf.moves, either=[((0, 1), (1, 0))]), paths)
    steps, info = list_schedule(conf, paths, n_tips=1)
    assert sorted(steps.tolist()) == [0, 1] and info["layers"] == 2


def test_adaptive_rule_rejects_bad_parameters():
    cfg = preset("calibrated")
    for kwargs, match in (({"step": 0.0}, "step"), ({"step": -0.2}, "step"), ({"image_every": 0}, "image_every")):
        with pytest.raises(ValueError, match=match):
            AdaptiveSetpoint(cfg, **kwargs)
    with pytest.raises(ValueError, match="lo < hi"):
        AdaptiveSetpoint(cfg, lo=1.0, hi=0.5)


def test_cost_per_move_ranks_a_tip_oracle_first():
    """Ground truth of the rl-beats-scripted measure: a policy that reads the hidden tip state (and images
    as often as the rule) must need fewer STM actions per delivered move than the rule and the fixed push."""
    from icml26.nanoassembly.agents import TipOracle

    env = MoveMoleculeEnv(preset("tip-changes-unseen"))
    cost = {
        name: _cost_per_move(evaluate(env, pol, 300, seed=5), env.cfg.max_steps)
        for name, pol in (
            ("oracle", TipOracle(env)),
            ("rule", AdaptiveSetpoint(env.cfg)),
            ("push", ScriptedPush(env.cfg)),
        )
    }
    assert cost["oracle"] < cost["rule"] < cost["push"], cost


def test_collisions_are_counted_when_a_molecule_blocks_the_corridor():
    """Ground truth of the assemble-420 measure: a plan whose corridor holds another molecule must log collisions."""
    from icml26.nanoassembly.assembly import Plan
    from icml26.nanoassembly.env import AssembleEnv

    plan = Plan(
        (8, 8),
        np.array([[0, 0], [2, 0]]),
        np.array([[4, 0]]),
        np.array([0, -1]),
        [{"molecule": 0, "path": [[0, 0], [4, 0]], "step": 0}],
        metric="manhattan",
    )
    assert verify_plan(plan)  # the verifier sees the blocked corridor
    cfg = preset("calibrated", drift_per_step=0.0, landing_noise=0.0)
    from icml26.nanoassembly.agents import execute_plan

    info, _ = execute_plan(AssembleEnv(plan, config=cfg), ScriptedPush(cfg), seed=0)
    assert info["collisions"] > 0 and info["completion"] == 0.0
