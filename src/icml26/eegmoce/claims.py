"""The paper's headline claims on real EEG + ECG: rest vs mental arithmetic on EEGMAT (README "Claims").

Data: the shipped EEGMAT subset (12 subjects; 60 s rest + 60 s serial subtraction each; EEG 19 channels, ECG, and
an HRV stream derived from the ECG; 4 s windows), classified **leave-subjects-out** (GroupKFold over subjects:
every test subject unseen in training; domain BN refitted on each test subject's unlabeled windows). Inputs are
z-scored per subject, except in the domain-BN claim, where they are z-scored over all subjects pooled (so the
subjects' own offsets and scales remain for the domain BN to remove). Every claim reads cross-validation runs cached
per (scale, seed, arm): an arm is trained only when a claim or a control needs it. A seed draws the subject folds,
the initialisations and the minibatches; the recordings are the same on every seed.

At ``small`` every trained arm uses the (lr, epochs) it won on validation subjects (``config.TUNED``, from
``benchmarks/eegmoce_tuning.py``: the same grid for every arm); the comparator of the accuracy claim is the peer with
the best validation balanced accuracy (``config.BEST_PEER``), among the trained peers, the tangent space and the
trivial rules on the heart-rate stream. Both, and the curvature lr (100x), were chosen on **the same 12 subjects**
that the claims test: the judged runs use a fresh seed stream (seed + ``FRESH_SEEDS``), which draws new folds,
initialisations and minibatches, not new subjects. Evaluation is transductive (each subject z-scored, and its
domain BN refitted, on all its own unlabeled windows) on exactly balanced subjects (15 rest + 15 arithmetic
windows each), which is why the heart rate alone scores about 0.86.

- ``eegmat-moce-beats-best-peer-v5``: BA of MoCE minus BA of ``config.BEST_PEER``; controls: the A/A pair of two
  independent MoCE runs (v2 used bootstrap refits of the deterministic peer: far less noisy than the claim), with
  3.34 points taken from one side in the positive arm. The gaps to the heart-rate rules and the tangent space are
  reported.
- ``eegmat-learnable-curvature-helps-v5``: MoCE minus MoCE with frozen equal curvatures **and a learnable
  per-modality attention bias** (the gate that the log|K| prior also provides), trained at the curvatures' own
  rate (v2 trained it 100x slower, at the ordinary lr), so the ablation removes curvature learning only; Kendall
  tau between the learned |K| and each modality's hierarchy (-delta_rel) reported beside it.
- ``eegmat-domain-bn-helps-v5``: on inputs z-scored over all subjects pooled, MoCE minus MoCE with pooled BN (as
  v2; the statement now names the protocol, and its probe has an A/A reference).

v4 (issue 42, v4 round of "Curvature liveness" in the README): the domain BNs' scale gamma trains in the
curvatures' optimiser group (``TrainConfig.gamma_at_curvature_rate``; it made the curvature probe live on the
tuning seed, where no other piece of the paper's recipe did), which changes every MoCE arm, so all three claims
moved to v4; the curvature ablation's gate is bounded to the range the prior can span (``ModelConfig.gate_bounded``,
[-1.38, +0.90]; v3's was unbounded and reached -3.38 / +3.20).

v5 (issue 42, round 4): v4 unchanged, judged on its own fresh stream (seed + 4000): v4 adopted a change seen on
v3's judged run but was judged on v3's seeds (3000-3002). MoCE's learned prior weight lambda and its prior biases
lambda log|K_j| are reported beside the ablation's gate biases.

Contract v3: each claim also runs a positive control with the claimed effect planted at a stated size (3.34 points
of balanced accuracy, the smallest gain the secondary summary reports, taken from one side of an A/A pair);
``MECHANISMS`` probes whether the learned curvatures shape the experts' geometry (the fusion prior held at the
learned |K|) and whether the domain BN's per-subject refit changes held-out predictions, each beyond an A/A
reference, and ``MEASURES`` validates the balanced-accuracy gap and Gromov delta_rel on ground truth and on a null.
v1 and v2 of the claims are in the README's history.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.eegmoce.config import BEST_PEER, FITTED, PRESETS, TUNED

_CACHE: dict[tuple, object] = {}
#: the judged scales run on seed + FRESH_SEEDS: the curvature recipe (README, "Curvature liveness") was chosen on
#: EEGMAT seeds 0-1, the tuning (config.TUNED, BEST_PEER) on seed 0, v1 of the claims was judged on 2000-2002,
#: v2-v4 on 3000-3004 (v4 adopted a change seen on v3's judged run, so v5 = v4 on its own stream, 4000+)
FRESH_SEEDS = 4000


def _fresh(scale: Scale, seed: int) -> int:
    """The seed a claim (and probe) runs on: the fresh stream at the judged scales; smoke, a test of the code and
    never a verdict, keeps the seeds the contract checker uses."""
    return seed if scale is Scale.SMOKE else seed + FRESH_SEEDS


SOURCE = "[secondary summary of arXiv 2604.12579, unverified]"
ABSTRACT = (
    "EEG-MoCE assigns each modality to an expert in a learnable-curvature hyperbolic space, enabling adaptive "
    "modeling of its intrinsic geometry. A curvature-aware fusion strategy then dynamically weights experts, "
    "emphasizing modalities with richer hierarchical information."
)


def _cached(key: tuple, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


@contextmanager
def _one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _data(scale: Scale, seed: int = 0, norm: str = "subject"):
    """The EEGMAT windows of the scale's subjects (the same recordings on every seed), z-scored per subject
    (``norm="subject"``) or over all subjects pooled (``"global"``)."""
    from icml26.eegmoce.eegmat import load_eegmat

    n = PRESETS[scale.value].eegmat_subjects

    def make():
        d, _ = load_eegmat(normalise=True if norm == "subject" else norm)
        return d.subset(np.flatnonzero(d.subject < n))

    return _cached(("data", scale.value, norm), make)


def _split_arm(arm: str) -> tuple[str, str]:
    """``"moce:global"`` -> ("moce", "global"): an arm on the inputs z-scored over all subjects pooled."""
    name, _, norm = arm.partition(":")
    return name, norm or "subject"


def _folds(scale: Scale, seed: int):
    from icml26.eegmoce.model import folds

    cfg = PRESETS[scale.value]
    return folds(_data(scale, seed), cfg.cv, cfg.folds, seed)


#: accuracy gain planted by the positive controls of the accuracy claims: +3.34 points of balanced accuracy, the
#: smallest gain over the best baseline the secondary summary reports (ISRUC); the paper prints none we could read
PLANTED_GAIN = 0.0334


def _cv(scale: Scale, seed: int, arm: str, replicate: int = 0):
    """One arm's subject-grouped CV (models kept for the controls that re-test them). ``replicate`` > 0 trains an
    independent replicate on the same data and folds (its own initialisations and minibatches: an A/A partner)."""
    from icml26.eegmoce.model import ModelConfig, TrainConfig, cross_validate

    cfg = PRESETS[scale.value]
    name, norm = _split_arm(arm)
    # smoke tests the code on the preset's budget; the judged scales use the pair won on validation subjects (the
    # MoCE ablations take MoCE's)
    lr, epochs = (cfg.lr, cfg.epochs) if scale is Scale.SMOKE else TUNED["moce" if name.startswith("moce") else name]
    tcfg = TrainConfig(
        epochs=epochs,
        lr=lr,
        curvature_lr_scale=cfg.curvature_lr_scale,
        warmup_epochs=cfg.warmup_epochs,
        domains_per_batch=cfg.domains_per_batch,
        trials_per_domain=cfg.trials_per_domain,
    )

    def make():
        with _one_thread():
            return cross_validate(
                _data(scale, seed, norm),
                name,
                ModelConfig(curvature_init=cfg.curvature_init),
                tcfg,
                cv=cfg.cv,
                n_folds=cfg.folds,
                seed=seed,
                keep_models=True,
                init_seed=None if replicate == 0 else 100_000 * replicate + seed,
            )

    return _cached(("cv", scale.value, seed, arm, replicate), make)


#: test-time sabotages of a trained arm's models (see :func:`_fold_predictions`)
SABOTAGES = (
    "",
    "unit-curvature",
    "rotate-curvature",
    "replicate-curvature",
    "wrong-subject-bn",
    "half-a-bn",
    "half-b-bn",
)


def _half_bn_source(d, test, seed: int, fold: int, half: int) -> dict:
    """Each held-out subject's BN source: one of two disjoint random halves of its own unlabeled windows."""
    out = {}
    for s in np.unique(test.subject).tolist():
        own = np.random.default_rng([seed, 66, fold, s]).permutation(np.flatnonzero(d.subject == s))
        out[s] = d.subset(np.sort(own[half::2]))
    return out


