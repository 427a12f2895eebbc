"""The claims' own measures on ground truth: the true semantics scores best, the permutation floor separates an
aligned geometry from an unrelated one, and the controls sabotage what the claims credit."""

import numpy as np
import pytest

from icml26.behaviorgeo.claims import _planted_profile, fc_beats_fa, layer_profile_v5
from icml26.behaviorgeo.geometry import hidden_similarity, rsa
from icml26.behaviorgeo.subject import fc_trials
from icml26.claims import Arm


def test_permutation_floor_separates_an_aligned_geometry_from_an_unrelated_one():
    from icml26.behaviorgeo.lmexp import PairSet

    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 8))
    hidden = [hidden_similarity(z + s * rng.normal(size=z.shape)) for s in (3.0, 1.0, 3.0)]
    ps = PairSet(np.arange(40), hidden)
    aligned = hidden_similarity(z + rng.normal(size=z.shape))
    unrelated = hidden_similarity(rng.normal(size=z.shape))
    for S, above in ((aligned, True), (unrelated, False)):
        peak = max(rsa(S, Sh, n_pairs=None) for Sh in hidden)
        np.testing.assert_allclose(ps.profile(S).max(), peak, atol=1e-12)  # the pre-standardised RSA is Pearson's
        assert bool(peak > np.quantile(ps.permutation_peaks(S, 100, 0), 0.95)) is above


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
    assert layer_profile_v5("smoke", 0).verdict == "not-measured"  # smoke never loads SmolLM2


def test_bootstrap_profiles_equal_rsa_on_the_resampled_pairs():
    """The weighted-sum bootstrap is exact: each resample's profile equals Pearson r over the explicit pairs of
    the resampled word list (a word paired with its own copy dropped); all-ones counts give the plain RSA."""
    from icml26.behaviorgeo.lmexp import bootstrap_counts, bootstrap_profiles

    rng = np.random.default_rng(4)
    z = rng.normal(size=(25, 5))
    hidden = [hidden_similarity(z + s * rng.normal(size=z.shape)) for s in (0.5, 2.0)]
    S = hidden_similarity(z + rng.normal(size=z.shape))
    words = np.arange(3, 25)
    C = bootstrap_counts(len(words), 4, 0)
    got = bootstrap_profiles(S, hidden, words, C)
    for b in range(4):
        w = np.repeat(words, C[:, b].astype(int))
        i, j = np.triu_indices(len(w), k=1)
        ok = w[i] != w[j]
        i, j = w[i][ok], w[j][ok]
        want = [np.corrcoef(S[i, j], H[i, j])[0, 1] for H in hidden]
        np.testing.assert_allclose(got[b], want, atol=1e-10)
    ones = bootstrap_profiles(S, hidden, words, np.ones((len(words), 1)))[0]
    i, j = np.triu_indices(len(words), k=1)
    np.testing.assert_allclose(ones, [np.corrcoef(S[words[i], words[j]], H[words[i], words[j]])[0, 1]
                                      for H in hidden], atol=1e-10)  # fmt: skip


def test_bootstrap_r2_with_unit_counts_is_the_test_r2():
    from icml26.behaviorgeo.geometry import bootstrap_r2, heldout_ridge, heldout_split

    rng = np.random.default_rng(5)
    z = rng.normal(size=(60, 4))
    target = hidden_similarity(z)
    feats = {"a": hidden_similarity(z + rng.normal(size=z.shape)), "b": hidden_similarity(rng.normal(size=z.shape))}
    r2, test = heldout_ridge(target, feats, {"a": ["a"], "ab": ["a", "b"]}, n_train_pairs=500, seed=2,
                             predictions=True)  # fmt: skip
    assert np.array_equal(test["test_words"], heldout_split(60, None, 0.2, 2)[1])
    boot = bootstrap_r2(test, np.ones((len(test["test_words"]), 1)))
    for k, v in r2.items():
        assert boot[k][0] == pytest.approx(v, abs=1e-10)


