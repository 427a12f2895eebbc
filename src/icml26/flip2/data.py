"""Variant tables: the FLIP v1 GB1 landscape, mavenn's scans, user CSVs and synthetic Potts landscapes.

Every dataset is a :class:`VariantTable`: aligned sequences (one fixed length per chain), a real target per
sequence, the wild type(s), and -- as FLIP2 insists -- its provenance and licence. Loaders validate what they
read: non-canonical letters (policy ``"reject"`` or ``"map"`` to a stated letter), inconsistent lengths,
duplicate variants with conflicting targets, non-finite targets, and a wild type that does not match the
variants all raise ``ValueError`` with one clear line.
"""

from __future__ import annotations

import gzip
import importlib.resources
import importlib.util
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from icml26._util.io import check_input_file

logger = logging.getLogger(__name__)

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
AA_INDEX = {a: i for i, a in enumerate(AMINO_ACIDS)}
CHAIN_SEP = ":"  # FLIP2 PPI inputs: "seq1:seq2"
#: FLIP v1 GB1 splits shipped with the package (published assignments).
GB1_SPLITS = ("one_vs_rest", "two_vs_rest", "three_vs_rest", "sampled", "low_vs_high")
GB1_SITES = (38, 39, 40, 53)  # 0-based; GB1 V39, D40, G41, V54
MAVENN_SETS = {"gb1_double": "gb1_data.csv.gz", "abeta42": "amyloid_data.csv.gz", "tdp43": "tdp43_data.csv.gz"}
_MAVENN_REF = {
    "gb1_double": "Olson, Wu, Sun (2014) Curr. Biol. 24:2643; via mavenn 1.1.4 (MIT)",
    "abeta42": "Seuma et al. (2021) eLife 10:e63364; via mavenn 1.1.4 (MIT)",
    "tdp43": "Bolognesi et al. (2019) Nat. Commun. 10:4162; via mavenn 1.1.4 (MIT)",
}


@dataclass
class VariantTable:
    """A fitness landscape: sequences, targets, wild type(s), provenance.

    Attributes
    ----------
    name : str
    sequences : ndarray of str, shape (N,)
        Aligned sequences of one length (chains joined by ``":"`` at fixed places).
    targets : ndarray of float, shape (N,)
    wild_types : dict of str to str
        Wild-type name -> sequence (several for multi-wild-type sets such as FLIP2's Hydro).
    wt_of : ndarray of str, shape (N,)
        The wild type each variant descends from.
    provenance, licence : str
    published : dict of str to ndarray
        Published split assignments ("train" / "val" / "test" / "") when the dataset ships them.
    """

    name: str
    sequences: np.ndarray
    targets: np.ndarray
    wild_types: dict[str, str]
    wt_of: np.ndarray
    provenance: str = ""
    licence: str = ""
    published: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sequences = np.asarray(self.sequences, dtype=str)
        self.targets = np.asarray(self.targets, dtype=float)
        self.wt_of = np.asarray(self.wt_of, dtype=str)
        validate(self)

    def __len__(self) -> int:
        return len(self.sequences)

    @property
    def length(self) -> int:
        return len(self.sequences[0])

    def mutations(self) -> list[list[tuple[int, str, str]]]:
        """Per variant, its substitutions ``(position, wt letter, mutant letter)`` relative to its wild type."""
        out = []
        for s, w in zip(self.sequences, self.wt_of, strict=True):
            wt = self.wild_types[w]
            out.append([(i, a, b) for i, (a, b) in enumerate(zip(wt, s, strict=True)) if a != b])
        return out

    def n_mutations(self) -> np.ndarray:
        """Hamming distance of each variant to its wild type, shape (N,)."""
        arr = np.frombuffer("".join(self.sequences).encode(), dtype=np.uint8).reshape(len(self), -1)
        out = np.zeros(len(self), dtype=int)
        for w, seq in self.wild_types.items():
            rows = self.wt_of == w
            out[rows] = (arr[rows] != np.frombuffer(seq.encode(), dtype=np.uint8)).sum(axis=1)
        return out

    def subset(self, idx: np.ndarray, name: str | None = None) -> VariantTable:
        idx = np.asarray(idx)
        return VariantTable(
            name or self.name,
            self.sequences[idx],
            self.targets[idx],
            self.wild_types,
            self.wt_of[idx],
            self.provenance,
            self.licence,
            {k: v[idx] for k, v in self.published.items()},
        )


