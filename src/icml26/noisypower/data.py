"""Seeded test problems with exact ground truth, local splits for decentralized PCA, and file loaders.

- :func:`spiked_spectrum` — eigenvalues with a prescribed ratio ``lambda_{k+1} / lambda_k``.
- :func:`dense_problem` — ``A = U diag(lambda) U^T`` with a Haar-random ``U`` (exact eigenvectors).
- :func:`sparse_problem` — a sparse ``A`` with exact known spectrum: ``A = G diag(lambda) G^T`` with ``G`` a
  product of two permuted block-diagonal orthogonal matrices (``G`` has at most ``block^2`` non-zeros per
  row, ``A`` at most ``block^4``; about 50 for ``block = 4``).
- :func:`local_covariances` — split a global ``A`` into heterogeneous node matrices ``A_i`` whose mean is ``A``.
- :func:`covariances_from_samples` — node matrices from each node's own data samples (mean = pooled covariance).
- :func:`load_matrix` — ``.npy``, ``.npz`` (dense or scipy sparse) and MatrixMarket ``.mtx`` files, validated.
- :func:`load_suitesparse` — real matrices of the SuiteSparse collection: the bundled ``bcsstk16`` (symmetrised
  from its lower triangle) and ``mbeacxc`` (rectangular; ``gram=True`` for ``M^T M``), or a user's ``.mtx`` /
  triplet text file; :func:`split_rows` deals a data matrix's rows out to the nodes of decentralized PCA.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.stats import ortho_group

from icml26._util.io import check_input_file

__all__ = [
    "Problem",
    "covariances_from_samples",
    "dense_problem",
    "load_matrix",
    "load_suitesparse",
    "local_covariances",
    "sparse_problem",
    "spiked_spectrum",
    "split_rows",
]


@dataclass
class Problem:
    """A symmetric PSD matrix with its exact spectrum.

    Attributes
    ----------
    A : array (d, d) or sparse
    eigvals : array (d,), descending
    eigvecs : array (d, d) or None
        Columns ordered like ``eigvals`` (None when only the top ``k + 1`` are stored: see ``top``).
    top : array (d, k + 1)
        The first ``k + 1`` eigenvectors.
    k : int
    """

    A: np.ndarray | sp.sparray
    eigvals: np.ndarray
    top: np.ndarray
    k: int

    @property
    def U(self) -> np.ndarray:
        """Reference basis of the top-``k`` eigenspace, shape (d, k)."""
        return self.top[:, : self.k]

    @property
    def gap_ratio(self) -> float:
        return float(self.eigvals[self.k] / self.eigvals[self.k - 1])


def spiked_spectrum(
    d: int, k: int, gap_ratio: float, *, top: float = 1.0, spread: float = 0.5, decay: float = 0.5
) -> np.ndarray:
    """Descending eigenvalues: ``k`` of them in ``[spread * top, top]``, then ``lambda_{k+1} = gap_ratio *
    lambda_k`` and a tail decaying geometrically in index to ``decay * lambda_{k+1}``."""
    if not 1 <= k < d:
        raise ValueError(f"need 1 <= k < d; got k={k}, d={d}")
    if not 0 < gap_ratio < 1:
        raise ValueError(f"gap_ratio must be in (0, 1); got {gap_ratio}")
    head = np.linspace(top, spread * top, k)
    lam_next = gap_ratio * head[-1]
    tail = lam_next * decay ** (np.arange(d - k) / max(d - k - 1, 1))
    return np.concatenate([head, tail])


def dense_problem(d: int, k: int, gap_ratio: float, seed=None, **spectrum) -> Problem:
    """Dense ``A = U diag(lambda) U^T`` with Haar-random ``U`` and :func:`spiked_spectrum` eigenvalues."""
    rng = np.random.default_rng(seed)
    lam = spiked_spectrum(d, k, gap_ratio, **spectrum)
    U = ortho_group.rvs(d, random_state=rng)  # (d, d)
    A = (U * lam) @ U.T
    return Problem(0.5 * (A + A.T), lam, U[:, : k + 1].copy(), k)


def _block_orthogonal(d: int, block: int, rng: np.random.Generator) -> sp.csr_array:
    """Permuted block-diagonal orthogonal matrix ``P^T B P`` (``block`` non-zeros per row)."""
    blocks = []
    for start in range(0, d, block):
        size = min(block, d - start)
        blocks.append(ortho_group.rvs(size, random_state=rng) if size > 1 else np.ones((1, 1)))
    B = sp.block_diag(blocks, format="csr")
    perm = rng.permutation(d)
    return sp.csr_array(B[perm][:, perm])


def sparse_problem(
    d: int, k: int, *, eigvals: np.ndarray | None = None, gap_ratio: float = 0.95, block: int = 4, seed=None
) -> Problem:
    """Sparse symmetric PSD ``A = G diag(lambda) G^T`` with exactly known spectrum, ``G = B_2 B_1``.

    ``eigvals`` (descending, length d) defaults to :func:`spiked_spectrum` with ``gap_ratio``.
    """
    rng = np.random.default_rng(seed)
    lam = spiked_spectrum(d, k, gap_ratio) if eigvals is None else np.asarray(eigvals, dtype=float)
    if lam.shape != (d,) or np.any(np.diff(lam) > 0):
        raise ValueError("eigvals must be a descending array of length d")
    G = sp.csr_array(_block_orthogonal(d, block, rng) @ _block_orthogonal(d, block, rng))
    A = sp.csr_array(G @ sp.diags_array(lam) @ G.T)
    A = sp.csr_array(0.5 * (A + A.T))
    top = G[:, : k + 1].toarray()  # eigenvectors = columns of G
    return Problem(A, lam, top, k)


def local_covariances(A: np.ndarray, n_nodes: int, *, heterogeneity: float = 0.5, seed=None) -> np.ndarray:
    """Split ``A`` (d, d) into ``n_nodes`` symmetric local matrices with mean exactly ``A``.

    ``A_i = A + heterogeneity * ||A||_2 * (E_i - mean_j E_j)`` with ``E_i`` random symmetric of unit spectral
    norm: the nodes disagree strongly, so a node cannot solve the problem alone.

    Returns
    -------
    array of shape (n_nodes, d, d)
    """
    A = np.asarray(A, dtype=float)
    if n_nodes < 1:
        raise ValueError(f"n_nodes must be >= 1; got {n_nodes}")
    rng = np.random.default_rng(seed)
    d = A.shape[0]
    E = rng.standard_normal((n_nodes, d, d))
    E = 0.5 * (E + E.transpose(0, 2, 1))
    E /= np.linalg.norm(E, 2, axis=(1, 2))[:, None, None]
    E -= E.mean(axis=0, keepdims=True)
    local = A[None] + heterogeneity * np.linalg.norm(A, 2) * E
    local += (A - local.mean(axis=0))[None]  # exact mean despite rounding
    return 0.5 * (local + local.transpose(0, 2, 1))


def covariances_from_samples(parts: list[np.ndarray], *, center: bool = True) -> np.ndarray:
    """Local matrices from each node's own samples, whose mean is the pooled covariance of all samples.

    Node ``i`` holds ``X_i`` of shape ``(m_i, d)``; ``A_i = (n / M) (X_i - mu)^T (X_i - mu)`` with ``M`` the
    total sample count and ``mu`` the pooled mean (one extra network average; zero when ``center=False``),
    so ``mean_i A_i`` is the pooled (biased) covariance even for unequal ``m_i``.

    Returns
    -------
    array of shape (n_nodes, d, d)
    """
    parts = [np.asarray(X, dtype=float) for X in parts]
    if len(parts) < 2 or any(X.ndim != 2 or X.shape[0] == 0 for X in parts):
        raise ValueError("need at least two nodes, each with a non-empty (m_i, d) sample array")
    if len({X.shape[1] for X in parts}) != 1:
        raise ValueError(f"nodes disagree on the dimension: {sorted({X.shape[1] for X in parts})}")
    if not all(np.all(np.isfinite(X)) for X in parts):
        raise ValueError("samples have NaN or inf entries")
    total = sum(X.shape[0] for X in parts)
    mu = sum(X.sum(axis=0) for X in parts) / total if center else 0.0
    return np.stack([len(parts) / total * (X - mu).T @ (X - mu) for X in parts])


def load_matrix(path: str | Path) -> np.ndarray | sp.csr_array:
    """Read a square matrix from ``.npy``, ``.npz`` (dense array or scipy sparse) or MatrixMarket ``.mtx``.

    Raises ``OSError`` for a missing or empty file and ``ValueError`` for a wrong format or content.
    """
    path = check_input_file(path, what="matrix file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            M = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            try:
                M = sp.load_npz(path)
            except (ValueError, KeyError):
                with np.load(path, allow_pickle=False) as z:
                    if len(z.files) != 1:
                        raise ValueError(f"{path}: a dense .npz must hold exactly one array; has {z.files}") from None
                    M = z[z.files[0]]
        elif suffix == ".mtx":
            M = scipy.io.mmread(path)
        else:
            raise ValueError(f"{path}: unsupported format {suffix!r}; use .npy, .npz or .mtx")
    except Exception as exc:  # zip, pickle, decode and format errors of numpy / scipy: one line naming the file
        if isinstance(exc, ValueError) and str(exc).startswith(str(path)):
            raise
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: cannot read as {suffix}: {cause}") from None
    dtype = M.dtype if sp.issparse(M) else np.asarray(M).dtype
    if not np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_):
        raise ValueError(f"{path}: matrix must be numeric; got dtype {dtype}")
    if np.issubdtype(dtype, np.complexfloating):
        imag = M.imag if sp.issparse(M) else np.asarray(M).imag
        if imag.size and abs(imag).max() != 0:  # dropping it would silently give the eigenspace of another matrix
            raise ValueError(f"{path}: matrix is complex; this PCA needs a real symmetric matrix")
        M = M.real
    if sp.issparse(M):
        M = sp.csr_array(M, dtype=float)
    else:
        M = np.asarray(M).astype(float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{path}: matrix must be square; got shape {M.shape}")
    if M.shape[0] == 0:
        raise ValueError(f"{path}: the matrix is empty (shape {M.shape})")
    return M


# --- real matrices: SuiteSparse ------------------------------------------------------------------------------

SUITESPARSE_DIR = Path(__file__).parent / "suitesparse"
#: bundled matrices (CC BY 4.0; see suitesparse/README.md): name -> (file, stored as the lower triangle)
SUITESPARSE = {"bcsstk16": ("bcsstk16_lower.npz", True), "mbeacxc": ("mbeacxc.npz", False)}


def read_triplets(path: str | Path) -> sp.csr_array:
    """Read SuiteSparse's triplet text format: one ``row col value`` per line, 0-based (CSparse's test files).

    A fourth column (an imaginary part) marks a complex matrix, which is refused: the methods here need a
    real symmetric matrix, and dropping the imaginary part would give the eigenspace of another matrix.
    """
    path = check_input_file(path, what="matrix file")
    try:
        table = np.loadtxt(path, ndmin=2)
    except (ValueError, UnicodeDecodeError) as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"{path}: unsupported format: not .npy/.npz/.mtx, nor triplet text ('row col value' per line): {cause}"
        ) from None
    if table.shape[1] == 4:
        if np.any(table[:, 3] != 0):
            raise ValueError(f"{path}: matrix is complex (a 4th, imaginary column); this PCA needs a real matrix")
        table = table[:, :3]
    if table.shape[1] != 3 or len(table) == 0:
        raise ValueError(f"{path}: need 3 columns 'row col value' per line; got {table.shape[1]}")
    rows, cols = table[:, 0], table[:, 1]
    if np.any(rows < 0) or np.any(cols < 0) or np.any(rows != np.round(rows)) or np.any(cols != np.round(cols)):
        raise ValueError(f"{path}: row and column indices must be non-negative integers (0-based)")
    if max(rows.max(), cols.max()) >= 10_000_000:
        raise ValueError(f"{path}: an index reaches {int(max(rows.max(), cols.max())):,}; at most 10,000,000")
    if not np.all(np.isfinite(table[:, 2])):
        raise ValueError(f"{path}: matrix has NaN or inf entries")
    shape = (int(rows.max()) + 1, int(cols.max()) + 1)
    return sp.csr_array(sp.coo_array((table[:, 2], (rows.astype(np.int64), cols.astype(np.int64))), shape=shape))


def symmetrize_lower(L) -> sp.csr_array:
    """``L + L^T - diag(L)`` for a matrix stored as its lower triangle (refused when entries lie above it)."""
    L = sp.csr_array(L, dtype=float)
    if L.shape[0] != L.shape[1]:
        raise ValueError(f"a lower triangle must be square; got shape {L.shape}")
    if sp.triu(L, 1).count_nonzero():
        raise ValueError("the matrix has entries above the diagonal: it is not a stored lower triangle")
    return sp.csr_array(L + sp.tril(L, -1).T)


def load_suitesparse(name_or_path: str | Path, *, lower: bool | None = None, gram: bool = False) -> sp.csr_array:
    """A real SuiteSparse matrix, as a scipy sparse array.

    Parameters
    ----------
    name_or_path : str or Path
        ``"bcsstk16"`` or ``"mbeacxc"`` (bundled), or a file: Matrix Market ``.mtx`` (scipy expands a
        ``symmetric`` header), a ``.npz`` of a scipy sparse matrix, or the triplet text format (any other name).
    lower : bool, optional
        The file stores only the lower triangle of a symmetric matrix: return ``L + L^T - diag(L)``.
        Default: True for the bundled bcsstk16, False otherwise.
    gram : bool
        Return the Gram matrix ``M^T M`` (columns x columns) of a rectangular data matrix ``M``.
    """
    key = str(name_or_path)
    if key in SUITESPARSE:
        file, stored_lower = SUITESPARSE[key]
        M = sp.csr_array(sp.load_npz(SUITESPARSE_DIR / file))
        lower = stored_lower if lower is None else lower
    else:
        path = Path(name_or_path)
        if not path.exists() and path.suffix == "" and "/" not in key:
            raise ValueError(f"{key!r} is neither a bundled matrix ({', '.join(SUITESPARSE)}) nor a file")
        if path.suffix.lower() in (".mtx", ".npz"):
            M = load_matrix_any_shape(path)
        else:
            M = read_triplets(path)
    if lower:
        M = symmetrize_lower(M)
    if gram:
        M = sp.csr_array(M.T @ M)
    return M


def load_matrix_any_shape(path: str | Path) -> sp.csr_array:
    """A ``.mtx`` or sparse ``.npz`` file as a real sparse array, square or not (complex refused)."""
    path = check_input_file(path, what="matrix file")
    try:
        M = scipy.io.mmread(path) if path.suffix.lower() == ".mtx" else sp.load_npz(path)
    except Exception as exc:  # format errors of scipy: one line naming the file
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: cannot read as {path.suffix}: {cause}") from None
    M = sp.csr_array(M) if sp.issparse(M) else sp.csr_array(np.atleast_2d(np.asarray(M)))
    if np.issubdtype(M.dtype, np.complexfloating):
        if M.nnz and abs(M.imag).max() != 0:
            raise ValueError(f"{path}: matrix is complex; this PCA needs a real matrix")
        M = sp.csr_array(M.real)
    if not np.issubdtype(M.dtype, np.number) or not np.all(np.isfinite(M.data)):
        raise ValueError(f"{path}: matrix must be numeric and finite")
    return sp.csr_array(M, dtype=float)


def split_rows(M, n_nodes: int, *, seed=None) -> np.ndarray:
    """Deal the rows of a data matrix ``M`` (m, d) out to ``n_nodes`` nodes; return their local Gram matrices.

    The rows are shuffled (``seed``) and cut into ``n_nodes`` near-equal contiguous parts ``M_i``; node ``i``
    holds ``A_i = n_nodes * M_i^T M_i / m`` (:func:`covariances_from_samples` without centring), so the mean of
    the ``A_i`` is ``M^T M / m`` and its top-``k`` eigenspace is that of ``M``'s Gram matrix.

    Returns
    -------
    array of shape (n_nodes, d, d)
    """
    M = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=float)
    if M.ndim != 2 or M.shape[0] < n_nodes:
        raise ValueError(f"need a 2-D data matrix with at least {n_nodes} rows (one per node); got {M.shape}")
    perm = np.random.default_rng(seed).permutation(M.shape[0])
    return covariances_from_samples([M[part] for part in np.array_split(perm, n_nodes)], center=False)
