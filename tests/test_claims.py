"""The claims runner, proven on the fake system and on claims built in the tests."""

import math

import numpy as np
import pytest

from icml26.claims import (
    ClaimResult,
    Scale,
    aggregate_verdict,
    claim,
    run_claim,
    run_claims,
)


def test_claim_id_must_be_versioned():
    for bad in ["nosystem", "fake/no-version", "Fake/x-v1", "fake/x-v", "fake/ x-v1"]:
        with pytest.raises(ValueError, match="claim id"):
            claim(bad, statement="s")
    with pytest.raises(ValueError, match="statement"):
        claim("fake/x-v1", statement="  ")


def test_claim_result_validates_its_fields():
    with pytest.raises(ValueError, match="verdict"):
        ClaimResult("maybe")
    with pytest.raises(ValueError, match="reason"):
        ClaimResult("not-measured")
    with pytest.raises(TypeError, match="'acc' must be a number"):
        ClaimResult("holds", measured={"acc": "high"})
    r = ClaimResult("holds", measured={"acc": np.float32(0.5)}, paper={"acc": 0.9, "rate": "O(1/n)"})
    assert type(r.measured["acc"]) is float and r.paper["rate"] == "O(1/n)"


def test_scale_parsing_and_default_seeds():
    assert Scale.parse("small") is Scale.SMALL
    with pytest.raises(ValueError, match="smoke, small, paper"):
        Scale.parse("huge")
    assert Scale.SMOKE.default_seeds == 1 and Scale.SMALL.default_seeds >= 3


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["holds", "holds", "holds"], "holds"),
        (["holds", "fails", "holds"], "fails"),
        (["not-measured"] * 3, "not-measured"),
        (["holds", "not-measured"], "not-measured"),
        (["holds", "error"], "error"),
        (["fails", "error"], "error"),
    ],
)
def test_a_claim_holds_only_if_it_holds_on_every_seed(verdicts, expected):
    assert aggregate_verdict(verdicts) == expected


def test_runner_on_the_fake_system_gives_each_verdict(tmp_path):
    from fakesys.claims import CLAIMS

    summaries = run_claims(CLAIMS, Scale.SMOKE, seeds=3, figure_dir=tmp_path)
    assert [s.verdict for s in summaries] == ["holds", "fails", "not-measured"]
    holds, fails, unmeasured = summaries
    assert holds.seeds == [0, 1, 2] and holds.seed_verdicts == ["holds"] * 3
    assert holds.figures == ["mean-consistent-v1-error.png"]
    assert (tmp_path / holds.figures[0]).stat().st_size > 1000
    assert "E[var]" in fails.reason and fails.paper == {"E[var]": 1.0}
    assert unmeasured.reason.startswith("needs a cluster") and unmeasured.measured_mean == {}
    assert holds.versions["numpy"] == np.__version__ and "python" in holds.versions
    assert all(s.wall_time_s >= 0 for s in summaries)


def test_runner_aggregates_mean_and_sample_std_over_seeds():
    values = {0: 1.0, 1: 2.0, 5: 6.0}

    @claim("fake/echo-v1", statement="echo the seed's value", paper="none")
    def echo(scale, seed):
        return ClaimResult(
            "holds", measured={"v": values[seed], "twice": 2 * values[seed]}, baselines={"b": -values[seed]}
        )

    s = run_claim(echo, "small", seeds=[0, 1, 5])
    assert s.seeds == [0, 1, 5] and s.scale == "small"
    assert s.measured_mean["v"] == pytest.approx(np.mean([1, 2, 6]))
    assert s.measured_std["v"] == pytest.approx(np.std([1, 2, 6], ddof=1))
    assert s.measured_std["twice"] == pytest.approx(2 * np.std([1, 2, 6], ddof=1))
    assert s.baselines_mean["b"] == pytest.approx(-3.0)


def test_runner_ignores_nan_seeds_in_the_mean_and_keeps_only_common_keys():
    @claim("fake/partial-v1", statement="s", paper="none")
    def partial(scale, seed):
        measured = {"x": math.nan if seed == 1 else float(seed)}
        if seed == 0:
            measured["only-seed-0"] = 1.0
        return ClaimResult("holds", measured=measured)

    s = run_claim(partial, "smoke", seeds=[0, 1, 2])
    assert s.measured_mean == {"x": 1.0}


def test_a_crashing_claim_is_an_error_with_its_traceback_not_a_lost_run(caplog):
    calls = []

    @claim("fake/crash-v1", statement="crashes on seed 1", paper="none")
    def crash(scale, seed):
        calls.append(seed)
        if seed == 1:
            raise RuntimeError("boom on seed 1")
        return ClaimResult("holds", measured={"x": 1.0})

    s = run_claim(crash, "smoke", seeds=3)
    assert s.verdict == "error" and s.seed_verdicts == ["holds", "error"]
    assert "RuntimeError: boom on seed 1" in s.error
    assert calls == [0, 1], "the runner stops at the first crash"
    assert "crashed" in caplog.text


def test_a_claim_must_return_a_claim_result():
    @claim("fake/wrong-type-v1", statement="returns a dict", paper="none")
    def wrong(scale, seed):
        return {"verdict": "holds"}

    s = run_claim(wrong, "smoke")
    assert s.verdict == "error" and "not ClaimResult" in s.error


def test_runner_needs_a_seed():
    from fakesys.claims import needs_cluster

    with pytest.raises(ValueError, match="seed"):
        run_claim(needs_cluster, "smoke", seeds=[])


def test_figures_of_later_seeds_are_closed_not_saved(tmp_path):
    import matplotlib.pyplot as plt

    from fakesys.claims import mean_consistent

    run_claim(mean_consistent, "smoke", seeds=2, figure_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mean-consistent-v1-error.png"]
    assert plt.get_fignums() == []


def test_runner_reports_progress_before_each_seed():
    from fakesys.claims import needs_cluster

    started = []
    run_claims([needs_cluster], "smoke", seeds=[4, 9], on_seed=lambda c, seed, i, n: started.append((c.id, seed, i, n)))
    assert started == [("fakesys/needs-cluster-v1", 4, 0, 2), ("fakesys/needs-cluster-v1", 9, 1, 2)]
