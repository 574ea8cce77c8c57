"""Benchmark: prismlib's five-band decomposition vs torch-dct (vs scipy on the CPU), in one run on this machine.

    python benchmarks/spectral.py                 # headline (8, 512, 768) + sweep N = 32..8192, float32, CPU
    python benchmarks/spectral.py --quick         # fewer rounds, shorter sweep
    python benchmarks/spectral.py --device cuda --dtypes float32,float16,bfloat16
    python benchmarks/spectral.py --backends prismlib,scipy   # a pair alone (see below)
    python benchmarks/spectral.py --tables single --lengths 512,1024   # each band alone
    python benchmarks/spectral.py --device cuda --dtypes float16,bfloat16 --tables roofline

Tables (--tables, comma-separated, default five,single):
  five      the five-band decomposition (below);
  single    band_pass of each band alone against scipy's and torch-dct's DCT -> mask ->
            IDCT, with prismlib's path, GFLOP/s and the yardstick matmul; every ratio under
            1 (prismlib slower) is listed after the table;
  roofline  the decomposition against a plain copy of the same input: effective GB/s
            (6 x the input's bytes: read once, five outputs written) as a share of the
            copy's (2 x): the memory-bandwidth roofline, meant for float16/bfloat16 on GPUs;
  crossover the CPU's matrix path of a band [0, w) at several thin widths w against the
            FFT path, and the w where a line through the matrix times meets the FFT's:
            the measurement behind FFT_WIDTH (prismlib.spectral), which it prints beside;
  sectors   the prism layer's filter (sector_band_pass of five sectors of the hidden
            units) and smooth_band_pass of each band against scipy's DCT -> mask or
            gain -> IDCT (CPU, forward), every ratio under 1 listed.

Each time is one full decomposition of a (batch, N, hidden) input into the five bands
of allocate_bands(N): prismlib's band_decomposition (one forward transform shared by
the bands, the widest band by subtraction) against the textbook way with each library,
one DCT, then a mask and an inverse DCT per band. Forward+backward back-propagates the
five outputs together. scipy has no autograd: it is timed forward only (CPU, float32,
as many workers as torch has threads); forward+backward is compared with torch-dct.
torch-dct's FFT takes no bfloat16 (and float16 only on CUDA, for powers of two): where
it cannot run in a dtype it is timed in float32 and the table says so.

Robust on a shared machine: for each N every implementation, and a plain matrix product
(batch*hidden, N) @ (N, min(N, 2048)) as the yardstick of this machine's speed, runs
once per round, in turns, for several rounds; the time is the minimum over the rounds,
and a warning is printed when the rounds disagree (median / minimum above 1.5). The
load average is printed before and after. GFLOP/s count the arithmetic of the
algorithm each implementation runs (matrix products 2 flops per multiply-add, an
FFT-based DCT 2.5 N log2 N per column, backward as much as forward), so prismlib's
column next to the matmul's shows how far it is from this machine's dense speed.
Speed is never asserted by the tests: read the ratios here. On a busy machine every
parallel region of torch (even a tiny matrix product) can wait a scheduler slice, 4 to
16 ms, for its second thread: short inputs then time the scheduler, not the code; run
when the load average is below the number of cores, or with --threads 1.
torch-dct's runs at N >= 1024 allocate gigabytes, and on 2 cores whatever runs after
them can slow down by several times (measured: scipy at N = 4096 took 1.3 s after them,
0.36 s alone): compare prismlib with scipy alone with --backends prismlib,scipy.
"""

from __future__ import annotations

import argparse
import os

import pandas as pd
import torch

from prismlib.prism import sector_slices
from prismlib.spectral import (
    BACKENDS,
    allocate_bands,
    band_timings,
    crossover_timings,
    fft_width,
    filter_timings,
    roofline_timings,
    sector_timings,
    split_plan,
)
from prismlib.timing import SPREAD_WARNING, benchmark_device, describe_device

FULL_SWEEP = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
QUICK_SWEEP = (32, 512, 4096)
LONG = 2048


