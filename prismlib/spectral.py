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
  :mod:`prismlib.wavelets`.)

How it is computed.  With the orthonormal DCT matrix ``C`` (``N x N``), keeping the
coefficients ``lo..hi-1`` is the orthogonal projection ``P = C_b^T C_b`` with
``C_b = C[lo:hi]``.  We apply it as two thin matrix products, ``C_b^T (C_b x)``, or
as ``x - C_c^T (C_c x)`` through the complementary rows ``C_c`` when those are fewer.
That costs ``4 * min(w, N - w) * N`` flops per column (``w = hi - lo``) instead of
two full transforms, is exact up to float rounding, and differentiates through plain
matrix products.  The thin matrices are cached per (length, band, dtype, device).
For :func:`dct` and :func:`idct` themselves the full matrix is used up to
``FFT_THRESHOLD`` tokens and Makhoul's FFT algorithm beyond.

Every path takes float16 and bfloat16 input and returns that dtype.  The matrix
products run in the input's dtype (with the float64 matrices rounded to it); the FFT
path computes in float32 and rounds back, since ``torch.fft`` has no bfloat16 and only
partial float16 support (CUDA, powers of two).  Either way the error is a few units of
the dtype's ``eps`` times the input's scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal

import torch
from torch import Tensor

__all__ = [
    "BAND_NAMES",
    "Band",
    "SMOOTH_SHAPES",
    "SMOOTH_WIDTH",
    "allocate_bands",
    "allocation_table",
    "band_pass",
    "bands_for_lengths",
    "dct",
    "dct_matrix",
    "high_pass",
    "idct",
    "low_pass",
    "paper_period",
    "smooth_band_pass",
    "smooth_gain",
    "smooth_step",
    "true_period",
]

BAND_NAMES: tuple[str, ...] = ("LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
"""Names of the paper's five bands, lowest frequencies first (Table 3a)."""

FFT_THRESHOLD = 2048
"""Above this length :func:`dct`/:func:`idct` use the FFT instead of a dense matrix."""

Norm = Literal["ortho", "eq1"]

_FFT_DTYPE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}
"""Working dtype of the FFT path for the input dtypes ``torch.fft`` cannot take."""


# --------------------------------------------------------------------------- checks


def _check_tensor(x: Tensor, *, check_finite: bool = True) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(x).__name__}; wrap it with torch.as_tensor(...)")
    if not x.is_floating_point():
        raise ValueError(
            f"spectral filters need a floating-point tensor, got dtype {x.dtype}; "
            "convert it first, e.g. x.float()"
        )
    if check_finite and x.numel() and not bool(torch.isfinite(x).all()):
        raise ValueError(
            "input contains NaN or infinite values; the DCT would spread them over every "
            "position of the sequence. Clean the input first (e.g. torch.nan_to_num)."
        )


def _norm_dim(x: Tensor, dim: int) -> int:
    if not -x.ndim <= dim < x.ndim:
        raise ValueError(f"dim={dim} is out of range for a tensor with {x.ndim} dimensions")
    return dim % x.ndim


# --------------------------------------------------------------------------- DCT


