"""Cached artefacts that carry their digest: written atomically, checked when read.

Every file an expensive step leaves in ``.cache/`` (a job's ``done.pt`` and ``partial.pt``,
the encoder-states cache, section 4's frozen-layer states) is written by
:func:`save_atomic` (or sealed by :func:`write_digest`) with a sidecar
``<file>.sha256`` holding the SHA-256 and size of its bytes. :func:`check` compares them;
:func:`load_checkpoint` refuses a file whose bytes no longer match (:class:`CorruptArtifact`)
and :func:`load_or_discard` moves such a file aside (:func:`move_aside`: kept under
``.cache/quarantine/`` for inspection, never deleted) with one line on stderr, so the
caller recomputes it.

A file written before digests existed (no sidecar) is *adopted*: if it loads, its digest
is written then; if it does not, it is corrupt like any other.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import sys
import types
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

DIGEST_SUFFIX = ".sha256"
QUARANTINE = "quarantine"
"""Folder of the cache where entries that failed a check are moved (``.cache/quarantine/``)."""

# Modules whose pickled classes (in ``done.pt``, ``partial.pt``, ``head.pt`` of the job cache)
# now live in a package that re-exports them: checkpoints written before the library was
# grouped into packages, or before a module was renamed (issue 29), load unchanged.
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
    "prismlib.lstm.schedule": "prismlib.anneal",
    "prismlib.probing.spectral_gate": "prismlib.probing",
    "prismlib.lstm.dyck": "prismlib.lstm.iclr",  # the ICLR 2021 modules moved into a sub-package (issue 43)
    "prismlib.lstm.dyck_model": "prismlib.lstm.iclr",
    "prismlib.lstm.dyck_training": "prismlib.lstm.iclr",  # a Dyck job's done.pt and partial.pt hold a DyckHistory
    "prismlib.lstm.routing": "prismlib.lstm.iclr",
    "prismlib.lstm.mutual_information": "prismlib.lstm.iclr",
}


class CorruptArtifact(Exception):
    """A cached file that is missing, truncated, changed or unreadable.

    Attributes:
        path: the file.
        problem: what is wrong, in a few words.
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}; `python -m prismlib cache verify --move-aside` moves it aside and the next run recomputes it")
        self.path, self.problem = Path(path), problem


def digest_path(path: Path) -> Path:
    """``<path>.sha256``: the sidecar of ``path``."""
    return Path(path).with_name(Path(path).name + DIGEST_SUFFIX)


def file_digest(path: Path) -> str:
    """SHA-256 of the bytes of ``path`` (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _write_json_atomic(path: Path, obj: object) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj))
    tmp.replace(path)


def write_digest(path: Path, digest: str | None = None) -> None:
    """Seal ``path``: write its sidecar (``digest``: the SHA-256 already computed of its bytes)."""
    path = Path(path)
    _write_json_atomic(digest_path(path), {"sha256": digest or file_digest(path), "bytes": path.stat().st_size})


_VERIFIED: dict[Path, tuple[int, int, str]] = {}
"""Files verified in this process: path -> (mtime_ns, size, digest); a re-check of an
unchanged file is free."""


def check(path: Path) -> str | None:
    """What is wrong with ``path`` against its sidecar: ``None`` when it matches, else the problem
    (``missing``, ``no digest``, a size or digest mismatch)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        return "missing"
    side = digest_path(path)
    try:
        recorded = json.loads(side.read_text())
    except FileNotFoundError:
        return "no digest"
    except (json.JSONDecodeError, UnicodeDecodeError):
        return f"its digest file {side.name} is unreadable"
    if st.st_size != recorded.get("bytes"):
        return f"truncated or changed: {st.st_size:,} bytes, {recorded.get('bytes'):,} when written"
    seen = _VERIFIED.get(path)
    if seen == (st.st_mtime_ns, st.st_size, recorded["sha256"]):
        return None
    actual = file_digest(path)
    if actual != recorded.get("sha256"):
        return f"changed since written: SHA-256 {actual[:12]}..., {str(recorded.get('sha256'))[:12]}... when written"
    _VERIFIED[path] = (st.st_mtime_ns, st.st_size, actual)
    return None


