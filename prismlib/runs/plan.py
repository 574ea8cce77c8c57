"""``python -m prismlib plan``: a profile's notebooks as a table of jobs, time, memory and disk.

``python -m prismlib plan --profile cpu`` prints one row per notebook (:func:`plan_table`; a
table within :data:`PLAN_WIDTH` columns, durations by :func:`prismlib.timing.format_duration`),
notes under it saying where each number comes from, and the wall clock on 1, 4 and 8 devices.
The time of each notebook is :func:`prismlib.runs.clock.estimates`' (a measured run, else the
FLOP model calibrated on the runs, else the FLOP model of :mod:`prismlib.runs.costs`, with
``--measure`` at the throughputs :func:`~prismlib.runs.costs.measure` times on this machine).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from prismlib.devices import resolve_device
from prismlib.jobcache import pool_size
from prismlib.paths import output_root
from prismlib.profiles import PROFILES, Profile, get_profile
from prismlib.runs.cli import CommandParser
from prismlib.runs.clock import CALIBRATED, MEASURED, Estimate, estimates, measured_runs, rates_label, run_date
from prismlib.runs.costs import ASSUMED_TFLOPS, measure, works
from prismlib.runs.manifest import manifest_path
from prismlib.timing import format_duration


def plan_table(
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
                "run_from": f"run {run_date(runs[nb])}" if e.basis == MEASURED else e.basis,
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
        "mem": [size(x) for x in table["device_memory_GB"]],
        "disk": [size(x) for x in table["disk_GB"]],
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
    manifest = manifest_path(profile.name).relative_to(output_root())
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
    uncalibrated = rates_label(tflops) + " TFLOP/s"  # the phrase of every source that used the uncalibrated rates
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
    notes.append(f"mem: GB of the {device}'s memory one job needs (host memory holds the data besides); disk: GB the caches write: {disk}.")
    total = table.iloc[-1]
    training = total["training_seconds"] / workers
    counts = device_counts(profile)
    if not counts:  # a CPU machine: one line, no devices it does not have
        wall = total["run_seconds"] + training
        about = format_duration(wall)
        notes.append(
            f"wall clock on this machine ({os.cpu_count()} cores, {workers} training workers): "
            f"{'' if about.startswith('<') else 'about '}{about} (notebooks one after another, after the training)"
        )
        return notes
    for n in counts:
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


def device_counts(profile: Profile) -> tuple[int, ...]:
    """The device counts ``plan`` gives a wall clock for: the paper profile's GPU cluster (1,
    4 and 8 GPUs, wherever it is planned), else this machine's GPUs (1 and all of them); none
    on a machine without a GPU."""
    if profile.name == "paper":
        return (1, 4, 8)
    if resolve_device(profile.device).type != "cuda":
        return ()
    import torch

    return tuple(dict.fromkeys((1, torch.cuda.device_count())))


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
    table = plan_table(profile, tflops, runs)
    est = estimates(profile, runs, tflops)
    label = f"timed on {resolve_device(args.device)}" if tflops else "assumed (--measure times this machine's device)"
    manifest = manifest_path(profile.name).relative_to(output_root())
    measured = sum(e.basis == MEASURED for e in est.values())
    encoder = profile.encoder
    if profile.prism.pretrained_encoder and profile.pretrain is not None:
        encoder += f" (03-04: the {profile.pretrain.size} BERT pretrained here)"
    head = f"profile {profile.name}: encoder {encoder}, data {profile.data}; {measured} of {len(est)} notebooks measured ({manifest})"
    notes = _notes(profile, table, est, runs, tflops, label)
    print(_wrap(head))
    print(_table(table))
    print("\n".join(_wrap(note) for note in notes))
    return 0
