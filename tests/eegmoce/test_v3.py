"""v3 pieces: the gate control trained at the curvatures' rate, the geometry-only curvature override of the
probe (prior held at the learned |K|), the own-halves reference of the domain-BN probe, and the claims' refusals."""

import numpy as np
import pytest
import torch

from icml26.eegmoce.data import simulate
from icml26.eegmoce.model import ModelConfig, TrainConfig, build_model, to_tensors, train

torch.set_num_threads(1)


def _model(arm, d, **cfg):
    torch.manual_seed(0)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    return build_model(arm, shapes, d.fs, d.n_classes, ModelConfig(**cfg)).double()


def test_the_gate_moves_at_the_curvature_rate():
    d = simulate(3, 8, seed=0)
    moved = {}
    for scale in (1.0, 100.0):
        m = _model("moce-fixed-k-gate", d)
        train(m, d, TrainConfig(epochs=2, warmup_epochs=0, lr=1e-3, curvature_lr_scale=scale), 0)
        moved[scale] = float(m.gate.detach().abs().max())
    assert moved[100.0] > 10 * moved[1.0] > 0


def test_geometry_override_changes_the_geometry_and_keeps_the_prior():
    d = simulate(3, 6, seed=1)
    m = _model("moce", d, prior_init=1.0)
    with torch.no_grad():
        m.raw_curvature.copy_(torch.tensor([-2.0, 0.5, 1.5], dtype=m.raw_curvature.dtype))
    m.eval()
    x, dom = to_tensors(d, m.names), torch.as_tensor(d.subject)
    with torch.no_grad():
        plain = m(x, dom)
        m.geometry_override = m.curvatures.detach().clone()
        same = m(x, dom)
        m.geometry_override = torch.ones(3)
        unit = m(x, dom)
        # the same geometry with the prior moved too (what setting the raw curvatures would do)
        m.geometry_override = None
        m.raw_curvature.copy_(torch.full((3,), float(np.log(np.expm1(1.0 - 0.01))), dtype=torch.float64))
        both = m(x, dom)
    assert torch.allclose(plain, same)
    assert not torch.allclose(plain, unit, atol=1e-6)
    assert not torch.allclose(unit, both, atol=1e-6)  # the override kept the learned prior


def test_own_half_bn_sources_are_disjoint_halves_of_the_subject():
    from icml26.eegmoce.claims import _half_bn_source

    d = simulate(3, 10, seed=2)
    test = d.subset(np.flatnonzero(d.subject != 0))
    a, b = (_half_bn_source(d, test, 0, 0, h) for h in (0, 1))
    assert sorted(a) == sorted(b) == [1, 2]
    for s in a:
        assert a[s].n + b[s].n == int((d.subject == s).sum()) and set(a[s].subject) == {s}
        pa, pb = a[s].modalities["eeg"].reshape(a[s].n, -1), b[s].modalities["eeg"].reshape(b[s].n, -1)
        assert not (pa[:, None] == pb[None]).all(-1).any()  # no window in both halves


def test_sabotage_of_a_fitted_baseline_and_unknown_sabotage_are_refused():
    from icml26.claims import Scale
    from icml26.eegmoce.claims import _fold_predictions

    with pytest.raises(ValueError, match="fitted baseline"):
        _fold_predictions(Scale.SMOKE, 0, "hrv-logreg", "unit-curvature")
    with pytest.raises(ValueError, match="unknown sabotage"):
        _fold_predictions(Scale.SMOKE, 0, "moce", "upside-down")
