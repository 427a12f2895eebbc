"""Planner: assignment vs brute force, corridors vs a slow reference, precedence rules, repair, SAT, verifier."""

import itertools
import json

import numpy as np
import pytest

from icml26.nanoassembly.assembly import Plan, plan_assembly, verify_plan
from icml26.nanoassembly.data import block_sites, lieb_sites, make_instance, text_sites
from icml26.nanoassembly.planner import Conflicts, assign, corridor_cells, find_conflicts, move_path
from icml26.nanoassembly.schedule import ScheduleInfeasibleError, explain_infeasible, sat_schedule


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_assignment_matches_brute_force(metric):
    rng = np.random.default_rng(3)
    for _ in range(5):
        starts = rng.integers(0, 10, size=(6, 2))
        targets = rng.integers(0, 10, size=(4, 2))
        target_of, total = assign(starts, targets, metric)
        d = (lambda a, b: np.abs(a - b).sum()) if metric == "manhattan" else (lambda a, b: np.linalg.norm(a - b))
        best = min(
            sum(d(starts[m], targets[k]) for k, m in enumerate(perm)) for perm in itertools.permutations(range(6), 4)
        )
        assert total == pytest.approx(best)
        assert sorted(target_of[target_of >= 0].tolist()) == [0, 1, 2, 3]


def test_corridor_matches_slow_reference():
    rng = np.random.default_rng(1)
    for _ in range(30):
        a, b = rng.integers(0, 12, size=2), rng.integers(0, 12, size=2)
        h = float(rng.choice([0.5, 0.8, 1.2]))
        for metric in ("euclidean", "manhattan"):
            path = move_path(a, b, metric)
            got = {tuple(c) for c in corridor_cells(path, h).tolist()}
            want = set()
            for x in range(-3, 16):
                for y in range(-3, 16):
                    p = np.array([x, y], float)
                    dist = min(
                        np.linalg.norm(
                            p - (s + np.clip((p - s) @ (e - s) / max((e - s) @ (e - s), 1e-12), 0, 1) * (e - s))
                        )
                        for s, e in itertools.pairwise(path)
                    )
                    if dist < h - 1e-9:
                        want.add((x, y))
            assert got == want
            cells = corridor_cells(path, h)
            assert tuple(cells[0]) == tuple(a) or np.linalg.norm(cells[0] - a) < h  # ordered from the start


def test_precedence_rules():
    # molecule 0 moves (0,0) -> (6,0); molecule 1 sits on its path and moves away; molecule 2 arrives on it
    wps = [np.array([[0, 0], [6, 0]]), np.array([[3, 0], [3, 5]]), np.array([[8, 8], [5, 0]])]
    conf = find_conflicts(wps, "euclidean", 0.5)
    assert (1, 0) in conf.before  # 1's start on 0's corridor: 1 moves first
    assert (0, 2) in conf.before  # 2's target on 0's corridor: 2 moves after 0
    assert not conf.blocked


def test_static_molecule_on_corridor_is_blocked():
    wps = [np.array([[0, 0], [6, 0]]), np.array([[3, 0]])]  # molecule 1 never moves
    conf = find_conflicts(wps, "euclidean", 0.5)
    assert conf.blocked == [(0, 1)]
    with pytest.raises(ScheduleInfeasibleError, match="never leaves"):
        sat_schedule(conf, [move_path(*wps[0], "euclidean")])


def test_unsat_core_names_the_cycle():
    conf = Conflicts(moves=[(0, 0), (1, 0), (2, 0)], before={(0, 1), (1, 0), (1, 2)})
    pairs = {(i, j) for i, j, _ in explain_infeasible(conf)}
    assert pairs == {(0, 1), (1, 0)}
    with pytest.raises(ScheduleInfeasibleError) as exc:
        sat_schedule(conf, [np.array([[k, 0], [k, 5]], float) for k in range(0, 30, 10)])
    assert {(i, j) for i, j, _ in exc.value.blocking} == {(0, 1), (1, 0)}


