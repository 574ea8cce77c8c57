"""How long a profile's notebooks take, from the clock: each notebook's :class:`Estimate`.

A notebook's own run is, best first (:func:`estimates`):

1. *measured*: its last run in ``results/<profile>/manifest.json`` (:func:`measured_runs`;
   the run's date, commit and machine are stated);
2. *calibrated*: the FLOP model of :mod:`prismlib.runs.costs` fitted to the measured runs
   of the profile (of its twin, ``jobs_as``, when it has none): the shortest run as every
   notebook's overhead, plus each kind of work's operations at the TFLOP/s the runs imply
   (:func:`calibrate`);
3. *FLOP model*: the operations at the sustained throughputs of
   :data:`~prismlib.runs.costs.ASSUMED_TFLOPS`, or those of a few training steps timed on
   this machine's device (:func:`~prismlib.runs.costs.measure`, ``plan --measure``).

Work B's LSTM models (notebooks 05-08) are trained before the notebooks read them
(``python -m prismlib train``), so their time comes apart: the worker time of the models not
trained yet (no checkpoint in ``.cache/jobs/``, no committed record), at the tokens/s the
committed records measured (:func:`prismlib.runs.installments.measured_rate`), else by the
FLOP model (calibrated where the runs calibrate it). :func:`notebook_estimates` gives the
report each notebook's :class:`Estimate` (seconds and where they come from); nothing is timed.
``python -m prismlib plan`` (:mod:`prismlib.runs.plan`) prints them as a table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prismlib.jobcache import committed, job_dir
from prismlib.lstm.job import Job, jobs_for
from prismlib.paths import output_root
from prismlib.profiles import Profile, get_profile
from prismlib.records import RUNS
from prismlib.runs.costs import ASSUMED_TFLOPS, PTB_TRAIN, Work, works
from prismlib.runs.installments import DEFAULT_RATE, job_tokens, measured_rate
from prismlib.runs.manifest import cold_seconds, manifest_path, read_manifest, run_seconds

MEASURED, CALIBRATED, MODELLED = "measured", "calibrated", "FLOP model"
"""Where a notebook's time comes from (:attr:`Estimate.basis`), best first."""


@dataclass(frozen=True)
class Estimate:
    """How long a notebook takes (:func:`notebook_estimates`).

    Attributes:
        seconds: its own run (``0.0`` where no run measured it and nothing of it is modelled).
        source: where ``seconds`` comes from, in a phrase: ``measured 2026-11-27 at 70fb1ff on
            cpu: x86_64, 2 cores, torch threads 2``, ``calibrated on 9 measured runs``,
            ``FLOP model at assumed TFLOP/s``.
        basis: :data:`MEASURED`, :data:`CALIBRATED` or :data:`MODELLED`.
        training_seconds: worker seconds (one process per model) of the LSTM models it is the
            first notebook to read and that are not trained yet; ``python -m prismlib train``
            trains them before the notebooks run, several workers at once.
        models_to_train: how many models those are, of ``models`` it is the first to read.
        training_source: how ``training_seconds`` was estimated (empty where it reads no
            model first): ``at 9,800 tokens/s per worker, the median of 12 committed
            records`` or ``FLOP model at 0.011 TFLOP/s per worker (calibrated on 9 measured runs)``.
    """

    seconds: float
    source: str
    basis: str
    training_seconds: float = 0.0
    models_to_train: int = 0
    models: int = 0
    training_source: str = ""


@dataclass(frozen=True)
class Calibration:
    """The FLOP model fitted to measured runs (:func:`calibrate`): ``overhead`` seconds of
    every notebook, and per kind of work the TFLOP/s the runs imply; ``runs`` measured
    notebooks of profile ``profile`` went into it (0: nothing to fit)."""

    overhead: float = 0.0
    tflops: dict[str, float] = field(default_factory=dict)
    runs: int = 0
    profile: str = ""


def measured_runs(profile_name: str) -> dict[str, dict[str, Any]]:
    """Notebook stem -> the record of its last successful run in the profile's manifest
    (:mod:`prismlib.runs.manifest`), for the notebooks whose run has its ``seconds``."""
    path = manifest_path(profile_name)
    try:
        notebooks = read_manifest(path).get("notebooks", {})
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}): restore it (git checkout -- {path}) or rerun its notebooks") from None
    return {stem: r for stem, r in notebooks.items() if isinstance(r.get("seconds"), (int, float))}


