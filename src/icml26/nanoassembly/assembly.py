"""The planning pipeline (assign -> corridors -> repair -> SAT schedule), plan files and a replay verifier.

:func:`plan_assembly` is the one call a user needs; :func:`verify_plan` replays a plan with its own
geometry code (no planner code) and lists every violation: a corridor that is not empty when its move
runs, simultaneous moves that pass too close, two molecules on one site, a site off the lattice, an
unfilled target.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26._util.io import atomic_output, check_input_file
from icml26.nanoassembly.data import MAX_SIDE
from icml26.nanoassembly.planner import METRICS, Conflicts, assign, move_path, path_length, repair
from icml26.nanoassembly.schedule import ScheduleInfeasibleError, list_schedule, sat_schedule

SCHEDULERS = ("sat", "greedy")

logger = logging.getLogger(__name__)


@dataclass
class Plan:
    """A collision-free assembly plan.

    Attributes
    ----------
    shape : (width, height)
        Surface lattice size in sites.
    starts : int array of shape (M, 2); targets : int array of shape (N, 2)
    target_of : int array of shape (M,)
        Target index of each molecule after repair, -1 for surplus molecules.
    moves : list of dict
        In execution order: ``molecule``, ``path`` (list of [x, y] waypoints), ``step`` (layer index).
        One tip runs them in list order; moves of one layer may also run in parallel.
    stats : dict
        ``optimal_distance`` (assignment optimum), ``total_distance`` (after repair), ``n_swaps``,
        ``n_parkings``, ``layers``, ``clauses`` and the time of each stage in seconds.
    """

    shape: tuple[int, int]
    starts: np.ndarray
    targets: np.ndarray
    target_of: np.ndarray
    moves: list[dict]
    metric: str = "euclidean"
    half_width: float = 0.5
    stats: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": "icml26.nanoassembly.plan/1",
            "shape": list(self.shape),
            "metric": self.metric,
            "half_width": self.half_width,
            "starts": self.starts.tolist(),
            "targets": self.targets.tolist(),
            "target_of": self.target_of.tolist(),
            "moves": self.moves,
            "stats": self.stats,
        }

    def save(self, path: str | Path) -> None:
        """Write the plan JSON to exactly ``path``, atomically (a failed write keeps any existing file)."""
        with atomic_output(path) as tmp:
            tmp.write_text(json.dumps(self.to_json()))

    @classmethod
    def from_json(cls, data: dict) -> Plan:
        """Build a plan from :meth:`to_json` output; raises ValueError naming what is malformed."""
        if not isinstance(data, dict) or data.get("format") != "icml26.nanoassembly.plan/1":
            raise ValueError("not a nanoassembly plan file (missing format 'icml26.nanoassembly.plan/1')")
        try:
            shape = tuple(int(v) for v in data["shape"])
            starts = np.asarray(data["starts"], dtype=int).reshape(-1, 2)
            targets = np.asarray(data["targets"], dtype=int).reshape(-1, 2)
            target_of = np.asarray(data["target_of"], dtype=int).reshape(-1)
            moves = [
                {
                    "molecule": int(m["molecule"]),
                    "path": [[int(x), int(y)] for x, y in m["path"]],
                    "step": int(m["step"]),
                }
                for m in data["moves"]
            ]
            metric, half_width = str(data["metric"]), float(data["half_width"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed plan file: {type(exc).__name__}: {exc}") from None
        if len(shape) != 2 or len(target_of) != len(starts):
            raise ValueError("malformed plan file: shape must have 2 entries and target_of one per molecule")
        if not all(1 <= v <= MAX_SIDE for v in shape):
            raise ValueError(f"malformed plan file: surface {shape} must be 1 to {MAX_SIDE} sites a side")
        if metric not in METRICS:
            raise ValueError(f"malformed plan file: metric must be one of {METRICS}; got {metric!r}")
        if not (np.isfinite(half_width) and half_width > 0):
            # a NaN or non-positive half-width would switch off every corridor check of verify_plan
            raise ValueError(f"malformed plan file: half_width must be a positive number; got {half_width}")
        if any(not 0 <= m["molecule"] < len(starts) or len(m["path"]) < 2 for m in moves):
            raise ValueError("malformed plan file: a move names an unknown molecule or has fewer than 2 waypoints")
        return cls(shape, starts, targets, target_of, moves, metric, half_width, dict(data.get("stats", {})))

    @classmethod
    def load(cls, path: str | Path) -> Plan:
        """Read a plan file; raise ``OSError`` / ``ValueError`` naming the file and the cause."""
        path = check_input_file(path, what="plan file")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a plan file (not UTF-8 text)") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError(f"{path}: JSON nested too deeply") from None
        try:
            return cls.from_json(data)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None


def validate_sites(sites, shape: tuple[int, int], name: str) -> np.ndarray:
    """Check that ``sites`` are integer lattice sites inside the surface; return an int (K, 2) array."""
    arr = np.asarray(sites, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n, 2); got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: coordinates must be finite")
    off = (~np.isclose(arr, np.round(arr))).any(1)
    if off.any():
        raise ValueError(f"{name}: site {arr[off][0].tolist()} is off the lattice (coordinates must be integers)")
    arr = np.round(arr).astype(int)
    out = (arr < 0).any(1) | (arr[:, 0] >= shape[0]) | (arr[:, 1] >= shape[1])
    if out.any():
        raise ValueError(f"{name}: site {arr[out][0].tolist()} is out of bounds for a {shape[0]}x{shape[1]} surface")
    uniq, counts = np.unique(arr, axis=0, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name}: duplicate site {uniq[counts > 1][0].tolist()} (two {name} overlap)")
    return arr


def plan_assembly(
    starts,
    targets,
    shape: tuple[int, int],
    metric: str = "euclidean",
    half_width: float = 0.5,
    n_tips: int | None = None,
    solver: str = "cadical153",
    repair_conflicts: bool = True,
    precedence: bool = True,
    scheduler: str = "sat",
    target_of: np.ndarray | None = None,
    tie_seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Plan:
    """Plan the assembly of ``targets`` from molecules at ``starts``.

    Parameters
    ----------
    starts : array-like of shape (M, 2)
        Integer molecule sites; M >= N.
    targets : array-like of shape (N, 2)
        Integer target sites, all distinct.
    shape : (width, height)
        Lattice size.
    metric : {"euclidean", "manhattan"}
        Straight drags or x-then-y lattice paths.
    half_width : float
        Corridor half-width in lattice constants (footprint radius plus clearance).
    n_tips : int, optional
        At most this many moves per layer; None = unbounded (minimum-makespan layers).
    repair_conflicts : bool
        Break precedence cycles by target swaps and parking (default). False schedules the raw optimal
        assignment, a negative control: the scheduler raises ``ScheduleInfeasibleError`` on its cycles.
    precedence : bool
        Give the scheduler the corridor precedence constraints (default). False keeps only the
        no-simultaneity pairs, a negative control: the replay then finds occupied corridors.
    scheduler : {"sat", "greedy"}
        Minimum-makespan SAT layers (default) or greedy list scheduling (:func:`list_schedule`, the
        baseline: no optimality, and no blocking core when no schedule exists).
    target_of : int array of shape (M,), optional
        A given assignment (target index per molecule, -1 for surplus) in place of the optimal one, e.g. a
        random one (a negative control); ``stats["optimal_distance"]`` stays the assignment optimum.
    tie_seed : int, optional
        Greedy scheduler only: break its priority ties at random with this seed (see :func:`list_schedule`).
    progress : callable, optional
        ``progress(stage)`` is called as each stage starts (assignment, every repair round, scheduling): the
        repair of a 1,000-molecule blob runs for about a minute.

    Raises
    ------
    ScheduleInfeasibleError
        When no schedule exists; its ``stats`` hold ``optimal_distance`` and the ``total_distance`` of the
        (repaired) moves that could not be scheduled.
    """
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler must be one of {SCHEDULERS}; got {scheduler!r}")
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    if not half_width > 0:
        raise ValueError(f"half_width must be positive; got {half_width}")
    if n_tips is not None and (isinstance(n_tips, bool) or int(n_tips) != n_tips or n_tips < 1):
        raise ValueError(f"n_tips must be a positive integer or None; got {n_tips}")
    shape = (int(shape[0]), int(shape[1]))
    starts = validate_sites(starts, shape, "molecules")
    targets = validate_sites(targets, shape, "targets")
    if len(targets) > len(starts):
        raise ValueError(f"more targets ({len(targets)}) than molecules ({len(starts)})")
    if len(targets) > 1 and half_width > 0.5:
        d = np.linalg.norm(targets[:, None] - targets[None], axis=-1) + np.eye(len(targets)) * 1e9
        if d.min() < 2 * half_width - 1e-9:
            raise ValueError(f"targets closer than the molecule footprint 2*half_width = {2 * half_width}")
    note = progress if progress is not None else (lambda stage: None)
    t0 = time.perf_counter()
    note(f"assignment of {len(targets)} targets")
    optimal_target_of, optimum = assign(starts, targets, metric)
    if target_of is None:
        target_of = optimal_target_of
    else:
        target_of = np.asarray(target_of, dtype=int)
        given = target_of[target_of >= 0]
        if target_of.shape != (len(starts),) or sorted(given.tolist()) != list(range(len(targets))):
            raise ValueError("target_of must give each target to exactly one molecule (-1 for surplus ones)")
    t1 = time.perf_counter()
    rep = repair(
        starts, targets, target_of, shape, metric, half_width, max_iter=2000 if repair_conflicts else 0, progress=note
    )
    t2 = time.perf_counter()
    paths = [
        move_path(rep.waypoints[j][leg], rep.waypoints[j][leg + 1], metric, (j, leg) in rep.flips)
        for j, leg in rep.conflicts.moves
    ]
    conflicts = rep.conflicts if precedence else Conflicts(moves=rep.conflicts.moves)
    total = float(sum(path_length(p) for p in paths))
    note(f"{scheduler} schedule of {len(paths)} moves")
    try:
        if scheduler == "sat":
            steps, info = sat_schedule(conflicts, paths, half_width, n_tips, solver)
        else:
            steps, info = list_schedule(conflicts, paths, half_width, n_tips, tie_seed)
    except ScheduleInfeasibleError as exc:  # the distance of what could not be scheduled, for reports
        exc.stats = {"optimal_distance": optimum, "total_distance": total}
        raise
    t3 = time.perf_counter()
    order = np.lexsort((np.arange(len(steps)), steps))
    moves = [
        {"molecule": rep.conflicts.moves[k][0], "path": paths[k].astype(int).tolist(), "step": int(steps[k])}
        for k in order
    ]
    stats = {
        "optimal_distance": optimum,
        "total_distance": total,
        "n_swaps": rep.n_swaps,
        "n_parkings": rep.n_parkings,
        "n_flips": rep.n_flips,
        "n_moves": len(moves),
        "assign_s": t1 - t0,
        "repair_s": t2 - t1,
        "sat_s": t3 - t2,
        **info,
    }
    logger.info("planned %d molecules: %d moves, %d layers, %.3f s", len(targets), len(moves), stats["layers"], t3 - t0)
    return Plan(shape, starts, targets, rep.target_of, moves, metric, half_width, stats)


# ------------------------------------------------------------------------------------------ verification
def _dist_to_polyline(points: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Distance of points (P, 2) to a polyline (K, 2); written apart from the planner on purpose."""
    best = np.full(len(points), np.inf)
    for a, b in itertools.pairwise(poly):
        v, w = points - a, b - a
        L2 = float(w @ w)
        s = np.clip((v @ w) / L2, 0, 1) if L2 > 0 else np.zeros(len(points))
        best = np.minimum(best, np.hypot(*(v - s[:, None] * w).T))
    return best


