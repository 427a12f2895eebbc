"""Import rules, checked by import-linter: no system imports another; the core imports no system."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from icml26.registry import PACKAGE_ROOT, SYSTEMS

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "icml26.registry",
    "icml26.claims",
    "icml26.report",
    "icml26.testing",
    "icml26._util",
    "icml26.cli",
    "icml26.reproduce",
    "icml26.distributed",
]
# The core's floors, top to bottom: the CLI only parses and calls reproduce(), which drives Ray and the reports.
CORE_LAYERS = [
    "icml26.cli",
    "icml26.testing",
    "icml26.reproduce",
    "icml26.distributed",
    "icml26.report",
    "icml26.claims",
    "icml26.registry",
]


def contracts() -> str:
    """import-linter configuration for the systems whose folder exists (a contract on a missing one errors)."""
    present = [f"icml26.{s}" for s in SYSTEMS if (PACKAGE_ROOT / s).is_dir()]
    text = "[importlinter]\nroot_package = icml26\n"
    if present:
        text += "\n[importlinter:contract:core-imports-no-system]\nname = The core imports no system\n"
        text += "type = forbidden\nsource_modules =\n" + "".join(f"    {m}\n" for m in CORE)
        text += "forbidden_modules =\n" + "".join(f"    {m}\n" for m in present)
    if len(present) >= 2:
        text += "\n[importlinter:contract:systems-independent]\nname = No system imports another\n"
        text += "type = independence\nmodules =\n" + "".join(f"    {m}\n" for m in present)
    text += "\n[importlinter:contract:core-layers]\nname = Core layers\ntype = layers\n"
    text += "layers =\n" + "".join(f"    {m}\n" for m in CORE_LAYERS)
    return text


def lint(config: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    return subprocess.run(
        [exe, "--config", str(config), "--no-cache"], capture_output=True, text=True, cwd=ROOT / "src"
    )


def test_import_contracts_hold(tmp_path):
    config = tmp_path / "importlinter.ini"
    config.write_text(contracts())
    result = lint(config)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linter_catches_a_forbidden_import(tmp_path):
    """The contract check can fail: a core module importing a system is reported."""
    pkg = tmp_path / "src" / "icml26"
    shutil.copytree(PACKAGE_ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "zzsys").mkdir()
    (pkg / "zzsys" / "__init__.py").write_text("")
    (pkg / "_util" / "bad.py").write_text("import icml26.zzsys\n")
    config = tmp_path / "importlinter.ini"
    config.write_text(
        "[importlinter]\nroot_package = icml26\n\n[importlinter:contract:c]\nname = core\ntype = forbidden\n"
        "source_modules =\n    icml26._util\nforbidden_modules =\n    icml26.zzsys\n"
    )
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("lint-imports is not installed")
    result = subprocess.run(
        [exe, "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=tmp_path / "src",
        env={"PYTHONPATH": str(tmp_path / "src"), "PATH": ""},
    )
    assert result.returncode != 0 and "BROKEN" in result.stdout.upper()


def test_the_repo_stands_alone_nothing_reads_or_links_outside_it():
    """Data, design and paper notes the project needs live in the repo; no file points beside the checkout."""
    root = Path(__file__).resolve().parents[1]
    outside = "../" + "shared"  # written in two parts so this test does not find itself
    beside = "shared/" + "papers", "shared/" + "data", "shared/" + "DESIGN"
    offenders = []
    for folder in ("src", "tests", "benchmarks", "docs", ".ci"):
        for path in (root / folder).rglob("*"):
            if path.suffix in {".py", ".md", ".txt", ".toml", ".cfg", ".sh", ""} and path.is_file():
                text = path.read_text(errors="ignore")
                if outside in text or any(b in text for b in beside):
                    offenders.append(str(path.relative_to(root)))
    for name in ("README.md", "CONTRIBUTING.md", "Makefile", "pyproject.toml"):
        text = (root / name).read_text()
        if outside in text or any(b in text for b in beside):
            offenders.append(name)
    assert not offenders, f"files that reach outside the repo: {offenders}"


def test_checkpoints_load_safely():
    """``torch.load`` unpickles arbitrary objects unless ``weights_only=True``: a checkpoint from a stranger could
    run code, so every load in the library says ``weights_only=True``."""
    src = Path(__file__).resolve().parents[1] / "src" / "icml26"
    unsafe, loads = [], []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(src.parent)
        unsafe += [f"{rel}: weights_only=False" for _ in re.findall(r"weights_only\s*=\s*False", text)]
        for call in re.findall(r"torch\.load\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
            if "weights_only=True" not in call.replace(" ", ""):
                loads.append(f"{rel}: torch.load({call})")
    assert not unsafe and not loads, "\n".join(unsafe + loads)


def test_the_library_leaves_torchs_global_rng_alone():
    """A library call that reseeds torch's global generator silently changes what the caller's own code draws
    next. ``torch.manual_seed`` may appear only inside a ``torch.random.fork_rng`` block (which restores the
    caller's state), or where a run starts: a system's ``claims.py`` / ``cli.py``, ucast's claim driver and
    ``seed_everything`` (whose job it is)."""
    src = ROOT / "src" / "icml26"
    starts = {"ucast/experiment.py", "_util/seed.py"}
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if path.name in ("claims.py", "cli.py") or path.relative_to(src).as_posix() in starts:
            continue
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if "torch.manual_seed(" not in line or line.lstrip().startswith("#"):
                continue
            depth, inside = len(line) - len(line.lstrip()), False
            for above in reversed(lines[:i]):  # walk out through the enclosing blocks
                indent = len(above) - len(above.lstrip())
                if not above.strip() or indent >= depth:
                    continue
                if "fork_rng(" in above:
                    inside = True
                    break
                if above.lstrip().startswith(("def ", "class ", "async def ")):
                    break
                depth = indent
            if not inside:
                offenders.append(f"{path.relative_to(src.parent)}:{i + 1}: {line.strip()}")
    assert not offenders, "torch.manual_seed outside torch.random.fork_rng:\n" + "\n".join(offenders)
