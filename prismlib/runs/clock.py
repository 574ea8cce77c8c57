"""How long a profile's notebooks take, from the clock: ``python -m prismlib plan``.

``python -m prismlib plan --profile cpu`` prints one row per notebook (a table within
:data:`PLAN_WIDTH` columns, durations by :func:`prismlib.timing.format_duration`, notes
under it saying where each number comes from) and the wall clock on 1, 4 and 8 devices.
A notebook's own run is, best first (:func:`estimates`):

1. *measured*: its last run in ``results/<profile>/manifest.json`` (:func:`measured_runs`;
   the run's date, commit and machine are stated);
2. *calibrated*: the FLOP model of :mod:`prismlib.runs.costs` fitted to the measured runs
   of the profile (of its twin, ``jobs_as``, when it has none): the shortest run as every
   notebook's overhead, plus each kind of work's operations at the TFLOP/s the runs imply
   (:func:`calibrate`);
3. *FLOP model*: the operations at the sustained throughputs of
   :data:`~prismlib.runs.costs.ASSUMED_TFLOPS`, or, with ``--measure``, of a few training
   steps timed on this machine's device (:func:`~prismlib.runs.costs.measure`).

Work B's LSTM models (notebooks 05-08) are trained before the notebooks read them
(``python -m prismlib train``), so their time comes apart: the worker time of the models not
trained yet (no checkpoint in ``.cache/jobs/``, no committed record), at the tokens/s the
committed records measured (:func:`prismlib.runs.installments.measured_rate`), else by the
FLOP model (calibrated where the runs calibrate it). :func:`notebook_estimates` gives the
report each notebook's :class:`Estimate` (seconds and where they come from); nothing is timed.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from prismlib.devices import resolve_device
from prismlib.jobcache import committed, job_dir, pool_size
from prismlib.lstm.job import Job, jobs_for
from prismlib.paths import output_root
from prismlib.profiles import PROFILES, Profile, get_profile
from prismlib.records import RUNS
from prismlib.runs.cli import CommandParser
from prismlib.runs.costs import ASSUMED_TFLOPS, PTB_TRAIN, Work, measure, works
from prismlib.runs.installments import DEFAULT_RATE, job_tokens, measured_rate
from prismlib.runs.manifest import read_manifest
from prismlib.timing import format_duration

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


def _manifest_path(profile_name: str) -> Path:
    """``results/<profile>/manifest.json`` under the output root (nothing is created)."""
    return output_root() / "results" / profile_name / "manifest.json"


def measured_runs(profile_name: str) -> dict[str, dict[str, Any]]:
    """Notebook stem -> the record of its last successful run in the profile's manifest
    (:mod:`prismlib.runs.manifest`), for the notebooks whose run has its ``seconds``."""
    path = _manifest_path(profile_name)
    try:
        notebooks = read_manifest(path).get("notebooks", {})
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}): restore it (git checkout -- {path}) or rerun its notebooks") from None
    return {stem: r for stem, r in notebooks.items() if isinstance(r.get("seconds"), (int, float))}


def _run_date(record: dict[str, Any]) -> str:
    """The day a run record started (``2026-11-27``), ``?`` when it does not say."""
    return str(record.get("started") or "?")[:10]


def _measured_source(record: dict[str, Any]) -> str:
    """A run record in a phrase: ``measured <date> at <commit> on <machine>``."""
    commit = str(record.get("commit") or "")[:7] or "an unknown commit"
    return f"measured {_run_date(record)} at {commit} on {record.get('device') or 'an unrecorded machine'}"


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


def _rates_label(tflops: dict[str, float] | None) -> str:
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
    label = _rates_label(tflops)
    runs = measured_runs(profile.name) if runs is None else runs
    fit_profile = profile if runs or not profile.jobs_as else get_profile(profile.jobs_as)
    fit_runs = runs if fit_profile is profile else measured_runs(fit_profile.name)
    fit_work = work if fit_profile is profile else works(fit_profile)
    fit = calibrate(fit_work, {k: float(r["seconds"]) for k, r in fit_runs.items()}, rates, fit_profile.name)
    on = f"calibrated on {fit.runs} measured runs" + ("" if fit.profile == profile.name else f" of profile {fit.profile}")
    lstm_from = on if "lstm" in fit.tflops else f"{label} TFLOP/s"
    training = _training(profile, work, fit.tflops.get("lstm", rates["lstm"]), lstm_from, cache or output_root() / ".cache")
    out = {}
    for nb in dict.fromkeys(w.notebook for w in work):
        own = [w for w in work if w.notebook == nb and not w.specs and w.flops > 0]
        if nb in runs:
            seconds, source, basis = float(runs[nb]["seconds"]), _measured_source(runs[nb]), MEASURED
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


def plan(
    profile: Profile, tflops: dict[str, float] | None = None, runs: dict[str, dict[str, Any]] | None = None, cache: Path | None = None
) -> pd.DataFrame:
    """One row per notebook and a ``total`` row last: ``jobs`` (models trained), ``PFLOP``,
    ``run_seconds`` (its own run) and ``run_from`` (``run <date>``, ``calibrated`` or ``FLOP
    model``; :func:`estimates`), ``training_seconds`` (worker seconds of the LSTM models still
    to train), ``longest_seconds`` (its longest piece: its run, or one model's training),
    ``device_memory_GB`` of one job, ``disk_GB`` and ``disk_for`` (what the disk holds)."""
    work = works(profile)
    runs = measured_runs(profile.name) if runs is None else runs
    est = estimates(profile, runs, tflops, cache)
    rows = []
    for nb, e in est.items():
        mine = [w for w in work if w.notebook == nb]
        one_model = e.training_seconds / e.models_to_train if e.models_to_train else 0.0
        rows.append(
            {
                "notebook": nb,
                "jobs": sum(w.jobs for w in mine),
                "PFLOP": sum(w.flops for w in mine) / 1e15,
                "run_seconds": e.seconds,
                "run_from": f"run {_run_date(runs[nb])}" if e.basis == MEASURED else e.basis,
                "training_seconds": e.training_seconds,
                "longest_seconds": max(e.seconds, one_model),
                "device_memory_GB": max(w.memory for w in mine) / 1e9,
                "disk_GB": sum(w.disk for w in mine) / 1e9,
                "disk_for": "; ".join(dict.fromkeys(w.disk_for for w in mine if w.disk)),
            }
        )
    table = pd.DataFrame(rows)
    total = {k: table[k].sum() for k in ("jobs", "PFLOP", "run_seconds", "training_seconds", "disk_GB")}
    total |= {k: table[k].max() for k in ("longest_seconds", "device_memory_GB")}
    return pd.concat([table, pd.DataFrame([{"notebook": "total", "run_from": "", "disk_for": ""} | total])], ignore_index=True)


PLAN_WIDTH = 100
"""Columns of ``plan``'s output (the table and the notes wrapped to it)."""


def _table(table: pd.DataFrame) -> str:
    """The plan as a Markdown table of short cells: durations humane, no column of prose."""

    def size(x: float) -> str:
        return "-" if x <= 0 else f"{x:.2g}" if x < 100 else f"{x:,.0f}"

    columns = {
        "notebook": list(table["notebook"]),
        "jobs": [str(int(x)) for x in table["jobs"]],
        "PFLOP": [size(x) for x in table["PFLOP"]],
        "run": [format_duration(x) if x > 0 else "-" for x in table["run_seconds"]],
        "run from": list(table["run_from"]),
        "training": [format_duration(x) if x > 0 else "-" for x in table["training_seconds"]],
        "mem GB": [size(x) for x in table["device_memory_GB"]],
        "disk GB": [size(x) for x in table["disk_GB"]],
    }
    left = ("notebook", "run from")
    widths = {k: max(len(k), *map(len, v)) for k, v in columns.items()}

    def line(cells: dict[str, str]) -> str:
        return "| " + " | ".join(c.ljust(widths[k]) if k in left else c.rjust(widths[k]) for k, c in cells.items()) + " |"

    rule = "|" + "|".join((":" + "-" * (w + 1)) if k in left else ("-" * (w + 1) + ":") for k, w in widths.items()) + "|"
    rows = [line({k: v[i] for k, v in columns.items()}) for i in range(len(table))]
    return "\n".join([line({k: k for k in columns}), rule, *rows])


def _grouped(pairs: Sequence[tuple[str, str]]) -> str:
    """``(notebook stem, text)`` pairs as ``01, 02 text; 05 other text``: each text once, after its notebooks."""
    by_text: dict[str, list[str]] = {}
    for stem, text in pairs:
        by_text.setdefault(text, []).append(stem[:2])
    return "; ".join(f"{', '.join(stems)} {text}" for text, stems in by_text.items())


def _notes(
    profile: Profile,
    table: pd.DataFrame,
    est: dict[str, Estimate],
    runs: dict[str, dict[str, Any]],
    tflops: dict[str, float] | None,
    label: str,
) -> list[str]:
    """What ``plan`` prints under its table (``label`` says where ``tflops`` come from):
    where each time comes from, what the columns mean, and the wall clock on 1, 4 and 8
    devices (durations by :func:`format_duration`)."""
    manifest = _manifest_path(profile.name).relative_to(output_root())
    device = "GPU" if profile.name == "paper" else "device"
    workers = pool_size(None, profile.device)
    notes = []
    machines = [(nb, f"on {runs[nb].get('device') or 'an unrecorded machine'}") for nb, e in est.items() if e.basis == MEASURED]
    if machines:
        notes.append(f"run: the notebook's own run; run <date>: its last run in {manifest}: {_grouped(machines)}.")
    calibrated = [e.source for e in est.values() if e.basis == CALIBRATED]
    if calibrated:
        notes.append(
            f"calibrated: the FLOP model {calibrated[0].split(';')[0]}: the shortest run plus each kind of work's FLOPs at "
            "the TFLOP/s the runs imply (the seconds of each run shared among its kinds by their FLOP-model times)."
        )
    trains = [(nb, e) for nb, e in est.items() if e.models]
    uncalibrated = _rates_label(tflops) + " TFLOP/s"  # the phrase of every source that used the uncalibrated rates
    if any(uncalibrated in e.source or uncalibrated in e.training_source for e in est.values()):
        rates = ASSUMED_TFLOPS | (tflops or {})
        notes.append(f"FLOP model: operations at sustained TFLOP/s {label}: " + ", ".join(f"{k} {v:.3g}" for k, v in rates.items()) + ".")
    if trains:
        todo = ", ".join(f"{nb[:2]} {e.models_to_train} of {e.models}" for nb, e in trains)
        notes.append(
            f"training: worker time of work B's LSTM models (each in the first notebook that reads it), which `python -m "
            f"prismlib train` trains before the notebooks, {workers} at once here; models not trained yet (no checkpoint in "
            f".cache/jobs/, no committed record): {todo}; {_grouped([(nb, e.training_source) for nb, e in trains])}."
        )
    disk = _grouped([(nb, what) for nb, what in zip(table["notebook"], table["disk_for"]) if what])
    notes.append(
        f"mem GB: the {device}'s memory one job needs (host memory holds the data besides); disk GB: what the caches write: {disk}."
    )
    total = table.iloc[-1]
    training = total["training_seconds"] / workers
    for n in (1, 4, 8):
        wall = max((total["run_seconds"] + training) / n, total["longest_seconds"])
        how = (
            f"{format_duration(total['run_seconds'])} of notebooks, "
            + (f"{format_duration(training)} of training" if training > 0 else "every model already trained")
            if n == 1
            else f"notebooks and models spread over them; no less than the longest of them, {format_duration(total['longest_seconds'])}"
        )
        about = format_duration(wall)
        notes.append(f"wall clock on {n} {device}{'s' if n > 1 else ''}: {'' if about.startswith('<') else 'about '}{about} ({how})")
    return notes


def _wrap(text: str) -> str:
    return textwrap.fill(text, PLAN_WIDTH, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)


def main(argv: Sequence[str]) -> int:
    """CLI: ``python -m prismlib plan [--profile P] [--measure] [--device D]``."""
    parser = CommandParser(prog="python -m prismlib plan", description="Estimate a profile's hours, memory and disk per notebook.")
    parser.add_argument("--profile", default=None, help=f"{', '.join(PROFILES)} (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument(
        "--measure",
        action="store_true",
        help="time training steps on this machine's device for the FLOP model instead of assuming throughputs",
    )
    parser.add_argument("--device", default="auto", help="with --measure: auto (CUDA when available), cuda or cpu")
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    tflops = measure(profile, args.device) if args.measure else None
    runs = measured_runs(profile.name)
    table = plan(profile, tflops, runs)
    est = estimates(profile, runs, tflops)
    label = f"timed on {resolve_device(args.device)}" if tflops else "assumed (--measure times this machine's device)"
    manifest = _manifest_path(profile.name).relative_to(output_root())
    measured = sum(e.basis == MEASURED for e in est.values())
    head = (
        f"profile {profile.name}: encoder {profile.encoder}, data {profile.data}; {measured} of {len(est)} notebooks measured ({manifest})"
    )
    notes = _notes(profile, table, est, runs, tflops, label)
    print(_wrap(head))
    print(_table(table))
    print("\n".join(_wrap(note) for note in notes))
    return 0
