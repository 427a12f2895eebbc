"""v2 pieces: the heart-rate rules, tuning on validation subjects, the learnable-gate control of the frozen-curvature
ablation, pooled (not per-subject) z-scoring, the live curvature default, and the library's one-line errors."""

import numpy as np
import pytest
import torch

from icml26.eegmoce.data import simulate
from icml26.eegmoce.model import (
    ModelConfig,
    TrainConfig,
    _fit_stump,
    build_model,
    folds,
    hr_above_zero,
    rule_cv,
    train,
    tune,
    validation_split,
)

torch.set_num_threads(1)


def test_the_library_default_curvature_lr_is_the_live_setting():
    assert TrainConfig().curvature_lr_scale == 100.0  # 10x reads inert on the probe (README, Curvature liveness)


@pytest.mark.parametrize("seed", [0, 3])
def test_the_stump_recovers_a_planted_threshold_and_sign(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=400)
    for sign in (1, -1):
        y = (sign * (x - 0.4) > 0).astype(int)
        t, s = _fit_stump(x, y)
        assert s == sign and abs(t - 0.4) < 0.05
        assert np.mean((s * (x - t) > 0) == y) == 1.0


def _hrv_data(seed, effect):
    """4 subjects x 20 windows; the heart rate of class 1 raised by ``effect`` (0: no information)."""
    rng = np.random.default_rng(seed)
    y = np.tile(np.repeat([0, 1], 10), 4)
    hrv = rng.normal(size=(80, 2, 16)) + effect * y[:, None, None] * np.array([1.0, 0.0])[None, :, None]
    from icml26.eegmoce.data import MultimodalData

    return MultimodalData({"eeg": rng.normal(size=(80, 2, 64)), "hrv": hrv}, y, np.repeat(np.arange(4), 20), 64.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_heart_rate_rules_see_a_planted_rise_and_sit_at_chance_on_the_null(seed):
    for effect, low, high in ((1.0, 0.9, 1.01), (0.0, 0.2, 0.8)):
        d = _hrv_data(seed, effect)
        splits = folds(d, "kfold", 2, seed)
        for kind in ("hr-stump", "hrv-logreg"):
            ba = np.mean(rule_cv(d, splits, kind))
            assert low < ba < high, (kind, effect, ba)
    d = _hrv_data(seed, 1.0)
    assert np.mean(hr_above_zero(d) == d.y) > 0.6  # raw heart rate: class 1 sits higher
    boot = rule_cv(d, splits, "hrv-logreg", predictions=True, bootstrap=np.random.default_rng(0))
    assert [len(p) for p in boot] == [len(te) for _, te in splits]


def test_rules_refuse_data_without_a_heart_rate_stream():
    d = simulate(3, 4, seed=0)
    with pytest.raises(ValueError, match="'hrv' modality"):
        rule_cv(d, folds(d, "kfold", 3, 0), "hrv-logreg")
    with pytest.raises(ValueError, match="two classes"):
        rule_cv(d, folds(d, "kfold", 3, 0), "hr-stump")
    with pytest.raises(ValueError, match="unknown rule"):
        rule_cv(_hrv_data(0, 1.0), [], "hr-above")


def test_validation_subjects_come_from_the_training_subjects_only():
    d = _hrv_data(0, 1.0)
    for tr, te in folds(d, "kfold", 2, 0):
        inner, val = validation_split(d, tr, 1, np.random.default_rng(0))
        assert np.unique(d.subject[val]).size == 1
        assert not set(d.subject[val]) & set(d.subject[inner])
        assert not set(d.subject[val]) & set(d.subject[te]) and set(inner) | set(val) == set(tr)
        with pytest.raises(ValueError, match="validation subjects"):
            validation_split(d, tr, 2, np.random.default_rng(0))


def test_tune_reads_every_grid_point_and_picks_the_best():
    d = simulate(4, 8, branching=2, seed=2)  # two classes, 4 + 4 trials per subject
    tcfg = TrainConfig(epochs=1, warmup_epochs=0, domains_per_batch=2, trials_per_domain=6)
    res = tune(d, "late-fusion", ModelConfig(), tcfg, folds(d, "kfold", 2, 0), lrs=(1e-3, 1e-2), epochs=(1, 2), n_val=1)
    assert set(res["validation"]) == {"0.001 x 1", "0.001 x 2", "0.01 x 1", "0.01 x 2"}
    assert res["validation_ba"] == max(res["validation"].values())
    assert res["validation"][f"{res['lr']:g} x {res['epochs']}"] == res["validation_ba"]


def test_the_gate_control_freezes_curvature_and_learns_a_modality_bias():
    d = simulate(3, 8, seed=0)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    torch.manual_seed(0)
    m = build_model("moce-fixed-k-gate", shapes, d.fs, d.n_classes, ModelConfig()).double()
    c0 = m.curvatures.detach().clone()
    train(m, d, TrainConfig(epochs=2, warmup_epochs=0, lr=3e-2), 0)
    assert torch.equal(m.curvatures.detach(), c0) and m.gate.abs().max() > 1e-3
    torch.manual_seed(0)
    assert build_model("moce", shapes, d.fs, d.n_classes, ModelConfig()).gate is None


def test_pooled_z_scoring_keeps_each_subjects_offset():
    pytest.importorskip("mne")
    from icml26.eegmoce import load_eegmat

    d, _ = load_eegmat(normalise="global")
    x = d.modalities["hrv"][:, 0].mean(1)  # (N,) heart rate per window
    assert abs(x.mean()) < 1e-9  # pooled over all subjects: zero mean overall
    per_subject = np.array([x[d.subject == s].mean() for s in np.unique(d.subject)])
    assert per_subject.std() > 0.3  # subjects' resting heart rates differ: the offset the domain BN can remove
    with pytest.raises(ValueError, match="normalise"):
        load_eegmat(normalise="median")


def test_library_refuses_windows_longer_than_what_is_kept():
    pytest.importorskip("mne")
    from pathlib import Path

    from icml26.eegmoce import load_eegmat

    edf = Path(__file__).parent / "data" / "edf"
    with pytest.raises(ValueError, match="less than one 4 s window"):
        load_eegmat(edf, rest_seconds=3.0, task_seconds=3.0)
    with pytest.raises(ValueError, match="positive number"):
        load_eegmat(edf, rest_seconds=-1.0)
    with pytest.raises(ValueError, match="shorter than one 10 s window"):  # the test EDFs hold 8 s
        load_eegmat(edf, rest_seconds=None, task_seconds=None, window_seconds=10.0)
