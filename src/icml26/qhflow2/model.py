"""Hamiltonian models in plain torch (no torch-scatter): the QHFlow2-style SO(2) network, a QHNet-style e3nn
tensor-product baseline, a non-equivariant MLP baseline, and an MLIP (energy + autograd forces).

Shapes: a batch holds B frames of ONE molecule with n atoms; ``Z`` (n,), ``pos`` (B, n, 3) in Angstrom. Every
Hamiltonian model returns blocks (B, n, n, P, P) in e3nn orbital order on padded slots (see ``orbitals.py``).
Graphs are fully connected within a frame (molecules here are < 5 A across; the paper uses a 5 A cutoff).

SO(2) convolution (eSCN; Passaro & Zitnick 2023, used by QHFlow2): node features x (N, K, C) with
K = (l_max+1)^2 e3nn components. For an edge i -> j, rotate [x_i, x_j] with the Wigner matrices D(R_ij)^T so the
edge points along e3nn's polar axis (y); there a rotation about the edge multiplies the pair (x_m, x_-m) of
every l by exp(i m theta), so the most general equivariant linear map is, per |m|, a complex multiplication
(W1 + i W2)(x_m + i x_-m) mixing all l >= m and channels (m = 0: a real matrix); scale per (l, channel) by a
radial MLP, rotate back with D(R_ij). Cost O(L^3) instead of the tensor product's O(L^6).
Two-stage edge update: stage 1 = the backbone edge embedding (an SO(2) layer on [x_i, x_j]); stage 2 = an SO(2)
pair layer from that embedding to the block irreps L <= 2 l_orb in the edge frame, rotated back and expanded to
the (P, P) block with Clebsch-Gordan coefficients; diagonal blocks from per-l linear node heads. With
``edge_update="tp"`` stage 2 is the paper's form instead: QHNet-style pair features x_i (x) x_j, tensor-producted
with the stage-one edge embedding (rotated back to the global frame) into the block irreps.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from icml26.qhflow2.orbitals import BlockExpansion


# ----------------------------------------------------------------------------------------------- geometry
@functools.lru_cache(maxsize=16)
def _q_matrix(l: int) -> np.ndarray:
    """D^l of the fixed rotation Q with exp(b X_x) = Q exp(b X_y) Q^T (float64, e3nn basis)."""
    from e3nn import o3

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # e3nn builds its generators in the default dtype
    try:
        X = o3.so3_generators(l)
        for sign in (1.0, -1.0):
            Q = torch.matrix_exp(sign * math.pi / 2 * X[2])
            b = torch.tensor(0.37)
            if torch.allclose(torch.matrix_exp(b * X[0]), Q @ torch.matrix_exp(b * X[1]) @ Q.T, atol=1e-12):
                return Q.numpy()
    finally:
        torch.set_default_dtype(old)
    raise RuntimeError("no Q found")  # pragma: no cover


def _rot_y(l: int, theta: torch.Tensor) -> torch.Tensor:
    """(E, 2l+1, 2l+1) e3nn D^l of a rotation by theta about the polar (y) axis: D[m,m] = cos(m t), D[m,-m] =
    -sin(m t) (matches ``matrix_exp(theta * so3_generators(l)[1])``)."""
    m = torch.arange(-l, l + 1, dtype=theta.dtype, device=theta.device)
    c, s = torch.cos(theta[:, None] * m), torch.sin(theta[:, None] * m)
    D = torch.diag_embed(c)
    idx = torch.arange(2 * l + 1, device=theta.device)
    D[:, idx, idx.flip(0)] = D[:, idx, idx.flip(0)] - s
    D[:, l, l] = 1.0
    return D


def wigner_blocks(lmax: int, vec: torch.Tensor, qs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Per l, D^l(R) (E, 2l+1, 2l+1) of a rotation R taking e3nn's polar axis y onto ``vec`` (E, 3); float64-exact
    (e3nn's ``wigner_D`` builds its generators in float32)."""
    from e3nn import o3

    alpha, beta = o3.xyz_to_angles(vec)
    return [_rot_y(l, alpha) @ qs[l] @ _rot_y(l, beta) @ qs[l].T for l in range(lmax + 1)]


