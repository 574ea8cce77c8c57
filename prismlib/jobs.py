"""The job layer: every trained model is a job, cached by the hash of its spec.

A job is one model to train. Work B's LSTM LMs are :class:`Job` (a timescale variant and
seed, the profile's training settings and the profile's name); section 4's continued MLM
arms are :class:`prismlib.continued.ArmJob`. A job's ``key`` is a hash of exactly what
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
atomically. ``python -m prismlib train --profile P`` (:mod:`prismlib.train`) trains a
profile's LSTM grid (:mod:`prismlib.grid`) and, with ``--section4``, section 4's arms up front.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from prismlib.encode import resolve_device
from prismlib.lstm import RunSpec, TrainedRun, build_model, frequency_rank, token_nll, torch_threads, train_lm
from prismlib.paths import cache_dir, locked
from prismlib.profiles import LSTMSettings
from prismlib.timescales import forget_gate_biases

EXECUTORS = ("inline", "local", "slurm")
TRAINING_RECORD = "training.json"
"""Per profile, every ``python -m prismlib train`` run: when, how long, how many models trained."""
EXECUTOR_ENV = "PRISMLIB_EXECUTOR"
_NOT_TRAINING = ("seeds", "bootstrap", "memory_contexts", "context", "threads", "memory_warmup", "memory_fit", "memory_mode", "grid")
"""Settings that change neither a trained model nor its stored test NLL (not in the key)."""


class Trainable(Protocol):
    """What the executors need of a job: a cache key, a label, what the key hashes, and
    ``train(folder, device, progress, data)``, which writes ``<folder>/done.pt``."""

    @property
    def key(self) -> str: ...

    @property
    def label(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def train(self, folder: Path, device: torch.device, progress: bool, data: Any) -> None: ...


def job_key(description: dict[str, Any]) -> str:
    """16 hex digits of the SHA-256 of a job's description (its cache folder's name)."""
    text = json.dumps(description, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Job:
    """One LSTM LM to train: ``spec`` with the training ``settings`` of ``profile``."""

    spec: RunSpec
    settings: LSTMSettings
    profile: str

    def describe(self) -> dict[str, Any]:
        """What the key hashes: the spec, the profile and every setting that changes the model."""
        s = {k: v for k, v in asdict(self.settings).items() if k not in _NOT_TRAINING}
        return {"profile": self.profile, "spec": asdict(self.spec), "settings": s}

    @property
    def key(self) -> str:
        """16 hex digits of the SHA-256 of :meth:`describe` (the job's cache folder)."""
        return job_key(self.describe())

    @property
    def label(self) -> str:
        """E.g. ``"layerwise T=70 (fixed) seed 0"``."""
        return f"{self.spec.label} seed {self.spec.seed}"

    def train(self, folder: Path, device: torch.device, progress: bool, corpus: Any) -> None:
        """Train on PTB train (validation on PTB valid after every epoch, best epoch kept),
        resuming from ``partial.pt``, then score PTB test and write ``done.pt``: the
        weights, the history, the per-token test NLL and the effective forget-gate
        biases before and after training. ``corpus``: an object with ``train``, ``valid``,
        ``test`` id arrays and ``vocab`` (``None``: PTB, loaded here)."""
        corpus, s = corpus if corpus is not None else _ptb(), self.settings
        model = build_model(self.spec, len(corpus.vocab), s, _rank(corpus)).to(device)
        init = forget_gate_biases(list(model.rnns))
        test = corpus.test if s.test_tokens is None else corpus.test[: s.test_tokens]
        with torch_threads(s.threads):
            hist = train_lm(
                model, corpus.train, corpus.valid, s, self.spec.seed, folder / "partial.pt", desc=self.label, progress=progress
            )
            nll = token_nll(model, test, s.eval_batch, s.bptt)
        final = forget_gate_biases(list(model.rnns))
        save_atomic(folder / "done.pt", model=model.state_dict(), history=hist, test_nll=nll, biases_init=init, biases_final=final)
        (folder / "partial.pt").unlink(missing_ok=True)


def jobs_for(specs: Sequence[RunSpec], settings: LSTMSettings, profile: str) -> list[Job]:
    """One :class:`Job` per spec (duplicates dropped, order kept)."""
    return [Job(spec, settings, profile) for spec in dict.fromkeys(specs)]


def job_dir(job: Trainable, cache: Path | None = None) -> Path:
    """``<cache>/jobs/<key>/`` (``<cache>`` defaults to :func:`prismlib.paths.cache_dir`)."""
    return Path(cache or cache_dir()) / "jobs" / job.key


def is_done(job: Trainable, cache: Path | None = None) -> bool:
    """Whether ``job`` has finished (its ``done.pt`` exists)."""
    return (job_dir(job, cache) / "done.pt").exists()


def _ptb() -> Any:
    from prismlib.data.ptb import load_ptb_corpus

    return load_ptb_corpus()


def _rank(corpus: Any) -> torch.Tensor:
    return frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))