def _fold_predictions(scale: Scale, seed: int, arm: str, sabotage: str = "", replicate: int = 0) -> list[np.ndarray]:
    """Held-out predictions per fold of one arm (the :data:`FITTED` baselines included; their replicate > 0 is
    fitted on a bootstrap resample of each fold's training trials, since they are deterministic), optionally
    under a test-time sabotage of a trained arm's models. The curvature sabotages change the |K| the geometry
    uses (experts, projection to the fusion space, attention temperatures) and hold the fusion prior
    lambda log|K_j| at the learned |K|: ``unit-curvature`` (every |K| = 1), ``rotate-curvature`` (expert m gets
    the |K| learned for expert m-1) and ``replicate-curvature`` (expert m gets the |K| an independent replicate of
    the arm learned for expert m on the same fold: the A/A reference). The BN sabotages refit each held-out
    subject's domain BN on other unlabeled trials: ``wrong-subject-bn`` (the next held-out subject's, or a training
    subject's when it is held out alone), ``half-a-bn`` / ``half-b-bn`` (two disjoint random halves of its own:
    the A/A reference)."""
    import torch

    from icml26.eegmoce.model import predict, rule_cv, tangent_space_cv

    if sabotage not in SABOTAGES:
        raise ValueError(f"unknown sabotage {sabotage!r}; choose from {SABOTAGES}")
    if arm in FITTED and sabotage:
        raise ValueError(f"{arm} is a fitted baseline: the sabotage {sabotage!r} applies to trained arms only")

    def make():
        d = _data(scale, seed, _split_arm(arm)[1])
        if arm in FITTED:  # deterministic: a replicate refits it on bootstrap resamples (own stream)
            boot = np.random.default_rng([seed, 44, replicate]) if replicate else None
            if arm == "tangent-space":
                return tangent_space_cv(d, _folds(scale, seed), predictions=True, bootstrap=boot)
            return rule_cv(d, _folds(scale, seed), arm, predictions=True, bootstrap=boot)
        out = []
        models = _cv(scale, seed, arm, replicate=replicate).models
        partners = (
            _cv(scale, seed, arm, replicate=replicate + 1).models if sabotage == "replicate-curvature" else models
        )
        for f, (model, partner, (tr, te)) in enumerate(zip(models, partners, _folds(scale, seed), strict=True)):
            test, bn_source = d.subset(te), None
            if sabotage == "unit-curvature":
                model.geometry_override = torch.ones_like(model.curvatures.detach())
            elif sabotage == "rotate-curvature":
                model.geometry_override = model.curvatures.detach().roll(1)
            elif sabotage == "replicate-curvature":
                model.geometry_override = partner.curvatures.detach().clone()
            elif sabotage == "wrong-subject-bn":
                held = np.unique(test.subject).tolist()
                others = held[1:] + held[:1] if len(held) > 1 else [int(d.subject[tr][0])]
                bn_source = {s: d.subset(np.flatnonzero(d.subject == o)) for s, o in zip(held, others, strict=True)}
            elif sabotage in ("half-a-bn", "half-b-bn"):
                bn_source = _half_bn_source(d, test, seed, f, half=int(sabotage == "half-b-bn"))
            try:
                with _one_thread():
                    pred, _ = predict(model, test, bn_source=bn_source)
            finally:
                if hasattr(model, "geometry_override"):
                    model.geometry_override = None
            out.append(pred)
        return out

    return _cached(("predictions", scale.value, seed, arm, sabotage, replicate), make)


