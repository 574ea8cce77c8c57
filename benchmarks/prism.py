"""Benchmark: the prism layer's share of one MLM training step of a bert-base-shaped model.

    python benchmarks/prism.py                               # CUDA if available: batch 8 x 512, bert-base shape
    python benchmarks/prism.py --batch 1 --length 64 --layers 2 --repeats 2   # a quick look on a CPU

A ``BertForMaskedLM`` with bert-base's shape (12 layers, hidden 768, 12 heads, vocab
28996) and random weights is timed for one training step (forward, MLM loss at 15%
of the positions, backward, Adam step), without and with a prism layer after the last
layer; separately the prism layer's own forward + backward on a ``(batch, length, 768)``
input.  The share is ``(step with prism - step without) / step with prism`` and, as a
check, ``prism alone / step with prism``.  The goal of the issue is at most 3%.
On CUDA the step runs under bfloat16 autocast (the prism layer itself in float32), as
``prismlib.prism.train_mlm`` does.  Each time is the minimum over ``--repeats`` runs after
two warm-up runs (CUDA events on a GPU); the steps without and with the prism layer run in
turns, one of each per round, so that a drift of the machine's speed falls on both.  On a
CPU a step takes seconds and its rounds vary by more than the layer costs: there the
difference is noise and the layer-alone share is the measurement.
"""

from __future__ import annotations

import argparse

import torch

from prismlib.prism import PrismLayer, attach_prism, mlm_loss
from prismlib.timing import benchmark_device, best_time, describe_device, interleaved_times, spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--layers", type=int, default=12, help="encoder layers (12 = bert-base; fewer for a quick look)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--device", default="auto", help="auto, cuda or cpu (no CUDA device: the CPU, said so)")
    args = parser.parse_args()
    from transformers import BertConfig, BertForMaskedLM

    device = benchmark_device(args.device)
    amp = device.type == "cuda"
    print(describe_device(device))
    print(
        f"batch {args.batch} x {args.length}, bert-base shape with {args.layers} layers, random weights"
        f"{', bfloat16 autocast' if amp else ''}"
    )
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=28996,
        hidden_size=768,
        num_hidden_layers=args.layers,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=max(512, args.length),
    )
    model = BertForMaskedLM(cfg).to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    ids = torch.randint(1000, 28000, (args.batch, args.length), device=device)
    labels = torch.where(torch.rand(ids.shape, device=device) < 0.15, ids, torch.full_like(ids, -100))
    mask = torch.ones_like(ids)

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = mlm_loss(model, ids, mask, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def step_with_prism() -> None:
        handle = attach_prism(model, "last")
        try:
            step()
        finally:
            handle.detach()

    # in turns, so that a drift of the machine's speed (a step takes seconds on a CPU) falls on both
    times = interleaved_times({"plain": step, "prism": step_with_prism}, args.repeats, device, warmup=2)
    plain, with_prism = min(times["plain"]), min(times["prism"])

    layer = PrismLayer(768)
    h = torch.randn(args.batch, args.length, 768, device=device, requires_grad=True)
    g = torch.randn_like(h)
    alone = best_time(lambda: layer(h, mask).backward(g), args.repeats, device, warmup=2)
    print(f"training step without prism: {plain * 1e3:9.2f} ms (median / minimum {spread(times['plain']):.2f})")
    print(f"training step with prism:    {with_prism * 1e3:9.2f} ms (median / minimum {spread(times['prism']):.2f})")
    print(f"prism layer fwd + bwd alone: {alone * 1e3:9.2f} ms")
    print(
        f"prism share of a step: {100 * (with_prism - plain) / with_prism:.2f}% (difference), "
        f"{100 * alone / with_prism:.2f}% (layer alone / step with prism); goal <= 3%"
    )


if __name__ == "__main__":
    main()
