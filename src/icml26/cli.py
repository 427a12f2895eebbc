"""The ``icml26`` command.

::

    icml26 list [--markdown]                 the 19 systems, their status and claims holding
    icml26 info ID                           paper, summary, entry points, claims
    icml26 reproduce ID|--all [--scale smoke|small|paper] [--seeds N] [--out DIR] [--json FILE] [--controls]
                     [--ray-address ADDR]    re-run the paper's claims (and their controls and probes), here or
                                             on a Ray cluster; write reports/<id>/ and reports/index.html
    icml26 ID VERB ...                       the system's own commands (imports only that system)
    icml26 -q ...  /  icml26 ID VERB ... --quiet   no progress bars (they are off anyway when stderr is no terminal)

Exit status: 0 on success (``reproduce``: every claim ran, whatever its verdict), 1 when a claim or a control crashed,
2 on bad arguments, an unknown system or a planned one.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from icml26 import __version__
from icml26 import registry as _registry
from icml26._util.progress import set_quiet
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


def _import_entry(spec: SystemSpec, entry: str, default=_registry._REQUIRED):
    """Load a system entry point; a missing optional dependency becomes a one-line install hint."""
    from icml26.reproduce import ReproduceError, import_entry

    try:
        return import_entry(spec, entry, default)
    except ReproduceError as exc:
        raise UsageError(str(exc)) from None


def _claim_counts(spec: SystemSpec) -> str:
    """``holds/fails/no-power/not-measured`` of the README's claims table (``+N`` other: unchecked, errors), with
    the table's scale when it is not ``small``."""
    from icml26.report import count_outcomes, readme_scale, readme_verdicts

    verdicts = readme_verdicts(spec.readme) if spec.implemented else None
    if not verdicts:
        return "–"
    n = count_outcomes(verdicts)
    text = "/".join(str(n[k]) for k in ("holds", "fails", "no-power", "not-measured"))
    text += f" +{n['other']}" if n["other"] else ""
    scale = readme_scale(spec.readme)
    return text + (f" ({scale})" if scale and scale != "small" else "")


def list_markdown(systems: Mapping[str, SystemSpec]) -> str:
    """The system table of the top-level README (a test keeps the README in sync with it)."""
    lines = ["| id | paper | status | holds/fails/no-power/not-measured | extra |", "|---|---|---|---|---|"]
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
    print(f"{'id':<14} {'status':<12} {'h/f/np/nm':<19} paper")
    for spec in systems.values():
        title = spec.title if len(spec.title) <= width else spec.title[: width - 1] + "…"
        print(f"{spec.id:<14} {spec.status:<12} {_claim_counts(spec):<19} {title}")
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
        print(f"      negative control: {c.control}")
        print(f"      positive control: {c.positive or '(none declared)'}")
        if c.mechanisms:
            print(f"      relies on: {', '.join(c.mechanisms)}")
        if c.judge:
            print(f"      judged by 95% intervals: {'; '.join(j.describe() for j in c.judge)}")
        if c.by_construction:
            print(f"      holds by construction: {c.by_construction}")
    for m in _import_entry(spec, spec.mechanisms_entry, []):
        print(f"    mechanism {m.name}: {m.component}; probe: {m.measures} ({m.rule()})")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace, systems: Mapping[str, SystemSpec]) -> int:
    """Parse and hand over to :func:`icml26.reproduce.reproduce`."""
    from icml26.claims import Scale
    from icml26.reproduce import ReproduceError, reproduce

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
    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1; got {args.threads}")
    if args.json == "-":
        raise UsageError("reproduce --json needs a file path: the run's progress is what standard output carries")
    if args.probes_only and (args.claim or args.ray_address):
        raise UsageError("--probes-only runs no claim: it takes neither --claim nor --ray-address")
    specs = [s for s in systems.values() if s.implemented] if args.all else [_spec(systems, args.id)]
    try:
        run = reproduce(
            specs,
            scale=scale,
            seeds=args.seeds,
            out=Path(args.out),
            controls=args.controls,
            claim_filter=args.claim,
            update_readme=args.update_readme,
            ray_address=args.ray_address,
            json_path=args.json,
            index_specs=list(systems.values()),
            probes_only=args.probes_only,
            threads=args.threads,
        )
    except ReproduceError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_CRASH if run.crashed else EXIT_OK


def dispatch(system_id: str, argv: Sequence[str], systems: Mapping[str, SystemSpec]) -> int:
    """Run ``icml26 ID ...``. Errors of the user's (bad values, missing files) become one line and exit 2."""
    spec = _spec(systems, system_id)
    try:
        system_main = _import_entry(spec, spec.cli_entry)
    except UsageError as exc:
        if not {"-h", "--help"} & set(argv[:1]):
            raise
        # `icml26 ID --help` without the system's extra: say what the system is and how to get its verbs
        print(f"usage: icml26 {spec.id} VERB ...\n\n{spec.title}\n\n{exc}; its verbs are listed once it is installed.")
        return EXIT_OK
    argv = list(argv)
    json_to_stdout = any(a == "--json=-" or (a == "--json" and b == "-") for a, b in zip(argv, [*argv[1:], None]))
    try:
        if json_to_stdout:  # standard output carries the JSON document alone; the verb's other prints go to stderr
            from icml26._util.io import stdout_reserved_for_json

            with stdout_reserved_for_json():
                return int(system_main(argv) or 0)
        return int(system_main(argv) or 0)
    except SystemExit as exc:  # argparse inside the system's CLI
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_USAGE)
    except ModuleNotFoundError as exc:  # a verb's optional dependency, imported when the verb needs it
        missing = exc.name or "?"
        if missing.split(".")[0] == "icml26":  # our own module is missing: a bug, keep the traceback
            raise
        raise UsageError(
            f"{system_id}: this command needs the missing package {missing!r}: {install_hint(missing, spec.extra)}"
        ) from None
    except ImportError as exc:  # installed but broken (a version mismatch: "cannot import name ..." )
        from icml26._util.cli import one_line

        broken = exc.name or "?"
        if broken.split(".")[0] == "icml26":
            raise
        raise UsageError(
            f"{system_id}: the installed package {broken!r} failed to import ({one_line(exc)}); reinstall a compatible "
            f"version: {install_hint(broken, spec.extra)}"
        ) from None
    except (ValueError, OSError, EOFError) as exc:
        from icml26._util.cli import one_line

        raise UsageError(f"{system_id}: {one_line(exc)}") from None


