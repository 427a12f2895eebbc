"""The paper's headline claims, each in three arms (contract v3): the claim, its negative control (the effect
removed; for a comparison an A/A run with its own randomness) and its positive control (the claimed effect
planted at about the claimed size). ``MECHANISMS`` probe what the verdicts rest on; ``MEASURES`` validate the
measures both ways.

On SmolLM2-135M-Instruct (1,060 nouns, the fast runner in bfloat16: 4 calibrated forced-choice trials and 16
free-association runs per cue, FA sampled at temperature 0.7 / top-p 0.9 and parsed by content word, the setting
tuned on behaviour alone; ``not-measured`` at ``smoke``, which loads no LM). Each is judged on the lower end of a
95 % bootstrap interval over words, on its own seed stream (``seed + 2000`` for v4, ``seed + 1000`` for the others):

- ``lm-fc-beats-fa-v4``: forced-choice geometry aligns with the task-FC hidden-state geometry more than free
  association's, on held-out words (never an FA-tuning cue) at the layer each chose on the other words (A/A
  negative: FA's other half of the runs; positive: a subject answering the same trials from the model's own
  hidden geometry, planted at the bar + 2 bootstrap s.e.);
- ``lm-fc-beats-fa-v5``: v4's measurement on 2,110 nouns (the 1,060 and 1,050 new concrete nouns; stores merged
  from disjoint cue ranges, ``lmexp.load_experiment_v5``), cross-fitted over both halves of each split with the
  roles swapped, on the stream ``seed + 3000``; positive planted at 1.5 x the bar on each fold's selection words;
- ``lm-behaviour-predicts-held-out-v3``: FC similarity adds held-out-words ridge R^2 to GloVe + MiniLM;
- ``lm-behaviour-predicts-held-out-v4``: the same regression on the 2,110 nouns (stream ``seed + 5000``);
- ``layer-profile-v5``: FC alignment peaks earlier in depth for task-FC states than for averaged contexts,
  measured only above the label-permutation floor.

On simulated subjects (kept as the checks of the pipeline and of the simulator's alpha/beta sensitivity; both
labelled by construction):

- ``fc-beats-fa-v2``: FC beats FA for every beta of a pre-registered range, the flips reported;
- ``behaviour-predicts-held-out-v1``: adding FC raises held-out R^2.
"""

from __future__ import annotations

import functools

import numpy as np

from icml26.behaviorgeo.config import PRESETS
from icml26.behaviorgeo.geometry import (
    count_matrix,
    heldout_ridge,
    hidden_similarity,
    nn_overlap,
    ppmi,
    row_cosine,
    rsa,
)
from icml26.behaviorgeo.subject import SemanticWorld, SimulatedSubject, fc_trials
from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism

PAPER_RSA = {
    "mean FC RSA, averaged extraction (paper)": 0.346,
    "mean FC RSA, task-FC extraction (paper)": 0.463,
    "mean FA RSA, averaged extraction (paper)": 0.140,
    "mean FA RSA, task extraction (paper)": 0.199,
}


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.8, 3.8))


BETAS = (2.0, 4.0, 8.0, 16.0)  # pre-registered range of the subject's decisiveness (inverse temperature)
BETA, ALPHA = 8.0, 1.0  # the default subject: beta in both paradigms, FA word-frequency bias


@functools.lru_cache(maxsize=8)
def _hidden(scale_value: str, seed: int) -> tuple:
    """One seed's world, subject and layerwise hidden geometry (independent of the response processes)."""
    cfg = PRESETS[scale_value]
    world = SemanticWorld.make(cfg.n_words, cfg.n_topics, cfg.n_sub, cfg.dim, seed=seed)
    subject = SimulatedSubject(world, seed=seed, n_layers=cfg.n_layers)
    return world, subject, [hidden_similarity(h) for h in subject.hidden_states()]  # L+1 x (V, V)


#: What answers the forced-choice side of a run: the subject ("fc"), a subject answering uniformly at random
#: ("random"), the same subject doing free association again with its own answer noise ("fa-twin", an A/A twin
#: of the FA side), or the subject's true semantic geometry itself ("oracle", the ceiling any behaviour can reach).
FC_MODES = ("fc", "random", "fa-twin", "oracle")


