"""Spectral tools of "Language Through a Prism" (Tamkin et al., 2020), section 2 and App. A.

* :func:`dct` / :func:`idct`: the DCT-II of Eq. 1 and its inverse along any dimension,
  orthonormal (``norm="ortho"``) or exactly as printed in Eq. 1 (``norm="eq1"``).
* :class:`Band` and :func:`allocate_bands`: the five spectral bands of Table 3a, from
  the allocation rule of Appendix A, for any sequence length.
* :func:`band_pass`, :func:`low_pass`, :func:`high_pass`: brick-wall filters
  (DCT -> zero the coefficients outside the band -> inverse DCT) along the token axis,
  optionally over each row's own real length so that padding never leaks in.
* :func:`smooth_band_pass`, :func:`smooth_gain`: the same bands with Gaussian or
  Butterworth edges of a stated width in octaves (the paper's footnote 3); the five
  smooth bands still sum back to the input.  (Wavelet levels as bands:
  :mod:`prismlib.spectral.wavelets`.)

How it is computed.  With the orthonormal DCT matrix ``C`` (``N x N``), keeping the
coefficients ``lo..hi-1`` is the orthogonal projection ``P = C_b^T C_b`` with
``C_b = C[lo:hi]``.  A narrow band is applied as two thin matrix products,
``C_b^T (C_b x)``, or as ``x - C_c^T (C_c x)`` through the complementary rows ``C_c``
when those are fewer: ``4 * min(w, N - w) * N`` flops per column (``w = hi - lo``),
exact up to float rounding, as large dense products that run near the machine's peak.
When that would cost more than DCTs by the FFT (the cost model of :data:`FFT_WIDTH`,
:func:`band_path`), the band goes through a DCT by the FFT, the mask and the inverse DCT.
A smooth band is one product with the ``N x N`` matrix ``C^T diag(g) C`` or the same two
FFTs (:func:`smooth_path`).  On the CPU a single filter runs as its own autograd function
(its backward pass is the same filter, the operator being symmetric), the inverse FFT in
place over the forward one's output and every product written into a preallocated
output; the FFT path then runs the same two pocketfft transforms as scipy's
``idct(mask * dct(x))`` and ties with it (README, "Benchmarks").
:func:`sector_band_pass` filters each sector of hidden units with its own band into one
output (the prism layer).  :func:`band_decomposition` computes all the bands of a partition at once:
one forward transform, each band back from its own coefficients, and the widest band
as the signal minus the others; for the paper's five bands about ``N**2`` flops per
column on the matrix path (half of five separate band-passes), or one forward and a
few inverse FFTs for long inputs.  On the CPU the FFTs are pocketfft's (``scipy.fft``,
along any axis without copies) and the decomposition has its own backward pass (the
adjoint of a projection is itself), with large buffers taken from NumPy, which asks
for transparent huge pages; elsewhere the FFT is Makhoul's algorithm on ``torch.fft``
and autograd differentiates the plain tensor operations.  The thin matrices are cached
per (length, band, dtype, device).  For :func:`dct` and :func:`idct` themselves the full
matrix is used up to ``FFT_THRESHOLD`` tokens and the FFT beyond.

Every path takes float16 and bfloat16 input and returns that dtype.  The matrix
products of single band-passes run in the input's dtype (with the float64 matrices
rounded to it); the FFTs, and the decomposition on the CPU, compute in float32 and
round back, since ``torch.fft`` has no bfloat16 and only partial float16 support (CUDA,
powers of two).  Either way the error is a few units of the dtype's ``eps`` times the
input's scale.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal, cast

import numpy as np
import scipy.fft
import torch
from torch import Tensor

__all__ = [
    "BAND_NAMES",
    "Band",
    "SMOOTH_SHAPES",
    "SMOOTH_WIDTH",
    "allocate_bands",
    "allocation_table",
    "band_decomposition",
    "band_pass",
    "band_path",
    "bands_for_lengths",
    "dct",
    "dct_matrix",
    "high_pass",
    "idct",
    "low_pass",
    "paper_period",
    "smooth_band_pass",
    "smooth_gain",
    "smooth_path",
    "smooth_step",
    "true_period",
]

BAND_NAMES: tuple[str, ...] = ("LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
"""Names of the paper's five bands, lowest frequencies first (Table 3a)."""

FFT_THRESHOLD = 2048
"""Above this length :func:`dct`/:func:`idct` use the FFT instead of a dense matrix."""

Norm = Literal["ortho", "eq1"]

POCKETFFT = True
"""On the CPU, the FFT path runs pocketfft (``scipy.fft``) rather than ``torch.fft``."""

_FFT_DTYPE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}
"""Working dtype of the FFT path for the input dtypes ``torch.fft`` cannot take."""


# --------------------------------------------------------------------------- checks


