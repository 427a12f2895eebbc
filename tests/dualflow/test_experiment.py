"""The claim experiment: DualFlow keyword overrides of fit_dcf (the negative controls' sabotages)."""

import numpy as np

from icml26.claims import Scale
from icml26.dualflow.experiment import fit_dcf


def test_fit_dcf_overrides_reach_the_estimator():
    est, res = fit_dcf(Scale.SMOKE, 0, "clean", 0, lr=0.0, n_steps=2)
    assert est.lr == 0.0 and est.n_steps == 2 and est.hidden == 48  # the smoke setting, overridden
    assert np.allclose(est.d_, 1.0)  # learning rate 0: the coupling's scales stay at their initial value
    assert res.z_test.shape[-1] == 3
