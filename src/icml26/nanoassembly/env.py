"""NanoAssemblyGym: Gymnasium environments for STM molecule manipulation.

``NanoAssembly/MoveMolecule-v0`` moves one molecule to a goal site; ``NanoAssembly/Assemble-v0`` executes
a whole plan (:class:`~icml26.nanoassembly.assembly.Plan`) on a shared surface, one scheduled move at a
time. Both share the action and observation spaces, so an agent trained on the first executes the second.

Action, ``Box(-1, 1, (5,))``: tip drag ``(dx, dy)`` (scaled by ``max_drag`` lattice constants), bias
(log-mapped to ``bias_mv``), current set-point (log-mapped to ``current_pa``), re-image flag (> 0 re-images
before manipulating, resetting the drift offset at a cost).

Physics of one action (all stochastic draws from the env's ``np_random``):

1. tip changes: with rate ``1 / tip_change_interval`` (and after kicks) the hidden tip state ``u_tip``
   jumps to a new value, uniform within ``+-tip_change_scale`` of nominal (a new tip apex);
2. if the thermal-drift offset exceeds ``capture_radius`` the tip misses the molecule (flat trace);
3. otherwise, with probability Eq. 5 the molecule is kicked to a random free site nearby; else it follows
   the tip hop by hop through the lattice sites of the drag corridor, each hop succeeding with
   probability Eq. 4 and stopping at the first failure or occupied site (a *collision* in Assemble-v0);
4. landing noise: with probability ``landing_noise`` a dragged molecule settles one hop short.

Observation, ``Box((8,))``: offset to the goal ``(gx, gy)`` in lattice constants, then a summary of the
last manipulation's tunnelling-current trace (hop spikes / 4, displaced flag, kick flag), the last coupling
``u - u_nominal``, the last drag length / ``max_drag`` and the actions since the last image / 20.
"""

from __future__ import annotations

import itertools
import logging
import math
from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icml26.nanoassembly.config import EnvConfig
from icml26.nanoassembly.planner import corridor_cells

logger = logging.getLogger(__name__)

OBS_BOUND = 4096.0


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-min(max(x, -60.0), 60.0)))


def drag_sites(x0: int, y0: int, dx: float, dy: float) -> list[tuple[int, int]]:
    """Lattice sites within 0.5 of the drag segment, in the order the molecule meets them (start excluded).

    The same rule as :func:`icml26.nanoassembly.planner.corridor_cells`, in plain Python for speed.
    """
    L2 = dx * dx + dy * dy
    out = []
    for x in range(math.floor(min(0, dx)) - 1, math.ceil(max(0, dx)) + 2):
        for y in range(math.floor(min(0, dy)) - 1, math.ceil(max(0, dy)) + 2):
            t = 0.0 if L2 == 0 else min(max((x * dx + y * dy) / L2, 0.0), 1.0)
            if (x or y) and math.hypot(x - t * dx, y - t * dy) < 0.5 - 1e-9:
                out.append(((x * dx + y * dy), (x0 + x, y0 + y)))
    return [site for _, site in sorted(out)]


def encode_action(cfg: EnvConfig, drag, bias_mv: float, current_pa: float, reimage: bool = False) -> np.ndarray:
    """Physical STM parameters -> an action in [-1, 1]^5 (inverse of the env's log mapping)."""

    def unmap(v, lo, hi):
        return float(np.clip(2 * (np.log10(v) - np.log10(lo)) / (np.log10(hi) - np.log10(lo)) - 1, -1, 1))

    d = np.asarray(drag, dtype=float) / cfg.max_drag
    return np.array(
        [
            *np.clip(d, -1, 1),
            unmap(bias_mv, *cfg.bias_mv),
            unmap(current_pa, *cfg.current_pa),
            1.0 if reimage else -1.0,
        ],
        dtype=np.float32,
    )


