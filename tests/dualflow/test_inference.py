"""ODE inference against closed forms: linear compressive fields and constant-velocity dynamics."""

import numpy as np
import pytest
import torch
from scipy.linalg import expm

from icml26.dualflow.inference import compress, decompress, simulate


class _LinearFields(torch.nn.Module):
    """Stub model: u(x, tau) = A x, v(x, tau, s, hist) = c (constant velocity)."""

    def __init__(self, A, c, history=1):
        super().__init__()
        self.A, self.c, self.history = A, c, history

    def compressive(self, x, tau):
        return x @ self.A.T

    def dynamical(self, x, tau, s, hist):
        return self.c.expand_as(x)


@pytest.mark.parametrize(("method", "tol"), [("dopri5", 1e-7), ("rk4", 1e-4)])
def test_compress_matches_matrix_exponential(method, tol):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 4)) * 0.5
    x1 = rng.normal(size=(3, 4))
    stub = _LinearFields(torch.as_tensor(A), torch.zeros(4, dtype=torch.float64))
    x0, nfe = compress(stub, torch.as_tensor(x1), method=method, rtol=1e-10, atol=1e-10, n_steps=16)
    assert np.allclose(x0.numpy(), x1 @ expm(-A).T, atol=tol)  # x(0) = e^{-A} x(1)
    assert nfe == (64 if method == "rk4" else nfe) and nfe > 0
    back, _ = decompress(stub, x0, method=method, rtol=1e-10, atol=1e-10, n_steps=16)
    assert np.allclose(back.numpy(), x1, atol=tol)


def test_partial_compression_and_identity():
    A = torch.eye(2, dtype=torch.float64)
    stub = _LinearFields(A, torch.zeros(2, dtype=torch.float64))
    x = torch.ones(1, 2, dtype=torch.float64)
    half, _ = compress(stub, x, rtol=1e-10, atol=1e-10, tau=0.5)
    assert np.allclose(half.numpy(), np.exp(-0.5), atol=1e-7)
    same, nfe = compress(stub, x, tau=1.0)
    assert nfe == 0 and torch.equal(same, x)
    with pytest.raises(ValueError, match="solver"):
        compress(stub, x, method="euler")


def test_simulate_constant_velocity():
    c = torch.tensor([0.5, -1.0], dtype=torch.float64)
    stub = _LinearFields(torch.zeros(2, 2, dtype=torch.float64), c, history=1)
    init = torch.zeros(3, 2, 2, dtype=torch.float64)
    init[:, -1] = torch.tensor([1.0, 2.0], dtype=torch.float64)
    out, nfe = simulate(stub, init, n_frames=5, dt=0.2, method="rk4", n_steps=2)
    expected = np.array([1.0, 2.0]) + 0.2 * np.arange(1, 6)[:, None] * c.numpy()
    assert out.shape == (3, 5, 2) and nfe == 5 * 2 * 4
    assert np.allclose(out[0].numpy(), expected)
    with pytest.raises(ValueError, match="h \\+ 1"):
        simulate(stub, init[:, :1], n_frames=2)
