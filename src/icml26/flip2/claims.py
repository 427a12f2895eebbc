"""The FLIP2 headline claims, executable on the FLIP v1 GB1 landscape and synthetic Potts landscapes.

Contract v3: every claim runs in three arms that share the data, seeds, measurement and verdict code. The
negative arm (``arm=Arm.NEGATIVE``, alias ``control=True``) removes the effect (for the comparisons an A/A
run: the compared arm refitted on its own random stream, :func:`_resplit`); the positive arm
(``Arm.POSITIVE``) plants it at about the claimed size, by **handicapping** a model's predictions with
independent noise so that their Spearman drops by a known amount (:func:`handicap`), on the A/A pair where
there is one. ``MECHANISMS`` probes the components the paper credits (the zero-shot prior, masked-LM
pretraining against the naive transformer, the fitness shift of ``low_to_high`` against an A/A split);
``MEASURES`` checks test Spearman and the paired Spearman gain both ways.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.flip2.config import preset
from icml26.flip2.data import load_flip_gb1, make_synthetic
from icml26.flip2.harness import ModelFactory, evaluate
from icml26.flip2.metrics import spearman
from icml26.flip2.models import CNN, OneHotRidge, encode
from icml26.flip2.splits import FLIP_GB1_RECIPES, by_n_mutations, by_position, from_assignment, random_split

#: The effect a positive control plants, in Spearman units. The paper prints no effect size for its
#: comparisons ("often matched or outperformed"), so the planted gap is a modest one: a fifth of the spread
#: between our easiest (random, ~0.8) and hardest (low_to_high, ~0.45) splits.
PLANTED_GAP = 0.05
#: ``simple-models-competitive-v2`` (and the ``mlm-pretraining`` probe, whose 0.02 threshold was set after
#: seeing v1's seeds) run on the landscapes of seed + FRESH: fresh data, none of which v1 was judged on.
FRESH = 1000


def _v2_seed(scale: Scale, seed: int) -> int:
    """The landscape seed of ``simple-models-competitive-v2`` and the ``mlm-pretraining`` probe: fresh at the
    judged scales. ``smoke`` (the contract test's one draw, never judged) keeps v1's seeds: on smoke's fresh
    landscape of seed 0 the one-draw A/A control happens to hold (+0.009 against the bar 0; over the fresh
    smoke seeds 0-7 the A/A difference scatters from -0.028 to +0.022), which the contract test cannot tell
    from a control that cannot fail."""
    return seed if scale is Scale.SMOKE else seed + FRESH


def handicap(y: np.ndarray, pred: np.ndarray, drop: float, rng: np.random.Generator) -> np.ndarray:
    """``pred`` plus independent noise, so that its expected Spearman with ``y`` is ``drop`` lower.

    Under a Gaussian copula (normal scores of the predictions, ``z``) a Spearman ``s`` corresponds to a
    Pearson ``r = 2 sin(pi s / 6)`` (Kendall & Stuart), and ``z + sigma * eps`` has Pearson
    ``r / sqrt(1 + sigma^2)``; ``sigma`` is solved for the target ``s - drop``. Only a drop towards 0 can be
    planted by noise: a target at or below 0 gives pure noise, a non-positive drop returns ``z``.
    """
    from scipy.stats import norm, rankdata

    n = len(pred)
    z = norm.ppf((rankdata(pred) - 0.5) / n)  # (n,) normal scores: same ranks as pred
    s = spearman(y, pred)
    target = s - drop
    r, r_target = 2 * math.sin(math.pi * s / 6), 2 * math.sin(math.pi * target / 6)
    eps = rng.normal(size=n)
    if drop <= 0 or r <= 0:
        return z
    if r_target <= 0:
        return eps
    return z + math.sqrt((r / r_target) ** 2 - 1) * eps


def _predict(t, split, model) -> np.ndarray:
    """Fit ``model`` on the split's train (validation for model selection), predict its test side: (n_test,)."""
    model.fit(t, split.train, split.val)
    return np.asarray(model.predict(t, split.test), float)


def _resplit(split, rng: np.random.Generator):
    """The same split with its training side re-partitioned at random into train and validation (same sizes):
    an independently seeded refit of a model whose only randomness is its validation set (an A/A arm)."""
    side = rng.permutation(np.concatenate([split.train, split.val]))
    k = len(split.val)
    return type(split)(split.name, np.sort(side[k:]), np.sort(side[:k]), split.test)


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


@functools.lru_cache(maxsize=8)
def _land(cfg, seed):
    """The synthetic Potts landscape of a preset and seed (cached: claims and probes share it; read-only)."""
    return make_synthetic(L=cfg.L, n_wild_types=cfg.n_wild_types, n_per_wt=cfg.n_per_wt, n_msa=cfg.n_msa, seed=seed)


# --------------------------------------------------------------------------------------------- mechanisms


@functools.lru_cache(maxsize=8)
def _deep_scores(scale: Scale, seed: int) -> dict[str, float]:
    """Test Spearman of the deep models on the competitive splits of one landscape (cached: the three arms
    of ``simple-models-competitive`` and the ``mlm-pretraining`` probe share these fits, which never see the
    sabotaged or planted targets)."""
    cfg = preset(scale)
    land = _land(cfg, seed)
    t, f = land.table, _factory(cfg, land, seed)
    out = {}
    for name, sp in _competitive_splits(t, seed).items():
        out[f"transformer-pretrained {name}"] = evaluate(t, sp, f("transformer-pretrained"))["spearman"]
        out[f"transformer-naive {name} (reported)"] = evaluate(t, sp, f("transformer-naive"))["spearman"]
        out[f"transformer untrained {name} (reported)"] = _untrained_spearman(t, sp, seed)
        if scale is not Scale.SMOKE:  # reported: the unpretrained CNN, the strongest small deep baseline
            out[f"cnn {name} (reported)"] = evaluate(t, sp, f("cnn"))["spearman"]
    return out


@mechanism(
    "zero-shot-prior",
    component="the family MSA's PSSM zero-shot score (the feature zsRidge adds to one-hot ridge)",
    measures="Spearman of the PSSM score alone with measured fitness, over every variant of the landscape",
    above=0.1,
)
def zero_shot_prior(scale: Scale, seed: int) -> dict[str, float]:
    land = _land(preset(scale), seed)
    t = land.table
    everything = np.arange(len(t))
    pssm = ModelFactory(land.msa).zero_shot().fit().score(t, everything)
    oracle = _OracleEnergy(land.potts).score(t, everything)
    return {
        "zero-shot-prior": spearman(t.targets, pssm),
        "oracle energy (true Potts E) Spearman": spearman(t.targets, oracle),
    }


@mechanism(
    "mlm-pretraining",
    component="masked-LM pretraining of the transformer on the family MSA (the transfer learning the paper tests)",
    measures="test Spearman of the pretrained minus the naive (random-init) transformer, same fine-tuning, "
    "averaged over the one_to_many, two_to_many and by_position splits, on simple-models-competitive-v2's fresh "
    "landscapes (seed + 1000; the 0.02 bar was fixed from v1's seeds)",
    above=0.02,
)
def mlm_pretraining(scale: Scale, seed: int) -> dict[str, float]:
    deep = _deep_scores(scale, _v2_seed(scale, seed))
    gains = {
        f"pretrained - naive {s}": deep[f"transformer-pretrained {s}"] - deep[f"transformer-naive {s} (reported)"]
        for s in _COMPETITIVE_SPLITS
    }
    return {"mlm-pretraining": float(np.mean(list(gains.values()))), **gains}


@mechanism(
    "fitness-shift",
    component="the low_to_high split: training only below the fitness threshold, testing above it",
    measures="how far ridge and zsRidge trained on low_to_high under-predict its test fitness (mean measured - "
    "mean predicted, in sd of all fitness values) minus the same on an A/A random split of the same sizes (own "
    "random stream): the shift the models fail to bridge; ~0 when the models extrapolate the fitness scale",
    above=0.25,
)
def fitness_shift(scale: Scale, seed: int) -> dict[str, float]:
    from icml26.flip2.splits import VAL_FRACTION, VAL_SEED, _finish

    cfg = preset(scale)
    land = _land(cfg, seed)
    t, f = land.table, _factory(cfg, land, seed)
    y = t.targets
    lo = y < np.median(y)  # low_to_high of low-to-high-hardest: train below the median, test above
    aa = np.zeros(len(t), bool)
    aa[np.random.default_rng([seed, 31]).choice(len(t), size=int(np.sum(~lo)), replace=False)] = True
    out = {}
    for name, test in (("low_to_high", ~lo), ("A/A random split", aa)):
        sp = _finish(name, ~test, test, val_fraction=VAL_FRACTION, val_seed=VAL_SEED)
        short = [np.mean(y[sp.test] - _predict(t, sp, f(m))) / y.std() for m in ("ridge", "zsridge")]
        out[f"under-prediction, {name}"] = float(np.mean(short))
    pooled = math.sqrt((y[lo].var(ddof=1) + y[~lo].var(ddof=1)) / 2)
    return {
        "fitness-shift": out["under-prediction, low_to_high"] - out["under-prediction, A/A random split"],
        **out,
        "Cohen's d test vs train fitness (reported)": float((y[~lo].mean() - y[lo].mean()) / pooled),
    }


class _OracleEnergy:
    """The oracle zero-shot score: the generating Potts model's own energy, E(x) - E(wt) (fields and couplings).

    It stands in the PSSM's place in the positive control of ``zero-shot-helps-out-of-distribution``: the
    family log-likelihood a perfect zero-shot model would report, without the MSA's estimation error.
    """

    name = "oracle-energy"

    def __init__(self, potts):
        self.potts = potts

    def fit(self, t=None, train=(), val=()):
        return self

    def score(self, t, idx) -> np.ndarray:
        idx = np.asarray(idx)
        X = encode(t.sequences[idx])  # (n, L)
        W = encode([t.wild_types[w] for w in t.wt_of[idx]])  # (n, L)
        return self.potts.energy(X) - self.potts.energy(W)


# -------------------------------------------------------------------------------------------------- claims


@claim(
    "flip2/reproduces-flip-gb1-v1",
    statement="split builders applied to the GB1 variant table (sequence, fitness, wild type) reproduce FLIP's "
    "published one/two/three_vs_rest and low_vs_high train/test assignments exactly, and one-hot ridge "
    "trained on them ranks three_vs_rest test variants with Spearman > 0.5",
    paper="FLIP2 reuses FLIP v1 protocols (Sec. 1); FLIP v1 GB1 tasks (Dallago et al. 2021)",
    control="mutation counts taken relative to a wrong wild type (the first single mutant): the builders "
    "then disagree with the published assignments",
    positive="the assignments planted: FLIP's published files in the builders' place (an exact match is the only "
    "size an exact-match bar has), and ridge's three_vs_rest predictions handicapped with independent noise to "
    "Spearman 0.55, 1.1 x the 0.5 bar, through the same comparison, fit and interval",
    judge=(
        Interval("split assignment mismatches", below=0.5, discrete=True),
        Interval("ridge Spearman three_vs_rest", above=0.5),
    ),
)
def reproduces_flip_gb1(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = preset(scale)
    t = load_flip_gb1()
    if arm is Arm.NEGATIVE:  # sabotage: the reference sequence is a single mutant, not the wild type
        ref = t.sequences[np.flatnonzero(t.n_mutations() == 1)[0]]
        t = type(t)(t.name, t.sequences, t.targets, {"GB1": str(ref)}, t.wt_of, t.provenance, t.licence, t.published)
    plant_rng = np.random.default_rng([seed, 3])
    measured, mismatches = {}, 0
    for name, make in FLIP_GB1_RECIPES.items():
        pub = t.published[name]
        if arm is Arm.POSITIVE:  # the oracle: the published file in the builder's place
            ours = pub
            split = from_assignment(name, pub)
        else:
            ours = make(t, val_fraction=0.1, val_seed=seed).assignment(len(t))
            split = from_assignment(name, np.where(ours == "val", "train", ours))
            split = type(split)(name, *_val(split, seed))
        bad = int(np.sum(np.where(ours == "val", "train", ours) != np.where(pub == "val", "train", pub)))
        mismatches += bad
        measured[f"ridge Spearman {name}"] = evaluate(t, split, OneHotRidge())["spearman"]
        if arm is Arm.POSITIVE and name == "three_vs_rest":  # planted: ridge at 1.1 x the bar, no more
            y, pred = t.targets[split.test], _predict(t, split, OneHotRidge())
            planted = handicap(y, pred, spearman(y, pred) - GB1_PLANTED_SPEARMAN, plant_rng)
            measured[f"ridge Spearman {name}"] = spearman(y, planted)
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


#: The positive control's ridge Spearman on three_vs_rest: 1.1 x the claim's 0.5 bar.
GB1_PLANTED_SPEARMAN = 0.55


def _val(split, seed, frac=0.1):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(split.train)
    k = round(frac * len(perm))
    return np.sort(perm[k:]), np.sort(perm[:k]), split.test


_COMPETITIVE_SPLITS = ("one_to_many", "two_to_many", "by_position")


def _competitive_splits(t, seed):
    return {
        "one_to_many": by_n_mutations(t, 1),
        "two_to_many": by_n_mutations(t, 2),
        "by_position": by_position(t, seed=seed),
    }


@claim(
    "flip2/simple-models-competitive-v2",
    statement="on number-of-mutation (one/two_to_many) and position (by_position) splits of synthetic Potts "
    "landscapes, the average of ridge and zsRidge matches or beats a transformer pretrained by masked LM on the "
    "family and fine-tuned: mean Spearman difference > 0 (95 % interval over seeds; v1's setting judged on fresh "
    "landscapes, seed + 1000, since the mlm-pretraining probe's bar was set on v1's seeds)",
    paper="abstract: 'simpler models often matched or outperformed fine-tuned protein language models'",
    control="A/A: the fine-tuned model's slot holds ridge and zsRidge refitted with their training side "
    "re-partitioned into train and validation at random (own random stream, same sizes): simple against simple, "
    "the difference scatters around 0",
    positive=f"A/A plus the claimed gap: the negative control's refitted ridge and zsRidge, each handicapped with "
    f"independent noise by {PLANTED_GAP} Spearman, in the fine-tuned model's slot: simple beats 'fine-tuned' by "
    f"{PLANTED_GAP} on top of the A/A scatter",
    mechanisms=("zero-shot-prior", "mlm-pretraining"),
    judge=Interval("simple - fine-tuned Spearman", above=0.0),
    by_construction="the synthetic Potts landscape is mostly additive, so one-hot ridge is nearly the generating "
    "model class (on one_to_many every deep model stays <= 0.24 against ridge 0.51), and zsRidge's PSSM comes from "
    "an MSA sampled from the same Potts model; the 2-layer, 32-wide 'fine-tuned pLM' is also weaker than the "
    "unpretrained CNN (by_position 0.56 vs 0.71, small, seed 0): the margin reflects the generator and the "
    "model's size, not the paper's question about large pretrained pLMs",
)
def simple_models_competitive(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = preset(scale)
    seed = _v2_seed(scale, seed)  # v2: fresh landscapes (and streams), none of which v1 was judged on
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    # the controls' own streams: the A/A refit's validation partitions (shared by both controls: the positive is
    # the negative plus the plant) and the planted noise
    aa_rng, plant_rng = np.random.default_rng([seed, 21]), np.random.default_rng([seed, 22])
    deep = _deep_scores(scale, seed)
    measured, diffs = dict(deep), []
    for name, sp in _competitive_splits(t, seed).items():
        y = t.targets[sp.test]
        simple = {m: spearman(y, _predict(t, sp, f(m))) for m in ("ridge", "zsridge")}
        for m, rho in simple.items():
            measured[f"{m} {name}"] = rho
        mean_simple = float(np.mean(list(simple.values())))
        if arm is not Arm.CLAIM:  # A/A: simple models refitted on their own validation partition
            aa = _resplit(sp, aa_rng)
            rivals = [_predict(t, aa, f(m)) for m in ("ridge", "zsridge")]
            if arm is Arm.POSITIVE:  # planted: each refit handicapped by PLANTED_GAP
                rivals = [handicap(y, p, PLANTED_GAP, plant_rng) for p in rivals]
            measured[f"transformer-pretrained {name}"] = float(np.mean([spearman(y, p) for p in rivals]))
        diffs.append(mean_simple - measured[f"transformer-pretrained {name}"])
    d = float(np.mean(diffs))
    measured["simple - fine-tuned Spearman"] = d
    return ClaimResult(
        "holds" if d > 0 else "fails",
        measured=measured,
        reason="the fine-tuned model is a 2-layer transformer pretrained on a 200-3000 sequence MSA, "
        "not CARP-640M/ESMC-300M",
    )


def _untrained_spearman(t, sp, seed):
    """Test Spearman of a randomly initialised transformer with no training at all (a floor: ~0)."""
    import torch

    from icml26.flip2.models import TinyTransformer

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
    positive=f"A/A plus the claimed gain at 1.5 x the bar: zsRidge's slot holds ridge refitted with its training "
    f"side re-partitioned into train and validation at random (own stream), and the ridge baseline is handicapped "
    f"with independent noise by {1.5 * 0.01:g} Spearman: a planted gain of 0.015 on top of the A/A scatter",
    mechanisms=("zero-shot-prior",),
    judge=Interval("zsRidge - ridge Spearman (OOD mean)", above=0.01),
    by_construction="the PSSM comes from an MSA sampled from the same Potts model that generates the fitness, so "
    "it correlates 0.82-0.84 with the noise-free fitness (review, issue 51): zsRidge is handed most of the answer. "
    "Replaced on real scans, with priors from real sources (BLOSUM62 and a training-split PSSM), by "
    "flip2/real-prior-helps-v1",
)
def zero_shot_helps_ood(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = preset(scale)
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    low = random_split(t, 0.3, seed=seed)
    low = type(low)(
        "low_n", np.random.default_rng(seed).choice(low.train, size=cfg.low_n, replace=False), low.val[:20], low.test
    )
    splits = {"by_position": by_position(t, seed=seed), "low_n": low}

    def zsridge():
        zs = f("zsridge")
        if arm is Arm.NEGATIVE:  # sabotage: the evolutionary prior comes from another family
            zs.scorers = [_foreign_scorer(cfg, seed)]
        return zs

    aa_rng, plant_rng = np.random.default_rng([seed, 23]), np.random.default_rng([seed, 24])
    measured, gains = {}, []
    for name, sp in splits.items():
        if arm is Arm.POSITIVE:  # planted on an A/A pair: ridge refitted vs ridge handicapped by 1.5 x the bar
            y = t.targets[sp.test]
            z = spearman(y, _predict(t, _resplit(sp, aa_rng), f("ridge")))
            r = spearman(y, handicap(y, _predict(t, sp, f("ridge")), ZS_PLANTED_GAIN, plant_rng))
        else:
            r = evaluate(t, sp, f("ridge"))["spearman"]
            z = evaluate(t, sp, zsridge())["spearman"]
        measured[f"ridge {name}"], measured[f"zsridge {name}"] = r, z
        gains.append(z - r)
    g = float(np.mean(gains))
    measured["zsRidge - ridge Spearman (OOD mean)"] = g
    figures = {}
    if scale is not Scale.SMOKE:  # reported, not judged: learning curves, and GB1 where the prior is BLOSUM62
        figures["learning_curve"] = _learning_curves(t, lambda: f("ridge"), zsridge, seed, measured)
        measured.update(_gb1_blosum_gains(seed))
    return ClaimResult("holds" if g > 0.01 else "fails", measured=measured, figures=figures)


#: The positive control's planted zsRidge gain: 1.5 x the claim's 0.01 bar.
ZS_PLANTED_GAIN = 0.015


@functools.lru_cache(maxsize=8)
def _gb1_blosum_gains(seed):
    """zsRidge(BLOSUM62) - ridge test Spearman on three published GB1 splits (reported; the same in every arm)."""
    gb1 = load_flip_gb1()
    out = {}
    for name in ("one_vs_rest", "two_vs_rest", "low_vs_high"):
        sp = from_assignment(name, gb1.published[name])
        gf = ModelFactory(None, seed=seed)
        d = evaluate(gb1, sp, gf("zsridge"))["spearman"] - evaluate(gb1, sp, gf("ridge"))["spearman"]
        out[f"GB1 {name}: zsRidge(BLOSUM62) - ridge (reported)"] = d
    return out


def _learning_curves(t, make_ridge, make_zsridge, seed, measured):
    """Ridge and zsRidge Spearman vs training size on random splits (10 replicates, min 50): a figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from icml26.flip2.harness import learning_curve

    sizes = (50, 100, 200, 400, 800)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for name, make in (("ridge", make_ridge), ("zsridge", make_zsridge)):
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
    "flip2/low-to-high-hardest-v2",
    statement="on synthetic Potts landscapes, (a) training only below the median fitness (low_to_high) lowers the "
    "model-averaged Spearman on held-out above-median variants compared with training on an equally large "
    "random sample that includes the other above-median variants (extrapolation penalty > 0; two folds, each "
    "half of the above-median variants held out in turn), and (b) low_to_high (train below the median, test "
    "above; the synthetic tables hold no wild-type measurement) has the lowest model-averaged test Spearman of "
    "the FLIP2 split families (random, one/two/three_to_many, by_position, close_to_far, far_to_close, "
    "by_mutation, by_wt); both > 0 (95 % interval over seeds). Synthetic data only: on real data the fitness "
    "split ranks 2nd of 5 (GB1), 3rd of 7 (Abeta42, TDP-43)",
    paper="FLIP v1 / FLIP2 split design: extrapolation to higher fitness (low_vs_high, low_to_high)",
    control="no fitness shift, A/A: the extrapolating training set is replaced by a second random sample of the "
    "same size drawn from its own random stream (the penalty then scatters around 0), and low_to_high by a "
    "random split of the same sizes",
    positive=f"the extrapolating arm is the interpolating arm's predictions handicapped with independent noise "
    f"by {PLANTED_GAP} Spearman (a planted penalty of {PLANTED_GAP}), and the low_to_high slot holds the random "
    f"split's predictions handicapped to {PLANTED_GAP} below the hardest other split",
    mechanisms=("fitness-shift",),
    judge=(
        Interval("extrapolation penalty (same test set)", above=0.0),
        Interval("next-hardest - low_to_high Spearman", above=0.0),
    ),
)
def low_to_high_hardest(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.flip2.splits import VAL_FRACTION, VAL_SEED, _finish, by_distance, by_mutation, by_wild_type

    cfg = preset(scale)
    land = _land(cfg, seed)
    t = land.table
    f = _factory(cfg, land, seed)
    y = t.targets
    kw = dict(val_fraction=VAL_FRACTION, val_seed=VAL_SEED)
    # three independent random streams: the design (test halves, interpolating samples), the negative
    # control's own A/A samples, and the positive control's planted noise
    rng, aa_rng, plant_rng = (np.random.default_rng([seed, k]) for k in (1, 2, 3))
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
    lo = y < np.median(y)  # no wild type in the synthetic table: the threshold is the median
    if arm is Arm.NEGATIVE:  # no fitness shift: a random split with low_to_high's sizes
        test = np.zeros(len(t), bool)
        test[aa_rng.choice(len(t), size=int(np.sum(~lo)), replace=False)] = True
        splits["low_to_high"] = _finish("low_to_high", ~test, test, **kw)
    else:
        splits["low_to_high"] = _finish("low_to_high", lo, ~lo, **kw)

    # (b) every family, model-averaged; the predictions kept for the positive control's planted slot
    preds = {name: {m: _predict(t, sp, f(m)) for m in cfg.hard_models} for name, sp in splits.items()}
    rho = {name: {m: spearman(y[splits[name].test], p) for m, p in ps.items()} for name, ps in preds.items()}
    measured = {f"mean Spearman {name}": float(np.mean(list(r.values()))) for name, r in rho.items()}
    others = min(measured[f"mean Spearman {s}"] for s in _HARD_SPLITS)
    if arm is Arm.POSITIVE:  # planted: low_to_high = the random split, PLANTED_GAP below the hardest other
        y_rand = y[splits["random"].test]
        drop = measured["mean Spearman random"] - others + PLANTED_GAP
        measured["mean Spearman low_to_high"] = float(
            np.mean([spearman(y_rand, handicap(y_rand, p, drop, plant_rng)) for p in preds["random"].values()])
        )
    gap = others - measured["mean Spearman low_to_high"]
    measured["next-hardest - low_to_high Spearman"] = gap
    measured["low_to_high rank among 10 splits, 1 = hardest (reported)"] = float(
        1 + sum(measured[f"mean Spearman {s}"] < measured["mean Spearman low_to_high"] for s in _HARD_SPLITS)
    )

    # (a) the extrapolation penalty on the same test set: each half of the above-median variants is held out
    # in turn; "extrapolating" trains on every below-median variant, "interpolating" on an equally large
    # random sample of all the other variants (so it sees high fitness). Same test set, same training size.
    halves = np.array_split(rng.permutation(np.flatnonzero(~lo)), 2)
    r_int, r_ext = [], []
    for k, half in enumerate(halves):
        test = np.zeros(len(t), bool)
        test[half] = True
        interp = np.zeros(len(t), bool)
        interp[rng.choice(np.flatnonzero(~test), size=int(lo.sum()), replace=False)] = True
        extrap = lo
        if arm is Arm.NEGATIVE:  # A/A: a second interpolating sample, from its own random stream
            extrap = np.zeros(len(t), bool)
            extrap[aa_rng.choice(np.flatnonzero(~test), size=int(lo.sum()), replace=False)] = True
        sp_int = _finish(f"interpolate-{k}", interp, test, **kw)
        sp_ext = _finish(f"extrapolate-{k}", extrap, test, **kw)
        y_test = y[test]
        for m in cfg.hard_models:
            p_int = _predict(t, sp_int, f(m))
            if arm is Arm.POSITIVE:  # planted: the interpolating arm handicapped by exactly PLANTED_GAP
                p_ext = handicap(y_test, p_int, PLANTED_GAP, plant_rng)
            else:
                p_ext = _predict(t, sp_ext, f(m))
            r_int.append(spearman(y_test, p_int))
            r_ext.append(spearman(y_test, p_ext))
    measured["mean Spearman interpolate (same test set)"] = float(np.mean(r_int))
    measured["mean Spearman extrapolate (same test set)"] = float(np.mean(r_ext))
    penalty = float(np.mean(r_int) - np.mean(r_ext))
    measured["extrapolation penalty (same test set)"] = penalty

    figures = {}
    if scale is not Scale.SMOKE:  # reported, not judged: the real-data leaderboards (ridge, zsRidge)
        board, real = _real_leaderboards(seed)
        measured.update(real)
        if arm is Arm.CLAIM:
            from icml26.flip2.harness import plot_leaderboard

            figures["real_leaderboards"] = plot_leaderboard(board)
    ok = penalty > 0 and gap > 0
    return ClaimResult("holds" if ok else "fails", measured=measured, figures=figures)


@functools.lru_cache(maxsize=4)
def _real_leaderboards(seed):
    """GB1 (FLIP splits) and mavenn scans (our splits): the leaderboard and the rank of the fitness split
    among each dataset's splits (reported; the same in every arm, so cached)."""
    import pandas as pd

    from icml26.flip2.data import load_mavenn, mavenn_available
    from icml26.flip2.harness import run_leaderboard
    from icml26.flip2.splits import standard_splits

    gb1 = load_flip_gb1()
    tables = [(gb1, {s: from_assignment(s, gb1.published[s]) for s in gb1.published}, "low_vs_high")]
    if mavenn_available():
        for name in ("abeta42", "tdp43", "gb1_double"):
            tm = load_mavenn(name, max_variants=10_000, seed=0)
            tables.append((tm, standard_splits(tm, seed=seed), "low_to_high"))
    frames, measured = [], {}
    for tm, splits, fitness_split in tables:
        df = run_leaderboard(tm, splits, ["ridge", "zsridge"], ModelFactory(None, seed=seed))
        frames.append(df)
        mean = df.groupby("split")["spearman"].mean()
        measured[f"{tm.name}: {fitness_split} rank among {len(mean)} splits, 1 = hardest (reported)"] = float(
            (mean < mean[fitness_split]).sum() + 1
        )
        for split, v in mean.items():
            measured[f"{tm.name} {split} mean Spearman (reported)"] = float(v)
    return pd.concat(frames, ignore_index=True), measured


# ------------------------------------------------------------------------------------- real scans, real priors

#: The real deep mutational scans of ``real-prior-helps`` (mavenn's wheel) and the variants each keeps per scale.
REAL_SETS = ("abeta42", "tdp43")
REAL_MAX_VARIANTS = {"smoke": 3000, "small": 10_000, "paper": None}
#: Training size of the low-N random split on the real scans (fixed before any judged run).
REAL_LOW_N = 100


def _real_tables(scale: Scale, seed: int):
    """The real scans, subsampled with the seed (None when the mavenn data files are not installed)."""
    from icml26.flip2.data import load_mavenn, mavenn_available

    if not mavenn_available():
        return None
    n = REAL_MAX_VARIANTS[str(getattr(scale, "value", scale))]
    return [load_mavenn(name, max_variants=n, seed=seed) for name in REAL_SETS]


def _real_splits(t, seed):
    """by_position and a low-N random split (REAL_LOW_N training variants, 50 validation) of one scan."""
    low = random_split(t, 0.3, seed=seed)
    rng = np.random.default_rng([seed, 41])
    low = type(low)("low_n", np.sort(rng.choice(low.train, size=REAL_LOW_N, replace=False)), low.val[:50], low.test)
    return {"by_position": by_position(t, seed=seed), "low_n": low}


def _real_priors():
    from icml26.flip2.models import ZeroShot

    return [ZeroShot("blosum62"), ZeroShot("pssm-train")]


@mechanism(
    "real-prior",
    component="the real-source priors zsRidge adds on the real scans: BLOSUM62 and the PSSM of the training side "
    "(selected vs assayed letters)",
    measures="Spearman of each prior alone with measured fitness on the by_position test variants, averaged over "
    "the priors and the scans, minus the same for an A/A null prior of the same structure (BLOSUM62 with its "
    "amino-acid labels permuted; the PSSM fitted on permuted training targets; own random stream)",
    above=0.1,
)
def real_prior(scale: Scale, seed: int) -> dict[str, float]:
    from icml26.flip2.models import AMINO_ACIDS, ZeroShot

    tables = _real_tables(scale, seed)
    if tables is None:
        return {"real-prior": float("nan")}
    rng = np.random.default_rng([seed, 43])
    out, live, null = {}, [], []
    for t in tables:
        sp = by_position(t, seed=seed)
        y = t.targets[sp.test]
        for prior in _real_priors():
            rho = spearman(y, prior.fit(t, sp.train).score(t, sp.test))
            if prior.kind == "blosum62":  # null: the same table with its letters relabelled at random
                perm = rng.permutation(len(AMINO_ACIDS))
                table = str.maketrans(AMINO_ACIDS, "".join(AMINO_ACIDS[k] for k in perm))
                shuffled = type(t)(
                    t.name,
                    np.char.translate(t.sequences, table),
                    t.targets,
                    {w: s.translate(table) for w, s in t.wild_types.items()},
                    t.wt_of,
                )
                rho0 = spearman(y, prior.score(shuffled, sp.test))
            else:  # null: the PSSM fitted on training targets permuted (selection at random)
                permuted = type(t)(t.name, t.sequences, rng.permutation(t.targets), t.wild_types, t.wt_of)
                rho0 = spearman(y, ZeroShot("pssm-train").fit(permuted, sp.train).score(t, sp.test))
            out[f"{t.name} {prior.name} Spearman alone"] = rho
            out[f"{t.name} {prior.name} null-prior Spearman"] = rho0
            live.append(rho)
            null.append(rho0)
    return {"real-prior": float(np.mean(live) - np.mean(null)), **out}


@claim(
    "flip2/real-prior-helps-v1",
    statement="on real deep mutational scans (mavenn's Abeta42 nucleation and TDP-43 toxicity sets), adding a "
    "zero-shot prior from a real source -- the BLOSUM62 substitution score, no family MSA and no sample of a "
    "generating model -- to one-hot ridge (zsRidge) raises test Spearman on the by_position split and on a low-N "
    f"random split ({REAL_LOW_N} training variants): mean gain > 0.01 (95 % interval over seeds; each seed its own "
    "subsample and splits, drawn from seed + 1000). The training-split PSSM is reported beside it, not judged",
    paper="abstract and Sec. models: zsRidge among the simple models matching fine-tuned pLMs",
    control="A/A: the prior removed, zsRidge's slot holds ridge refitted with its training side re-partitioned "
    "into train and validation at random (own random stream, same sizes): ridge against ridge (a noise prior "
    "instead is not a null: a penalty-exempt feature of noise costs ridge 0.00-0.04 Spearman at smoke)",
    positive=f"A/A plus the claimed gain at 1.5 x the bar: that refitted ridge in zsRidge's slot against ridge "
    f"handicapped with independent noise by {1.5 * 0.01:g} Spearman",
    mechanisms=("real-prior",),
    judge=Interval("zsRidge(BLOSUM62) - ridge Spearman (mean)", above=0.01),
)
def real_prior_helps(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.flip2.models import ZeroShot, ZSRidge

    seed = seed + FRESH  # the subsamples and splits of seed 0 were seen in the README's leaderboard first
    tables = _real_tables(scale, seed)
    if tables is None:
        return ClaimResult(
            "not-measured", reason="the mavenn data files are not installed (pip install --no-deps mavenn==1.1.4)"
        )
    aa_rng, plant_rng = np.random.default_rng([seed, 44]), np.random.default_rng([seed, 45])
    measured, gains = {}, []
    for t in tables:
        for name, sp in _real_splits(t, seed).items():
            y = t.targets[sp.test]
            p_ridge = _predict(t, sp, OneHotRidge())
            if arm is Arm.CLAIM:
                p_zs = _predict(t, sp, ZSRidge([ZeroShot("blosum62")]))
                if scale is not Scale.SMOKE:  # reported, not judged: the training-split PSSM beside BLOSUM62
                    p_real = _predict(t, sp, ZSRidge(_real_priors()))
                    measured[f"{t.name} zsridge-real {name} (reported)"] = spearman(y, p_real)
            else:  # A/A: ridge refitted on its own train/validation partition in zsRidge's slot
                p_zs = _predict(t, _resplit(sp, aa_rng), OneHotRidge())
            if arm is Arm.POSITIVE:  # planted: the ridge baseline handicapped by 1.5 x the bar
                p_ridge = handicap(y, p_ridge, ZS_PLANTED_GAIN, plant_rng)
            r, z = spearman(y, p_ridge), spearman(y, p_zs)
            measured[f"{t.name} ridge {name}"], measured[f"{t.name} zsridge-blosum62 {name}"] = r, z
            gains.append(z - r)
    g = float(np.mean(gains))
    measured["zsRidge(BLOSUM62) - ridge Spearman (mean)"] = g
    return ClaimResult(
        "holds" if g > 0.01 else "fails",
        measured=measured,
        reason="a zero-shot prior from a real source only: no natural MSA or pretrained pLM is available offline",
    )


# ------------------------------------------------------------------------------------------------ measures


def _spearman_check(seed: int) -> dict[str, float]:
    """Test Spearman on a random split of a smoke landscape: the noiseless fitness (truth) must rank best, the
    models below it, and predictions drawn independently of the variants (null) at ~0."""
    land = _land(preset(Scale.SMOKE), seed)
    t, f = land.table, _factory(preset(Scale.SMOKE), land, seed)
    sp = random_split(t, 0.5, seed=seed)
    y = t.targets[sp.test]
    scores = {m: spearman(y, _predict(t, sp, f(m))) for m in ("ridge", "zsridge", "zero-shot")}
    scores["truth"] = spearman(y, land.true_fitness[sp.test])
    scores["null"] = spearman(y, np.random.default_rng([seed, 99]).normal(size=len(y)))
    return scores


def _gain_check(seed: int) -> dict[str, float]:
    """The paired statistic the comparisons judge, Spearman(model) - Spearman(ridge) on one test set: the
    truth's gain must be largest; an A/A pair (ridge on a second, independently drawn training set of the
    same size) must sit at ~0; the planted handicap must read as about -PLANTED_GAP."""
    land = _land(preset(Scale.SMOKE), seed)
    t, f = land.table, _factory(preset(Scale.SMOKE), land, seed)
    rng = np.random.default_rng([seed, 98])
    test = rng.choice(len(t), size=len(t) // 2, replace=False)
    rest = np.setdiff1d(np.arange(len(t)), test)
    a, b = (np.sort(rng.choice(rest, size=len(rest) // 2, replace=False)) for _ in range(2))
    sp_a = type(random_split(t, seed=seed))("a", a, a[:0], np.sort(test))
    sp_b = type(sp_a)("b", b, b[:0], sp_a.test)
    y = t.targets[sp_a.test]
    p_ridge = _predict(t, sp_a, f("ridge"))
    base = spearman(y, p_ridge)
    return {
        "truth": spearman(y, land.true_fitness[sp_a.test]) - base,
        "zsridge": spearman(y, _predict(t, sp_a, f("zsridge"))) - base,
        "handicapped ridge": spearman(y, handicap(y, p_ridge, PLANTED_GAP, rng)) - base,
        "null": spearman(y, _predict(t, sp_b, f("ridge"))) - base,
    }


MEASURES = [
    MeasureCheck("test Spearman", _spearman_check, null_band=(-0.15, 0.15)),
    MeasureCheck("Spearman gain over ridge (paired)", _gain_check, null_band=(-0.05, 0.05)),
]
MECHANISMS = [zero_shot_prior, mlm_pretraining, fitness_shift, real_prior]
CLAIMS = [reproduces_flip_gb1, simple_models_competitive, zero_shot_helps_ood, low_to_high_hardest, real_prior_helps]