def clean_sequences(seqs, *, policy: str = "reject", map_to: str = "A") -> np.ndarray:
    """Upper-case, strip, and apply the non-canonical-letter policy.

    ``policy="reject"`` raises on any letter outside the 20 canonical amino acids (and the chain separator);
    ``policy="map"`` replaces each such letter by ``map_to`` and logs how many were replaced.
    """
    if policy not in ("reject", "map"):
        raise ValueError(f"non-canonical letter policy must be 'reject' or 'map'; got {policy!r}")
    if map_to not in AA_INDEX:
        raise ValueError(f"map_to must be a canonical amino acid; got {map_to!r}")
    allowed = set(AMINO_ACIDS + CHAIN_SEP)
    out, n_mapped = [], 0
    for k, s in enumerate(seqs):
        if not isinstance(s, str) or not s.strip():
            raise ValueError(f"sequence {k} is empty or not text")
        s = s.strip().upper()
        bad = set(s) - allowed
        if bad:
            if policy == "reject":
                raise ValueError(
                    f"sequence {k} has non-canonical letters {''.join(sorted(bad))!r} "
                    "(use policy='map' / --noncanonical map to replace them)"
                )
            n_mapped += sum(c in bad for c in s)
            s = "".join(map_to if c in bad else c for c in s)
        out.append(s)
    if n_mapped:
        logger.info("mapped %d non-canonical letters to %s", n_mapped, map_to)
    return np.asarray(out, dtype=str)


def validate(t: VariantTable) -> None:
    """Raise ``ValueError`` on any inconsistency of a variant table (see the module docstring)."""
    n = len(t.sequences)
    if n == 0:
        raise ValueError(f"dataset {t.name!r} has no variants")
    if t.targets.shape != (n,) or t.wt_of.shape != (n,):
        raise ValueError(f"dataset {t.name!r}: {n} sequences but {t.targets.shape} targets / {t.wt_of.shape} wt labels")
    if not np.all(np.isfinite(t.targets)):
        raise ValueError(f"dataset {t.name!r}: {int(np.sum(~np.isfinite(t.targets)))} targets are NaN or infinite")
    lengths = np.char.str_len(t.sequences)
    if np.any(lengths != lengths[0]):
        k = int(np.argmax(lengths != lengths[0]))
        raise ValueError(
            f"dataset {t.name!r}: inconsistent lengths for a fixed-length landscape (sequence {k} has "
            f"{lengths[k]} letters, sequence 0 has {lengths[0]})"
        )
    seps = {tuple(i for i, c in enumerate(seq) if c == CHAIN_SEP) for seq in t.sequences[:5000]}
    if len(seps) > 1:
        raise ValueError(f"dataset {t.name!r}: the chain separator ':' is not at the same place in every sequence")
    if not t.wild_types:
        raise ValueError(f"dataset {t.name!r} has no wild type")
    for w, seq in t.wild_types.items():
        if len(seq) != lengths[0]:
            raise ValueError(
                f"dataset {t.name!r}: wild type {w!r} has {len(seq)} letters but the variants have {lengths[0]}"
            )
    unknown = set(np.unique(t.wt_of)) - set(t.wild_types)
    if unknown:
        raise ValueError(f"dataset {t.name!r}: variants name unknown wild types {sorted(unknown)[:3]}")
    # A wild type that does not match its variants: most variants should be a few substitutions away.
    for w, seq in t.wild_types.items():
        members = t.sequences[t.wt_of == w][:2000]
        if len(members) == 0:
            continue
        wt_arr = np.frombuffer(seq.encode(), dtype=np.uint8)
        arr = np.frombuffer("".join(members).encode(), dtype=np.uint8).reshape(len(members), -1)
        frac_diff = (arr != wt_arr).mean(axis=1)
        if np.median(frac_diff) > 0.5:
            raise ValueError(
                f"dataset {t.name!r}: the wild type {w!r} does not match the variants (median "
                f"{100 * np.median(frac_diff):.0f} % of positions differ)"
            )
    # Duplicate variants: identical targets are merged silently upstream; conflicting ones are an error.
    df = pd.DataFrame({"s": t.sequences, "y": t.targets})
    dup = df[df.duplicated("s", keep=False)]
    if len(dup):
        spread = dup.groupby("s")["y"].agg(lambda v: float(np.ptp(v)))
        conflicting = spread[spread > 1e-9 * max(1.0, float(np.abs(t.targets).max()))]
        if len(conflicting):
            raise ValueError(
                f"dataset {t.name!r}: {len(conflicting)} duplicate variants have conflicting targets "
                f"(e.g. one differs by {conflicting.iloc[0]:.3g}); deduplicate or average them first"
            )
        raise ValueError(f"dataset {t.name!r}: {len(spread)} variants appear more than once; deduplicate them first")


