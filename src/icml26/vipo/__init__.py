"""VIPO: Value Function Inconsistency Penalized Offline Reinforcement Learning.

Model-based offline RL whose dynamics ensemble is trained by the usual Gaussian NLL *plus* a value-inconsistency
term: a value ``V_D`` learned from dataset transitions and a value ``V_theta`` learned through the model, and a
likelihood-ratio gradient (weight ``phi``) that moves the model to close the gap. VIPO plugs into MOPO-style
penalised SAC and MOBILE-style Bellman-inconsistency penalties. Also: D4RL-format local datasets (Gymnasium
Pendulum / MuJoCo), a validating loader, normalised scores, termination functions. See README.md.
"""

from icml26._util.lazy import lazy_exports

__all__ = [
    "DynamicsConfig",
    "GaussianEnsemble",
    "PolicyConfig",
    "load_dataset",
    "make_dataset",
    "normalised_score",
    "termination_fn",
    "train_dynamics",
    "train_policy",
    "vipo_loss",
]

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "DynamicsConfig": "icml26.vipo.dynamics",
    "GaussianEnsemble": "icml26.vipo.dynamics",
    "PolicyConfig": "icml26.vipo.policy",
    "load_dataset": "icml26.vipo.data",
    "make_dataset": "icml26.vipo.data",
    "normalised_score": "icml26.vipo.data",
    "termination_fn": "icml26.vipo.data",
    "train_dynamics": "icml26.vipo.dynamics",
    "train_policy": "icml26.vipo.policy",
    "vipo_loss": "icml26.vipo.dynamics",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