class _StmMixin:
    """Shared STM physics over a set of occupied sites."""

    cfg: EnvConfig
    metadata: ClassVar[dict] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def _spaces(self):
        self.action_space = spaces.Box(-1.0, 1.0, shape=(5,), dtype=np.float32)
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, shape=(8,), dtype=np.float32)

    def _reset_tip(self, options: dict):
        c = self.cfg
        offset = options.get("tip_offset")
        if offset is None:
            offset = c.tip_offset if c.tip_offset_range == 0 else self.np_random.uniform(-1, 1) * c.tip_offset_range
        self.u_tip = c.u_nominal + float(offset)
        # a move starts mid-session: the last image is 0..40 actions old and the drift matches its age
        self.since_image = 0 if options.get("fresh_image") else int(self.np_random.integers(0, 41))
        self.drift = self.np_random.normal(0.0, c.drift_per_step * np.sqrt(self.since_image), size=2)
        self.n_images = 0
        self.tip_changes = 0
        self.last = np.zeros(6)  # spikes/4, displaced, kicked, u - u_nominal, drag/max, since/20
        self.last[5] = min(self.since_image / 20, 1.0)

    def _decode(self, action):
        c = self.cfg
        a = np.asarray(action, dtype=float).reshape(-1)
        if a.shape != (5,):
            raise ValueError(f"action must have shape (5,); got {np.shape(action)}")
        a = [min(max(float(v), -1.0), 1.0) for v in a]
        drag = np.array(a[:2]) * c.max_drag
        norm = math.hypot(drag[0], drag[1])
        if norm > c.max_drag:
            drag *= c.max_drag / norm

        def log_map(x, lo, hi):  # log10 of the physical value
            return math.log10(lo) + (x + 1) / 2 * (math.log10(hi) - math.log10(lo))

        u = log_map(a[3], *c.current_pa) - log_map(a[2], *c.bias_mv)  # log10(I / V)
        return drag, u, a[4] > 0

    def _free(self, site, occupied, shape) -> bool:
        x, y = int(site[0]), int(site[1])
        return 0 <= x < shape[0] and 0 <= y < shape[1] and (x, y) not in occupied

    def _manipulate(self, pos: np.ndarray, action, occupied: set, shape) -> tuple[np.ndarray, dict]:
        """One STM action on the molecule at ``pos``; ``occupied`` holds every *other* molecule's site."""
        c, rng = self.cfg, self.np_random
        drag, u, reimage = self._decode(action)
        cost = 1.0
        if reimage:
            self.drift[:] = 0.0
            self.since_image = 0
            self.n_images += 1
            cost += c.reimage_cost
        if c.tip_change_interval > 0 and rng.random() < 1.0 / c.tip_change_interval:
            self.u_tip = c.u_nominal + rng.uniform(-c.tip_change_scale, c.tip_change_scale)
            self.tip_changes += 1
        u_tip = self.u_tip
        p_hop = _sigmoid((u - u_tip) / c.coupling_width)  # Eq. 4
        p_kick = _sigmoid((u - u_tip - c.jump_margin) / c.jump_width)  # Eq. 5
        start = pos.copy()
        hops, kicked, blocked = 0, False, 0
        if math.hypot(*self.drift) <= c.capture_radius and (drag[0] or drag[1]):
            if rng.random() < p_kick:
                kicked = True
                r = c.jump_radius
                cand = [
                    (int(pos[0]) + dx, int(pos[1]) + dy)
                    for dx in range(-r, r + 1)
                    for dy in range(-r, r + 1)
                    if 0 < dx * dx + dy * dy <= r * r
                ]
                cand = [s for s in cand if self._free(s, occupied, shape)]
                if cand:
                    pos = np.array(cand[rng.integers(len(cand))])
                if rng.random() < c.tip_change_on_kick:
                    self.u_tip = c.u_nominal + rng.uniform(-c.tip_change_scale, c.tip_change_scale)
                    self.tip_changes += 1
            else:
                for site in drag_sites(int(pos[0]), int(pos[1]), float(drag[0]), float(drag[1])):
                    if not self._free(site, occupied, shape):
                        blocked = int(site in occupied)
                        break
                    if rng.random() >= p_hop:
                        break
                    prev, pos, hops = pos, np.array(site), hops + 1
                if hops and rng.random() < c.landing_noise:
                    pos, hops = prev, hops - 1
        self.drift += rng.normal(0.0, c.drift_per_step, size=2)
        self.since_image += 1
        self.last = np.array(
            [
                (hops + 3 * kicked) / 4,
                float(not np.array_equal(pos, start)),
                float(kicked),
                u - c.u_nominal,
                np.linalg.norm(drag) / c.max_drag,
                min(self.since_image / 20, 1.0),
            ]
        )
        info = {
            "hops": hops,
            "kicked": kicked,
            "blocked": blocked,
            "cost": cost,
            "drag_nm": np.linalg.norm(drag) * c.lattice_nm,
        }
        return np.asarray(pos, dtype=int), info

    def _obs(self, pos, goal) -> np.ndarray:
        return np.concatenate([np.asarray(goal, float) - pos, self.last]).astype(np.float32)

    def _image(self, sites: np.ndarray, shape, px: int = 4) -> np.ndarray:
        """Constant-current STM topograph: Gaussian molecules on a corrugated lattice, afmhot colours."""
        import matplotlib

        xs = (np.arange(shape[0] * px) + 0.5) / px - 0.5
        ys = (np.arange(shape[1] * px) + 0.5) / px - 0.5
        X, Y = np.meshgrid(xs, ys, indexing="xy")
        z = 0.05 * (np.cos(2 * np.pi * X) + np.cos(2 * np.pi * Y))
        for x, y in np.asarray(sites, dtype=float):
            lo_x, hi_x = int(max(0, (x - 2) * px)), int(min(len(xs), (x + 3) * px))
            lo_y, hi_y = int(max(0, (y - 2) * px)), int(min(len(ys), (y + 3) * px))
            gx, gy = X[lo_y:hi_y, lo_x:hi_x], Y[lo_y:hi_y, lo_x:hi_x]
            z[lo_y:hi_y, lo_x:hi_x] += np.exp(-((gx - x) ** 2 + (gy - y) ** 2) / (2 * 0.4**2))
        z = (z - z.min()) / max(np.ptp(z), 1e-9)
        rgb = matplotlib.colormaps["afmhot"](z[::-1])[..., :3]  # y up
        return (rgb * 255).astype(np.uint8)


