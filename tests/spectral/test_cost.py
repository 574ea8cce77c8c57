"""prismlib.spectral.cost: which path computes a band-pass."""

from __future__ import annotations

import pytest

from prismlib import spectral
from prismlib.spectral import allocate_bands
from spectral.test_engine import _switch_lengths


def test_switch_points_exist_and_the_model_follows_the_thinner_side():
    width = spectral.FFT_WIDTH["cpu"]
    assert _switch_lengths(width), "no paper band changes path below 2100 tokens: the test above tests one path"
    assert spectral.band_path(1000, 0, width, width) == "matmul"
    assert spectral.band_path(1000, 0, width + 1, width) == "fft+fft"
    assert spectral.band_path(1000, 1000 - width, 1000, width) == "matmul"  # the complement's rows
    assert spectral.band_path(1000, 999 - width, 1000, width) == "fft+fft"
    assert spectral.band_path(1000, 0, 1000, width) == "identity"
    assert spectral.smooth_path(width, width) == "matmul" and spectral.smooth_path(width + 1, width) == "fft+fft"


def test_plans_count_their_flops():
    n = 512
    spans = tuple((b.lo, b.hi) for b in allocate_bands(n))
    matmul = spectral.split_plan(n, spans, 10**9)
    assert not matmul.fft and spans[matmul.rest] == (130, 512)
    assert matmul.flops() == 4 * n * 130  # thin rows of LOW..MID-HIGH, there and back
    fft = spectral.split_plan(n, spans, 1)
    assert fft.fft and fft.flops() == pytest.approx(5 * 2.5 * n * 9)  # one DCT and four inverse DCTs
