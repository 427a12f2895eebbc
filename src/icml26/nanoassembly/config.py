"""Physical and training settings of NanoAssemblyGym, with named presets.

Units are explicit: lengths in lattice constants ``a`` (``lattice_nm`` converts to nm), bias in mV,
current set-point in pA. The tip-sample coupling of a manipulation is ``u = log10(I / V)`` (pA/mV, i.e.
the junction conductance in nS, which sets the tip height); a molecule follows the tip on each lattice hop
with probability ``sigmoid((u - u_tip) / coupling_width)`` (Eq. 4) and is kicked to a random nearby site
with probability ``sigmoid((u - u_tip - jump_margin) / jump_width)`` (Eq. 5). ``u_tip`` is the hidden tip
state: it starts at ``u_nominal + tip_offset`` and jumps at tip-change events.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class EnvConfig:
    """Settings of ``MoveMolecule-v0`` and ``Assemble-v0``."""

    lattice_nm: float = 0.256
    """Lattice constant in nm (Cu(100), the substrate of CO artificial lattices)."""
    size: int = 16
    """MoveMolecule surface side in sites."""
    min_goal_distance: float = 2.0
    """Smallest start-goal distance of a MoveMolecule episode (lattice constants)."""
    max_goal_distance: float = 6.0
    """Largest start-goal distance of a MoveMolecule episode."""
    max_drag: float = 3.0
    """Longest tip drag of one STM action (lattice constants)."""
    bias_mv: tuple[float, float] = (5.0, 1000.0)
    """Bias range (mV), mapped log-linearly from the action in [-1, 1]."""
    current_pa: tuple[float, float] = (10.0, 200_000.0)
    """Current set-point range (pA), mapped log-linearly."""
    u_nominal: float = 3.2
    """Coupling threshold log10(I/V) of a freshly conditioned tip (nS)."""
    coupling_width: float = 0.15
    """Width of the hop-success sigmoid (Eq. 4)."""
    jump_margin: float = 1.2
    """Coupling above threshold at which the molecule starts to be kicked away (Eq. 5)."""
    push_margin: float = 0.6
    """Coupling above threshold that a calibrated push uses (98 % hop success, 0.2 % kicks on a fresh tip)."""
    jump_width: float = 0.1
    """Width of the kick sigmoid (Eq. 5)."""
    jump_radius: int = 2
    """A kicked molecule lands on a random free site within this many lattice constants."""
    landing_noise: float = 0.05
    """Probability that a dragged molecule settles on a neighbouring site instead of the tip's end site."""
    tip_offset: float = 0.0
    """Initial shift of the tip state from nominal (a calibrated tip has 0)."""
    tip_offset_range: float = 0.0
    """At reset, the tip offset is drawn uniformly from +-this range (0 = use ``tip_offset``)."""
    tip_change_interval: float = 0.0
    """Mean number of STM actions between spontaneous tip changes (0 = never)."""
    tip_change_scale: float = 1.0
    """After a tip change the tip offset is uniform in +-this (log10 units): a new apex, not a random walk."""
    tip_change_on_kick: float = 0.2
    """Probability that kicking a molecule also changes the tip."""
    drift_per_step: float = 0.04
    """Thermal drift: random-walk step of the tip-sample offset per action (lattice constants)."""
    capture_radius: float = 0.5
    """The tip misses the molecule when the drift offset exceeds this (no hop, flat current trace)."""
    reimage_cost: float = 2.0
    """Reward cost of re-imaging (resets the drift offset; real STMs spend minutes per image)."""
    kick_penalty: float = 3.0
    """Reward cost of kicking the molecule away (it may hit neighbours or the tip may pick it up)."""
    success_bonus: float = 10.0
    """Reward for reaching the goal site."""
    max_steps: int = 20
    """MoveMolecule truncation horizon (STM actions)."""
    collision_penalty: float = 5.0
    """Assemble-v0: reward cost of a hop blocked by another molecule."""


PRESETS = {
    "calibrated": EnvConfig(),
    "tip-changes": EnvConfig(tip_offset_range=1.0, tip_change_interval=200.0),
    # held out from training (rl-beats-scripted-v2): wider tip states, 4x more frequent tip changes and a
    # blunter apex that starts kicking 0.2 decades earlier
    "tip-changes-unseen": EnvConfig(
        tip_offset_range=1.3, tip_change_scale=1.3, tip_change_interval=50.0, jump_margin=1.0
    ),
}


def preset(name: str, **overrides) -> EnvConfig:
    """A named preset (``calibrated``, ``tip-changes`` or the held-out ``tip-changes-unseen``) with field
    overrides."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {sorted(PRESETS)}")
    return replace(PRESETS[name], **overrides)
