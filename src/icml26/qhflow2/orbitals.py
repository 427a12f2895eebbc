"""Orbital layout: PySCF AO order <-> e3nn irreps, per-atom padded slots and block assembly.

PySCF orders the AOs of an atom shell by shell (each contraction of a shell a block of 2l+1 real spherical
harmonics; p shells as x, y, z; l >= 2 as m = -l..l in PySCF's real-harmonic convention). e3nn's real spherical
harmonics use y as the polar axis. The per-l change of basis ``T_l`` (Y_e3nn = T_l Y_pyscf) is *derived from
the two libraries*: both harmonic sets are evaluated on random unit vectors and T_l is their least-squares map
(orthogonal to 1e-14). Measured: T_1 is the identity (both order p as x, y, z), T_l for l >= 2 is orthogonal but
not a permutation (e3nn's polar axis is y, PySCF's is z).

A molecule's H (nao, nao) becomes blocks B (n_atoms, n_atoms, P, P) in e3nn order on P padded orbital slots
per atom (the union over elements, e.g. STO-3G: 2 s + 1 p slots = 5, def2-SVP: 3 s + 2 p + 1 d = 14), through
one matrix U (n_atoms * P, nao) with orthonormal columns: B = U H U^T, H = U^T B U (exact round trip).
A block between slot a (l_a) and slot b (l_b) is expanded in irreps L = |l_a - l_b| .. l_a + l_b with
Clebsch-Gordan coefficients (e3nn ``wigner_3j``, scaled to be orthonormal): ``BlockExpansion``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@functools.lru_cache(maxsize=16)
def pyscf_to_e3nn(l: int) -> np.ndarray:
    """(2l+1, 2l+1) orthogonal T_l with e3nn's Y_l(r) = T_l @ PySCF's real harmonics Y_l(r), fitted numerically."""
    import torch
    from e3nn import o3
    from pyscf import gto

    rng = np.random.default_rng(1234)
    pts = rng.normal(size=(64 + 8 * l, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    mol = gto.Mole()
    mol.atom, mol.basis, mol.verbose = "Ne 0 0 0", {"Ne": [[l, [1.0, 1.0]]]}, 0
    mol.build()
    ao = mol.eval_gto("GTOval_sph", pts)  # (npts, 2l+1), radial part constant on the unit sphere
    ye = o3.spherical_harmonics(l, torch.tensor(pts), normalize=True).numpy()
    sol = np.linalg.lstsq(ao, ye, rcond=None)[0]  # ye = ao @ sol
    T = (sol / np.linalg.norm(sol, axis=0, keepdims=True)).T
    if not np.allclose(T @ T.T, np.eye(2 * l + 1), atol=1e-10):  # pragma: no cover - a library changed convention
        raise RuntimeError(f"PySCF -> e3nn map for l={l} is not orthogonal")
    return T


def shells_of(mol, atom: int) -> list[int]:
    """Angular momentum of each AO block (shell x contraction) of ``atom``, in PySCF AO order."""
    ls = []
    for ib in range(mol.nbas):
        if mol.bas_atom(ib) == atom:
            ls += [mol.bas_angular(ib)] * mol.bas_nctr(ib)
    return ls


@dataclass(frozen=True)
class OrbitalLayout:
    """Padded per-atom orbital slots for one basis and a set of elements.

    ``element_shells[Z]``: l of each AO block of element Z (PySCF order); ``slot_ls``: l of each padded slot
    (s slots first, then p, ...); ``P``: padded orbitals per atom."""

    basis: str
    element_shells: tuple[tuple[int, tuple[int, ...]], ...]

    @staticmethod
    def for_elements(basis: str, elements) -> OrbitalLayout:
        from icml26.qhflow2.data import make_mol

        shells = []
        for z in sorted(set(int(e) for e in elements)):
            # a lone atom (with a partner H when Z is odd, to keep it closed-shell) tells the basis's shells
            if z % 2:
                mol = make_mol([z, 1], [[0, 0, 0], [0, 0, 2.0]], basis)
            else:
                mol = make_mol([z], [[0, 0, 0]], basis)
            shells.append((z, tuple(shells_of(mol, 0))))
        return OrbitalLayout(basis, tuple(shells))

    @functools.cached_property
    def shells(self) -> dict[int, tuple[int, ...]]:
        return dict(self.element_shells)

    @functools.cached_property
    def slot_ls(self) -> tuple[int, ...]:
        lmax = max(max(s) for s in self.shells.values())
        counts = [max(s.count(l) for s in self.shells.values()) for l in range(lmax + 1)]
        return tuple(l for l in range(lmax + 1) for _ in range(counts[l]))

    @functools.cached_property
    def slot_offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum([2 * l + 1 for l in self.slot_ls])])

    @property
    def P(self) -> int:
        return int(self.slot_offsets[-1])

    @property
    def lmax(self) -> int:
        return max(self.slot_ls)

    def check_elements(self, Z) -> None:
        missing = sorted(set(int(z) for z in Z) - set(self.shells))
        if missing:
            from icml26.qhflow2.data import SYMBOLS

            raise ValueError(f"elements {[SYMBOLS[z] for z in missing]} are not in this model's basis layout "
                             f"({self.basis}, elements {[SYMBOLS[z] for z in self.shells]})")  # fmt: skip

    def embedding(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """U (n*P, nao) with orthonormal columns mapping PySCF AO order to padded e3nn slots, and the slot
        mask (n, P) (True where the atom has that orbital)."""
        self.check_elements(Z)
        n, P = len(Z), self.P
        nao = sum(sum(2 * l + 1 for l in self.shells[int(z)]) for z in Z)
        U = np.zeros((n * P, nao))
        mask = np.zeros((n, P), bool)
        col = 0
        for i, z in enumerate(Z):
            used = {l: 0 for l in set(self.slot_ls)}
            for l in self.shells[int(z)]:
                slot = [k for k, ls in enumerate(self.slot_ls) if ls == l][used[l]]
                used[l] += 1
                r0 = i * P + self.slot_offsets[slot]
                U[r0 : r0 + 2 * l + 1, col : col + 2 * l + 1] = pyscf_to_e3nn(l)
                mask[i, self.slot_offsets[slot] : self.slot_offsets[slot] + 2 * l + 1] = True
                col += 2 * l + 1
        return U, mask

    def to_blocks(self, H: np.ndarray, Z) -> np.ndarray:
        """H (..., nao, nao) in PySCF order -> blocks (..., n, n, P, P) in e3nn order (zero on padded slots)."""
        U, _ = self.embedding(Z)
        n, P = len(Z), self.P
        B = U @ H @ U.T
        return B.reshape(*H.shape[:-2], n, P, n, P).swapaxes(-3, -2)

    def from_blocks(self, B: np.ndarray, Z) -> np.ndarray:
        """Blocks (..., n, n, P, P) in e3nn order -> H (..., nao, nao) in PySCF order (padded slots dropped)."""
        U, _ = self.embedding(Z)
        n, P = len(Z), self.P
        flat = B.swapaxes(-3, -2).reshape(*B.shape[:-4], n * P, n * P)
        return U.T @ flat @ U


class BlockExpansion:
    """Irreps features -> a (P, P) block between two atoms' padded slots, with orthonormal CG coefficients.

    ``irreps``: list of (L, parity, count) in output order; ``matrix``: (n_features, P*P) with orthonormal rows,
    so ``block = f @ matrix`` and ``f = block @ matrix.T`` (for a block in the span)."""

    def __init__(self, slot_ls: tuple[int, ...]):
        import torch
        from e3nn import o3

        offs = np.concatenate([[0], np.cumsum([2 * l + 1 for l in slot_ls])])
        P = int(offs[-1])
        terms = []  # (L, parity, a, b)
        for a, la in enumerate(slot_ls):
            for b, lb in enumerate(slot_ls):
                for L in range(abs(la - lb), la + lb + 1):
                    terms.append((L, (-1) ** (la + lb), a, b))
        terms.sort(key=lambda t: (t[0], -t[1]))
        rows = []
        for L, _, a, b in terms:
            la, lb = slot_ls[a], slot_ls[b]
            c = o3.wigner_3j(la, lb, L, dtype=torch.float64).numpy() * np.sqrt(2 * L + 1)  # (2la+1, 2lb+1, 2L+1)
            for M in range(2 * L + 1):
                blk = np.zeros((P, P))
                blk[offs[a] : offs[a + 1], offs[b] : offs[b + 1]] = c[:, :, M]
                rows.append(blk.ravel())
        self.matrix = np.array(rows)
        self.P = P
        irreps: list[list[int]] = []
        for L, p, _, _ in terms:
            if irreps and irreps[-1][0] == L and irreps[-1][1] == p:
                irreps[-1][2] += 1
            else:
                irreps.append([L, p, 1])
        self.irreps = [tuple(t) for t in irreps]

    @property
    def dim(self) -> int:
        return self.matrix.shape[0]

    def e3nn_irreps(self) -> str:
        return " + ".join(f"{c}x{L}{'e' if p > 0 else 'o'}" for L, p, c in self.irreps)
