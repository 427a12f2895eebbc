"""Executable paper claims: the ``@claim`` decorator, ``ClaimResult`` and the multi-seed runner.

A claim is a function ``(scale, seed) -> ClaimResult`` that re-runs one headline statement of a paper on
data with known ground truth and says whether it ``holds``, ``fails`` or is ``not-measured`` (with the
reason). The runner calls it once per seed, times it, records library versions, aggregates the measured
numbers to mean ± spread, and turns a crash into an ``error`` verdict instead of a lost run::

    @claim("noisypower/accelerated-rate-v1",
           statement="ANPM reaches eps in O(sqrt(1/gap)) iterations; NPM needs O(1/gap)",
           paper="Theorem 1")
    def accelerated_rate(scale: Scale, seed: int) -> ClaimResult:
        ...
        return ClaimResult("holds" if ratio > 2 else "fails", measured={"speed-up": ratio},
                           paper={"speed-up": "O(sqrt(gap))"}, baselines={"npm iterations": n_npm})

A system's ``claims.py`` ends with ``CLAIMS = [accelerated_rate, ...]``.
"""

from __future__ import annotations

import importlib.metadata
import logging
import math
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

Verdict = Literal["holds", "fails", "not-measured"]
VERDICTS: tuple[str, ...] = ("holds", "fails", "not-measured")
#: Verdicts of an aggregated run: the three above, or ``error`` when the claim crashed on some seed.
SUMMARY_VERDICTS: tuple[str, ...] = (*VERDICTS, "error")

CLAIM_ID = re.compile(r"^(?P<system>[a-z][a-z0-9]*)/(?P<name>[a-z0-9][a-z0-9-]*)-v(?P<version>\d+)$")

# Libraries whose versions are recorded when a claim has imported them.
_VERSIONED_LIBRARIES = {  # imported module -> distribution name
    "numpy": "numpy",
    "scipy": "scipy",
    "torch": "torch",
    "sklearn": "scikit-learn",
    "pandas": "pandas",
    "anndata": "anndata",
    "scanpy": "scanpy",
    "gymnasium": "gymnasium",
    "networkx": "networkx",
    "mpi4py": "mpi4py",
    "sympy": "sympy",
    "xarray": "xarray",
    "pyscf": "pyscf",
    "pysat": "python-sat",
    "torchdiffeq": "torchdiffeq",
    "statsmodels": "statsmodels",
    "transformers": "transformers",
}


class Scale(StrEnum):
    """How big a claim run is.

    ``smoke``: seconds, runs in the default test suite. ``small``: minutes on a 2-core laptop, what
    ``icml26 reproduce`` runs by default. ``paper``: the paper's own setting; may need a GPU and hours.
    """

    SMOKE = "smoke"
    SMALL = "small"
    PAPER = "paper"

    @classmethod
    def parse(cls, value: str | Scale) -> Scale:
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"scale must be one of {', '.join(s.value for s in cls)}; got {value!r}") from None

    @property
    def default_seeds(self) -> int:
        """Seeds run when the user does not say: one for smoke, three otherwise (mean ± spread)."""
        return 1 if self is Scale.SMOKE else 3


def _as_float(key: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"measured/baseline value {key!r} must be a number, got {type(value).__name__}") from None


@dataclass
class ClaimResult:
    """What one run of a claim on one seed found.

    Parameters
    ----------
    verdict : {"holds", "fails", "not-measured"}
        Whether the paper's statement held on this run, in the direction and margin the claim checks.
    measured : dict of str to float
        The numbers measured for our implementation.
    paper : dict of str to float or str
        The paper's numbers (or the paper's qualitative statement) for the same quantities.
    baselines : dict of str to float
        The numbers measured for the baselines the claim compared with.
    reason : str
        Why the verdict is what it is; required for ``not-measured``.
    figures : dict of str to matplotlib Figure
        Plots; the runner saves those of the first seed as PNG and closes every figure.
    seed, wall_time_s, versions
        Filled in by the runner.
    """

    verdict: Verdict
    measured: dict[str, float] = field(default_factory=dict)
    paper: dict[str, float | str] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    wall_time_s: float | None = None
    versions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.verdict == "not-measured" and not self.reason:
            raise ValueError("a not-measured verdict needs a reason")
        self.measured = {k: _as_float(k, v) for k, v in self.measured.items()}
        self.baselines = {k: _as_float(k, v) for k, v in self.baselines.items()}
        self.paper = {k: (v if isinstance(v, str) else _as_float(k, v)) for k, v in self.paper.items()}


