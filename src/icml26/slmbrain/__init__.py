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

Command line: ``icml26 slmbrain simulate|features|encode|compress|probe``.
"""

from icml26.slmbrain.compress import compress_model, gptq_quantize, magnitude_prune, rtn_quantize, wanda_prune
from icml26.slmbrain.config import PRESETS
from icml26.slmbrain.encoding import encode, lanczos_downsample, make_delays, noise_ceiling
from icml26.slmbrain.world import build_world, student

__all__ = [
    "PRESETS",
    "build_world",
    "compress_model",
    "encode",
    "gptq_quantize",
    "lanczos_downsample",
    "magnitude_prune",
    "make_delays",
    "noise_ceiling",
    "rtn_quantize",
    "student",
    "wanda_prune",
]
