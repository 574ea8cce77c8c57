"""Where the project keeps things: the project root, figures and results per profile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OUTPUT_ENV = "PRISMLIB_OUTPUT"


def project_root() -> Path:
    """The checkout this package lives in (the folder holding ``pyproject.toml``).

    For an installed (non-editable) copy there is no checkout; then the current working
    directory is used.  ``PRISMLIB_OUTPUT`` overrides where figures and results go.
    """
    here = Path(__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def output_root() -> Path:
    """Root under which ``figures/`` and ``results/`` are written."""
    env = os.environ.get(OUTPUT_ENV)
    return Path(env).expanduser().resolve() if env else project_root()


def figure_dir(profile_name: str) -> Path:
    """``figures/<profile>/``, created if missing."""
    path = output_root() / "figures" / profile_name
    path.mkdir(parents=True, exist_ok=True)
    return path


def results_dir(profile_name: str) -> Path:
    """``results/<profile>/``, created if missing."""
    path = output_root() / "results" / profile_name
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """``.cache/`` under the output root (git-ignored), created if missing."""
    path = output_root() / ".cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` (POSIX ``flock``) for a read-modify-write of
    ``path``, so notebooks run by parallel processes never drop each other's rows.

    The lock file exists only while the lock is held: the holder removes it before
    releasing, and a waiter that wakes up on a removed file takes the lock again on the
    new one (so no ``.lock`` is left beside the outputs).  Where ``fcntl`` does not exist
    (Windows) it does not lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock = path.with_name(path.name + ".lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder before us removed it: lock the current file
    try:
        yield
    finally:
        os.unlink(lock)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
