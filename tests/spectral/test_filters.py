"""prismlib.spectral.filters: the brick-wall filters and the sectors, exact values, properties
(hypothesis) and errors; the helpers of the spectral tests (``sequences``, ``reference_band_pass``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib import spectral
from prismlib.spectral import (
    Band,
    allocate_bands,
    band_pass,
    bands_for_lengths,
    dct,
    high_pass,
    idct,
    low_pass,
)

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def sequences(draw, min_len: int = 5, max_len: int = 80):
    """A float64 tensor (length, hidden) and a band that fits it."""
    n = draw(st.integers(min_len, max_len))
    h = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    x = torch.randn(n, h, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    lo = draw(st.integers(0, n - 1))
    hi = draw(st.integers(lo + 1, n))
    return x, Band("b", lo, hi)


def reference_band_pass(x: np.ndarray, band: Band, axis: int = 0) -> np.ndarray:
    """DCT -> mask -> IDCT with scipy, the definition the fast path must match."""
    f = scipy.fft.dct(x, norm="ortho", axis=axis)
    mask = np.zeros(x.shape[axis])
    mask[band.lo : band.hi] = 1
    shape = [1] * x.ndim
    shape[axis] = -1
    return scipy.fft.idct(f * mask.reshape(shape), norm="ortho", axis=axis)


# ------------------------------------------------------------------ filters


@SETTINGS
@given(sequences())
def test_band_pass_matches_dct_mask_idct(data):
    x, band = data
    np.testing.assert_allclose(band_pass(x, band).numpy(), reference_band_pass(x.numpy(), band), atol=1e-10)


@SETTINGS
@given(sequences(), st.floats(-3, 3), st.floats(-3, 3))
def test_band_pass_is_linear(data, a, b):
    x, band = data
    y = torch.flip(x, dims=[0]) * 0.5 + 1.0
    lhs = band_pass(a * x + b * y, band)
    rhs = a * band_pass(x, band) + b * band_pass(y, band)
    torch.testing.assert_close(lhs, rhs)


@SETTINGS
@given(sequences())
def test_band_pass_is_idempotent(data):
    x, band = data
    once = band_pass(x, band)
    torch.testing.assert_close(band_pass(once, band), once)


@SETTINGS
@given(sequences())
def test_five_bands_sum_back_to_the_signal(data):
    x, _ = data
    total = sum(band_pass(x, b) for b in allocate_bands(x.shape[0]))
    torch.testing.assert_close(total, x)


@SETTINGS
@given(sequences())
def test_filtered_signal_has_no_energy_outside_its_band(data):
    x, band = data
    f = dct(band_pass(x, band), dim=0)
    outside = torch.ones(x.shape[0], dtype=torch.bool)
    outside[band.lo : band.hi] = False
    if outside.any():
        assert f[outside].abs().max().item() < 1e-10


def test_low_and_high_pass_are_the_figure_3b_filters():
    x = torch.randn(50, 4, dtype=torch.float64)
    f = dct(x.T)
    f[:, 7:] = 0
    torch.testing.assert_close(low_pass(x, 7), idct(f).T)  # Fig. 3b, three lines
    torch.testing.assert_close(low_pass(x, 7) + high_pass(x, 7), x)


def test_lengths_filter_each_row_alone_and_padding_never_leaks():
    torch.manual_seed(0)
    lengths = [40, 17, 40, 9]
    x = torch.randn(4, 40, 3, dtype=torch.float64)
    x_noisy = x.clone()
    for i, n in enumerate(lengths):
        x_noisy[i, n:] = 1e6  # garbage in the padding
    for name in ("LOW", "MID", "HIGH"):
        out = band_pass(x_noisy, bands_for_lengths(lengths, name), lengths=lengths)
        for i, n in enumerate(lengths):
            alone = band_pass(x[i, :n], allocate_bands(n)[[b.name for b in allocate_bands(n)].index(name)])
            torch.testing.assert_close(out[i, :n], alone)
            assert torch.all(out[i, n:] == 0)
    # one band for all rows, and high_pass with its per-row upper end
    out = low_pass(x_noisy, 3, lengths=lengths)
    torch.testing.assert_close(out[1, :17], low_pass(x[1, :17], 3))
    out = high_pass(x_noisy, 3, lengths=torch.tensor(lengths))
    torch.testing.assert_close(out[3, :9], high_pass(x[3, :9], 3))


def test_band_pass_other_axes_and_shapes():
    x = torch.randn(2, 3, 30, dtype=torch.float64)
    b = Band("b", 2, 11)
    ref = reference_band_pass(x.numpy(), b, axis=-1)
    np.testing.assert_allclose(band_pass(x, b, dim=-1).numpy(), ref, atol=1e-10)
    v = torch.randn(30, dtype=torch.float64)
    np.testing.assert_allclose(band_pass(v, b, dim=0).numpy(), reference_band_pass(v.numpy(), b), atol=1e-10)


def test_band_pass_gradients_match_finite_differences():
    x = torch.randn(3, 12, 2, dtype=torch.float64, requires_grad=True)
    lengths = [12, 7, 5]
    assert torch.autograd.gradcheck(lambda v: band_pass(v, Band("b", 1, 4)), (x,))
    assert torch.autograd.gradcheck(lambda v: band_pass(v, bands_for_lengths(lengths, "MID"), lengths=lengths), (x,))
    assert torch.autograd.gradcheck(lambda v: high_pass(v, 1, lengths=lengths), (x,))


def test_float32_agrees_with_float64():
    x = torch.randn(2, 512, 8, dtype=torch.float64)
    for b in allocate_bands(512):
        torch.testing.assert_close(band_pass(x.float(), b).double(), band_pass(x, b), atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ float16 and bfloat16

HALF_DTYPES = st.sampled_from([torch.float16, torch.bfloat16])


def assert_close_to_float32(got: torch.Tensor, ref: torch.Tensor, x: torch.Tensor) -> None:
    """``got`` matches the float32 ``ref`` up to a few roundings of ``x``'s (half) dtype.

    Every output is a sum of orthonormal products, so its rounding error is a few units
    of ``eps`` times the input's scale (measured: at most ~2 eps times the input's rms).
    """
    scale = x.float().pow(2).mean().sqrt().item() if x.numel() else 0.0
    atol = 8 * torch.finfo(x.dtype).eps * max(scale, 1e-3)
    torch.testing.assert_close(got.float(), ref, atol=atol, rtol=0)


@SETTINGS
@given(sequences(), HALF_DTYPES)
def test_band_filters_take_half_and_bfloat16(data, dtype):
    x64, band = data
    x = x64.to(dtype)
    got = band_pass(x, band)
    assert got.dtype == dtype
    assert_close_to_float32(got, band_pass(x.float(), band), x)
    parts = [band_pass(x, b) for b in allocate_bands(x.shape[0])]
    assert_close_to_float32(sum(p.float() for p in parts), x.float(), x)
    assert_close_to_float32(low_pass(x, band.hi), low_pass(x.float(), band.hi), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_five_bands_above_the_fft_threshold_in_half(dtype):
    n = spectral.FFT_THRESHOLD + 2
    x = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(1)).to(dtype)
    lengths = [n, n - 7]
    for b in allocate_bands(n):
        got = band_pass(x, b)
        assert got.dtype == dtype
        assert_close_to_float32(got, band_pass(x.float(), b), x)
    for name in ("LOW", "HIGH"):
        bands = bands_for_lengths(lengths, name)
        got = band_pass(x, bands, lengths=lengths)
        assert_close_to_float32(got, band_pass(x.float(), bands, lengths=lengths), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [40, spectral.FFT_THRESHOLD + 2])
def test_gradients_flow_in_half_and_bfloat16(dtype, n):
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(2, n, generator=gen).to(dtype)
    g = torch.randn(2, n, generator=gen).to(dtype)
    fns = {
        "dct": lambda v: dct(v),
        "idct eq1": lambda v: idct(v, norm="eq1") / math.sqrt(n),
        "band_pass": lambda v: band_pass(v, allocate_bands(n)[2], dim=-1),
    }
    for name, fn in fns.items():
        leaf = x.clone().requires_grad_(True)
        fn(leaf).backward(g)
        ref = x.float().requires_grad_(True)
        fn(ref).backward(g.float())
        assert leaf.grad.dtype == dtype, name
        assert_close_to_float32(leaf.grad, ref.grad, g)


# ------------------------------------------------------------------ errors


def test_errors_are_clear():
    x = torch.randn(10, 3)
    with pytest.raises(ValueError, match="shorter than the number of bands"):
        allocate_bands(4)
    with pytest.raises(ValueError, match="empty"):
        Band("x", 5, 5)
    with pytest.raises(ValueError, match="empty or negative"):
        Band("x", -1, 3)
    with pytest.raises(ValueError, match="does not fit a sequence of length 10"):
        band_pass(x, Band("x", 3, 11))
    with pytest.raises(ValueError, match="floating-point"):
        band_pass(torch.ones(10, 3, dtype=torch.int64), Band("x", 0, 2))
    with pytest.raises(ValueError, match="floating-point"):
        dct(torch.arange(5))
    bad = x.clone()
    bad[4, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        band_pass(bad, Band("x", 0, 2))
    with pytest.raises(ValueError, match="lengths"):
        band_pass(torch.randn(2, 10, 3), Band("x", 0, 2), lengths=[10, 11])
    with pytest.raises(ValueError, match="does not fit a sequence of length 4"):
        band_pass(torch.randn(2, 10, 3), Band("x", 0, 6), lengths=[10, 4])
    with pytest.raises(ValueError, match="norm"):
        dct(x, norm="backward")


def test_frequency_response_is_the_squared_gain_of_a_diagonal_filter():
    n = 40
    band = spectral.allocate_bands(n)[2]
    brick = spectral.frequency_response(lambda x: spectral.band_pass(x, band, dim=-2), n)
    expected = torch.zeros(n, dtype=torch.float64)
    expected[band.lo : band.hi] = 1
    assert torch.allclose(brick, expected, atol=1e-12)
    gain = spectral.smooth_gain(n, band)
    smooth = spectral.frequency_response(lambda x: spectral.smooth_band_pass(x, band, dim=-2), n)
    assert torch.allclose(smooth, gain.double() ** 2, atol=1e-10)


# ------------------------------------------------------------------ sectors (the prism layer's filter)


@pytest.mark.parametrize("width", [1, 10**9], ids=["fft", "matmul"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_sector_band_pass_band_passes_each_sector_on_every_path_with_gradients(width, dtype, monkeypatch):
    from prismlib.prism import sector_slices

    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", width)
    n, h = 70, 11
    gen = torch.Generator().manual_seed(5)
    x, g = (torch.randn(2, 3, n, h, generator=gen).to(dtype) for _ in range(2))  # two batch axes
    bands, slices = allocate_bands(n), sector_slices(h)

    def want(v):
        parts = [reference_band_pass(v.double().numpy()[..., sl], b, axis=2) for b, sl in zip(bands, slices)]
        return torch.from_numpy(np.concatenate(parts, axis=-1)).float()

    leaf = x.clone().requires_grad_(True)
    got = spectral.sector_band_pass(leaf, bands, slices)
    assert got.dtype == dtype and got.shape == x.shape
    half = dtype in (torch.float16, torch.bfloat16)
    close = assert_close_to_float32 if half else lambda a, b, _: torch.testing.assert_close(a.float(), b, atol=1e-5, rtol=0)
    close(got, want(x), x)
    got.backward(g)  # block-diagonal of symmetric projections: the gradient is the filtered gradient
    close(leaf.grad, want(g), g)


def test_sector_band_pass_off_the_pocketfft_path_and_twice_differentiable(monkeypatch):
    from prismlib.prism import sector_slices
    from prismlib.spectral import cost

    x = torch.randn(2, 24, 7, dtype=torch.float64, requires_grad=True)
    bands, slices = allocate_bands(24), sector_slices(7)
    fast = spectral.sector_band_pass(x, bands, slices)
    assert torch.autograd.gradcheck(lambda v: spectral.sector_band_pass(v, bands, slices), (x,), fast_mode=True)
    assert torch.autograd.gradgradcheck(lambda v: spectral.sector_band_pass(v, bands, slices), (x,), fast_mode=True)
    monkeypatch.setattr(cost, "POCKETFFT", False)  # the path of GPUs: one band_pass per sector, concatenated
    torch.testing.assert_close(spectral.sector_band_pass(x, bands, slices), fast, atol=1e-12, rtol=0)


def test_sector_band_pass_errors_name_the_fix():
    from prismlib.prism import sector_slices

    x, bands = torch.randn(1, 16, 10), allocate_bands(16)
    with pytest.raises(ValueError, match="5 bands for 4 sectors"):
        spectral.sector_band_pass(x, bands, sector_slices(10, 4))
    with pytest.raises(ValueError, match=r"do not cover the 10 units in order; .*sector_slices\(10, k\)"):
        spectral.sector_band_pass(x, bands, [slice(0, 2), slice(3, 5), slice(5, 7), slice(7, 9), slice(9, 10)])
    with pytest.raises(ValueError, match="do not cover the 10 units"):
        spectral.sector_band_pass(x, bands, sector_slices(9))
    with pytest.raises(ValueError, match="do not cover the 10 units"):
        spectral.sector_band_pass(x, [], [])
    with pytest.raises(ValueError):
        spectral.sector_band_pass(x[:, :8], bands, sector_slices(10))  # bands of 16 tokens on 8
    with pytest.raises(ValueError, match="length, hidden"):
        spectral.sector_band_pass(x[0, 0], bands, sector_slices(10))
