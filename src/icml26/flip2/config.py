"""Named presets (``smoke``, ``small``, ``paper``) of the claim experiments."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClaimConfig:
    """Sizes of the claim experiments.

    Attributes
    ----------
    L, n_wild_types, n_per_wt, n_msa : int
        Synthetic Potts landscape: length, homologous wild types, variants per wild type, MSA depth.
    cnn_steps, tf_steps, pretrain_steps : int
        Optimiser steps of the CNN, of transformer fine-tuning, and of masked-LM pretraining.
    gb1_cnn : bool
        Whether ``reproduces-flip-gb1`` also trains the CNN on the GB1 splits.
    low_n : int
        Training size of the low-N random split of ``zero-shot-helps-out-of-distribution``.
    hard_models : tuple of str
        Models averaged by ``low-to-high-hardest``.
    tf_lrs : tuple of float
        Transformer fine-tuning learning rates tried on validation (smoke: one, to stay fast).
    """

    L: int
    n_wild_types: int
    n_per_wt: int
    n_msa: int
    cnn_steps: int
    tf_steps: int
    pretrain_steps: int
    gb1_cnn: bool
    low_n: int
    hard_models: tuple[str, ...]
    tf_lrs: tuple[float, ...] = (1e-3, 3e-3)


PRESETS = {
    "smoke": ClaimConfig(30, 3, 200, 200, 150, 50, 30, False, 50, ("ridge", "zsridge", "zero-shot"), (3e-3,)),
    "small": ClaimConfig(40, 3, 800, 600, 600, 600, 400, True, 50, ("ridge", "zsridge", "zero-shot", "cnn")),
    "paper": ClaimConfig(60, 3, 3000, 3000, 3000, 3000, 3000, True, 50, ("ridge", "zsridge", "zero-shot", "cnn")),
}


def preset(scale) -> ClaimConfig:
    return PRESETS[str(getattr(scale, "value", scale))]


#: every model the harness builds (here, not in models.py, so the command line lists them without loading torch)
MODEL_NAMES = (
    "ridge",
    "zsridge",
    "zero-shot",
    "cnn",
    "transformer-pretrained",
    "transformer-naive",
    "levenshtein",
    "blosum62",
    "pssm-train",
    "zsridge-blosum62",
    "zsridge-pssm-train",
    "zsridge-real",
)
