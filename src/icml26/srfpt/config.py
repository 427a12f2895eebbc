"""Named presets (``smoke``, ``small``, ``paper``) of the claim experiments."""

from __future__ import annotations

from dataclasses import dataclass

ONE_VARIABLE_TARGETS = (
    "nguyen-1",
    "nguyen-2",
    "nguyen-3",
    "nguyen-4",
    "nguyen-5",
    "nguyen-6",
    "nguyen-7",
    "nguyen-8",
    "photon-energy",
    "lorentz-factor",
    "kepler-third-law",
    "gaussian",
)


@dataclass(frozen=True)
class ClaimConfig:
    """Sizes of the claim experiments.

    Attributes
    ----------
    size_ks : tuple of int
        Size bounds k of ``fpt-in-size`` (both sweeps).
    size_ns : tuple of int
        Data sizes n of its n sweep (one variable).
    size_vs : tuple of int
        Variable counts v of its v sweep, at ``size_v_n`` points.
    size_v_n : int
    depth_ds : tuple of int
        Depth bounds D of the n sweep of ``fpt-in-depth`` (default operators, one variable).
    depth_ns : tuple of int
    depth_targets : tuple of str
        Problems searched by depth <= 3 with the default operators (each needs a tree in ``DEPTH_TREES``).
    gadget_max_vertices : int
        Every graph with 1 .. this many vertices goes through the clique gadget.
    gadget_ks : tuple of int
        Clique sizes k.
    turan_max_vertices : int
        Turan graphs T(N, k-1) for N = k .. this.
    planted_per_k, planted_max_vertices : int
        Random graphs with a planted k-clique, per k, on k+2 .. this many vertices.
    recovery_targets : tuple of str
        Problems of ``exact-recovery``.
    recovery_max_size : int
        The one size bound of every ``exact-recovery`` search.
    recovery_noises : tuple of float
        Relative noise levels (must contain 0.0 and 0.01, the judged ones).
    """

    size_ks: tuple[int, ...]
    size_ns: tuple[int, ...]
    size_vs: tuple[int, ...]
    size_v_n: int
    depth_ds: tuple[int, ...]
    depth_ns: tuple[int, ...]
    depth_targets: tuple[str, ...]
    gadget_max_vertices: int
    gadget_ks: tuple[int, ...]
    turan_max_vertices: int
    planted_per_k: int
    planted_max_vertices: int
    recovery_targets: tuple[str, ...]
    recovery_max_size: int
    recovery_noises: tuple[float, ...] = (0.0, 0.01, 0.1)


PRESETS: dict[str, ClaimConfig] = {
    "smoke": ClaimConfig(
        size_ks=(3, 4, 5),
        size_ns=(100, 1_000, 10_000),
        size_vs=(1, 2, 3, 4),
        size_v_n=100,
        depth_ds=(1, 2),
        depth_ns=(100, 1_000, 10_000),
        depth_targets=("nguyen-5",),
        gadget_max_vertices=5,
        gadget_ks=(3, 4),
        turan_max_vertices=7,
        planted_per_k=2,
        planted_max_vertices=8,
        recovery_targets=("nguyen-5", "nguyen-8", "photon-energy"),
        recovery_max_size=7,
    ),
    "small": ClaimConfig(
        size_ks=(3, 4, 5, 6, 7),
        size_ns=(100, 1_000, 10_000, 100_000),
        size_vs=(1, 2, 3, 4, 5),
        size_v_n=200,
        depth_ds=(1, 2, 3),
        depth_ns=(100, 300, 1_000, 3_000),
        depth_targets=("nguyen-1", "nguyen-5", "nguyen-8", "photon-energy"),
        gadget_max_vertices=6,
        gadget_ks=(3, 4, 5),
        turan_max_vertices=10,
        planted_per_k=10,
        planted_max_vertices=10,
        recovery_targets=ONE_VARIABLE_TARGETS,
        recovery_max_size=9,
    ),
    "paper": ClaimConfig(
        size_ks=(3, 4, 5, 6, 7, 8),
        size_ns=(100, 1_000, 10_000, 100_000),
        size_vs=(1, 2, 3, 4, 5, 6),
        size_v_n=200,
        depth_ds=(1, 2, 3),
        depth_ns=(100, 300, 1_000, 3_000, 10_000),
        depth_targets=(
            "nguyen-1",
            "nguyen-5",
            "nguyen-8",
            "photon-energy",
            "nguyen-9",
            "nguyen-10",
            "nguyen-11",
            "kinetic-energy",
            "boltzmann-factor",
        ),
        gadget_max_vertices=7,
        gadget_ks=(3, 4, 5),
        turan_max_vertices=12,
        planted_per_k=50,
        planted_max_vertices=12,
        recovery_targets=(
            *ONE_VARIABLE_TARGETS,
            "nguyen-9",
            "nguyen-10",
            "nguyen-11",
            "nguyen-12",
            "kinetic-energy",
            "ohm-power",
            "spring-energy",
            "de-broglie",
            "boltzmann-factor",
            "thin-lens",
            "velocity-addition",
            "wave-speed",
            "pendulum-period",
            "escape-velocity",
        ),
        recovery_max_size=9,
    ),
}
