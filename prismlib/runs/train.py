"""``python -m prismlib train``: train a profile's models into the job cache up front.

By default the LSTM grid of work B (:mod:`prismlib.lstm.claims.grid`, notebooks 05-08); ``--section4``
adds the continued-MLM arms of section 4 (:mod:`prismlib.prism.arms`, notebooks 03-04),
``--only`` picks experiments. The jobs run on an executor of :mod:`prismlib.jobcache`:
``local`` worker processes, ``inline``, or ``slurm`` through submitit, one array task per
job (``--partition``, ``--gpus``, ``--timeout-min``). Notebooks then only read the cache.
Every run is appended to ``results/<profile>/training.json`` (the run manifest shows it).

``--until-converged`` trains the grid of the profile's ``-long`` twin
(:func:`prismlib.profiles.until_converged`): for the annealed ``cpu`` profile that is
``cpu-long``, the same models with three paired seeds each (the first seed's models are
shared with ``cpu``); for an NT-ASGD profile, every model until it passes the model gate,
with a progress bar of training tokens against the budget the power-law fits of the curves
project (:func:`prismlib.lstm.write_status`). Both are resumable (each job continues from
its checkpoint).

``--minutes M`` is an installment (:mod:`prismlib.runs.installments`): the missing LSTM jobs
first, as many as fit in the budget; then, for a profile with
:class:`~prismlib.profiles.PretrainSettings` (``profile.pretrain``; none has them until the
pretraining pilot has chosen a size, docs/benchmarks.md), the pretraining of issue 76 in the
minutes left (:func:`prismlib.pretrain.pretrain_installment`: from its committed state under
``results/<job profile>/runs/pretrain/<key>/``, which it rewrites at the end), when at least
:data:`PRETRAIN_MIN_MINUTES` are left, else skipped with a line saying so. The LSTM jobs go
first, as before the pretraining existed: no job is begun that cannot finish inside the
budget, so once the grid is trained they take no time and the pretraining has the whole
budget; ``--pretrain-only`` gives it the whole budget now (the LSTM jobs wait). Each part
appends its own entry to ``training.json`` (the pretraining's has ``"kind": "pretrain"``);
uncommitted code trains the LSTM jobs and stops before the pretraining's first step (its
committed state could never be read).
"""

from __future__ import annotations

import argparse
import math
import os
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from prismlib.jobcache import EXECUTOR_ENV, EXECUTORS, Trainable, committed, is_done, pool_size, record_training, run_missing
from prismlib.lstm.claims.doubling import doubling_jobs
from prismlib.lstm.claims.grid import DOUBLING_NOTEBOOKS, EXPERIMENTS, NOTEBOOK_EXPERIMENTS, all_specs, experiment
from prismlib.lstm.job import Job, jobs_for
from prismlib.lstm.status import read_status
from prismlib.paths import cache_dir
from prismlib.profiles import PROFILES, Profile, get_profile, until_converged
from prismlib.progress import progress_bar
from prismlib.runs.cli import CommandParser

SECTION4 = "section4"
PRETRAIN_MIN_MINUTES = 10.0
"""The fewest minutes an installment's pretraining runs in: with fewer left after the LSTM jobs it
is skipped, saying so (building the inputs, the held-out checks and the committed state take a
few minutes of their own, so a shorter sitting would train little and still commit a state)."""


def _section4(profile: Profile, executor: str | None, slurm: dict) -> int:
    """Train section 4's arms, each for every training seed (the corpus is tokenised here, once); returns how many jobs."""
    from prismlib.prism.arms import TRAINED, section4_models
    from prismlib.prism.corpus import mlm_corpus
    from prismlib.prism.mlm_training import load_mlm_tokenizer

    corpus = mlm_corpus(profile, load_mlm_tokenizer(profile.encoder))
    section4_models(profile, corpus, TRAINED, executor=executor, slurm=slurm)
    return len(TRAINED) * len(profile.prism.seeds)


