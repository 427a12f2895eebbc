"""The icml26 command: list, info, reproduce, dispatch, exit codes and start-up cost."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from icml26 import cli
from icml26.registry import SYSTEMS, SystemSpec

ROOT = Path(__file__).resolve().parents[1]
PLANNED = next((s.id for s in SYSTEMS.values() if not s.implemented), None)


@pytest.fixture
def systems(fake_spec):
    return {**SYSTEMS, "fakesys": fake_spec}


def run(argv, systems=None):
    return cli.main(argv, systems=systems)


def one_line_error(capsys):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("icml26: "), err
    assert "Traceback" not in err
    return lines[0]


def test_list_shows_all_19_systems(capsys):
    assert run(["list"]) == 0
    out = capsys.readouterr().out
    for system_id in SYSTEMS:
        assert system_id in out
    assert len(out.strip().splitlines()) == 1 + 19


def test_list_markdown_is_a_table_with_a_row_per_system(capsys):
    assert run(["list", "--markdown"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 19


def test_info_of_planned_and_implemented_systems(capsys, systems):
    assert run(["info", "noisypower"]) == 0
    assert "Accelerated Noisy Power Method" in capsys.readouterr().out
    assert run(["info", "fakesys"], systems) == 0
    out = capsys.readouterr().out
    assert "fakesys/mean-consistent-v2" in out and "icml26 fakesys --help" in out
    assert "control: the estimator is shifted by one standard deviation" in out
    assert "judged by 95% intervals: MSE(median) - MSE(mean) > 0" in out


def test_unknown_system_is_one_clear_line_and_exit_2(capsys):
    assert run(["reproduce", "nosuch"]) == 2
    assert "unknown system 'nosuch'" in one_line_error(capsys)
    assert run(["info", "nosuch"]) == 2
    one_line_error(capsys)
    assert run(["nosuch", "verb"]) == 2
    assert "unknown command or system 'nosuch'" in one_line_error(capsys)


@pytest.mark.skipif(PLANNED is None, reason="every system is implemented")
def test_planned_system_is_one_clear_line_and_exit_2(capsys):
    assert run(["reproduce", PLANNED]) == 2
    assert f"'{PLANNED}' is planned" in one_line_error(capsys)
    assert run([PLANNED, "anything"]) == 2
    assert "planned" in one_line_error(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce"],
        ["reproduce", "fakesys", "--all"],
        ["reproduce", "fakesys", "--scale", "huge"],
        ["reproduce", "fakesys", "--seeds", "0"],
        ["reproduce", "fakesys", "--claim", "no-such-claim"],
    ],
)
def test_bad_reproduce_arguments_exit_2(argv, capsys, systems, tmp_path):
    assert run([*argv, "--out", str(tmp_path)], systems) == 2
    one_line_error(capsys)


def test_reproduce_checks_its_outputs_before_any_claim_runs(capsys, systems, tmp_path):
    a_file = tmp_path / "report.txt"
    a_file.write_text("kept")
    for extra in (
        ["--out", str(a_file)],
        ["--out", str(tmp_path / "r"), "--json", str(tmp_path)],
        ["--out", str(tmp_path / "r"), "--json", str(tmp_path / "missing" / "all.json")],
        ["--out", str(tmp_path / "r"), "--json", str(tmp_path / "all.csv")],
    ):
        assert run(["reproduce", "fakesys", "--scale", "smoke", *extra], systems) == 2
        assert "claim(s)" not in capsys.readouterr().out  # refused before the first claim
    assert a_file.read_text() == "kept" and not (tmp_path / "r").exists()


def test_argparse_errors_exit_2_and_no_command_prints_help(capsys):
    assert run(["list", "--nosuchflag"]) == 2
    assert run([]) == 2
    assert "usage" in capsys.readouterr().out


def test_reproduce_writes_reports_and_exits_0_whatever_the_verdicts(tmp_path, capsys, systems):
    out, js = tmp_path / "reports", tmp_path / "all.json"
    assert (
        run(
            [
                "reproduce",
                "fakesys",
                "--scale",
                "smoke",
                "--seeds",
                "3",
                "--out",
                str(out),
                "--json",
                str(js),
                "--controls",
            ],
            systems,
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "holds          fakesys/mean-consistent-v2 (3 seeds" in printed
    assert "fails          fakesys/biased-variance-unbiased-v2" in printed
    assert "; negative fails; positive holds)" in printed and "not-measured" in printed
    assert (out / "fakesys" / "claims.json").is_file() and (out / "fakesys" / "claims.md").is_file()
    assert sorted(p.name for p in (out / "fakesys").glob("*.png")) == ["mean-consistent-v2-error.png"]
    page = (out / "index.html").read_text()
    assert all(f'id="{s}"' for s in SYSTEMS) and '<td class="num">2</td><td class="num">1</td>' in page
    data = json.loads(js.read_text())
    assert [d["verdict"] for d in data] == ["holds", "fails", "not-measured", "holds"]
    assert [d["control"]["verdict"] for d in data] == ["fails", "fails", "not-measured", "fails"]
    assert [d["positive"]["verdict"] for d in data] == ["holds", "holds", "not-measured", "holds"]
    assert all(d[a]["seeds"] == [0, 1, 2] for d in data for a in ("control", "positive"))
    per_seed = data[0]["per_seed"]  # every seed's numbers are kept, not only the mean
    assert [r["seed"] for r in per_seed] == [0, 1, 2] and all("abs error" in r["measured"] for r in per_seed)
    judged = data[3]["judged"][0]
    assert judged["n"] == 3 and judged["low"] > 0.01 and data[3]["control"]["judged"][0]["low"] <= 0.01


def test_reproduce_without_controls_counts_no_claim_as_holding(tmp_path, capsys, systems):
    assert run(["reproduce", "fakesys", "--scale", "smoke", "--out", str(tmp_path)], systems) == 0
    page = (tmp_path / "index.html").read_text()
    assert "".join(f'<td class="num">{n}</td>' for n in (0, 0, 0, 1, 3)) in page  # held unchecked, failed unchecked
    table = (tmp_path / "fakesys" / "claims.md").read_text()
    assert "holds; control not run" in table and "fails; positive control not run" in table


def test_judged_claims_run_five_seeds_by_default_outside_smoke(tmp_path, capsys, systems):
    assert run(["reproduce", "fakesys", "--scale", "small", "--claim", "median", "--out", str(tmp_path)], systems) == 0
    data = json.loads((tmp_path / "fakesys" / "claims.json").read_text())["claims"]
    assert [len(c["seeds"]) for c in data] == [5]


def test_reproduce_one_claim_only_merges_with_the_earlier_report_of_the_same_scale(tmp_path, capsys, systems):
    def reported():
        data = json.loads((tmp_path / "fakesys" / "claims.json").read_text())
        return [(c["id"].split("/")[1], c["scale"]) for c in data["claims"]]

    base = ["reproduce", "fakesys", "--out", str(tmp_path)]
    assert run([*base, "--scale", "smoke", "--claim", "needs-cluster"], systems) == 0
    assert "fakesys: 1 claim(s)" in capsys.readouterr().out
    assert reported() == [("needs-cluster-v2", "smoke")]
    assert run([*base, "--scale", "smoke", "--claim", "mean-consistent"], systems) == 0
    assert reported() == [("mean-consistent-v2", "smoke"), ("needs-cluster-v2", "smoke")]
    assert run([*base, "--scale", "small", "--seeds", "1", "--claim", "biased"], systems) == 0
    assert reported() == [("biased-variance-unbiased-v2", "small")], "other scales are not mixed in"


def test_partial_update_readme_refuses_a_report_that_does_not_match_the_readme(tmp_path, monkeypatch, capsys):
    from icml26.report import readme_verdicts

    copy = tmp_path / "fakecopy"
    shutil.copytree(ROOT / "tests" / "fakesys", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] == "fakecopy"]:  # a copy imported by another test
        monkeypatch.delitem(sys.modules, name)
    systems = {"fakecopy": SystemSpec("fakecopy", "t", "s", status="implemented", package="fakecopy")}
    base = ["reproduce", "fakecopy", "--scale", "smoke", "--update-readme"]
    assert run([*base, "--out", str(tmp_path / "a")], systems) == 0
    # a partial run against the report that wrote the README is merged into it
    assert run([*base, "--out", str(tmp_path / "a"), "--claim", "needs-cluster"], systems) == 0
    assert readme_verdicts(copy / "README.md") == ["holds", "fails", "not-measured", "holds"]
    readme = (copy / "README.md").read_text()
    # against another run (other seeds, so other numbers) it is refused and the README is left alone
    assert (
        run(["reproduce", "fakecopy", "--scale", "smoke", "--seeds", "2", "--out", str(tmp_path / "b")], systems) == 0
    )
    capsys.readouterr()
    assert run([*base, "--out", str(tmp_path / "b"), "--claim", "needs-cluster"], systems) == 2
    assert "does not match the README's rows" in one_line_error(capsys)
    assert (copy / "README.md").read_text() == readme


def test_reproduce_all_runs_only_implemented_systems(tmp_path, capsys, fake_spec):
    # the real systems' smoke claims already run in test_registry; here one implemented and one planned system
    planned = dataclasses.replace(SYSTEMS["noisypower"], status="planned")
    systems = {"fakesys": fake_spec, "noisypower": planned}
    assert run(["reproduce", "--all", "--scale", "smoke", "--out", str(tmp_path)], systems) == 0
    assert {p.parent.name for p in tmp_path.glob("*/claims.json")} == {"fakesys"}
    assert "Planned: not implemented yet." in (tmp_path / "index.html").read_text()


def test_a_crashing_claim_makes_reproduce_exit_1(tmp_path, monkeypatch, systems, capsys):
    import fakesys.claims
    from icml26.claims import claim

    @claim("fakesys/crash-v1", statement="crashes", paper="none", control="none")
    def crash(scale, seed, control=False):
        raise RuntimeError("boom")

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, crash])
    assert run(["reproduce", "fakesys", "--scale", "smoke", "--out", str(tmp_path)], systems) == 1
    assert "error" in capsys.readouterr().out
    assert json.loads((tmp_path / "fakesys" / "claims.json").read_text())["claims"][-1]["verdict"] == "error"


def test_reproduce_update_readme_rewrites_the_system_readme(tmp_path, monkeypatch, capsys):
    copy = tmp_path / "fakecopy"
    shutil.copytree(ROOT / "tests" / "fakesys", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] == "fakecopy"]:  # a copy imported by another test
        monkeypatch.delitem(sys.modules, name)
    spec = SystemSpec("fakecopy", "t", "s", status="implemented", package="fakecopy")
    assert (
        run(
            ["reproduce", "fakecopy", "--scale", "smoke", "--update-readme", "--out", str(tmp_path / "r")],
            {"fakecopy": spec},
        )
        == 0
    )
    from icml26.report import readme_verdicts

    assert readme_verdicts(copy / "README.md") == ["holds", "fails", "not-measured", "holds"]
    assert "negative of   fakesys/mean-consistent-v2 (seed 0, 1/1)" in capsys.readouterr().err
    text = (copy / "README.md").read_text()
    assert "| positive control |" in text and "| `averaging` | averaging n draws |" in text
    assert run(["list"], {"fakecopy": spec}) == 0
    assert "fakecopy       implemented  2/1/0/1 " in capsys.readouterr().out  # holds/fails/no-power/not-measured


def test_dispatch_to_a_system_cli(capsys, systems):
    assert run(["fakesys", "mean", "1", "2", "6"], systems) == 0
    assert capsys.readouterr().out.strip() == "3.0"
    assert run(["fakesys", "--help"], systems) == 0
    assert "usage: icml26 fakesys" in capsys.readouterr().out
    assert run(["fakesys", "nosuchverb"], systems) == 2


def test_a_system_value_error_is_one_line_exit_2(capsys, systems):
    assert run(["fakesys", "mean"], systems) == 2
    assert "fakesys: sample_mean needs at least one value" in one_line_error(capsys)


def test_missing_optional_dependency_gives_an_install_hint(capsys, monkeypatch):
    spec = SystemSpec("ghost", "t", "s", status="implemented", extra="ghostextra", package="ghostpkg")
    monkeypatch.setattr(cli._registry, "load_entry", _raise_missing("some_heavy_dependency"))
    assert run(["ghost", "verb"], {"ghost": spec}) == 2
    assert "pip install 'icml26[ghostextra]'" in one_line_error(capsys)


def test_system_help_works_without_its_extra(capsys, monkeypatch):
    spec = SystemSpec("ghost", "Ghost paper", "s", status="implemented", extra="ghostextra", package="ghostpkg")
    monkeypatch.setattr(cli._registry, "load_entry", _raise_missing("some_heavy_dependency"))
    assert run(["ghost", "--help"], {"ghost": spec}) == 0
    shown = capsys.readouterr().out
    assert "Ghost paper" in shown and "pip install 'icml26[ghostextra]'" in shown


def test_warnings_on_the_command_line_name_no_source_path(capsys, monkeypatch, systems):
    import warnings

    def warn(argv):
        warnings.warn("the data look odd", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli._registry, "load_entry", lambda entry, default=None: warn)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert run(["fakesys", "x"], systems) == 0
    err = capsys.readouterr().err
    assert err.strip() == "warning: the data look odd", err


def test_quiet_turns_progress_off_and_reaches_no_system_parser(capsys, monkeypatch, systems):
    from icml26._util import progress as prog

    seen = []
    monkeypatch.setattr(cli._registry, "load_entry", lambda entry, default=None: lambda argv: seen.append(argv) or 0)
    monkeypatch.setattr(prog, "QUIET", False)
    assert run(["fakesys", "x", "--quiet"], systems) == 0 and prog.QUIET and seen == [["x"]]
    monkeypatch.setattr(prog, "QUIET", False)
    assert run(["-q", "fakesys", "y"], systems) == 0 and prog.QUIET and seen[-1] == ["y"]
    for argv in (["--no-progress", "fakesys", "z"], ["fakesys", "z", "--no-progress"]):
        monkeypatch.setattr(prog, "QUIET", False)
        assert run(argv, systems) == 0 and prog.QUIET and seen[-1] == ["z"]


def test_an_unknown_option_before_the_system_id_is_refused_not_dropped(capsys, monkeypatch, systems):
    monkeypatch.setattr(cli._registry, "load_entry", lambda entry, default=None: lambda argv: 0)
    assert run(["--bogus-flag", "fakesys", "x"], systems) == 2
    assert "unknown option '--bogus-flag' before 'fakesys'" in one_line_error(capsys)


def _raise_missing(name):
    def load_entry(entry, default=None):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    return load_entry


def _fresh_python(code):
    env = {**os.environ, "PYTHONPATH": ""}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)


def test_import_icml26_and_list_load_no_system_and_no_torch():
    code = (
        "import sys, icml26, icml26.cli as c, io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()): c.main(['list'])\n"
        "heavy = [m for m in ('torch', 'scipy', 'matplotlib', 'pandas', 'sklearn') if m in sys.modules]\n"
        "systems = [m for m in sys.modules if m.count('.') >= 1 and m.split('.')[1] in c._registry.SYSTEMS]\n"
        "print(heavy, systems)\n"
    )
    assert _fresh_python(code).stdout.strip() == "[] []"


def test_icml26_list_imports_no_heavy_library():
    """`icml26 list` reads the registry and the READMEs only: no torch, pandas, … (each costs seconds on a cold start).
    Checked by what is imported, not by timing (tests never time things; the start-up time is benchmarked)."""
    code = (
        "import sys, contextlib, io\n"
        "from icml26.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['list'])\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"icml26 list imports {out.stdout.strip()}"


def test_partial_update_readme_never_drops_rows_and_takes_the_current_labels(tmp_path, monkeypatch, capsys):
    from icml26.report import readme_verdicts

    copy = tmp_path / "fakecopy"
    shutil.copytree(ROOT / "tests" / "fakesys", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] == "fakecopy"]:
        monkeypatch.delitem(sys.modules, name)
    systems = {"fakecopy": SystemSpec("fakecopy", "t", "s", status="implemented", package="fakecopy")}
    base = ["reproduce", "fakecopy", "--scale", "smoke", "--update-readme"]
    assert run([*base, "--out", str(tmp_path / "a")], systems) == 0
    before = (copy / "README.md").read_text()
    # a fresh --out has no report of the other claims: their README rows would be lost, so it is refused
    capsys.readouterr()
    assert run([*base, "--out", str(tmp_path / "empty"), "--claim", "needs-cluster"], systems) == 2
    assert "would lose their rows" in one_line_error(capsys)
    assert (copy / "README.md").read_text() == before
    # a label added to a claim after the full run reaches the README through a partial run
    import dataclasses

    import fakecopy.claims

    labelled = dataclasses.replace(fakecopy.claims.mean_consistent, by_construction="built to hold")
    monkeypatch.setattr(fakecopy.claims, "CLAIMS", [labelled, *fakecopy.claims.CLAIMS[1:]])
    assert run([*base, "--out", str(tmp_path / "a"), "--claim", "needs-cluster"], systems) == 0
    assert readme_verdicts(copy / "README.md")[0] == "holds by construction"


def test_output_into_a_closed_pipe_is_quiet():
    """`icml26 list | head -0`: the reader has gone; no BrokenPipeError traceback, exit 0."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from icml26.cli import main; sys.exit(main(['list', '--markdown']))"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader leaves before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def _readme_commands(spec):
    """Every ``icml26 <id> ...`` command line in the code blocks of a system README (continuations joined,
    comments and ``[optional]`` parts dropped, a leading ``printf ... |`` pipe allowed)."""
    import re

    text = spec.readme.read_text()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            match = re.search(r"(?:^|\|\s*)icml26\s+" + spec.id + r"\s+(.*)$", line)
            if match:
                command = re.sub(r"\s+#.*$", "", match.group(1))
                command = re.sub(r"\[[^\]]*\]", "", command)
                yield re.split(r" \| | > | && ", command)[0]


