"""Benchmark: prismlib's band-pass filters vs torch-dct (vs scipy on the CPU), in one run on this machine.

    python benchmarks/spectral.py                 # headline (8, 512, 768) + sweep over N, float32, CPU
    python benchmarks/spectral.py --quick         # fewer repeats, shorter sweep
    python benchmarks/spectral.py --device cuda --dtypes float32,float16,bfloat16

Each time is one full decomposition (the five bands of allocate_bands(N)) of a
(batch, N, hidden) input; the ratios are torch-dct's (or scipy's) time over prismlib's
for the same pass, so > 1 means prismlib is faster. torch-dct's FFT takes no bfloat16
(and float16 only on CUDA, for powers of two): where it cannot run in a dtype it is
timed in float32 and the table says so. scipy runs on the CPU only (float32, forward).
On CUDA every time is the minimum over repeats of CUDA-event timings after a warm-up.
"""

from __future__ import annotations

import argparse

import torch

from prismlib.benchmark import benchmark_device, describe_device, filter_timings


def ratios(df):
    """Pivot to one row per (n, pass) with the speed-up of prismlib over each reference."""
    wide = df.pivot_table(index=["n", "pass"], columns="backend", values="seconds")
    for ref in ("torch-dct", "scipy"):
        if ref in wide:
            wide[f"{ref} / prismlib"] = wide[ref] / wide["prismlib"]
    return wide


def show(df, title: str) -> None:
    print(f"\n== {title} ==")
    ran_in = df.groupby("backend")["dtype"].agg(lambda d: ",".join(sorted(set(d))))
    print("dtype per backend: " + ", ".join(f"{b} {d}" for b, d in ran_in.items()))
    print(ratios(df).to_string(float_format=lambda v: f"{v:.4f}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a shorter sweep")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (no CUDA device: the CPU, said so)")
    parser.add_argument("--dtypes", default="float32", help="comma-separated: float32,float16,bfloat16,float64")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--lengths", default=None, help="comma-separated sweep lengths (default by --quick)")
    args = parser.parse_args()
    device = benchmark_device(args.device)
    dtypes = [getattr(torch, name) for name in args.dtypes.split(",")]
    repeats = 3 if args.quick else 7
    default_sweep = (64, 256, 1024) if args.quick else (32, 64, 128, 256, 512, 1024, 2048, 4096)
    sweep = tuple(int(n) for n in args.lengths.split(",")) if args.lengths else default_sweep
    shape = f"({args.batch}, N, {args.hidden})"
    print(describe_device(device))
    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")
        head = filter_timings([512], args.batch, args.hidden, repeats, device=device, dtype=dtype)
        show(head, f"headline: {shape.replace('N', '512')} {name} on {device.type}, five bands")
        sweep_df = filter_timings(sweep, args.batch, args.hidden, max(2, repeats // 2), device=device, dtype=dtype)
        show(sweep_df, f"sweep over N: {shape} {name} on {device.type}, five bands")


if __name__ == "__main__":
    main()