def save_atomic(path: Path, **obj: object) -> None:
    """``torch.save(obj)`` to ``path`` through a temporary file in the same folder, so a
    reader (or an interrupted run) never sees half a file, then its digest sidecar; creates
    the folder. (A kill between the two leaves a file its sidecar does not match: it is
    discarded and recomputed, never used.)"""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    digest = file_digest(tmp)
    tmp.replace(path)
    write_digest(path, digest)


def _unpickler_module() -> types.ModuleType:
    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            return super().find_class(MOVED_MODULES.get(module, module), name)

    moved = types.ModuleType("moved_pickle")
    moved.__dict__.update({k: getattr(pickle, k) for k in dir(pickle) if not k.startswith("__")})
    moved.Unpickler = Unpickler  # type: ignore[attr-defined]
    return moved


def load_checkpoint(path: Path, map_location: Any = "cpu", weights_only: bool = False) -> dict[str, Any]:
    """``torch.load`` of a file written by :func:`save_atomic`, after checking its digest.

    Full unpickling (``weights_only=False``, our own cache) maps the classes of
    :data:`MOVED_MODULES` to where they live now. A file without a sidecar (written before
    digests) is adopted when it loads.

    Raises:
        CorruptArtifact: the file is missing, does not match its digest, or cannot be read.
    """
    import torch

    path = Path(path)
    problem = check(path)
    if problem not in (None, "no digest"):
        raise CorruptArtifact(path, problem)
    try:
        if weights_only:
            out = torch.load(path, map_location=map_location, weights_only=True)
        else:
            out = torch.load(path, map_location=map_location, weights_only=False, pickle_module=_unpickler_module())
    except Exception as err:  # noqa: BLE001 - any failure to read is the same problem
        raise CorruptArtifact(path, f"unreadable ({type(err).__name__}: {str(err).splitlines()[0][:120]})") from err
    if problem == "no digest":
        write_digest(path)
    return out


def cache_root_of(path: Path) -> Path:
    """The ``.cache`` folder that holds ``path`` (its nearest ancestor of that name; else the
    folder of ``path``)."""
    for parent in Path(path).resolve().parents:
        if parent.name == ".cache":
            return parent
    return Path(path).resolve().parent


def move_aside(path: Path, problem: str, log: Callable[[str], None] | None = None, cache: Path | None = None) -> Path:
    """Move the file or folder ``path`` (and a file's sidecar) into ``<cache>/quarantine/``
    (``cache``: default :func:`cache_root_of`), kept for inspection, and say so in one line
    (stderr by default). Returns where it went."""
    path = Path(path)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    root = Path(cache or cache_root_of(path)) / QUARANTINE
    root.mkdir(parents=True, exist_ok=True)
    dest = root / f"{stamp}-{path.parent.name}-{path.name}"
    n = 1
    while dest.exists():
        n += 1
        dest = root / f"{stamp}.{n}-{path.parent.name}-{path.name}"
    shutil.move(str(path), dest)
    side = digest_path(path)
    if side.exists():
        shutil.move(str(side), dest.with_name(dest.name + DIGEST_SUFFIX))
    _VERIFIED.pop(path, None)
    (log or _stderr)(f"prismlib: {path}: {problem}; moved aside to {dest}, recomputed when next needed")
    return dest


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def load_or_discard(path: Path, map_location: Any = "cpu", weights_only: bool = False, cache: Path | None = None) -> dict[str, Any] | None:
    """:func:`load_checkpoint`, or ``None`` when ``path`` does not exist or is corrupt; a
    corrupt file is moved aside (:func:`move_aside`, into ``cache``) with one line."""
    if not Path(path).exists():
        return None
    try:
        return load_checkpoint(path, map_location, weights_only)
    except CorruptArtifact as err:
        move_aside(path, err.problem, cache=cache)
        return None


def remove(path: Path) -> None:
    """Delete ``path`` and its sidecar (either may be missing)."""
    Path(path).unlink(missing_ok=True)
    digest_path(path).unlink(missing_ok=True)
    _VERIFIED.pop(Path(path), None)
