"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` larger).

The claims run on the shipped EEGMAT subset (12 subjects, 30 windows of 4 s each); ``eegmat_subjects`` takes the
first n of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    eegmat_subjects: int = 12
    # protocol: subject-grouped CV ("kfold" = GroupKFold over subjects, "loso" = leave one subject out)
    cv: str = "kfold"
    folds: int = 4
    # training (model.TrainConfig); the same budget for every arm
    epochs: int = 8
    lr: float = 3e-3
    # the curvatures' learning rate is lr x this; chosen on EEGMAT seeds 0-1 (README, "Curvature liveness"), so the
    # judged scales run on seed + claims.FRESH_SEEDS
    curvature_lr_scale: float = 100.0
    warmup_epochs: int = 1
    domains_per_batch: int = 4
    trials_per_domain: int = 8
    curvature_init: float = 1.0
    # hierarchy measure: delta_rel of each modality's embedding of the held-out windows, sampled 4-point condition
    delta_points: int = 90
    delta_quadruples: int = 20000


PRESETS = {
    "smoke": Config(
        eegmat_subjects=4,
        folds=2,
        epochs=3,
        warmup_epochs=0,
        domains_per_batch=2,
        trials_per_domain=10,
        delta_points=48,
        delta_quadruples=5000,
    ),
    "small": Config(),
    "paper": Config(cv="loso", epochs=40),
}

#: the arms of the comparison (notes section 7): full model, its ablations, Euclidean baselines
# (here, not in model.py, so the command line lists them without loading torch)
ARMS = (
    "moce",
    "moce-fixed-k",
    "moce-fixed-k-gate",
    "moce-no-dbn",
    "moce-flat",
    "eeg-only",
    "late-fusion",
    "euclid-xattn",
    "braindecode-eegnet",
    "braindecode-shallow",
)

#: the rules on the HRV stream and the baselines fitted without epochs or a grid (deterministic: their A/A
#: replicates are bootstrap refits); here, not in model.py, so the claims import them without torch
RULES = ("hr-stump", "hrv-logreg")
FITTED = ("tangent-space", *RULES)

#: (lr, epochs) of each trained arm at the judged scales, won on validation subjects from the same grid (lr 1e-3 /
#: 3e-3 / 1e-2 x 8 / 16 epochs; 3 of each fold's 9 training subjects held out; benchmarks/eegmoce_tuning.py, seed 0,
#: benchmarks/results/eegmoce_tuning.json); the MoCE ablations use MoCE's pair. Chosen on the same 12 subjects the
#: claims test: the judged seeds (claims.FRESH_SEEDS) draw new folds and initialisations, not new subjects
TUNED: dict[str, tuple[float, int]] = {
    "moce": (1e-3, 16),
    "eeg-only": (3e-3, 16),
    "late-fusion": (1e-2, 16),
    "euclid-xattn": (3e-3, 16),
    "braindecode-eegnet": (1e-2, 16),
    "braindecode-shallow": (1e-2, 16),
}
#: the peer with the best validation balanced accuracy in the same run (MoCE excluded; 0.917, ahead of late fusion's
#: 0.894): the logistic regression on the HRV stream's window means and sds, the accuracy claim's comparator
BEST_PEER = "hrv-logreg"
