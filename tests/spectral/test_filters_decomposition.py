"""prismlib.spectral.band_decomposition and the paths behind the band filters.

The decomposition shares one forward transform between the bands and gets the widest
band by subtraction; it must agree with ``band_pass`` band by band on every path: thin
matrix products, FFTs (pocketfft on the CPU, ``torch.fft`` elsewhere), their own CPU
backward pass, per-row lengths, and float16/bfloat16 inputs.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib import spectral
from prismlib.spectral import Band, allocate_bands, band_decomposition, band_pass, bands_for_lengths, cost

SETTINGS = settings(max_examples=30, deadline=None)
# FFT_WIDTH settings that force each path: FFTs for every band wider than one row, the
# machine's default, and thin matrix products only
WIDTHS = [1, spectral.FFT_WIDTH["cpu"], 10**9]


@pytest.fixture(
    params=[(w, pocket) for w in WIDTHS for pocket in (True, False)], ids=lambda p: f"width{p[0]}-{'pocketfft' if p[1] else 'torchfft'}"
)
def path(request, monkeypatch):
    width, pocket = request.param
    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", width)
    monkeypatch.setattr(cost, "POCKETFFT", pocket)
    return request.param


@st.composite
def signals(draw, min_len: int = 5, max_len: int = 90):
    n = draw(st.integers(min_len, max_len))
    seed = draw(st.integers(0, 2**31 - 1))
    return torch.randn(2, n, draw(st.integers(1, 3)), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@SETTINGS
@given(signals())
def test_decomposition_is_band_pass_band_by_band(x):
    for width in WIDTHS:
        spectral.FFT_WIDTH["cpu"], old = width, spectral.FFT_WIDTH["cpu"]
        try:
            got = band_decomposition(x)
        finally:
            spectral.FFT_WIDTH["cpu"] = old
        bands = allocate_bands(x.shape[1])
        assert len(got) == len(bands)
        for y, b in zip(got, bands):
            torch.testing.assert_close(y, band_pass(x, b), atol=1e-12, rtol=0)


def test_every_path_matches_band_pass_with_lengths_axes_and_gradients(path):
    torch.manual_seed(0)
    lengths = [37, 20, 37]
    x = torch.randn(3, 37, 4, dtype=torch.float64)
    for got, name in zip(band_decomposition(x, lengths=lengths), spectral.BAND_NAMES):
        want = band_pass(x, bands_for_lengths(lengths, name), lengths=lengths)
        torch.testing.assert_close(got, want, atol=1e-12, rtol=0)
        assert torch.all(got[1, 20:] == 0)
    # the token axis elsewhere, and a 1-D signal
    x_t = x.transpose(1, 2).contiguous()
    for got, b in zip(band_decomposition(x_t, dim=-1), allocate_bands(37)):
        torch.testing.assert_close(got, band_pass(x_t, b, dim=-1), atol=1e-12, rtol=0)
    for got, b in zip(band_decomposition(x[0, :, 0], dim=0), allocate_bands(37)):
        torch.testing.assert_close(got, band_pass(x[0, :, 0], b, dim=0), atol=1e-12, rtol=0)
    # single band-passes on the same path
    for b in [Band("b", 3, 30), Band("b", 0, 2), Band("b", 1, 37)]:
        ref = spectral.idct(spectral.dct(x, dim=1) * _mask(37, b)[:, None], dim=1)
        torch.testing.assert_close(band_pass(x, b), ref, atol=1e-12, rtol=0)
    leaf = torch.randn(2, 19, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: band_decomposition(v), (leaf,), fast_mode=True)
    assert torch.autograd.gradcheck(lambda v: band_decomposition(v)[2], (leaf,), fast_mode=True)  # unused outputs
    assert torch.autograd.gradcheck(lambda v: band_decomposition(v, lengths=[19, 11]), (leaf,), fast_mode=True)
    assert torch.autograd.gradcheck(lambda v: band_pass(v, Band("b", 2, 17)), (leaf,), fast_mode=True)


def _mask(n: int, band: Band) -> torch.Tensor:
    m = torch.zeros(n, dtype=torch.float64)
    m[band.lo : band.hi] = 1
    return m


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_decomposition_keeps_the_dtype_and_sums_back(path, dtype):
    x = torch.randn(2, 300, 3, generator=torch.Generator().manual_seed(3)).to(dtype)
    parts = band_decomposition(x)
    assert all(p.dtype == dtype and p.shape == x.shape for p in parts)
    eps = torch.finfo(dtype).eps
    scale = x.float().pow(2).mean().sqrt().item()
    # two float32 computations of one band differ by their sums' rounding (300 terms), not one eps
    tol = (8 * eps if dtype != torch.float32 else 1e-5) * scale
    for p, b in zip(parts, allocate_bands(300)):
        torch.testing.assert_close(p.float(), band_pass(x.float(), b), atol=tol, rtol=0)
    torch.testing.assert_close(sum(p.float() for p in parts), x.float(), atol=8 * eps * scale, rtol=0)
    leaf = x.clone().requires_grad_(True)
    torch.autograd.backward(band_decomposition(leaf), [torch.ones_like(x)] * 5)
    assert leaf.grad.dtype == dtype  # the gradient of the sum of the parts is the identity's
    torch.testing.assert_close(leaf.grad.float(), torch.ones(x.shape), atol=8 * eps, rtol=0)


def test_bands_that_do_not_partition_are_filtered_one_by_one():
    x = torch.randn(2, 40, 3, dtype=torch.float64)
    bands = [Band("a", 0, 5), Band("b", 3, 12), Band("c", 20, 40)]  # overlap and a gap
    for got, b in zip(band_decomposition(x, bands), bands):
        torch.testing.assert_close(got, band_pass(x, b), atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="does not fit"):
        band_decomposition(x, [Band("a", 0, 41)])
    with pytest.raises(ValueError, match="batch axis"):
        band_decomposition(x, dim=0, lengths=[40, 40])
