import math

import matplotlib
import numpy as np

from icml26.claims import Scale
from icml26.zolangevin.claims import _plot_sweep, non_log_concave

matplotlib.use("Agg")


def test_q_sweep_reports_divergence_not_a_sentinel():
    res = non_log_concave(Scale("smoke"), 0)
    sweep_keys = [k for k in res.measured if "q=" in k]
    assert {k.rsplit(" q=", 1)[0] for k in sweep_keys} == {"diverged runs", "worst var err"}
    for k in sweep_keys:
        v = res.measured[k]
        if k.startswith("diverged runs"):
            assert v in (0.0, 1.0)
        else:  # NaN exactly when the run diverged, otherwise a real (finite) error
            diverged = res.measured[k.replace("worst var err", "diverged runs")]
            assert math.isnan(v) if diverged else 0 <= v < 1e3


def test_sweep_plot_marks_diverged_runs_instead_of_capping():
    sweep = {"a": {4: {"var err": 0.03}, 8: {"var err": np.inf}}, "b": {4: {"var err": 0.02}, 8: {"var err": 0.05}}}
    fig = _plot_sweep(sweep, 4)
    ax = fig.axes[0]
    assert "diverged" in [t.get_text() for t in ax.get_legend().get_texts()]
    ys = np.concatenate([line.get_ydata() for line in ax.get_lines()]).astype(float)
    assert np.isfinite(ys[~np.isnan(ys)]).all()
