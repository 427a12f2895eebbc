"""slmbrain — Linguistic Properties and Model Scale in Brain Encoding: From Small to Compressed Language Models.

ICML 2026 (arXiv 2602.07547; no public code). How small can a language model be and still predict the brain?
The field's encoding pipeline (layerwise word features, Lanczos downsampling to TRs, FIR delays, voxelwise
ridge with cross-validated alpha via himalaya, held-out Pearson r normalised by a noise ceiling, ROI means, FDR,
the layer chosen by cross-validation on the training stories), a CPU compression toolkit (RTN int8/int4 per
channel, GPTQ from calibration text, magnitude and Wanda pruning) for any causal LM, layerwise linguistic
probes, and a synthetic world with ground truth:
a grammar with agreement and topics, a teacher LM whose contextual (non-lexical) states define a syntactic and a
semantic ROI, and a family of student LMs of increasing width.

Library::

    from icml26.slmbrain import PRESETS, build_world, student, encode, compress_model
    world = build_world(PRESETS["smoke"], seed=0)          # stories, teacher, fMRI (2 ROIs, repeats)
    m = student(world, 16, seed=0)                          # a trained student GPT of width 16

Real fMRI (:mod:`icml26.slmbrain.alice`): the 28 Alice listeners (Brennan et al. 2016; 6 language ROIs) or your
own story (a TextGrid and ROI time courses), contiguous-block cross-validation over time, a leave-one-subject-out
noise ceiling and a circular-shift permutation null::

    from icml26.slmbrain import encode_story, load_alice
    story = load_alice()                                     # bold (28, 362, 6), nuisance, words, onsets

Command line: ``icml26 slmbrain simulate|features|encode|compress|probe|alice``.
"""

from icml26._util.lazy import lazy_exports
from icml26.slmbrain.config import PRESETS

__all__ = [
    "PRESETS",
    "build_world",
    "compress_model",
    "encode",
    "encode_story",
    "gptq_quantize",
    "lanczos_downsample",
    "load_alice",
    "load_story",
    "magnitude_prune",
    "make_delays",
    "noise_ceiling",
    "rtn_quantize",
    "student",
    "wanda_prune",
]

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "build_world": "icml26.slmbrain.world",
    "compress_model": "icml26.slmbrain.compress",
    "encode": "icml26.slmbrain.encoding",
    "encode_story": "icml26.slmbrain.alice",
    "load_alice": "icml26.slmbrain.alice",
    "load_story": "icml26.slmbrain.alice",
    "gptq_quantize": "icml26.slmbrain.compress",
    "lanczos_downsample": "icml26.slmbrain.encoding",
    "magnitude_prune": "icml26.slmbrain.compress",
    "make_delays": "icml26.slmbrain.encoding",
    "noise_ceiling": "icml26.slmbrain.encoding",
    "rtn_quantize": "icml26.slmbrain.compress",
    "student": "icml26.slmbrain.world",
    "wanda_prune": "icml26.slmbrain.compress",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