class MoveMoleculeEnv(_StmMixin, gym.Env):
    """``MoveMolecule-v0``: drag one molecule to a goal site with STM actions (see module docstring).

    Reward: ``-1`` per action, ``-reimage_cost`` per image, potential shaping ``d_prev - d_new`` (lattice
    constants) and ``success_bonus`` on reaching the goal, which terminates the episode; truncation after
    ``max_steps`` actions. ``reset(options={"tip_offset": x})`` fixes the tip state.
    """

    def __init__(self, config: EnvConfig | None = None, render_mode: str | None = None):
        self.cfg = config or EnvConfig()
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        self.render_mode = render_mode
        self._spaces()
        self.shape = (self.cfg.size, self.cfg.size)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        c, rng = self.cfg, self.np_random
        self._reset_tip(options or {})
        while True:
            self.goal = rng.integers(0, c.size, size=2)
            self.pos = rng.integers(0, c.size, size=2)
            d = np.linalg.norm(self.pos - self.goal)
            if c.min_goal_distance <= d <= c.max_goal_distance:
                break
        self.steps = 0
        return self._obs(self.pos, self.goal), {"distance": float(d)}

    def step(self, action):
        d0 = float(np.linalg.norm(self.goal - self.pos))
        self.pos, info = self._manipulate(self.pos, action, set(), self.shape)
        self.steps += 1
        d1 = float(np.linalg.norm(self.goal - self.pos))
        success = d1 < 1e-9
        reward = -info["cost"] - self.cfg.kick_penalty * info["kicked"] + (d0 - d1)
        reward += self.cfg.success_bonus if success else 0.0
        truncated = not success and self.steps >= self.cfg.max_steps
        info.update(distance=d1, success=success, images=self.n_images, tip_changes=self.tip_changes)
        return self._obs(self.pos, self.goal), float(reward), success, truncated, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return self._image(self.pos[None, :], self.shape)


