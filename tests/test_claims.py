"""The claims runner, proven on the fake system and on claims built in the tests."""

import math

import numpy as np
import pytest

from icml26.claims import (
    ClaimResult,
    ClaimSummary,
    Interval,
    Scale,
    aggregate_verdict,
    claim,
    run_claim,
    run_claims,
    t_quantile_975,
)


def test_claim_id_must_be_versioned():
    for bad in ["nosystem", "fake/no-version", "Fake/x-v1", "fake/x-v", "fake/ x-v1"]:
        with pytest.raises(ValueError, match="claim id"):
            claim(bad, statement="s", control="c")
    with pytest.raises(ValueError, match="statement"):
        claim("fake/x-v1", statement="  ", control="c")


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
    assert [s.verdict for s in summaries] == ["holds", "fails", "not-measured", "holds"]
    holds, fails, unmeasured, _ = summaries
    assert holds.seeds == [0, 1, 2] and holds.seed_verdicts == ["holds"] * 3
    assert holds.figures == ["mean-consistent-v2-error.png"]
    assert (tmp_path / holds.figures[0]).stat().st_size > 1000
    assert "E[var]" in fails.reason and fails.paper == {"E[var]": 1.0}
    assert unmeasured.reason.startswith("needs a cluster") and unmeasured.measured_mean == {}
    assert holds.versions["numpy"] == np.__version__ and "python" in holds.versions
    assert all(s.wall_time_s >= 0 for s in summaries)


def test_runner_aggregates_mean_and_sample_std_over_seeds():
    values = {0: 1.0, 1: 2.0, 5: 6.0}

    @claim("fake/echo-v1", statement="echo the seed's value", paper="none", control="none")
    def echo(scale, seed, control=False):
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
    @claim("fake/partial-v1", statement="s", paper="none", control="none")
    def partial(scale, seed, control=False):
        measured = {"x": math.nan if seed == 1 else float(seed)}
        if seed == 0:
            measured["only-seed-0"] = 1.0
        return ClaimResult("holds", measured=measured)

    s = run_claim(partial, "smoke", seeds=[0, 1, 2])
    assert s.measured_mean == {"x": 1.0}


def test_a_crashing_claim_is_an_error_with_its_traceback_not_a_lost_run(caplog):
    calls = []

    @claim("fake/crash-v1", statement="crashes on seed 1", paper="none", control="none")
    def crash(scale, seed, control=False):
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
    @claim("fake/wrong-type-v1", statement="returns a dict", paper="none", control="none")
    def wrong(scale, seed, control=False):
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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mean-consistent-v2-error.png"]
    assert plt.get_fignums() == []


def test_runner_reports_progress_before_each_seed():
    from fakesys.claims import needs_cluster

    started = []
    run_claims([needs_cluster], "smoke", seeds=[4, 9], on_seed=lambda c, s, i, n, ctl: started.append((c.id, s, i, n)))
    assert started == [("fakesys/needs-cluster-v2", 4, 0, 2), ("fakesys/needs-cluster-v2", 9, 1, 2)]


# --- negative controls and judged (interval) claims -------------------------------------------------------


def test_every_claim_needs_a_negative_control_it_can_apply():
    with pytest.raises(TypeError, match="control"):
        claim("fake/x-v1", statement="s", paper="p")  # control= is required
    with pytest.raises(ValueError, match="negative control"):
        claim("fake/x-v1", statement="s", paper="p", control="  ")
    with pytest.raises(TypeError, match=r"must accept arm=Arm\.CLAIM"):

        @claim("fake/x-v1", statement="s", paper="p", control="c")
        def no_control_argument(scale, seed):
            return ClaimResult("holds")


def test_the_control_runs_the_same_claim_with_control_true():
    calls = []

    @claim("fake/spy-v1", statement="s", paper="p", control="c")
    def spy(scale, seed, control=False):
        calls.append((scale, seed, control))
        return ClaimResult("fails" if control else "holds")

    s = run_claim(spy, "smoke", seeds=[3, 4], with_control=True)
    assert calls == [(Scale.SMOKE, 3, False), (Scale.SMOKE, 4, False), (Scale.SMOKE, 3, True), (Scale.SMOKE, 4, True)]
    assert s.verdict == "holds" and s.control.verdict == "fails" and s.control.is_control and s.control_ok
    assert s.status == "holds" and s.control_description == "c"
    only_control = run_claim(spy, "smoke", seeds=[1], control=True)
    assert only_control.verdict == "fails" and only_control.control is None


