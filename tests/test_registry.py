"""The registry: 19 systems matching the paper notes; every implemented system honours its contract."""

from pathlib import Path

import pytest

from icml26 import cli
from icml26.registry import SYSTEMS, SystemSpec, get, implemented, load_entry
from icml26.testing import check_system

ROOT = Path(__file__).resolve().parents[1]


def test_nineteen_systems_with_valid_fields():
    assert len(SYSTEMS) == 19
    for spec in SYSTEMS.values():
        assert spec.title and spec.summary and spec.status in ("planned", "implemented")
        assert spec.module == f"icml26.{spec.id}"


def test_spec_validation_and_lookup():
    with pytest.raises(ValueError, match="lower-case"):
        SystemSpec("Bad-Id", "t", "s")
    with pytest.raises(ValueError, match="status"):
        SystemSpec("ok", "t", "s", status="done")
    with pytest.raises(KeyError, match="unknown system 'nosuch'"):
        get("nosuch")
    with pytest.raises(ValueError, match="module:attr"):
        load_entry("icml26.registry")
    assert load_entry("icml26.registry:get") is get


def test_implemented_systems_have_a_folder_tests_and_a_benchmark():
    for spec in implemented():
        assert spec.folder.is_dir(), spec.id
        assert list((ROOT / "tests" / spec.id).glob("test_*.py")), f"{spec.id} has no tests/{spec.id}/"
        assert list((ROOT / "benchmarks").glob(f"{spec.id}_*.py")), f"{spec.id} has no benchmark"


def test_planned_systems_have_no_half_built_folder():
    for spec in SYSTEMS.values():
        if not spec.implemented:
            assert not spec.folder.exists(), f"{spec.id} has a folder but is still 'planned'"


@pytest.mark.parametrize("system_id", [s.id for s in implemented()])
def test_implemented_system_honours_the_contract(system_id):
    problems = check_system(SYSTEMS[system_id])
    assert not problems, "\n".join(problems)


def test_the_contract_checker_passes_the_fake_system(fake_spec):
    assert check_system(fake_spec) == []


