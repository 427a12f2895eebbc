"""Contract v3 pieces of smoothspike: the Haar oracle rotation, unfusing with another rotation, the planted
accuracy handicap, and the measures seen both ways."""

import numpy as np
import pytest
import torch

from icml26.smoothspike.claims import MEASURES, _handicapped, _sphere_max
from icml26.smoothspike.model import EncoderConfig, HaarRotation, SpikingEncoder, fuse, unfuse

torch.set_num_threads(1)


def test_haar_rotation_is_orthogonal_and_inverts():
    r = HaarRotation(48, torch.Generator().manual_seed(0))
    q = r.matrix(torch.float64)
    torch.testing.assert_close(q @ q.T, torch.eye(48, dtype=torch.float64), atol=1e-6, rtol=0)
    x = torch.randn(5, 48)
    torch.testing.assert_close(r(r(x), inverse=True), x, atol=1e-5, rtol=0)


def test_haar_rotation_spreads_a_basis_vector_like_the_bound_says():
    # a uniform point of the sphere: the max coordinate of e_1 Q is O(sqrt(log n / n)), far below 1
    r = HaarRotation(256, torch.Generator().manual_seed(1))
    assert float(r(torch.eye(256)[:1]).abs().max()) < np.sqrt(2 * np.log(2 * 256 / 0.05) / 256)


def test_unfuse_with_another_rotation_keeps_the_weights_in_the_original_basis():
    cfg = EncoderConfig(vocab_size=100, max_len=8, dim=32, heads=4, layers=1, n_outputs=3)
    base = SpikingEncoder(cfg, seed=0).double()
    gen = torch.Generator().manual_seed(2)
    rot = unfuse(base, rotation="hadamard", seed=0, make_rotation=lambda n: HaarRotation(n, gen)).double()
    assert isinstance(rot.h1, HaarRotation) and isinstance(rot.blocks[0].h3, HaarRotation)
    back = fuse(rot)  # folding the Haar rotations back gives the base weights (Q orthogonal)
    torch.testing.assert_close(back.blocks[0].fc1.weight, base.blocks[0].fc1.weight)
    torch.testing.assert_close(back.blocks[0].o.bias, base.blocks[0].o.bias)
    with pytest.raises(ValueError, match="rotation is 'none'"):
        unfuse(base, rotation="none", make_rotation=lambda n: HaarRotation(n))


@pytest.mark.parametrize("seed", [0, 5])
def test_handicap_lowers_accuracy_by_exactly_the_planted_points(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 500)
    pred = np.where(rng.random(500) < 0.7, labels, (labels + 1) % 3)
    worse = _handicapped(pred, labels, 8.2, np.random.default_rng(seed + 1))
    assert (pred == labels).sum() - (worse == labels).sum() == round(0.082 * 500)
    assert np.all(worse[pred != labels] == pred[pred != labels])  # only correct answers are turned wrong


def test_uniform_sphere_points_have_unit_norm_maxima_in_range():
    m = _sphere_max(64, 200, 0)
    assert np.all((m > 1 / 8) & (m <= 1.0))


@pytest.mark.parametrize(
    "name", ["bound exceed rate", "accuracy gain [pt]", "|accuracy gain - 8.2| of a planted 8.2 pt"]
)
@pytest.mark.parametrize("seed", [0, 2])
def test_measures_see_the_truth_and_the_null(name, seed):
    check = next(m for m in MEASURES if m.name == name)
    assert check.check(seed) == []


@pytest.mark.parametrize("seed", [0, 3])
def test_accuracy_gain_reads_planted_gains_at_their_size(seed):
    """The judged gain reads a planted gain at its size (up to the 64 smoke tweets' granularity of 1.6 points)
    and the null (random answerers) at 0 within a band far narrower than the paper's 8.2 points."""
    from icml26.smoothspike.claims import _gain_readings

    r = _gain_readings(seed)
    for points in (4.1, 8.2, 16.4):
        assert r[f"planted {points:g} pt"] == pytest.approx(points, abs=100 / 64 / 2 + 1e-9)
    assert abs(r["null"]) < 1.0
