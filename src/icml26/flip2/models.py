"""FLIP2 baseline models, all with ``fit(table, train_idx, val_idx) -> self`` and ``predict(table, idx)``.

- :class:`OneHotRidge` -- ridge regression on a sparse one-hot encoding of the columns that vary;
- :class:`ZSRidge` -- "zsRidge": the same one-hot plus zero-shot score features (paper's simple winner);
- :class:`ZeroShot` -- an unsupervised score alone: a PSSM from a family MSA, BLOSUM62 substitution score,
  or minus the Levenshtein distance to the wild type (FLIP v1 baselines); or a PSSM from the split's
  training side (``"pssm-train"``: selected vs assayed letters), the prior real scans without an MSA allow;
- :class:`CNN` -- FLIP's CNN (one-hot -> Conv1d kernel 5 -> ReLU -> max-pool -> dense), fewer channels;
- :class:`TinyTransformer` -- a small masked-LM transformer, pretrained locally on a family MSA or random
  ("naive"), fine-tuned end to end with MSE on the scaled target (the paper's fine-tuned pLM, miniature);
- :func:`esm2_zero_shot` -- wild-type-marginal scores from a HuggingFace ``EsmForMaskedLM`` (any weights).

Supervised models are trained on targets z-scored with the training mean and sd; ``alpha`` / epochs are
chosen on the validation set (drawn from the training side of the split).
"""

from __future__ import annotations

import copy
import logging
import math

import numpy as np
from scipy import sparse

from icml26.flip2.config import MODEL_NAMES  # noqa: F401  (models.MODEL_NAMES: the names build_model takes)
from icml26.flip2.data import AA_INDEX, AMINO_ACIDS, CHAIN_SEP, VariantTable

logger = logging.getLogger(__name__)

ALPHAS = (1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)


def encode(sequences) -> np.ndarray:
    """Letters -> integer codes (N, L); the chain separator gets code 20."""
    lut = np.full(256, -1, dtype=np.int64)
    for a, i in AA_INDEX.items():
        lut[ord(a)] = i
    lut[ord(CHAIN_SEP)] = 20
    arr = np.frombuffer("".join(sequences).encode(), dtype=np.uint8).reshape(len(sequences), -1)
    X = lut[arr]
    if np.any(X < 0):
        raise ValueError("sequences hold letters outside the 20 amino acids")
    return X


def variable_columns(t: VariantTable) -> np.ndarray:
    """Positions where any sequence of the table (labels unused) differs from the first -> (P,) int."""
    X = encode(t.sequences)
    return np.flatnonzero(np.any(X != X[0], axis=0))


def one_hot(X: np.ndarray, q: int = 21) -> sparse.csr_matrix:
    """Sparse one-hot of integer codes (N, P) -> CSR (N, P*q)."""
    n, p = X.shape
    cols = (np.arange(p) * q + X).ravel()
    rows = np.repeat(np.arange(n), p)
    return sparse.csr_matrix((np.ones(n * p), (rows, cols)), shape=(n, p * q))


class _Scaled:
    """Target scaling with the training mean/sd (the paper's "scaled target")."""

    def _fit_scale(self, y):
        self.mu_, self.sd_ = float(np.mean(y)), float(np.std(y)) or 1.0
        return (y - self.mu_) / self.sd_


class OneHotRidge(_Scaled):
    """Ridge on sparse one-hot features; alpha chosen on the validation set from ``ALPHAS``."""

    name = "ridge"

    def __init__(self, alphas=ALPHAS):
        self.alphas = tuple(alphas)

    def _features(self, t: VariantTable, idx) -> sparse.csr_matrix:
        return one_hot(encode(t.sequences[idx])[:, self.cols_])

    def fit(self, t: VariantTable, train, val=()):
        from sklearn.linear_model import Ridge

        self.cols_ = variable_columns(t)
        Xtr, ytr = self._features(t, train), self._fit_scale(t.targets[train])
        best = (math.inf, self.alphas[0])
        if len(val) >= 2 and len(self.alphas) > 1:
            Xva, yva = self._features(t, val), (t.targets[val] - self.mu_) / self.sd_
            for a in self.alphas:
                m = Ridge(alpha=a, solver="sparse_cg", tol=1e-6).fit(Xtr, ytr)
                best = min(best, (float(np.mean((m.predict(Xva) - yva) ** 2)), a))
        self.alpha_ = best[1]
        self.model_ = Ridge(alpha=self.alpha_, solver="sparse_cg", tol=1e-6).fit(Xtr, ytr)
        return self

    def predict_scaled(self, t, idx):
        return self.model_.predict(self._features(t, idx))

    def predict(self, t, idx):
        return self.predict_scaled(t, idx) * self.sd_ + self.mu_


