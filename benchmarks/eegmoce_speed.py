"""EEG-MoCE cost and accuracy beside its peers (braindecode EEGNetv4 and ShallowFBCSPNet, our EEGNet, Euclidean
fusion), float64 vs float32, vectorised vs looped attention, on real EEG + ECG (EEGMAT).

    python benchmarks/eegmoce_speed.py [--out benchmarks/results/eegmoce_speed.json]

One thread. Data: the shipped EEGMAT subset (``load_eegmat()``: 12 subjects x 30 windows of 4 s; EEG 19 x 256 at
64 Hz, ECG 1 x 256, HRV 2 x 16; rest vs mental arithmetic). Per-epoch training time on the 9 training subjects of
fold 0 of GroupKFold(4, seed 0) (270 windows, batches of 4 subjects x 8 windows) and inference latency for one
held-out subject's 30 windows in one batch; leave-subjects-out balanced accuracy on that fold's 3 held-out subjects
after 8 epochs (one fold: a cost table, not an accuracy claim; the claims table has the intervals). Every arm is
trained by the same loop, budget and batches (braindecode's nets included). Attention: one curvature-aware layer,
batch 50, d = 16, 2 heads, M = 3 and M = 8 modality tokens, vectorised vs the per-query-modality/per-head loop of
the reference code.
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
from icml26.eegmoce.eegmat import load_eegmat
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

    arms = ["moce", "moce", "late-fusion", "euclid-xattn", "eeg-only", "braindecode-eegnet", "braindecode-shallow"]
    if find_spec("braindecode") is None:
        arms, peer = arms[:5], "braindecode not installed: its rows are missing"
    else:
        import braindecode

        peer = f"braindecode {braindecode.__version__} (EEGNetv4, ShallowFBCSPNet), same training loop and budget"
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # the first Adam imports torch._dynamo (~1.5 s)
    d, _ = load_eegmat()
    tr, te = folds(d, "kfold", 4, 0)[0]
    dtr, dte = d.subset(tr), d.subset(te)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    one = dte.subset(np.flatnonzero(dte.subject == dte.subject[0])[:50])
    rows = []
    for arm, dtype in zip(arms, [torch.float64, torch.float32] + [torch.float64] * 5, strict=False):
        from sklearn.metrics import balanced_accuracy_score

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = build_model(arm, shapes, d.fs, d.n_classes, ModelConfig()).to(dtype)
            t = time.perf_counter()
            train(model, dtr, TrainConfig(epochs=8, curvature_lr_scale=100.0, trials_per_domain=8), 0, dtype)
            epoch_s = (time.perf_counter() - t) / 8
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
            f"{arm:19s} {r['dtype']:8s} params {r['params']:6d}  epoch {r['epoch_s']:.3f} s  "
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
