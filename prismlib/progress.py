"""Progress bars: every long loop of the project makes its bar with :func:`progress_bar`, so
one place decides where bars go (a widget in JupyterLab, text in a terminal, or the log file
of a headless run, :data:`PROGRESS_LOG_ENV`)."""

from __future__ import annotations

import os
from typing import Any

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
