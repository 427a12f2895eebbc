"""Executable paper claims: ``@claim``, ``ClaimResult``, the three arms, mechanisms, and the runner.

A claim re-runs one headline statement of a paper on data with known ground truth and says whether it
``holds``, ``fails`` or is ``not-measured`` (with the reason). It is a function ``(scale, seed, arm)`` run in
three **arms** that share the measurement, the seeds and the verdict code:

- ``Arm.CLAIM``: the paper's method as the paper describes it;
- ``Arm.NEGATIVE``: the negative control, the effect removed (the credited component switched off, the
  method replaced by its baseline). For a comparison it is an A/A run: the sabotaged arm keeps its own,
  independent randomness, so the statistic scatters around its null. It must say ``fails``;
- ``Arm.POSITIVE``: the positive control, the claimed effect *planted at the claimed size* (a known-good arm,
  the baseline handicapped by exactly the claimed margin, a planted structure, the oracle component). It
  must say ``holds``; when it does not, the run could not have seen the effect and the claim's verdict is
  ``no-power``, never ``fails``::

    @claim("noisypower/accelerated-rate-v3",
           statement="ANPM's iterations grow like 1/sqrt(gap), NPM's like 1/gap",
           paper="Theorem 1; abstract",
           control="momentum beta = 0: 'ANPM' becomes NPM and its slope is ~1",
           positive="the iterations Chebyshev's bound predicts, with measurement noise: slope 0.5 planted",
           mechanisms=("momentum",),
           judge=Interval("ANPM slope", above=0.3, below=0.7))
    def accelerated_rate(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
        beta = 0.0 if arm is Arm.NEGATIVE else lambda_next**2 / 4   # the one line the control changes
        ...                                                         # same data, measurement and verdict code

A system also names its **credited mechanisms** (``MECHANISMS`` beside ``CLAIMS``), each with a liveness
probe (:func:`mechanism`): the fraction of channels the gates remove, the share of predictions that change
when the curvatures are swapped. A claim lists the mechanisms it relies on; when one is inert at the run's
scale the claim cannot show the paper's effect and reports ``no-power``. And it lists **measure checks**
(``MEASURES``, :class:`MeasureCheck`): the truth must score best and a known-null input at the null.

Two ways a verdict is aggregated over seeds:

- a claim without ``judge=`` holds only if it holds on every seed (any failing seed fails it);
- a claim with ``judge=`` (one or more :class:`Interval`) is judged by the 95 % t-interval of the mean of
  each judged per-seed value: for a comparison the value is a *paired* statistic (ours minus the baseline on
  the same seed's data), and the claim holds when every interval lies on the claimed side of its threshold.
  Such claims run 5 seeds by default outside ``smoke``. Thresholds live in the decorator, fixed before the
  run; changing one means a new claim version.

What a report shows (:attr:`ClaimSummary.status`): ``holds`` only when the claim held and its negative control
failed; ``fails`` only when the claim failed while its positive control held and every mechanism it relies on
was live and, for a judged claim, some interval lies wholly on the failing side of its threshold (refuted at
this scale); ``no-power`` when the positive control did not hold, a mechanism was inert or the claim's own
intervals still reach past their thresholds; ``not-measured`` when this machine cannot run it.

``paper=`` of a :class:`ClaimResult` holds only numbers the paper prints; numbers from anywhere else (a
prototype, a peer's paper) go into ``elsewhere=`` with their source in brackets: ``{"slope [prototype]": 0.5}``.

A system's ``claims.py`` ends with ``CLAIMS = [...]``, ``MECHANISMS = [...]`` and ``MEASURES = [...]``.
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
#: What reports count a claim as: held (control failed), refuted at this scale, unable to see the effect, not run.
OUTCOMES: tuple[str, ...] = ("holds", "fails", "no-power", "not-measured")

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


class _Choice(StrEnum):
    """A string enum whose ``parse`` names the allowed values in its error."""

    @classmethod
    def parse(cls, value: str | StrEnum):
        try:
            return cls(value)
        except ValueError:
            allowed = ", ".join(member.value for member in cls)
            raise ValueError(f"{cls.__name__.lower()} must be one of {allowed}; got {value!r}") from None


class Scale(_Choice):
    """How big a claim run is.

    ``smoke``: seconds, runs in the default test suite. ``small``: minutes on a 2-core laptop, what
    ``icml26 reproduce`` runs by default. ``paper``: the paper's own setting; may need a GPU and hours.
    """

    SMOKE = "smoke"
    SMALL = "small"
    PAPER = "paper"

    @property
    def default_seeds(self) -> int:
        """Seeds run when the user does not say: one for smoke, three otherwise (mean ± spread)."""
        return 1 if self is Scale.SMOKE else 3


class Arm(_Choice):
    """Which arm of a claim runs: the paper's method, its negative control or its positive control."""

    CLAIM = "claim"
    NEGATIVE = "negative"
    POSITIVE = "positive"


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
    discrete : bool
        The statistic takes few values (a count, a fraction of a handful of items), so an A/A control may tie
        it exactly; otherwise a negative control whose value is exactly 0 or 1 on every seed is taken for an
        arm identical to the baseline (see :func:`icml26.testing.check_claim_runs`).
    """

    key: str
    above: float | None = None
    below: float | None = None
    discrete: bool = False

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
            "above": self.above,
            "below": self.below,
            "holds": n > 0 and finite and self.accepts(low, high),
        }


@dataclass(frozen=True)
class Claim:
    """A paper statement made executable. Build with :func:`claim`; call as ``claim(scale, seed, arm)``."""

    id: str
    statement: str
    paper: str
    func: Callable[..., ClaimResult]
    control: str = ""  # the negative control: what Arm.NEGATIVE removes
    judge: tuple[Interval, ...] = ()
    by_construction: str = ""
    gpu: bool = False  # needs a CUDA device at paper scale (a distributed runner reserves one)
    positive: str = ""  # the positive control: what Arm.POSITIVE plants
    mechanisms: tuple[str, ...] = ()  # names of the system's MECHANISMS the claim relies on
    legacy: bool = False  # func takes control=bool (contract v2), not arm=: it has no positive arm

    @property
    def system(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]

    @property
    def arms(self) -> tuple[Arm, ...]:
        """The arms this claim can run: all three, or claim and negative for a contract-v2 claim."""
        return (Arm.CLAIM, Arm.NEGATIVE) if self.legacy or not self.positive else tuple(Arm)

    def default_seeds(self, scale: Scale | str) -> int:
        """One seed at smoke; outside it three, or :data:`JUDGED_SEEDS` for a claim judged by intervals."""
        scale = Scale.parse(scale)
        if scale is Scale.SMOKE:
            return 1
        return max(scale.default_seeds, JUDGED_SEEDS) if self.judge else scale.default_seeds

    def __call__(
        self, scale: Scale | str, seed: int, arm: Arm | str = Arm.CLAIM, *, control: bool | None = None
    ) -> ClaimResult:
        """Run one arm on one seed (``control=True`` is kept as a spelling of ``arm="negative"``)."""
        arm = Arm.NEGATIVE if control else Arm.parse(arm)
        if arm not in self.arms:
            raise ValueError(f"claim {self.id} has no {arm.value} arm (declare positive= and take arm=)")
        if self.legacy:
            result = self.func(Scale.parse(scale), seed, control=arm is Arm.NEGATIVE)
        else:
            result = self.func(Scale.parse(scale), seed, arm=arm)
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
    positive: str = "",
    mechanisms: Sequence[str] = (),
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
        The negative control: what ``arm=Arm.NEGATIVE`` removes, under which the claim must fail. For a
        comparison an A/A run with its own randomness, never the baseline arm reused.
    positive : str
        The positive control: what ``arm=Arm.POSITIVE`` plants — the claimed effect at the claimed size —
        under which the claim must hold. Required by the contract checker; the decorated function then takes
        ``arm``. (A function taking ``control=False`` is a contract-v2 claim without a positive arm.)
    mechanisms : sequence of str
        Names of the system's :data:`MECHANISMS` the claimed effect rests on; an inert one makes the claim
        ``no-power`` at that scale.
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
    if isinstance(mechanisms, str):
        raise TypeError(f"claim {id}: mechanisms= takes a sequence of names, e.g. ('gates',)")

    def decorate(func: Callable[..., ClaimResult]) -> Claim:
        params = inspect.signature(func).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        legacy = "arm" not in params and not takes_any
        if legacy and "control" not in params:
            raise TypeError(f"claim {id}: {func.__name__} must accept arm=Arm.CLAIM (its three arms)")
        if legacy and positive.strip():
            raise TypeError(f"claim {id}: a claim with a positive control takes arm=Arm.CLAIM, not control=False")
        return Claim(
            id=id,
            statement=statement.strip(),
            paper=paper,
            func=func,
            control=control.strip(),
            judge=judged,
            by_construction=by_construction.strip(),
            gpu=bool(gpu),
            positive=positive.strip(),
            mechanisms=tuple(mechanisms),
            legacy=legacy,
        )

    return decorate


@dataclass(frozen=True)
class Mechanism:
    """A component the paper credits, with a probe that measures whether it acts at a given scale.

    Build with :func:`mechanism`. ``probe(scale, seed)`` returns the measured effect of the component (a float
    or a dict whose ``key`` entry is it, plus details); the mechanism is **live** when the value is on the
    live side of ``above``/``below`` — a gate that removes channels, a loss term whose gradient share is not
    negligible, a curvature whose swap changes predictions.
    """

    name: str
    component: str
    measures: str
    probe: Callable[..., Any]
    above: float | None = None
    below: float | None = None

    def is_live(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        return (self.above is None or value > self.above) and (self.below is None or value < self.below)

    def rule(self) -> str:
        parts = ([f"> {self.above:g}"] if self.above is not None else []) + (
            [f"< {self.below:g}"] if self.below is not None else []
        )
        return "live when " + " and ".join(parts)

    def __call__(self, scale: Scale | str, seed: int) -> dict[str, float]:
        """The probe's values on one seed; ``self.name`` is the judged one."""
        out = self.probe(Scale.parse(scale), seed)
        values = dict(out) if isinstance(out, dict) else {self.name: out}
        if self.name not in values:
            raise KeyError(f"mechanism {self.name}: its probe must return a float or a dict with key {self.name!r}")
        return {k: _as_float(k, v) for k, v in values.items()}


