"""From Associations to Activations: Comparing Behavioral and Hidden-State Semantic Geometry in LLMs.

Behavioural geometry (forced-choice and free-association counts -> PPMI -> cosine) against layerwise
hidden-state geometry (mean-centred cosine) by RSA over sampled pairs, NN@k overlap and held-out-words ridge
regression; a simulated subject with ground truth; a fast trial runner for any transformers causal LM (forced
choice scored on a shared prompt-prefix KV cache with all candidates packed in one row, batched cached free
association, resumable Parquet trial store, four hidden-state strategies) with SmolLM2-135M-Instruct offline
and a 1,060-noun vocabulary. See README.md.
"""

from icml26._util.lazy import lazy_exports

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

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "SemanticWorld": "icml26.behaviorgeo.subject",
    "SimulatedSubject": "icml26.behaviorgeo.subject",
    "count_matrix": "icml26.behaviorgeo.geometry",
    "fc_trials": "icml26.behaviorgeo.subject",
    "heldout_ridge": "icml26.behaviorgeo.geometry",
    "hidden_similarity": "icml26.behaviorgeo.geometry",
    "nn_overlap": "icml26.behaviorgeo.geometry",
    "ppmi": "icml26.behaviorgeo.geometry",
    "row_cosine": "icml26.behaviorgeo.geometry",
    "rsa": "icml26.behaviorgeo.geometry",
    "sample_pairs": "icml26.behaviorgeo.geometry",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
