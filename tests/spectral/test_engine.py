"""prismlib.spectral.engine: every path of a single band-pass and of the sectors, either side of each switch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import spectral
from prismlib.spectral import Band, allocate_bands, band_pass, engine
from spectral.test_filters import assert_close_to_float32, reference_band_pass


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

    x = torch.randn(2, n, 3, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
    for b in allocate_bands(n):
        want = torch.from_numpy(reference_band_pass(x.numpy(), b, axis=1))
        for path in ("matmul", "fft+fft"):
            torch.testing.assert_close(engine._band_cpu(x, b.lo, b.hi, path), want, atol=1e-12, rtol=0)
        torch.testing.assert_close(band_pass(x, b), want, atol=1e-12, rtol=0)  # the path the model picks
        torch.testing.assert_close(band_pass(x[..., 1:], b), want[..., 1:], atol=1e-12, rtol=0)  # a strided sector


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


@pytest.mark.parametrize("order", ["adjacent", "apart"])
def test_sector_band_pass_mixes_paths_and_shares_one_fft_between_adjacent_sectors(order, monkeypatch):

    monkeypatch.setitem(spectral.FFT_WIDTH, "cpu", 8)
    n, h = 60, 9
    wide, thin = Band("w", 5, 40), Band("t", 0, 3)  # thin sides 25 (FFT path) and 3 (matrix path)
    bands = [thin, wide, wide] if order == "adjacent" else [wide, thin, wide]
    slices = [slice(0, 3), slice(3, 6), slice(6, 9)]
    calls = []
    real = engine._dct_fresh
    monkeypatch.setattr(engine, "_dct_fresh", lambda v: calls.append(v.shape[-1]) or real(v))
    x = torch.randn(2, n, h, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    got = spectral.sector_band_pass(x, bands, slices)
    want = np.concatenate([reference_band_pass(x.numpy()[..., sl], b, axis=1) for b, sl in zip(bands, slices)], axis=-1)
    torch.testing.assert_close(got, torch.from_numpy(want), atol=1e-12, rtol=0)
    assert calls == ([6] if order == "adjacent" else [3, 3])  # one DCT for both FFT sectors, or one each
