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

from icml26.claims import Claim, Scale, run_claim
from icml26.registry import SystemSpec, load_entry
from icml26.report import README_BEGIN, readme_verdicts

#: Headings every system README must have (DESIGN.md: usage, claims, benchmark, deviations).
README_SECTIONS = ("## Usage", "## Claims", "## Benchmark", "## Deviations from the paper")
SMOKE_CLAIM_SECONDS = 60.0


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


def check_readme(spec: SystemSpec) -> list[str]:
    """The system README exists, has the standard sections and a generated claims table."""
    if not spec.readme.is_file():
        return [f"{spec.id}: missing {spec.readme}"]
    text = spec.readme.read_text()
    problems = [f"{spec.id}: README lacks the section {s!r}" for s in README_SECTIONS if s not in text]
    if README_BEGIN in text and "| negative control |" not in text:
        problems.append(f"{spec.id}: README claims table shows no negative controls (icml26 reproduce --update-readme)")
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


def check_claim_runs(c: Claim, seed: int = 0) -> list[str]:
    """Run a claim and its negative control at smoke scale: neither may crash or be slow, and the control
    must fail (a control that holds means the claim cannot fail). A claim that is ``not-measured`` here
    (it needs a GPU, say) passes when its control is ``not-measured`` too."""
    problems = []
    summary = run_claim(c, Scale.SMOKE, seeds=[seed], with_control=True)
    for run, label in ((summary, "smoke run"), (summary.control, "negative control")):
        if run.verdict == "error":
            problems.append(f"{c.id}: {label} crashed at smoke scale:\n{run.error}")
        elif run.wall_time_s > SMOKE_CLAIM_SECONDS:
            problems.append(f"{c.id}: {label} took {run.wall_time_s:.0f} s (> {SMOKE_CLAIM_SECONDS:.0f} s)")
    measured = ("holds", "fails")
    if summary.verdict in measured and summary.control.verdict in measured:
        if set(summary.control.measured_mean) != set(summary.measured_mean):
            problems.append(
                f"{c.id}: its negative control measures {sorted(summary.control.measured_mean)}, the claim "
                f"{sorted(summary.measured_mean)}: a control runs the same measurement with the sabotage applied"
            )
        bad = [
            j["key"] for j in summary.control.judged if not all(math.isfinite(j[k]) for k in ("mean", "low", "high"))
        ]
        if bad:
            problems.append(f"{c.id}: its negative control gave no finite value for {bad} (a crash is not a failure)")
    if summary.control.verdict != "error" and not summary.control_ok:
        problems.append(
            f"{c.id}: its negative control ({c.control}) says {summary.control.verdict!r} where it must say "
            f"'fails': the claim cannot fail as written"
        )
    return problems


def check_system(spec: SystemSpec, *, run_smoke_claims: bool = True) -> list[str]:
    """Every contract of an implemented system: docstring, README, claims and their negative controls (run at
    smoke scale; every control must fail), CLI."""
    if not spec.implemented:
        return []
    module = importlib.import_module(spec.module)
    problems = []
    doc = (module.__doc__ or "").lower()
    if spec.title.lower() not in " ".join(doc.split()):
        problems.append(f"{spec.id}: module docstring must name the paper ({spec.title!r})")
    if not getattr(module, "__all__", None):
        problems.append(f"{spec.id}: the package must list its public names in __all__")
    problems += check_readme(spec)
    claims_module = importlib.import_module(spec.claims_entry.partition(":")[0])
    claims = load_entry(spec.claims_entry)
    problems += check_claims_module(claims, spec.id, claims_module)
    if run_smoke_claims and not problems:
        for c in claims:
            problems += check_claim_runs(c)
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
