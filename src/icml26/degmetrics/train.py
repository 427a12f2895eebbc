"""WMSE as a training objective (paper, Sec. "WMSE as a loss reduces mode collapse").

The paper retrains GEARS with per-perturbation weights ``100 * w_k`` and the loss ``sum_g w (pred - y)**2``.
GEARS needs its GO graph and data downloads, so this module uses two small stand-ins that map a
perturbation embedding ``z_k`` to its expression profile -- a linear model and an MLP -- on a simulated
screen whose sparse effects are a function of ``z_k`` (ground truth known), trained with MSE or WMSE.
Mode collapse is measured by :func:`~icml26.degmetrics.metrics.diversity_ratio`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats
from torch import nn

from icml26.degmetrics.config import LossConfig
from icml26.degmetrics.data import CONTROL, PERTURBATION_KEY, simulate
from icml26.degmetrics.evaluate import DEGReference
from icml26.degmetrics.metrics import diversity_ratio, pearson_delta, score_pseudobulk

logger = logging.getLogger(__name__)


def wmse_loss(pred: torch.Tensor, target: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Weighted MSE loss, averaged over perturbations.

    ``L = mean_k sum_g w_kg (pred_kg - target_kg)**2``; with ``weights=None`` it is the plain MSE
    ``mean_{k,g} (pred_kg - target_kg)**2``.

    Parameters
    ----------
    pred, target : Tensor of shape (B, G)
    weights : Tensor of shape (B, G), optional -- DEG weights (any positive scale, e.g. ``100 * w_k``)

    Returns
    -------
    Tensor, scalar
    """
    if pred.shape != target.shape:
        raise ValueError(f"pred has shape {tuple(pred.shape)} but target has shape {tuple(target.shape)}")
    sq = (pred - target) ** 2
    if weights is None:
        return sq.mean()
    if weights.shape != sq.shape:
        raise ValueError(f"weights must have shape {tuple(sq.shape)}; got {tuple(weights.shape)}")
    return (weights * sq).sum(dim=1).mean()


class LinearResponse(nn.Module):
    """``pred_k = b + W z_k``: embedding (B, d) -> expression (B, G); ``b`` starts at the training mean."""

    def __init__(self, latent_dim: int, n_genes: int, baseline: torch.Tensor):
        super().__init__()
        self.bias = nn.Parameter(baseline.clone())  # (G,)
        self.linear = nn.Linear(latent_dim, n_genes, bias=False)
        nn.init.zeros_(self.linear.weight)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.bias + self.linear(z)  # (B, G)


