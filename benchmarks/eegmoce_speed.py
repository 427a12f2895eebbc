"""EEG-MoCE cost and accuracy beside the Euclidean baselines, float64 vs float32, vectorised vs looped attention.

    python benchmarks/eegmoce_speed.py [--out benchmarks/results/eegmoce_speed.json]

One thread. Data: ``simulate(8, 32, seed=0)`` (256 trials; EEG 8 x 128 at 128 Hz, audio 16 x 32, video 12 x 32).
Per-epoch training time on 6 subjects (192 trials, batches of 4 subjects x 12 trials) and inference latency for one
held-out subject's 32 trials in one batch; cross-subject balanced accuracy on one GroupKFold split (2 held-out subjects)
after 12 epochs. Attention: one curvature-aware layer, batch 50, d = 16, 2 heads, M = 3 and M = 8 modality
tokens, vectorised vs the per-query-modality/per-head loop of the reference code. The EEGNet + late-fusion peer is
our own EEGNet-style encoder + late fusion (braindecode is not a dependency).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26._util.timing import best_time
from icml26.eegmoce import lorentz as L
from icml26.eegmoce.data import simulate
from icml26.eegmoce.model import (
    CurvatureAwareAttention,
    ModelConfig,
    TrainConfig,
    build_model,
    folds,
    predict,
    to_tensors,
    train,
)

torch.set_num_threads(1)


def attention_times(M: int) -> tuple[float, float]:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        att = CurvatureAwareAttention(ModelConfig(), prior=True).double()
    c = torch.linspace(0.5, 2.0, M, dtype=torch.float64)
    g = torch.Generator().manual_seed(1)
    x = L.expmap0(torch.randn(50, M, 16, dtype=torch.float64, generator=g), c.mean())
    with torch.no_grad():
        vec = best_time(lambda: att(x, c, c.mean(), vectorised=True), 20)
        loop = best_time(lambda: att(x, c, c.mean(), vectorised=False), 5)
    return vec, loop


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/results/eegmoce_speed.json")
    args = ap.parse_args()
    from importlib.util import find_spec

    peer = "EEGNet + late fusion is our own EEGNet-style encoder (braindecode is " + (
        "installed but not used)" if find_spec("braindecode") else "not installed)"
    )
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # the first Adam imports torch._dynamo (~1.5 s)
    d = simulate(8, 32, seed=0)
    tr, te = folds(d, "kfold", 4, 0)[0]
    dtr, dte = d.subset(tr), d.subset(te)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    one = dte.subset(np.flatnonzero(dte.subject == dte.subject[0])[:50])
    rows = []
    for arm, dtype in (
        ("moce", torch.float64),
        ("moce", torch.float32),
        ("late-fusion", torch.float64),
        ("euclid-xattn", torch.float64),
        ("eeg-only", torch.float64),
    ):
        from sklearn.metrics import balanced_accuracy_score

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = build_model(arm, shapes, d.fs, d.n_classes, ModelConfig()).to(dtype)
            t = time.perf_counter()
            train(model, dtr, TrainConfig(epochs=12), 0, dtype)
            epoch_s = (time.perf_counter() - t) / 12
            pred, _ = predict(model, dte, dtype)
            X, dom = to_tensors(one, model.names, dtype), torch.as_tensor(one.subject)
            model.eval()
            with torch.no_grad():
                infer = best_time(lambda m=model, X=X, dom=dom: m(X, dom), 10)
        rows.append(
            {
                "arm": arm,
                "dtype": str(dtype).replace("torch.", ""),
                "params": sum(p.numel() for p in model.parameters()),
                "epoch_s": epoch_s,
                "inference_ms_batch": 1e3 * infer,
                "batch": one.n,
                "balanced_accuracy": float(balanced_accuracy_score(dte.y, pred)),
            }
        )
        r = rows[-1]
        print(
            f"{arm:13s} {r['dtype']:8s} params {r['params']:6d}  epoch {r['epoch_s']:.3f} s  "
            f"inference {r['inference_ms_batch']:.1f} ms/{r['batch']} trials  BA {r['balanced_accuracy']:.3f}"
        )
    att = {}
    for M in (3, 8):
        vec, loop = attention_times(M)
        att[M] = {"vectorised_ms": 1e3 * vec, "loop_ms": 1e3 * loop, "speedup": loop / vec}
        print(f"attention M={M}: vectorised {1e3 * vec:.2f} ms, loop {1e3 * loop:.2f} ms, x{loop / vec:.1f}")
    out = {"rows": rows, "attention": att, "peer": peer, "torch": torch.__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(peer)


if __name__ == "__main__":
    main()