@pytest.mark.parametrize("system_id", [s.id for s in SYSTEMS.values() if s.implemented])
def test_every_command_a_readme_shows_parses(system_id, capsys):
    """A README example with a renamed or removed flag is the first thing a new user hits."""
    import importlib
    import shlex

    spec = SYSTEMS[system_id]
    parser = importlib.import_module(f"{spec.module}.cli").build_parser()
    commands = list(_readme_commands(spec))
    assert commands, f"{system_id}: its README shows no 'icml26 {system_id} ...' command"
    for command in commands:
        try:
            parser.parse_args(shlex.split(command))
        except SystemExit as exc:
            assert exc.code in (0, None), f"README command 'icml26 {system_id} {command}': {capsys.readouterr().err}"


def test_probes_only_updates_the_mechanisms_column_and_nothing_else(tmp_path, monkeypatch, capsys):
    copy = tmp_path / "fakecopy"
    shutil.copytree(ROOT / "tests" / "fakesys", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.split(".")[0] == "fakecopy"]:
        monkeypatch.delitem(sys.modules, name)
    spec = SystemSpec("fakecopy", "t", "s", status="implemented", package="fakecopy")
    before = (copy / "README.md").read_text()
    argv = ["reproduce", "fakecopy", "--scale", "smoke", "--probes-only", "--update-readme", "--out", str(tmp_path)]
    assert run(argv, {"fakecopy": spec}) == 0
    after = (copy / "README.md").read_text()
    row = next(line for line in after.splitlines() if line.startswith("| `averaging`"))
    assert "(live, 1 seeds)" in row.split("|")[5] and "(live, 3 seeds)" in row.split("|")[6]  # smoke new, small kept
    assert after.split("<!-- mechanisms:begin")[0] == before.split("<!-- mechanisms:begin")[0]  # claims untouched
    assert "live   averaging = " in capsys.readouterr().out
    assert run([*argv, "--claim", "x"], {"fakecopy": spec}) == 2


