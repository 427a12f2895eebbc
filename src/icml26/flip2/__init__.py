"""flip2 — protein-fitness benchmark: datasets with provenance, FLIP2 split families, baselines, leaderboard.

Implements the benchmark harness of "FLIP2: Expanding Protein Fitness Landscape Benchmarks for Real-World
Machine Learning Applications" (ICML 2026): a registry of variant tables (the FLIP v1 GB1 landscape shipped
with its published splits, mavenn's GB1 / Aβ42 / TDP-43 scans, user FLIP2 CSVs, synthetic Potts landscapes
with known ground truth), the split families as functions of any table (:mod:`icml26.flip2.splits`), the
paper's models (one-hot ridge, zsRidge, zero-shot scores, FLIP's CNN, a small pretrained-vs-naive
transformer, Levenshtein and BLOSUM62, an ESM-2 code path) and metrics (Spearman, NDCG, scaled MSE).
"""

from icml26.flip2.data import VariantTable, load_flip2_csv, load_flip_gb1, load_mavenn, make_synthetic
from icml26.flip2.harness import ModelFactory, run_leaderboard, write_leaderboard
from icml26.flip2.metrics import ndcg, spearman
from icml26.flip2.models import CNN, OneHotRidge, TinyTransformer, ZeroShot, ZSRidge
from icml26.flip2.splits import Split, standard_splits

__all__ = [
    "CNN",
    "ModelFactory",
    "OneHotRidge",
    "Split",
    "TinyTransformer",
    "VariantTable",
    "ZSRidge",
    "ZeroShot",
    "load_flip2_csv",
    "load_flip_gb1",
    "load_mavenn",
    "make_synthetic",
    "ndcg",
    "run_leaderboard",
    "spearman",
    "standard_splits",
    "write_leaderboard",
]
