"""The paper's headline claims at laptop scale (see README "Claims"), each in three arms (contract v3): the
claim, its negative control (the effect removed; for the FC-vs-FA comparison an A/A run: a second free
association with its own answer noise in forced choice's place) and its positive control (the effect planted:
the subject's true semantic geometry in forced choice's place, a geometry built to peak early for the task
prompt). ``MECHANISMS`` probe what the verdicts rest on; ``MEASURES`` validate the RSA and the held-out R^2.

- ``fc-beats-fa-v2``: forced-choice geometry aligns more with hidden-state geometry than free association
  (RSA at the best layer) on simulated subjects, for every decisiveness beta of a pre-registered range --
  conditional on equal beta in both paradigms and a frequency bias in FA; the flips are reported; SmolLM2
  reported at ``small``;
- ``behaviour-predicts-held-out-v1``: adding forced-choice similarity to lexical + cross-model-consensus
  features raises the held-out-words ridge R^2 (simulated subject; holds by construction, see the claim);
- ``layer-profile-v2``: on SmolLM2, forced-choice alignment peaks earlier in depth for the task prompt than for
  averaged contexts, measured only above the label-permutation floor (``not-measured`` at ``smoke``, which
  never loads SmolLM2).
"""

from __future__ import annotations

import functools
import time

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


@functools.lru_cache(maxsize=2)
def _lm_run(scale_value: str) -> dict | None:
    """The small real-LM experiment (SmolLM2-135M-Instruct): FC and FA trials (resumable stores in the user
    cache), hidden states under the four strategies, GloVe and MiniLM; ``None`` when the scale runs no LM."""
    cfg = PRESETS[scale_value]
    if cfg.lm_model is None:
        return None
    import torch

    from icml26.behaviorgeo.data import CATEGORY_OF, glove_vectors, minilm_vectors, vocabulary
    from icml26.behaviorgeo.lm import (
        STRATEGIES,
        cache_dir,
        hidden_states,
        load_lm,
        run_forced_choice,
        run_free_association,
        trial_counts,
    )

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    model, tok = load_lm(cfg.lm_model)
    t_load = time.perf_counter() - t0
    vocab = vocabulary(cfg.lm_words)
    runs = cache_dir() / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    tag = f"{cfg.lm_model}-{cfg.lm_words}w"
    t0 = time.perf_counter()
    fc = run_forced_choice(model, tok, vocab, runs / f"fc-{tag}-s{cfg.lm_fc_shuffles}-word", model_name=cfg.lm_model,
                           shuffles=cfg.lm_fc_shuffles, batch=cfg.lm_batch, scoring="word")  # fmt: skip
    t_fc = time.perf_counter() - t0
    t0 = time.perf_counter()
    fa = run_free_association(model, tok, vocab, runs / f"fa-{tag}-r{cfg.lm_fa_runs}", model_name=cfg.lm_model,
                              runs=cfg.lm_fa_runs, batch=cfg.lm_batch,
                              max_new_tokens=cfg.lm_max_new_tokens)  # fmt: skip
    t_fa = time.perf_counter() - t0
    B_fc, st_fc = trial_counts(fc, vocab, "fc")
    B_fa, st_fa = trial_counts(fa, vocab, "fa", open_responses=True)
    P_fc, P_fa = ppmi(B_fc), ppmi(B_fa)
    keep = (np.asarray(P_fc.sum(1)).ravel() > 0) & (np.asarray(P_fa.sum(1)).ravel() > 0)
    t0 = time.perf_counter()
    hidden = {s: [hidden_similarity(h) for h in hidden_states(model, tok, vocab, s)] for s in STRATEGIES}
    t_hidden = time.perf_counter() - t0
    glove, missing = glove_vectors(vocab)
    same = [
        CATEGORY_OF.get(p) == CATEGORY_OF.get(c)
        for c, p in zip([*fc.cue, *fc.cue], [*fc.pick1, *fc.pick2], strict=True)
    ]
    chance = [np.mean([CATEGORY_OF.get(w) == CATEGORY_OF.get(c) for w in cands.split("|")])
              for c, cands in zip(fc.cue, fc.candidates, strict=True)]  # fmt: skip
    return {
        "fc_same_category": float(np.mean(same)),
        "fc_same_category_chance": float(np.mean(chance)),
        "vocab": vocab,
        "S_fc": row_cosine(P_fc),
        "S_fa": row_cosine(P_fa),
        "S_glove": row_cosine(glove),
        "S_minilm": hidden_similarity(minilm_vectors(vocab)),
        "keep": keep,
        "hidden": hidden,
        "stats_fc": st_fc,
        "stats_fa": st_fa,
        "glove_missing": missing,
        "seconds": {"load": t_load, "fc": t_fc, "fa": t_fa, "hidden": t_hidden},
    }


