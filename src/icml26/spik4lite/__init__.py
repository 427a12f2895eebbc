"""Spik4lite: Refactoring Neuromorphic Sparsity for Efficient Spiking Neural Networks on Commodity Edge Devices.

Multi-step LIF spiking networks (a spiking CNN and a Spikingformer-style transformer), the Spik4lite plug-in
(firing-rate-driven Gumbel channel gates, the SOP-weighted energy regulariser, temperature annealing) and the
*physical* refactoring that removes gated-off channels from the leader layer, its BatchNorm and the follower
layer, plus SOP / energy-proxy counting, CPU latency and ``torch.export`` of the compact model. See README.md.
"""

# Each public name and its module, imported on first use: torch loads only when the models are used, so the command
# line's parser (and --help) starts fast (PEP 562).
from icml26._util.lazy import lazy_exports

_LAZY = {
    "count_ops": "measure",
    "interleaved_latency": "measure",
    "ChannelGate": "model",
    "MultiStepLIF": "model",
    "SpikingCNN": "model",
    "SpikingformerMini": "model",
    "add_gates": "model",
    "energy_loss": "model",
    "mask_model": "model",
    "refactor": "model",
    "spik4lite": "train",
    "train_dense": "train",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "ChannelGate",
    "MultiStepLIF",
    "SpikingCNN",
    "SpikingformerMini",
    "add_gates",
    "count_ops",
    "energy_loss",
    "interleaved_latency",
    "mask_model",
    "refactor",
    "spik4lite",
    "train_dense",
]