@dataclass(frozen=True)
class Claim:
    """A paper statement made executable. Build with :func:`claim`; call as ``claim(scale, seed)``."""

    id: str
    statement: str
    paper: str
    func: Callable[[Scale, int], ClaimResult]

    @property
    def system(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]

    def __call__(self, scale: Scale | str, seed: int) -> ClaimResult:
        result = self.func(Scale.parse(scale), seed)
        if not isinstance(result, ClaimResult):
            raise TypeError(f"claim {self.id} returned {type(result).__name__}, not ClaimResult")
        return result


def claim(id: str, *, statement: str, paper: str = "") -> Callable[[Callable[[Scale, int], ClaimResult]], Claim]:
    """Declare a claim. ``id`` is ``"<system>/<name>-v<N>"``; change the version when the check changes."""
    if not CLAIM_ID.match(id):
        raise ValueError(f"claim id {id!r} must look like 'system/short-name-v1'")
    if not statement.strip():
        raise ValueError(f"claim {id} needs a statement")

    def decorate(func: Callable[[Scale, int], ClaimResult]) -> Claim:
        return Claim(id=id, statement=statement.strip(), paper=paper, func=func)

    return decorate


@dataclass
class ClaimSummary:
    """One claim run over several seeds, aggregated. This is what reports and the CLI show."""

    id: str
    statement: str
    paper_ref: str
    scale: str
    seeds: list[int]
    verdict: str
    seed_verdicts: list[str]
    measured_mean: dict[str, float] = field(default_factory=dict)
    measured_std: dict[str, float] = field(default_factory=dict)
    baselines_mean: dict[str, float] = field(default_factory=dict)
    baselines_std: dict[str, float] = field(default_factory=dict)
    paper: dict[str, float | str] = field(default_factory=dict)
    reason: str = ""
    error: str = ""
    wall_time_s: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    @property
    def system(self) -> str:
        return self.id.split("/", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimSummary:
        return cls(**data)


def library_versions() -> dict[str, str]:
    """Versions of python, icml26 and every tracked library that is currently imported."""
    from icml26 import __version__

    versions = {"python": platform.python_version(), "icml26": __version__}
    for module_name, distribution in _VERSIONED_LIBRARIES.items():
        if module_name in sys.modules:  # read from the metadata: some __version__ attributes warn (anndata)
            try:
                versions[module_name] = importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                versions[module_name] = "?"
    return versions


def _mean_std(values: list[float]) -> tuple[float, float]:
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan, math.nan
    mean = sum(finite) / len(finite)
    if len(finite) < 2:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in finite) / (len(finite) - 1))


