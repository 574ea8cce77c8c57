"""The DCT-II of Eq. 1 and its inverse along any dimension: :func:`dct` / :func:`idct`,
orthonormal (``norm="ortho"``) or exactly as printed in Eq. 1 (``norm="eq1"``), and the
orthonormal matrix itself (:func:`dct_matrix`).

The full matrix is used up to :data:`FFT_THRESHOLD` tokens and the FFT beyond
(:mod:`prismlib.spectral.dct_backends`).  Every path takes float16 and bfloat16 input and
returns that dtype; the FFTs compute in float32 and round back.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

from prismlib.spectral.checks import check_tensor, norm_dim
from prismlib.spectral.dct_backends import dct_matrix64, fft_dct

FFT_THRESHOLD = 2048
"""Above this length :func:`dct`/:func:`idct` use the FFT instead of a dense matrix."""


Norm = Literal["ortho", "eq1"]


def dct_matrix(n: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu") -> Tensor:
    """The orthonormal DCT-II matrix ``C`` of shape ``(n, n)``: ``dct(x) == C @ x``.

    Row ``k`` is the ``k``-th cosine basis vector ``cos(pi/n (t + 1/2) k)``, scaled to unit
    norm; ``C`` is orthogonal, so ``C.T`` is the inverse (the DCT-III).
    """
    if n < 1:
        raise ValueError(f"the DCT needs a length of at least 1, got {n}")
    return dct_matrix64(n).to(dtype=dtype, device=device)


def _scale(n: int, norm: Norm, dtype: torch.dtype, device: torch.device) -> Tensor:
    """Per-coefficient factor that turns orthonormal coefficients into ``norm``'s."""
    if norm == "ortho":
        return torch.ones(n, dtype=dtype, device=device)
    if norm == "eq1":
        s = torch.full((n,), math.sqrt(n / 2.0), dtype=dtype, device=device)
        s[0] = math.sqrt(n)
        return s
    raise ValueError(f"norm must be 'ortho' or 'eq1', got {norm!r}")


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
        out = fft_dct(x, d, inverse=False).movedim(d, -1)
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
        out = fft_dct(ft, ft.ndim - 1, inverse=True)
    else:
        out = ft @ dct_matrix(n, dtype=f.dtype, device=f.device)
    return out.movedim(-1, d)
