"""Power of lm-fc-beats-fa: would more forced-choice trials (or free-association runs) per word let a plant at
1.5 x the bar clear the bar? Estimated before collecting anything, on the stores the claims already read.

    python benchmarks/behaviorgeo_power.py [--out benchmarks/results/behaviorgeo_power.json] [--seeds 5]

The rule, written down before the estimate ran: collect ``k`` FC trials per word only if, at ``k``, the plant
of the v4 measurement at 1.5 x the 0.02 bar (held-out FC - FA = 0.03 targeted on the selection words) has an
expected bootstrap lower end above the bar, i.e. its paired bootstrap s.e. over evaluation words is below
(0.03 - 0.02) / 1.96 = 0.0051 -- and the seeds' 95 % t-interval of that lower end (the claim's judge) clears
it too.

Four parts, all on v4's word splits (stream ``seed + 2000``; the 100 FA-tuning cues never evaluated):

1. the model's FC from the first 1, 2 and all 4 trials per word of its store: held-out RSA with the task-FC
   hidden states, its bootstrap s.e. over evaluation words, and the paired s.e. of FC - FA;
2. FA from 2, 4 and 8 runs per word of the judged half (and 16 = both halves pooled, for the trend only):
   the same numbers against the model's 4-trial FC;
3. the positive plant (a Luce subject answering the trial design from the model's half-depth task-FC
   geometry, decisiveness set on the selection words so plant - FA = 0.03 there) on designs of 4, 8, 16 and 32
   trials per word -- the plant needs no model run, so trial counts never collected can be measured; its own
   stream ``seed + 4000`` (``seed + 3000`` is left fresh for a future claim);
4. the same plant (4 trials) judged on random quarters and halves of the evaluation words: how the s.e. falls
   with the number of words;
5. cross-fitting, the planned v5 measurement (added after 1-4, before any v5 data): each seed's split judged
   both ways -- fold 1 selects the layers on the selection half and evaluates the evaluation half (v4), fold 2
   swaps the roles, the FA-tuning cues staying on the selection side in both folds (never evaluated) -- and the
   two folds' held-out FC - FA averaged; its paired bootstrap resamples each fold's evaluation words
   independently. Measured for the 4-trial plant and the model's FC on the 1,060 words, then predicted for the
   2,110-word vocabulary by part 4's log-log slope (evaluation words doubled).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from icml26._util.io import write_json

BAR = 0.02
PLANT = 1.5 * BAR
T975 = {3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 8: 2.365, 10: 2.262}  # t quantiles for n - 1 = key - 1 dof


def _seed_interval(x: list[float]) -> tuple[float, float, float]:
    x = np.asarray(x, dtype=float)
    half = T975.get(len(x), 1.96) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else 0.0
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def main() -> None:
    from icml26.behaviorgeo import claims as C
    from icml26.behaviorgeo.config import PRESETS
    from icml26.behaviorgeo.geometry import ppmi, row_cosine
    from icml26.behaviorgeo.lm import TrialStore, cache_dir, content_word, trial_counts
    from icml26.behaviorgeo.lmexp import PairSet, behaviour_similarity, bootstrap_counts, bootstrap_profiles
    from icml26.behaviorgeo.runner import fc_trial_indices
    from icml26.behaviorgeo.subject import fc_trials
    from icml26.claims import Scale

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="benchmarks/results/behaviorgeo_power.json")
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cfg = PRESETS["small"]
    lm = C._lm(Scale.SMALL)  # the judged stores (SmolLM2, 1,060 nouns)
    vocab, H, S_fa = lm["vocab"], lm["hidden"]["task-fc"], lm["S_fa_a"]
    V = len(vocab)
    seeds = range(args.seeds)
    splits = {s: C._lm_split(lm, s) for s in seeds}
    pairs = {s: (PairSet(splits[s][0], H), PairSet(splits[s][1], H)) for s in seeds}

    def rsa_boot(S, layer, words, C_):  # (B,) RSA at one layer over resampled words
        return bootstrap_profiles(S, [H[layer]], words, C_)[:, 0]

    def compare(S, S_ref, seed, words=None):
        """Held-out RSA of S and S_ref, their bootstrap s.e. and that of S - S_ref (same resamples)."""
        sel, ev = pairs[seed]
        ev_w = splits[seed][1] if words is None else words
        if words is not None:
            ev = PairSet(words, H)
        r, layer = C._held_out_peak(S, sel, ev)
        r_ref, layer_ref = C._held_out_peak(S_ref, sel, ev)
        Cb = bootstrap_counts(len(ev_w), cfg.lm_boot, [seed + 4000, 13])
        a, b = rsa_boot(S, layer, ev_w, Cb), rsa_boot(S_ref, layer_ref, ev_w, Cb)
        d = a - b
        return {"rsa": r, "rsa_ref": r_ref, "diff": r - r_ref, "se": float(a.std(ddof=1)),
                "se_ref": float(b.std(ddof=1)), "se_diff": float(d.std(ddof=1)),
                "low": float(np.quantile(d, 0.025))}  # fmt: skip

    def summary(rows: list[dict]) -> dict:
        out = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
        out["low: mean, seed 95% interval"] = _seed_interval([r["low"] for r in rows])
        return out

    n_ev_words = int(np.mean([len(splits[s][1]) for s in seeds]))
    report: dict = {"bar": BAR, "plant": PLANT, "required paired s.e.": (PLANT - BAR) / 1.96,
                    "evaluation words": n_ev_words, "seeds": args.seeds}  # fmt: skip

    # 1. the model's FC from fewer trials per word (the store is sorted by trial: 4 per cue, in design order)
    within = np.arange(len(lm["cues"])) % cfg.lm_fc_per_cue
    report["model FC by trials per word (vs FA 8 runs)"] = {}
    for k in (1, 2, cfg.lm_fc_per_cue):
        m = within < k
        S_k = behaviour_similarity(lm["cues"][m], lm["picks"][m], V)
        report["model FC by trials per word (vs FA 8 runs)"][k] = summary([compare(S_k, S_fa, s) for s in seeds])
        print("FC", k, report["model FC by trials per word (vs FA 8 runs)"][k], flush=True)

    # 2. FA from fewer runs per word (content-word parsing, as judged); 16 pools the A/A half: trend only
    store = cache_dir() / "runs" / (f"fa-fast-{cfg.lm_model}-{V}w-bf16-r{cfg.lm_fa_runs}"
                                    f"-t{cfg.lm_fa_temperature:g}-p{cfg.lm_fa_top_p:g}")  # fmt: skip
    fa = TrialStore(store, json.loads((store / "config.json").read_text())).read()
    index = {w: i for i, w in enumerate(vocab)}
    fa = fa.assign(associates=["|".join(content_word(w, index) for w in a.split("|")) if a else a
                               for a in fa.associates])  # fmt: skip
    report["model FA by runs per word (FC 4 trials - FA)"] = {}
    for n in (2, 4, 8, 16):
        runs = list(range(16)) if n == 16 else list(range(0, 2 * n, 2))  # the judged half = even runs
        B, _ = trial_counts(fa[(fa.run % cfg.lm_fa_runs).isin(runs)], vocab, "fa", open_responses=True)
        S_n = row_cosine(ppmi(B))
        report["model FA by runs per word (FC 4 trials - FA)"][n] = summary(
            [compare(lm["S_fc"], S_n, s) for s in seeds]
        )
        print("FA", n, report["model FA by runs per word (FC 4 trials - FA)"][n], flush=True)

    # 3. the plant at 1.5 x the bar on trial designs never collected
    cues_all, cands_all = fc_trials(V, 16, 1, 0)
    report["plant at 1.5 x bar by FC trials per word"] = {}
    plants4 = {}
    for k in (4, 8, 16, 32):
        design = fc_trial_indices(V, 16, 1, k)
        lk = dict(lm, cues=cues_all[design], cands=cands_all[design])
        rows = []
        for s in seeds:
            sel = pairs[s][0]
            r_fa_sel = float(sel.profile(S_fa).max())

            def score(S, sel=sel, r=r_fa_sel):  # plant - FA on the selection words
                return float(sel.profile(S).max()) - r

            S_p, beta = C._planted_fc(lk, H[len(H) // 2], s, score, PLANT, stream=4000)
            if k == 4:
                plants4[s] = S_p
            rows.append({**compare(S_p, S_fa, s), "beta": beta})
        report["plant at 1.5 x bar by FC trials per word"][k] = summary(rows)
        print("plant", k, report["plant at 1.5 x bar by FC trials per word"][k], flush=True)
    ks = np.array(sorted(report["plant at 1.5 x bar by FC trials per word"]), dtype=float)
    se2 = np.array([report["plant at 1.5 x bar by FC trials per word"][int(k)]["se_diff"] ** 2 for k in ks])
    b, a = np.polyfit(1.0 / ks, se2, 1)  # se^2(k) = a + b / k
    report["fit se_diff^2 = a + b / k"] = {
        "a": float(a),
        "b": float(b),
        "se_diff at infinitely many trials": float(np.sqrt(max(a, 0.0))),
    }

    # 4. the 4-trial plant on fewer evaluation words: does the s.e. fall as 1 / sqrt(words)?
    report["plant (4 trials) by evaluation words"] = {}
    for frac in (0.25, 0.5, 1.0):
        rows = []
        for s in seeds:
            ev_w = splits[s][1]
            sub = np.sort(np.random.default_rng([s + 4000, 7]).choice(ev_w, int(frac * len(ev_w)), replace=False))
            rows.append(compare(plants4[s], S_fa, s, words=sub))
        report["plant (4 trials) by evaluation words"][int(frac * report["evaluation words"])] = summary(rows)
        print("words", frac, report["plant (4 trials) by evaluation words"], flush=True)
    n_ev = np.array(sorted(report["plant (4 trials) by evaluation words"]), dtype=float)
    se_w = np.array([report["plant (4 trials) by evaluation words"][int(n)]["se_diff"] for n in n_ev])
    slope = float(np.polyfit(np.log(n_ev), np.log(se_w), 1)[0])
    need = report["required paired s.e."]
    report["words scaling"] = {
        "log-log slope of se_diff on evaluation words": slope,
        "evaluation words for se_diff < required": float(n_ev[-1] * (se_w[-1] / need) ** (-1 / slope)),
    }

    # 5. cross-fitting: both folds, roles swapped, averaged
    from icml26.behaviorgeo.lmexp import fa_tuning_cues

    tuned = fa_tuning_cues(V)

    def crossfit(S, seed):
        sel_w, ev_w = splits[seed]
        folds = [(pairs[seed][0], pairs[seed][1], ev_w)]
        ev2 = sel_w[~np.isin(sel_w, tuned)]  # the selection half's untuned words, evaluated in fold 2
        sel2 = np.union1d(ev_w, sel_w[np.isin(sel_w, tuned)])
        folds.append((PairSet(sel2, H), PairSet(ev2, H), ev2))
        diffs, boots = [], []
        for f, (sel, ev, words) in enumerate(folds):
            r, layer = C._held_out_peak(S, sel, ev)
            r_ref, layer_ref = C._held_out_peak(S_fa, sel, ev)
            Cb = bootstrap_counts(len(words), cfg.lm_boot, [seed + 4000, 17, f])
            diffs.append(r - r_ref)
            boots.append(rsa_boot(S, layer, words, Cb) - rsa_boot(S_fa, layer_ref, words, Cb))
        d = 0.5 * (boots[0] + boots[1])
        return {"diff": float(np.mean(diffs)), "fold 1 diff": diffs[0], "fold 2 diff": diffs[1],
                "evaluation words": float(len(ev_w) + len(folds[1][2])), "se_diff": float(d.std(ddof=1)),
                "fold 1 se_diff": float(boots[0].std(ddof=1)), "fold 2 se_diff": float(boots[1].std(ddof=1)),
                "low": float(np.quantile(d, 0.025))}  # fmt: skip

    report["cross-fitting (both folds averaged)"] = {
        "plant (4 trials)": summary([crossfit(plants4[s], s) for s in seeds]),
        "model FC (4 trials)": summary([crossfit(lm["S_fc"], s) for s in seeds]),
    }
    se_cf = report["cross-fitting (both folds averaged)"]["plant (4 trials)"]["se_diff"]
    report["cross-fitting (both folds averaged)"]["predicted plant se_diff on 2,110 words (words x 2)"] = float(
        se_cf * 2.0**slope
    )
    print("cross-fitting", json.dumps(report["cross-fitting (both folds averaged)"], indent=1), flush=True)
    report["seconds"] = time.perf_counter() - t0
    write_json(args.out, report)
    print(json.dumps({k: report[k] for k in ("fit se_diff^2 = a + b / k", "words scaling")}, indent=1))


if __name__ == "__main__":
    main()