@functools.lru_cache(maxsize=32)  # the claims and the controls on a seed share one run
def _simulated(
    scale_value: str,
    seed: int,
    fc_mode: str = "fc",
    beta_fc: float = BETA,
    beta_fa: float = BETA,
    alpha_fa: float = ALPHA,
) -> dict:
    """One simulated subject's behaviour and geometries, with the forced-choice side given by ``fc_mode``."""
    if fc_mode not in FC_MODES:
        raise ValueError(f"fc_mode must be one of {FC_MODES}; got {fc_mode!r}")
    cfg = PRESETS[scale_value]
    world, subject, S_hidden = _hidden(scale_value, seed)
    kw = {"seed": seed, "n_layers": cfg.n_layers, "beta_fc": beta_fc, "beta_fa": beta_fa, "alpha_fa": alpha_fa}
    fc_subject = SimulatedSubject(world, random_responses=fc_mode == "random", **kw)
    fa_subject = SimulatedSubject(world, **kw)
    V = cfg.n_words

    def fa_counts(who: SimulatedSubject):
        fa_cues, assoc = who.free_association(np.arange(V), cfg.fa_runs)  # (R,), (R, 5)
        return count_matrix(np.repeat(fa_cues, assoc.shape[1]), assoc.ravel(), V)

    if fc_mode == "fa-twin":  # A/A: free association again, same subject, its own answer noise
        B_fc = fa_counts(SimulatedSubject(world, response_stream=1, **kw))
    else:
        cues, cands = fc_trials(V, 16, cfg.fc_shuffles, seed)  # (T,), (T, 16)
        picks = fc_subject.forced_choice(cues, cands)  # (T, 2)
        B_fc = count_matrix(np.repeat(cues, 2), picks.ravel(), V)
    B_fa = fa_counts(fa_subject)
    P_fc, P_fa = ppmi(B_fc), ppmi(B_fa)
    keep = (np.asarray(P_fc.sum(1)).ravel() > 0) & (np.asarray(P_fa.sum(1)).ravel() > 0)  # same words in both
    S_fc = subject.semantic_similarity() if fc_mode == "oracle" else row_cosine(P_fc)
    return {
        "cfg": cfg,
        "world": world,
        "subject": subject,
        "S_fc": S_fc,
        "S_fa": row_cosine(P_fa),
        "density_fc": P_fc.nnz / V**2,
        "density_fa": P_fa.nnz / V**2,
        "keep": keep,
        "S_hidden": S_hidden,
        "n_fc_trials_per_cue": -(-(V - 1) // 16) * cfg.fc_shuffles,  # the FC design (also on the A/A arm)
    }


def _lexical(run: dict, seed: int) -> np.ndarray:
    """A static embedding of the *shared* semantics (a noisy copy of the world's ``z``, as GloVe is for an LLM):
    the lexical baseline's similarity (V, V)."""
    z = run["world"].z
    rng = np.random.default_rng([seed, 7])
    return row_cosine(z + 1.5 * z.std() * rng.normal(size=z.shape))


def _by_layer(S: np.ndarray, run: dict, seed: int) -> np.ndarray:
    cfg = run["cfg"]
    return np.array([rsa(S, Sh, keep=run["keep"], n_pairs=cfg.n_pairs, seed=seed) for Sh in run["S_hidden"]])


def _peak_diff(scale_value: str, seed: int, fc_mode: str, beta_fc: float, beta_fa: float, alpha_fa: float) -> float:
    """Peak-over-layers RSA of FC minus that of FA for one subject with the given response parameters."""
    run = _simulated(scale_value, seed, fc_mode, beta_fc, beta_fa, alpha_fa)
    return float(_by_layer(run["S_fc"], run, seed).max() - _by_layer(run["S_fa"], run, seed).max())


@claim(
    "behaviorgeo/fc-beats-fa-v2",
    statement="On simulated subjects whose forced-choice and free-association answers read one semantic space with "
    "the same decisiveness beta in both paradigms and a word-frequency bias in free association (alpha = 1), the "
    "RSA between forced-choice PPMI geometry and mean-centred hidden-state geometry at its best layer exceeds that "
    "of free association for every beta of the pre-registered range {2, 4, 8, 16} (judged on the worst beta, "
    "paired over seeds). Conditional on those assumptions: the cases where it flips (no frequency bias; forced "
    "choice less decisive than free association) are measured and reported; the real model is judged in "
    "behaviorgeo/lm-fc-beats-fa (its latest version)",
    paper="abstract; Sec. 5: forced-choice behaviour aligns substantially more with hidden-state geometry than "
    "free association (mean RSA .346-.463 vs .140-.199)",
    control="A/A: free association run a second time by the same subject with its own answer noise, in forced "
    "choice's place (same counting, same RSA, every beta): the paired difference scatters around 0 (the minimum "
    "over beta below it) and the claim must fail",
    positive="the oracle in forced choice's place: the subject's true semantic geometry (the ceiling any behaviour "
    "can reach), measured by the same RSA against the same free association at every beta",
    mechanisms=("fc-joint-comparison", "fa-frequency-bias"),
    judge=Interval("worst peak RSA FC - FA over beta", above=0.0),
    by_construction="review: the simulator gives both paradigms one semantic space and one decisiveness and adds "
    "a word-frequency bias to free association only, so forced choice's advantage is built into the data (it "
    "flips when the bias is removed or forced choice is made less decisive, both reported); the claim checks that "
    "the RSA pipeline recovers that planted ordering, not the paper's finding on people or LLMs",
)
def fc_beats_fa(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    mode = {Arm.CLAIM: "fc", Arm.NEGATIVE: "fa-twin", Arm.POSITIVE: "oracle"}[arm]  # what answers the FC side
    grid = {b: _peak_diff(scale.value, seed, mode, b, b, ALPHA) for b in BETAS}
    worst = min(grid.values())
    run = _simulated(scale.value, seed, mode)  # the default subject (beta = 8, alpha = 1), shown in detail
    cfg = run["cfg"]
    r_fc, r_fa = _by_layer(run["S_fc"], run, seed), _by_layer(run["S_fa"], run, seed)
    r_true = _by_layer(run["subject"].semantic_similarity(), run, seed)  # the ceiling: the true latent geometry
    r_lex = _by_layer(_lexical(run, seed), run, seed)
    diff = float(r_fc.max() - r_fa.max())
    best = int(np.argmax(r_true))
    S_best = run["S_hidden"][best]
    keep = run["keep"]
    nn = {k: (nn_overlap(run["S_fc"], S_best, k, keep=keep), nn_overlap(run["S_fa"], S_best, k, keep=keep))
          for k in cfg.ks}  # fmt: skip
    no_bias = min(_peak_diff(scale.value, seed, mode, b, b, 0.0) for b in BETAS)
    fc_noisier = _peak_diff(scale.value, seed, mode, 2.0, BETA, ALPHA)
    measured = {
        "worst peak RSA FC - FA over beta": worst,
        **{f"peak RSA FC - FA (beta {b:g})": d for b, d in grid.items()},
        "reported: worst FC - FA over beta, no frequency bias (alpha 0)": no_bias,
        "reported: FC - FA, FC less decisive (beta_FC 2, beta_FA 8)": fc_noisier,
        "peak RSA FC - FA": diff,
        "peak RSA FC": float(r_fc.max()),
        "peak RSA FA": float(r_fa.max()),
        "peak RSA true semantics (ceiling)": float(r_true.max()),
        "peak RSA lexical baseline": float(r_lex.max()),
        "mean NN@k overlap FC - FA": float(np.mean([a - b for a, b in nn.values()])),
        **{f"NN@{k} FC": a for k, (a, _) in nn.items()},
        **{f"NN@{k} FA": b for k, (_, b) in nn.items()},
        "PPMI density FC": run["density_fc"],
        "PPMI density FA": run["density_fa"],
        "FC trials per cue": run["n_fc_trials_per_cue"],
        "FA runs per cue": cfg.fa_runs,
    }
    fig, ax = _figure()
    depth = np.arange(len(r_fc))
    ax.plot(
        depth, r_fc, "o-", label={"fc": "forced choice", "fa-twin": "free association, twin", "oracle": "oracle"}[mode]
    )
    ax.plot(depth, r_fa, "s-", label="free association")
    ax.plot(depth, r_true, "k:", label="true semantics (ceiling)")
    ax.plot(depth, r_lex, "--", color="grey", label="lexical baseline")
    figures = {"rsa-by-layer-simulated": fig}
    ax.set_xlabel("layer")
    ax.set_ylabel("RSA with hidden-state geometry")
    ax.set_title(f"simulated subject, {cfg.n_words} words")
    ax.legend(fontsize=8)
    holds = worst > 0.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={**PAPER_RSA, "FC vs FA": "forced choice aligns substantially more (abstract)"},
        elsewhere={"simulated 1k words: RSA FC [prototype]": 0.846, "simulated 1k words: RSA FA [prototype]": 0.582},
        reason="" if holds else f"FC - FA peak RSA {worst:+.3f} at the worst beta of {list(BETAS)}",
        figures=figures,
    )


def _heldout_r2(run: dict, seed: int) -> dict[str, float]:
    """Held-out-words ridge test R^2 of the subject's hidden similarity at its most semantic layer, for the
    baseline features (lexical + cross-model consensus) alone, with FC, with FA, and with both."""
    cfg, world, subject = run["cfg"], run["world"], run["subject"]
    layer = int(np.argmax(subject.layer_mixing()))  # the layer where the semantics is strongest
    target = run["S_hidden"][layer]
    consensus = np.mean(
        [hidden_similarity(SimulatedSubject(world, seed=1000 * (seed + 1) + j, n_layers=cfg.n_layers)
                           .hidden_states()[layer]) for j in range(cfg.n_consensus)], axis=0,
    )  # fmt: skip
    features = {"lexical": _lexical(run, seed), "consensus": consensus, "FC": run["S_fc"], "FA": run["S_fa"]}
    sets = {
        "baseline": ["lexical", "consensus"],
        "+FC": ["lexical", "consensus", "FC"],
        "+FA": ["lexical", "consensus", "FA"],
        "full": ["lexical", "consensus", "FC", "FA"],
    }
    return heldout_ridge(target, features, sets, n_train_pairs=cfg.ridge_train_pairs, seed=seed, keep=run["keep"])


@claim(
    "behaviorgeo/behaviour-predicts-held-out-v1",
    statement="In a held-out-words ridge regression (RidgeCV, alpha in logspace(-2, 6, 15), 5-fold; trained on "
    "pairs among 80 % of the words, tested on all pairs among the other 20 %), adding the forced-choice "
    "similarity to a lexical embedding and a cross-model consensus raises the test R^2 of a simulated subject's "
    "hidden-state similarity by more than 0.005 (paired over seeds); the FA gain is reported",
    paper="abstract; held-out ridge: dR2 +.022 (FC) vs +.002 (FA); full .587 vs baseline .569",
    control="forced choice answered by a random subject: its similarity holds no information about this subject "
    "and the gain must vanish",
    positive="the oracle in forced choice's place: the subject's true semantic geometry, whose held-out gain is "
    "the most any behaviour can add",
    mechanisms=("fc-joint-comparison",),
    judge=Interval("dR2 FC", above=0.005),
    by_construction="the simulated behaviour and hidden states are both generated from the subject's own semantics "
    "s while the baseline features see only the shared z, so any better-than-random behaviour adds held-out R^2 "
    "(FA adds +0.10 against the paper's +0.002): it checks the regression pipeline, not the paper's finding",
)
def behaviour_predicts_held_out(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    run = _simulated(scale.value, seed, {Arm.CLAIM: "fc", Arm.NEGATIVE: "random", Arm.POSITIVE: "oracle"}[arm])
    r2 = _heldout_r2(run, seed)
    d_fc, d_fa = r2["+FC"] - r2["baseline"], r2["+FA"] - r2["baseline"]
    fig, ax = _figure()
    ax.bar(list(r2), list(r2.values()))
    ax.set_ylim(min(r2.values()) - 0.05, max(r2.values()) + 0.02)
    ax.set_ylabel("held-out-words test R^2")
    holds = d_fc > 0.005
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "dR2 FC": d_fc,
            "dR2 FA": d_fa,
            "dR2 FC - dR2 FA": d_fc - d_fa,
            "dR2 full": r2["full"] - r2["baseline"],
            **{f"R2 {k}": v for k, v in r2.items()},
        },
        paper={"dR2 FC": 0.022, "dR2 FA": 0.002, "R2 full (mean over models)": 0.587, "R2 baseline (mean)": 0.569},
        reason="" if holds else f"adding FC changes held-out R^2 by {d_fc:+.4f}",
        figures={"heldout-r2": fig},
    )


