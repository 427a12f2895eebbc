"""brainconverge — Alignment between Brains and AI: Evidence for Convergent Evolution across Modalities, Scales and
Training Trajectories.

ICML 2026 (arXiv 2507.01966). Layer features of a zoo of models are compared with fMRI responses per ROI by
RBF-kernel CKA (sigma = 12 on z-scored columns, biased HSIC), linear/unbiased CKA, mutual kNN or RSA; the ROI
Gram matrices are computed once and cached; the table (model x checkpoint x layer x subject x ROI) is computed in
one process or on a Ray cluster. Analyses: alignment vs performance across the zoo, the layer best matching each
ROI, and bidirectional Granger tests on training trajectories with a permutation-null false-positive rate.

Library::

    from icml26.brainconverge import BrainCache, align_models, load_images, synthetic_brain, train_mlp
    caches = {s: BrainCache(rois) for s, rois in brain.roi_responses(stim_ids).items()}
    table = align_models([{"model": "m", "step": 0, "net": net}], images, caches)

Command line: ``icml26 brainconverge zoo|brain|align|granger|report``.
"""

from icml26._util.lazy import lazy_exports

__all__ = [
    "METRICS",
    "BrainCache",
    "BrainData",
    "align_models",
    "align_models_ray",
    "cka",
    "extract_features",
    "granger",
    "granger_bidirectional",
    "load_brain",
    "load_images",
    "model_alignment",
    "performance_correlation",
    "rbf_gram",
    "synthetic_brain",
    "train_mlp",
]

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "BrainCache": "icml26.brainconverge.alignment",
    "BrainData": "icml26.brainconverge.data",
    "METRICS": "icml26.brainconverge.alignment",
    "align_models": "icml26.brainconverge.alignment",
    "align_models_ray": "icml26.brainconverge.alignment",
    "cka": "icml26.brainconverge.alignment",
    "extract_features": "icml26.brainconverge.alignment",
    "granger": "icml26.brainconverge.analysis",
    "granger_bidirectional": "icml26.brainconverge.analysis",
    "load_brain": "icml26.brainconverge.data",
    "load_images": "icml26.brainconverge.data",
    "model_alignment": "icml26.brainconverge.analysis",
    "performance_correlation": "icml26.brainconverge.analysis",
    "rbf_gram": "icml26.brainconverge.alignment",
    "synthetic_brain": "icml26.brainconverge.data",
    "train_mlp": "icml26.brainconverge.data",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
