"""The FLIP2 headline claims, executable on the FLIP v1 GB1 landscape and synthetic Potts landscapes.

Each claim has a negative control (``control=True``) under which the same measurement must say ``fails``.
"""

from __future__ import annotations

import functools

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.flip2.config import preset
from icml26.flip2.data import load_flip_gb1, make_synthetic
from icml26.flip2.harness import ModelFactory, evaluate
from icml26.flip2.metrics import spearman
from icml26.flip2.models import CNN, OneHotRidge
from icml26.flip2.splits import FLIP_GB1_RECIPES, by_n_mutations, by_position, from_assignment, random_split


def _factory(cfg, land, seed):
    return ModelFactory(
        land.msa,
        seed=seed,
        cnn_epochs=10_000,
        tf_epochs=10_000,
        pretrain_steps=cfg.pretrain_steps,
        max_steps=cfg.tf_steps,
        tf_lrs=cfg.tf_lrs,  # learning rate chosen on validation, like ridge's alpha
    )


def _land(cfg, seed):
    return make_synthetic(L=cfg.L, n_wild_types=cfg.n_wild_types, n_per_wt=cfg.n_per_wt, n_msa=cfg.n_msa, seed=seed)


@claim(
    "flip2/reproduces-flip-gb1-v1",
    statement="split builders applied to the GB1 variant table (sequence, fitness, wild type) reproduce FLIP's "
    "published one/two/three_vs_rest and low_vs_high train/test assignments exactly, and one-hot ridge "
    "trained on them ranks three_vs_rest test variants with Spearman > 0.5",
    paper="FLIP2 reuses FLIP v1 protocols (Sec. 1); FLIP v1 GB1 tasks (Dallago et al. 2021)",
    control="mutation counts taken relative to a wrong wild type (the first single mutant): the builders "
    "then disagree with the published assignments",
    judge=(Interval("split assignment mismatches", below=0.5), Interval("ridge Spearman three_vs_rest", above=0.5)),
)
def reproduces_flip_gb1(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = preset(scale)
    t = load_flip_gb1()
    if control:  # sabotage: the reference sequence is a single mutant, not the wild type
        ref = t.sequences[np.flatnonzero(t.n_mutations() == 1)[0]]
        t = type(t)(t.name, t.sequences, t.targets, {"GB1": str(ref)}, t.wt_of, t.provenance, t.licence, t.published)
    measured, mismatches = {}, 0
    for name, make in FLIP_GB1_RECIPES.items():
        ours = make(t, val_fraction=0.1, val_seed=seed).assignment(len(t))
        pub = t.published[name]
        bad = int(np.sum(np.where(ours == "val", "train", ours) != np.where(pub == "val", "train", pub)))
        mismatches += bad
        split = from_assignment(name, np.where(ours == "val", "train", ours))
        split = type(split)(name, *_val(split, seed))
        measured[f"ridge Spearman {name}"] = evaluate(t, split, OneHotRidge())["spearman"]
        if cfg.gb1_cnn:
            measured[f"cnn Spearman {name}"] = evaluate(
                t, split, CNN(seed=seed, epochs=10_000, max_steps=cfg.cnn_steps)
            )["spearman"]
    measured["split assignment mismatches"] = float(mismatches)
    ok = mismatches < 0.5 and measured["ridge Spearman three_vs_rest"] > 0.5
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        reason=f"{mismatches} variants assigned differently from FLIP's files",
    )


def _val(split, seed, frac=0.1):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(split.train)
    k = round(frac * len(perm))
    return np.sort(perm[k:]), np.sort(perm[:k]), split.test


_COMPETITIVE_SPLITS = ("one_to_many", "two_to_many", "by_position")


