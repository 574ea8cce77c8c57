"""App. D's spectral-filter timings (``benchmarks/spectral.py``, notebook 01), timed by
:mod:`prismlib.timing`.

* :func:`filter_timings`: one five-band decomposition by prismlib
  (:func:`~prismlib.spectral.band_decomposition`) against references that compute the
  same brick-wall bands the textbook way, one DCT -> a mask per band -> an inverse DCT per
  band: torch-dct (the library the paper used) and ``scipy.fft`` (NumPy, CPU, forward
  only: no autograd), with a plain matrix product of the same size as the yardstick of
  this machine's speed.
* :func:`band_timings`: each band of :func:`~prismlib.spectral.band_pass` alone against
  scipy's and torch-dct's DCT -> mask -> IDCT.
* :func:`roofline_timings`: the decomposition in half precision against the bandwidth of a
  plain copy of the same input (the memory roofline).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np
import pandas as pd
import scipy.fft
import torch
from torch import Tensor

from prismlib.spectral.bands import Band, allocate_bands
from prismlib.spectral.cost import fft_flops, fft_width, split_plan
from prismlib.spectral.filters import band_decomposition
from prismlib.timing import interleaved_times, spread


def torch_dct_decomposition(x: Tensor, bands: list[Band]) -> list[Tensor]:
    """The band-passes of ``bands`` along axis -2 by torch-dct: one DCT, a mask and an IDCT per band."""
    import torch_dct

    f = torch_dct.dct(x.transpose(-1, -2), norm="ortho")
    out = []
    for band in bands:
        mask = torch.zeros(x.shape[-2], dtype=f.dtype, device=f.device)
        mask[band.lo : band.hi] = 1
        out.append(torch_dct.idct(f * mask, norm="ortho").transpose(-1, -2))
    return out


def scipy_decomposition(x: np.ndarray, bands: list[Band], workers: int | None = None) -> list[np.ndarray]:
    """The band-passes of ``bands`` along axis -2 by ``scipy.fft``: one DCT, a mask and an
    IDCT per band, on ``workers`` threads (forward only)."""
    f = scipy.fft.dct(x, norm="ortho", axis=-2, workers=workers)
    out = []
    for band in bands:
        mask = np.zeros((x.shape[-2], 1), dtype=f.dtype)
        mask[band.lo : band.hi] = 1
        # f * mask, not zeros_like + copy: NumPy's fresh arrays get huge pages, calloc's do not
        out.append(scipy.fft.idct(f * mask, norm="ortho", axis=-2, workers=workers, overwrite_x=True))
    return out


def _runs_in(fn: Callable[[Tensor, list[Band]], object], x: Tensor, bands: list[Band]) -> bool:
    """Whether ``fn`` takes ``x``'s dtype (torch-dct's FFT has no bfloat16, float16 only on CUDA)."""
    try:
        fn(x[:1], bands)
    except RuntimeError:
        return False
    return True


def _prismlib_decomposition(x: Tensor, bands: list[Band]) -> list[Tensor]:
    return band_decomposition(x, bands, check_finite=False)


BACKENDS = ("prismlib", "torch-dct", "scipy")
"""What :func:`filter_timings` can time (scipy on the CPU only)."""

REFERENCE_WIDTH = 2048
"""The yardstick matmul of length ``n`` is ``(batch * hidden, n) @ (n, min(n, REFERENCE_WIDTH))``."""


def filter_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    reference: bool = False,
    backends: Collection[str] = BACKENDS,
) -> pd.DataFrame:
    """Time one decomposition into the five bands of ``allocate_bands(n)`` of ``(batch, n, hidden)`` inputs.

    prismlib's :func:`~prismlib.spectral.band_decomposition` and torch-dct are timed forward
    and forward+backward (the five outputs back-propagated together) on ``device`` in
    ``dtype``; where torch-dct cannot run in ``dtype`` it is timed in float32 (the ``dtype``
    column says so).  scipy (forward only, float32, as many workers as torch has threads)
    is timed when ``device`` is the CPU.  With ``reference`` a plain matrix product
    ``(batch * hidden, n) @ (n, min(n, REFERENCE_WIDTH))`` in ``dtype`` is timed too
    (backend ``matmul``, pass ``reference``): the speed this machine reaches on dense
    arithmetic.  All of them are timed in turns (:func:`interleaved_times`), ``repeats``
    rounds after one warm-up run each; prismlib runs without its NaN check (a host
    synchronisation on CUDA), as the prism layer does.  ``backends`` names which of
    :data:`BACKENDS` run (prismlib always): on 2 CPU cores torch-dct's runs at N >= 1024
    allocate gigabytes, and the runs timed after them can slow down by several times,
    so a pair compared alone (``("prismlib", "scipy")``) is the cleaner comparison.

    Returns:
        One row per (n, backend, pass) with columns ``n, backend, pass, dtype``,
        ``seconds`` (the minimum over the rounds), ``median`` (seconds), ``spread``
        (median / minimum), ``gflop`` (the algorithm's arithmetic: matrix products at
        ``2`` flops per multiply-add, each FFT-based DCT at ``2.5 n log2 n``; the
        backward pass counted as much as the forward) and ``gflops`` (``gflop / seconds``).
    """
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        raise ValueError(f"unknown backends {sorted(unknown)}: choose from {list(BACKENDS)}")
    device = torch.device(device)
    rows = []
    gen = torch.Generator().manual_seed(seed)
    workers = torch.get_num_threads()
    torch_backends = {"prismlib": _prismlib_decomposition}
    if "torch-dct" in backends:
        torch_backends["torch-dct"] = torch_dct_decomposition
    for n in lengths:
        x32 = torch.randn(batch, n, hidden, generator=gen)
        grad32 = torch.randn(batch, n, hidden, generator=gen)
        bands = allocate_bands(n)
        columns = batch * hidden
        plan = split_plan(n, tuple((b.lo, b.hi) for b in bands), fft_width(device))
        textbook = (1 + len(bands)) * fft_flops(n) * columns
        flops = {"prismlib": plan.flops() * columns, "torch-dct": textbook, "scipy": textbook}
        fns: dict[tuple[str, str], Callable[..., object]] = {}
        meta: dict[tuple[str, str], tuple[str, float]] = {}
        for name, fn in torch_backends.items():
            x, grad = x32.to(device, dtype), grad32.to(device, dtype)
            if not _runs_in(fn, x, bands):
                x, grad = x32.to(device), grad32.to(device)
            leaf = x.detach().requires_grad_(True)
            fns[(name, "forward")] = lambda fn=fn, x=x: fn(x, bands)
            fns[(name, "forward+backward")] = lambda fn=fn, leaf=leaf, grad=grad: _backward(fn, leaf, grad, bands)
            meta[(name, "forward")] = (_dtype_name(x.dtype), flops[name])
            meta[(name, "forward+backward")] = (_dtype_name(x.dtype), 2 * flops[name])
        if device.type == "cpu" and "scipy" in backends:
            xn = x32.numpy()
            fns[("scipy", "forward")] = lambda: scipy_decomposition(xn, bands, workers)
            meta[("scipy", "forward")] = ("float32", flops["scipy"])
        if reference:
            width = min(n, REFERENCE_WIDTH)
            a = torch.randn(columns, n, generator=gen).to(device, dtype)
            b = torch.randn(n, width, generator=gen).to(device, dtype)
            fns[("matmul", "reference")] = lambda a=a, b=b: a @ b
            meta[("matmul", "reference")] = (_dtype_name(dtype), 2.0 * columns * n * width)
        times = interleaved_times(fns, repeats, device)
        for (name, pass_), ts in times.items():
            dtype_name, flop = meta[(name, pass_)]
            best = min(ts)
            rows.append((n, name, pass_, dtype_name, best, float(np.median(ts)), spread(ts), flop / 1e9, flop / 1e9 / best))
        del fns, times
    columns_ = ["n", "backend", "pass", "dtype", "seconds", "median", "spread", "gflop", "gflops"]
    return pd.DataFrame(rows, columns=columns_)


def _backward(fn: Callable[[Tensor, list[Band]], list[Tensor]], leaf: Tensor, grad: Tensor, bands: list[Band]) -> None:
    """The decomposition ``fn(leaf, bands)``, its outputs back-propagated together from ``grad``."""
    leaf.grad = None
    outputs = fn(leaf, bands)
    torch.autograd.backward(outputs, [grad] * len(outputs))


def _dtype_name(dtype: torch.dtype) -> str:
    """``torch.float16`` -> ``"float16"``."""
    return str(dtype).removeprefix("torch.")


def scipy_band_pass(x: np.ndarray, band: Band, workers: int | None = None) -> np.ndarray:
    """One brick-wall band along axis -2 by ``scipy.fft`` as a user writes it: DCT, the mask
    in place, inverse DCT over the same buffer (forward only)."""
    f = scipy.fft.dct(x, norm="ortho", axis=-2, workers=workers)
    f[..., : band.lo, :] = 0
    f[..., band.hi :, :] = 0
    return scipy.fft.idct(f, norm="ortho", axis=-2, workers=workers, overwrite_x=True)


def torch_dct_band_pass(x: Tensor, band: Band) -> Tensor:
    """One brick-wall band along axis -2 by torch-dct: DCT, a mask, inverse DCT."""
    import torch_dct

    mask = torch.zeros(x.shape[-2], dtype=x.dtype, device=x.device)
    mask[band.lo : band.hi] = 1
    return torch_dct.idct(torch_dct.dct(x.transpose(-1, -2), norm="ortho") * mask, norm="ortho").transpose(-1, -2)


def band_flops(n: int, band: Band, path: str) -> float:
    """Arithmetic per column of one band-pass by ``path`` (:func:`~prismlib.spectral.band_path`):
    ``4 n thin`` on the matrix path (``thin`` rows there and back), two DCTs by the FFT else."""
    if path == "identity":
        return 0.0
    if path == "matmul":
        return 4.0 * n * min(band.hi - band.lo, n - (band.hi - band.lo))
    return 2 * fft_flops(n)


def band_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    backends: Collection[str] = BACKENDS,
) -> pd.DataFrame:
    """Time :func:`~prismlib.spectral.band_pass` of each band of ``allocate_bands(n)`` alone.

    For every length and band: prismlib forward and forward+backward, torch-dct the same
    (where it runs in ``dtype``, else in float32, said in ``dtype``), scipy forward on the
    CPU (:func:`scipy_band_pass`, float32), all in turns (:func:`interleaved_times`), and
    per length the yardstick matmul of :func:`filter_timings`.

    Returns:
        :func:`filter_timings`' columns plus ``band`` and ``path`` (prismlib's path, from
        :func:`~prismlib.spectral.band_path`; empty for the other backends).
    """
    from prismlib.spectral.cost import band_path
    from prismlib.spectral.filters import band_pass

    device = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    workers = torch.get_num_threads()
    columns = batch * hidden
    rows = []
    for n in lengths:
        x32 = torch.randn(batch, n, hidden, generator=gen)
        grad32 = torch.randn(batch, n, hidden, generator=gen)
        xn = x32.numpy()
        width = min(n, REFERENCE_WIDTH)
        a = torch.randn(columns, n, generator=gen).to(device, dtype)
        b = torch.randn(n, width, generator=gen).to(device, dtype)
        for band in allocate_bands(n):
            path = band_path(n, band.lo, band.hi, fft_width(device))
            flops = {"prismlib": band_flops(n, band, path) * columns, "torch-dct": 2 * fft_flops(n) * columns}
            flops["scipy"] = flops["torch-dct"]
            fns: dict[tuple[str, str], Callable[..., object]] = {}
            meta: dict[tuple[str, str], tuple[str, float]] = {}
            impls: dict[str, Callable[..., Tensor]] = {"prismlib": lambda v, band=band: band_pass(v, band, check_finite=False)}
            if "torch-dct" in backends:
                impls["torch-dct"] = lambda v, band=band: torch_dct_band_pass(v, band)
            for name, fn in impls.items():
                x, grad = x32.to(device, dtype), grad32.to(device, dtype)
                try:
                    fn(x[:1])
                except RuntimeError:
                    x, grad = x32.to(device), grad32.to(device)
                leaf = x.detach().requires_grad_(True)
                fns[(name, "forward")] = lambda fn=fn, x=x: fn(x)
                fns[(name, "forward+backward")] = lambda fn=fn, leaf=leaf, grad=grad: fn(leaf).backward(grad)
                meta[(name, "forward")] = (_dtype_name(x.dtype), flops[name])
                meta[(name, "forward+backward")] = (_dtype_name(x.dtype), 2 * flops[name])
            if device.type == "cpu" and "scipy" in backends:
                fns[("scipy", "forward")] = lambda band=band: scipy_band_pass(xn, band, workers)
                meta[("scipy", "forward")] = ("float32", flops["scipy"])
            fns[("matmul", "reference")] = lambda: a @ b
            meta[("matmul", "reference")] = (_dtype_name(dtype), 2.0 * columns * n * width)
            times = interleaved_times(fns, repeats, device)
            for (name, pass_), ts in times.items():
                dtype_name, flop = meta[(name, pass_)]
                best = min(ts)
                rows.append((n, band.name, path if name == "prismlib" else "", name, pass_, dtype_name, best,
                             float(np.median(ts)), spread(ts), flop / 1e9, flop / 1e9 / best))  # fmt: skip
            del fns, times
    cols = ["n", "band", "path", "backend", "pass", "dtype", "seconds", "median", "spread", "gflop", "gflops"]
    return pd.DataFrame(rows, columns=cols)


def roofline_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float16,
) -> pd.DataFrame:
    """The five-band decomposition against the memory-bandwidth roofline of ``device``.

    Per length, in turns: :func:`~prismlib.spectral.band_decomposition` forward of a
    ``(batch, n, hidden)`` input in ``dtype``, and a plain copy of that input into a
    preallocated tensor (``Tensor.copy_``), the device's practical bandwidth.  The
    decomposition reads its input once and writes five outputs at least: ``6`` times the
    input's bytes, where the copy moves ``2``.

    Returns:
        One row per length: ``n, dtype, bytes`` (the input's), ``decomposition s``,
        ``copy s``, ``copy GB/s`` (``2 bytes / copy s``), ``decomposition GB/s``
        (``6 bytes / decomposition s``) and ``% of copy`` (the ratio of the two bandwidths:
        how close the decomposition runs to the memory roofline).
    """
    device = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        x = torch.randn(batch, n, hidden, generator=gen).to(device, dtype)
        out = torch.empty_like(x)
        bands = allocate_bands(n)
        times = interleaved_times(
            {"decomposition": lambda: band_decomposition(x, bands, check_finite=False), "copy": lambda: out.copy_(x)},
            repeats,
            device,
        )
        nbytes = x.numel() * x.element_size()
        dec, cp = min(times["decomposition"]), min(times["copy"])
        rows.append((n, _dtype_name(dtype), nbytes, dec, cp, 2 * nbytes / cp / 1e9, 6 * nbytes / dec / 1e9))
    df = pd.DataFrame(rows, columns=["n", "dtype", "bytes", "decomposition s", "copy s", "copy GB/s", "decomposition GB/s"])
    df["% of copy"] = 100 * df["decomposition GB/s"] / df["copy GB/s"]
    return df


CROSSOVER_WIDTHS = (16, 64, 128, 192, 256)
"""Thin widths (DCT-matrix rows) at which :func:`crossover_timings` times the matrix path."""


def crossover_timings(
    lengths: list[int] | tuple[int, ...],
    batch: int = 8,
    hidden: int = 768,
    repeats: int = 5,
    seed: int = 0,
    widths: tuple[int, ...] = CROSSOVER_WIDTHS,
) -> pd.DataFrame:
    """Where the CPU's matrix path stops beating two DCTs by the FFT: the data behind
    :data:`~prismlib.spectral.FFT_WIDTH`.

    Per length ``n``, in turns (:func:`interleaved_times`), float32 ``(batch, n, hidden)``,
    forward: the ``"fft+fft"`` path of one band (its cost does not depend on the band) and
    the ``"matmul"`` path of a band ``[0, w)`` for each ``w`` of ``widths`` below ``n / 2``
    (``2 w`` DCT-matrix rows, there and back).  A least-squares line through the matrix
    times, ``a + b w``, gives the break-even thin width ``(fft - a) / b``: the cost model's
    ``FFT_WIDTH`` for that length.  (The backward pass is the same filter: same costs.)

    Returns:
        One row per length: ``n``, ``fft+fft s``, ``matmul s at w`` for each width,
        ``s per row`` (``b``), ``crossover`` (rows; ``inf`` when no width was timed or the
        matrix time does not grow with ``w``) and ``spread`` (the largest median over
        minimum of the timings, :func:`spread`).
    """
    from prismlib.spectral.cost import FFT_WIDTH
    from prismlib.spectral.filters import band_pass

    def forced(width: int, band: Band) -> Callable[[], object]:
        """``band_pass`` of ``x`` with the CPU's FFT_WIDTH set to ``width`` for the call
        (0 forces the FFT path, ``n`` the matrix path)."""

        def run() -> object:
            saved, FFT_WIDTH["cpu"] = FFT_WIDTH["cpu"], width
            try:
                return band_pass(x, band, check_finite=False)
            finally:
                FFT_WIDTH["cpu"] = saved

        return run

    gen = torch.Generator().manual_seed(seed)
    rows = []
    for n in lengths:
        x = torch.randn(batch, n, hidden, generator=gen)
        ws = [w for w in widths if 2 * w < n]
        fns: dict[object, Callable[[], object]] = {"fft": forced(0, Band("b", 0, n // 2))}
        for w in ws:
            fns[w] = forced(n, Band("b", 0, w))
        times = interleaved_times(fns, repeats)
        best = {k: min(v) for k, v in times.items()}
        slope, crossover = float("nan"), float("inf")
        if len(ws) >= 2:
            slope, intercept = np.polyfit(ws, [best[w] for w in ws], 1)
            if slope > 0:
                crossover = (best["fft"] - intercept) / slope
        row = {"n": n, "fft+fft s": best["fft"]}
        row.update({f"matmul s at {w}": best.get(w, float("nan")) for w in widths})
        row.update({"s per row": slope, "crossover": crossover, "spread": max(spread(v) for v in times.values())})
        rows.append(row)
        del fns, times
    return pd.DataFrame(rows)


def scipy_gain_filter(x: np.ndarray, gain: np.ndarray, workers: int | None = None) -> np.ndarray:
    """``idct(gain * dct(x))`` along axis -2 by ``scipy.fft``, ``gain`` of shape ``(n, h)`` or
    ``(n, 1)``: a smooth band (one gain per index) or the prism layer (a 0/1 mask per sector)."""
    f = scipy.fft.dct(x, norm="ortho", axis=-2, workers=workers)
    f *= gain
    return scipy.fft.idct(f, norm="ortho", axis=-2, workers=workers, overwrite_x=True)


def sector_timings(
    lengths: list[int] | tuple[int, ...], slices: list[slice], batch: int = 8, repeats: int = 5, seed: int = 0
) -> pd.DataFrame:
    """The prism layer's filter and each smooth band against scipy on the CPU, forward, float32.

    Per length, in turns (:func:`interleaved_times`): :func:`~prismlib.spectral.sector_band_pass`
    of the five sectors ``slices`` of the hidden units (the prism layer's:
    ``prismlib.prism.sector_slices(hidden)``; bands of ``allocate_bands(n)``) against scipy's DCT -> one mask per sector -> IDCT, and
    :func:`~prismlib.spectral.smooth_band_pass` of each band against scipy's DCT -> gain -> IDCT
    (:func:`scipy_gain_filter`).

    Returns:
        One row per (n, filter): ``n``, ``filter`` (``sectors`` or ``smooth <band>``), ``path``
        (``matmul``/``fft+fft`` for a smooth band, the sectors' paths joined by ``/``),
        ``prismlib s``, ``scipy s``, ``scipy/prismlib`` and ``spread`` (the larger of the two).
    """
    from prismlib.spectral.cost import band_path, smooth_path
    from prismlib.spectral.filters import sector_band_pass
    from prismlib.spectral.smooth import smooth_band_pass, smooth_gain

    gen = torch.Generator().manual_seed(seed)
    workers = torch.get_num_threads()
    hidden = max(sl.stop for sl in slices)
    rows = []
    for n in lengths:
        x = torch.randn(batch, n, hidden, generator=gen)
        xn = x.numpy()
        bands = allocate_bands(n)
        mask = np.zeros((n, hidden), dtype=np.float32)
        for band, sl in zip(bands, slices):
            mask[band.lo : band.hi, sl] = 1
        fns: dict[tuple[str, str], Callable[..., object]] = {
            ("sectors", "prismlib"): lambda: sector_band_pass(x, bands, slices, check_finite=False),
            ("sectors", "scipy"): lambda: scipy_gain_filter(xn, mask, workers),
        }
        paths = {"sectors": "/".join(band_path(n, b.lo, b.hi, fft_width("cpu")) for b in bands)}
        for band in bands:
            gain = smooth_gain(n, band).numpy().astype(np.float32)[:, None]
            name = f"smooth {band.name}"
            fns[(name, "prismlib")] = lambda band=band: smooth_band_pass(x, band, check_finite=False)
            fns[(name, "scipy")] = lambda gain=gain: scipy_gain_filter(xn, gain, workers)
            paths[name] = smooth_path(n, fft_width("cpu"))
        times = interleaved_times(fns, repeats)
        for name, path in paths.items():
            mine, ref = times[(name, "prismlib")], times[(name, "scipy")]
            rows.append((n, name, path, min(mine), min(ref), min(ref) / min(mine), max(spread(mine), spread(ref))))
        del fns, times
    cols = ["n", "filter", "path", "prismlib s", "scipy s", "scipy/prismlib", "spread"]
    return pd.DataFrame(rows, columns=cols)
