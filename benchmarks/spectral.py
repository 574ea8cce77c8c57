"""Benchmark: prismlib's band-pass filters vs torch-dct vs scipy, in one run on this machine.

    python benchmarks/spectral.py            # headline (8, 512, 768) + sweep over N
    python benchmarks/spectral.py --quick    # fewer repeats, shorter sweep

Each time is one full decomposition (the five bands of allocate_bands(N)) of a float32
(batch, N, hidden) input; the ratios are torch-dct's (or scipy's) time over prismlib's
for the same pass, so > 1 means prismlib is faster.
"""

from __future__ import annotations

import argparse
import platform

import torch

from prismlib.benchmark import filter_timings


def ratios(df):
    """Pivot to one row per (n, pass) with the speed-up of prismlib over each reference."""
    wide = df.pivot_table(index=["n", "pass"], columns="backend", values="seconds")
    for ref in ("torch-dct", "scipy"):
        if ref in wide:
            wide[f"{ref} / prismlib"] = wide[ref] / wide["prismlib"]
    return wide


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a shorter sweep")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}")

    print("\n== headline: (8, 512, 768) float32, five bands ==")
    head = ratios(filter_timings([512], batch=8, hidden=768, repeats=repeats))
    print(head.to_string(float_format=lambda v: f"{v:.4f}"))

    sweep = (64, 256, 1024) if args.quick else (32, 64, 128, 256, 512, 1024, 2048, 4096)
    print("\n== sweep over N: (8, N, 768) float32, five bands ==")
    print(ratios(filter_timings(sweep, batch=8, hidden=768, repeats=max(2, repeats // 2))).to_string(
        float_format=lambda v: f"{v:.4f}"
    ))


if __name__ == "__main__":
    main()
