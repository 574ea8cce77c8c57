"""Tests of prismlib.spectral.equal_energy: the brick-wall twins that pass what the matched smooth
bands pass (hypothesis over every window length the tasks use), the energy they are matched on,
and the same measure weighted by a sequence's own spectrum."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.spectral import (
    BAND_NAMES,
    Band,
    allocate_bands,
    band_pass,
    energy_split,
    energy_twin,
    energy_twin_table,
    energy_twins,
    matched_bands,
    passed_energy,
    passed_shares,
    smooth_gain,
)

QUICK = settings(max_examples=40, deadline=None)
LENGTHS = st.integers(5, 512)  # every window length of the probing tasks (5 bands need 5 indices; windows hold 512)


def smooth_power(n: int, index: int) -> np.ndarray:
    return matched_bands(n, "smooth")[index].gain().numpy() ** 2


@QUICK
@given(LENGTHS)
def test_a_twin_is_as_wide_as_its_smooth_band_passes_within_one_index(n):
    for index, (twin, brick) in enumerate(zip(energy_twins(n), allocate_bands(n))):
        energy = float(smooth_power(n, index).sum())
        one_edge = brick.lo == 0 or brick.hi == n
        assert abs(twin.width - energy) <= (0.5 if one_edge else 1.0) + 1e-9, (n, brick, twin, energy)
        assert twin.name == brick.name and 0 <= twin.lo < twin.hi <= n


@QUICK
@given(LENGTHS)
def test_each_edge_of_a_twin_moves_by_what_its_side_of_the_smooth_band_passes(n):
    for index, (twin, brick) in enumerate(zip(energy_twins(n), allocate_bands(n))):
        power, s = smooth_power(n, index), energy_split(brick, n)
        if brick.lo == 0:
            assert twin.lo == 0 and s == 0  # the band that keeps the mean keeps it, and no lower edge moves
        else:
            assert twin.lo >= 1 and abs((s - twin.lo) - power[:s].sum()) <= 0.5 + 1e-9
        if brick.hi == n:
            assert twin.hi == n and s == n
        else:
            assert abs((twin.hi - s) - power[s:].sum()) <= 0.5 + 1e-9


@QUICK
@given(LENGTHS)
def test_the_split_lies_at_the_log_centre_of_the_brick_wall_points(n):
    for brick in allocate_bands(n)[1:-1]:
        s = energy_split(brick, n)
        assert brick.lo <= s <= brick.hi
        centre = math.sqrt((brick.lo - 0.5) * (brick.hi - 0.5))
        assert abs(s - centre) <= 0.5 or s in (brick.lo, brick.hi)


def test_the_twins_at_512_differ_from_the_brick_wall_bands_by_at_most_two_indices():
    twins = energy_twins(512)
    assert [(t.lo, t.hi) for t in twins] == [(0, 2), (2, 9), (9, 34), (34, 131), (132, 512)]
    table = energy_twin_table(512).set_index("band")
    assert list(table.index) == list(BAND_NAMES)
    assert table.loc["HIGH", "brick"] == "130-511" and table.loc["HIGH", "twin"] == "132-511"
    assert table.loc["HIGH", "twin width"] == 380 and table.loc["HIGH", "brick width"] == 382
    assert table.loc["HIGH", "smooth energy"] == pytest.approx(380.22, abs=0.01)
    # a matched smooth edge admits beyond its -3 dB point about what it loses inside it
    np.testing.assert_allclose(table["smooth inside"] + table["smooth outside"], table["smooth energy"])
    assert table.loc["HIGH", "smooth outside"] == pytest.approx(6.59, abs=0.01)
    assert energy_twin(512, 4) == Band("HIGH", 132, 512)


@given(st.integers(5, 200))
@settings(max_examples=15, deadline=None)
def test_passed_energy_is_what_a_filter_keeps_of_white_input(n):
    """The sum of the power gain is the filter matrix's squared Frobenius norm: the mean energy
    it keeps of an input with unit energy at every DCT index (any orthonormal basis)."""
    for band, matched in zip(allocate_bands(n), matched_bands(n, "smooth")):
        brick = smooth_gain(n, band, width=0)
        assert passed_energy(brick) == band.width
        eye = torch.eye(n, dtype=torch.float64)[..., None]  # n unit impulses, (n, n, 1)
        kept = float((matched(eye) ** 2).sum())
        assert passed_energy(matched.gain()) == pytest.approx(kept, rel=1e-9)
    with pytest.raises(ValueError, match="shape"):
        passed_energy(np.ones((2, 3)))


def test_passed_shares_weigh_each_index_by_the_sequences_own_energy():
    rng = np.random.default_rng(0)
    hidden = [torch.from_numpy(rng.normal(size=(n, 3)).cumsum(0)) for n in (40, 64, 64)]
    gains = {b: (lambda n, b=b: smooth_gain(n, next(x for x in allocate_bands(n) if x.name == b), width=0)) for b in BAND_NAMES}
    shares = passed_shares(hidden, gains)
    assert sum(shares.values()) == pytest.approx(1.0)  # the brick-wall bands partition every sequence
    assert shares["LOW"] > shares["HIGH"]  # a random walk's energy sits at low frequencies
    # the share is the filtered sequences' energy over theirs
    kept = sum(float((band_pass(h, allocate_bands(len(h))[3], dim=-2) ** 2).sum()) for h in hidden)
    assert shares["MID-HIGH"] == pytest.approx(kept / sum(float((h**2).sum()) for h in hidden))
    with pytest.raises(ValueError, match="no energy"):
        passed_shares([torch.zeros(8, 2)], gains)


def test_a_twin_needs_one_of_the_five_bands():
    with pytest.raises(ValueError, match="0 .. 4"):
        energy_twin(64, 5)
