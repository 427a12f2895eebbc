"""SAT scheduling of assembly moves, the full planning pipeline, and an independent replay verifier.

Encoding (layered makespan, "order encoding"): move m runs in layer ``step(m) in {0..T-1}``; the Boolean
``y[m, t]`` means ``step(m) <= t`` with ``y[m, t] -> y[m, t+1]`` and ``y[m, T-1] = true``. Moves in one
layer are independent (neither needs the other's corridor), so a layer can run on several tips in parallel
or in any order on one tip. Constraints:

- precedence ``a < b``: ``y[b, t] -> y[a, t-1]`` for every t (Eq. 2);
- disjunction ``(a < b) or (c < d)`` (a parked molecule on a corridor): an auxiliary literal selects one;
- no-simultaneity of moves whose paths pass within ``2 * half_width``: not both in layer t (Eq. 3);
- optional tip budget: at most ``n_tips`` moves per layer (``pysat.card`` cardinality encoding).

Size is O(T * (moves + constraints)), with T the makespan (tens of layers), not O(N^2) per time step:
it scales to hundreds of molecules. When no schedule exists, the solver's UNSAT core over per-pair
selector literals names the molecules that block each other.
"""

from __future__ import annotations

import itertools
import logging

import networkx as nx
import numpy as np
from pysat.card import CardEnc, EncType
from pysat.solvers import Solver

from icml26.nanoassembly.planner import Conflicts

logger = logging.getLogger(__name__)


class ScheduleInfeasibleError(ValueError):
    """No schedule exists; ``blocking`` lists ``(molecule_i, molecule_j, reason)`` from the UNSAT core."""

    def __init__(self, blocking: list[tuple[int, int, str]]):
        self.blocking = blocking
        self.stats: dict = {}  # filled by plan_assembly: the distances of the moves it could not schedule
        lines = "; ".join(f"{r}" for _, _, r in blocking[:6])
        super().__init__(f"no collision-free schedule: {len(blocking)} blocking relation(s): {lines}")


# ------------------------------------------------------------------------------------------ SAT encoding
def _segments_min_distance(paths: list[np.ndarray]) -> np.ndarray:
    """Pairwise minimum distance between polylines, shape (n, n), by vectorised segment geometry."""
    segs = [(k, a, b) for k, p in enumerate(paths) for a, b in itertools.pairwise(p)]
    owner = np.array([s[0] for s in segs])
    a = np.array([s[1] for s in segs], dtype=float)  # (S, 2)
    b = np.array([s[2] for s in segs], dtype=float)

    def pt_seg(p, a, b):  # p (S, S, 2) against segments a, b broadcast (1, S, 2)
        ab = b - a
        den = np.maximum((ab * ab).sum(-1), 1e-12)
        t = np.clip(((p - a) * ab).sum(-1) / den, 0.0, 1.0)
        return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)

    A, B = a[:, None, :], b[:, None, :]
    a2, b2 = a[None, :, :], b[None, :, :]
    d = np.minimum.reduce([pt_seg(A, a2, b2), pt_seg(B, a2, b2), pt_seg(a2, A, B), pt_seg(b2, A, B)])

    def cross(o, p, q):
        return (p[..., 0] - o[..., 0]) * (q[..., 1] - o[..., 1]) - (p[..., 1] - o[..., 1]) * (q[..., 0] - o[..., 0])

    crossing = (cross(A, B, a2) * cross(A, B, b2) < 0) & (cross(a2, b2, A) * cross(a2, b2, B) < 0)
    d = np.where(crossing, 0.0, d)
    n = len(paths)
    out = np.full((n, n), np.inf)
    np.minimum.at(out, (owner[:, None].repeat(len(owner), 1), owner[None, :].repeat(len(owner), 0)), d)
    return out


