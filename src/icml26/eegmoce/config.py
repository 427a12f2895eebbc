"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # synthetic data (data.simulate): subjects x trials, tree depth 3 / branching 3, classes = level-1 subtrees
    subjects: int = 8
    trials: int = 32
    noise: float = 1.0
    stream_signal: float = 0.12
    # protocol: subject-grouped CV ("kfold" = GroupKFold over subjects, "loso" = leave one subject out)
    cv: str = "kfold"
    folds: int = 4
    # training (model.TrainConfig); the same budget for every arm
    epochs: int = 12
    lr: float = 3e-3
    # x100 (v3 of the curvature claims; x10 before): at x10 the learned |K| stay within 0.12 of each other and
    # rotating them across the experts changes 3.5 % of held-out predictions (inert); x100 gives the 12 epochs the
    # curvature drift of the paper's 100 epochs at x10 and changes 15-18 % of them (README, Controls and mechanisms)
    curvature_lr_scale: float = 100.0
    warmup_epochs: int = 1
    domains_per_batch: int = 4
    trials_per_domain: int = 8
    curvature_init: float = 1.0
    # hierarchy measure: delta_rel of each modality's features, sampled 4-point condition
    delta_points: int = 192
    delta_quadruples: int = 20000


PRESETS = {
    "smoke": Config(
        subjects=4,
        trials=12,
        folds=2,
        epochs=4,
        warmup_epochs=0,
        domains_per_batch=2,
        trials_per_domain=6,
        delta_points=48,
        delta_quadruples=5000,
    ),
    "small": Config(),
    "paper": Config(subjects=12, trials=60, cv="loso", epochs=40),
}
