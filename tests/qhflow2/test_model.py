"""Model maths: Wigner matrices, the SO(2) layer's commutation with rotations about the edge, equivariance of the
SO(2) and tensor-product models (float64), the MLP's lack of it, MLIP forces = -dE/dx, training lowers the loss."""

import numpy as np
import pytest
import torch
from e3nn import o3

from icml26.qhflow2.model import (
    SO2Linear,
    _q_matrix,
    _rot_y,
    build_model,
    wigner_blocks,
    wigner_D64,
)
from icml26.qhflow2.train import TrainConfig, predict_h, train_h_model, train_mlip

SLOTS = (0, 0, 0, 1, 1, 2)  # def2-SVP layout: exercises L up to 4 in the block heads


def _rot(seed):
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    return q if torch.det(q) > 0 else -q


def test_wigner_matrices_match_e3nn_and_are_exactly_orthogonal():
    R = _rot(0)
    for l in range(4):
        D = wigner_D64(l, R)
        np.testing.assert_allclose(D, o3.Irrep(l, 1).D_from_matrix(R), atol=2e-6)  # e3nn builds D in float32
        np.testing.assert_allclose(D @ D.T, torch.eye(2 * l + 1, dtype=torch.float64), atol=1e-13)
        th = torch.tensor([0.7], dtype=torch.float64)
        gen = o3.so3_generators(l).double()
        np.testing.assert_allclose(_rot_y(l, th)[0], torch.matrix_exp(th * gen[1]), atol=1e-6)
    v = torch.randn(5, 3, dtype=torch.float64)
    D1 = wigner_blocks(1, v, [torch.tensor(_q_matrix(k)) for k in range(2)])[1]
    np.testing.assert_allclose(D1 @ torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64), v / v.norm(dim=1, keepdim=True),
                               atol=1e-12)  # fmt: skip


def test_so2_linear_commutes_with_rotations_about_the_edge_axis():
    torch.manual_seed(0)
    lin = SO2Linear(3, 2, 3, 4).double()
    x = torch.randn(4, 16, 3, dtype=torch.float64)
    th = torch.full((4,), 0.9, dtype=torch.float64)
    Din = torch.block_diag(*[_rot_y(l, th[:1])[0] for l in range(4)])
    Dout = torch.block_diag(*[_rot_y(l, th[:1])[0] for l in range(5)])
    with torch.no_grad():
        a, b = lin(torch.einsum("mn,enc->emc", Din, x)), torch.einsum("mn,enc->emc", Dout, lin(x))
    np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("kind", ["so2", "tp", "so2-tp-edge"])
def test_models_are_equivariant_and_symmetric(water, kind):
    torch.manual_seed(0)
    kw = {"edge_update": "tp"} if kind == "so2-tp-edge" else {}  # the paper's tensor-product second stage
    model = build_model(kind.split("-")[0], SLOTS, 3, channels=4, lmax=2, layers=1, **kw).double()
    pos = torch.tensor(water.R)[None].repeat(2, 1, 1)
    pos[1] += 0.05 * torch.randn(3, 3, dtype=torch.float64)
    R = _rot(1)
    D = torch.block_diag(*[wigner_D64(l, R) for l in SLOTS])
    with torch.no_grad():
        out, rot = model(water.Z, pos), model(water.Z, pos @ R.T + 1.5)
    # e3nn keeps some tensor-product constants in float32: 1e-8 there, 1e-10 for our SO(2) path
    # (two e3nn tensor products in series in the paper's second stage: ~1e-8)
    np.testing.assert_allclose(rot, D @ out @ D.T, atol={"so2": 1e-10, "tp": 1e-8}.get(kind, 1e-7))
    assert float(out.abs().max()) > 1e-3  # not trivially equivariant
    full = out.transpose(2, 3).reshape(2, 3 * 14, 3 * 14)
    np.testing.assert_allclose(full, full.transpose(1, 2), atol=1e-12)


def test_the_edge_update_flag_is_checked_and_round_trips():
    model = build_model("so2", SLOTS, 3, channels=4, lmax=2, layers=1, edge_update="tp")
    assert build_model("so2", **{"n_atoms": 3, **model.config}).edge_update == "tp"
    with pytest.raises(ValueError, match="edge_update"):
        build_model("so2", SLOTS, 3, edge_update="cg")


def test_the_mlp_baseline_is_not_equivariant(water):
    torch.manual_seed(0)
    model = build_model("mlp", SLOTS, 3).double()
    pos = torch.tensor(water.R)[None]
    R = _rot(2)
    D = torch.block_diag(*[wigner_D64(l, R) for l in SLOTS])
    with torch.no_grad():
        err = (model(water.Z, pos @ R.T) - D @ model(water.Z, pos) @ D.T).abs().max()
    assert err > 1e-3


def test_mlip_forces_are_minus_the_energy_gradient(water):
    torch.manual_seed(0)
    model = build_model("mlip", (0,), 3, channels=4, lmax=2, layers=1).double()
    pos = torch.tensor(water.R)[None] + 0.03 * torch.randn(1, 3, 3, dtype=torch.float64)
    _, F = model(water.Z, pos)
    h = 1e-5
    fd = torch.zeros(3, 3, dtype=torch.float64)
    for a in range(3):
        for k in range(3):
            d = torch.zeros_like(pos)
            d[0, a, k] = h
            with torch.no_grad():
                fd[a, k] = -(model(water.Z, pos + d, forces=False)[0] - model(water.Z, pos - d, forces=False)[0]) / (
                    2 * h
                )
    np.testing.assert_allclose(F[0].detach(), fd, atol=1e-6)


def test_training_lowers_the_loss_and_beats_the_atomic_reference(tiny_ds):
    from icml26.qhflow2.train import layout_for

    model, losses = train_h_model("so2", tiny_ds, TrainConfig(steps=40, batch=4, lr=3e-3), seed=0, channels=4)
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    untrained, _ = train_h_model("so2", tiny_ds, TrainConfig(steps=0), seed=0, channels=4)
    lay = layout_for(tiny_ds)
    err = np.abs(predict_h(model, lay, tiny_ds.Z, tiny_ds.R) - tiny_ds.H).mean()
    err0 = np.abs(predict_h(untrained, lay, tiny_ds.Z, tiny_ds.R) - tiny_ds.H).mean()
    assert err < err0
    _, ml = train_mlip(tiny_ds, TrainConfig(steps=15, batch=4), seed=0, channels=4)
    assert np.mean(ml[-3:]) < np.mean(ml[:3])
