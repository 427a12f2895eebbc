"""Place-cell data and geometry statistics on ground truth."""

import numpy as np
import pytest

from icml26.hyperhopfield.data import PlaceCells, draw_widths, place_cells
from icml26.hyperhopfield.geometry import betti_curves, distance_scaling, gromov_delta, log_scaling_range, mds_stress


def test_widths_and_budget():
    rng = np.random.default_rng(0)
    for kind in ("exponential", "log-uniform", "constant"):
        w = draw_widths(kind, 20000, 0.05, rng)
        assert np.all(w > 0) and abs(w.mean() / 0.05 - 1) < 0.05
    cells = place_cells(30, rng=rng).with_budget(12.0)
    grid = np.linspace(0, 1, 400)
    assert cells.rates(grid).sum(1).mean() == pytest.approx(12.0)
    with pytest.raises(ValueError, match="positive"):
        PlaceCells(np.zeros((2, 1)), np.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="positive"):
        draw_widths("constant", 3, -1.0, rng)
    with pytest.raises(ValueError, match="unknown width"):
        draw_widths("gamma", 3, 1.0, rng)
    with pytest.raises(ValueError, match="positive"):
        cells.counts(grid, rng, duration=-1)


def test_log_range_on_known_curves():
    seps = np.logspace(-3, 0, 31)
    d_log = np.log(seps / seps[0])  # exactly logarithmic: the whole 3 decades
    assert log_scaling_range(seps, d_log)[0] == pytest.approx(3.0)
    d_sat = 1 - np.exp(-((seps / 0.01) ** 2))  # saturating single-scale curve
    assert log_scaling_range(seps, d_sat)[0] < 1.0


def test_geometry_statistics_on_ground_truth():
    rng = np.random.default_rng(1)
    # a tree metric (star) has delta 0; points on a circle have delta > 0
    star = np.ones((10, 10)) * 2.0
    np.fill_diagonal(star, 0)
    assert gromov_delta(star, 2000, rng) == pytest.approx(0.0)
    Y = rng.standard_normal((25, 2))
    D = np.linalg.norm(Y[:, None] - Y[None], axis=-1)
    assert mds_stress(D, "euclidean", rng=rng) < 1e-3  # a planar cloud embeds exactly
    # points sampled in the hyperbolic plane: hyperbolic MDS fits better than Euclidean
    from icml26.hyperhopfield.capacity import sample_hyperbolic_ball
    from icml26.hyperhopfield.lorentz import pairwise_dist

    H = sample_hyperbolic_ball(25, 2, 5.0, rng)
    DH = pairwise_dist(H, H)
    assert mds_stress(DH, "hyperbolic", rng=rng) < mds_stress(DH, "euclidean", rng=rng)
    # a circle has one loop: a persistent H1 bar
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    curves = betti_curves(np.c_[np.cos(t), np.sin(t)], maxdim=1)
    assert curves[1].max() >= 1


def test_multiscale_code_has_wider_log_range():
    rng = np.random.default_rng(2)
    seps = np.logspace(-3.5, -0.5, 17)
    out = {}
    for kind in ("exponential", "constant"):
        cells = place_cells(150, kind, mean_width=0.05, rng=np.random.default_rng(3))
        out[kind] = log_scaling_range(seps, distance_scaling(cells, seps, 150, rng))[0]
    assert out["exponential"] > out["constant"]
    with pytest.raises(ValueError, match="separations"):
        distance_scaling(cells, np.array([-0.1]), 10, rng)
