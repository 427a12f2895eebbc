"""From Associations to Activations: Comparing Behavioral and Hidden-State Semantic Geometry in LLMs.

Behavioural geometry (forced-choice and free-association counts -> PPMI -> cosine) against layerwise
hidden-state geometry (mean-centred cosine) by RSA over sampled pairs, NN@k overlap and held-out-words ridge
regression; a simulated subject with ground truth; a runner for any transformers causal LM (batched log-prob
forced choice, sampled free association, resumable Parquet trial store, four hidden-state strategies) with
SmolLM2-135M-Instruct offline. See README.md.
"""

from icml26.behaviorgeo.geometry import (
    count_matrix,
    heldout_ridge,
    hidden_similarity,
    nn_overlap,
    ppmi,
    row_cosine,
    rsa,
    sample_pairs,
)
from icml26.behaviorgeo.subject import SemanticWorld, SimulatedSubject, fc_trials

__all__ = [
    "SemanticWorld",
    "SimulatedSubject",
    "count_matrix",
    "fc_trials",
    "heldout_ridge",
    "hidden_similarity",
    "nn_overlap",
    "ppmi",
    "row_cosine",
    "rsa",
    "sample_pairs",
]