def run_date(record: dict[str, Any]) -> str:
    """The day a run record started (``2026-11-27``), ``?`` when it does not say."""
    return str(record.get("started") or "?")[:10]


def _measured_source(record: dict[str, Any]) -> str:
    """A run record in a phrase: ``measured <date> at <commit> on <machine>``, and where its
    last run reused trained models, which time is given."""
    commit = str(record.get("commit") or "")[:7] or "an unknown commit"
    where = f"measured {run_date(record)} at {commit} on {record.get('device') or 'an unrecorded machine'}"
    reused = int(record.get("reused_jobs") or 0)
    if not reused:
        return where
    if cold_seconds(record) is None:
        return f"{where}, reusing {reused} trained models (no run on an empty cache recorded)"
    return f"{where}, reusing {reused} trained models; on an empty cache its last such run"


def calibrate(work: Sequence[Work], seconds: dict[str, float], rates: dict[str, float], profile_name: str = "") -> Calibration:
    """The FLOP model fitted to the measured ``seconds`` of notebooks.

    The shortest measured run is the ``overhead`` of every notebook (start-up, data,
    references: what no FLOP count sees). Each measured notebook's seconds beyond it are
    shared among its kinds of work in proportion to their time at ``rates`` (TFLOP/s per
    kind); a kind's calibrated TFLOP/s is its FLOPs over the seconds shared to it, summed
    over the measured notebooks. Work B's LSTM training (:attr:`Work.specs`) is left out:
    it runs before its notebook, not in it."""
    measured = list(dict.fromkeys(w.notebook for w in work if w.notebook in seconds))
    if not measured:
        return Calibration()
    overhead = min(seconds[nb] for nb in measured)
    own = [w for w in work if not w.specs and w.notebook in seconds]
    flops: dict[str, float] = {}
    shared: dict[str, float] = {}
    for nb in measured:
        mine = [w for w in own if w.notebook == nb and w.flops > 0]
        modelled = sum(w.flops / rates[w.kind] for w in mine)
        for w in mine:
            flops[w.kind] = flops.get(w.kind, 0.0) + w.flops
            shared[w.kind] = shared.get(w.kind, 0.0) + (seconds[nb] - overhead) * w.flops / rates[w.kind] / modelled
    tflops = {k: flops[k] / shared[k] / 1e12 for k in flops if shared[k] > 0}
    return Calibration(overhead, tflops, len(measured), profile_name)


def _trained(job: Job, cache: Path) -> bool:
    """Whether ``job`` is trained, as :func:`prismlib.jobcache.run_missing` sees it (its
    ``done.pt`` in ``cache``, or a committed record), without checking or creating anything."""
    if (job_dir(job, cache) / "done.pt").exists():
        return True
    return (output_root() / "results" / job.profile / RUNS).is_dir() and committed(job)


def _rate(profile: Profile, work: Sequence[Work]) -> tuple[float, int]:
    """``(tokens/s, records)`` of one worker, measured by the committed records of the
    profile's LSTM jobs (:func:`prismlib.runs.installments.measured_rate`); ``(0, 0)`` without any."""
    if not (output_root() / "results" / profile.job_profile / RUNS).is_dir():
        return 0.0, 0
    rate, records = measured_rate(jobs_for([s for w in work for s in w.specs], profile.lstm, profile.job_profile))
    return (rate, records) if records else (0.0, 0)