def test_sat_respects_precedence_and_is_minimal():
    # a chain 0 < 1 < 2 and an independent move 3: minimum makespan is 3 layers
    paths = [np.array([[10 * k, 0], [10 * k, 3]], float) for k in range(4)]
    conf = Conflicts(moves=[(k, 0) for k in range(4)], before={(0, 1), (1, 2)})
    steps, info = sat_schedule(conf, paths)
    assert steps[0] < steps[1] < steps[2]
    assert info["layers"] == 3
    steps, info = sat_schedule(conf, paths, n_tips=1)
    assert sorted(steps.tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", [0, 417])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_plans_replay_clean_near_optimal(metric, seed):
    for targets in (block_sites(36), text_sites("AB"), 2 * lieb_sites(40)):
        starts, targets, shape = make_instance(targets, len(targets) + 5, seed=seed)
        plan = plan_assembly(starts, targets, shape, metric=metric)
        assert verify_plan(plan) == []
        assert plan.stats["total_distance"] <= 1.05 * plan.stats["optimal_distance"] + 1e-9
        assert plan.stats["total_distance"] >= plan.stats["optimal_distance"] - 1e-9  # optimum is a lower bound


def test_negative_control_switches():
    """Without repair the optimal assignment of a dense block has precedence cycles (no schedule exists);
    without the precedence constraints the schedule runs moves through occupied corridors."""
    starts, targets, shape = make_instance(block_sites(36), 41, seed=0)
    assert verify_plan(plan_assembly(starts, targets, shape)) == []
    with pytest.raises(ScheduleInfeasibleError):
        plan_assembly(starts, targets, shape, repair_conflicts=False)
    loose = plan_assembly(starts, targets, shape, precedence=False)
    assert any("corridor holds" in p for p in verify_plan(loose))


def test_tip_budget_limits_layer_size():
    starts, targets, shape = make_instance(lieb_sites(30), 33, seed=4)
    plan = plan_assembly(starts, targets, shape, n_tips=2)
    counts = np.bincount([m["step"] for m in plan.moves])
    assert counts.max() <= 2
    assert verify_plan(plan) == []


def test_verifier_catches_tampering(tmp_path):
    starts, targets, shape = make_instance(block_sites(25), 30, seed=2)
    plan = plan_assembly(starts, targets, shape)
    data = plan.to_json()
    # run everything in one layer, in reverse: some corridor is then occupied or moves pass too close
    data["moves"] = [dict(m, step=0) for m in reversed(data["moves"])]
    assert verify_plan(Plan.from_json(data))
    data = plan.to_json()
    data["moves"] = data["moves"][:-1]
    assert any("left empty" in p for p in verify_plan(Plan.from_json(data)))
    path = tmp_path / "plan.json"
    plan.save(path)
    assert verify_plan(Plan.load(path)) == []


@pytest.mark.parametrize(
    "starts, targets, match",
    [
        ([[0, 0]], [[1, 1], [2, 2]], "more targets"),
        ([[0, 0], [5, 5]], [[1, 1], [1, 1]], "duplicate"),
        ([[0, 0], [5, 5]], [[1.5, 1], [2, 2]], "off the lattice"),
        ([[0, 0], [5, 5]], [[1, 1], [20, 2]], "out of bounds"),
        ([[0, 0], [0, 0]], [[1, 1]], "duplicate"),
        ([[0, 0]], [[1, 1, 1]], "shape"),
    ],
)
def test_bad_input(starts, targets, match):
    with pytest.raises(ValueError, match=match):
        plan_assembly(starts, targets, (10, 10))


def test_bad_options():
    with pytest.raises(ValueError, match="metric"):
        plan_assembly([[0, 0]], [[1, 1]], (5, 5), metric="chebyshev")
    with pytest.raises(ValueError, match="footprint"):
        plan_assembly([[0, 0], [4, 4]], [[1, 1], [2, 1]], (5, 5), half_width=1.0)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("half_width", float("nan"), "half_width"), ("half_width", -1.0, "half_width"), ("metric", "chebyshev", "metric")],
)
def test_plan_file_with_bad_geometry_is_rejected(field, value, match):
    """A NaN or negative half-width would make every corridor check pass: verify_plan must never see it."""
    starts, targets, shape = make_instance(block_sites(9), 12, seed=0)
    data = plan_assembly(starts, targets, shape).to_json()
    data["moves"] = [dict(m, step=0) for m in data["moves"]]  # everything in one layer: not a valid plan
    data[field] = value
    with pytest.raises(ValueError, match=f"malformed plan file: {match}"):
        Plan.from_json(data)


def test_malformed_plan_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        Plan.load(bad)
    bad.write_text(json.dumps({"format": "something"}))
    with pytest.raises(ValueError, match="not a nanoassembly plan"):
        Plan.load(bad)
    bad.write_text(json.dumps({"format": "icml26.nanoassembly.plan/1", "shape": [5, 5]}))
    with pytest.raises(ValueError, match="malformed"):
        Plan.load(bad)
