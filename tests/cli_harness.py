"""Feed every CLI verb of one system a catalogue of bad inputs; run as a script in its own process.

    python tests/cli_harness.py SYSTEM_ID WORKDIR RESULT.json

Two passes, both through ``icml26.cli.main`` (so the core's error translation is part of what is tested):

1. **Generic** (every system gets it for free): for each verb, each free-text argument (a file name, a
   column) is given a missing file, an empty file, a directory, garbage bytes and non-UTF-8 text, with the
   verb's other required arguments filled in plainly. Each must exit non-zero with one line on stderr and no traceback.
2. **From examples** (``tests/<id>/cli_examples.py``, ``EXAMPLES``: argv lists with ``{tmp}`` for the work
   directory, run in order): every example must succeed; then each number in an example is replaced by nan,
   inf, -1, 0 and 1e12 (also written in digits), each input file by the bad files above, each output path by
   a directory, by a path in a missing directory and by each of the example's own input files (the input must
   survive). A bad value must give exit 2, one line, no traceback,
   no new or changed file; a number may also be accepted (exit 0), but never with a traceback, a hang or a
   crash.

Each case runs under an alarm (``CASE_SECONDS``) and the process under an address-space limit, so a verb that
allocates for a huge size or loops forever is reported instead of taking the machine down. The result is a
JSON list of problems (empty when every case behaved).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback
from pathlib import Path

CASE_SECONDS = 20
MEMORY_LIMIT_BYTES = 8 * 2**30
BAD_NUMBERS = ("nan", "inf", "-1", "0", "1e12", "1000000000000")  # 1e12 in digits too: int() rejects "1e12"


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang(f"no answer within {CASE_SECONDS} s")


def bad_files(root: Path) -> dict[str, Path]:
    """The catalogue of bad input files, created once in ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "missing file": root / "no-such-file.dat",
        "empty file": root / "empty.dat",
        "directory": root / "a-directory",
        "garbage bytes": root / "garbage.dat",
        "non-UTF-8 text": root / "latin1.csv",
    }
    files["empty file"].write_bytes(b"")
    files["directory"].mkdir(exist_ok=True)
    files["garbage bytes"].write_bytes(bytes(range(256)) * 8)
    files["non-UTF-8 text"].write_bytes("caf\xe9,na\xefve\n1,2\n".encode("latin-1"))
    return files


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(root))] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


def run(system_id: str, argv: list[str]) -> tuple[int | str, str, str, float]:
    """Run ``icml26 <id> argv`` in this process; return (exit status or 'hang'/'crash', stdout, stderr, s)."""
    from icml26.cli import main

    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code: int | str = main([system_id, *argv])
    except Hang:
        code = "hang"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # a crash is what we report
        code = "crash"
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - t0


def verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {"": parser}


def is_numeric(action: argparse.Action) -> bool:
    """An argument whose type turns text into an int or a float."""
    if action.type in (None, str, Path) or action.choices:
        return False
    for probe in ("1", "0.5"):
        try:
            value = action.type(probe)
        except (TypeError, ValueError, argparse.ArgumentTypeError):
            continue
        return isinstance(value, int | float) and not isinstance(value, bool)
    return False


def takes_text(action: argparse.Action) -> bool:
    """A free-text argument (a file name, a column, a key): any bad file name must get a clean answer."""
    if action.type not in (None, str, Path) or action.choices or action.nargs == 0 or action.dest == "help":
        return False
    return not isinstance(action, argparse._VersionAction)


def is_output(action: argparse.Action) -> bool:
    return action.dest in {"out", "json", "csv", "output", "save"} or "write" in (action.help or "").lower()


def plain_value(action: argparse.Action, tmp: Path) -> list[str]:
    if action.choices:
        return [str(next(iter(action.choices)))]
    if action.default not in (None, argparse.SUPPRESS) and not isinstance(action.default, bool):
        values = action.default if isinstance(action.default, list | tuple) else [action.default]
        return [str(v) for v in values]
    if is_numeric(action):
        n = action.nargs if isinstance(action.nargs, int) else 1
        return ["1"] * n
    if is_output(action):
        return [str(tmp / f"out-{action.dest}.dat")]
    return [str(tmp / f"in-{action.dest}.dat")]


def generic_argv(parser: argparse.ArgumentParser, verb: str, target: argparse.Action, value: str, tmp: Path):
    argv = [verb] if verb else []
    positionals = []
    for action in parser._actions:
        if action.dest == "help":
            continue
        filled = [value] if action is target else None
        if not action.option_strings:
            positionals.extend(filled or plain_value(action, tmp))
        elif action is target or action.required:
            argv += [action.option_strings[-1], *(filled or plain_value(action, tmp))]
    return argv + positionals


