"""The benchmark runner: every model on every split -> a leaderboard (CSV + Markdown + plot), learning curves."""

from __future__ import annotations

import copy
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from icml26._util.io import atomic_output, check_output_path
from icml26.flip2 import models as M
from icml26.flip2.data import VariantTable
from icml26.flip2.metrics import bootstrap_ci, ndcg, scaled_mse, spearman
from icml26.flip2.splits import Split, random_split

logger = logging.getLogger(__name__)


class ModelFactory:
    """Builds fresh models by name for one dataset (holds its MSA and a once-pretrained transformer)."""

    def __init__(
        self,
        msa=None,
        *,
        seed=0,
        cnn_epochs=40,
        tf_epochs=30,
        pretrain_steps=300,
        max_steps=None,
        device="cpu",
        channels=64,
        tf_lrs=None,
    ):
        self.msa, self.seed, self.device = msa, seed, device
        self.cnn_epochs, self.tf_epochs, self.pretrain_steps, self.max_steps = (
            cnn_epochs,
            tf_epochs,
            pretrain_steps,
            max_steps,
        )
        self.channels = channels
        self.tf_lrs = tf_lrs  # transformer learning rates tried on validation (None: its fixed default)
        self._pretrained = None

    def zero_shot(self):
        return M.ZeroShot("pssm", self.msa) if self.msa is not None else M.ZeroShot("blosum62")

    def available(self, name: str) -> bool:
        return not (name == "transformer-pretrained" and self.msa is None)

    def __call__(self, name: str):
        if name == "ridge":
            return M.OneHotRidge()
        if name == "zsridge":
            return M.ZSRidge([self.zero_shot()])
        if name == "zero-shot":
            return self.zero_shot()
        if name == "levenshtein":
            return M.ZeroShot("levenshtein")
        if name == "blosum62":
            return M.ZeroShot("blosum62")
        if name == "pssm-train":
            return M.ZeroShot("pssm-train")
        if name == "zsridge-blosum62":  # zsRidge with a real-source prior only: no family MSA, no model sample
            return M.ZSRidge([M.ZeroShot("blosum62")])
        if name == "zsridge-pssm-train":
            return M.ZSRidge([M.ZeroShot("pssm-train")])
        if name == "zsridge-real":  # both real-source priors: BLOSUM62 and the training-split PSSM
            return M.ZSRidge([M.ZeroShot("blosum62"), M.ZeroShot("pssm-train")])
        if name == "cnn":
            return M.CNN(
                channels=self.channels,
                epochs=self.cnn_epochs,
                seed=self.seed,
                device=self.device,
                max_steps=self.max_steps,
            )
        if name in ("transformer-pretrained", "transformer-naive"):
            kw = dict(
                epochs=self.tf_epochs, seed=self.seed, device=self.device, max_steps=self.max_steps, lrs=self.tf_lrs
            )
            if name == "transformer-naive":
                return M.TinyTransformer(**kw)
            if self.msa is None:
                raise ValueError("transformer-pretrained needs a family MSA to pretrain on (none for this dataset)")
            if self._pretrained is None:
                self._pretrained = M.TinyTransformer(**kw).pretrain(self.msa, steps=self.pretrain_steps)
            return copy.deepcopy(self._pretrained)
        raise ValueError(f"unknown model {name!r}; known: {', '.join(M.MODEL_NAMES)}")


def evaluate(t: VariantTable, split: Split, model, *, n_boot: int = 0, seed: int = 0) -> dict:
    """Fit ``model`` on the split's train (+val for model selection), score its test side."""
    t0 = time.perf_counter()
    model.fit(t, split.train, split.val)
    fit_s = time.perf_counter() - t0
    y = t.targets[split.test]
    pred = model.predict(t, split.test)
    row = {
        "split": split.name,
        "model": getattr(model, "name", type(model).__name__),
        "n_train": len(split.train),
        "n_test": len(split.test),
        "spearman": spearman(y, pred),
        "ndcg": ndcg(y, pred),
        "fit_s": fit_s,
    }
    if hasattr(model, "predict_scaled"):  # supervised: MSE on the target scaled with training statistics
        row["mse_scaled"] = scaled_mse((y - model.mu_) / model.sd_, model.predict_scaled(t, split.test))
    else:
        row["mse_scaled"] = float("nan")
    if n_boot:
        row["ci_low"], row["ci_high"] = bootstrap_ci(y, pred, n_boot=n_boot, seed=seed)
    return row