def path(n: int, device: torch.device) -> str:
    """The path prismlib takes for the five bands of length n: matmul or FFT (with its inverse FFTs)."""
    spans = tuple((b.lo, b.hi) for b in allocate_bands(n))
    plan = split_plan(n, spans, fft_width(device))
    if not plan.fft:
        return "matmul"
    inverse = sum(hi - lo > plan.fft_width for i, (lo, hi) in enumerate(spans) if i != plan.rest)
    return f"fft 1+{inverse}"


def ms_and_ratios(ms: pd.DataFrame) -> pd.DataFrame:
    """Milliseconds per backend and each reference's time over prismlib's, from a backend-column pivot."""
    out = pd.DataFrame(index=ms.index)
    for backend in ("prismlib", "torch-dct", "scipy"):
        if backend in ms:
            out[f"{backend} ms"] = ms[backend]
    for ref in ("torch-dct", "scipy"):
        if ref in ms:
            out[f"{ref}/prismlib"] = ms[ref] / ms["prismlib"]
    return out


def table(df: pd.DataFrame, device: torch.device) -> pd.DataFrame:
    """One row per (n, pass): milliseconds, ratios over prismlib, GFLOP/s of prismlib and of the matmul."""
    runs = df[df["backend"] != "matmul"]
    ms = runs.pivot_table(index=["n", "pass"], columns="backend", values="seconds") * 1e3
    out = ms_and_ratios(ms)
    mine = runs[runs["backend"] == "prismlib"].set_index(["n", "pass"])
    out["prismlib GFLOP/s"] = mine["gflops"]
    matmul = df[df["backend"] == "matmul"].set_index("n")["gflops"]
    if len(matmul):
        out["matmul GFLOP/s"] = [matmul.get(n, float("nan")) for n, _ in out.index]
        out["% of matmul"] = 100 * out["prismlib GFLOP/s"] / out["matmul GFLOP/s"]
    out["path"] = [path(n, device) for n, _ in out.index]
    return out


