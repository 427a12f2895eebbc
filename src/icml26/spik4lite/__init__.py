"""Spik4lite: Refactoring Neuromorphic Sparsity for Efficient Spiking Neural Networks on Commodity Edge Devices.

Multi-step LIF spiking networks (a spiking CNN and a Spikingformer-style transformer), the Spik4lite plug-in
(firing-rate-driven Gumbel channel gates, the SOP-weighted energy regulariser, temperature annealing) and the
*physical* refactoring that removes gated-off channels from the leader layer, its BatchNorm and the follower
layer, plus SOP / energy-proxy counting, CPU latency and ``torch.export`` of the compact model. See README.md.
"""

from icml26.spik4lite.measure import count_ops, interleaved_latency
from icml26.spik4lite.model import (
    ChannelGate,
    MultiStepLIF,
    SpikingCNN,
    SpikingformerMini,
    add_gates,
    energy_loss,
    mask_model,
    refactor,
)
from icml26.spik4lite.train import spik4lite, train_dense

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