class ZeroShot:
    """An unsupervised fitness score; ``kind`` is ``"pssm"`` (needs ``msa``), ``"pssm-train"``, ``"blosum62"`` or
    ``"levenshtein"``.

    PSSM: score(x) = sum_i log p_i(x_i) - log p_i(wt_i) with site frequencies of the MSA (pseudocount 1).
    PSSM-train: the same sum with log-odds from the split's **training side only** (no family MSA, no model):
    log p_i(a) = log f_i^sel(a) - log f_i^lib(a), where f^lib counts the letters of every training variant (the
    library as assayed) and f^sel those of the training variants at or above the training median target (the
    ones that passed selection), pseudocount 1 each. It uses training labels to pick the selected sequences,
    so it is a prior built from the data at hand, not a zero-shot score in the strict sense.
    BLOSUM62: sum over substitutions of B62(wt_i, x_i). Levenshtein: minus the edit distance to the wild type.
    """

    KINDS = ("pssm", "pssm-train", "blosum62", "levenshtein")

    def __init__(self, kind: str = "pssm", msa=None, pseudocount: float = 1.0):
        if kind not in self.KINDS:
            raise ValueError(f"unknown zero-shot kind {kind!r}; known: {', '.join(self.KINDS)}")
        if kind == "pssm" and msa is None:
            raise ValueError("a PSSM zero-shot score needs an MSA")
        self.kind, self.msa, self.pseudocount = kind, msa, pseudocount
        self.name = {"pssm": "zero-shot", "pssm-train": "pssm-train", "blosum62": "blosum62"}.get(kind, kind)

    def _site_counts(self, X: np.ndarray) -> np.ndarray:
        """(M, L) integer codes -> (L, 20) letter counts plus the pseudocount."""
        return np.stack([np.bincount(c, minlength=21)[:20] for c in X.T]) + self.pseudocount

    def fit(self, t=None, train=(), val=()):
        if self.kind == "pssm":
            counts = self._site_counts(encode(np.asarray(self.msa)))  # (L, 20)
            self.logp_ = np.log(counts / counts.sum(axis=1, keepdims=True))
        elif self.kind == "pssm-train":
            train = np.asarray(train)
            if t is None or len(train) < 2:
                raise ValueError("a training-split PSSM needs the table and at least 2 training variants")
            X = encode(t.sequences[train])  # (n_train, L): the library as assayed
            y = t.targets[train]
            sel = self._site_counts(X[y >= np.median(y)])  # (L, 20): the variants that passed selection
            lib = self._site_counts(X)
            self.logp_ = np.log(sel / sel.sum(axis=1, keepdims=True)) - np.log(lib / lib.sum(axis=1, keepdims=True))
        return self

    def score(self, t: VariantTable, idx) -> np.ndarray:
        idx = np.asarray(idx)
        if self.kind == "levenshtein":
            try:
                import Levenshtein
            except ImportError:
                raise ImportError("the Levenshtein baseline needs `pip install levenshtein==0.27.5`") from None

            return -np.array(
                [Levenshtein.distance(s, t.wild_types[w]) for s, w in zip(t.sequences[idx], t.wt_of[idx], strict=True)],
                float,
            )
        X = encode(t.sequences[idx])
        W = encode([t.wild_types[w] for w in t.wt_of[idx]])
        if self.kind == "blosum62":
            B = blosum62()
            diff = X != W
            return np.where(diff, B[np.minimum(W, 19), np.minimum(X, 19)], 0).sum(axis=1).astype(float)
        if not hasattr(self, "logp_"):
            raise ValueError(f"the {self.kind} score must be fitted before scoring")
        if X.shape[1] != self.logp_.shape[0]:
            raise ValueError(f"MSA length {self.logp_.shape[0]} differs from the sequences' {X.shape[1]}")
        pos = np.arange(X.shape[1])
        lp = np.vstack([self.logp_.T, np.zeros((1, X.shape[1]))]).T  # (L, 21): the chain separator scores 0
        return (lp[pos, X] - lp[pos, W]).sum(axis=1)

    predict = score


