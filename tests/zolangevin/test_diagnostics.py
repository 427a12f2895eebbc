import numpy as np
import pytest

from icml26.zolangevin import imq_ksd, mmd, mode_balance, relative_fisher, variance_bias


def slow_ksd(x, s, c=1.0, beta=-0.5):
    n, d = x.shape
    total = 0.0
    for i in range(n):
        for j in range(n):
            r = x[i] - x[j]
            base = c**2 + r @ r
            k = base**beta
            gx = 2 * beta * r * base ** (beta - 1)  # ∇_x k
            gy = -gx
            tr = -2 * beta * d * base ** (beta - 1) - 4 * beta * (beta - 1) * (r @ r) * base ** (beta - 2)
            total += s[i] @ s[j] * k + s[i] @ gy + s[j] @ gx + tr
    return np.sqrt(total / n**2)


def test_ksd_matches_a_slow_double_loop():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((15, 3))
    s = -x + 0.3 * rng.standard_normal(x.shape)
    assert np.isclose(imq_ksd(x, s), slow_ksd(x, s))


def test_ksd_detects_a_wrong_law_and_shrinks_with_n():
    rng = np.random.default_rng(1)
    good_small, good = rng.standard_normal((100, 4)), rng.standard_normal((1000, 4))
    hot = 1.3 * rng.standard_normal((1000, 4))
    k_small, k_good, k_hot = imq_ksd(good_small, -good_small), imq_ksd(good, -good), imq_ksd(hot, -hot)
    assert k_good < k_small and k_hot > 2 * k_good


def test_relative_fisher_orders_samplers_by_quality():
    rng = np.random.default_rng(2)
    good, shifted = rng.standard_normal((800, 2)), rng.standard_normal((800, 2)) + 0.7
    assert relative_fisher(shifted, -shifted) > 2 * relative_fisher(good, -good)


def test_variance_bias_closed_form():
    x = np.random.default_rng(3).standard_normal((100_000, 3)) * np.sqrt([1.0, 2.0, 4.0])
    assert abs(variance_bias(x, [1.0, 1.0, 2.0]) - (0 + 1 + 1) / 3) < 0.03


def slow_mmd(x, y, bw):
    k = lambda a, b: np.exp(-((a - b) ** 2).sum() / (2 * bw**2))  # noqa: E731
    n, m = len(x), len(y)
    kxx = sum(k(x[i], x[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    kyy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    kxy = sum(k(x[i], y[j]) for i in range(n) for j in range(m)) / (n * m)
    return kxx + kyy - 2 * kxy


def test_mmd_matches_slow_reference_and_is_near_zero_for_equal_laws():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((12, 2)), rng.standard_normal((9, 2)) + 0.5
    assert np.isclose(mmd(x, y, bandwidth=0.8), slow_mmd(x, y, 0.8))
    a, b = rng.standard_normal((500, 2)), rng.standard_normal((500, 2))
    assert abs(mmd(a, b)) < 0.01 and mmd(a, b + 1.0) > 0.1


def test_mode_balance_and_errors():
    p = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    assert np.isclose(mode_balance(p, [0.5, 0.5]), 0.25)
    with pytest.raises(ValueError):
        mode_balance(p, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="diverged"):
        imq_ksd(np.array([[np.nan, 0.0], [0.0, 0.0]]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        imq_ksd(np.zeros((3, 2)), np.zeros((3, 3)))