# ----------------------------------------------------------------------------------------------- loaders


def read_fasta(path) -> dict[str, str]:
    """Read a FASTA file into ``{name: sequence}``; raise ``ValueError`` when it holds no record."""
    p = check_input_file(path, what="FASTA file")
    try:
        text = p.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"FASTA file {p} is not text") from None
    return parse_fasta(text, str(p))


def parse_fasta(text: str, where: str = "FASTA") -> dict[str, str]:
    records: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            name = line[1:].split()[0] if line[1:].split() else f"seq{len(records)}"
            records[name] = ""
        elif name is None:
            raise ValueError(f"{where} is not FASTA: the first record has no '>' header")
        else:
            records[name] += line
    if not records or not all(records.values()):
        raise ValueError(f"{where} holds no FASTA sequence")
    return records


def _gb1_wild_type() -> str:
    text = importlib.resources.files("icml26.flip2").joinpath("data/gb1_wild_type.fasta").read_text()
    return next(iter(parse_fasta(text).values()))


def load_flip_gb1(*, keep_only: bool = True) -> VariantTable:
    """The FLIP v1 GB1 four-site landscape (Wu et al. 2016) with FLIP's published split assignments.

    ``keep_only=True`` returns the 8,733 variants FLIP's splits use; ``False`` all 149,361 measured
    variants (``published`` assignments are then empty outside the kept set).
    """
    raw = importlib.resources.files("icml26.flip2").joinpath("data/gb1_four_site.csv.gz").read_bytes()
    df = pd.read_csv(io.BytesIO(gzip.decompress(raw)), keep_default_na=False, dtype={s: str for s in GB1_SPLITS})
    if keep_only:
        df = df[df["keep"] == 1].reset_index(drop=True)
    wt = _gb1_wild_type()
    head, mid, tail = wt[: GB1_SITES[0]], wt[GB1_SITES[2] + 1 : GB1_SITES[3]], wt[GB1_SITES[3] + 1 :]
    seqs = [head + v[:3] + mid + v[3] + tail for v in df["variant"]]
    return VariantTable(
        "gb1",
        np.asarray(seqs),
        df["fitness"].to_numpy(float),
        {"GB1": wt},
        np.full(len(df), "GB1"),
        provenance="Wu et al. 2016 eLife 5:e16965 (measurements); FLIP v1, Dallago et al. 2021 (splits)",
        licence="CC BY 4.0 (data); AFL-3.0 (FLIP split files)",
        published={s: df[s].to_numpy(str) for s in GB1_SPLITS},
    )


def mavenn_available() -> bool:
    return importlib.util.find_spec("mavenn") is not None