# --- the real model: SmolLM2-135M-Instruct on 1,060 nouns (the fast runner; claims v3 / v4 / v5) ---------------
#
# Every judged number is the lower end of a 95 % bootstrap interval over words (the data's uncertainty), so a
# seed changes the word split and the bootstrap draws, never the model's answers. lm-behaviour-predicts-held-out-v3
# and layer-profile-v5 draw everything from the stream ``seed + LM_STREAM`` (their v2/v4 used ``seed`` itself);
# lm-fc-beats-fa-v4 (on the tuned free association) from ``seed + LM_STREAM_V4``, fresh for it.

LM_STREAM = 1000
LM_STREAM_V4 = 2000
LM_PLANT_SE = 2.0  # lm-fc-beats-fa-v4's positive: planted at the bar + this many bootstrap s.e. (fixed before)
LM_STREAM_V5 = 3000  # lm-fc-beats-fa-v5's stream (never drawn before it)
LM_PLANT_V5 = 1.5  # lm-fc-beats-fa-v5's positive: planted at this many times the bar on each fold's selection words
LM_STREAM_PREDICTS_V4 = 5000  # lm-behaviour-predicts-held-out-v4's stream (never drawn before it)
LM_BAR_FC_FA = 0.02  # RSA points by which FC must beat FA (held-out words)
LM_BAR_DR2 = 0.005  # held-out R^2 that FC must add to GloVe + MiniLM
LM_BETAS = tuple(float(b) for b in np.logspace(0, 3, 49))  # the positive controls' decisiveness grid (1 .. 1000)
#: The positive control of the layer profile: task-FC states' geometry planted at 1/4 depth (the paper's
#: "early-to-middle"; Falcon3-10B's FC peak is layer 6 of 40), averaged states' at 1/2 depth ("later"): a gap of
#: 0.25 depth, about the smallest that reads as the paper's profile.
PLANTED_DEPTHS = {"task-fc": 0.25, "averaged": 0.5}
PROFILE_BETAS = tuple(float(b) for b in np.logspace(-2, 1, 31))  # its decisiveness grid (0.01 .. 10)


def _lm(scale: Scale) -> dict | None:
    """The scale's SmolLM2 experiment (:func:`~icml26.behaviorgeo.lmexp.load_experiment`); None at smoke."""
    cfg = PRESETS[scale.value]
    if cfg.lm_model is None:
        return None
    from icml26.behaviorgeo.lmexp import load_experiment

    return load_experiment(cfg.lm_words, cfg.lm_fc_per_cue, cfg.lm_fa_runs, cfg.lm_fa_tokens, cfg.lm_model,
                           cfg.lm_batch, cfg.lm_dtype, cfg.lm_fa_temperature, cfg.lm_fa_top_p,
                           cfg.lm_fa_content_words)  # fmt: skip


def _not_run(scale: Scale) -> ClaimResult:
    return ClaimResult("not-measured", reason=f"{scale.value} never loads SmolLM2 (run --scale small)")


