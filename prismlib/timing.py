"""Timing a piece of code the same way everywhere (``benchmarks/`` and App. D's filter timings).

* :func:`benchmark_device` and :func:`describe_device`: where a benchmark runs, and a
  one-line header saying so (``no CUDA device: timings are CPU`` when CUDA was asked for
  and is absent).
* :func:`best_time`: the minimum over repeats after warm-up runs; on CUDA every run is
  timed between two CUDA events, so the time is the GPU's, not the launch's.
* :func:`interleaved_times`: several functions timed in turns, one run of each per round,
  so that a burst of load from other processes hits all of them alike; :func:`spread`.
* :func:`format_duration`: a duration in the unit a reader takes in at a glance (``40 s``,
  ``2.2 min``, ``54 min``, ``3.1 h``), never rounded to zero.
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

import numpy as np
import torch

NO_CUDA = "no CUDA device: timings are CPU"


def benchmark_device(name: str = "auto") -> torch.device:
    """The device a benchmark runs on: ``auto`` and ``cuda[:i]`` give CUDA when there is
    one; without one they fall back to the CPU and print :data:`NO_CUDA` (no crash)."""
    device = torch.device("cuda" if name == "auto" else name)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(NO_CUDA, flush=True)
        return torch.device("cpu")
    return device


def describe_device(device: torch.device) -> str:
    """One line: torch version and the GPU's name, or the CPU with its cores and threads."""
    if device.type == "cuda":
        where = f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    else:
        cpu = platform.processor() or platform.machine()
        where = f"CPU {cpu}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads"
    return f"torch {torch.__version__}, {where}"


def _time_once(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds of one ``fn()``: CUDA events on CUDA (device synchronised), else the wall clock."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def best_time(fn: Callable[[], object], repeats: int, device: torch.device | str = "cpu", warmup: int = 1) -> float:
    """Minimum time in seconds of ``fn()`` over ``repeats`` runs, after ``warmup`` runs.

    On CUDA each run is timed with CUDA events recorded before and after it (the GPU's
    time, the device synchronised before every run); on the CPU with the wall clock.
    """
    device = torch.device(device)
    for _ in range(warmup):
        fn()
    return min(_time_once(fn, device) for _ in range(repeats))


_K = TypeVar("_K")


def interleaved_times(
    fns: Mapping[_K, Callable[[], object]], rounds: int, device: torch.device | str = "cpu", warmup: int = 1
) -> dict[_K, list[float]]:
    """Times in seconds of every ``fns[name]()``, ``rounds`` runs each, taken in turns.

    After ``warmup`` runs of each, every round runs each function once, starting one
    further along the list than the round before, so that a burst of load from other
    processes (a shared machine) falls on all of them alike rather than on whichever ran
    at that moment.  Take the minimum of each list as its time and the ratio of median
    to minimum (:func:`spread`) as a measure of how much the rounds disagree.
    """
    device = torch.device(device)
    names = list(fns)
    for name in names:
        for _ in range(warmup):
            fns[name]()
    times: dict[_K, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:
            times[name].append(_time_once(fns[name], device))
    return times


SPREAD_WARNING = 1.5
"""Median over minimum of a timing's rounds above which a table flags it
(:func:`prismlib.spectral.filter_timings`)."""


def spread(times: list[float]) -> float:
    """Median over minimum of repeated timings: 1 when the rounds agree."""
    return float(np.median(times) / min(times))


def format_duration(seconds: float) -> str:
    """``seconds`` in a few characters, in the largest unit that keeps two or three digits:
    ``< 1 s``, ``40 s``, ``2.2 min``, ``54 min``, ``3.1 h``, ``1,250 h``; ``?`` when not finite.
    A positive duration never reads as zero (``0.0 h``)."""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {seconds} s: pass elapsed seconds (end - start)")
    if seconds == 0:
        return "0 s"
    if seconds < 1:
        return "< 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 600:
        return f"{seconds / 60:.1f} min"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours < 100 else f"{hours:,.0f} h"