def load_mavenn(name: str, *, max_variants: int | None = None, seed: int = 0) -> VariantTable:
    """A mutational scan shipped inside the ``mavenn`` wheel, read as CSV (mavenn itself is not imported).

    ``name`` is one of ``gb1_double`` (Olson 2014 GB1 double mutants), ``abeta42`` (Aβ42 nucleation),
    ``tdp43`` (TDP-43 toxicity). Nonsense variants (``*``) are dropped. The wild type is the per-column
    consensus, checked against mavenn's ``dist`` column. ``max_variants`` subsamples (seeded) after reading.
    """
    if name not in MAVENN_SETS:
        raise ValueError(f"unknown mavenn dataset {name!r}; known: {', '.join(MAVENN_SETS)}")
    spec = importlib.util.find_spec("mavenn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the mavenn data need `pip install --no-deps mavenn==1.1.4` (its CSV files only)")
    path = Path(spec.submodule_search_locations[0]) / "examples" / "datasets" / MAVENN_SETS[name]
    df = pd.read_csv(check_input_file(path, what="mavenn data file"))
    df = df[(df["dist"] > 0) & ~df["x"].str.contains("*", regex=False)]  # stop codons: not a landscape point
    df = df.groupby("x", as_index=False).agg(y=("y", "mean"), dist=("dist", "first"))
    if max_variants is not None and len(df) > max_variants:
        df = df.sample(n=max_variants, random_state=seed).reset_index(drop=True)
    seqs = clean_sequences(df["x"].tolist())
    arr = np.frombuffer("".join(seqs).encode(), dtype=np.uint8).reshape(len(seqs), -1)
    cons = bytes(np.apply_along_axis(lambda c: np.bincount(c, minlength=256).argmax(), 0, arr).astype(np.uint8))
    wt = cons.decode()
    dist = (arr != np.frombuffer(cons, dtype=np.uint8)).sum(axis=1)
    if not np.array_equal(dist, df["dist"].to_numpy()):
        raise ValueError(f"mavenn {name}: the consensus wild type does not reproduce the 'dist' column")
    return VariantTable(
        name,
        seqs,
        df["y"].to_numpy(float),
        {"WT": wt},
        np.full(len(seqs), "WT"),
        provenance=_MAVENN_REF[name],
        licence="MIT (mavenn); original data per the cited paper",
    )


def load_flip2_csv(
    path, *, wild_type: str | dict[str, str] | None = None, noncanonical: str = "reject", name: str | None = None
) -> VariantTable:
    """A FLIP2-format CSV: columns ``sequence``, ``target``, optional ``set`` (train/test), ``validation``
    (bool) and ``wt`` (wild-type name, for multi-wild-type sets). Two-chain PPI rows are ``"seq1:seq2"``.

    Without ``wild_type`` the per-column consensus is used (one wild type). With a dict, ``wt`` names its keys.
    """
    p = check_input_file(path, what="variant CSV")
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ValueError(f"{p} is not a readable CSV: {str(e).splitlines()[0]}") from None
    missing = {"sequence", "target"} - set(df.columns)
    if missing:
        raise ValueError(f"{p} lacks the column(s) {', '.join(sorted(missing))} (need sequence, target)")
    if df["sequence"].isna().any():
        raise ValueError(f"{p}: {int(df['sequence'].isna().sum())} rows have no sequence")
    seqs = clean_sequences(df["sequence"].astype(str).tolist(), policy=noncanonical)
    try:
        y = pd.to_numeric(df["target"], errors="raise").to_numpy(float)
    except (ValueError, TypeError):
        raise ValueError(f"{p}: the target column holds non-numbers") from None
    if isinstance(wild_type, str):
        wts = {"WT": clean_sequences([wild_type], policy=noncanonical)[0]}
        wt_of = np.full(len(seqs), "WT")
    elif isinstance(wild_type, dict):
        wts = {k: clean_sequences([v], policy=noncanonical)[0] for k, v in wild_type.items()}
        if "wt" in df.columns:
            wt_of = df["wt"].astype(str).to_numpy()
        elif len(wts) == 1:
            wt_of = np.full(len(seqs), next(iter(wts)))
        else:
            raise ValueError(f"{p}: several wild types given but no 'wt' column says which variant has which")
    else:
        lens = {len(s) for s in seqs}
        if len(lens) != 1:
            raise ValueError(f"{p}: inconsistent lengths for a fixed-length landscape ({sorted(lens)[:4]} letters)")
        arr = np.frombuffer("".join(seqs).encode(), dtype=np.uint8).reshape(len(seqs), -1)
        cons = np.array([np.bincount(c, minlength=256).argmax() for c in arr.T], dtype=np.uint8)
        wts, wt_of = {"consensus": bytes(cons).decode()}, np.full(len(seqs), "consensus")
    published = {}
    if "set" in df.columns:
        s = df["set"].fillna("").astype(str).str.lower().to_numpy()
        if "validation" in df.columns:
            v = df["validation"].astype(str).str.lower().isin(["true", "1"]).to_numpy()
            s = np.where(v & (s == "train"), "val", s)
        published["published"] = s.astype(str)
    return VariantTable(
        name or p.stem,
        seqs,
        y,
        wts,
        wt_of,
        provenance=f"user file {p.name}",
        licence="as stated by the user",
        published=published,
    )