def wigner_D64(l: int, R: torch.Tensor) -> torch.Tensor:
    """e3nn's D^l(R) for a rotation matrix R (3, 3), exact in float64 (for the equivariance test and claim)."""
    from e3nn import o3

    R = R.to(torch.float64)
    a, b, c = (t.reshape(1) for t in o3.matrix_to_angles(R))
    q = torch.tensor(_q_matrix(l))
    return (_rot_y(l, a) @ q @ _rot_y(l, b) @ q.T @ _rot_y(l, c))[0]


def full_edges(B: int, n: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """All ordered pairs (i != j) within each of B frames of n atoms, as flat node indices."""
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    keep = i != j
    off = (torch.arange(B) * n)[:, None]
    return (i[keep][None] + off).reshape(-1).to(device), (j[keep][None] + off).reshape(-1).to(device)


class RadialBasis(nn.Module):
    """Gaussian radial basis on [0, r_cut] with a smooth cosine envelope; (E,) distances -> (E, n_rbf)."""

    def __init__(self, n_rbf: int = 16, r_cut: float = 6.0):
        super().__init__()
        self.register_buffer("centers", torch.linspace(0.0, r_cut, n_rbf, dtype=torch.float64))
        self.r_cut, self.width = r_cut, r_cut / n_rbf

    def forward(self, d: torch.Tensor) -> torch.Tensor:
        env = 0.5 * (torch.cos(math.pi * torch.clamp(d / self.r_cut, max=1.0)) + 1.0)
        return torch.exp(-(((d[:, None] - self.centers) / self.width) ** 2)) * env[:, None]


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, n_out))


