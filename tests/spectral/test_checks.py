"""prismlib.spectral.checks: one clear error for each malformed argument."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import spectral
from prismlib.spectral import allocate_bands, band_pass


def test_a_band_given_by_name_is_refused_not_read_as_three_bands():
    from prismlib.spectral import smooth_band_pass
    from prismlib.spectral.wavelets import haar_band_pass

    x = torch.randn(3, 16, 4)
    for fn in (spectral.band_pass, smooth_band_pass, haar_band_pass):
        with pytest.raises(TypeError, match=r"band='MID' is a name.*bands_for_lengths\(lengths, 'MID'\)"):
            fn(x, "MID")


def test_float_lengths_are_refused_as_a_list_and_as_a_tensor():
    x = torch.randn(2, 16, 4)
    band = spectral.allocate_bands(8)[0]
    for lengths in ([16.0, 8.5], [16, 8.0], torch.tensor([16.0, 8.0])):
        with pytest.raises(ValueError, match="lengths must be integers"):
            spectral.band_pass(x, band, lengths=lengths)
    with pytest.raises(ValueError, match="lengths must be integers"):
        spectral.bands_for_lengths([16.0, 8.5], "MID")
    ok = spectral.band_pass(x, band, lengths=[16, np.int64(8)])  # ints of any kind are fine
    assert ok.shape == x.shape


def test_an_empty_token_axis_says_so_instead_of_suggesting_allocate_bands_0():
    from prismlib.spectral.wavelets import haar_levels

    x = torch.randn(2, 0, 4)
    band = spectral.allocate_bands(8)[0]
    for call in (lambda: spectral.band_pass(x, band), lambda: haar_levels(x)):
        with pytest.raises(ValueError, match=r"token axis \(dim=-2\) has length 0") as err:
            call()
        assert "allocate_bands(0)" not in str(err.value)


def test_all_finite_reads_the_sum_and_looks_closer_only_when_it_overflows():
    x = torch.randn(3, 20, 4)
    assert spectral.all_finite(x) and spectral.all_finite(x[:0])
    for bad in (float("nan"), float("inf"), float("-inf")):
        y = x.clone()
        y[2, 19, 3] = bad
        assert not spectral.all_finite(y) and not spectral.all_finite(y.half())
        with pytest.raises(ValueError, match="NaN or infinite"):
            band_pass(y, allocate_bands(20)[1])
    huge = torch.full((3, 20, 4), 3e38)  # finite, but the float32 sum overflows
    assert spectral.all_finite(huge) and spectral.all_finite(torch.full((2, 4), 6e4, dtype=torch.float16))
    band_pass(huge, allocate_bands(20)[1])