def _per_fold_ba(scale: Scale, seed: int, predictions: list[np.ndarray]) -> list[float]:
    """Held-out balanced accuracy of each fold's predictions."""
    from sklearn.metrics import balanced_accuracy_score

    d = _data(scale, seed)
    return [
        float(balanced_accuracy_score(d.y[te], p)) for p, (_, te) in zip(predictions, _folds(scale, seed), strict=True)
    ]


def _fold_ba(scale: Scale, seed: int, predictions: list[np.ndarray]) -> float:
    """Mean over folds of the held-out balanced accuracy of per-fold predictions."""
    return float(np.mean(_per_fold_ba(scale, seed, predictions)))


def handicap(pred: np.ndarray, y: np.ndarray, gain: float, rng: np.random.Generator) -> np.ndarray:
    """``pred`` with round(gain * n) of its correct answers turned wrong (to the next class): an accuracy exactly
    ``gain`` lower, as far as the n trials allow (the planted effect of the positive controls)."""
    out = np.array(pred, copy=True)
    correct = np.flatnonzero(out == y)
    k = min(len(correct), round(gain * len(y)))
    flip = rng.choice(correct, k, replace=False)
    out[flip] = (y[flip] + 1) % (int(y.max()) + 1)
    return out


def _handicapped_ba(scale: Scale, seed: int, arm: str, stream: int, replicate: int = 0) -> float:
    """Balanced accuracy of ``arm`` (or of its ``replicate``) with the planted gain taken away from it, fold by
    fold (own seed stream)."""
    d, rng = _data(scale, seed), np.random.default_rng([seed, 33, stream])
    preds = [
        handicap(p, d.y[te], PLANTED_GAIN, rng)
        for p, (_, te) in zip(
            _fold_predictions(scale, seed, arm, replicate=replicate), _folds(scale, seed), strict=True
        )
    ]
    return _fold_ba(scale, seed, preds)


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-a: mean over pairs of sign(a_i - a_j) sign(b_i - b_j); ties count 0 (so all-equal -> 0)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"Kendall tau needs two 1-D arrays of the same length >= 2; got {a.shape} and {b.shape}")
    i, j = np.triu_indices(a.size, 1)
    return float(np.mean(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])))