def projection(jobs: Sequence[Job], workers: int, cache: Path | None = None) -> tuple[int, int, float]:
    """``(tokens trained, tokens projected, seconds left)`` over ``jobs`` from their ``status.json``.

    A job's projected budget is where its power-law fit passes the model gate (at most its
    cap; the cap while the curve is too short to fit; its tokens once done); the seconds
    left divide each job's remaining tokens by its own measured tokens/s and the sum by
    ``workers`` (the jobs run ``workers`` at a time). ``nan`` seconds before any job
    reported."""
    done = total = 0
    seconds = 0.0
    rates = []
    for job in jobs:
        st = read_status(job, cache)
        if st is None:
            continue
        if is_done(job, cache):
            done, total = done + st["tokens"], total + st["tokens"]
            continue
        need = min(st["projected_tokens"] or st["cap_tokens"], st["cap_tokens"])
        need = max(need, st["tokens"])
        rate = st["tokens"] / st["seconds"] if st["seconds"] > 0 else math.nan
        rates.append(rate)
        done, total = done + st["tokens"], total + need
        seconds += (need - st["tokens"]) / rate if rate > 0 else math.nan
    unseen = [j for j in jobs if read_status(j, cache) is None]
    if unseen:  # not started: its cap, at the mean rate of the others
        cap = jobs[0].settings.epochs * _tokens_per_epoch(jobs[0])
        rate = float(np.nanmean(rates)) if rates else math.nan
        total += cap * len(unseen)
        seconds += cap * len(unseen) / rate if rate > 0 else math.nan
    return done, total, seconds / max(workers, 1)


def _tokens_per_epoch(job: Job) -> int:
    s = job.settings
    return (s.steps_per_epoch or 0) * s.batch_size * s.bptt


