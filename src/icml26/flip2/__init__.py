"""flip2 — protein-fitness benchmark: datasets with provenance, FLIP2 split families, baselines, leaderboard.

Implements the benchmark harness of "FLIP2: Expanding Protein Fitness Landscape Benchmarks for Real-World
Machine Learning Applications" (ICML 2026): a registry of variant tables (the FLIP v1 GB1 landscape shipped
with its published splits, mavenn's GB1 / Aβ42 / TDP-43 scans, user FLIP2 CSVs, synthetic Potts landscapes
with known ground truth), the split families as functions of any table (:mod:`icml26.flip2.splits`), the
paper's models (one-hot ridge, zsRidge, zero-shot scores, FLIP's CNN, a small pretrained-vs-naive
transformer, Levenshtein and BLOSUM62, an ESM-2 code path) and metrics (Spearman, NDCG, scaled MSE).
"""

# Each public name and its module, imported on first use: pandas and torch load only when their parts are used,
# so the command line's parser (and --help) starts fast (PEP 562).
from icml26._util.lazy import lazy_exports

_LAZY = {
    "VariantTable": "data",
    "load_flip2_csv": "data",
    "load_flip_gb1": "data",
    "load_mavenn": "data",
    "make_synthetic": "data",
    "ModelFactory": "harness",
    "run_leaderboard": "harness",
    "write_leaderboard": "harness",
    "ndcg": "metrics",
    "spearman": "metrics",
    "CNN": "models",
    "OneHotRidge": "models",
    "TinyTransformer": "models",
    "ZeroShot": "models",
    "ZSRidge": "models",
    "Split": "splits",
    "standard_splits": "splits",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


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
