"""Ground truth for the ``scaling`` claim's rank measure."""

import numpy as np
import pytest

from icml26.qhflow2.claims import _spearman


def test_spearman_on_known_orders():
    h = [9.0, 8.8, 5.8, 5.4]
    assert _spearman(h, [28.0, 26.0, 15.0, 12.0]) == pytest.approx(1.0)  # same order
    assert _spearman(h, [1.0, 2.0, 3.0, 4.0]) == pytest.approx(-1.0)  # reversed
    assert _spearman(h, np.exp(h)) == pytest.approx(1.0)  # monotone transform: ranks only
    assert _spearman(h, [3.0, 4.0, 1.0, 2.0]) == pytest.approx(0.6)  # 1 - 6 * 4 / (4 * 15)
