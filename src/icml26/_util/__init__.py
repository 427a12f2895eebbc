"""Small field-agnostic helpers shared by systems: seeding, device selection, timing."""

from icml26._util.device import resolve_device
from icml26._util.seed import seed_everything
from icml26._util.timing import Timer, best_time

__all__ = ["Timer", "best_time", "resolve_device", "seed_everything"]