def single_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (n, band, pass): milliseconds, ratios over prismlib, prismlib's path and GFLOP/s, the matmul's."""
    runs = df[df["backend"] != "matmul"]
    ms = runs.pivot_table(index=["n", "band", "pass"], columns="backend", values="seconds", sort=False) * 1e3
    out = ms_and_ratios(ms)
    mine = runs[runs["backend"] == "prismlib"].set_index(["n", "band", "pass"])
    out["path"] = mine["path"]
    out["prismlib GFLOP/s"] = mine["gflops"]
    matmul = df[df["backend"] == "matmul"].groupby("n")["gflops"].max()
    out["matmul GFLOP/s"] = [matmul.get(n, float("nan")) for n, _, _ in out.index]
    return out


def under_one(table_: pd.DataFrame) -> list[str]:
    """Lines naming every ratio under 1 (prismlib slower than the reference) in ``table_``."""
    lines = []
    for col in [c for c in table_.columns if c.endswith("/prismlib")]:
        for key, ratio in table_[col].items():
            if ratio < 1:
                lines.append(f"UNDER 1: {col} = {ratio:.2f} at {key}")
    return lines


def fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def show(df: pd.DataFrame, title: str, device: torch.device, single: bool = False) -> None:
    print(f"\n== {title} ==")
    ran_in = df[df["backend"] != "matmul"].groupby("backend")["dtype"].agg(lambda d: ",".join(sorted(set(d))))
    print("dtype per backend: " + ", ".join(f"{b} {d}" for b, d in ran_in.items()))
    shown = single_table(df) if single else table(df, device)
    print(shown.to_string(float_format=fmt))
    print("\n".join(under_one(shown)) or "every ratio is above 1")
    noisy = df[df["spread"] > SPREAD_WARNING]
    for _, row in noisy.iterrows():
        print(
            f"WARNING: n={row['n']} {row['backend']} {row['pass']}: rounds disagree (median {row['median'] * 1e3:.1f} ms"
            f" = {row['spread']:.2f} x the minimum {row['seconds'] * 1e3:.1f} ms); the machine was busy, "
            "the minimum is the best estimate"
        )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and a shorter sweep")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (no CUDA device: the CPU, said so)")
    parser.add_argument("--dtypes", default="float32", help="comma-separated: float32,float16,bfloat16,float64")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, from " + ",".join(BACKENDS))
    parser.add_argument("--tables", default="five,single", help="comma-separated: five, single, roofline, crossover, sectors")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--lengths", default=None, help="comma-separated sweep lengths (default by --quick)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per length (default 3 with --quick, else 5)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (and scipy workers); default torch's. On a busy machine 1 avoids the wait of "
        "every parallel region for a second free core",
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = benchmark_device(args.device)
    dtypes = [getattr(torch, name) for name in args.dtypes.split(",")]
    backends = tuple(args.backends.split(","))
    rounds = args.rounds or (3 if args.quick else 5)
    sweep = tuple(int(n) for n in args.lengths.split(",")) if args.lengths else QUICK_SWEEP if args.quick else FULL_SWEEP
    shape = f"({args.batch}, N, {args.hidden})"
    print(describe_device(device))
    print(f"before: {load()}")
    tables = set(args.tables.split(","))
    unknown = tables - {"five", "single", "roofline", "crossover", "sectors"}
    if unknown:
        parser.error(f"unknown tables {sorted(unknown)}: choose from five, single, roofline, crossover, sectors")
    if tables & {"crossover", "sectors"} and device.type != "cpu":
        parser.error("the crossover and sectors tables measure the CPU's paths: run them with --device cpu")
    short, long = [n for n in sweep if n <= LONG], [n for n in sweep if n > LONG]
    long_rounds = max(3, rounds // 2)
    counts = f"{rounds} rounds" + (f", {long_rounds} above N = {LONG}" if long else "")
    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")
        if "five" in tables:
            head = filter_timings([512], args.batch, args.hidden, 2 * rounds, device=device, dtype=dtype, reference=True, backends=backends)
            show(head, f"headline: {shape.replace('N', '512')} {name} on {device.type}, five bands, {2 * rounds} rounds", device)
            # long inputs: fewer rounds (torch-dct's forward+backward takes a minute at N = 8192 on 2 cores)
            sweep_df = pd.concat(
                filter_timings(part, args.batch, args.hidden, r, device=device, dtype=dtype, reference=True, backends=backends)
                for part, r in ((short, rounds), (long, long_rounds))
                if part
            )
            show(sweep_df, f"sweep over N: {shape} {name} on {device.type}, five bands, {counts}", device)
        if "single" in tables:
            single = pd.concat(
                band_timings(part, args.batch, args.hidden, r, device=device, dtype=dtype, backends=backends)
                for part, r in ((short, rounds), (long, long_rounds))
                if part
            )
            show(single, f"single bands: band_pass {shape} {name} on {device.type}, {counts}", device, single=True)
        if "roofline" in tables:
            roof = roofline_timings(sweep, args.batch, args.hidden, rounds, device=device, dtype=dtype)
            print(f"\n== roofline: five-band decomposition {shape} {name} on {device.type} against a copy, {rounds} rounds ==")
            print(roof.to_string(index=False, float_format=fmt))
    if "crossover" in tables:
        cross = crossover_timings(sweep, args.batch, args.hidden, rounds)
        print(f"\n== crossover: matrix path vs FFT path, {shape} float32 forward on cpu, {rounds} rounds ==")
        print(cross.to_string(index=False, float_format=fmt))
        finite = cross["crossover"][cross["crossover"] < float("inf")]
        if len(finite):
            print(
                f"break-even thin width: median {finite.median():.0f} rows (from {finite.min():.0f} to "
                f"{finite.max():.0f}); FFT_WIDTH['cpu'] is {fft_width(device)}"
            )
    if "sectors" in tables:
        sect = sector_timings(sweep, sector_slices(args.hidden), args.batch, rounds).set_index(["n", "filter"])
        print(f"\n== sectors and smooth bands: {shape} float32 forward on cpu against scipy, {rounds} rounds ==")
        print(sect.to_string(float_format=fmt))
        print("\n".join(under_one(sect)) or "every ratio is above 1")
    print(f"\nafter: {load()}")


if __name__ == "__main__":
    main()