def blosum62() -> np.ndarray:
    """The BLOSUM62 matrix in ``AMINO_ACIDS`` order, (20, 20), from Biopython-free tables (``blosum`` pkg if
    installed, else the matrix embedded below)."""
    rows = _B62.split("\n")
    header = rows[0].split()
    M = np.zeros((20, 20))
    for r in rows[1:]:
        f = r.split()
        for j, v in enumerate(f[1:]):
            if f[0] in AA_INDEX and header[j] in AA_INDEX:
                M[AA_INDEX[f[0]], AA_INDEX[header[j]]] = float(v)
    return M


# BLOSUM62 (Henikoff & Henikoff 1992), standard integer table.
_B62 = """A R N D C Q E G H I L K M F P S T W Y V
A 4 -1 -2 -2 0 -1 -1 0 -2 -1 -1 -1 -1 -2 -1 1 0 -3 -2 0
R -1 5 0 -2 -3 1 0 -2 0 -3 -2 2 -1 -3 -2 -1 -1 -3 -2 -3
N -2 0 6 1 -3 0 0 0 1 -3 -3 0 -2 -3 -2 1 0 -4 -2 -3
D -2 -2 1 6 -3 0 2 -1 -1 -3 -4 -1 -3 -3 -1 0 -1 -4 -3 -3
C 0 -3 -3 -3 9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1
Q -1 1 0 0 -3 5 2 -2 0 -3 -2 1 0 -3 -1 0 -1 -2 -1 -2
E -1 0 0 2 -4 2 5 -2 0 -3 -3 1 -2 -3 -1 0 -1 -3 -2 -2
G 0 -2 0 -1 -3 -2 -2 6 -2 -4 -4 -2 -3 -3 -2 0 -2 -2 -3 -3
H -2 0 1 -1 -3 0 0 -2 8 -3 -3 -1 -2 -1 -2 -1 -2 -2 2 -3
I -1 -3 -3 -3 -1 -3 -3 -4 -3 4 2 -3 1 0 -3 -2 -1 -3 -1 3
L -1 -2 -3 -4 -1 -2 -3 -4 -3 2 4 -2 2 0 -3 -2 -1 -2 -1 1
K -1 2 0 -1 -3 1 1 -2 -1 -3 -2 5 -1 -3 -1 0 -1 -3 -2 -2
M -1 -1 -2 -3 -1 0 -2 -3 -2 1 2 -1 5 0 -2 -1 -1 -1 -1 1
F -2 -3 -3 -3 -2 -3 -3 -3 -1 0 0 -3 0 6 -4 -2 -2 1 3 -1
P -1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4 7 -1 -1 -4 -3 -2
S 1 -1 1 0 -1 0 0 0 -1 -2 -2 0 -1 -2 -1 4 1 -3 -2 -2
T 0 -1 0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1 1 5 -2 -2 0
W -3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1 1 -4 -3 -2 11 2 -3
Y -2 -2 -2 -3 -2 -1 -2 -3 2 -1 -1 -2 -1 3 -3 -2 -2 2 7 -1
V 0 -3 -3 -3 -1 -2 -2 -3 -3 3 1 -2 1 -1 -2 -2 0 -3 -1 4"""