def verify_plan(plan: Plan) -> list[str]:
    """Replay ``plan`` layer by layer; return every violation found (empty list = valid).

    A move is valid when, with every other molecule at its position before *and* after the layer, no
    other molecule lies within ``half_width`` of the move's path, and no other move of the same layer
    comes within ``2 * half_width`` of it.
    """
    h, (W, H) = plan.half_width, plan.shape
    pos = plan.starts.astype(float).copy()
    problems = []
    for name, sites in (("molecule", plan.starts), ("target", plan.targets)):
        off = np.flatnonzero((sites < 0).any(1) | (sites[:, 0] >= W) | (sites[:, 1] >= H))
        if len(off):
            problems.append(
                f"{len(off)} {name}(s) off the {W}x{H} surface, e.g. {name} {off[0]} at {sites[off[0]].tolist()}"
            )
    uniq, counts = np.unique(plan.starts, axis=0, return_counts=True)
    if (counts > 1).any():
        problems.append(f"two molecules start on site {uniq[counts > 1][0].tolist()}")
    steps = [m["step"] for m in plan.moves]
    negative = [k for k, s in enumerate(steps) if s < 0]
    if negative:
        problems.append(f"move {negative[0]} has a negative layer index {steps[negative[0]]}")
    if steps != sorted(steps):
        problems.append("moves are not listed in layer order")
    for step in sorted(set(steps)):
        layer = [(k, m) for k, m in enumerate(plan.moves) if m["step"] == step]
        post = pos.copy()
        for k, m in layer:
            path = np.asarray(m["path"], dtype=float)
            if ((path < 0) | (path >= [W, H])).any():
                problems.append(f"move {k}: path leaves the {W}x{H} surface")
            if not np.array_equal(pos[m["molecule"]], path[0]):
                problems.append(
                    f"move {k}: molecule {m['molecule']} is at {pos[m['molecule']].tolist()}, not at {path[0].tolist()}"
                )
            post[m["molecule"]] = path[-1]
        for k, m in layer:
            path, i = np.asarray(m["path"], dtype=float), m["molecule"]
            for when, state in (("before", pos), ("after", post)):
                d = _dist_to_polyline(state, path)
                d[i] = np.inf
                hit = np.flatnonzero(d < h - 1e-9)
                if len(hit):
                    problems.append(f"move {k} of molecule {i}: corridor holds molecule {hit[0]} {when} layer {step}")
        for a in range(len(layer)):
            pa = np.asarray(layer[a][1]["path"], dtype=float)
            for b in range(a + 1, len(layer)):
                pb = np.asarray(layer[b][1]["path"], dtype=float)
                # polylines come closer than 2h only if some vertex-to-path distance or a crossing says so
                close = min(_dist_to_polyline(pa, pb).min(), _dist_to_polyline(pb, pa).min()) < 2 * h - 1e-9
                if close or _polylines_cross(pa, pb):
                    problems.append(f"moves {layer[a][0]} and {layer[b][0]} run in one layer but pass too close")
        pos = post
        uniq, counts = np.unique(pos, axis=0, return_counts=True)
        if (counts > 1).any():
            problems.append(f"after layer {step}: two molecules on site {uniq[counts > 1][0].tolist()}")
    filled = {tuple(p) for p in pos.astype(int).tolist()}
    missing = [t for t in plan.targets.tolist() if tuple(t) not in filled]
    if missing:
        problems.append(f"{len(missing)} target(s) left empty, e.g. {missing[0]}")
    return problems