@lru_cache(maxsize=32)
def _dct_matrix64(n: int) -> Tensor:
    k = torch.arange(n, dtype=torch.int64)[:, None]
    t = torch.arange(n, dtype=torch.int64)[None, :]
    # cos(pi/n (t + 1/2) k) = cos(pi m / 2n) with m = (2t + 1) k reduced mod 4n (exact angles)
    m = ((2 * t + 1) * k) % (4 * n)
    c = torch.cos(math.pi * m.to(torch.float64) / (2 * n)) * math.sqrt(2.0 / n)
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
    _check_tensor(x, check_finite=False)
    d = _norm_dim(x, dim)
    n = x.shape[d]
    xt = x.movedim(d, -1)
    if n > FFT_THRESHOLD:
        out = _dct_fft_last(xt)
    else:
        out = xt @ dct_matrix(n, dtype=x.dtype, device=x.device).T
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
    _check_tensor(f, check_finite=False)
    d = _norm_dim(f, dim)
    n = f.shape[d]
    ft = f.movedim(d, -1)
    if norm != "ortho":
        ft = ft / _scale(n, norm, f.dtype, f.device)
    if n > FFT_THRESHOLD:
        out = _idct_fft_last(ft)
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
            raise ValueError(
                f"band {self.name!r} = [{self.lo}, {self.hi}) is empty or negative; "
                "a band needs 0 <= lo < hi"
            )

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
        raise ValueError(
            f"a sequence of length {n} is shorter than the number of bands ({k}); "
            "every band needs at least one frequency"
        )
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
    alloc = [row["width"] for row in allocation_table(n, k, base)]
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
    lengths = [int(n) for n in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    out = []
    for n in lengths:
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
    c = _dct_matrix64(n)
    width = hi - lo
    if width <= n - width:
        return False, c[lo:hi].to(dtype=dtype, device=device).contiguous()
    outside = torch.cat([c[:lo], c[hi:]])
    return True, outside.to(dtype=dtype, device=device).contiguous()


def _filter_seq(x: Tensor, lo: int, hi: int) -> Tensor:
    """Band-pass ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    if lo == 0 and hi == n:
        return x
    complement, rows = _projector(n, lo, hi, x.dtype, str(x.device))
    if rows.shape[0] == 0:
        return x
    kept = rows.T @ (rows @ x)
    return x - kept if complement else kept


def _as_lengths(lengths: Sequence[int] | Tensor, batch: int, n: int) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point():
            raise ValueError("lengths must be integers")
        lengths = lengths.tolist()
    lengths = [int(v) for v in lengths]
    if len(lengths) != batch:
        raise ValueError(f"got {len(lengths)} lengths for a batch of {batch} rows (axis 0)")
    bad = [v for v in lengths if not 1 <= v <= n]
    if bad:
        raise ValueError(f"lengths must lie in 1..{n} (the padded length); got {bad[:5]}")
    return lengths


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
    _check_tensor(x, check_finite=check_finite)
    d = _norm_dim(x, dim)
    n = x.shape[d]
    per_row = not isinstance(band, Band)
    if lengths is None and not per_row:
        band.check(n)
        return _apply_last2(x, d, lambda seq: _filter_seq(seq, band.lo, band.hi))
    if d == 0:
        raise ValueError("with per-row lengths or bands, axis 0 is the batch axis; the token axis must be another one")
    batch = x.shape[0]
    rows_len = _as_lengths(lengths, batch, n) if lengths is not None else [n] * batch
    rows_band = list(band) if per_row else [band] * batch
    if len(rows_band) != batch:
        raise ValueError(f"got {len(rows_band)} bands for a batch of {batch} rows (axis 0)")
    for b, length in zip(rows_band, rows_len):
        b.check(length)
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, (b, length) in enumerate(zip(rows_band, rows_len)):
        groups.setdefault((length, b.lo, b.hi), []).append(i)
    if len(groups) == 1:
        ((length, lo, hi),) = groups
        filtered = _apply_last2(x.narrow(d, 0, length), d, lambda seq: _filter_seq(seq, lo, hi))
        return _pad_to(filtered, d, n)
    parts, order = [], []
    for (length, lo, hi), idx in groups.items():
        part = x[idx[0] : idx[0] + 1] if len(idx) == 1 else x.index_select(0, torch.tensor(idx, device=x.device))
        filtered = _apply_last2(part.narrow(d, 0, length), d, lambda seq, lo=lo, hi=hi: _filter_seq(seq, lo, hi))
        parts.append(_pad_to(filtered, d, n))
        order.extend(idx)
    # one concatenation in group order, then back to row order
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return torch.cat(parts).index_select(0, inverse.to(x.device))


def _pad_to(x: Tensor, d: int, n: int) -> Tensor:
    """Zero-pad axis ``d`` of ``x`` up to length ``n``."""
    if x.shape[d] == n:
        return x
    pad = list(x.shape)
    pad[d] = n - x.shape[d]
    return torch.cat([x, x.new_zeros(pad)], dim=d)


def _apply_last2(x: Tensor, d: int, fn) -> Tensor:
    """Apply ``fn`` (acting on axis -2 of a ``(..., n, h)`` tensor) with ``d`` as that axis."""
    if x.ndim == 1:
        return fn(x[:, None])[:, 0]
    if d == x.ndim - 2:
        return fn(x)
    if d == x.ndim - 1:
        return fn(x.unsqueeze(-1)).squeeze(-1)
    return fn(x.movedim(d, -2)).movedim(-2, d)


def low_pass(
    x: Tensor, cutoff: int, dim: int = -2, lengths: Sequence[int] | Tensor | None = None, *, check_finite: bool = True
) -> Tensor:
    """Keep DCT indices ``0 .. cutoff-1`` along ``dim`` (the paper's Fig. 3b ``low_pass(H, k)``).

    Shapes and ``lengths`` as in :func:`band_pass`; ``cutoff`` must be in ``1..length``.
    """
    return band_pass(x, Band("low", 0, cutoff), dim, lengths, check_finite=check_finite)


def high_pass(
    x: Tensor, cutoff: int, dim: int = -2, lengths: Sequence[int] | Tensor | None = None, *, check_finite: bool = True
) -> Tensor:
    """Keep DCT indices ``cutoff .. length-1`` along ``dim`` (each row's own length).

    Shapes and ``lengths`` as in :func:`band_pass`; ``cutoff`` must be below every length.
    """
    _check_tensor(x, check_finite=False)
    n = x.shape[_norm_dim(x, dim)]
    if lengths is None:
        return band_pass(x, Band("high", cutoff, n), dim, check_finite=check_finite)
    rows = _as_lengths(lengths, x.shape[0], n)
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
        raise ValueError(
            f"width must be a finite number of octaves >= 0 (0 is the brick wall), got {width!r}"
        )


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
def _smooth_gain_cached(n: int, lo: int, hi: int, width: float, shape: str, dtype: torch.dtype, device: str) -> Tensor:
    return smooth_gain(n, Band("b", lo, hi), width=width, shape=shape).to(dtype=dtype, device=device)


def _smooth_seq(x: Tensor, lo: int, hi: int, width: float, shape: str) -> Tensor:
    """Smooth band ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    if lo == 0 and hi == n:
        return x
    gain = _smooth_gain_cached(n, lo, hi, float(width), shape, x.dtype, str(x.device))
    return idct(dct(x, dim=-2) * gain[:, None], dim=-2)


def _rowwise(x: Tensor, d: int, keys: list[tuple], fn) -> Tensor:
    """Apply ``fn(part, key)`` to the rows of axis 0 grouped by ``key = (length, ...)``.

    Each group's rows are narrowed to their real ``length`` along ``d`` and ``fn`` acts
    on that axis (as axis -2); the results are zero-padded back and returned in row order.
    """
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
        done = _apply_last2(part.narrow(d, 0, key[0]), d, lambda seq, key=key: fn(seq, key))
        parts.append(_pad_to(done, d, n))
        order.extend(idx)
    if len(parts) == 1:
        return parts[0]
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    return torch.cat(parts).index_select(0, inverse.to(x.device))


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
    _check_tensor(x, check_finite=check_finite)
    d = _norm_dim(x, dim)
    n = x.shape[d]
    per_row = not isinstance(band, Band)
    if lengths is None and not per_row:
        band.check(n)
        return _apply_last2(x, d, lambda seq: _smooth_seq(seq, band.lo, band.hi, width, shape))
    if d == 0:
        raise ValueError("with per-row lengths or bands, axis 0 is the batch axis; the token axis must be another one")
    batch = x.shape[0]
    rows_len = _as_lengths(lengths, batch, n) if lengths is not None else [n] * batch
    rows_band = list(band) if per_row else [band] * batch
    if len(rows_band) != batch:
        raise ValueError(f"got {len(rows_band)} bands for a batch of {batch} rows (axis 0)")
    for b, length in zip(rows_band, rows_len):
        b.check(length)
    keys = [(length, b.lo, b.hi) for b, length in zip(rows_band, rows_len)]
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
