"""Every code block of every implemented system's README runs as written (shrunk to smoke size).

A README's fenced blocks run in order, in one fresh folder per README, so a block may use a file an earlier
block wrote. A ``python`` block runs as a script; any other block runs in ``bash -e`` with the project's
``icml26`` on ``PATH``. ``/tmp/`` in a block means the test's folder.

An HTML comment right above a block (invisible on the rendered page) tells the test how to shrink it:

    <!-- example-test: replace "--steps 1000" "--steps 20"; replace "n_trials=120" "n_trials=8" -->
    <!-- example-test: skip (reads answers from the keyboard) -->

``replace`` must match the block (a stale replacement fails the test); ``skip`` needs a reason. Nothing else
is changed, so a block that runs here runs for a user who copies it.

Running every README costs 15-80 s of CPU a system (several minutes in all), more than the default suite's
budget allows, so the runs are marked ``slow`` (``make examples`` or ``pytest --runslow``); the default suite
keeps the directive parser and ``tests/test_cli.py``'s check that every README command parses.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from icml26.registry import SYSTEMS

FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*example-test:\s*(?P<body>.*?)\s*-->\s*$")
REPLACE = re.compile(r'^replace\s+"(?P<old>(?:[^"\\]|\\.)*)"\s+"(?P<new>(?:[^"\\]|\\.)*)"$')
BLOCK_SECONDS = 600  # a hang, not a slow machine: blocks take 5-60 s of CPU on a free 2-core machine


@dataclass
class Block:
    readme: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    replacements: list[tuple[str, str]] = field(default_factory=list)
    skip: str = ""

    def shrunk(self, tmp: Path) -> str:
        code = self.code
        for old, new in self.replacements:
            if old not in code:
                raise AssertionError(f"{self.where}: replacement {old!r} matches nothing in the block (stale?)")
            code = code.replace(old, new)
        return code.replace("/tmp/", f"{tmp}/")

    @property
    def where(self) -> str:
        return f"{self.readme.parent.name}/README.md:{self.line}"


def parse_directive(body: str, where: str) -> tuple[list[tuple[str, str]], str]:
    replacements, skip = [], ""
    for part in (p.strip() for p in body.split(";")):
        if part.startswith("skip"):
            skip = part[4:].strip(" ()")
            if not skip:
                raise ValueError(f"{where}: 'skip' needs a reason")
        elif m := REPLACE.match(part):
            replacements.append((m["old"].replace('\\"', '"'), m["new"].replace('\\"', '"')))
        elif part:
            raise ValueError(f"{where}: unknown example-test directive {part!r}")
    return replacements, skip


def readme_blocks(readme: Path) -> list[Block]:
    """The fenced code blocks of a README, each with the directive right above it (blank lines allowed)."""
    lines = readme.read_text().splitlines()
    blocks, i, pending = [], 0, None
    while i < len(lines):
        if m := DIRECTIVE.match(lines[i]):
            pending = (m["body"], i + 1)
        elif m := FENCE.match(lines[i]):
            start, language = i + 1, m.group(1)
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            block = Block(readme, start, language or "bash", "\n".join(body) + "\n")
            if pending is not None:
                block.replacements, block.skip = parse_directive(pending[0], f"{readme}:{pending[1]}")
            blocks.append(block)
            pending = None
        elif lines[i].strip() and pending is not None:
            raise AssertionError(f"{readme}:{pending[1]}: an example-test directive must sit right above a block")
        i += 1
    return blocks


def test_directive_parser(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        'text\n<!-- example-test: replace "a 1" "a 2"; replace "say \\"x\\"" "y" -->\n\n```python\nprint(1)\n```\n'
        "<!-- example-test: skip (needs a keyboard) -->\n```\nicml26 list\n```\n```\nicml26 list\n```\n"
    )
    first, second, third = readme_blocks(readme)
    assert first.language == "python" and first.replacements == [("a 1", "a 2"), ('say "x"', "y")]
    assert second.skip == "needs a keyboard" and second.language == "bash"
    assert third.skip == "" and third.replacements == []
    with pytest.raises(AssertionError, match="stale"):
        first.shrunk(tmp_path)
    with pytest.raises(ValueError, match="needs a reason"):
        parse_directive("skip", "x")


IMPLEMENTED = sorted(s.id for s in SYSTEMS.values() if s.implemented and not s.package)


def _environment(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(MPLBACKEND="Agg", HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("system_id", IMPLEMENTED)
def test_readme_examples_run(system_id, tmp_path):
    blocks = readme_blocks(SYSTEMS[system_id].readme)
    env = _environment(tmp_path)
    for block in blocks:
        if block.skip:
            continue
        code = block.shrunk(tmp_path)
        if block.language == "python":
            script = tmp_path / f"block_{block.line}.py"
            script.write_text("import torch\ntorch.set_num_threads(1)\n" * ("torch" in code) + code)
            command = [sys.executable, str(script)]
        else:
            command = ["bash", "-e", "-o", "pipefail", "-c", code]
        try:
            run = subprocess.run(
                command,
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=BLOCK_SECONDS,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"{block.where}: did not finish in {BLOCK_SECONDS} s (shrink it with an example-test directive)"
            )
        assert run.returncode == 0, (
            f"{block.where} failed (exit {run.returncode}) running:\n{code}\n--- stdout\n{run.stdout[-3000:]}"
            f"\n--- stderr\n{run.stderr[-3000:]}\n(command: {shlex.join(command[:2])} ...)"
        )
