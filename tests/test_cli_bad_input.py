"""Every verb of every implemented system, fed a catalogue of bad inputs (see tests/cli_harness.py).

Each system runs in its own process under a memory limit and a per-case alarm, so one runaway verb cannot
take the test run down. A system adds working examples in ``tests/<id>/cli_examples.py`` (``EXAMPLES``) and
the harness mutates each of their numbers, input files and output paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.registry import SYSTEMS

HARNESS = Path(__file__).with_name("cli_harness.py")
IMPLEMENTED = sorted(s.id for s in SYSTEMS.values() if s.implemented)


@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_every_verb_rejects_bad_input_cleanly(system_id, tmp_path):
    result = tmp_path / "result.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(HARNESS), system_id, str(tmp_path / "work"), str(result)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0 and result.exists(), proc.stderr[-3000:]
    report = json.loads(result.read_text())
    assert report["cases"] > 0
    assert not report["problems"], f"{len(report['problems'])} of {report['cases']} cases:\n" + "\n".join(
        report["problems"]
    )


@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_every_argument_has_help_text(system_id):
    import argparse
    import importlib

    from cli_harness import verbs  # the harness's own walk over a system's verbs

    parser = importlib.import_module(f"{SYSTEMS[system_id].module}.cli").build_parser()
    missing = [
        f"{verb} {action.option_strings[0] if action.option_strings else action.dest}"
        for verb, sub in verbs(parser).items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()
    ]
    assert not missing, f"{system_id}: arguments without help text: {', '.join(missing)}"