def mechanism(
    name: str, *, component: str, measures: str, above: float | None = None, below: float | None = None
) -> Callable[[Callable[..., Any]], Mechanism]:
    """Declare a credited mechanism and its liveness probe ``probe(scale, seed) -> float | dict``.

    Parameters
    ----------
    name : str
        Short name, as claims list it in ``mechanisms=`` (lower case, hyphens).
    component : str
        What the paper credits (``"learnable channel gates with the energy loss"``).
    measures : str
        What the probe measures (``"fraction of channels whose keep-probability falls below 0.5"``).
    above, below : float, optional
        The component is live when the probe's value is above / below these (at least one).
    """
    if not re.match(r"^[a-z0-9][a-z0-9-]*$", name):
        raise ValueError(f"mechanism name {name!r} must be lower case letters, digits and hyphens")
    if above is None and below is None:
        raise ValueError(f"mechanism {name}: say when it is live: above=, below= or both")
    if not measures.strip() or not component.strip():
        raise ValueError(f"mechanism {name} needs component= and measures=")

    def decorate(func: Callable[..., Any]) -> Mechanism:
        return Mechanism(name, component.strip(), measures.strip(), func, above, below)

    return decorate


@dataclass
class ProbeSummary:
    """A mechanism's probe over seeds: the judged value's mean and spread, and whether it is live."""

    name: str
    component: str
    measures: str
    rule: str
    scale: str
    seeds: list[int]
    values: list[float]
    mean: float
    std: float
    live: bool
    details: dict[str, float] = field(default_factory=dict)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeSummary:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def run_probe(mech: Mechanism, scale: Scale | str, seeds: Iterable[int]) -> ProbeSummary:
    """Run a mechanism's probe on every seed; live when the mean is on the live side (a crash is not live)."""
    scale = Scale.parse(scale)
    seeds = [int(s) for s in seeds]
    values, details, error = [], [], ""
    for seed in seeds:
        try:
            out = mech(scale, seed)
        except Exception:  # reported, never raised: a crashed probe says the mechanism could not be shown live
            error = traceback.format_exc()
            logger.error("probe %s crashed on seed %d:\n%s", mech.name, seed, error)
            break
        values.append(out[mech.name])
        details.append(out)
    mean, std = _mean_std(values) if values else (math.nan, math.nan)
    detail_mean, _ = _aggregate(details)
    detail_mean.pop(mech.name, None)
    return ProbeSummary(
        name=mech.name,
        component=mech.component,
        measures=mech.measures,
        rule=mech.rule(),
        scale=scale.value,
        seeds=seeds[: len(values)],
        values=values,
        mean=mean,
        std=std,
        live=not error and bool(values) and mech.is_live(mean),
        details=detail_mean,
        error=error,
    )


