"""Multiresolution Haar decomposition across tokens, whose levels play the role of bands.

The paper (section 2.1, footnote 3) leaves "other spectral tools like wavelets" for
future work; this is the simplest one, along the token axis of each neuron.

Definition.  For a sequence of length ``n`` the level-``j`` *approximation* ``a_j``
replaces every position by the mean of its dyadic block ``[m 2^j, min((m + 1) 2^j, n))``
(``a_0 = x``).  The level-``j`` *detail* is ``d_j = a_{j-1} - a_j``: what changes
between blocks of ``2^(j-1)`` tokens inside blocks of ``2^j``.  After
``depth = ceil(log2 n)`` levels one block covers the sequence and ``a_depth`` is its
mean.  :func:`haar_levels` returns ``[d_1, ..., d_L, a_L]``, each reconstructed to the
input's shape; they sum back to ``x``.

Every ``a_j`` is the orthogonal projection onto functions constant on the level-``j``
blocks, and these spaces are nested, so the components are mutually orthogonal and
their energies add up to the input's (Parseval).  For ``n`` a power of two this is the
orthonormal Haar transform (each ``d_j`` is the level-``j`` detail coefficients times
their wavelets).  Any other length is handled without padding, by the *unbalanced*
Haar basis (Girardi & Sweldens, 1997) on the truncated dyadic blocks: the last block
of a level may be short, and when a level has an odd number of blocks the last one is
carried up unchanged (its detail there is zero).  Merging blocks ``A`` and ``B`` of
sizes ``p`` and ``q`` uses the wavelet ``sqrt(q / (p (p+q))) 1_A - sqrt(p / (q (p+q))) 1_B``,
which has unit norm and zero mean.  So reconstruction is exact, the components stay
orthogonal, and a constant signal has no detail at all: it goes wholly to the
approximation (zero or symmetric padding would break one of these).

Per-row lengths work as in :func:`prismlib.spectral.band_pass`: row ``i`` is decomposed
over its first ``lengths[i]`` positions, padding comes out zero in every component and
never influences the real positions.  A row of depth below the requested number of
levels has zero details beyond its depth (its approximation is already its mean).

Why hand-written: PyWavelets / ptwt pad every level (periodic, symmetric, zero, ...),
so their coefficients of a non-dyadic length are not an orthogonal decomposition of
the real positions, and they know no per-row lengths in a padded batch.  Haar needs
only block means, which plain torch does exactly and differentiably.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import torch
from torch import Tensor

from prismlib.spectral.bands import allocate_bands
from prismlib.spectral.checks import as_lengths, check_band_arg, check_length, check_tensor, int_lengths, norm_dim

__all__ = [
    "HaarBand",
    "haar_band_pass",
    "haar_bands",
    "haar_bands_for_lengths",
    "haar_depth",
    "haar_levels",
    "haar_nominal_index",
]


def haar_depth(n: int) -> int:
    """Levels after which one dyadic block covers a sequence of length ``n``: ``ceil(log2 n)``."""
    if n < 1:
        raise ValueError(f"a sequence needs a length of at least 1, got {n}")
    return (n - 1).bit_length()


def haar_nominal_index(level: int, n: int) -> float:
    """The DCT index (of a length-``n`` sequence) at the centre of level ``level``'s band.

    A level-``j`` Haar detail passes mostly periods of ``2^j`` to ``2^(j+1)`` tokens (its
    frequency response is half a sine at ``pi / 2^(j-1)`` ... ``pi / 2^j`` radians per
    token); its nominal period is their geometric mean ``2^(j + 1/2)`` tokens, which is
    DCT index ``k = 2 n / period = n 2^(1/2 - j)`` (see :func:`prismlib.spectral.true_period`).
    """
    if level < 1:
        raise ValueError(f"detail levels start at 1, got {level}")
    return n * 2.0 ** (0.5 - level)


@dataclass(frozen=True)
class HaarBand:
    """Detail levels ``lo .. hi - 1`` (half-open; level 1 is the finest), and with
    ``coarse`` also everything coarser: the approximation left after level ``hi - 1``.

    Filtering keeps ``a_{lo-1} - a_{hi-1}`` (or ``a_{lo-1}`` when ``coarse``), the sum of
    those components.  ``lo == hi`` without ``coarse`` is an empty band (it gives zeros).
    """

    name: str
    lo: int
    hi: int
    coarse: bool = False

    def __post_init__(self) -> None:
        if self.lo < 1 or self.hi < self.lo:
            raise ValueError(f"Haar band {self.name!r} = levels [{self.lo}, {self.hi}) is malformed; it needs 1 <= lo <= hi")

    @property
    def levels(self) -> tuple[int, ...]:
        """The detail levels of the band, finest first."""
        return tuple(range(self.lo, self.hi))


def haar_bands(n: int, k: int = 5, base: int = 4, names: Sequence[str] | None = None) -> list[HaarBand]:
    """The Haar levels of a length-``n`` sequence grouped like :func:`allocate_bands`' bands.

    Each detail level ``j = 1 .. haar_depth(n)`` goes to the band of ``allocate_bands(n)``
    that holds its nominal DCT index ``n 2^(1/2 - j)`` (:func:`haar_nominal_index`; band
    ``[lo, hi)`` holds ``lo - 1/2 <= index < hi - 1/2``, the edges of
    :func:`prismlib.spectral.smooth_gain`), and the final approximation (the mean) goes
    to the lowest band.  The bands of Table 3a are about two octaves wide, so for
    ``n = 512`` HIGH is levels 1-2 (periods 2-8 tokens), MID-HIGH 3-4, MID 5-6, MID-LOW
    7-8 and LOW level 9 and the mean.

    Where this leaves a band empty although the ``depth + 1`` components could fill
    every band (lengths 9 .. 4096: only ``n = 15``), the band boundaries are moved the
    least so that each band gets a level.  Below ``n = 9`` there are fewer components
    than bands and some bands stay empty (their filter gives zeros).

    Returns:
        ``k`` :class:`HaarBand` objects, lowest frequencies first (the order of
        :func:`allocate_bands`); together they hold every level exactly once.
    """
    bands = allocate_bands(n, k, base, names)
    depth = haar_depth(n)
    # cut[i]: the number of levels finer than band i's lower edge (bands are taken highest first)
    cut = [sum(haar_nominal_index(j, n) >= b.lo - 0.5 for j in range(1, depth + 1)) for b in bands[1:]][::-1]
    if depth >= k - 1:  # every band can have a component: move the fewest boundaries
        for i in range(len(cut)):
            cut[i] = max(cut[i], (cut[i - 1] if i else 0) + 1)
        for i in reversed(range(len(cut))):
            cut[i] = min(cut[i], (cut[i + 1] if i + 1 < len(cut) else depth + 1) - 1)
    edges = [0, *cut, depth]  # highest band first: levels edges[i] + 1 .. edges[i + 1]
    out = [HaarBand(b.name, edges[i] + 1, edges[i + 1] + 1) for i, b in enumerate(bands[::-1])]
    out[-1] = HaarBand(out[-1].name, out[-1].lo, out[-1].hi, coarse=True)
    return out[::-1]


def haar_bands_for_lengths(lengths: Sequence[int] | Tensor, name: str, k: int = 5, base: int = 4) -> list[HaarBand]:
    """The Haar band called ``name`` (:func:`haar_bands`) for each row's own length.

    ``haar_band_pass(x, haar_bands_for_lengths(lengths, "MID"), lengths=lengths)``, as
    with :func:`prismlib.spectral.bands_for_lengths`.
    """
    lengths = int_lengths(lengths)
    out = []
    for n in lengths:
        bands = {b.name: b for b in haar_bands(n, k, base)}
        if name not in bands:
            raise ValueError(f"unknown band {name!r}; expected one of {sorted(bands)}")
        out.append(bands[name])
    return out


# --------------------------------------------------------------------------- computation


def _approximations(
    x: Tensor, d: int, lengths: list[int] | None, levels: int, keep: set[int] | None = None
) -> Iterator[tuple[int, Tensor]]:
    """Yield ``(j, a_j)`` for ``j = 0 .. levels`` (only those in ``keep`` when given), each
    ``a_j`` of ``x``'s shape along axis ``d``.

    With ``lengths`` (one per row of axis 0) every row uses its own truncated blocks and
    its padding is zero in every ``a_j``; ``a_0`` is ``x`` with its padding zeroed.
    """
    n = x.shape[d]
    last = d == x.ndim - 1
    xt = x.unsqueeze(-1) if last else x.movedim(d, -2)  # (..., n, h): whole rows of features

    def back(t: Tensor) -> Tensor:
        return t.squeeze(-1) if last else t.movedim(-2, d)

    # counts[..., m, 1]: real positions in block m, of shape (n, 1) or (batch, 1, ..., 1, n, 1)
    pos = torch.arange(n, device=x.device)
    real = None
    if lengths is None or min(lengths) == n:
        counts = torch.ones(n, 1, dtype=torch.int64, device=x.device)
    else:
        lens = torch.tensor(lengths, device=x.device).view(-1, *([1] * (xt.ndim - 1)))
        real = pos[:, None] < lens
        xt = torch.where(real, xt, torch.zeros((), dtype=x.dtype, device=x.device))
        counts = real.to(torch.int64)
    if keep is None or 0 in keep:
        yield 0, back(xt)
    means = xt
    for j in range(1, levels + 1):
        if means.shape[-2] % 2:
            means = torch.nn.functional.pad(means, (0, 0, 0, 1))
            counts = torch.nn.functional.pad(counts, (0, 0, 0, 1))
        pairs = counts.unflatten(-2, (-1, 2))  # (..., m, 2, 1)
        merged = pairs.sum(-2)
        weights = (pairs.double() / merged.clamp(min=1).unsqueeze(-2)).to(x.dtype)  # 0/0 -> 0: empty blocks
        means = (means.unflatten(-2, (-1, 2)) * weights).sum(-2)
        counts = merged
        if keep is not None and j not in keep:
            continue
        expanded = means.index_select(-2, pos >> j)
        if real is not None:
            expanded = torch.where(real, expanded, torch.zeros((), dtype=x.dtype, device=x.device))
        yield j, back(expanded)


def _prepare(x: Tensor, dim: int, lengths, check_finite: bool) -> tuple[int, list[int] | None]:
    check_tensor(x, check_finite=check_finite)
    d = norm_dim(x, dim)
    check_length(x.shape[d], dim)
    if lengths is None:
        return d, None
    if d == 0:
        raise ValueError("with per-row lengths, axis 0 is the batch axis; the token axis must be another one")
    return d, as_lengths(lengths, x.shape[0], x.shape[d])


def haar_levels(
    x: Tensor,
    levels: int | None = None,
    dim: int = -2,
    lengths: Sequence[int] | Tensor | None = None,
    *,
    check_finite: bool = True,
) -> list[Tensor]:
    """Haar multiresolution components of ``x`` along the token axis (see the module docstring).

    Args:
        x: floating-point tensor, typically ``(batch, length, hidden)`` with ``dim=-2``.
        levels: number of detail levels ``L``, ``0 .. haar_depth(length)``; default the
            full depth, so that the approximation is each row's mean.
        dim: token axis.
        lengths: optional real lengths, one per row of axis 0 (shape ``(batch,)``).
        check_finite: reject NaN/inf input.

    Returns:
        ``L + 1`` tensors of ``x``'s shape, dtype and device: the details
        ``d_1`` (finest: periods of 2-4 tokens) ... ``d_L`` and the approximation ``a_L``.
        They sum to ``x`` (on the real positions; padding is zero in each) and are
        mutually orthogonal along the token axis.

    Raises:
        ValueError: ``levels`` out of range, and the input errors of
            :func:`prismlib.spectral.band_pass`.
    """
    d, rows = _prepare(x, dim, lengths, check_finite)
    n = x.shape[d]
    depth = haar_depth(n)
    if levels is None:
        levels = depth
    if isinstance(levels, bool) or not isinstance(levels, int) or not 0 <= levels <= depth:
        raise ValueError(
            f"levels must be an integer in 0..{depth} for a length of {n} "
            f"(after ceil(log2 {n}) = {depth} levels one block covers the sequence), got {levels!r}"
        )
    approx = [a for _, a in _approximations(x, d, rows, levels)]
    return [fine - coarse for fine, coarse in zip(approx, approx[1:])] + [approx[-1]]


def haar_band_pass(
    x: Tensor,
    band: HaarBand | Sequence[HaarBand],
    dim: int = -2,
    lengths: Sequence[int] | Tensor | None = None,
    *,
    check_finite: bool = True,
) -> Tensor:
    """Keep the Haar components of ``band``: the wavelet analogue of :func:`~prismlib.spectral.band_pass`.

    The same conventions: ``band`` is one :class:`HaarBand` for every row or one per row
    of axis 0 (e.g. :func:`haar_bands_for_lengths`), and with ``lengths`` each row is
    decomposed over its own real length with zero padding that never leaks in.  The
    bands of :func:`haar_bands` sum back to the input.

    Args:
        x: floating-point tensor, typically ``(batch, length, hidden)`` with ``dim=-2``.
        band: the levels to keep.
        dim: token axis.
        lengths: optional real lengths, one per row of axis 0 (shape ``(batch,)``).
        check_finite: reject NaN/inf input.

    Returns:
        ``a_{lo-1} - a_{hi-1}`` (``a_{lo-1}`` for a ``coarse`` band), of ``x``'s shape.
    """
    check_band_arg(band, HaarBand)
    d, rows = _prepare(x, dim, lengths, check_finite)
    n = x.shape[d]
    per_row = not isinstance(band, HaarBand)
    if per_row and d == 0:
        raise ValueError("with per-row bands, axis 0 is the batch axis; the token axis must be another one")
    bands = list(cast(Sequence[HaarBand], band)) if per_row else [cast(HaarBand, band)]
    if per_row and len(bands) != x.shape[0]:
        raise ValueError(f"got {len(bands)} Haar bands for a batch of {x.shape[0]} rows (axis 0)")
    depth = haar_depth(n)
    # the sign with which each a_j enters each row: +1 at lo - 1, -1 at hi - 1 (levels beyond
    # the depth have the same a_j as the depth: the mean)
    sign = torch.zeros(len(bands), depth + 1, dtype=torch.float64)
    for i, b in enumerate(bands):
        sign[i, min(b.lo - 1, depth)] += 1
        if not b.coarse:
            sign[i, min(b.hi - 1, depth)] -= 1
    used = sign.abs().sum(0).nonzero().flatten().tolist()
    if not used:  # only empty bands
        return x.new_zeros(x.shape)
    shape = [1] * x.ndim
    shape[0] = -1 if per_row else 1
    out = None
    for j, a in _approximations(x, d, rows, used[-1], keep=set(used)):
        term = a * sign[:, j].to(dtype=x.dtype, device=x.device).view(shape)
        out = term if out is None else out + term
    assert out is not None  # a_j of used[-1] at least
    return out
