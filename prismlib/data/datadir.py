"""The data directory: where dataset files live, how a loader finds one, and the
errors a missing or damaged file raises.

The data directory is ``$PRISMLIB_DATA`` when set, else the offline copy
``../shared/data`` beside the checkout when present, else ``<repo root>/data``. Files
keep the layout of their canonical distributions (``ptb/ptb.train.txt``,
``20news-bydate.tar.gz`` ...). Loaders import :func:`locate` from here; the
registry (sources, checksums, fetch) imports the loaders, never the other way round.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from prismlib.paths import project_root

ENV_VAR = "PRISMLIB_DATA"
REPO_ROOT = project_root()
FETCH_COMMAND = "python -m prismlib data fetch"
LIST_COMMAND = "python -m prismlib data list"

_CHUNK = 1 << 20


class DataNotFoundError(FileNotFoundError):
    """A dataset file is not in any of the places the project looks."""


class ChecksumError(RuntimeError):
    """A file's SHA-256 (or its structure) is not what the registry expects."""


class DownloadError(RuntimeError):
    """A URL could not be downloaded (for example: no internet)."""


def data_dir() -> Path:
    """The data directory: ``$PRISMLIB_DATA`` when set, else ``../shared/data`` when that
    offline copy (with its ``SHA256SUMS``) sits beside the checkout, else ``<repo root>/data``.

    The same rule as the Makefile's, so ``make``, ``python -m prismlib`` and a notebook
    opened in JupyterLab read the same folder.  A relative ``$PRISMLIB_DATA`` (e.g.
    ``../shared/data``) is taken relative to the current directory when that exists, else
    relative to the repository root (so a notebook running in ``notebooks/`` finds the
    same folder as a shell at the root).
    """
    env = os.environ.get(ENV_VAR)
    if not env:
        shared = REPO_ROOT.parent / "shared" / "data"  # the offline copy beside the checkout
        return shared if (shared / "SHA256SUMS").is_file() else REPO_ROOT / "data"
    path = Path(env).expanduser()
    if path.is_absolute() or path.exists():
        return path
    return REPO_ROOT / path


def search_dirs() -> list[Path]:
    """Where :func:`locate` looks, in order: ``data_dir()`` then ``<repo root>/data``."""
    dirs = [data_dir()]
    default = REPO_ROOT / "data"
    if default.resolve() != dirs[0].resolve():
        dirs.append(default)
    return dirs


def locate(relpath: str, dataset: str | None = None) -> Path:
    """Path of the dataset file ``relpath`` (canonical layout, relative to the data dir).

    Looks in :func:`data_dir` and, if different, ``<repo root>/data``.

    Args:
        relpath: e.g. ``"ptb/ptb.train.txt"``.
        dataset: the registered dataset that owns the file (e.g. ``"ptb"``), named in
            the error's fetch command.

    Raises:
        DataNotFoundError: naming the file, every place searched and the command
            that fetches it.
    """
    dirs = search_dirs()
    for d in dirs:
        path = d / relpath
        if path.is_file():
            return path
    raise DataNotFoundError(_not_found_message(relpath, dataset, dirs))


def _not_found_message(relpath: str, dataset: str | None, dirs: Sequence[Path]) -> str:
    places = "; ".join(str(d / relpath) for d in dirs)
    env = os.environ.get(ENV_VAR)
    env_note = f"{ENV_VAR}={env}" if env else f"{ENV_VAR} is not set"
    if dataset is not None:
        how = f"Fetch it with `{FETCH_COMMAND} {dataset}`"
    else:
        how = f"Fetch its dataset with `{FETCH_COMMAND} NAME` (names: `{LIST_COMMAND}`)"
    return (
        f"dataset file {relpath!r} not found. Looked in: {places} ({env_note}). "
        f"{how}, or set {ENV_VAR} to a directory that already holds a copy "
        f"({ENV_VAR}=/path/to/data)."
    )


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()
