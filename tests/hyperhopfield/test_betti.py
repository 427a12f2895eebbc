"""Known answers of the Betti-curve geometry test: clouds in H^2 are called hyperbolic with about the right
radius, flat balls are called flat; the curves depend on the distance order only."""

import numpy as np
import pytest

from icml26.hyperhopfield.betti import (
    HYPERBOLIC_GAIN,
    betti_curves,
    correlation_geometry,
    fit_geometry,
    geometry_of_distances,
    latent_activity,
    rank_distances,
    sample_geometry,
)

#: Known answers are read at 200 points against a 10-draw library: at 100 points one draw's curves scatter so much
#: that flat discs reach gains of 0.45 and H^3 of radius 5 is called hyperbolic in only a third of the draws.
N_KNOWN = 200


@pytest.fixture(scope="module")
def lib():
    from icml26.hyperhopfield.claims import _library

    return _library(N_KNOWN, 10, 0)  # the measure checks' library (built once per process)


def _fits(lib, space, d, R, seed, draws=3):
    rng = np.random.default_rng([seed, d, int(10 * R), len(space)])
    clouds = [sample_geometry(N_KNOWN, d, R, rng, space=space) for _ in range(draws)]
    return [fit_geometry(betti_curves(rank_distances(D, similarity=False)), lib) for D in clouds]


def test_line_is_called_a_flat_line(lib):
    fits = _fits(lib, "line", 1, 0.0, 1)
    assert all(f.space == "line" and f.dim == 1 and not f.hyperbolic for f in fits)
    assert all(f.gain == 0.0 and f.score == 0.0 for f in fits)  # the line itself fits best


def test_circle_is_called_a_circle(lib):
    fits = _fits(lib, "circle", 1, 0.0, 1)
    assert all(f.space == "circle" and f.dim == 1 and not f.hyperbolic for f in fits)


@pytest.mark.parametrize("seed", [1, 2])
def test_hyperbolic_disc_is_called_hyperbolic_with_its_radius(lib, seed):
    fits = _fits(lib, "hyperbolic", 2, 5.0, seed)
    assert np.mean([f.score for f in fits]) > HYPERBOLIC_GAIN
    assert all(f.space == "hyperbolic" for f in fits)
    assert 4.0 < np.median([f.radius for f in fits]) <= 8.0  # radius 5 in curvature radii (grid tops at 8)
    small = _fits(lib, "hyperbolic", 2, 2.0, seed)
    assert np.mean([f.radius for f in small]) < np.mean([f.radius for f in fits])  # less curved, smaller radius


@pytest.mark.parametrize("seed", [1, 2])
def test_hyperbolic_3_ball_is_called_hyperbolic(lib, seed):
    fits = _fits(lib, "hyperbolic", 3, 5.0, seed)
    assert np.mean([f.score for f in fits]) > HYPERBOLIC_GAIN
    assert all(f.space == "hyperbolic" and f.dim in (2, 3) for f in fits)  # H^3 of radius 5 ~ H^2 of radius 4
    assert 3.0 < np.median([f.radius for f in fits]) <= 8.0


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("d", [2, 3])
def test_flat_balls_are_called_flat(lib, d, seed):
    fits = _fits(lib, "flat", d, 0.0, seed)
    # the verdict reads the score; near-flat balls of H^d (radius 1-2) may fit best, and score 0
    assert np.mean([f.score for f in fits]) < HYPERBOLIC_GAIN
    assert sum(f.hyperbolic for f in fits) <= 1


def test_curves_depend_on_the_order_only_and_count_components():
    rng = np.random.default_rng(3)
    D = sample_geometry(30, 2, 0.0, rng)
    a = betti_curves(rank_distances(D, similarity=False))
    b = betti_curves(rank_distances(np.exp(2 * D) + 5, similarity=False))  # monotone transform
    c = betti_curves(rank_distances(-D))  # as a similarity
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert a[0, 0] == 30 and a[0, -1] == 1  # 30 components at density 0, one at 0.6
    square = np.array([[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]], float)  # a 4-cycle, long diagonals
    curves = betti_curves(rank_distances(square, similarity=False), densities=np.linspace(0, 1, 101))
    assert curves[1].max() == 1  # the square's hole appears before the diagonals fill it


