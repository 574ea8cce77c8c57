"""Reading learned spectral profiles: the gates that :mod:`prismlib.probing.learned_filter` trains.

A learned gate (:class:`prismlib.probing.SpectralGate`) is identifiable only up to a factor
traded with the probe's weights, so what a run says is the gate's *shape*: how much it
prefers one of the paper's bands over another (:func:`band_spread`), where in the spectrum
it sits (:func:`spectral_centre`), and the profile over frequency averaged into octave bins
(:func:`smoothed_profile`, the readable shape of a gate with one parameter per DCT index).
A profile has no test set to resample: its noise is the spread over runs, so a claim about
it needs :data:`MIN_GATE_RUNS` runs (:func:`runs_gate`) and a band spread clearly above a
margin (:func:`spread_gate`); :func:`profile_order_claim` is notebook 09's claim built from
them.  Each reader takes arrays or tables of
:class:`prismlib.probing.GatedRuns` (``band_means``, ``gates``, ``grid``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from prismlib.claims import Claim, Gate, Test
from prismlib.spectral.bands import BAND_NAMES
from prismlib.stats import Interval, mean_interval, welch_difference

__all__ = [
    "MIN_GATE_RUNS",
    "PROFILE_ORDER",
    "band_spread",
    "profile_order_claim",
    "runs_gate",
    "smoothed_profile",
    "spectral_centre",
    "spread_gate",
]

MIN_GATE_RUNS = 5
"""Runs a claim about learned profiles needs: the profile has no test set to resample, its
noise is the spread over runs, and a Welch interval over 2 runs has about 1 degree of freedom."""

# --------------------------------------------------------------------------- band means


def band_spread(band_means: pd.DataFrame) -> np.ndarray:
    """Per row (a probe run), the largest minus the smallest of the gate's band means: how
    much the learned gate prefers one band over another. An all-pass gate (about 1
    everywhere) and an untrained one (0.5 everywhere) both have a spread near 0, so a task
    whose spread is not clearly above a margin has no spectral profile to compare.

    Args:
        band_means: one row per run with a column per band name (``GatedRuns.band_means``).

    Returns:
        ``(runs,)``.
    """
    m = band_means[list(BAND_NAMES)].to_numpy(dtype=np.float64)
    return m.max(1) - m.min(1)


def spectral_centre(band_means: pd.DataFrame) -> np.ndarray:
    """Per row (a probe run), where in the spectrum the learned gate sits: the band index
    (LOW = 0 ... HIGH = 4) weighted by the gate's band means *above its least-passed band*,
    ``sum_k k (m_k - min m) / sum_k (m_k - min m)``. Subtracting the floor makes the centre
    a property of the gate's shape, not of its level: a gate that passes everything but
    one band is not pulled to the middle by the bands it merely lets through.

    Args:
        band_means: one row per run with a column per band name (``GatedRuns.band_means``).

    Returns:
        ``(runs,)``; NaN for a flat gate (no band preferred: see :func:`band_spread`).
    """
    m = band_means[list(BAND_NAMES)].to_numpy(dtype=np.float64)
    w = m - m.min(1, keepdims=True)
    total = w.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (w * np.arange(len(BAND_NAMES))).sum(1) / np.where(total > 0, total, 1), np.nan)


# --------------------------------------------------------------------------- claims and figures


def runs_gate(runs: int, what: str = "learned profile") -> Gate:
    """Gate: a claim read from the spread of ``runs`` trained gates has at least
    :data:`MIN_GATE_RUNS` of them (the seeds rule of a quantity with no test set to resample)."""
    return Gate(
        f"at least {MIN_GATE_RUNS} runs per {what} (a Welch interval over 2 runs has about 1 degree of freedom)",
        runs >= MIN_GATE_RUNS,
        f"{runs} runs" + ("" if runs >= MIN_GATE_RUNS else f"; {MIN_GATE_RUNS - runs} more per task would test it"),
    )


def spread_gate(spreads: Sequence[float], margin: float, task: str = "") -> Gate:
    """Gate: the task's learned gate prefers some band, its band spread (:func:`band_spread`,
    one value per run) clearly above ``margin`` (Student's t interval over the runs; one
    run, or runs that all agree, give the value itself)."""
    values = [float(v) for v in spreads]
    if not values:
        raise ValueError("no runs: a spread gate needs the band spread of at least one run")
    if len(values) > 1 and np.ptp(values) > 0:
        iv = mean_interval(values)
    else:
        iv = Interval(values[0], values[0], values[0], len(values), resampled="runs")
    name = f"the {task} gate prefers a band (band spread > {margin:g})" if task else f"the gate prefers a band (band spread > {margin:g})"
    return Gate(name, iv.low > margin, f"spread {iv}")


PROFILE_ORDER = ("topic", "swda", "pos")
"""The tasks from the lowest band to the highest in the paper's Fig. 4 (LOW best for topic,
MID for dialog acts, HIGH for part of speech): the order :func:`profile_order_claim` tests."""

_NAMES = {"topic": "topic", "swda": "dialog acts", "pos": "POS", "mlm": "MLM"}


def profile_order_claim(band_means: Mapping[str, pd.DataFrame], beats_majority: Sequence[Gate], *, runs: int, margin: float) -> Claim:
    """Notebook 09's claim that the learned profiles order the tasks as the paper's bands do:
    the :func:`spectral_centre` of each task of :data:`PROFILE_ORDER` below the next one's
    (Welch intervals over the runs, one test per neighbouring pair).

    Args:
        band_means: task -> its learned gates' band means (``GatedRuns.band_means``, one row
            per run); every task of :data:`PROFILE_ORDER`, others (MLM) shown in the text only.
        beats_majority: the gates that each ordered task's learned gate beats the majority class.
        runs: learned gates per task (:func:`runs_gate`).
        margin: each ordered task's :func:`spread_gate` margin.
    """
    centres = {n: list(spectral_centre(b)) for n, b in band_means.items()}
    spreads = {n: list(band_spread(b)) for n, b in band_means.items()}
    tests = tuple(
        Test(welch_difference(centres[high], centres[low]), +1, label=f"centre({high}) - centre({low})")
        for low, high in zip(PROFILE_ORDER, PROFILE_ORDER[1:])
    )
    listed = ", ".join(f"{_NAMES[n]} {np.mean(centres[n]):.2f}" for n in PROFILE_ORDER)
    others = "".join(f"; {_NAMES.get(n, n)} {np.mean(centres[n]):.2f}" for n in centres if n not in PROFILE_ORDER)
    return Claim(
        "09",
        "The learned profiles order the tasks as the paper's bands do: topic lowest, dialog acts in between, "
        f"POS highest (spectral centres: {listed}{others}; band spreads: "
        + ", ".join(f"{n} {np.mean(spreads[n]):.2f}" for n in PROFILE_ORDER)
        + f"; {runs} runs per task)",
        "LOW best for topic, MID for dialog acts, HIGH for POS (Fig. 4); learned filters: Spectral Probing (EMNLP 2022)",
        tests,
        (runs_gate(runs), *beats_majority, *(spread_gate(spreads[n], margin, n) for n in PROFILE_ORDER)),
        "bands",
        control="the all-pass control has no band spread (a gate fixed at 1): the spread gates credit only a learned preference",
    )


def smoothed_profile(gates: np.ndarray, grid: np.ndarray, per_octave: int = 4) -> pd.DataFrame:
    """The learned gates averaged over bins of ``1 / per_octave`` octave of relative
    frequency (the readable shape of a gate with one parameter per DCT index), and the gate
    at frequency 0 (the mean of each window, ``k = 0``) on its own.

    Args:
        gates: ``(runs, G)`` gates at the grid points (:attr:`GatedRuns.gates`).
        grid: ``(G,)`` their relative frequencies ``j / G`` (``grid[0] = 0``).
        per_octave: bins per octave.

    Returns:
        One row per non-empty bin, the first for frequency 0: ``frequency`` (the bin's
        geometric centre; 0 for the first row), ``points`` (grid points in the bin),
        ``mean`` (over runs of the bin average), ``low`` and ``high`` (the smallest and largest
        bin average over runs).
    """
    gates, grid = np.atleast_2d(np.asarray(gates, dtype=np.float64)), np.asarray(grid, dtype=np.float64)
    if gates.shape[1] != len(grid) or len(grid) == 0 or per_octave < 1:
        raise ValueError(f"need gates (runs, G) on a grid of G points and per_octave >= 1; got {gates.shape}, {grid.shape}, {per_octave}")
    zero = grid == 0
    rows = []
    if zero.any():
        at0 = gates[:, zero].mean(1)
        rows.append({"frequency": 0.0, "points": int(zero.sum()), "mean": at0.mean(), "low": at0.min(), "high": at0.max()})
    positive = ~zero
    if positive.any():
        octave = np.floor(np.log2(grid[positive]) * per_octave).astype(np.int64)
        for b in np.unique(octave):
            cols = np.flatnonzero(positive)[octave == b]
            per_run = gates[:, cols].mean(1)
            centre = 2 ** ((b + 0.5) / per_octave)
            rows.append({"frequency": centre, "points": len(cols), "mean": per_run.mean(), "low": per_run.min(), "high": per_run.max()})
    return pd.DataFrame(rows)
