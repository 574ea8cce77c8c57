"""Where the project keeps things: the project root, figures and results per profile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def figure_dir(profile: str) -> Path:
    """``figures/<profile>/``, created if missing."""
    path = output_root() / "figures" / profile
    path.mkdir(parents=True, exist_ok=True)
    return path


def results_dir(profile: str) -> Path:
    """``results/<profile>/``, created if missing."""
    path = output_root() / "results" / profile
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


def save_atomic(path: Path, **obj: object) -> None:
    """``torch.save(obj)`` to ``path`` through a temporary file in the same folder, so a
    reader (or an interrupted run) never sees half a file; creates the folder."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


# Modules whose pickled classes (in ``done.pt``, ``partial.pt``, ``head.pt`` of the job cache)
# now live in a package that re-exports them: checkpoints written before the library was
# grouped into packages load unchanged.
MOVED_MODULES: dict[str, str] = {
    "prismlib.mlm": "prismlib.prism",
    "prismlib.continued": "prismlib.prism",
    "prismlib.staged": "prismlib.prism",
    "prismlib.encode": "prismlib.probing",
    "prismlib.probe": "prismlib.probing",
    "prismlib.learned": "prismlib.probing",
    "prismlib.jobs": "prismlib.lstm",
    "prismlib.memory": "prismlib.lstm",
    "prismlib.timescales": "prismlib.lstm",
}


def load_checkpoint(path: Path, map_location: Any = "cpu") -> dict[str, Any]:
    """``torch.load`` of a checkpoint written by :func:`save_atomic` (trusted: our own
    cache, so full unpickling), mapping the classes of :data:`MOVED_MODULES` to where
    they live now."""
    import pickle
    import types

    import torch

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            return super().find_class(MOVED_MODULES.get(module, module), name)

    moved = types.ModuleType("moved_pickle")
    moved.__dict__.update({k: getattr(pickle, k) for k in dir(pickle) if not k.startswith("__")})
    moved.Unpickler = Unpickler
    return torch.load(path, map_location=map_location, weights_only=False, pickle_module=moved)
