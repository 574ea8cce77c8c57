"""Brick-wall bands that pass as much energy as the matched smooth bands: the control of
notebook 09's "a smooth band beats the brick-wall band" claims (the *energy twins*).

**What is matched.**  A filter's *passed energy* here is the sum of its power gain over
the DCT indices, ``sum_k |H(k)|^2`` (:func:`passed_energy`): the energy it keeps of an
input whose DCT coefficients all carry unit energy (white across tokens).  For a
brick-wall band it is its width in indices, so a brick-wall band can match any energy to
within whole indices.  A smooth band matched at -3 dB (:func:`~prismlib.spectral.matched_bands`)
differs from its brick-wall band in two ways: its edges are soft (it admits part of its
neighbours beyond each -3 dB point and loses part of its own band inside it), and what it
passes in total differs from the brick-wall width.  Its energy twin removes the second
difference, so that a smooth band that beats both its brick-wall band and its twin does
not owe it to passing more.  The measure is a property of the filters (the same for every
task); the energy the encoder's activations have in the same bands is another weighting,
which notebook 09 reports beside the twins.

**The rule: each edge on its own.**  The smooth band's passed energy is split at the
log-centre of the brick-wall band's -3 dB points, ``s = round(sqrt((lo - 1/2)(hi - 1/2)))``
(kept within ``[lo, hi]``), into ``E_lo`` (indices below ``s``) and ``E_hi`` (from ``s``
on); the twin is ``[s - [E_lo], s + [E_hi])`` with ``[x]`` the nearest whole number
(halves up).  The band that keeps the mean (``lo = 0``) has no lower edge: it keeps
``lo = 0`` and its upper edge takes all its energy (``s = 0``); the band that reaches
``n`` keeps ``hi = n`` and moves its lower edge only (``s = n``).  Each rounding is within
half an index, so the twin's width is within one index of the smooth band's energy (half
an index for a band with one edge).

Why this rule, and not a symmetric widening in log-frequency or a move of the edge that
faces the neighbour the band leaks into: the smooth edges have one shape in log-frequency,
but what an edge gains or loses depends on its side, because a DCT index is a fixed step
in linear frequency: an upper edge has more indices per octave above it than below and
gains energy, a lower edge loses, except for edges among the first few indices, where a
lower edge can gain a little too (at ``n = 512`` MID-HIGH's lower side passes 31.5 indices'
worth of its 32, its upper side 64.9 of 64; HIGH, a lower edge alone, 380.2 of 382).  A
symmetric rule would move a losing edge outwards when the other edge gains, and "the edge
that leaks" names both edges of a middle band (each leaks into a neighbour).  Moving each
edge by its own side's energy changes the twin exactly where the smooth band differs from
the brick wall, and for the bands with one edge (LOW and HIGH) all three rules coincide.

**What the twin does not control.**  It matches how much a band passes, not which indices:
at ``n = 512`` the twins are within two indices of the brick-wall bands (HIGH is 132-511
against 130-511), because a matched smooth edge admits beyond its -3 dB point about what
it loses inside it.  Whether the part of a neighbour that a smooth band admits carries
what the probe reads is a question about the content of those indices, not their energy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np
import pandas as pd
import scipy.fft
from torch import Tensor

from prismlib.spectral.bands import Band, allocate_bands
from prismlib.spectral.matching import matched_bands
from prismlib.spectral.smooth import SMOOTH_WIDTH, SmoothShape

__all__ = ["energy_split", "energy_twin", "energy_twin_table", "energy_twins", "passed_energy", "passed_shares"]


def passed_energy(gain: Tensor | np.ndarray) -> float:
    """``sum_k gain[k]^2``: the energy a filter with amplitude ``gain`` per DCT index ``(n,)``
    keeps of an input with unit energy at every index; a brick-wall band's width."""
    g = np.asarray(gain.detach().cpu() if isinstance(gain, Tensor) else gain, dtype=np.float64)
    if g.ndim != 1:
        raise ValueError(f"expected a gain per DCT index of shape (n,), got shape {g.shape}")
    return float((g * g).sum())


def energy_split(band: Band, n: int) -> int:
    """Where the energy of ``band`` (of ``allocate_bands(n)``) is split between its edges: 0
    for a band that keeps the mean, ``n`` for one that reaches ``n``, else the index nearest
    the log-centre ``sqrt((lo - 1/2)(hi - 1/2))`` of its -3 dB points, within ``[lo, hi]``."""
    band.check(n)
    if band.lo == 0:
        return 0
    if band.hi == n:
        return n
    return min(max(math.floor(math.sqrt((band.lo - 0.5) * (band.hi - 0.5)) + 0.5), band.lo), band.hi)


