"""The alignment engine: layer features by torch hooks, brain Gram matrices cached once per ROI, five metrics,
a tidy table (one row per model x checkpoint x layer x subject x ROI), single-process or on a Ray cluster.

Metrics (the paper's run uses ``rbf-cka`` with sigma = 12 and the biased HSIC; the others are the
"platonic representation" set its code also offers):

- ``rbf-cka``: K_ij = exp(-|f_i - f_j|^2 / (2 sigma^2)) on z-scored features, L likewise on z-scored voxels,
  HSIC(K, L) = tr(K H L H) / (n - 1)^2 with H = I - 11^T/n, CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)).
- ``linear-cka``: the same with K = F F^T.
- ``unbiased-cka``: linear kernel, the unbiased HSIC estimator of Song et al. (2012), Eq. 5.
- ``mutual-knn``: mean over stimuli of |kNN_F(i) & kNN_B(i)| / k, neighbours by cosine similarity.
- ``rsa``: Spearman correlation of the upper triangles of the correlation-distance RDMs.

Everything that depends on the brain alone (the centred ROI Gram matrix and its norm, the unbiased kernel's
sums, the brain kNN sets, the ranked RDM) is computed once in :class:`BrainCache` and reused for every layer
of every model: a measurement then costs one n x n x d product for the layer and an O(n^2) contraction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

__all__ = [
    "METRICS",
    "BrainCache",
    "align_models",
    "align_models_pool",
    "align_models_ray",
    "as_responses",
    "cka",
    "extract_features",
    "hsic_biased",
    "hsic_unbiased",
    "rbf_gram",
    "zscore",
]

log = logging.getLogger(__name__)
METRICS = ("rbf-cka", "linear-cka", "unbiased-cka", "mutual-knn", "rsa")
PAPER_SIGMA = 12.0  # --metric cka_12 in the authors' run script: RBF kernel, sigma = 12, biased HSIC


# ----------------------------------------------------------------------------------------------------------
# kernels and HSIC
# ----------------------------------------------------------------------------------------------------------


def as_responses(X, what: str) -> torch.Tensor:
    """A finite real (n, d) matrix as float64, or ValueError naming ``what`` (features of a layer, an ROI)."""
    try:
        A = np.asarray(X.detach().cpu() if isinstance(X, torch.Tensor) else X)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{what} is not an array of numbers ({exc.__class__.__name__})") from None
    if A.dtype == bool or not (np.issubdtype(A.dtype, np.integer) or np.issubdtype(A.dtype, np.floating)):
        raise ValueError(f"{what} must hold real numbers; got dtype {A.dtype}")
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{what} must be a (stimuli, units) matrix with at least one of each; got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{what} holds NaN or infinite values")
    return torch.as_tensor(A, dtype=torch.float64)


def zscore(X: torch.Tensor) -> torch.Tensor:
    """Columns to mean 0, sd 1 (constant columns become 0), as the authors' code does before every metric."""
    X = X.to(torch.float64)  # (n, d)
    sd = X.std(dim=0, unbiased=False)
    return (X - X.mean(dim=0)) / torch.where(sd > 0, sd, torch.ones_like(sd))


