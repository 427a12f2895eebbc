"""The real-model experiment behind the v2 claims: SmolLM2's forced-choice and free-association stores on the
1,060-noun vocabulary, its hidden states, the lexical baselines, and the statistics the claims judge.

- :func:`load_experiment` runs (or resumes, in the user cache) the trials with the fast runner and returns every
  geometry: FC, the free-association runs of every cue split into two independent halves (the even runs,
  ``fa_a``, are compared with FC; the odd runs, ``fa_b``, are its A/A twin: the same paradigm with its own
  sampling randomness), the hidden-state
  similarities per layer for the ``task-fc`` and ``averaged`` strategies, GloVe and MiniLM.
- :class:`PairSet`: all pairs among a set of words with the hidden similarities of every layer pre-standardised,
  so an RSA profile over layers is one matrix-vector product.
- :func:`simulated_picks`: the positive controls' subject -- it answers the *same* forced-choice trials by a
  Luce choice on a similarity matrix of the model's own hidden states (``beta * S[cue, cand] + Gumbel``, top 2).
- :func:`bootstrap_profiles`: RSA profiles over depth on the pairs among words resampled with replacement (pairs
  of one word with itself dropped), exactly and fast: a resample weights word pair (a, b) by c_a c_b, so every
  weighted sum over pairs is ``c^T X c``, one matrix product for all resamples at once;
  :func:`paired_bootstrap` is the difference of two geometries' RSA at fixed layers on the same resamples.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np

from icml26.behaviorgeo.geometry import count_matrix, hidden_similarity, ppmi, row_cosine

STRATEGIES_V2 = ("task-fc", "averaged", "task-fa")


#: The free-association tuning's cues (``benchmarks/behaviorgeo_fa_tuning.py``): 100 of the 1,060 nouns drawn on
#: the stream 2026. FA's sampling was chosen on their behaviour, so lm-fc-beats-fa-v4 never evaluates on them.
FA_TUNING_STREAM, FA_TUNING_CUES = 2026, 100


def fa_tuning_cues(n_vocab: int = 1060, n: int = FA_TUNING_CUES) -> np.ndarray:
    """Indices of the cues free association was tuned on (sorted)."""
    rng = np.random.default_rng(FA_TUNING_STREAM)
    return np.sort(rng.choice(n_vocab, size=min(n, n_vocab), replace=False))


def behaviour_similarity(cues: np.ndarray, picks: np.ndarray, n_words: int) -> np.ndarray:
    """Forced-choice geometry from picks: counts -> PPMI -> row cosine (V, V)."""
    return row_cosine(ppmi(count_matrix(np.repeat(cues, picks.shape[1]), picks.ravel(), n_words)))


def simulated_picks(S: np.ndarray, cues: np.ndarray, cands: np.ndarray, beta: float, seed) -> np.ndarray:
    """Two picks per trial by a Luce choice on ``S`` among the trial's candidates: (T, 2) word indices.
    ``beta = 0`` answers uniformly at random."""
    rng = np.random.default_rng(seed)
    u = beta * S[cues[:, None], cands] + rng.gumbel(size=cands.shape)  # (T, K)
    return np.take_along_axis(cands, np.argsort(-u, axis=1)[:, :2], axis=1)


class PairSet:
    """All pairs among ``words`` (indices; or ``n_pairs`` of them sampled) and the standardised hidden similarities
    of every layer there."""

    def __init__(self, words: np.ndarray, hidden: list[np.ndarray], n_pairs: int | None = None, seed=0):
        from icml26.behaviorgeo.geometry import sample_pairs

        self.words = np.asarray(words)
        i, j = sample_pairs(len(self.words), n_pairs, seed) if n_pairs else np.triu_indices(len(self.words), k=1)
        self.i, self.j = self.words[i], self.words[j]
        self.Z = np.vstack([_standardise(S[self.i, self.j]) for S in hidden])  # (L+1, n_pairs)

    def profile(self, S: np.ndarray) -> np.ndarray:
        """RSA (Pearson r) of ``S`` with every layer over these pairs: (L+1,)."""
        return self.Z @ _standardise(S[self.i, self.j])

    def permutation_peaks(self, S: np.ndarray, n: int, seed) -> np.ndarray:
        """Peak-over-layers RSA of ``S`` with its word labels permuted, ``n`` times: the chance distribution."""
        rng = np.random.default_rng(seed)
        peaks = np.empty(n)
        V = S.shape[0]
        for r in range(n):
            perm = rng.permutation(V)
            peaks[r] = np.max(self.Z @ _standardise(S[perm[self.i], perm[self.j]]))
        return peaks


def _standardise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    n = np.linalg.norm(x)
    return x / n if n > 0 else x


def bootstrap_counts(n: int, n_boot: int, seed) -> np.ndarray:
    """How often each of ``n`` words is drawn in each of ``n_boot`` resamples with replacement: (n, n_boot)."""
    rng = np.random.default_rng(seed)
    return np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(n_boot)], axis=1).astype(float)


def bootstrap_profiles(S: np.ndarray, hidden: list[np.ndarray], words: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Pearson r of ``S`` with every hidden similarity over the pairs among ``words`` resampled as the counts
    ``C`` (n, B) say (:func:`bootstrap_counts`; a column of ones = all pairs once): (B, L+1).

    A resample holds word pair a < b c_a c_b times and drops a word paired with its own copy, so a sum over its
    pairs is s(X) = (c^T X c - sum_a c_a^2 X_aa) / 2 and r = cov / sqrt(var_S var_H) from the s() of 1, S, S^2,
    H, H^2 and S * H."""
    ix = np.ix_(np.asarray(words), np.asarray(words))
    C = np.asarray(C, dtype=np.float64)
    C2 = C**2

    def s(X: np.ndarray) -> np.ndarray:  # (B,)
        return 0.5 * (np.einsum("ab,ab->b", X @ C, C) - np.diag(X) @ C2)

    Ss = np.asarray(S, dtype=np.float64)[ix]
    n = 0.5 * (C.sum(0) ** 2 - C2.sum(0))
    sS = s(Ss)
    var_S = s(Ss * Ss) - sS**2 / n
    out = np.empty((C.shape[1], len(hidden)))
    for layer, H in enumerate(hidden):
        Hs = np.asarray(H, dtype=np.float64)[ix]
        sH = s(Hs)
        var_H = s(Hs * Hs) - sH**2 / n
        cov = s(Ss * Hs) - sS * sH / n
        out[:, layer] = cov / np.sqrt(np.maximum(var_S * var_H, 1e-300))
    return out