def _ba(res) -> float:
    return float(np.mean(res.balanced_accuracy))


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


def _accuracy_figure(values: dict[str, list[float]]):
    fig, ax = _figure()
    for i, v in enumerate(values.values()):
        ax.errorbar(i, np.mean(v), yerr=np.std(v), fmt="o", capsize=4)
        ax.scatter(np.full(len(v), i) + 0.1, v, s=8, c="gray")
    ax.set_xticks(range(len(values)), list(values), rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("cross-subject balanced accuracy (folds)")
    fig.tight_layout()
    return fig


def _arm_ba(scale: Scale, seed: int, arm: str, replicate: int = 0) -> float:
    """Leave-subjects-out balanced accuracy (mean over folds) of any arm, trained or fitted, or of its replicate."""
    return _fold_ba(scale, seed, _fold_predictions(scale, seed, arm, replicate=replicate))


def _hr_above_zero_ba(scale: Scale, seed: int) -> float:
    """The review's training-free rule (z-scored heart rate above 0 -> arithmetic) on the same test folds."""
    from icml26.eegmoce.model import hr_above_zero

    d = _data(scale, seed)
    return _fold_ba(scale, seed, [hr_above_zero(d.subset(te)) for _, te in _folds(scale, seed)])


#: the comparator of the accuracy claim at smoke (a test of the code; the judged scales use config.BEST_PEER)
SMOKE_PEER = "late-fusion"

#: what the claims' statements say of the protocol (reviewers' items: transductive, balanced, same subjects)
PROTOCOL = (
    "Evaluation is transductive and on exactly balanced subjects: every subject's windows are z-scored with that "
    "subject's own statistics (a held-out subject's included; labels unused), and every subject has exactly 15 "
    "rest and 15 arithmetic windows, so even 'z-scored heart rate above 0' scores about 0.86. The 12 subjects are "
    "the ones the tuning and the curvature recipe were chosen on: seed + 4000 draws new folds, initialisations "
    "and minibatches, not new subjects"
)


def _best_peer(scale: Scale) -> tuple[str, str]:
    """The accuracy claim's comparator and how it was chosen."""
    if scale is Scale.SMOKE:
        return SMOKE_PEER, "smoke stand-in, not chosen"
    return BEST_PEER, "best peer on validation subjects"


@claim(
    "eegmoce/eegmat-moce-beats-best-peer-v5",
    statement="On EEGMAT (12 subjects, rest vs mental arithmetic, 4 s windows of EEG + ECG + HRV, per-subject "
    "z-scoring), the leave-subjects-out balanced accuracy (GroupKFold(4) over subjects, mean over folds) of MoCE "
    "exceeds that of the strongest peer chosen on validation subjects (config.BEST_PEER, among braindecode "
    "EEGNetv4 and ShallowFBCSPNet, our EEGNet, pyriemann tangent space, Euclidean late fusion and cross-attention, "
    "and the heart-rate stump and HRV logistic regression; every trained arm at its (lr, epochs) won on "
    "validation subjects from the same grid): gap > 0 (95 % interval over seeds, seed + 4000). " + PROTOCOL,
    paper="abstract: EEG-MoCE achieves state-of-the-art performance on emotion recognition, sleep staging and "
    "cognitive assessment",
    control="A/A: the peer removed: an independent replicate of MoCE (its own initialisations and minibatches) in "
    "the peer's place, against MoCE; the gap scatters around 0 with the noise of trained MoCE runs (at least the "
    "claim's own: the peer is a deterministic fit) and must not be > 0",
    positive="the same A/A pair with 3.34 points of accuracy (the smallest gain over the best baseline the "
    "secondary summary reports) taken from MoCE's side: the replicate in MoCE's place against MoCE handicapped",
    mechanisms=("curvature-geometry",),
    judge=Interval("BA(MoCE) - BA(comparator peer)", above=0.0),
)
def moce_beats_best_peer(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    seed = _fresh(scale, seed)
    peer, chosen = _best_peer(scale)
    ours = _cv(scale, seed, "moce")
    if arm is Arm.CLAIM:
        ba_ours, ba_peer = _ba(ours), _arm_ba(scale, seed, peer)
    else:  # A/A of MoCE: replicate 1 in MoCE's place, MoCE (handicapped in the positive arm) as the comparator
        ba_ours = _arm_ba(scale, seed, "moce", replicate=1)
        ba_peer = _handicapped_ba(scale, seed, "moce", 0) if arm is Arm.POSITIVE else _ba(ours)
    others = {a: _arm_ba(scale, seed, a) for a in FITTED}
    others["hr-above-0 (training-free)"] = _hr_above_zero_ba(scale, seed)
    gap = ba_ours - ba_peer
    holds = gap > 0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "BA(MoCE) - BA(comparator peer)": gap,
            **{f"BA(MoCE) - BA({a})": ba_ours - v for a, v in others.items()},
            "BA MoCE": ba_ours,
            "BA MoCE fold sd": float(np.std(ours.balanced_accuracy)),
            "macro-F1 MoCE": float(np.mean(ours.macro_f1)),
        },
        baselines={f"BA {peer} ({chosen})": ba_peer, **{f"BA {a}": v for a, v in others.items()}},
        paper={"abstract": "EEG-MoCE achieves state-of-the-art performance"},
        elsewhere={f"gain over best baseline EAV / ISRUC / Cognitive, points {SOURCE}": "+14.14 / +3.34 / +7.98"},
        reason="" if holds else f"gap {gap:+.3f} to the comparator ({peer}, {chosen}; BA {ba_peer:.3f})",
        figures={
            "accuracy-per-arm": _accuracy_figure(
                {"moce": ours.balanced_accuracy, peer: _per_fold_ba(scale, seed, _fold_predictions(scale, seed, peer))}
            )
        },
    )


