"""Tests of prismlib.spectral.wavelets: the Haar multiresolution across tokens, its bands, errors."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.spectral import (
    BAND_NAMES,
    HaarBand,
    allocate_bands,
    haar_band_pass,
    haar_bands,
    haar_bands_for_lengths,
    haar_depth,
    haar_levels,
    haar_nominal_index,
)

SETTINGS = settings(max_examples=30, deadline=None)


@st.composite
def sequences(draw, min_len: int = 1, max_len: int = 80):
    """A float64 tensor (length, hidden) and a number of levels that fits it."""
    n = draw(st.integers(min_len, max_len))
    h = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    x = torch.randn(n, h, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return x, draw(st.integers(0, haar_depth(n)))


def unbalanced_haar_basis(n: int, levels: int) -> list[torch.Tensor]:
    """Rows of the wavelets of each level, written out from the module docstring: merging
    the dyadic blocks A (size p) and B (size q) gives sqrt(q/(p(p+q))) 1_A - sqrt(p/(q(p+q))) 1_B."""
    out = []
    for j in range(1, levels + 1):
        rows = []
        for start in range(0, n, 2**j):
            mid, end = min(start + 2 ** (j - 1), n), min(start + 2**j, n)
            p, q = mid - start, end - mid
            if q == 0:  # the last block is carried up: no wavelet
                continue
            psi = torch.zeros(n, dtype=torch.float64)
            psi[start:mid] = math.sqrt(q / (p * (p + q)))
            psi[mid:end] = -math.sqrt(p / (q * (p + q)))
            rows.append(psi)
        out.append(torch.stack(rows) if rows else torch.zeros(0, n, dtype=torch.float64))
    return out


# ------------------------------------------------------------------ the decomposition


@SETTINGS
@given(sequences())
def test_perfect_reconstruction_and_orthogonal_levels(data):
    x, levels = data
    parts = haar_levels(x, levels)
    assert len(parts) == levels + 1 and all(p.shape == x.shape for p in parts)
    torch.testing.assert_close(sum(parts), x)
    # mutually orthogonal along the tokens, so the energies add up (Parseval)
    for i in range(len(parts)):
        for j in range(i):
            assert (parts[i] * parts[j]).sum(0).abs().max().item() < 1e-10
    energy = sum(p.pow(2).sum(0) for p in parts)
    torch.testing.assert_close(energy, x.pow(2).sum(0))


@SETTINGS
@given(sequences(min_len=2))
def test_levels_are_projections_on_the_unbalanced_haar_wavelets(data):
    x, _ = data
    n = x.shape[0]
    basis = unbalanced_haar_basis(n, haar_depth(n))
    stacked = torch.cat(basis)
    # orthonormal, zero mean, and n - 1 of them: the mean completes the basis
    assert stacked.shape[0] == n - 1
    torch.testing.assert_close(stacked @ stacked.T, torch.eye(n - 1, dtype=torch.float64))
    assert stacked.sum(1).abs().max().item() < 1e-12
    parts = haar_levels(x)
    for detail, psi in zip(parts, basis):
        torch.testing.assert_close(detail, psi.T @ (psi @ x))
    torch.testing.assert_close(parts[-1], x.mean(0, keepdim=True).expand_as(x))


def test_powers_of_two_are_the_orthonormal_haar_transform():
    x = torch.randn(8, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    d1, d2, d3, a3 = haar_levels(x)
    v = x[:, 0]
    # level 1: (x0 - x1)/sqrt2 * (1, -1)/sqrt2, ...
    want_d1 = torch.stack([(v[0::2] - v[1::2]) / 2, (v[1::2] - v[0::2]) / 2], 1).flatten()
    torch.testing.assert_close(d1[:, 0], want_d1)
    means2 = v.view(2, 4).mean(1)
    pair_means = v.view(4, 2).mean(1)
    torch.testing.assert_close(d2[:, 0], (pair_means - means2.repeat_interleave(2)).repeat_interleave(2))
    torch.testing.assert_close(d3[:, 0], (means2 - v.mean()).repeat_interleave(4))
    torch.testing.assert_close(a3[:, 0], v.mean().expand(8))


@SETTINGS
@given(sequences(), st.floats(-3, 3), st.floats(-3, 3))
def test_haar_levels_are_linear(data, a, b):
    x, levels = data
    y = torch.flip(x, dims=[0]) * 0.5 + 1.0
    for lhs, px, py in zip(haar_levels(a * x + b * y, levels), haar_levels(x, levels), haar_levels(y, levels)):
        torch.testing.assert_close(lhs, a * px + b * py)


@SETTINGS
@given(sequences(), st.floats(-100, 100))
def test_a_constant_shift_goes_wholly_to_the_approximation(data, c):
    x, levels = data
    plain, shifted = haar_levels(x, levels), haar_levels(x + c, levels)
    for p, s in zip(plain[:-1], shifted[:-1]):
        torch.testing.assert_close(s, p, atol=1e-9, rtol=0)
    torch.testing.assert_close(shifted[-1], plain[-1] + c)
    assert all(d.abs().max().item() < 1e-12 for d in haar_levels(torch.full_like(x, c), levels)[:-1])


def test_lengths_decompose_each_row_alone_and_padding_never_leaks():
    torch.manual_seed(0)
    lengths = [40, 17, 40, 9, 1]
    x = torch.randn(5, 40, 3, dtype=torch.float64)
    noisy = x.clone()
    for i, n in enumerate(lengths):
        noisy[i, n:] = float("inf")

    def alone(v: torch.Tensor, levels: int, dim: int) -> list[torch.Tensor]:
        """A row decomposed by itself: its own details, zeros beyond its depth, its approximation."""
        own = haar_levels(v, min(levels, haar_depth(v.shape[dim])), dim=dim)
        return own[:-1] + [torch.zeros_like(v)] * (levels + 1 - len(own)) + own[-1:]

    for levels in (haar_depth(40), 2):
        parts = haar_levels(noisy, levels, lengths=lengths, check_finite=False)
        for i, n in enumerate(lengths):
            for p, want in zip(parts, alone(x[i, :n], levels, 0), strict=True):
                torch.testing.assert_close(p[i, :n], want)
                assert torch.all(p[i, n:] == 0)
    # lengths as a tensor, the token axis last
    last = haar_levels(noisy.transpose(1, 2), 3, dim=-1, lengths=torch.tensor(lengths), check_finite=False)
    for i, n in enumerate(lengths):
        for p, want in zip(last, alone(x[i, :n].T, 3, -1), strict=True):
            torch.testing.assert_close(p[i, :, :n], want)


def test_other_axes_shapes_and_dtypes():
    x = torch.randn(2, 3, 21, dtype=torch.float64)
    along_last = haar_levels(x, 3, dim=-1)
    along_middle = haar_levels(x.transpose(1, 2), 3, dim=1)
    for a, b in zip(along_last, along_middle):
        torch.testing.assert_close(a, b.transpose(1, 2))
    v = torch.randn(21, dtype=torch.float64)
    torch.testing.assert_close(sum(haar_levels(v, dim=0)), v)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        got = haar_levels(x.to(dtype), dim=-1, lengths=[21, 13])
        ref = haar_levels(x, dim=-1, lengths=[21, 13])
        tol = 8 * torch.finfo(dtype).eps
        for g, r in zip(got, ref):
            assert g.dtype == dtype
            torch.testing.assert_close(g.double(), r, atol=tol, rtol=0)


def test_haar_gradients_match_finite_differences():
    x = torch.randn(3, 11, 1, dtype=torch.float64, requires_grad=True)
    lengths = [11, 6, 5]
    assert torch.autograd.gradcheck(lambda v: torch.stack(haar_levels(v, 2, lengths=lengths)), (x,))
    bands = haar_bands_for_lengths(lengths, "MID-HIGH")
    assert torch.autograd.gradcheck(lambda v: haar_band_pass(v, bands, lengths=lengths), (x,))


# ------------------------------------------------------------------ the bands


def test_haar_bands_of_512_pair_the_levels():
    got = {b.name: (b.levels, b.coarse) for b in haar_bands(512)}
    assert got == {
        "HIGH": ((1, 2), False),
        "MID-HIGH": ((3, 4), False),
        "MID": ((5, 6), False),
        "MID-LOW": ((7, 8), False),
        "LOW": ((9,), True),
    }
    assert haar_nominal_index(1, 512) == pytest.approx(512 / math.sqrt(2))


@pytest.mark.parametrize("n", [*range(5, 70), 100, 127, 128, 129, 300, 510, 511, 512, 1000, 4096])
def test_haar_bands_hold_every_level_once_near_their_dct_band(n):
    bands = haar_bands(n)
    depth = haar_depth(n)
    assert [b.name for b in bands] == list(BAND_NAMES)
    assert [b.coarse for b in bands] == [True, False, False, False, False]
    # contiguous, finest levels in HIGH, every level exactly once
    assert bands[-1].lo == 1 and bands[0].hi == depth + 1
    assert all(lower.hi == higher.lo for lower, higher in zip(bands[1:], bands))
    if n >= 9:  # enough components for five bands: none is empty
        assert all(b.levels for b in bands[1:])
    if n not in (5, 6, 7, 8, 15):  # the nominal rule holds unless it would leave a band empty
        for hb, b in zip(bands, allocate_bands(n)):
            for j in hb.levels:
                assert (0 if b.lo == 0 else b.lo - 0.5) <= haar_nominal_index(j, n) < b.hi - 0.5


@SETTINGS
@given(sequences(min_len=5))
def test_haar_bands_sum_back_and_match_the_levels(data):
    x, _ = data
    n = x.shape[0]
    parts = haar_levels(x)
    filtered = [haar_band_pass(x, b) for b in haar_bands(n)]
    torch.testing.assert_close(sum(filtered), x)
    for hb, f in zip(haar_bands(n), filtered):
        want = sum((parts[j - 1] for j in hb.levels), torch.zeros_like(x)) + (parts[-1] if hb.coarse else 0)
        torch.testing.assert_close(f, want)
        torch.testing.assert_close(haar_band_pass(f, hb), f)  # a projection


def test_haar_band_pass_per_row_lengths():
    torch.manual_seed(1)
    lengths = [64, 33, 9, 64]
    x = torch.randn(4, 64, 2, dtype=torch.float64)
    noisy = x.clone()
    for i, n in enumerate(lengths):
        noisy[i, n:] = 1e6
    total = torch.zeros_like(x)
    for name in BAND_NAMES:
        out = haar_band_pass(noisy, haar_bands_for_lengths(lengths, name), lengths=lengths)
        total += out
        for i, n in enumerate(lengths):
            alone = haar_band_pass(x[i, :n], {b.name: b for b in haar_bands(n)}[name])
            torch.testing.assert_close(out[i, :n], alone)
            assert torch.all(out[i, n:] == 0)
    for i, n in enumerate(lengths):
        torch.testing.assert_close(total[i, :n], x[i, :n])
    # one band for every row; an empty band gives zeros
    out = haar_band_pass(noisy, HaarBand("b", 2, 4), lengths=lengths)
    torch.testing.assert_close(out[1, :33], haar_band_pass(x[1, :33], HaarBand("b", 2, 4)))
    assert torch.equal(haar_band_pass(x, HaarBand("empty", 3, 3)), torch.zeros_like(x))


def test_haar_errors_are_clear():
    x = torch.randn(10, 3)
    with pytest.raises(ValueError, match=r"levels must be an integer in 0\.\.4 for a length of 10"):
        haar_levels(x, 5)
    with pytest.raises(ValueError, match="levels must be an integer"):
        haar_levels(x, -1)
    with pytest.raises(ValueError, match="levels must be an integer"):
        haar_levels(x, 2.0)
    with pytest.raises(ValueError, match="malformed"):
        HaarBand("b", 0, 2)
    with pytest.raises(ValueError, match="malformed"):
        HaarBand("b", 3, 2)
    with pytest.raises(ValueError, match="unknown band"):
        haar_bands_for_lengths([10], "ULTRA")
    with pytest.raises(ValueError, match="shorter than the number of bands"):
        haar_bands(4)
    with pytest.raises(ValueError, match="lengths"):
        haar_levels(torch.randn(2, 10, 3), lengths=[10, 11])
    with pytest.raises(ValueError, match="axis 0 is the batch axis"):
        haar_levels(x, dim=0, lengths=[1] * 10)
    with pytest.raises(ValueError, match="got 1 Haar bands for a batch of 2"):
        haar_band_pass(torch.randn(2, 10, 3), [HaarBand("b", 1, 2)])
    with pytest.raises(ValueError, match="NaN"):
        haar_levels(torch.full((10, 3), math.nan))
    with pytest.raises(ValueError, match="floating-point"):
        haar_band_pass(torch.ones(10, 3, dtype=torch.int64), HaarBand("b", 1, 2))
    with pytest.raises(ValueError, match="at least 1"):
        haar_depth(0)
