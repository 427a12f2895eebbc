"""VIPO: Value Function Inconsistency Penalized Offline Reinforcement Learning.

Model-based offline RL whose dynamics ensemble is trained by the usual Gaussian NLL *plus* a value-inconsistency
term: a value ``V_D`` learned from dataset transitions and a value ``V_theta`` learned through the model, and a
likelihood-ratio gradient (weight ``phi``) that moves the model to close the gap. VIPO plugs into MOPO-style
penalised SAC and MOBILE-style Bellman-inconsistency penalties. Also: D4RL-format local datasets (Gymnasium
Pendulum / MuJoCo), a validating loader, normalised scores, termination functions. See README.md.
"""

from icml26.vipo.data import load_dataset, make_dataset, normalised_score, termination_fn
from icml26.vipo.dynamics import DynamicsConfig, GaussianEnsemble, train_dynamics, vipo_loss
from icml26.vipo.policy import PolicyConfig, train_policy

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
