"""Assembly planning: min-distance assignment, corridors, precedence conflicts and their repair.

The planner works on a square surface lattice of ``width x height`` adsorption sites, coordinates
``(x, y)`` in lattice constants. Pipeline (abstract: "collision-free assembly plans that minimize the total
distance traveled by molecules"):

1. **Assignment** (Eq. 1): ``min_pi sum_k d(s_pi(k), t_k)`` over injective maps from targets to molecules,
   solved exactly by :func:`scipy.optimize.linear_sum_assignment` (Euclidean or Manhattan metric ``d``).
2. **Corridors**: a move's corridor is every site within ``half_width`` (molecule footprint radius plus
   clearance, lattice units) of its path: the straight segment (Euclidean) or the x-then-y lattice path
   (Manhattan). "Each molecule has an empty corridor available when it is scheduled to move."
3. **Precedence**: if molecule j sits at site c during the interval between its moves and c lies in the
   corridor of move m, then m must happen before j arrives at c or after j leaves c. For one-move molecules
   this is a plain order: *another's start in my corridor => it moves first; another's target in my
   corridor => it moves after me*.
4. **Repair**: a precedence cycle (A's start on B's path while B's path crosses A's target) makes every
   schedule impossible; we swap the targets of two molecules on the cycle (cheapest swap first), with
   lattice paths turn one move's L-shaped path round (y first: same length) when no swap breaks it, and
   otherwise send one molecule to an intermediate **parking** site.

Scheduling (SAT) and the replay verifier live in :mod:`icml26.nanoassembly.schedule`.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

logger = logging.getLogger(__name__)

METRICS = ("euclidean", "manhattan")
_EPS = 1e-9


# ----------------------------------------------------------------------------------------------- geometry
def move_path(start, end, metric: str = "euclidean", y_first: bool = False) -> np.ndarray:
    """Waypoints of the path from ``start`` to ``end``: array of shape (K, 2), K in {2, 3}.

    A lattice (Manhattan) path runs along x first, then y; ``y_first`` turns it the other way round (same
    length, the other corner), which the repair uses to break conflicts at no cost in distance.
    """
    s, e = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    if metric == "euclidean" or s[0] == e[0] or s[1] == e[1]:
        return np.stack([s, e])
    corner = np.array([s[0], e[1]]) if y_first else np.array([e[0], s[1]])
    return np.stack([s, corner, e])


def path_length(path: np.ndarray) -> float:
    """Euclidean length of a polyline of shape (K, 2) (equals the Manhattan length for lattice paths)."""
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())


def _point_segment_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of points (P, 2) to the segment a-b."""
    ab = b - a
    denom = float(ab @ ab)
    t = np.zeros(len(points)) if denom == 0 else np.clip((points - a) @ ab / denom, 0.0, 1.0)
    return np.linalg.norm(points - (a + t[:, None] * ab), axis=1)


def corridor_cells(path: np.ndarray, half_width: float = 0.5) -> np.ndarray:
    """Lattice sites swept by a molecule of footprint ``half_width`` moving along ``path``.

    Returns an int array of shape (C, 2) with every site whose distance to the polyline is strictly less
    than ``half_width``, ordered by arc length along the path (the order in which a dragged molecule
    visits them).
    """
    cells, keys = [], []
    offset = 0.0
    r = int(np.ceil(half_width))
    for a, b in itertools.pairwise(path):
        lo = np.floor(np.minimum(a, b)).astype(int) - r
        hi = np.ceil(np.maximum(a, b)).astype(int) + r
        xs, ys = np.meshgrid(np.arange(lo[0], hi[0] + 1), np.arange(lo[1], hi[1] + 1), indexing="ij")
        pts = np.stack([xs.ravel(), ys.ravel()], axis=1)
        inside = _point_segment_distance(pts.astype(float), a, b) < half_width - _EPS
        pts = pts[inside]
        ab = b - a
        seg = float(np.linalg.norm(ab))
        along = (pts - a) @ ab / seg if seg > 0 else np.zeros(len(pts))
        cells.append(pts)
        keys.append(offset + along)
        offset += seg
    if len(cells) == 1:
        return cells[0][np.argsort(keys[0], kind="stable")]
    pts, key = np.concatenate(cells), np.concatenate(keys)
    _, first = np.unique(pts, axis=0, return_index=True)  # a corner site belongs to both segments
    first = first[np.argsort(key[first], kind="stable")]
    return pts[first]