def paired_bootstrap(A: np.ndarray, B: np.ndarray, H_a: np.ndarray, H_b: np.ndarray, words: np.ndarray,
                     n_boot: int, seed) -> np.ndarray:  # fmt: skip
    """RSA(A, H_a) - RSA(B, H_b) over the pairs of ``words`` resampled with replacement, ``n_boot`` times (the
    same resamples for both): (n_boot,)."""
    C = bootstrap_counts(len(words), n_boot, seed)
    return bootstrap_profiles(A, [H_a], words, C)[:, 0] - bootstrap_profiles(B, [H_b], words, C)[:, 0]


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    return float(_standardise(a) @ _standardise(b))


@functools.lru_cache(maxsize=2)
def load_experiment(n_words: int, fc_per_cue: int, fa_runs: int, fa_tokens: int, model_name: str = "smollm2",
                    batch: int = 32, dtype: str = "float32", fa_temperature: float = 1.0, fa_top_p: float = 1.0,
                    fa_content_words: bool = False) -> dict:  # fmt: skip
    """SmolLM2's trials (resumable stores in the user cache), hidden states and baselines on ``n_words`` nouns.
    The trials run with the weights in ``dtype`` (a bfloat16 store is named ``...-bf16``); hidden states are
    always float32. Free association samples at ``fa_temperature`` from the nucleus of mass ``fa_top_p`` (a
    store away from 1 / 1 is named ``...-t<T>-p<P>``); with ``fa_content_words`` its associates are parsed by
    content word (:func:`~icml26.behaviorgeo.lm.content_word`) in both halves, and the whole-item parsing of
    the first half is kept for the report (``S_fa_a_other_parse``), and vice versa.
    Forced choice is scored calibrated (``run_fc_fast(calibrate=True)``): uncalibrated, 38 % of SmolLM2's picks
    went to the first-listed candidate and its picks matched GloVe's top 2 at 1.19 x chance (2,120 trials)."""
    import torch

    from icml26.behaviorgeo.data import CATEGORY_OF, glove_vectors, minilm_vectors, vocabulary
    from icml26.behaviorgeo.lm import DTYPES, cache_dir, content_word, load_lm, trial_counts
    from icml26.behaviorgeo.runner import cached_hidden_states, fc_trial_indices, run_fa_fast, run_fc_fast
    from icml26.behaviorgeo.subject import fc_trials

    if fa_runs < 2 or fa_runs % 2:
        raise ValueError("the experiment needs an even number of free-association runs per cue (two halves)")
    torch.set_num_threads(1)
    seconds = {}
    t0 = time.perf_counter()
    model, tok = load_lm(model_name, dtype=DTYPES[dtype])
    vocab = vocabulary(n_words)
    runs = cache_dir() / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    tag = f"{model_name}-{n_words}w" + ("" if dtype == "float32" else "-bf16")
    seconds["load"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fc = run_fc_fast(model, tok, vocab, runs / f"fc-fast-{tag}-k{fc_per_cue}-sum-cal", model_name=model_name,
                     trials_per_cue=fc_per_cue, batch=batch, scoring="sum", calibrate=True)  # fmt: skip
    seconds["fc"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sampling = "" if (fa_temperature, fa_top_p) == (1.0, 1.0) else f"-t{fa_temperature:g}-p{fa_top_p:g}"
    fa = run_fa_fast(model, tok, vocab, runs / f"fa-fast-{tag}-r{fa_runs}{sampling}", model_name=model_name,
                     runs=fa_runs, batch=2 * batch, max_new_tokens=fa_tokens, temperature=fa_temperature,
                     top_p=fa_top_p)  # fmt: skip
    seconds["fa"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if dtype != "float32":
        model = load_lm(model_name)[0]  # hidden states in float32 (read back from the cache when there)
    hidden = {s: [hidden_similarity(h) for h in cached_hidden_states(model, tok, vocab, s, runs, model_name)]
              for s in STRATEGIES_V2}  # fmt: skip
    seconds["hidden"] = time.perf_counter() - t0
    fc = fc.sort_values("trial").reset_index(drop=True)
    index = {w: i for i, w in enumerate(vocab)}
    cues_all, cands_all = fc_trials(len(vocab), 16, 1, 0)
    design = fc_trial_indices(len(vocab), 16, 1, fc_per_cue)
    cues, cands = cues_all[design], cands_all[design]  # (T,), (T, 16): the trials the model answered
    picks = np.column_stack([[index[p] for p in fc.pick1], [index[p] for p in fc.pick2]])  # (T, 2)
    if not np.array_equal(fc.trial.to_numpy(), design):
        raise RuntimeError("the forced-choice store does not hold the design's trials")
    B_fc, st_fc = trial_counts(fc, vocab, "fc")
    by_content = fa.assign(associates=["|".join(content_word(w, index) for w in a.split("|")) if a else a
                                       for a in fa.associates])  # fmt: skip
    judged, other = (by_content, fa) if fa_content_words else (fa, by_content)
    halves = {}
    for name, half in (("fa_a", 0), ("fa_b", 1)):
        part = judged[(fa.run % fa_runs) % 2 == half]  # even runs of a cue vs odd runs: two independent halves
        B, st = trial_counts(part, vocab, "fa", open_responses=True)
        halves[name] = (row_cosine(ppmi(B)), st, np.asarray(B.sum(1)).ravel() > 0)
    B_other, st_other = trial_counts(other[(fa.run % fa_runs) % 2 == 0], vocab, "fa", open_responses=True)
    glove, missing = glove_vectors(vocab)
    S_glove = row_cosine(glove)
    same_cat = np.mean([CATEGORY_OF.get(vocab[p]) == CATEGORY_OF.get(vocab[c]) for c, p in
                        zip(np.repeat(cues, 2), picks.ravel(), strict=True) if vocab[c] in CATEGORY_OF])  # fmt: skip
    return {
        "vocab": vocab,
        "cues": cues,
        "cands": cands,
        "picks": picks,
        "S_fc": row_cosine(ppmi(B_fc)),
        "answered_fc": np.asarray(B_fc.sum(1)).ravel() > 0,
        "S_fa_a": halves["fa_a"][0],
        "S_fa_b": halves["fa_b"][0],
        "S_fa_a_other_parse": row_cosine(ppmi(B_other)),  # the first half under the parsing not judged
        "stats_fa_a_other_parse": st_other,
        "fa_parse": "content word" if fa_content_words else "whole item",
        "fa_sampling": {"temperature": fa_temperature, "top_p": fa_top_p},
        "answered_fa_a": halves["fa_a"][2],
        "answered_fa_b": halves["fa_b"][2],
        "stats_fc": st_fc,
        "stats_fa_a": halves["fa_a"][1],
        "stats_fa_b": halves["fa_b"][1],
        "hidden": hidden,
        "S_glove": S_glove,
        "S_minilm": hidden_similarity(minilm_vectors(vocab)),
        "glove_missing": missing,
        "fc_same_category": float(same_cat),
        "seconds": seconds,
    }


def glove_top2_share(lm: dict, picks: np.ndarray) -> float:
    """Share of picks that are among the trial's 2 candidates most similar to the cue in GloVe (chance: 2/16)."""
    S = lm["S_glove"]
    sim = S[lm["cues"][:, None], lm["cands"]]  # (T, 16)
    top2 = np.take_along_axis(lm["cands"], np.argsort(-sim, axis=1, kind="stable")[:, :2], axis=1)  # (T, 2)
    return float(np.mean([np.isin(picks[t], top2[t]).mean() for t in range(len(picks))]))


def extension_stores(model_name: str = "smollm2", dtype: str = "bfloat16", fc_per_cue: int = 4, fa_runs: int = 16,
                     fa_temperature: float = 0.7, fa_top_p: float = 0.9) -> dict:  # fmt: skip
    """The user-cache folders of the v5 vocabulary's new cues (:func:`collect_extension`): FC and FA stores over
    the 2,110-word design restricted to cues 1,060..2,109; hidden states of the 1,050 new words alone (they are
    per word, so they stack under the 1,060 words' cached ones)."""
    from icml26.behaviorgeo.data import extended_nouns
    from icml26.behaviorgeo.lm import cache_dir

    words = extended_nouns()
    n_old = len(words) - len(read_extension())
    tag = f"{model_name}-{len(words)}w" + ("" if dtype == "float32" else "-bf16")
    runs = cache_dir() / "runs"

    def fc(first: int, last: int) -> Path:  # the FC store of cues first..last-1 under the whole design
        return runs / f"fc-fast-{tag}-k{fc_per_cue}-sum-cal-cues{first}-{last}"

    fa = f"fa-fast-{tag}-r{fa_runs}-t{fa_temperature:g}-p{fa_top_p:g}-cues{n_old}-{len(words)}"
    return {"runs": runs, "cues": (n_old, len(words)), "vocab": words, "fc": fc(n_old, len(words)),
            "fc_old": fc(0, n_old), "fa": runs / fa}  # fmt: skip


def read_extension() -> list[str]:
    """The 1,050 new words of the v5 vocabulary (``vocab/nouns_v5_new.txt``)."""
    from icml26.behaviorgeo.data import EXTENSION_FILE, read_vocabulary

    return read_vocabulary(EXTENSION_FILE)


def collect_extension(stage: str, model_name: str = "smollm2", batch: int = 32, max_trials: int | None = None,
                      progress: bool | None = None) -> dict:  # fmt: skip
    """Collect (or resume) one stage of the v5 vocabulary's new cues with the judged stores' settings: ``fc`` =
    4 calibrated FC trials per cue (summed answer log-probability, bfloat16, batch 32); ``fa`` = 16 runs per cue
    at temperature 0.7 from the 0.9 nucleus, 16 tokens (bfloat16, batch 64); ``hidden`` = float32 hidden states
    of the new words for every strategy of :data:`STRATEGIES_V2`. Returns the stage's counts and seconds."""
    import torch

    from icml26.behaviorgeo.lm import DTYPES, load_lm
    from icml26.behaviorgeo.runner import cached_hidden_states, run_fa_fast, run_fc_fast

    if stage not in ("fc", "fa", "hidden"):
        raise ValueError(f"stage must be fc, fa or hidden; got {stage!r}")
    torch.set_num_threads(1)
    st = extension_stores(model_name)
    t0, speed = time.perf_counter(), {}
    if stage == "hidden":
        model, tok = load_lm(model_name)  # float32, as the judged hidden states
        shapes = {s: cached_hidden_states(model, tok, read_extension(), s, st["runs"], model_name).shape
                  for s in STRATEGIES_V2}  # fmt: skip
        return {"stage": stage, "shapes": shapes, "seconds": time.perf_counter() - t0}
    model, tok = load_lm(model_name, dtype=DTYPES["bfloat16"])
    common = {"model_name": model_name, "max_trials": max_trials, "progress": progress, "stats": speed,
              "cues": st["cues"]}  # fmt: skip
    if stage == "fc":
        df = run_fc_fast(model, tok, st["vocab"], st["fc"], trials_per_cue=4, batch=batch, scoring="sum",
                         calibrate=True, **common)  # fmt: skip
    else:
        df = run_fa_fast(model, tok, st["vocab"], st["fa"], runs=16, batch=2 * batch, max_new_tokens=16,
                         temperature=0.7, top_p=0.9, **common)  # fmt: skip
    return {"stage": stage, "store": str(st[stage]), "rows": len(df), "new": speed.get("trials", 0),
            "seconds": time.perf_counter() - t0}  # fmt: skip


def crossfit_folds(selection: np.ndarray, evaluation: np.ndarray,
                   never_evaluated: np.ndarray = ()) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """The two folds of a cross-fitted word split, as (selection words, evaluation words): the split as given,
    then with the roles swapped; words of ``never_evaluated`` (the FA-tuning cues) stay on the selection side
    of both folds."""
    sel, ev, out = (np.asarray(x, dtype=np.int64) for x in (selection, evaluation, never_evaluated))
    if np.intersect1d(sel, ev).size:
        raise ValueError("the selection and evaluation words of a split overlap")
    return [(np.union1d(a, b[np.isin(b, out)]), np.sort(b[~np.isin(b, out)])) for a, b in ((sel, ev), (ev, sel))]


def crossfit_difference(A: np.ndarray, B: np.ndarray, hidden: list[np.ndarray],
                        folds: list[tuple[np.ndarray, np.ndarray]], n_boot: int, seed: int) -> dict:  # fmt: skip
    """Cross-fitted held-out RSA(A) - RSA(B) (the lm-fc-beats-fa-v5 measurement): in each fold, each
    geometry at the layer where it aligns best on the fold's selection words, compared on its evaluation words;
    the folds' differences averaged. The paired bootstrap resamples each fold's evaluation words independently
    (the same resamples for A and B) and averages the folds: ``boot`` (n_boot,). ``A`` may be a list with one
    geometry per fold (a subject calibrated on each fold's selection words)."""
    diffs, boots, layers, rsa_a, rsa_b = [], [], [], [], []
    per_fold = isinstance(A, (list, tuple))
    if per_fold and len(A) != len(folds):
        raise ValueError(f"{len(A)} geometries for {len(folds)} folds")
    for f, (sel_w, ev_w) in enumerate(folds):
        A_f = A[f] if per_fold else A
        sel, ev = PairSet(sel_w, hidden), PairSet(ev_w, hidden)
        la, lb = int(np.argmax(sel.profile(A_f))), int(np.argmax(sel.profile(B)))
        rsa_a.append(float(ev.profile(A_f)[la]))
        rsa_b.append(float(ev.profile(B)[lb]))
        diffs.append(rsa_a[-1] - rsa_b[-1])
        C = bootstrap_counts(len(ev_w), n_boot, [seed, 17, f])
        boots.append(
            bootstrap_profiles(A_f, [hidden[la]], ev_w, C)[:, 0] - bootstrap_profiles(B, [hidden[lb]], ev_w, C)[:, 0]
        )
        layers.append((la, lb))
    return {"diff": float(np.mean(diffs)), "fold_diffs": diffs, "layers": layers, "boot": np.mean(boots, axis=0),
            "rsa_a": rsa_a, "rsa_b": rsa_b}  # fmt: skip


# --- lm-fc-beats-fa-v5: the 2,110-noun experiment, merged from stores of disjoint cue ranges ---------------------
def _store_frame(folder):
    """A finished trial store's rows and its config.json (read as it is; the store is never resumed here)."""
    import json

    from icml26.behaviorgeo.lm import TrialStore

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"trial store {folder} does not exist (collect it first; README: lm-fc-beats-fa-v5)")
    config = json.loads((folder / "config.json").read_text())
    store = TrialStore(folder, config)
    return store.read(), config, store.vocab()


def merge_fc_v5(stores: list, vocab: list[str], trials_per_cue: int):
    """One forced-choice design over ``vocab`` from stores of disjoint cue ranges (``run --cues``): their rows
    concatenated, checked to be exactly the design's first ``trials_per_cue`` trials of every cue, run with one
    configuration apart from the range, on this vocabulary. Returns the rows sorted by trial."""
    import pandas as pd

    from icml26.behaviorgeo.runner import _vocab_hash, fc_trial_indices

    frames, configs = [], []
    for folder in stores:
        df, cfg, store_vocab = _store_frame(folder)
        if store_vocab != vocab or cfg.get("vocab") != _vocab_hash(vocab):
            raise ValueError(f"forced-choice store {folder} was not run on this {len(vocab)}-word vocabulary")
        frames.append(df)
        configs.append({k: v for k, v in cfg.items() if k != "cues"})
    if any(c != configs[0] for c in configs[1:]):
        raise ValueError("the forced-choice stores were run with different configurations")
    fc = pd.concat(frames, ignore_index=True).sort_values("trial").reset_index(drop=True)
    design = fc_trial_indices(len(vocab), configs[0]["n_candidates"], configs[0]["shuffles"], trials_per_cue)
    if not np.array_equal(fc.trial.to_numpy(), design):
        raise ValueError(f"the forced-choice stores hold {len(fc)} trials, not the design's {len(design)} "
                         "(a store unfinished, or overlapping cue ranges)")  # fmt: skip
    return fc


def merge_fa_v5(stores: list, vocab: list[str], runs: int):
    """Free-association runs over ``vocab`` from stores run on a prefix of it (the judged 1,060-word store) or on
    all of it restricted to a cue range: run ids are ``cue * runs + r`` in both, the old words come first, so the
    rows concatenate; every run's stored text is re-parsed against the whole vocabulary's index
    (:func:`~icml26.behaviorgeo.lm.parse_associates`, then :func:`~icml26.behaviorgeo.lm.content_word`: the
    judged store's rules), since a word new to the vocabulary may now be in it. Returns the rows by run."""
    import pandas as pd

    from icml26.behaviorgeo.lm import content_word, parse_associates

    frames, configs = [], []
    for folder in stores:
        df, cfg, store_vocab = _store_frame(folder)
        if store_vocab != vocab[: len(store_vocab)]:
            raise ValueError(f"free-association store {folder}'s vocabulary is not a prefix of this one")
        if cfg["runs"] != runs:
            raise ValueError(f"free-association store {folder} has {cfg['runs']} runs per cue, not {runs}")
        frames.append(df)
        configs.append({k: v for k, v in cfg.items() if k not in ("cues", "vocab", "n_words")})
    if any(c != configs[0] for c in configs[1:]):
        raise ValueError("the free-association stores were sampled with different configurations")
    fa = pd.concat(frames, ignore_index=True).sort_values("run").reset_index(drop=True)
    if not np.array_equal(fa.run.to_numpy(), np.arange(len(vocab) * runs)):
        raise ValueError(f"the free-association stores hold {len(fa)} runs, not {len(vocab)} x {runs}")
    if not (fa.cue.to_numpy() == np.repeat(vocab, runs)).all():
        raise ValueError("a free-association run's cue is not the one its run id names")
    index = {w: i for i, w in enumerate(vocab)}
    parsed = [parse_associates(t, index, configs[0]["n_assoc"]) for t in fa.text]
    return fa.assign(status=[p[2] for p in parsed],
                     associates=["|".join(content_word(w, index) for w in p[0]) for p in parsed])  # fmt: skip


def merge_hidden_v5(parts: list[np.ndarray]) -> np.ndarray:
    """Raw hidden states of consecutive word blocks (each (L+1, n_i, d), per word, so extraction order does not
    matter) stacked into (L+1, sum n_i, d); the similarity is computed (and centred) over the whole vocabulary."""
    if len({(p.shape[0], p.shape[2]) for p in parts}) != 1:
        raise ValueError(f"hidden-state blocks of different layers or widths: {[p.shape for p in parts]}")
    return np.concatenate(parts, axis=1)


def experiment_from_stores(vocab: list[str], fc, fa, hidden: dict[str, np.ndarray], runs: int, trials_per_cue: int,
                           n_candidates: int = 16, baselines: bool = True) -> dict:  # fmt: skip
    """The claims' geometries from merged rows (:func:`merge_fc_v5`, :func:`merge_fa_v5`) and stacked raw hidden
    states: FC PPMI geometry, FA's even runs (``S_fa_a``) and odd runs (``S_fa_b``, the A/A twin), the hidden
    similarities per layer, GloVe and MiniLM (``baselines``). The same keys as :func:`load_experiment`."""
    from icml26.behaviorgeo.data import glove_vectors, minilm_vectors
    from icml26.behaviorgeo.lm import trial_counts
    from icml26.behaviorgeo.runner import fc_trial_indices
    from icml26.behaviorgeo.subject import fc_trials

    index = {w: i for i, w in enumerate(vocab)}
    cues_all, cands_all = fc_trials(len(vocab), n_candidates, 1, 0)
    design = fc_trial_indices(len(vocab), n_candidates, 1, trials_per_cue)
    cues, cands = cues_all[design], cands_all[design]  # (T,), (T, 16)
    shown = ["|".join(vocab[c] for c in row) for row in cands]
    if list(fc.cue) != [vocab[c] for c in cues] or list(fc.candidates) != shown:
        raise ValueError("a forced-choice row's cue or candidates are not the design's")
    picks = np.column_stack([[index[p] for p in fc.pick1], [index[p] for p in fc.pick2]])  # (T, 2)
    B_fc, st_fc = trial_counts(fc, vocab, "fc")
    out = {"vocab": vocab, "cues": cues, "cands": cands, "picks": picks, "S_fc": row_cosine(ppmi(B_fc)),
           "answered_fc": np.asarray(B_fc.sum(1)).ravel() > 0, "stats_fc": st_fc,
           "hidden": {s: [hidden_similarity(h) for h in H] for s, H in hidden.items()}}  # fmt: skip
    for name, half in (("fa_a", 0), ("fa_b", 1)):
        B, st = trial_counts(fa[(fa.run % runs) % 2 == half], vocab, "fa", open_responses=True)
        out[f"S_{name}"], out[f"stats_{name}"] = row_cosine(ppmi(B)), st
        out[f"answered_{name}"] = np.asarray(B.sum(1)).ravel() > 0
    if baselines:
        glove, out["glove_missing"] = glove_vectors(vocab)
        out["S_glove"], out["S_minilm"] = row_cosine(glove), hidden_similarity(minilm_vectors(vocab))
    return out


def v5_stores(model_name: str = "smollm2") -> dict:
    """The user-cache stores the 2,110-noun experiment merges: FC of the old and of the new cues under the
    2,110-word design, the judged tuned FA store of the 1,060 words and FA of the new cues, and the hidden
    states of both word blocks."""
    from icml26.behaviorgeo.data import nouns
    from icml26.behaviorgeo.runner import _vocab_hash

    st = extension_stores(model_name)
    n_old = st["cues"][0]
    old, new = nouns(), read_extension()
    return {**st, "fc_stores": [st["fc_old"], st["fc"]],
            "fa_stores": [st["runs"] / f"fa-fast-{model_name}-{n_old}w-bf16-r16-t0.7-p0.9", st["fa"]],
            "hidden_files": {s: [st["runs"] / f"hidden-{model_name}-{_vocab_hash(v)}-{s}.npy" for v in (old, new)]
                             for s in STRATEGIES_V2}}  # fmt: skip


V5_TRIALS_PER_CUE, V5_RUNS = 4, 16  # the judged stores' design: 4 calibrated FC trials, 16 FA runs per cue


@functools.lru_cache(maxsize=1)
def load_experiment_v5(model_name: str = "smollm2", strategies: tuple[str, ...] = ("task-fc",)) -> dict:
    """SmolLM2 on the 2,110 nouns, merged from the finished stores of :func:`v5_stores` (nothing is run here:
    a missing store is an error naming it). Hidden similarities only for ``strategies`` (each is 31 layers of
    2,110 x 2,110 float64, 1.1 GB)."""
    from icml26.behaviorgeo.data import extended_nouns

    st = v5_stores(model_name)
    vocab = extended_nouns()
    fc = merge_fc_v5(st["fc_stores"], vocab, V5_TRIALS_PER_CUE)
    fa = merge_fa_v5(st["fa_stores"], vocab, V5_RUNS)
    hidden = {}
    for s in strategies:
        for f in st["hidden_files"][s]:
            if not f.is_file():
                raise FileNotFoundError(f"hidden states {f} missing (behaviorgeo_v5_collect.py --stage hidden)")
        hidden[s] = merge_hidden_v5([np.load(f) for f in st["hidden_files"][s]])
    if any(H.shape[1] != len(vocab) for H in hidden.values()):
        raise ValueError("the stacked hidden states do not cover the vocabulary")
    return experiment_from_stores(vocab, fc, fa, hidden, V5_RUNS, V5_TRIALS_PER_CUE)


@functools.lru_cache(maxsize=1)
def tiny_experiment_v5(n_old: int = 32, n_new: int = 32, runs: int = 8, seed: int = 0) -> dict:
    """The smoke path of lm-fc-beats-fa-v5: the same collection and merge as :func:`load_experiment_v5` on the
    tiny random test model (:func:`~icml26.behaviorgeo.lm.tiny_lm`) over the first ``n_old`` shipped nouns and the
    first ``n_new`` new ones, in a temporary folder: FC of both cue ranges under the whole design, FA of the old
    words on their own vocabulary (re-parsed against the whole one) and of the new cues, hidden states per
    block, stacked. Its answers are noise; it checks the pipeline, not SmolLM2."""
    import tempfile

    import torch

    from icml26.behaviorgeo.data import nouns
    from icml26.behaviorgeo.lm import tiny_lm
    from icml26.behaviorgeo.runner import cached_hidden_states, run_fa_fast, run_fc_fast

    torch.set_num_threads(1)
    old, new = nouns()[:n_old], read_extension()[:n_new]
    vocab = old + new
    model, tok = tiny_lm(vocab, seed)
    V = len(vocab)
    with tempfile.TemporaryDirectory(prefix="behaviorgeo-v5-smoke-") as tmp:
        root = Path(tmp)
        fc_stores = [root / f"fc-cues{a}-{b}" for a, b in ((0, n_old), (n_old, V))]
        for folder, rng in zip(fc_stores, ((0, n_old), (n_old, V)), strict=True):
            run_fc_fast(model, tok, vocab, folder, model_name="tiny", trials_per_cue=V5_TRIALS_PER_CUE, batch=16,
                        calibrate=True, cues=rng)  # fmt: skip
        fa_stores = [root / "fa-old", root / "fa-new"]
        run_fa_fast(model, tok, old, fa_stores[0], model_name="tiny", runs=runs, batch=64, max_new_tokens=12,
                    temperature=0.7, top_p=0.9, seed=seed)  # fmt: skip
        run_fa_fast(model, tok, vocab, fa_stores[1], model_name="tiny", runs=runs, batch=64, max_new_tokens=12,
                    temperature=0.7, top_p=0.9, seed=seed, cues=(n_old, V))  # fmt: skip
        fc = merge_fc_v5(fc_stores, vocab, V5_TRIALS_PER_CUE)
        fa = merge_fa_v5(fa_stores, vocab, runs)
        H = merge_hidden_v5([cached_hidden_states(model, tok, words, "task-fc", root, "tiny") for words in (old, new)])
    return experiment_from_stores(vocab, fc, fa, {"task-fc": H}, runs, V5_TRIALS_PER_CUE, baselines=False)