@dataclass(frozen=True)
class MeasureCheck:
    """A measure validated both ways: the truth scores best, and a known-null input scores at the null.

    ``run(seed)`` scores several inputs with the measure and returns ``{label: score}``; it must include
    ``"truth"`` (the ground truth, or the exact solution) and ``"null"`` (an input with no effect: a
    non-selective code, a flat geometry, a random policy). The check passes when ``truth`` is the best score
    (highest, or lowest with ``higher_is_better=False``) by at least ``margin`` and ``null`` lies in
    ``null_band``.
    """

    name: str
    run: Callable[[int], dict[str, float]]
    null_band: tuple[float, float]
    higher_is_better: bool = True
    margin: float = 0.0

    def check(self, seed: int = 0) -> list[str]:
        """Problems found on one seed (empty when the measure sees both the effect and its absence)."""
        scores = {k: float(v) for k, v in self.run(seed).items()}
        problems = []
        for required in ("truth", "null"):
            if required not in scores:
                return [f"measure {self.name}: its check must score a {required!r} input"]
        if not all(math.isfinite(v) for v in scores.values()):
            problems.append(f"measure {self.name}: non-finite scores {scores}")
        sign = 1.0 if self.higher_is_better else -1.0
        truth = sign * scores["truth"]
        beaten = [k for k, v in scores.items() if k != "truth" and sign * v >= truth - self.margin]
        if beaten:
            problems.append(
                f"measure {self.name}: the truth ({scores['truth']:.4g}) does not score best by {self.margin:g}; "
                + ", ".join(f"{k} = {scores[k]:.4g}" for k in beaten)
            )
        low, high = self.null_band
        if not low <= scores["null"] <= high:
            problems.append(
                f"measure {self.name}: the null input scores {scores['null']:.4g}, outside the null band "
                f"[{low:g}, {high:g}]: the measure cannot tell an absent effect"
            )
        return problems


