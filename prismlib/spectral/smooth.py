"""The smooth bands: the paper's bands with Gaussian or Butterworth edges of a stated width
in octaves (footnote 3).

:func:`smooth_gain` is the gain per DCT index (the brick-wall mask with each edge blurred in
log-frequency), :func:`smooth_step` one edge's gain (the leakage bound), and
:func:`smooth_band_pass` the filter ``idct(smooth_gain(n, band) * dct(x))`` with the
conventions of :func:`~prismlib.spectral.band_pass`; the five smooth bands of
``allocate_bands(n)`` still sum back to the input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import torch
from torch import Tensor

from prismlib.spectral.bands import Band
from prismlib.spectral.checks import check_band_arg, check_length, check_tensor, norm_dim
from prismlib.spectral.cost import fft_width, smooth_path
from prismlib.spectral.dct_backends import FFT_DTYPE, dct_matrix64
from prismlib.spectral.engine import apply_last2, cpu_filter, gain_cpu, on_cpu_pocket, row_keys, rowwise
from prismlib.spectral.filters import band_pass
from prismlib.spectral.transform import dct, idct

SmoothShape = Literal["gaussian", "butterworth"]

SMOOTH_WIDTH = 0.25
"""Default edge width of the smooth bands, in octaves of DCT index (see :func:`smooth_gain`)."""

SMOOTH_SHAPES: tuple[str, ...] = ("gaussian", "butterworth")
"""Edge shapes of :func:`smooth_gain`."""


def _check_smooth(width: float, shape: str) -> None:
    if shape not in SMOOTH_SHAPES:
        raise ValueError(f"shape must be one of {SMOOTH_SHAPES}, got {shape!r}")
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not math.isfinite(width) or width < 0:
        raise ValueError(f"width must be a finite number of octaves >= 0 (0 is the brick wall), got {width!r}")


def _step(z: Tensor, shape: str) -> Tensor:
    """The edge's unit-variance CDF ``F(z)``: Gaussian, or logistic (Butterworth)."""
    if shape == "gaussian":
        return torch.special.ndtr(z)
    return torch.sigmoid(z * (math.pi / math.sqrt(3.0)))


def smooth_step(octaves: float, *, width: float = SMOOTH_WIDTH, shape: SmoothShape = "gaussian") -> float:
    """Gain that one edge of a smooth band lets through ``octaves`` inside it.

    ``F(octaves / width)`` with ``F`` the edge's CDF (see :func:`smooth_gain`).  With a
    negative argument it is the leakage bound: a DCT index ``delta`` octaves outside a
    band keeps at most ``smooth_step(-delta)`` of its amplitude, so a pure cosine there
    keeps at most ``smooth_step(-delta) ** 2`` of its energy.
    """
    _check_smooth(width, shape)
    if width == 0:
        return 1.0 if octaves > 0 else 0.0 if octaves < 0 else 0.5
    return float(_step(torch.tensor(octaves / width, dtype=torch.float64), shape))


def smooth_gain(n: int, band: Band, *, width: float = SMOOTH_WIDTH, shape: SmoothShape = "gaussian") -> Tensor:
    """Gain per DCT index of the smooth version of ``band`` for a sequence of length ``n``.

    The brick-wall mask of ``band``, with each edge blurred in log-frequency.  A band's
    edge at ``b`` (``band.lo`` or ``band.hi``) sits halfway between indices ``b - 1`` and
    ``b``, at ``e = b - 1/2``; index ``k`` lies ``u = log2(k / e)`` octaves above it.  Then::

        g(k) = F(log2(k / e_lo) / width) - F(log2(k / e_hi) / width)

    where ``F`` is a CDF of zero mean and unit variance: the standard normal for
    ``shape="gaussian"``; the logistic ``1 / (1 + exp(-pi z / sqrt(3)))`` for
    ``"butterworth"``, which makes each edge the power response of a Butterworth filter
    of order ``pi / (2 sqrt(3) ln 2 width)`` (``1 / (1 + (e / k)^(2N))`` on the high
    side: low and high sides are complementary).  So ``width`` is the standard
    deviation of the edge in octaves (default :data:`SMOOTH_WIDTH` = 0.25: an index one
    octave outside a Gaussian band keeps ``Phi(-4) = 3.2e-5`` of its amplitude), the same
    for every edge and every length: the bands of :func:`allocate_bands` grow
    geometrically, so a relative width treats all edges, and all window lengths, alike.
    ``width = 0`` is the brick wall (exactly the mask of :func:`band_pass`).

    A band starting at 0 has no lower edge (its first term is 1; index 0, the mean, has
    ``u = -inf`` and goes wholly to it) and a band ending at ``n`` has no upper edge (its
    second term is 0).  Hence the gains of the contiguous bands of ``allocate_bands(n)``
    telescope to 1 at every index (a partition of unity, up to float rounding), and
    their filtered parts sum back to the input.

    Properties: ``0 <= g <= 1``; an index ``delta`` octaves outside the band has
    ``g <= F(-delta / width)`` (:func:`smooth_step`); an index ``delta_lo`` and
    ``delta_hi`` octaves inside both edges has ``g >= 1 - F(-delta_lo/width) - F(-delta_hi/width)``.

    Returns:
        float64 tensor of shape ``(n,)``.
    """
    _check_smooth(width, shape)
    band.check(n)
    k = torch.arange(n, dtype=torch.float64)
    if width == 0:
        return ((k >= band.lo) & (k < band.hi)).to(torch.float64)
    octave = torch.log2(k)  # -inf at k = 0
    inf = torch.full_like(k, math.inf)
    z_lo = inf if band.lo == 0 else (octave - math.log2(band.lo - 0.5)) / width
    z_hi = -inf if band.hi == n else (octave - math.log2(band.hi - 0.5)) / width
    # g = F(z_lo) - F(z_hi) = F(-z_hi) - F(-z_lo); take the form whose terms are small
    below = _step(z_lo, shape) - _step(z_hi, shape)
    above = _step(-z_hi, shape) - _step(-z_lo, shape)
    return torch.where(z_hi > 0, above, below).clamp(0.0, 1.0)


