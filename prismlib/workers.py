"""Where work runs: the torch device, torch's thread count, and the single-thread worker pool.

On a small CPU, independent trainings share the cores best as separate processes with one
torch thread each (two threads per process on two shared cores is slower); every pool of
the project (probes, LSTM jobs) is :func:`run_pool`, and every thread setting goes
through :func:`torch_threads` or :func:`one_thread`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
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


PROGRESS_LOG_ENV = "PRISMLIB_PROGRESS_LOG"
"""Set by the headless runner (``python -m prismlib reproduce``): the run's log file,
where every progress bar goes instead of the executed notebook."""


def progress_bar(iterable: Any = None, *, total: int | None = None, desc: str = "", disable: bool = False, **kw: Any) -> Any:
    """A ``tqdm`` progress bar over ``iterable`` (or of ``total`` steps, updated by hand).

    Every long loop of the project makes its bar here, so one place decides where bars
    go: with ``$PRISMLIB_PROGRESS_LOG`` set (a notebook run headless by ``python -m
    prismlib reproduce``) the bar is appended as text lines to that log file, at most one
    every 30 s, and nothing reaches the notebook; otherwise ``tqdm.auto``: a widget in
    JupyterLab (``ipywidgets``), text in a terminal. ``disable=True`` (a worker process,
    or a caller asked for quiet) gives a bar that prints nothing; ``kw`` are tqdm's
    (``unit``, ``leave``, ``initial``, ...)."""
    log = os.environ.get(PROGRESS_LOG_ENV)
    if log and not disable:
        from tqdm.std import tqdm as text_tqdm

        kw["mininterval"] = max(float(kw.get("mininterval", 0.1)), 30.0)
        return text_tqdm(iterable, total=total, desc=desc, file=_log_file(log), ascii=True, **kw)
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=disable, **kw)


_LOGS: dict[str, Any] = {}


class _LineLog:
    """A file-like that writes tqdm's carriage-return refreshes as separate lines."""

    def __init__(self, path: str) -> None:
        self.fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    def write(self, text: str) -> None:
        text = text.replace("\r", "\n").replace("\x1b[A", "")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if lines:
            self.fh.write("\n".join(lines) + "\n")
            self.fh.flush()

    def flush(self) -> None:
        self.fh.flush()


def _log_file(path: str) -> _LineLog:
    if path not in _LOGS:
        _LOGS[path] = _LineLog(path)
    return _LOGS[path]


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
        pool = ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx, initializer=one_thread)
        try:
            futures = {pool.submit(partial(_call, fn), job): i for i, job in enumerate(jobs)}
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
        except BaseException:  # Ctrl-C or a failed job: start nothing more, stop the workers (they keep their checkpoints)
            _stop(pool)
            raise
        pool.shutdown()
    return out


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s pending jobs and terminate its workers, so that an interrupted run
    ends now instead of running every queued job first (``with pool`` would wait for them)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=10)