def _lm_profiles(lm: dict, S_fc: np.ndarray) -> dict[str, np.ndarray]:
    return {s: np.array([rsa(S_fc, Sh, keep=lm["keep"], n_pairs=None) for Sh in hs]) for s, hs in lm["hidden"].items()}


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
    "choice less decisive than free association) are measured and reported, and a small SmolLM2-135M run is "
    "reported",
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
    lm = _lm_run(scale.value)
    if lm is not None:
        S_fc_lm = lm["S_fc"]
        if arm is Arm.NEGATIVE:  # the real model has no twin run: its FC word labels are permuted instead
            S_fc_lm = _random_like(S_fc_lm, seed)
        prof_fc = _lm_profiles(lm, S_fc_lm)
        prof_fa = _lm_profiles(lm, lm["S_fa"])
        for s in ("task-fc", "averaged"):
            measured[f"SmolLM2 peak RSA FC ({s})"] = float(prof_fc[s].max())
            measured[f"SmolLM2 peak RSA FA ({s})"] = float(prof_fa[s].max())
        measured["SmolLM2 FC peak RSA permutation floor (task-fc)"] = _permutation_floor(lm, S_fc_lm, "task-fc", seed)
        measured["SmolLM2 FC picks in the cue's category [%]"] = 100 * lm["fc_same_category"]
        measured["SmolLM2 FC same-category chance [%]"] = 100 * lm["fc_same_category_chance"]
        measured["SmolLM2 words"] = len(lm["vocab"])
        measured["SmolLM2 FC trials"] = lm["stats_fc"]["trials"]
        measured["SmolLM2 FA runs"] = lm["stats_fa"]["trials"]
        measured["SmolLM2 FA unparsable runs"] = lm["stats_fa"]["unparsable"]
        measured["SmolLM2 FA out-of-vocabulary associates"] = lm["stats_fa"]["out_of_vocabulary"]
        fig2, ax2 = _figure()
        for s, prof in prof_fc.items():
            ax2.plot(np.arange(len(prof)) / (len(prof) - 1), prof, "-", label=f"FC vs {s}")
        ax2.plot(np.linspace(0, 1, len(prof_fa["task-fc"])), prof_fa["task-fc"], "--", label="FA vs task-fc")
        glove = [rsa(lm["S_glove"], Sh, keep=lm["keep"], n_pairs=None) for Sh in lm["hidden"]["averaged"]]
        minilm = [rsa(lm["S_minilm"], Sh, keep=lm["keep"], n_pairs=None) for Sh in lm["hidden"]["averaged"]]
        measured["SmolLM2 peak RSA GloVe (averaged)"] = float(np.max(glove))
        measured["SmolLM2 peak RSA MiniLM (averaged)"] = float(np.max(minilm))
        ax2.plot(np.linspace(0, 1, len(glove)), glove, ":", label="GloVe vs averaged")
        ax2.plot(np.linspace(0, 1, len(minilm)), minilm, ":", label="MiniLM vs averaged")
        ax2.set_xlabel("relative depth")
        ax2.set_ylabel("RSA (Pearson r)")
        ax2.set_title(f"SmolLM2-135M-Instruct, {len(lm['vocab'])} words")
        ax2.legend(fontsize=7)
        figures["rsa-by-layer-smollm2"] = fig2
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


def _random_like(S: np.ndarray, seed: int) -> np.ndarray:
    """The control's behavioural geometry for a real model: the word labels of S permuted."""
    perm = np.random.default_rng(seed).permutation(S.shape[0])
    return S[np.ix_(perm, perm)]


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


def _permutation_floor(lm: dict, S: np.ndarray, strategy: str, seed: int, n: int = 200) -> float:
    """95th percentile of the peak-over-layers RSA of ``S`` with its word labels permuted (``n`` permutations):
    the peak a geometry unrelated to the hidden states reaches by chance on this vocabulary and depth."""
    rng = np.random.default_rng([seed, 11])
    peaks = []
    for _ in range(n):
        perm = rng.permutation(S.shape[0])
        S_perm = S[np.ix_(perm, perm)]
        peaks.append(max(rsa(S_perm, Sh, keep=lm["keep"], n_pairs=None) for Sh in lm["hidden"][strategy]))
    return float(np.quantile(peaks, 0.95))


