"""The brick-wall filters of "Language Through a Prism" (Tamkin et al., 2020), section 2.

* :func:`band_pass`, :func:`low_pass`, :func:`high_pass`: brick-wall filters
  (DCT -> zero the coefficients outside the band -> inverse DCT) along the token axis,
  optionally over each row's own real length so that padding never leaks in.
* :func:`band_decomposition`: all the bands of a partition at once (one forward transform,
  each band back from its own coefficients, the widest band as the signal minus the others).
* :func:`sector_band_pass`: each sector of hidden units with its own band (the prism layer).
* :func:`frequency_response`: the energy a linear filter along tokens keeps of each cosine.

The DCT is :mod:`prismlib.spectral.transform`, the bands :mod:`prismlib.spectral.bands`, the
smooth bands :mod:`prismlib.spectral.smooth` (wavelet levels as bands:
:mod:`prismlib.spectral.wavelets`).  How a filter is computed (thin DCT-matrix products or
FFTs, chosen by :mod:`prismlib.spectral.cost`; pocketfft and its own backward passes on the
CPU) is :mod:`prismlib.spectral.engine`.  Every filter is differentiable, runs on CPU and
CUDA and takes float64, float32, float16 and bfloat16, returning the input's dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from prismlib.spectral.bands import Band, allocate_bands
from prismlib.spectral.checks import as_lengths, check_band_arg, check_length, check_tensor, norm_dim
from prismlib.spectral.engine import (
    apply_last2,
    apply_last2_all,
    cpu_filter,
    filter_seq,
    on_cpu_pocket,
    row_keys,
    rowwise,
    rowwise_all,
    sectors_cpu,
    split_seq,
)
from prismlib.spectral.transform import idct


def band_decomposition(
    x: Tensor,
    bands: Sequence[Band] | None = None,
    dim: int = -2,
    lengths: Sequence[int] | Tensor | None = None,
    *,
    k: int = 5,
    base: int = 4,
    check_finite: bool = True,
) -> list[Tensor]:
    """All band-passes of ``x`` at once: ``[band_pass(x, b, dim, lengths) for b in bands]``.

    The bands share the work: one forward transform, each band back from its own
    coefficients, and the widest band as the signal minus the others.  For the paper's
    five bands that is about ``n**2`` flops per column on the matrix path instead of the
    ``2 n**2`` of five separate :func:`band_pass` calls, and three FFT-based DCTs instead
    of ten for long sequences.  Bands that do not partition the indices are filtered one
    by one.

    Args:
        x: floating-point tensor; ``dim`` is the token axis, as in :func:`band_pass`.
        bands: the bands, applied to every row; default :func:`allocate_bands` of the
            length (with ``lengths``: of each row's own length, so the ``i``-th output is
            the ``i``-th band of every row, as :func:`bands_for_lengths` gives it).
        dim: token axis.
        lengths: optional real lengths, one per row of axis 0, as in :func:`band_pass`.
        k, base: the allocation of the default bands (:func:`allocate_bands`).
        check_finite: reject NaN/inf input.

    Returns:
        One tensor per band, lowest band first, each of the shape, dtype and device of ``x``.
    """
    check_tensor(x, check_finite=check_finite)
    d = norm_dim(x, dim)
    n = x.shape[d]

    def spans_for(length: int) -> tuple[tuple[int, int], ...]:
        chosen = allocate_bands(length, k, base) if bands is None else list(bands)
        for b in chosen:
            b.check(length)
        return tuple((b.lo, b.hi) for b in chosen)

    if lengths is None:
        spans = spans_for(n)
        return apply_last2_all(x, d, lambda seq: split_seq(seq, spans))
    if d == 0:
        raise ValueError("with per-row lengths, axis 0 is the batch axis; the token axis must be another one")
    keys = [(length,) for length in as_lengths(lengths, x.shape[0], n)]
    return rowwise_all(x, d, keys, lambda seq, key: split_seq(seq, spans_for(key[0])))


def band_pass(
    x: Tensor,
    band: Band | Sequence[Band],
    dim: int = -2,
    lengths: Sequence[int] | Tensor | None = None,
    *,
    check_finite: bool = True,
) -> Tensor:
    """Brick-wall band-pass along the token axis: keep DCT indices ``band.lo .. band.hi-1``.

    Equivalent to ``idct(mask * dct(x, dim), dim)`` with orthonormal transforms.

    Args:
        x: floating-point tensor; ``dim`` is the token axis.  Typical shape
            ``(batch, length, hidden)`` with ``dim=-2`` (the default) or ``(length, hidden)``.
        band: one :class:`Band` for every row, or a sequence with one band per row of
            axis 0 (e.g. from :func:`bands_for_lengths`).
        dim: token axis.
        lengths: optional real lengths, one per row of axis 0 (shape ``(batch,)``).  Row
            ``i`` is then filtered over its first ``lengths[i]`` positions only, exactly as
            if it were filtered alone; its padding positions come out as zeros and never
            influence the real ones.
        check_finite: reject NaN/inf input (one pass over ``x``; switch off in hot loops
            that have already checked).

    Returns:
        Tensor of the same shape, dtype and device as ``x``.

    Raises:
        ValueError: integer or non-finite input, a band that does not fit a row's length,
            or malformed ``lengths``.
    """
    check_tensor(x, check_finite=check_finite)
    check_band_arg(band, Band)
    d = norm_dim(x, dim)
    n = x.shape[d]
    check_length(n, dim)
    per_row = not isinstance(band, Band)
    if lengths is None and not per_row:
        assert isinstance(band, Band)  # not per_row
        band.check(n)
        return apply_last2(x, d, lambda seq: filter_seq(seq, band.lo, band.hi))
    keys = row_keys(x, band, d, lengths)
    return rowwise(x, d, keys, lambda seq, key: filter_seq(seq, key[1], key[2]))


def sector_band_pass(x: Tensor, bands: Sequence[Band], slices: Sequence[slice], *, check_finite: bool = True) -> Tensor:
    """Band-pass each *sector* of hidden units with its own band along the token axis -2:
    the units ``slices[j]`` of the last axis keep DCT indices ``bands[j].lo .. bands[j].hi-1``
    (the prism layer's filter, for rows of full length ``n = x.shape[-2]``).

    Equal to ``torch.cat([band_pass(x[..., s], b) for b, s in zip(bands, slices)], -1)``; on
    the CPU every sector is written into one output buffer and the backward pass is the
    same filter (each sector's projection is symmetric).

    Args:
        x: ``(..., n, h)`` floating-point tensor.
        bands: one :class:`Band` per sector, each within ``0..n``.
        slices: contiguous unit ranges ``slice(start, stop)`` that cover ``0..h-1`` in
            order (e.g. :func:`prismlib.prism.sector_slices`).

    Returns:
        Tensor of the same shape, dtype and device as ``x``.
    """
    check_tensor(x, check_finite=check_finite)
    if x.ndim < 2:
        raise ValueError(f"expected a (..., length, hidden) tensor, got shape {tuple(x.shape)}")
    n, h = x.shape[-2], x.shape[-1]
    check_length(n, -2)
    bands, slices = list(bands), list(slices)
    if len(bands) != len(slices):
        raise ValueError(f"got {len(bands)} bands for {len(slices)} sectors: give one band per sector")
    starts = [0] + [sl.stop for sl in slices[:-1]]
    if (
        not slices
        or slices[-1].stop != h
        or any(sl.step not in (None, 1) or sl.start != a or sl.stop <= sl.start for sl, a in zip(slices, starts))
    ):
        raise ValueError(f"sectors {slices} do not cover the {h} units in order; build them with prismlib.prism.sector_slices({h}, k)")
    for band in bands:
        check_band_arg(band, Band)
        band.check(n)
    spans = tuple((b.lo, b.hi) for b in bands)
    if on_cpu_pocket(x):
        return cpu_filter(x, functools.partial(sectors_cpu, spans=spans, slices=tuple(slices)))
    return torch.cat([filter_seq(x[..., sl], lo, hi) for (lo, hi), sl in zip(spans, slices)], dim=-1)


def low_pass(x: Tensor, cutoff: int, dim: int = -2, lengths: Sequence[int] | Tensor | None = None, *, check_finite: bool = True) -> Tensor:
    """Keep DCT indices ``0 .. cutoff-1`` along ``dim`` (the paper's Fig. 3b ``low_pass(H, k)``).

    Shapes and ``lengths`` as in :func:`band_pass`; ``cutoff`` must be in ``1..length``.
    """
    return band_pass(x, Band("low", 0, cutoff), dim, lengths, check_finite=check_finite)


def high_pass(x: Tensor, cutoff: int, dim: int = -2, lengths: Sequence[int] | Tensor | None = None, *, check_finite: bool = True) -> Tensor:
    """Keep DCT indices ``cutoff .. length-1`` along ``dim`` (each row's own length).

    Shapes and ``lengths`` as in :func:`band_pass`; ``cutoff`` must be below every length.
    """
    check_tensor(x, check_finite=False)
    n = x.shape[norm_dim(x, dim)]
    if lengths is None:
        return band_pass(x, Band("high", cutoff, n), dim, check_finite=check_finite)
    rows = as_lengths(lengths, x.shape[0], n)
    return band_pass(x, [Band("high", cutoff, length) for length in rows], dim, lengths, check_finite=check_finite)


def frequency_response(fn: Callable[[Tensor], Tensor], n: int) -> Tensor:
    """Share of each DCT component's energy that a linear filter along tokens keeps.

    ``fn`` maps a ``(batch, n, 1)`` float64 batch to its filtered version (e.g.
    ``lambda x: haar_band_pass(x, band)``); it is fed the ``n`` orthonormal DCT basis
    vectors. For a filter diagonal in the DCT domain (brick-wall, smooth) this is the
    squared gain; for any other (Haar levels) the energy kept, wherever it lands.

    Returns:
        ``(n,)`` float64: ``||fn(c_k)||^2`` for the unit-norm cosine ``c_k`` of index ``k``.
    """
    basis = idct(torch.eye(n, dtype=torch.float64), dim=-1).unsqueeze(-1)  # row k: cosine k over the tokens
    return fn(basis).pow(2).sum(dim=(1, 2))
