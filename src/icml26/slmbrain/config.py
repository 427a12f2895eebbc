"""Sizes of the synthetic world per scale (``smoke`` seconds, ``small`` minutes, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    n_topics: int = 3
    train_words: int = 40000
    """words of grammar text the teacher and the students are trained on"""
    n_stories: int = 8
    """stories presented in the scanner; the last one is the test story"""
    story_words: int = 500
    repeats: int = 2
    """presentations of the test story (noise ceiling)"""
    voxels_per_roi: int = 100
    nonlexical: float = 0.5
    """fraction of the teacher's contextual directions the brain is built from: those a bag-of-words model
    of the surrounding words predicts least (1.0: every direction)"""
    snr: float = 0.5
    """signal-to-noise variance ratio of a voxel"""
    ctx: int = 32
    teacher_width: int = 64
    teacher_layers: int = 3
    teacher_steps: int = 800
    student_widths: tuple[int, ...] = (4, 8, 16, 32, 64)
    student_layers: int = 2
    student_steps: int = 400
    batch: int = 16
    damage_targets: tuple[float, ...] = (0.02, 0.10)
    """relative held-out LM-loss increases every compression is matched to (compression claims)"""


PRESETS = {
    "smoke": Config(
        train_words=16000,
        n_stories=6,
        story_words=500,
        voxels_per_roi=40,
        ctx=16,
        teacher_width=64,
        teacher_layers=3,
        teacher_steps=500,
        student_widths=(4, 16, 32),
        student_steps=300,
    ),
    "small": Config(n_stories=12, story_words=800, student_widths=(4, 16, 64)),
    "tiny": Config(  # command-line examples and tests only (seconds): not a claim scale
        train_words=3000,
        n_stories=4,
        story_words=120,
        voxels_per_roi=10,
        ctx=16,
        teacher_width=16,
        teacher_layers=1,
        teacher_steps=20,
        student_widths=(4, 8),
        student_steps=20,
    ),
    "paper": Config(
        train_words=200000,
        n_stories=11,
        story_words=2000,
        teacher_width=256,
        teacher_layers=4,
        teacher_steps=6000,
        student_widths=(16, 32, 64, 128, 256),
        student_steps=3000,
        voxels_per_roi=500,
    ),
}
