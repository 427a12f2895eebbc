"""Named presets (``smoke``, ``small``, ``paper``) of the claim experiments."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClaimConfig:
    """Sizes of the claim experiments.

    Attributes
    ----------
    fpt_size : int
        Fixed size k of the time-vs-n sweep.
    fpt_ns : tuple of int
        Data sizes n of the time-vs-n sweep.
    fpt_sizes : tuple of int
        Sizes k of the time-vs-size sweep (at ``fpt_n`` points).
    fpt_n : int
    repeats : int
        Timing repeats (the minimum is kept: the CPU is shared).
    depth_targets : tuple of str
        Problems searched by depth <= 3.
    n_graphs : int
        Random graphs of the clique gadget.
    clique_ks : tuple of int
        Clique sizes k used (cycled over the graphs).
    blowup_enum_size : int
        Size up to which distinct functions are enumerated for several variable counts.
    recovery_max_size : int
        Problems whose hand-written tree has at most this size are searched.
    """

    fpt_size: int
    fpt_ns: tuple[int, ...]
    fpt_sizes: tuple[int, ...]
    fpt_n: int
    repeats: int
    depth_targets: tuple[str, ...]
    n_graphs: int
    clique_ks: tuple[int, ...]
    blowup_enum_size: int
    recovery_max_size: int


PRESETS: dict[str, ClaimConfig] = {
    "smoke": ClaimConfig(
        fpt_size=5,
        fpt_ns=(100, 1_000, 10_000, 100_000),
        fpt_sizes=(3, 4, 5, 6, 7),
        fpt_n=100,
        repeats=1,
        depth_targets=("nguyen-5", "nguyen-10"),
        n_graphs=40,
        clique_ks=(3,),
        blowup_enum_size=5,
        recovery_max_size=6,
    ),
    "small": ClaimConfig(
        fpt_size=6,
        fpt_ns=(100, 300, 1_000, 3_000, 10_000, 30_000, 100_000),
        fpt_sizes=(3, 4, 5, 6, 7, 8, 9),
        fpt_n=200,
        repeats=2,
        depth_targets=("nguyen-5", "nguyen-8", "nguyen-9", "nguyen-10", "kinetic-energy"),
        n_graphs=300,
        clique_ks=(3, 3, 4),
        blowup_enum_size=7,
        recovery_max_size=9,
    ),
    "paper": ClaimConfig(
        fpt_size=7,
        fpt_ns=(100, 300, 1_000, 3_000, 10_000, 30_000, 100_000),
        fpt_sizes=(3, 4, 5, 6, 7, 8, 9, 10),
        fpt_n=1_000,
        repeats=3,
        depth_targets=("nguyen-5", "nguyen-8", "nguyen-9", "nguyen-10", "kinetic-energy"),
        n_graphs=2_000,
        clique_ks=(3, 4, 5),
        blowup_enum_size=7,
        recovery_max_size=9,
    ),
}
