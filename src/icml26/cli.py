"""The ``icml26`` command.

::

    icml26 list [--markdown]                 the 19 systems, their status and claims holding
    icml26 info ID                           paper, summary, entry points, claims
    icml26 reproduce ID|--all [--scale smoke|small|paper] [--seeds N] [--out DIR] [--json FILE] [--controls]
                     [--ray-address ADDR]    re-run the paper's claims (and their negative controls), here or
                                             on a Ray cluster; write reports/<id>/ and reports/index.html
    icml26 ID VERB ...                       the system's own commands (imports only that system)

Exit status: 0 on success (``reproduce``: every claim ran, whatever its verdict), 1 when a claim or a control crashed,
2 on bad arguments, an unknown system or a planned one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from icml26 import __version__
from icml26 import registry as _registry
from icml26.registry import SystemSpec

EXIT_OK, EXIT_CRASH, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake of the user's: printed as one line, exit status 2."""


def _fail(message: str) -> int:
    print(f"icml26: {message}", file=sys.stderr)
    return EXIT_USAGE


def _spec(systems: Mapping[str, SystemSpec], system_id: str, *, runnable: bool = True) -> SystemSpec:
    if system_id not in systems:
        raise UsageError(f"unknown system {system_id!r}; run 'icml26 list' to see the {len(systems)} systems")
    spec = systems[system_id]
    if runnable and not spec.implemented:
        raise UsageError(f"system {system_id!r} is planned, not implemented yet")
    return spec


def _import_entry(spec: SystemSpec, entry: str):
    """Load a system entry point; a missing optional dependency becomes a one-line install hint."""
    try:
        return _registry.load_entry(entry)
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        if missing == spec.module or missing.startswith(spec.module + "."):
            raise
        hint = f"pip install 'icml26[{spec.extra}]'" if spec.extra else "reinstall icml26"
        raise UsageError(f"system {spec.id!r} needs the missing package {missing!r}: {hint}") from None


def _claim_counts(spec: SystemSpec) -> str:
    from icml26.report import readme_verdicts

    verdicts = readme_verdicts(spec.readme) if spec.implemented else None
    if not verdicts:
        return "–"
    return f"{sum(v == 'holds' for v in verdicts)}/{len(verdicts)}"


def list_markdown(systems: Mapping[str, SystemSpec]) -> str:
    """The system table of the top-level README (a test keeps the README in sync with it)."""
    lines = ["| id | paper | status | claims holding | extra |", "|---|---|---|---|---|"]
    for spec in systems.values():
        ident = f"[`{spec.id}`](src/icml26/{spec.id}/README.md)" if spec.implemented else f"`{spec.id}`"
        extra = f"`{spec.extra}`" if spec.extra else "–"
        lines.append(f"| {ident} | {spec.title} | {spec.status} | {_claim_counts(spec)} | {extra} |")
    return "\n".join(lines) + "\n"


def cmd_list(args: argparse.Namespace, systems: Mapping[str, SystemSpec]) -> int:
    if args.markdown:
        sys.stdout.write(list_markdown(systems))
        return EXIT_OK
    width = 70
    print(f"{'id':<14} {'status':<12} {'claims':<7} paper")
    for spec in systems.values():
        title = spec.title if len(spec.title) <= width else spec.title[: width - 1] + "…"
        print(f"{spec.id:<14} {spec.status:<12} {_claim_counts(spec):<7} {title}")
    return EXIT_OK


