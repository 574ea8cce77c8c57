"""prismlib.spectral.cost: which path computes a band-pass."""

from __future__ import annotations

from prismlib import spectral
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
