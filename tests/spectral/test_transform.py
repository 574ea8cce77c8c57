"""prismlib.spectral.transform: the DCT-II of Eq. 1 and its inverse."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft
import torch
import torch_dct
from hypothesis import given
from hypothesis import strategies as st

from prismlib import spectral
from prismlib.spectral import dct, idct
from spectral.test_filters import HALF_DTYPES, SETTINGS, assert_close_to_float32, sequences


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


DCT_LENGTHS = st.one_of(st.integers(1, 80), st.sampled_from([spectral.FFT_THRESHOLD, spectral.FFT_THRESHOLD + 2, 4096]))


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