class _Encoder:
    """Builds the layered CNF for ``n`` moves and ``T`` layers (see module docstring), vectorised.

    Variable ``y[m, t]`` (``step(m) <= t``, t = 0..T-2) has id ``1 + m * (T - 1) + t``; ``y[m, -1]`` is
    false and ``y[m, T-1]`` true, so the first and last layer give shorter clauses. Auxiliary variables
    (disjunction selectors, per-layer indicators, cardinality encodings) are numbered from ``top + 1``.
    """

    def __init__(self, n: int, T: int):
        self.n, self.T, self.top = n, T, n * (T - 1)
        self.clauses: list[list[int]] = []
        self.unsat = False  # set when a constraint cannot hold with T layers at all

    def y(self, m, t):
        return 1 + np.asarray(m) * (self.T - 1) + t

    def new_vars(self, k: int) -> np.ndarray:
        ids = np.arange(self.top + 1, self.top + 1 + k)
        self.top += k
        return ids

    def _emit(self, *columns):
        """Clauses from columns of literals, each an array broadcast to one shape."""
        cols = np.broadcast_arrays(*columns)
        self.clauses.extend(np.stack(cols, axis=-1).reshape(-1, len(cols)).tolist())

    def chain(self):
        if self.T > 2:
            m, t = np.arange(self.n)[:, None], np.arange(self.T - 2)[None, :]
            self._emit(-self.y(m, t), self.y(m, t + 1))

    def before(self, a, b, guard=None):
        """Eq. 2 for arrays of pairs: step(a) < step(b), or ``guard`` literal true."""
        a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
        if len(a) == 0:
            return
        g = [] if guard is None else [np.asarray(guard)[:, None]]
        if self.T == 1:
            if guard is None:
                self.unsat = True
            else:
                self._emit(*[x[:, 0] for x in g])
            return
        self._emit(*[x[:, 0] for x in g], -self.y(b, 0))  # b cannot be in layer 0
        self._emit(*[x[:, 0] for x in g], self.y(a, self.T - 2))  # a cannot be in the last layer
        if self.T > 2:
            t = np.arange(1, self.T - 1)[None, :]
            self._emit(*g, -self.y(b[:, None], t), self.y(a[:, None], t - 1))

    def apart(self, a, b):
        """Eq. 3 for arrays of pairs: not both in the same layer."""
        a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
        if len(a) == 0:
            return
        if self.T == 1:
            self.unsat = True
            return
        self._emit(-self.y(a, 0), -self.y(b, 0))
        self._emit(self.y(a, self.T - 2), self.y(b, self.T - 2))
        if self.T > 2:
            t = np.arange(1, self.T - 1)[None, :]
            a, b = a[:, None], b[:, None]
            self._emit(-self.y(a, t), self.y(a, t - 1), -self.y(b, t), self.y(b, t - 1))

    def at_most(self, k: int):
        """At most ``k`` moves per layer: indicators x[m,t] <-> y[m,t] and not y[m,t-1], then cardinality."""
        for t in range(self.T):
            x = self.new_vars(self.n)
            m = np.arange(self.n)
            cur = self.y(m, t) if t < self.T - 1 else None
            prev = self.y(m, t - 1) if t > 0 else None
            if cur is not None:
                self._emit(-x, cur)
            if prev is not None:
                self._emit(-x, -prev)
            self._emit(*[c for c in (x, None if cur is None else -cur, prev) if c is not None])
            card = CardEnc.atmost(x.tolist(), bound=k, top_id=self.top, encoding=EncType.seqcounter)
            self.top = max(self.top, card.nv)
            self.clauses.extend(card.clauses)

    def steps(self, model: list[int]) -> np.ndarray:
        if self.T == 1:
            return np.zeros(self.n, dtype=int)
        lits = np.asarray(model, dtype=int)
        lits = lits[np.abs(lits) <= self.n * (self.T - 1)]  # variables in no clause are absent: false
        y = np.zeros(self.n * (self.T - 1) + 1, dtype=bool)
        y[lits[lits > 0]] = True
        y = y[1:].reshape(self.n, self.T - 1)
        return np.where(y.any(1), y.argmax(1), self.T - 1)