def _polylines_cross(p: np.ndarray, q: np.ndarray) -> bool:
    def orient(o, a, b):
        return np.sign((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))

    for a, b in itertools.pairwise(p):
        for c, d in itertools.pairwise(q):
            if orient(a, b, c) * orient(a, b, d) < 0 and orient(c, d, a) * orient(c, d, b) < 0:
                return True
    return False


# ------------------------------------------------------------------------------ a complete sequential planner
def _target_depth(targets: np.ndarray) -> np.ndarray:
    """Lattice steps (4-connected, through target sites) from each target to the nearest non-target site."""
    sites = {tuple(t) for t in targets.tolist()}
    depth = {s: 1 for s in sites if any((s[0] + dx, s[1] + dy) not in sites for dx, dy in _STEPS)}
    frontier = list(depth)
    while frontier:  # breadth-first from the rim inwards
        nxt = []
        for x, y in frontier:
            for dx, dy in _STEPS:
                s = (x + dx, y + dy)
                if s in sites and s not in depth:
                    depth[s] = depth[(x, y)] + 1
                    nxt.append(s)
        frontier = nxt
    return np.array([depth[tuple(t)] for t in targets.tolist()])


_STEPS = ((1, 0), (-1, 0), (0, 1), (0, -1))


def _free_path(start: tuple, goal: tuple, occupied: np.ndarray) -> np.ndarray | None:
    """Shortest 4-connected lattice path from ``start`` to ``goal`` through free sites, as its corner
    waypoints (K, 2); None when the goal cannot be reached."""
    W, H = occupied.shape
    parent = {start: None}
    frontier = collections.deque([start])
    while frontier:
        x, y = frontier.popleft()
        if (x, y) == goal:
            break
        for dx, dy in _STEPS:
            s = (x + dx, y + dy)
            if 0 <= s[0] < W and 0 <= s[1] < H and not occupied[s] and s not in parent:
                parent[s] = (x, y)
                frontier.append(s)
    if goal not in parent:
        return None
    cells = [goal]
    while parent[cells[-1]] is not None:
        cells.append(parent[cells[-1]])
    cells = np.array(cells[::-1])  # (L, 2), start first
    if len(cells) <= 2:
        return cells
    turn = np.flatnonzero((np.diff(cells[:-1], axis=0) != np.diff(cells[1:], axis=0)).any(1)) + 1
    return cells[np.r_[0, turn, len(cells) - 1]]  # keep only the corners


