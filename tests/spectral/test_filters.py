"""Tests of prismlib.spectral: exact values, properties (hypothesis) and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft
import torch
import torch_dct
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
    paper_period,
    true_period,
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


# ------------------------------------------------------------------ DCT


@pytest.mark.parametrize("n", [1, 2, 3, 16, 511, 512, spectral.FFT_THRESHOLD + 1, spectral.FFT_THRESHOLD + 6])
def test_dct_matches_scipy_float32_and_float64(n):
    x = np.random.default_rng(n).standard_normal((3, n))
    ref = scipy.fft.dct(x, norm="ortho", axis=-1)
    got64 = dct(torch.from_numpy(x)).numpy()
    got32 = dct(torch.from_numpy(x).float()).numpy()
    np.testing.assert_allclose(got64, ref, atol=1e-10)
    np.testing.assert_allclose(got32, ref, atol=1e-5 * max(1.0, math.sqrt(n) / 8))
    np.testing.assert_allclose(idct(torch.from_numpy(ref)).numpy(), x, atol=1e-10)


def test_dct_matches_torch_dct_and_eq1():
    x = torch.randn(4, 64, dtype=torch.float64)
    torch.testing.assert_close(dct(x), torch_dct.dct(x, norm="ortho"))
    # Eq. 1, written out literally.
    n = x.shape[-1]
    k = torch.arange(n, dtype=torch.float64)[:, None]
    t = torch.arange(n, dtype=torch.float64)[None, :]
    eq1 = x @ torch.cos(math.pi / n * (t + 0.5) * k).T
    torch.testing.assert_close(dct(x, norm="eq1"), eq1)
    # scipy's (and torch-dct's) unnormalised DCT-II is twice Eq. 1.
    torch.testing.assert_close(2 * dct(x, norm="eq1"), torch_dct.dct(x))
    torch.testing.assert_close(idct(dct(x, norm="eq1"), norm="eq1"), x)


@SETTINGS
@given(sequences(max_len=60), st.integers(0, 1))
def test_dct_along_any_dim_and_orthonormal(data, dim):
    x, _ = data
    f = dct(x, dim=dim)
    ref = scipy.fft.dct(x.numpy(), norm="ortho", axis=dim)
    np.testing.assert_allclose(f.numpy(), ref, atol=1e-10)
    # Parseval: the orthonormal DCT keeps the norm.
    assert torch.linalg.norm(f).item() == pytest.approx(torch.linalg.norm(x).item(), rel=1e-10)
    torch.testing.assert_close(idct(f, dim=dim), x)


def test_dct_gradients_match_finite_differences():
    x = torch.randn(2, 9, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: dct(v, dim=1), (x,))
    assert torch.autograd.gradcheck(lambda v: idct(v, dim=1, norm="eq1"), (x,))
    long = torch.randn(spectral.FFT_THRESHOLD + 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: dct(v)[:5], (long,), atol=1e-6)


# ------------------------------------------------------------------ bands


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
# the matrix path, its last length, and the FFT path (odd and power-of-two lengths)
DCT_LENGTHS = st.one_of(st.integers(1, 80), st.sampled_from([spectral.FFT_THRESHOLD, spectral.FFT_THRESHOLD + 2, 4096]))


def assert_close_to_float32(got: torch.Tensor, ref: torch.Tensor, x: torch.Tensor) -> None:
    """``got`` matches the float32 ``ref`` up to a few roundings of ``x``'s (half) dtype.

    Every output is a sum of orthonormal products, so its rounding error is a few units
    of ``eps`` times the input's scale (measured: at most ~2 eps times the input's rms).
    """
    scale = x.float().pow(2).mean().sqrt().item() if x.numel() else 0.0
    atol = 8 * torch.finfo(x.dtype).eps * max(scale, 1e-3)
    torch.testing.assert_close(got.float(), ref, atol=atol, rtol=0)


@SETTINGS
@given(DCT_LENGTHS, st.integers(1, 3), HALF_DTYPES, st.sampled_from(["ortho", "eq1"]), st.integers(0, 2**31 - 1))
def test_dct_and_idct_take_half_and_bfloat16_on_every_path(n, rows, dtype, norm, seed):
    x = torch.randn(rows, n, generator=torch.Generator().manual_seed(seed)).to(dtype)
    for fn in (dct, idct):
        got = fn(x, norm=norm)
        assert got.dtype == dtype and got.shape == x.shape
        unit = 1.0 if norm == "ortho" else math.sqrt(n)  # eq1 scales coefficients by up to sqrt(n)
        ref = fn(x.float(), norm=norm)
        if fn is dct:
            assert_close_to_float32(got / unit, ref / unit, x)
        else:
            assert_close_to_float32(got * unit, ref * unit, x)


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


# --------------------------------------------------------------------------- edge cases: one clear error each


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


# ------------------------------------------------------------------ single-band paths


def _switch_lengths(fft_width: int, top: int = 2100) -> list[int]:
    """Lengths either side of every point where a paper band of ``allocate_bands(n)``
    changes path under ``fft_width`` (:func:`~prismlib.spectral.band_path`)."""

    def paths(n):
        return [spectral.band_path(n, b.lo, b.hi, fft_width) for b in allocate_bands(n)]

    out = set()
    for n in range(33, top):
        if paths(n) != paths(n - 1):
            out.update((n - 1, n))
    return sorted(out)


@pytest.mark.parametrize("n", _switch_lengths(spectral.FFT_WIDTH["cpu"]))
def test_every_single_band_path_matches_scipy_either_side_of_each_switch(n):
    from prismlib.spectral import filters

    x = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
    for b in allocate_bands(n):
        want = torch.from_numpy(reference_band_pass(x.numpy(), b, axis=1))
        for path in ("matmul", "fft+fft"):
            torch.testing.assert_close(filters._band_cpu(x, b.lo, b.hi, path), want, atol=1e-12, rtol=0)
        torch.testing.assert_close(band_pass(x, b), want, atol=1e-12, rtol=0)  # the path the model picks
        torch.testing.assert_close(band_pass(x[..., 1:], b), want[..., 1:], atol=1e-12, rtol=0)  # a strided sector


def test_switch_points_exist_and_the_model_follows_the_thinner_side():
    width = spectral.FFT_WIDTH["cpu"]
    assert _switch_lengths(width), "no paper band changes path below 2100 tokens: the test above tests one path"
    assert spectral.band_path(1000, 0, width, width) == "matmul"
    assert spectral.band_path(1000, 0, width + 1, width) == "fft+fft"
    assert spectral.band_path(1000, 1000 - width, 1000, width) == "matmul"  # the complement's rows
    assert spectral.band_path(1000, 999 - width, 1000, width) == "fft+fft"
    assert spectral.band_path(1000, 0, 1000, width) == "identity"
    assert spectral.smooth_path(width, width) == "matmul" and spectral.smooth_path(width + 1, width) == "fft+fft"


@pytest.mark.parametrize("width", [1, 10**9], ids=["fft", "matmul"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_single_band_paths_in_every_dtype_with_gradients(width, dtype, monkeypatch):
    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", width)
    n = 90
    x = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(7)).to(dtype)
    g = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(8)).to(dtype)
    for b in allocate_bands(n):
        leaf = x.clone().requires_grad_(True)
        got = band_pass(leaf, b)
        assert got.dtype == dtype
        close = assert_close_to_float32 if dtype != torch.float32 else lambda a, b, _: torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
        want = torch.from_numpy(reference_band_pass(x.double().numpy(), b, axis=1)).float()
        close(got, want, x)
        got.backward(g)  # the filter is symmetric: its gradient is the filtered gradient
        want_grad = torch.from_numpy(reference_band_pass(g.double().numpy(), b, axis=1)).float()
        close(leaf.grad, want_grad, g)


@pytest.mark.parametrize("width", [1, 10**9], ids=["fft", "matmul"])
def test_single_band_cpu_path_is_twice_differentiable(width, monkeypatch):
    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", width)
    x = torch.randn(1, 24, 2, dtype=torch.float64, requires_grad=True)
    b = allocate_bands(24)[3]
    assert torch.autograd.gradcheck(lambda v: band_pass(v, b), (x,), fast_mode=True)
    assert torch.autograd.gradgradcheck(lambda v: band_pass(v, b), (x,), fast_mode=True)


def test_an_empty_batch_or_hidden_axis_filters_to_an_empty_tensor():
    for shape in ((0, 40, 3), (2, 40, 0)):
        x = torch.zeros(shape, requires_grad=True)
        for fn in (lambda v: band_pass(v, allocate_bands(40)[2]), lambda v: spectral.smooth_band_pass(v, allocate_bands(40)[2])):
            y = fn(x)
            assert y.shape == shape
            y.sum().backward()


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
    from prismlib.spectral import filters

    x = torch.randn(2, 24, 7, dtype=torch.float64, requires_grad=True)
    bands, slices = allocate_bands(24), sector_slices(7)
    fast = spectral.sector_band_pass(x, bands, slices)
    assert torch.autograd.gradcheck(lambda v: spectral.sector_band_pass(v, bands, slices), (x,), fast_mode=True)
    assert torch.autograd.gradgradcheck(lambda v: spectral.sector_band_pass(v, bands, slices), (x,), fast_mode=True)
    monkeypatch.setattr(filters, "POCKETFFT", False)  # the path of GPUs: one band_pass per sector, concatenated
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


@pytest.mark.parametrize("order", ["adjacent", "apart"])
def test_sector_band_pass_mixes_paths_and_shares_one_fft_between_adjacent_sectors(order, monkeypatch):
    from prismlib.spectral import filters

    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", 8)
    n, h = 60, 9
    wide, thin = Band("w", 5, 40), Band("t", 0, 3)  # thin sides 25 (FFT path) and 3 (matrix path)
    bands = [thin, wide, wide] if order == "adjacent" else [wide, thin, wide]
    slices = [slice(0, 3), slice(3, 6), slice(6, 9)]
    calls = []
    real = filters._dct_fresh
    monkeypatch.setattr(filters, "_dct_fresh", lambda v: calls.append(v.shape[-1]) or real(v))
    x = torch.randn(2, n, h, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    got = spectral.sector_band_pass(x, bands, slices)
    want = np.concatenate([reference_band_pass(x.numpy()[..., sl], b, axis=1) for b, sl in zip(bands, slices)], axis=-1)
    torch.testing.assert_close(got, torch.from_numpy(want), atol=1e-12, rtol=0)
    assert calls == ([6] if order == "adjacent" else [3, 3])  # one DCT for both FFT sectors, or one each
