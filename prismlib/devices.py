"""Where work runs: the torch device and torch's thread count.

On a small CPU, independent trainings share the cores best as separate processes with one
torch thread each (two threads per process on two shared cores is slower); every thread
setting goes through :func:`torch_threads` or :func:`one_thread` (the initializer of every
worker process of :func:`prismlib.jobcache.run_pool`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``auto`` -> CUDA when available, else CPU; ``cpu``/``cuda`` as given."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch CPU threads (``None``: leave as is), then restore."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def one_thread() -> None:
    """Initializer of a worker process: one torch thread."""
    torch.set_num_threads(1)