def _ablation_arms(scale: Scale, seed: int, arm: Arm, ablated: str, ours: str = "moce"):
    """The two ablation claims' arms: MoCE's and the ablated model's cross-validated runs, and the balanced
    accuracies their paired gap compares. Both controls put an independent replicate of the ablated model in
    MoCE's place (A/A); the positive control also takes the planted gain from the ablated model."""
    moce, other = _cv(scale, seed, ours), _cv(scale, seed, ablated)
    ba_ours, theirs = _ba(moce), _ba(other)
    if arm is not Arm.CLAIM:
        ba_ours = _arm_ba(scale, seed, ablated, replicate=1)
    if arm is Arm.POSITIVE:
        theirs = _handicapped_ba(scale, seed, ablated, 0)
    return moce, other, ba_ours, theirs


@claim(
    "eegmoce/eegmat-learnable-curvature-helps-v5",
    statement="On EEGMAT (rest vs arithmetic, leave-subjects-out, per-subject z-scoring), the balanced accuracy "
    "of MoCE with learned per-expert curvatures exceeds the same model with the curvatures frozen at their equal "
    "initialisation and a learnable per-modality bias on the layer-1 attention logits in their place, trained at "
    "the curvatures' own rate (lr x curvature_lr_scale, same warm-up and clip) and bounded to the range the "
    "curvature prior lambda log|K_j| can span ([-1.38, +0.90]), so the ablation keeps an equally fast and equally "
    "strong modality gate and removes curvature learning only; both arms train the domain BNs' scale at the "
    "curvatures' rate: paired gap > 0 (95 % interval over seeds, seed + "
    "4000). Reported beside it, whatever its direction: Kendall tau between the learned |K| of the EEG, ECG and "
    "HRV experts and their hierarchy (-delta_rel of each modality's encoder embedding of the held-out windows). "
    + PROTOCOL,
    paper="abstract: each modality gets an expert in a learnable-curvature hyperbolic space",
    control="A/A: curvature learning switched off in MoCE's arm: an independent replicate of the frozen-curvature "
    "+ learnable-gate model (its own initialisations and minibatches) in MoCE's place, so the gap scatters around 0 "
    "and must not be > 0",
    positive="an independent replicate of the frozen-curvature + learnable-gate model in MoCE's place, against "
    "that model handicapped by 3.34 points of accuracy",
    mechanisms=("curvature-geometry",),
    judge=Interval("BA(MoCE) - BA(fixed K + gate)", above=0.0),
)
def learnable_curvature_helps(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    seed = _fresh(scale, seed)
    moce, fixed, ours, ba_fixed = _ablation_arms(scale, seed, arm, "moce-fixed-k-gate")
    gap = ours - ba_fixed
    holds = gap > 0
    curv = np.mean(moce.curvatures, axis=0)  # (M,) |K| per expert, mean over folds
    names = _data(scale, seed).names
    delta = _embedded_delta(scale, seed)
    gates = np.mean([m.gate.detach().numpy() for m in fixed.models], axis=0)  # (M,) learned gate bias
    lams = np.array([np.logaddexp(0.0, m.layers[0].raw_lambda.item()) for m in moce.models])  # (folds,) softplus
    prior = np.mean(lams[:, None] * np.log(np.asarray(moce.curvatures)), axis=0)  # (M,) lambda log|K_j| per fold
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "BA(MoCE) - BA(fixed K + gate)": gap,
            "BA MoCE": ours,
            "|K| spread max - min": float(np.ptp(curv)),
            **{f"|K| {m}": float(k) for m, k in zip(names, curv, strict=True)},
            **{f"gate bias {m} (ablation)": float(g) for m, g in zip(names, gates, strict=True)},
            "lambda MoCE (learned prior weight)": float(lams.mean()),
            **{f"prior bias lambda log|K| {m} (MoCE)": float(b) for m, b in zip(names, prior, strict=True)},
            **{f"delta_rel {m} (embedded)": float(delta[m]) for m in names},
            "Kendall tau(|K|, -delta_rel)": kendall_tau(curv, -np.array([delta[m] for m in names])),
        },
        baselines={"BA fixed K + gate": ba_fixed},
        paper={"abstract": "an expert in a learnable-curvature hyperbolic space"},
        reason=""
        if holds
        else f"gap to frozen curvatures + gate {gap:+.3f} (learned |K| {np.round(curv, 3).tolist()})",
        figures={
            "curvature-ablation": _accuracy_figure(
                {"moce": moce.balanced_accuracy, "fixed K + gate": fixed.balanced_accuracy}
            )
        },
    )


