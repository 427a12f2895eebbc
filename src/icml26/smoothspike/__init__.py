"""SmoothSpike: Spiking Transformer with Learnable Hadamard Transformation.

A spiking text encoder (multi-step LIF, spiking self-attention without softmax, scale-free RMSNorm, embeddings
repeated over T time steps; initialised from scratch or from MiniLM-L6's BERT weights) with SmoothSpike's
randomized Hadamard rotations on the residual stream (H1), the value branch (H2) and block-diagonally in the MLP
(H3); their learnable orthogonal version (Newton-Schulz msign, quintic as the authors' or cubic to
orthogonality); inference fusion of the rotations into the weights; the fast Walsh-Hadamard transform with
Kronecker constructions for 12 * 2^k and 20 * 2^k; and the analysis tools (max-coordinate bound, spike-count
entropy, rate-code error, saturation). See README.md.
"""

from icml26.smoothspike.hadamard import (
    HadamardRotation,
    LearnableRotation,
    hadamard_matrix,
    hadamard_transform,
    newton_schulz,
)
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, fuse, load_minilm

__all__ = [
    "EncoderConfig",
    "HadamardRotation",
    "LearnableRotation",
    "SpikingEncoder",
    "fuse",
    "hadamard_matrix",
    "hadamard_transform",
    "load_minilm",
    "newton_schulz",
]
