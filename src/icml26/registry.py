"""The 19 systems of icml26: ids, papers, status and lazy entry points.

Nothing here imports a system. Entry points are ``"module:attr"`` strings resolved only when a command
needs them, so ``import icml26`` and ``icml26 list`` stay fast and never load torch or any other heavy
dependency of a system.

A system's claims entry point names a list of :class:`icml26.claims.Claim` objects (``CLAIMS``); its CLI
entry point names a function ``main(argv: list[str]) -> int``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Status = Literal["planned", "implemented"]

SYSTEM_ID = re.compile(r"^[a-z][a-z0-9]*$")
PACKAGE_ROOT = Path(__file__).resolve().parent


_REQUIRED = object()


@dataclass(frozen=True)
class SystemSpec:
    """One system: the paper it implements and where its code lives.

    Parameters
    ----------
    id : str
        Short lower-case name; also the sub-package ``icml26.<id>`` and the CLI word ``icml26 <id>``.
    title : str
        The paper's title (or the best known name of its method when the title is not public).
    summary : str
        One line: what the system does for a user.
    status : {"planned", "implemented"}
        Only implemented systems are run, checked and dispatched to.
    venue : str
        Where the paper appears.
    reference : str
        arXiv id or other pointer, empty when none is public.
    extra : str
        The optional-dependency groups (``pip install 'icml26[<extra>]'``, comma-separated when several) the
        system needs; ``""`` for core only.
    package : str
        The system's package; ``icml26.<id>`` unless given (tests register a fake system elsewhere).
    """

    id: str
    title: str
    summary: str
    status: Status = "planned"
    venue: str = "ICML 2026"
    reference: str = ""
    extra: str = ""
    package: str = ""

    def __post_init__(self) -> None:
        if not SYSTEM_ID.match(self.id):
            raise ValueError(f"system id {self.id!r} must be lower-case letters and digits")
        if self.status not in ("planned", "implemented"):
            raise ValueError(f"status {self.status!r} must be 'planned' or 'implemented'")

    @property
    def module(self) -> str:
        return self.package or f"icml26.{self.id}"

    @property
    def claims_entry(self) -> str:
        return f"{self.module}.claims:CLAIMS"

    @property
    def mechanisms_entry(self) -> str:
        """The credited mechanisms and their liveness probes, beside ``CLAIMS`` (contract v3)."""
        return f"{self.module}.claims:MECHANISMS"

    @property
    def measures_entry(self) -> str:
        """The measure checks (truth best, null at the null), beside ``CLAIMS`` (contract v3)."""
        return f"{self.module}.claims:MEASURES"

    @property
    def cli_entry(self) -> str:
        return f"{self.module}.cli:main"

    @property
    def folder(self) -> Path:
        if not self.package:
            return PACKAGE_ROOT / self.id
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"package {self.package!r} of system {self.id!r} not found")
        return Path(next(iter(spec.submodule_search_locations)))

    @property
    def readme(self) -> Path:
        return self.folder / "README.md"

    @property
    def implemented(self) -> bool:
        return self.status == "implemented"


def load_entry(entry: str, default: Any = _REQUIRED) -> Any:
    """Resolve a lazy ``"package.module:attr"`` string (``default`` when the module lacks the attribute)."""
    module_name, _, attr = entry.partition(":")
    if not attr:
        raise ValueError(f"entry point {entry!r} is not of the form 'module:attr'")
    module = importlib.import_module(module_name)
    if default is _REQUIRED:
        return getattr(module, attr)
    return getattr(module, attr, default)


_SYSTEMS = [
    SystemSpec(
        "dualflow",
        "Dynamic Compression Flow: dual flow matching for identifiable low-dimensional latent dynamics",
        "compressive + dynamical flow matching give a low-dimensional latent of neural/behavioural time series",
        status="implemented",
        extra="dynamics,baselines",
    ),
    SystemSpec(
        "degmetrics",
        "Needles in the Haystack: Addressing Signal Dilution Improves scRNA-seq Perturbation Response "
        "Modeling and Evaluation",
        "DEG-weighted metrics (WMSE, weighted delta R2) and calibration baselines for perturbation models",
        status="implemented",
        reference="arXiv:2506.22641",
        extra="sc,torch",
    ),
    SystemSpec(
        "brainconverge",
        "Alignment between Brains and AI: Evidence for Convergent Evolution across Modalities, Scales and "
        "Training Trajectories",
        "RBF-CKA alignment of model layers with brain ROIs across a model zoo, with Granger tests",
        status="implemented",
        extra="align",
    ),
    SystemSpec(
        "gpm",
        "Efficient Adaptive Testing via Gradient Path Matching Subset Selection for AI Education",
        "IRT calibration and adaptive testing with a policy trained to match gradient paths",
        status="implemented",
        extra="torch,irt",
    ),
    SystemSpec(
        "nanoassembly",
        "Autonomous STM nano-assembly: collision-free plans, SAT schedules and RL execution",
        "min-distance assignment, SAT schedule with empty corridors, RL execution, NanoAssemblyGym",
        status="implemented",
        extra="assembly",
    ),
    SystemSpec(
        "ucast",
        "U-Cast: A Surprisingly Simple and Efficient Frontier Probabilistic AI Weather Forecaster",
        "U-Net weather forecaster: MAE pre-training, fair-CRPS fine-tuning, MC-dropout ensembles",
        status="implemented",
        reference="arXiv:2604.09041",
        extra="weather",
    ),
    SystemSpec(
        "vipo",
        "VIPO: Value Function Inconsistency Penalized Offline Reinforcement Learning",
        "model-based offline RL whose dynamics model is penalised for value inconsistency",
        extra="rl",
        status="implemented",
        reference="arXiv:2504.11944",
    ),
    SystemSpec(
        "hyperhopfield",
        "Hyperbolic Neural Population Geometry Benefits Computation",
        "multi-scale place codes, hyperbolic geometry and Karcher-flow hyperbolic associative memory",
        status="implemented",
        extra="topology",
    ),
    SystemSpec(
        "spik4lite",
        "Spik4lite: Refactoring Neuromorphic Sparsity for Efficient Spiking Neural Networks on Commodity Edge Devices",
        "learned channel gates and energy loss, then physical removal of channels in spiking transformers",
        status="implemented",
        extra="snn",
    ),
    SystemSpec(
        "slmbrain",
        "Linguistic Properties and Model Scale in Brain Encoding: From Small to Compressed Language Models",
        "voxelwise encoding models from small, quantised and pruned language models; linguistic probing",
        status="implemented",
        extra="encoding",
    ),
    SystemSpec(
        "coherence",
        "Learning Coherent Representations: A Topological Approach to Interpretability",
        "a Frechet-variance coherence objective that makes features geometrically contiguous",
        status="implemented",
        extra="topology",
    ),
    SystemSpec(
        "srfpt",
        "When Is Symbolic Regression Tractable?",
        "exhaustive FPT symbolic regression by size/depth and executable hardness reductions",
        status="implemented",
        extra="sym",
    ),
    SystemSpec(
        "eegmoce",
        "EEG-Based Multimodal Learning via Hyperbolic Mixture-of-Curvature Experts",
        "per-modality Lorentz experts with learnable curvature and curvature-aware fusion",
        status="implemented",
        extra="eeg",
    ),
    SystemSpec(
        "smoothspike",
        "SmoothSpike: Spiking Transformer with Learnable Hadamard Transformation",
        "learnable Hadamard rotations that avoid spike saturation in spiking transformers",
        extra="spiketext",
        status="implemented",
    ),
    SystemSpec(
        "behaviorgeo",
        "From Associations to Activations: Comparing Behavioral and Hidden-State Semantic Geometry in LLMs",
        "behavioural (forced-choice, free-association) vs hidden-state semantic geometry of LLMs",
        extra="behavior",
        status="implemented",
        reference="arXiv:2602.00628",
    ),
    SystemSpec(
        "zolangevin",
        "Zeroth-Order Non-Log-Concave Sampling with Variance Reduction and Applications to Inverse Problems",
        "variance-reduced zeroth-order Langevin sampling and ZO-APMC for black-box inverse problems",
        status="implemented",
        reference="arXiv:2605.30573",
        extra="torch,imaging",
    ),
    SystemSpec(
        "flip2",
        "FLIP2: Expanding Protein Fitness Landscape Benchmarks for Real-World Machine Learning Applications",
        "protein-fitness benchmark: campaign splits, ridge/CNN baselines, Spearman and NDCG",
        status="implemented",
        extra="protein",
    ),
    SystemSpec(
        "qhflow2",
        "Machine Learning Hamiltonians are Accurate Energy-Force Predictors",
        "SO(2)-equivariant Hamiltonian model; energies and forces from predicted Hamiltonians via PySCF",
        extra="chem",
        status="implemented",
        reference="arXiv:2602.16897",
    ),
    SystemSpec(
        "noisypower",
        "Improved Analysis of the Accelerated Noisy Power Method with Applications to Decentralized PCA",
        "accelerated noisy power method under inexact matvecs; accelerated decentralized PCA (sim + MPI)",
        status="implemented",
        reference="arXiv:2602.03682",
        extra="mpi",
    ),
]

SYSTEMS: dict[str, SystemSpec] = {spec.id: spec for spec in _SYSTEMS}


def get(system_id: str) -> SystemSpec:
    """Return the spec of ``system_id``; raise ``KeyError`` with the known ids otherwise."""
    try:
        return SYSTEMS[system_id]
    except KeyError:
        raise KeyError(f"unknown system {system_id!r}; known: {', '.join(sorted(SYSTEMS))}") from None


def implemented() -> list[SystemSpec]:
    return [spec for spec in SYSTEMS.values() if spec.implemented]