def _aggregate(dicts: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and sample standard deviation of every key present in all dicts (order of the first)."""
    if not dicts:
        return {}, {}
    keys = [k for k in dicts[0] if all(k in d for d in dicts[1:])]
    mean, std = {}, {}
    for k in keys:
        mean[k], std[k] = _mean_std([d[k] for d in dicts])
    return mean, std


def aggregate_verdict(verdicts: Sequence[str]) -> str:
    """A claim holds only if it holds on every seed; one failing seed makes it fail; a crash is an error."""
    if not verdicts:
        raise ValueError("no seed was run")
    if "error" in verdicts:
        return "error"
    if "fails" in verdicts:
        return "fails"
    if all(v == "holds" for v in verdicts):
        return "holds"
    return "not-measured"


def _save_figures(figures: dict[str, Any], claim_obj: Claim, figure_dir: Path | None) -> list[str]:
    if not figures:
        return []
    import matplotlib.pyplot as plt

    saved = []
    try:
        if figure_dir is not None:
            figure_dir.mkdir(parents=True, exist_ok=True)
            for name, fig in figures.items():
                filename = f"{claim_obj.name}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
                fig.savefig(figure_dir / filename, dpi=110, bbox_inches="tight")
                saved.append(filename)
    finally:
        for fig in figures.values():
            plt.close(fig)
    return saved


def run_claim(
    claim_obj: Claim,
    scale: Scale | str = Scale.SMOKE,
    seeds: int | Iterable[int] | None = None,
    figure_dir: Path | None = None,
    on_seed: Callable[[Claim, int, int, int], None] | None = None,
) -> ClaimSummary:
    """Run one claim on several seeds and aggregate.

    Parameters
    ----------
    claim_obj : Claim
    scale : Scale or str
    seeds : int or iterable of int, optional
        A count (seeds ``0 .. n-1``) or explicit seeds; default :attr:`Scale.default_seeds`.
    figure_dir : Path, optional
        Where the first seed's figures are saved as PNG; figures are discarded when omitted.
    on_seed : callable, optional
        ``on_seed(claim, seed, i, n)`` is called before the ``i``-th of ``n`` seeds starts (progress).
    """
    scale = Scale.parse(scale)
    if seeds is None:
        seeds = scale.default_seeds
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("at least one seed is needed")

    results: list[ClaimResult] = []
    verdicts: list[str] = []
    error = ""
    figures: list[str] = []
    total = 0.0
    for i, seed in enumerate(seed_list):
        if on_seed is not None:
            on_seed(claim_obj, seed, i, len(seed_list))
        start = time.perf_counter()
        try:
            result = claim_obj(scale, seed)
        except Exception:  # a crashing claim is reported, never lost
            total += time.perf_counter() - start
            error = traceback.format_exc()
            verdicts.append("error")
            logger.error("claim %s crashed on seed %d:\n%s", claim_obj.id, seed, error)
            break
        result.wall_time_s = time.perf_counter() - start
        total += result.wall_time_s
        result.seed = seed
        result.versions = library_versions()
        figs = _save_figures(result.figures, claim_obj, figure_dir if i == 0 else None)
        figures = figures or figs
        result.figures = {}
        results.append(result)
        verdicts.append(result.verdict)
        logger.info("%s seed %d: %s (%.1f s)", claim_obj.id, seed, result.verdict, result.wall_time_s)

    measured_mean, measured_std = _aggregate([r.measured for r in results])
    baselines_mean, baselines_std = _aggregate([r.baselines for r in results])
    reasons = list(dict.fromkeys(r.reason for r in results if r.reason))
    if len(reasons) > 2:
        reasons = [*reasons[:2], f"(and {len(reasons) - 2} more)"]
    return ClaimSummary(
        id=claim_obj.id,
        statement=claim_obj.statement,
        paper_ref=claim_obj.paper,
        scale=scale.value,
        seeds=seed_list[: len(verdicts)],
        verdict=aggregate_verdict(verdicts),
        seed_verdicts=verdicts,
        measured_mean=measured_mean,
        measured_std=measured_std,
        baselines_mean=baselines_mean,
        baselines_std=baselines_std,
        paper=results[0].paper if results else {},
        reason=" | ".join(reasons),
        error=error,
        wall_time_s=total,
        versions=results[-1].versions if results else library_versions(),
        figures=figures,
    )


def run_claims(
    claims: Sequence[Claim],
    scale: Scale | str = Scale.SMOKE,
    seeds: int | Iterable[int] | None = None,
    figure_dir: Path | None = None,
    on_result: Callable[[ClaimSummary], None] | None = None,
    on_seed: Callable[[Claim, int, int, int], None] | None = None,
) -> list[ClaimSummary]:
    """Run every claim (see :func:`run_claim`); ``on_result`` is called after each, e.g. to print progress."""
    seeds = list(seeds) if seeds is not None and not isinstance(seeds, int) else seeds
    summaries = []
    for claim_obj in claims:
        summary = run_claim(claim_obj, scale, seeds, figure_dir, on_seed)
        summaries.append(summary)
        if on_result is not None:
            on_result(summary)
    return summaries
