"""How the orthonormal DCT is computed (internal: the package re-exports none of it; the
public transform is :mod:`prismlib.spectral.transform`).

The DCT-II matrix's rows in float64 with exact angles (:func:`dct_rows64`, the full
matrix cached: :func:`dct_matrix64`); the DCT by one FFT along the last axis (Makhoul,
1980) on ``torch.fft``; on the CPU the DCT by pocketfft (``scipy.fft``, along any axis
without copies, an autograd function whose backward pass is the other transform);
:func:`fft_dct` picks between them (:data:`prismlib.spectral.cost.POCKETFFT`).  CPU buffers
come from NumPy (:func:`empty_cpu`), which asks for transparent huge pages for large
arrays.  float16 and bfloat16 go through the FFTs in float32 (:data:`FFT_DTYPE`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy.fft
import torch
from torch import Tensor

from prismlib.spectral import cost

FFT_DTYPE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}
"""Working dtype of the FFT path for the input dtypes ``torch.fft`` cannot take."""


NP_DTYPE = {torch.float32: np.float32, torch.float64: np.float64}


@lru_cache(maxsize=32)
def dct_matrix64(n: int) -> Tensor:
    return dct_rows64(n, 0, n)


def dct_rows64(n: int, lo: int, hi: int) -> Tensor:
    """Rows ``lo..hi-1`` of the orthonormal DCT-II matrix of length ``n``, in float64."""
    k = torch.arange(lo, hi, dtype=torch.int64)[:, None]
    t = torch.arange(n, dtype=torch.int64)[None, :]
    # cos(pi/n (t + 1/2) k) = cos(pi m / 2n) with m = (2t + 1) k reduced mod 4n (exact angles)
    m = ((2 * t + 1) * k) % (4 * n)
    c = torch.cos(math.pi * m.to(torch.float64) / (2 * n)) * math.sqrt(2.0 / n)
    if lo == 0 and hi > 0:
        c[0] /= math.sqrt(2.0)
    return c


def _dct_fft_last(x: Tensor) -> Tensor:
    """Orthonormal DCT-II along the last axis via one FFT of length n (Makhoul, 1980)."""
    if x.dtype in FFT_DTYPE:
        return _dct_fft_last(x.to(FFT_DTYPE[x.dtype])).to(x.dtype)
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
    if y.dtype in FFT_DTYPE:
        return _idct_fft_last(y.to(FFT_DTYPE[y.dtype])).to(y.dtype)
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
        return pocket(x.detach(), inverse, axis=dim)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None, None]:
        return _PocketDCT.apply(grad, ctx.dim, not ctx.inverse), None, None


def _workers(x: Tensor) -> int:
    """pocketfft threads: torch's number, or one for inputs too small to share out."""
    return torch.get_num_threads() if x.numel() >= 1 << 16 else 1


def fft_dct(x: Tensor, d: int, inverse: bool = False) -> Tensor:
    """Orthonormal DCT-II (``inverse``: DCT-III) along axis ``d`` (non-negative) by the FFT.

    On the CPU by pocketfft (:class:`_PocketDCT`), elsewhere by Makhoul's algorithm with
    ``torch.fft`` along the last axis; float16/bfloat16 are computed in float32.
    """
    if x.dtype in FFT_DTYPE:
        return fft_dct(x.to(FFT_DTYPE[x.dtype]), d, inverse).to(x.dtype)
    if x.device.type == "cpu" and cost.POCKETFFT:
        return _PocketDCT.apply(x, d, inverse)
    last = _idct_fft_last if inverse else _dct_fft_last
    return last(x.movedim(d, -1)).movedim(-1, d)


def empty_cpu(shape: Sequence[int], dtype: torch.dtype) -> Tensor:
    """An uninitialised CPU tensor in NumPy's memory.

    NumPy asks the kernel for transparent huge pages for large arrays; the first touch of
    a fresh 100 MB output then costs a quarter of what torch's allocator pays in 4 KiB
    page faults, which on the CPU is most of the time of a long decomposition.
    """
    return torch.from_numpy(np.empty(tuple(shape), dtype=NP_DTYPE[dtype]))


def pocket(x: Tensor, inverse: bool, overwrite: bool = False, axis: int = -2) -> Tensor:
    """Orthonormal DCT-II (``inverse``: DCT-III) of a CPU tensor along ``axis`` by
    pocketfft (no autograd); ``overwrite`` lets it reuse ``x``'s memory."""
    transform = scipy.fft.idct if inverse else scipy.fft.dct
    out = transform(x.numpy(), norm="ortho", axis=axis, workers=_workers(x), overwrite_x=overwrite)
    return torch.from_numpy(np.asarray(out))