# ------------------------------------------------------------------------------- synthetic Potts landscape


@dataclass
class PottsLandscape:
    """A Potts model E(x) = sum_i h_i(x_i) + sum_{i<j} J_ij(x_i, x_j) defining ground-truth fitness.

    ``h``: (L, q) fields; ``J``: (L, L, q, q) couplings, symmetric, sparse (a few coupled pairs).
    """

    h: np.ndarray  # (L, q)
    J: np.ndarray  # (L, L, q, q)

    @property
    def L(self) -> int:
        return self.h.shape[0]

    def energy(self, X: np.ndarray) -> np.ndarray:
        """Potts energy of integer sequences ``X`` (N, L) -> (N,); higher is fitter."""
        X = np.atleast_2d(X)
        L = self.L
        e = self.h[np.arange(L), X].sum(axis=1)
        ii, jj = np.triu_indices(L, 1)
        nz = np.any(self.J[ii, jj] != 0, axis=(1, 2))
        for i, j in zip(ii[nz], jj[nz], strict=True):
            e += self.J[i, j, X[:, i], X[:, j]]
        return e

    def sample_mcmc(self, x0: np.ndarray, n: int, rng: np.random.Generator, *, steps: int = 3, beta: float = 1.0):
        """``n`` sequences from exp(beta E) by Gibbs sweeps started at ``x0`` (L,) -> (n, L) int."""
        L, q = self.h.shape
        X = np.tile(x0, (n, 1))
        for _ in range(steps):
            for i in rng.permutation(L):
                # conditional log-probabilities of every letter at site i, for all chains at once: (n, q)
                logit = np.tile(self.h[i], (n, 1))
                for j in np.nonzero(np.any(self.J[i] != 0, axis=(1, 2)))[0]:
                    logit += self.J[i, j][:, X[:, j]].T
                logit = beta * (logit - logit.max(axis=1, keepdims=True))
                p = np.exp(logit)
                p /= p.sum(axis=1, keepdims=True)
                u = rng.random((n, 1))
                X[:, i] = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), q - 1)
        return X


def make_potts(L: int, rng: np.random.Generator, *, q: int = 20, n_pairs: int | None = None, j_scale: float = 1.0):
    """A random Potts model: fields N(0, 1), ``n_pairs`` coupled site pairs with N(0, j_scale^2) couplings."""
    h = rng.normal(size=(L, q))
    J = np.zeros((L, L, q, q))
    n_pairs = L if n_pairs is None else n_pairs
    for _ in range(n_pairs):
        i, j = sorted(rng.choice(L, size=2, replace=False))
        c = rng.normal(scale=j_scale, size=(q, q))
        J[i, j] += c
        J[j, i] += c.T
    return PottsLandscape(h, J)


