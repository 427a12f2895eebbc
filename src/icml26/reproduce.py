"""``icml26 reproduce`` as a library call: run systems' claims, their controls and mechanism probes; report.

One function, :func:`reproduce`, is what the command line, a Ray driver and the tests call::

    from icml26.registry import SYSTEMS
    from icml26.reproduce import reproduce
    run = reproduce([SYSTEMS["noisypower"]], scale="smoke", controls=True, out="reports")
    run.summaries["noisypower"][0].status        # 'holds', 'fails', 'no-power', 'not-measured', ...

With ``controls`` every claim runs in its three arms (the claim, its negative control, its positive control) on
the same seeds, and every mechanism the system credits is probed first; the summaries carry all of it, so a
claim that failed while its positive control also failed, or while a mechanism it relies on was inert, reads
``no-power``. Without ``controls`` only the claims run (quick, and marked so in the report).

Steps: (1) check everything that can be checked before hours of work start (systems, claim filter, the
README a partial run would update); (2) on a Ray cluster, submit every (claim, seed, arm) run at once
(:mod:`icml26.distributed`); (3) per system: probe the mechanisms, run or gather the claims, merge with an
earlier partial report, write ``<out>/<id>/``, the README block, and ``<out>/index.html``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml26 import registry as _registry
from icml26._util.cli import one_line
from icml26.claims import (
    Arm,
    Claim,
    ClaimSummary,
    Mechanism,
    ProbeSummary,
    Scale,
    attach_probes,
    run_claims,
    run_mechanisms,
    seed_list,
    summarize_claim,
)
from icml26.registry import SystemSpec


class ReproduceError(ValueError):
    """A request that cannot run (unknown claim, a missing extra, a stale report): one line for the user."""


def import_entry(spec: SystemSpec, entry: str, default: Any = _registry._REQUIRED) -> Any:
    """Load a system entry point; a missing optional dependency becomes a one-line install hint."""
    try:
        return _registry.load_entry(entry, default)
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        if missing == spec.module or missing.startswith(spec.module + "."):
            raise
        hint = f"pip install 'icml26[{spec.extra}]'" if spec.extra else "reinstall icml26"
        raise ReproduceError(f"system {spec.id!r} needs the missing package {missing!r}: {hint}") from None


@dataclass
class Job:
    """One system's part of a reproduction: the claims to run, all its claims, its mechanisms, earlier rows."""

    spec: SystemSpec
    claims: list[Claim]
    all_claims: list[Claim]
    mechanisms: list[Mechanism]
    earlier: list[ClaimSummary] = field(default_factory=list)


@dataclass
class Reproduction:
    """What :func:`reproduce` did: the summaries and probes per system, whether anything crashed, the index."""

    summaries: dict[str, list[ClaimSummary]] = field(default_factory=dict)
    probes: dict[str, dict[str, ProbeSummary]] = field(default_factory=dict)
    crashed: bool = False
    index: Path | None = None

    def all_summaries(self) -> list[ClaimSummary]:
        return [s for ss in self.summaries.values() for s in ss]


def _progress_printer():
    def starting(c: Claim, seed: int, i: int, n: int, arm: str) -> None:  # small-scale claims take minutes
        what = {"claim": "running", "negative": "negative of", "positive": "positive of"}[arm]
        print(f"  {what:<13} {c.id} (seed {seed}, {i + 1}/{n})", file=sys.stderr, flush=True)

    return starting


def show_summary(s: ClaimSummary) -> None:
    """One line per claim: the status, the id, the controls' verdicts, seeds and time."""
    from icml26.report import format_number

    arms = "".join(f"; {label} {a.verdict}" for label, a in (("negative", s.control), ("positive", s.positive)) if a)
    probes = "".join(f"; {p['name']} {format_number(p['mean'])} ({'live' if p['live'] else 'inert'})" for p in s.probes)
    print(f"  {s.status:<14} {s.id} ({len(s.seeds)} seeds, {s.wall_time_s:.1f} s{arms}{probes})", flush=True)