def save_atomic(path: Path, **obj: object) -> None:
    """``torch.save(obj)`` to ``path`` through a temporary file (a reader never sees half a file)."""
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


def run_job(
    job: Trainable, cache: str | Path | None = None, device: str = "auto", progress: bool = True, data: Any = None
) -> str:
    """Train ``job`` unless it is done; returns its folder. Safe to call from many processes.

    Holds the lock of the job's folder, writes ``spec.json`` (what the key hashes) and
    calls ``job.train(folder, device, progress, data)``; ``data`` is whatever that job
    type reads (LSTM jobs: the corpus, ``None`` = PTB).
    """
    folder = job_dir(job, Path(cache) if cache else None)
    folder.mkdir(parents=True, exist_ok=True)
    with locked(folder / "train"):
        if (folder / "done.pt").exists():
            return str(folder)
        (folder / "spec.json").write_text(json.dumps(job.describe(), indent=1, sort_keys=True, default=list))
        job.train(folder, resolve_device(device), progress, data)
    return str(folder)


def load_run(job: Job, cache: Path | None = None, device: str = "auto", corpus: Any = None) -> TrainedRun:
    """The finished ``job`` as a :class:`~prismlib.lstm.TrainedRun` (model in eval mode)."""
    path = job_dir(job, cache) / "done.pt"
    if not path.exists():
        raise FileNotFoundError(f"job {job.label} ({job.key}) has not been trained; run it with prismlib.jobs.run_missing")
    corpus = corpus if corpus is not None else _ptb()
    dev = resolve_device(device)
    done = torch.load(path, map_location=dev, weights_only=False)
    model = build_model(job.spec, len(corpus.vocab), job.settings, _rank(corpus)).to(dev)
    model.load_state_dict(done["model"])
    model.eval()
    return TrainedRun(job.spec, model, done["history"], done["test_nll"], done["biases_init"], done["biases_final"])


def pool_size(workers: int | None, device: str) -> int:
    """Processes of the local pool: ``workers``, else one per core on CPU and one on a GPU (more would share it)."""
    return workers or (1 if resolve_device(device).type == "cuda" else os.cpu_count() or 1)


def _one_thread() -> None:
    torch.set_num_threads(1)


def run_missing(
    jobs: Sequence[Trainable],
    executor: str | None = None,
    workers: int | None = None,
    cache: Path | None = None,
    device: str = "auto",
    slurm: dict[str, Any] | None = None,
    data: Any = None,
) -> list[Trainable]:
    """Run every job of ``jobs`` that is not done, on ``executor``; returns those it ran.

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
    missing = [j for j in dict.fromkeys(jobs) if not is_done(j, cache)]
    if not missing:
        return []
    where = None if cache is None else str(cache)
    bar = tqdm(total=len(missing), desc=f"training {len(missing)} job(s) [{executor}]", mininterval=1)
    if executor == "inline":
        for job in missing:
            run_job(job, where, device, True, data)
            bar.update(1)
    elif executor == "local":
        n = min(pool_size(workers, device), len(missing))
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_one_thread) as pool:
            futures = {pool.submit(run_job, job, where, device, False, data): job for job in missing}
            for fut in as_completed(futures):
                fut.result()  # a failed job raises here, with its traceback
                bar.set_postfix_str(futures[fut].label)
                bar.update(1)
    else:
        _run_submitit(missing, where, device, slurm or {}, bar, data)
    bar.close()
    return missing


def _run_submitit(
    missing: list[Trainable], where: str | None, device: str, params: dict[str, Any], bar: tqdm, data: Any
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
    handles = ex.map_array(run_job, missing, [where] * n, [device] * n, [False] * n, [data] * n)
    for handle in handles:
        handle.result()
        bar.update(1)


def trained(
    specs: Sequence[RunSpec],
    settings: LSTMSettings,
    profile: str,
    executor: str | None = None,
    workers: int | None = None,
    device: str = "auto",
    cache: Path | None = None,
    corpus: Any = None,
) -> dict[RunSpec, TrainedRun]:
    """The trained models of ``specs``: missing jobs run first (:func:`run_missing`), all are read from the cache."""
    jobs = jobs_for(specs, settings, profile)
    run_missing(jobs, executor, workers, cache, device, data=corpus)
    corpus = corpus if corpus is not None else _ptb()
    return {job.spec: load_run(job, cache, device, corpus) for job in jobs}


def training_runs(profile: str) -> list[dict[str, Any]]:
    """The runs of ``python -m prismlib train`` recorded for ``profile`` (oldest first; ``[]`` if none)."""
    from prismlib.paths import results_dir

    path = results_dir(profile) / TRAINING_RECORD
    return json.loads(path.read_text()) if path.exists() else []


def record_training(profile: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``results/<profile>/training.json`` (the run manifest shows it)."""
    from prismlib.paths import results_dir

    path = results_dir(profile) / TRAINING_RECORD
    with locked(path):
        runs = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(runs + [entry], indent=1) + "\n")
