"""Analysis measures on ground truth: the bound, the spike-count code, entropy, rate-code error, collisions."""

import math

import numpy as np
import pytest
import torch

from icml26.smoothspike.analysis import (
    bound,
    collision_rate,
    max_coordinate_trials,
    outlier_activations,
    rate_code_error,
    spike_counts,
    spike_entropy,
    spike_report,
)
from icml26.smoothspike.hadamard import HadamardRotation
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder


def test_bound_formula_and_scaling():
    assert bound(64, 0.05) == pytest.approx(math.sqrt(2 * math.log(2 * 64 / 0.05) / 64))
    assert bound(4096) < bound(1024) < bound(64)
    with pytest.raises(ValueError):
        bound(64, 1.5)


def test_max_coordinate_adversary_and_signs():
    # without signs a row of H is mapped to a basis vector: max coordinate exactly 1
    np.testing.assert_allclose(max_coordinate_trials(256, 20, 0, signs=False), 1.0)
    # a one-hot input spreads to +-1/sqrt(n) whatever the signs
    np.testing.assert_allclose(max_coordinate_trials(256, 20, 0, kind="one-hot"), 1 / 16)
    m = max_coordinate_trials(1024, 300, 1)
    assert (m > bound(1024)).mean() <= 0.05 and m.max() < 0.5


def test_spike_counts_are_the_lif_rate_code():
    z = torch.tensor([0.0, 0.9, 1.2, 1.5, 2.0, -3.0])
    # V: x/2, 3x/4, 7x/8, ... (tau 2, hard reset): 0.9 never fires, 1.2 at t=3, 1.5 every 2nd step, 2.0 always
    assert spike_counts(z, T=4).tolist() == [0, 0, 1, 2, 4, 0]


def test_entropy_on_known_distributions():
    assert spike_entropy(np.arange(5).repeat(10), T=4) == pytest.approx(math.log2(5))
    assert spike_entropy(np.zeros(50), T=4) == 0.0


def test_rate_code_error_ground_truth():
    z = torch.linspace(0.1, 3.0, 40)
    # counts that identify every input: nothing is lost
    assert rate_code_error(z, torch.arange(40)) == pytest.approx(0.0, abs=1e-12)
    # one count for all: the error is the relative deviation from the mean
    expected = float((z - z.mean()).norm() / z.norm())
    assert rate_code_error(z, torch.zeros(40, dtype=torch.long)) == pytest.approx(expected)
    # the true code of a finer clock loses less than the T = 4 code
    assert rate_code_error(z, spike_counts(z, T=64)) < rate_code_error(z, spike_counts(z, T=4))


def test_collision_rate():
    z = torch.tensor([2.0, 3.0, 4.0, 5.0, 0.1])
    assert collision_rate(z, torch.tensor([4, 4, 4, 4, 0])) == 1.0
    assert collision_rate(z, torch.tensor([1, 2, 3, 4, 0])) == pytest.approx(0.25)


def test_rotation_smooths_outlier_activations():
    z = outlier_activations(256, 300, 0, gain=2.0)
    zr = HadamardRotation(256, generator=torch.Generator().manual_seed(0))(z)
    assert float(zr.abs().amax(1).mean()) < 0.5 * float(z.abs().amax(1).mean())
    c, cr = spike_counts(z), spike_counts(zr)
    assert spike_entropy(cr, 4) > spike_entropy(c, 4)
    assert rate_code_error(zr, cr) < rate_code_error(z, c)


def test_spike_report_rows():
    m = SpikingEncoder(EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=2, norm_gain=2.0))
    ids = torch.randint(0, 50, (3, 8))
    rows = spike_report(m, ids, torch.ones(3, 8))
    assert [(r["layer"], r["site"]) for r in rows][:4] == [(0, "attn_in"), (0, "v"), (0, "mlp_in"), (0, "hidden")]
    assert len(rows) == 8 and all(0 <= r["entropy [bits]"] <= math.log2(5) + 1e-9 for r in rows)
    assert all(b.taps is None for b in m.blocks)  # recording switched off again
