"""Device and thread selection for torch systems (``--device auto|cpu|cuda[:N]``, ``--threads N``).

A torch verb calls :func:`add_device_arguments` on its parser and :func:`apply_device_arguments` on the parsed
arguments; both flags then mean the same thing in every system.
"""

from __future__ import annotations

import argparse


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
    if name == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise ValueError("device 'mps' was asked for but Apple's MPS is not available here; use 'cpu'")
        return torch.device("mps")
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda[:N]' or 'mps'; got {device!r}")


def _device_name(text: str) -> str:
    name = text.strip().lower()
    base, _, index = name.partition(":")
    if base not in ("auto", "cpu", "cuda", "mps") or (index and (base != "cuda" or not index.isdigit())):
        raise argparse.ArgumentTypeError(f"{text!r} is not a device: use auto, cpu, cuda, cuda:N or mps")
    return name


def _threads(text: str) -> int:
    from icml26._util.cli import bounded_int

    return bounded_int(1, 256, what="torch threads")(text)


def add_device_arguments(
    parser: argparse.ArgumentParser, *, default_device: str = "auto", default_threads: int | None = None
) -> None:
    """Add ``--device`` and ``--threads`` to a torch verb's parser (``default_threads``: the verb's own choice of
    CPU threads, ``None`` for torch's; :func:`apply_device_arguments` sets it)."""
    parser.add_argument(
        "--device", type=_device_name, default=default_device, help="torch device: auto, cpu, cuda, cuda:N or mps"
    )
    add_threads_argument(parser, default=default_threads)


def add_threads_argument(parser: argparse.ArgumentParser, *, default: int | None = None) -> None:
    """Add ``--threads`` alone, to a torch verb that runs on the CPU only (its reason is listed in the
    output-convention test); ``default`` is the verb's own choice (``None``: torch's)."""
    what = "torch's own choice" if default is None else str(default)
    parser.add_argument("--threads", type=_threads, default=default, help=f"torch CPU threads (default: {what})")


def apply_threads(args: argparse.Namespace) -> None:
    """Set torch's CPU threads from ``args.threads`` when the verb has it and it is set."""
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(int(args.threads))


def apply_device_arguments(args: argparse.Namespace):
    """Set torch's CPU threads from ``args.threads`` (when given) and return ``resolve_device(args.device)``."""
    apply_threads(args)
    return resolve_device(getattr(args, "device", "auto"))
