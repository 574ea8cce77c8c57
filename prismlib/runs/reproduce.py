"""``python -m prismlib reproduce``: run the notebooks headless, papermill for ``results/<profile>/``,
nbclient for nbval's copies.

* :func:`run_notebooks` executes every ``notebooks/NN_*.py`` (the jupytext source of truth)
  with papermill, profile as parameter, into ``results/<profile>/NN_*.ipynb``, and
  writes ``results/<profile>/manifest.json`` (git commit, profile, device, package
  versions, seconds per notebook, and the runs of ``python -m prismlib train`` that
  filled the LSTM job cache, from ``training.json``).
* :func:`refresh_paired` re-executes the paired ``notebooks/NN_*.ipynb`` in place on the
  smoke profile, so that the committed outputs are the ones nbval compares against.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from prismlib.paths import cache_dir, output_root, project_root, results_dir
from prismlib.profiles import PROFILE_ENV, Profile, get_profile
from prismlib.records import source_commit

PACKAGES = ("torch", "transformers", "numpy", "scipy", "pandas", "seaborn", "papermill", "jupytext", "prismlib")


def notebook_sources(only: list[str] | None = None, folder: Path | None = None) -> list[Path]:
    """The jupytext sources ``NN_*.py`` of ``folder`` (default ``notebooks/``) in order,
    optionally those whose name starts with one of ``only``."""
    every = sorted((folder or project_root() / "notebooks").glob("[0-9][0-9]_*.py"))
    paths = [p for p in every if any(p.stem.startswith(o) for o in only)] if only else every
    if only and not paths:
        names = ", ".join(p.stem[:2] for p in every)
        raise ValueError(f"no notebook matches --only {' '.join(only)}; choose from {names}")
    return paths


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)}"
    return f"cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}"


def _git_commit() -> str | None:
    """The checkout's commit, ``+dirty`` when :data:`~prismlib.records.CODE_PATHS` differ from it (``None`` outside git)."""
    return source_commit()


def short_commit(commit: str | None) -> str:
    """A commit as a reader needs it in one line: its first 7 hex digits, ``+dirty`` kept
    (``?`` when unknown)."""
    if not commit:
        return "?"
    sha, dirty, _ = commit.partition("+dirty")
    return sha[:7] + dirty


def check_arguments(
    profile_name: str | None = None, only: list[str] | None = None, notebooks_dir: Path | None = None, allow_dirty: bool = False
) -> tuple[Profile, list[Path], str | None]:
    """What :func:`run_notebooks` refuses before anything slow (the data check, training, a
    kernel): an unknown profile, an ``only`` that matches no notebook, and uncommitted code
    on a profile whose results are committed (cpu, paper) without ``allow_dirty``, and a
    committed run record that cannot be used (:func:`prismlib.runs.installments.check_records`:
    its job would retrain).

    Returns:
        The profile, the notebook sources to run and the checkout's commit.

    Raises:
        ValueError: one of the above, naming the fix (``RecordsError``, a ``ValueError``: a line per record).
    """
    prof = get_profile(profile_name)
    sources = notebook_sources(only, notebooks_dir)
    commit = _git_commit()
    if prof.name not in ("smoke", "dryrun") and commit is not None and commit.endswith("+dirty") and not allow_dirty:
        raise ValueError(
            f"prismlib, the notebooks or pyproject.toml differ from commit {commit[:12]}: the {prof.name} profile's results "
            "must come from committed code; commit first, or pass --allow-dirty (make ... ALLOW_DIRTY=1; recorded in the manifest)"
        )
    from prismlib.runs.installments import check_records

    check_records(prof, [s.stem for s in sources], only)
    return prof, sources, commit


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


class NotebookFailed(RuntimeError):
    """A notebook's run failed or was interrupted; its last good result was kept."""


def incomplete(nb: Any) -> str | None:
    """Why an executed notebook is not a complete result (an error output, a code cell that
    never ran, papermill's exception flag), or ``None`` when every code cell ran cleanly."""
    if nb.metadata.get("papermill", {}).get("exception"):
        return "papermill recorded an exception"
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    for i, cell in enumerate(code, 1):
        err = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        if err is not None:
            return f"code cell {i} of {len(code)} raised {err.get('ename')}: {err.get('evalue')}"
        if cell.get("execution_count") is None:
            return f"code cell {i} of {len(code)} did not execute"
    return None


