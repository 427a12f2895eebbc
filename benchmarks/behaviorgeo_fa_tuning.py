"""Free association's sampling and parsing, tuned on behaviour alone: the FC side was re-engineered three times
(cue last, summed log-probabilities, calibration), so FA gets a small budget too.

    python benchmarks/behaviorgeo_fa_tuning.py [--out benchmarks/results/behaviorgeo_fa_tuning.json]
        [--cues 100] [--runs 3]

SmolLM2-135M-Instruct in bfloat16 (as the judged stores), ``runner.run_fa_fast`` on ``--cues`` cues drawn from
the 1,060 nouns on their own stream (2026), ``--runs`` runs each, for temperature 1 / 0.7 crossed with the full
softmax / nucleus top-p 0.9. Each run is parsed two ways: as the claims do (``lm.parse_associates``: the whole
item, plural -> singular) and by content word (a multi-word item counted as its last word when that is a
vocabulary noun: "kitchen table" -> "table"). Scored without any hidden state (so the tuning cannot fit the
judged RSA): associates per run that are vocabulary words (what FA's PPMI geometry counts; the criterion, fixed
before the run), runs with at least one, distinct vocabulary associates per cue (diversity), and the mean GloVe
cosine of cue and vocabulary associate (task following; random vocabulary pairs give the chance level).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from icml26._util.io import write_json
from icml26.behaviorgeo.lm import content_word


def score(df, vocab: list[str], S_glove: np.ndarray, content: bool) -> dict[str, float]:
    index = {w: i for i, w in enumerate(vocab)}
    per_run, sims, distinct = [], [], {}
    for cue, status, assoc in zip(df["cue"], df["status"], df["associates"], strict=True):
        items = assoc.split("|") if status == "ok" and assoc else []
        if content:
            items = [content_word(w, index) for w in items]
        hits = [index[w] for w in items if w in index and w != cue]
        per_run.append(len(hits))
        sims += [S_glove[index[cue], h] for h in hits]
        distinct.setdefault(cue, set()).update(hits)
    per_run = np.asarray(per_run)
    return {
        "vocabulary associates per run": float(per_run.mean()),
        "runs with >= 1 vocabulary associate": float((per_run > 0).mean()),
        "distinct vocabulary associates per cue": float(np.mean([len(v) for v in distinct.values()])),
        "GloVe cosine cue-associate": float(np.mean(sims)) if sims else float("nan"),
        "unparsable runs": float((df["status"] != "ok").mean()),
    }


def main() -> None:
    from icml26.behaviorgeo.data import glove_vectors, vocabulary
    from icml26.behaviorgeo.geometry import row_cosine
    from icml26.behaviorgeo.lm import DTYPES, load_lm, parse_associates
    from icml26.behaviorgeo.lmexp import fa_tuning_cues
    from icml26.behaviorgeo.runner import run_fa_fast

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="benchmarks/results/behaviorgeo_fa_tuning.json")
    ap.add_argument("--cues", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    vocab = vocabulary(1060)
    model, tok = load_lm("smollm2", dtype=DTYPES["bfloat16"])
    S_glove = row_cosine(glove_vectors(vocab)[0])
    cues = fa_tuning_cues(len(vocab), args.cues)  # the claims keep these cues out of their evaluation words
    sub = [vocab[i] for i in cues]
    iu = np.triu_indices(len(vocab), k=1)
    rows = []
    for temperature in (1.0, 0.7):
        for top_p in (1.0, 0.9):
            t0 = time.perf_counter()
            # run_fa_fast samples every word of its vocabulary list: pass the cues, parse against all nouns
            df = run_fa_fast(model, tok, sub, runs=args.runs, batch=64, seed=11, max_new_tokens=16,
                             temperature=temperature, top_p=top_p)  # fmt: skip
            seconds = time.perf_counter() - t0
            index = {w: i for i, w in enumerate(vocab)}
            parsed = [parse_associates(t, index, 5) for t in df["text"]]
            df = df.assign(status=[p[2] for p in parsed], associates=["|".join(p[0]) for p in parsed])
            for content in (False, True):
                parsing = "content word" if content else "whole item (claims)"
                row = {"temperature": temperature, "top_p": top_p, "parsing": parsing, "runs": len(df),
                       "seconds": seconds, **score(df, vocab, S_glove, content)}  # fmt: skip
                rows.append(row)
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    best = max(rows, key=lambda r: r["vocabulary associates per run"])
    write_json(args.out, {"cues": args.cues, "runs per cue": args.runs, "rows": rows,
                          "GloVe cosine of random vocabulary pairs (chance)": float(S_glove[iu].mean()),
                          "best by vocabulary associates per run": {k: best[k] for k in ("temperature", "top_p",
                                                                                           "parsing")},
                          "torch threads": torch.get_num_threads()})  # fmt: skip
    print("best:", best)


if __name__ == "__main__":
    main()
