"""Model pieces against reference implementations; training, CV and source-free adaptation."""

import numpy as np
import pytest
import torch

from icml26.eegmoce import lorentz as L
from icml26.eegmoce.data import MultimodalData, simulate
from icml26.eegmoce.model import (
    FLAT_CURVATURE,
    CurvatureAwareAttention,
    LorentzDomainBN,
    LorentzMLR,
    ModelConfig,
    TrainConfig,
    build_model,
    cross_validate,
    predict,
    refit_domain_bn,
    train,
)

torch.set_num_threads(1)


def test_attention_vectorised_equals_loop():
    torch.manual_seed(0)
    att = CurvatureAwareAttention(ModelConfig(), prior=True).double()
    c = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    cf = c.mean()
    x = L.expmap0(torch.randn(5, 3, 16, dtype=torch.float64), cf)
    a = att(x, c, cf, vectorised=True)
    alpha_v = att.attention
    b = att(x, c, cf, vectorised=False)
    assert torch.allclose(a, b, atol=1e-10) and torch.allclose(alpha_v, att.attention, atol=1e-12)
    assert torch.all(alpha_v.diagonal(dim1=-2, dim2=-1) == 0)  # a modality never attends to itself
    assert ((L.minkowski_dot(a, a) + 1 / cf).abs() < 1e-9).all()


def test_attention_reference_formula():
    """Per-sample reference: logits = -||q-k||_L^2 sqrt(c_i)/tau_0 + lambda log c_j, midpoint of the values."""
    torch.manual_seed(1)
    cfg = ModelConfig(heads=1, fusion_dim=4)
    att = CurvatureAwareAttention(cfg, prior=True).double()
    c = torch.tensor([0.3, 1.5, 3.0], dtype=torch.float64)
    cf = c.mean()
    x = L.expmap0(torch.randn(1, 3, 4, dtype=torch.float64), cf)
    att(x, c, cf)
    q, k = att._heads(att.q, x, cf)[0, 0], att._heads(att.k, x, cf)[0, 0]
    lam = torch.nn.functional.softplus(att.raw_lambda)
    for i in range(3):
        js = [j for j in range(3) if j != i]
        logits = torch.stack(
            [
                -(((q[i] - k[j]) ** 2)[1:].sum() - (q[i, 0] - k[j, 0]) ** 2) * c[i].sqrt() / att.log_tau0.exp()
                + lam * c[j].log()
                for j in js
            ]
        )
        assert torch.allclose(att.attention[0, 0, i, js], torch.softmax(logits, 0), atol=1e-10)


def test_domain_bn_matches_loop_and_normalises_each_subject():
    torch.manual_seed(0)
    bn = LorentzDomainBN(4, domain=True).double()
    c = torch.tensor(1.3, dtype=torch.float64)
    dom = torch.tensor([0, 0, 1, 1, 1, 2, 2, 0])
    x = L.expmap0(torch.randn(8, 3, 4, dtype=torch.float64) + 3 * dom[:, None, None], c)  # subject shifts
    out = bn(x, dom, c)
    for g in range(3):
        pts = x[dom == g].reshape(-1, 5)
        mu = L.centroid(pts, c, dim=0)
        var = (L.dist(pts, mu, c) ** 2).mean()
        ref = L.expmap0(L.transport_to_origin(mu, L.logmap(mu, pts, c), c) / torch.sqrt(var + 1e-5), c)
        assert torch.allclose(out[dom == g].reshape(-1, 5), ref, atol=1e-10)
        v = L.logmap0(out[dom == g].reshape(-1, 5), c)
        assert float((v.detach() ** 2).sum(-1).mean()) == pytest.approx(
            1.0, abs=1e-3
        )  # unit Frechet variance per subject


