"""Contract v3 pieces of coherence: the chance-corrected contiguity validated both ways, the coverage hinge
that revives dead features, and the measure checks on another seed."""

import numpy as np
import torch

from icml26.coherence.experiment import coherent_arc_codes
from icml26.coherence.objective import coh_loss
from icml26.coherence.topology import arc_contiguity


def test_contiguity_sees_tuning_and_its_absence():
    rng = np.random.default_rng(5)
    theta = rng.uniform(0, 2 * np.pi, 600)
    arcs = arc_contiguity(coherent_arc_codes(theta, 10, rng), theta)
    assert np.allclose(arcs["contiguity"], 1.0)
    everywhere = arc_contiguity(np.ones((600, 4)) + 0.05 * rng.random((600, 4)), theta)
    assert np.all(everywhere["contiguity"] == 0.0) and np.all(everywhere["raw_contiguity"] == 1.0)  # v2 said 1
    scattered = arc_contiguity(rng.random((600, 8)), theta)  # random firing, no tuning
    assert np.all(np.abs(scattered["contiguity"]) < 0.15)
    sparse = arc_contiguity((rng.random((600, 8)) < 0.05) * rng.random((600, 8)), theta)
    assert np.mean(sparse["contiguity"]) < 0.15
    two = arc_contiguity(np.maximum(np.cos(2 * theta[:, None] + rng.uniform(0, 6, 6)), 0), theta)
    assert np.all((two["contiguity"] > 0.15) & (two["contiguity"] < 0.6))  # two arcs: in between


def test_contiguity_is_deterministic_and_checks_shuffles():
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 300)
    A = rng.random((300, 3))
    assert np.array_equal(arc_contiguity(A, theta)["contiguity"], arc_contiguity(A, theta)["contiguity"])
    import pytest

    with pytest.raises(ValueError, match="n_shuffles"):
        arc_contiguity(A, theta, n_shuffles=0)


def test_dead_column_hinge_pushes_its_pre_activations_up():
    """Without the pre-activations a dead feature gets no gradient; with them, its pre-activations rise."""
    torch.manual_seed(0)
    x = torch.rand(64, 2)
    H = torch.randn(64, 3, requires_grad=True)
    with torch.no_grad():
        H[:, 2] = -1.0 - torch.rand(64)  # feature 2 never fires
    coh_loss(torch.relu(H), x, pre=H).backward()
    assert torch.all(H.grad[:, 2] < 0)  # gradient descent raises them
    H.grad = None
    coh_loss(torch.relu(H), x).backward()
    assert torch.all(H.grad[:, 2] == 0)


def test_measure_checks_pass_on_another_seed():
    from icml26.coherence.claims import MEASURES

    for m in MEASURES:
        assert m.check(4) == [], m.name
