"""Smooth and Haar bands matched to the brick-wall bands' -3 dB points (notebook 09).

**The brick-wall edges.**  Index ``k`` of an ``n``-point DCT-II oscillates at ``k / (2n)``
cycles per token.  A brick-wall band ``[lo, hi)`` (:func:`~prismlib.spectral.band_pass`)
keeps the energy of every cosine ``lo .. hi - 1`` and none of the others: its *power
response* (the share of each DCT cosine's energy a filter keeps,
:func:`~prismlib.spectral.frequency_response`) steps from 1 to 0 between two indices.
Read, as every filter's here, by linear interpolation of the power response between DCT
indices (:func:`half_power_points`), it crosses 1/2 (-3 dB) at ``k = lo - 1/2`` and
``k = hi - 1/2``: ``(lo - 1/2) / (2n)`` and ``(hi - 1/2) / (2n)`` cycles per token
(:func:`brick_points`).  The lowest band keeps the mean and has no lower point; the
highest has no upper one.

**Why match.**  The smooth bands of :func:`~prismlib.spectral.smooth_gain` put their
edge's centre on the brick-wall edge: amplitude 1/2 there, a quarter of the power
(-6 dB), and a tail beyond it.  The Haar levels are dyadic (blocks of ``2^j`` tokens)
and roll off slowly, so a Haar band passes much of its neighbours (at ``n = 512``
Haar HIGH keeps a fifth of the energy in the middle of MID-HIGH).  A comparison of
"smooth against brick-wall" then also compares bandwidths.  Here each band of a family
is given the free parameters that put *its own* -3 dB points on its brick-wall band's:

``smooth``
    :func:`~prismlib.spectral.smooth_gain`'s edges (the same shape and width in octaves),
    each centred at a real index ``c`` instead of ``b - 1/2``::

        g(k) = F(log2(k / c_lo) / width) - F(log2(k / c_hi) / width)

    with ``c_lo, c_hi`` solved (Brent's method) so that the interpolated power response
    crosses 1/2 exactly at the brick-wall points.  For an edge far from the other this is
    ``c = e * 2^(-/+ width * z)`` with ``F(z) = 1/sqrt(2)`` (``z = 0.545`` for the
    Gaussian): each edge moves out by about half a width.
``haar``
    A Haar band of levels ``lo .. hi - 1`` keeps ``P_a x - P_b x`` with ``P_L`` the
    projection onto functions constant on blocks of ``a = 2^(lo-1)`` and ``b = 2^(hi-1)``
    tokens (:mod:`prismlib.spectral.wavelets`).  The block lengths are freed from powers
    of two: the fine blocks end at the whole tokens nearest to ``m a`` (``m = 1, 2, ...``,
    the last block cut at ``n``), the coarse ones at the fine boundaries nearest to ``m b``,
    so the coarse blocks are unions of fine ones and ``P_a - P_b`` stays an orthogonal
    projection, local in time (an unbalanced Haar band).  The highest band keeps
    ``x - P_b x``, the lowest ``P_a x`` (the mean included).  The fine length sets the upper
    -3 dB point, the coarse the lower: each is found by bisection on its point's distance
    from the brick-wall one (from a box filter's half-power length), refined on a grid of
    1/64 octave, widened to a search over two octaves where that leaves the band more than
    :data:`HAAR_TOLERANCE` off, and both are refined once more together.  Blocks are whole
    tokens, so the points coincide within a tolerance, not exactly
    (:attr:`MatchedBand.error`: at ``n = 512`` within 0.1 octave, 7%; tests hold it).

**What matching gives up.**  The five matched bands of a family no longer sum back to the
input (neighbours overlap at half power, not at half amplitude) and the matched Haar bands
are not mutually orthogonal: each band is compared with its own brick-wall band, not the
five with the decomposition.  Parameters depend on the length ``n`` (the brick-wall bands
do: :func:`~prismlib.spectral.allocate_bands`) and are computed once per length
(:func:`matched_bands`, cached).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import scipy.fft
import torch
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri
from torch import Tensor

from prismlib.spectral.bands import allocate_bands
from prismlib.spectral.filters import band_pass, frequency_response
from prismlib.spectral.smooth import SMOOTH_SHAPES, SMOOTH_WIDTH, SmoothShape
from prismlib.spectral.transform import dct, idct

__all__ = [
    "HAAR_TOLERANCE",
    "HALF_POWER",
    "MATCHED_FAMILIES",
    "MatchedBand",
    "brick_points",
    "matched_rows",
    "half_power_points",
    "half_power_table",
    "match_errors",
    "matched_bands",
]

HALF_POWER = 0.5
"""The -3 dB level of a power response (10 log10(1/2) = -3.01 dB)."""

MATCHED_FAMILIES: tuple[str, ...] = ("smooth", "haar")
"""The families :func:`matched_bands` matches to the brick-wall bands."""

HAAR_TOLERANCE = 0.1
"""Octaves: a matched Haar point further than this from its target widens the search."""

NAN = float("nan")


def half_power_points(power: Sequence[float] | np.ndarray | Tensor) -> tuple[float, float]:
    """Where a band's power response crosses 1/2 on each side of its peak, in DCT-index units.

    ``power[k]`` is the share of the energy of DCT cosine ``k`` that the filter keeps
    (:func:`~prismlib.spectral.frequency_response`); between indices it is read by linear
    interpolation, so a brick-wall band ``[lo, hi)`` gives exactly ``lo - 1/2`` and
    ``hi - 1/2``.  Divide by ``2n`` for cycles per token.

    Returns:
        ``(lower, upper)``: the last crossing below the peak and the first above it; NaN
        where the response stays at or above 1/2 to the end of the spectrum (no edge on
        that side), and both NaN when the peak itself is below 1/2.
    """
    r = np.asarray(power.detach().cpu() if isinstance(power, Tensor) else power, dtype=np.float64)
    if r.ndim != 1 or len(r) == 0:
        raise ValueError(f"expected a 1-d power response, got shape {r.shape}")
    m = int(np.argmax(r))
    if r[m] < HALF_POWER:
        return NAN, NAN
    lower = upper = NAN
    below = np.flatnonzero(r[:m] < HALF_POWER)
    if len(below):
        k = int(below[-1])
        lower = k + (HALF_POWER - r[k]) / (r[k + 1] - r[k])
    above = np.flatnonzero(r[m:] < HALF_POWER)
    if len(above):
        k = m + int(above[0])
        upper = k - 1 + (r[k - 1] - HALF_POWER) / (r[k - 1] - r[k])
    return float(lower), float(upper)


def brick_points(n: int, k: int = 5, base: int = 4) -> list[tuple[float, float]]:
    """The -3 dB points ``(lo - 1/2, hi - 1/2)`` of each band of ``allocate_bands(n, k, base)``
    in DCT-index units (NaN below the band that keeps the mean and above the band that
    reaches ``n``); divide by ``2n`` for cycles per token."""
    return [(b.lo - 0.5 if b.lo > 0 else NAN, b.hi - 0.5 if b.hi < n else NAN) for b in allocate_bands(n, k, base)]


def _octaves_off(points: tuple[float, float], target: tuple[float, float]) -> float:
    """The larger ``|log2(point / target)|`` over the sides where the target has a point
    (inf where the band has none there)."""
    worst = 0.0
    for p, t in zip(points, target):
        if math.isnan(t):
            continue
        worst = max(worst, abs(math.log2(p / t)) if p > 0 and math.isfinite(p) else math.inf)
    return worst


@dataclass(frozen=True)
class MatchedBand:
    """One band of a matched family for sequences of ``n`` tokens (:func:`matched_bands`).

    Attributes:
        family: ``smooth`` or ``haar``.
        name: the band (``LOW`` ... ``HIGH``).
        n: the sequence length it is built for.
        target: the brick-wall band's -3 dB points (:func:`brick_points`), index units.
        points: this band's own -3 dB points (:func:`half_power_points` of its power
            response), index units.
        centres: ``smooth``: the real indices its two edges are centred on (NaN: no edge).
        fine, coarse: ``haar``: block boundaries (``0 .. n``) of the partitions whose
            projections it keeps and removes (``fine`` empty: the identity; ``coarse``
            empty: nothing removed).
        width, shape: ``smooth``: the edges' width in octaves and shape.
    """

    family: str
    name: str
    n: int
    target: tuple[float, float]
    points: tuple[float, float]
    centres: tuple[float, float] = (NAN, NAN)
    fine: tuple[int, ...] = ()
    coarse: tuple[int, ...] = ()
    width: float = SMOOTH_WIDTH
    shape: SmoothShape = "gaussian"

    @property
    def error(self) -> float:
        """The larger distance, in octaves, of :attr:`points` from :attr:`target`."""
        return _octaves_off(self.points, self.target)

    def gain(self) -> Tensor:
        """``(n,)`` float64 amplitude gain per DCT index (``smooth`` bands only)."""
        if self.family != "smooth":
            raise ValueError(f"a {self.family} band has no gain per DCT index: it is not diagonal in the DCT")
        return _smooth_gain(self.n, self.centres, self.width, self.shape)

    def __call__(self, x: Tensor) -> Tensor:
        """Filter ``x`` of shape ``(..., n, hidden)`` along its token axis (-2).

        Returns:
            The filtered tensor, same shape and dtype (computed in float64 for float64
            input, float32 otherwise).
        """
        if x.shape[-2] != self.n:
            raise ValueError(f"this band is built for {self.n} tokens; got {x.shape[-2]} along axis -2")
        work = x if x.dtype == torch.float64 else x.float()
        if self.family == "smooth":
            out = idct(dct(work, dim=-2) * self.gain().to(work)[:, None], dim=-2)
        else:
            kept = work if not self.fine else _block_means(work, self.fine)
            out = kept - _block_means(work, self.coarse) if self.coarse else kept
        return out.to(x.dtype)


# --------------------------------------------------------------------------- smooth


def _cdf(z: np.ndarray, shape: str) -> np.ndarray:
    """The edge's unit-variance CDF (:func:`~prismlib.spectral.smooth_gain`'s ``F``)."""
    z = np.asarray(z, dtype=np.float64)
    if shape == "gaussian":
        return ndtr(z)
    return 1.0 / (1.0 + np.exp(-z * (math.pi / math.sqrt(3.0))))


def _quantile(p: float, shape: str) -> float:
    """``F^{-1}(p)`` of :func:`_cdf`."""
    if shape == "gaussian":
        return float(ndtri(p))
    return math.log(p / (1 - p)) * math.sqrt(3.0) / math.pi


def _gain_at(k: np.ndarray, centres: tuple[float, float], width: float, shape: str) -> np.ndarray:
    """``F(log2(k / c_lo) / width) - F(log2(k / c_hi) / width)`` at the indices ``k`` (a NaN
    centre: no edge on that side), in the numerically careful form of ``smooth_gain``."""
    with np.errstate(divide="ignore"):
        octave = np.log2(np.asarray(k, dtype=np.float64))  # -inf at k = 0
    c_lo, c_hi = centres
    z_lo = np.full(octave.shape, np.inf) if math.isnan(c_lo) else (octave - math.log2(c_lo)) / width
    z_hi = np.full(octave.shape, -np.inf) if math.isnan(c_hi) else (octave - math.log2(c_hi)) / width
    below = _cdf(z_lo, shape) - _cdf(z_hi, shape)
    above = _cdf(-z_hi, shape) - _cdf(-z_lo, shape)
    return np.clip(np.where(z_hi > 0, above, below), 0.0, 1.0)


def _smooth_gain(n: int, centres: tuple[float, float], width: float, shape: str) -> Tensor:
    """``(n,)`` float64: :func:`_gain_at` every DCT index ``0 .. n-1``."""
    return torch.from_numpy(_gain_at(np.arange(n), centres, width, shape))


def _match_smooth(n: int, index: int, width: float, shape: SmoothShape) -> MatchedBand:
    """The smooth band whose interpolated power crosses 1/2 at the brick-wall point ``e = b - 1/2``
    of each edge: between indices ``b - 1`` and ``b`` that is ``g(b-1)^2 + g(b)^2 = 1``, solved
    for the edge's centre by Brent's method (from the isolated edge's closed form)."""
    target = brick_points(n)[index]
    band = allocate_bands(n)[index]
    z = _quantile(math.sqrt(HALF_POWER), shape)  # amplitude 1/sqrt(2) is half the power
    c_lo = target[0] * 2 ** (-width * z) if not math.isnan(target[0]) else NAN
    c_hi = target[1] * 2 ** (width * z) if not math.isnan(target[1]) else NAN

    def excess(b: int, centres: tuple[float, float]) -> float:
        return float((_gain_at(np.array([b - 1, b]), centres, width, shape) ** 2).sum() - 1.0)

    def solve(f, start: float) -> float:
        lo, hi = math.log(start / 4), math.log(start * 4)
        if f(math.exp(lo)) * f(math.exp(hi)) > 0:  # no root near: keep the closed form
            return start
        return math.exp(brentq(lambda v: f(math.exp(v)), lo, hi, xtol=1e-12))

    if width > 0:
        for _ in range(2):  # the two edges barely interact: a second pass settles them
            if not math.isnan(c_hi):
                c_hi = solve(lambda c, lo=c_lo: excess(band.hi, (lo, c)), c_hi)
            if not math.isnan(c_lo):
                c_lo = solve(lambda c, hi=c_hi: excess(band.lo, (c, hi)), c_lo)
    points = half_power_points(_gain_at(np.arange(n), (c_lo, c_hi), width, shape) ** 2)
    return MatchedBand("smooth", band.name, n, target, points, centres=(c_lo, c_hi), width=width, shape=shape)


# --------------------------------------------------------------------------- Haar


def _block_means(x: Tensor, bounds: Sequence[int]) -> Tensor:
    """Each token replaced by the mean of its block (``bounds``: ``0 = b_0 < ... < b_B = n``)
    along axis -2 of ``x`` (``(..., n, hidden)``): the projection ``P x``."""
    b = torch.as_tensor(bounds, device=x.device)
    sizes = b[1:] - b[:-1]
    csum = torch.nn.functional.pad(x.cumsum(-2), (0, 0, 1, 0))
    means = (csum.index_select(-2, b[1:]) - csum.index_select(-2, b[:-1])) / sizes[:, None].to(x.dtype)
    return means.repeat_interleave(sizes, dim=-2)


def _bounds(n: int, length: float, within: Sequence[int] = ()) -> tuple[int, ...]:
    """Blocks of about ``length`` tokens: the boundaries nearest to ``m * length`` (``m = 0,
    1, ...``) and ``n``, taken among ``within`` (the boundaries of a finer partition, so that
    every block is a union of its blocks; default every token boundary ``0 .. n``)."""
    want = np.arange(0, n / length) * length
    if not within:
        cut = np.round(want).astype(np.int64)
    else:
        f = np.asarray(within)
        i = np.clip(np.searchsorted(f, want), 1, len(f) - 1)
        cut = np.where(want - f[i - 1] <= f[i] - want, f[i - 1], f[i])
    cut = np.append(cut[cut < n], n)
    return tuple(cut[np.diff(cut, prepend=-1) > 0].tolist())  # sorted: drop repeats


@lru_cache(maxsize=4)
def _cosine_sums(n: int) -> np.ndarray:
    """``(n + 1, n)``: row ``b`` holds the sums over tokens ``0 .. b-1`` of every unit DCT
    cosine (column ``k``: index ``k``)."""
    cos = scipy.fft.idct(np.eye(n), norm="ortho", axis=0)  # column k: the unit cosine of index k over the tokens
    return np.concatenate([np.zeros((1, n)), np.cumsum(cos, axis=0)])


def _energy(bounds: Sequence[int], csum: np.ndarray) -> np.ndarray:
    """``||P c_k||^2`` of the DCT cosines ``c_k`` whose running sums are the columns of
    ``csum``, for the block projection ``P`` of ``bounds``: ``sum_blocks (block sum)^2 / size``."""
    b = np.asarray(bounds)
    sums = np.diff(csum[b], axis=0)
    return (sums * sums).T @ (1.0 / np.diff(b))


def _box_length(index: float, n: int) -> float:
    """The box length ``L`` whose mean keeps half the power at DCT index ``index``:
    ``(sin(pi f L) / (L sin(pi f)))^2 = 1/2`` with ``f = index / (2n)`` (at most ``n``)."""
    f = index / (2 * n)

    def half(L: float) -> float:
        return (math.sin(math.pi * f * L) / (L * math.sin(math.pi * f))) ** 2 - HALF_POWER

    top = min(0.6 / f, float(n))
    if half(1.0) <= 0:
        return 1.0
    if half(top) >= 0:
        return top
    return brentq(half, 1.0, top)


def _match_haar(n: int, index: int) -> MatchedBand:
    target = brick_points(n)[index]
    name = allocate_bands(n)[index].name
    # the search reads the response between half the lower target and twice the upper one
    k0 = 0 if math.isnan(target[0]) else max(0, math.floor(target[0] / 2) - 1)
    k1 = n if math.isnan(target[1]) else min(n, math.ceil(target[1] * 2) + 2)
    csum = np.ascontiguousarray(_cosine_sums(n)[:, k0:k1])
    energies: dict[tuple[int, ...], np.ndarray] = {(): np.ones(k1 - k0)}

    def energy(bounds: tuple[int, ...]) -> np.ndarray:
        if bounds not in energies:
            energies[bounds] = _energy(bounds, csum)
        return energies[bounds]

    def build(fine_len: float | None, coarse_len: float | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        fine = _bounds(n, fine_len) if fine_len else ()
        return fine, (_bounds(n, coarse_len, fine) if coarse_len else ())

    scores: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[float, tuple[float, float]]] = {}

    def score(fine_len: float | None, coarse_len: float | None) -> tuple[float, tuple[float, float]]:
        key = build(fine_len, coarse_len)
        if key not in scores:
            fine, coarse = key
            lower, upper = half_power_points(energy(fine) - (energy(coarse) if coarse else 0.0))
            points = (lower + k0, upper + k0)
            scores[key] = (_octaves_off(points, target), points)
        return scores[key]

    def search(start: float, lo: float, side: int, length_of, wide: bool) -> float:
        """The block length (in ``[lo, n]``) that puts the band's ``side`` point (0 lower, 1
        upper) nearest its target: bisection on the point's log-distance from the target (a
        longer block lowers it), a 1/64-octave grid over an eighth of an octave around the
        result (alone on the second pass, from the first's), and an eighth-octave grid over
        two octaves around ``start`` when that is still more than :data:`HAAR_TOLERANCE` off."""

        def err(v: float) -> float:
            return score(*length_of(v))[0]

        def miss(v: float) -> float:
            p = score(*length_of(v))[1][side]
            return (1.0 if side == 0 else -1.0) if math.isnan(p) else math.log(p / target[side])

        a, b = math.log(lo), math.log(n)
        best = start
        if wide and miss(math.exp(a)) > 0 > miss(math.exp(b)):
            for _ in range(10):
                mid = (a + b) / 2
                a, b = (mid, b) if miss(math.exp(mid)) > 0 else (a, mid)
            best = min((math.exp(a), math.exp(b)), key=err)
        best = min((min(max(best * 2 ** (j / 64), lo), n) for j in range(-4, 5)), key=err)
        if wide and err(best) > HAAR_TOLERANCE:
            broad = min((min(max(start * 2 ** (j / 8), lo), n) for j in range(-8, 9)), key=err)
            best = min([best, *(min(max(broad * 2 ** (j / 64), lo), n) for j in range(-8, 9))], key=err)
        return best

    # the fine blocks set the upper point (None: the identity), the coarse the lower (None: nothing removed)
    fine_len = _box_length(target[1], n) if not math.isnan(target[1]) else None
    coarse_len = _box_length(target[0], n) if not math.isnan(target[0]) else None
    for wide in (True, False):  # a second, local pass settles the (weak) interaction of the two
        if fine_len is not None:
            fine_len = search(fine_len, 1.0, 1, lambda v, c=coarse_len: (v, c), wide)
        if coarse_len is not None:
            coarse_len = search(coarse_len, (fine_len or 1.0) * 1.01, 0, lambda v, f=fine_len: (f, v), wide)
    fine, coarse = build(fine_len, coarse_len)
    full = _cosine_sums(n)
    power = (_energy(fine, full) if fine else np.ones(n)) - (_energy(coarse, full) if coarse else 0.0)
    return MatchedBand("haar", name, n, target, half_power_points(power), fine=fine, coarse=coarse)


# --------------------------------------------------------------------------- public


@lru_cache(maxsize=4096)
def matched_bands(n: int, family: str, width: float = SMOOTH_WIDTH, shape: SmoothShape = "gaussian") -> tuple[MatchedBand, ...]:
    """The five bands of ``family`` (``smooth`` or ``haar``) for ``n`` tokens, each with its
    -3 dB points on the brick-wall band's (module docstring), lowest band first.

    Args:
        n: sequence length (at least 5: one DCT index per band).
        family: one of :data:`MATCHED_FAMILIES`.
        width, shape: the smooth edges (:func:`~prismlib.spectral.smooth_gain`); ignored for ``haar``.

    Returns:
        Five :class:`MatchedBand` (cached per argument tuple: the search runs once per length).
    """
    if family not in MATCHED_FAMILIES:
        raise ValueError(f"family must be one of {MATCHED_FAMILIES}, got {family!r}")
    if shape not in SMOOTH_SHAPES or not width >= 0:
        raise ValueError(f"a smooth edge needs a shape in {SMOOTH_SHAPES} and a width >= 0 octaves, got {shape!r}, {width!r}")
    if n < 5:
        raise ValueError(f"five bands need at least 5 tokens, got {n}")
    if family == "smooth":
        return tuple(_match_smooth(n, i, width, shape) for i in range(5))
    return tuple(_match_haar(n, i) for i in range(5))


def matched_rows(x: Tensor, positions: Tensor | Sequence[int], bands: Sequence[MatchedBand]) -> list[Tensor]:
    """Each band's filtered ``x`` at the chosen positions only: ``[band(x)[positions] for band in bands]``
    for one sequence, without the full filtered sequences.

    The smooth bands share one DCT of ``x`` (``scipy.fft``) and one product with the
    cosines at the positions; the Haar bands share one running sum over the tokens, from
    which a position's block mean is two reads.  No gradient flows (numpy inside).

    Args:
        x: ``(n, hidden)`` one sequence (any float dtype; computed in float64 for float64,
            float32 otherwise).
        positions: ``(k,)`` token positions.
        bands: :class:`MatchedBand` s built for ``n`` tokens.

    Returns:
        One ``(k, hidden)`` tensor per band, in ``x``'s dtype.
    """
    n = x.shape[0]
    if x.ndim != 2 or any(b.n != n for b in bands):
        raise ValueError(f"expected one (n, hidden) sequence and bands built for its {n} tokens")
    dtype = np.float64 if x.dtype == torch.float64 else np.float32
    a: np.ndarray = x.detach().cpu().numpy().astype(dtype)
    p = np.asarray(positions.cpu() if isinstance(positions, Tensor) else positions, dtype=np.int64)
    out: dict[int, np.ndarray] = {}
    smooth = [i for i, b in enumerate(bands) if b.family == "smooth"]
    if smooth:  # x[t] = sum_k C[k, t] X[k]: the inverse DCT at the positions only, every smooth band at once
        coef = scipy.fft.dct(a, axis=0, norm="ortho")
        k = np.arange(n)[:, None]
        back = np.cos(np.pi * k * (2 * p[None, :] + 1) / (2 * n)) * math.sqrt(2.0 / n)  # C[:, p]
        back[0] /= math.sqrt(2.0)
        gains = np.stack([bands[i].gain().numpy() for i in smooth])  # (s, n)
        rows = ((gains[:, None, :] * back.T[None]).astype(dtype)) @ coef  # (s, k, hidden)
        out.update(zip(smooth, rows))
    if len(smooth) < len(bands):
        csum = np.concatenate([np.zeros((1, a.shape[1]), dtype), np.cumsum(a, axis=0)])

        def means_at(bounds: tuple[int, ...]) -> np.ndarray:
            edges = np.asarray(bounds)
            block = np.searchsorted(edges, p, side="right") - 1
            lo, hi = edges[block], edges[block + 1]
            return (csum[hi] - csum[lo]) / (hi - lo).astype(dtype)[:, None]

        for i, band in enumerate(bands):
            if band.family == "haar":
                kept = means_at(band.fine) if band.fine else a[p]
                out[i] = kept - means_at(band.coarse) if band.coarse else kept
    return [torch.from_numpy(np.ascontiguousarray(out[i])).to(x.dtype) for i in range(len(bands))]


def half_power_table(n: int) -> pd.DataFrame:
    """The -3 dB points of the brick-wall bands and of both matched families at length ``n``.

    Columns: ``family`` (``brick-wall``, ``smooth``, ``haar``), ``band``, ``lower``,
    ``upper`` (cycles per token; NaN: no edge on that side), ``octaves_off`` (the larger
    distance of the two from the brick-wall points; 0 for the brick wall itself).
    """
    rows: list[tuple[str, str, tuple[float, float], float]] = []
    for b in allocate_bands(n):
        brick = functools.partial(band_pass, band=b, dim=-2)
        rows.append(("brick-wall", b.name, half_power_points(frequency_response(brick, n)), 0.0))
    for family in MATCHED_FAMILIES:
        rows += [(family, m.name, half_power_points(frequency_response(m, n)), m.error) for m in matched_bands(n, family)]
    return pd.DataFrame(
        [{"family": f, "band": b, "lower": p[0] / (2 * n), "upper": p[1] / (2 * n), "octaves_off": e} for f, b, p, e in rows]
    )


def match_errors(lengths: Iterable[int]) -> pd.DataFrame:
    """How closely each matched band meets its brick-wall -3 dB points over ``lengths`` (e.g.
    every window length of a task).

    Returns:
        One row per family and band: ``lengths`` (distinct lengths), ``median`` and ``max``
        of :attr:`MatchedBand.error` (octaves) over them, and ``within_0.1`` (the share of
        lengths within a tenth of an octave).
    """
    distinct = sorted({int(n) for n in lengths})
    rows = []
    for family in MATCHED_FAMILIES:
        errors = np.array([[m.error for m in matched_bands(n, family)] for n in distinct])
        for i, name in enumerate(allocate_bands(512)):
            e = errors[:, i]
            rows.append(
                {
                    "family": family,
                    "band": name.name,
                    "lengths": len(distinct),
                    "median": float(np.median(e)),
                    "max": float(e.max()),
                    "within_0.1": float((e <= 0.1).mean()),
                }
            )
    return pd.DataFrame(rows)
