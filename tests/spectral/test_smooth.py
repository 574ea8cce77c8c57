"""Tests of the smooth bands of prismlib.spectral: definition, properties (hypothesis), errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft
import scipy.stats
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib import spectral
from prismlib.spectral import (
    Band,
    allocate_bands,
    band_pass,
    bands_for_lengths,
    smooth_band_pass,
    smooth_gain,
    smooth_step,
)
from spectral.test_filters import sequences  # (length, hidden) float64 and a band that fits

SETTINGS = settings(max_examples=30, deadline=None)
SHAPES = st.sampled_from(spectral.SMOOTH_SHAPES)
WIDTHS = st.floats(0.02, 1.5)


def reference(x: np.ndarray, gain: np.ndarray, axis: int = 0) -> np.ndarray:
    """DCT -> gain -> IDCT with scipy: the definition."""
    shape = [1] * x.ndim
    shape[axis] = -1
    f = scipy.fft.dct(x, norm="ortho", axis=axis)
    return scipy.fft.idct(f * gain.reshape(shape), norm="ortho", axis=axis)


# ------------------------------------------------------------------ the gain


@SETTINGS
@given(st.integers(5, 700), WIDTHS, SHAPES)
def test_gains_of_the_five_bands_are_a_partition_of_unity(n, width, shape):
    gains = torch.stack([smooth_gain(n, b, width=width, shape=shape) for b in allocate_bands(n)])
    assert gains.min() >= 0 and gains.max() <= 1
    assert (gains.sum(0) - 1).abs().max().item() < 1e-12


def test_gain_is_the_stated_formula():
    n, width = 512, 0.3
    k = np.arange(n)
    with np.errstate(divide="ignore"):
        octave = np.log2(k)
    low, mid, high = allocate_bands(n)[0], allocate_bands(n)[2], allocate_bands(n)[4]
    # a band from 0 has no lower edge; a band up to n has no upper edge
    want_low = scipy.stats.norm.sf((octave - math.log2(low.hi - 0.5)) / width)
    np.testing.assert_allclose(smooth_gain(n, low, width=width).numpy(), want_low, atol=1e-14)
    assert smooth_gain(n, low, width=width)[0] == 1  # the mean goes wholly to LOW
    want_mid = scipy.stats.norm.cdf((octave - math.log2(mid.lo - 0.5)) / width) - scipy.stats.norm.cdf(
        (octave - math.log2(mid.hi - 0.5)) / width
    )
    np.testing.assert_allclose(smooth_gain(n, mid, width=width).numpy(), want_mid, atol=1e-14)
    # Butterworth: the high side is the power response 1 / (1 + (e / k)^(2N)) of order N
    order = math.pi / (2 * math.sqrt(3) * math.log(2) * width)
    e = high.lo - 0.5
    with np.errstate(divide="ignore", over="ignore"):
        want_high = 1 / (1 + (e / k) ** (2 * order))
    np.testing.assert_allclose(smooth_gain(n, high, width=width, shape="butterworth").numpy(), want_high, atol=1e-14)


@SETTINGS
@given(sequences(max_len=300), WIDTHS, SHAPES, st.data())
def test_leakage_outside_the_band_is_bounded(data, width, shape, draw):
    """A pure cosine delta octaves outside the band keeps g(k)^2 <= F(-delta/width)^2 of its energy."""
    x, band = data
    n = x.shape[0]
    outside = [k for k in range(n) if not band.lo <= k < band.hi]
    if not outside:
        return
    k = draw.draw(st.sampled_from(outside))
    wave = spectral.dct_matrix(n)[k][:, None]
    out = smooth_band_pass(wave, band, width=width, shape=shape)
    kept = (out.pow(2).sum() / wave.pow(2).sum()).item()
    g = smooth_gain(n, band, width=width, shape=shape)
    assert kept == pytest.approx(g[k].item() ** 2, abs=1e-12)
    delta = math.log2(k / (band.hi - 0.5)) if k >= band.hi else (math.inf if k == 0 else math.log2((band.lo - 0.5) / k))
    assert kept <= smooth_step(-delta, width=width, shape=shape) ** 2 + 1e-12
    # ... and an index inside keeps at least 1 - F(-delta_lo/w) - F(-delta_hi/w) of its amplitude
    for i in range(band.lo, band.hi):
        d_lo = math.inf if band.lo == 0 else (math.inf if i == 0 else math.log2(i / (band.lo - 0.5)))
        d_hi = math.inf if band.hi == n else math.log2((band.hi - 0.5) / i) if i else math.inf
        floor = 1 - smooth_step(-d_lo, width=width, shape=shape) - smooth_step(-d_hi, width=width, shape=shape)
        assert g[i].item() >= floor - 1e-12


def test_default_width_leaks_little_one_octave_out():
    assert smooth_step(-1.0) == pytest.approx(scipy.stats.norm.cdf(-4), rel=1e-10)  # width 0.25 octave
    assert smooth_step(-1.0, shape="butterworth") < 2e-3
    assert smooth_step(0.0) == 0.5 and smooth_step(2.0, width=0) == 1.0


# ------------------------------------------------------------------ the filter


@SETTINGS
@given(sequences(), WIDTHS, SHAPES)
def test_smooth_band_pass_is_dct_gain_idct(data, width, shape):
    x, band = data
    gain = smooth_gain(x.shape[0], band, width=width, shape=shape).numpy()
    got = smooth_band_pass(x, band, dim=0, width=width, shape=shape)
    np.testing.assert_allclose(got.numpy(), reference(x.numpy(), gain), atol=1e-10)


@SETTINGS
@given(sequences(), WIDTHS, SHAPES, st.floats(-3, 3), st.floats(-3, 3))
def test_smooth_band_pass_is_linear(data, width, shape, a, b):
    x, band = data
    y = torch.flip(x, dims=[0]) * 0.5 + 1.0
    f = lambda v: smooth_band_pass(v, band, width=width, shape=shape)  # noqa: E731
    torch.testing.assert_close(f(a * x + b * y), a * f(x) + b * f(y))


@SETTINGS
@given(sequences(), WIDTHS, SHAPES)
def test_five_smooth_bands_sum_back_to_the_signal(data, width, shape):
    x, _ = data
    total = sum(smooth_band_pass(x, b, width=width, shape=shape) for b in allocate_bands(x.shape[0]))
    torch.testing.assert_close(total, x)


def test_five_smooth_bands_sum_back_above_the_fft_threshold():
    n = spectral.FFT_THRESHOLD + 3
    x = torch.randn(2, n, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    parts = [smooth_band_pass(x, b, shape="butterworth") for b in allocate_bands(n)]
    torch.testing.assert_close(sum(parts), x)
    gain = smooth_gain(n, allocate_bands(n)[2], shape="butterworth").numpy()
    np.testing.assert_allclose(parts[2].numpy(), reference(x.numpy(), gain, axis=1), atol=1e-10)


@SETTINGS
@given(sequences(), SHAPES)
def test_brick_wall_limit(data, shape):
    x, band = data
    assert torch.equal(smooth_band_pass(x, band, width=0, shape=shape), band_pass(x, band))
    # every index is at least ~0.009 octave from an edge for n <= 80: 1e-4 octave is a wall
    torch.testing.assert_close(smooth_band_pass(x, band, width=1e-4, shape=shape), band_pass(x, band), atol=1e-10, rtol=0)


def test_lengths_filter_each_row_alone_and_padding_never_leaks():
    torch.manual_seed(0)
    lengths = [40, 17, 40, 9]
    x = torch.randn(4, 40, 3, dtype=torch.float64)
    noisy = x.clone()
    for i, n in enumerate(lengths):
        noisy[i, n:] = float("inf")  # garbage in the padding never reaches a real position
    for name in ("LOW", "MID", "HIGH"):
        out = smooth_band_pass(noisy, bands_for_lengths(lengths, name), lengths=lengths, check_finite=False)
        for i, n in enumerate(lengths):
            alone = smooth_band_pass(x[i, :n], {b.name: b for b in allocate_bands(n)}[name])
            torch.testing.assert_close(out[i, :n], alone)
            assert torch.all(out[i, n:] == 0)
    # one band for every row, lengths as a tensor
    out = smooth_band_pass(noisy, Band("b", 0, 5), lengths=torch.tensor(lengths), shape="butterworth", check_finite=False)
    torch.testing.assert_close(out[3, :9], smooth_band_pass(x[3, :9], Band("b", 0, 5), shape="butterworth"))
    # per-row bands without lengths
    bands = [Band("b", 1, 6), Band("b", 3, 40), Band("b", 1, 6), Band("b", 0, 2)]
    out = smooth_band_pass(x, bands)
    for i, b in enumerate(bands):
        torch.testing.assert_close(out[i], smooth_band_pass(x[i], b))


def test_smooth_band_pass_other_axes_and_shapes():
    x = torch.randn(2, 3, 30, dtype=torch.float64)
    b = Band("b", 2, 11)
    gain = smooth_gain(30, b).numpy()
    np.testing.assert_allclose(smooth_band_pass(x, b, dim=-1).numpy(), reference(x.numpy(), gain, axis=-1), atol=1e-10)
    np.testing.assert_allclose(
        smooth_band_pass(x.transpose(1, 2), b, dim=1).numpy(), reference(x.numpy(), gain, axis=-1).transpose(0, 2, 1), atol=1e-10
    )
    v = torch.randn(30, dtype=torch.float64)
    np.testing.assert_allclose(smooth_band_pass(v, b, dim=0).numpy(), reference(v.numpy(), gain), atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_smooth_band_pass_keeps_the_dtype(dtype):
    x = torch.randn(2, 64, 5, generator=torch.Generator().manual_seed(3))
    lengths = [64, 50]
    for name in ("LOW", "MID", "HIGH"):
        bands = bands_for_lengths(lengths, name)
        got = smooth_band_pass(x.to(dtype), bands, lengths=lengths)
        ref = smooth_band_pass(x.double(), bands, lengths=lengths)
        assert got.dtype == dtype
        tol = 16 * torch.finfo(dtype).eps * x.pow(2).mean().sqrt().item()
        torch.testing.assert_close(got.double(), ref, atol=tol, rtol=0)


def test_smooth_band_pass_gradients_match_finite_differences():
    x = torch.randn(3, 10, 1, dtype=torch.float64, requires_grad=True)
    lengths = [10, 7, 5]
    assert torch.autograd.gradcheck(lambda v: smooth_band_pass(v, Band("b", 1, 4)), (x,))
    fn = lambda v: smooth_band_pass(v, bands_for_lengths(lengths, "MID"), lengths=lengths, shape="butterworth")  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))


def test_smooth_errors_are_clear():
    x = torch.randn(10, 3)
    for width in (-0.1, math.nan, math.inf, "0.3", True):
        with pytest.raises(ValueError, match="width must be a finite number of octaves"):
            smooth_band_pass(x, Band("b", 0, 2), width=width)
    with pytest.raises(ValueError, match="shape must be one of"):
        smooth_band_pass(x, Band("b", 0, 2), shape="cosine")
    with pytest.raises(ValueError, match="does not fit a sequence of length 10"):
        smooth_band_pass(x, Band("b", 3, 11))
    with pytest.raises(ValueError, match="does not fit a sequence of length 4"):
        smooth_band_pass(torch.randn(2, 10, 3), Band("b", 0, 6), lengths=[10, 4])
    with pytest.raises(ValueError, match="got 1 bands for a batch of 2"):
        smooth_band_pass(torch.randn(2, 10, 3), [Band("b", 0, 6)])
    with pytest.raises(ValueError, match="axis 0 is the batch axis"):
        smooth_band_pass(torch.randn(10, 3), Band("b", 0, 2), dim=0, lengths=[5, 5, 5, 5, 5, 5, 5, 5, 5, 5])
    with pytest.raises(ValueError, match="NaN"):
        smooth_band_pass(torch.full((10, 3), math.nan), Band("b", 0, 2))
    with pytest.raises(ValueError, match="floating-point"):
        smooth_band_pass(torch.ones(10, 3, dtype=torch.int64), Band("b", 0, 2))


@pytest.mark.parametrize("width", [1, 10**9], ids=["fft", "matmul"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_both_smooth_paths_are_dct_gain_idct(width, dtype, monkeypatch):
    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", width)
    n = 70
    x = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for b in allocate_bands(n):
        gain = smooth_gain(n, b).numpy()[None, :, None]
        want = torch.from_numpy(scipy.fft.idct(scipy.fft.dct(x.numpy(), axis=1, norm="ortho") * gain, axis=1, norm="ortho"))
        leaf = x.clone().to(dtype).requires_grad_(True)
        got = smooth_band_pass(leaf, b)
        assert got.dtype == dtype
        eps = torch.finfo(dtype).eps
        torch.testing.assert_close(got.double(), want, atol=16 * eps, rtol=0)
        got.backward(x.to(dtype))  # symmetric: the gradient is the filtered gradient
        torch.testing.assert_close(leaf.grad.double(), want, atol=16 * eps, rtol=0)