class MLPResponse(nn.Module):
    """``pred_k = b + V relu(U z_k + c)``: embedding (B, d) -> hidden (B, H) -> expression (B, G)."""

    def __init__(self, latent_dim: int, n_genes: int, baseline: torch.Tensor, hidden: int = 64):
        super().__init__()
        self.bias = nn.Parameter(baseline.clone())  # (G,)
        self.body = nn.Sequential(nn.Linear(latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_genes))
        nn.init.zeros_(self.body[2].weight)
        nn.init.zeros_(self.body[2].bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.bias + self.body(z)  # (B, G)


ARCHITECTURES = {"linear": LinearResponse, "mlp": MLPResponse}


def fit_response_model(
    arch: str,
    z: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None,
    cfg: LossConfig,
    seed: int = 0,
    *,
    lr: float | None = None,
    select: str = "loss",
) -> nn.Module:
    """Train one model with AdamW on MSE (``weights=None``) or WMSE (``cfg.weight_scale * w``).

    As in GEARS, a random ``cfg.val_fraction`` of the training perturbations is held out and the weights
    of the best validation epoch are kept. ``select="loss"`` (GEARS) judges epochs by the training
    objective itself; ``select="pearson_delta_all"`` by a metric neutral between the two losses: the mean
    Pearson correlation over genes of predicted and observed Δ = x - mean of the fitted perturbations
    (scale-free, unweighted). The best validation value is stored on the model as ``val_score_``.

    Parameters
    ----------
    arch : {"linear", "mlp"}
    z : array (P, d) -- perturbation embeddings; y : array (P, G) -- log1p pseudobulks
    weights : array (P, G) or None -- DEG weights of the training perturbations
    lr : float, optional -- AdamW learning rate (default ``cfg.lr``)
    select : {"loss", "pearson_delta_all"} -- the validation criterion of early stopping
    """
    if arch not in ARCHITECTURES:
        raise ValueError(f"arch must be one of {sorted(ARCHITECTURES)}; got {arch!r}")
    if select not in ("loss", "pearson_delta_all"):
        raise ValueError(f"select must be 'loss' or 'pearson_delta_all'; got {select!r}")
    with torch.random.fork_rng(devices=[]):  # seeded here; the caller's global RNG is restored
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(z))
        n_val = max(1, round(cfg.val_fraction * len(z))) if cfg.val_fraction > 0 else 0
        val, fit = perm[:n_val], perm[n_val:]
        zt, yt = torch.as_tensor(z, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
        wt = None if weights is None else torch.as_tensor(cfg.weight_scale * weights, dtype=torch.float32)

        def loss_on(idx: np.ndarray) -> torch.Tensor:
            return wmse_loss(model(zt[idx]), yt[idx], None if wt is None else wt[idx])

        mu_fit = np.asarray(y, dtype=np.float64)[fit].mean(axis=0)  # (G,) reference of the neutral Δ

        def val_score() -> float:  # higher is better
            with torch.no_grad():
                if select == "loss":
                    return -float(loss_on(val))
                r = pearson_delta(model(zt[val]).double().numpy(), np.asarray(y)[val], mu_fit)  # (n_val,)
            return float(np.nanmean(r)) if np.isfinite(r).any() else -np.inf  # a constant prediction has no Δ

        kwargs = {"hidden": cfg.hidden} if arch == "mlp" else {}
        model = ARCHITECTURES[arch](z.shape[1], y.shape[1], yt[fit].mean(dim=0), **kwargs)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr if lr is None else lr, weight_decay=cfg.weight_decay)
        best, best_state = -np.inf, None
        for epoch in range(cfg.epochs):
            opt.zero_grad()
            loss = loss_on(fit)
            loss.backward()
            opt.step()
            if n_val and (epoch % 10 == 9 or epoch == cfg.epochs - 1):
                current = val_score()
                if current > best:
                    best, best_state = current, {k: v.clone() for k, v in model.state_dict().items()}
        if best_state is not None:
            model.load_state_dict(best_state)
        model.val_score_ = best
        return model.eval()


@dataclass
class LatentScreen:
    """A simulated screen whose effects come from perturbation embeddings, split into train and test."""

    z_train: np.ndarray  # (P_train, d)
    z_test: np.ndarray  # (P_test, d)
    y_train: np.ndarray  # (P_train, G) log1p pseudobulks
    w_train: np.ndarray  # (P_train, G) DEG weights (vs rest among training perturbations)
    test: DEGReference  # observed test perturbations, weights vs rest among test perturbations