def _lm_split(lm: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Words answered in FC and in both FA halves, split at random into selection and evaluation halves (as
    many words each, to one); the evaluation half is drawn from the words that were not FA-tuning cues
    (:func:`~icml26.behaviorgeo.lmexp.fa_tuning_cues`), which all go to the selection half."""
    from icml26.behaviorgeo.lmexp import fa_tuning_cues

    keep = np.flatnonzero(lm["answered_fc"] & lm["answered_fa_a"] & lm["answered_fa_b"])
    untuned = keep[~np.isin(keep, fa_tuning_cues())]
    ev = np.random.default_rng([seed + LM_STREAM_V4, 49]).choice(untuned, size=len(keep) - len(keep) // 2,
                                                                   replace=False)  # fmt: skip
    return np.setdiff1d(keep, ev), np.sort(ev)


def _held_out_peak(S: np.ndarray, sel, ev) -> tuple[float, int]:
    """RSA on the evaluation words at the layer where ``S`` aligns best on the selection words."""
    layer = int(np.argmax(sel.profile(S)))
    return float(ev.profile(S)[layer]), layer


def _ci(x: np.ndarray) -> tuple[float, float]:
    return float(np.quantile(x, 0.025)), float(np.quantile(x, 0.975))


def _planted_fc(lm: dict, S_source: np.ndarray, seed: int, score, target: float,
                betas: tuple[float, ...] = LM_BETAS, stream: int = LM_STREAM,
                key: tuple = ()) -> tuple[np.ndarray, float]:  # fmt: skip
    """The positive controls' subject: it answers the model's own FC trials by a Luce choice on ``S_source``
    (a similarity of the model's hidden states). Its decisiveness is the beta of ``betas`` whose
    ``score(S)`` -- on data the judged number does not use, for picks of a calibration stream -- first reaches
    ``target``; the returned geometry is drawn afresh with that beta (its own stream; ``key`` tells apart
    subjects calibrated on one seed, e.g. one per cross-fitting fold)."""
    from icml26.behaviorgeo.lmexp import behaviour_similarity, simulated_picks

    V, s = len(lm["vocab"]), seed + stream
    beta = betas[-1]
    for k, b in enumerate(betas):
        picks = simulated_picks(S_source, lm["cues"], lm["cands"], b, [s, 71, *key, k])
        if score(behaviour_similarity(lm["cues"], picks, V)) >= target:
            beta = b
            break
    picks = simulated_picks(S_source, lm["cues"], lm["cands"], beta, [s, 73, *key])
    return behaviour_similarity(lm["cues"], picks, V), beta


def _random_fc(lm: dict, seed: int, stream: int = LM_STREAM) -> np.ndarray:
    """FC answered uniformly at random on the model's own trials (own randomness)."""
    from icml26.behaviorgeo.lmexp import behaviour_similarity, simulated_picks

    picks = simulated_picks(lm["hidden"]["task-fc"][0], lm["cues"], lm["cands"], 0.0, [seed + stream, 5])
    return behaviour_similarity(lm["cues"], picks, len(lm["vocab"]))


def _norms(lm: dict, S: np.ndarray) -> dict[str, float]:
    from icml26.behaviorgeo.data import validate_similarity

    keep = np.abs(S).sum(1) > 0
    return {n: validate_similarity(S, lm["vocab"], n, keep=keep)[0] for n in ("simlex999", "wordsim353")}


@claim(
    "behaviorgeo/lm-fc-beats-fa-v4",
    statement="On SmolLM2-135M-Instruct over 1,060 nouns (weights in bfloat16; 4 forced-choice trials of 16 "
    "candidates per cue, summed answer log-probabilities calibrated by a content-free cue; free association tuned "
    "on behaviour alone: 8 runs of 5 associates per cue sampled at temperature 0.7 from the 0.9 nucleus, "
    "multi-word associates counted by their content word, 8 more as the A/A twin), the RSA between forced-choice "
    "PPMI geometry and the model's task-FC hidden-state geometry exceeds that of free association by more than "
    "0.02 on held-out words (half the answered words, never one of the 100 FA-tuning cues), each geometry at the "
    "layer where it aligns best on the other words: judged on the lower end of the paired 95 % bootstrap "
    "interval over the evaluation words (200 resamples), over seeds = word splits on the stream seed + 2000; "
    "bar fixed in v1, before any run",
    paper="abstract; Sec. 5: forced-choice behaviour aligns substantially more with hidden-state geometry than "
    "free association (mean RSA .346-.463 vs .140-.199)",
    control="A/A: free association's other 8, independently sampled runs of every cue (same sampling and parsing) "
    "in forced choice's place (same words, same layer selection, same bootstrap): the difference scatters around 0 "
    "and the claim must fail",
    positive="a simulated subject answering the model's own forced-choice trials by a Luce choice on the model's "
    "task-FC hidden-state similarity at half depth, its decisiveness set on the selection words (own calibration "
    "draws) so that it beats free association there by the bar plus 2 bootstrap standard errors of the model's "
    "own FC - FA on those words (rule fixed before the run, so the plant's lower end clears the bar in "
    "expectation; v3's 1.25 x the bar could not); measured like the model's answers",
    mechanisms=("lm-task-following",),
    judge=Interval("bootstrap 95% CI low of held-out RSA FC - FA (words)", above=LM_BAR_FC_FA),
)
def lm_fc_beats_fa(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    lm = _lm(scale)
    if lm is None:
        return _not_run(scale)
    from icml26.behaviorgeo.lmexp import PairSet, fa_tuning_cues, paired_bootstrap

    cfg = PRESETS[scale.value]
    s = seed + LM_STREAM_V4
    sel_w, ev_w = _lm_split(lm, seed)
    H = lm["hidden"]["task-fc"]
    sel, ev = PairSet(sel_w, H), PairSet(ev_w, H)
    S_fa = lm["S_fa_a"]
    rsa_fa_sel = float(sel.profile(S_fa).max())
    # the model's own FC - FA on the selection words and its bootstrap s.e. (sizes the positive; reported)
    l_fc_sel, l_fa_sel = int(np.argmax(sel.profile(lm["S_fc"]))), int(np.argmax(sel.profile(S_fa)))
    se_sel = float(np.std(paired_bootstrap(lm["S_fc"], S_fa, H[l_fc_sel], H[l_fa_sel], sel_w, cfg.lm_boot,
                                           [s, 17]), ddof=1))  # fmt: skip
    target = LM_BAR_FC_FA + LM_PLANT_SE * se_sel
    beta = None
    if arm is Arm.NEGATIVE:
        S_fc = lm["S_fa_b"]
    elif arm is Arm.POSITIVE:
        S_fc, beta = _planted_fc(lm, H[len(H) // 2], seed, lambda S: float(sel.profile(S).max()) - rsa_fa_sel,
                                 target, stream=LM_STREAM_V4)  # fmt: skip
    else:
        S_fc = lm["S_fc"]
    r_fc, l_fc = _held_out_peak(S_fc, sel, ev)
    r_fa, l_fa = _held_out_peak(S_fa, sel, ev)
    diff = r_fc - r_fa
    lo, hi = _ci(paired_bootstrap(S_fc, S_fa, H[l_fc], H[l_fa], ev_w, cfg.lm_boot, [s, 13]))
    measured = {
        "bootstrap 95% CI low of held-out RSA FC - FA (words)": lo,
        "bootstrap 95% CI high of held-out RSA FC - FA (words)": hi,
        "held-out RSA FC - FA (task-fc)": diff,
        "held-out RSA FC": r_fc,
        "held-out RSA FA": r_fa,
        "FC layer (selected)": l_fc,
        "FA layer (selected)": l_fa,
        "bootstrap s.e. of the model's FC - FA (selection words)": se_sel,
        "positive's planted FC - FA on the selection words (bar + 2 s.e.)": target,
    }
    for strategy in ("averaged", "task-fa"):  # the other geometries, reported (task-fa: FA's own prompt)
        if strategy in lm["hidden"]:
            Hs = lm["hidden"][strategy]
            sel_s, ev_s = PairSet(sel_w, Hs), PairSet(ev_w, Hs)
            r_fc_s, r_fa_s = _held_out_peak(S_fc, sel_s, ev_s)[0], _held_out_peak(S_fa, sel_s, ev_s)[0]
            measured[f"reported: held-out RSA FC - FA ({strategy})"] = r_fc_s - r_fa_s
            measured[f"reported: held-out RSA FC ({strategy})"] = r_fc_s
            measured[f"reported: held-out RSA FA ({strategy})"] = r_fa_s
    for name, S in (("GloVe", lm["S_glove"]), ("MiniLM", lm["S_minilm"])):
        measured[f"held-out RSA {name} (task-fc)"] = _held_out_peak(S, sel, ev)[0]
    if "S_fa_a_other_parse" in lm:  # FA's first half under the parsing not judged, reported
        other = "whole-item" if lm.get("fa_parse") == "content word" else "content-word"
        r_other = _held_out_peak(lm["S_fa_a_other_parse"], sel, ev)[0]
        measured[f"reported: held-out RSA FA, {other} parsing (task-fc)"] = r_other
        measured[f"reported: held-out RSA FC - FA, {other} parsing (task-fc)"] = r_fc - r_other
        measured[f"FA associates counted, {other} parsing (first half)"] = lm["stats_fa_a_other_parse"]["responses"]
    if beta is not None:
        measured["planted subject beta"] = beta
    for name, S in (("FC", S_fc), ("FA", S_fa), ("GloVe", lm["S_glove"]), ("MiniLM", lm["S_minilm"])):
        for norm, rho in _norms(lm, S).items():
            measured[f"Spearman rho with {norm}: {name}"] = rho
    measured.update({
        "words (answered in FC and both FA halves)": len(sel_w) + len(ev_w),
        "evaluation words": len(ev_w),
        "FA-tuning cues among the selection words (none evaluated)": int(np.isin(sel_w, fa_tuning_cues()).sum()),
        "vocabulary": len(lm["vocab"]),
        "FC trials": lm["stats_fc"]["trials"],
        "FA runs (each half)": lm["stats_fa_a"]["trials"],
        "FA associates counted (first half)": lm["stats_fa_a"]["responses"],
        "FA associates outside the vocabulary (first half)": lm["stats_fa_a"]["out_of_vocabulary"],
        "FA unparsable runs (first half)": lm["stats_fa_a"]["unparsable"],
    })  # fmt: skip
    fig, ax = _figure()
    depth = np.arange(len(H)) / (len(H) - 1)
    fc_name = "forced choice" if arm is Arm.CLAIM else f"FC side ({arm.value})"
    for name, S in ((fc_name, S_fc), ("free association (tuned)", S_fa), ("GloVe", lm["S_glove"]),
                    ("MiniLM", lm["S_minilm"])):  # fmt: skip
        ax.plot(depth, ev.profile(S), label=name)
    ax.set_xlabel("relative depth (task-fc states)")
    ax.set_ylabel("RSA on evaluation words")
    ax.set_title(f"SmolLM2-135M-Instruct, {len(ev_w)} evaluation words")
    ax.legend(fontsize=7)
    holds = lo > LM_BAR_FC_FA
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={**PAPER_RSA, "FC vs FA": "forced choice aligns substantially more (abstract)"},
        reason="" if holds else f"held-out RSA FC - FA {diff:+.4f}, bootstrap 95% CI over words [{lo:+.3f}, {hi:+.3f}]",
        figures={"rsa-by-layer-smollm2": fig},
    )


def _lm_v5(scale: Scale) -> dict:
    """The 2,110-noun experiment merged from SmolLM2's stores (:func:`~icml26.behaviorgeo.lmexp.load_experiment_v5`);
    at smoke the same collection and merge on the tiny random model (its answers are noise)."""
    from icml26.behaviorgeo import lmexp

    return lmexp.tiny_experiment_v5() if PRESETS[scale.value].lm_model is None else lmexp.load_experiment_v5()


def _crossfit_split(lm: dict, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """v4's split on the stream ``seed + LM_STREAM_V5``: the words answered in FC and in both FA halves, half of
    them (drawn from the words that were not FA-tuning cues) evaluated; then both folds, roles swapped, the
    FA-tuning cues on the selection side of both (:func:`~icml26.behaviorgeo.lmexp.crossfit_folds`)."""
    from icml26.behaviorgeo.lmexp import crossfit_folds, fa_tuning_cues

    tuned = fa_tuning_cues()
    keep = np.flatnonzero(lm["answered_fc"] & lm["answered_fa_a"] & lm["answered_fa_b"])
    untuned = keep[~np.isin(keep, tuned)]
    ev = np.random.default_rng([seed + LM_STREAM_V5, 49]).choice(untuned, size=len(keep) - len(keep) // 2,
                                                                   replace=False)  # fmt: skip
    return crossfit_folds(np.setdiff1d(keep, ev), np.sort(ev), never_evaluated=tuned)


@claim(
    "behaviorgeo/lm-fc-beats-fa-v5",
    statement="On SmolLM2-135M-Instruct over 2,110 nouns (the 1,060 of v4 and 1,050 concrete nouns chosen by a "
    "rule fixed before any trial on them; weights in bfloat16; 4 forced-choice trials of 16 candidates per cue "
    "from the whole 2,110-word design, summed answer log-probabilities calibrated by a content-free cue; free "
    "association tuned on behaviour alone: 8 runs per cue at temperature 0.7 from the 0.9 nucleus, multi-word "
    "associates counted by their content word, 8 more as the A/A twin), the RSA between forced-choice PPMI "
    "geometry and the model's task-FC hidden-state geometry exceeds that of free association by more than 0.02 "
    "on held-out words, cross-fitted: each seed's word split judged both ways (each geometry at the layer where "
    "it aligns best on the fold's selection words, the FA-tuning cues never evaluated), the two folds' held-out "
    "differences averaged; judged on the lower end of the paired 95 % bootstrap interval over each fold's "
    "evaluation words (200 resamples), over seeds = word splits on the stream seed + 3000; bar fixed in v1, "
    "design fixed before the merged data existed",
    paper="abstract; Sec. 5: forced-choice behaviour aligns substantially more with hidden-state geometry than "
    "free association (mean RSA .346-.463 vs .140-.199)",
    control="A/A: free association's other 8, independently sampled runs of every cue (same sampling and parsing) "
    "in forced choice's place (same folds, layer selection and bootstrap): the difference scatters around 0 and "
    "the claim must fail",
    positive="a simulated subject answering the model's own forced-choice trials (the same 2,110-word design) by "
    "a Luce choice on the model's task-FC hidden-state similarity at half depth, its decisiveness set on each "
    "fold's selection words (own calibration draws) so that it beats free association there by 1.5 x the bar "
    "(0.03); measured and judged like the model's answers",
    mechanisms=("lm-task-following-v5",),
    judge=Interval("bootstrap 95% CI low of cross-fitted held-out RSA FC - FA (words)", above=LM_BAR_FC_FA),
)
def lm_fc_beats_fa_v5(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.behaviorgeo.lmexp import PairSet, crossfit_difference, fa_tuning_cues

    lm = _lm_v5(scale)
    cfg = PRESETS[scale.value]
    s = seed + LM_STREAM_V5
    folds = _crossfit_split(lm, seed)
    H = lm["hidden"]["task-fc"]
    S_fa = lm["S_fa_a"]
    target = LM_PLANT_V5 * LM_BAR_FC_FA
    betas = []
    if arm is Arm.NEGATIVE:
        S_fc = lm["S_fa_b"]
    elif arm is Arm.POSITIVE:  # one subject per fold, calibrated on that fold's selection words only
        S_fc = []
        for f, (sel_w, _) in enumerate(folds):
            sel = PairSet(sel_w, H)
            rsa_fa_sel = float(sel.profile(S_fa).max())

            def margin(S, sel=sel, ref=rsa_fa_sel) -> float:  # plant - FA on this fold's selection words
                return float(sel.profile(S).max()) - ref

            S_f, beta = _planted_fc(lm, H[len(H) // 2], seed, margin, target, stream=LM_STREAM_V5, key=(f,))
            S_fc.append(S_f)
            betas.append(beta)
    else:
        S_fc = lm["S_fc"]
    out = crossfit_difference(S_fc, S_fa, H, folds, cfg.lm_boot, s)
    lo, hi = _ci(out["boot"])
    diff = out["diff"]
    measured = {
        "bootstrap 95% CI low of cross-fitted held-out RSA FC - FA (words)": lo,
        "bootstrap 95% CI high of cross-fitted held-out RSA FC - FA (words)": hi,
        "cross-fitted held-out RSA FC - FA (task-fc)": diff,
        "bootstrap s.e. of cross-fitted FC - FA": float(np.std(out["boot"], ddof=1)),
    }
    for f, ((_, ev_w), (l_fc, l_fa)) in enumerate(zip(folds, out["layers"], strict=True)):
        measured.update({
            f"fold {f + 1}: held-out RSA FC - FA": out["fold_diffs"][f],
            f"fold {f + 1}: held-out RSA FC": out["rsa_a"][f],
            f"fold {f + 1}: held-out RSA FA": out["rsa_b"][f],
            f"fold {f + 1}: FC layer (selected)": l_fc,
            f"fold {f + 1}: FA layer (selected)": l_fa,
            f"fold {f + 1}: evaluation words": len(ev_w),
        })  # fmt: skip
    for f in range(len(folds)):  # every arm reports the same keys (0 where nothing is planted)
        measured[f"fold {f + 1}: planted subject beta (positive; 0 otherwise)"] = betas[f] if betas else 0.0
    measured["positive's planted FC - FA on each fold's selection words (1.5 x bar)"] = target
    if "S_glove" in lm:
        for name in ("GloVe", "MiniLM"):
            ref = crossfit_difference(lm[f"S_{name.lower()}"], S_fa, H, folds, 2, s)
            measured[f"reported: cross-fitted held-out RSA {name} (task-fc)"] = float(np.mean(ref["rsa_a"]))
        measured["FC picks among GloVe's top 2 of 16, over chance (2,110-word design)"] = _over_chance(lm, lm["picks"])
    sel_w, ev_w = folds[0]
    measured.update({
        "words (answered in FC and both FA halves)": len(sel_w) + len(ev_w),
        "evaluated words (both folds)": len(ev_w) + len(folds[1][1]),
        "FA-tuning cues on the selection side (never evaluated)": int(np.isin(folds[1][0], fa_tuning_cues()).sum()),
        "vocabulary": len(lm["vocab"]),
        "FC trials": lm["stats_fc"]["trials"],
        "FA runs (each half)": lm["stats_fa_a"]["trials"],
        "FA associates counted (first half)": lm["stats_fa_a"]["responses"],
        "FA associates outside the vocabulary (first half)": lm["stats_fa_a"]["out_of_vocabulary"],
        "FA unparsable runs (first half)": lm["stats_fa_a"]["unparsable"],
        "LM (0 = the tiny random test model, smoke)": float(cfg.lm_model is not None),
    })  # fmt: skip
    fig, ax = _figure()
    depth = np.arange(len(H)) / max(len(H) - 1, 1)
    ev = PairSet(ev_w, H)
    fc_name = "forced choice" if arm is Arm.CLAIM else f"FC side ({arm.value})"
    ax.plot(depth, ev.profile(S_fc[0] if isinstance(S_fc, list) else S_fc), label=fc_name)
    ax.plot(depth, ev.profile(S_fa), label="free association (tuned)")
    ax.set_xlabel("relative depth (task-fc states)")
    ax.set_ylabel("RSA on fold 1's evaluation words")
    ax.set_title(f"{'SmolLM2-135M-Instruct' if cfg.lm_model else 'tiny test model'}, {len(lm['vocab'])} words")
    ax.legend(fontsize=7)
    holds = lo > LM_BAR_FC_FA
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={**PAPER_RSA, "FC vs FA": "forced choice aligns substantially more (abstract)"},
        reason="" if holds else f"cross-fitted FC - FA {diff:+.4f}, bootstrap 95% CI [{lo:+.3f}, {hi:+.3f}]",
        figures={"rsa-by-layer-smollm2-2110w": fig},
    )


def _lm_target_layer(lm: dict, train_w: np.ndarray, cfg) -> int:
    """The task-FC layer where the lexical baselines (GloVe, MiniLM) align best over the regression's training
    words: its target, chosen without behaviour and without the test words (it favours the baselines)."""
    from icml26.behaviorgeo.lmexp import PairSet

    ps = PairSet(train_w, lm["hidden"]["task-fc"], n_pairs=cfg.lm_pairs, seed=3)
    return int(np.argmax(ps.profile(lm["S_glove"]) + ps.profile(lm["S_minilm"])))


def _lm_r2(lm: dict, cfg, target: np.ndarray, S_fc: np.ndarray, split: int, sets: tuple[str, ...],
           predictions: bool = False):  # fmt: skip
    features = {"GloVe": lm["S_glove"], "MiniLM": lm["S_minilm"], "FC": S_fc, "FA": lm["S_fa_a"]}
    all_sets = {"baseline": ["GloVe", "MiniLM"], "+FC": ["GloVe", "MiniLM", "FC"], "+FA": ["GloVe", "MiniLM", "FA"],
                "full": ["GloVe", "MiniLM", "FC", "FA"]}  # fmt: skip
    return heldout_ridge(target, features, {k: all_sets[k] for k in sets}, n_train_pairs=cfg.ridge_train_pairs,
                         seed=split, keep=lm["answered_fc"], predictions=predictions)  # fmt: skip


@claim(
    "behaviorgeo/lm-behaviour-predicts-held-out-v3",
    statement="On SmolLM2-135M-Instruct over 1,060 nouns (bfloat16; 4 calibrated forced-choice trials and 16 "
    "free-association runs per cue), in a held-out-words ridge regression (RidgeCV, alpha in "
    "logspace(-2, 6, 15), 5-fold; 20,000 training pairs among 80 % of the words, all pairs among the other 20 % "
    "tested) of the model's task-FC hidden-state similarity (at the layer where GloVe and MiniLM align best on "
    "the training words), adding forced-choice similarity to GloVe + MiniLM raises the test R^2 by more than "
    "0.005: judged on the lower end of the 95 % bootstrap interval over the test words (200 resamples), over "
    "seeds = word splits on the stream seed + 1000; bar fixed in v1; the free-association gain is reported",
    paper="abstract; held-out ridge: dR2 +.022 (FC) vs +.002 (FA); full .587 vs baseline .569",
    control="ablation: forced choice answered uniformly at random on the same trials (its own randomness): no "
    "information about the model, so the gain must vanish",
    positive="a simulated subject answering the model's own forced-choice trials by a Luce choice on the target "
    "layer's hidden similarity, its decisiveness set on another word split (seed + 1500) so that it adds "
    "1.25 x 0.005 there",
    mechanisms=("lm-task-following",),
    judge=Interval("bootstrap 95% CI low of dR2 FC (test words)", above=LM_BAR_DR2),
)
def lm_behaviour_predicts_held_out(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    lm = _lm(scale)
    if lm is None:
        return _not_run(scale)
    return _predicts_held_out(lm, PRESETS[scale.value], seed, arm, LM_STREAM)


def _predicts_held_out(lm: dict, cfg, seed: int, arm: Arm, stream: int) -> ClaimResult:
    """The held-out-words regression claim's body (v3 on 1,060 nouns, v4 on 2,110): every draw on the stream
    ``seed + stream``."""
    from icml26.behaviorgeo.geometry import bootstrap_r2, heldout_split
    from icml26.behaviorgeo.lmexp import bootstrap_counts

    split = seed + stream
    train_w, _ = heldout_split(len(lm["vocab"]), lm["answered_fc"], 0.2, split)
    layer = _lm_target_layer(lm, train_w, cfg)
    target = lm["hidden"]["task-fc"][layer]
    beta = None
    if arm is Arm.NEGATIVE:
        S_fc = _random_fc(lm, seed, stream)
    elif arm is Arm.POSITIVE:

        def gain(S):  # on another word split: the judged split never sets beta
            r = _lm_r2(lm, cfg, target, S, split + 500, ("baseline", "+FC"))
            return r["+FC"] - r["baseline"]

        S_fc, beta = _planted_fc(lm, target, seed, gain, 1.25 * LM_BAR_DR2, stream=stream)
    else:
        S_fc = lm["S_fc"]
    r2, test = _lm_r2(lm, cfg, target, S_fc, split, ("baseline", "+FC", "+FA", "full"), predictions=True)
    boot = bootstrap_r2(test, bootstrap_counts(len(test["test_words"]), cfg.lm_boot, [split, 19]))
    lo, hi = _ci(boot["+FC"] - boot["baseline"])
    d_fc, d_fa = r2["+FC"] - r2["baseline"], r2["+FA"] - r2["baseline"]
    measured = {
        "bootstrap 95% CI low of dR2 FC (test words)": lo,
        "bootstrap 95% CI high of dR2 FC (test words)": hi,
        "dR2 FC (SmolLM2)": d_fc,
        "dR2 FA (SmolLM2)": d_fa,
        "dR2 full": r2["full"] - r2["baseline"],
        **{f"R2 {k}": v for k, v in r2.items()},
        "target layer (task-fc, chosen on training words)": layer,
        "words (answered in FC)": int(lm["answered_fc"].sum()),
    }
    if beta is not None:
        measured["planted subject beta"] = beta
    fig, ax = _figure()
    ax.bar(list(r2), list(r2.values()))
    ax.set_ylim(min(r2.values()) - 0.02, max(r2.values()) + 0.01)
    ax.set_ylabel("held-out-words test R^2")
    ax.set_title(f"SmolLM2, {len(lm['vocab'])} words, task-fc layer {layer}")
    holds = lo > LM_BAR_DR2
    why = f"adding FC changes held-out R^2 by {d_fc:+.4f}, bootstrap 95% CI over test words [{lo:+.4f}, {hi:+.4f}]"
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"dR2 FC": 0.022, "dR2 FA": 0.002, "R2 full (mean over models)": 0.587, "R2 baseline (mean)": 0.569},
        reason="" if holds else why,
        figures={"heldout-r2-smollm2": fig},
    )


@claim(
    "behaviorgeo/lm-behaviour-predicts-held-out-v4",
    statement="v3's regression on the 2,110 nouns of lm-fc-beats-fa-v5 (the same merged stores: 4 calibrated "
    "forced-choice trials per cue from the whole 2,110-word design, 16 tuned free-association runs per cue, "
    "task-FC hidden states, GloVe + MiniLM): adding forced-choice similarity to GloVe + MiniLM raises the "
    "held-out-words test R^2 (20,000 training pairs among 80 % of the answered words, all pairs among the other "
    "20 %, target layer chosen by the baselines on the training words) by more than 0.005, judged on the lower "
    "end of the 95 % bootstrap interval over the test words (200 resamples), over seeds = word splits on the "
    "stream seed + 5000; bar fixed in v1, design fixed before its run; the free-association gain is reported",
    paper="abstract; held-out ridge: dR2 +.022 (FC) vs +.002 (FA); full .587 vs baseline .569",
    control="ablation: forced choice answered uniformly at random on the same trials (its own randomness): no "
    "information about the model, so the gain must vanish",
    positive="a simulated subject answering the model's own forced-choice trials by a Luce choice on the target "
    "layer's hidden similarity, its decisiveness set on another word split (seed + 5500) so that it adds "
    "1.25 x 0.005 there",
    mechanisms=("lm-task-following-v5",),
    judge=Interval("bootstrap 95% CI low of dR2 FC (test words)", above=LM_BAR_DR2),
)
def lm_behaviour_predicts_held_out_v4(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    if cfg.lm_model is None:
        return _not_run(scale)
    return _predicts_held_out(_lm_v5(scale), cfg, seed, arm, LM_STREAM_PREDICTS_V4)


def _profile_pairs(lm: dict, words: np.ndarray) -> dict:
    """All pairs among ``words`` with the standardised hidden similarities, per strategy; kept in ``lm`` (the
    arms and seeds share them)."""
    from icml26.behaviorgeo.lmexp import PairSet

    cache = lm.setdefault("_profile_pairs", {})
    key = np.asarray(words).tobytes()
    if key not in cache:
        cache[key] = {s: PairSet(words, lm["hidden"][s]) for s in ("task-fc", "averaged")}
    return cache[key]


def _profiles_and_floors(lm: dict, S: np.ndarray, words: np.ndarray, n_perm: int, seed) -> tuple[dict, dict]:
    """RSA profiles of ``S`` over depth on all pairs among ``words`` for both strategies and their
    label-permutation floors (95th percentile of the peak under ``n_perm`` permutations)."""
    prof, floor = {}, {}
    for s, ps in _profile_pairs(lm, words).items():
        prof[s] = ps.profile(S)
        floor[s] = float(np.quantile(ps.permutation_peaks(S, n_perm, seed), 0.95))
    return prof, floor


def _depth(profile: np.ndarray) -> np.ndarray:
    """Relative depth of the peak of each profile (..., L+1) -> (...)."""
    return np.argmax(profile, axis=-1) / (profile.shape[-1] - 1)


def _planted_profile(lm: dict) -> np.ndarray:
    """A similarity with the claimed layer profile built in (:data:`PLANTED_DEPTHS`): the z-scored sum of the
    task-FC states' similarity at 1/4 depth and the averaged states' similarity at 1/2 depth (V, V)."""

    def z(S: np.ndarray) -> np.ndarray:
        return (S - S.mean()) / max(S.std(), 1e-12)

    return sum(z(lm["hidden"][s][round(d * (len(lm["hidden"][s]) - 1))]) for s, d in PLANTED_DEPTHS.items())


@claim(
    "behaviorgeo/layer-profile-v5",
    statement="On SmolLM2-135M-Instruct over 1,060 nouns (bfloat16; 4 calibrated forced-choice trials per cue), "
    "the RSA between forced-choice geometry and hidden-state geometry (all pairs of the answered words) peaks at "
    "a smaller relative depth for task-FC prompt states than for context-averaged states: judged on the lower "
    "end of the 95 % bootstrap interval over words (200 resamples) of the peak-depth gap (averaged - task-FC), "
    "above 0, over seeds (bootstrap draws on the stream seed + 1000); measured only when both profiles peak "
    "above their label-permutation floor (95th percentile of the peak over layers under 100 permutations), "
    "since a profile at chance level has no peak location",
    paper="layer profiles: task and meaning prompts peak at early-to-middle layers, averaged contexts later "
    "(e.g. Falcon3-10B FC peaks .536 at layer 6)",
    control="ablation: forced choice answered uniformly at random on the same trials (its own randomness): no "
    "alignment at any layer, so no peak is located and the claim must not hold",
    positive="a simulated subject answering the model's own forced-choice trials by a Luce choice on a planted "
    "profile (the task-FC states' similarity at 1/4 depth plus the averaged states' at 1/2 depth: a 0.25-depth "
    "gap), its decisiveness the smallest of the grid (0.01 .. 10) whose weaker peak RSA reaches that of the "
    "model's own FC on a random half of the words (own calibration draws): the model's signal strength",
    mechanisms=("lm-task-following",),
    judge=Interval("bootstrap 95% CI low of the peak-depth gap averaged - task-fc (words)", above=0.0),
)
def layer_profile_v5(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.behaviorgeo.lmexp import bootstrap_counts, bootstrap_profiles

    lm = _lm(scale)
    if lm is None:
        return _not_run(scale)
    cfg = PRESETS[scale.value]
    s = seed + LM_STREAM
    words = np.flatnonzero(lm["answered_fc"])
    beta = None
    if arm is Arm.NEGATIVE:
        S_fc = _random_fc(lm, seed)
    elif arm is Arm.POSITIVE:
        half = np.sort(np.random.default_rng([s, 29]).permutation(words)[: len(words) // 2])

        def weaker_peak(S):  # the weaker profile's peak RSA on the calibration half of the words
            return min(ps.profile(S).max() for ps in _profile_pairs(lm, half).values())

        # as strong as the model's own FC there (a planted reader far stronger would vouch for power it lacks)
        S_fc, beta = _planted_fc(lm, _planted_profile(lm), seed, weaker_peak, weaker_peak(lm["S_fc"]),
                                 PROFILE_BETAS)  # fmt: skip
    else:
        S_fc = lm["S_fc"]
    prof, floor = _profiles_and_floors(lm, S_fc, words, cfg.lm_permutations, [s, 11])
    depth = {k: float(_depth(p)) for k, p in prof.items()}
    C = bootstrap_counts(len(words), cfg.lm_boot, [s, 37])
    gap = _depth(bootstrap_profiles(S_fc, lm["hidden"]["averaged"], words, C)) - _depth(
        bootstrap_profiles(S_fc, lm["hidden"]["task-fc"], words, C))  # fmt: skip
    lo, hi = _ci(gap)
    above = all(prof[k].max() > floor[k] for k in floor)
    fig, ax = _figure()
    for k, p in prof.items():
        ax.plot(np.arange(len(p)) / (len(p) - 1), p, label=k)
    for f in floor.values():
        ax.axhline(f, ls=":", color="grey", lw=0.8)
    ax.set_xlabel("relative depth")
    ax.set_ylabel("RSA(FC, hidden)")
    ax.legend(fontsize=8)
    measured = {
        "bootstrap 95% CI low of the peak-depth gap averaged - task-fc (words)": lo,
        "bootstrap 95% CI high of the peak-depth gap averaged - task-fc (words)": hi,
        "peak-depth gap averaged - task-fc": depth["averaged"] - depth["task-fc"],
        "bootstrap share of resamples with task-fc earlier": float(np.mean(gap > 0)),
        **{f"peak RSA FC ({k})": float(p.max()) for k, p in prof.items()},
        **{f"permutation floor of the peak ({k})": f for k, f in floor.items()},
        **{f"peak depth ({k})": d for k, d in depth.items()},
        "words": len(words),
    }
    if beta is not None:
        measured["planted subject beta"] = beta
    paper = {"Falcon3-10B FC peak RSA (template prompt)": 0.536, "profile": "task early-mid, averaged later"}
    figures = {"layer-profile-smollm2": fig}
    if not above:
        reason = "; ".join(f"{k} peak RSA {prof[k].max():.3f} vs permutation floor {f:.3f}" for k, f in floor.items())
        why = f"forced-choice geometry at chance level, so its peak depth is undefined: {reason}"
        return ClaimResult("not-measured", measured=measured, paper=paper, figures=figures, reason=why)
    holds = lo > 0.0
    why = (f"task-fc peaks at depth {depth['task-fc']:.2f}, averaged at {depth['averaged']:.2f}; bootstrap 95% CI "
           f"of the gap [{lo:+.2f}, {hi:+.2f}]")  # fmt: skip
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper=paper,
        reason="" if holds else why,
        figures=figures,
    )


# --- mechanisms the verdicts rest on, with their liveness probes ------------------------------------------------


@mechanism(
    "fc-joint-comparison",
    component="forced choice's joint comparison of 16 candidates (every word a candidate for every cue), which "
    "fills the PPMI matrix where free association's open sampling leaves it sparse",
    measures="PPMI density of forced choice over that of free association (default subject, beta = 8, alpha = 1)",
    above=1.2,
)
def fc_joint_comparison(scale: Scale, seed: int) -> dict[str, float]:
    run = _simulated(scale.value, seed)
    return {
        "fc-joint-comparison": run["density_fc"] / run["density_fa"],
        "PPMI density FC": run["density_fc"],
        "PPMI density FA": run["density_fa"],
    }


@mechanism(
    "fa-frequency-bias",
    component="free association's word-frequency bias (alpha = 1: frequent words intrude whatever the cue)",
    measures="what the bias costs free association's geometry: peak RSA with the hidden geometry of FA without the "
    "bias (alpha = 0) minus that of FA with it (default subject, beta = 8); reference: the same difference for an "
    "A/A pair (FA with the bias, run twice with independent answer noise), reported beside it",
    above=0.02,
)
def fa_frequency_bias(scale: Scale, seed: int) -> dict[str, float]:
    # PPMI divides out the marginal frequency of each associate, so a bias that only shifts marginals would cost
    # nothing here: the probe can read ~0 (inert) as the A/A reference does.
    biased, unbiased = _simulated(scale.value, seed), _simulated(scale.value, seed, "fc", BETA, BETA, 0.0)
    twin = _simulated(scale.value, seed, "fa-twin")  # S_fc: FA again on its own answer stream; S_fa: FA as above
    peak = {
        "biased": float(_by_layer(biased["S_fa"], biased, seed).max()),
        "unbiased": float(_by_layer(unbiased["S_fa"], unbiased, seed).max()),
        "A/A twin": float(_by_layer(twin["S_fc"], twin, seed).max()),
        "A/A": float(_by_layer(twin["S_fa"], twin, seed).max()),
    }
    return {
        "fa-frequency-bias": peak["unbiased"] - peak["biased"],
        "A/A reference: FA twin - FA (same bias)": peak["A/A twin"] - peak["A/A"],
        "peak RSA FA, alpha 1": peak["biased"],
        "peak RSA FA, alpha 0": peak["unbiased"],
    }


def _over_chance(lm: dict, picks: np.ndarray) -> float:
    """The share of ``picks`` among each trial's 2 candidates most similar to the cue in GloVe, over the 2/16
    that chance gives."""
    from icml26.behaviorgeo.lmexp import glove_top2_share

    return glove_top2_share(lm, picks) / (2 / 16)


def _task_following(lm: dict, seed: int, name: str) -> dict[str, float]:
    """The task-following probes' numbers: the model's picks over chance (``name``) and, as the reference, picks
    made at random on the same trials."""
    from icml26.behaviorgeo.lmexp import simulated_picks

    random = simulated_picks(lm["S_glove"], lm["cues"], lm["cands"], 0.0, [seed, 23])
    return {name: _over_chance(lm, lm["picks"]), "ablation reference: random picks": _over_chance(lm, random)}


@mechanism(
    "lm-task-following",
    component="SmolLM2's forced-choice answers follow the task (pick the candidates related to the cue)",
    measures="share of SmolLM2's forced-choice picks among each trial's 2 candidates most similar to the cue in "
    "GloVe, over the 2/16 that chance gives (reference: the same share for picks made at random on the same "
    "trials, reported); 0 where the scale runs no LM (smoke)",
    above=1.25,
)
def lm_task_following(scale: Scale, seed: int) -> dict[str, float]:
    lm = _lm(scale)
    if lm is None:
        return {"lm-task-following": 0.0, "LM run at this scale": 0.0}
    return {
        **_task_following(lm, seed, "lm-task-following"),
        "FC picks in the cue's category (64 concrete-noun cues)": lm["fc_same_category"],
        "LM run at this scale": 1.0,
    }


@mechanism(
    "lm-task-following-v5",
    component="SmolLM2's forced-choice answers on the 2,110-noun design follow the task (the merged picks that "
    "lm-fc-beats-fa-v5 and lm-behaviour-predicts-held-out-v4 read)",
    measures="lm-task-following's share on the merged 2,110-noun stores: share of the picks among each trial's 2 "
    "candidates most similar to the cue in GloVe, over the 2/16 that chance gives (reference: the same share for "
    "picks made at random on the same trials, reported); 0 where the scale runs no LM (smoke)",
    above=1.25,
)
def lm_task_following_v5(scale: Scale, seed: int) -> dict[str, float]:
    if PRESETS[scale.value].lm_model is None:
        return {"lm-task-following-v5": 0.0, "LM run at this scale": 0.0}
    return {**_task_following(_lm_v5(scale), seed, "lm-task-following-v5"), "LM run at this scale": 1.0}


# --- the claims' measures, validated both ways --------------------------------------------------------------------


def _rsa_check(seed: int) -> dict[str, float]:
    """Peak-over-layers RSA with the hidden geometry (smoke-sized subject): the subject's true semantics (truth),
    forced choice, free association and the lexical baseline (alternatives), and forced choice answered at random
    (the null: no semantics, RSA ~0)."""
    run, null = _simulated("smoke", seed), _simulated("smoke", seed, "random")
    return {
        "truth": float(_by_layer(run["subject"].semantic_similarity(), run, seed).max()),
        "forced choice": float(_by_layer(run["S_fc"], run, seed).max()),
        "free association": float(_by_layer(run["S_fa"], run, seed).max()),
        "lexical": float(_by_layer(_lexical(run, seed), run, seed).max()),
        "null": float(_by_layer(null["S_fc"], null, seed).max()),
    }


def _gain_check(seed: int) -> dict[str, float]:
    """Held-out-words R^2 gain over the baseline features (smoke-sized subject) when a similarity is added: the
    subject's true semantics (truth), forced choice and free association (alternatives), and forced choice
    answered at random (the null: no information, gain ~0)."""
    run, null = _simulated("smoke", seed, "oracle"), _simulated("smoke", seed, "random")
    r2, r2_null = _heldout_r2(run, seed), _heldout_r2(null, seed)
    fc = _heldout_r2(_simulated("smoke", seed), seed)
    return {
        "truth": r2["+FC"] - r2["baseline"],
        "forced choice": fc["+FC"] - fc["baseline"],
        "free association": r2["+FA"] - r2["baseline"],
        "null": r2_null["+FC"] - r2_null["baseline"],
    }


def _heldout_rsa_check(seed: int) -> dict[str, float]:
    """The real-model claims' measure -- RSA on evaluation words at the layer chosen on selection words -- on a
    synthetic model with known truth (200 words, 5 layers carrying a latent geometry most strongly at the
    middle one): the middle layer's own geometry (truth), FC subjects answering from it with decisiveness 30
    and 5 (alternatives), and one answering at random (the null: ~0)."""
    from icml26.behaviorgeo.lmexp import PairSet, behaviour_similarity, simulated_picks
    from icml26.behaviorgeo.runner import fc_trial_indices

    rng = np.random.default_rng([seed, 3])
    V = 200
    z = rng.normal(size=(V, 8))
    hidden = [hidden_similarity(z * w + rng.normal(size=z.shape)) for w in (0.5, 1.5, 4.0, 1.5, 0.5)]
    cues, cands = fc_trials(V, 16, 1, seed)
    design = fc_trial_indices(V, 16, 1, 4)
    cues, cands = cues[design], cands[design]
    words = rng.permutation(V)
    sel, ev = PairSet(np.sort(words[:100]), hidden), PairSet(np.sort(words[100:]), hidden)

    def score(S):
        return float(ev.profile(S)[int(np.argmax(sel.profile(S)))])

    def subject(beta):
        return behaviour_similarity(cues, simulated_picks(hidden[2], cues, cands, beta, [seed, int(beta)]), V)

    return {"truth": score(hidden[2]), "FC beta 30": score(subject(30.0)), "FC beta 5": score(subject(5.0)),
            "null": score(subject(0.0))}  # fmt: skip


MEASURES = [
    MeasureCheck("peak RSA with the hidden geometry", _rsa_check, null_band=(-0.1, 0.1), margin=0.02),
    MeasureCheck("held-out-words RSA at the selected layer", _heldout_rsa_check, null_band=(-0.06, 0.06), margin=0.02),
    MeasureCheck("held-out R^2 gain", _gain_check, null_band=(-0.01, 0.01), margin=0.01),
]
MECHANISMS = [fc_joint_comparison, fa_frequency_bias, lm_task_following, lm_task_following_v5]
CLAIMS = [
    fc_beats_fa,
    behaviour_predicts_held_out,
    lm_fc_beats_fa,
    lm_fc_beats_fa_v5,
    lm_behaviour_predicts_held_out,
    lm_behaviour_predicts_held_out_v4,
    layer_profile_v5,
]