def test_mlr_is_scaled_signed_distance():
    """For a = 0 the Lorentz MLR logit is |z|/sqrt(c) asinh(sqrt(c) <z, x_s>/|z|): positive on the side of z."""
    mlr = LorentzMLR(3, 2).double()
    c = torch.tensor(0.7, dtype=torch.float64)
    x = L.expmap0(torch.tensor([[2.0, 0, 0], [-2.0, 0, 0]], dtype=torch.float64), c)
    with torch.no_grad():
        mlr.z.copy_(torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]))
    out = mlr(x, c)
    assert out[0, 0] > 0 > out[1, 0] and abs(out[0, 1]) < 1e-12
    assert float(out[0, 0].detach()) == pytest.approx(float(torch.asinh(c.sqrt() * x[0, 1]) / c.sqrt()), rel=1e-12)


def test_curvature_stays_negative_and_frozen_arm_does_not_learn():
    d = simulate(3, 8, seed=0)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    for arm, learns in (("moce", True), ("moce-fixed-k", False)):
        torch.manual_seed(0)
        m = build_model(arm, shapes, d.fs, d.n_classes, ModelConfig(curvature_init=0.5)).double()
        train(m, d, TrainConfig(epochs=3, warmup_epochs=0, lr=3e-2), 0)
        assert (m.curvatures > 0).all()  # K = -|K| < 0 by the softplus parametrisation
        assert (not torch.allclose(m.curvatures, torch.tensor(0.5, dtype=torch.float64), atol=1e-6)) == learns
    with pytest.raises(ValueError, match="curvature initialisation"):
        ModelConfig(curvature_init=0.0)
    with pytest.raises(ValueError, match="curvature initialisation"):
        ModelConfig(curvature_init=-1.0)


def test_sampling_rate_mismatch_is_refused():
    d = simulate(2, 2, seed=0)
    with pytest.raises(ValueError, match="sampling-rate mismatch"):
        build_model("moce", {"eeg": (8, 128)}, 1000.0, 3, ModelConfig())
    with pytest.raises(ValueError, match="too low"):
        build_model("moce", {"eeg": (8, 128)}, 4.0, 3, ModelConfig())
    assert d.fs == 128.0


def test_source_free_refit_uses_only_the_subjects_own_trials():
    d = simulate(3, 6, seed=1)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    torch.manual_seed(0)
    model = build_model("moce", shapes, d.fs, d.n_classes, ModelConfig()).double()
    train(model, d, TrainConfig(epochs=1), 0)
    p1, _ = predict(model, d)
    other = d.subset(np.arange(d.n))
    other.modalities["eeg"][d.subject != 0] *= 50.0  # change the other subjects' data only
    p2, _ = predict(model, other)
    assert np.array_equal(p1[d.subject == 0], p2[d.subject == 0])


def test_cross_validate_learns_and_is_seeded():
    d = simulate(4, 16, noise=0.3, stream_signal=0.6, subject_shift=0.2, seed=2)  # an easy task
    r1 = cross_validate(d, "late-fusion", ModelConfig(), TrainConfig(epochs=6), n_folds=2, seed=0)
    r2 = cross_validate(d, "late-fusion", ModelConfig(), TrainConfig(epochs=6), n_folds=2, seed=0)
    assert r1.balanced_accuracy == r2.balanced_accuracy
    assert np.mean(r1.balanced_accuracy) > 0.5  # 3 classes: chance is 1/3
    moce = cross_validate(d, "moce", ModelConfig(), TrainConfig(epochs=6), n_folds=2, seed=0)
    assert np.mean(moce.balanced_accuracy) > 0.5  # the hyperbolic model learns a cross-subject task too
    before = torch.rand(1).item()
    torch.manual_seed(123)
    x = torch.rand(1).item()
    cross_validate(d, "eeg-only", ModelConfig(), TrainConfig(epochs=1), n_folds=2, seed=0)
    torch.manual_seed(123)
    assert torch.rand(1).item() == x != before  # the global generator is restored (fork_rng)


def _trained(arm="moce", seed=1, **cfg):
    d = simulate(3, 6, seed=seed)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    torch.manual_seed(0)
    model = build_model(arm, shapes, d.fs, d.n_classes, ModelConfig(**cfg)).double()
    train(model, d, TrainConfig(epochs=1), 0)
    return model, d


