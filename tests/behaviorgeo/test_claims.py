"""The claims' own measures on ground truth: the true semantics scores best, the permutation floor separates an
aligned geometry from an unrelated one, and the controls sabotage what the claims credit."""

import numpy as np

from icml26.behaviorgeo.claims import _permutation_floor, fc_beats_fa, layer_profile
from icml26.behaviorgeo.geometry import hidden_similarity, rsa


def test_permutation_floor_separates_an_aligned_geometry_from_an_unrelated_one():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 8))
    hidden = [hidden_similarity(z + s * rng.normal(size=z.shape)) for s in (3.0, 1.0, 3.0)]
    lm = {"keep": np.ones(40, bool), "hidden": {"task-fc": hidden}}
    aligned = hidden_similarity(z + rng.normal(size=z.shape))
    unrelated = hidden_similarity(rng.normal(size=z.shape))
    for S, above in ((aligned, True), (unrelated, False)):
        peak = max(rsa(S, Sh, n_pairs=None) for Sh in hidden)
        assert (peak > _permutation_floor(lm, S, "task-fc", seed=0, n=100)) is above


def test_fc_beats_fa_at_smoke_true_semantics_is_the_ceiling_and_the_control_fails():
    res = fc_beats_fa("smoke", 0)
    m = res.measured
    assert res.verdict == "holds"
    assert m["peak RSA true semantics (ceiling)"] > m["peak RSA FC"] > m["peak RSA FA"] > m["peak RSA lexical baseline"]
    assert m["worst peak RSA FC - FA over beta"] == min(m[f"peak RSA FC - FA (beta {b})"] for b in (2, 4, 8, 16))
    ctl = fc_beats_fa("smoke", 0, control=True)
    assert ctl.verdict == "fails" and ctl.measured["peak RSA FC"] < 0.1
    assert layer_profile("smoke", 0).verdict == "not-measured"  # smoke never loads SmolLM2