@dataclass
class ClaimSummary:
    """One claim run over several seeds, aggregated. This is what reports and the CLI show.

    ``per_seed`` keeps every seed's verdict and numbers; ``judged`` the interval statistics of a judged
    claim; ``control`` and ``positive`` the summaries of the same claim run as its negative and positive
    control (when they were run); ``probes`` the liveness of the mechanisms the claim relies on.
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
    is_control: bool = False  # this summary is of the negative arm
    control: ClaimSummary | None = None  # the negative control's summary
    arm: str = Arm.CLAIM.value
    positive_description: str = ""
    positive: ClaimSummary | None = None  # the positive control's summary
    mechanisms: list[str] = field(default_factory=list)  # names the claim relies on
    probes: list[dict[str, Any]] = field(default_factory=list)  # their ProbeSummary, as dicts

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
    def positive_ok(self) -> bool:
        """The positive control held: the run could see the claimed effect."""
        return self.positive is not None and self.positive.verdict == "holds"

    @property
    def inert(self) -> list[dict[str, Any]]:
        """The probes of relied-on mechanisms that were not live at this scale."""
        return [p for p in self.probes if not p.get("live")]

    @property
    def status(self) -> str:
        """The verdict as reports show it, with both controls and the mechanisms.

        - ``holds``: held and the negative control failed (``holds by construction`` when a review said so;
          ``holds; control holds too`` / ``…; control not run`` / ``…; control error`` when the negative control
          proved nothing; ``holds; mechanism inert`` when the effect appeared without the credited component).
        - ``fails``: failed while the positive control held and every relied-on mechanism was live — refuted
          at this scale (for a judged claim: some judged interval lies wholly on the failing side of its
          threshold). ``no-power``: failed, but the positive control did not hold, a mechanism was inert, or
          the claim's own intervals still reach past their thresholds (:attr:`unresolved`), so the run could
          not have seen the effect or could not decide. ``fails; positive control not run`` when it was not run,
          ``fails; no positive control`` for a claim that declares none (contract v2).
        - ``not-measured`` and ``error`` as they are.
        """
        if self.verdict == "fails":
            if self.inert or self.unresolved:
                return "no-power"
            if self.positive is not None:
                return "fails" if self.positive_ok else "no-power"
            return "fails; positive control not run" if self.positive_description else "fails; no positive control"
        if self.verdict != "holds":
            return self.verdict
        if self.by_construction:
            return "holds by construction"
        if self.control is None:
            return "holds; control not run"
        if not self.control_ok:
            if self.control.verdict == "holds":
                return "holds; control holds too"
            return f"holds; control {self.control.verdict}"
        return "holds; mechanism inert" if self.inert else "holds"

    @property
    def outcome(self) -> str:
        """The status counted in one of :data:`OUTCOMES`, or ``other`` (holds unchecked, errors, unchecked fails)."""
        return self.status if self.status in OUTCOMES else "other"

    @property
    def unresolved(self) -> list[dict[str, Any]]:
        """For a judged claim that failed: its failing statistics when none of them is refuted — each interval
        still reaches past its threshold, so more seeds could yet make the claim hold (empty otherwise). A
        ``fails`` needs some judged interval wholly on the failing side: at or below ``above``, at or above
        ``below``."""
        if self.verdict != "fails" or not self.judged:
            return []
        failing = [s for s in self.judged if not s["holds"]]
        return [] if any(_refutes(s) for s in failing) else failing

    def seeds_needed(self) -> str:
        """For a ``no-power`` judged claim: the seeds at which the positive control's interval would clear its
        threshold(s) (same spread, t-interval), or that more seeds cannot help (its mean is not past one)."""
        if self.positive is None:
            return ""
        needs = []
        for stat in self.positive.judged:
            if stat["holds"] or stat["n"] < 2 or not math.isfinite(stat["mean"]):
                continue
            above, below = stat.get("above"), stat.get("below")
            if (above is not None and stat["mean"] <= above) or (below is not None and stat["mean"] >= below):
                needs.append(f"{stat['key']}: the planted mean is not past its threshold; more seeds cannot help")
                continue
            needs.append(f"{stat['key']}: {seeds_to_resolve(stat)}")
        return "; ".join(needs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimSummary:
        data = dict(data)
        for key in ("control", "positive"):
            if isinstance(data.get(key), dict):
                data[key] = cls.from_dict(data[key])
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


def _refutes(stat: dict[str, Any]) -> bool:
    """A judged statistic's interval lies wholly on the failing side of a threshold (NaN refutes nothing)."""
    above, below = stat.get("above"), stat.get("below")
    return (above is not None and stat["high"] <= above) or (below is not None and stat["low"] >= below)


