"""Benchmark: what one step of section 4's staged recipe costs, to choose the cpu recipe by measurement.

    python benchmarks/prism_recipe.py                          # the cpu profile's settings, 1 thread
    python benchmarks/prism_recipe.py --layers 1 2 --lengths 256 512 --steps 4

For each number of trained top layers and sequence length, the offline MiniLM's frozen part
is cached for a few inputs (its cost per input is printed too), then ``--steps`` steps of
:func:`prismlib.prism.train_top` (batch ``--batch``) are timed after one warm-up step, with and
without a prism layer after the last layer, and one held-out check
(:func:`prismlib.prism.cached_loss`) over ``--check-inputs`` inputs. The projection is the
wall time of the trained arms (3 on the cpu profile) as single-thread processes on
``--cores`` cores for ``--project`` steps with a check every ``--round`` steps; it leaves out
encoding and probing (notebook 03 reports those). Run it on an otherwise idle machine: on a
loaded one the steps slow down with the load (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, nargs="+", default=[2], help="trained top layers")
    parser.add_argument("--lengths", type=int, nargs="+", default=[512], help="tokens per input")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3, help="timed steps (after one warm-up step)")
    parser.add_argument("--check-inputs", type=int, default=46, help="inputs of the stopping text (cpu: 46)")
    parser.add_argument("--project", type=int, default=600, help="steps of the projection (cpu: the cap)")
    parser.add_argument("--round", type=int, default=25, help="steps between held-out checks")
    parser.add_argument("--arms", type=int, default=3, help="trained arms, run as parallel single-thread processes")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    torch.set_num_threads(1)

    from prismlib.prism import attach_prism, build_state_cache, cached_loss, first_trained, load_mlm_model, train_top

    print(f"load average before: {os.getloadavg()[0]:.2f}; 1 thread per process, {args.cores} cores, {args.arms} arms")
    vocab = 30522
    for length in args.lengths:
        ids = torch.randint(1000, vocab, (max(args.batch, args.check_inputs), length), generator=torch.Generator().manual_seed(0))
        ids[:, 0], ids[:, -1] = 101, 102
        for layers in args.layers:
            for prism in (False, True):
                tok, model = load_mlm_model("minilm", 0)
                start = first_trained(model, layers)
                if prism:
                    attach_prism(model, "last")
                with tempfile.TemporaryDirectory() as tmp:
                    t0 = time.perf_counter()
                    cache = build_state_cache(
                        model,
                        ids[: args.batch],
                        start,
                        1,
                        0,
                        tok.all_special_ids,
                        tok.mask_token_id,
                        len(tok),
                        Path(tmp) / "train",
                        progress=False,
                    )
                    per_input = (time.perf_counter() - t0) / args.batch
                    held = build_state_cache(
                        model,
                        ids[: args.check_inputs],
                        start,
                        1,
                        1,
                        tok.all_special_ids,
                        tok.mask_token_id,
                        len(tok),
                        Path(tmp) / "held",
                        progress=False,
                    )
                    kw = dict(batch_size=args.batch, lr=1e-4, warmup=0, clip=1.0, seed=0, progress=False)
                    train_top(model, cache, start, steps=1, **kw)  # warm-up
                    t0 = time.perf_counter()
                    train_top(model, cache, start, steps=args.steps, **kw)
                    step = (time.perf_counter() - t0) / args.steps
                    t0 = time.perf_counter()
                    cached_loss(model, held, start)
                    check = time.perf_counter() - t0
                waves = math.ceil(args.arms / args.cores)
                project = waves * (args.project * step + args.project / args.round * check) / 60
                print(
                    f"length {length}, {layers} trained layer(s), prism {'yes' if prism else 'no '}: frozen part "
                    f"{per_input:.2f} s/input, step {step:.2f} s, check {check:.1f} s -> {args.project} steps of "
                    f"{args.arms} arms on {args.cores} cores: {project:.0f} min"
                )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
