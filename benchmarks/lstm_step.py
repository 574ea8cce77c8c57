"""Benchmark: work B's training step before and after the step changes of issue 47 (item 5).

    python benchmarks/lstm_step.py                    # cpu-long's model, one thread, 60 rounds
    python benchmarks/lstm_step.py --profile smoke --rounds 3   # a quick check

``train_lm``'s step as the grid trains it (the profile's model with its dropouts, batch x
bptt tokens of Zipf-distributed word ids, clipping, SGD with weight decay), in two forms:

- *before* (``train_lm`` until fd6f3a3): the AR and TAR terms added to the loss even at zero
  weight (the cpu recipes' ``alpha = beta = 0``), SGD's per-parameter loop;
- *after* (today's ``train_lm``): a zero-weight term is not computed, SGD's ``foreach`` step.

Both forms train their own copy of the same model from the same seed and take turns
(:func:`~prismlib.timing.interleaved_times`), so a burst of load from another process falls
on both alike. Prints each form's tokens/s (fastest and median step) and the ratio
after / before. Run two copies at once on the 2-core machine to see the grid's condition
(two single-thread workers); the ratio is what the changes buy, the tokens/s what a worker
reaches on this machine. The losses of the two forms are the same numbers (checked on the
first step: the terms at zero weight add exactly 0).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import torch
from lstm import VOCAB, zipf_ids
from torch import nn

from prismlib.lstm import LSTMLM, RunSpec, build_model
from prismlib.profiles import LSTMSettings, get_profile
from prismlib.timing import describe_device, interleaved_times


def make_step(model: LSTMLM, s: LSTMSettings, x: torch.Tensor, before: bool) -> Callable[[], float]:
    """One training step of ``model`` on ``x`` (batch, bptt + 1), as ``train_lm`` took it
    before (``before=True``) or after the step changes; returns the loss."""
    opt = torch.optim.SGD(model.parameters(), lr=s.lr, weight_decay=s.wdecay, foreach=not before)
    inputs, targets = x[:, :-1], x[:, 1:]

    def step() -> float:
        out = model(inputs, None)
        loss = model.nll(out.last_dropped, targets).mean()
        if before or s.alpha:
            loss = loss + s.alpha * out.last_dropped.pow(2).mean()
        if before or s.beta:
            loss = loss + s.beta * (out.last_raw[:, 1:] - out.last_raw[:, :-1]).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if s.clip > 0:
            nn.utils.clip_grad_norm_(model.parameters(), s.clip)
        opt.step()
        return float(loss.detach())

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu-long", help="whose LSTM settings (smoke, cpu, cpu-long)")
    parser.add_argument("--rounds", type=int, default=60, help="timed steps of each form, taken in turns")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the grid's workers use 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    s = get_profile(args.profile).lstm
    x = zipf_ids((s.batch_size, s.bptt + 1), torch.device("cpu"))
    steps = {}
    for before in (True, False):
        torch.manual_seed(0)
        steps["before" if before else "after"] = make_step(build_model(RunSpec(), VOCAB, s).train(), s, x, before)
    first = {}
    for name, step in steps.items():
        torch.manual_seed(1)  # the same dropout masks for both forms' first step
        first[name] = step()
    if first["before"] != first["after"]:
        raise SystemExit(f"the two forms' first losses differ: {first}")
    print(
        f"{describe_device(torch.device('cpu'))}, profile {args.profile}: "
        f"hidden {s.hidden}, emb {s.emb}, {s.layers} layers, batch {s.batch_size} x {s.bptt}"
    )
    print(f"first step's loss, both forms: {first['after']:.6f}")
    times = interleaved_times(steps, args.rounds, warmup=2)
    tokens = s.batch_size * s.bptt
    rate = {}
    for name, t in times.items():
        rate[name] = tokens / min(t)
        print(f"{name:7s} {tokens / min(t):8,.0f} tokens/s (fastest step), {tokens / statistics.median(t):8,.0f} (median step)")
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"after / before: {rate['after'] / rate['before']:.3f} (fastest), {med['before'] / med['after']:.3f} (median)")


if __name__ == "__main__":
    main()