def seeds_to_resolve(stat: dict[str, Any]) -> str:
    """The seeds at which a statistic's 95 % t-interval, at its present mean and spread, would clear the
    nearest threshold on whichever side its mean lies."""
    n, mean = stat["n"], stat["mean"]
    if n < 2 or not math.isfinite(mean):
        return "unknown"
    gap = min(abs(mean - t) for t in (stat.get("above"), stat.get("below")) if t is not None)
    sd = (stat["high"] - stat["low"]) / 2 * math.sqrt(n) / t_quantile_975(n - 1)
    while n < 1000 and t_quantile_975(n - 1) * sd / math.sqrt(n) >= gap:
        n += 1
    return f"about {n} seeds" if n < 1000 else "over 1000 seeds"


def judged_verdict(judge: Sequence[Interval], results: Sequence[ClaimResult]) -> tuple[str, list[dict[str, Any]]]:
    """The verdict of a judged claim from its per-seed values: every interval on its claimed side."""
    measured = [r for r in results if r.verdict != "not-measured"]
    if len(measured) < len(results):  # an interval over the seeds that happened to run would be cherry-picked
        return "not-measured", []
    stats = [j.judge([r.measured[j.key] for r in measured]) for j in judge]
    return ("holds" if all(s["holds"] for s in stats) else "fails"), stats