def train_until_converged(
    jobs: Sequence[Job],
    executor: str | None,
    workers: int | None,
    device: str,
    slurm: dict[str, Any],
    cache: Path | None = None,
    poll: float = 10.0,
    data: Any = None,
) -> list[Job]:
    """:func:`run_missing` on ``jobs`` (``until_converged`` settings) in a thread, while this
    one shows a progress bar of tokens trained against tokens projected (:func:`projection`)
    and the projected remaining time. Returns the jobs that ran."""
    if not all(j.settings.until_converged for j in jobs):
        raise ValueError("train_until_converged needs jobs with until_converged settings (prismlib.profiles.until_converged)")
    n = min(pool_size(workers, device), len(jobs)) if executor != "inline" else 1
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["ran"] = run_missing(jobs, executor, workers, cache, device, slurm=slurm, data=data)
        except BaseException as err:  # re-raised in the calling thread
            result["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    with progress_bar(total=1, desc="until converged", unit="tok", unit_scale=True, mininterval=1) as bar:
        while worker.is_alive():
            worker.join(poll)
            done, total, seconds = projection(jobs, n, cache)
            bar.total, bar.n = max(total, 1), done
            left = "?" if not math.isfinite(seconds) else f"{seconds / 3600:.1f} h"
            bar.set_postfix_str(f"{sum(is_done(j, cache) for j in jobs)}/{len(jobs)} models converged; projected remaining {left}")
            bar.refresh()
    if "error" in result:
        raise result["error"]
    return result["ran"]


def main(argv: Sequence[str]) -> int:
    """``python -m prismlib train``: train a profile's models (or some experiments) into the cache."""
    parser = CommandParser(prog="python -m prismlib train", description=main.__doc__)
    parser.add_argument("--profile", default=None, help=f"{', '.join(PROFILES)} (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--executor", choices=EXECUTORS, default=None, help=f"default: ${EXECUTOR_ENV} or local")
    parser.add_argument("--workers", type=int, default=None, help="local pool size (default: one per core)")
    parser.add_argument("--only", nargs="+", choices=(*EXPERIMENTS, SECTION4), help="train only these experiments")
    parser.add_argument(
        "--for-notebooks", nargs="+", choices=tuple(NOTEBOOK_EXPERIMENTS), default=None, help="train only what these work-B notebooks read"
    )
    parser.add_argument("--section4", action="store_true", help="also train section 4's continued-MLM arms (notebooks 03-04)")
    parser.add_argument("--partition", default=None, help="slurm: partition")
    parser.add_argument("--gpus", type=int, default=None, help="slurm: GPUs per job")
    parser.add_argument("--timeout-min", type=int, default=None, help="slurm: time limit per job (minutes)")
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="an installment: train missing jobs in priority order for at most this many minutes of wall time "
        "(starts no job it cannot finish by then; the next installment resumes)",
    )
    parser.add_argument(
        "--pretrain-only",
        action="store_true",
        help="with --minutes: the profile's pretraining alone, for the whole budget (the LSTM jobs wait for the next installment)",
    )
    parser.add_argument(
        "--until-converged",
        action="store_true",
        help="train the profile's -long twin (cpu: cpu-long, three seeds of every model; resumable)",
    )
    args = parser.parse_args(argv)
    if args.minutes is not None and not (math.isfinite(args.minutes) and args.minutes > 0):
        parser.error(f"--minutes must be a positive number of minutes, got {args.minutes:g}")
    profile = get_profile(args.profile)
    if args.until_converged and not profile.name.endswith("-long"):
        profile = until_converged(profile)
    if args.pretrain_only and args.minutes is None:
        parser.error("--pretrain-only is an installment's: give its budget too (--minutes 110)")
    if args.pretrain_only and profile.pretrain is None:
        parser.error(f"profile {profile.name} pretrains nothing (cpu and cpu-long do: docs/benchmarks.md)")
    if args.for_notebooks:
        args.only = list(dict.fromkeys((*(args.only or ()), *(e for nb in args.for_notebooks for e in NOTEBOOK_EXPERIMENTS[nb]))))
    lstm_experiments = [e for e in (args.only or EXPERIMENTS) if e != SECTION4]
    specs = list(dict.fromkeys(s for e in lstm_experiments for s in experiment(e, profile))) if args.only else all_specs(profile)
    jobs = jobs_for(specs, profile.lstm, profile.job_profile)
    if args.minutes is None and (set(args.for_notebooks or ()) & set(DOUBLING_NOTEBOOKS) or not args.only):
        # the slow learners' doubled-path twins 05-07's claims read (none without a fixed path); the
        # claims' own twins (about 40 worker-hours) train in installments only (`--minutes`)
        jobs += doubling_jobs(profile, claims=False)[1]
    slurm = {
        k: v
        for k, v in (("slurm_partition", args.partition), ("gpus_per_node", args.gpus), ("timeout_min", args.timeout_min))
        if v is not None
    }
    records, cached = _trained_counts(jobs)
    done = records + cached
    print(
        f"profile {profile.name}: {len(jobs)} LSTM models, {done} already trained "
        f"({records} as committed records, {cached} in the cache {cache_dir() / 'jobs'})"
    )
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if args.minutes is None and done < len(jobs):
        print(training_ahead(jobs, pool_size(args.workers, profile.device)), flush=True)
    t0 = time.perf_counter()
    ran: Sequence[Trainable] = []
    arms, completed = 0, False
    if args.minutes is not None:
        return _installment(profile, jobs, args, started, done)
    try:
        if profile.lstm.until_converged:
            ran = train_until_converged(jobs, args.executor, args.workers, profile.device, slurm)
        else:
            ran = run_missing(jobs, args.executor, args.workers, device=profile.device, slurm=slurm)
        arms = _section4(profile, args.executor, slurm) if args.section4 or SECTION4 in (args.only or ()) else 0
        completed = True
    finally:  # an interrupted run is recorded too (its models are in the cache; the same command resumes)
        seconds = round(time.perf_counter() - t0, 1)
        now_done = sum(_trained_counts(jobs))
        if completed:
            print(
                f"trained {len(ran)} LSTM model(s) in {seconds:.0f} s; all {len(jobs)} are trained"
                + (f", and {arms} section 4 arm jobs (arms x training seeds)" if arms else "")
            )
        else:
            print(
                f"interrupted after {seconds:.0f} s: {now_done} of {len(jobs)} LSTM models trained "
                "(committed records or the cache); the same command resumes"
            )
        record_training(
            profile.name,
            {
                "started": started,
                "seconds": seconds,
                "models": len(jobs),
                "trained": len(ran) if completed else now_done - done,
                "completed": completed,
                "executor": args.executor or os.environ.get(EXECUTOR_ENV, "local"),
                "workers": pool_size(args.workers, profile.device),
                "experiments": args.only or "all",
                "section4_arms": arms,
            },
        )
    return 0


