"""Where work runs: the torch device, torch's thread count, and the single-thread worker pool.

On a small CPU, independent trainings share the cores best as separate processes with one
torch thread each (two threads per process on two shared cores is slower); every pool of
the project (probes, LSTM jobs) is :func:`run_pool`, and every thread setting goes
through :func:`torch_threads` or :func:`one_thread`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from typing import Any

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


def progress_bar(iterable: Any = None, *, total: int | None = None, desc: str = "", disable: bool = False, **kw: Any) -> Any:
    """A ``tqdm`` progress bar over ``iterable`` (or of ``total`` steps, updated by hand):
    ``tqdm.auto``, a widget in JupyterLab and text in a terminal.

    Every long loop of the project makes its bar here, so one place decides where bars
    go. ``disable=True`` (a worker process, or a caller asked for quiet) gives a bar that
    prints nothing; ``kw`` are tqdm's (``unit``, ``leave``, ``initial``, ...)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=disable, **kw)


def _call(fn: Callable[[Any], Any], job: Any) -> Any:
    return fn(job)


def run_pool(
    fn: Callable[[Any], Any],
    jobs: Sequence[Any],
    workers: int = 1,
    *,
    progress: bool = True,
    desc: str = "jobs",
    unit: str = "job",
    label: Callable[[Any], str] | None = None,
) -> list[Any]:
    """``[fn(job) for job in jobs]`` in this process (``workers <= 1`` or a single job) or in
    ``workers`` spawned processes with one torch thread each (``fn`` must then be a
    module-level function and the jobs picklable), with one progress bar.

    The results are in job order and do not depend on ``workers``; a job that raises
    re-raises here with its traceback. ``label(job)`` is shown on the bar as each finishes.
    """
    jobs = list(jobs)
    out: list[Any] = [None] * len(jobs)
    with progress_bar(total=len(jobs), desc=desc, unit=unit, leave=False, mininterval=1, disable=not progress) as bar:

        def done(i: int, result: Any) -> None:
            out[i] = result
            if label is not None:
                bar.set_postfix_str(label(jobs[i]))
            bar.update(1)

        if workers <= 1 or len(jobs) <= 1:
            for i, job in enumerate(jobs):
                done(i, fn(job))
            return out
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx, initializer=one_thread) as pool:
            futures = {pool.submit(partial(_call, fn), job): i for i, job in enumerate(jobs)}
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
    return out
