"""Hyper-parameter presets for :class:`icml26.dualflow.DualFlow` (``smoke``, ``small``, ``paper``).

``paper`` follows the paper's monkey-reach setting (MLPs of depth 4 and width 256, history h = 10,
nested-dropout rate p = 1/50); ``small`` is the laptop reconstruction of ``papers/dualflow.md`` §7
(width 64, depth 3, h = 2, p = 1/10, 600 steps at batch 128: 15-30 s on a shared 2-core CPU; the notes'
3,000 steps at width 128 and batch 256 cost about 20x more);
``smoke`` runs in seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: Most frames :meth:`DualFlow.simulate` rolls out per call (each costs several network evaluations).
MAX_SIMULATE_FRAMES = 100_000
#: Most values (trials x frames x features) a forecast may hold (8 bytes each: about 800 MB).
MAX_SIMULATE_VALUES = 100_000_000
#: Most Adam steps of one fit.
MAX_STEPS = 10_000_000


@dataclass(frozen=True)
class DualFlowConfig:
    """Keyword hyper-parameters of :class:`~icml26.dualflow.DualFlow`.

    Attributes
    ----------
    latent_budget : float
        E[K] = 1/p of the nested-dropout prefix length K ~ Geom(p) truncated to [1, n_latent].
    history : int
        Lag h of the history fed to the dynamical flow v_theta.
    hidden : int
        Width of the MLPs mu_psi, u_phi and v_theta.
    depth : int
        Number of hidden layers of each MLP.
    n_steps : int
        Adam steps.
    batch_size : int
        Frame pairs per step.
    lr : float
        Adam learning rate.
    """

    latent_budget: float = 10.0
    history: int = 2
    hidden: int = 128
    depth: int = 3
    n_steps: int = 2000
    batch_size: int = 256
    lr: float = 1e-3

    def as_kwargs(self) -> dict:
        """The preset as keyword arguments of ``DualFlow``."""
        return asdict(self)


PRESETS = {
    "smoke": DualFlowConfig(hidden=64, depth=2, n_steps=150, batch_size=128),
    "small": DualFlowConfig(hidden=64, n_steps=600, batch_size=128),
    # 20,000 steps as the claims' paper preset in experiment.py (the paper prints no step count)
    "paper": DualFlowConfig(latent_budget=50.0, history=10, hidden=256, depth=4, n_steps=20_000),
}


def preset(name: str) -> DualFlowConfig:
    """Return the named preset; ``ValueError`` for an unknown name."""
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}; got {name!r}")
    return PRESETS[name]