def test_the_contract_checker_catches_a_broken_system(tmp_path, monkeypatch):
    pkg = tmp_path / "brokensys"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""A different paper altogether."""\n')
    (pkg / "claims.py").write_text(
        "from icml26.claims import claim, ClaimResult\n"
        "@claim('other/x-v1', statement='s', control='c')\n"
        "def x(scale, seed, control=False):\n    return ClaimResult('holds')\n"
        "@claim('brokensys/forgotten-v1', statement='s', paper='p', control='c')\n"
        "def forgotten(scale, seed, control=False):\n    return ClaimResult('holds')\n"
        "CLAIMS = [x]\n"
    )
    (pkg / "cli.py").write_text("def main(argv):\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = SystemSpec("brokensys", "The Right Title", "s", status="implemented", package="brokensys")
    problems = "\n".join(check_system(spec))
    for expected in [
        "must name the paper",
        "__all__",
        "missing",
        "must start with 'brokensys/'",
        "say where in the paper",
        "not listed in CLAIMS",
        "exited 3",
        "has no build_parser()",
    ]:
        assert expected in problems


def test_the_contract_checker_rejects_a_claim_whose_control_holds(fake_spec, monkeypatch):
    import fakesys.claims
    from fakesys.uncontrolled import order_matters

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, order_matters])
    problems = "\n".join(check_system(fake_spec))
    assert "fakesys/order-matters-v1: its negative control (the draws are shuffled" in problems
    assert "says 'holds' where it must say 'fails'" in problems
    assert "its negative control measured exactly what the claim measured" in problems  # shuffling changed nothing


def test_the_contract_checker_rejects_a_claim_without_a_control(fake_spec, monkeypatch):
    import dataclasses

    import fakesys.claims

    bare = dataclasses.replace(fakesys.claims.mean_consistent, id="fakesys/bare-v1", control="")
    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, bare])
    assert "fakesys/bare-v1: every claim needs a negative control" in "\n".join(check_system(fake_spec))


def test_the_contract_checker_rejects_a_control_that_crashes(fake_spec, monkeypatch):
    import fakesys.claims
    from icml26.claims import ClaimResult, claim

    @claim("fakesys/fragile-v1", statement="s", paper="p", control="c")
    def fragile(scale, seed, control=False):
        if control:
            raise RuntimeError("control broke")
        return ClaimResult("holds")

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, fragile])
    problems = "\n".join(check_system(fake_spec))
    assert "fakesys/fragile-v1: negative control crashed" in problems and "control broke" in problems


def test_the_contract_checker_rejects_a_control_that_measures_something_else(fake_spec, monkeypatch):
    import fakesys.claims
    from icml26.claims import ClaimResult, claim

    @claim("fakesys/rigged-v1", statement="s", paper="p", control="c")
    def rigged(scale, seed, control=False):
        if control:  # no measurement at all, only the verdict the checker wants
            return ClaimResult("fails")
        return ClaimResult("holds", measured={"abs error": 0.01})

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, rigged])
    assert "fakesys/rigged-v1: its negative control measures []" in "\n".join(check_system(fake_spec))


def test_readme_system_table_is_current():
    readme = (ROOT / "README.md").read_text()
    table = cli.list_markdown(SYSTEMS)
    assert table in readme, "README system table is stale: paste the output of 'icml26 list --markdown'"


# ---- contract v3: positive controls, A/A negative controls, mechanisms, measures validated both ways ----


def test_the_contract_checker_rejects_a_claim_without_a_positive_control(fake_spec, monkeypatch):
    import fakesys.claims
    from fakesys.uncontrolled import no_positive

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, no_positive])
    problems = check_system(fake_spec)
    assert len(problems) == 1 and problems[0].startswith("fakesys/no-positive-v1: no positive control")
    # under contract v2 (check_system(v3=False), for code written before positive controls) the same claim passes
    assert check_system(fake_spec, v3=False) == []


def test_the_contract_checker_rejects_a_negative_control_that_reuses_the_baseline(fake_spec, monkeypatch):
    import fakesys.claims
    from fakesys.uncontrolled import reused_baseline

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, reused_baseline])
    problems = check_system(fake_spec)
    assert len(problems) == 1, problems
    assert "fakesys/reused-baseline-v1: its negative control's 'gain' is exactly 0 on every seed" in problems[0]
    assert "A/A run" in problems[0]


def test_a_discrete_statistic_may_tie_exactly(fake_spec, monkeypatch):
    import dataclasses

    import fakesys.claims
    from fakesys.uncontrolled import reused_baseline
    from icml26.claims import Interval

    discrete = dataclasses.replace(reused_baseline, judge=(Interval("gain", above=0.0, discrete=True),))
    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, discrete])
    assert check_system(fake_spec) == []


def test_the_contract_checker_rejects_a_measure_that_fails_its_null_check(fake_spec, monkeypatch):
    import fakesys.claims
    from fakesys.uncontrolled import blind_measure

    monkeypatch.setattr(fakesys.claims, "MEASURES", [*fakesys.claims.MEASURES, blind_measure])
    problems = "\n".join(check_system(fake_spec))
    assert "measure contiguity: the null input scores 1, outside the null band [0, 0.6]" in problems
    assert "the truth (1) does not score best by 0; null = 1" in problems


def test_the_contract_checker_wants_mechanisms_and_measures(fake_spec, monkeypatch):
    import dataclasses

    import fakesys.claims

    monkeypatch.setattr(fakesys.claims, "MEASURES", [])
    assert "validate the claims' measures both ways" in "\n".join(check_system(fake_spec, run_smoke_claims=False))
    monkeypatch.delattr(fakesys.claims, "MECHANISMS")
    assert "list the paper's credited mechanisms" in "\n".join(check_system(fake_spec, run_smoke_claims=False))
    monkeypatch.setattr(fakesys.claims, "MECHANISMS", [fakesys.claims.averaging], raising=False)
    ghost = dataclasses.replace(fakesys.claims.mean_consistent, id="fakesys/ghost-v1", mechanisms=("gates",))
    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, ghost])
    assert "fakesys/ghost-v1: relies on mechanism 'gates', which MECHANISMS lacks" in "\n".join(
        check_system(fake_spec, run_smoke_claims=False)
    )


def test_a_positive_control_that_crashes_is_caught(fake_spec, monkeypatch):
    import fakesys.claims
    from icml26.claims import Arm, ClaimResult, claim

    @claim("fakesys/fragile-positive-v1", statement="s", paper="p", control="c", positive="p")
    def fragile(scale, seed, arm=Arm.CLAIM):
        if arm is Arm.POSITIVE:
            raise RuntimeError("planting broke")
        return ClaimResult("holds" if arm is Arm.CLAIM else "fails", measured={"x": float(arm is Arm.CLAIM)})

    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, fragile])
    problems = "\n".join(check_system(fake_spec))
    assert "fakesys/fragile-positive-v1: positive control crashed" in problems and "planting broke" in problems


@pytest.mark.slow
@pytest.mark.parametrize("system_id", [s.id for s in implemented()])
def test_negative_controls_fail_over_five_smoke_seeds(system_id):
    """CI runs each negative control on seed 0 only, and an A/A control judged on one seed is a coin flip: over
    seeds 0-4, aggregated as a small run aggregates them (by the interval for a judged claim), it must fail."""
    from icml26.claims import Arm, Scale, run_claim

    problems = []
    for c in load_entry(SYSTEMS[system_id].claims_entry):
        neg = run_claim(c, Scale.SMOKE, seeds=5, arm=Arm.NEGATIVE)
        if neg.verdict == "holds":
            problems.append(f"{c.id}: negative control holds over smoke seeds 0-4 ({neg.seed_verdicts})")
    assert not problems, "\n".join(problems)


def test_an_aa_control_that_holds_on_one_smoke_seed_by_chance_is_judged_on_three(fake_spec, monkeypatch):
    import fakesys.claims
    from fakesys.uncontrolled import coin_flip_control

    lucky = coin_flip_control({0})  # holds on seed 0 only: fails on most of seeds 0, 1, 2
    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS, lucky])
    assert check_system(fake_spec) == []
    broken = coin_flip_control({0, 2})  # holds on two of the three
    monkeypatch.setattr(fakesys.claims, "CLAIMS", [*fakesys.claims.CLAIMS[:-1], broken])
    problems = "\n".join(check_system(fake_spec))
    assert "fakesys/coin-flip-control-v1: its negative control (A/A: a second median" in problems
    assert "holds on smoke seed 0, then says 'fails' and 'holds' on seeds 1 and 2" in problems