def _training(profile: Profile, work: Sequence[Work], lstm_tflops: float, lstm_from: str, cache: Path) -> dict[str, dict[str, Any]]:
    """Notebook -> the training fields of its :class:`Estimate`, for the LSTM models it is the
    first to read: the training tokens of those not trained yet at the rate committed records
    measured, else (the cpu recipe) at :data:`~prismlib.runs.installments.DEFAULT_RATE`, else their
    FLOPs at ``lstm_tflops``."""
    rate, records = _rate(profile, work)
    out = {}
    for w in work:
        if not w.specs:
            continue
        jobs = jobs_for(w.specs, profile.lstm, profile.job_profile)
        todo = [j for j in jobs if not _trained(j, cache)]
        if records:
            seconds = sum(job_tokens(j, PTB_TRAIN) for j in todo) / rate
            how = f"at {rate:,.0f} tokens/s per worker, the median of {records} committed records"
        elif profile.job_profile == "cpu":  # DEFAULT_RATE was measured on this recipe; the FLOP model misses a CPU step's overheads
            seconds = sum(job_tokens(j, PTB_TRAIN) for j in todo) / DEFAULT_RATE
            how = f"at {DEFAULT_RATE:,.0f} tokens/s per worker, the installments' default (no committed record measured a rate yet)"
        else:
            seconds = w.flops * len(todo) / len(jobs) / (lstm_tflops * 1e12)
            how = f"FLOP model at {lstm_tflops:.3g} TFLOP/s per worker ({lstm_from}; no committed record measured a rate)"
        out[w.notebook] = {"training_seconds": seconds, "models_to_train": len(todo), "models": len(jobs), "training_source": how}
    return out


def rates_label(tflops: dict[str, float] | None) -> str:
    """``timed`` (``plan --measure``) or ``assumed`` (:data:`ASSUMED_TFLOPS`): the uncalibrated throughputs."""
    return "timed" if tflops else "assumed"


def estimates(
    profile: Profile, runs: dict[str, dict[str, Any]] | None = None, tflops: dict[str, float] | None = None, cache: Path | None = None
) -> dict[str, Estimate]:
    """Notebook stem -> :class:`Estimate` on ``profile``.

    A notebook's run is its measured run in ``runs`` (default: the profile's manifest,
    :func:`measured_runs`); otherwise the FLOP model calibrated on the measured runs
    (:func:`calibrate`; on the twin's, ``jobs_as``, when the profile has none); otherwise
    the FLOP model at ``tflops`` (default :data:`ASSUMED_TFLOPS`). The training of its LSTM
    models that are not in ``cache`` (default ``.cache/``) nor committed comes apart."""
    work = works(profile)
    rates = ASSUMED_TFLOPS | (tflops or {})
    label = rates_label(tflops)
    runs = measured_runs(profile.name) if runs is None else runs
    fit_profile = profile if runs or not profile.jobs_as else get_profile(profile.jobs_as)
    fit_runs = runs if fit_profile is profile else measured_runs(fit_profile.name)
    fit_work = work if fit_profile is profile else works(fit_profile)
    fit = calibrate(fit_work, {k: run_seconds(r) for k, r in fit_runs.items()}, rates, fit_profile.name)
    on = f"calibrated on {fit.runs} measured runs" + ("" if fit.profile == profile.name else f" of profile {fit.profile}")
    lstm_from = on if "lstm" in fit.tflops else f"{label} TFLOP/s"
    training = _training(profile, work, fit.tflops.get("lstm", rates["lstm"]), lstm_from, cache or output_root() / ".cache")
    out = {}
    for nb in dict.fromkeys(w.notebook for w in work):
        own = [w for w in work if w.notebook == nb and not w.specs and w.flops > 0]
        if nb in runs:
            seconds, source, basis = run_seconds(runs[nb]), _measured_source(runs[nb]), MEASURED
        elif fit.runs:
            seconds = fit.overhead + sum(w.flops / (fit.tflops.get(w.kind, rates[w.kind]) * 1e12) for w in own)
            assumed = sorted({w.kind for w in own if w.kind not in fit.tflops})
            source, basis = on + (f"; {', '.join(assumed)} at {label} TFLOP/s" if assumed else ""), CALIBRATED
        else:
            seconds = sum(w.flops / (rates[w.kind] * 1e12) for w in own)
            source, basis = f"FLOP model at {label} TFLOP/s" + ("" if own else ": nothing of its own run is modelled"), MODELLED
        out[nb] = Estimate(seconds, source, basis, **training.get(nb, {}))
    return out


def notebook_estimates(profile_name: str) -> dict[str, Estimate]:
    """Notebook stem (``02_probing_filtered``) -> how long it takes on profile ``profile_name``
    and where the number comes from (:func:`estimates`): cheap, nothing is timed."""
    return estimates(get_profile(profile_name))
