"""Run the notebooks headless: papermill for ``results/<profile>/``, nbclient for nbval's copies.

* :func:`reproduce` executes every ``notebooks/NN_*.py`` (the jupytext source of truth)
  with papermill, profile as parameter, into ``results/<profile>/NN_*.ipynb``, and
  writes ``results/<profile>/manifest.json`` (git commit, profile, device, package
  versions, seconds per notebook, and the runs of ``python -m prismlib train`` that
  filled the LSTM job cache, from ``training.json``). A notebook executes into a
  temporary file beside its result and replaces it only when every cell ran: a failed
  or interrupted run keeps the last good notebook, and the manifest records the failure
  (``failures``) until a later run of that notebook succeeds. Each notebook's own
  provenance (commit, start, seconds, device, packages) is in ``notebooks``.
* :func:`refresh_paired` re-executes the paired ``notebooks/NN_*.ipynb`` in place on the
  smoke profile, so that the committed outputs are the ones nbval compares against.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from collections.abc import Callable
from pathlib import Path

from prismlib.paths import locked, project_root, results_dir
from prismlib.profiles import PROFILE_ENV, get_profile

PACKAGES = ("torch", "transformers", "numpy", "scipy", "pandas", "seaborn", "papermill", "jupytext", "prismlib")


def notebook_sources(only: list[str] | None = None) -> list[Path]:
    """The jupytext sources ``notebooks/NN_*.py`` in order, optionally those whose name starts with ``only``."""
    paths = sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.py"))
    if only:
        paths = [p for p in paths if any(p.stem.startswith(o) for o in only)]
        if not paths:
            raise ValueError(f"no notebook matches {only}; available: {[p.stem for p in notebook_sources()]}")
    return paths


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)}"
    return f"cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=project_root(), capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=project_root(), capture_output=True, text=True
        ).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def _versions() -> dict[str, str | None]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def reproduce(profile: str | None = None, only: list[str] | None = None) -> Path:
    """Execute the notebooks on ``profile`` with papermill and write the run manifest.

    Returns:
        Path of ``results/<profile>/manifest.json``.
    """
    import jupytext
    import papermill

    prof = get_profile(profile)
    out_dir = results_dir(prof.name)
    manifest_path = out_dir / "manifest.json"
    with locked(manifest_path):
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() and only else {}
    manifest.update(
        {
            "profile": prof.name,
            "git_commit": _git_commit(),
            "device": _device(),
            "profile_device": prof.device,  # the profile's, or $PRISMLIB_DEVICE's
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "packages": _versions(),
            "data_dir": os.environ.get("PRISMLIB_DATA"),
        }
    )
    # this run's notebooks only: with --only, the others' seconds are read from their executed
    # copies when the manifest is written (a copy loaded now would be stale if another run
    # finishes meanwhile)
    seconds = manifest["seconds"] = {}
    runs = manifest.setdefault("notebooks", {})
    failures = manifest.setdefault("failures", {})
    env_before = os.environ.get(PROFILE_ENV)
    os.environ[PROFILE_ENV] = prof.name  # also the default inside the kernel
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for src in notebook_sources(only):
                nb_in = Path(tmp) / f"{src.stem}.ipynb"
                jupytext.write(jupytext.read(src), nb_in)
                print(f"[{prof.name}] {src.stem} ...", flush=True)
                started = datetime.now(timezone.utc).isoformat(timespec="seconds")
                t0 = time.perf_counter()
                result = out_dir / f"{src.stem}.ipynb"
                try:
                    execute_safely(
                        lambda partial: papermill.execute_notebook(
                            str(nb_in), str(partial), parameters={"profile": prof.name}, cwd=str(src.parent),
                            kernel_name="python3", progress_bar=False,
                        ),
                        result,
                    )  # fmt: skip
                except BaseException as err:
                    failures[src.stem] = {"error": _one_line(err), "time": started, "git_commit": manifest["git_commit"]}
                    with locked(manifest_path):
                        _write_manifest(manifest_path, manifest, merge=True)
                    raise NotebookFailed(src.stem, result, err) from err
                seconds[src.stem] = round(time.perf_counter() - t0, 1)
                failures.pop(src.stem, None)
                runs[src.stem] = {"git_commit": manifest["git_commit"], "started": started, "seconds": seconds[src.stem],
                                  "device": manifest["device"], "packages": manifest["packages"]}  # fmt: skip
                print(f"[{prof.name}] {src.stem} done in {seconds[src.stem]:.1f} s", flush=True)
                with locked(manifest_path):
                    _write_manifest(manifest_path, manifest, merge=bool(only))
    finally:
        if env_before is None:
            os.environ.pop(PROFILE_ENV, None)
        else:
            os.environ[PROFILE_ENV] = env_before
    return manifest_path


class NotebookFailed(RuntimeError):
    """A notebook did not run to its end; its last good result was kept."""

    def __init__(self, name: str, result: Path, cause: BaseException) -> None:
        kept = "the last good result was kept" if result.exists() else "there was no earlier result"
        super().__init__(f"notebook {name} failed ({_one_line(cause)}); {kept} at {result}")


def _one_line(err: BaseException) -> str:
    """The last line of an error's message (papermill's carry the whole traceback), with its type."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[-1][:300]}" if lines else type(err).__name__