def cmd_info(args: argparse.Namespace, systems: Mapping[str, SystemSpec]) -> int:
    spec = _spec(systems, args.id, runnable=False)
    print(f"{spec.id}: {spec.title}")
    print(f"  venue:     {spec.venue} {spec.reference}".rstrip())
    print(f"  summary:   {spec.summary}")
    print(f"  status:    {spec.status}")
    print(f"  install:   pip install 'icml26[{spec.extra}]'" if spec.extra else "  install:   core only")
    if not spec.implemented:
        return EXIT_OK
    print(f"  library:   import {spec.module}")
    print(f"  cli:       icml26 {spec.id} --help   ({spec.cli_entry})")
    print(f"  claims:    icml26 reproduce {spec.id}   ({spec.claims_entry})")
    print(f"  readme:    {spec.readme}")
    for c in _import_entry(spec, spec.claims_entry):
        print(f"    - {c.id}: {c.statement}" + (f"  [{c.paper}]" if c.paper else ""))
        print(f"      control: {c.control}")
        if c.judge:
            print(f"      judged by 95% intervals: {'; '.join(j.describe() for j in c.judge)}")
        if c.by_construction:
            print(f"      holds by construction: {c.by_construction}")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace, systems: Mapping[str, SystemSpec]) -> int:
    from icml26.claims import Scale, run_claims
    from icml26.report import load_system_report, update_readme, write_index, write_system_report

    if args.all == bool(args.id):
        raise UsageError("give one system id or --all")
    try:
        scale = Scale.parse(args.scale)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.seeds is not None and args.seeds < 1:
        raise UsageError(f"--seeds must be at least 1; got {args.seeds}")
    if args.ray_address is not None and not args.ray_address.strip():
        raise UsageError("--ray-address needs an address: auto, local, or ray://HOST:PORT")
    specs = [s for s in systems.values() if s.implemented] if args.all else [_spec(systems, args.id)]
    out = Path(args.out)
    controls = args.controls or args.update_readme  # a README table always shows each claim's control

    # 1. what to run, checked before anything runs (claims may take hours)
    jobs = []  # (spec, claims to run, every claim of the system, the earlier report when --claim)
    for spec in specs:
        all_claims = list(_import_entry(spec, spec.claims_entry))
        claims = all_claims
        if args.claim:
            claims = [c for c in claims if args.claim in c.id]
            if not claims:
                raise UsageError(f"no claim of {spec.id!r} matches {args.claim!r}")
        earlier = (load_system_report(out, spec.id) or []) if args.claim else []
        if args.claim and args.update_readme:
            rerun = {c.id for c in claims}
            kept = _merge_with_earlier(earlier, [], all_claims, scale, refresh=False)
            _check_readme_matches(spec, kept, rerun, all_claims, out)
        jobs.append((spec, claims, all_claims, earlier))

    # 2. on a Ray cluster, every (claim, seed, control) run at once, streamed to a journal
    ray_runs = _run_on_ray(args, jobs, scale, out, controls) if args.ray_address else None

    # 3. per system: run (or gather from Ray), report, README
    def show(s):
        spread = f" ({len(s.seeds)} seeds, {s.wall_time_s:.1f} s)"
        control = f"; control {s.control.verdict}" if s.control is not None else ""
        print(f"  {s.verdict + control:<27} {s.id}{spread}", flush=True)

    def starting(c, seed, i, n, control):  # progress on stderr: small-scale claims take minutes
        what = "control of" if control else "running"
        print(f"  {what:<13} {c.id} (seed {seed}, {i + 1}/{n})", file=sys.stderr, flush=True)

    crashed = False
    everything = []
    for spec, claims, all_claims, earlier in jobs:
        print(f"{spec.id}: {len(claims)} claim(s) at scale {scale.value}", flush=True)
        if ray_runs is None:
            summaries = run_claims(
                claims,
                scale,
                args.seeds,
                figure_dir=out / spec.id,
                on_result=show,
                on_seed=starting,
                with_control=controls,
            )
        else:
            summaries = [_summary_from_runs(c, scale, args.seeds, ray_runs, out / spec.id, controls) for c in claims]
            for s in summaries:
                show(s)
        crashed |= any(s.verdict == "error" or s.control_verdict == "error" for s in summaries)
        everything += summaries
        if args.claim:  # a partial run updates the earlier report of the same scale instead of replacing it
            summaries = _merge_with_earlier(earlier, summaries, all_claims, scale)
        write_system_report(spec, summaries, out)
        if args.update_readme:
            update_readme(spec.readme, summaries)
    index = write_index(out, list(systems.values()))
    print(f"report: {index}")
    if args.json:
        Path(args.json).write_text(json.dumps([s.to_dict() for s in everything], indent=2) + "\n")
    return EXIT_CRASH if crashed else EXIT_OK


