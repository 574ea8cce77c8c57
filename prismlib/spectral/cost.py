"""Which path computes a filter: the cost model of the band filters.

A band-pass is either thin DCT-matrix products or DCTs by the FFT; :data:`FFT_WIDTH` prices
one DCT by the FFT in DCT-matrix rows, and :func:`band_path`, :func:`smooth_path` and
:func:`split_plan` pick the cheaper path for a single band, a smooth band and a whole
decomposition (:func:`fft_flops`: the nominal flops of one DCT by the FFT).
:data:`POCKETFFT` switches the CPU's FFTs between pocketfft and ``torch.fft``.  The paths
themselves are :mod:`prismlib.spectral.engine`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

POCKETFFT = True
"""On the CPU, the FFT path runs pocketfft (``scipy.fft``) rather than ``torch.fft``."""


FFT_WIDTH = {"cpu": 150, "cuda": 1024}
"""Cost of one DCT of length ``n`` by the FFT, as the number of DCT-matrix rows whose thin
matrix product (``2 n`` flops per row and column) takes as long.  The filters pick the
cheaper of matrix products and FFTs by this model.  The CPU value was measured on a
2-core AMD EPYC (pocketfft with 2 workers against MKL's matrix products), idle, by
``python benchmarks/spectral.py --tables crossover``: the break-even thin width of one
band-pass of ``(8, n, 768)`` float32 was 125 to 175 rows for n = 512..8192 (median 159)
and scattered from 73 to 185 below (the FFT's time there varies by 2x between runs);
the CUDA value is an untuned guess that keeps long inputs on matrix products, as the GPU
path always did.  ``benchmarks/spectral.py`` prints the path chosen for each length and
its speed."""


def fft_width(device: torch.device | str) -> int:
    """:data:`FFT_WIDTH` of ``device``'s type (the CPU's for types it does not name)."""
    return FFT_WIDTH.get(torch.device(device).type, FFT_WIDTH["cpu"])


def fft_flops(n: int) -> float:
    """Nominal flops of one DCT of length ``n`` by the FFT: ``2.5 n log2 n`` (a real FFT)."""
    return 2.5 * n * math.log2(n) if n > 1 else 0.0


@lru_cache(maxsize=1024)
def band_path(n: int, lo: int, hi: int, fft_width: int) -> str:
    """How a single band-pass ``[lo, hi)`` of length ``n`` is computed, by the cost model of
    :data:`FFT_WIDTH` (``fft_width`` DCT-matrix rows cost as much as one DCT by the FFT).

    With ``thin = min(w, n - w)``, the rows of the band or of its complement, whichever
    are fewer (``w = hi - lo``):

    * ``"matmul"``: ``thin`` rows there and back (``2 thin`` rows), while ``thin <= fft_width``;
    * ``"fft+fft"``: a DCT by the FFT, the mask and the inverse DCT (``2 fft_width``), beyond.

    (One DCT by the FFT and the band back by its thin rows costs ``fft_width + thin``:
    never below both.)  ``"identity"`` for the whole spectrum.
    """
    w = hi - lo
    if w == n:
        return "identity"
    return "matmul" if min(w, n - w) <= fft_width else "fft+fft"


def smooth_path(n: int, fft_width: int) -> str:
    """How a smooth band (a gain on every DCT index) is computed: ``"matmul"``, one
    product with the symmetric ``n x n`` matrix ``C^T diag(g) C``, up to ``n = fft_width``,
    else ``"fft+fft"`` (two DCTs by the FFT).  By flops the square product (``2 n`` flops per
    row, ``n`` rows) would pay up to ``2 fft_width``; measured on the CPU (idle, (8, n, 768)
    float32, 11 rounds in turns) it won up to n = 128 and lost from 160 on (at n = 256:
    5.8 ms against 5.1 ms for the FFTs), where the FFT is cheaper than its nominal count."""
    return "matmul" if n <= fft_width else "fft+fft"


@dataclass(frozen=True)
class SplitPlan:
    """How :func:`split_seq` computes the band-passes of a partition of ``0..n-1``.

    ``rest`` is the band computed as the signal minus all the others (the widest one).
    With ``fft`` the coefficients come from one full DCT by the FFT, and each other band
    goes back by the thin rows of its indices (``2 n w`` flops per column) or, when it is
    wider than :data:`FFT_WIDTH`, by an inverse FFT of its masked coefficients.  Without
    ``fft`` the coefficients outside ``rest`` come from one thin matrix product and go back
    band by band: ``4 n (n - w_rest)`` flops per column for the whole decomposition.
    """

    n: int
    spans: tuple[tuple[int, int], ...]
    rest: int
    fft: bool
    fft_width: int

    def flops(self) -> float:
        """Arithmetic per column of the forward pass: ``2 n`` per DCT-matrix row applied
        (there and back) and ``2.5 n log2 n`` per DCT by the FFT (a real FFT's count; the
        O(n) twiddles, masks and the subtraction of the widest band are not counted)."""
        n = self.n
        fft = fft_flops(n)
        others = [hi - lo for i, (lo, hi) in enumerate(self.spans) if i != self.rest]
        if not self.fft:
            return 4.0 * n * sum(others)
        return fft + sum(fft if w > self.fft_width else 2.0 * n * w for w in others)


@lru_cache(maxsize=256)
def split_plan(n: int, spans: tuple[tuple[int, int], ...], fft_width: int) -> SplitPlan:
    widths = [hi - lo for lo, hi in spans]
    rest = max(range(len(spans)), key=lambda i: (widths[i], -i))
    others = [w for i, w in enumerate(widths) if i != rest]
    by_matmul = 2 * sum(others)
    by_fft = fft_width + sum(min(w, fft_width) for w in others)
    return SplitPlan(n, spans, rest, by_fft < by_matmul, fft_width)
