"""Claims on real fMRI (issue 44): language models against the 28 Alice listeners (6 language ROIs).

Every comparison is paired over listeners: per listener, the held-out r (contiguous-block CV, layer chosen on the
training blocks, mean over the 6 ROIs) of one model minus another's; a claim holds on a seed when the 95 %
Student-t interval of that difference over the listeners lies on the claimed side of its bar. The seed changes the
students' initialisation and training batches, the untrained twins and the calibration batches (the fMRI is
fixed), so a claim that holds on every seed is not one lucky initialisation. Each result also reports the
smallest difference the comparison could detect with these listeners (80 % power, two-sided 5 %: the subject-level
spread of the paired difference times ``t_.975 + t_.8`` over ``sqrt(S)``).

- ``alice-learned-gain-v1`` (the size claim, issue 44 item 3a): the widest student's trained-minus-untrained gain
  exceeds 0.01; the gain of every width (and, at ``small``, SmolLM2-135M's against its untrained twin) and the
  circular-shift null are reported. Negative (A/A): two untrained students of that width with their own
  initialisations. Positive: that A/A pair with a story-aligned signal planted in the BOLD along one random
  direction of the first twin's features, of amplitude 1.5x the bar.
- ``alice-compression-v1`` (item 3b): RTN, GPTQ, magnitude and Wanda pruning of the widest student's blocks, and
  RTN and magnitude pruning of everything (embeddings and LM head too), each at the strength where its held-out
  LM loss rises by 2 % and by 10 %, change its r by less than 0.02 (every interval inside +-0.02). Negative: the
  untrained student in every compressed model's place. Positive: the trained model
  with its held-out predictions degraded by noise that lowers its group r by 0.01 (half the band) in every
  compressed model's place.
- ``alice-gptq-v1`` (item 3b, "where the methods differ"): at 3 bits, where GPTQ's LM loss is lower than RTN's,
  GPTQ lowers r more than RTN does (the paper's exception), by more than 0.01. Negative (A/A): GPTQ3 on an
  independent calibration batch in RTN3's place. Positive: that A/A pair with the first GPTQ3's held-out
  predictions degraded by noise that lowers its group r by 1.5x the bar.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from scipy import stats

from icml26.claims import Arm, ClaimResult, Scale, claim, mechanism
from icml26.slmbrain import alice as A
from icml26.slmbrain.compress import calibration_batch, compress_model, match_damage

AA_STREAM = 7919  # the seed offset an A/A twin draws its own randomness from


@dataclass(frozen=True)
class Real:
    subjects: int | None  # first N listeners (None: all 28)
    n_tr: int | None  # first N volumes (None: all 362)
    widths: tuple[int, ...]
    steps: int
    folds: int
    gap: int
    smollm2: bool
    shifts: int


REAL = {
    Scale.SMOKE: Real(subjects=8, n_tr=200, widths=(16, 32), steps=300, folds=4, gap=3, smollm2=False, shifts=2),
    Scale.SMALL: Real(
        subjects=None, n_tr=None, widths=(16, 64, 128), steps=800, folds=5, gap=5, smollm2=True, shifts=20
    ),
}
REAL[Scale.PAPER] = REAL[Scale.SMALL]
_CACHE: dict = {}


def _story(scale: Scale) -> A.Story:
    key = ("story", scale)
    if key not in _CACHE:
        cfg = REAL[scale]
        st = A.load_alice()
        if cfg.subjects is not None:
            st = st.subset(slice(0, cfg.subjects))
        if cfg.n_tr is not None:
            st = st.first_trs(cfg.n_tr)
        _CACHE[key] = st
    return _CACHE[key]


def _student(scale: Scale, width: int, seed: int, trained: bool):
    key = ("student", scale, width, seed, trained)
    if key not in _CACHE:
        _CACHE[key] = A.train_student(width, REAL[scale].steps, seed, trained=trained)
    return _CACHE[key]


def _features(states: np.ndarray, story: A.Story) -> dict[str, np.ndarray]:
    layers = A.pick_layers(states.shape[0], "spread")
    F = A.tr_features(states[layers], story)
    return {f"hidden_{i}": F[k] for k, i in enumerate(layers)}


def _encode_model(scale: Scale, model, vocab, layer: str | None = None) -> A.StoryEncoding:
    """Held-out encoding of a word-level student (all of its hidden states, or one)."""
    from icml26.slmbrain.lm import word_states

    story = _story(scale)
    feats = _features(word_states(model, A.encode_words(story.words, vocab)), story)
    if layer is not None:
        feats = {layer: feats[layer]}
    cfg = REAL[scale]
    return A.encode_story(feats, story, folds=cfg.folds, gap=cfg.gap)


def _student_encoding(scale: Scale, width: int, seed: int, trained: bool) -> A.StoryEncoding:
    key = ("enc", scale, width, seed, trained)
    if key not in _CACHE:
        model, vocab, _ = _student(scale, width, seed, trained)
        _CACHE[key] = _encode_model(scale, model, vocab)
    return _CACHE[key]


def paired(diff: np.ndarray) -> dict[str, float]:
    """Mean, 95 % t-interval and the smallest detectable difference (80 % power) of per-listener differences."""
    S = len(diff)
    sd = float(np.std(diff, ddof=1))
    half = stats.t.ppf(0.975, S - 1) * sd / np.sqrt(S)
    mde = (stats.t.ppf(0.975, S - 1) + stats.t.ppf(0.8, S - 1)) * sd / np.sqrt(S)
    m = float(np.mean(diff))
    return {"mean": m, "lo": m - half, "hi": m + half, "mde": float(mde)}


def _plant_signal(story: A.Story, feats: dict[str, np.ndarray], amplitude: float, seed: int) -> A.Story:
    """The story with a signal of ``amplitude`` (in units of the z-scored BOLD) added to every listener and ROI: one
    random unit-variance direction of ``feats`` (its middle hidden state), random sign per ROI."""
    rng = np.random.default_rng(seed + 2 * AA_STREAM)
    F = feats[sorted(feats)[len(feats) // 2]]
    s = F @ rng.standard_normal(F.shape[1])
    s = (s - s.mean()) / s.std()
    signs = rng.choice([-1.0, 1.0], len(story.rois))
    bold = story.bold + amplitude * s[None, :, None] * signs[None, None, :]
    return A.Story(story.subjects, bold, story.nuisance, story.words, story.onsets, story.tr_times, story.rois)


def _degraded_r(enc: A.StoryEncoding, drop: float, seed: int) -> np.ndarray:
    """(S, R) r after adding independent noise to the held-out predictions, sized so that the group r falls by
    ``drop`` (r' = r / sqrt(1 + k) for noise of k times the prediction's variance); no noise can lower r below 0."""
    r0 = float(enc.r.mean())
    k = (r0 / (r0 - drop)) ** 2 - 1 if r0 > drop else 1e6
    rng = np.random.default_rng(seed + 3 * AA_STREAM)
    noisy = [p + np.sqrt(k) * p.std(0, keepdims=True) * rng.standard_normal(p.shape) for p in enc.predictions]
    return A.block_r(noisy, enc.targets)


# ------------------------------------------------------------------------------------------ learned gain
GAIN_BAR = 0.01


@claim(
    "slmbrain/alice-learned-gain-v1",
    statement="On real fMRI (Brennan et al. 2016: listeners of Alice chapter 1, 6 language ROIs; all 28 at small), "
    "the widest word-level student GPT trained on the book's other chapters predicts held-out BOLD better than the "
    "same architecture untrained: per-listener r difference (mean of ROIs; contiguous-block CV, layer chosen on the "
    "training blocks) > 0.01, its 95 % interval over listeners above 0.01 on every seed; gains of every width, "
    "SmolLM2-135M vs its untrained twin (small) and the circular-shift null reported",
    paper="1B models degrade, 3B SLMs ~ LLMs up to 14B: brain alignment saturates at modest scale (abstract)",
    control="A/A: a second untrained student of the same width (its own initialisation) in the trained one's place",
    positive="the A/A pair with a story-aligned signal planted in every listener's BOLD along one random direction "
    "of the first twin's features, amplitude 0.015 (1.5x the bar) of the z-scored BOLD",
    mechanisms=("alice-story-alignment",),
)
def alice_learned_gain(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = REAL[scale]
    story = _story(scale)
    widest = cfg.widths[-1]
    measured, baselines, figures = {}, {}, {}
    if arm is Arm.CLAIM:
        gains = {}
        for w in cfg.widths:
            r_t = _student_encoding(scale, w, seed, True).subject_r
            r_u = _student_encoding(scale, w, seed, False).subject_r
            gains[w] = paired(r_t - r_u)
            baselines[f"family: r trained d={w}"] = float(r_t.mean())
            baselines[f"family: r untrained d={w}"] = float(r_u.mean())
            baselines[f"family: gain d={w}"] = gains[w]["mean"]
        stat = gains[widest]
        measured["r first"] = baselines[f"family: r trained d={widest}"]
        measured["r second"] = baselines[f"family: r untrained d={widest}"]
        if cfg.smollm2:
            baselines.update(_smollm2_numbers(scale))
        figures["r_vs_size"] = _size_figure(cfg, baselines)
    else:
        enc_a = _student_encoding(scale, widest, seed, False)
        model_b, vocab_b, _ = _student(scale, widest, seed + AA_STREAM, False)
        if arm is Arm.NEGATIVE:
            r_a, r_b = enc_a.subject_r, _student_encoding(scale, widest, seed + AA_STREAM, False).subject_r
        else:
            from icml26.slmbrain.lm import word_states

            model_a, vocab_a, _ = _student(scale, widest, seed, False)
            feats_a = _features(word_states(model_a, A.encode_words(story.words, vocab_a)), story)
            planted = _plant_signal(story, feats_a, 1.5 * GAIN_BAR, seed)
            feats_b = _features(word_states(model_b, A.encode_words(story.words, vocab_b)), story)
            r_a = A.encode_story(feats_a, planted, folds=cfg.folds, gap=cfg.gap).subject_r
            r_b = A.encode_story(feats_b, planted, folds=cfg.folds, gap=cfg.gap).subject_r
        stat = paired(r_a - r_b)
        measured["r first"], measured["r second"] = float(r_a.mean()), float(r_b.mean())
    holds = stat["lo"] > GAIN_BAR
    measured = {
        f"gain of the widest (d={widest})": stat["mean"],
        "95% interval lo": stat["lo"],
        "95% interval hi": stat["hi"],
        "smallest detectable gain": stat["mde"],
        **measured,
    }
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={"3B SLMs ~ LLMs up to 14B; 1B degrade (abstract)": "qualitative"},
        figures=figures,
        reason=f"{len(story.subjects)} listeners, {story.bold.shape[1]} volumes; gain {stat['mean']:.4f} "
        f"[{stat['lo']:.4f}, {stat['hi']:.4f}] vs bar {GAIN_BAR}; detectable {stat['mde']:.4f}",
    )


def _size_figure(cfg: Real, numbers: dict[str, float]):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4))
    for kind, style in (("trained", "o-"), ("untrained", "s--")):
        ax.plot(cfg.widths, [numbers[f"family: r {kind} d={w}"] for w in cfg.widths], style, label=f"student, {kind}")
    if "SmolLM2-135M: r" in numbers:
        ax.plot([576], [numbers["SmolLM2-135M: r"]], "r*", ms=12, label="SmolLM2-135M (d=576)")
        ax.plot([576], [numbers["SmolLM2 untrained: r"]], "kx", ms=9, label="SmolLM2 untrained")
    ax.set_xscale("log", base=2)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("model width d")
    ax.set_ylabel("held-out r (mean of 6 ROIs, listeners)")
    ax.set_title("Alice fMRI: predictivity vs model size", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _smollm2_numbers(scale: Scale) -> dict[str, float]:
    """SmolLM2-135M and its untrained twin (seed 0; deterministic, so computed once per process)."""
    key = ("smollm2", scale)
    if key not in _CACHE:
        from icml26.slmbrain.lm import hf_word_states

        story, cfg = _story(scale), REAL[scale]
        out = {}
        try:
            encs = {}
            for trained in (True, False):
                model, tok = A.load_smollm2(trained, 0)
                states = hf_word_states(model, tok, story.words, ctx=128)
                if trained:
                    states_trained = states
                encs[trained] = A.encode_story(_features(states, story), story, folds=cfg.folds, gap=cfg.gap)
            g = paired(encs[True].subject_r - encs[False].subject_r)
            chosen = encs[True].layers
            modal = max(set(chosen), key=chosen.count)
            profile = {}
            for name, F in _features(states_trained, story).items():  # the layer profile, one layer at a time
                r = A.encode_story(F, story, folds=cfg.folds, gap=cfg.gap).subject_r
                profile[f"SmolLM2 layer profile: r {name}"] = float(r.mean())
            best = paired(A.encode_story(_features(states_trained, story)[modal], story, folds=cfg.folds,
                                         gap=cfg.gap).subject_r)  # fmt: skip
            out = {
                **profile,
                f"SmolLM2 modal CV layer ({modal}) r lo": best["lo"],
                f"SmolLM2 modal CV layer ({modal}) r hi": best["hi"],
                "SmolLM2 share of folds choosing it": chosen.count(modal) / len(chosen),
            }
            out |= {"SmolLM2-135M: r": float(encs[True].r.mean()), "SmolLM2 untrained: r": float(encs[False].r.mean()),
                   "SmolLM2 gain": g["mean"], "SmolLM2 gain lo": g["lo"], "SmolLM2 gain hi": g["hi"]}  # fmt: skip
        except ModuleNotFoundError:
            out = {}
        _CACHE[key] = out
    return _CACHE[key]


@mechanism(
    "alice-story-alignment",
    component="the story alignment of the widest trained student's word features (what the learned gain rides on)",
    measures="group-mean held-out r of the widest trained student minus the mean r of the same features circularly "
    "shifted in time (the permutation null: same features and autocorrelation, alignment destroyed)",
    above=0.01,
)
def alice_story_alignment(scale: Scale, seed: int) -> dict[str, float]:
    cfg = REAL[scale]
    story = _story(scale)
    model, vocab, _ = _student(scale, cfg.widths[-1], seed, True)
    enc = _student_encoding(scale, cfg.widths[-1], seed, True)
    from icml26.slmbrain.lm import word_states

    feats = _features(word_states(model, A.encode_words(story.words, vocab)), story)
    best = max(set(enc.layers), key=enc.layers.count)
    null = A.shift_null({best: feats[best]}, story, cfg.shifts, seed, folds=cfg.folds, gap=cfg.gap)
    p = (1 + np.sum(null >= enc.r.mean())) / (1 + len(null))
    return {"alice-story-alignment": float(enc.r.mean() - null.mean()), "r aligned": float(enc.r.mean()),
            "r shifted (mean)": float(null.mean()), "shift-null p": float(p)}  # fmt: skip


# ------------------------------------------------------------------------------------------ compression
BAND = 0.02
TARGETS = (0.02, 0.10)
METHODS = {  # name -> (method, everything: embeddings and LM head too, strength range: 8 - bits or sparsity)
    "RTN": ("rtn", False, (0.0, 6.0)),
    "GPTQ": ("gptq", False, (0.0, 6.0)),
    "magnitude": ("magnitude", False, (0.0, 0.98)),
    "Wanda": ("wanda", False, (0.0, 0.98)),
    "RTN (all)": ("rtn", True, (0.0, 6.0)),
    "magnitude (all)": ("magnitude", True, (0.0, 0.98)),
}


def _book_ids(vocab):
    words = A.book_words()
    ids = A.encode_words(words, vocab)
    cut = int(0.9 * len(ids))
    return ids[:cut], ids[cut:]


def _compress(model, method: str, strength: float, calib, everything: bool = False):
    m = copy.deepcopy(model)
    if method == "rtn":
        compress_model(m, method, bits=8 - strength, everything=everything)
    elif method == "gptq":
        compress_model(m, method, bits=8 - strength, calib=calib)
    elif strength > 0:
        compress_model(m, method, sparsity=strength, calib=None if everything else calib, everything=everything)
    return m


def matched(scale: Scale, seed: int) -> dict:
    """Per (method, target): (strength, achieved relative LM-loss increase, compressed model), cached."""
    key = ("matched", scale, seed)
    if key not in _CACHE:
        from icml26.slmbrain.lm import lm_loss

        model, vocab, _ = _student(scale, REAL[scale].widths[-1], seed, True)
        train_ids, held = _book_ids(vocab)
        calib = calibration_batch(train_ids, 32, model.ctx, seed=seed)
        out = {}
        for name, (method, everything, (lo, hi)) in METHODS.items():
            for target in TARGETS:
                out[name, target] = match_damage(
                    lambda s, method=method, everything=everything: _compress(model, method, s, calib, everything),
                    lambda m: lm_loss(m, held),
                    target,
                    lo,
                    hi,
                )
        _CACHE[key] = out
    return _CACHE[key]


@claim(
    "slmbrain/alice-compression-v1",
    statement="On the Alice listeners, RTN, GPTQ, magnitude and Wanda pruning of the widest student's blocks (and RTN "
    "and magnitude of everything, embeddings and LM head too), each at the bit width / sparsity where its held-out "
    "LM loss rises by 2 % and by 10 %, change its held-out r (mean of ROIs, its uncompressed layer choice) by less "
    "than 0.02: every per-listener 95 % interval of r(compressed) - "
    "r(full) inside +-0.02",
    paper="brain alignment is remarkably robust to compression: most quantisation and pruning methods preserve "
    "neural predictivity (abstract)",
    control="the untrained student of the same width in every compressed model's place",
    positive="the full model's held-out predictions with noise that lowers its group r by 0.01 (half the band) in "
    "every compressed model's place",
    mechanisms=("alice-story-alignment", "alice-compression-damage"),
)
def alice_compression(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    widest = REAL[scale].widths[-1]
    full = _student_encoding(scale, widest, seed, True)
    layer = max(set(full.layers), key=full.layers.count)
    full_one = _cached_one_layer(scale, seed, layer)
    measured, worst = {}, 0.0
    for (name, target), (strength, rel, model) in matched(scale, seed).items():
        if arm is Arm.NEGATIVE:
            r = _student_encoding(scale, widest, seed, False).subject_r
        elif arm is Arm.POSITIVE:
            r = _degraded_r(full_one, BAND / 2, seed).mean(1)
        else:
            _, vocab, _ = _student(scale, widest, seed, True)
            r = _encode_model(scale, model, vocab, layer).subject_r
        d = paired(r - full_one.subject_r)
        tag = f"{name} +{round(100 * target)}%"
        measured[f"dr {tag}"] = d["mean"]
        measured[f"dr {tag} lo"], measured[f"dr {tag} hi"] = d["lo"], d["hi"]
        measured[f"strength {tag}"] = (8 - strength) if METHODS[name][0] in ("rtn", "gptq") else strength
        measured[f"loss rise {tag}"] = rel
        worst = max(worst, abs(d["lo"]), abs(d["hi"]))
        measured.setdefault("smallest detectable dr (max)", 0.0)
        measured["smallest detectable dr (max)"] = max(measured["smallest detectable dr (max)"], d["mde"])
    holds = worst < BAND
    figures = {"r_vs_damage": _damage_figure(measured, float(full_one.r.mean()))} if arm is Arm.CLAIM else {}
    return ClaimResult(
        "holds" if holds else "fails",
        figures=figures,
        measured={"widest |interval end|": worst, "r full": float(full_one.r.mean()), **measured},
        paper={"most quantisation and pruning methods preserve predictivity (abstract)": "qualitative"},
        reason=f"largest |interval end| {worst:.4f} vs band {BAND} (strength: bits for RTN/GPTQ, sparsity else)",
    )


def _damage_figure(measured: dict[str, float], r_full: float):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4))
    for name, marker in zip(METHODS, "osD^vP", strict=True):
        tags = [f"{name} +{round(100 * t)}%" for t in TARGETS]
        x = [0.0] + [100 * measured[f"loss rise {t}"] for t in tags]
        y = [r_full] + [r_full + measured[f"dr {t}"] for t in tags]
        err = [0.0] + [(measured[f"dr {t} hi"] - measured[f"dr {t} lo"]) / 2 for t in tags]
        ax.errorbar(x, y, yerr=err, marker=marker, capsize=2, label=name)
    ax.axhspan(r_full - BAND, r_full + BAND, color="grey", alpha=0.15, label="+-0.02 band")
    ax.set_xlabel("held-out LM-loss increase [%]")
    ax.set_ylabel("held-out r (mean of ROIs)")
    ax.set_title("Alice fMRI: predictivity vs compression damage (widest student)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _cached_one_layer(scale: Scale, seed: int, layer: str) -> A.StoryEncoding:
    key = ("one", scale, seed, layer)
    if key not in _CACHE:
        model, vocab, _ = _student(scale, REAL[scale].widths[-1], seed, True)
        _CACHE[key] = _encode_model(scale, model, vocab, layer)
    return _CACHE[key]


@mechanism(
    "alice-compression-damage",
    component="the compressions of the widest student (RTN, GPTQ, magnitude, Wanda on its transformer blocks; RTN and "
    "magnitude also on everything, embeddings and LM head included): the damage the compression claim measures",
    measures="share of the six methods whose matched setting reaches at least half the +10 % held-out LM-loss "
    "target (a method that cannot damage the model has nothing to be robust to), with each method's achieved rise; "
    "live when at least two of the six can be tested",
    above=0.3,
)
def alice_compression_damage(scale: Scale, seed: int) -> dict[str, float]:
    got = {name: rel for (name, target), (_, rel, _) in matched(scale, seed).items() if target == max(TARGETS)}
    share = float(np.mean([rel >= max(TARGETS) / 2 for rel in got.values()]))
    return {"alice-compression-damage": share, **{f"loss rise at the strongest, {k}": v for k, v in got.items()}}


GPTQ_BAR = 0.01
GPTQ_BITS = 3


def _quantised_r(scale: Scale, seed: int, method: str, calib_seed: int) -> tuple[np.ndarray, float, A.StoryEncoding]:
    key = ("q", scale, seed, method, calib_seed)
    if key not in _CACHE:
        from icml26.slmbrain.lm import lm_loss

        widest = REAL[scale].widths[-1]
        model, vocab, _ = _student(scale, widest, seed, True)
        full = _student_encoding(scale, widest, seed, True)
        layer = max(set(full.layers), key=full.layers.count)
        train_ids, held = _book_ids(vocab)
        calib = calibration_batch(train_ids, 32, model.ctx, seed=calib_seed)
        m = _compress(model, method, 8 - GPTQ_BITS, calib)
        enc = _encode_model(scale, m, vocab, layer)
        _CACHE[key] = (enc.subject_r, lm_loss(m, held) / lm_loss(model, held) - 1, enc)
    return _CACHE[key]


@claim(
    "slmbrain/alice-gptq-v1",
    statement="On the Alice listeners, at 3 bits (where GPTQ and RTN differ in LM loss) GPTQ lowers the widest "
    "student's held-out r more than RTN does: per-listener r(RTN3) - r(GPTQ3) > 0.01, its 95 % interval above 0.01 "
    "on every seed (the paper's GPTQ exception, tested where the methods differ)",
    paper="GPTQ as a consistent exception (abstract)",
    control="A/A: GPTQ3 calibrated on an independent batch in RTN3's place",
    positive="the A/A pair with the first GPTQ3's held-out predictions degraded by noise that lowers its group r by "
    "0.015 (1.5x the bar)",
    mechanisms=("alice-story-alignment", "alice-gptq-differs"),
)
def alice_gptq(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    r_g, loss_g, enc_g = _quantised_r(scale, seed, "gptq", seed)
    if arm is Arm.CLAIM:
        r_other, loss_other, _ = _quantised_r(scale, seed, "rtn", seed)
    else:
        r_other, loss_other, _ = _quantised_r(scale, seed, "gptq", seed + AA_STREAM)
        if arm is Arm.POSITIVE:
            r_g = _degraded_r(enc_g, 1.5 * GPTQ_BAR, seed).mean(1)
    d = paired(r_other - r_g)
    return ClaimResult(
        "holds" if d["lo"] > GPTQ_BAR else "fails",
        measured={
            "r(other) - r(GPTQ3)": d["mean"],
            "95% interval lo": d["lo"],
            "95% interval hi": d["hi"],
            "smallest detectable difference": d["mde"],
            "loss rise GPTQ3": loss_g,
            "loss rise other": loss_other,
            "r GPTQ3": float(r_g.mean()),
            "r other": float(r_other.mean()),
        },
        paper={"GPTQ a consistent exception (abstract)": "qualitative"},
        reason=f"r(other) - r(GPTQ3) {d['mean']:.4f} [{d['lo']:.4f}, {d['hi']:.4f}]; LM-loss rise GPTQ3 "
        f"{loss_g:.3f}, other {loss_other:.3f}",
    )


@mechanism(
    "alice-gptq-differs",
    component="3-bit quantisation of the widest student's blocks, GPTQ against RTN: the difference the GPTQ claim "
    "is about",
    measures="|relative held-out LM-loss rise of GPTQ3 - that of RTN3| (live above 0.5 %: where the two methods "
    "leave the model in different states; below it the claim would test them where nothing differs)",
    above=0.005,
)
def alice_gptq_differs(scale: Scale, seed: int) -> dict[str, float]:
    _, loss_g, _ = _quantised_r(scale, seed, "gptq", seed)
    _, loss_r, _ = _quantised_r(scale, seed, "rtn", seed)
    return {"alice-gptq-differs": abs(loss_g - loss_r), "loss rise GPTQ3": loss_g, "loss rise RTN3": loss_r}


REAL_CLAIMS = [alice_learned_gain, alice_compression, alice_gptq]
REAL_MECHANISMS = [alice_story_alignment, alice_compression_damage, alice_gptq_differs]
