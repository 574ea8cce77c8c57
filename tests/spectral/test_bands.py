"""prismlib.spectral.bands: Table 3a, Appendix A's allocation, periods."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prismlib.spectral import allocate_bands, bands_for_lengths, paper_period, true_period


def test_allocate_bands_512_is_table_3a():
    got = [(b.name, b.lo, b.last) for b in allocate_bands(512)]
    assert got == [("LOW", 0, 1), ("MID-LOW", 2, 8), ("MID", 9, 33), ("MID-HIGH", 34, 129), ("HIGH", 130, 511)]


@pytest.mark.parametrize("n", [5, 6, 7, 10, 64, 100, 128, 256, 300, 510, 511, 1024])
def test_allocate_bands_follows_appendix_a(n):
    bands = allocate_bands(n)
    widths = [b.width for b in bands]
    assert sum(widths) == n and bands[0].lo == 0 and bands[-1].hi == n
    assert all(a.hi == b.lo for a, b in zip(bands, bands[1:]))
    share = [(n - 5) * 4**i / 341 for i in range(5)]
    # each band gets 1 + floor(share) and at most one extra frequency
    for w, s in zip(widths, share):
        assert w - 1 - math.floor(s) in (0, 1)
    # the extras go to the largest fractional parts
    extra = [w - 1 - math.floor(s) for w, s in zip(widths, share)]
    frac = [s - math.floor(s) for s in share]
    got = [f for f, e in zip(frac, extra) if e]
    missed = [f for f, e in zip(frac, extra) if not e]
    assert not got or not missed or min(got) >= max(missed)


def test_periods_paper_vs_true():
    assert paper_period(8, 512) == 32  # the paper's own worked example
    assert true_period(8, 512) == 128  # cos(pi/512 (t + 1/2) 8) repeats every 128 tokens
    t = np.arange(512)
    wave = np.cos(np.pi / 512 * (t + 0.5) * 8)
    assert np.allclose(wave[:-128], wave[128:])
    assert paper_period(0, 512) == math.inf


def test_bands_for_lengths_gives_each_rows_bands():
    got = bands_for_lengths([512, 100], "MID")
    assert got == [allocate_bands(512)[2], allocate_bands(100)[2]]
    with pytest.raises(ValueError, match="unknown band"):
        bands_for_lengths([512], "ULTRA")