@dataclass
class SeedRun:
    """One arm of a claim on one seed, as it ran: the result (or the crash), its wall time and its figures.

    The unit a parallel runner ships between processes: :meth:`to_dict` is JSON (figures as base64 PNG),
    so a run can be streamed to a journal and resumed from it.
    """

    claim_id: str
    scale: str
    seed: int
    arm: str = Arm.CLAIM.value
    result: ClaimResult | None = None  # None when the claim crashed
    error: str = ""  # the traceback of a crash
    wall_time_s: float = 0.0
    figures_png: dict[str, bytes] = field(default_factory=dict)  # name -> PNG, rendered only when asked

    def __post_init__(self) -> None:
        self.arm = Arm.parse(self.arm).value

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
            "arm": self.arm,
            "result": None if self.result is None else asdict(self.result),
            "error": self.error,
            "wall_time_s": self.wall_time_s,
            "figures_png": {k: base64.b64encode(v).decode("ascii") for k, v in self.figures_png.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeedRun:
        import base64

        result = data.get("result")
        arm = data.get("arm") or (Arm.NEGATIVE if data.get("control") else Arm.CLAIM)  # journals of contract v2
        return cls(
            claim_id=data["claim_id"],
            scale=data["scale"],
            seed=int(data["seed"]),
            arm=arm,
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


def _arm(arm: Arm | str, control: bool | None) -> Arm:
    return Arm.NEGATIVE if control else Arm.parse(arm)


def run_seed(
    claim_obj: Claim,
    scale: Scale | str,
    seed: int,
    *,
    arm: Arm | str = Arm.CLAIM,
    control: bool | None = None,
    render_figures: bool = False,
) -> SeedRun:
    """Run one arm of a claim on one seed; a crash is caught and kept as the run's ``error``, never raised.

    ``render_figures`` keeps the claim arm's figures as PNG bytes (the runner asks for the first seed's only);
    ``control=True`` is a spelling of ``arm="negative"``.
    """
    scale, arm = Scale.parse(scale), _arm(arm, control)
    run = SeedRun(claim_obj.id, scale.value, int(seed), arm.value)
    start = time.perf_counter()
    try:
        result = claim_obj(scale, seed, arm)
    except Exception:  # a crashing claim is reported, never lost
        run.wall_time_s = time.perf_counter() - start
        run.error = traceback.format_exc()
        logger.error("claim %s (%s arm) crashed on seed %d:\n%s", claim_obj.id, arm.value, seed, run.error)
        return run
    run.wall_time_s = result.wall_time_s = time.perf_counter() - start
    result.seed = int(seed)
    result.versions = library_versions()
    run.figures_png = _render_figures(result.figures, render_figures and arm is Arm.CLAIM)
    result.figures = {}
    run.result = result
    logger.info("%s (%s) seed %d: %s (%.1f s)", claim_obj.id, arm.value, seed, result.verdict, result.wall_time_s)
    return run


def summarize_claim(
    claim_obj: Claim, scale: Scale | str, runs: Sequence[SeedRun], figures: Sequence[str] = ()
) -> ClaimSummary:
    """Aggregate the runs of one arm of one claim (in seed order) into its summary; the runs after a crash are
    dropped. ``figures`` names the PNG files already saved for this claim. Every run must be of ``claim_obj``,
    at ``scale``, and of one arm."""
    scale = Scale.parse(scale)
    if not runs:
        raise ValueError("no seed was run")
    arm = runs[0].arm
    if any(r.claim_id != claim_obj.id or r.scale != scale.value or r.arm != arm for r in runs):
        raise ValueError(f"runs of another claim, scale or arm were given to summarize {claim_obj.id}")
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
        is_control=arm == Arm.NEGATIVE.value,
        arm=arm,
        positive_description=claim_obj.positive,
        mechanisms=list(claim_obj.mechanisms),
    )


def attach_probes(summary: ClaimSummary, probes: dict[str, ProbeSummary]) -> ClaimSummary:
    """Attach the probes of the mechanisms a claim relies on (a name without a probe run is left out)."""
    summary.probes = [probes[m].to_dict() for m in summary.mechanisms if m in probes]
    return summary


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
    on_seed: Callable[[Claim, int, int, int, str], None] | None = None,
    *,
    arm: Arm | str = Arm.CLAIM,
    control: bool = False,
    with_control: bool = False,
    probes: dict[str, ProbeSummary] | None = None,
) -> ClaimSummary:
    """Run one arm of a claim on several seeds, one after another, and aggregate (stops at the first crash).

    Parameters
    ----------
    claim_obj : Claim
    scale : Scale or str
    seeds : int or iterable of int, optional
        A count (seeds ``0 .. n-1``) or explicit seeds; default :meth:`Claim.default_seeds`.
    figure_dir : Path, optional
        Where the first seed's figures are saved as PNG; figures are discarded when omitted.
    on_seed : callable, optional
        ``on_seed(claim, seed, i, n, arm)`` is called before the ``i``-th of ``n`` seeds starts (progress).
    arm : Arm or str
        Which arm to run (``control=True`` is a spelling of ``arm="negative"``).
    with_control : bool
        Run the claim, then its negative and (when declared) positive controls on the same seeds, and attach
        their summaries as ``.control`` and ``.positive``.
    probes : dict of str to ProbeSummary, optional
        Probe results of the system's mechanisms; those the claim relies on are attached to its summary.
    """
    scale, arm = Scale.parse(scale), _arm(arm, control)
    chosen = seed_list(claim_obj, scale, seeds)
    runs: list[SeedRun] = []
    figures: list[str] = []
    for i, seed in enumerate(chosen):
        if on_seed is not None:
            on_seed(claim_obj, seed, i, len(chosen), arm.value)
        render = i == 0 and figure_dir is not None and arm is Arm.CLAIM
        run = run_seed(claim_obj, scale, seed, arm=arm, render_figures=render)
        if figure_dir is not None:
            figures = figures or run.save_figures(figure_dir)
        runs.append(run)
        if run.result is None:
            break
    summary = summarize_claim(claim_obj, scale, runs, figures)
    if with_control and arm is Arm.CLAIM:
        summary.control = run_claim(claim_obj, scale, chosen, None, on_seed, arm=Arm.NEGATIVE)
        if Arm.POSITIVE in claim_obj.arms:
            summary.positive = run_claim(claim_obj, scale, chosen, None, on_seed, arm=Arm.POSITIVE)
    if probes is not None:
        attach_probes(summary, probes)
    return summary