def sequential_plan(starts, targets, shape: tuple[int, int], target_of: np.ndarray | None = None) -> Plan:
    """A complete, slow planner: one molecule at a time, deepest target first, each along a shortest lattice
    path through the sites free at that moment (breadth-first search).

    Collision-free by construction (every corridor is empty when its move runs; one move per layer), at a
    distance near the assignment optimum because the molecules keep their optimal targets and only detour
    around molecules in the way. Filling the deepest targets first keeps the unfilled ones connected to
    the outside. The known-good arm (positive control) of ``collision-free-plans``. Raises
    :class:`ScheduleInfeasibleError` when a target cannot be reached.
    """
    shape = (int(shape[0]), int(shape[1]))
    starts = validate_sites(starts, shape, "molecules")
    targets = validate_sites(targets, shape, "targets")
    optimal_target_of, optimum = assign(starts, targets, "manhattan")
    target_of = optimal_target_of if target_of is None else np.asarray(target_of, dtype=int)
    molecule_of = {int(t): j for j, t in enumerate(target_of) if t >= 0}
    occupied = np.zeros(shape, dtype=bool)
    occupied[starts[:, 0], starts[:, 1]] = True
    moves, total = [], 0.0
    for t in np.lexsort((np.arange(len(targets)), -_target_depth(targets))):  # deepest first, then by index
        j = molecule_of[int(t)]
        start, goal = tuple(starts[j].tolist()), tuple(targets[t].tolist())
        if start == goal:
            continue
        occupied[start] = False
        path = _free_path(start, goal, occupied)
        if path is None:
            raise ScheduleInfeasibleError([(j, j, f"target {goal} cannot be reached from {start}")])
        occupied[goal] = True
        total += path_length(path.astype(float))
        moves.append({"molecule": j, "path": path.tolist(), "step": len(moves)})
    stats = {"optimal_distance": optimum, "total_distance": total, "n_moves": len(moves), "layers": len(moves)}
    return Plan(shape, starts, targets, target_of, moves, "manhattan", 0.5, stats)