# ----------------------------------------------------------------------------------------------- SO(2) layers
class SO2Linear(nn.Module):
    """Equivariant linear map in the edge frame: (E, K_in, c_in) -> (E, K_out, c_out), per |m| a complex-linear
    mixing of all l >= m and channels; outputs with m > min(l_max_in, l_max_out) are zero."""

    def __init__(self, c_in: int, c_out: int, lmax_in: int, lmax_out: int):
        super().__init__()
        self.lmax_in, self.lmax_out, self.c_out = lmax_in, lmax_out, c_out
        self.mmax = min(lmax_in, lmax_out)
        self.w = nn.ModuleList()
        for m in range(self.mmax + 1):
            n_in, n_out = (lmax_in + 1 - m) * c_in, (lmax_out + 1 - m) * c_out
            self.w.append(nn.Linear(n_in, n_out * (1 if m == 0 else 2), bias=(m == 0)))
        for m in range(self.mmax + 1):
            self.register_buffer(f"in_p{m}", torch.tensor([l * l + l + m for l in range(m, lmax_in + 1)]))
            self.register_buffer(f"in_n{m}", torch.tensor([l * l + l - m for l in range(m, lmax_in + 1)]))
            self.register_buffer(f"out_p{m}", torch.tensor([l * l + l + m for l in range(m, lmax_out + 1)]))
            self.register_buffer(f"out_n{m}", torch.tensor([l * l + l - m for l in range(m, lmax_out + 1)]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        E = x.shape[0]
        out = x.new_zeros(E, (self.lmax_out + 1) ** 2, self.c_out)
        for m in range(self.mmax + 1):
            ip, op = getattr(self, f"in_p{m}"), getattr(self, f"out_p{m}")
            if m == 0:
                out[:, op] = self.w[0](x[:, ip].reshape(E, -1)).reshape(E, len(op), self.c_out)
                continue
            inn, on = getattr(self, f"in_n{m}"), getattr(self, f"out_n{m}")
            a = self.w[m](x[:, ip].reshape(E, -1)).reshape(E, 2, len(op), self.c_out)  # W1 x_m, W2 x_m
            b = self.w[m](x[:, inn].reshape(E, -1)).reshape(E, 2, len(op), self.c_out)  # W1 x_-m, W2 x_-m
            out[:, op] = a[:, 0] - b[:, 1]  # Re((W1 + i W2)(x_m + i x_-m))
            out[:, on] = a[:, 1] + b[:, 0]  # Im(...)
        return out


def _e3nn_flat(x: torch.Tensor) -> torch.Tensor:
    """(M, (lmax+1)^2, C) features -> (M, dim) in e3nn's layout of C x l irreps (per l: channel-major, m fastest)."""
    lmax = math.isqrt(x.shape[1]) - 1
    return torch.cat([x[:, l * l : (l + 1) ** 2].transpose(1, 2).reshape(len(x), -1) for l in range(lmax + 1)], 1)


def rotate(x: torch.Tensor, D: list[torch.Tensor], transpose: bool) -> torch.Tensor:
    """Apply per-l Wigner matrices to (E, K, C) features (``transpose``: D^T, into the edge frame)."""
    parts, k = [], 0
    for l, d in enumerate(D):
        blk = x[:, k : k + 2 * l + 1]
        parts.append(torch.einsum("enm,enc->emc" if transpose else "emn,enc->emc", d, blk))
        k += 2 * l + 1
    return torch.cat(parts, dim=1)


class PerL(nn.Module):
    """Per-l channel mixing (equivariant): (N, K, c_in) -> (N, K', c_out) for l <= min(l_in, l_out)."""

    def __init__(self, c_in: int, c_out: int, lmax_in: int, lmax_out: int | None = None, counts=None):
        super().__init__()
        self.lmax_in = lmax_in
        self.lmax_out = lmax_in if lmax_out is None else lmax_out
        self.counts = counts or [c_out] * (self.lmax_out + 1)
        self.lin = nn.ModuleList(
            nn.Linear(c_in, self.counts[l], bias=(l == 0)) for l in range(min(lmax_in, self.lmax_out) + 1)
        )

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Per l, (N, 2l+1, count_l) (zeros where l > l_max_in)."""
        out = []
        for l in range(self.lmax_out + 1):
            if l < len(self.lin):
                out.append(self.lin[l](x[:, l * l : (l + 1) ** 2]))
            else:
                out.append(x.new_zeros(x.shape[0], 2 * l + 1, self.counts[l]))
        return out


class Gate(nn.Module):
    """SiLU on scalars; every l > 0 channel scaled by a sigmoid of the scalars."""

    def __init__(self, c: int, lmax: int):
        super().__init__()
        self.lmax, self.c = lmax, c
        self.gates = nn.Linear(c, c * lmax)
        self.register_buffer("l_of_k", torch.tensor([l for l in range(1, lmax + 1) for _ in range(2 * l + 1)]) - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x[:, 0]
        if self.lmax == 0:
            return nn.functional.silu(s)[:, None]
        g = torch.sigmoid(self.gates(s)).reshape(-1, self.lmax, self.c)[:, self.l_of_k]
        return torch.cat([nn.functional.silu(s)[:, None], x[:, 1:] * g], dim=1)


def _equi_norm(x: torch.Tensor, lmax: int, eps: float = 1e-6) -> torch.Tensor:
    """Per-l RMS normalisation over (m, channels) (rotation invariant)."""
    parts = []
    for l in range(lmax + 1):
        blk = x[:, l * l : (l + 1) ** 2]
        parts.append(blk / torch.sqrt((blk**2).mean(dim=(1, 2), keepdim=True) + eps))
    return torch.cat(parts, dim=1)


# ----------------------------------------------------------------------------------------------- block assembly
class BlockHead(nn.Module):
    """Shared by all Hamiltonian models: irreps features -> symmetric (B, n, n, P, P) blocks, plus the atomic
    reference (per-element invariant diagonal part, fitted from training data; see ``set_reference``)."""

    def __init__(self, slot_ls: tuple[int, ...], max_z: int = 18):
        super().__init__()
        self.expansion = BlockExpansion(tuple(slot_ls))
        self.register_buffer("E", torch.tensor(self.expansion.matrix))
        self.register_buffer("ref", torch.zeros(max_z + 1, self.expansion.P, self.expansion.P, dtype=torch.float64))
        self.P = self.expansion.P
        # per L (parity groups merged): output channels and where they go in the flat feature vector
        self.L_counts: dict[int, int] = {}
        for L, _, c in self.expansion.irreps:
            self.L_counts[L] = self.L_counts.get(L, 0) + c
        self.Lmax = max(self.L_counts)

    def flat(self, per_L: list[torch.Tensor]) -> torch.Tensor:
        """Per L, (M, 2L+1, count_L) -> (M, n_features) in the expansion's (L, parity, term, m) order."""
        used = dict.fromkeys(self.L_counts, 0)
        cols = []
        for L, _, c in self.expansion.irreps:
            blk = per_L[L][:, :, used[L] : used[L] + c]  # (M, 2L+1, c)
            cols.append(blk.transpose(1, 2).reshape(blk.shape[0], -1))
            used[L] += c
        return torch.cat(cols, dim=1)

    def assemble(self, Z, diag: torch.Tensor, pair: torch.Tensor, B: int, n: int) -> torch.Tensor:
        """``diag`` (B*n, F) node features, ``pair`` (B*n*(n-1)/2, F) for i < j -> blocks (B, n, n, P, P)."""
        P = self.P
        blocks = diag.new_zeros(B, n, n, P, P)
        d = (diag @ self.E.to(diag.dtype)).reshape(B, n, P, P)
        d = 0.5 * (d + d.transpose(-1, -2)) + self.ref[torch.as_tensor(Z)].to(d.dtype)
        idx = torch.arange(n)
        blocks[:, idx, idx] = d
        iu, ju = torch.triu_indices(n, n, 1)
        p = (pair @ self.E.to(pair.dtype)).reshape(B, len(iu), P, P)
        blocks[:, iu, ju] = p
        blocks[:, ju, iu] = p.transpose(-1, -2)
        return blocks

    def set_reference(self, Z, blocks: np.ndarray) -> None:
        """Per element, the mean invariant (L = 0) part of the diagonal blocks of training targets
        (B, n, n, P, P): an equivariant atomic baseline that the network corrects."""
        Em = self.expansion.matrix
        is_L0 = np.concatenate([[L == 0] * (c * (2 * L + 1)) for L, _, c in self.expansion.irreps])
        diag = blocks[:, np.arange(len(Z)), np.arange(len(Z))]  # (B, n, P, P)
        f = diag.reshape(*diag.shape[:2], -1) @ Em.T
        ref = self.ref.clone()
        for z in set(int(v) for v in Z):
            mean = f[:, np.asarray(Z) == z].reshape(-1, f.shape[-1]).mean(0) * is_L0
            ref[z] = torch.tensor((mean @ Em).reshape(self.P, self.P))
        self.ref.copy_(ref)


# ----------------------------------------------------------------------------------------------- the models
class SO2Backbone(nn.Module):
    """Embedding + ``layers`` SO(2) message-passing layers; (Z, pos) -> node features (B*n, K, C) and the edges."""

    def __init__(self, channels: int = 16, lmax: int = 2, layers: int = 2, n_rbf: int = 16, max_z: int = 18):
        super().__init__()
        self.C, self.lmax, self.K = channels, lmax, (lmax + 1) ** 2
        self.embed = nn.Embedding(max_z + 1, channels)
        self.rbf = RadialBasis(n_rbf)
        for l in range(lmax + 1):
            self.register_buffer(f"q{l}", torch.tensor(_q_matrix(l)))
        self.convs = nn.ModuleList(SO2Linear(2 * channels, channels, lmax, lmax) for _ in range(layers))
        self.radial = nn.ModuleList(_mlp(n_rbf + 2 * channels, 32, (lmax + 1) * channels) for _ in range(layers))
        self.gates = nn.ModuleList(Gate(channels, lmax) for _ in range(layers))
        self.mix = nn.ModuleList(PerL(channels, channels, lmax) for _ in range(layers))
        self.register_buffer("l_of_k", torch.tensor([l for l in range(lmax + 1) for _ in range(2 * l + 1)]))

    def qs(self, lmax: int) -> list[torch.Tensor]:
        return [getattr(self, f"q{l}") if l <= self.lmax else torch.tensor(_q_matrix(l)) for l in range(lmax + 1)]

    def forward(self, Z, pos: torch.Tensor):
        B, n, _ = pos.shape
        z = torch.as_tensor(Z).repeat(B)
        src, dst = full_edges(B, n)
        flat = pos.reshape(B * n, 3)
        vec = flat[dst] - flat[src]  # (E, 3) edge i -> j
        d = vec.norm(dim=1)
        rbf = self.rbf(d).to(pos.dtype)
        D = wigner_blocks(self.lmax, vec, [q.to(pos.dtype) for q in self.qs(self.lmax)])
        x = pos.new_zeros(B * n, self.K, self.C)
        x[:, 0] = self.embed(z)
        for conv, rad, gate, mix in zip(self.convs, self.radial, self.gates, self.mix, strict=True):
            h = torch.cat([rotate(x[src], D, True), rotate(x[dst], D, True)], dim=2)  # (E, K, 2C) edge frame
            scale = rad(torch.cat([rbf, x[src, 0], x[dst, 0]], dim=1)).reshape(-1, self.lmax + 1, self.C)
            msg = rotate(conv(h) * scale[:, self.l_of_k], D, False)
            agg = torch.zeros_like(x).index_add_(0, src, msg) / max(n - 1, 1)
            x = x + agg
            y = gate(_equi_norm(x, self.lmax))
            x = x + torch.cat(mix(y), dim=1)
        return x, (src, dst, vec, rbf, D)


class SO2HamiltonianModel(nn.Module):
    """QHFlow2-style: SO(2) backbone, two-stage edge update, block heads. (Z, pos (B, n, 3)) -> (B, n, n, P, P)."""

    kind = "so2"

    def __init__(self, slot_ls, channels: int = 16, lmax: int = 2, layers: int = 2, n_rbf: int = 16,
                 edge_update: str = "so2"):  # fmt: skip
        """``edge_update``: the second stage of the edge update, ``so2`` (an SO(2) layer on the stage-one edge
        embedding, in the edge frame) or ``tp`` (the paper's form: QHNet-style pair features x_i (x) x_j,
        tensor-producted with the stage-one edge embedding into the block irreps; e3nn, global frame)."""
        super().__init__()
        if edge_update not in ("so2", "tp"):
            raise ValueError(f"edge_update must be 'so2' or 'tp', got {edge_update!r}")
        self.config = {"slot_ls": list(slot_ls), "channels": channels, "lmax": lmax, "layers": layers,
                       "n_rbf": n_rbf, "edge_update": edge_update}  # fmt: skip
        self.edge_update = edge_update
        self.backbone = SO2Backbone(channels, lmax, layers, n_rbf)
        self.head = BlockHead(tuple(slot_ls))
        Lmax = self.head.Lmax
        counts = [self.head.L_counts.get(L, 0) for L in range(Lmax + 1)]
        self.node_pre = Gate(channels, lmax)
        self.node_head = PerL(channels, 0, lmax, Lmax, counts=counts)
        # two-stage edge update: (1) edge embedding from [x_i, x_j] in the edge frame, (2) pair layer to block irreps
        self.edge1 = SO2Linear(2 * channels, channels, lmax, lmax)
        self.edge1_rad = _mlp(n_rbf, 32, (lmax + 1) * channels)
        self.edge_gate = Gate(channels, lmax)
        self.counts = counts
        if edge_update == "so2":
            self.edge2 = SO2Linear(channels, max(counts), lmax, Lmax)
        else:
            from e3nn import o3

            hidden = o3.Irreps([(channels, (l, (-1) ** l)) for l in range(lmax + 1)])
            self.pair_tp = o3.FullyConnectedTensorProduct(hidden, hidden, hidden)  # QHNet pair features
            self.edge_tp = o3.FullyConnectedTensorProduct(hidden, hidden, self.head.expansion.e3nn_irreps())

    def forward(self, Z, pos: torch.Tensor) -> torch.Tensor:
        B, n, _ = pos.shape
        x, (_, _, vec, rbf, D) = self.backbone(Z, pos)
        diag = self.head.flat(self.node_head(self.node_pre(x)))
        iu, ju = torch.triu_indices(n, n, 1)
        off = (torch.arange(B) * n)[:, None]
        pi, pj = (iu[None] + off).reshape(-1), (ju[None] + off).reshape(-1)
        # edge list order is (frame, i, j != i); find the i < j edges
        e_index = (pi // n) * n * (n - 1) + (pi % n) * (n - 1) + (pj % n) - 1
        De = [d[e_index] for d in D]
        h = torch.cat([rotate(x[pi], De, True), rotate(x[pj], De, True)], dim=2)
        lm = self.backbone.lmax
        e = self.edge1(h) * self.edge1_rad(rbf[e_index]).reshape(-1, lm + 1, self.backbone.C)[:, self.backbone.l_of_k]
        e = self.edge_gate(_equi_norm(e, lm))
        if self.edge_update == "tp":  # stage two: (x_i (x) x_j) (x) e, e rotated back to the global frame
            pair = self.pair_tp(_e3nn_flat(x[pi]), _e3nn_flat(x[pj]))
            pair = self.edge_tp(pair, _e3nn_flat(rotate(e, De, False)))
            return self.head.assemble(Z, diag, pair, B, n)
        out = self.edge2(e)  # (E', (Lmax+1)^2, max count) in the edge frame
        DL = wigner_blocks(self.head.Lmax, vec[e_index], [q.to(pos.dtype) for q in self.backbone.qs(self.head.Lmax)])
        out = rotate(out, DL, False)
        per_L = [out[:, L * L : (L + 1) ** 2, : self.counts[L]] for L in range(self.head.Lmax + 1)]
        return self.head.assemble(Z, diag, self.head.flat(per_L), B, n)


class TPHamiltonianModel(nn.Module):
    """QHNet-style baseline with e3nn ``FullyConnectedTensorProduct`` convolutions (x_j (x) Y(r_ij), weights from a
    radial MLP) and tensor-product block heads. (Z, pos) -> (B, n, n, P, P)."""

    kind = "tp"

    def __init__(self, slot_ls, channels: int = 16, lmax: int = 2, layers: int = 2, n_rbf: int = 16,
                 matched: bool = False):  # fmt: skip
        """``matched``: give the baseline the SO(2) model's two extras, the per-l RMS normalisation before each
        gate and radial MLPs conditioned on both atoms' scalars (n_rbf + 2C inputs), so a comparison differs only
        in the convolution (the fair baseline of ``so2-beats-tuned-tp``)."""
        super().__init__()
        from e3nn import o3

        self.config = {"slot_ls": list(slot_ls), "channels": channels, "lmax": lmax, "layers": layers,
                       "n_rbf": n_rbf, "matched": matched}  # fmt: skip
        self.C, self.lmax, self.matched = channels, lmax, matched
        self.hidden = o3.Irreps([(channels, (l, (-1) ** l)) for l in range(lmax + 1)])
        self.sh = o3.Irreps.spherical_harmonics(lmax)
        self.embed = nn.Embedding(19, channels)
        self.rbf = RadialBasis(n_rbf)
        self.convs = nn.ModuleList()
        self.radial = nn.ModuleList()
        for _ in range(layers):
            tp = o3.FullyConnectedTensorProduct(self.hidden, self.sh, self.hidden, shared_weights=False)
            self.convs.append(tp)
            self.radial.append(_mlp(n_rbf + (2 * channels if matched else 0), 32, tp.weight_numel))
        self.gates = nn.ModuleList(nn.Linear(channels, channels * lmax) for _ in range(layers))
        self.mix = nn.ModuleList(o3.Linear(self.hidden, self.hidden) for _ in range(layers))
        self.head = BlockHead(tuple(slot_ls))
        out = o3.Irreps(self.head.expansion.e3nn_irreps())
        self.node_head = o3.Linear(self.hidden, out)
        self.pair_tp = o3.FullyConnectedTensorProduct(self.hidden, self.hidden, out)
        self.pair_sh = o3.FullyConnectedTensorProduct(self.hidden, self.sh, out, shared_weights=False)
        self.pair_rad = _mlp(n_rbf, 32, self.pair_sh.weight_numel)

    def _gate(self, x: torch.Tensor, lin: nn.Linear) -> torch.Tensor:
        C = self.C
        s = x[:, :C]
        parts = [nn.functional.silu(s)]
        if self.lmax == 0:
            return parts[0]
        g = torch.sigmoid(lin(s)).reshape(-1, self.lmax, C)
        k = C
        for l in range(1, self.lmax + 1):
            blk = x[:, k : k + C * (2 * l + 1)].reshape(-1, C, 2 * l + 1)
            parts.append((blk * g[:, l - 1, :, None]).reshape(-1, C * (2 * l + 1)))
            k += C * (2 * l + 1)
        return torch.cat(parts, dim=1)

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        """``_equi_norm`` in e3nn's flat layout (per l: C x (2l+1) contiguous): per-l RMS over (channels, m)."""
        parts, k = [], 0
        for l in range(self.lmax + 1):
            blk = x[:, k : k + self.C * (2 * l + 1)]
            parts.append(blk / torch.sqrt((blk**2).mean(dim=1, keepdim=True) + 1e-6))
            k += self.C * (2 * l + 1)
        return torch.cat(parts, dim=1)

    def forward(self, Z, pos: torch.Tensor) -> torch.Tensor:
        from e3nn import o3

        B, n, _ = pos.shape
        z = torch.as_tensor(Z).repeat(B)
        src, dst = full_edges(B, n)
        flat = pos.reshape(B * n, 3)
        vec = flat[dst] - flat[src]
        rbf = self.rbf(vec.norm(dim=1)).to(pos.dtype)
        sh = o3.spherical_harmonics(self.sh, vec, normalize=True, normalization="component")
        x = pos.new_zeros(B * n, self.hidden.dim)
        x[:, : self.C] = self.embed(z)
        C = self.C
        for tp, rad, gl, mix in zip(self.convs, self.radial, self.gates, self.mix, strict=True):
            r_in = torch.cat([rbf, x[src, :C], x[dst, :C]], dim=1) if self.matched else rbf
            msg = tp(x[dst], sh, rad(r_in))  # message j -> i
            x = x + torch.zeros_like(x).index_add_(0, src, msg) / max(n - 1, 1)
            x = x + mix(self._gate(self._norm(x) if self.matched else x, gl))
        diag = self.node_head(x)
        iu, ju = torch.triu_indices(n, n, 1)
        off = (torch.arange(B) * n)[:, None]
        pi, pj = (iu[None] + off).reshape(-1), (ju[None] + off).reshape(-1)
        e_index = (pi // n) * n * (n - 1) + (pi % n) * (n - 1) + (pj % n) - 1
        pair = self.pair_tp(x[pi], x[pj]) + self.pair_sh(x[pi] + x[pj], sh[e_index], self.pair_rad(rbf[e_index]))
        return self.head.assemble(Z, diag, pair, B, n)


class MLPHamiltonianModel(nn.Module):
    """Non-equivariant baseline: centred Cartesian coordinates (n*3) -> all block features of the molecule."""

    kind = "mlp"

    def __init__(self, slot_ls, n_atoms: int, hidden: int = 128):
        super().__init__()
        self.config = {"slot_ls": list(slot_ls), "n_atoms": n_atoms, "hidden": hidden}
        self.head = BlockHead(tuple(slot_ls))
        self.n = n_atoms
        F = self.head.expansion.dim
        self.net = nn.Sequential(nn.Linear(3 * n_atoms, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, (n_atoms + n_atoms * (n_atoms - 1) // 2) * F))  # fmt: skip

    def forward(self, Z, pos: torch.Tensor) -> torch.Tensor:
        B, n, _ = pos.shape
        if n != self.n:
            raise ValueError(f"this MLP model was built for {self.n} atoms; got {n}")
        x = (pos - pos.mean(dim=1, keepdim=True)).reshape(B, -1)
        out = self.net(x).reshape(B, -1, self.head.expansion.dim)
        return self.head.assemble(Z, out[:, :n].reshape(B * n, -1), out[:, n:].reshape(-1, out.shape[-1]), B, n)


class MLIP(nn.Module):
    """A small equivariant interatomic potential on the same SO(2) backbone: E = sum_i MLP(scalars_i) (+ per-element
    offsets), F = -dE/dpos by autograd. Units: E [eV], F [eV/A] relative to the training mean."""

    kind = "mlip"

    def __init__(self, channels: int = 16, lmax: int = 2, layers: int = 2, n_rbf: int = 16):
        super().__init__()
        self.config = {"channels": channels, "lmax": lmax, "layers": layers, "n_rbf": n_rbf}
        self.backbone = SO2Backbone(channels, lmax, layers, n_rbf)
        self.readout = _mlp(channels, 32, 1)
        self.register_buffer("e_shift", torch.zeros((), dtype=torch.float64))

    def forward(self, Z, pos: torch.Tensor, forces: bool = True, create_graph: bool = False):
        if forces and not pos.requires_grad:
            pos = pos.clone().requires_grad_(True)
        B, n, _ = pos.shape
        x, _ = self.backbone(Z, pos)
        E = self.readout(x[:, 0]).reshape(B, n).sum(1)
        if not forces:
            return E, None
        (g,) = torch.autograd.grad(E.sum(), pos, create_graph=create_graph)
        return E, -g


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


#: Parameter-name fragments -> component, first match wins (``param_breakdown``).
_COMPONENTS = (
    ("radial MLPs", ("radial", "_rad", "conv_tp_weights")),
    ("embedding", ("embed",)),
    (
        "convolutions / interactions",
        ("convs", "edge1", "edge2", "edge_tp", "pair_tp", "pair_sh", "interactions", "products"),
    ),
    ("gates, norms, mixing", ("gates", "gate", "mix", "node_pre")),
    ("heads / readouts", ("node_head", "readout", "head")),
)


def param_breakdown(model: nn.Module) -> dict[str, int]:
    """Parameter counts per component (radial MLPs, embedding, convolutions, gates and mixing, heads; the rest as
    "other"): where a model's parameters sit, so a "fewer parameters" claim can be read per component."""
    out = {name: 0 for name, _ in _COMPONENTS} | {"other": 0}
    for pname, p in model.named_parameters():
        comp = next((name for name, keys in _COMPONENTS if any(k in pname for k in keys)), "other")
        out[comp] += p.numel()
    return out


def build_model(kind: str, slot_ls, n_atoms: int, **kw) -> nn.Module:
    if kind == "so2":
        return SO2HamiltonianModel(slot_ls, **kw)
    if kind == "tp":
        return TPHamiltonianModel(slot_ls, **kw)
    if kind == "mlp":
        return MLPHamiltonianModel(slot_ls, n_atoms, **{k: v for k, v in kw.items() if k == "hidden"})
    if kind == "mlip":
        return MLIP(**kw)
    raise ValueError(f"unknown model {kind!r} (so2, tp, mlp or mlip)")
