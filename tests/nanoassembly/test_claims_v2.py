"""Pieces of the v2 claims (issue 14): greedy list scheduling, the UNSAT core check, the adaptive rule,
the measures' ground truth."""

import networkx as nx
import numpy as np
import pytest

from icml26.nanoassembly.agents import AdaptiveSetpoint, ScriptedPush, evaluate
from icml26.nanoassembly.assembly import plan_assembly, verify_plan
from icml26.nanoassembly.claims import _core_is_blocking_cycle, _cost_per_move, _dense_instance, _raw_conflicts
from icml26.nanoassembly.config import preset
from icml26.nanoassembly.data import lieb_sites, make_instance
from icml26.nanoassembly.env import MoveMoleculeEnv
from icml26.nanoassembly.schedule import ScheduleInfeasibleError


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
