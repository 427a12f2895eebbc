"""Why the curvature geometry is inert (issue 42, item 1): how far from the origin MoCE's points sit, where the
learned |K| go, and how much |K| moves the held-out predictions, under the library's curvature recipe and the
paper's.

    python benchmarks/eegmoce_geometry.py [--seed 0] [--out benchmarks/results/eegmoce_geometry.json]

The shipped EEGMAT subset (per-subject z-scoring), GroupKFold(4) over subjects (``--seed``; 0 is the tuning seed,
not the claims' judged stream), MoCE at the claims' ``small`` budget (lr 1e-3 x 16 epochs, batches of 4 subjects
x 8 windows). Recipes (``--recipes``):

- ``library``: |K| = 1 at init, curvature lr 100x, 1 warm-up epoch at 0.01x (what the claims run);
- ``paper-init``: the paper's init k = 0.5, i.e. |K| = 1/k = 2, with the library's schedule;
- ``paper-init-warmup``: |K| = 2 and the paper's 5 warm-up epochs at 0.01x;
- ``paper-init-slow``: |K| = 2, 5 warm-up epochs, curvature lr 10x (the old library default).

Per fold, MoCE and an independent replicate (other initialisations and minibatches) are trained. Read on the
held-out subjects:

- the **dimensionless radius** theta = sqrt|K| d(o, x) of each modality's points (median over windows) after the
  domain BN (``expmap0`` of the BN's tangent vector), at the expert's output token, and after each fusion layer.
  A Lorentz space of any |K| is Euclidean to first order at theta << 1: sinh(theta)/theta - 1 is 4 % at 0.5,
  18 % at 1, 81 % at 2;
- |K| per expert after each epoch (mean over folds);
- the fraction of held-out predictions that change, and the mean |change| of p(arithmetic), when the geometry
  (experts, projection, temperatures; the fusion prior held at the learned |K|) uses every |K| = 1, every |K| =
  its initial value, the replicate's |K| (the A/A reference), or the learned |K| rotated across experts. The
  claims' probe ``curvature-geometry`` is (every |K| = 1) - (replicate's |K|), live above 0.05.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.eegmoce import lorentz as L
from icml26.eegmoce.eegmat import load_eegmat
from icml26.eegmoce.model import ModelConfig, TrainConfig, build_model, folds, predict, train

torch.set_num_threads(1)

#: (|K| at init, curvature lr scale, warm-up epochs)
RECIPES = {
    "library": (1.0, 100.0, 1),
    "paper-init": (2.0, 100.0, 1),
    "paper-init-warmup": (2.0, 100.0, 5),
    "paper-init-slow": (2.0, 10.0, 5),
}


def _theta(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """Dimensionless radius sqrt(c) d(o, x) of each point x (..., d+1) in H_c, flattened."""
    return (c.sqrt() * L.logmap0(x, c).norm(dim=-1)).reshape(-1)


@torch.no_grad()
def read_model(model, d, geometry: torch.Tensor | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """p(class 1) of each held-out window and the median theta after the domain BN, at each expert's token and
    after each fusion layer, read from ``model.predict``'s own forward passes (forward hooks on the model and its
    layers, so nothing here re-implements the model). ``geometry`` optionally replaces the |K| of the geometry
    (``MoCE.geometry_override``; the prior keeps the learned |K|)."""
    thetas: dict[str, list[torch.Tensor]] = {}
    logits: list[torch.Tensor] = []

    def keep(name, c_of):  # c_of(inputs) -> the curvature the module's output lives in
        return lambda mod, inputs, out: thetas.setdefault(name, []).append(_theta(out, c_of(inputs)))

    hooks = [model.register_forward_hook(lambda mod, inputs, out: logits.append(out))]
    for m, expert in model.experts.items():  # both are called as (x, domains, c)
        hooks.append(expert.bn.register_forward_hook(keep(f"{m} after BN", lambda a: a[2])))
        hooks.append(expert.register_forward_hook(keep(f"{m} token", lambda a: a[2])))
    for j, layer in enumerate(model.layers):  # called as (x, c, cf, ...)
        hooks.append(layer.register_forward_hook(keep(f"fusion layer {j + 1}", lambda a: a[2])))
    model.geometry_override = geometry
    try:
        pred, _ = predict(model, d)  # one batch per subject, in the order of np.unique(d.subject)
    finally:
        model.geometry_override = None
        for h in hooks:
            h.remove()
    p = np.empty(d.n)
    for s, out in zip(np.unique(d.subject), logits, strict=True):
        p[d.subject == s] = torch.softmax(out, -1)[:, 1].numpy()
    assert np.array_equal(pred, (p > 0.5).astype(pred.dtype)), "hooked logits disagree with predict"
    return p, {k: float(torch.cat(v).median()) for k, v in thetas.items()}


def run_recipe(d, splits, init: float, scale: float, warmup: int, seed: int) -> dict:
    tcfg = TrainConfig(
        epochs=16, lr=1e-3, curvature_lr_scale=scale, warmup_epochs=warmup, domains_per_batch=4, trials_per_domain=8
    )
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    changed = {k: [] for k in ("every |K| = 1", "every |K| = init", "replicate's |K| (A/A)", "rotated |K|")}
    dp = {k: [] for k in changed}
    traj, final, rad, correct = [], [], [], []
    for f, (tr, te) in enumerate(splits):
        models = []
        for rep in (0, 1):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed * 1000 + f + 100_000 * rep)
                model = build_model("moce", shapes, d.fs, d.n_classes, ModelConfig(curvature_init=init)).double()
                per_epoch = []
                train(
                    model,
                    d.subset(tr),
                    tcfg,
                    seed * 1000 + f + 100_000 * rep,
                    on_epoch=lambda e, m, per_epoch=per_epoch: per_epoch.append(m.curvatures.detach().tolist()),
                )
            models.append(model)
            if rep == 0:
                traj.append(per_epoch)
        model, partner = models
        test, k = d.subset(te), model.curvatures.detach()
        p, theta = read_model(model, test)
        correct.append(float(np.mean((p > 0.5) == test.y)))
        for name, geometry in zip(
            changed,
            (torch.ones_like(k), torch.full_like(k, init), partner.curvatures.detach().clone(), k.roll(1)),
            strict=True,
        ):
            q, _ = read_model(model, test, geometry)
            changed[name].append(float(np.mean((q > 0.5) != (p > 0.5))))
            dp[name].append(float(np.mean(np.abs(q - p))))
        final.append(k.tolist())
        rad.append(theta)
    probe = np.mean(changed["every |K| = 1"]) - np.mean(changed["replicate's |K| (A/A)"])
    return {
        "init |K|": init,
        "curvature lr scale": scale,
        "warm-up epochs": warmup,
        "|K| per fold (eeg, ecg, hrv)": final,
        "|K| after epochs 1, 2, 4, 8, 16 (mean over folds)": [
            np.mean([t[e - 1] for t in traj], axis=0).round(3).tolist() for e in (1, 2, 4, 8, 16)
        ],
        "theta (median, mean over folds)": {k: float(np.mean([r[k] for r in rad])) for k in rad[0]},
        "changed predictions": {k: float(np.mean(v)) for k, v in changed.items()},
        "mean |change of p(arithmetic)|": {k: float(np.mean(v)) for k, v in dp.items()},
        "probe curvature-geometry": float(probe),
        "accuracy (held-out, mean over folds)": float(np.mean(correct)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--recipes", nargs="*", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "eegmoce_geometry.json"))
    a = ap.parse_args()
    d, _ = load_eegmat()
    splits = folds(d, "kfold", 4, a.seed)
    out = {"seed": a.seed, "modalities": d.names, "recipes": {}}
    for name in a.recipes:
        t0 = time.perf_counter()
        out["recipes"][name] = run_recipe(d, splits, *RECIPES[name], a.seed)
        out["recipes"][name]["seconds"] = time.perf_counter() - t0
        print(name, json.dumps(out["recipes"][name]), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
