"""Timing helpers of ``benchmarks/`` and of App. D's spectral-filter timings.

* :func:`benchmark_device` and :func:`describe_device`: where a benchmark runs, and a
  one-line header saying so (``no CUDA device: timings are CPU`` when CUDA was asked for
  and is absent).
* :func:`best_time`: the minimum over repeats after warm-up runs; on CUDA every run is
  timed between two CUDA events, so the time is the GPU's, not the launch's.
* :func:`filter_timings`: the five band-passes of prismlib against references that
  compute the same brick-wall band-pass the textbook way, DCT -> mask -> inverse DCT:
  torch-dct (the library the paper used) and ``scipy.fft`` (NumPy, CPU, forward only: no
  autograd).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from functools import partial

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


NO_CUDA = "no CUDA device: timings are CPU"


def benchmark_device(name: str = "auto") -> torch.device:
    """The device a benchmark runs on: ``auto`` and ``cuda[:i]`` give CUDA when there is
    one; without one they fall back to the CPU and print :data:`NO_CUDA` (no crash)."""
    device = torch.device("cuda" if name == "auto" else name)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(NO_CUDA, flush=True)
        return torch.device("cpu")
    return device


def describe_device(device: torch.device) -> str:
    """One line: torch version and the GPU's name, or the CPU with its cores and threads."""
    if device.type == "cuda":
        where = f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    else:
        cpu = platform.processor() or platform.machine()
        where = f"CPU {cpu}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads"
    return f"torch {torch.__version__}, {where}"


def best_time(
    fn: Callable[[], object], repeats: int, device: torch.device | str = "cpu", warmup: int = 1
) -> float:
    """Minimum time in seconds of ``fn()`` over ``repeats`` runs, after ``warmup`` runs.

    On CUDA each run is timed with CUDA events recorded before and after it (the GPU's
    time, the device synchronised before the first and after every run); on the CPU
    with the wall clock.
    """
    device = torch.device(device)
    for _ in range(warmup):
        fn()
    times = []
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
    else:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return min(times)


def _decompose(fn: Callable[[Tensor, Band], Tensor], x: Tensor, grad: Tensor, bands: list[Band], backward: bool) -> None:
    """The band-passes ``fn(x, band)`` of ``bands``, each back-propagated from ``grad`` if ``backward``."""
    xr = x.clone().requires_grad_(backward)
    for b in bands:
        y = fn(xr, b)
        if backward:
            y.backward(grad)


def _runs_in(fn: Callable[[Tensor, Band], Tensor], x: Tensor, band: Band) -> bool:
    """Whether ``fn`` takes ``x``'s dtype (torch-dct's FFT has no bfloat16, float16 only on CUDA)."""
    try:
        fn(x[:1], band)
    except RuntimeError:
        return False
    return True


def filter_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> pd.DataFrame:
    """Time the five band-passes of ``allocate_bands(n)`` on ``(batch, n, hidden)`` inputs.

    For every ``n`` the time is the sum over the five bands, i.e. one full spectral
    decomposition as a prism layer or the probing notebook needs it.  prismlib and
    torch-dct are timed forward and forward+backward on ``device`` in ``dtype``; where
    torch-dct cannot run in ``dtype`` it is timed in float32 (the ``dtype`` column says
    so).  scipy (forward only, float32) is timed when ``device`` is the CPU.  prismlib
    runs without its NaN check (a host synchronisation on CUDA), as the prism layer does.

    Returns:
        One row per (n, backend, pass): columns ``n, backend, pass, dtype, seconds``.
    """
    device = torch.device(device)
    rows = []
    gen = torch.Generator().manual_seed(seed)
    torch_backends = {"prismlib": partial(band_pass, check_finite=False), "torch-dct": torch_dct_band_pass}
    for n in lengths:
        x32 = torch.randn(batch, n, hidden, generator=gen)
        grad32 = torch.randn(batch, n, hidden, generator=gen)
        bands = allocate_bands(n)

        for name, fn in torch_backends.items():
            x, grad = x32.to(device, dtype), grad32.to(device, dtype)
            if not _runs_in(fn, x, bands[0]):
                x, grad = x32.to(device), grad32.to(device)
            for backward in (False, True):
                seconds = best_time(lambda: _decompose(fn, x, grad, bands, backward), repeats, device)
                rows.append((n, name, "forward+backward" if backward else "forward", _dtype_name(x.dtype), seconds))
        if device.type == "cpu":
            xn = x32.numpy()
            seconds = best_time(lambda: [scipy_band_pass(xn, b) for b in bands], repeats)
            rows.append((n, "scipy", "forward", "float32", seconds))
    return pd.DataFrame(rows, columns=["n", "backend", "pass", "dtype", "seconds"])


def _dtype_name(dtype: torch.dtype) -> str:
    """``torch.float16`` -> ``"float16"``."""
    return str(dtype).removeprefix("torch.")