def run_leaderboard(
    t: VariantTable,
    splits: dict[str, Split],
    model_names,
    factory: ModelFactory,
    *,
    n_boot: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Every model on every split of ``t`` -> one row per (split, model)."""
    rows = []
    skipped = [m for m in model_names if not factory.available(m)]
    jobs = [(s, m) for s in splits for m in model_names if factory.available(m)]
    if not jobs:
        raise ValueError(
            f"no requested model can run on {t.name}: {', '.join(skipped) or 'no models or splits given'} "
            "needs a family MSA to pretrain on (only synthetic landscapes have one)"
        )
    if skipped:
        logger.warning("%s: skipping %s (needs a family MSA to pretrain on; none for this dataset)", t.name, skipped)
    it = jobs
    if progress:
        from icml26._util.progress import progress

        it = progress(jobs, desc=f"{t.name} leaderboard", unit="fit")
    for s, m in it:
        model = factory(m)
        row = evaluate(t, splits[s], model, n_boot=n_boot, seed=factory.seed)
        row["model"] = m
        rows.append({"dataset": t.name, **row})
    return pd.DataFrame(rows)


def learning_curve(
    t: VariantTable, sizes=(50, 100, 200, 400), replicates: int = 10, seed: int = 0, make=M.OneHotRidge
) -> pd.DataFrame:
    """Ridge (by default) Spearman on random splits at several training sizes (min 50, as the paper)."""
    sizes = [int(s) for s in sizes]
    if min(sizes) < 50:
        raise ValueError("training sizes must be >= 50 (the paper's minimum)")
    rows = []
    for r in range(replicates):
        split = random_split(t, 0.2, seed=seed + r)
        rng = np.random.default_rng(seed + 1000 + r)
        for n in sizes:
            if n > len(split.train):
                continue
            tr = rng.choice(split.train, size=n, replace=False)
            m = make().fit(t, tr, split.val)
            rows.append(
                {"n_train": n, "replicate": r, "spearman": spearman(t.targets[split.test], m.predict(t, split.test))}
            )
    return pd.DataFrame(rows)


def to_markdown(df: pd.DataFrame, metric: str = "spearman") -> str:
    """A split x model table of ``metric`` (3 decimals), models as columns."""
    piv = df.pivot_table(index=["dataset", "split"], columns="model", values=metric, sort=False)
    cols = list(piv.columns)
    lines = ["| dataset | split | " + " | ".join(cols) + " |", "|---|---|" + "---:|" * len(cols)]
    for (d, s), r in piv.iterrows():
        lines.append(f"| {d} | {s} | " + " | ".join("" if pd.isna(v) else f"{v:.3f}" for v in r.to_numpy()) + " |")
    return "\n".join(lines) + "\n"


def write_leaderboard(df: pd.DataFrame, out_csv) -> dict[str, Path]:
    """Write ``out_csv`` and, beside it with the same stem, the ``.md`` table and ``.png`` plot (atomically)."""
    out_csv = check_output_path(out_csv, suffixes=(".csv",))
    paths = {k: check_output_path(out_csv.with_suffix(f".{k}")) for k in ("csv", "md", "png")}
    with atomic_output(paths["csv"]) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_output(paths["md"]) as tmp:
        tmp.write_text("Spearman\n\n" + to_markdown(df) + "\nNDCG\n\n" + to_markdown(df, "ndcg"))
    fig = plot_leaderboard(df)
    import matplotlib.pyplot as plt

    with atomic_output(paths["png"]) as tmp, open(tmp, "wb") as fh:
        fig.savefig(fh, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return paths


def plot_leaderboard(df: pd.DataFrame):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [f"{d}/{s}" for d, s in df[["dataset", "split"]].drop_duplicates().itertuples(index=False)]
    models = list(dict.fromkeys(df["model"]))
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(keys) * max(1, len(models)) / 3), 3.5))
    w = 0.8 / max(1, len(models))
    for j, m in enumerate(models):
        sub = df[df["model"] == m].set_index(df[df["model"] == m]["dataset"] + "/" + df[df["model"] == m]["split"])
        vals = [sub["spearman"].get(k, np.nan) for k in keys]
        ax.bar(np.arange(len(keys)) + j * w, vals, w, label=m)
    ax.set_xticks(np.arange(len(keys)) + 0.4 - w / 2, keys, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("Spearman")
    ax.axhline(0, color="k", lw=0.5)
    ax.legend(fontsize=7, ncol=2)
    return fig
