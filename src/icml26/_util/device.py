"""Device selection for torch systems (``--device auto|cpu|cuda``)."""

from __future__ import annotations


def resolve_device(device: str = "auto"):
    """Return a ``torch.device``: ``auto`` picks CUDA when available, else CPU.

    Raises ``ValueError`` for an unknown name and when CUDA is asked for but absent.
    """
    import torch

    name = str(device).lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} was asked for but CUDA is not available here; use 'cpu'")
        return torch.device(name)
    if name == "cpu":
        return torch.device("cpu")
    raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]'; got {device!r}")
