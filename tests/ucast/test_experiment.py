"""The laptop experiment's stage-2 switch, which the claims' negative controls use."""

import numpy as np
import pytest

from icml26.ucast.experiment import STAGE2, run_experiment


def _late(res, name, metric):
    return res.scores[name][metric][2:].mean()


def test_unknown_stage2_is_refused():
    with pytest.raises(ValueError, match="stage2 must be one of"):
        run_experiment("smoke", 0, stage2="ensemble")


def test_skipped_stage2_is_the_mc_dropout_baseline():
    res = run_experiment("smoke", 0, stage2="skip")
    assert res.history["prob"] == []
    # the same stage-1 weights under other dropout masks: the two CRPS agree to sampling noise
    assert abs(_late(res, "ucast", "crps") / _late(res, "mc_dropout", "crps") - 1) < 0.02


def test_mae_stage2_trains_and_untrained_stage2_has_no_skill():
    mae = run_experiment("smoke", 0, stage2="mae")
    assert mae.history["prob"] and all(np.isfinite(h["loss"]) for h in mae.history["prob"])
    untrained = run_experiment("smoke", 0, stage2="untrained")
    assert _late(untrained, "ucast", "rmse") > 1.1 * _late(untrained, "det", "rmse")


def test_every_stage2_choice_is_listed():
    assert STAGE2[0] == "crps" and {"mae", "scratch", "skip", "untrained"} <= set(STAGE2)
