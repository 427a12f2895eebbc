"""v4 pieces of the paper's recipe (issue 42): the k = 1/|K| parameterisation, HyboNet's norm-rescaling Lorentz
linear, the domain-BN scale at the curvatures' rate, the gate bounded to the prior's range, early stopping."""

import math

import pytest
import torch

from icml26.eegmoce import lorentz as L
from icml26.eegmoce.data import simulate
from icml26.eegmoce.model import (
    C_MAX,
    C_MIN,
    LorentzLinear,
    ModelConfig,
    TrainConfig,
    build_model,
    to_tensors,
    train,
)

torch.set_num_threads(1)


def _model(arm, d, **cfg):
    torch.manual_seed(0)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    return build_model(arm, shapes, d.fs, d.n_classes, ModelConfig(**cfg)).double()


def test_inverse_parameterisation_stores_k_and_clamps_it():
    d = simulate(3, 4, seed=0)
    m = _model("moce", d, curvature_param="inverse", curvature_init=2.0)
    assert torch.allclose(m.raw_curvature.detach(), torch.full((3,), 0.5, dtype=torch.float64))  # k = 1/|K|
    assert torch.allclose(m.curvatures.detach(), torch.full((3,), 2.0, dtype=torch.float64))
    with torch.no_grad():
        m.raw_curvature.copy_(torch.tensor([1e-6, 1e6, 4.0]))
    assert torch.allclose(m.curvatures.detach(), torch.tensor([C_MAX, C_MIN, 0.25], dtype=torch.float64))


def test_unknown_parameterisation_or_linear_is_refused():
    with pytest.raises(ValueError, match="curvature_param"):
        ModelConfig(curvature_param="log")
    with pytest.raises(ValueError, match="linear"):
        ModelConfig(linear="poincare")


@pytest.mark.parametrize("c", [0.05, 1.0, 7.0])
def test_hybonet_linear_lands_on_the_hyperboloid_at_a_radius_set_by_the_layer(c):
    torch.manual_seed(1)
    lin = LorentzLinear(5, 4, "hybonet", heads=3).double()
    c = torch.tensor(c, dtype=torch.float64)
    x = L.expmap0(torch.randn(10, 5, dtype=torch.float64), c)
    y = lin(x, c)  # (10, 3, 5)
    assert y.shape == (10, 3, 5)
    assert torch.allclose(L.minkowski_dot(y, y), -1.0 / c.expand(10, 3), rtol=1e-9)
    theta = c.sqrt() * L.logmap0(y, c).norm(dim=-1)  # dimensionless radius
    assert theta.min() >= math.acosh(1.1) - 1e-9 and theta.max() <= math.acosh(11.1) + 1e-9


def test_models_with_the_paper_pieces_train_and_predict():
    d = simulate(3, 6, seed=2)
    m = _model("moce", d, curvature_param="inverse", linear="hybonet", heads=4, curvature_init=2.0)
    losses = train(m, d, TrainConfig(epochs=2, warmup_epochs=0, gamma_at_curvature_rate=True), 0)
    assert all(math.isfinite(v) for v in losses)
    m.eval()
    with torch.no_grad():
        out = m(to_tensors(d, m.names), torch.as_tensor(d.subject))
    assert out.shape == (d.n, d.n_classes) and torch.isfinite(out).all()


def test_gamma_at_the_curvature_rate_moves_the_bn_scale_faster():
    d = simulate(3, 8, seed=3)
    moved = {}
    for fast in (False, True):
        m = _model("moce-fixed-k", d)
        train(m, d, TrainConfig(epochs=2, warmup_epochs=0, lr=1e-3, gamma_at_curvature_rate=fast), 0)
        moved[fast] = max(float((e.bn.gamma.detach() - 1).abs()) for e in m.experts.values())
    assert moved[True] > 5 * moved[False] > 0


def test_bounded_gate_starts_at_zero_and_stays_in_the_priors_range():
    d = simulate(3, 6, seed=4)
    m = _model("moce-fixed-k-gate", d, gate_bounded=True)
    lo, hi = 0.3 * math.log(C_MIN), 0.3 * math.log(C_MAX)
    assert torch.allclose(m.gate.detach(), torch.zeros(3, dtype=torch.float64), atol=1e-6)
    with torch.no_grad():
        m.raw_gate.copy_(torch.tensor([-50.0, 0.0, 50.0]))
    g = m.gate.detach()
    assert g[0] == pytest.approx(lo) and g[2] == pytest.approx(hi) and lo < g[1] < hi
    assert _model("moce-fixed-k-gate", d, gate_bounded=False).gate_bounded is False  # v3's unbounded control


def test_on_epoch_returning_true_stops_training():
    d = simulate(3, 4, seed=5)
    seen = []
    losses = train(_model("moce", d), d, TrainConfig(epochs=5), 0, on_epoch=lambda e, m: seen.append(e) or e == 2)
    assert seen == [1, 2] and len(losses) == 2