def _nearest(x: float) -> int:
    """``x`` rounded to the nearest whole number, halves up."""
    return math.floor(x + 0.5)


def energy_twin(n: int, index: int, *, width: float = SMOOTH_WIDTH, shape: SmoothShape = "gaussian") -> Band:
    """The brick-wall band whose edges pass what each edge of the matched smooth band ``index``
    (``0`` = LOW ... ``4`` = HIGH) of ``n`` tokens passes (module docstring).

    Returns:
        A :class:`~prismlib.spectral.Band` named like the brick-wall band, within ``[0, n)``.
    """
    if not 0 <= index < 5:
        raise ValueError(f"index must name one of the five bands (0 .. 4), got {index}")
    brick = allocate_bands(n)[index]
    power = matched_bands(n, "smooth", width, shape)[index].gain().numpy() ** 2
    s = energy_split(brick, n)
    lo = 0 if brick.lo == 0 else s - _nearest(float(power[:s].sum()))
    hi = n if brick.hi == n else s + _nearest(float(power[s:].sum()))
    if hi <= lo:  # a band of less than half an index's energy on each side: one index at the split
        lo, hi = (lo, lo + 1) if lo < n else (n - 1, n)
    return Band(brick.name, lo, hi)


@lru_cache(maxsize=4096)
def energy_twins(n: int, width: float = SMOOTH_WIDTH, shape: SmoothShape = "gaussian") -> tuple[Band, ...]:
    """The five energy twins (:func:`energy_twin`) for ``n`` tokens, lowest band first (cached
    per length)."""
    return tuple(energy_twin(n, i, width=width, shape=shape) for i in range(5))


def energy_twin_table(n: int) -> pd.DataFrame:
    """The brick-wall band, the matched smooth band and the energy twin of each band at length ``n``.

    Columns: ``band``; ``brick`` and ``twin`` (inclusive DCT index ranges, as the paper prints
    them, e.g. ``"130-511"``); ``brick width``, ``smooth energy`` and ``twin width``
    (indices); ``smooth inside`` and ``smooth outside`` (the smooth band's energy on the
    brick-wall band's indices and beyond them: what it keeps of its band and admits of its
    neighbours).
    """
    rows = []
    for brick, smooth, twin in zip(allocate_bands(n), matched_bands(n, "smooth"), energy_twins(n)):
        power = smooth.gain().numpy() ** 2
        inside = float(power[brick.lo : brick.hi].sum())
        rows.append(
            {
                "band": brick.name,
                "brick": f"{brick.lo}-{brick.last}",
                "twin": f"{twin.lo}-{twin.last}",
                "brick width": brick.width,
                "smooth energy": float(power.sum()),
                "twin width": twin.width,
                "smooth inside": inside,
                "smooth outside": float(power.sum()) - inside,
            }
        )
    return pd.DataFrame(rows)


def passed_shares(hidden: Sequence[Tensor], gains: Mapping[str, Callable[[int], Tensor | np.ndarray]]) -> dict[str, float]:
    """The share of the activations' energy each filter keeps: the same measure as
    :func:`passed_energy` weighted by the energy the sequences have at each DCT index.

    Args:
        hidden: sequences ``(n_i, hidden)`` (e.g. a task's cached states), each filtered over
            its own length.
        gains: name -> a function of the length ``n`` giving the filter's amplitude gain per
            DCT index, ``(n,)`` (a brick-wall band's: ``smooth_gain(n, band, width=0)``).

    Returns:
        name -> ``sum_i sum_k gain(n_i)[k]^2 E_i(k) / sum_i ||h_i||^2``, with ``E_i(k)`` the
        energy of sequence ``i`` at DCT index ``k`` summed over its hidden units.
    """
    kept = dict.fromkeys(gains, 0.0)
    total = 0.0
    for h in hidden:
        a = np.asarray(h.detach().cpu().double() if isinstance(h, Tensor) else h, dtype=np.float64)
        energy = (scipy.fft.dct(a, axis=0, norm="ortho") ** 2).sum(axis=1)  # (n,)
        total += float(energy.sum())
        for name, gain in gains.items():
            g = np.asarray(gain(len(a)), dtype=np.float64)
            kept[name] += float((g * g) @ energy)
    if total <= 0:
        raise ValueError("the sequences carry no energy")
    return {name: v / total for name, v in kept.items()}
