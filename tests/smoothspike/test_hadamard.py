"""Hadamard constructions, the fast transform and Newton-Schulz orthogonalisation against dense references."""

import numpy as np
import pytest
import scipy.linalg
import torch

from icml26.smoothspike.hadamard import (
    HadamardRotation,
    LearnableRotation,
    fwht,
    hadamard_factor,
    hadamard_matrix,
    hadamard_transform,
    newton_schulz,
    orthogonality_error,
    supported_sizes,
)


@pytest.mark.parametrize("n", [1, 2, 4, 12, 20, 24, 40, 64, 96, 384, 640, 768])
def test_hadamard_matrix_is_hadamard(n):
    h = hadamard_matrix(n, normalized=False, dtype=torch.float64)
    assert set(h.unique().tolist()) <= {-1.0, 1.0}
    torch.testing.assert_close(h @ h.T, n * torch.eye(n, dtype=torch.float64))


def test_sylvester_matches_scipy():
    for n in (2, 8, 64):
        np.testing.assert_array_equal(hadamard_matrix(n, normalized=False).numpy(), scipy.linalg.hadamard(n))


@pytest.mark.parametrize("n", [3, 6, 10, 100, 36, 4095])
def test_unsupported_sizes_are_refused_with_the_list(n):
    with pytest.raises(ValueError, match=r"no Hadamard construction for size .*supported sizes are 2\^k, 12\*2\^k"):
        hadamard_factor(n)
    assert n not in supported_sizes(4096)


def test_supported_sizes():
    s = supported_sizes(1024)
    assert 384 in s and 768 in s and 640 in s and 1024 in s and 100 not in s
    assert hadamard_factor(768) == (12, 64) and hadamard_factor(384) == (12, 32) and hadamard_factor(256) == (1, 256)


@pytest.mark.parametrize("n", [1, 2, 16, 256, 4096])
def test_fwht_matches_dense_product(n):
    x = torch.randn(3, 5, n, dtype=torch.float64)
    h = torch.tensor(scipy.linalg.hadamard(n), dtype=torch.float64)
    torch.testing.assert_close(fwht(x), x @ h)


def test_fwht_needs_power_of_two():
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(torch.zeros(2, 12))


@pytest.mark.parametrize("n", [12, 20, 48, 384, 768, 256])
def test_fast_transform_and_transpose_match_dense(n):
    x = torch.randn(4, n, dtype=torch.float64)
    h = hadamard_matrix(n, dtype=torch.float64)
    torch.testing.assert_close(hadamard_transform(x), x @ h)
    torch.testing.assert_close(hadamard_transform(x, transpose=True), x @ h.T)
    torch.testing.assert_close(hadamard_transform(hadamard_transform(x), transpose=True), x)  # orthogonal


@pytest.mark.parametrize(("n", "blocks"), [(64, 1), (384, 1), (256, 4), (768, 4)])
def test_randomized_rotation_forward_inverse_and_matrix(n, blocks):
    r = HadamardRotation(n, blocks=blocks, generator=torch.Generator().manual_seed(0)).double()
    x = torch.randn(2, 3, n, dtype=torch.float64)
    m = r.matrix(torch.float64)
    torch.testing.assert_close(r(x), x @ m)
    torch.testing.assert_close(r(x, inverse=True), x @ m.T)
    assert orthogonality_error(m) < 1e-12
    assert set(r.signs.abs().unique().tolist()) == {1.0}
    if blocks > 1:  # block-diagonal: no mixing between blocks
        b = n // blocks
        assert float(m[:b, b:].abs().max()) == 0.0


def test_newton_schulz_cubic_reaches_the_polar_factor():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(48, 48, generator=g, dtype=torch.float64) + 3 * torch.eye(48, dtype=torch.float64)
    u, _, vh = torch.linalg.svd(w)
    q = newton_schulz(w, method="cubic", tol=1e-12)
    assert orthogonality_error(q) < 1e-9
    torch.testing.assert_close(q, u @ vh, atol=1e-8, rtol=0)  # ground truth: msign(W) = U Vᵀ


def test_quintic_is_near_but_not_exactly_orthogonal():
    """The authors' 5-step quintic lands singular values in a band around 1, not on 1; the cubic converges."""
    w = HadamardRotation(256, generator=torch.Generator().manual_seed(2)).matrix(torch.float64)
    w = w + 0.05 * torch.randn(256, 256, generator=torch.Generator().manual_seed(3), dtype=torch.float64) / 16
    s = torch.linalg.svdvals(newton_schulz(w, method="quintic"))
    assert 0.5 < float(s.min()) and float(s.max()) < 1.3
    assert orthogonality_error(newton_schulz(w, method="quintic")) > 1e-2
    assert orthogonality_error(newton_schulz(w, method="cubic")) < 1e-5  # default tol 1e-6 per entry
    assert orthogonality_error(newton_schulz(w, method="cubic", tol=1e-12)) < 1e-9


def test_newton_schulz_bad_input():
    with pytest.raises(ValueError, match="square"):
        newton_schulz(torch.zeros(3, 4))
    with pytest.raises(ValueError, match="unknown Newton-Schulz"):
        newton_schulz(torch.eye(3), method="septic")


def test_learnable_rotation_is_differentiable_and_starts_orthogonal():
    r = LearnableRotation(64, blocks=2, method="cubic", generator=torch.Generator().manual_seed(0)).double()
    assert orthogonality_error(r.matrix()) < 1e-5
    x = torch.randn(5, 64, dtype=torch.float64)
    r(x).pow(3).sum().backward()
    assert r.weight.grad is not None and torch.isfinite(r.weight.grad).all() and r.weight.grad.abs().sum() > 0