class ZSRidge(OneHotRidge):
    """zsRidge: one-hot ridge plus zero-shot score feature(s), each standardised and up-weighted by
    ``zs_weight`` so the ridge penalty barely shrinks it (the feature carries prior, not noise).

    A scorer that learns from training labels (``"pssm-train"``) would score its own training variants
    in-sample, and ridge would over-trust it; its training-side feature is therefore **cross-fitted**:
    ``n_folds`` folds of the training side, each scored by the scorer fitted on the other folds. Validation and
    test variants get the scorer fitted on the whole training side.
    """

    name = "zsridge"

    def __init__(self, scorers, alphas=ALPHAS, zs_weight: float = 10.0, n_folds: int = 5):
        super().__init__(alphas)
        self.scorers = list(scorers)
        self.zs_weight = zs_weight
        self.n_folds = n_folds

    def _scores(self, t, idx) -> np.ndarray:
        if idx is getattr(self, "_train_", None):  # the training side: cross-fitted scores (see the class doc)
            return self._train_scores_
        return np.column_stack([s.score(t, idx) for s in self.scorers])  # (n, S)

    def _features(self, t, idx):
        Z = (self._scores(t, idx) - self.zmu_) / self.zsd_ * self.zs_weight
        return sparse.hstack([super()._features(t, idx), sparse.csr_matrix(Z)]).tocsr()

    def _cross_fit(self, t, train) -> np.ndarray:
        """(n_train, S) training-side scores; label-using scorers out of fold."""
        Z = np.empty((len(train), len(self.scorers)))
        folds = np.array_split(np.random.default_rng(0).permutation(len(train)), min(self.n_folds, len(train)))
        for j, s in enumerate(self.scorers):
            if getattr(s, "kind", "") != "pssm-train":
                Z[:, j] = s.score(t, train)
                continue
            for fold in folds:
                rest = np.setdiff1d(np.arange(len(train)), fold)
                Z[fold, j] = copy.deepcopy(s).fit(t, train[rest]).score(t, train[fold])
        return Z

    def fit(self, t, train, val=()):
        train = np.asarray(train)
        for s in self.scorers:
            s.fit(t, train, val)
        self._train_, self._train_scores_ = train, self._cross_fit(t, train)
        Z = self._train_scores_
        self.zmu_, self.zsd_ = Z.mean(axis=0), Z.std(axis=0) + 1e-12
        try:
            return super().fit(t, train, val)
        finally:
            del self._train_, self._train_scores_


# ------------------------------------------------------------------------------------------------- torch


def _torch():
    import torch

    return torch


class CNN(_Scaled):
    """FLIP's CNN baseline: one-hot (B, 21, P) -> Conv1d(kernel 5) -> ReLU -> max over positions -> dense.

    FLIP v1 uses 1024 channels; the default here is 64 (laptop). Early stopping on validation MSE.
    """

    name = "cnn"

    def __init__(self, channels=64, kernel=5, epochs=40, lr=1e-3, batch=64, seed=0, device="cpu", max_steps=None):
        self.channels, self.kernel, self.epochs, self.lr, self.batch = channels, kernel, epochs, lr, batch
        self.seed, self.device, self.max_steps = seed, device, max_steps

    def _x(self, t, idx):
        torch = _torch()
        X = torch.as_tensor(encode(t.sequences[idx])[:, self.cols_])
        return torch.nn.functional.one_hot(X, 21).float().permute(0, 2, 1).to(self.device)  # (B, 21, P)

    def _net(self):
        torch = _torch()
        nn = torch.nn

        class Net(nn.Module):
            def __init__(s, c, k):
                super().__init__()
                s.conv = nn.Conv1d(21, c, k, padding=k // 2)
                s.head = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, 1))

            def forward(s, x):  # (B, 21, P)
                h = torch.relu(s.conv(x)).amax(dim=2)  # (B, C)
                return s.head(h).squeeze(-1)  # (B,)

        return Net(self.channels, self.kernel)

    def fit(self, t, train, val=()):
        self.cols_ = variable_columns(t)
        y = self._fit_scale(t.targets[train])
        self.net_ = _train_regressor(
            self,
            self._net(),
            self._x(t, train),
            y,
            self._x(t, val) if len(val) else None,
            (t.targets[val] - self.mu_) / self.sd_ if len(val) else None,
        )
        return self

    def predict_scaled(self, t, idx):
        torch = _torch()
        with torch.no_grad():
            return self.net_(self._x(t, idx)).cpu().numpy()

    def predict(self, t, idx):
        return self.predict_scaled(t, idx) * self.sd_ + self.mu_