def _solve_layers(conf: Conflicts, apart: list[tuple[int, int]], T: int, n_tips: int | None, solver: str):
    enc = _Encoder(len(conf.moves), T)
    enc.chain()
    before = np.array(sorted(conf.before), dtype=int).reshape(-1, 2)
    enc.before(before[:, 0], before[:, 1])
    if conf.either:
        e = np.array([[a, b, c, d] for (a, b), (c, d) in conf.either], dtype=int)
        z = enc.new_vars(len(e))
        enc.before(e[:, 0], e[:, 1], guard=-z)  # z -> a < b
        enc.before(e[:, 2], e[:, 3], guard=z)  # not z -> c < d
    pairs = np.array(apart, dtype=int).reshape(-1, 2)
    enc.apart(pairs[:, 0], pairs[:, 1])
    if n_tips is not None and n_tips < len(conf.moves):
        enc.at_most(n_tips)
    if enc.unsat:
        return None, len(enc.clauses)
    with Solver(name=solver, bootstrap_with=enc.clauses) as s:
        ok = s.solve()
        return (enc.steps(s.get_model()) if ok else None), len(enc.clauses)


def explain_infeasible(conf: Conflicts, solver: str = "cadical153") -> list[tuple[int, int, str]]:
    """Molecule pairs that block each other: direct blockings, or the UNSAT core of a cyclic component."""
    if conf.blocked:
        return [(i, j, f"molecule {j} never leaves molecule {i}'s corridor") for i, j in dict.fromkeys(conf.blocked)]
    g = conf.graph()
    scc = max(nx.strongly_connected_components(g), key=len)
    nodes = sorted(scc)
    local = {m: k for k, m in enumerate(nodes)}
    enc = _Encoder(len(nodes), len(nodes))
    enc.chain()
    inner = [(a, b) for a, b in sorted(conf.before) if a in local and b in local]
    sels = enc.new_vars(len(inner))
    selectors = {int(sel): pair for sel, pair in zip(sels, inner, strict=True)}
    enc.before([local[a] for a, _ in inner], [local[b] for _, b in inner], guard=-sels)
    with Solver(name=solver, bootstrap_with=enc.clauses) as s:
        if s.solve(assumptions=list(selectors)):
            return []
        core = s.get_core() or list(selectors)
    out = []
    for sel in core:
        a, b = selectors[sel]
        i, j = conf.moves[a][0], conf.moves[b][0]
        out.append((i, j, f"molecule {i} must move before molecule {j}: " + conf.reasons.get((a, b), "same molecule")))
    return out


