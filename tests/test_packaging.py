"""pyproject extras stay consistent with the registry; the torch pin stays in place."""

import re
import tomllib
from pathlib import Path

from icml26.registry import SYSTEMS

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_every_registry_extra_exists():
    for spec in SYSTEMS.values():
        assert not spec.extra or spec.extra in EXTRAS, f"{spec.id}: extra {spec.extra!r} is not in pyproject"


def test_all_is_the_union_of_the_other_extras():
    union = {_name(r) for name, reqs in EXTRAS.items() if name not in ("all", "dev", "bench") for r in reqs}
    assert {_name(r) for r in EXTRAS["all"]} == union


def test_torch_is_pinned_for_the_set_up():
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text().split()
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()