@claim(
    "behaviorgeo/layer-profile-v2",
    statement="On SmolLM2-135M-Instruct (small vocabulary), the RSA between forced-choice geometry and hidden-state "
    "geometry peaks at a smaller relative depth for task-FC prompt states than for context-averaged states; "
    "measured only when both profiles peak above their label-permutation floor (95th percentile of the peak "
    "over layers under 200 permutations), since the peak of a profile at chance level has no location",
    paper="layer profiles: task and meaning prompts peak at early-to-middle layers, averaged contexts later "
    "(e.g. Falcon3-10B FC peaks .536 at layer 6)",
    control="the forced-choice geometry's word labels permuted: no alignment at any layer, so no peak is located "
    "and the claim must not hold",
    positive="a geometry planted to have the claimed profile in forced choice's place: the z-scored sum of the "
    "task-FC states' similarity at 1/4 depth and the averaged states' similarity at 3/4 depth, so the task-FC "
    "profile must peak earlier; located by the same floor and peak code",
    mechanisms=("lm-task-following",),
)
def layer_profile(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    lm = _lm_run(scale.value)
    if lm is None:
        return ClaimResult("not-measured", reason="smoke never loads SmolLM2 (run --scale small)")
    S_fc = {Arm.CLAIM: lambda: lm["S_fc"], Arm.NEGATIVE: lambda: _random_like(lm["S_fc"], seed)}.get(
        arm, lambda: _planted_profile(lm)
    )()
    prof = _lm_profiles(lm, S_fc)
    depth = {s: float(np.argmax(p) / (len(p) - 1)) for s, p in prof.items()}
    floor = {s: _permutation_floor(lm, S_fc, s, seed) for s in ("task-fc", "averaged")}
    above = all(prof[s].max() > floor[s] for s in floor)
    fig, ax = _figure()
    for s, p in prof.items():
        ax.plot(np.arange(len(p)) / (len(p) - 1), p, label=s)
    for f in floor.values():
        ax.axhline(f, ls=":", color="grey", lw=0.8)
    ax.set_xlabel("relative depth")
    ax.set_ylabel("RSA(FC, hidden)")
    ax.legend(fontsize=8)
    measured = {
        **{f"peak RSA FC ({s})": float(p.max()) for s, p in prof.items()},
        **{f"permutation floor of the peak ({s})": f for s, f in floor.items()},
        **{f"peak depth ({s})": d for s, d in depth.items()},
        "words": len(lm["vocab"]),
    }
    paper = {"Falcon3-10B FC peak RSA (template prompt)": 0.536, "profile": "task early-mid, averaged later"}
    figures = {"layer-profile": fig}
    if not above:
        reason = "; ".join(f"{s} peak RSA {prof[s].max():.3f} vs permutation floor {f:.3f}" for s, f in floor.items())
        return ClaimResult("not-measured", measured=measured, paper=paper, figures=figures,
                           reason=f"forced-choice geometry at chance level, so its peak depth is undefined: {reason} "
                           f"({len(lm['vocab'])} words, {lm['stats_fc']['trials']} FC trials)")  # fmt: skip
    holds = depth["task-fc"] < depth["averaged"]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper=paper,
        reason="" if holds else f"task-fc peaks at depth {depth['task-fc']:.2f}, averaged at {depth['averaged']:.2f}",
        figures=figures,
    )


def _planted_profile(lm: dict) -> np.ndarray:
    """A forced-choice geometry with the claimed layer profile built in: the sum of the z-scored similarities
    of the task-FC states at 1/4 depth and of the averaged states at 3/4 depth (V, V)."""

    def z(S: np.ndarray) -> np.ndarray:
        return (S - S.mean()) / max(S.std(), 1e-12)

    task, averaged = lm["hidden"]["task-fc"], lm["hidden"]["averaged"]
    return z(task[round(0.25 * (len(task) - 1))]) + z(averaged[round(0.75 * (len(averaged) - 1))])


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


@mechanism(
    "lm-task-following",
    component="SmolLM2's forced-choice answers follow the task (picks semantically related candidates)",
    measures="share of SmolLM2's forced-choice picks in the cue's category over the share chance gives; 0 where "
    "the scale runs no LM (smoke), so the claims resting on it cannot be shown there",
    above=1.5,
)
def lm_task_following(scale: Scale, seed: int) -> dict[str, float]:
    lm = _lm_run(scale.value)
    if lm is None:
        return {"lm-task-following": 0.0, "LM run at this scale": 0.0}
    return {
        "lm-task-following": lm["fc_same_category"] / lm["fc_same_category_chance"],
        "LM run at this scale": 1.0,
        "FC picks in the cue's category": lm["fc_same_category"],
    }


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


MEASURES = [
    MeasureCheck("peak RSA with the hidden geometry", _rsa_check, null_band=(-0.1, 0.1), margin=0.02),
    MeasureCheck("held-out R^2 gain", _gain_check, null_band=(-0.01, 0.01), margin=0.01),
]
MECHANISMS = [fc_joint_comparison, fa_frequency_bias, lm_task_following]
CLAIMS = [fc_beats_fa, behaviour_predicts_held_out, layer_profile]
