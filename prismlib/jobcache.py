"""The job layer: every trained model is a job, cached by the hash of its spec.

A job is one model to train. Work B's LSTM LMs are :class:`Job` (a timescale variant and
seed, the profile's training settings and the profile's name); section 4's continued MLM
arms are :class:`prismlib.prism.ArmJob`. A job's ``key`` is a hash of exactly what
changes the trained model, and its files live in the content-addressed cache
``.cache/jobs/<key>/`` (``spec.json``, a checkpoint ``partial.pt`` while it trains,
``done.pt`` when it is finished). Notebooks ask for the models they need: finished jobs
are only read; missing ones run first on an *executor*:

``inline``
    one after the other in the calling process;
``local``
    a pool of worker processes, one torch thread each (default: one per core), the way
    independent trainings share a small machine;
``slurm``
    a SLURM cluster through ``submitit``: the same jobs, one per array task (the paper
    profile's grid is days of GPU time). ``slurm={"cluster": "local"}`` or ``"debug"``
    runs the same path with submitit's local or in-process executor (the tests do).

Whatever the executor, a job trains in :func:`run_job`: it takes a lock on its folder
(two notebooks asking for the baseline at once train it once) and calls the job's
``train``, which resumes from ``partial.pt`` after an interruption (same weights as an
uninterrupted run: the RNG states are in the checkpoint) and writes ``done.pt``
atomically. ``python -m prismlib train --profile P`` (:mod:`prismlib.runs.train`) trains a
profile's LSTM grid (:mod:`prismlib.lstm.claims.grid`) and, with ``--section4``, section 4's arms up front.

The ``local`` executor's pool is :func:`run_pool`, the one process pool of the project (the
probes' parallel runs use it too): spawned processes with one torch thread each, results in
job order, a failed or interrupted run stops its workers.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import multiprocessing
import os
import textwrap
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import torch

from prismlib.artifacts import CorruptArtifact, check, load_checkpoint, move_aside
from prismlib.devices import one_thread, resolve_device
from prismlib.paths import cache_dir, locked
from prismlib.progress import progress_bar

EXECUTORS = ("inline", "local", "slurm")
TRAINING_RECORD = "training.json"
"""Per profile, every ``python -m prismlib train`` run: when, how long, how many models trained."""
EXECUTOR_ENV = "PRISMLIB_EXECUTOR"
"""The executor :func:`run_missing` uses when none is named (default ``local``)."""
NO_TRAIN_ENV = "PRISMLIB_NO_TRAIN"
"""Set (to anything but empty): :func:`run_missing` refuses to train and names the command that
does (``reproduce --no-train``, and the paper profile's notebooks, whose models are days of GPU)."""
REUSED_LOG_ENV = "PRISMLIB_REUSED_LOG"
"""Set to a file path (by ``reproduce``, one per notebook): :func:`run_missing` appends to it one
line per job it did not train because an earlier run left it finished in the cache (its
``done.pt`` older than :data:`REUSED_BEFORE_ENV`, and no committed record, which a fresh clone
has too), so that a run's time can be told from a run on an empty cache."""
REUSED_BEFORE_ENV = "PRISMLIB_REUSED_BEFORE"
"""The time (seconds since the epoch) before which a finished job counts as reused
(:data:`REUSED_LOG_ENV`): the start of the ``reproduce`` run, so that a job one of its
notebooks trained and the next reads counts as trained."""


class Trainable(Protocol):
    """What the executors need of a job: a cache key, a label, what the key hashes, and
    ``train(folder, device, progress, data)``, which writes ``<folder>/done.pt``."""

    @property
    def key(self) -> str: ...

    @property
    def label(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def train(self, folder: Path, device: torch.device, progress: bool, data: Any) -> None: ...


def code_fingerprint(objects: Sequence[Any]) -> str:
    """16 hex digits of the SHA-256 of the code of ``objects`` (functions, classes): their
    syntax trees without docstrings, so comments, docstrings and formatting do not count.
    A job kind pins the fingerprint of the code that defines its recipe beside its recipe
    version (``tests/fixtures/recipe_fingerprints.json``)."""
    h = hashlib.sha256()
    for obj in objects:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        for node in ast.walk(tree):
            body: Any = getattr(node, "body", None)
            first = body[0] if isinstance(body, list) and body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
        h.update(f"{obj.__module__}.{obj.__qualname__}\n{ast.dump(tree)}\n".encode())
    return h.hexdigest()[:16]


def with_recipe(description: dict[str, Any], version: int) -> dict[str, Any]:
    """``description`` with the job kind's recipe ``version`` in it from version 2 on (so the
    keys of jobs cached before versions existed stay those of version 1)."""
    return description if version == 1 else {**description, "recipe": version}


def job_key(description: dict[str, Any]) -> str:
    """16 hex digits of the SHA-256 of a job's description (its cache folder's name)."""
    text = json.dumps(description, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def job_dir(job: Trainable, cache: Path | None = None) -> Path:
    """``<cache>/jobs/<key>/`` (``<cache>`` defaults to :func:`prismlib.paths.cache_dir`)."""
    return Path(cache or cache_dir()) / "jobs" / job.key


def entry_problem(folder: Path, key: str) -> str | None:
    """What is wrong with the finished cache entry ``folder`` of the job ``key``: ``None`` when
    its ``done.pt`` matches its digest (one written before digests is adopted if it loads)
    and its ``spec.json`` hashes to ``key``."""
    spec = folder / "spec.json"
    if spec.exists():
        try:
            described = job_key(json.loads(spec.read_text()))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return "its spec.json is unreadable"
        if described != key:
            return f"its spec.json describes job {described}, not {key} (the folder's name)"
    problem = check(folder / "done.pt")
    if problem == "no digest":
        try:
            load_checkpoint(folder / "done.pt")  # adopt: loads, then its digest is written
        except CorruptArtifact as err:
            return f"done.pt: {err.problem}"
        return None
    return None if problem is None else f"done.pt: {problem}"


def is_done(job: Trainable, cache: Path | None = None) -> bool:
    """Whether ``job`` has finished: its ``done.pt`` exists and :func:`entry_problem` finds
    nothing wrong. A broken entry is moved aside (one line on stderr, kept under
    ``.cache/quarantine/``) and the job counts as not done, so it trains again."""
    folder = job_dir(job, cache)
    if not (folder / "done.pt").exists():
        return False
    problem = entry_problem(folder, job.key)
    if problem is None:
        return True
    move_aside(folder, problem, cache=folder.parent.parent)
    return False


def committed(job: Trainable) -> bool:
    """Whether ``job`` has a usable committed run record (:mod:`prismlib.records`; only job
    kinds with a ``committed()`` method keep records), so it is not trained again."""
    has = getattr(job, "committed", None)
    return has is not None and has() is not None


TRAINED_BY = "trained_by"
"""Per job folder: the token of the :func:`run_missing` call whose worker trained it."""


def run_job(
    job: Trainable,
    cache: str | Path | None = None,
    device: str = "auto",
    progress: bool = True,
    data: Any = None,
    token: str | None = None,
) -> str:
    """Train ``job`` unless it is done; returns its folder. Safe to call from many processes.

    Holds the lock of the job's folder, writes ``spec.json`` (what the key hashes) and
    calls ``job.train(folder, device, progress, data)``; ``data`` is whatever that job
    type reads (LSTM jobs: the corpus, ``None`` = PTB). ``token``, when given, is written
    to ``trained_by`` if this call trained the job (another process may have while this
    one waited for the lock).
    """
    folder = job_dir(job, Path(cache) if cache else None)
    folder.mkdir(parents=True, exist_ok=True)
    with locked(folder / "train"):
        if (folder / "done.pt").exists():
            return str(folder)
        tmp = folder / "spec.json.tmp"
        tmp.write_text(json.dumps(job.describe(), indent=1, sort_keys=True, default=list))
        tmp.replace(folder / "spec.json")
        job.train(folder, resolve_device(device), progress, data)
        if token is not None:
            (folder / TRAINED_BY).write_text(token)
    return str(folder)


def pool_size(workers: int | None, device: str) -> int:
    """Processes of the local pool: ``workers``, else one per core on CPU and one on a GPU (more would share it)."""
    return workers or (1 if resolve_device(device).type == "cuda" else os.cpu_count() or 1)


def run_missing(
    jobs: Sequence[Trainable],
    executor: str | None = None,
    workers: int | None = None,
    cache: Path | None = None,
    device: str = "auto",
    slurm: dict[str, Any] | None = None,
    data: Any = None,
) -> list[Trainable]:
    """Run every job of ``jobs`` that is not done, on ``executor``; returns those it trained
    (not those another process trained while this one waited for them).

    Args:
        executor: ``inline``, ``local`` or ``slurm`` (see the module docstring); ``None``
            reads ``$PRISMLIB_EXECUTOR`` (default ``local``).
        workers: processes of the local pool (default: one per core on CPU, one on a GPU;
            at most one per job).
        slurm: for ``slurm``: ``cluster`` (``None`` = auto-detect SLURM, or submitit's
            ``"local"`` / ``"debug"``), and any ``submitit`` parameter, e.g.
            ``timeout_min``, ``slurm_partition``, ``gpus_per_node``, ``cpus_per_task``,
            ``slurm_array_parallelism``.
        data: passed to every job's ``train`` (see :func:`run_job`; LSTM jobs: the
            corpus, default PTB loaded by each process).
    """
    executor = executor or os.environ.get(EXECUTOR_ENV, "local")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS} (or ${EXECUTOR_ENV}), got {executor!r}")
    missing = [j for j in dict.fromkeys(jobs) if not is_done(j, cache) and not committed(j)]
    note_reused([j for j in dict.fromkeys(jobs) if j not in missing], cache)
    if not missing:
        return []
    if os.environ.get(NO_TRAIN_ENV):
        profile = getattr(missing[0], "profile", "P")
        arms = " --section4" if any(getattr(j, "arm", None) for j in missing) else ""
        shown = ", ".join(j.label for j in missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise FileNotFoundError(
            f"{len(missing)} model(s) are not in the cache (never trained, or broken and moved aside): {shown}; "
            f"train them first with `python -m prismlib train --profile {profile}{arms}` ({NO_TRAIN_ENV} is set: this run does not train)"
        )
    where = None if cache is None else str(cache)
    desc = f"training {len(missing)} job(s) [{executor}]"
    token = uuid.uuid4().hex
    if executor == "slurm":
        with progress_bar(total=len(missing), desc=desc, unit="job", mininterval=1) as bar:
            _run_submitit(missing, where, device, slurm or {}, bar, data, token)
    else:
        n = 1 if executor == "inline" else min(pool_size(workers, device), len(missing))
        train = partial(run_job, cache=where, device=device, progress=executor == "inline", data=data, token=token)
        run_pool(train, missing, n, desc=desc, unit="job", label=lambda job: job.label)
    return [j for j in missing if _read(job_dir(j, cache) / TRAINED_BY) == token]


def note_reused(done: Sequence[Trainable], cache: Path | None = None) -> None:
    """Where :data:`REUSED_LOG_ENV` is set: append the key of every job of ``done`` (finished)
    that an earlier run left in the cache (its ``done.pt`` older than :data:`REUSED_BEFORE_ENV`)
    and that has no committed record, one per line."""
    log, before = os.environ.get(REUSED_LOG_ENV), os.environ.get(REUSED_BEFORE_ENV)
    if not log or not before:
        return
    old = [j.key for j in done if not committed(j) and (job_dir(j, cache) / "done.pt").stat().st_mtime < float(before)]
    if old:
        with open(log, "a") as f:
            f.write("".join(f"{k}\n" for k in old))


def reused_jobs(log: Path) -> int:
    """How many different jobs :func:`note_reused` wrote to ``log`` (0 when it wrote none)."""
    return len(set(log.read_text().split())) if log.is_file() else 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _run_submitit(
    missing: list[Trainable], where: str | None, device: str, params: dict[str, Any], bar: Any, data: Any, token: str
) -> None:
    try:
        import submitit
    except ImportError as err:  # pragma: no cover - submitit is a dependency
        raise ImportError("the slurm executor needs submitit: pip install submitit") from err
    params = dict(params)
    cluster = params.pop("cluster", None)
    folder = Path(where or cache_dir()) / "submitit"
    ex = submitit.AutoExecutor(folder=folder, cluster=cluster)
    if ex.cluster == "slurm":
        params.setdefault("timeout_min", 24 * 60)
    ex.update_parameters(**params)
    n = len(missing)
    handles = ex.map_array(run_job, missing, [where] * n, [device] * n, [False] * n, [data] * n, [token] * n)
    for handle in handles:
        handle.result()
        bar.update(1)


def training_runs(profile_name: str) -> list[dict[str, Any]]:
    """The runs of ``python -m prismlib train`` recorded for ``profile_name`` (oldest first; ``[]`` if none)."""
    from prismlib.paths import results_dir

    path = results_dir(profile_name) / TRAINING_RECORD
    return json.loads(path.read_text()) if path.exists() else []


def record_training(profile_name: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``results/<profile>/training.json`` (the run manifest shows it)."""
    from prismlib.paths import results_dir

    path = results_dir(profile_name) / TRAINING_RECORD
    with locked(path):
        runs = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(runs + [entry], indent=1) + "\n")


# --------------------------------------------------------------------------- the process pool


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
            stop_pool(pool)
            raise
        pool.shutdown()
    return out


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s pending jobs and terminate its workers, so that an interrupted run
    ends now instead of running every queued job first (``with pool`` would wait for them)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=10)