@claim(
    "eegmoce/eegmat-domain-bn-helps-v5",
    statement="On EEGMAT (rest vs arithmetic, leave-subjects-out) with every channel z-scored over all subjects "
    "pooled (not per subject, so each subject keeps its own offsets and scales), the balanced accuracy of MoCE with "
    "domain-specific (per-subject) Lorentz BN, refitted on each held-out subject's unlabeled windows, exceeds the "
    "same model with pooled BN statistics (running averages at test time): paired gap > 0 (95 % interval over "
    "seeds, seed + 4000). Transductive: each held-out subject's BN is refitted on all its unlabeled windows, "
    "exactly 15 rest and 15 arithmetic per subject; the 12 subjects are the ones the tuning was chosen on (seed + "
    "4000 draws new folds and initialisations, not new subjects)",
    paper="method (per the notes, read in the paper and the authors' code): domain-specific Lorentz BN with "
    "source-free refitting on each test subject; the paper prints no number for it that we know of",
    control="A/A: domain BN switched off in MoCE's arm: an independent replicate of the pooled-BN model (its own "
    "initialisations and minibatches) in MoCE's place, so the gap scatters around 0 and must not be > 0",
    positive="an independent replicate of the pooled-BN model (its own initialisations and minibatches) in MoCE's "
    "place, against the pooled-BN model handicapped by 3.34 points of accuracy",
    mechanisms=("domain-bn-subject",),
    judge=Interval("BA(MoCE) - BA(no domain BN), pooled z-scoring", above=0.0),
)
def domain_bn_helps(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    moce, pooled, ours, ba_pooled = _ablation_arms(
        scale, _fresh(scale, seed), arm, "moce-no-dbn:global", ours="moce:global"
    )
    gap = ours - ba_pooled
    holds = gap > 0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"BA(MoCE) - BA(no domain BN), pooled z-scoring": gap, "BA MoCE (pooled z-scoring)": ours},
        baselines={"BA no domain BN (pooled z-scoring)": ba_pooled},
        elsewhere={"source-free adaptation [authors' code, read only]": "BN statistics refitted per test subject"},
        reason="" if holds else f"gap to pooled BN {gap:+.3f}",
        figures={
            "domain-bn-ablation": _accuracy_figure(
                {"moce": moce.balanced_accuracy, "no domain BN": pooled.balanced_accuracy}
            )
        },
    )