def test_an_unmeasurable_claim_passes_with_an_unmeasurable_control_but_a_measured_one_must_fail():
    from fakesys.claims import needs_cluster

    s = run_claim(needs_cluster, "smoke", with_control=True)
    assert s.verdict == s.control.verdict == "not-measured" and s.control_ok

    @claim("fake/dodge-v1", statement="s", paper="p", control="c")
    def dodge(scale, seed, control=False):
        return ClaimResult("not-measured", reason="dodged") if control else ClaimResult("holds")

    assert not run_claim(dodge, "smoke", with_control=True).control_ok


def test_interval_rules():
    with pytest.raises(ValueError, match="needs a threshold"):
        Interval("x")
    with pytest.raises(ValueError, match="must be below"):
        Interval("x", above=1.0, below=0.5)
    band = Interval("slope", above=0.3, below=0.7)
    assert band.describe() == "0.3 < slope < 0.7"
    assert band.judge([0.5, 0.52, 0.48])["holds"]
    assert not band.judge([0.5, 0.8, 0.2])["holds"], "a wide interval leaves the band"
    one = Interval("gain", above=0.0).judge([0.1])
    assert one["n"] == 1 and one["holds"] and one["low"] == one["high"] == 0.1
    assert not Interval("gain", above=0.0).judge([0.1, math.nan, 0.2])["holds"], "a seed without a value fails"
    stats = Interval("gain", above=0.0).judge([1.0, 2.0, 3.0])
    half = 4.303 * 1.0 / math.sqrt(3)  # t_{0.975, 2} * sd / sqrt(n)
    assert stats["mean"] == 2.0 and stats["low"] == pytest.approx(2 - half) and stats["high"] == pytest.approx(2 + half)
    assert stats["seeds_on_side"] == 3


def test_t_quantiles_match_scipy():
    from scipy import stats

    for df in [1, 2, 4, 10, 29, 30, 31, 50, 200]:
        assert t_quantile_975(df) == pytest.approx(stats.t.ppf(0.975, df), rel=2e-3)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_a_judged_claim_is_read_from_the_interval_not_from_every_seed():
    values = {0: 0.5, 1: 0.6, 2: -0.05, 3: 0.55, 4: 0.45}  # one seed on the wrong side, the mean clearly above 0

    @claim("fake/paired-v1", statement="s", paper="p", control="c", judge=Interval("gain", above=0.0))
    def paired(scale, seed, control=False):
        gain = values[seed] - (0.5 if control else 0.0)
        return ClaimResult("holds" if gain > 0 else "fails", measured={"gain": gain})

    s = run_claim(paired, "small", with_control=True)
    assert s.seeds == [0, 1, 2, 3, 4] and s.seed_verdicts.count("fails") == 1
    assert s.verdict == "holds" and s.judged[0]["low"] > 0 and s.judged[0]["seeds_on_side"] == 4
    assert s.control.verdict == "fails" and "95% interval of gain" in s.control.reason
    assert paired.default_seeds("smoke") == 1 and paired.default_seeds("small") == 5


def test_a_judged_claim_must_report_its_value_and_follow_its_thresholds():
    @claim("fake/forgets-v1", statement="s", paper="p", control="c", judge=Interval("gain", above=0.0))
    def forgets(scale, seed, control=False):
        return ClaimResult("holds", measured={"other": 1.0})

    assert "did not measure them" in run_claim(forgets, "smoke").error

    @claim("fake/contradicts-v1", statement="s", paper="p", control="c", judge=Interval("gain", above=0.0))
    def contradicts(scale, seed, control=False):
        return ClaimResult("holds", measured={"gain": -1.0})

    assert "must follow the thresholds" in run_claim(contradicts, "smoke").error


def test_numbers_not_from_the_paper_name_their_source():
    with pytest.raises(ValueError, match="source in brackets"):
        ClaimResult("holds", elsewhere={"slope": 0.5})
    r = ClaimResult("holds", elsewhere={"slope [prototype]": np.float64(0.5), "note [peer paper]": "fast"})
    assert r.elsewhere == {"slope [prototype]": 0.5, "note [peer paper]": "fast"}


