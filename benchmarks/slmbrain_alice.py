"""slmbrain on real fMRI: SmolLM2-135M, its untrained twin and its calibration-free compressions vs the Alice listeners.

    OMP_NUM_THREADS=1 python benchmarks/slmbrain_alice.py [--out benchmarks/results/slmbrain_alice.json]
        [--figure src/icml26/slmbrain/figures/alice_smollm2_compression.png]

Data: Brennan et al. (2016), 28 listeners of *Alice* chapter 1, 362 volumes x 6 language ROIs (10 mm), with each
listener's word-rate, sound-power and motion regressors removed on the training TRs. Pipeline: word states (last
token of each word, 128-token windows) -> Lanczos at the volume times -> FIR delays 1-4 TRs -> kernel ridge (alpha
per listener and ROI from inner contiguous blocks) -> 5 contiguous outer blocks with a 5-TR gap; r within each
held-out block, averaged. Every model gets the same pipeline and the same six candidate layers (0, 6, 12, 18, 24,
30), one chosen per outer fold on its training part.

Reported per model: held-out r (mean over listeners and ROIs) with its 95 % t-interval over listeners, r per ROI,
r over the leave-one-subject-out noise ceiling per ROI, the layers chosen, and the held-out LM loss on the book's
chapters II-XII (2048 tokens). The layer profile: r of each candidate layer alone. The permutation null: 19
circular shifts of the trained model's modal layer. Compressions (blocks only, embeddings and LM head kept):
RTN at 4 and 3 bits, magnitude pruning at 30 and 50 % (GPTQ and Wanda need one calibration forward pass per
layer: 210 passes of SmolLM2, beyond this benchmark's CPU budget).
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch
from scipy import stats

from icml26.slmbrain import alice as A
from icml26.slmbrain.compress import compress_model
from icml26.slmbrain.lm import hf_word_states

torch.set_num_threads(1)
LAYERS = [0, 6, 12, 18, 24, 30]


def interval(x: np.ndarray) -> tuple[float, float, float]:
    half = stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / np.sqrt(len(x))
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def book_loss(model, tok, n_tokens: int = 2048, ctx: int = 256) -> float:
    """Mean next-token cross-entropy [nats] on the first ``n_tokens`` of chapters II-XII, 256-token windows."""
    import gzip

    with gzip.open(A.BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
        ids = torch.as_tensor(tok(fh.read()[:20000])["input_ids"][:n_tokens])
    total, count = 0.0, 0
    with torch.no_grad():
        for k in range(0, len(ids) - 1, ctx):
            x = ids[None, k : k + ctx + 1]
            logits = model(input_ids=x[:, :-1]).logits
            total += float(torch.nn.functional.cross_entropy(logits[0], x[0, 1:], reduction="sum"))
            count += x.shape[1] - 1
    return total / count


def score(model, tok, story, nc) -> dict:
    t = time.perf_counter()
    states = hf_word_states(model, tok, story.words, ctx=128)[LAYERS]
    F = A.tr_features(states, story)
    feats = {f"hidden_{i}": F[k] for k, i in enumerate(LAYERS)}
    enc = A.encode_story(feats, story)
    mean, lo, hi = interval(enc.subject_r)
    return {
        "r": mean,
        "r_lo": lo,
        "r_hi": hi,
        "r_roi": enc.r.mean(0).tolist(),
        "r_over_ceiling_roi": (enc.r.mean(0) / nc.mean(0)).tolist(),
        "layers_chosen": enc.layers,
        "lm_loss": book_loss(model, tok),
        "subject_r": enc.subject_r.tolist(),
        "seconds": time.perf_counter() - t,
        "_feats": feats,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/slmbrain_alice.json"))
    ap.add_argument("--compressions", default="RTN 4-bit,RTN 3-bit,magnitude 30 %,magnitude 50 %",
                    help="comma-separated subset of the four compressions")  # fmt: skip
    ap.add_argument("--shifts", type=int, default=19, help="circular shifts of the permutation null")
    ap.add_argument("--figure", type=Path, default=Path("src/icml26/slmbrain/figures/alice_smollm2_compression.png"))
    args = ap.parse_args()
    story = A.load_alice()
    nc = A.noise_ceiling(story)
    rows = {}
    model, tok = A.load_smollm2(True)
    rows["SmolLM2-135M"] = score(model, tok, story, nc)
    feats = rows["SmolLM2-135M"].pop("_feats")
    profile = {}
    for name, F in feats.items():
        r = A.encode_story(F, story).subject_r
        profile[name] = dict(zip(("r", "r_lo", "r_hi"), interval(r), strict=True))
    chosen = rows["SmolLM2-135M"]["layers_chosen"]
    modal = A.modal_layer(chosen)
    null = A.shift_null({modal: feats[modal]}, story, args.shifts, 0)
    r_modal = profile[modal]["r"]
    permutation = {"layer": modal, "r": r_modal, "null_mean": float(null.mean()), "null_max": float(null.max()),
                   "p": float((1 + np.sum(null >= r_modal)) / (1 + len(null)))}  # fmt: skip
    wanted = [c.strip() for c in args.compressions.split(",") if c.strip()]
    for label, method, kw in (
        ("RTN 4-bit", "rtn", {"bits": 4}),
        ("RTN 3-bit", "rtn", {"bits": 3}),
        ("magnitude 30 %", "magnitude", {"sparsity": 0.3}),
        ("magnitude 50 %", "magnitude", {"sparsity": 0.5}),
    ):
        if label not in wanted:
            continue
        m = copy.deepcopy(model)
        compress_model(m, method, **kw)
        rows[label] = score(m, tok, story, nc)
        rows[label].pop("_feats")
        diff = np.array(rows[label]["subject_r"]) - np.array(rows["SmolLM2-135M"]["subject_r"])
        rows[label]["dr"], rows[label]["dr_lo"], rows[label]["dr_hi"] = interval(diff)
        print(label, {k: rows[label][k] for k in ("r", "dr", "dr_lo", "dr_hi", "lm_loss")}, flush=True)
        del m
    untrained, _ = A.load_smollm2(False, 0)
    rows["SmolLM2 untrained"] = score(untrained, tok, story, nc)
    rows["SmolLM2 untrained"].pop("_feats")
    result = {
        "platform": platform.platform(),
        "noise_ceiling_roi": nc.mean(0).tolist(),
        "rois": list(story.rois),
        "models": rows,
        "layer_profile": profile,
        "permutation": permutation,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    figure(rows, args.figure)
    print(json.dumps({k: {q: v[q] for q in ("r", "r_lo", "r_hi", "lm_loss")} for k, v in rows.items()}, indent=1))
    print("profile", json.dumps(profile), "\npermutation", permutation)


def figure(rows: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = rows["SmolLM2-135M"]
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for label, marker in (("RTN", "o"), ("magnitude", "s")):
        keys = [k for k in rows if k.startswith(label)]
        x = [0.0] + [100 * (rows[k]["lm_loss"] / base["lm_loss"] - 1) for k in keys]
        y = [base["r"]] + [rows[k]["r"] for k in keys]
        err = [(base["r_hi"] - base["r_lo"]) / 2] + [(rows[k]["dr_hi"] - rows[k]["dr_lo"]) / 2 for k in keys]
        ax.errorbar(x, y, yerr=err, marker=marker, capsize=2, label=f"{label} ({', '.join(keys)})")
    ax.axhline(rows["SmolLM2 untrained"]["r"], color="k", ls=":", label="untrained SmolLM2")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=-0.3)
    ax.set_xlabel("LM-loss increase on chapters II-XII [%]")
    ax.set_ylabel("held-out r (mean of 6 ROIs, 28 listeners)")
    ax.set_title("Alice fMRI: SmolLM2-135M predictivity vs compression damage", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