def run_mechanisms(
    mechanisms: Sequence[Mechanism],
    scale: Scale | str,
    seeds: int | Iterable[int] | None = None,
    on_probe: Callable[[Mechanism], None] | None = None,
) -> dict[str, ProbeSummary]:
    """Run every mechanism's probe (3 seeds outside smoke, 1 at smoke, unless told); the results by name."""
    scale = Scale.parse(scale)
    if seeds is None:
        seeds = scale.default_seeds
    chosen = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    out = {}
    for mech in mechanisms:
        if on_probe is not None:
            on_probe(mech)
        out[mech.name] = run_probe(mech, scale, chosen)
    return out


def run_claims(
    claims: Sequence[Claim],
    scale: Scale | str = Scale.SMOKE,
    seeds: int | Iterable[int] | None = None,
    figure_dir: Path | None = None,
    on_result: Callable[[ClaimSummary], None] | None = None,
    on_seed: Callable[[Claim, int, int, int, str], None] | None = None,
    *,
    with_control: bool = False,
    probes: dict[str, ProbeSummary] | None = None,
) -> list[ClaimSummary]:
    """Run every claim (see :func:`run_claim`); ``on_result`` is called after each, e.g. to print progress."""
    seeds = list(seeds) if seeds is not None and not isinstance(seeds, int) else seeds
    summaries = []
    for claim_obj in claims:
        summary = run_claim(claim_obj, scale, seeds, figure_dir, on_seed, with_control=with_control, probes=probes)
        summaries.append(summary)
        if on_result is not None:
            on_result(summary)
    return summaries