def _to_str(X: np.ndarray) -> np.ndarray:
    letters = np.frombuffer(AMINO_ACIDS.encode(), dtype=np.uint8)
    return np.asarray([bytes(r).decode() for r in letters[X]], dtype=str)


@dataclass
class SyntheticLandscape:
    """A synthetic FLIP2-style dataset and its ground truth (Potts model, MSA, site distance)."""

    table: VariantTable
    potts: PottsLandscape
    msa: np.ndarray  # (M,) str: family sequences sampled from the model, for zero-shot scores / pretraining
    site_distance: np.ndarray  # (L,) distance of each site to the "active site" (close_to_far splits)
    true_fitness: np.ndarray  # (N,) noise-free fitness


def make_synthetic(
    *,
    L: int = 40,
    n_wild_types: int = 3,
    n_per_wt: int = 1000,
    max_mutations: int = 4,
    n_msa: int = 600,
    noise: float = 0.3,
    seed: int = 0,
) -> SyntheticLandscape:
    """Potts fitness around ``n_wild_types`` homologous wild types (Sec. 7 of our notes; reconstruction).

    Wild types are drawn from the model at low temperature from one ancestor, so they are homologous; each
    gets ``n_per_wt`` variants with 1..``max_mutations`` random substitutions (uniform over the count). The
    observed target is the Potts energy through a saturating non-linearity plus Gaussian noise; the MSA is
    a sample of the model (natural-like family) used for zero-shot scores and masked-LM pretraining.
    """
    for nm, v in (("L", L), ("n_wild_types", n_wild_types), ("n_per_wt", n_per_wt), ("max_mutations", max_mutations)):
        if int(v) < 1:
            raise ValueError(f"{nm} must be >= 1; got {v}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be finite and >= 0; got {noise}")
    if max_mutations > L:
        raise ValueError(f"max_mutations ({max_mutations}) exceeds the length L ({L})")
    rng = np.random.default_rng(seed)
    potts = make_potts(L, rng)
    ancestor = rng.integers(0, 20, size=L)
    ancestor = potts.sample_mcmc(ancestor, 1, rng, steps=10, beta=2.0)[0]
    wts = potts.sample_mcmc(ancestor, n_wild_types, rng, steps=1, beta=2.0)  # homologous: one sweep apart
    msa = potts.sample_mcmc(ancestor, n_msa, rng, steps=4, beta=1.0)
    seqs, wt_of = [], []
    for w in range(n_wild_types):
        k = rng.integers(1, max_mutations + 1, size=n_per_wt)
        X = np.tile(wts[w], (n_per_wt, 1))
        for r in range(n_per_wt):
            pos = rng.choice(L, size=k[r], replace=False)
            shift = rng.integers(1, 20, size=k[r])  # never the wild-type letter
            X[r, pos] = (X[r, pos] + shift) % 20
        seqs.append(X)
        wt_of += [f"wt{w}"] * n_per_wt
    X = np.concatenate(seqs)
    S = _to_str(X)
    _, first = np.unique(S, return_index=True)
    first = np.sort(first)
    X, S, wt_of = X[first], S[first], np.asarray(wt_of)[first]
    e = potts.energy(X)
    z = (e - e.mean()) / e.std()
    true_f = np.tanh(z)  # saturating, as measured assays are
    y = true_f + noise * rng.normal(size=len(z))
    wt_strs = _to_str(wts)
    table = VariantTable(
        f"potts-L{L}-seed{seed}",
        S,
        y,
        {f"wt{w}": wt_strs[w] for w in range(n_wild_types)},
        wt_of,
        provenance=f"synthetic Potts landscape (icml26.flip2.make_synthetic, seed {seed})",
        licence="CC0",
    )
    site_distance = np.abs(np.arange(L) - rng.integers(0, L)).astype(float)
    return SyntheticLandscape(table, potts, _to_str(msa), site_distance, true_f)
