"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    data: str = "digits"
    n_stim: int = 400
    """images the synthetic brain "saw" (the stimuli of every alignment measurement)"""
    n_test: int = 400
    """held-out images on which performance (accuracy) is measured"""
    ref_width: int = 128
    ref_depth: int = 2
    ref_epochs: int = 30
    """the reference network whose layers the brain reads (hidden 1 -> early, hidden 2 -> late, logits -> semantic)"""
    voxels: int = 100
    """voxels per ROI"""
    snr: float = 0.5
    """signal-to-noise variance ratio per voxel"""
    zoo_models: int = 30
    hier_min_accuracy: float = 0.7
    """models counted in the hierarchy claim: >= 3 hooked layers and at least this test accuracy"""
    traj_models: int = 6
    traj_epochs: int = 40
    traj_widths: tuple[int, ...] = (16, 32, 64, 128)
    traj_lr: float = 1e-3
    """a slow learning rate: alignment and accuracy keep changing over the whole trajectory"""
    granger_maxlag: int = 3
    null_perms: int = 40
    """permutations per (trajectory, direction) for the false-positive rate"""
    planted_pairs: int = 200
    planted_coupling: float = 0.6
    scaleout_models: int = 6
    scaleout_backend: str = "ray"
    """"ray" (a local 2-CPU Ray instance) or "pool" (local worker processes, used at smoke: Ray starts in ~8 s)"""
    lm_widths: tuple[int, ...] = (16, 32, 64)
    lm_depths: tuple[int, ...] = (1, 2)
    lm_steps: int = 400
    lm_checkpoints: tuple[int, ...] = (0, 25, 50, 100, 200, 400)
    """the real-language zoo: word-level GPT-2s trained on chapters II-XI, kept at these steps"""
    lm_context: int = 64
    lm_traj_every: int = 20
    """real-granger: every model of the zoo kept every this many steps (0..lm_steps): its training trajectory"""
    lm_granger_maxlag: int = 2
    lm_planted_coupling: float = 0.6
    """real-granger's positive control: the lagged alignment increment added to performance's, in s.d. units"""
    lm_shifts: int = 16
    """story-free (circularly shifted) brains per reference set of the v3 real-brain claims"""
    alice_subjects: int = 28
    """listeners of the Alice fMRI data used (the first ones by id)"""


PRESETS = {
    "smoke": Config(
        n_stim=200,
        zoo_models=12,
        voxels=60,
        ref_epochs=20,
        traj_models=3,
        traj_epochs=24,
        null_perms=20,
        planted_pairs=80,
        scaleout_models=3,
        scaleout_backend="pool",
        lm_widths=(16, 32),
        lm_depths=(1,),
        lm_steps=60,
        lm_checkpoints=(0, 20, 60),
        lm_context=32,
        lm_traj_every=5,
        lm_granger_maxlag=1,
        lm_shifts=32,
        alice_subjects=8,
    ),
    "small": Config(),
    "paper": Config(
        data="mnist",
        n_stim=1000,
        n_test=2000,
        zoo_models=75,
        voxels=500,
        traj_models=20,
        traj_epochs=60,
        null_perms=100,
        planted_pairs=1000,
        scaleout_models=20,
    ),
}