def all_finite(x: Tensor) -> bool:
    """Whether every entry of ``x`` is finite.  A NaN or infinite entry makes the sum NaN or
    infinite, so a finite sum (one read; float32 for half types) settles it, at a tenth of
    the time of ``torch.isfinite(x).all()`` (measured on (8, 512, 768) float32: 0.4 ms
    against 3.9 ms); only a non-finite sum (such an entry, or large entries overflowing)
    looks at each entry."""
    if not x.numel():
        return True
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else None
    return bool(torch.isfinite(x.sum(dtype=acc))) or bool(torch.isfinite(x).all())


def check_tensor(x: Tensor, *, check_finite: bool = True) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(x).__name__}; wrap it with torch.as_tensor(...)")
    if not x.is_floating_point():
        raise ValueError(f"spectral filters need a floating-point tensor, got dtype {x.dtype}; convert it first, e.g. x.float()")
    if check_finite and not all_finite(x):
        raise ValueError(
            "input contains NaN or infinite values; the DCT would spread them over every "
            "position of the sequence. Clean the input first (e.g. torch.nan_to_num)."
        )


def check_band_arg(band: object, kind: type) -> None:
    """Reject a band given by name (a ``str`` is a sequence, and would be read as one band
    per character) or by anything that is neither a ``kind`` nor a sequence of them."""
    if isinstance(band, str):
        raise TypeError(
            f"band={band!r} is a name, not a {kind.__name__}: pick the band for the sequence's length, "
            f"e.g. {{b.name: b for b in allocate_bands(n)}}[{band!r}], or one per row with "
            f"bands_for_lengths(lengths, {band!r})"
        )
    if not isinstance(band, kind) and not (isinstance(band, Sequence) and all(isinstance(b, kind) for b in band)):
        raise TypeError(f"band must be a {kind.__name__} or a sequence of them (one per row), got {type(band).__name__}")


def check_length(n: int, dim: int) -> None:
    """Reject an empty token axis: there is nothing to filter, and no bands exist for it."""
    if n == 0:
        raise ValueError(
            f"the token axis (dim={dim}) has length 0: there is nothing to filter. Check that dim names the "
            "token axis and that the batch is not empty of tokens"
        )


def norm_dim(x: Tensor, dim: int) -> int:
    if not -x.ndim <= dim < x.ndim:
        raise ValueError(f"dim={dim} is out of range for a tensor with {x.ndim} dimensions")
    return dim % x.ndim


# --------------------------------------------------------------------------- DCT


@lru_cache(maxsize=32)
def _dct_matrix64(n: int) -> Tensor:
    return _dct_rows64(n, 0, n)


def _dct_rows64(n: int, lo: int, hi: int) -> Tensor:
    """Rows ``lo..hi-1`` of the orthonormal DCT-II matrix of length ``n``, in float64."""
    k = torch.arange(lo, hi, dtype=torch.int64)[:, None]
    t = torch.arange(n, dtype=torch.int64)[None, :]
    # cos(pi/n (t + 1/2) k) = cos(pi m / 2n) with m = (2t + 1) k reduced mod 4n (exact angles)
    m = ((2 * t + 1) * k) % (4 * n)
    c = torch.cos(math.pi * m.to(torch.float64) / (2 * n)) * math.sqrt(2.0 / n)
    if lo == 0 and hi > 0:
        c[0] /= math.sqrt(2.0)
    return c


