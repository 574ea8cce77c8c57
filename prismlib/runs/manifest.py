"""The run manifest ``results/<profile>/manifest.json``: per-notebook provenance and failures.

Each notebook has its own record, written when its run ends::

    {"profile": "cpu", "format": 2,
     "notebooks": {"02_probing_filtered": {
         "commit": "9d36e98...", "run_id": "5f0c...", "started": "2026-11-23T01:26:38+00:00", "seconds": 1012.1,
         "device": "cpu: x86_64, 2 cores", "profile_device": "auto", "packages": {...},
         "sources": {"prismlib": "<sha256>", "notebook": "<sha256>"},
         "failure": {"time": ..., "commit": ..., "error": "ValueError: ...", "log": ".cache/logs/cpu/02_probing_filtered.log"}}},
     "seconds": {...}, "total_seconds": ..., "training": [...]}

The provenance is the last *successful* run's (its executed notebook is the one kept in
``results/``, whose metadata carries the same ``run_id``); ``failure`` is present while the
last run of the notebook failed or was interrupted. ``run_id`` (a random hex string, unique
to each run) tells two runs apart where ``started``, in whole seconds, cannot; records
written before it have none and are read as they are.  A manifest written before this format (one ``git_commit``, ``started`` and
``packages`` for the whole profile) is read as every notebook's record with
``"inherited": True``: that commit is the profile's last run's, not necessarily the one
each notebook was executed at.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prismlib.paths import locked, output_root, project_root

FORMAT = 2
LEGACY_KEYS = ("git_commit", "started", "device", "profile_device", "packages")


def manifest_path(profile_name: str) -> Path:
    """``results/<profile>/manifest.json`` under the output root (nothing is created)."""
    return output_root() / "results" / profile_name / "manifest.json"


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path`` (``{}`` when absent), its notebooks in the current format."""
    if not path.is_file():
        return {}
    manifest = json.loads(path.read_text())
    manifest["notebooks"] = notebook_records(manifest)
    return manifest


def notebook_records(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Notebook stem -> its record; an old manifest's profile-wide commit, start, device and
    packages become each notebook's, marked ``inherited``."""
    if "notebooks" in manifest:
        return {k: dict(v) for k, v in manifest["notebooks"].items()}
    shared = {k: manifest[k] for k in LEGACY_KEYS if k in manifest}
    if "git_commit" in shared:
        shared["commit"] = shared.pop("git_commit")
    return {stem: {**shared, "seconds": sec, "inherited": True} for stem, sec in manifest.get("seconds", {}).items()}


def cold_seconds(record: dict[str, Any]) -> float | None:
    """A notebook run's time on an empty job cache, as a fresh clone runs it: its
    ``cold_seconds`` (written by ``reproduce``: its own time when it reused no trained model,
    else the last such run's); a record from before ``reproduce`` counted reused models (no
    ``reused_jobs``): its ``seconds``; ``None``: it reused models and no cold run is recorded."""
    if "cold_seconds" in record:
        return float(record["cold_seconds"])
    if "reused_jobs" not in record and isinstance(record.get("seconds"), (int, float)):
        return float(record["seconds"])
    return None


def run_seconds(record: dict[str, Any]) -> float:
    """A notebook run's seconds as a fresh clone would take them: on an empty job cache
    (:func:`cold_seconds`), else, where no such run is recorded, its own."""
    cold = cold_seconds(record)
    return float(record["seconds"]) if cold is None else cold


def update_record(path: Path, stem: str, record: dict[str, Any] | None = None, failure: dict[str, Any] | None = None) -> None:
    """Under the manifest's lock: set notebook ``stem``'s record (a successful run; clears
    its failure) or, with ``failure``, keep its last good record and add the failure."""
    with locked(path):
        manifest = read_manifest(path)
        notebooks = manifest.setdefault("notebooks", {})
        if record is not None:
            notebooks[stem] = dict(record)
        if failure is not None:
            notebooks.setdefault(stem, {})["failure"] = failure
        write_manifest(path, manifest)


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` in the current format (dropping the old profile-wide keys), with the
    derived ``seconds`` / ``total_seconds`` and the ``train`` runs of ``training.json``."""
    notebooks = dict(sorted(manifest.get("notebooks", {}).items()))
    seconds = {k: v["seconds"] for k, v in notebooks.items() if v.get("seconds") is not None}
    out: dict[str, Any] = {"profile": path.parent.name}
    out.update({k: v for k, v in manifest.items() if k not in LEGACY_KEYS + ("data_dir",)})
    out.update(format=FORMAT, notebooks=notebooks, seconds=seconds, total_seconds=round(sum(seconds.values()), 1))
    training = path.parent / "training.json"  # written by `python -m prismlib train` (prismlib.jobcache)
    if training.exists():
        out["training"] = json.loads(training.read_text())
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(out, indent=2) + "\n")
    tmp.replace(path)


def _digest(paths: Iterable[Path], root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def source_digests(notebook: Path) -> dict[str, str]:
    """SHA-256 of the library's sources (``prismlib/**/*.py`` and configs) and of one
    notebook's ``.py``: what a result depends on besides data and packages."""
    root = project_root()
    lib = [p for p in (root / "prismlib").rglob("*") if p.suffix in (".py", ".json") and "__pycache__" not in p.parts]
    return {"prismlib": _digest(lib, root), "notebook": _digest([notebook], notebook.parent)}


def changed_sources(record: dict[str, Any], notebook: Path) -> list[str]:
    """Which of ``prismlib`` and the notebook's source differ now from the run of ``record``:
    by the stored digests, else (an old record) by ``git diff`` against its commit; ``["?"]``
    when neither can tell."""
    if "sources" in record:
        now = source_digests(notebook)
        return [k for k in ("prismlib", "notebook") if record["sources"].get(k) != now[k]]
    commit = str(record.get("commit") or "").removesuffix("+dirty")
    if not commit:
        return ["?"]
    out = []
    for name, rel in (("prismlib", "prismlib"), ("notebook", f"notebooks/{notebook.name}")):
        try:
            diff = subprocess.run(["git", "diff", "--quiet", commit, "--", rel], cwd=project_root(), capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ["?"]
        if diff.returncode == 1:
            out.append(name)
        elif diff.returncode != 0:
            return ["?"]
    return out
