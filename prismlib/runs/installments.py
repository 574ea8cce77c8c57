"""Training a grid in installments: as many missing jobs as fit in a wall-clock budget.

Work B's grid with the seeds its claims need is many hours of training on two cores, more
than any sitting. ``python -m prismlib train --profile cpu-long --minutes 110`` trains the
missing jobs in priority order (:func:`prismlib.lstm.claims.grid.in_priority`: every model's first
seed, then the next seeds) on ``workers`` single-thread processes and

- starts a job only when its projected time fits in what is left of the budget
  (:func:`projected_seconds`: the job's tokens over the measured rate of the finished
  records, and once this installment has finished a job, over the rate of its own finished
  jobs: this machine under this load; a job's partial checkpoint does not survive a new
  machine, so a job that cannot finish is not begun);
- stops at the budget: a job still running then is stopped (its checkpoint stays in the
  local cache, and the same command on the same machine resumes it); a record is written
  only by a finished job (:mod:`prismlib.records`);
- prints what is left: jobs and projected worker minutes.

Each finished job commits nothing by itself: the session commits its new records under
``results/<profile>/runs/`` together with ``results/<profile>/training.json``.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prismlib.devices import one_thread
from prismlib.jobcache import committed, is_done, run_job, stop_pool
from prismlib.lstm.claims.doubling import doubling_jobs
from prismlib.lstm.claims.grid import DOUBLING_NOTEBOOKS, NOTEBOOK_EXPERIMENTS, all_specs, claim_twin_specs, experiment, in_priority
from prismlib.lstm.job import FRESH_ENV, Job, jobs_for
from prismlib.lstm.status import read_status
from prismlib.profiles import Profile
from prismlib.progress import progress_bar
from prismlib.records import BadRecord, find_record, read_record

DEFAULT_RATE = 10_000.0
"""Training tokens per second of one single-thread worker, validation and scoring included,
assumed until a finished record measures it (two workers of the cpu recipe on this 2-core
machine measured about that; see docs/benchmarks.md)."""


def with_twins(profile: Profile, jobs: Sequence[Job]) -> list[Job]:
    """``jobs`` in priority order (:func:`prismlib.lstm.claims.grid.in_priority`), each slow learner
    of the doubling check (:data:`~prismlib.lstm.claims.grid.DOUBLING`) followed by its twin trained
    on the doubled path, then the twins of the claims' own models
    (:func:`~prismlib.lstm.claims.grid.claim_twin_specs`: claim by claim, after the whole grid; none
    when the profile's recipe has no fixed path)."""
    claims = claim_twin_specs(profile)
    twins = {j.spec: j for j in doubling_jobs(profile)[1]}
    by_spec = {j.spec: j for j in jobs}
    slow = {s: j for s, j in twins.items() if s not in claims}
    ordered = [x for spec in in_priority(list(by_spec)) for x in (by_spec[spec], slow.get(spec)) if x is not None]
    return ordered + [twins[s] for s in claims if s in by_spec]


def committed_state(jobs: Sequence[Job]) -> tuple[int, list[str]]:
    """How many of ``jobs`` have a usable committed record, and the commits (10 characters)
    they were trained at."""
    folders = [f for f in (j.committed() for j in jobs) if f is not None]
    return len(folders), sorted({str(read_record(f)["provenance"]["commit"])[:10] for f in folders})


def _work_b(profile: Profile, stems: Sequence[str]) -> tuple[list[str], list[Job], list[Job]] | None:
    """The work-B notebooks among ``stems``, the LSTM jobs they read and the claims' own
    twins they read when present; ``None`` when no work-B notebook runs or the profile
    keeps no records."""
    books = [s[:2] for s in stems if s[:2] in NOTEBOOK_EXPERIMENTS]
    if not books or not profile.lstm.records:
        return None
    specs = dict.fromkeys(s for nb in books for e in NOTEBOOK_EXPERIMENTS[nb] for s in experiment(e, profile))
    jobs = jobs_for(list(specs), profile.lstm, profile.job_profile)
    own: list[Job] = []
    if set(books) & set(DOUBLING_NOTEBOOKS):
        jobs += doubling_jobs(profile, claims=False)[1]
        own = _claim_twins(profile)
    return books, jobs, own


class RecordsError(ValueError):
    """Committed run records that exist but must not be used: the run stops before any
    training; the message names each file and the two ways on."""


def bad_records(profile: Profile, stems: Sequence[str]) -> list[BadRecord]:
    """The committed records read by the work-B notebooks among ``stems`` that exist but must
    not be used (:func:`prismlib.records.find_record`: a flipped byte, a truncated file, an
    older recipe), one per file; none with ``FRESH=1``, which ignores records."""
    found = _work_b(profile, stems)
    if found is None or os.environ.get(FRESH_ENV):
        return []
    bad: dict[Path, BadRecord] = {}
    for job in [*found[1], *found[2]]:
        try:
            find_record(job.runs, job.key, job.describe())
        except BadRecord as err:
            bad.setdefault(err.path, err)
    return list(bad.values())


def check_records(profile: Profile, stems: Sequence[str], only: Sequence[str] | None = None) -> None:
    """Raise :class:`RecordsError` when :func:`bad_records` finds any: without it, the jobs
    of those records would silently retrain (up to an hour each on two cores)."""
    bad = bad_records(profile, stems)
    if not bad:
        return
    shown = [b.path.relative_to(Path.cwd()) if b.path.is_relative_to(Path.cwd()) else b.path for b in bad]
    paths = " ".join(str(p.parent) for p in shown)
    only_arg = f' ONLY="{" ".join(only)}"' if only else ""
    lines = [f"{len(bad)} committed run record{'s' if len(bad) > 1 else ''} cannot be used, so nothing was trained or run:"]
    lines += [f"  {p}: {b.problem}" for p, b in zip(shown, bad)]
    lines.append(
        f"two ways on: restore {'them' if len(bad) > 1 else 'it'} with `git checkout -- {paths}`, "
        f"or retrain without any record: `make reproduce FRESH=1{only_arg}` (`python -m prismlib plan` says how long)"
    )
    raise RecordsError("\n".join(lines))


def records_line(profile: Profile, stems: Sequence[str]) -> str | None:
    """One line for ``make reproduce``: where the LSTM runs of the work-B notebooks among
    ``stems`` (``"05_chrono_init"``, ...) come from: how many have a committed run record (and
    the commits they were trained at), how many a local checkpoint, how many train first;
    with ``FRESH=1`` that records are ignored; then, for 05-07, how many of the claims' own
    doubled twins (:func:`~prismlib.lstm.claims.grid.claim_twin_specs`, never trained by a notebook)
    are committed or cached. ``None`` when no work-B notebook runs or the profile keeps no records."""
    found = _work_b(profile, stems)
    if found is None:
        return None
    books, jobs, own = found
    fresh = bool(os.environ.get(FRESH_ENV))
    twins = (
        f"; {sum(_present(j, fresh) for j in own)} of the {len(own)} twins of the claims' "
        "own models are there (notebooks never train them: `python -m prismlib train --profile cpu-long --minutes 110`)"
        if own
        else ""
    )
    what = f"the {len(jobs)} LSTM runs of notebook{'s' if len(books) > 1 else ''} {' '.join(books)}"
    if fresh:
        local = sum(is_done(j) for j in jobs)
        return (
            f"work B, FRESH=1: committed run records ignored; {local} of {what} are in the local job cache, {len(jobs) - local} train first"
            + twins
        )
    done, commits = committed_state(jobs)
    local = sum(1 for j in jobs if j.committed() is None and is_done(j))
    left = len(jobs) - done - local
    at = f" (trained at {', '.join(commits)})" if commits else ""
    parts = [f"work B: {done} of {what} from committed run records{at}"]
    if local:
        parts.append(f"{local} from the local job cache")
    if left:
        parts.append(f"{left} train first (`python -m prismlib plan` says how long)")
    return "; ".join(parts) + twins


def _claim_twins(profile: Profile) -> list[Job]:
    return [j for j in doubling_jobs(profile)[1] if j.spec in claim_twin_specs(profile)]


def _present(job: Job, fresh: bool) -> bool:
    """Whether a notebook would read ``job`` now: a usable committed record (not under
    ``FRESH=1``) or a finished job in the local cache."""
    return is_done(job) if fresh else job.committed() is not None or is_done(job)


def twins_read(profile: Profile, stem: str) -> list[str]:
    """The job keys of the claims' own doubled twins (:func:`~prismlib.lstm.claims.grid.claim_twin_specs`)
    that notebook ``stem`` (``"07_layer2_timescales"``) would read now, sorted; empty for a
    notebook that reads none. The notebooks never train these twins, so a result is current
    only while this list is what it was when the notebook ran (an installment that commits
    a twin can move a verdict: :func:`prismlib.runs.reproduce.current_result`)."""
    if stem[:2] not in DOUBLING_NOTEBOOKS:
        return []
    fresh = bool(os.environ.get(FRESH_ENV))
    return sorted(j.key for j in _claim_twins(profile) if _present(j, fresh))


def grid_jobs(profile: Profile) -> list[Job]:
    """Every job of ``profile``'s grid (:func:`prismlib.lstm.claims.grid.all_specs`) with its doubled twins, in priority order."""
    return with_twins(profile, jobs_for(all_specs(profile), profile.lstm, profile.job_profile))


def job_tokens(job: Job, train_tokens: int) -> int:
    """Training tokens ``job`` reads in all: its rounds (the cap; a fixed path's exact length)
    times the tokens of a round (``train_tokens`` over ``checks_per_pass``, or its steps)."""
    s = job.settings
    rounds = s.min_rounds + s.decays + 1 if s.fixed_path else s.epochs
    per_round = s.steps_per_epoch * s.batch_size * s.bptt if s.steps_per_epoch else train_tokens / s.checks_per_pass
    return int(rounds * per_round)


def measured_rate(jobs: Sequence[Job]) -> tuple[float, int]:
    """``(tokens/s, records)``: the median rate of the usable committed records among ``jobs``
    (training tokens over the wall seconds of the run that finished them, so validation and
    scoring count; resumed runs are left out), else :data:`DEFAULT_RATE` from none."""
    rates = []
    for job in jobs:
        folder = job.committed()
        if folder is None:
            continue
        record = read_record(folder)
        prov, hist = record["provenance"], record["history"]
        if not prov.get("resumed") and prov.get("wall_seconds"):
            rates.append(hist["tokens"] / prov["wall_seconds"])
    if not rates:
        return DEFAULT_RATE, 0
    rates.sort()
    return rates[len(rates) // 2], len(rates)


def projected_seconds(job: Job, train_tokens: int, rate: float, cache: Path | None = None) -> float:
    """Seconds ``job`` still needs at ``rate`` tokens/s: its tokens left after what its
    checkpoint in this machine's cache has trained (``status.json``)."""
    status = read_status(job, cache)
    done = status["tokens"] if status else 0
    return max(job_tokens(job, train_tokens) - done, 0) / rate


def fitting(seconds: Sequence[float], budget: float, workers: int, busy: Sequence[float] = ()) -> int:
    """How many jobs of projected ``seconds`` (in priority order) an installment begins within
    ``budget`` seconds on ``workers`` workers, ``busy`` of which run a job for that many seconds
    more: :func:`train_installment`'s own rule (a free worker takes the first job whose
    projection fits in what is left of the budget) played out at the projections."""
    free = sorted([*busy, *[0.0] * max(workers - len(busy), 0)])
    queue, begun = list(seconds), 0
    while free and queue:
        t = free.pop(0)
        pick = next((i for i, s in enumerate(queue) if s <= budget - t), None)
        if pick is None:
            continue  # the budget only shrinks: this worker begins nothing more
        free = sorted([*free, t + queue.pop(pick)])
        begun += 1
    return begun


@dataclass
class Installment:
    """What an installment did: jobs ``finished`` (records written), ``stopped`` at the budget
    (checkpoints kept), ``left`` (not started or stopped) and their projected worker seconds at
    ``rate`` tokens/s, measured at the end on ``rate_records`` records (this installment's too)."""

    finished: list[Job]
    stopped: list[Job]
    left: list[Job]
    left_seconds: float
    rate: float
    rate_records: int
    seconds: float


def _now() -> float:
    """The installment's clock (:func:`time.monotonic`; a test moves it)."""
    return time.monotonic()


def _missing(jobs: Sequence[Job], cache: Path | None) -> list[Job]:
    return [j for j in dict.fromkeys(jobs) if not is_done(j, cache) and not committed(j)]


def train_installment(
    jobs: Sequence[Job],
    minutes: float,
    workers: int,
    train_tokens: int,
    cache: Path | None = None,
    device: str = "cpu",
    poll: float = 5.0,
    data: Any = None,
) -> Installment:
    """Train the missing ``jobs``, in the order given, for at most ``minutes`` of wall time.

    Args:
        jobs: in priority order.
        minutes: the budget (> 0).
        workers: single-thread worker processes.
        train_tokens: tokens of the training split (a job's length).
        cache: the local job cache (default ``.cache/``).
        data: what every job's ``train`` reads (``None``: PTB, loaded by each worker).
    """
    if not (isinstance(minutes, (int, float)) and math.isfinite(minutes) and minutes > 0):
        raise ValueError(f"--minutes must be a positive number of minutes, got {minutes}")
    t0 = _now()
    deadline = t0 + minutes * 60
    missing = _missing(jobs, cache)
    rate, n_rates = measured_rate(jobs)
    queue = list(missing)
    running: dict[Future[Any], Job] = {}
    finished: list[Job] = []
    stopped: list[Job] = []
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max(1, workers), mp_context=ctx, initializer=one_thread)
    where = None if cache is None else str(cache)
    # the bar counts the jobs this installment is projected to finish, not every missing job
    # (26 jobs at two an installment gave tqdm's ETA of 36 hours); it is re-planned as jobs end
    bar = progress_bar(total=fitting([projected_seconds(j, train_tokens, rate, cache) for j in queue], deadline - t0, workers),
                       desc=f"installment of {minutes:g} min", unit="job", mininterval=1)  # fmt: skip
    bar.set_postfix_str(f"{len(missing)} missing in all")
    try:
        while queue or running:
            left = deadline - _now()
            while queue and len(running) < workers:
                fits = [j for j in queue if projected_seconds(j, train_tokens, rate, cache) <= left]
                if not fits:
                    break
                job = fits[0]
                queue.remove(job)
                running[pool.submit(run_job, job, where, device, False, data)] = job
            if not running:
                break
            done, _ = wait(running, timeout=min(poll, max(deadline - _now(), 0.1)), return_when=FIRST_COMPLETED)
            for fut in done:
                job = running.pop(fut)
                fut.result()
                finished.append(job)
                bar.set_postfix_str(f"last: {job.label}; {len(missing) - len(finished)} missing in all")
                bar.update(1)
            own, n_own = measured_rate(finished) if done else (rate, 0)
            if n_own:  # this machine's rate under this installment's load, not the median of other sessions'
                rate = own
            if done:
                busy = [projected_seconds(j, train_tokens, rate, cache) for j in running.values()]
                ahead = fitting([projected_seconds(j, train_tokens, rate, cache) for j in queue], deadline - _now(), workers, busy)
                bar.total = len(finished) + len(running) + ahead
                bar.refresh()
            if _now() >= deadline and running:
                stopped = list(running.values())
                break
    finally:
        bar.close()
        if stopped or running:
            stop_pool(pool)
        else:
            pool.shutdown()
    left_jobs = [j for j in missing if j not in finished]
    rate, n_rates = measured_rate(jobs)  # the records this installment wrote measure the rate of what is left
    return Installment(
        finished=finished,
        stopped=stopped,
        left=left_jobs,
        left_seconds=sum(projected_seconds(j, train_tokens, rate, cache) for j in left_jobs),
        rate=rate,
        rate_records=n_rates,
        seconds=_now() - t0,
    )
