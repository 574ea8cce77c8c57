"""The paper's five bands (Table 3a) and their allocation for any length (Appendix A).

:class:`Band` is a half-open range of DCT indices; :func:`allocate_bands` splits ``n``
indices into ``k`` contiguous bands by Appendix A's rule (exactly Table 3a for ``n = 512``),
:func:`bands_for_lengths` gives each row of a batch the band of its own length, and
:func:`paper_period` / :func:`true_period` turn an index into a period in tokens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from torch import Tensor

from prismlib.spectral.checks import int_lengths

BAND_NAMES: tuple[str, ...] = ("LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
"""Names of the paper's five bands, lowest frequencies first (Table 3a)."""


@dataclass(frozen=True)
class Band:
    """A spectral band: the DCT indices ``lo, ..., hi - 1`` (half-open, like ``range``).

    The paper writes bands with inclusive ends (Table 3a: MID is "9-33"); here that is
    ``Band("MID", 9, 34)``; :attr:`last` gives the inclusive end.
    """

    name: str
    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo < 0 or self.hi <= self.lo:
            raise ValueError(f"band {self.name!r} = [{self.lo}, {self.hi}) is empty or negative; a band needs 0 <= lo < hi")

    @property
    def width(self) -> int:
        """Number of DCT indices in the band."""
        return self.hi - self.lo

    @property
    def last(self) -> int:
        """Inclusive last index, as the paper prints it."""
        return self.hi - 1

    def check(self, n: int) -> None:
        """Raise ``ValueError`` unless the band fits a sequence of length ``n``."""
        if self.hi > n:
            raise ValueError(
                f"band {self.name!r} = [{self.lo}, {self.hi}) does not fit a sequence of length {n} "
                f"(indices run 0..{n - 1}); use allocate_bands({n}) or bands_for_lengths(...) "
                "to get bands for this length"
            )


def allocation_table(n: int, k: int = 5, base: int = 4) -> list[dict[str, float | int]]:
    """The steps of Appendix A's allocation, one dict per band (lowest first).

    Keys: ``score`` (``base**i``), ``share`` (``(n - k) score / sum(scores)``), ``floor``,
    ``fraction`` (``share - floor``), ``extra`` (1 if the band got one of the leftover
    frequencies) and ``width`` (``1 + floor + extra``).  See :func:`allocate_bands`.
    """
    if k < 1:
        raise ValueError(f"need at least one band, got k={k}")
    if n < k:
        raise ValueError(f"a sequence of length {n} is shorter than the number of bands ({k}); every band needs at least one frequency")
    if base <= 0:
        raise ValueError(f"base must be positive, got {base}")
    scores = [Fraction(base) ** i for i in range(k)]
    share = [Fraction(n - k) * s / sum(scores) for s in scores]
    floors = [math.floor(a) for a in share]
    left = n - k - sum(floors)
    by_fraction = sorted(range(k), key=lambda i: (-(share[i] - floors[i]), i))
    extra = [int(i in by_fraction[:left]) for i in range(k)]
    return [
        {
            "score": int(scores[i]) if scores[i].denominator == 1 else float(scores[i]),
            "share": float(share[i]),
            "floor": floors[i],
            "fraction": float(share[i] - floors[i]),
            "extra": extra[i],
            "width": 1 + floors[i] + extra[i],
        }
        for i in range(k)
    ]


def allocate_bands(n: int, k: int = 5, base: int = 4, names: Sequence[str] | None = None) -> list[Band]:
    """Split ``n`` DCT indices into ``k`` contiguous bands by the paper's Appendix A rule.

    Every band first gets one frequency.  The remaining ``n - k`` are shared in
    proportion to the scores ``base**i`` (``i = 0`` is the lowest band):
    ``a_i = (n - k) base**i / sum_j base**j``; each band takes ``floor(a_i)``, and the
    frequencies still left go one each to the bands with the largest fractional parts
    ``a_i - floor(a_i)`` (ties to the lower band).  Exact rational arithmetic is used.

    For ``n = 512`` (``k = 5``, ``base = 4``) this is Table 3a: LOW 0-1, MID-LOW 2-8,
    MID 9-33, MID-HIGH 34-129, HIGH 130-511.

    Args:
        n: sequence length (number of DCT indices).
        k: number of bands.
        base: growth factor of the allocation scores.
        names: band names, lowest first; default :data:`BAND_NAMES` for ``k = 5``,
            else ``"B0" .. "B{k-1}"``.

    Returns:
        ``k`` :class:`Band` objects covering ``0..n-1``, lowest frequencies first.
    """
    if names is None:
        names = BAND_NAMES if k == len(BAND_NAMES) else tuple(f"B{i}" for i in range(k))
    if len(names) != k:
        raise ValueError(f"got {len(names)} names for {k} bands")
    alloc = [cast(int, row["width"]) for row in allocation_table(n, k, base)]
    bands, lo = [], 0
    for name, a in zip(names, alloc):
        bands.append(Band(name, lo, lo + a))
        lo += a
    return bands


def bands_for_lengths(lengths: Sequence[int] | Tensor, name: str, k: int = 5, base: int = 4) -> list[Band]:
    """The band called ``name`` of :func:`allocate_bands` for each row's own length.

    This is what the notebooks use for batches of windows of different real lengths:
    ``band_pass(x, bands_for_lengths(lengths, "MID"), lengths=lengths)``.
    """
    out = []
    for n in int_lengths(lengths):
        bands = {b.name: b for b in allocate_bands(n, k, base)}
        if name not in bands:
            raise ValueError(f"unknown band {name!r}; expected one of {sorted(bands)}")
        out.append(bands[name])
    return out


def paper_period(index: int, n: int) -> float:
    """Period in tokens as the paper's Table 3a computes it: ``n / (2 * index)``.

    (Section 3.1: "index 8 ... has a frequency of 2 * 8 = 16, and thus for inputs of size
    512 has a period of 512/16 = 32 tokens".)  Index 0 has an infinite period.
    """
    return math.inf if index == 0 else n / (2 * index)


def true_period(index: int, n: int) -> float:
    """Period in tokens of DCT-II basis ``index``: ``cos(pi/n (t + 1/2) index)`` repeats every
    ``2 n / index`` tokens, four times the paper's printed value."""
    return math.inf if index == 0 else 2 * n / index
