"""Committed run records: a finished job's outcome kept in the repository, checked on every read.

A trained model is hours of work that no working session, and no evening of a user's
laptop, may hold in one piece; its local cache (:mod:`prismlib.jobcache`) dies with the
machine. So a finished job also writes a small *record* that is committed with the code:
``results/<profile>/runs/<key>/`` holding

``record.json``
    the job's key, what the key hashes (``description``), provenance (commit, date, torch,
    Python, CPU, threads, seconds; an LSTM job adds the device it trained on) and the job's
    own summary (curves, biases, why it stopped);
``*.npz``, ``*.pt``
    the job's data: the statistics' inputs in aggregated form, weights where an analysis
    must read them again;
``SHA256SUMS``
    the SHA-256 of every other file, in ``sha256sum`` format (``sha256sum -c SHA256SUMS``
    checks a record by hand).

:func:`read_record` refuses, with one line naming the file and the fix, a record whose
bytes do not match its sums (a flipped byte, a truncated file), whose key is not the one its
description hashes to or not the folder's name (a record of an older recipe), whose
description is not the current code's, that was trained from a dirty tree, or whose key a
second record claims too. A refused record is never used and never deleted (git keeps it).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prismlib.artifacts import file_digest
from prismlib.paths import project_root

RECORD = "record.json"
SUMS = "SHA256SUMS"
RUNS = "runs"
"""Folder of the records under ``results/<profile>/``."""
PRETRAIN = "pretrain"
"""The sub-folder of ``runs`` that holds the pretraining's committed states
(:mod:`prismlib.pretrain.record`, issue 76), not LSTM records: :func:`scan` and
:func:`find_record` pass it by."""
FORMAT = 1
"""Version of the record layout (``record.json``'s ``format``)."""
CODE_PATHS = ("prismlib", "notebooks", "pyproject.toml")
"""What a result is computed from: a change here (not in results/ or figures/) makes a run dirty."""


class BadRecord(Exception):
    """A committed record that must not be used: ``path`` and what is wrong (``problem``); the
    message is one line that names both and the fix (``fix``: by default, restore the file or
    retrain the LSTM job)."""

    def __init__(self, path: Path, problem: str, fix: str | None = None) -> None:
        fix = fix or (
            f"restore it with `git checkout -- {path}` "
            f"or retrain its job (the record is rewritten), e.g. `python -m prismlib train --profile cpu-long`"
        )
        super().__init__(f"{path}: {problem}; this record is not used: {fix}")
        self.path, self.problem = Path(path), problem


def source_commit() -> str | None:
    """The checkout's commit, ``+dirty`` when :data:`CODE_PATHS` differ from it (``None`` outside git)."""
    try:
        root = project_root()
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


@functools.cache
def loaded_commit() -> str | None:
    """:func:`source_commit` when this process first asked, i.e. the code it has loaded: a job
    asks when it starts, so that editing or committing code while a long installment runs
    cannot relabel the records of code that was loaded before (a worker process keeps the
    modules it imported for all its jobs)."""
    return source_commit()


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(device: Any) -> str:
    """``"cpu"``, or ``"cuda: <GPU name>"`` for a torch device or its name (a record says where
    it trained: a GPU's numerics and dropout draws differ from the CPU's)."""
    import torch

    device = torch.device(device)
    return f"cuda: {torch.cuda.get_device_name(device)}" if device.type == "cuda" else device.type


def provenance(seconds: float, threads: int | None, **more: Any) -> dict[str, Any]:
    """Where and how a job ran: the commit of the code this process loaded (:func:`loaded_commit`;
    ``+dirty`` for uncommitted code), UTC date, torch and
    Python versions, CPU model and core count, torch threads, wall ``seconds``, and ``more``."""
    import torch

    commit = loaded_commit()
    return {
        "commit": commit,
        "dirty": commit is None or commit.endswith("+dirty"),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "threads": threads if threads is not None else torch.get_num_threads(),
        "wall_seconds": round(seconds, 1),
        **more,
    }


Writer = Callable[[Path], None]
"""Writes one data file of a record to the path it is given."""


def write_record(folder: Path, key: str, description: dict[str, Any], summary: dict[str, Any], files: dict[str, Writer]) -> Path:
    """Write the record of job ``key`` into ``folder`` (``<runs>/<key>``) whole or not at all.

    The files are written into a temporary sibling folder with ``record.json`` (``key``,
    ``description``, ``summary``: provenance and the job's own numbers) and ``SHA256SUMS``,
    then moved into place, replacing an older record of the same key.

    Args:
        files: file name -> a function that writes that file to the path it is given.
    """
    folder = Path(folder)
    if folder.name != key:
        raise ValueError(f"a record's folder is named by its key: {folder.name!r} is not {key!r}")
    bad = [n for n in files if n in (RECORD, SUMS) or "/" in n or n.startswith(".")]
    if bad:
        raise ValueError(f"record files may not be named {bad}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{key}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.mkdir()
    try:
        (tmp / RECORD).write_text(json.dumps({"format": FORMAT, "key": key, "description": description, **summary}, indent=1) + "\n")
        for name, write in files.items():
            write(tmp / name)
        names = sorted(p.name for p in tmp.iterdir())
        (tmp / SUMS).write_text("".join(f"{file_digest(tmp / n)}  {n}\n" for n in names))
        old = folder.parent / f".{key}.{uuid.uuid4().hex[:8]}.old"
        if folder.exists():
            folder.rename(old)
        tmp.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _check_sums(folder: Path) -> None:
    sums = folder / SUMS
    if not sums.exists():
        raise BadRecord(sums, "missing")
    listed: dict[str, str] = {}
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    present = {p.name for p in folder.iterdir() if p.name != SUMS}
    for name in sorted(present - set(listed)):
        raise BadRecord(folder / name, f"not listed in {SUMS}")
    for name, digest in listed.items():
        if name not in present:
            raise BadRecord(folder / name, f"missing (listed in {SUMS})")
        if file_digest(folder / name) != digest:
            raise BadRecord(folder / name, f"its bytes do not match {SUMS} (changed, truncated or corrupted)")


def read_record(folder: Path, description: dict[str, Any] | None = None) -> dict[str, Any]:
    """The verified ``record.json`` of the record in ``folder``; raises :class:`BadRecord`.

    Checks every file against ``SHA256SUMS``, that the record's key is the folder's name and
    the hash of its own description, that it equals ``description`` (the current code's, when
    given: a record of an older recipe is refused) and that it was not trained from a dirty
    tree."""
    from prismlib.jobcache import job_key

    folder = Path(folder)
    _check_sums(folder)
    path = folder / RECORD
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BadRecord(path, f"unreadable ({err})") from err
    key = record.get("key")
    if key != folder.name:
        raise BadRecord(path, f"its key {key} is not its folder's name {folder.name}")
    if job_key(record.get("description", {})) != key:
        raise BadRecord(path, f"its description hashes to {job_key(record.get('description', {}))}, not its key {key}")
    if description is not None and job_key(description) != key:
        raise BadRecord(path, f"it was trained with another recipe than the current code's (key {job_key(description)})")
    prov = record.get("provenance", {})
    if prov.get("dirty", True):
        raise BadRecord(path, f"it was trained from uncommitted code (commit {prov.get('commit')})")
    return record


@dataclass(frozen=True)
class RecordState:
    """One folder under a runs folder: its key, and ``None`` when it is usable, else why not."""

    folder: Path
    key: str
    problem: str | None
    record: dict[str, Any] | None


def scan(runs: Path) -> list[RecordState]:
    """Every record folder under ``runs`` (sorted by name) with its state: verified, or the
    problem :func:`read_record` found; two folders whose records claim one key are both refused."""
    runs = Path(runs)
    if not runs.is_dir():
        return []
    states = []
    for folder in _record_folders(runs):
        try:
            states.append(RecordState(folder, folder.name, None, read_record(folder)))
        except BadRecord as err:
            states.append(RecordState(folder, folder.name, str(err), None))
    claims: dict[str, list[Path]] = {}
    for st in states:
        claimed = _claimed_key(st.folder)
        claims.setdefault(claimed or st.key, []).append(st.folder)
    twice = {k: v for k, v in claims.items() if len(v) > 1}
    out = []
    for st in states:
        key = _claimed_key(st.folder) or st.key
        if key in twice:
            others = ", ".join(str(p) for p in twice[key] if p != st.folder)
            twin = BadRecord(st.folder / RECORD, f"its key {key} is claimed by another record too ({others}); keep one")
            out.append(RecordState(st.folder, st.key, str(twin), None))
        else:
            out.append(st)
    return out


def _record_folders(runs: Path) -> list[Path]:
    """The record folders directly under ``runs`` (sorted; hidden folders and :data:`PRETRAIN` left out)."""
    return sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != PRETRAIN)


def _claimed_key(folder: Path) -> str | None:
    try:
        return str(json.loads((folder / RECORD).read_text()).get("key"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return None


_CLAIMS: dict[Path, tuple[int, dict[str, list[Path]]]] = {}
"""Runs folder -> (its modification time, claimed key -> the folders claiming it): read once
per change of the folder's entries, not once per lookup."""


def _claims(runs: Path) -> dict[str, list[Path]]:
    mtime = runs.stat().st_mtime_ns
    cached = _CLAIMS.get(runs)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    claims: dict[str, list[Path]] = {}
    for folder in _record_folders(runs):
        claims.setdefault(_claimed_key(folder) or folder.name, []).append(folder)
    _CLAIMS[runs] = (mtime, claims)
    return claims


def find_record(runs: Path, key: str, description: dict[str, Any]) -> Path | None:
    """The folder of the usable record of ``key`` under ``runs`` (``None`` when there is none).

    Raises :class:`BadRecord` when the record exists but must not be used (see
    :func:`read_record`), or when another folder's record claims the same key."""
    runs = Path(runs)
    if not runs.is_dir():
        return None
    folder = runs / key
    claiming = [p for p in _claims(runs).get(key, []) if p != folder]
    if claiming:
        raise BadRecord(claiming[0] / RECORD, f"it claims key {key}, which is {folder}'s; keep one record per key")
    if not folder.exists():
        return None
    read_record(folder, description)
    return folder


def records_size(runs: Path) -> int:
    """Bytes of every file under ``runs`` (the committed records' budget, LSTM runs and the
    pretraining's state together, is 64 MB)."""
    return sum(p.stat().st_size for p in Path(runs).rglob("*") if p.is_file())