def _train_regressor(cfg, net, Xtr, ytr, Xva, yva, forward=None):
    """Adam + MSE on the scaled target with early stopping on validation MSE; returns the best net."""
    torch = _torch()
    import copy

    g = torch.Generator().manual_seed(int(cfg.seed))
    net = net.to(cfg.device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    yt = torch.as_tensor(ytr, dtype=torch.float32, device=cfg.device)
    yv = None if yva is None else torch.as_tensor(yva, dtype=torch.float32, device=cfg.device)
    fwd = forward or net
    best, best_state, steps = math.inf, copy.deepcopy(net.state_dict()), 0
    n = len(yt)
    for _ in range(cfg.epochs):
        net.train()
        perm = torch.randperm(n, generator=g).to(cfg.device)
        for b in range(0, n, cfg.batch):
            j = perm[b : b + cfg.batch]
            loss = torch.mean((fwd(Xtr[j]) - yt[j]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            if cfg.max_steps is not None and steps >= cfg.max_steps:
                break
        net.eval()
        with torch.no_grad():
            score = float(torch.mean((fwd(Xva) - yv) ** 2)) if yv is not None else -steps
        if score < best:
            best, best_state = score, copy.deepcopy(net.state_dict())
        if cfg.max_steps is not None and steps >= cfg.max_steps:
            break
    net.load_state_dict(best_state)
    net.eval()
    return net


class TinyTransformer(_Scaled):
    """A small transformer encoder; ``pretrain(msa)`` runs masked-LM pretraining (15 % masking) on a family
    MSA, then ``fit`` fine-tunes everything with a mean-pooled regression head. Without ``pretrain`` it is the
    paper's "naive" (random-init) counterpart. Tokens: 20 amino acids, ':' (20), mask (21)."""

    name = "transformer"

    def __init__(
        self, d=32, layers=2, heads=4, epochs=30, lr=1e-3, batch=32, seed=0, device="cpu", max_steps=None, lrs=None
    ):
        self.lrs = None if lrs is None else tuple(float(x) for x in lrs)
        self.d, self.layers, self.heads = d, layers, heads
        self.epochs, self.lr, self.batch, self.seed, self.device, self.max_steps = (
            epochs,
            lr,
            batch,
            seed,
            device,
            max_steps,
        )
        self.net_ = None
        self.pretrained_ = False

    def _build(self, L):
        torch = _torch()
        nn = torch.nn
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)

            class Net(nn.Module):
                def __init__(s, d, layers, heads):
                    super().__init__()
                    s.tok = nn.Embedding(22, d)
                    s.pos = nn.Parameter(0.02 * torch.randn(L, d))
                    layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True)
                    s.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
                    s.lm = nn.Linear(d, 20)
                    s.reg = nn.Linear(d, 1)

                def hidden(s, x):  # (B, L) -> (B, L, d)
                    return s.enc(s.tok(x) + s.pos)

                def forward(s, x):  # (B, L) -> (B,)
                    return s.reg(s.hidden(x).mean(dim=1)).squeeze(-1)

            return Net(self.d, self.layers, self.heads).to(self.device)

    def pretrain(self, msa, steps: int = 300, mask_frac: float = 0.15):
        """Masked-LM pretraining on the MSA (B, L) with cross-entropy on masked positions."""
        torch = _torch()
        X = torch.as_tensor(encode(np.asarray(msa)), device=self.device)
        self.net_ = self._build(X.shape[1])
        g = torch.Generator().manual_seed(int(self.seed) + 1)
        opt = torch.optim.Adam(self.net_.parameters(), lr=self.lr)
        for _ in range(steps):
            j = torch.randint(0, len(X), (self.batch,), generator=g).to(self.device)
            x = X[j]
            m = (torch.rand(x.shape, generator=g) < mask_frac).to(self.device)
            logits = self.net_.lm(self.net_.hidden(torch.where(m, 21, x)))  # (B, L, 20)
            loss = torch.nn.functional.cross_entropy(logits[m], x[m].clamp(max=19)) if m.any() else logits.sum() * 0
            opt.zero_grad()
            loss.backward()
            opt.step()
        self.pretrained_ = True
        return self

    def fit(self, t, train, val=()):
        torch = _torch()
        if self.net_ is None:
            self.net_ = self._build(t.length)
        y = self._fit_scale(t.targets[train])
        x = lambda idx: torch.as_tensor(encode(t.sequences[idx]), device=self.device)  # noqa: E731
        xv, yv = (x(val), (t.targets[val] - self.mu_) / self.sd_) if len(val) else (None, None)
        # learning rate chosen on validation (like ridge's alpha): each candidate starts from the same weights
        lrs = self.lrs if (self.lrs and xv is not None) else (self.lr,)
        start, best = copy.deepcopy(self.net_.state_dict()), (math.inf, None, None)
        for lr in lrs:
            self.net_.load_state_dict(start)
            self.lr = lr
            net = _train_regressor(self, self.net_, x(train), y, xv, yv)
            if xv is None:
                best = (0.0, lr, copy.deepcopy(net.state_dict()))
                break
            with torch.no_grad():
                mse = float(torch.mean((net(xv) - torch.as_tensor(yv, dtype=torch.float32, device=self.device)) ** 2))
            if mse < best[0] or best[2] is None:
                best = (mse, lr, copy.deepcopy(net.state_dict()))
        self.lr = self.lr_ = best[1]
        self.net_.load_state_dict(best[2])
        self.net_.eval()
        return self

    def predict_scaled(self, t, idx):
        torch = _torch()
        with torch.no_grad():
            return self.net_(torch.as_tensor(encode(t.sequences[idx]), device=self.device)).cpu().numpy()

    def predict(self, t, idx):
        return self.predict_scaled(t, idx) * self.sd_ + self.mu_


# ---------------------------------------------------------------------------------------------- ESM-2


ESM_VOCAB = ["<cls>", "<pad>", "<eos>", "<unk>", *"LAGVSERTIDPKQNFYMHWCXBUZO.-", "<null_1>", "<mask>"]


def tiny_esm_config(**overrides):
    """A small randomly initialised ESM-2 configuration (esm2_t6-shaped but narrow) -- no download."""
    from transformers import EsmConfig

    kw = dict(
        vocab_size=len(ESM_VOCAB),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=1026,
        position_embedding_type="rotary",
        pad_token_id=1,
        mask_token_id=len(ESM_VOCAB) - 1,
        token_dropout=True,
        emb_layer_norm_before=False,
    )
    kw.update(overrides)
    return EsmConfig(**kw)


def esm2_zero_shot(t: VariantTable, idx, model=None, *, device: str = "cpu", batch: int = 64) -> np.ndarray:
    """Wild-type-marginal ESM-2 score: sum over substitutions of log p(mut) - log p(wt), from the masked-LM
    logits of the unmasked wild type. ``model``: an ``EsmForMaskedLM`` (pretrained weights you loaded with
    ``from_pretrained(path, local_files_only=True)``, or a random one from :func:`tiny_esm_config` for tests)."""
    try:
        import torch
        from transformers import EsmForMaskedLM
    except ImportError:
        raise ImportError(
            "the ESM-2 zero-shot path needs `pip install transformers` (no weights are downloaded)"
        ) from None
    if model is None:
        raise ValueError("pass an EsmForMaskedLM: no weights ship offline; load yours with local_files_only=True")
    if not isinstance(model, EsmForMaskedLM):
        raise TypeError(f"model must be an EsmForMaskedLM, got {type(model).__name__}")
    tok = {a: i for i, a in enumerate(ESM_VOCAB)}
    idx = np.asarray(idx)
    model = model.to(device).eval()
    logp = {}
    for w in np.unique(t.wt_of[idx]):
        ids = torch.tensor(
            [[tok["<cls>"], *[tok[c] if c in tok else tok["<unk>"] for c in t.wild_types[w]], tok["<eos>"]]]
        )
        with torch.no_grad():
            out = model(input_ids=ids.to(device)).logits[0, 1:-1].log_softmax(-1).cpu().numpy()  # (L, V)
        logp[w] = out
    scores = np.zeros(len(idx))
    for r, (s, w) in enumerate(zip(t.sequences[idx], t.wt_of[idx], strict=True)):
        wt, lp = t.wild_types[w], logp[w]
        scores[r] = sum(lp[i, tok[b]] - lp[i, tok[a]] for i, (a, b) in enumerate(zip(wt, s, strict=True)) if a != b)
    return scores


class ESM2ZeroShot(ZeroShot):
    """:func:`esm2_zero_shot` as a scorer usable inside :class:`ZSRidge`."""

    def __init__(self, model, device="cpu"):
        self.kind, self.name, self.model, self.device = "esm2", "esm2", model, device

    def fit(self, t=None, train=(), val=()):
        return self

    def score(self, t, idx):
        return esm2_zero_shot(t, idx, self.model, device=self.device)

    predict = score


assert set(AMINO_ACIDS) == set(AA_INDEX)
