"""How the band filters compute (internal: the package re-exports none of it; the public
filters are :mod:`prismlib.spectral.filters` and :mod:`prismlib.spectral.smooth`).

With the orthonormal DCT matrix ``C`` (``N x N``), keeping the coefficients ``lo..hi-1`` is
the orthogonal projection ``P = C_b^T C_b`` with ``C_b = C[lo:hi]``.  A narrow band is
applied as two thin matrix products, ``C_b^T (C_b x)``, or as ``x - C_c^T (C_c x)`` through
the complementary rows ``C_c`` when those are fewer: ``4 * min(w, N - w) * N`` flops per
column (``w = hi - lo``), exact up to float rounding, as large dense products that run near
the machine's peak.  When that would cost more than DCTs by the FFT (the cost model of
:mod:`prismlib.spectral.cost`), the band goes through a DCT by the FFT, the mask and the
inverse DCT.  A smooth band is one product with the ``N x N`` matrix ``C^T diag(g) C`` or
the same two FFTs.  On the CPU a single filter runs as its own autograd function
(:func:`cpu_filter`: its backward pass is the same filter, the operator being symmetric),
the inverse FFT in place over the forward one's output and every product written into a
preallocated output; the FFT path then runs the same two pocketfft transforms as scipy's
``idct(mask * dct(x))`` and ties with it (README, "Benchmarks").  :func:`sectors_cpu`
filters each sector of hidden units with its own band into one output (the prism layer).
:func:`split_seq` computes all the bands of a partition at once: one forward transform,
each band back from its own coefficients, and the widest band as the signal minus the
others; on the CPU with its own backward pass (the adjoint of a projection is itself) and
large buffers taken from NumPy; elsewhere autograd differentiates the plain tensor
operations.  The thin matrices are cached per (length, band, dtype, device).

The matrix products of single band-passes run in the input's dtype (with the float64
matrices rounded to it); the FFTs, and the decomposition on the CPU, compute in float32
and round back for float16 and bfloat16.  Either way the error is a few units of the
dtype's ``eps`` times the input's scale.

Every filter acts on axis -2 of a ``(..., n, h)`` tensor: :func:`apply_last2` moves the
token axis there, and :func:`rowwise` groups the rows of a batch by their real length
(:func:`row_keys`), filters each group over its real positions and pads back with zeros.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import cast

import numpy as np
import torch
from torch import Tensor

from prismlib.spectral import cost
from prismlib.spectral.bands import Band
from prismlib.spectral.checks import as_lengths
from prismlib.spectral.cost import SplitPlan, band_path, fft_width, split_plan
from prismlib.spectral.dct_backends import FFT_DTYPE, NP_DTYPE, dct_rows64, empty_cpu, fft_dct, pocket


@lru_cache(maxsize=256)
def _projector(n: int, lo: int, hi: int, dtype: torch.dtype, device: str) -> tuple[bool, Tensor]:
    """``(complement, rows)``: the thin DCT rows that apply the band ``[lo, hi)``.

    If ``complement`` is False the filter is ``rows.T @ (rows @ x)``; otherwise it is
    ``x - rows.T @ (rows @ x)`` (fewer rows: the indices outside the band).
    """
    width = hi - lo
    if width <= n - width:
        return False, dct_rows64(n, lo, hi).to(dtype=dtype, device=device).contiguous()
    outside = torch.cat([dct_rows64(n, 0, lo), dct_rows64(n, hi, n)])
    return True, outside.to(dtype=dtype, device=device).contiguous()


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


def on_cpu_pocket(x: Tensor) -> bool:
    """Whether ``x`` takes the pocketfft path of :class:`_CpuFilter` (CPU, a float dtype)."""
    return x.device.type == "cpu" and cost.POCKETFFT and (x.dtype in NP_DTYPE or x.dtype in FFT_DTYPE)


def cpu_filter(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """:class:`_CpuFilter` of ``x``; float16/bfloat16 computed in float32 and rounded back."""
    if x.numel() == 0:  # an empty batch or hidden axis: nothing to filter
        return x.clone()
    if x.dtype in FFT_DTYPE:
        return _CpuFilter.apply(x.to(FFT_DTYPE[x.dtype]), fn).to(x.dtype)
    return _CpuFilter.apply(x, fn)


def _dct_fresh(x3: Tensor) -> Tensor:
    """The orthonormal DCT along axis 1 of ``x3`` in a fresh C-contiguous buffer: pocketfft
    writes it out of place into NumPy's memory (huge pages for large arrays), so the input
    is read once and no copy of it is made first."""
    return pocket(x3, inverse=False, overwrite=False, axis=1)


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
        return pocket(coef, inverse=True, overwrite=True, axis=1)
    complement, rows = _projector(n, lo, hi, x3.dtype, "cpu")
    coef = torch.matmul(rows, x3)
    out = empty_cpu((b, n, h), x3.dtype)
    if complement:  # x - C_c^T (C_c x)
        return torch.baddbmm(x3, rows.T.expand(b, -1, -1), coef, alpha=-1, out=out)
    return torch.matmul(rows.T, coef, out=out)


def sectors_cpu(x3: Tensor, spans: tuple[tuple[int, int], ...], slices: tuple[slice, ...]) -> Tensor:
    """Band ``spans[j]`` of the units ``slices[j]`` along axis 1 of ``x3`` ``(b, n, h)``, all
    written into one fresh buffer (no concatenation): each sector by :func:`band_path`'s path,
    the matrix products reading the sector in place (a strided view) and writing by ``out=``;
    adjacent sectors on the FFT path share one DCT, their masks and one inverse DCT (as
    scipy does for all the units)."""
    b, n, h = x3.shape
    out = empty_cpu((b, n, h), x3.dtype)
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
        out[..., cols].copy_(pocket(coef, inverse=True, overwrite=True, axis=1))
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


def gain_cpu(x3: Tensor, op: Tensor, path: str) -> Tensor:
    """``C^T diag(g) C`` along axis 1 of ``x3`` ``(b, n, h)`` by ``path`` (:func:`smooth_path`):
    ``op`` is the gain ``g`` ``(n,)`` for ``"fft+fft"``, the matrix ``C^T diag(g) C`` for ``"matmul"``."""
    if path == "fft+fft":
        coef = _dct_fresh(x3)
        c = coef.numpy()
        np.multiply(c, op.numpy()[:, None], out=c)  # NumPy, not torch: see _band_cpu
        return pocket(coef, inverse=True, overwrite=True, axis=1)
    return torch.matmul(op, x3, out=empty_cpu(x3.shape, x3.dtype))


def filter_seq(x: Tensor, lo: int, hi: int) -> Tensor:
    """Band-pass ``[lo, hi)`` along axis -2 of ``x`` of shape ``(..., n, h)``."""
    n = x.shape[-2]
    path = band_path(n, lo, hi, fft_width(x.device))
    if path == "identity":
        return x
    if on_cpu_pocket(x):
        return cpu_filter(x, functools.partial(_band_cpu, lo=lo, hi=hi, path=path))
    if path == "fft+fft":
        return _from_coefficients(x, fft_dct(x, x.ndim - 2), ((lo, hi),), 0)[0]
    complement, rows = _projector(n, lo, hi, x.dtype, str(x.device))
    kept = rows.T @ (rows @ x)
    return x - kept if complement else kept


def _is_partition(spans: Sequence[tuple[int, int]], n: int) -> bool:
    return bool(spans) and spans[0][0] == 0 and spans[-1][1] == n and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@lru_cache(maxsize=256)
def _dct_rows(n: int, ranges: tuple[tuple[int, int], ...], dtype: torch.dtype, device: str) -> Tensor:
    """The rows ``lo..hi-1`` of the orthonormal DCT matrix for each range, stacked."""
    return torch.cat([dct_rows64(n, lo, hi) for lo, hi in ranges]).to(dtype=dtype, device=device).contiguous()


def _from_coefficients(x: Tensor, coef: Tensor, spans: Sequence[tuple[int, int]], fft_width: int) -> list[Tensor]:
    """Band-passes of ``x`` (axis -2) from its full DCT ``coef``: thin rows or inverse FFT."""
    n = x.shape[-2]
    out = []
    for lo, hi in spans:
        if hi - lo > fft_width:
            masked = torch.nn.functional.pad(coef[..., lo:hi, :], (0, 0, lo, n - hi))
            out.append(fft_dct(masked, x.ndim - 2, inverse=True))
        else:
            out.append(_dct_rows(n, ((lo, hi),), x.dtype, str(x.device)).T @ coef[..., lo:hi, :])
    return out


class _CpuSplit(torch.autograd.Function):
    """:func:`split_seq` on the CPU (float32/float64) with its own backward pass.

    Every large buffer is allocated once (:func:`empty_cpu`) and written by ``out=``
    products; the FFTs are pocketfft's.  The decomposition is linear and each band-pass
    is an orthogonal projection ``P_b`` (symmetric), so the gradient of the input is
    ``sum_b P_b g_b = g_rest + sum_{b != rest} P_b (g_b - g_rest)``: the same thin rows
    and transforms as the forward pass, and nothing saved from it.
    """

    @staticmethod
    def forward(ctx, x: Tensor, plan: SplitPlan) -> tuple[Tensor, ...]:
        ctx.plan, ctx.shape = plan, x.shape
        n, h = x.shape[-2], x.shape[-1]
        x3 = x.detach().reshape(-1, n, h)
        others = [i for i in range(len(plan.spans)) if i != plan.rest]
        out: list[Tensor | None] = [None] * len(plan.spans)
        if plan.fft:
            # the DCT in place in a copy of x: that buffer is written over by the rest band at the end
            coef = pocket(empty_cpu(x3.shape, x.dtype).copy_(x3), inverse=False, overwrite=True)
            for i in others:
                lo, hi = plan.spans[i]
                if hi - lo > plan.fft_width:
                    masked = empty_cpu(x3.shape, x.dtype)
                    masked[:, :lo] = 0
                    masked[:, lo:hi] = coef[:, lo:hi]
                    masked[:, hi:] = 0
                    out[i] = pocket(masked, inverse=True, overwrite=True)
                else:
                    out[i] = torch.matmul(_dct_rows(n, ((lo, hi),), x.dtype, "cpu").T, coef[:, lo:hi], out=empty_cpu(x3.shape, x.dtype))
        else:
            ranges = tuple(plan.spans[i] for i in others)
            rows = _dct_rows(n, ranges, x.dtype, "cpu")
            coef = torch.matmul(rows, x3, out=empty_cpu((x3.shape[0], rows.shape[0], h), x.dtype))
            start = 0
            for i in others:
                w = plan.spans[i][1] - plan.spans[i][0]
                out[i] = torch.matmul(rows[start : start + w].T, coef[:, start : start + w], out=empty_cpu(x3.shape, x.dtype))
                start += w
        rest = torch.sub(x3, cast(Tensor, out[others[0]]), out=coef if plan.fft else empty_cpu(x3.shape, x.dtype))
        for i in others[1:]:
            rest.sub_(cast(Tensor, out[i]))
        out[plan.rest] = rest
        return tuple(y.view(x.shape) for y in out)  # type: ignore[union-attr]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads: Tensor) -> tuple[Tensor, None]:
        plan: SplitPlan = ctx.plan
        n, h = ctx.shape[-2], ctx.shape[-1]
        g = [gb.reshape(-1, n, h) for gb in grads]
        dtype = g[0].dtype
        g_rest = g[plan.rest]
        others = [i for i in range(len(plan.spans)) if i != plan.rest]
        diff = empty_cpu(g_rest.shape, dtype)  # g_b - g_rest, one band after the other
        if plan.fft:
            coef = empty_cpu(g_rest.shape, dtype)  # the rows of every band but the rest are written below
            coef[:, plan.spans[plan.rest][0] : plan.spans[plan.rest][1]] = 0
            for i in others:
                lo, hi = plan.spans[i]
                torch.sub(g[i], g_rest, out=diff)
                if hi - lo > plan.fft_width:
                    coef[:, lo:hi] = pocket(diff, inverse=False, overwrite=True)[:, lo:hi]  # diff is scratch
                else:
                    torch.matmul(_dct_rows(n, ((lo, hi),), dtype, "cpu"), diff, out=coef[:, lo:hi])
            grad = pocket(coef, inverse=True, overwrite=True).add_(g_rest)
        else:
            ranges = tuple(plan.spans[i] for i in others)
            rows = _dct_rows(n, ranges, dtype, "cpu")
            coef = empty_cpu((g_rest.shape[0], rows.shape[0], h), dtype)
            start = 0
            for i in others:
                w = plan.spans[i][1] - plan.spans[i][0]
                torch.sub(g[i], g_rest, out=diff)
                torch.matmul(rows[start : start + w], diff, out=coef[:, start : start + w])
                start += w
            grad = torch.baddbmm(g_rest, rows.T.expand(g_rest.shape[0], -1, -1), coef, out=empty_cpu(g_rest.shape, dtype))
        return grad.view(ctx.shape), None


def split_seq(x: Tensor, spans: tuple[tuple[int, int], ...]) -> list[Tensor]:
    """Band-passes of ``x`` of shape ``(..., n, h)`` along axis -2, one per span of ``spans``.

    When the spans partition ``0..n-1`` they share one forward transform and the widest
    band is the signal minus the others (:class:`SplitPlan`); otherwise each band is
    filtered alone.
    """
    n = x.shape[-2]
    if not _is_partition(spans, n):
        return [filter_seq(x, lo, hi) for lo, hi in spans]
    if len(spans) == 1:
        return [x]
    plan = split_plan(n, spans, fft_width(x.device))
    if x.device.type == "cpu" and cost.POCKETFFT:
        if x.dtype in FFT_DTYPE:
            return [y.to(x.dtype) for y in _CpuSplit.apply(x.to(FFT_DTYPE[x.dtype]), plan)]
        return list(_CpuSplit.apply(x, plan))
    others = [i for i in range(len(spans)) if i != plan.rest]
    out: list[Tensor | None] = [None] * len(spans)
    if plan.fft:
        coef = fft_dct(x, x.ndim - 2)
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
    acc_dtype = FFT_DTYPE.get(x.dtype, x.dtype)
    acc = (
        cast(Tensor, out[others[0]]).to(acc_dtype) + cast(Tensor, out[others[1]])
        if len(others) > 1
        else cast(Tensor, out[others[0]]).to(acc_dtype)
    )
    for i in others[2:]:
        acc += cast(Tensor, out[i])
    out[plan.rest] = (x.to(acc_dtype) - acc).to(x.dtype) if acc_dtype != x.dtype else x - acc
    return out  # type: ignore[return-value]


def row_keys(x: Tensor, band: Band | Sequence[Band], d: int, lengths: Sequence[int] | Tensor | None) -> list[tuple[int, int, int]]:
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


def apply_last2(x: Tensor, d: int, fn) -> Tensor:
    """Apply ``fn`` (acting on axis -2 of a ``(..., n, h)`` tensor) with ``d`` as that axis."""
    return apply_last2_all(x, d, lambda seq: [fn(seq)])[0]


def apply_last2_all(x: Tensor, d: int, fn) -> list[Tensor]:
    """:func:`apply_last2` for an ``fn`` that returns a list of tensors shaped like its input."""
    if x.ndim == 1:
        return [y[:, 0] for y in fn(x[:, None])]
    if d == x.ndim - 2:
        return fn(x)
    if d == x.ndim - 1:
        return [y.squeeze(-1) for y in fn(x.unsqueeze(-1))]
    return [y.movedim(-2, d) for y in fn(x.movedim(d, -2))]


def rowwise(x: Tensor, d: int, keys: list[tuple], fn) -> Tensor:
    """Apply ``fn(part, key)`` to the rows of axis 0 grouped by ``key = (length, ...)``.

    Each group's rows are narrowed to their real ``length`` along ``d`` and ``fn`` acts
    on that axis (as axis -2); the results are zero-padded back and returned in row order.
    """
    return rowwise_all(x, d, keys, lambda seq, key: [fn(seq, key)])[0]


def rowwise_all(x: Tensor, d: int, keys: list[tuple], fn) -> list[Tensor]:
    """:func:`rowwise` for an ``fn`` that returns a list of tensors shaped like its input."""
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
        done = apply_last2_all(part.narrow(d, 0, key[0]), d, lambda seq, key=key: fn(seq, key))
        parts.append([_pad_to(y, d, n) for y in done])
        order.extend(idx)
    if len(parts) == 1:
        return parts[0]
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order)] = torch.arange(len(order))
    inverse = inverse.to(x.device)
    return [torch.cat(group).index_select(0, inverse) for group in zip(*parts)]