def dct_matrix(n: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu") -> Tensor:
    """The orthonormal DCT-II matrix ``C`` of shape ``(n, n)``: ``dct(x) == C @ x``.

    Row ``k`` is the ``k``-th cosine basis vector ``cos(pi/n (t + 1/2) k)``, scaled to unit
    norm; ``C`` is orthogonal, so ``C.T`` is the inverse (the DCT-III).
    """
    if n < 1:
        raise ValueError(f"the DCT needs a length of at least 1, got {n}")
    return _dct_matrix64(n).to(dtype=dtype, device=device)


def _scale(n: int, norm: Norm, dtype: torch.dtype, device: torch.device) -> Tensor:
    """Per-coefficient factor that turns orthonormal coefficients into ``norm``'s."""
    if norm == "ortho":
        return torch.ones(n, dtype=dtype, device=device)
    if norm == "eq1":
        s = torch.full((n,), math.sqrt(n / 2.0), dtype=dtype, device=device)
        s[0] = math.sqrt(n)
        return s
    raise ValueError(f"norm must be 'ortho' or 'eq1', got {norm!r}")


def _dct_fft_last(x: Tensor) -> Tensor:
    """Orthonormal DCT-II along the last axis via one FFT of length n (Makhoul, 1980)."""
    if x.dtype in _FFT_DTYPE:
        return _dct_fft_last(x.to(_FFT_DTYPE[x.dtype])).to(x.dtype)
    n = x.shape[-1]
    v = torch.cat([x[..., ::2], x[..., 1::2].flip(-1)], dim=-1)
    spec = torch.fft.fft(v, dim=-1)
    k = torch.arange(n, dtype=x.dtype, device=x.device)
    w = torch.polar(torch.ones_like(k), -math.pi * k / (2 * n))
    out = (spec * w).real * math.sqrt(2.0 / n)
    out[..., 0] = out[..., 0] / math.sqrt(2.0)
    return out


def _idct_fft_last(y: Tensor) -> Tensor:
    """Inverse of :func:`_dct_fft_last` (orthonormal DCT-III) along the last axis."""
    if y.dtype in _FFT_DTYPE:
        return _idct_fft_last(y.to(_FFT_DTYPE[y.dtype])).to(y.dtype)
    n = y.shape[-1]
    k = torch.arange(n, dtype=y.dtype, device=y.device)
    y = y * math.sqrt(n / 2.0)
    y = torch.cat([y[..., :1] * math.sqrt(2.0), y[..., 1:]], dim=-1)
    # V[k] = (Y[k] - i Y[n-k]) e^{i pi k / 2n}, with Y[n] = 0
    y_rev = torch.cat([torch.zeros_like(y[..., :1]), y[..., 1:].flip(-1)], dim=-1)
    w = torch.polar(torch.ones_like(k), math.pi * k / (2 * n))
    spec = torch.complex(y, -y_rev) * w
    v = torch.fft.ifft(spec, dim=-1).real
    x = torch.empty_like(v)
    half = (n + 1) // 2
    x[..., ::2] = v[..., :half]
    x[..., 1::2] = v[..., half:].flip(-1)
    return x


class _PocketDCT(torch.autograd.Function):
    """Orthonormal DCT-II (``inverse``: DCT-III) of a CPU tensor along ``dim`` by pocketfft.

    ``scipy.fft`` transforms the tensor's own memory along any axis and any strides (no
    transposition, no reordering copies), with one worker per torch thread.  The adjoint of
    an orthonormal transform is its inverse, so the backward pass is the other transform.
    """

    @staticmethod
    def forward(ctx, x: Tensor, dim: int, inverse: bool) -> Tensor:
        ctx.dim, ctx.inverse = dim, inverse
        return _pocket(x.detach(), inverse, axis=dim)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:
        return _PocketDCT.apply(grad, ctx.dim, not ctx.inverse), None, None


def _workers(x: Tensor) -> int:
    """pocketfft threads: torch's number, or one for inputs too small to share out."""
    return torch.get_num_threads() if x.numel() >= 1 << 16 else 1


def _fft_dct(x: Tensor, d: int, inverse: bool = False) -> Tensor:
    """Orthonormal DCT-II (``inverse``: DCT-III) along axis ``d`` (non-negative) by the FFT.

    On the CPU by pocketfft (:class:`_PocketDCT`), elsewhere by Makhoul's algorithm with
    ``torch.fft`` along the last axis; float16/bfloat16 are computed in float32.
    """
    if x.dtype in _FFT_DTYPE:
        return _fft_dct(x.to(_FFT_DTYPE[x.dtype]), d, inverse).to(x.dtype)
    if x.device.type == "cpu" and POCKETFFT:
        return _PocketDCT.apply(x, d, inverse)
    last = _idct_fft_last if inverse else _dct_fft_last
    return last(x.movedim(d, -1)).movedim(-1, d)


def dct(x: Tensor, dim: int = -1, norm: Norm = "ortho") -> Tensor:
    """DCT-II of ``x`` along ``dim`` (paper Eq. 1); shape and dtype are kept.

    Args:
        x: real floating-point tensor of any shape, e.g. ``(batch, length, hidden)``.
        dim: the axis to transform (for token sequences usually the length axis).
        norm: ``"ortho"`` (default) gives the orthonormal transform, equal to
            ``scipy.fft.dct(x, norm="ortho")``; ``"eq1"`` gives the unnormalised sum of
            Eq. 1, ``f_k = sum_n x_n cos(pi/N (n + 1/2) k)``, which is half of scipy's
            ``norm=None`` (scipy and torch-dct include a factor of 2).

    Differentiable; works on CPU and CUDA, in float64, float32, float16 and bfloat16
    (the output has the input's dtype; see the module docstring for the precision).
    """
    check_tensor(x, check_finite=False)
    d = norm_dim(x, dim)
    n = x.shape[d]
    if n > FFT_THRESHOLD:
        out = _fft_dct(x, d, inverse=False).movedim(d, -1)
    else:
        out = x.movedim(d, -1) @ dct_matrix(n, dtype=x.dtype, device=x.device).T
    if norm != "ortho":
        out = out * _scale(n, norm, x.dtype, x.device)
    return out.movedim(-1, d)


def idct(f: Tensor, dim: int = -1, norm: Norm = "ortho") -> Tensor:
    """Inverse of :func:`dct` with the same ``norm``: ``idct(dct(x)) == x``.

    Args:
        f: DCT coefficients, any shape, transformed along ``dim``.
        dim: the coefficient axis.
        norm: must match the ``norm`` the coefficients were computed with.
    """
    check_tensor(f, check_finite=False)
    d = norm_dim(f, dim)
    n = f.shape[d]
    ft = f.movedim(d, -1)
    if norm != "ortho":
        ft = ft / _scale(n, norm, f.dtype, f.device)
    if n > FFT_THRESHOLD:
        out = _fft_dct(ft, ft.ndim - 1, inverse=True)
    else:
        out = ft @ dct_matrix(n, dtype=f.dtype, device=f.device)
    return out.movedim(-1, d)


# --------------------------------------------------------------------------- bands


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


# --------------------------------------------------------------------------- filters


@lru_cache(maxsize=256)
def _projector(n: int, lo: int, hi: int, dtype: torch.dtype, device: str) -> tuple[bool, Tensor]:
    """``(complement, rows)``: the thin DCT rows that apply the band ``[lo, hi)``.

    If ``complement`` is False the filter is ``rows.T @ (rows @ x)``; otherwise it is
    ``x - rows.T @ (rows @ x)`` (fewer rows: the indices outside the band).
    """
    width = hi - lo
    if width <= n - width:
        return False, _dct_rows64(n, lo, hi).to(dtype=dtype, device=device).contiguous()
    outside = torch.cat([_dct_rows64(n, 0, lo), _dct_rows64(n, hi, n)])
    return True, outside.to(dtype=dtype, device=device).contiguous()


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


class _CpuFilter(torch.autograd.Function):
    """A symmetric linear filter along axis -2 on the CPU (float32/float64), by ``fn``.

    ``fn`` maps a detached ``(b, n, h)`` tensor to its filtered version (any strides in,
    a fresh buffer out).  Brick-wall and smooth band-passes are ``C^T diag(g) C`` with
    the orthonormal DCT ``C``: symmetric, so the backward pass is the same filter applied
    to the gradient (itself differentiable again).
    """

    @staticmethod
    def forward(ctx, x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
        ctx.fn = fn
        n, h = x.shape[-2], x.shape[-1]
        return fn(x.detach().reshape(-1, n, h)).view(x.shape)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        return _CpuFilter.apply(grad, ctx.fn), None


def _on_cpu_pocket(x: Tensor) -> bool:
    """Whether ``x`` takes the pocketfft path of :class:`_CpuFilter` (CPU, a float dtype)."""
    return x.device.type == "cpu" and POCKETFFT and (x.dtype in _NP_DTYPE or x.dtype in _FFT_DTYPE)


def _cpu_filter(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """:class:`_CpuFilter` of ``x``; float16/bfloat16 computed in float32 and rounded back."""
    if x.numel() == 0:  # an empty batch or hidden axis: nothing to filter
        return x.clone()
    if x.dtype in _FFT_DTYPE:
        return _CpuFilter.apply(x.to(_FFT_DTYPE[x.dtype]), fn).to(x.dtype)
    return _CpuFilter.apply(x, fn)


def _dct_fresh(x3: Tensor) -> Tensor:
    """The orthonormal DCT along axis 1 of ``x3`` in a fresh C-contiguous buffer: pocketfft
    writes it out of place into NumPy's memory (huge pages for large arrays), so the input
    is read once and no copy of it is made first."""
    return _pocket(x3, inverse=False, overwrite=False, axis=1)


def _band_cpu(x3: Tensor, lo: int, hi: int, path: str) -> Tensor:
    """Band-pass ``[lo, hi)`` along axis 1 of ``x3`` ``(b, n, h)`` by ``path`` (:func:`band_path`):
    the DCT out of place into a fresh buffer, the mask and the inverse in place over it (by
    NumPy and pocketfft alone: a torch operation between the two transforms leaves its
    OpenMP threads spinning against pocketfft's, measured 8% slower at N = 4096 on 2
    cores), the matrix products written by ``out=``."""
    b, n, h = x3.shape
    if path == "fft+fft":
        coef = _dct_fresh(x3)
        c = coef.numpy()
        c[:, :lo] = 0
        c[:, hi:] = 0
        return _pocket(coef, inverse=True, overwrite=True, axis=1)
    complement, rows = _projector(n, lo, hi, x3.dtype, "cpu")
    coef = torch.matmul(rows, x3)
    out = _empty_cpu((b, n, h), x3.dtype)
    if complement:  # x - C_c^T (C_c x)
        return torch.baddbmm(x3, rows.T.expand(b, -1, -1), coef, alpha=-1, out=out)
    return torch.matmul(rows.T, coef, out=out)


def _sectors_cpu(x3: Tensor, spans: tuple[tuple[int, int], ...], slices: tuple[slice, ...]) -> Tensor:
    """Band ``spans[j]`` of the units ``slices[j]`` along axis 1 of ``x3`` ``(b, n, h)``, all
    written into one fresh buffer (no concatenation): each sector by :func:`band_path`'s path,
    the matrix products reading the sector in place (a strided view) and writing by ``out=``;
    adjacent sectors on the FFT path share one DCT, their masks and one inverse DCT (as
    scipy does for all the units)."""
    b, n, h = x3.shape
    out = _empty_cpu((b, n, h), x3.dtype)
    width = fft_width("cpu")
    paths = [band_path(n, lo, hi, width) for lo, hi in spans]
    fft = [j for j, path in enumerate(paths) if path == "fft+fft"]
    if fft and fft == list(range(fft[0], fft[-1] + 1)):  # adjacent sectors: one DCT pair for all of them
        cols = slice(slices[fft[0]].start, slices[fft[-1]].stop)
        coef = _dct_fresh(x3[..., cols])
        c = coef.numpy()
        for j in fft:
            local = slice(slices[j].start - cols.start, slices[j].stop - cols.start)
            c[:, : spans[j][0], local] = 0
            c[:, spans[j][1] :, local] = 0
        out[..., cols].copy_(_pocket(coef, inverse=True, overwrite=True, axis=1))
        paths = [("done" if j in fft else path) for j, path in enumerate(paths)]
    for (lo, hi), sl, path in zip(spans, slices, paths):
        xs, target = x3[..., sl], out[..., sl]
        if path == "done":
            continue
        if path == "identity":
            target.copy_(xs)
        elif path == "fft+fft":
            target.copy_(_band_cpu(xs, lo, hi, path))
        else:
            complement, rows = _projector(n, lo, hi, x3.dtype, "cpu")
            coef = torch.matmul(rows, xs)
            if complement:
                torch.baddbmm(xs, rows.T.expand(b, -1, -1), coef, alpha=-1, out=target)
            else:
                torch.matmul(rows.T, coef, out=target)
    return out


def _gain_cpu(x3: Tensor, op: Tensor, path: str) -> Tensor:
    """``C^T diag(g) C`` along axis 1 of ``x3`` ``(b, n, h)`` by ``path`` (:func:`smooth_path`):
    ``op`` is the gain ``g`` ``(n,)`` for ``"fft+fft"``, the matrix ``C^T diag(g) C`` for ``"matmul"``."""
    if path == "fft+fft":
        coef = _dct_fresh(x3)
        c = coef.numpy()
        np.multiply(c, op.numpy()[:, None], out=c)  # NumPy, not torch: see _band_cpu
        return _pocket(coef, inverse=True, overwrite=True, axis=1)
    return torch.matmul(op, x3, out=_empty_cpu(x3.shape, x3.dtype))


@lru_cache(maxsize=64)
def _smooth_matrix_cached(n: int, lo: int, hi: int, width: float, shape: SmoothShape, dtype: torch.dtype) -> Tensor:
    """``C^T diag(g) C`` (``n x n``, symmetric) of the smooth gain ``g`` of ``[lo, hi)``."""
    c = _dct_matrix64(n)
    gain = smooth_gain(n, Band("b", lo, hi), width=width, shape=shape)
    return (c.T @ (gain[:, None] * c)).to(dtype).contiguous()


def _filter_seq(x: Tensor, lo: int, hi: int) -> Tensor:
    """Band-pass ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    path = band_path(n, lo, hi, fft_width(x.device))
    if path == "identity":
        return x
    if _on_cpu_pocket(x):
        return _cpu_filter(x, functools.partial(_band_cpu, lo=lo, hi=hi, path=path))
    if path == "fft+fft":
        return _from_coefficients(x, _fft_dct(x, x.ndim - 2), ((lo, hi),), 0)[0]
    complement, rows = _projector(n, lo, hi, x.dtype, str(x.device))
    kept = rows.T @ (rows @ x)
    return x - kept if complement else kept


@dataclass(frozen=True)
class _SplitPlan:
    """How :func:`_split_seq` computes the band-passes of a partition of ``0..n-1``.

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
def split_plan(n: int, spans: tuple[tuple[int, int], ...], fft_width: int) -> _SplitPlan:
    widths = [hi - lo for lo, hi in spans]
    rest = max(range(len(spans)), key=lambda i: (widths[i], -i))
    others = [w for i, w in enumerate(widths) if i != rest]
    by_matmul = 2 * sum(others)
    by_fft = fft_width + sum(min(w, fft_width) for w in others)
    return _SplitPlan(n, spans, rest, by_fft < by_matmul, fft_width)


def _is_partition(spans: Sequence[tuple[int, int]], n: int) -> bool:
    return bool(spans) and spans[0][0] == 0 and spans[-1][1] == n and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@lru_cache(maxsize=256)
def _dct_rows(n: int, ranges: tuple[tuple[int, int], ...], dtype: torch.dtype, device: str) -> Tensor:
    """The rows ``lo..hi-1`` of the orthonormal DCT matrix for each range, stacked."""
    return torch.cat([_dct_rows64(n, lo, hi) for lo, hi in ranges]).to(dtype=dtype, device=device).contiguous()


def _from_coefficients(x: Tensor, coef: Tensor, spans: Sequence[tuple[int, int]], fft_width: int) -> list[Tensor]:
    """Band-passes of ``x`` (axis -2) from its full DCT ``coef``: thin rows or inverse FFT."""
    n = x.shape[-2]
    out = []
    for lo, hi in spans:
        if hi - lo > fft_width:
            masked = torch.nn.functional.pad(coef[..., lo:hi, :], (0, 0, lo, n - hi))
            out.append(_fft_dct(masked, x.ndim - 2, inverse=True))
        else:
            out.append(_dct_rows(n, ((lo, hi),), x.dtype, str(x.device)).T @ coef[..., lo:hi, :])
    return out


_NP_DTYPE = {torch.float32: np.float32, torch.float64: np.float64}


def _empty_cpu(shape: Sequence[int], dtype: torch.dtype) -> Tensor:
    """An uninitialised CPU tensor in NumPy's memory.

    NumPy asks the kernel for transparent huge pages for large arrays; the first touch of
    a fresh 100 MB output then costs a quarter of what torch's allocator pays in 4 KiB
    page faults, which on the CPU is most of the time of a long decomposition.
    """
    return torch.from_numpy(np.empty(tuple(shape), dtype=_NP_DTYPE[dtype]))


def _pocket(x: Tensor, inverse: bool, overwrite: bool = False, axis: int = -2) -> Tensor:
    """Orthonormal DCT-II (``inverse``: DCT-III) of a CPU tensor along ``axis`` by
    pocketfft (no autograd); ``overwrite`` lets it reuse ``x``'s memory."""
    transform = scipy.fft.idct if inverse else scipy.fft.dct
    out = transform(x.numpy(), norm="ortho", axis=axis, workers=_workers(x), overwrite_x=overwrite)
    return torch.from_numpy(np.asarray(out))


class _CpuSplit(torch.autograd.Function):
    """:func:`_split_seq` on the CPU (float32/float64) with its own backward pass.

    Every large buffer is allocated once (:func:`_empty_cpu`) and written by ``out=``
    products; the FFTs are pocketfft's.  The decomposition is linear and each band-pass
    is an orthogonal projection ``P_b`` (symmetric), so the gradient of the input is
    ``sum_b P_b g_b = g_rest + sum_{b != rest} P_b (g_b - g_rest)``: the same thin rows
    and transforms as the forward pass, and nothing saved from it.
    """

    @staticmethod
    def forward(ctx, x: Tensor, plan: _SplitPlan) -> tuple[Tensor, ...]:
        ctx.plan, ctx.shape = plan, x.shape
        n, h = x.shape[-2], x.shape[-1]
        x3 = x.detach().reshape(-1, n, h)
        others = [i for i in range(len(plan.spans)) if i != plan.rest]
        out: list[Tensor | None] = [None] * len(plan.spans)
        if plan.fft:
            # the DCT in place in a copy of x: that buffer is written over by the rest band at the end
            coef = _pocket(_empty_cpu(x3.shape, x.dtype).copy_(x3), inverse=False, overwrite=True)
            for i in others:
                lo, hi = plan.spans[i]
                if hi - lo > plan.fft_width:
                    masked = _empty_cpu(x3.shape, x.dtype)
                    masked[:, :lo] = 0
                    masked[:, lo:hi] = coef[:, lo:hi]
                    masked[:, hi:] = 0
                    out[i] = _pocket(masked, inverse=True, overwrite=True)
                else:
                    out[i] = torch.matmul(_dct_rows(n, ((lo, hi),), x.dtype, "cpu").T, coef[:, lo:hi], out=_empty_cpu(x3.shape, x.dtype))
        else:
            ranges = tuple(plan.spans[i] for i in others)
            rows = _dct_rows(n, ranges, x.dtype, "cpu")
            coef = torch.matmul(rows, x3, out=_empty_cpu((x3.shape[0], rows.shape[0], h), x.dtype))
            start = 0
            for i in others:
                w = plan.spans[i][1] - plan.spans[i][0]
                out[i] = torch.matmul(rows[start : start + w].T, coef[:, start : start + w], out=_empty_cpu(x3.shape, x.dtype))
                start += w
        rest = torch.sub(x3, cast(Tensor, out[others[0]]), out=coef if plan.fft else _empty_cpu(x3.shape, x.dtype))
        for i in others[1:]:
            rest.sub_(cast(Tensor, out[i]))
        out[plan.rest] = rest
        return tuple(y.view(x.shape) for y in out)  # type: ignore[union-attr]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads: Tensor) -> tuple[Tensor, None]:
        plan: _SplitPlan = ctx.plan
        n, h = ctx.shape[-2], ctx.shape[-1]
        g = [gb.reshape(-1, n, h) for gb in grads]
        dtype = g[0].dtype
        g_rest = g[plan.rest]
        others = [i for i in range(len(plan.spans)) if i != plan.rest]
        diff = _empty_cpu(g_rest.shape, dtype)  # g_b - g_rest, one band after the other
        if plan.fft:
            coef = _empty_cpu(g_rest.shape, dtype)  # the rows of every band but the rest are written below
            coef[:, plan.spans[plan.rest][0] : plan.spans[plan.rest][1]] = 0
            for i in others:
                lo, hi = plan.spans[i]
                torch.sub(g[i], g_rest, out=diff)
                if hi - lo > plan.fft_width:
                    coef[:, lo:hi] = _pocket(diff, inverse=False, overwrite=True)[:, lo:hi]  # diff is scratch
                else:
                    torch.matmul(_dct_rows(n, ((lo, hi),), dtype, "cpu"), diff, out=coef[:, lo:hi])
            grad = _pocket(coef, inverse=True, overwrite=True).add_(g_rest)
        else:
            ranges = tuple(plan.spans[i] for i in others)
            rows = _dct_rows(n, ranges, dtype, "cpu")
            coef = _empty_cpu((g_rest.shape[0], rows.shape[0], h), dtype)
            start = 0
            for i in others:
                w = plan.spans[i][1] - plan.spans[i][0]
                torch.sub(g[i], g_rest, out=diff)
                torch.matmul(rows[start : start + w], diff, out=coef[:, start : start + w])
                start += w
            grad = torch.baddbmm(g_rest, rows.T.expand(g_rest.shape[0], -1, -1), coef, out=_empty_cpu(g_rest.shape, dtype))
        return grad.view(ctx.shape), None


def _split_seq(x: Tensor, spans: tuple[tuple[int, int], ...]) -> list[Tensor]:
    """Band-passes of ``x`` of shape ``(..., n, h)`` along axis -2, one per span of ``spans``.

    When the spans partition ``0..n-1`` they share one forward transform and the widest
    band is the signal minus the others (:class:`_SplitPlan`); otherwise each band is
    filtered alone.
    """
    n = x.shape[-2]
    if not _is_partition(spans, n):
        return [_filter_seq(x, lo, hi) for lo, hi in spans]
    if len(spans) == 1:
        return [x]
    plan = split_plan(n, spans, fft_width(x.device))
    if x.device.type == "cpu" and POCKETFFT:
        if x.dtype in _FFT_DTYPE:
            return [y.to(x.dtype) for y in _CpuSplit.apply(x.to(_FFT_DTYPE[x.dtype]), plan)]
        return list(_CpuSplit.apply(x, plan))
    others = [i for i in range(len(spans)) if i != plan.rest]
    out: list[Tensor | None] = [None] * len(spans)
    if plan.fft:
        coef = _fft_dct(x, x.ndim - 2)
        for i, y in zip(others, _from_coefficients(x, coef, [spans[i] for i in others], plan.fft_width)):
            out[i] = y
    else:
        ranges = tuple(spans[i] for i in others)
        rows = _dct_rows(n, ranges, x.dtype, str(x.device))
        coef = rows @ x
        start = 0
        for i in others:
            w = spans[i][1] - spans[i][0]
            out[i] = rows[start : start + w].T @ coef[..., start : start + w, :]
            start += w
    # the widest band: the signal minus the others (accumulated in float32 for half types)
    acc_dtype = _FFT_DTYPE.get(x.dtype, x.dtype)
    acc = (
        cast(Tensor, out[others[0]]).to(acc_dtype) + cast(Tensor, out[others[1]])
        if len(others) > 1
        else cast(Tensor, out[others[0]]).to(acc_dtype)
    )
    for i in others[2:]:
        acc += cast(Tensor, out[i])
    out[plan.rest] = (x.to(acc_dtype) - acc).to(x.dtype) if acc_dtype != x.dtype else x - acc
    return out  # type: ignore[return-value]


def int_lengths(lengths: Sequence[int] | Tensor) -> list[int]:
    """Real lengths as a list of ints; floats are rejected (a list's as well as a
    tensor's), never truncated."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point():
            raise ValueError(f"lengths must be integers, got a {lengths.dtype} tensor; use lengths.long()")
        lengths = lengths.tolist()
    out = []
    for v in lengths:
        try:
            out.append(operator.index(v))
        except TypeError:
            raise ValueError(
                f"lengths must be integers, got {v!r} ({type(v).__name__}); pass whole token counts, e.g. "
                "[int(n) for n in lengths] if they are whole numbers stored as floats"
            ) from None
    return out


def as_lengths(lengths: Sequence[int] | Tensor, batch: int, n: int) -> list[int]:
    """The real lengths of a batch: ``batch`` ints in ``1..n`` (:func:`int_lengths`)."""
    lengths = int_lengths(lengths)
    if len(lengths) != batch:
        raise ValueError(f"got {len(lengths)} lengths for a batch of {batch} rows (axis 0)")
    bad = [v for v in lengths if not 1 <= v <= n]
    if bad:
        raise ValueError(f"lengths must lie in 1..{n} (the padded length); got {bad[:5]}")
    return lengths


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
        return _apply_last2_all(x, d, lambda seq: _split_seq(seq, spans))
    if d == 0:
        raise ValueError("with per-row lengths, axis 0 is the batch axis; the token axis must be another one")
    keys = [(length,) for length in as_lengths(lengths, x.shape[0], n)]
    return _rowwise_all(x, d, keys, lambda seq, key: _split_seq(seq, spans_for(key[0])))


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
        return _apply_last2(x, d, lambda seq: _filter_seq(seq, band.lo, band.hi))
    keys = _row_keys(x, band, d, lengths)
    return _rowwise(x, d, keys, lambda seq, key: _filter_seq(seq, key[1], key[2]))


def _row_keys(x: Tensor, band: Band | Sequence[Band], d: int, lengths: Sequence[int] | Tensor | None) -> list[tuple[int, int, int]]:
    """Per row of axis 0, ``(real length, band.lo, band.hi)``: the per-row form of a band
    filter's arguments, checked (token axis not 0, one band per row, each band fits its row)."""
    if d == 0:
        raise ValueError("with per-row lengths or bands, axis 0 is the batch axis; the token axis must be another one")
    batch, n = x.shape[0], x.shape[d]
    rows_len = as_lengths(lengths, batch, n) if lengths is not None else [n] * batch
    rows_band = [band] * batch if isinstance(band, Band) else list(band)
    if len(rows_band) != batch:
        raise ValueError(f"got {len(rows_band)} bands for a batch of {batch} rows (axis 0)")
    for b, length in zip(rows_band, rows_len):
        b.check(length)
    return [(length, b.lo, b.hi) for b, length in zip(rows_band, rows_len)]


def _pad_to(x: Tensor, d: int, n: int) -> Tensor:
    """Zero-pad axis ``d`` of ``x`` up to length ``n``."""
    if x.shape[d] == n:
        return x
    pad = list(x.shape)
    pad[d] = n - x.shape[d]
    return torch.cat([x, x.new_zeros(pad)], dim=d)


def _apply_last2(x: Tensor, d: int, fn) -> Tensor:
    """Apply ``fn`` (acting on axis -2 of a ``(..., n, h)`` tensor) with ``d`` as that axis."""
    return _apply_last2_all(x, d, lambda seq: [fn(seq)])[0]


def _apply_last2_all(x: Tensor, d: int, fn) -> list[Tensor]:
    """:func:`_apply_last2` for an ``fn`` that returns a list of tensors shaped like its input."""
    if x.ndim == 1:
        return [y[:, 0] for y in fn(x[:, None])]
    if d == x.ndim - 2:
        return fn(x)
    if d == x.ndim - 1:
        return [y.squeeze(-1) for y in fn(x.unsqueeze(-1))]
    return [y.movedim(-2, d) for y in fn(x.movedim(d, -2))]


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
    if _on_cpu_pocket(x):
        return _cpu_filter(x, functools.partial(_sectors_cpu, spans=spans, slices=tuple(slices)))
    return torch.cat([_filter_seq(x[..., sl], lo, hi) for (lo, hi), sl in zip(spans, slices)], dim=-1)


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


# --------------------------------------------------------------------------- smooth bands

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
def _smooth_gain_cached(n: int, lo: int, hi: int, width: float, shape: SmoothShape, dtype: torch.dtype, device: str) -> Tensor:
    return smooth_gain(n, Band("b", lo, hi), width=width, shape=shape).to(dtype=dtype, device=device)


def _smooth_seq(x: Tensor, lo: int, hi: int, width: float, shape: str) -> Tensor:
    """Smooth band ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    if lo == 0 and hi == n:
        return x
    if _on_cpu_pocket(x):
        dtype, path = _FFT_DTYPE.get(x.dtype, x.dtype), smooth_path(n, fft_width(x.device))
        if path == "matmul":
            op = _smooth_matrix_cached(n, lo, hi, float(width), shape, dtype)
        else:
            op = _smooth_gain_cached(n, lo, hi, float(width), shape, dtype, "cpu")
        return _cpu_filter(x, functools.partial(_gain_cpu, op=op, path=path))
    gain = _smooth_gain_cached(n, lo, hi, float(width), shape, x.dtype, str(x.device))
    return idct(dct(x, dim=-2) * gain[:, None], dim=-2)


def _rowwise(x: Tensor, d: int, keys: list[tuple], fn) -> Tensor:
    """Apply ``fn(part, key)`` to the rows of axis 0 grouped by ``key = (length, ...)``.

    Each group's rows are narrowed to their real ``length`` along ``d`` and ``fn`` acts
    on that axis (as axis -2); the results are zero-padded back and returned in row order.
    """
    return _rowwise_all(x, d, keys, lambda seq, key: [fn(seq, key)])[0]


def _rowwise_all(x: Tensor, d: int, keys: list[tuple], fn) -> list[Tensor]:
    """:func:`_rowwise` for an ``fn`` that returns a list of tensors shaped like its input."""
    n = x.shape[d]
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    parts, order = [], []
    for key, idx in groups.items():
        if len(groups) == 1:
            part = x
        elif len(idx) == 1:  # a view: index_select's backward is slow for single rows
            part = x[idx[0] : idx[0] + 1]
        else:
            part = x.index_select(0, torch.tensor(idx, device=x.device))
        done = _apply_last2_all(part.narrow(d, 0, key[0]), d, lambda seq, key=key: fn(seq, key))
        parts.append([_pad_to(y, d, n) for y in done])
        order.extend(idx)
    if len(parts) == 1:
        return parts[0]
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    inverse = inverse.to(x.device)
    return [torch.cat(group).index_select(0, inverse) for group in zip(*parts)]


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
        return _apply_last2(x, d, lambda seq: _smooth_seq(seq, band.lo, band.hi, width, shape))
    keys = _row_keys(x, band, d, lengths)
    return _rowwise(x, d, keys, lambda seq, key: _smooth_seq(seq, key[1], key[2], width, shape))


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
