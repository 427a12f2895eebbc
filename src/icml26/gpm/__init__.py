"""Efficient Adaptive Testing via Gradient Path Matching Subset Selection for AI Education (GPM, ICML 2026).

Computerized adaptive testing picks, for each examinee, a small subset of questions whose answers estimate
the examinee's ability as well as the whole question pool would. BECAT framed this as gradient matching
over the whole ability space; GPM instead matches the gradients of the selected subset and of the full pool
only along the optimisation path that the ability estimator actually follows, and uses these intermediate
gradients to train an explicit selection policy from response data.

This package is a complete IRT / CAT toolkit around it: 1PL / 2PL / 3PL / MIRT-2PL banks, MLE / MAP / EAP
ability estimation, marginal-likelihood calibration with missing responses, selectors (random, MFI, KLI,
BECAT, a BOBCAT-style policy, GPM and its end-point ablation) behind one interface, the BOBCAT evaluation
protocol with items-needed curves and bootstrap intervals, and a real-time :class:`AdaptiveTest` session.

Reference: "Efficient Adaptive Testing via Gradient Path Matching Subset Selection for AI Education",
ICML 2026 (poster 63356); predecessors BECAT (Zhuang et al., NeurIPS 2023) and BOBCAT (Ghosh & Lan, IJCAI 2021).
"""

import sys
from types import ModuleType

from icml26._util.lazy import lazy_exports

# Each public name and its module, imported on first use: torch loads only when calibration or a policy is used,
# so the command line's parser (and --help) starts fast (PEP 562).
_LAZY = {
    "calibrate": "calibrate",
    "ItemBank": "irt",
    "estimate_ability": "irt",
    "BOBCATSelector": "policy",
    "GPMSelector": "policy",
    "BECATSelector": "selectors",
    "KLISelector": "selectors",
    "MFISelector": "selectors",
    "RandomSelector": "selectors",
    "AdaptiveTest": "session",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


class _Package(ModuleType):
    """``icml26.gpm.calibrate`` stays the function (as when it was imported eagerly), even once the submodule of the
    same name is imported: the import system's binding of the submodule onto the package is ignored."""

    def __setattr__(self, name, value):
        if not (name == "calibrate" and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "AdaptiveTest",
    "BECATSelector",
    "BOBCATSelector",
    "GPMSelector",
    "ItemBank",
    "KLISelector",
    "MFISelector",
    "RandomSelector",
    "calibrate",
    "estimate_ability",
]
