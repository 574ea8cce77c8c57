"""Benchmark: what one step of section 4's staged recipe costs, to choose the cpu recipe by measurement.

    python benchmarks/prism_recipe.py                          # the cpu profile's settings, 1 thread
    python benchmarks/prism_recipe.py --layers 1 2 --lengths 256 512 --steps 4

For each number of trained top layers and sequence length, the offline MiniLM's frozen part
is cached for a few inputs (its cost per input is printed too), then ``--steps`` steps of
:func:`prismlib.prism.train_top` (batch ``--batch``) are timed after one warm-up step, with and
without a prism layer after the last layer and with each ``--attention-dropout`` on the trained
layers' attention probabilities (0.1, MiniLM's own, runs PyTorch's unfused attention; 0 the
fused kernel), and one held-out check
(:func:`prismlib.prism.cached_loss`) over ``--check-inputs`` inputs. The projection is the
wall time of the trained arms (3 on the cpu profile) as single-thread processes on
``--cores`` cores for ``--project`` steps with a check every ``--round`` steps; it leaves out
encoding and probing (notebook 03 reports those). Run it on an otherwise idle machine: on a
loaded one the steps slow down with the load (the load average is printed before and after).

    python benchmarks/prism_recipe.py --pilot 3e-4 1e-3 --arm prism --cap 160 --round 20

``--pilot LR ...`` trains instead: one arm of the cpu profile on its real training text (the
frozen-state caches of :func:`prismlib.prism.section4_data`, under ``$PRISMLIB_OUTPUT`` or a
temporary folder), one single-thread process per learning rate, all at once, under the
profile's stopping rule with ``--round`` steps a round and a cap of ``--cap`` steps (and
``--head-epochs``, ``--layers``, ``--batch`` where given). It prints every held-out check
(step, MLM loss in nats, rate scale) and how each run ended, with its minutes: what
decides how many steps the recipe needs to stop by its rule.
"""

from __future__ import annotations

import argparse
import itertools
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
    parser.add_argument("--project", type=int, default=400, help="steps of the projection (cpu: the cap)")
    parser.add_argument("--round", type=int, default=20, help="steps between held-out checks (cpu: 20)")
    parser.add_argument("--arms", type=int, default=3, help="trained arms, run as parallel single-thread processes")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--pilot", type=float, nargs="+", default=None, help="learning rates: train instead of timing steps")
    parser.add_argument("--arm", default="prism", help="pilot: the arm trained (baseline, prism, prism-every)")
    parser.add_argument("--cap", type=int, default=160, help="pilot: the step cap")
    parser.add_argument("--head-epochs", type=int, default=None, help="pilot: epochs of the head warm-up")
    parser.add_argument(
        "--attention-dropout",
        type=float,
        nargs="+",
        default=None,
        help="dropout on the trained layers' attention probabilities: timing: each value (default 0.1, MiniLM's own, and 0); "
        "pilot: the first (default: the profile's)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.pilot:
        pilot(args)
        return

    from prismlib.prism import (
        attach_prism,
        build_state_cache,
        cached_loss,
        first_trained,
        load_mlm_model,
        set_attention_dropout,
        train_top,
    )

    print(f"load average before: {os.getloadavg()[0]:.2f}; 1 thread per process, {args.cores} cores, {args.arms} arms")
    vocab = 30522
    for length in args.lengths:
        ids = torch.randint(1000, vocab, (max(args.batch, args.check_inputs), length), generator=torch.Generator().manual_seed(0))
        ids[:, 0], ids[:, -1] = 101, 102
        for layers, prism, dropout in itertools.product(args.layers, (False, True), args.attention_dropout or (0.1, 0.0)):
            tok, model = load_mlm_model("minilm", 0)
            start = first_trained(model, layers)
            set_attention_dropout(model, start, dropout)
            if prism:
                attach_prism(model, "last")
            with tempfile.TemporaryDirectory() as tmp:
                caches, seconds = {}, {}
                for name, n, seed in (("train", args.batch, 0), ("held", args.check_inputs, 1)):  # one masking each
                    t0 = time.perf_counter()
                    special, mask_id = tok.all_special_ids, tok.mask_token_id
                    caches[name] = build_state_cache(
                        model, ids[:n], start, 1, seed, special, mask_id, len(tok), Path(tmp) / name, progress=False
                    )
                    seconds[name] = time.perf_counter() - t0
                cache, held, per_input = caches["train"], caches["held"], seconds["train"] / args.batch
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
                f"length {length}, {layers} trained layer(s), prism {'yes' if prism else 'no '}, attention dropout "
                f"{dropout:g}: frozen part "
                f"{per_input:.2f} s/input, step {step:.2f} s, check {check:.1f} s -> {args.project} steps of "
                f"{args.arms} arms on {args.cores} cores: {project:.0f} min"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def _pilot_run(arm: str, settings, profile, data, folder: str, out) -> None:
    """One pilot training (a child process): the arm's job trained into ``folder``, its checks to ``out``."""
    torch.set_num_threads(1)
    from prismlib.prism.arms import ArmJob

    job = ArmJob(arm, profile.encoder, profile.name, profile.seed, settings, data.digest())
    t0 = time.perf_counter()
    job.train(Path(folder), torch.device("cpu"), False, data)
    done = torch.load(Path(folder) / "done.pt", weights_only=False)
    result, record = done["result"], done["record"]
    out.put((settings.lr, time.perf_counter() - t0, record.get("head_seconds"), result.heldout, result.anneal, result.best_step))


def pilot(args) -> None:
    """Train ``args.arm`` once per learning rate of ``args.pilot`` (parallel single-thread processes)."""
    import dataclasses
    import multiprocessing as mp

    from prismlib.prism import load_mlm_tokenizer, mlm_corpus
    from prismlib.prism.arms import section4_data
    from prismlib.profiles import get_profile

    P = get_profile("cpu")
    changes = {"steps": args.cap, "round_steps": args.round}
    if args.head_epochs is not None:
        changes["head_epochs"] = args.head_epochs
    if args.layers != [2]:
        changes["train_layers"] = args.layers[0]
    if args.batch != 8:
        changes["batch_size"] = args.batch
    if args.attention_dropout:
        changes["attention_dropout"] = args.attention_dropout[0]
    P = dataclasses.replace(P, prism=P.prism.updated(**changes))
    tokenizer = load_mlm_tokenizer(P.encoder)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("PRISMLIB_OUTPUT", tmp)
        base = os.environ["PRISMLIB_OUTPUT"]  # the runs' checkpoints (partial.pt: the checks so far) stay there
        data = section4_data(P, mlm_corpus(P, tokenizer), tokenizer, seeds=(P.seed,))  # the pilot trains the profile's seed
        print(f"frozen states ready in {time.perf_counter() - t0:.0f} s; {len(data.train)} training inputs; {P.prism}")
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        procs = []
        for lr in args.pilot:
            settings = P.prism.updated(lr=lr)
            proc = ctx.Process(target=_pilot_run, args=(args.arm, settings, P, data, f"{base}/pilot-{args.arm}-{lr:g}", out))
            proc.start()
            procs.append(proc)
        for _ in procs:
            lr, seconds, head, checks, anneal, best = out.get()
            ended = f"stopped: {anneal.stop}, kept step {best}"
            print(f"\n{args.arm} at lr {lr:g}: {seconds / 60:.1f} min (head warm-up {head or 0:.0f} s), {ended}")
            for step, loss, scale in checks:
                print(f"  step {step:4d}  held-out MLM loss {loss:.4f}  rate x{scale:g}")
        for proc in procs:
            proc.join()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