def install_hint(module: str, prefer: str = "") -> str:
    """The pip command that provides ``module``: the icml26 extras that require a distribution of that name (read
    from the installed package's metadata; only those among ``prefer``, a system's comma-separated extras, when
    any are), else the module's own name."""
    import importlib.metadata
    import re

    top = module.split(".")[0].lower().replace("-", "_")
    try:
        requires = importlib.metadata.requires("icml26") or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    extras = set()
    for req in requires:
        found = re.match(r"\s*([A-Za-z0-9_.-]+).*extra\s*==\s*['\"]([^'\"]+)['\"]", req)
        if found and found[1].lower().replace("-", "_") == top and found[2] not in ("all", "dev"):
            extras.add(found[2])
    extras = (extras & set(prefer.split(","))) or extras
    return f"pip install 'icml26[{','.join(sorted(extras))}]'" if extras else f"pip install {top}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="icml26",
        description="Implementations of 19 ICML 2026 systems, with their paper claims made executable.",
        epilog="System commands: icml26 ID VERB ... (see 'icml26 ID --help').",
    )
    parser.add_argument("--version", action="version", version=f"icml26 {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress of claims")
    parser.add_argument(
        "-q",
        "--quiet",
        "--no-progress",
        action="store_true",
        help="no progress bars (also 'icml26 ID VERB ... --quiet' or '--no-progress')",
    )
    sub = parser.add_subparsers(dest="command", metavar="{list,info,reproduce,ID}")

    p = sub.add_parser(
        "list",
        help="the systems, their status and their claims' outcomes",
        description="The systems and, from each README's claims table, how many claims hold (negative control "
        "failed) / fail (positive control held: refuted at that scale) / have no power (the positive control "
        "did not hold or a mechanism was inert) / were not measured; '+N' counts the rest (held by construction, "
        "a control not run or holding too, fails from before positive controls, crashes).",
    )
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
    p.add_argument(
        "--claim",
        action="append",
        default=None,
        help="run only claims whose id contains this text (repeatable: claims matching any of them)",
    )
    p.add_argument(
        "--controls",
        action="store_true",
        help="also run each claim's negative control (it must fail) and positive control (it must hold) on the "
        "same seeds, and probe the system's credited mechanisms",
    )
    p.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the claims table in the system README (implies --controls)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS/OpenMP/torch threads per process (default 1: the claims' models are small, and on a 2-core "
        "laptop more threads are often slower)",
    )
    p.add_argument(
        "--probes-only",
        action="store_true",
        help="probe the credited mechanisms and run no claim; with --update-readme only this scale's column of "
        "the README's mechanisms block changes",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="run every (claim, seed, arm) as a task on this Ray cluster (auto, local, ray://HOST:PORT); "
        "a rerun with the same --out resumes from OUT/ray-journal.jsonl",
    )
    return parser


def main(argv: Sequence[str] | None = None, systems: Mapping[str, SystemSpec] | None = None) -> int:
    """Entry point of ``icml26``; ``systems`` replaces the registry (tests use it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    systems = _registry.SYSTEMS if systems is None else systems
    try:
        with _short_warnings():
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
        rest = argv[idx + 1 :]
        core = {"-v", "--verbose", "-q", "--quiet", "--no-progress"}
        unknown = [a for a in argv[:idx] if a not in core]
        if unknown:  # before the id only the core's own options are read; anything else would be lost silently
            raise UsageError(f"unknown option {unknown[0]!r} before {first!r}; options of a verb go after it: "
                             f"icml26 {first} VERB ... {unknown[0]}")  # fmt: skip
        # --quiet/--no-progress before the id (or -q), or anywhere after it: every progress bar off; no system parser
        # sees it
        if {"-q", "--quiet", "--no-progress"} & set(argv[:idx]) or {"--quiet", "--no-progress"} & set(rest):
            set_quiet(True)
            rest = [a for a in rest if a not in ("--quiet", "--no-progress")]
        return dispatch(first, rest, systems)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message; keep our exit codes
        return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
    _setup_logging(args.verbose)
    if args.quiet:
        set_quiet(True)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    handler = {"list": cmd_list, "info": cmd_info, "reproduce": cmd_reproduce}[args.command]
    return handler(args, systems)


@contextlib.contextmanager
def _short_warnings():
    """Warnings on the command line read ``warning: message``, without the source path and line of the code
    that raised them (a user's terminal is not a traceback)."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        with contextlib.suppress(OSError):
            print(f"warning: {message}", file=file or sys.stderr)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")


if __name__ == "__main__":
    sys.exit(main())
