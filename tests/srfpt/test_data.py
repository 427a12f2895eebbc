"""Benchmark problems, sampling, the CSV loader and the recovery checks."""

import numpy as np
import pytest
import sympy

from icml26.srfpt.data import FEYNMAN, NGUYEN, PROBLEMS, get_problem, load_csv, numeric_match, sample, symbolic_match


def test_catalogues_are_complete_and_finite():
    assert [p.name for p in NGUYEN.values()] == [f"nguyen-{i}" for i in range(1, 13)]
    assert len(FEYNMAN) >= 20
    for p in PROBLEMS.values():
        X, y = sample(p, 50, seed=0)
        assert X.shape == (50, len(p.variables)) and np.isfinite(y).all(), p.name
        for j, (lo, hi) in enumerate(p.ranges.values()):
            assert lo <= X[:, j].min() and X[:, j].max() <= hi


@pytest.mark.parametrize("noise", [0.01, 0.1])
def test_noise_level_is_relative_to_the_signal(noise):
    p = get_problem("nguyen-5")
    X, y = sample(p, 20000, noise=noise, seed=1)
    clean = p.function()(X)
    assert np.std(y - clean) == pytest.approx(noise * np.std(clean), rel=0.05)


def test_symbolic_match_accepts_equivalent_forms_and_rejects_others():
    p = get_problem("nguyen-11")
    x, y = (sympy.Symbol(n, real=True) for n in ("x", "y"))
    assert symbolic_match(sympy.exp(y * sympy.log(x)), p.expression)
    assert not symbolic_match(sympy.exp(y * x), p.expression)
    g = get_problem("gravitation")
    m1, m2, r = (sympy.Symbol(n) for n in ("m1", "m2", "r"))
    assert symbolic_match(sympy.Float(6.674e-11 * (1 + 1e-9)) * m1 * m2 / r**2, g.expression)
    assert not symbolic_match(sympy.Float(6.674e-11) * m1 * m2 / r, g.expression)
    assert not symbolic_match(sympy.Symbol("z") * m1, g.expression)


def test_numeric_match():
    p = get_problem("kinetic-energy")
    assert numeric_match(lambda X: X[:, 0] * X[:, 1] ** 2 / 2, p)
    assert not numeric_match(lambda X: X[:, 0] * X[:, 1] ** 2 / 2.001, p)


def test_load_csv_validates(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("a,b,y\n1,2,3\n4,5,9\n")
    X, y, names = load_csv(f, "y")
    assert names == ["a", "b"] and X.shape == (2, 2) and y.tolist() == [3.0, 9.0]
    with pytest.raises(ValueError, match="target column 'z' not found"):
        load_csv(f, "z")
    f.write_text("a,y\n1,2\nnan,3\n")
    with pytest.raises(ValueError, match="NaN or inf in column"):
        load_csv(f, "y")
    f.write_text("a,y\n1,2\nfoo,3\n")
    with pytest.raises(ValueError, match="non-numeric"):
        load_csv(f, "y")
    f.write_text("a,y\n1,2\n")
    with pytest.raises(ValueError, match="at least 2 data rows"):
        load_csv(f, "y")
    f.write_text("a,a,y\n1,2,3\n4,5,9\n")
    with pytest.raises(ValueError, match="duplicate"):
        load_csv(f, "y")
    with pytest.raises(OSError):
        load_csv(tmp_path / "missing.csv", "y")
    with pytest.raises(ValueError, match="unknown problem"):
        get_problem("nguyen-99")