@lru_cache(maxsize=65536)
def _move_corridor(start: tuple, end: tuple, metric: str, half_width: float, y_first: bool = False) -> tuple:
    """Cached corridor of one move as a tuple of (x, y) sites (repair re-evaluates unchanged moves)."""
    cells = corridor_cells(move_path(start, end, metric, y_first), half_width)
    return tuple(map(tuple, cells.tolist()))


# --------------------------------------------------------------------------------------------- assignment
def assign(starts: np.ndarray, targets: np.ndarray, metric: str = "euclidean") -> tuple[np.ndarray, float]:
    """Min-total-distance assignment of molecules to targets (Eq. 1, Hungarian / LAPJV).

    Parameters
    ----------
    starts : int array of shape (M, 2)
        Molecule sites.
    targets : int array of shape (N, 2)
        Target sites, N <= M.
    metric : {"euclidean", "manhattan"}

    Returns
    -------
    target_of : int array of shape (M,)
        Index of each molecule's target, ``-1`` for surplus molecules that stay where they are.
    total : float
        The optimal total distance.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    cost = cdist(starts, targets, "euclidean" if metric == "euclidean" else "cityblock")  # (M, N)
    rows, cols = linear_sum_assignment(cost)
    target_of = np.full(len(starts), -1, dtype=int)
    target_of[rows] = cols
    return target_of, float(cost[rows, cols].sum())


# --------------------------------------------------------------------------------------------- conflicts
@dataclass
class Conflicts:
    """Scheduling constraints between moves, derived from corridors and molecule positions.

    Attributes
    ----------
    moves : list of (molecule, leg)
        Every non-trivial move; ``leg`` counts the moves of one molecule (0, 1 for a parked molecule).
    before : set of (a, b)
        Move ``a`` must happen before move ``b`` (indices into ``moves``).
    either : list of ((a, b), (c, d))
        At least one of the two orders must hold (a molecule parked on a corridor site).
    blocked : list of (i, j)
        Molecule j never leaves a site on molecule i's corridor: no schedule exists.
    reasons : dict of (a, b) -> str
        Why each order was imposed, in terms of molecules.
    """

    moves: list[tuple[int, int]] = field(default_factory=list)
    before: set[tuple[int, int]] = field(default_factory=set)
    either: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    blocked: list[tuple[int, int]] = field(default_factory=list)
    reasons: dict[tuple[int, int], str] = field(default_factory=dict)

    def graph(self) -> nx.DiGraph:
        """The hard precedence graph over move indices."""
        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.moves)))
        g.add_edges_from(self.before)
        return g


def find_conflicts(
    waypoints: list[np.ndarray], metric: str, half_width: float, flips: frozenset | set = frozenset()
) -> Conflicts:
    """Precedence constraints implied by the corridors (step 3 of the module docstring).

    Parameters
    ----------
    waypoints : list of int arrays of shape (k_j + 1, 2)
        The sites molecule j occupies in turn: start, optional parking sites, final site.
    flips : set of (molecule, leg)
        Moves whose lattice paths run along y first (see :func:`move_path`).
    """
    out = Conflicts()
    move_id: dict[tuple[int, int], int] = {}
    occupants: dict[tuple[int, int], list[tuple[int, int]]] = {}  # site -> [(molecule, position index)]
    for j, wp in enumerate(waypoints):
        for t, site in enumerate(wp):
            occupants.setdefault((int(site[0]), int(site[1])), []).append((j, t))
        for leg in range(len(wp) - 1):
            move_id[(j, leg)] = len(out.moves)
            out.moves.append((j, leg))
            if leg > 0:
                out.before.add((move_id[(j, leg - 1)], move_id[(j, leg)]))
    for (i, leg), m in move_id.items():
        a, b = waypoints[i][leg], waypoints[i][leg + 1]
        ends = (int(a[0]), int(a[1])), (int(b[0]), int(b[1]))
        for c in _move_corridor(*ends, metric, float(half_width), (i, leg) in flips):
            for j, t in occupants.get(c, ()):
                if j == i:
                    continue
                k = len(waypoints[j]) - 1  # molecule j has k moves; it sits at position t after move t-1
                arrive = move_id.get((j, t - 1)) if t > 0 else None  # m before j arrives at c
                leave = move_id.get((j, t)) if t < k else None  # m after j leaves c
                if arrive is None and leave is None:
                    out.blocked.append((i, j))
                elif leave is None:
                    out.before.add((m, arrive))
                    out.reasons.setdefault((m, arrive), f"molecule {j}'s destination lies on molecule {i}'s corridor")
                elif arrive is None:
                    out.before.add((leave, m))
                    out.reasons.setdefault((leave, m), f"molecule {j}'s start lies on molecule {i}'s corridor")
                else:
                    out.either.append(((m, arrive), (leave, m)))
    return out


# ------------------------------------------------------------------------------------------------ repair
@dataclass
class RepairResult:
    """Waypoints after repair and what it cost."""

    target_of: np.ndarray  # (M,) target index per molecule, -1 = surplus
    waypoints: list[np.ndarray]  # per molecule, (k_j + 1, 2)
    conflicts: Conflicts
    n_swaps: int
    n_parkings: int
    flips: frozenset = frozenset()  # (molecule, leg) of the moves whose lattice paths run along y first
    n_flips: int = 0


def _waypoints(starts, targets, target_of, parks: dict[int, np.ndarray]) -> list[np.ndarray]:
    out = []
    for j, s in enumerate(starts):
        end = s if target_of[j] < 0 else targets[target_of[j]]
        if j in parks:
            out.append(np.stack([s, parks[j], end]))
        elif np.array_equal(end, s):
            out.append(s[None, :])
        else:
            out.append(np.stack([s, end]))
    return out


def _distance(starts, targets, target_of, metric) -> float:
    ok = target_of >= 0
    d = targets[target_of[ok]] - starts[ok]
    return float(np.abs(d).sum() if metric == "manhattan" else np.linalg.norm(d, axis=1).sum())


def _problems(conf: Conflicts) -> list[list[int]]:
    """Molecules of every blocking pair and of one cycle per cyclic component; empty when schedulable."""
    out = [list(p) for p in dict.fromkeys(conf.blocked)]
    g = conf.graph()
    for scc in nx.strongly_connected_components(g):
        if len(scc) > 1:
            cycle = nx.find_cycle(g.subgraph(scc))
            out.append(list(dict.fromkeys(conf.moves[a][0] for a, _ in cycle)))
    return out


def _park_site(j, waypoints, shape, metric, half_width, flips=frozenset()) -> np.ndarray:
    """Free site (on no current corridor, holding no molecule) with the shortest detour start -> site -> end."""
    busy = np.zeros(shape, dtype=bool)
    for i, wp in enumerate(waypoints):
        busy[wp[:, 0], wp[:, 1]] = True
        for leg, (a, b) in enumerate(itertools.pairwise(wp)):
            ends = tuple(a.tolist()), tuple(b.tolist())
            cells = np.array(_move_corridor(*ends, metric, float(half_width), (i, leg) in flips))
            cells = cells[(cells >= 0).all(1) & (cells < shape).all(1)]
            busy[cells[:, 0], cells[:, 1]] = True
    free = np.argwhere(~busy)
    if len(free) == 0:
        raise ValueError("no free parking site left on the surface; use a larger lattice")
    s, e = waypoints[j][0], waypoints[j][-1]
    if metric == "manhattan":
        detour = np.abs(free - s).sum(1) + np.abs(free - e).sum(1)
    else:
        detour = np.linalg.norm(free - s, axis=1) + np.linalg.norm(free - e, axis=1)
    return free[np.argmin(detour + 1e-6 * np.abs(free - s).sum(1))]


def _first_flip(mols, wps, flips, tried, metric, half_width):
    """A move (molecule, leg) of ``mols`` whose turning the other way round (y first) makes the problem's
    own constraints consistent; each move is tried once. Lattice paths only; None when none works."""
    if metric != "manhattan":
        return None
    for m in mols:
        for leg in range(len(wps[m]) - 1):
            if (m, leg) in tried or (wps[m][leg] == wps[m][leg + 1]).any():  # tried, or straight: no corner
                continue
            trial = flips ^ {(m, leg)}
            local = {(a, g) for a, k in enumerate(mols) for k2, g in trial if k2 == k}
            sub = find_conflicts([wps[k] for k in mols], metric, half_width, local)
            if not sub.blocked and nx.is_directed_acyclic_graph(sub.graph()):
                return m, leg
    return None


def _best_swap(mols, starts, targets, target_of, parks, swapped, metric, half_width, flips=frozenset()):
    """Cheapest target swap between two molecules of ``mols`` that leaves the pair itself consistent."""
    base = _distance(starts, targets, target_of, metric)
    best = None
    for a in range(len(mols)):
        for b in range(a + 1, len(mols)):
            i, j = mols[a], mols[b]
            if frozenset((i, j)) in swapped or i in parks or j in parks:
                continue
            trial = target_of.copy()
            trial[i], trial[j] = target_of[j], target_of[i]
            local = {(a, g) for a, m in enumerate((i, j)) for k, g in flips if k == m}
            pair = find_conflicts(_waypoints(starts[[i, j]], targets, trial[[i, j]], {}), metric, half_width, local)
            if pair.blocked or not nx.is_directed_acyclic_graph(pair.graph()):
                continue
            cost = _distance(starts, targets, trial, metric) - base
            if best is None or cost < best[0]:
                best = (cost, i, j, trial)
    return best


def repair(
    starts: np.ndarray,
    targets: np.ndarray,
    target_of: np.ndarray,
    shape: tuple[int, int],
    metric: str = "euclidean",
    half_width: float = 0.5,
    max_iter: int = 2000,
    progress: Callable[[str], None] | None = None,
) -> RepairResult:
    """Break precedence cycles and blockings by target swaps, then by parking (step 4).

    Each round finds every blocking pair and one cycle per cyclic component of the precedence graph and
    fixes those that share no molecule. Among the swaps of targets between two molecules of a problem
    (a surplus molecule's "target" is its own site), the one with the smallest increase in total
    distance that makes the pair's own constraints consistent is applied; a pair is swapped at most
    once. With lattice paths, when no swap is left, turning one move's L-shaped path the other way
    round (y first: same length) is tried next, once per move. When neither helps, one molecule of
    the problem gets a parking site (the free site off all corridors with the shortest detour); a
    parking site that later ends up on a corridor is moved.
    """
    target_of = target_of.copy()
    parks: dict[int, np.ndarray] = {}
    swapped: set[frozenset] = set()
    flips: set[tuple[int, int]] = set()  # (molecule, leg) of the moves turned round
    flip_tried: set[tuple[int, int]] = set()
    n_swaps = 0
    for round_ in range(max_iter):
        wps = _waypoints(starts, targets, target_of, parks)
        conf = find_conflicts(wps, metric, half_width, flips)
        problems = _problems(conf)
        if progress is not None:
            progress(f"repair round {round_ + 1}: {len(problems)} conflicts, {n_swaps} swaps, {len(parks)} parkings")
        if not problems and conf.either:  # a parking site ended up on a corridor: move it elsewhere
            reparked = {conf.moves[arrive][0] for (_, arrive), _ in conf.either}
            for j in reparked:
                wps[j] = np.stack([wps[j][0], wps[j][-1]])
            for j in reparked:
                parks[j] = _park_site(j, wps, shape, metric, half_width, flips)
                wps[j] = np.stack([wps[j][0], parks[j], wps[j][-1]])
            continue
        if not problems:
            return RepairResult(target_of, wps, conf, n_swaps, len(parks), frozenset(flips), len(flip_tried))
        changed = False
        touched: set[int] = set()  # fix disjoint problems in one round, then re-derive the constraints
        for mols in problems:
            if touched.intersection(mols):
                continue
            touched.update(mols)
            best = _best_swap(mols, starts, targets, target_of, parks, swapped, metric, half_width, flips)
            if best is not None:
                cost, i, j, target_of = best
                swapped.add(frozenset((i, j)))
                n_swaps += 1
                changed = True
                logger.debug("swap targets of molecules %d and %d (%+.3f)", i, j, cost)
                continue
            move = _first_flip(mols, wps, flips, flip_tried, metric, half_width)
            if move is not None:  # free: the path keeps its length
                flips ^= {move}
                flip_tried.add(move)
                changed = True
                logger.debug("turn the lattice path of molecule %d, leg %d round", *move)
                continue
            j = next((m for m in mols if m not in parks and target_of[m] >= 0), None)
            j = j if j is not None else next((m for m in mols if m not in parks), None)
            if j is not None:
                parks[j] = _park_site(j, wps, shape, metric, half_width, flips)
                wps[j] = np.stack([wps[j][0], parks[j], wps[j][-1]])  # later parkings avoid this one
                changed = True
                logger.debug("park molecule %d at %s", j, parks[j])
        if not changed:
            break
    wps = _waypoints(starts, targets, target_of, parks)
    conf = find_conflicts(wps, metric, half_width, flips)
    return RepairResult(target_of, wps, conf, n_swaps, len(parks), frozenset(flips), len(flip_tried))