def plan_jobs(
    specs: Sequence[SystemSpec],
    scale: Scale,
    out: Path,
    *,
    claim_filter: str | Sequence[str] | None,
    update_readme: bool,
) -> list[Job]:
    """What to run, checked before anything runs (claims may take hours). ``claim_filter``: one text or several
    (a claim runs when its id contains any of them)."""
    patterns = [claim_filter] if isinstance(claim_filter, str) else list(claim_filter or [])
    jobs = []
    for spec in specs:
        all_claims = list(import_entry(spec, spec.claims_entry))
        claims = all_claims
        if patterns:
            claims = [c for c in claims if any(p in c.id for p in patterns)]
            if not claims:
                shown = " or ".join(repr(p) for p in patterns)
                raise ReproduceError(f"no claim of {spec.id!r} matches {shown}")
        mechanisms = list(import_entry(spec, spec.mechanisms_entry, []))
        earlier = (_load_report(out, spec.id) or []) if claim_filter else []
        if claim_filter and update_readme:
            rerun = {c.id for c in claims}
            kept = merge_with_earlier(earlier, [], all_claims, scale, refresh=False)
            check_readme_matches(spec, kept, rerun, all_claims, out)
        jobs.append(Job(spec, claims, all_claims, mechanisms, earlier))
    return jobs


def _load_report(out: Path, system_id: str):
    from icml26.report import load_system_report

    return load_system_report(out, system_id)


def reproduce(
    specs: Sequence[SystemSpec],
    *,
    scale: Scale | str = Scale.SMALL,
    seeds: int | None = None,
    out: Path | str = "reports",
    controls: bool = False,
    claim_filter: str | Sequence[str] | None = None,
    update_readme: bool = False,
    ray_address: str | None = None,
    json_path: Path | str | None = None,
    index_specs: Sequence[SystemSpec] | None = None,
    progress: bool = True,
    on_summary: Callable[[ClaimSummary], None] | None = None,
    probes_only: bool = False,
    threads: int | None = None,
) -> Reproduction:
    """Run the claims of ``specs`` (with their controls and probes when ``controls``) and write the reports.

    Parameters
    ----------
    specs : sequence of SystemSpec
        The systems to run (implemented ones).
    scale, seeds : the run's scale and seed count (default: each claim's own).
    out : folder of ``<id>/claims.json``, ``claims.md``, the plots and ``index.html``.
    controls : run every claim's negative and positive control on the same seeds and probe the mechanisms.
    claim_filter : run only claims whose id contains this text (or any of these texts); the earlier report in
        ``out`` keeps the rest.
    update_readme : rewrite each system README's generated blocks (implies ``controls``).
    ray_address : run every (claim, seed, arm) as a Ray task on this cluster (``local``, ``auto``, ``ray://…``).
    json_path : also write every summary to this JSON file.
    index_specs : the systems listed in ``index.html`` (default ``specs``).
    progress : print a line per claim (stdout) and per seed (stderr).
    on_summary : called with each claim's summary as it is ready.
    probes_only : probe the mechanisms and run no claim: the report keeps its claims, the README only gets this
        scale's column of the mechanisms block.
    threads : BLAS/OpenMP/torch threads for the run (``None`` leaves them as they are). The CLI passes 1: the
        claims' models are small, and on a 2-core laptop two threads are often several times slower.
    """
    from icml26.report import update_readme as write_readme
    from icml26.report import write_index, write_system_report

    scale = Scale.parse(scale)
    if seeds is not None and seeds < 1:
        raise ReproduceError(f"seeds must be at least 1; got {seeds}")
    out = Path(out)
    _check_outputs(out, json_path)  # before any claim runs: a run can take hours
    controls = controls or update_readme  # a README table always shows each claim's controls
    if threads is not None:
        _limit_threads(threads, before_imports=True)
    jobs = plan_jobs(specs, scale, out, claim_filter=claim_filter, update_readme=update_readme)

    ray_runs = _run_on_ray(jobs, scale, seeds, out, ray_address, controls, progress) if ray_address else None

    if threads is not None:
        _limit_threads(threads, before_imports=False)  # the systems' modules are imported now (torch among them)
    if probes_only:
        return _probe_only(jobs, scale, seeds, out, update_readme, progress)

    result = Reproduction()
    for job in jobs:
        spec = job.spec
        if progress:
            print(f"{spec.id}: {len(job.claims)} claim(s) at scale {scale.value}", flush=True)
        probes: dict[str, ProbeSummary] | None = None
        if controls:
            relied = {m for c in job.claims for m in c.mechanisms}
            chosen = [m for m in job.mechanisms if m.name in relied or not claim_filter]
            probes = run_mechanisms(chosen, scale, seeds, on_probe=_probe_printer() if progress else None)
            result.probes[spec.id] = probes
        if ray_runs is None:
            summaries = run_claims(
                job.claims,
                scale,
                seeds,
                figure_dir=out / spec.id,
                on_result=(lambda s: (show_summary(s), on_summary and on_summary(s))) if progress else on_summary,
                on_seed=_progress_printer() if progress else None,
                with_control=controls,
                probes=probes,
            )
        else:
            summaries = [_summary_from_runs(c, scale, seeds, ray_runs, out / spec.id, controls) for c in job.claims]
            for s in summaries:
                if probes is not None:
                    attach_probes(s, probes)
                if progress:
                    show_summary(s)
                if on_summary is not None:
                    on_summary(s)
        result.crashed |= any(
            s.verdict == "error" or any(a is not None and a.verdict == "error" for a in (s.control, s.positive))
            for s in summaries
        )
        fresh = summaries
        if claim_filter:  # a partial run updates the earlier report of the same scale instead of replacing it
            summaries = merge_with_earlier(job.earlier, summaries, job.all_claims, scale)
        write_system_report(spec, summaries, out, probes=_merged_probes(out, spec.id, probes, scale))
        if update_readme:
            write_readme(spec.readme, summaries, probes=list((probes or {}).values()), mechanisms=job.mechanisms)
        result.summaries[spec.id] = fresh
    result.index = write_index(out, list(index_specs or specs))
    if progress:
        print(f"report: {result.index}")
    if json_path:
        from icml26._util.io import atomic_output

        with atomic_output(json_path) as tmp:
            tmp.write_text(json.dumps([s.to_dict() for s in result.all_summaries()], indent=2) + "\n")
        if progress:
            print(f"summaries: {json_path}")
    return result


