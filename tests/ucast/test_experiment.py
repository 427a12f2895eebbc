"""The laptop experiment: the stage-2 switch the claims' controls use, the shared stage 1, real-data runs."""

from pathlib import Path

import numpy as np
import pytest

from icml26.ucast.config import TrainConfig, get_preset
from icml26.ucast.experiment import STAGE2, run_experiment, run_on_data, split_data, stage1, stage2_config

ERA5 = Path(__file__).resolve().parents[1] / "data" / "era5-sample" / "era5-levels-members.nc"


def _late(res, name, metric):
    return res.scores[name][metric][2:].mean()


def test_unknown_stage2_is_refused():
    with pytest.raises(ValueError, match="stage2 must be one of"):
        run_experiment("smoke", 0, stage2_variant="ensemble")


def test_skipped_stage2_is_the_mc_dropout_baseline():
    res = run_experiment("smoke", 0, stage2_variant="skip")
    assert res.history["prob"] == []
    # the same stage-1 weights under other dropout masks: the two CRPS agree to sampling noise
    assert abs(_late(res, "ucast", "crps") / _late(res, "mc_dropout", "crps") - 1) < 0.02


def test_stage1_is_shared_and_the_comparator_is_compute_matched():
    a = run_experiment("smoke", 0, stage2_variant="crps")
    b = run_experiment("smoke", 0, stage2_variant="mae")
    assert stage1.cache_info().hits >= 1  # one stage 1 for both variants
    for name in ("mc_dropout", "det", "mae_continued"):  # same stage 1 and comparator, same forecast seeds
        np.testing.assert_array_equal(a.scores[name]["crps"], b.scores[name]["crps"])
    # the control 'mae' *is* the comparator (other dropout masks)
    assert abs(_late(b, "ucast", "crps") / _late(b, "mae_continued", "crps") - 1) < 0.02
    prob = get_preset("small").prob
    mae = stage2_config(get_preset("small"), "mae")
    assert mae.stage == "det" and mae.steps == prob.steps and mae.batch_size == prob.batch_size * prob.members
    assert isinstance(stage2_config(get_preset("small"), "crps", members=4), TrainConfig)


def test_untrained_stage2_has_no_skill():
    untrained = run_experiment("smoke", 0, stage2_variant="untrained")
    assert _late(untrained, "ucast", "rmse") > 1.1 * _late(untrained, "det", "rmse")


def test_every_stage2_choice_is_listed():
    assert STAGE2[0] == "crps" and {"mae", "scratch", "skip", "untrained"} <= set(STAGE2)


def test_split_by_time_needs_enough_times():
    import xarray as xr

    ds = xr.Dataset({"a": (("time", "lat", "lon"), np.zeros((5, 2, 3)))})
    with pytest.raises(ValueError, match="time split"):
        split_data(ds, 1)
    train, test, how = split_data(xr.Dataset({"a": (("time", "lat", "lon"), np.zeros((20, 2, 3)))}), 1)
    assert train.sizes["time"] == 16 and test.sizes["time"] == 4 and how.startswith("by time")


@pytest.mark.skipif(not ERA5.is_file(), reason="real ERA5 sample absent (tests/data/era5-sample)")
def test_real_era5_sample_trains_and_is_scored_against_baselines():
    from dataclasses import replace

    p = get_preset("era5")
    p = replace(p, det=replace(p.det, steps=3), prob=replace(p.prob, steps=2), eval_members=3)
    res = run_on_data(ERA5, p, seed=0, variables=["z_500", "t_850"])
    assert res["split"].startswith("by trajectory: 7") and res["leads"] == [1, 2]
    assert set(res["scores"]) == {"ucast", "mc_dropout", "det", "persistence", "climatology"}
    for sc in res["scores"].values():
        assert np.all(np.isfinite(sc["crps"])) and np.all(np.asarray(sc["crps"]) > 0)
    assert 0 < res["scores"]["ucast"]["ssr"][0] < 5
