"""eegmoce — EEG-Based Multimodal Learning via Hyperbolic Mixture-of-Curvature Experts.

ICML 2026 (arXiv 2604.12579; the authors' code is non-commercial and was not used). Each modality (EEG,
audio-like and video-like streams) is encoded by a Euclidean encoder (EEGNet-style for EEG), lifted to its own
Lorentz expert with a learnable curvature ``K_m = -|K_m|``, normalised per subject (domain Lorentz batch norm,
refitted on each test subject's unlabeled trials), pooled, then fused by curvature-aware cross-attention
(each modality attends to the others with temperature ``tau_0 / sqrt|K_m|`` and a prior ``lambda log|K_j|``),
Lorentz midpoints, HypLayerNorm and a Lorentz multinomial logistic regression head. float64 throughout.

Library::

    from icml26.eegmoce import simulate, cross_validate, ModelConfig, TrainConfig, gromov_delta
    data = simulate(n_subjects=8, trials=32, seed=0)        # EEG (N, 8, 128) + audio + video, subject ids
    res = cross_validate(data, "moce", ModelConfig(), TrainConfig(epochs=12), cv="kfold", n_folds=4)
    res.balanced_accuracy, res.curvatures                     # per held-out fold

Real EEG + ECG (EEGMAT, a 12-subject subset shipped; EDF for all 36)::

    from icml26.eegmoce import load_eegmat
    data, subjects = load_eegmat()        # eeg (360, 19, 256), ecg (360, 1, 256), hrv (360, 2, 16); rest vs arithmetic

Command line: ``icml26 eegmoce simulate|train|explain`` (``train --edf DIR`` for EDF recordings).
"""

# Each public name and its module, imported on first use: torch loads only when the model is used, so the command
# line's parser (and --help) starts fast (PEP 562).
from icml26._util.lazy import lazy_exports

_LAZY = {
    "MultimodalData": "data",
    "from_mne_epochs": "data",
    "gromov_delta": "data",
    "load_npz": "data",
    "simulate": "data",
    "load_eegmat": "eegmat",
    "ARMS": "config",
    "MoCE": "model",
    "ModelConfig": "model",
    "TrainConfig": "model",
    "build_model": "model",
    "cross_validate": "model",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "ARMS",
    "MoCE",
    "ModelConfig",
    "MultimodalData",
    "TrainConfig",
    "build_model",
    "cross_validate",
    "from_mne_epochs",
    "gromov_delta",
    "load_eegmat",
    "load_npz",
    "simulate",
]
