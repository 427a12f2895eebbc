"""The claims' own measures on ground truth: the true semantics scores best, the permutation floor separates an
aligned geometry from an unrelated one, and the controls sabotage what the claims credit."""

import numpy as np

from icml26.behaviorgeo.claims import _permutation_floor, _planted_profile, fc_beats_fa, layer_profile
from icml26.behaviorgeo.geometry import hidden_similarity, rsa
from icml26.claims import Arm


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
    ctl = fc_beats_fa("smoke", 0, control=True)  # A/A: free association twice, own answer noise
    assert ctl.verdict == "fails" and ctl.measured["worst peak RSA FC - FA over beta"] != 0.0
    assert abs(ctl.measured["peak RSA FC - FA"]) < 0.05  # two runs of one paradigm: about equal
    pos = fc_beats_fa("smoke", 0, Arm.POSITIVE)  # the oracle: the true semantics in FC's place
    assert pos.verdict == "holds" and pos.measured["peak RSA FC"] == m["peak RSA true semantics (ceiling)"]
    assert layer_profile("smoke", 0).verdict == "not-measured"  # smoke never loads SmolLM2


def test_planted_profile_peaks_where_it_was_planted():
    """The positive control of layer-profile: a geometry built from the task-FC states at 1/4 depth and the
    averaged states at 3/4 depth peaks earlier against the task-FC profile than against the averaged one."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(30, 6))
    depth = np.linspace(0, 1, 9)

    def states(peak):  # layer l's states carry z most strongly near ``peak``
        return [hidden_similarity(np.exp(-(((d - peak) / 0.15) ** 2)) * z + 0.3 * rng.normal(size=z.shape))
                for d in depth]  # fmt: skip

    lm = {"hidden": {"task-fc": states(0.25), "averaged": states(0.75)}, "keep": np.ones(30, bool)}
    S = _planted_profile(lm)
    prof = {s: [rsa(S, Sh, n_pairs=None) for Sh in hs] for s, hs in lm["hidden"].items()}
    assert np.argmax(prof["task-fc"]) < np.argmax(prof["averaged"])


def test_measure_checks_and_probes_at_smoke():
    from icml26.behaviorgeo.claims import MEASURES, MECHANISMS

    for m in MEASURES:
        assert m.check(2) == [], m.name
    probed = {m.name: m("smoke", 2) for m in MECHANISMS}
    values = {name: p[name] for name, p in probed.items()}
    assert values["fc-joint-comparison"] > 1.2 and values["fa-frequency-bias"] > 0.02
    # the bias probe has an A/A reference (FA run twice, both biased) that must sit below the probe's threshold
    assert abs(probed["fa-frequency-bias"]["A/A reference: FA twin - FA (same bias)"]) < 0.02
    assert values["lm-task-following"] == 0.0  # smoke runs no LM
