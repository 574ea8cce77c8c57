"""Where work B's cpu budget goes: training tokens/s against batch size, and the frozen-bias conventions.

    python benchmarks/lstm_budget.py batch                 # tokens/s of the cpu model vs batch size, one thread
    python benchmarks/lstm_budget.py batch --quality 560000  # + validation ppl after the same tokens at each batch
    python benchmarks/lstm_budget.py freeze --steps 500    # layer-wise T=70 and layer-2 X=70 under each convention

``batch`` runs the real training loop (:func:`prismlib.lstm.train_lm`, the cpu profile's
model and regularisation, adaptive softmax) on PTB train for ``--steps`` steps of
``batch x bptt`` tokens on one torch thread, and reports training tokens/s (the loop's own
clock, without the validation pass). ``--quality N`` also trains each batch size for
``N`` tokens and prints the full-validation perplexity, so that a faster batch is not
bought with worse learning per token.

``freeze`` trains the baseline and, under every convention of
:data:`prismlib.lstm.FREEZE`, the fixed layer-wise T = 70 (experiment 2) and layer-2
X = 70 (experiment 4) models for ``--steps`` steps (one seed, the cpu profile's model)
through the job layer (a private cache under ``--cache``), and prints validation and test
perplexity, the test difference from the baseline with its paired-bootstrap interval over
100-token chunks, and the mean input gate at zero pre-activation of the fixed layers.
These are small-scale numbers (a fraction of a pass over PTB): they say which
convention makes a model learn more slowly at first, not where it ends.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from prismlib.lstm import FREEZE, RunSpec, build_model, frequency_rank, perplexity, perplexity_difference, token_nll, train_lm, trained
from prismlib.profiles import get_profile


def _corpus():
    from prismlib.data.ptb import load_ptb_corpus

    return load_ptb_corpus()


def batch_sweep(batches: list[int], steps: int, quality: int | None, seed: int) -> None:
    corpus = _corpus()
    s0 = get_profile("cpu").lstm
    rank = frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))
    torch.set_num_threads(1)
    print(f"cpu model {s0.hidden}/{s0.hidden}/{s0.emb}, adaptive softmax {s0.cutoffs}, bptt {s0.bptt}, one torch thread")
    print(f"{'batch':>6s} {'steps':>6s} {'tokens':>9s} {'train s':>8s} {'tokens/s':>9s}" + (f" {'valid ppl @ ' + str(quality):>20s}" if quality else ""))
    for b in batches:
        n = steps if quality is None else max(1, round(quality / (b * s0.bptt)))
        s = dataclasses.replace(s0, batch_size=b, epochs=1, steps_per_epoch=n, average_last=0, valid_tokens=None if quality else 2000)
        model = build_model(RunSpec(seed=seed), len(corpus.vocab), s, rank)
        hist = train_lm(model, corpus.train, corpus.valid, s, seed, progress=False)
        row = f"{b:6d} {n:6d} {hist.tokens:9d} {hist.seconds:8.1f} {hist.tokens / hist.seconds:9.0f}"
        if quality:
            row += f" {hist.val_ppl[-1]:20.1f}"
        print(row, flush=True)


def input_gate_at_zero(model: torch.nn.Module, layer: int) -> float:
    """Mean over units of ``sigmoid(b_i)`` of one layer (the input gate at zero pre-activation)."""
    b_ih, b_hh = (b.detach() for b in model.rnns[layer].effective_biases())
    h = model.rnns[layer].hidden_size
    return float(torch.sigmoid(b_ih[:h] + b_hh[:h]).mean())


def freeze_sweep(steps: int, batch: int, seed: int, cache: Path, conventions: list[str]) -> None:
    corpus = _corpus()
    s = dataclasses.replace(get_profile("cpu").lstm, batch_size=batch, epochs=1, steps_per_epoch=steps, average_last=0)
    specs = [RunSpec(seed=seed)] + [
        RunSpec(v, T, fixed=True, seed=seed, freeze=f) for v, T in (("layerwise", 70.0), ("layer2", 70.0)) for f in conventions
    ]
    print(f"cpu model, batch {batch} x {s.bptt}, {steps} steps ({steps * batch * s.bptt:,} tokens, "
          f"{steps * batch * s.bptt / len(corpus.train):.2f} passes), seed {seed}, one thread, cache {cache}")  # fmt: skip
    t0 = time.perf_counter()
    runs = trained(specs, s, "bench-freeze", executor="inline", cache=cache, corpus=corpus)
    base = runs[specs[0]]
    print(f"trained {len(specs)} models in {time.perf_counter() - t0:.0f} s\n")
    print(f"{'model':40s} {'valid':>7s} {'test':>7s} {'test - baseline [95% CI]':>28s} {'mean i-gate L1/L2 at 0':>24s}")
    for spec in specs:
        r = runs[spec]
        d = "" if spec == specs[0] else str(perplexity_difference(r.test_nll, base.test_nll))
        gates = "/".join(f"{input_gate_at_zero(r.model, layer):.3f}" for layer in (0, 1))
        print(f"{spec.label:40s} {r.val_ppl:7.1f} {r.test_ppl:7.1f} {d:>28s} {gates:>24s}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("batch")
    b.add_argument("--batches", type=int, nargs="+", default=[10, 20, 40, 80])
    b.add_argument("--steps", type=int, default=150)
    b.add_argument("--quality", type=int, default=None, help="also train each batch for this many tokens")
    f = sub.add_parser("freeze")
    f.add_argument("--steps", type=int, default=500)
    f.add_argument("--batch", type=int, default=20)
    f.add_argument("--cache", type=Path, default=None)
    f.add_argument("--conventions", nargs="+", choices=list(FREEZE), default=list(FREEZE))
    for p in (b, f):
        p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.what == "batch":
        batch_sweep(args.batches, args.steps, args.quality, args.seed)
    else:
        torch.set_num_threads(1)
        freeze_sweep(args.steps, args.batch, args.seed, args.cache or Path(tempfile.mkdtemp(prefix="freeze-")), args.conventions)


if __name__ == "__main__":
    main()