def test_summaries_round_trip_with_their_control_and_read_older_reports():
    from fakesys.claims import mean_consistent

    s = run_claim(mean_consistent, "smoke", with_control=True)
    again = ClaimSummary.from_dict(s.to_dict())
    assert again == s and isinstance(again.control, ClaimSummary)
    old = {k: v for k, v in s.to_dict().items() if k not in ("control", "per_seed", "judged", "elsewhere")}
    assert ClaimSummary.from_dict(old).control is None


def test_a_judged_claim_with_unmeasured_seeds_is_not_measured_not_judged_on_the_rest():
    @claim("fake/patchy-v1", statement="s", paper="p", control="c", judge=Interval("gain", above=0.0))
    def patchy(scale, seed, control=False):
        if seed > 0:
            return ClaimResult("not-measured", reason="no GPU on this seed")
        return ClaimResult("holds", measured={"gain": 1.0})

    s = run_claim(patchy, "small")
    assert s.verdict == "not-measured" and s.judged == []


def test_a_control_that_crashes_or_is_not_measured_proves_nothing():
    import dataclasses

    from icml26.report import status_class

    @claim("fake/crashing-control-v1", statement="s", paper="p", control="c")
    def crashing(scale, seed, control=False):
        if control:
            raise RuntimeError("boom")
        return ClaimResult("holds", measured={"x": 1.0})

    s = run_claim(crashing, "smoke", with_control=True)
    assert s.status == "holds; control error" and status_class(s.status) == "error"
    dodged = dataclasses.replace(s, control=dataclasses.replace(s.control, verdict="not-measured"))
    assert dodged.status == "holds; control not-measured" and status_class(dodged.status) == "unchecked"


# ---- contract v3: the three arms, no-power, mechanisms ----


def test_a_claim_runs_in_three_arms_and_control_true_still_means_the_negative_arm():
    from fakesys.claims import mean_beats_median
    from icml26.claims import Arm

    values = {a: mean_beats_median("smoke", 0, a).measured["MSE(median) - MSE(mean)"] for a in Arm}
    assert values[Arm.CLAIM] > 0.01 and values[Arm.POSITIVE] > 0.01 and abs(values[Arm.NEGATIVE]) < 0.01
    assert mean_beats_median("smoke", 0, control=True).measured == mean_beats_median("smoke", 0, "negative").measured
    with pytest.raises(ValueError, match="arm must be one of claim, negative, positive"):
        mean_beats_median("smoke", 0, "sideways")


def test_a_contract_v2_claim_has_no_positive_arm():
    from fakesys.uncontrolled import no_positive
    from icml26.claims import Arm

    assert no_positive.legacy and no_positive.arms == (Arm.CLAIM, Arm.NEGATIVE)
    with pytest.raises(ValueError, match="has no positive arm"):
        no_positive("smoke", 0, Arm.POSITIVE)
    with pytest.raises(TypeError, match=r"takes arm=Arm\.CLAIM, not control=False"):
        claim("fake/x-v1", statement="s", control="c", positive="p")(lambda scale, seed, control=False: None)


def test_a_claim_whose_positive_control_fails_reads_no_power_with_what_it_would_need():
    from fakesys.nopower import tiny_shift
    from icml26.report import markdown_table

    summary = run_claim(tiny_shift, Scale.SMOKE, seeds=5, with_control=True)
    assert summary.verdict == "fails" and summary.positive.verdict == "fails"
    assert summary.status == "no-power" and summary.outcome == "no-power"
    table = markdown_table([summary])
    assert "**no-power**" in table and "could not have seen the effect" in table
    assert "needed: mean:" in table  # seeds from the positive control's interval, or that seeds cannot help