def _check_outputs(out: Path, json_path: Path | str | None) -> None:
    """Refuse a report folder or a JSON path that cannot be written, before any work."""
    import os

    from icml26._util.io import check_output_path

    if out.exists() and not out.is_dir():
        raise ReproduceError(f"--out {out} is a file; give a folder for the report")
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ReproduceError(f"--out {out}: {existing} is not a writable folder")
    if json_path is not None:
        try:
            check_output_path(json_path, suffixes=(".json",))
        except (OSError, ValueError) as exc:
            raise ReproduceError(f"--json: {exc}") from None


def _limit_threads(threads: int, *, before_imports: bool) -> None:
    """Cap the threads of BLAS, OpenMP and torch: through the environment for libraries not imported yet, and
    through threadpoolctl and torch's own setting for those already loaded."""
    import os

    if threads < 1:
        raise ReproduceError(f"threads must be at least 1; got {threads}")
    if before_imports:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl comes with scikit-learn; without it the environment has to do
        pass
    else:
        threadpool_limits(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def _probe_only(jobs: Sequence[Job], scale: Scale, seeds, out: Path, update_readme: bool, progress: bool):
    """Probe every job's mechanisms; keep the earlier report's claims; update the README's probe column."""
    from icml26.report import update_readme_probes, write_system_report

    result = Reproduction()
    for job in jobs:
        if not job.mechanisms:
            raise ReproduceError(f"system {job.spec.id!r} lists no MECHANISMS to probe")
        probes = run_mechanisms(job.mechanisms, scale, seeds, on_probe=_probe_printer() if progress else None)
        result.probes[job.spec.id] = probes
        for p in probes.values():
            result.crashed |= bool(p.error)
            if progress:
                print(f"  {'live' if p.live else 'inert':<6} {p.name} = {p.mean:.4g} ({p.rule}, {len(p.values)} seeds)")
        earlier = _load_report(out, job.spec.id) or []
        write_system_report(job.spec, earlier, out, probes=_merged_probes(out, job.spec.id, probes, scale))
        if update_readme:
            update_readme_probes(job.spec.readme, list(probes.values()), job.mechanisms)
        result.summaries[job.spec.id] = []
    return result


def _probe_printer():
    def starting(m: Mechanism) -> None:
        print(f"  probing       mechanism {m.name}", file=sys.stderr, flush=True)

    return starting


def _merged_probes(out: Path, system_id: str, probes: dict[str, ProbeSummary] | None, scale: Scale):
    """This run's probes, with an earlier report's probes of the same scale for mechanisms not re-probed."""
    from icml26.report import load_probes

    earlier = {p.name: p for p in load_probes(out, system_id) if p.scale == scale.value}
    earlier.update(probes or {})
    return list(earlier.values())


def _run_on_ray(jobs: Sequence[Job], scale: Scale, seeds, out: Path, address: str, controls: bool, progress: bool):
    """Every run of every job as a Ray task (see :mod:`icml26.distributed`); the runs by key."""
    from icml26 import distributed

    if not address.strip():
        raise ReproduceError("--ray-address needs an address: auto, local, or ray://HOST:PORT")
    tasks = []
    for job in jobs:
        tasks += distributed.plan(
            job.claims, job.spec.claims_entry, scale.value, lambda c: seed_list(c, scale, seeds), controls=controls
        )
    journal = out / distributed.JOURNAL_NAME
    done = len(distributed.Journal(journal).load().keys() & {t.key for t in tasks})
    if progress:
        print(f"ray: {len(tasks)} runs, {done} already in {journal}", flush=True)

    def arrived(task, run):
        print(
            f"  done {run.verdict:<12} {task.claim_id} ({task.arm}, seed {task.seed}, {run.wall_time_s:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    try:
        return distributed.run_on_ray(tasks, address, journal, on_done=arrived if progress else None)
    except ImportError as exc:
        raise ReproduceError(str(exc)) from None
    except ConnectionError as exc:
        raise ReproduceError(f"cannot reach the Ray cluster at {address!r}: {one_line(exc)}") from None
    except ValueError as exc:  # nothing answers at a host:port address (checked before Ray retries for minutes)
        raise ReproduceError(one_line(exc)) from None


def _summary_from_runs(claim_obj: Claim, scale: Scale, seeds, runs, figure_dir: Path, controls: bool):
    """A claim's summary (with its controls') from the runs a cluster did, as the sequential runner builds it."""
    from icml26.distributed import run_key

    def summary(arm: Arm) -> ClaimSummary:
        keys = [run_key(claim_obj.id, scale.value, s, arm) for s in seed_list(claim_obj, scale, seeds)]
        chosen = [runs[k] for k in keys]  # summarize_claim drops the runs after a crash, as the runner stops there
        figures = chosen[0].save_figures(figure_dir) if arm is Arm.CLAIM else []
        return summarize_claim(claim_obj, scale, chosen, figures)

    result = summary(Arm.CLAIM)
    if controls:
        result.control = summary(Arm.NEGATIVE)
        if Arm.POSITIVE in claim_obj.arms:
            result.positive = summary(Arm.POSITIVE)
    return result


def merge_with_earlier(earlier, fresh, all_claims, scale: Scale, *, refresh: bool = True) -> list[ClaimSummary]:
    """Earlier summaries of the same scale, with the fresh ones replacing theirs, in the order of CLAIMS.

    With ``refresh`` the earlier summaries take the claim's current description (statement, paper reference,
    controls, by-construction label): the id, and so what the claim checks, is the same.
    """
    by_id = {s.id: s for s in earlier if s.scale == scale.value}
    if refresh:
        for c in all_claims:
            if c.id in by_id:
                by_id[c.id] = dataclasses.replace(
                    by_id[c.id],
                    statement=c.statement,
                    paper_ref=c.paper,
                    control_description=c.control,
                    positive_description=c.positive,
                    by_construction=c.by_construction,
                )
    by_id.update({s.id: s for s in fresh})
    return [by_id[c.id] for c in all_claims if c.id in by_id]


def check_readme_matches(spec: SystemSpec, earlier, rerun: set[str], all_claims, out: Path) -> None:
    """Refuse to put rows from a stale report into the README: the rows kept must be the README's own, and
    no row of a current claim may be dropped because the report lacks it."""
    from icml26.report import markdown_row, readme_rows

    current = readme_rows(spec.readme)
    stale = [s.id for s in earlier if s.id not in rerun and current.get(s.id) != markdown_row(s)]
    if stale:
        raise ReproduceError(
            f"the report in {out / spec.id} does not match the README's rows for {', '.join(stale)}; "
            "use the --out of the run that wrote the README, or re-run every claim"
        )
    reported = {s.id for s in earlier} | rerun
    dropped = [c.id for c in all_claims if c.id in current and c.id not in reported]
    if dropped:
        raise ReproduceError(
            f"the report in {out / spec.id} lacks {', '.join(dropped)} (at this scale), so the README would lose "
            "their rows; use the --out of the run that wrote the README, or re-run every claim"
        )
