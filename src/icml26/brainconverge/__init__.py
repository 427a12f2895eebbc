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

from icml26.brainconverge.alignment import (
    METRICS,
    BrainCache,
    align_models,
    align_models_ray,
    cka,
    extract_features,
    rbf_gram,
)
from icml26.brainconverge.analysis import granger, granger_bidirectional, model_alignment, performance_correlation
from icml26.brainconverge.data import BrainData, load_brain, load_images, synthetic_brain, train_mlp

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