def sq_dists(X: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances, (n, d) -> (n, n), clamped at 0."""
    g = (X * X).sum(1)  # (n,)
    return (g[:, None] + g[None, :] - 2.0 * X @ X.T).clamp_min_(0.0)


def rbf_gram(X: torch.Tensor, sigma: float | None = PAPER_SIGMA) -> torch.Tensor:
    """K_ij = exp(-|x_i - x_j|^2 / (2 sigma^2)); ``sigma=None`` takes the median heuristic (median distance)."""
    if not bool(torch.isfinite(X).all()):
        raise ValueError("the RBF kernel got NaN or infinite values")
    D = sq_dists(X)  # (n, n)
    if sigma is None:
        off = D[~torch.eye(len(D), dtype=torch.bool)]
        sigma = float(off.median().sqrt()) or 1.0
    if not (np.isfinite(sigma) and 2.0 * sigma**2 > 0):
        raise ValueError(f"RBF bandwidth sigma must be a finite number > 0 (with sigma^2 > 0); got {sigma}")
    return torch.exp(-D / (2.0 * sigma**2))


def center(K: torch.Tensor) -> torch.Tensor:
    """H K H with H = I - 11^T / n (double centring)."""
    return K - K.mean(0, keepdim=True) - K.mean(1, keepdim=True) + K.mean()


def hsic_biased(K: torch.Tensor, L: torch.Tensor) -> torch.Tensor:
    """tr(K H L H) / (n - 1)^2 (Gretton et al. 2005; the paper's estimator)."""
    n = K.shape[0]
    return (center(K) * center(L)).sum() / (n - 1) ** 2


def _unbiased_parts(K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    Kt = K.clone()
    Kt.fill_diagonal_(0.0)  # K tilde: zero diagonal
    return Kt, Kt.sum(), Kt.sum(1)  # (n, n), 1^T K 1, K 1


def _hsic_u(parts_k, parts_l, n: int) -> torch.Tensor:
    Kt, sk, rk = parts_k
    Lt, sl, rl = parts_l
    # Song et al. (2012) Eq. 5: [tr(KL) + 1'K1 1'L1 / ((n-1)(n-2)) - 2/(n-2) 1'KL1] / (n(n-3))
    return ((Kt * Lt).sum() + sk * sl / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * (rk @ rl)) / (n * (n - 3))


def hsic_unbiased(K: torch.Tensor, L: torch.Tensor) -> torch.Tensor:
    """Unbiased HSIC (Song et al. 2012, Eq. 5); needs n >= 4."""
    n = K.shape[0]
    if n < 4:
        raise ValueError(f"unbiased HSIC needs at least 4 stimuli, got {n}")
    return _hsic_u(_unbiased_parts(K), _unbiased_parts(L), n)


def cka(K: torch.Tensor, L: torch.Tensor, *, unbiased: bool = False) -> float:
    """CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)) from two (n, n) Gram matrices (uncached, for reference)."""
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape != L.shape:
        raise ValueError(f"CKA needs two (n, n) Gram matrices of the same size; got {tuple(K.shape)}, {tuple(L.shape)}")
    h = hsic_unbiased if unbiased else hsic_biased
    den = torch.sqrt(h(K, K) * h(L, L))
    return float(h(K, L) / den) if den > 0 else 0.0


# ----------------------------------------------------------------------------------------------------------
# brain-side cache and per-layer scores
# ----------------------------------------------------------------------------------------------------------


def _knn(X: torch.Tensor, k: int) -> torch.Tensor:
    Xn = X / X.norm(dim=1, keepdim=True).clamp_min(1e-12)
    S = Xn @ Xn.T  # (n, n) cosine similarities
    S.fill_diagonal_(-float("inf"))
    return S.topk(k, dim=1).indices  # (n, k)


def _rdm_upper(X: torch.Tensor) -> torch.Tensor:
    C = torch.corrcoef(X)  # (n, n) Pearson correlation between stimulus patterns
    C = torch.nan_to_num(C, nan=0.0)
    iu = torch.triu_indices(len(C), len(C), 1)
    return 1.0 - C[iu[0], iu[1]]  # correlation distance, upper triangle


def _rank(v: torch.Tensor) -> torch.Tensor:
    """Ranks 0..m-1 (ties broken by order; continuous values make ties rare)."""
    r = torch.empty_like(v)
    r[v.argsort()] = torch.arange(len(v), dtype=v.dtype)
    c = r - r.mean()
    return c / c.norm().clamp_min(1e-12)


@dataclass
class _ROIState:
    L: torch.Tensor | None = None  # centred ROI Gram (n, n)  [rbf/linear CKA]
    L_norm: float = 0.0
    parts: tuple | None = None  # unbiased-kernel pieces       [unbiased CKA]
    hll: float = 0.0
    knn: torch.Tensor | None = None  # (n, k) brain neighbours [mutual kNN]
    rdm_rank: torch.Tensor | None = None  # (n(n-1)/2,)         [RSA]


class BrainCache:
    """Everything that depends only on the brain, computed once per (subject, ROI) and metric.

    Parameters
    ----------
    rois : dict of str to array (n, v)
        Voxel responses per ROI (rows = stimuli, in the order the features will come in).
    metric : one of :data:`METRICS`
    sigma : float or None
        RBF bandwidth (the paper: 12, on z-scored columns); None = median heuristic (per matrix).
    k : int
        Neighbours for ``mutual-knn``.
    """

    def __init__(self, rois: dict, metric: str = "rbf-cka", *, sigma: float | None = PAPER_SIGMA, k: int = 10):
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
        if not isinstance(rois, dict) or not rois:
            raise ValueError("rois must be a non-empty dict {roi name: (stimuli, voxels) array}")
        if sigma is not None and not (np.isfinite(sigma) and sigma > 0 and 2.0 * sigma**2 > 0):
            raise ValueError(f"RBF bandwidth sigma must be a finite number > 0 (None: median heuristic); got {sigma}")
        self.metric, self.sigma, self.k = metric, sigma, int(k)
        self.state: dict[str, _ROIState] = {}
        B = {name: as_responses(R, f"ROI {name!r}") for name, R in rois.items()}
        sizes = {name: R.shape[0] for name, R in B.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"ROIs have different numbers of stimuli: {sizes}")
        self.n = next(iter(sizes.values()))
        if metric == "mutual-knn" and not 1 <= self.k < self.n:
            raise ValueError(f"k = {self.k} neighbours needs 1 <= k < number of stimuli ({self.n})")
        if metric == "unbiased-cka" and self.n < 4:
            raise ValueError("unbiased CKA needs at least 4 stimuli")
        for name, R in B.items():
            if not bool((R.std(dim=0) > 0).any()):
                raise ValueError(f"ROI {name!r} is constant across stimuli: every alignment with it is undefined")
            self.state[name] = self._prepare(zscore(R))

    def _gram(self, X: torch.Tensor) -> torch.Tensor:
        return rbf_gram(X, self.sigma) if self.metric == "rbf-cka" else X @ X.T

    def _prepare(self, B: torch.Tensor) -> _ROIState:
        s = _ROIState()
        if self.metric in ("rbf-cka", "linear-cka"):
            s.L = center(self._gram(B))  # the cached, centred ROI Gram matrix
            s.L_norm = float(s.L.norm())
        elif self.metric == "unbiased-cka":
            s.parts = _unbiased_parts(B @ B.T)
            s.hll = float(_hsic_u(s.parts, s.parts, self.n))
        elif self.metric == "mutual-knn":
            s.knn = _knn(B, self.k)
        else:
            s.rdm_rank = _rank(_rdm_upper(B))
        return s

    def scores(self, F: np.ndarray | torch.Tensor) -> dict[str, float]:
        """Alignment of one layer's features ``F`` (n, d) with every ROI: {roi: score}."""
        X = zscore(as_responses(F, "layer features"))  # (n, d); a constant (dead) layer scores 0
        if X.shape[0] != self.n:
            raise ValueError(f"features have {X.shape[0]} stimuli, the brain {self.n}")
        out = {}
        if self.metric in ("rbf-cka", "linear-cka"):
            K = center(self._gram(X))  # (n, n): the one n x n x d product per layer
            kn = float(K.norm())
            for name, s in self.state.items():  # biased CKA = <HKH, HLH>_F / (|HKH|_F |HLH|_F)
                out[name] = float((K * s.L).sum() / (kn * s.L_norm)) if kn > 0 and s.L_norm > 0 else 0.0
        elif self.metric == "unbiased-cka":
            parts = _unbiased_parts(X @ X.T)
            hkk = float(_hsic_u(parts, parts, self.n))
            for name, s in self.state.items():
                den = np.sqrt(hkk * s.hll) if hkk > 0 and s.hll > 0 else 0.0
                out[name] = float(_hsic_u(parts, s.parts, self.n)) / den if den > 0 else 0.0
        elif self.metric == "mutual-knn":
            idx = _knn(X, self.k)  # (n, k)
            for name, s in self.state.items():
                hit = (idx[:, :, None] == s.knn[:, None, :]).any(-1).sum(1)  # (n,) shared neighbours
                out[name] = float(hit.double().mean() / self.k)
        else:
            r = _rank(_rdm_upper(X))
            for name, s in self.state.items():  # Spearman = Pearson of (centred, normalised) ranks
                out[name] = float((r * s.rdm_rank).sum())
        return out


# ----------------------------------------------------------------------------------------------------------
# features by hooks
# ----------------------------------------------------------------------------------------------------------


# modules whose outputs are a network's hidden activations when no module is named
_ACTIVATIONS = (nn.ReLU, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid, nn.LeakyReLU, nn.ELU, nn.Mish, nn.Softplus)


def _is_transformers_model(model) -> bool:
    """A Hugging Face ``transformers`` model (it takes ``output_hidden_states``)."""
    return hasattr(model, "config") and hasattr(model.config, "num_hidden_layers") and isinstance(model, nn.Module)


def extract_features(
    model: nn.Module | Callable,
    x,
    modules: dict[str, nn.Module] | None = None,
    *,
    batch: int = 1024,
    attention_mask=None,
    pooling: str = "last",
) -> dict[str, np.ndarray]:
    """Run ``model`` on the stimuli ``x`` (n, ...) and return one (n, d) feature matrix per layer, as float64.

    Three kinds of model:

    - a Hugging Face ``transformers`` model (causal or masked LM, any architecture): ``x`` is token ids (n, T)
      (integers, kept as such), with an optional ``attention_mask`` (n, T) for padded rows; every hidden state
      (``output_hidden_states``: the embeddings, then each block) is pooled over tokens — ``pooling="last"``
      takes each row's last real token (what a causal LM has read at the end of the stimulus), ``"mean"``
      averages its real tokens — and the layers are named ``hidden_0`` … ``hidden_L``;
    - any other ``nn.Module``: the output of each hooked module, flattened; ``modules`` maps names to
      sub-modules, by default every activation module (ReLU, GELU, SiLU, tanh, …) and the last ``nn.Linear``;
      floating stimuli are cast to the model's parameter dtype, integer stimuli (token ids) are kept;
    - a plain callable ``f(x_batch)`` returning an array (one layer, ``"output"``) or a dict of arrays.

    Raises ``ValueError`` when the model cannot read ``x`` or nothing is captured.
    """
    if pooling not in ("last", "mean"):
        raise ValueError(f"pooling must be 'last' or 'mean'; got {pooling!r}")
    x = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x)
    if x.ndim == 0 or len(x) == 0:
        raise ValueError("no stimuli: x must have at least one row")
    if _is_transformers_model(model):
        return _hidden_states(model, x, attention_mask, batch, pooling)
    if not isinstance(model, nn.Module):
        return _callable_features(model, x, batch)
    params = next(model.parameters(), None)
    if x.is_floating_point() and params is not None and params.is_floating_point():
        x = x.to(params.dtype)
    device = params.device if params is not None else torch.device("cpu")  # batches go where the weights are
    if modules is None:
        named = list(model.named_modules())
        modules = {n: m for n, m in named if isinstance(m, _ACTIVATIONS)}
        linears = [(n, m) for n, m in named if isinstance(m, nn.Linear)]
        if linears:
            modules[linears[-1][0]] = linears[-1][1]
    store: dict[str, list[torch.Tensor]] = {name: [] for name in modules}

    def keep(name):
        def hook(_m, _i, out):
            out = out[0] if isinstance(out, tuple) else out
            store[name].append(out.detach().flatten(1).cpu().double())

        return hook

    handles = [m.register_forward_hook(keep(name)) for name, m in modules.items()]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for i in range(0, len(x), batch):
                model(x[i : i + batch].to(device))
    except (RuntimeError, IndexError, TypeError) as exc:  # the stimuli do not fit the model's input layer
        raise ValueError(f"{type(model).__name__} cannot read stimuli of shape {tuple(x.shape)}: {exc}") from None
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    feats = {name: torch.cat(v).numpy() for name, v in store.items() if v}
    if not feats:
        raise ValueError(
            f"the hooks on {type(model).__name__} captured nothing (hooked: {sorted(modules) or 'no module'}); "
            "name modules that run in forward()"
        )
    return feats


def _hidden_states(model, ids: torch.Tensor, attention_mask, batch: int, pooling: str) -> dict[str, np.ndarray]:
    """Pooled ``output_hidden_states`` of a transformers model, one (n, d) matrix per layer."""
    if ids.is_floating_point() or ids.ndim != 2:
        raise ValueError(f"a language model reads token ids (n, T) as integers; got {ids.dtype} {tuple(ids.shape)}")
    vocab = getattr(model.config, "vocab_size", None)
    if vocab is not None and (int(ids.min()) < 0 or int(ids.max()) >= vocab):
        raise ValueError(f"token ids must lie in [0, {vocab}) for this model; got {int(ids.min())}..{int(ids.max())}")
    mask = torch.ones_like(ids) if attention_mask is None else torch.as_tensor(np.asarray(attention_mask))
    if mask.shape != ids.shape or bool((mask.sum(1) == 0).any()):
        raise ValueError("attention_mask must have the ids' shape and at least one real token per row")
    device = next(model.parameters()).device  # ids and mask go where the weights are; features come back
    ids, mask = ids.to(device), mask.long().to(device)
    layers: list[list[torch.Tensor]] = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for i in range(0, len(ids), batch):
                m = mask[i : i + batch]
                out = model(input_ids=ids[i : i + batch], attention_mask=m, output_hidden_states=True)
                for li, h in enumerate(out.hidden_states):  # (b, T, d) each
                    if pooling == "last":  # each row's last real token (right or left padding)
                        last = (m * torch.arange(m.shape[1], device=device)).argmax(1)
                        pooled = h[torch.arange(len(h), device=device), last]
                    else:
                        pooled = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True)
                    if li == len(layers):
                        layers.append([])
                    layers[li].append(pooled.cpu().double())
    finally:
        model.train(was_training)
    return {f"hidden_{li}": torch.cat(v).numpy() for li, v in enumerate(layers)}


def _callable_features(fn: Callable, x: torch.Tensor, batch: int) -> dict[str, np.ndarray]:
    """Features of a plain callable: an array (one layer) or a dict of arrays per batch."""
    parts: dict[str, list[np.ndarray]] = {}
    for i in range(0, len(x), batch):
        out = fn(x[i : i + batch])
        for name, value in (out if isinstance(out, dict) else {"output": out}).items():
            value = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
            parts.setdefault(name, []).append(value.reshape(len(value), -1).astype(np.float64))
    return {name: np.concatenate(v) for name, v in parts.items()}


# ----------------------------------------------------------------------------------------------------------
# the table: every (model, checkpoint, layer, subject, ROI)
# ----------------------------------------------------------------------------------------------------------

COLUMNS = ("model", "step", "layer", "layer_index", "n_layers", "depth_frac", "subject", "roi", "metric", "score")


def _align_one(item: dict, images: np.ndarray, caches: dict[str, BrainCache]) -> list[dict]:
    """Rows of one (model, checkpoint): ``item`` = {"model": name, "step": int, "net": nn.Module}."""
    if not {"model", "step", "net"} <= set(item) or not isinstance(item["net"], nn.Module):
        raise ValueError(f"an item needs keys model, step and net (an nn.Module); got keys {sorted(item)}")
    feats = extract_features(item["net"], images)
    rows = []
    n_layers = len(feats)
    for li, (layer, F) in enumerate(feats.items()):
        for subject, cache in caches.items():
            for roi, s in cache.scores(F).items():
                rows.append(
                    {
                        "model": item["model"],
                        "step": int(item["step"]),
                        "layer": layer,
                        "layer_index": li,
                        "n_layers": n_layers,
                        "depth_frac": (li + 1) / n_layers,
                        "subject": subject,
                        "roi": roi,
                        "metric": cache.metric,
                        "score": s,
                    }
                )
    return rows


def _align_one_worker(item: dict, images: np.ndarray, caches: dict[str, BrainCache]) -> list[dict]:
    """:func:`_align_one` in a worker process: one torch thread per worker (the workers share the cores)."""
    torch.set_num_threads(1)
    return _align_one(item, images, caches)


def _check_caches(caches: dict[str, BrainCache], images: np.ndarray) -> None:
    if not isinstance(caches, dict) or not caches or not all(isinstance(c, BrainCache) for c in caches.values()):
        raise ValueError("caches must be a non-empty dict {subject: BrainCache}")
    if len(images) != next(iter(caches.values())).n or len({c.n for c in caches.values()}) != 1:
        sizes = sorted({c.n for c in caches.values()})
        raise ValueError(f"{len(images)} stimulus images, but the brain caches hold {sizes} stimuli")


def _table(rows: list[dict]):
    import pandas as pd

    df = pd.DataFrame(rows, columns=list(COLUMNS))
    return df.sort_values(["model", "step", "layer_index", "subject", "roi"], kind="mergesort").reset_index(drop=True)


def align_models(
    items: Sequence[dict],
    images: np.ndarray,
    caches: dict[str, BrainCache],
    *,
    done: set | None = None,
    progress: Callable[[int, int], None] | None = None,
):
    """Align every item (model checkpoint) with every subject's ROIs in this process; a tidy DataFrame.

    ``done`` holds (model, step) pairs already in a table (resume: they are skipped).
    """
    _check_caches(caches, images)
    todo = [it for it in items if (it["model"], int(it["step"])) not in (done or set())]
    rows: list[dict] = []
    for i, item in enumerate(todo):
        rows += _align_one(item, images, caches)
        log.debug("aligned %s step %s (%d/%d)", item["model"], item["step"], i + 1, len(todo))
        if progress is not None:
            progress(i + 1, len(todo))
    return _table(rows)


def align_models_pool(items: Sequence[dict], images: np.ndarray, caches: dict[str, BrainCache], *, workers: int = 2):
    """The same table from a local pool of worker processes (a Ray-free stand-in used at smoke scale)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    _check_caches(caches, images)
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("fork")) as pool:
        parts = list(pool.map(_align_one_worker, items, [images] * len(items), [caches] * len(items)))
    return _table([r for p in parts for r in p])


def align_models_ray(
    items: Sequence[dict],
    images: np.ndarray,
    caches: dict[str, BrainCache],
    *,
    address: str | None = None,
    num_cpus: int = 2,
    done: set | None = None,
):
    """The same table computed by Ray tasks, one per (model, checkpoint); the brain caches are put in the
    object store once. ``address=None`` starts a local instance with ``num_cpus`` workers (and stops it)."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - ray is optional
        raise ImportError("the Ray path needs `pip install ray`; drop --ray-address to run in one process") from exc
    _check_caches(caches, images)
    todo = [it for it in items if (it["model"], int(it["step"])) not in (done or set())]
    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address else {"num_cpus": num_cpus}
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kw)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(_align_one_worker)
        images_ref, caches_ref = ray.put(images), ray.put(caches)
        parts = ray.get([remote.remote(it, images_ref, caches_ref) for it in todo])
    finally:
        if started:
            ray.shutdown()
    return _table([r for p in parts for r in p])