def test_a_verbs_missing_optional_dependency_is_one_line_with_the_extra(capsys, monkeypatch, systems):
    def verb_needing_ray(argv):
        raise ModuleNotFoundError("No module named 'ray'", name="ray")

    monkeypatch.setattr(cli, "_import_entry", lambda spec, entry, default=None: verb_needing_ray)
    assert run(["fakesys", "search", "--ray-address", "local"], systems) == 2
    message = one_line_error(capsys)
    assert "fakesys: this command needs the missing package 'ray': pip install 'icml26[" in message
    assert "ray" in message.split("icml26[")[1] and "Traceback" not in message
    assert cli.install_hint("no_such_module_xyz") == "pip install no_such_module_xyz"


def test_a_broken_install_is_one_line_and_a_missing_own_module_keeps_its_traceback(capsys, monkeypatch, systems):
    def broken(argv):
        raise ImportError("cannot import name 'nope' from 'torchaudio'", name="torchaudio")

    monkeypatch.setattr(cli, "_import_entry", lambda spec, entry, default=None: broken)
    assert run(["fakesys", "x"], systems) == 2
    message = one_line_error(capsys)
    assert "'torchaudio' failed to import" in message and "cannot import name 'nope'" in message

    def own(argv):
        raise ModuleNotFoundError("No module named 'icml26.fakesys.gone'", name="icml26.fakesys.gone")

    monkeypatch.setattr(cli, "_import_entry", lambda spec, entry, default=None: own)
    with pytest.raises(ModuleNotFoundError):
        cli.dispatch("fakesys", ["x"], systems)


def test_reproduce_json_needs_a_file(capsys, systems):
    assert run(["reproduce", "fakesys", "--json", "-"], systems) == 2
    assert "needs a file path" in one_line_error(capsys)


HEAVY = ("torch", "pandas", "sklearn", "transformers", "xarray", "sympy", "mne", "pyscf", "anndata", "gymnasium")


@pytest.mark.parametrize("system_id", sorted(s.id for s in SYSTEMS.values() if s.implemented))
def test_system_help_imports_no_heavy_library(system_id):
    """`icml26 ID --help` and every `icml26 ID VERB --help` build parsers only: no torch, pandas, scikit-learn, … is
    imported (each costs seconds on a cold start; issue 52 asks --help under 1.5 s). Checked by what is imported,
    not by timing."""
    code = (
        "import sys, contextlib, io\n"
        "from icml26.cli import main\n"
        f"from icml26.{system_id}.cli import build_parser\n"
        "from cli_harness import verbs\n"
        f"argvs = [['{system_id}', '--help']] + [['{system_id}', v, '--help'] for v in verbs(build_parser()) if v]\n"
        "for argv in argvs:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "", f"{system_id} --help imports {out.stdout.strip()}"
