"""Hadamard matrices, the fast Walsh-Hadamard transform, the randomized Hadamard rotation and its learnable
orthogonal version (Newton-Schulz orthogonalisation).

Conventions: activations are *row* vectors, ``x @ R`` rotates ``x`` by the orthogonal ``R`` (the paper writes
``x·H1``). A normalised Hadamard matrix of order n is ``H_n / sqrt(n)``; ``H_n H_nᵀ = n I``.

Supported orders (constructions we can build without a table of known matrices):

- ``2^k`` (Sylvester), ``12 · 2^k`` and ``20 · 2^k`` (Paley construction I for q = 11, 19, Kronecker with
  Sylvester: ``H_{m·2^k} = H_m ⊗ H_{2^k}``); e.g. 384 = 12 · 32, 768 = 12 · 64, 640 = 20 · 32.

The fast transform costs O(n log n) for the power-of-two factor plus O(n · m) for the small factor m.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

__all__ = [
    "HadamardRotation",
    "LearnableRotation",
    "fwht",
    "hadamard_factor",
    "hadamard_matrix",
    "hadamard_transform",
    "newton_schulz",
    "orthogonality_error",
    "random_signs",
    "supported_sizes",
]

SMALL_ORDERS = (1, 12, 20)  # the non-power-of-two factors we construct (Paley I: q = 11, 19)

# Muon's quintic Newton-Schulz coefficients (the authors' msign); not convergent to exact orthogonality
QUINTIC_ABC = (3.4445, -4.7750, 2.0315)


def supported_sizes(limit: int = 4096) -> list[int]:
    """Every order up to ``limit`` for which :func:`hadamard_matrix` has a construction."""
    out = set()
    for m in SMALL_ORDERS:
        p = 1
        while m * p <= limit:
            out.add(m * p)
            p *= 2
    return sorted(out)


def hadamard_factor(n: int) -> tuple[int, int]:
    """``(m, p)`` with ``n = m · p``, ``m`` in :data:`SMALL_ORDERS`, ``p`` a power of two; ValueError if none."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"Hadamard order must be a positive integer; got {n!r}")
    for m in (20, 12, 1):
        if n % m == 0:
            p = n // m
            if p & (p - 1) == 0:
                return m, p
    sizes = ", ".join(str(s) for s in supported_sizes(1024))
    raise ValueError(
        f"no Hadamard construction for size {n}: supported sizes are 2^k, 12*2^k and 20*2^k "
        f"({sizes}, ...); choose one of them (pad the width) or use --rotation none"
    )


def _paley(q: int) -> np.ndarray:
    """Paley construction I: a Hadamard matrix of order q + 1 for a prime q ≡ 3 (mod 4)."""
    squares = {(i * i) % q for i in range(1, q)}
    chi = np.array([0] + [1 if i in squares else -1 for i in range(1, q)])  # quadratic character
    jacobsthal = np.array([[chi[(j - i) % q] for j in range(q)] for i in range(q)])  # Q, skew-symmetric
    s = np.zeros((q + 1, q + 1), dtype=np.int64)
    s[0, 1:] = 1
    s[1:, 0] = -1
    s[1:, 1:] = jacobsthal
    return s + np.eye(q + 1, dtype=np.int64)  # H = I + S, S skew with S Sᵀ = q I


@lru_cache(maxsize=64)
def _hadamard_int(n: int) -> np.ndarray:
    m, p = hadamard_factor(n)
    small = np.ones((1, 1), dtype=np.int64) if m == 1 else _paley(m - 1)
    syl = np.ones((1, 1), dtype=np.int64)
    while syl.shape[0] < p:  # Sylvester: H_2p = [[H, H], [H, -H]]
        syl = np.block([[syl, syl], [syl, -syl]])
    return np.kron(small, syl)