# ------------------------------------------------------------------------------------ mechanisms


def _embedded_delta(scale: Scale, seed: int) -> dict[str, float]:
    """delta_rel of each modality's encoder embedding (MoCE's trained encoders) of the held-out windows, mean
    over folds (the paper measures the hierarchy on embedded features; sampled 4-point condition)."""
    from icml26.eegmoce.data import gromov_delta
    from icml26.eegmoce.model import embeddings

    cfg = PRESETS[scale.value]

    def make():
        d, out = _data(scale, seed), []
        for f, (model, (_, te)) in enumerate(zip(_cv(scale, seed, "moce").models, _folds(scale, seed), strict=True)):
            with _one_thread():
                emb = embeddings(model, d.subset(te))
            pick = np.random.default_rng([seed, 3, f]).choice(te.size, min(cfg.delta_points, te.size), replace=False)
            out.append(
                {
                    m: gromov_delta(x[pick], cfg.delta_quadruples, np.random.default_rng([seed, 4, f]))[1]
                    for m, x in emb.items()
                }
            )
        return {m: float(np.mean([o[m] for o in out])) for m in out[0]}

    return _cached(("delta", scale.value, seed), make)


def _changed(scale: Scale, seed: int, sabotage: str, arm: str = "moce") -> float:
    """Fraction of MoCE's held-out predictions (all folds) that a test-time sabotage changes."""
    plain, sabotaged = _fold_predictions(scale, seed, arm), _fold_predictions(scale, seed, arm, sabotage)
    return float(np.mean(np.concatenate([a != b for a, b in zip(plain, sabotaged, strict=True)])))


@mechanism(
    "curvature-geometry",
    component="the geometry of the per-modality learnable curvatures |K_m|: each Lorentz expert's space, the "
    "projection to the fusion space and the attention temperatures tau_0 / sqrt|K_m| (the fusion prior "
    "lambda log|K_j|, a modality gate, is held at the learned |K| throughout)",
    measures="fraction of MoCE's held-out predictions that change when the geometry uses |K| = 1 for every expert, "
    "minus the fraction that change when it uses the |K| an independent replicate of MoCE learned for each expert "
    "on the same fold (A/A reference; the prior held at the learned |K| in both): whether the learned curvature "
    "shapes the experts' geometry beyond its seed-to-seed noise, not only the gate its prior provides",
    above=0.05,
)
def curvature_probe(scale: Scale, seed: int) -> dict[str, float]:
    seed = _fresh(scale, seed)  # the claims' models
    names = _data(scale, seed).names
    curv = np.mean(_cv(scale, seed, "moce").curvatures, axis=0)  # (M,) mean over folds
    unit, aa = _changed(scale, seed, "unit-curvature"), _changed(scale, seed, "replicate-curvature")
    return {
        "curvature-geometry": unit - aa,
        "changed by |K| = 1 (prior fixed)": unit,
        "changed by the replicate's |K| (A/A reference, prior fixed)": aa,
        "changed by rotating |K| across experts (prior fixed)": _changed(scale, seed, "rotate-curvature"),
        **{f"|K| {m}": float(k) for m, k in zip(names, curv, strict=True)},
        "|K| spread max - min": float(np.ptp(curv)),
        "EEG expert the steepest (1 = yes)": float(names[int(np.argmax(curv))] == "eeg"),
    }


@mechanism(
    "domain-bn-subject",
    component="domain-specific Lorentz BN refitted on each held-out subject's unlabeled trials (inputs z-scored "
    "over all subjects pooled, as in the domain-BN claim)",
    measures="fraction of MoCE's held-out predictions that change when each held-out subject's BN is refitted on "
    "another subject's unlabeled trials, minus the fraction that differ between refits on two disjoint random "
    "halves of the subject's own trials (A/A reference: what refitting on other windows of the same subject "
    "changes)",
    above=0.1,
)
def domain_bn_probe(scale: Scale, seed: int) -> dict[str, float]:
    seed = _fresh(scale, seed)
    wrong = _changed(scale, seed, "wrong-subject-bn", arm="moce:global")
    a = _fold_predictions(scale, seed, "moce:global", "half-a-bn")
    b = _fold_predictions(scale, seed, "moce:global", "half-b-bn")
    halves = float(np.mean(np.concatenate([x != y for x, y in zip(a, b, strict=True)])))
    return {
        "domain-bn-subject": wrong - halves,
        "changed by another subject's BN": wrong,
        "differing between own-half refits (A/A reference)": halves,
    }