class AssembleEnv(_StmMixin, gym.Env):
    """``Assemble-v0``: execute a plan's moves in order on one surface with many molecules.

    The observation and action refer to the molecule of the current move and a *carrot*: the furthest
    site of the move's planned corridor at most ``max_drag`` ahead whose drag line is free in the latest
    image (after a kick: the nearest corridor site reachable that way). A hop into an occupied site is
    blocked and counted as a collision (``-collision_penalty``); with ``terminate_on_collision`` it ends
    the episode. The episode terminates when every move is done and is truncated after ``max_steps``
    actions per planned move on average. ``info`` reports ``completion``
    (fraction of targets filled), ``collisions``, ``kicks`` and ``tip_travel_nm``.

    Parameters
    ----------
    plan : Plan, optional
        The plan to execute; by default one is made for ``structure`` at each reset (seeded).
    structure : str
        Target spec for the default plan (see :func:`icml26.nanoassembly.data.structure`).
    """

    def __init__(
        self,
        plan=None,
        structure: str = "text:ICML",
        config: EnvConfig | None = None,
        render_mode: str | None = None,
        terminate_on_collision: bool = False,
    ):
        self.cfg = config or EnvConfig()
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        self.render_mode = render_mode
        self.plan, self.structure, self.terminate_on_collision = plan, structure, terminate_on_collision
        self._spaces()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = options or {}
        plan = options.get("plan", self.plan)
        if plan is None:
            from icml26.nanoassembly.assembly import plan_assembly
            from icml26.nanoassembly.data import make_instance, structure

            starts, targets, shape = make_instance(structure(self.structure), seed=int(self.np_random.integers(2**31)))
            plan = plan_assembly(starts, targets, shape)
        self.current_plan = plan
        self.shape = tuple(plan.shape)
        self.positions = plan.starts.astype(int).copy()
        self._reset_tip({"fresh_image": True, **options})
        self.move, self.move_steps = 0, 0
        self._corridor = None
        self.collisions, self.kicks, self.tip_travel, self.actions = 0, 0, 0.0, 0
        self.tip = self.positions[plan.moves[0]["molecule"]].astype(float) if plan.moves else np.zeros(2)
        return self._observe(), self._info()

    def _goal(self):
        """(molecule, carrot site, final site) of the current move; Nones when the plan is done."""
        if self.move >= len(self.current_plan.moves):
            return None, None, None
        m = self.current_plan.moves[self.move]
        path = np.asarray(m["path"], dtype=float)
        if self._corridor is None or self._corridor[0] != self.move:
            cells = corridor_cells(path, self.current_plan.half_width)  # (C, 2), ordered along the path
            self._corridor = (self.move, cells, np.array([_arc(path, c) for c in cells.astype(float)]))
        _, cells, arcs = self._corridor
        j = m["molecule"]
        pos = self.positions[j]
        dist = np.linalg.norm(cells - pos, axis=1)
        here = np.flatnonzero(dist == 0)
        if len(here):  # on the corridor: corridor sites ahead within max_drag, furthest first
            order = np.flatnonzero((arcs > arcs[here[0]]) & (dist <= self.cfg.max_drag))[::-1]
        else:  # kicked off the corridor: corridor sites by distance
            order = np.argsort(dist, kind="stable")
        occupied = self._occupied(j)
        carrot = cells[order[-1]] if len(order) else path[-1].astype(int)
        for k in order:  # the first whose drag line is free in the latest image
            sites = drag_sites(int(pos[0]), int(pos[1]), *(cells[k] - pos).astype(float))
            if not any(site in occupied for site in sites):
                carrot = cells[k]
                break
        return m["molecule"], carrot, path[-1].astype(int)

    def _occupied(self, j: int) -> set:
        return {tuple(p) for k, p in enumerate(self.positions.tolist()) if k != j}

    def _observe(self):
        j, goal, _ = self._goal()
        if j is None:
            return np.concatenate([np.zeros(2), self.last]).astype(np.float32)
        return self._obs(self.positions[j], goal)

    def _info(self):
        filled = {tuple(p) for p in self.positions.tolist()}
        done = sum(tuple(t) in filled for t in self.current_plan.targets.tolist())
        return {
            "completion": done / max(len(self.current_plan.targets), 1),
            "collisions": self.collisions,
            "kicks": self.kicks,
            "tip_travel_nm": self.tip_travel * self.cfg.lattice_nm,
            "move": self.move,
            "actions": self.actions,
            "images": self.n_images,
        }

    def step(self, action):
        j, _, goal = self._goal()
        if j is None:
            raise RuntimeError("the episode is over; call reset()")
        pos = self.positions[j]
        occupied = self._occupied(j)
        d0 = float(np.linalg.norm(goal - pos))
        self.tip_travel += float(np.linalg.norm(self.tip - pos))  # tip approaches the molecule
        new, info = self._manipulate(pos, action, occupied, self.shape)
        drag, _, _ = self._decode(action)
        self.tip = pos + drag
        self.tip_travel += float(np.linalg.norm(drag))
        self.positions[j] = new
        self.actions += 1
        self.move_steps += 1
        self.collisions += info["blocked"]
        self.kicks += int(info["kicked"])
        d1 = float(np.linalg.norm(goal - new))
        reward = -info["cost"] - self.cfg.kick_penalty * info["kicked"] + (d0 - d1)
        reward -= self.cfg.collision_penalty * info["blocked"]
        if d1 < 1e-9:
            reward += self.cfg.success_bonus
            self.move, self.move_steps = self.move + 1, 0
        terminated = self.move >= len(self.current_plan.moves) or (self.terminate_on_collision and info["blocked"] > 0)
        truncated = not terminated and self.actions >= self.cfg.max_steps * len(self.current_plan.moves)
        return self._observe(), float(reward), bool(terminated), bool(truncated), self._info()

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return self._image(self.positions, self.shape)


def _arc(path: np.ndarray, point: np.ndarray) -> float:
    """Arc length along the polyline ``path`` of the projection of ``point``."""
    best, arc, offset = np.inf, 0.0, 0.0
    for a, b in itertools.pairwise(path):
        ab = b - a
        L = float(np.linalg.norm(ab))
        t = 0.0 if L == 0 else float(np.clip((point - a) @ ab / L**2, 0, 1))
        d = float(np.linalg.norm(point - a - t * ab))
        if d < best - 1e-9:
            best, arc = d, offset + t * L
        offset += L
    return arc


def register_envs() -> None:
    """Register ``NanoAssembly/MoveMolecule-v0`` and ``NanoAssembly/Assemble-v0`` (idempotent)."""
    for name, cls in (("MoveMolecule-v0", "MoveMoleculeEnv"), ("Assemble-v0", "AssembleEnv")):
        env_id = f"NanoAssembly/{name}"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=f"icml26.nanoassembly.env:{cls}")


register_envs()
