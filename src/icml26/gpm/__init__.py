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

from icml26.gpm.calibrate import calibrate
from icml26.gpm.irt import ItemBank, estimate_ability
from icml26.gpm.policy import BOBCATSelector, GPMSelector
from icml26.gpm.selectors import BECATSelector, KLISelector, MFISelector, RandomSelector
from icml26.gpm.session import AdaptiveTest

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
