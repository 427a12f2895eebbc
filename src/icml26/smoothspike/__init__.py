"""SmoothSpike: Spiking Transformer with Learnable Hadamard Transformation.

A spiking text encoder (multi-step LIF, spiking self-attention without softmax, scale-free RMSNorm, embeddings
repeated over T time steps; initialised from scratch or from MiniLM-L6's BERT weights) with SmoothSpike's
randomized Hadamard rotations on the residual stream (H1), the value branch (H2) and block-diagonally in the MLP
(H3); their learnable orthogonal version (Newton-Schulz msign, quintic as the authors' or cubic to
orthogonality); inference fusion of the rotations into the weights; the fast Walsh-Hadamard transform with
Kronecker constructions for 12 * 2^k and 20 * 2^k; and the analysis tools (max-coordinate bound, spike-count
entropy, rate-code error, saturation). See README.md.
"""

from icml26._util.lazy import lazy_exports

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

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "EncoderConfig": "icml26.smoothspike.model",
    "HadamardRotation": "icml26.smoothspike.hadamard",
    "LearnableRotation": "icml26.smoothspike.hadamard",
    "SpikingEncoder": "icml26.smoothspike.model",
    "fuse": "icml26.smoothspike.model",
    "hadamard_matrix": "icml26.smoothspike.hadamard",
    "hadamard_transform": "icml26.smoothspike.hadamard",
    "load_minilm": "icml26.smoothspike.model",
    "newton_schulz": "icml26.smoothspike.hadamard",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