def tokens(parser: argparse.ArgumentParser, argv: list[str]) -> list[tuple[int, argparse.Action]]:
    """(index in argv, action) for every value token of one verb's argv (argv without the verb)."""
    by_flag = {flag: a for a in parser._actions for flag in a.option_strings}
    positionals = [a for a in parser._actions if not a.option_strings]
    out, i, p = [], 0, 0
    while i < len(argv):
        tok = argv[i]
        if tok in by_flag:
            action = by_flag[tok]
            n = 0 if action.nargs == 0 else (action.nargs if isinstance(action.nargs, int) else 1)
            out += [(i + k + 1, action) for k in range(n)]
            i += n + 1
        else:
            if p < len(positionals):
                out.append((i, positionals[p]))
                p += 1 if positionals[p].nargs in (None, 1) else 0
            i += 1
    return out


def judge(kind: str, case: str, result, before: dict, after: dict, allow_success: bool) -> list[str]:
    code, out, err, _seconds = result
    where = f"{kind}: {case}"
    problems = []
    text = out + err
    if "Traceback" in text or code == "crash":
        problems.append(f"{where}: traceback\n{err[-1500:]}")
    elif code == "hang":
        problems.append(f"{where}: no answer within {CASE_SECONDS} s")
    elif code == 0:
        if not allow_success:
            problems.append(f"{where}: accepted (exit 0)")
    else:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if len(lines) != 1:
            problems.append(f"{where}: exit {code} with {len(lines)} lines on stderr: {err[-600:]!r}")
    if code != 0:
        created = sorted(set(after) - set(before))
        changed = sorted(k for k in before if k in after and before[k] != after[k])
        removed = sorted(set(before) - set(after))
        if created or changed or removed:
            problems.append(f"{where}: failed but touched files: new {created}, changed {changed}, gone {removed}")
    return problems


def main(system_id: str, workdir: Path, result_path: Path) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    signal.signal(signal.SIGALRM, _on_alarm)
    import warnings

    warnings.filterwarnings("error", module=r"icml26")  # a warning on bad input is a hidden cause

    from icml26.registry import SYSTEMS

    spec = SYSTEMS[system_id]
    cli = importlib.import_module(f"{spec.module}.cli")
    parsers = verbs(cli.build_parser())
    bad_root = workdir / "bad"
    catalogue = bad_files(bad_root)
    problems: list[str] = []
    cases = 0

    # 1. generic: every file argument of every verb, the other required arguments filled plainly
    generic_tmp = workdir / "generic"
    generic_tmp.mkdir(parents=True, exist_ok=True)
    for verb, parser in parsers.items():
        for action in parser._actions:
            if not takes_text(action) or is_output(action):
                continue
            for case, path in catalogue.items():
                argv = generic_argv(parser, verb, action, str(path), generic_tmp)
                before = snapshot(workdir)
                result = run(system_id, argv)
                cases += 1
                problems += judge("generic", f"{' '.join(argv)}  [{case}]", result, before, snapshot(workdir), False)

    # 2. mutations of working examples
    ex_tmp = workdir / "ex"
    ex_tmp.mkdir(parents=True, exist_ok=True)
    examples = []
    try:
        examples = importlib.import_module(f"{system_id}.cli_examples").EXAMPLES
    except ModuleNotFoundError:
        pass
    prepared = []
    for example in examples:
        argv = [a.replace("{tmp}", str(ex_tmp)) for a in example]
        before = snapshot(ex_tmp)
        code, out, err, _seconds = run(system_id, argv)
        cases += 1
        if code != 0:
            problems.append(f"example {' '.join(example)} failed ({code}): {(out + err)[-1500:]}")
            continue
        created = set(snapshot(ex_tmp)) - set(before)
        prepared.append((argv, {str(ex_tmp / c) for c in created}))
    for argv, outputs in prepared:
        verb, rest = argv[0], argv[1:]
        parser = parsers.get(verb)
        if parser is None:
            continue
        for index, action in tokens(parser, rest):
            value = rest[index]
            if is_numeric(action):
                # a number may be accepted, but never nan or inf
                mutations = [(f"{action.dest}={v}", v, v not in ("nan", "inf")) for v in BAD_NUMBERS]
            elif value in outputs or (is_output(action) and value.startswith(str(ex_tmp))):
                mutations = [
                    (f"{action.dest} is a directory", str(catalogue["directory"]), False),
                    (f"{action.dest} in a missing directory", str(ex_tmp / "no-such-dir" / Path(value).name), False),
                ]
                # the output named as one of the verb's own input files: refused, the input untouched
                inputs = [(j, a) for j, a in tokens(parser, rest) if j != index and rest[j] not in outputs]
                mutations += [
                    (f"{action.dest} = the {a.dest} input", rest[j], False)
                    for j, a in inputs
                    if rest[j].startswith(str(ex_tmp)) and Path(rest[j]).is_file()
                ]
            elif value.startswith(str(ex_tmp)) and Path(value).exists():
                mutations = [(f"{action.dest}: {case}", str(p), False) for case, p in catalogue.items()]
            else:
                continue
            for case, bad, allow_success in mutations:
                mutated = [verb, *rest[:index], bad, *rest[index + 1 :]]
                before = snapshot(workdir)
                result = run(system_id, mutated)
                cases += 1
                problems += judge(
                    "example", f"{' '.join(mutated)}  [{case}]", result, before, snapshot(workdir), allow_success
                )
    result_path.write_text(json.dumps({"cases": cases, "problems": problems}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