def training_ahead(jobs: Sequence[Job], workers: int) -> str:
    """One line said before any training starts: how many of ``jobs`` train and about how long,
    their tokens at the rate the committed records measured
    (:func:`prismlib.runs.installments.projected_seconds`), spread over ``workers``."""
    from prismlib.data.ptb import load_ptb_corpus
    from prismlib.runs.installments import measured_rate, projected_seconds

    missing = [j for j in jobs if not committed(j) and not is_done(j)]
    rate, n = measured_rate(jobs)
    train_tokens = len(load_ptb_corpus().train)
    seconds = sum(projected_seconds(j, train_tokens, rate) for j in missing)
    source = f"measured on {n} committed record{'s' if n != 1 else ''}" if n else "no record measured it: the default"
    return (
        f"{len(missing)} LSTM model(s) train first: about {seconds / 60 / workers:.0f} min on {workers} worker(s) "
        f"({seconds / 60:.0f} worker-minutes at {rate:,.0f} tokens/s, {source}); Ctrl-C stops, the same command resumes"
    )


def _trained_counts(jobs: Sequence[Trainable]) -> tuple[int, int]:
    """How many of ``jobs`` need no training: (those with a usable committed record, the others
    finished in the local cache). A fresh clone has records and an empty cache."""
    with_record = [committed(j) for j in jobs]
    return sum(with_record), sum(not r and is_done(j) for j, r in zip(jobs, with_record))


def _installment(profile: Profile, jobs: list[Job], args: argparse.Namespace, started: str, done_before: int) -> int:
    """``train --minutes M``: one installment, the LSTM jobs first
    (:func:`prismlib.runs.installments.train_installment`; none with ``--pretrain-only``), then the
    pretraining in the minutes left (:func:`_pretrain_installment`; profiles with pretrain settings)."""
    from prismlib.records import source_commit

    t0 = time.perf_counter()
    commit = source_commit()  # the code that trains (the session may commit records while it runs)
    if not args.pretrain_only:
        _lstm_installment(profile, jobs, args, started, done_before, commit)
    if profile.pretrain is not None:
        _pretrain_installment(profile, args.minutes - (time.perf_counter() - t0) / 60, args.minutes, commit)
    return 0