def test_planted_profile_peaks_where_it_was_planted():
    """The positive control of layer-profile: a geometry built from the task-FC states at 1/4 depth and the
    averaged states at 1/2 depth peaks earlier against the task-FC profile than against the averaged one."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(30, 6))
    depth = np.linspace(0, 1, 9)

    def states(peak):  # layer l's states carry z most strongly near ``peak``
        return [hidden_similarity(np.exp(-(((d - peak) / 0.15) ** 2)) * z + 0.3 * rng.normal(size=z.shape))
                for d in depth]  # fmt: skip

    lm = {"hidden": {"task-fc": states(0.25), "averaged": states(0.5)}, "keep": np.ones(30, bool)}
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


def _fake_lm(fc_beta: float, seed: int = 0) -> dict:
    """A stand-in for the SmolLM2 experiment with known truth: 160 words, 5 'layers' carrying a latent
    geometry most strongly at layer 2; FC answers from that geometry with decisiveness ``fc_beta``, FA's two
    halves weakly (beta 2) on their own streams; lexical baselines are noisy copies of the latent."""
    from icml26.behaviorgeo.lmexp import behaviour_similarity, simulated_picks
    from icml26.behaviorgeo.runner import fc_trial_indices

    rng = np.random.default_rng(seed)
    V = 160
    z = rng.normal(size=(V, 8))
    hidden = [hidden_similarity(z * w + rng.normal(size=z.shape)) for w in (0.5, 1.5, 4.0, 1.5, 0.5)]
    later = [hidden_similarity(z * w + rng.normal(size=z.shape)) for w in (0.2, 0.5, 1.5, 4.0, 1.5)]  # peaks at 3/4
    cues_all, cands_all = fc_trials(V, 16, 1, 0)
    design = fc_trial_indices(V, 16, 1, 3)
    cues, cands = cues_all[design], cands_all[design]
    truth = hidden_similarity(z)
    picks = simulated_picks(truth, cues, cands, fc_beta, [seed, 1])
    fa = [behaviour_similarity(cues, simulated_picks(truth, cues, cands, 2.0, [seed, 2 + h]), V) for h in (0, 1)]
    yes = np.ones(V, bool)
    stats = {"trials": len(cues), "responses": 2 * len(cues), "out_of_vocabulary": 0, "unparsable": 0}
    return {"vocab": [f"w{i}" for i in range(V)], "cues": cues, "cands": cands, "picks": picks,
            "S_fc": behaviour_similarity(cues, picks, V), "answered_fc": yes, "S_fa_a": fa[0], "S_fa_b": fa[1],
            "answered_fa_a": yes, "answered_fa_b": yes, "stats_fc": stats, "stats_fa_a": stats, "stats_fa_b": stats,
            "hidden": {"task-fc": hidden, "averaged": later},
            "S_glove": hidden_similarity(z + rng.normal(size=z.shape)),
            "S_minilm": hidden_similarity(z + rng.normal(size=z.shape)), "fc_same_category": 0.0}  # fmt: skip


def test_real_model_claims_read_a_known_truth_both_ways(monkeypatch):
    """The SmolLM2 claims' code on a stand-in with known truth: a decisive FC subject beats weak FA and adds
    held-out R^2; the A/A arms fail; a subject answering at random (FC beta 0) fails too."""
    from icml26.behaviorgeo import claims
    from icml26.claims import Scale

    strong, null = _fake_lm(20.0), _fake_lm(0.0)
    monkeypatch.setattr(claims, "_lm", lambda scale: strong)
    res = claims.lm_fc_beats_fa(Scale.SMALL, 0)
    m = res.measured
    assert res.verdict == "holds" and m["bootstrap 95% CI low of held-out RSA FC - FA (words)"] > 0.02
    assert claims.lm_fc_beats_fa(Scale.SMALL, 0, Arm.NEGATIVE).verdict == "fails"
    pos = claims.lm_fc_beats_fa(Scale.SMALL, 0, Arm.POSITIVE).measured  # planted at the bar + 2 s.e.
    se = pos["bootstrap s.e. of the model's FC - FA (selection words)"]
    assert se > 0 and pos["positive's planted FC - FA on the selection words (bar + 2 s.e.)"] == 0.02 + 2 * se
    gain = claims.lm_behaviour_predicts_held_out(Scale.SMALL, 0)
    assert gain.verdict == "holds"
    assert claims.lm_behaviour_predicts_held_out(Scale.SMALL, 0, Arm.NEGATIVE).verdict == "fails"
    probe = claims.lm_task_following(Scale.SMALL, 0)
    assert probe["lm-task-following"] > 1.25 > probe["ablation reference: random picks"]
    profile = claims.layer_profile_v5(Scale.SMALL, 0)
    assert profile.verdict == "holds" and profile.measured["peak depth (task-fc)"] == 0.5
    assert profile.measured["peak depth (averaged)"] == 0.75
    assert claims.layer_profile_v5(Scale.SMALL, 0, Arm.NEGATIVE).verdict == "not-measured"  # at chance: no peak
    monkeypatch.setattr(claims, "_lm", lambda scale: null)
    assert claims.lm_fc_beats_fa(Scale.SMALL, 0).verdict == "fails"
    assert claims.lm_behaviour_predicts_held_out(Scale.SMALL, 0).verdict == "fails"
    assert claims.layer_profile_v5(Scale.SMALL, 0).verdict == "not-measured"


def test_lm_fc_beats_fa_never_evaluates_on_the_fa_tuning_cues():
    """Free association's sampling was tuned on 100 cues' behaviour: the v4 split puts every one of them in the
    selection half, and the two halves are disjoint, cover the answered words and differ in size by at most one."""
    from icml26.behaviorgeo import claims
    from icml26.behaviorgeo.lmexp import fa_tuning_cues

    V = 1060
    answered = np.random.default_rng(0).random(V) > 0.02
    lm = {"answered_fc": answered, "answered_fa_a": np.ones(V, bool), "answered_fa_b": np.ones(V, bool)}
    tuned = fa_tuning_cues()
    assert len(tuned) == 100 and len(set(tuned)) == 100 and tuned.max() < V
    splits = [claims._lm_split(lm, seed) for seed in range(3)]
    for sel, ev in splits:
        assert not np.isin(ev, tuned).any() and np.isin(tuned[answered[tuned]], sel).all()
        assert np.array_equal(np.union1d(sel, ev), np.flatnonzero(answered)) and not np.intersect1d(sel, ev).size
        assert abs(len(sel) - len(ev)) <= 1
    assert not np.array_equal(splits[0][1], splits[1][1])  # a seed draws its own split