def latent_effects(cfg: LossConfig, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings ``z`` (P, d) and log fold changes (P, G) of the latent screen (see :func:`latent_screen`)."""
    rng = np.random.default_rng(seed)
    sim = cfg.sim.with_(n_perturbations=cfg.n_train + cfg.n_test)
    z = rng.normal(size=(sim.n_perturbations, cfg.latent_dim))  # (P, d)
    u = rng.normal(size=(sim.n_genes, cfg.latent_dim)) / np.sqrt(cfg.latent_dim)  # (G, d)
    s = z @ u.T  # (P, G), approximately N(0, 1)
    tau = stats.norm.isf(sim.p_effect / 2)
    return z, np.sign(s) * (np.abs(s) > tau) * np.log(sim.fold_change)  # (P, d), (P, G)


def latent_screen(cfg: LossConfig, seed: int = 0) -> LatentScreen:
    """Simulate a screen with ``z_k ~ N(0, I_d)`` and sparse effects ``±log(fc)`` where ``|u_g · z_k| > tau``.

    ``u_g ~ N(0, I_d / d)`` are hidden gene loadings; ``tau`` makes a fraction ``p_effect`` of (k, g) pairs
    affected, so which genes respond -- and in which direction -- is a learnable function of ``z_k``.
    """
    z, lfc = latent_effects(cfg, seed)
    sim = cfg.sim.with_(n_perturbations=cfg.n_train + cfg.n_test)
    adata = simulate(sim, seed=seed, latent_effects=lfc)
    names = list(adata.uns["truth"]["perturbations"])
    train, test = set(names[: cfg.n_train]), set(names[cfg.n_train :])
    labels = adata.obs[PERTURBATION_KEY].astype(str).to_numpy()

    def reference(keep: set[str]) -> DEGReference:
        sub = adata[np.isin(labels, [*keep, CONTROL])]
        return DEGReference.from_anndata(sub, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")

    ref_train, ref_test = reference(train), reference(test)
    order = {n: i for i, n in enumerate(names)}
    z_train = z[[order[p] for p in ref_train.perturbations]]
    z_test = z[[order[p] for p in ref_test.perturbations]]
    return LatentScreen(z_train, z_test, ref_train.real, ref_train.weights, ref_test)


def latent_truth(cfg: LossConfig, seed: int = 0, cells: int = 800) -> DEGReference:
    """The test perturbations' true expected profiles: the same gene parameters, shared shift and effects as
    :func:`latent_screen`'s test half, observed on ``cells`` cells each (noise ~ 1/sqrt(cells)).

    ``simulate`` draws the gene parameters and the shared shift before any cell, so fewer perturbations and
    more cells keep the ground truth. Rows are in the order of ``latent_screen(cfg, seed).test``; its DEG
    weights are those of the true effects (vs rest among the test perturbations, Eq. W).
    """
    _, lfc = latent_effects(cfg, seed)
    sim = cfg.sim.with_(n_perturbations=cfg.n_test, cells_per_perturbation=cells)
    adata = simulate(sim, seed=seed, latent_effects=lfc[cfg.n_train :])
    return DEGReference.from_anndata(adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")


def compare_losses(
    cfg: LossConfig, seed: int = 0, archs=("linear", "mlp"), train_weights: str = "deg"
) -> dict[str, dict[str, float]]:
    """Train every architecture with MSE and with WMSE on one latent screen; score on held-out perturbations.

    Parameters
    ----------
    train_weights : {"deg", "uniform"}
        Weights of the "WMSE" runs: the DEG weights of the training perturbations (the paper's), or every
        gene ``1 / G`` -- a negative control under which "WMSE" is ``weight_scale`` x MSE, i.e. plain MSE
        for Adam. Scoring always uses the test set's DEG weights.

    Returns
    -------
    dict keyed ``"<arch>/<loss>"`` (and ``"mean_baseline"``) of dicts with the test-set means of
    ``mse, wmse, r2w_delta, pearson_delta_all`` and the weighted ``diversity`` ratio.
    """
    if train_weights not in ("deg", "uniform"):
        raise ValueError(f"train_weights must be 'deg' or 'uniform'; got {train_weights!r}")
    screen = latent_screen(cfg, seed)
    ref = screen.test
    w_train = screen.w_train if train_weights == "deg" else np.full_like(screen.w_train, 1.0 / screen.w_train.shape[1])
    results = {}

    def score(pred: np.ndarray) -> dict[str, float]:
        s = score_pseudobulk(pred, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all)
        out = {k: float(np.nanmean(s[k])) for k in ("mse", "wmse", "r2w_delta", "pearson_delta_all")}
        out["diversity"] = diversity_ratio(pred, ref.real, ref.weights) if np.ptp(pred, axis=0).any() else 0.0
        return out

    results["mean_baseline"] = score(np.tile(screen.y_train.mean(axis=0), (len(ref.perturbations), 1)))
    for arch in archs:
        for loss, w in (("mse", None), ("wmse", w_train)):
            model = fit_response_model(arch, screen.z_train, screen.y_train, w, cfg, seed)
            with torch.no_grad():
                pred = model(torch.as_tensor(screen.z_test, dtype=torch.float32)).double().numpy()
            results[f"{arch}/{loss}"] = score(pred)
            logger.info("%s/%s: %s", arch, loss, results[f"{arch}/{loss}"])
    return results


def tuned_predictions(
    cfg: LossConfig,
    seed: int = 0,
    lrs=(1e-3, 3e-3, 1e-2),
    archs=("linear", "mlp"),
    deg_weights: bool = True,
    wmse_seed: int | None = None,
    losses=("mse", "wmse"),
) -> tuple[LatentScreen, dict[str, tuple[np.ndarray, float, float]]]:
    """The latent screen and, per ``"<arch>/<loss>"``, the tuned model's test predictions (P_test, G), its
    learning rate and its validation Pearson Δ (see :func:`compare_losses_tuned`).

    ``wmse_seed`` gives the "wmse" arm its own seed (initialisation and validation split; default ``seed``):
    with ``deg_weights=False`` that is an A/A control, two MSE models on independent randomness. ``losses``
    limits the arms trained (e.g. ``("wmse",)`` alone, to pair it with an MSE arm trained before).
    """
    lrs = tuple(lrs)
    if not lrs or not all(np.isfinite(lr) and lr > 0 for lr in lrs):
        raise ValueError(f"lrs must be a non-empty sequence of positive learning rates; got {lrs}")
    screen = latent_screen(cfg, seed)
    out = {}
    fitted: dict[tuple[str, bool, float, int], nn.Module] = {}  # identical runs train once
    for arch in archs:
        for loss in losses:
            weighted = loss == "wmse" and deg_weights
            arm_seed = seed if loss == "mse" or wmse_seed is None else wmse_seed
            models = []
            for lr in lrs:
                key = (arch, weighted, lr, arm_seed)
                if key not in fitted:
                    w = screen.w_train if weighted else None
                    fitted[key] = fit_response_model(
                        arch, screen.z_train, screen.y_train, w, cfg, arm_seed, lr=lr, select="pearson_delta_all"
                    )
                models.append((fitted[key].val_score_, lr, fitted[key]))
            val, lr, model = max(models, key=lambda m: m[0])  # ties keep the smaller learning rate
            with torch.no_grad():
                pred = model(torch.as_tensor(screen.z_test, dtype=torch.float32)).double().numpy()
            out[f"{arch}/{loss}"] = (pred, lr, val)
    return screen, out


def score_against(pred: np.ndarray, ref: DEGReference) -> dict[str, float]:
    """Test-set means of ``mse, wmse, r2w_delta, pearson_delta_all`` and the weighted and unweighted diversity
    ratios of ``pred`` (P, G) against ``ref`` (observed profiles, or the truth of :func:`latent_truth`)."""
    s = score_pseudobulk(pred, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all)
    out = {k: float(np.nanmean(s[k])) for k in ("mse", "wmse", "r2w_delta", "pearson_delta_all")}
    varied = np.ptp(pred, axis=0).any()
    out["diversity"] = diversity_ratio(pred, ref.real, ref.weights) if varied else 0.0
    out["diversity_unweighted"] = diversity_ratio(pred, ref.real) if varied else 0.0
    return out


def compare_losses_tuned(
    cfg: LossConfig, seed: int = 0, lrs=(1e-3, 3e-3, 1e-2), archs=("linear", "mlp"), deg_weights: bool = True
) -> dict[str, dict[str, float]]:
    """MSE vs WMSE with a tuned learning rate each, both early-stopped on the same neutral metric.

    For every architecture and loss, one model per learning rate in ``lrs`` is trained
    (:func:`fit_response_model` with ``select="pearson_delta_all"``); the loss keeps the learning rate whose
    model has the best validation Pearson Δ. Models are then scored on the held-out test perturbations.

    Parameters
    ----------
    deg_weights : bool
        False trains the "WMSE" arm with the plain MSE (``weights=None``) -- under which both arms are the
        same model.

    Returns
    -------
    dict keyed ``"<arch>/<loss>"`` (and ``"mean_baseline"``) of test-set means of ``mse, wmse, r2w_delta,
    pearson_delta_all``, the weighted ``diversity`` ratio and its unweighted ``diversity_unweighted``, and
    for models the chosen ``lr`` and its ``val_pearson``.
    """
    screen, preds = tuned_predictions(cfg, seed, lrs, archs, deg_weights)
    ref = screen.test
    results = {"mean_baseline": score_against(np.tile(screen.y_train.mean(axis=0), (len(ref.perturbations), 1)), ref)}
    for name, (pred, lr, val) in preds.items():
        results[name] = score_against(pred, ref) | {"lr": lr, "val_pearson": val}
        logger.info("%s (lr %g): %s", name, lr, results[name])
    return results