def test_refitting_domain_bn_on_the_own_subject_changes_nothing_and_on_another_subject_does():
    """The domain-BN control's mechanism on ground truth: a subject's own trials as the source reproduce the
    default predictions exactly; another subject's statistics change the logits."""
    model, d = _trained()
    s0 = d.subset(np.flatnonzero(d.subject == 0))
    own = predict(model, s0, bn_source={0: s0})[0]
    assert np.array_equal(own, predict(model, s0)[0])
    X = {m: torch.as_tensor(s0.modalities[m]) for m in model.names}
    model.eval()
    with torch.no_grad():
        base = model(X, torch.as_tensor(s0.subject))
        refit_domain_bn(model, d.subset(np.flatnonzero(d.subject == 1)))
        other = model(X, torch.as_tensor(s0.subject))
        refit_domain_bn(model, None)
        assert not torch.allclose(base, other) and torch.allclose(base, model(X, torch.as_tensor(s0.subject)))
    with pytest.raises(ValueError, match="exactly one subject"):
        refit_domain_bn(model, d)
    pooled, _ = _trained("moce-no-dbn")
    with pytest.raises(ValueError, match="with domain BN"):
        refit_domain_bn(pooled, s0)


def test_flat_arm_is_frozen_near_zero_curvature():
    model, _ = _trained("moce-flat")
    assert torch.allclose(model.curvatures, torch.full((3,), FLAT_CURVATURE, dtype=torch.float64))
    assert not model.raw_curvature.requires_grad


def test_data_that_do_not_fit_the_model_are_refused():
    model, d = _trained("late-fusion")
    cases = {
        "lack the modality": d.subset(np.arange(d.n)),
        "built for": simulate(3, 6, audio_dim=5, seed=1),
        "sampling-rate mismatch": simulate(3, 6, fs=256.0, eeg_samples=128, seed=1),
        "out of range": MultimodalData(dict(d.modalities), d.y + 1, d.subject, d.fs),
    }
    del cases["lack the modality"].modalities["video"]
    for msg, data in cases.items():
        with pytest.raises(ValueError, match=msg):
            (train(model, data, TrainConfig(epochs=1), 0) if msg == "out of range" else predict(model, data))
    with pytest.raises(ValueError, match="unknown arm"):
        build_model("moce-xl", model.shapes, d.fs, 3, ModelConfig())
    with pytest.raises(ValueError, match="loso' or 'kfold"):
        cross_validate(d, "moce", ModelConfig(), TrainConfig(epochs=1), cv="random")
    with pytest.raises(ValueError, match="at least 2 folds"):
        cross_validate(d, "moce", ModelConfig(), TrainConfig(epochs=1), n_folds=1)


@pytest.mark.filterwarnings("ignore:y_pred contains classes:UserWarning")
def test_cross_validate_keeps_models_on_request_and_its_summary_is_json():
    import json

    d = simulate(4, 4, seed=0)
    res = cross_validate(d, "eeg-only", ModelConfig(), TrainConfig(epochs=1), n_folds=2, keep_models=True)
    assert len(res.models) == 2 and "models" not in json.loads(json.dumps(res.summary()))


@pytest.mark.parametrize("arm", ["braindecode-eegnet", "braindecode-shallow"])
def test_braindecode_peers_train_with_the_arms_loop(arm):
    pytest.importorskip("braindecode")
    from icml26.eegmoce.eegmat import load_eegmat

    d, _ = load_eegmat()
    d = d.subset(np.flatnonzero(d.subject < 3))
    res = cross_validate(d, arm, ModelConfig(), TrainConfig(epochs=1, warmup_epochs=0), cv="loso", seed=0)
    assert len(res.balanced_accuracy) == 3 and all(0 <= b <= 1 for b in res.balanced_accuracy)
    assert res.curvatures == [[], [], []]