@lru_cache(maxsize=64)
def _smooth_matrix_cached(n: int, lo: int, hi: int, width: float, shape: SmoothShape, dtype: torch.dtype) -> Tensor:
    """``C^T diag(g) C`` (``n x n``, symmetric) of the smooth gain ``g`` of ``[lo, hi)``."""
    c = dct_matrix64(n)
    gain = smooth_gain(n, Band("b", lo, hi), width=width, shape=shape)
    return (c.T @ (gain[:, None] * c)).to(dtype).contiguous()


@lru_cache(maxsize=64)
def _smooth_gain_cached(n: int, lo: int, hi: int, width: float, shape: SmoothShape, dtype: torch.dtype, device: str) -> Tensor:
    return smooth_gain(n, Band("b", lo, hi), width=width, shape=shape).to(dtype=dtype, device=device)


def _smooth_seq(x: Tensor, lo: int, hi: int, width: float, shape: str) -> Tensor:
    """Smooth band ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    if lo == 0 and hi == n:
        return x
    if on_cpu_pocket(x):
        dtype, path = FFT_DTYPE.get(x.dtype, x.dtype), smooth_path(n, fft_width(x.device))
        if path == "matmul":
            op = _smooth_matrix_cached(n, lo, hi, float(width), shape, dtype)
        else:
            op = _smooth_gain_cached(n, lo, hi, float(width), shape, dtype, "cpu")
        return cpu_filter(x, functools.partial(gain_cpu, op=op, path=path))
    gain = _smooth_gain_cached(n, lo, hi, float(width), shape, x.dtype, str(x.device))
    return idct(dct(x, dim=-2) * gain[:, None], dim=-2)


def smooth_band_pass(
    x: Tensor,
    band: Band | Sequence[Band],
    dim: int = -2,
    lengths: Sequence[int] | Tensor | None = None,
    *,
    width: float = SMOOTH_WIDTH,
    shape: SmoothShape = "gaussian",
    check_finite: bool = True,
) -> Tensor:
    """Smooth band-pass along the token axis: ``idct(smooth_gain(n, band) * dct(x))``.

    The conventions of :func:`band_pass` (``dim``, per-row ``band`` and ``lengths``,
    padding that comes out zero and never influences the real positions); only the mask
    is the smooth gain of :func:`smooth_gain` (edges of standard deviation ``width``
    octaves, ``shape`` Gaussian or Butterworth).  The five smooth bands of
    ``allocate_bands(n)`` sum back to the input; ``width=0`` is :func:`band_pass` itself.

    Args:
        x: floating-point tensor, typically ``(batch, length, hidden)`` with ``dim=-2``.
        band: one :class:`Band` for every row, or one per row of axis 0 (e.g. from
            :func:`bands_for_lengths`); each row's gain is computed for its own length,
            so a band ending at that length has no upper edge.
        dim: token axis.
        lengths: optional real lengths, one per row of axis 0 (shape ``(batch,)``).
        width: edge standard deviation in octaves of DCT index, ``>= 0``.
        shape: ``"gaussian"`` or ``"butterworth"``.
        check_finite: reject NaN/inf input.

    Returns:
        Tensor of the same shape, dtype and device as ``x``.

    Raises:
        ValueError: a bad ``width`` or ``shape``, and every error of :func:`band_pass`.
    """
    _check_smooth(width, shape)
    if width == 0:
        return band_pass(x, band, dim, lengths, check_finite=check_finite)
    check_tensor(x, check_finite=check_finite)
    check_band_arg(band, Band)
    d = norm_dim(x, dim)
    n = x.shape[d]
    check_length(n, dim)
    per_row = not isinstance(band, Band)
    if lengths is None and not per_row:
        assert isinstance(band, Band)  # not per_row
        band.check(n)
        return apply_last2(x, d, lambda seq: _smooth_seq(seq, band.lo, band.hi, width, shape))
    keys = row_keys(x, band, d, lengths)
    return rowwise(x, d, keys, lambda seq, key: _smooth_seq(seq, key[1], key[2], width, shape))