def test_correlation_test_sees_a_planted_geometry_and_its_null(lib):
    rng = np.random.default_rng(4)
    n = N_KNOWN
    hyp = correlation_geometry(
        latent_activity(sample_geometry(n, 2, 5.0, rng), 3000, rng), rng, n_boot=5, n_null=10, lib=lib
    )
    flat = correlation_geometry(latent_activity(sample_geometry(n, 2, 0.0, rng), 3000, rng), rng, n_boot=5, lib=lib)
    assert hyp["score"] > flat["score"] + HYPERBOLIC_GAIN
    assert hyp["excess_over_flat_null"] > 0 and hyp["p_flat"] < 0.2
    lo, hi = hyp["score_interval"]
    assert lo <= hi and hyp["units"] == n


def test_parametric_bootstrap_interval_brackets_the_fit():
    rng = np.random.default_rng(5)
    out = geometry_of_distances(sample_geometry(60, 2, 5.0, rng), rng, n_boot=8, reps=6)
    lo, hi = out["radius_interval"]
    assert lo <= hi and out["dim"] in (1, 2, 3, 4)


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        rank_distances(np.ones((3, 5)))
    with pytest.raises(ValueError, match="finite"):
        rank_distances(np.full((5, 5), np.nan))
    with pytest.raises(ValueError, match="4 units"):
        correlation_geometry(np.ones((10, 3)), np.random.default_rng(0))
    with pytest.raises(ValueError, match="1-D"):
        sample_geometry(5, 2, 0.0, np.random.default_rng(0), space="circle")
    with pytest.raises(ValueError, match="unknown model"):
        sample_geometry(5, 2, 0.0, np.random.default_rng(0), space="torus")
    with pytest.raises(ValueError, match="fire"):
        correlation_geometry(np.ones((10, 6)), np.random.default_rng(0))


def test_place_cell_surrogates_are_sparse_poisson_units():
    """The surrogates of the Betti test spike like the simulated track code: sparse Poisson counts, cells whose
    fields are close in the model space fire together more than far ones, bad sizes refused."""
    from icml26.hyperhopfield.betti import _cross_distances, place_cell_counts

    rng = np.random.default_rng(8)
    c = place_cell_counts(40, 3000, "hyperbolic", 2, 3.0, rng)
    assert c.shape == (3000, 40) and np.all(c >= 0) and np.all(c == np.round(c))
    assert 0.05 < c.mean() < 2.0 and np.mean(c == 0) > 0.5  # sparse: most windows silent for a unit
    D = _cross_distances(5, 7, "circle", 1, 0.0, rng)
    assert D.shape == (5, 7) and D.max() <= np.pi
    line = place_cell_counts(30, 4000, "line", 1, 0.0, np.random.default_rng(9))
    C = np.corrcoef(line.T)
    assert np.nanmax(C[np.triu_indices(30, 1)]) > 0.2  # overlapping fields on the segment co-fire
    with pytest.raises(ValueError, match="cells"):
        place_cell_counts(3, 100, "line", 1, 0.0, rng)


@pytest.mark.parametrize("seed", [1, 2])
def test_through_spiking_the_test_does_not_separate_curved_from_flat_place_cells(seed):
    """A known answer through the pipeline the Betti claims judge (place cells -> Poisson spikes -> correlations),
    not through point clouds: at 29 units (the recordings' size) sparse place cells in H^2 of radius 5 are not
    told apart from place cells in a flat disc. The measure is therefore NOT validated for place-cell data; this
    test documents that failure and fails if the pipeline starts to separate them (then the claims' wording and
    the README must change)."""
    from icml26.hyperhopfield.betti import place_cell_counts
    from icml26.hyperhopfield.claims import _library

    lib = _library(29, 10, 0)

    def scores(space, R):
        rng = np.random.default_rng([seed, 2, int(R), len(space)])
        return np.array(
            [
                correlation_geometry(place_cell_counts(29, 2000, space, 2, R, rng), rng, lib=lib)["score"]
                for _ in range(8)
            ]
        )

    curved, flat = scores("hyperbolic", 5.0), scores("flat", 0.0)
    # as point clouds H^2 of radius 5 is called hyperbolic in 10 of 12 draws; through spiking at most 2 of 8 are
    assert np.sum(curved > HYPERBOLIC_GAIN) <= 2
    # and the curved code does not score above the flat one by anything near the claims' bar (0.2)
    assert curved.mean() - flat.mean() < HYPERBOLIC_GAIN / 2