def test_seeds_needed_come_from_the_positive_controls_interval():
    import dataclasses

    from fakesys.claims import mean_beats_median

    summary = run_claim(mean_beats_median, Scale.SMOKE, seeds=3, with_control=True)
    stat = dict(summary.positive.judged[0], holds=False, low=0.005, high=0.037, mean=0.021, n=3)  # gap 0.011
    pos = dataclasses.replace(summary.positive, judged=[stat], verdict="fails")
    text = dataclasses.replace(summary, positive=pos, verdict="fails").seeds_needed()
    n = int(text.split("about ")[1].split(" seeds")[0])
    assert 3 < n < 10  # half-width 0.016 at 3 seeds shrinks below the 0.011 gap after a few more
    wrong_side = dict(stat, mean=0.005)
    pos = dataclasses.replace(pos, judged=[wrong_side])
    assert "more seeds cannot help" in dataclasses.replace(summary, positive=pos).seeds_needed()


def test_an_inert_mechanism_turns_fails_into_no_power_and_qualifies_holds():
    import dataclasses

    from fakesys.claims import MECHANISMS, mean_consistent
    from icml26.claims import run_mechanisms

    probes = run_mechanisms(MECHANISMS, Scale.SMOKE)
    assert probes["averaging"].live and probes["averaging"].mean > 100
    held = run_claim(mean_consistent, Scale.SMOKE, seeds=2, with_control=True, probes=probes)
    assert held.status == "holds" and held.probes[0]["name"] == "averaging"
    inert = {"averaging": dataclasses.replace(probes["averaging"], live=False)}
    assert dataclasses.replace(held, probes=[inert["averaging"].to_dict()]).status == "holds; mechanism inert"
    failed = dataclasses.replace(held, verdict="fails", probes=[inert["averaging"].to_dict()])
    assert failed.status == "no-power"  # even though its positive control held


def test_a_crashing_probe_is_not_live():
    from icml26.claims import mechanism, run_probe

    @mechanism("flaky", component="c", measures="m", above=0.5)
    def flaky(scale, seed):
        raise RuntimeError("probe broke")

    probe = run_probe(flaky, Scale.SMOKE, [0, 1])
    assert not probe.live and "probe broke" in probe.error and probe.values == []
    with pytest.raises(ValueError, match="say when it is live"):
        mechanism("x", component="c", measures="m")
    with pytest.raises(ValueError, match="lower case"):
        mechanism("Gates!", component="c", measures="m", above=0)


def test_reproduce_is_a_library_call(tmp_path, fake_spec):
    from icml26.reproduce import ReproduceError, reproduce

    run = reproduce([fake_spec], scale="smoke", out=tmp_path, controls=True, progress=False)
    statuses = [s.status for s in run.summaries["fakesys"]]
    assert statuses == ["holds", "fails", "not-measured", "holds"] and not run.crashed
    assert run.probes["fakesys"]["averaging"].live and run.index.is_file()
    with pytest.raises(ReproduceError, match="no claim of 'fakesys' matches 'nosuch'"):
        reproduce([fake_spec], scale="smoke", out=tmp_path, claim_filter="nosuch", progress=False)
    two = reproduce([fake_spec], scale="smoke", out=tmp_path / "two", claim_filter=["consistent", "median"],
                    progress=False)  # fmt: skip
    ids = [s.id for s in two.summaries["fakesys"]]
    assert ids == ["fakesys/mean-consistent-v2", "fakesys/mean-beats-median-v2"]


def test_fails_means_refuted_a_judged_interval_that_still_reaches_past_its_threshold_reads_no_power():
    import dataclasses

    from fakesys.claims import mean_beats_median
    from icml26.report import markdown_table

    summary = run_claim(mean_beats_median, Scale.SMOKE, seeds=3, with_control=True)
    assert summary.positive_ok
    stat = dict(summary.judged[0], holds=False, mean=0.005, low=-0.02, high=0.03, n=3)  # the bar 0.01 inside
    straddles = dataclasses.replace(summary, verdict="fails", judged=[stat])
    assert straddles.unresolved == [stat] and straddles.status == "no-power"
    table = markdown_table([straddles])
    assert "not refuted: the claim's 95% interval of MSE(median) - MSE(mean) [-0.02, 0.03] still reaches" in table
    assert "(resolved at about" in table
    refuted = dataclasses.replace(straddles, judged=[dict(stat, low=-0.03, high=0.008)])  # wholly below 0.01
    assert refuted.unresolved == [] and refuted.status == "fails"
    # one refuted statistic is enough, whatever the others do
    both = dataclasses.replace(straddles, judged=[stat, dict(stat, key="other", low=-0.03, high=0.008)])
    assert both.status == "fails"
