"""coherence — Coh, a Fréchet-variance objective for coherent, topologically interpretable features.

Implements "Learning Coherent Representations: A Topological Approach to Interpretability" (ICML 2026;
arXiv 2606.02841; no public code). A non-negative sample x feature matrix is *coherent* when every feature's
samples are geometrically clustered (around the feature's barycentric position), every sample's features
are clustered, and both coverage conditions hold. This package measures it on any geometry
(:class:`Geometry`, :func:`coherence_report`, :func:`is_coherent`), trains with it (:class:`Coh`, a torch
regulariser for any code layer, O(B m k) per batch), checks the interleaving theorem with ripser/persim
(:func:`interleaving_check`) and judges features with selectivity-aware measures, each chance-corrected
against a shuffled null (:func:`feature_coherence`: the paper's coherence per feature; :func:`support_contiguity`:
support compactness on a sample graph at the support's own size; :func:`arc_tiling`: how evenly contiguous
feature territories tile a circle; :func:`token_consistency`: top-token consistency), plus the binned
:func:`arc_contiguity`. The Coh formula is our reconstruction from the paper's description (README).
"""

__all__ = [
    "Coh",
    "Geometry",
    "arc_contiguity",
    "arc_tiling",
    "coherence_report",
    "feature_coherence",
    "fit_autoencoder",
    "interleaving_check",
    "is_coherent",
    "support_contiguity",
    "token_consistency",
]


def __getattr__(name: str):
    # scikit-learn, torch, ripser and persim load only when their parts are used (a fast --help)
    if name in ("Geometry", "coherence_report", "is_coherent"):
        from icml26.coherence import geometry

        return getattr(geometry, name)
    if name == "Coh":
        from icml26.coherence.objective import Coh

        return Coh
    if name == "fit_autoencoder":
        from icml26.coherence.model import fit_autoencoder

        return fit_autoencoder
    if name in ("arc_tiling", "feature_coherence", "support_contiguity", "token_consistency"):
        from icml26.coherence import measures

        return getattr(measures, name)
    if name in ("arc_contiguity", "interleaving_check"):
        from icml26.coherence import topology

        return getattr(topology, name)
    raise AttributeError(f"module 'icml26.coherence' has no attribute {name!r}")