def sat_schedule(
    conf: Conflicts,
    paths: list[np.ndarray],
    half_width: float = 0.5,
    n_tips: int | None = None,
    solver: str = "cadical153",
) -> tuple[np.ndarray, dict]:
    """Minimum-makespan layered schedule of the moves in ``conf``.

    Returns ``steps`` (int array of shape (n_moves,)) and solver statistics. Raises
    :class:`ScheduleInfeasibleError` naming the blocking molecules when no schedule exists.
    """
    n = len(conf.moves)
    if n == 0:
        return np.zeros(0, dtype=int), {"layers": 0, "sat_calls": 0, "clauses": 0}
    if conf.blocked or not nx.is_directed_acyclic_graph(conf.graph()):
        raise ScheduleInfeasibleError(explain_infeasible(conf, solver))
    if n_tips is not None and n_tips < 1:
        raise ValueError(f"n_tips must be a positive integer or None; got {n_tips}")
    dist = _segments_min_distance(paths)
    close = np.argwhere(np.triu(dist < 2 * half_width - 1e-9, k=1))
    apart = [(int(a), int(b)) for a, b in close]
    lower = nx.dag_longest_path_length(conf.graph()) + 1
    if n_tips is not None:
        lower = max(lower, -(-n // n_tips))
    calls, T, lo, found = 0, lower, lower - 1, None
    while found is None:  # grow T geometrically until satisfiable (T = n always is, for a DAG)
        steps, n_clauses = _solve_layers(conf, apart, T, n_tips, solver)
        calls += 1
        if steps is not None:
            found = (T, steps, n_clauses)
        elif T >= n:
            raise ScheduleInfeasibleError(
                [
                    (conf.moves[a][0], conf.moves[c][0], "parking disjunctions conflict")
                    for (a, _), (c, _) in conf.either[:6]
                ]
            )
        else:
            lo, T = T, min(n, T + max(1, T // 4))
    hi = found[0]
    while hi - lo > 1:  # binary search for the minimum makespan
        mid = (lo + hi) // 2
        steps, n_clauses = _solve_layers(conf, apart, mid, n_tips, solver)
        calls += 1
        if steps is None:
            lo = mid
        else:
            hi, found = mid, (mid, steps, n_clauses)
    T, steps, n_clauses = found
    return steps, {"layers": int(steps.max()) + 1, "sat_calls": calls, "clauses": n_clauses, "apart_pairs": len(apart)}


def list_schedule(
    conf: Conflicts,
    paths: list[np.ndarray],
    half_width: float = 0.5,
    n_tips: int | None = None,
    tie_seed: int | None = None,
) -> tuple[np.ndarray, dict]:
    """Greedy list scheduling, the baseline of the SAT schedule's makespan (highest level first).

    Layer by layer, the moves whose predecessors all ran in earlier layers are taken in order of their
    *level* (the longest precedence chain that still follows them, the classic critical-path priority)
    and added to the layer unless they pass within ``2 * half_width`` of a move already in it (Eq. 3) or
    the layer already holds ``n_tips`` moves. No search and no optimality guarantee; parking
    disjunctions are not supported. Moves of equal level are taken in index order, or in a random order
    drawn from ``tie_seed`` (a second, independent greedy schedule: the A/A control of the makespan
    comparison). Same return value as :func:`sat_schedule`; raises
    :class:`ScheduleInfeasibleError` *without* naming blocking molecules (it has no core) when the
    precedence graph has a cycle or a static molecule blocks a corridor.
    """
    n = len(conf.moves)
    if n_tips is not None and (isinstance(n_tips, bool) or int(n_tips) != n_tips or n_tips < 1):
        raise ValueError(f"n_tips must be a positive integer or None; got {n_tips}")  # 0 would never fill a layer
    if len(paths) != n:
        raise ValueError(f"need one path per move: {len(paths)} paths for {n} moves")
    if n == 0:
        return np.zeros(0, dtype=int), {"layers": 0}
    g = conf.graph()
    if conf.blocked or not nx.is_directed_acyclic_graph(g):
        raise ScheduleInfeasibleError([])  # stuck: no move is ever ready, and a greedy pass cannot say why
    if conf.either:
        raise ValueError("list scheduling does not handle parking disjunctions; use sat_schedule")
    tie = np.arange(n) if tie_seed is None else np.random.default_rng(tie_seed).permutation(n)
    level = np.zeros(n, dtype=int)  # longest chain of successors
    for m in reversed(list(nx.topological_sort(g))):
        level[m] = max((level[s] + 1 for s in g.successors(m)), default=0)
    close = _segments_min_distance(paths) < 2 * half_width - 1e-9
    steps = np.full(n, -1, dtype=int)
    waiting = {m: g.in_degree(m) for m in range(n)}
    ready = [m for m, k in waiting.items() if k == 0]
    t = 0
    while ready:
        layer: list[int] = []
        for m in sorted(ready, key=lambda m: (-level[m], tie[m])):
            if (n_tips is None or len(layer) < n_tips) and not close[m, layer].any():
                layer.append(m)
        steps[layer] = t
        ready = [m for m in ready if m not in layer]
        for m in layer:
            for s in g.successors(m):
                waiting[s] -= 1
                if waiting[s] == 0:
                    ready.append(s)
        t += 1
    return steps, {"layers": t}
