"""Start-up time of the command line: `icml26 list` and `icml26 ID --help` for every system, best of 3 cold-ish
runs (the file cache warm). The tests check what these commands import, never how long they take; this script
measures the time (issue 52 asked --help under 1.5 s, `list` under 1 s).

    python benchmarks/cli_startup.py [--json benchmarks/results/cli_startup.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from icml26.registry import SYSTEMS


def _best(command: list[str], repeats: int = 3) -> float:
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=Path(__file__).with_name("results") / "cli_startup.json")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("icml26")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "icml26.cli"]
    rows = {"list": _best([*base, "list"])}
    for spec in sorted(SYSTEMS.values(), key=lambda s: s.id):
        if spec.implemented:
            rows[f"{spec.id} --help"] = _best([*base, spec.id, "--help"])
    for name, seconds in rows.items():
        print(f"{name:<28} {seconds:6.2f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"seconds": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