# ------------------------------------------------------------------------------------ measures, both ways


def _gap_readings(seed: int) -> dict[str, float]:
    """The accuracy claims' statistic, the fold-mean balanced-accuracy gap, on the small data's folds (4 x 90
    held-out EEGMAT windows; smoke's are too coarse for a 3.34-point gain): of the truth (the
    labels) over the tangent space; of the tangent space over itself handicapped by 1.67, 3.34 (the planted gain)
    and 6.68 points; and the null: the mean gap of 1,000 pairs of independent uniformly random answerers (one pair
    scatters by about +-0.04; the mean of 1,000 by +-0.0015: the check asks whether the measure is unbiased at the
    null, not how noisy 360 windows are)."""
    scale = Scale.SMALL
    d, splits = _data(scale, seed), _folds(scale, seed)
    tangent = _fold_predictions(scale, seed, "tangent-space")
    ba_tangent = _fold_ba(scale, seed, tangent)
    out = {"truth": _fold_ba(scale, seed, [d.y[te] for _, te in splits]) - ba_tangent}
    for gain in (PLANTED_GAIN / 2, PLANTED_GAIN, 2 * PLANTED_GAIN):
        rng = np.random.default_rng([seed, 33, 0])
        worse = [handicap(p, d.y[te], gain, rng) for p, (_, te) in zip(tangent, splits, strict=True)]
        out[f"planted {100 * gain:.3g} points"] = ba_tangent - _fold_ba(scale, seed, worse)
    rng = np.random.default_rng([seed, 5])

    def random_ba(y):  # (1000,) balanced accuracy of 1,000 uniformly random answerers on labels y
        pred = rng.integers(0, d.n_classes, (1000, len(y)))
        return np.mean([(pred[:, y == c] == c).mean(1) for c in np.unique(y)], axis=0)

    pairs = np.mean([random_ba(d.y[te]) - random_ba(d.y[te]) for _, te in splits], axis=0)  # (1000,) fold means
    out["null"] = float(np.mean(pairs))
    return out


def _gap_check(seed: int) -> dict[str, float]:
    """The gap of the truth scores best; the null reads 0 +- 0.01 (the claims' bar is 0, the planted gain 0.0334)."""
    r = _gap_readings(seed)
    return {"truth": r["truth"], "planted 3.34 points": r["planted 3.34 points"], "null": r["null"]}


def _gap_size_check(seed: int) -> dict[str, float]:
    """A planted gain reads at its size: |reading - 0.0334| for handicaps of 3.34 points (truth: three of a fold's
    90 windows), 1.67 and 6.68 points (alternatives) and the null (about 0.0334 off)."""
    r = {k: abs(v - PLANTED_GAIN) for k, v in _gap_readings(seed).items() if k != "truth"}
    return {"truth": r.pop("planted 3.34 points"), **r}


def _delta_check(seed: int) -> dict[str, float]:
    """Gromov delta_rel (the hierarchy measure reported beside the curvature claim; lower = more tree-like) of the
    generator's noiseless leaf codes on one draw of tree nodes: a steep tree (decay 0.3, the truth), audio's
    shallow tree (decay 0.85), and the null: as many Gaussian points in the same dimension (no hierarchy)."""
    from icml26.eegmoce.data import _tree_codes, gromov_delta, level_weights

    def rel(x):
        return gromov_delta(x, 5000, np.random.default_rng([seed, 7]))[1]

    def codes(decay):  # the same tree nodes for every decay: only the level weights differ
        return _tree_codes(np.random.default_rng([seed, 6]), 3, 3, 24, level_weights(decay, 3))

    return {
        "truth": rel(codes(0.3)),
        "audio's tree, decay 0.85": rel(codes(0.85)),
        "null": rel(np.random.default_rng([seed, 8]).standard_normal((27, 24))),
    }


MEASURES = [
    MeasureCheck("fold-mean balanced-accuracy gap", _gap_check, null_band=(-0.01, 0.01), margin=0.01),
    MeasureCheck(
        "|balanced-accuracy gap - 0.0334| of a planted 3.34 points",
        _gap_size_check,
        null_band=(PLANTED_GAIN - 0.01, PLANTED_GAIN + 0.01),
        higher_is_better=False,
        margin=0.005,
    ),
    MeasureCheck("Gromov delta_rel", _delta_check, null_band=(0.25, 0.45), higher_is_better=False, margin=0.02),
]
MECHANISMS = [curvature_probe, domain_bn_probe]
CLAIMS = [moce_beats_best_peer, learnable_curvature_helps, domain_bn_helps]
