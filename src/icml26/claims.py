"""Executable paper claims: the ``@claim`` decorator, ``ClaimResult``, negative controls and the runner.

A claim is a function ``(scale, seed, control=False) -> ClaimResult`` that re-runs one headline statement of
a paper on data with known ground truth and says whether it ``holds``, ``fails`` or is ``not-measured`` (with
the reason). Every claim has a **negative control**: a named sabotage (the method swapped for its baseline,
the credited component switched off, shuffled truth) under which the same measurement and the same verdict
code must say ``fails``. ``control=True`` applies it; a claim whose control holds cannot fail and tells a
reader nothing, and the contract checker (:func:`icml26.testing.check_system`) rejects it::

    @claim("noisypower/accelerated-rate-v2",
           statement="ANPM's iterations grow like 1/sqrt(gap), NPM's like 1/gap",
           paper="Theorem 1; abstract",
           control="momentum beta = 0: 'ANPM' becomes NPM and its slope is ~1",
           judge=Interval("ANPM slope", above=0.3, below=0.7))
    def accelerated_rate(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
        beta = 0.0 if control else lambda_next**2 / 4        # the one line the control changes
        ...                                                  # same data, measurement and verdict code
        return ClaimResult("holds" if 0.3 < slope < 0.7 else "fails", measured={"ANPM slope": slope})

Two ways a verdict is aggregated over seeds:

- a claim without ``judge=`` holds only if it holds on every seed (any failing seed fails it);
- a claim with ``judge=`` (one or more :class:`Interval`) is judged by the 95 % t-interval of the mean of
  each judged per-seed value: for a comparison the value is a *paired* statistic (ours minus the baseline on
  the same seed's data), and the claim holds when every interval lies on the claimed side of its threshold.
  Such claims run 5 seeds by default outside ``smoke``. Thresholds live in the decorator, fixed before the
  run; changing one means a new claim version.

``paper=`` of a :class:`ClaimResult` holds only numbers the paper prints; numbers from anywhere else (a
prototype, a peer's paper) go into ``elsewhere=`` with their source in brackets: ``{"slope [prototype]": 0.5}``.

A system's ``claims.py`` ends with ``CLAIMS = [accelerated_rate, ...]``.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import logging
import math
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
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


#: Smallest number of seeds a judged (interval) claim runs by default outside ``smoke``.
JUDGED_SEEDS = 5

_ELSEWHERE_KEY = re.compile(r"\[[^\]]+\]\s*$")

# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (no scipy needed in the core).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile_975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (Cornish-Fisher beyond 30)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1; got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def _as_float(key: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"measured/baseline value {key!r} must be a number, got {type(value).__name__}") from None


def _as_value(key: str, value: Any) -> float | str:
    """A reference value: a number, or a qualitative statement kept as text."""
    return value if isinstance(value, str) else _as_float(key, value)


@dataclass
class ClaimResult:
    """What one run of a claim on one seed found.

    Parameters
    ----------
    verdict : {"holds", "fails", "not-measured"}
        Whether the paper's statement held on this run, in the direction and margin the claim checks.
    measured : dict of str to float
        The numbers measured for our implementation (and, for judged claims, the judged per-seed values).
    paper : dict of str to float or str
        What the paper itself prints for the same quantities (a number or its qualitative statement).
        Nothing else: numbers from a prototype or another paper go into ``elsewhere``.
    baselines : dict of str to float
        The numbers measured for the baselines the claim compared with.
    reason : str
        Why the verdict is what it is; required for ``not-measured``.
    figures : dict of str to matplotlib Figure
        Plots; the runner saves those of the first seed as PNG and closes every figure.
    elsewhere : dict of str to float or str
        Reference numbers that are *not* the paper's; every key ends with its source in brackets,
        e.g. ``"DeEPCA/accelerated rounds [prototype]"``.
    seed, wall_time_s, versions
        Filled in by the runner.
    """

    verdict: Verdict
    measured: dict[str, float] = field(default_factory=dict)
    paper: dict[str, float | str] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    figures: dict[str, Any] = field(default_factory=dict)
    elsewhere: dict[str, float | str] = field(default_factory=dict)
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
        self.paper = {k: _as_value(k, v) for k, v in self.paper.items()}
        for k in self.elsewhere:
            if not _ELSEWHERE_KEY.search(k):
                raise ValueError(f"elsewhere key {k!r} must end with its source in brackets, e.g. '[prototype]'")
        self.elsewhere = {k: _as_value(k, v) for k, v in self.elsewhere.items()}


@dataclass(frozen=True)
class Interval:
    """A per-seed value judged over seeds by the 95 % t-interval of its mean.

    The claim holds when the whole interval lies above ``above`` and/or below ``below`` (both given: inside
    the band). For a comparison, ``key`` names a *paired* statistic computed within each seed on the same
    data (ours minus the baseline, or their ratio), so seed-to-seed variation of the data cancels. With one
    seed there is no interval and the single value is compared with the threshold(s).

    Parameters
    ----------
    key : str
        The ``measured`` entry the claim returns on every seed.
    above, below : float, optional
        Thresholds, fixed before any run (at least one).
    """

    key: str
    above: float | None = None
    below: float | None = None

    def __post_init__(self) -> None:
        if self.above is None and self.below is None:
            raise ValueError(f"Interval({self.key!r}) needs a threshold: above=, below= or both")
        if self.above is not None and self.below is not None and not self.above < self.below:
            raise ValueError(f"Interval({self.key!r}): above={self.above} must be below below={self.below}")

    def describe(self) -> str:
        if self.above is not None and self.below is not None:
            return f"{self.above:g} < {self.key} < {self.below:g}"
        return f"{self.key} > {self.above:g}" if self.above is not None else f"{self.key} < {self.below:g}"

    def accepts(self, low: float, high: float) -> bool:
        """Whether ``[low, high]`` lies wholly on the claimed side of the threshold(s)."""
        if not (math.isfinite(low) and math.isfinite(high)):
            return False
        return (self.above is None or low > self.above) and (self.below is None or high < self.below)

    def judge(self, values: Sequence[float]) -> dict[str, Any]:
        """Mean, 95 % interval, seeds on the claimed side, and whether the claim holds on this value."""
        values = [float(v) for v in values]
        n = len(values)
        finite = all(math.isfinite(v) for v in values)
        mean = sum(values) / n if n else math.nan
        if n >= 2 and finite:
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
            half = t_quantile_975(n - 1) * sd / math.sqrt(n)
            low, high = mean - half, mean + half
        else:
            low = high = mean if finite else math.nan
        return {
            "key": self.key,
            "rule": self.describe(),
            "n": n,
            "mean": mean,
            "low": low,
            "high": high,
            "seeds_on_side": sum(self.accepts(v, v) for v in values),
            "holds": n > 0 and finite and self.accepts(low, high),
        }


@dataclass(frozen=True)
class Claim:
    """A paper statement made executable. Build with :func:`claim`; call as ``claim(scale, seed, control)``."""

    id: str
    statement: str
    paper: str
    func: Callable[..., ClaimResult]
    control: str = ""
    judge: tuple[Interval, ...] = ()
    by_construction: str = ""
    gpu: bool = False  # needs a CUDA device at paper scale (a distributed runner reserves one)

    @property
    def system(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]

    def default_seeds(self, scale: Scale | str) -> int:
        """One seed at smoke; outside it three, or :data:`JUDGED_SEEDS` for a claim judged by intervals."""
        scale = Scale.parse(scale)
        if scale is Scale.SMOKE:
            return 1
        return max(scale.default_seeds, JUDGED_SEEDS) if self.judge else scale.default_seeds

    def __call__(self, scale: Scale | str, seed: int, control: bool = False) -> ClaimResult:
        result = self.func(Scale.parse(scale), seed, control=control)  # claim() made sure func takes control
        if not isinstance(result, ClaimResult):
            raise TypeError(f"claim {self.id} returned {type(result).__name__}, not ClaimResult")
        if self.judge and result.verdict != "not-measured":
            missing = [j.key for j in self.judge if j.key not in result.measured]
            if missing:
                raise KeyError(f"claim {self.id} is judged on {missing} but did not measure them")
            expected = "holds" if all(j.judge([result.measured[j.key]])["holds"] for j in self.judge) else "fails"
            if result.verdict != expected:
                raise ValueError(
                    f"claim {self.id} said {result.verdict!r} on seed {seed} but its judged values say {expected!r} "
                    f"({'; '.join(j.describe() for j in self.judge)}): the per-seed verdict must follow the thresholds"
                )
        return result


def claim(
    id: str,
    *,
    statement: str,
    paper: str = "",
    control: str,
    judge: Interval | Sequence[Interval] = (),
    by_construction: str = "",
    gpu: bool = False,
) -> Callable[[Callable[..., ClaimResult]], Claim]:
    """Declare a claim.

    Parameters
    ----------
    id : str
        ``"<system>/<name>-v<N>"``; change the version when what the claim checks changes.
    statement : str
        The paper's statement as the claim checks it: direction, margin, setting.
    paper : str
        Where in the paper it comes from.
    control : str
        The negative control: the sabotage that ``control=True`` applies, under which the claim must fail.
        The decorated function must accept a ``control`` keyword.
    judge : Interval or sequence of Interval, optional
        Judge the claim over seeds by 95 % intervals instead of "holds on every seed".
    by_construction : str, optional
        Set when a review found the claim holds by how its data or baseline was built (whatever its control
        says); the reports label it "holds by construction" with this reason until its next version lands.
    gpu : bool, optional
        The claim needs a CUDA device at ``paper`` scale; ``icml26 reproduce --ray-address`` then asks Ray
        for one GPU per seed (at other scales, and without the flag, the claim decides for itself).
    """
    if not CLAIM_ID.match(id):
        raise ValueError(f"claim id {id!r} must look like 'system/short-name-v1'")
    if not statement.strip():
        raise ValueError(f"claim {id} needs a statement")
    if not control.strip():
        raise ValueError(f"claim {id} needs a negative control: control='the sabotage under which it must fail'")
    judged = (judge,) if isinstance(judge, Interval) else tuple(judge)
    if not all(isinstance(j, Interval) for j in judged):
        raise TypeError(f"claim {id}: judge= takes Interval objects")

    def decorate(func: Callable[..., ClaimResult]) -> Claim:
        params = inspect.signature(func).parameters
        if "control" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            raise TypeError(f"claim {id}: {func.__name__} must accept control=False (its negative control)")
        return Claim(
            id=id,
            statement=statement.strip(),
            paper=paper,
            func=func,
            control=control.strip(),
            judge=judged,
            by_construction=by_construction.strip(),
            gpu=bool(gpu),
        )

    return decorate


@dataclass
class ClaimSummary:
    """One claim run over several seeds, aggregated. This is what reports and the CLI show.

    ``per_seed`` keeps every seed's verdict and numbers; ``judged`` the interval statistics of a judged
    claim; ``control`` the summary of the same claim run under its negative control (when it was run).
    """

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
    elsewhere: dict[str, float | str] = field(default_factory=dict)
    per_seed: list[dict[str, Any]] = field(default_factory=list)
    judged: list[dict[str, Any]] = field(default_factory=list)
    control_description: str = ""
    by_construction: str = ""
    is_control: bool = False
    control: ClaimSummary | None = None

    @property
    def system(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def control_verdict(self) -> str | None:
        """The control's aggregated verdict, or None when the control was not run."""
        return self.control.verdict if self.control is not None else None

    @property
    def control_ok(self) -> bool:
        """The control did what a control must: it failed (or, for an unmeasurable claim, was not measured)."""
        if self.control is None:
            return False
        return self.control.verdict == "fails" or (self.verdict == self.control.verdict == "not-measured")

    @property
    def status(self) -> str:
        """The verdict as reports show it, with the control: only ``holds`` + a failing control is plain holds.

        One of ``holds``, ``holds by construction``, ``holds; control not run``, ``holds; control holds too``
        (the claim cannot fail as run), ``holds; control error`` / ``holds; control not-measured`` (the control
        proved nothing), or the plain verdict when the claim did not hold (``fails``, ``not-measured``, ``error``).
        """
        if self.verdict != "holds":
            return self.verdict
        if self.by_construction:
            return "holds by construction"
        if self.control is None:
            return "holds; control not run"
        if self.control_ok:
            return "holds"
        return (
            "holds; control holds too" if self.control.verdict == "holds" else f"holds; control {self.control.verdict}"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimSummary:
        data = dict(data)
        if isinstance(data.get("control"), dict):
            data["control"] = cls.from_dict(data["control"])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


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


def judged_verdict(judge: Sequence[Interval], results: Sequence[ClaimResult]) -> tuple[str, list[dict[str, Any]]]:
    """The verdict of a judged claim from its per-seed values: every interval on its claimed side."""
    measured = [r for r in results if r.verdict != "not-measured"]
    if len(measured) < len(results):  # an interval over the seeds that happened to run would be cherry-picked
        return "not-measured", []
    stats = [j.judge([r.measured[j.key] for r in measured]) for j in judge]
    return ("holds" if all(s["holds"] for s in stats) else "fails"), stats


@dataclass
class SeedRun:
    """One claim on one seed, as it ran: the result (or the crash), its wall time and its rendered figures.

    The unit a parallel runner ships between processes: :meth:`to_dict` is JSON (figures as base64 PNG),
    so a run can be streamed to a journal and resumed from it.
    """

    claim_id: str
    scale: str
    seed: int
    control: bool
    result: ClaimResult | None = None  # None when the claim crashed
    error: str = ""  # the traceback of a crash
    wall_time_s: float = 0.0
    figures_png: dict[str, bytes] = field(default_factory=dict)  # name -> PNG, rendered only when asked

    @property
    def verdict(self) -> str:
        return "error" if self.result is None else self.result.verdict

    def save_figures(self, figure_dir: Path) -> list[str]:
        """Write the rendered figures as ``<claim name>-<figure name>.png``; the file names written."""
        if not self.figures_png:
            return []
        figure_dir.mkdir(parents=True, exist_ok=True)
        name = self.claim_id.split("/", 1)[1]
        saved = []
        for fig_name, png in self.figures_png.items():
            filename = f"{name}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', fig_name)}.png"
            (figure_dir / filename).write_bytes(png)
            saved.append(filename)
        return saved

    def to_dict(self) -> dict[str, Any]:
        import base64

        return {
            "claim_id": self.claim_id,
            "scale": self.scale,
            "seed": self.seed,
            "control": self.control,
            "result": None if self.result is None else asdict(self.result),
            "error": self.error,
            "wall_time_s": self.wall_time_s,
            "figures_png": {k: base64.b64encode(v).decode("ascii") for k, v in self.figures_png.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeedRun:
        import base64

        result = data.get("result")
        return cls(
            claim_id=data["claim_id"],
            scale=data["scale"],
            seed=int(data["seed"]),
            control=bool(data["control"]),
            result=None if result is None else ClaimResult(**result),
            error=data.get("error", ""),
            wall_time_s=float(data.get("wall_time_s", 0.0)),
            figures_png={k: base64.b64decode(v) for k, v in data.get("figures_png", {}).items()},
        )


def _render_figures(figures: dict[str, Any], render: bool) -> dict[str, bytes]:
    """PNG bytes of each figure when ``render``; every figure is closed either way."""
    if not figures:
        return {}
    import io

    import matplotlib.pyplot as plt

    rendered = {}
    try:
        if render:
            for name, fig in figures.items():
                buffer = io.BytesIO()
                fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
                rendered[name] = buffer.getvalue()
    finally:
        for fig in figures.values():
            plt.close(fig)
    return rendered


def run_seed(
    claim_obj: Claim, scale: Scale | str, seed: int, *, control: bool = False, render_figures: bool = False
) -> SeedRun:
    """Run one claim on one seed; a crash is caught and kept as the run's ``error``, never raised.

    ``render_figures`` keeps the claim's figures as PNG bytes (the runner asks for the first seed's only).
    """
    scale = Scale.parse(scale)
    run = SeedRun(claim_obj.id, scale.value, int(seed), control)
    start = time.perf_counter()
    try:
        result = claim_obj(scale, seed, control=control)
    except Exception:  # a crashing claim is reported, never lost
        run.wall_time_s = time.perf_counter() - start
        run.error = traceback.format_exc()
        logger.error("claim %s%s crashed on seed %d:\n%s", claim_obj.id, " (control)" * control, seed, run.error)
        return run
    run.wall_time_s = result.wall_time_s = time.perf_counter() - start
    result.seed = int(seed)
    result.versions = library_versions()
    run.figures_png = _render_figures(result.figures, render_figures and not control)
    result.figures = {}
    run.result = result
    logger.info("%s seed %d: %s (%.1f s)", claim_obj.id, seed, result.verdict, result.wall_time_s)
    return run


def summarize_claim(
    claim_obj: Claim, scale: Scale | str, runs: Sequence[SeedRun], figures: Sequence[str] = ()
) -> ClaimSummary:
    """Aggregate the runs of one claim (in seed order) into its summary; the runs after a crash are dropped.

    ``figures`` names the PNG files already saved for this claim. Every run must be of ``claim_obj``, at
    ``scale``, and all claims or all controls.
    """
    scale = Scale.parse(scale)
    if not runs:
        raise ValueError("no seed was run")
    control = runs[0].control
    if any(r.claim_id != claim_obj.id or r.scale != scale.value or r.control != control for r in runs):
        raise ValueError(f"runs of another claim, scale or control were given to summarize {claim_obj.id}")
    crash = next((i for i, r in enumerate(runs) if r.result is None), None)
    kept = list(runs) if crash is None else list(runs[: crash + 1])  # a sequential run stops at its first crash
    results = [r.result for r in kept if r.result is not None]
    verdicts = [r.verdict for r in kept]
    error = "" if crash is None else runs[crash].error

    verdict = aggregate_verdict(verdicts)
    judged: list[dict[str, Any]] = []
    if claim_obj.judge and verdict != "error":
        verdict, judged = judged_verdict(claim_obj.judge, results)
    measured_mean, measured_std = _aggregate([r.measured for r in results])
    baselines_mean, baselines_std = _aggregate([r.baselines for r in results])
    reasons = list(dict.fromkeys(r.reason for r in results if r.reason))
    if len(reasons) > 2:
        reasons = [*reasons[:2], f"(and {len(reasons) - 2} more)"]
    if judged and verdict == "fails":
        bad = [s for s in judged if not s["holds"]]
        reasons.insert(
            0,
            "; ".join(
                f"95% interval of {s['key']} [{s['low']:.3g}, {s['high']:.3g}] does not meet {s['rule']}" for s in bad
            ),
        )
    return ClaimSummary(
        id=claim_obj.id,
        statement=claim_obj.statement,
        paper_ref=claim_obj.paper,
        scale=scale.value,
        seeds=[r.seed for r in kept],
        verdict=verdict,
        seed_verdicts=verdicts,
        measured_mean=measured_mean,
        measured_std=measured_std,
        baselines_mean=baselines_mean,
        baselines_std=baselines_std,
        paper=results[0].paper if results else {},
        reason=" | ".join(reasons),
        error=error,
        wall_time_s=sum(r.wall_time_s for r in kept),
        versions=results[-1].versions if results else library_versions(),
        figures=list(figures),
        elsewhere=results[0].elsewhere if results else {},
        per_seed=[
            {"seed": r.seed, "verdict": r.verdict, "measured": r.measured, "baselines": r.baselines, "reason": r.reason}
            for r in results
        ],
        judged=judged,
        control_description=claim_obj.control,
        by_construction=claim_obj.by_construction,
        is_control=control,
    )


def seed_list(claim_obj: Claim, scale: Scale | str, seeds: int | Iterable[int] | None) -> list[int]:
    """The seeds a run uses: a count (``0 .. n-1``), explicit seeds, or the claim's default count."""
    if seeds is None:
        seeds = claim_obj.default_seeds(scale)
    chosen = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not chosen:
        raise ValueError("at least one seed is needed")
    return chosen


def run_claim(
    claim_obj: Claim,
    scale: Scale | str = Scale.SMOKE,
    seeds: int | Iterable[int] | None = None,
    figure_dir: Path | None = None,
    on_seed: Callable[[Claim, int, int, int, bool], None] | None = None,
    *,
    control: bool = False,
    with_control: bool = False,
) -> ClaimSummary:
    """Run one claim on several seeds, one after another, and aggregate (stops at the first crash).

    Parameters
    ----------
    claim_obj : Claim
    scale : Scale or str
    seeds : int or iterable of int, optional
        A count (seeds ``0 .. n-1``) or explicit seeds; default :meth:`Claim.default_seeds`.
    figure_dir : Path, optional
        Where the first seed's figures are saved as PNG; figures are discarded when omitted.
    on_seed : callable, optional
        ``on_seed(claim, seed, i, n, control)`` is called before the ``i``-th of ``n`` seeds starts (progress).
    control : bool
        Run the claim's negative control instead of the claim (no figures are saved).
    with_control : bool
        Run the claim, then its control on the same seeds, and attach the control's summary as ``.control``.
    """
    scale = Scale.parse(scale)
    chosen = seed_list(claim_obj, scale, seeds)
    runs: list[SeedRun] = []
    figures: list[str] = []
    for i, seed in enumerate(chosen):
        if on_seed is not None:
            on_seed(claim_obj, seed, i, len(chosen), control)
        run = run_seed(claim_obj, scale, seed, control=control, render_figures=i == 0 and figure_dir is not None)
        if figure_dir is not None:
            figures = figures or run.save_figures(figure_dir)
        runs.append(run)
        if run.result is None:
            break
    summary = summarize_claim(claim_obj, scale, runs, figures)
    if with_control and not control:
        summary.control = run_claim(claim_obj, scale, chosen, None, on_seed, control=True)
    return summary


def run_claims(
    claims: Sequence[Claim],
    scale: Scale | str = Scale.SMOKE,
    seeds: int | Iterable[int] | None = None,
    figure_dir: Path | None = None,
    on_result: Callable[[ClaimSummary], None] | None = None,
    on_seed: Callable[[Claim, int, int, int, bool], None] | None = None,
    *,
    with_control: bool = False,
) -> list[ClaimSummary]:
    """Run every claim (see :func:`run_claim`); ``on_result`` is called after each, e.g. to print progress."""
    seeds = list(seeds) if seeds is not None and not isinstance(seeds, int) else seeds
    summaries = []
    for claim_obj in claims:
        summary = run_claim(claim_obj, scale, seeds, figure_dir, on_seed, with_control=with_control)
        summaries.append(summary)
        if on_result is not None:
            on_result(summary)
    return summaries
