"""One command-line convention across systems: the shared flags mean the same thing in every verb.

``--out PATH`` writes the main result and ``--json PATH`` machine-readable results (never a bare switch);
``--seed`` is a non-negative integer; ``--device`` takes auto / cpu / cuda; ``--preset`` and ``--scale`` name
the smoke / small / paper sizes of ``icml26 reproduce`` and nothing else (an STM physics preset is
``--physics``, an expression scale ``--data-scale``); ``--steps`` counts optimisation or integration steps,
never episodes (``--episodes``).
"""

from __future__ import annotations

import argparse
import importlib

import pytest

from icml26.registry import SYSTEMS

IMPLEMENTED = sorted(s.id for s in SYSTEMS.values() if s.implemented)
SIZES = {"tiny", "smoke", "small", "paper"}


def _flags(system_id: str):
    from cli_harness import verbs

    parser = importlib.import_module(f"{SYSTEMS[system_id].module}.cli").build_parser()
    for verb, sub in verbs(parser).items():
        for action in sub._actions:
            for option in action.option_strings:
                yield verb, option, action


def _accepts(action: argparse.Action, text: str) -> bool:
    try:
        value = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False
    return action.choices is None or value in action.choices


@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_shared_flags_mean_the_same_thing(system_id):
    problems = []
    for verb, option, action in _flags(system_id):
        where = f"{system_id} {verb} {option}"
        takes_value = action.nargs in (None, "?") and not isinstance(action, argparse._StoreConstAction)
        if option in ("--out", "--json") and not takes_value:
            problems.append(f"{where}: must take a PATH, not be a switch")
        if option == "--seed" and (not _accepts(action, "0") or _accepts(action, "-1") or _accepts(action, "x")):
            problems.append(f"{where}: must accept 0 and refuse -1 and non-integers")
        if option == "--device" and not all(_accepts(action, d) for d in ("auto", "cpu", "cuda")):
            problems.append(f"{where}: must accept auto, cpu and cuda")
        if option in ("--preset", "--scale") and not (action.choices and set(action.choices) <= SIZES):
            problems.append(f"{where}: choices {action.choices} are not sizes {sorted(SIZES)}")
        if option == "--steps" and "episode" in (action.help or "").lower():
            problems.append(f"{where}: counts episodes; call it --episodes")
    assert not problems, "\n".join(problems)


def test_the_convention_check_catches_a_switch_and_a_foreign_preset(monkeypatch):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="verb")
    p = sub.add_parser("run")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--preset", choices=["calibrated"], help="physics")
    p.add_argument("--seed", type=int, default=0, help="seed")

    class Fake:
        @staticmethod
        def build_parser():
            return parser

    monkeypatch.setattr(importlib, "import_module", lambda name: Fake)
    with pytest.raises(AssertionError) as err:
        test_shared_flags_mean_the_same_thing(IMPLEMENTED[0])
    assert "must take a PATH" in str(err.value) and "not sizes" in str(err.value) and "refuse -1" in str(err.value)


@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_every_verb_has_a_description_with_an_example_that_parses(system_id, capsys):
    """`icml26 ID VERB --help` says what the verb reads and writes and shows one example (issue 53 item 1); the
    example must be a command line the verb's parser accepts."""
    import re
    import shlex

    from cli_harness import verbs

    parser = importlib.import_module(f"{SYSTEMS[system_id].module}.cli").build_parser()
    problems = []
    for verb, sub in verbs(parser).items():
        text = " ".join((sub.description or "").split())
        found = re.search(r"[Ee]xamples?:\s*(icml26 .*)", text)
        if not found:
            problems.append(f"{verb}: no description with 'Example: icml26 {system_id} {verb} ...'")
            continue
        for command in found.group(1).split("&&"):
            words = shlex.split(command.strip().rstrip("."))
            if words[:2] != ["icml26", system_id]:
                problems.append(f"{verb}: example {command.strip()!r} is not an 'icml26 {system_id}' command")
                continue
            try:
                parser.parse_args(words[2:])
            except SystemExit:
                problems.append(f"{verb}: example {command.strip()!r} does not parse: {capsys.readouterr().err}")
    assert not problems, "\n".join(problems)