def _error_line(err: BaseException) -> str:
    """One line for the manifest and the terminal: papermill's cell error, or the exception."""
    if isinstance(err, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    if ename:
        cell = getattr(err, "exec_count", None)
        return f"{ename}: {evalue}" + (f" (cell [{cell}])" if cell is not None else "")
    return f"{type(err).__name__}: {err}".splitlines()[0]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _headless_env(log: Path) -> dict[str, str]:
    """The environment of a headless kernel: progress bars to ``log``
    (:func:`prismlib.progress.progress_bar`), no Hugging Face download/loading bars."""
    from prismlib.progress import PROGRESS_LOG_ENV

    return {PROGRESS_LOG_ENV: str(log), "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}


@contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _stderr_to(log: Path) -> Iterator[None]:
    """Point file descriptor 2 at ``log`` for the block: the kernel started inside inherits
    it, so its tracebacks and warnings (an interrupt's too) go to the run's log."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(log, "a") as fh:
        os.dup2(fh.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def run_notebooks(
    profile_name: str | None = None,
    only: list[str] | None = None,
    *,
    check: bool = True,
    notebooks_dir: Path | None = None,
    train: bool = True,
    force: bool = False,
    allow_dirty: bool = False,
) -> Path:
    """Execute the notebooks on profile ``profile_name`` with papermill and record each run in the manifest.

    Each notebook executes into a temporary file beside its result and replaces
    ``results/<profile>/NN_name.ipynb`` only when every cell ran; a failed or interrupted
    run keeps the last good notebook byte for byte, records the failure (error, time,
    commit, log) in the manifest and raises.  Progress bars go to
    ``.cache/logs/<profile>/NN_name.log``, not into the notebook.

    Args:
        profile_name: smoke, cpu, paper or dryrun (default ``$PRISMLIB_PROFILE`` or cpu).
        only: notebook name prefixes (default: all).
        check: run :func:`prismlib.runs.preflight.preflight_problems` first (datasets, encoder).
        notebooks_dir: where the ``NN_*.py`` sources are (default ``notebooks/``).
        train: whether a notebook may train a model missing from the job cache (``False``,
            and always on the paper profile: :data:`prismlib.jobcache.NO_TRAIN_ENV`).
        force: run every notebook; otherwise a notebook whose result is current
            (:func:`current_result`) is skipped with one short line.
        allow_dirty: run a profile whose results are committed (not smoke or dryrun) from
            uncommitted code (refused otherwise; recorded in the manifest).

    Returns:
        Path of ``results/<profile>/manifest.json``.

    Raises:
        ValueError: refused before anything ran (:func:`check_arguments`).
        PreflightError: something the notebooks need is missing (one line per problem).
        NotebookFailed: a notebook failed (its cause chained); ``KeyboardInterrupt`` passes
            through after the interruption is recorded.
    """
    import jupytext
    import nbformat
    import papermill

    from prismlib.jobcache import NO_TRAIN_ENV, REUSED_BEFORE_ENV, REUSED_LOG_ENV, reused_jobs
    from prismlib.runs.installments import records_line, twins_read
    from prismlib.runs.manifest import read_manifest, source_digests, update_record
    from prismlib.runs.preflight import PreflightError, preflight_problems

    prof, sources, commit = check_arguments(profile_name, only, notebooks_dir, allow_dirty)
    if check:
        problems = preflight_problems(prof, [s.stem for s in sources])
        if problems:
            raise PreflightError("\n".join(problems))
    line = records_line(prof, [s.stem for s in sources])
    if line:
        print(f"[{prof.name}] {line}", flush=True)
    out_dir = results_dir(prof.name)
    logs = cache_dir() / "logs" / prof.name
    logs.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    run: dict[str, Any] = {"commit": commit, "device": _device(), "profile_device": prof.device, "packages": _versions()}
    if allow_dirty and commit is not None and commit.endswith("+dirty"):
        run["allow_dirty"] = True
    no_train = {NO_TRAIN_ENV: "1"} if not train or prof.name == "paper" else {}
    records = read_manifest(manifest_path).get("notebooks", {}) if manifest_path.exists() else {}
    reused_before = {REUSED_BEFORE_ENV: str(time.time())}  # a job finished before this run began counts as reused
    with _environ({PROFILE_ENV: prof.name, **no_train, **reused_before}), tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            result = out_dir / f"{src.stem}.ipynb"
            twins = twins_read(prof, src.stem)
            why = None if force else current_result(records.get(src.stem), src, result, run["device"], twins)
            if why is not None:
                print(f"[{prof.name}] {src.stem}: current ({why}), skipped; --force reruns it", flush=True)
                continue
            nb_in = Path(tmp) / f"{src.stem}.ipynb"
            jupytext.write(jupytext.read(src), nb_in)
            running = out_dir / f".{src.stem}.running.ipynb"
            log = logs / f"{src.stem}.log"
            log.write_text("")
            started, t0 = _now(), time.perf_counter()
            print(f"[{prof.name}] {src.stem} ...", flush=True)
            reused_log = Path(tmp) / f"{src.stem}.reused"
            try:
                with _environ(_headless_env(log) | {REUSED_LOG_ENV: str(reused_log)}), _stderr_to(log):
                    papermill.execute_notebook(
                        str(nb_in),
                        str(running),
                        parameters={"profile": prof.name},
                        cwd=str(src.parent),
                        kernel_name="python3",
                        progress_bar=False,
                    )
                nb = nbformat.read(running, as_version=4)
                problem = incomplete(nb)
                if problem:
                    raise NotebookFailed(problem)
            except BaseException as err:
                if getattr(err, "ename", None) == "KeyboardInterrupt":  # Ctrl-C reached the kernel first
                    err = KeyboardInterrupt()
                kept = logs / f"{src.stem}.failed.ipynb"
                if running.exists():
                    running.replace(kept)
                rel = lambda p: p.relative_to(output_root()).as_posix()  # noqa: E731
                failure = {"time": _now(), "commit": run["commit"], "error": _error_line(err), "log": rel(log)}
                if kept.exists():
                    failure["executed"] = rel(kept)
                update_record(manifest_path, src.stem, failure=failure)
                kept_note = "the previous result is kept" if result.exists() else "no previous result"
                if isinstance(err, KeyboardInterrupt):  # the caller prints no more than one line for it
                    _quiet_interrupt(log)
                    print(f"[{prof.name}] {src.stem} interrupted ({kept_note}; log {failure['log']})", flush=True)
                    raise
                raise NotebookFailed(
                    f"{src.stem}: {failure['error']} ({kept_note}; partial run in {failure.get('executed', '-')})"
                ) from err
            seconds = round(time.perf_counter() - t0, 1)
            run_id = uuid.uuid4().hex  # tells two runs apart where ``started`` (whole seconds) cannot
            record = {**run, "run_id": run_id, "started": started, "seconds": seconds, "sources": source_digests(src)}
            record |= cold_fields(reused_jobs(reused_log), seconds, records.get(src.stem))
            if twins:
                record["twins"] = twins
            nb.metadata["prismlib"] = {"complete": True, "commit": run["commit"], "run_id": run_id, "started": started}
            nbformat.write(nb, running)
            running.replace(result)
            update_record(manifest_path, src.stem, record=record)
            print(f"[{prof.name}] {src.stem} done in {seconds:.1f} s", flush=True)
    summary = claims_summary(prof.name)
    if summary:
        print(f"[{prof.name}] {summary}", flush=True)
    return manifest_path


def cold_fields(reused: int, seconds: float, previous: dict[str, Any] | None) -> dict[str, Any]:
    """A run's ``reused_jobs`` (trained models an earlier run left in the job cache, which a
    fresh clone would train: :data:`prismlib.jobcache.REUSED_LOG_ENV`) and ``cold_seconds``,
    its time on an empty cache: its own ``seconds`` when it reused none, else the previous
    record's time on an empty cache (:func:`~prismlib.runs.manifest.cold_seconds`; left out
    when it has none: no cold run is recorded)."""
    from prismlib.runs.manifest import cold_seconds

    cold = seconds if reused == 0 else cold_seconds(previous) if previous else None
    return {"reused_jobs": reused} | ({} if cold is None else {"cold_seconds": cold})


def claims_summary(profile_name: str) -> str | None:
    """One line: the verdict counts of ``figures/<profile>/claims.csv`` and where to read them
    (``None`` when no notebook wrote claims)."""
    import pandas as pd

    from prismlib.claims import OUTCOMES
    from prismlib.paths import figure_dir

    csv = figure_dir(profile_name) / "claims.csv"
    if not csv.exists():
        return None
    counts = pd.read_csv(csv, keep_default_na=False)["verdict"].value_counts()
    verdicts = ", ".join(f"{counts.get(v, 0)} {v}" for v in OUTCOMES)
    return (
        f"claims: {verdicts} of {int(counts.sum())}; every claim with its effect and gates in "
        f"{csv.with_suffix('.md').relative_to(output_root()).as_posix()}, the site with `make report PROFILE={profile_name}`"
    )


def _quiet_interrupt(log: Path) -> None:
    """Drop from ``log`` the traceback the kernel prints when Ctrl-C closes its sockets under
    it (a ``ZMQError`` in a message handler): noise of a clean interrupt, not an error."""
    lines = log.read_text().splitlines(keepends=True) if log.exists() else []
    out, skipping = [], False
    for line in lines:
        if "ERROR | Exception in message handler" in line:
            skipping = True
        elif skipping and not line.startswith((" ", "Traceback")):
            skipping = False
            if line.startswith("zmq.error."):
                continue
        if not skipping:
            out.append(line)
    log.write_text("".join(out) + ("interrupted (Ctrl-C)\n" if lines else ""))


def current_result(record: dict[str, Any] | None, source: Path, result: Path, device: str, twins: Sequence[str] = ()) -> str | None:
    """Why the result of ``source`` needs no new run, in a few words (``run 2025-05-02 at
    4dc06f4``: the day, UTC, and the short commit; the manifest has the rest), or ``None`` when it does: its last run
    succeeded and completed, on this device, from the same ``prismlib`` and notebook source
    (by the digests its manifest ``record`` stores; a record without them is never current)
    and read the same claims' twins (``twins``: the keys it would read now,
    :func:`prismlib.runs.installments.twins_read`, against the record's ``"twins"``; an
    installment that commits one can move a verdict). The data are fixed by the catalogue's
    digests (part of ``prismlib``), the other trained models by their job keys."""
    import nbformat

    from prismlib.runs.manifest import source_digests

    if not record or "failure" in record or "sources" not in record or not result.exists():
        return None
    if record.get("device") != device or record["sources"] != source_digests(source) or record.get("twins", []) != list(twins):
        return None
    if incomplete(nbformat.read(result, as_version=4)) is not None:
        return None
    day = str(record.get("started") or "?")[:10]
    return f"run {day} at {short_commit(record.get('commit'))}"


def refresh_paired(only: list[str] | None = None, profile_name: str = "smoke") -> None:
    """Re-execute ``notebooks/NN_*.ipynb`` from their ``.py`` sources in place, on profile ``profile_name``.

    The stored outputs are what nbval compares a fresh run against (``make test``); a
    notebook is written only when it ran to the end, and its progress bars go to
    ``.cache/logs/paired/``.
    """
    import jupytext
    from nbclient import NotebookClient

    logs = cache_dir() / "logs" / "paired"
    logs.mkdir(parents=True, exist_ok=True)
    for src in notebook_sources(only):
        nb = jupytext.read(src)
        print(f"[{profile_name}] executing {src.stem} in place ...", flush=True)
        with _environ({PROFILE_ENV: profile_name, **_headless_env(logs / f"{src.stem}.log")}):
            NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
        nb.metadata.pop("papermill", None)
        jupytext.write(nb, src.with_suffix(".ipynb"))


def main(argv: list[str]) -> int:
    """``python -m prismlib reproduce [--profile P] [--only NN ...] [--paired] [--no-check]``.

    Errors (an unknown profile or notebook, a failed pre-flight check, a failed notebook)
    propagate to ``python -m prismlib``, which prints them as one line each."""
    from prismlib.runs.cli import CommandParser

    parser = CommandParser(prog="python -m prismlib reproduce")
    parser.add_argument("--profile", default=None, help="smoke, cpu or paper (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 01 02")
    parser.add_argument("--paired", action="store_true", help="re-execute notebooks/*.ipynb in place on the smoke profile (for nbval)")
    parser.add_argument("--no-check", action="store_true", help="skip the pre-flight check of datasets and encoder")
    parser.add_argument("--force", action="store_true", help="run every notebook, also those whose result is current")
    parser.add_argument("--allow-dirty", action="store_true", help="run cpu or paper from uncommitted code (recorded in the manifest)")
    parser.add_argument(
        "--check-args",
        action="store_true",
        help="only check the profile, --only and the commit (--allow-dirty), print nothing and exit: "
        "`make reproduce` does this before the data check and any training",
    )
    parser.add_argument(
        "--no-train",
        action="store_true",
        help="never train in a notebook: a model missing from the cache stops the run, naming the command that trains it "
        "(always on for the paper profile)",
    )
    args = parser.parse_args(argv)
    if args.check_args:
        check_arguments(args.profile, args.only, allow_dirty=args.allow_dirty)
        return 0
    if args.paired:
        refresh_paired(args.only)
        return 0
    path = run_notebooks(
        args.profile, args.only, check=not args.no_check, train=not args.no_train, force=args.force, allow_dirty=args.allow_dirty
    )
    print(f"manifest: {path.relative_to(output_root()).as_posix()}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