def hadamard_matrix(n: int, *, normalized: bool = True, dtype=torch.float32) -> torch.Tensor:
    """The (normalised) Hadamard matrix of order n as a dense tensor (n, n): ``H_m ⊗ H_{2^k}`` (/ sqrt(n))."""
    h = torch.tensor(_hadamard_int(n), dtype=dtype)
    return h / math.sqrt(n) if normalized else h


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Unnormalised fast Walsh-Hadamard transform over the last dim (a power of two): ``x @ H_{2^k}``.

    Butterflies in log2(n) vectorised stages, O(n log n) per row; ``H_{2^k}`` is symmetric, so ``x @ H`` and
    ``H x`` agree.
    """
    if x.ndim == 0:
        raise ValueError("fwht needs a tensor with a last dimension; got a scalar")
    n = x.shape[-1]
    if n & (n - 1):
        raise ValueError(f"fwht needs a power-of-two last dimension; got {n}")
    lead = x.shape[:-1]
    y = x.reshape(-1, n)
    h = 1
    while h < n:
        y = y.view(-1, n // (2 * h), 2, h)  # pairs (a, b) at distance h
        a, b = y[:, :, 0, :], y[:, :, 1, :]
        y = torch.stack((a + b, a - b), dim=2)
        h *= 2
    return y.reshape(*lead, n)


def hadamard_transform(x: torch.Tensor, *, normalized: bool = True, transpose: bool = False) -> torch.Tensor:
    """``x @ H_n`` (or ``x @ H_nᵀ``; / sqrt(n)) over the last dim without forming ``H_n`` for the 2^k factor.

    With ``H_n = H_m ⊗ H_p`` and ``x`` viewed as an (m, p) matrix X (row-major), ``x @ H_n`` is
    ``H_mᵀ X H_p`` flattened (``x @ H_nᵀ`` is ``H_m X H_p``, Sylvester's H_p being symmetric): the fast
    transform on the p axis, a small m x m product on the other.
    """
    n = x.shape[-1]
    m, p = hadamard_factor(n)
    y = fwht(x.reshape(*x.shape[:-1], m, p))  # (..., m, p) @ H_p
    if m > 1:
        hm = torch.as_tensor(_hadamard_int(m), dtype=x.dtype, device=x.device)
        y = torch.einsum("...ap,ba->...bp" if transpose else "...ap,ab->...bp", y, hm)  # H_m Y or H_mᵀ Y
    y = y.reshape(x.shape)
    return y / math.sqrt(n) if normalized else y


def random_signs(n: int, generator: torch.Generator | None = None, dtype=torch.float32) -> torch.Tensor:
    """The diagonal of D: n independent ±1 (fixed per layer and saved with the model)."""
    return (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).to(dtype)


def orthogonality_error(q: torch.Tensor) -> float:
    """``||Qᵀ Q - I||_2`` (spectral norm; 0 for an orthogonal matrix), computed in float64."""
    q = q.detach().double()
    eye = torch.eye(q.shape[-1], dtype=torch.float64)
    return float(torch.linalg.matrix_norm(q.T @ q - eye, ord=2))


def _spectral_bound(w: torch.Tensor, iters: int = 12) -> torch.Tensor:
    """An estimate of ``||W||_2`` from the top of a few power iterations (detached), padded by 2 %."""
    with torch.no_grad():
        v = torch.ones(w.shape[-1], dtype=w.dtype, device=w.device) / math.sqrt(w.shape[-1])
        v = v + 1e-3 * torch.arange(w.shape[-1], dtype=w.dtype, device=w.device) / w.shape[-1]  # break symmetry
        for _ in range(iters):
            v = w.T @ (w @ v)
            v = v / v.norm().clamp_min(1e-30)
        return (w @ v).norm() * 1.02


def newton_schulz(
    w: torch.Tensor, *, method: str = "quintic", steps: int | None = None, tol: float = 1e-6, max_steps: int = 60
) -> torch.Tensor:
    """The orthogonal polar factor msign(W) = U Vᵀ of ``W = U S Vᵀ`` by Newton-Schulz iteration.

    - ``"quintic"`` (the authors' choice, Muon's coefficients): X₀ = W / ||W||_F, then ``steps`` (default 5)
      times X ← aX + (bA + cA²)X with A = XXᵀ. Fast to reach σ ≈ 1 but does **not** converge to exact
      orthogonality: the singular values oscillate in roughly [0.7, 1.2].
    - ``"cubic"`` (classic): X₀ = W / ||W||₂ (a power-iteration estimate), X ← 1.5X − 0.5XXᵀX, converging
      quadratically to U Vᵀ; with ``steps=None`` it iterates until ||XᵀX − I||_max < tol (at most max_steps).

    Differentiable (the normalisation constant of the cubic start is detached).
    """
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"newton_schulz expects a square matrix; got shape {tuple(w.shape)}")
    if not bool(torch.isfinite(w).all()):
        raise ValueError("newton_schulz got a matrix with NaN or infinite entries")
    if method == "quintic":
        a, b, c = QUINTIC_ABC
        x = w / w.norm().clamp_min(1e-30)
        for _ in range(5 if steps is None else steps):
            g = x @ x.T
            x = a * x + (b * g + c * g @ g) @ x
        return x
    if method == "cubic":
        x = w / _spectral_bound(w)
        eye = torch.eye(w.shape[0], dtype=w.dtype, device=w.device)
        n_steps = max_steps if steps is None else steps
        for _ in range(n_steps):
            g = x.T @ x
            if steps is None and float((g - eye).abs().max()) < tol:
                break
            x = 1.5 * x - 0.5 * x @ g
        return x
    raise ValueError(f"unknown Newton-Schulz method {method!r}; use 'quintic' or 'cubic'")


class HadamardRotation(torch.nn.Module):
    """The fixed randomized Hadamard rotation R = D · H_n / sqrt(n) (n x n orthogonal), optionally
    block-diagonal (``blocks`` copies, each with its own signs): ``x @ R`` rotates a row vector.

    ``forward`` uses the fast transform; :meth:`matrix` returns R densely (for fusion and tests).
    ``mix=False`` keeps D and drops H (R = D): the ablation that flips signs but spreads nothing.
    """

    def __init__(self, n: int, *, blocks: int = 1, generator: torch.Generator | None = None, mix: bool = True) -> None:
        super().__init__()
        if n % blocks:
            raise ValueError(f"rotation size {n} is not a multiple of {blocks} blocks")
        self.n, self.blocks, self.block, self.mix = n, blocks, n // blocks, mix
        if mix:
            hadamard_factor(self.block)  # fail early on an unsupported size
        self.register_buffer("signs", random_signs(n, generator))  # D, saved with the model
        self.dense: torch.Tensor | None = None  # set by the encoder for one forward pass (see _DenseRotations)

    def forward(self, x: torch.Tensor, inverse: bool = False) -> torch.Tensor:
        if x.ndim == 0 or x.shape[-1] != self.n:
            raise ValueError(f"rotation of size {self.n} got inputs of shape {tuple(x.shape)}")
        if self.dense is not None:  # the dense blocks of D H formed once for this pass (faster than the FWHT on CPU)
            return _apply_blocks(x, self.dense, inverse)
        if not self.mix:
            return x * self.signs  # D = D^-1
        shape = x.shape
        if not inverse:  # x D H: signs first, then the transform of every block
            y = hadamard_transform((x * self.signs).reshape(*shape[:-1], self.blocks, self.block))
            return y.reshape(shape)
        y = hadamard_transform(x.reshape(*shape[:-1], self.blocks, self.block), transpose=True)  # x Rᵀ = x Hᵀ D
        return y.reshape(shape) * self.signs

    def _block_h(self, dtype) -> torch.Tensor:
        return hadamard_matrix(self.block, dtype=dtype).to(self.signs.device)

    def block_matrices(self, dtype=torch.float32) -> torch.Tensor:
        """The diagonal blocks of R (blocks, block, block)."""
        h = self._block_h(dtype) if self.mix else torch.eye(self.block, dtype=dtype, device=self.signs.device)
        return self.signs.to(dtype).view(self.blocks, self.block, 1) * h  # D_k H per block

    def matrix(self, dtype=torch.float32) -> torch.Tensor:
        if not self.mix:
            return torch.diag(self.signs.to(dtype))
        h = torch.block_diag(*[self._block_h(dtype)] * self.blocks)
        return self.signs.to(dtype)[:, None] * h  # D H (row-vector convention: x @ (D H))


class LearnableRotation(torch.nn.Module):
    """A learnable orthogonal matrix: parameter W initialised to a randomized Hadamard matrix, used as
    msign(W) (Newton-Schulz, ``method`` quintic as in the authors' code, or cubic to orthogonality) in every
    forward pass (``steps`` Newton-Schulz steps; default 5 for the quintic, 12 for the cubic, which reaches
    machine-precision orthogonality from a near-orthogonal W in about 5). ``blocks`` > 1 makes it
    block-diagonal (one W per block)."""

    def __init__(
        self,
        n: int,
        *,
        blocks: int = 1,
        method: str = "quintic",
        steps: int | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        if n % blocks:
            raise ValueError(f"rotation size {n} is not a multiple of {blocks} blocks")
        self.n, self.blocks, self.block = n, blocks, n // blocks
        self.method, self.steps = method, steps
        init = HadamardRotation(n, blocks=blocks, generator=generator).matrix()
        b = self.block
        self.weight = torch.nn.Parameter(
            torch.stack([init[i * b : (i + 1) * b, i * b : (i + 1) * b] for i in range(blocks)])
        )
        self.dense: torch.Tensor | None = None  # msign(W) formed once per forward pass of the encoder

    def block_matrices(self, dtype=None) -> torch.Tensor:
        """msign(W) of every block (blocks, block, block)."""
        steps = self.steps if self.steps is not None else (5 if self.method == "quintic" else 12)
        q = torch.stack([newton_schulz(w, method=self.method, steps=steps) for w in self.weight])
        return q if dtype is None else q.to(dtype)

    def matrix(self, dtype=None) -> torch.Tensor:
        """The block-diagonal msign(W) actually used (n, n)."""
        return torch.block_diag(*self.block_matrices(dtype))

    def forward(self, x: torch.Tensor, inverse: bool = False) -> torch.Tensor:
        if x.ndim == 0 or x.shape[-1] != self.n:
            raise ValueError(f"rotation of size {self.n} got inputs of shape {tuple(x.shape)}")
        q = self.block_matrices(x.dtype) if self.dense is None else self.dense
        return _apply_blocks(x, q, inverse)


def _apply_blocks(x: torch.Tensor, q: torch.Tensor, inverse: bool) -> torch.Tensor:
    """``x @ blockdiag(q_1 .. q_k)`` (or its transpose) for q of shape (k, b, b), without forming the n x n."""
    k, b, _ = q.shape
    if k == 1:
        return x @ (q[0].T if inverse else q[0])
    y = x.reshape(-1, k, b).transpose(0, 1)  # (k, rows, b)
    y = torch.bmm(y, q.transpose(-1, -2) if inverse else q)  # (k, rows, b): one product per block
    return y.transpose(0, 1).reshape(x.shape)
