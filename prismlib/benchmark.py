"""Timing of the spectral filters against reference implementations (App. D, benchmarks/).

The references compute the same brick-wall band-pass the textbook way,
DCT -> mask -> inverse DCT: with torch-dct (the library the paper used) and with
``scipy.fft`` (NumPy, forward only: no autograd).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy.fft
import torch
from torch import Tensor

from prismlib.spectral import Band, allocate_bands, band_pass


def torch_dct_band_pass(x: Tensor, band: Band) -> Tensor:
    """Band-pass along axis -2 of ``(..., n, h)`` with torch-dct's DCT/IDCT (reference)."""
    import torch_dct

    f = torch_dct.dct(x.transpose(-1, -2), norm="ortho")
    mask = torch.zeros(x.shape[-2], dtype=x.dtype, device=x.device)
    mask[band.lo : band.hi] = 1
    return torch_dct.idct(f * mask, norm="ortho").transpose(-1, -2)


def scipy_band_pass(x: np.ndarray, band: Band) -> np.ndarray:
    """Band-pass along axis -2 with ``scipy.fft`` (reference, forward only)."""
    f = scipy.fft.dct(x, norm="ortho", axis=-2)
    f[..., : band.lo, :] = 0
    f[..., band.hi :, :] = 0
    return scipy.fft.idct(f, norm="ortho", axis=-2)


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Minimum wall time in seconds of ``fn()`` over ``repeats`` runs, after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def filter_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """Time the five band-passes of ``allocate_bands(n)`` on ``(batch, n, hidden)`` float32.

    For every ``n`` the time is the sum over the five bands, i.e. one full spectral
    decomposition as a prism layer or the probing notebook needs it.  prismlib and
    torch-dct are timed forward and forward+backward; scipy forward only.

    Returns:
        One row per (n, backend, pass): columns ``n, backend, pass, seconds``.
    """
    rows = []
    gen = torch.Generator().manual_seed(seed)
    torch_backends = {"prismlib": band_pass, "torch-dct": torch_dct_band_pass}
    for n in lengths:
        x = torch.randn(batch, n, hidden, generator=gen)
        grad = torch.randn(batch, n, hidden, generator=gen)
        bands = allocate_bands(n)

        def run(fn: Callable[[Tensor, Band], Tensor], backward: bool) -> None:
            xr = x.clone().requires_grad_(backward)
            for b in bands:
                y = fn(xr, b)
                if backward:
                    y.backward(grad)

        for name, fn in torch_backends.items():
            for backward in (False, True):
                seconds = best_time(lambda: run(fn, backward), repeats)
                rows.append((n, name, "forward+backward" if backward else "forward", seconds))
        xn = x.numpy()
        rows.append((n, "scipy", "forward", best_time(lambda: [scipy_band_pass(xn, b) for b in bands], repeats)))
    return pd.DataFrame(rows, columns=["n", "backend", "pass", "seconds"])