def execute_safely(execute: Callable[[Path], object], result: Path) -> None:
    """``execute(partial)`` writes a notebook to ``partial`` (a temporary file beside
    ``result``); only when it returns is ``partial`` moved onto ``result``. On any error
    or interruption ``result`` is left as it was, byte for byte, and the partial file is
    removed."""
    result = Path(result)
    partial = result.with_name(f".{result.stem}.partial.ipynb")
    try:
        execute(partial)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(result)


def _write_manifest(path: Path, manifest: dict, merge: bool) -> None:
    """Write the manifest.  With ``merge`` (a partial ``--only`` run) the seconds of the
    other notebooks are read from the papermill metadata of their executed copies beside
    it, so runs of disjoint notebook sets never drop each other's entries."""
    seconds = dict(manifest["seconds"])  # this run's; ``manifest`` itself is not changed
    if merge:
        for nb_path in sorted(path.parent.glob("[0-9][0-9]_*.ipynb")):
            if nb_path.stem not in seconds:
                duration = json.loads(nb_path.read_text()).get("metadata", {}).get("papermill", {}).get("duration")
                if duration is not None:
                    seconds[nb_path.stem] = round(float(duration), 1)
    out = {**manifest, "seconds": dict(sorted(seconds.items())), "total_seconds": round(sum(seconds.values()), 1)}
    training = path.parent / "training.json"  # written by `python -m prismlib train` (prismlib.runs.jobs)
    if training.exists():
        out["training"] = json.loads(training.read_text())
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(out, indent=2) + "\n")
    tmp.replace(path)


def refresh_paired(only: list[str] | None = None, profile: str = "smoke") -> None:
    """Re-execute ``notebooks/NN_*.ipynb`` from their ``.py`` sources in place, on ``profile``.

    The stored outputs are what nbval compares a fresh run against (``make test``).
    """
    import jupytext
    from nbclient import NotebookClient

    os.environ[PROFILE_ENV] = profile
    for src in notebook_sources(only):
        nb = jupytext.read(src)
        print(f"[{profile}] executing {src.stem} in place ...", flush=True)
        NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
        nb.metadata.pop("papermill", None)
        jupytext.write(nb, src.with_suffix(".ipynb"))


def main(argv: list[str]) -> int:
    """``python -m prismlib reproduce [--profile P] [--only NN ...] [--paired]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m prismlib reproduce")
    parser.add_argument("--profile", default=None, help="smoke, cpu or paper (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 01 02")
    parser.add_argument(
        "--paired", action="store_true", help="re-execute notebooks/*.ipynb in place on the smoke profile (for nbval)"
    )
    args = parser.parse_args(argv)
    try:
        if args.paired:
            refresh_paired(args.only)
        else:
            print(f"manifest: {reproduce(args.profile, args.only)}")
    except NotebookFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; every finished notebook's result is kept", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
