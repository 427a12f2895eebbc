"""Where lm-fc-beats-fa-v5's RSAs went (a diagnostic run after its verdict; nothing here is judged): the
in-sample peak RSA over task-FC layers of each geometry on the pairs among the old 1,060 nouns and among the
1,050 new ones, for the merged 2,110-word experiment, beside v4's 1,060-word experiment on the old words; and
the share of non-zero off-diagonal similarities of FC and FA in each block. Needs the cached SmolLM2 stores.

    python benchmarks/behaviorgeo_v5_blocks.py [--out benchmarks/results/behaviorgeo_v5_blocks.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from icml26.behaviorgeo import lmexp
from icml26.behaviorgeo.config import PRESETS


def peaks(lm: dict, words: np.ndarray) -> dict:
    """Peak RSA over task-FC layers (and the layer) of every behavioural and lexical geometry on ``words``."""
    ps = lmexp.PairSet(words, lm["hidden"]["task-fc"])
    out: dict = {"words": len(words)}
    for key in ("S_fc", "S_fa_a", "S_fa_b", "S_glove"):
        prof = ps.profile(lm[key])
        out[key] = {"peak": float(prof.max()), "layer": int(prof.argmax())}
    return out


def nonzero(S: np.ndarray, words: np.ndarray) -> float:
    block = S[np.ix_(words, words)]
    return float((block[~np.eye(len(words), dtype=bool)] != 0).mean())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/behaviorgeo_v5_blocks.json",
                        help="write the numbers here as JSON")
    args = parser.parse_args()
    t0 = time.perf_counter()
    v5 = lmexp.load_experiment_v5()
    keep = v5["answered_fc"] & v5["answered_fa_a"] & v5["answered_fa_b"]
    n_old = len(v5["vocab"]) - len(lmexp.read_extension())
    old, new = np.flatnonzero(keep[:n_old]), n_old + np.flatnonzero(keep[n_old:])
    report = {
        "2,110-word design, old words": peaks(v5, old),
        "2,110-word design, new words": peaks(v5, new),
        "2,110-word design, all words": peaks(v5, np.flatnonzero(keep)),
    }
    report["non-zero share, 2,110-word design"] = {
        k: {"old": nonzero(v5[k], old), "new": nonzero(v5[k], new)} for k in ("S_fc", "S_fa_a")
    }
    c = PRESETS["small"]  # v4's judged 1,060-word experiment, as the claims load it
    v4 = lmexp.load_experiment(c.lm_words, c.lm_fc_per_cue, c.lm_fa_runs, c.lm_fa_tokens, c.lm_model, c.lm_batch,
                               c.lm_dtype, c.lm_fa_temperature, c.lm_fa_top_p, c.lm_fa_content_words)  # fmt: skip
    keep4 = v4["answered_fc"] & v4["answered_fa_a"] & v4["answered_fa_b"]
    report["1,060-word design (v4), old words"] = peaks(v4, np.flatnonzero(keep4))
    report["non-zero share, 1,060-word design"] = {k: nonzero(v4[k], np.flatnonzero(keep4)) for k in ("S_fc", "S_fa_a")}
    report["seconds"] = time.perf_counter() - t0
    text = json.dumps(report, indent=1)
    print(text)
    with open(args.out, "w") as f:
        f.write(text + "\n")
