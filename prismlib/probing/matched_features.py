"""Notebook 09's fixed filters beyond the paper's brick-wall bands, as probing features.

Notebook 09 compares the brick-wall bands with smooth and Haar bands whose -3 dB points
coincide with theirs (:mod:`prismlib.spectral.matching`), and a smooth band also with its
*energy twin*, the brick-wall band that passes the same energy
(:mod:`prismlib.spectral.equal_energy`): :func:`beyond_features` computes them from the same
:class:`prismlib.probing.States` as the other conditions (:data:`MATCHED_SMOOTH_CONDITIONS`,
:data:`MATCHED_HAAR_CONDITIONS`, :data:`ENERGY_TWIN_CONDITIONS`); :func:`energy_twin_condition`
names the condition that probes a smooth band's twin.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from prismlib.probing.features import Features
from prismlib.probing.states import States
from prismlib.spectral.bands import BAND_NAMES, allocate_bands
from prismlib.spectral.equal_energy import energy_twins
from prismlib.spectral.filters import band_pass
from prismlib.spectral.matching import matched_bands, matched_rows

__all__ = [
    "ENERGY_TWIN_CONDITIONS",
    "MATCHED_HAAR_CONDITIONS",
    "MATCHED_SMOOTH_CONDITIONS",
    "beyond_features",
    "energy_twin_condition",
]

MATCHED_SMOOTH_CONDITIONS: tuple[str, ...] = tuple(f"smooth-3dB:{band}" for band in BAND_NAMES)
"""The smooth bands whose -3 dB points are the brick-wall bands' (:func:`beyond_features`)."""

MATCHED_HAAR_CONDITIONS: tuple[str, ...] = tuple(f"haar-3dB:{band}" for band in BAND_NAMES)
"""The Haar bands whose -3 dB points are the brick-wall bands' (within 0.1 octave at 512 tokens)."""

ENERGY_TWIN_CONDITIONS: tuple[str, ...] = tuple(f"brick-twin:{band}" for band in BAND_NAMES)
"""The brick-wall bands that pass what the matched smooth bands pass (their energy twins,
:func:`prismlib.spectral.energy_twins`), one per band, in the order of :data:`MATCHED_SMOOTH_CONDITIONS`."""


def _matched(condition: str) -> tuple[str, int] | None:
    """``"smooth-3dB:MID"`` -> ``("smooth", 2)``, ``"brick-twin:MID"`` -> ``("twin", 2)``;
    ``None`` for any other name."""
    if condition in ENERGY_TWIN_CONDITIONS:
        return "twin", ENERGY_TWIN_CONDITIONS.index(condition)
    family, _, band = condition.partition("-3dB:")
    if family in ("smooth", "haar") and band in BAND_NAMES:
        return family, BAND_NAMES.index(band)
    return None


def energy_twin_condition(smooth: str, lengths: Iterable[int]) -> str:
    """The condition that probes the energy twin of the matched smooth band ``smooth`` (one of
    :data:`MATCHED_SMOOTH_CONDITIONS`) on windows of ``lengths``: its
    :data:`ENERGY_TWIN_CONDITIONS` name, or the brick-wall band's own name (``"LOW"``) where the
    twin is that band at every one of ``lengths`` (the same features: probing them again with
    the same seeds would repeat the brick-wall band's runs).

    Raises:
        ValueError: ``smooth`` is not a matched smooth band, or ``lengths`` is empty.
    """
    if smooth not in MATCHED_SMOOTH_CONDITIONS:
        raise ValueError(f"expected one of {MATCHED_SMOOTH_CONDITIONS}, got {smooth!r}")
    index = MATCHED_SMOOTH_CONDITIONS.index(smooth)
    distinct = {int(n) for n in lengths}
    if not distinct:
        raise ValueError("need the window lengths the twin is probed on")
    if all(energy_twins(n)[index] == allocate_bands(n)[index] for n in distinct):
        return BAND_NAMES[index]
    return ENERGY_TWIN_CONDITIONS[index]


def beyond_features(states: States, conditions: Sequence[str]) -> Features:
    """:meth:`States.features` for notebook 09's conditions: any name it takes (``ORIG``,
    ``LOW``, ``smooth:LOW``, ``haar:LOW``, ...), the matched bands
    :data:`MATCHED_SMOOTH_CONDITIONS` / :data:`MATCHED_HAAR_CONDITIONS`
    (:func:`prismlib.spectral.matched_bands` for each window's own length) and the smooth
    bands' energy twins :data:`ENERGY_TWIN_CONDITIONS` (:func:`prismlib.spectral.energy_twins`),
    over the states as stored (``[CLS]``/``[SEP]`` inside the filtered sequence when they were
    stored).

    Returns:
        :class:`~prismlib.probing.Features` (float16, rows in the states' order) with every
        condition asked for.
    """
    plain = [c for c in conditions if _matched(c) is None]
    base = states.features(plain) if plain else states.features(())
    matched = {c: m for c in conditions if (m := _matched(c)) is not None}
    if not matched:
        return base
    parts: dict[str, list[Tensor]] = {c: [] for c in matched}
    diagonal = {c: m for c, m in matched.items() if m[0] != "twin"}
    twins = {c: index for c, (family, index) in matched.items() if family == "twin"}
    for h, p in zip(states.hidden, states.picks()):
        bands = [matched_bands(len(h), family)[index] for family, index in diagonal.values()]
        for c, rows in zip(diagonal, matched_rows(h, p, bands)):
            parts[c].append(rows.half())
        for c, index in twins.items():
            parts[c].append(band_pass(h.float(), energy_twins(len(h))[index], dim=-2, check_finite=False)[p].half())
    empty = torch.zeros(0, states.hidden_size, dtype=torch.float16)
    x = dict(base.x) | {c: torch.cat(rows) if rows else empty for c, rows in parts.items()}
    return Features({c: x[c] for c in conditions}, base.labels, base.weights, base.window, base.unit, base.position)
