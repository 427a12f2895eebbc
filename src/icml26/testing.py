"""Public contract checkers: what every system, estimator and environment of icml26 must satisfy.

Each checker returns a list of problems (empty when the contract holds), so a test can show all of them
at once: ``assert not check_system(spec)``. Users extending icml26 can run them on their own code.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import math
from collections.abc import Sequence
from typing import Any

from icml26.claims import Arm, Claim, MeasureCheck, Mechanism, Scale, run_claim, run_probe
from icml26.registry import SystemSpec, load_entry
from icml26.report import MECHANISMS_BEGIN, README_BEGIN, readme_verdicts

#: Headings every system README must have (DESIGN.md: usage, claims, benchmark, deviations).
README_SECTIONS = ("## Usage", "## Claims", "## Benchmark", "## Deviations from the paper")


def check_claims_module(claims: Any, system_id: str, module: Any = None) -> list[str]:
    """``CLAIMS`` is a non-empty list of uniquely named :class:`Claim` of ``system_id``, none forgotten."""
    problems = []
    if not isinstance(claims, (list, tuple)) or not claims:
        return [f"{system_id}: CLAIMS must be a non-empty list of claims"]
    ids = []
    for c in claims:
        if not isinstance(c, Claim):
            problems.append(f"{system_id}: CLAIMS holds {c!r}, not a Claim (use the @claim decorator)")
            continue
        ids.append(c.id)
        if c.system != system_id:
            problems.append(f"{c.id}: claim id must start with '{system_id}/'")
        if not c.paper:
            problems.append(f"{c.id}: say where in the paper the claim comes from (paper=...)")
        if not c.control:
            problems.append(f"{c.id}: every claim needs a negative control (control=...)")
    if len(set(ids)) != len(ids):
        problems.append(f"{system_id}: duplicate claim ids in CLAIMS")
    if module is not None:
        for name, value in vars(module).items():
            if isinstance(value, Claim) and value not in claims:
                problems.append(f"{system_id}: claim {name} ({value.id}) is defined but not listed in CLAIMS")
    return problems


def check_readme(spec: SystemSpec, *, v3: bool = True) -> list[str]:
    """The system README exists, has the standard sections and a generated claims table (contract v3: with
    the positive controls and the mechanisms' probes)."""
    if not spec.readme.is_file():
        return [f"{spec.id}: missing {spec.readme}"]
    text = spec.readme.read_text()
    problems = [f"{spec.id}: README lacks the section {s!r}" for s in README_SECTIONS if s not in text]
    if README_BEGIN in text and "| negative control |" not in text:
        problems.append(f"{spec.id}: README claims table shows no negative controls (icml26 reproduce --update-readme)")
    if v3 and README_BEGIN in text and "| positive control |" not in text:
        problems.append(f"{spec.id}: README claims table shows no positive controls (icml26 reproduce --update-readme)")
    if v3 and MECHANISMS_BEGIN not in text:
        problems.append(f"{spec.id}: README shows no mechanisms block (icml26 reproduce --update-readme)")
    if README_BEGIN not in text:
        problems.append(f"{spec.id}: README has no generated claims block (run icml26 reproduce --update-readme)")
    elif not readme_verdicts(spec.readme):
        problems.append(f"{spec.id}: README claims table is empty (run icml26 reproduce --update-readme)")
    return problems


def check_cli(spec: SystemSpec) -> list[str]:
    """``icml26 <id> --help`` prints a usage text and exits 0; the parser follows the one CLI convention.

    The convention (``icml26._util.cli``): the module exposes ``build_parser()``, built on the shared
    ``ArgumentParser`` (defaults in ``--help``, one-line errors), and every argument has a help text.
    """
    import argparse

    from icml26._util.cli import ArgumentParser

    main = load_entry(spec.cli_entry)
    module = importlib.import_module(spec.cli_entry.split(":")[0])
    build = getattr(module, "build_parser", None)
    problems, parsers = [], {}
    if build is None:
        problems.append(f"{spec.id}: its cli module has no build_parser() (the harness and --help checks need it)")
    elif not isinstance(parser := build(), ArgumentParser):
        problems.append(f"{spec.id}: build_parser() must use icml26._util.cli.ArgumentParser (one-line errors)")
    else:
        sub = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parsers = dict(sub[0].choices) if sub else {"": parser}
    for verb, verb_parser in parsers.items():
        for action in verb_parser._actions:
            if action.dest != "help" and not action.help:
                name = action.option_strings[-1] if action.option_strings else action.dest
                problems.append(f"{spec.id}: 'icml26 {spec.id} {verb}' argument {name} has no help text")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main(["--help"])
        except SystemExit as exc:
            code = exc.code
    if code not in (0, None):
        return [*problems, f"{spec.id}: 'icml26 {spec.id} --help' exited {code}"]
    if "usage" not in out.getvalue().lower():
        return [*problems, f"{spec.id}: 'icml26 {spec.id} --help' printed no usage"]
    return problems


#: Values a paired statistic takes when the two arms are one and the same: a difference of 0, a ratio of 1.
_NULLS = (0.0, 1.0)


def check_claim_runs(c: Claim, seed: int = 0, *, v3: bool = True) -> list[str]:
    """Run a claim and its controls at smoke scale: none may crash; the negative control must fail
    (a control that holds means the claim cannot fail); with ``v3`` (contract v3) the claim must declare a
    positive control, which must measure the same quantities, and neither control may be bit-for-bit the claim
    or, for a judged claim, the negative control's statistic may not sit exactly at the null of identical arms.

    A claim that is ``not-measured`` here (it needs a GPU, say) passes when its controls are too. Nothing is
    timed here (a loaded machine would make it flaky): the suite's 15-minute budget is watched in CI instead. A positive
    control need not hold at smoke: the claim then reports ``no-power``, which the report shows with its reason.
    A judged claim's negative control that holds on ``seed`` is judged on the next two smoke seeds as well (an A/A
    statistic clears its bar by chance now and then) and must fail on most of the three.
    """
    problems = []
    if v3 and (c.legacy or not c.positive):
        problems.append(
            f"{c.id}: no positive control: declare positive='the claimed effect planted at the claimed size' and "
            "take arm=Arm.CLAIM; without it a 'fails' cannot tell a refuted claim from a run that could not see it"
        )
    summary = run_claim(c, Scale.SMOKE, seeds=[seed], with_control=True)
    arms = [(summary, "smoke run"), (summary.control, "negative control")]
    if summary.positive is not None:
        arms.append((summary.positive, "positive control"))
    for run, label in arms:
        if run.verdict == "error":
            problems.append(f"{c.id}: {label} crashed at smoke scale:\n{run.error}")
    measured = ("holds", "fails")
    for run, label in arms[1:]:
        if summary.verdict not in measured or run.verdict not in measured:
            continue
        if set(run.measured_mean) != set(summary.measured_mean):
            problems.append(
                f"{c.id}: its {label} measures {sorted(run.measured_mean)}, the claim {sorted(summary.measured_mean)}: "
                "a control runs the same measurement with the effect removed or planted"
            )
        bad = [j["key"] for j in run.judged if not all(math.isfinite(j[k]) for k in ("mean", "low", "high"))]
        if bad:
            problems.append(f"{c.id}: its {label} gave no finite value for {bad} (a crash is not a failure)")
        if v3 and run.measured_mean and run.measured_mean == summary.measured_mean:
            problems.append(
                f"{c.id}: its {label} measured exactly what the claim measured: the arm changes nothing it measures"
            )
    if v3 and summary.control.verdict in measured:
        for j in c.judge:
            values = [ps["measured"].get(j.key) for ps in summary.control.per_seed]
            if not j.discrete and values and all(v in _NULLS for v in values):
                problems.append(
                    f"{c.id}: its negative control's {j.key!r} is exactly {values[0]:g} on every seed — the null of "
                    "two identical arms. Give the sabotaged arm its own randomness (an A/A run), or mark a "
                    "genuinely discrete statistic Interval(..., discrete=True)"
                )
    control_ok, seen = summary.control_ok, f"says {summary.control.verdict!r}"
    if not control_ok and c.judge and summary.control.verdict == "holds":
        # An A/A statistic scatters around its null, so one smoke seed clears the bar now and then by chance:
        # judge the control on the next two seeds too, and accept it when it fails on most of the three.
        extra = [run_claim(c, Scale.SMOKE, seeds=[seed + k], arm=Arm.NEGATIVE).verdict for k in (1, 2)]
        control_ok = extra.count("fails") == 2
        verdicts = " and ".join(map(repr, extra))
        seen = f"holds on smoke seed {seed}, then says {verdicts} on seeds {seed + 1} and {seed + 2}"
    if summary.control.verdict != "error" and not control_ok:
        problems.append(
            f"{c.id}: its negative control ({c.control}) {seen} where it must say 'fails': the claim cannot "
            "fail as written"
        )
    return problems


def check_mechanisms(claims: Sequence[Claim], mechanisms: Any, system_id: str, *, run: bool = True) -> list[str]:
    """``MECHANISMS`` is a non-empty list of :class:`Mechanism` with unique names; every name a claim relies
    on is declared; every probe runs at smoke and gives a finite value (live or not: an inert mechanism makes
    its claims ``no-power``, it does not break the contract)."""
    if not isinstance(mechanisms, (list, tuple)) or not mechanisms:
        return [f"{system_id}: list the paper's credited mechanisms with liveness probes: MECHANISMS = [...]"]
    problems = []
    names = []
    for m in mechanisms:
        if not isinstance(m, Mechanism):
            problems.append(f"{system_id}: MECHANISMS holds {m!r}, not a Mechanism (use the @mechanism decorator)")
            continue
        names.append(m.name)
    if len(set(names)) != len(names):
        problems.append(f"{system_id}: duplicate mechanism names in MECHANISMS")
    for c in claims:
        missing = [m for m in c.mechanisms if m not in names]
        problems += [f"{c.id}: relies on mechanism {m!r}, which MECHANISMS lacks" for m in missing]
    if not any(c.mechanisms for c in claims):
        problems.append(f"{system_id}: no claim names the mechanisms it relies on (mechanisms=...)")
    if run and not problems:
        for m in mechanisms:
            probe = run_probe(m, Scale.SMOKE, [0])
            if probe.error:
                problems.append(f"{system_id}: the probe of mechanism {m.name} crashed at smoke scale:\n{probe.error}")
            elif not math.isfinite(probe.mean):
                problems.append(f"{system_id}: the probe of mechanism {m.name} gave {probe.mean} (not finite)")
    return problems


def check_measures(measures: Any, system_id: str) -> list[str]:
    """``MEASURES`` is a non-empty list of :class:`MeasureCheck`, each passing on seed 0: the truth scores best
    and a known-null input scores at the null."""
    if not isinstance(measures, (list, tuple)) or not measures:
        return [f"{system_id}: validate the claims' measures both ways: MEASURES = [MeasureCheck(...), ...]"]
    problems = []
    for m in measures:
        if not isinstance(m, MeasureCheck):
            problems.append(f"{system_id}: MEASURES holds {m!r}, not a MeasureCheck")
            continue
        try:
            problems += [f"{system_id}: {p}" for p in m.check(0)]
        except Exception as exc:  # a crashing check is a failing check
            problems.append(f"{system_id}: measure check {m.name} crashed: {type(exc).__name__}: {exc}")
    return problems


def check_system(spec: SystemSpec, *, run_smoke_claims: bool = True, v3: bool = True) -> list[str]:
    """Every contract of an implemented system: docstring, README, claims with both controls (run at smoke
    scale; every negative control must fail), the credited mechanisms' probes, the measure checks, the CLI.

    ``v3=False`` checks a system still on contract v2 (no positive controls, mechanisms or measure checks yet).
    """
    if not spec.implemented:
        return []
    module = importlib.import_module(spec.module)
    problems = []
    doc = (module.__doc__ or "").lower()
    if spec.title.lower() not in " ".join(doc.split()):
        problems.append(f"{spec.id}: module docstring must name the paper ({spec.title!r})")
    if not getattr(module, "__all__", None):
        problems.append(f"{spec.id}: the package must list its public names in __all__")
    problems += check_readme(spec, v3=v3)
    claims_module = importlib.import_module(spec.claims_entry.partition(":")[0])
    claims = load_entry(spec.claims_entry)
    found = check_claims_module(claims, spec.id, claims_module)
    if v3 and not found:  # checked whatever the README says: a stale table must not hide what the code does
        found += check_mechanisms(claims, load_entry(spec.mechanisms_entry, None), spec.id, run=run_smoke_claims)
        found += check_measures(load_entry(spec.measures_entry, None), spec.id)
    if run_smoke_claims and not found:
        for c in claims:
            found += check_claim_runs(c, v3=v3)
    problems += found
    problems += check_cli(spec)
    return problems


def check_estimator_like(estimator: Any, X: Any, y: Any = None, *, fitted: Sequence[str] = ()) -> list[str]:
    """scikit-learn conventions: ``fit`` returns self and sets attributes ending in ``_`` (``fitted`` ones
    at least); the constructor's keyword hyper-parameters are stored unchanged under their own names."""
    import inspect

    problems = []
    name = type(estimator).__name__
    for param in inspect.signature(type(estimator).__init__).parameters.values():
        if param.name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if not hasattr(estimator, param.name):
            problems.append(f"{name}: hyper-parameter {param.name!r} is not stored as an attribute")
    before = {k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")}
    if before:
        problems.append(f"{name}: unfitted estimator already has fitted attributes {sorted(before)}")
    returned = estimator.fit(X) if y is None else estimator.fit(X, y)
    if returned is not estimator:
        problems.append(f"{name}: fit must return self")
    after = {k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")}
    if not after:
        problems.append(f"{name}: fit set no attribute ending in '_'")
    problems += [f"{name}: fit did not set {attr!r}" for attr in fitted if attr not in after]
    return problems


def check_env(env: Any, seed: int = 0) -> list[str]:
    """Gymnasium's own checker, plus: two resets with the same seed give the same observation."""
    import numpy as np
    from gymnasium.utils.env_checker import check_env as gym_check_env

    problems = []
    try:
        gym_check_env(env, skip_render_check=True)
    except Exception as exc:  # gymnasium raises AssertionError and others; report them all
        problems.append(f"{type(env).__name__}: gymnasium check_env: {exc}")
    obs1, _ = env.reset(seed=seed)
    obs2, _ = env.reset(seed=seed)
    flat1 = obs1 if not isinstance(obs1, dict) else np.concatenate([np.ravel(v) for v in obs1.values()])
    flat2 = obs2 if not isinstance(obs2, dict) else np.concatenate([np.ravel(v) for v in obs2.values()])
    if not np.array_equal(np.asarray(flat1), np.asarray(flat2)):
        problems.append(f"{type(env).__name__}: reset(seed={seed}) is not deterministic")
    return problems