@claim(
    "flip2/simple-models-competitive-v1",
    statement="on number-of-mutation (one/two_to_many) and position (by_position) splits of synthetic Potts "
    "landscapes, the average of ridge and zsRidge matches or beats a transformer pretrained by masked LM on the "
    "family and fine-tuned: mean Spearman difference > 0 (95 % interval over seeds)",
    paper="abstract: 'simpler models often matched or outperformed fine-tuned protein language models'",
    control="ridge and zsRidge fitted on shuffled training targets (the simple models get no signal)",
    judge=Interval("simple - fine-tuned Spearman", above=0.0),
    by_construction="the synthetic Potts landscape is mostly additive, so one-hot ridge is nearly the generating "
    "model class (on one_to_many every deep model stays <= 0.24 against ridge 0.51), and zsRidge's PSSM comes from "
    "an MSA sampled from the same Potts model; the 2-layer, 32-wide 'fine-tuned pLM' is also weaker than the "
    "unpretrained CNN (by_position 0.56 vs 0.71, small, seed 0): the margin reflects the generator and the "
    "model's size, not the paper's question about large pretrained pLMs",
)
def simple_models_competitive(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = preset(scale)
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    splits = {
        "one_to_many": by_n_mutations(t, 1),
        "two_to_many": by_n_mutations(t, 2),
        "by_position": by_position(t, seed=seed),
    }
    measured, diffs = {}, []
    for name, sp in splits.items():
        ts = t
        if control:  # sabotage: the simple models see training/validation targets shuffled among themselves
            ts = t.subset(np.arange(len(t)))
            side = np.concatenate([sp.train, sp.val])
            ts.targets[side] = np.random.default_rng(seed + 7).permutation(t.targets[side])
        simple = []
        for m in ("ridge", "zsridge"):
            model = f(m).fit(ts, sp.train, sp.val)
            rho = spearman(t.targets[sp.test], model.predict(t, sp.test))
            measured[f"{m} {name}"] = rho
            simple.append(rho)
        # the deep models never see the sabotaged targets, so the control reuses their (deterministic) numbers
        key = (str(scale), seed, name)
        if key not in _DEEP_CACHE:
            deep = {f"transformer-pretrained {name}": evaluate(t, sp, f("transformer-pretrained"))["spearman"]}
            deep[f"transformer untrained {name} (reported)"] = _untrained_spearman(t, sp, seed)
            if scale is not Scale.SMOKE:  # reported: does the MLM pretraining help over random init? the CNN?
                deep[f"transformer-naive {name} (reported)"] = evaluate(t, sp, f("transformer-naive"))["spearman"]
                deep[f"cnn {name} (reported)"] = evaluate(t, sp, f("cnn"))["spearman"]
            _DEEP_CACHE[key] = deep
        measured.update(_DEEP_CACHE[key])
        tf = measured[f"transformer-pretrained {name}"]
        diffs.append(float(np.mean(simple)) - tf)
    d = float(np.mean(diffs))
    measured["simple - fine-tuned Spearman"] = d
    return ClaimResult(
        "holds" if d > 0 else "fails",
        measured=measured,
        reason="the fine-tuned model is a 2-layer transformer pretrained on a 300-3000 sequence MSA, "
        "not CARP-640M/ESMC-300M",
    )


_DEEP_CACHE: dict = {}


def _untrained_spearman(t, sp, seed):
    """Test Spearman of a randomly initialised transformer with no training at all (a floor: ~0)."""
    import torch

    from icml26.flip2.models import TinyTransformer, encode

    m = TinyTransformer(seed=seed)
    net = m._build(t.length).eval()
    with torch.no_grad():
        pred = net(torch.as_tensor(encode(t.sequences[sp.test]))).numpy()
    return spearman(t.targets[sp.test], pred)


@claim(
    "flip2/zero-shot-helps-out-of-distribution-v1",
    statement="adding the zero-shot (MSA PSSM) score to one-hot ridge raises test Spearman on the by_position "
    "split and on a low-N (50 training variants) random split of synthetic Potts landscapes: mean gain "
    "> 0.01 (95 % interval over seeds)",
    paper="abstract and Sec. models: zsRidge among the simple models matching fine-tuned pLMs",
    control="the PSSM built from the MSA of an unrelated Potts family (same length and depth): a structured "
    "prior that carries no information about this landscape",
    judge=Interval("zsRidge - ridge Spearman (OOD mean)", above=0.01),
)
def zero_shot_helps_ood(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = preset(scale)
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    low = random_split(t, 0.3, seed=seed)
    low = type(low)(
        "low_n", np.random.default_rng(seed).choice(low.train, size=cfg.low_n, replace=False), low.val[:20], low.test
    )
    splits = {"by_position": by_position(t, seed=seed), "low_n": low}
    measured, gains = {}, []
    for name, sp in splits.items():
        r = evaluate(t, sp, f("ridge"))["spearman"]
        zs = f("zsridge")
        if control:  # sabotage: the evolutionary prior comes from another family
            zs.scorers = [_foreign_scorer(cfg, seed)]
        z = evaluate(t, sp, zs)["spearman"]
        measured[f"ridge {name}"], measured[f"zsridge {name}"] = r, z
        gains.append(z - r)
    g = float(np.mean(gains))
    measured["zsRidge - ridge Spearman (OOD mean)"] = g
    figures = {}
    if scale is not Scale.SMOKE:  # reported, not judged: learning curves, and GB1 where the prior is BLOSUM62
        figures["learning_curve"] = _learning_curves(t, f, seed, control, measured, cfg)
        gb1 = load_flip_gb1()
        for name in ("one_vs_rest", "two_vs_rest", "low_vs_high"):
            sp = from_assignment(name, gb1.published[name])
            gf = ModelFactory(None, seed=seed)
            d = evaluate(gb1, sp, gf("zsridge"))["spearman"] - evaluate(gb1, sp, gf("ridge"))["spearman"]
            measured[f"GB1 {name}: zsRidge(BLOSUM62) - ridge (reported)"] = d
    return ClaimResult("holds" if g > 0.01 else "fails", measured=measured, figures=figures)


def _learning_curves(t, f, seed, control, measured, cfg):
    """Ridge and zsRidge Spearman vs training size on random splits (10 replicates, min 50): a figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from icml26.flip2.harness import learning_curve

    def zs():
        m = f("zsridge")
        if control:
            m.scorers = [_foreign_scorer(cfg, seed)]
        return m

    sizes = (50, 100, 200, 400, 800)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for name, make in (("ridge", lambda: f("ridge")), ("zsridge", zs)):
        lc = learning_curve(t, sizes=sizes, replicates=10, seed=seed, make=make)
        g = lc.groupby("n_train")["spearman"]
        ax.errorbar(g.mean().index, g.mean(), yerr=g.std(), label=name, capsize=3)
        for n, v in g.mean().items():
            measured[f"learning curve {name} n={n} (reported)"] = v
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("training variants")
    ax.set_ylabel("test Spearman")
    ax.legend()
    return fig


@functools.lru_cache(maxsize=8)
def _foreign_msa(cfg, seed):
    return _land(cfg, seed + 10_007).msa


def _foreign_scorer(cfg, seed):
    """A PSSM zero-shot scorer from the MSA of an unrelated synthetic family (the zero-shot control)."""
    from icml26.flip2.models import ZeroShot

    return ZeroShot("pssm", _foreign_msa(cfg, seed))


_HARD_SPLITS = (
    "random",
    "one_to_many",
    "two_to_many",
    "three_to_many",
    "by_position",
    "close_to_far",
    "far_to_close",
    "by_mutation",
    "by_wt",
)


@claim(
    "flip2/low-to-high-hardest-v1",
    statement="on synthetic Potts landscapes, (a) training only below the median fitness (low_to_high) lowers the "
    "model-averaged Spearman on held-out above-median variants compared with training on an equally large "
    "random sample that includes the other above-median variants (extrapolation penalty > 0), and (b) "
    "low_to_high (train below the median, test above; the synthetic tables hold no wild-type measurement) has "
    "the lowest model-averaged test Spearman of the FLIP2 split families (random, one/two/three_to_many, "
    "by_position, close_to_far, far_to_close, by_mutation, by_wt); both > 0 (95 % interval over seeds). "
    "Synthetic data only: on real data the fitness split ranks 2nd of 5 (GB1), 3rd of 7 (Abeta42, TDP-43)",
    paper="FLIP v1 / FLIP2 split design: extrapolation to higher fitness (low_vs_high, low_to_high)",
    control="no extrapolation: the low_to_high training set is replaced by an equally large random sample that "
    "also holds above-median variants; the test set stays above-median only (same range restriction)",
    judge=(
        Interval("extrapolation penalty (same test set)", above=0.0),
        Interval("next-hardest - low_to_high Spearman", above=0.0),
    ),
)
def low_to_high_hardest(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.flip2.splits import VAL_FRACTION, VAL_SEED, _finish, by_distance, by_mutation, by_wild_type

    cfg = preset(scale)
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    splits = {
        "random": random_split(t, seed=seed),
        "one_to_many": by_n_mutations(t, 1),
        "two_to_many": by_n_mutations(t, 2),
        "three_to_many": by_n_mutations(t, 3),
        "by_position": by_position(t, seed=seed),
        "by_mutation": by_mutation(t, seed=seed),
        "close_to_far": by_distance(t, land.site_distance, close_to_far=True),
        "far_to_close": by_distance(t, land.site_distance, close_to_far=False),
        "by_wt": by_wild_type(t, sorted(t.wild_types)[-1]),
    }
    # no wild type in the synthetic table: the threshold is the median. Half of the above-median variants are
    # the test set; "extrapolating" trains on every below-median variant, "interpolating" on an equally large
    # random sample of all the other variants (so it sees high fitness). Same test set, same training size.
    rng = np.random.default_rng(seed + 1)
    thr = float(np.median(t.targets))
    lo = t.targets < thr
    test = np.zeros(len(t), bool)
    test[rng.choice(np.flatnonzero(~lo), size=int(np.sum(~lo)) // 2, replace=False)] = True
    interp = np.zeros(len(t), bool)
    interp[rng.choice(np.flatnonzero(~test), size=int(lo.sum()), replace=False)] = True
    kw = dict(val_fraction=VAL_FRACTION, val_seed=VAL_SEED)
    extrap_sp, interp_sp = _finish("extrapolate", lo, test, **kw), _finish("interpolate", interp, test, **kw)
    if control:  # sabotage: no extrapolation; the test side is untouched
        extrap_sp = interp_sp
        splits["low_to_high"] = _finish("low_to_high", interp, test, **kw)
    else:
        splits["low_to_high"] = _finish("low_to_high", lo, ~lo, **kw)

    def mean_rho(sp):
        return float(np.mean([evaluate(t, sp, f(m))["spearman"] for m in cfg.hard_models]))

    measured = {f"mean Spearman {name}": mean_rho(sp) for name, sp in splits.items()}
    r_int = measured["mean Spearman interpolate (same test set)"] = mean_rho(interp_sp)
    r_ext = measured["mean Spearman extrapolate (same test set)"] = (
        r_int if extrap_sp is interp_sp else mean_rho(extrap_sp)
    )
    penalty = r_int - r_ext
    measured["extrapolation penalty (same test set)"] = penalty
    others = min(measured[f"mean Spearman {s}"] for s in _HARD_SPLITS)
    gap = others - measured["mean Spearman low_to_high"]
    measured["next-hardest - low_to_high Spearman"] = gap
    figures = {}
    if scale is not Scale.SMOKE:  # reported, not judged: the real-data leaderboards (ridge, zsRidge)
        figures["real_leaderboards"] = _real_leaderboards(seed, measured)
    ok = penalty > 0 and gap > 0
    return ClaimResult("holds" if ok else "fails", measured=measured, figures=figures)


def _real_leaderboards(seed, measured):
    """GB1 (FLIP splits) and mavenn scans (our splits): rank of the fitness split among each dataset's splits."""
    import pandas as pd

    from icml26.flip2.data import load_mavenn, mavenn_available
    from icml26.flip2.harness import plot_leaderboard, run_leaderboard
    from icml26.flip2.splits import standard_splits

    gb1 = load_flip_gb1()
    tables = [(gb1, {s: from_assignment(s, gb1.published[s]) for s in gb1.published}, "low_vs_high")]
    if mavenn_available():
        for name in ("abeta42", "tdp43", "gb1_double"):
            tm = load_mavenn(name, max_variants=10_000, seed=0)
            tables.append((tm, standard_splits(tm, seed=seed), "low_to_high"))
    frames = []
    for tm, splits, fitness_split in tables:
        df = run_leaderboard(tm, splits, ["ridge", "zsridge"], ModelFactory(None, seed=seed))
        frames.append(df)
        mean = df.groupby("split")["spearman"].mean()
        measured[f"{tm.name}: {fitness_split} rank among {len(mean)} splits, 1 = hardest (reported)"] = float(
            (mean < mean[fitness_split]).sum() + 1
        )
        for split, v in mean.items():
            measured[f"{tm.name} {split} mean Spearman (reported)"] = float(v)
    return plot_leaderboard(pd.concat(frames, ignore_index=True))


CLAIMS = [reproduces_flip_gb1, simple_models_competitive, zero_shot_helps_ood, low_to_high_hardest]
