"""Tests of prismlib.spectral.matching: the -3 dB points, smooth and Haar bands matched to the
brick-wall bands' (hypothesis for the maths), the tables of notebook 09."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.spectral import (
    BAND_NAMES,
    HALF_POWER,
    SMOOTH_WIDTH,
    Band,
    MatchedBand,
    allocate_bands,
    band_pass,
    brick_points,
    frequency_response,
    half_power_points,
    half_power_table,
    match_errors,
    matched_bands,
    matched_rows,
    smooth_gain,
)

SETTINGS = settings(max_examples=12, deadline=None)
QUICK = settings(max_examples=25, deadline=None)
SMOOTH_TOLERANCE = 0.02  # octaves: the smooth bands are solved exactly, up to a root outside the bracket at short lengths
HAAR_AT_512 = 0.1  # octaves (7%): whole-token blocks
HAAR_LONG = 0.18  # octaves, any length 64 .. 512 (measured over every n: worst 0.170, n = 442, MID-HIGH)


def octaves_off(points, target) -> float:
    """The larger |log2(point / target)| where the target has a point (inf for a missing point)."""
    worst = 0.0
    for p, t in zip(points, target):
        if not math.isnan(t):
            worst = max(worst, abs(math.log2(p / t)) if p > 0 else math.inf)
    return worst


def measured(band: MatchedBand) -> tuple[float, float]:
    """The band's -3 dB points measured from its own filter (not from the search's numbers)."""
    return half_power_points(frequency_response(band, band.n))


# ------------------------------------------------------------------ the -3 dB points


@QUICK
@given(st.integers(2, 300), st.data())
def test_a_brick_wall_band_has_its_points_halfway_between_indices(n, data):
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.integers(lo + 1, n))
    power = frequency_response(lambda x: band_pass(x, Band("b", lo, hi), dim=-2), n)
    lower, upper = half_power_points(power)
    assert math.isnan(lower) if lo == 0 else lower == pytest.approx(lo - 0.5, abs=1e-9)
    assert math.isnan(upper) if hi == n else upper == pytest.approx(hi - 0.5, abs=1e-9)


def test_half_power_points_interpolate_and_read_from_the_peak():
    r = np.array([0.0, 0.25, 0.75, 1.0, 0.9, 0.6, 0.2, 0.0, 0.7, 0.0])  # a side lobe at 8 above 1/2
    lower, upper = half_power_points(r)
    assert lower == pytest.approx(1.5) and upper == pytest.approx(5.25)  # the crossings nearest the peak
    assert half_power_points(torch.tensor([1.0, 1.0, 0.0])) == (pytest.approx(math.nan, nan_ok=True), pytest.approx(1.5))
    low = half_power_points([0.1, 0.4, 0.2])
    assert math.isnan(low[0]) and math.isnan(low[1])  # no point reaches half the power
    with pytest.raises(ValueError, match="1-d"):
        half_power_points(np.zeros((2, 2)))


@SETTINGS
@given(st.integers(5, 700))
def test_brick_points_are_the_measured_points_of_the_paper_bands(n):
    bands = allocate_bands(n)
    points = brick_points(n)
    assert len(points) == 5 and math.isnan(points[0][0]) and math.isnan(points[-1][1])
    for band, want in zip(bands, points):
        got = half_power_points(frequency_response(lambda x, b=band: band_pass(x, b, dim=-2), n))
        np.testing.assert_allclose(got, want, atol=1e-9)


def test_brick_points_at_512_in_cycles_per_token():
    edges = [hi / 1024 for _, hi in brick_points(512)[:-1]]  # k / (2n) cycles per token
    assert edges == pytest.approx([1.5 / 1024, 8.5 / 1024, 33.5 / 1024, 129.5 / 1024])


# ------------------------------------------------------------------ smooth


@SETTINGS
@given(st.integers(16, 512))
def test_matched_smooth_bands_have_the_brick_wall_points(n):
    for band, target in zip(matched_bands(n, "smooth"), brick_points(n)):
        assert band.target == pytest.approx(target, nan_ok=True)
        assert octaves_off(measured(band), target) <= SMOOTH_TOLERANCE, (n, band.name, measured(band), target)
        assert band.error <= SMOOTH_TOLERANCE


def test_matched_smooth_edges_move_out_by_half_a_width_and_keep_the_shape():
    # an isolated Gaussian edge: gain 1/sqrt(2) at e when its centre is e 2^(w z), z = Phi^-1(1/sqrt 2) = 0.545
    mid = matched_bands(512, "smooth")[2]
    assert mid.centres[1] == pytest.approx(33.5 * 2 ** (SMOOTH_WIDTH * 0.5449), rel=0.02)
    assert mid.centres[0] == pytest.approx(8.5 * 2 ** (-SMOOTH_WIDTH * 0.5449), rel=0.05)
    # centred on the brick-wall edges, the gain is smooth_gain's exactly
    for b in allocate_bands(300):
        centres = (b.lo - 0.5 if b.lo else math.nan, b.hi - 0.5 if b.hi < 300 else math.nan)
        plain = MatchedBand("smooth", b.name, 300, (0, 0), (0, 0), centres=centres)
        torch.testing.assert_close(plain.gain(), smooth_gain(300, b), atol=1e-12, rtol=0)


@SETTINGS
@given(st.integers(16, 256))
def test_a_matched_smooth_band_is_its_gain_in_the_dct(n):
    band = matched_bands(n, "smooth")[1]
    x = torch.randn(3, n, 4, dtype=torch.float64)
    coefficients = scipy.fft.dct(x.numpy(), norm="ortho", axis=1) * band.gain().numpy()[:, None]
    want = torch.from_numpy(scipy.fft.idct(coefficients, norm="ortho", axis=1))
    torch.testing.assert_close(band(x), want)
    assert band(x.float()).dtype == torch.float32
    np.testing.assert_allclose(frequency_response(band, n).numpy(), band.gain().numpy() ** 2, atol=1e-12)


# ------------------------------------------------------------------ Haar


def test_matched_haar_bands_at_512_are_within_a_tenth_of_an_octave():
    for band, target in zip(matched_bands(512, "haar"), brick_points(512)):
        got = measured(band)
        assert got == pytest.approx(band.points, nan_ok=True, abs=1e-9)  # the search's numbers are the filter's
        assert octaves_off(got, target) <= HAAR_AT_512, (band.name, got, target)


@SETTINGS
@given(st.integers(64, 512))
def test_matched_haar_bands_of_long_windows_have_the_brick_wall_points(n):
    for band, target in zip(matched_bands(n, "haar"), brick_points(n)):
        assert octaves_off(measured(band), target) <= HAAR_LONG, (n, band.name, measured(band), target)


@SETTINGS
@given(st.integers(16, 200))
def test_a_matched_haar_band_is_an_orthogonal_projection_of_nested_blocks(n):
    eye = torch.eye(n, dtype=torch.float64)
    for band in matched_bands(n, "haar"):
        if band.fine and band.coarse:
            assert set(band.coarse) <= set(band.fine)  # coarse blocks are unions of fine ones
        for bounds in (band.fine, band.coarse):
            if bounds:
                assert bounds[0] == 0 and bounds[-1] == n and all(a < b for a, b in zip(bounds, bounds[1:]))
        p = band(eye[None])[0]  # column j: the band of the unit impulse at j
        torch.testing.assert_close(p, p.T)
        torch.testing.assert_close(p @ p, p, atol=1e-10, rtol=0)
    ones = torch.ones(1, n, 1, dtype=torch.float64)
    low, *_, high = matched_bands(n, "haar")
    torch.testing.assert_close(low(ones), ones)  # the lowest band keeps the mean
    torch.testing.assert_close(high(ones), torch.zeros_like(ones))  # the highest removes it


def test_matched_haar_highest_band_is_local_in_time():
    high = matched_bands(512, "haar")[-1]
    x = torch.zeros(1, 512, 1, dtype=torch.float64)
    x[0, 300] = 1.0
    out = high(x)[0, :, 0]
    block = max(b for b in high.coarse if b <= 300), min(b for b in high.coarse if b > 300)
    assert out[: block[0]].abs().max() == 0 and out[block[1] :].abs().max() == 0  # nothing leaves its block


def test_matched_bands_reject_bad_input():
    with pytest.raises(ValueError, match="family"):
        matched_bands(64, "db4")
    with pytest.raises(ValueError, match="at least 5"):
        matched_bands(4, "smooth")
    with pytest.raises(ValueError, match="width"):
        matched_bands(64, "smooth", width=-1.0)
    band = matched_bands(64, "haar")[2]
    with pytest.raises(ValueError, match="built for 64"):
        band(torch.zeros(1, 63, 2))
    with pytest.raises(ValueError, match="not diagonal"):
        band.gain()


@SETTINGS
@given(st.integers(16, 300), st.data())
def test_matched_rows_are_the_filtered_sequence_at_the_positions(n, data):
    positions = torch.tensor(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=12)))
    bands = [*matched_bands(n, "smooth"), *matched_bands(n, "haar")][:: data.draw(st.sampled_from([1, 2, 3]))]
    x = torch.randn(n, 5, dtype=torch.float64)
    for band, rows in zip(bands, matched_rows(x, positions, bands)):
        torch.testing.assert_close(rows, band(x[None])[0][positions], atol=1e-10, rtol=0)
    assert matched_rows(x.half(), positions, bands[:1])[0].dtype == torch.float16
    with pytest.raises(ValueError, match="built for"):
        matched_rows(x[:-1], positions, bands)


# ------------------------------------------------------------------ tables


def test_half_power_table_in_cycles_per_token():
    t = half_power_table(512)
    assert list(t["family"].unique()) == ["brick-wall", "smooth", "haar"] and list(t["band"][:5]) == list(BAND_NAMES)
    brick = t[t["family"] == "brick-wall"].set_index("band")
    assert brick.loc["MID", "lower"] == pytest.approx(8.5 / 1024) and brick.loc["MID", "upper"] == pytest.approx(33.5 / 1024)
    assert (brick["octaves_off"] == 0).all() and math.isnan(brick.loc["LOW", "lower"]) and math.isnan(brick.loc["HIGH", "upper"])
    smooth = t[t["family"] == "smooth"].set_index("band")
    np.testing.assert_allclose(smooth[["lower", "upper"]].to_numpy(), brick[["lower", "upper"]].to_numpy(), rtol=1e-6)
    assert (t.loc[t["family"] == "haar", "octaves_off"] <= HAAR_AT_512).all()
    assert HALF_POWER == 0.5


def test_match_errors_summarise_every_length_once():
    e = match_errors([40, 64, 64, 100])
    assert len(e) == 10 and (e["lengths"] == 3).all()
    row = e[(e["family"] == "haar") & (e["band"] == "MID")].iloc[0]
    errors = [matched_bands(n, "haar")[2].error for n in (40, 64, 100)]
    assert row["max"] == pytest.approx(max(errors)) and row["median"] == pytest.approx(np.median(errors))
    assert row["within_0.1"] == pytest.approx(np.mean([v <= 0.1 for v in errors]))