def _run_on_ray(args: argparse.Namespace, jobs, scale, out: Path, controls: bool):
    """Every run of every job as a Ray task (see :mod:`icml26.distributed`); the runs by key."""
    from icml26 import distributed
    from icml26.claims import seed_list

    tasks = []
    for spec, claims, _, _ in jobs:
        tasks += distributed.plan(
            claims, spec.claims_entry, scale.value, lambda c: seed_list(c, scale, args.seeds), controls=controls
        )
    journal = out / distributed.JOURNAL_NAME
    done = len(distributed.Journal(journal).load().keys() & {t.key for t in tasks})
    print(f"ray: {len(tasks)} runs, {done} already in {journal}", flush=True)

    def arrived(task, run):
        what = "control" if task.control else "claim"
        print(
            f"  done {run.verdict:<12} {task.claim_id} ({what}, seed {task.seed}, {run.wall_time_s:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    try:
        return distributed.run_on_ray(tasks, args.ray_address, journal, on_done=arrived)
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    except ConnectionError as exc:
        raise UsageError(f"cannot reach the Ray cluster at {args.ray_address!r}: {_one_line(exc)}") from None
    except ValueError as exc:  # nothing answers at a host:port address (checked before Ray retries for minutes)
        raise UsageError(_one_line(exc)) from None


def _summary_from_runs(claim_obj, scale, seeds, runs, figure_dir: Path, controls: bool):
    """A claim's summary (with its control's) from the runs a cluster did, as the sequential runner builds it."""
    from icml26.claims import seed_list, summarize_claim
    from icml26.distributed import run_key

    def summary(control: bool):
        keys = [run_key(claim_obj.id, scale.value, s, control) for s in seed_list(claim_obj, scale, seeds)]
        chosen = [runs[k] for k in keys]
        figures = [] if control else chosen[0].save_figures(figure_dir)
        return summarize_claim(claim_obj, scale, chosen, figures)

    result = summary(False)
    if controls:
        result.control = summary(True)
    return result


def _merge_with_earlier(earlier, fresh, all_claims, scale, *, refresh: bool = True):
    """Earlier summaries of the same scale, with the fresh ones replacing theirs, in the order of CLAIMS.

    With ``refresh`` the earlier summaries take the claim's current description (statement, paper reference,
    control, by-construction label): the id, and so what the claim checks, is the same.
    """
    import dataclasses

    by_id = {s.id: s for s in earlier if s.scale == scale.value}
    if refresh:
        for c in all_claims:
            if c.id in by_id:
                by_id[c.id] = dataclasses.replace(
                    by_id[c.id],
                    statement=c.statement,
                    paper_ref=c.paper,
                    control_description=c.control,
                    by_construction=c.by_construction,
                )
    by_id.update({s.id: s for s in fresh})
    return [by_id[c.id] for c in all_claims if c.id in by_id]


def _check_readme_matches(spec: SystemSpec, earlier, rerun: set[str], all_claims, out: Path) -> None:
    """Refuse to put rows from a stale report into the README: the rows kept must be the README's own, and
    no row of a current claim may be dropped because the report lacks it."""
    from icml26.report import markdown_row, readme_rows

    current = readme_rows(spec.readme)
    stale = [s.id for s in earlier if s.id not in rerun and current.get(s.id) != markdown_row(s)]
    if stale:
        raise UsageError(
            f"the report in {out / spec.id} does not match the README's rows for {', '.join(stale)}; "
            "use the --out of the run that wrote the README, or re-run every claim"
        )
    reported = {s.id for s in earlier} | rerun
    dropped = [c.id for c in all_claims if c.id in current and c.id not in reported]
    if dropped:
        raise UsageError(
            f"the report in {out / spec.id} lacks {', '.join(dropped)} (at this scale), so the README would lose "
            "their rows; use the --out of the run that wrote the README, or re-run every claim"
        )


def dispatch(system_id: str, argv: Sequence[str], systems: Mapping[str, SystemSpec]) -> int:
    """Run ``icml26 ID ...``. Errors of the user's (bad values, missing files) become one line and exit 2."""
    spec = _spec(systems, system_id)
    system_main = _import_entry(spec, spec.cli_entry)
    try:
        return int(system_main(list(argv)) or 0)
    except SystemExit as exc:  # argparse inside the system's CLI
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{system_id}: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    """The first line of an error's message (library messages can run to screens), named by its type if empty."""
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    first = text.splitlines()[0] if text else type(exc).__name__
    return first + (" (...)" if len(text.splitlines()) > 1 else "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icml26",
        description="Implementations of 19 ICML 2026 systems, with their paper claims made executable.",
        epilog="System commands: icml26 ID VERB ... (see 'icml26 ID --help').",
    )
    parser.add_argument("--version", action="version", version=f"icml26 {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress of claims")
    sub = parser.add_subparsers(dest="command", metavar="{list,info,reproduce,ID}")

    p = sub.add_parser("list", help="the systems, their status and how many claims hold")
    p.add_argument("--markdown", action="store_true", help="print the README's Markdown table")

    p = sub.add_parser("info", help="paper, entry points and claims of one system")
    p.add_argument("id")

    p = sub.add_parser("reproduce", help="re-run a system's paper claims and write a report")
    p.add_argument("id", nargs="?", help="system id (or --all)")
    p.add_argument("--all", action="store_true", help="every implemented system")
    p.add_argument("--scale", default="small", help="smoke | small | paper (default: small)")
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per claim (default: 1 at smoke; otherwise 3, or 5 for claims judged by intervals)",
    )
    p.add_argument("--out", default="reports", help="report folder (default: reports/)")
    p.add_argument("--json", default=None, help="also write every claim summary to this JSON file")
    p.add_argument("--claim", default=None, help="run only claims whose id contains this text")
    p.add_argument(
        "--controls",
        action="store_true",
        help="also run each claim's negative control (it must fail) on the same seeds",
    )
    p.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the claims table in the system README (implies --controls)",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="run every (claim, seed) as a task on this Ray cluster (auto, local, ray://HOST:PORT); "
        "a rerun with the same --out resumes from OUT/ray-journal.jsonl",
    )
    return parser


def main(argv: Sequence[str] | None = None, systems: Mapping[str, SystemSpec] | None = None) -> int:
    """Entry point of ``icml26``; ``systems`` replaces the registry (tests use it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    systems = _registry.SYSTEMS if systems is None else systems
    try:
        code = _run(argv, systems)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not as a message at exit
        return code
    except UsageError as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # `icml26 list | head`: the reader left; stop quietly, as Unix tools do
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _run(argv: list[str], systems: Mapping[str, SystemSpec]) -> int:
    commands = {"list", "info", "reproduce"}
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first not in commands:
        if first not in systems:
            raise UsageError(f"unknown command or system {first!r}; run 'icml26 list' or 'icml26 --help'")
        idx = argv.index(first)
        # -v before or after the system id: the system's own parser keeps its -v, the core only sets the level
        if {"-v", "--verbose"} & set(argv):
            _setup_logging(True)
        return dispatch(first, argv[idx + 1 :], systems)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message; keep our exit codes
        return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
    _setup_logging(args.verbose)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    handler = {"list": cmd_list, "info": cmd_info, "reproduce": cmd_reproduce}[args.command]
    return handler(args, systems)


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")


if __name__ == "__main__":
    sys.exit(main())