def _lstm_installment(
    profile: Profile, jobs: list[Job], args: argparse.Namespace, started: str, done_before: int, commit: str | None
) -> None:
    """The LSTM jobs of an installment, in priority order, for at most ``args.minutes``; its entry in ``training.json``."""
    from prismlib.data.ptb import load_ptb_corpus
    from prismlib.runs.installments import train_installment, with_twins

    ordered = with_twins(profile, jobs)
    workers = pool_size(args.workers, profile.device)
    train_tokens = len(load_ptb_corpus().train)
    result = train_installment(ordered, args.minutes, workers, train_tokens, device=profile.device)
    worker_minutes = sum(_wall_seconds(j) for j in result.finished) / 60
    source = "measured on " + (f"{result.rate_records} committed record(s)" if result.rate_records else "no record yet: the default")
    print(
        f"installment: {len(result.finished)} job(s) finished in {result.seconds / 60:.1f} min on {workers} workers"
        + (f", {len(result.stopped)} stopped at the budget (their checkpoints resume here)" if result.stopped else "")
        + f"; left: {len(result.left)} job(s), about {result.left_seconds / 60:.0f} worker-minutes "
        f"({result.left_seconds / 60 / workers:.0f} min on {workers} workers) at {result.rate:,.0f} tokens/s ({source})"
    )
    record_training(  # beside the records it wrote: results/<the profile the jobs belong to>/training.json
        profile.job_profile,
        {
            "started": started,
            "profile": profile.name,
            "seconds": round(result.seconds, 1),
            "installment_minutes": args.minutes,
            "commit": commit,
            "models": len(jobs),
            "done_before": done_before,
            "trained": len(result.finished),
            "finished": [j.key for j in result.finished],
            "stopped": [j.key for j in result.stopped],
            "left": len(result.left),
            "left_worker_minutes": round(result.left_seconds / 60, 1),
            "worker_minutes": round(worker_minutes, 1),
            "rate_tokens_per_s": round(result.rate),
            "executor": "local",
            "workers": workers,
            "completed": not result.left,
        },
    )


def _pretrain_installment(profile: Profile, minutes: float, installment_minutes: float, commit: str | None) -> None:
    """The pretraining of an installment in the ``minutes`` left of it (skipped, saying so, under
    :data:`PRETRAIN_MIN_MINUTES`): :func:`prismlib.pretrain.pretrain_installment`, which says a
    line before its steps and one after, its committed states under
    ``results/<job profile>/runs/pretrain/``, its local ones under ``.cache/pretrain/``; an entry in
    ``training.json`` when it trained (none when its record was done already)."""
    from prismlib.paths import output_root, results_dir
    from prismlib.pretrain.installment import pretrain_installment
    from prismlib.records import PRETRAIN, RUNS

    settings = profile.pretrain
    assert settings is not None
    if minutes < PRETRAIN_MIN_MINUTES:
        print(
            f"pretraining {settings.size}: skipped, {max(minutes, 0):.0f} min left of this installment after the LSTM jobs, "
            f"at least {PRETRAIN_MIN_MINUTES:.0f} needed (--pretrain-only gives it the whole budget)",
            flush=True,
        )
        return
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    outcome = pretrain_installment(settings, minutes, results_dir(profile.job_profile) / RUNS / PRETRAIN, cache_dir() / "pretrain")
    if not outcome.trained:
        return
    record = outcome.record
    if record is not None and record.is_relative_to(output_root()):
        record = record.relative_to(output_root())
    record_training(
        profile.job_profile,
        {
            "kind": "pretrain",
            "started": started,
            "profile": profile.name,
            "seconds": round(outcome.seconds, 1),
            "installment_minutes": installment_minutes,
            "pretrain_minutes": round(minutes, 1),
            "commit": commit,
            "size": outcome.size,
            "key": outcome.key,
            "steps_before": outcome.steps_before,
            "steps": outcome.steps,
            "total_steps": outcome.total_steps,
            "tokens": outcome.tokens,
            "gain": None if outcome.gain is None else round(outcome.gain, 4),
            "gain_seq_len": outcome.gain_seq_len,
            "stop": outcome.stop,
            "record": None if record is None else str(record),
            "threads": settings.threads,
            "completed": outcome.done,
        },
    )


def _wall_seconds(job: Job) -> float:
    """The wall seconds a finished job's record measured (0 without a record: a profile that keeps none)."""
    from prismlib.records import read_record

    folder = job.committed()
    return float(read_record(folder)["provenance"]["wall_seconds"]) if folder is not None else 0.0
