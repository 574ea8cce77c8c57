"""Benchmark: tokens/s of the small BERT's pretraining step (issue 76, item 3).

    python benchmarks/pretrain_speed.py                                  # 2x128 and 4x256, 1 and 2 threads
    python benchmarks/pretrain_speed.py --sizes 4x256 --attn sdpa,eager --compile off,on
    python benchmarks/pretrain_speed.py --sizes 1x32h2 --seq-len 32 --batch 8 --steps 2 --threads 1   # a quick check

One training step as :func:`prismlib.pretrain.pretrain` takes it (BERT's masking, forward,
backward, gradient clipping, AdamW) on random wordpiece ids, for every combination of size,
threads, the MLM head (``masked``: at the masked positions only, :func:`prismlib.prism.mlm_loss`;
``full``: at every position, the library's ``model(..., labels=...)``), the attention
implementation (``sdpa`` / ``eager``) and ``torch.compile`` of the encoder (``on`` / ``off``).
Each row also gives the step's approximate GFLOP/s (:func:`prismlib.pretrain.step_flops`) and
its share of the same run's matrix-product rate (a large fp32 matmul on the same threads), so
rows taken on another machine or under other load compare by that share. Prints a table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

import torch

from prismlib.pretrain import BertSize, full_head_loss, new_bert, step_flops
from prismlib.prism import mlm_loss, training_batch
from prismlib.timing import describe_device

SPECIAL = [0, 100, 101, 102, 103]  # MiniLM's [PAD] [UNK] [CLS] [SEP] [MASK]
MASK_ID = 103


def matmul_gflops(n: int, repeats: int = 5) -> float:
    """GFLOP/s of an ``n x n`` fp32 matrix product on the current threads (best of ``repeats``)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = min(_seconds(lambda: a @ b) for _ in range(repeats))
    return 2 * n**3 / best / 1e9


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def step_seconds(size: BertSize, seq_len: int, batch: int, head: str, attn: str, compiled: bool, steps: int, warmup: int) -> list[float]:
    """Seconds of each of ``steps`` timed training steps after ``warmup`` untimed ones."""
    model = new_bert(size, seed=0, attn_implementation=attn)
    if compiled:
        model.bert = torch.compile(model.bert)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    rows = torch.randint(999, size.vocab_size, (batch * 4, seq_len))
    rows[:, 0], rows[:, -1] = 101, 102
    special = torch.tensor(SPECIAL)

    def step(i: int) -> None:
        x, y = training_batch(rows, i, batch, 0, special, MASK_ID, size.vocab_size)
        loss = mlm_loss(model, x, torch.ones_like(x), y) if head == "masked" else full_head_loss(model, x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for i in range(warmup):
        step(i)
    return [_seconds(lambda i=i: step(warmup + i)) for i in range(steps)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="2x128,4x256", help="comma-separated LAYERSxHIDDEN[hHEADS]")
    p.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--head", default="masked,full", help="masked and/or full")
    p.add_argument("--attn", default="sdpa", help="sdpa and/or eager")
    p.add_argument("--compile", default="off", help="off and/or on (torch.compile of the encoder)")
    p.add_argument("--steps", type=int, default=10, help="timed steps per row")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first (compilation happens here)")
    p.add_argument("--matmul", type=int, default=2048, help="size of the reference matrix product")
    p.add_argument("--json", type=Path, default=None, help="also write the rows here (the pilot's --speed reads it)")
    args = p.parse_args()
    rows: list[dict[str, object]] = []
    split = lambda s: [x for x in s.split(",") if x]  # noqa: E731
    before = torch.get_num_threads()
    print(describe_device(torch.device("cpu")))
    print(
        f"{'threads':>7} {'size':>7} {'seq':>4} {'batch':>5} {'head':>6} {'attn':>5} {'compile':>7} "
        f"{'tokens/s':>9} {'median':>9} {'GFLOP/s':>8} {'of matmul':>9}"
    )
    for threads in map(int, split(args.threads)):
        torch.set_num_threads(threads)
        ref = matmul_gflops(args.matmul)
        print(f"{threads:>7} matrix product {args.matmul}x{args.matmul} fp32: {ref:.1f} GFLOP/s")
        for name, head, attn, comp in itertools.product(split(args.sizes), split(args.head), split(args.attn), split(args.compile)):
            size = BertSize.parse(name)
            label = f"{threads:>7} {name:>7} {args.seq_len:>4} {args.batch:>5} {head:>6} {attn:>5} {comp:>7}"
            try:
                t = step_seconds(size, args.seq_len, args.batch, head, attn, comp == "on", args.steps, args.warmup)
            except Exception as err:  # a failed compile is a row of the table, not the end of it
                print(f"{label} failed: {type(err).__name__}: {str(err).splitlines()[0][:80]}")
                continue
            tokens = args.batch * args.seq_len
            flops = step_flops(size, args.batch, args.seq_len, 0.15 if head == "masked" else None) / min(t) / 1e9
            print(f"{label} {tokens / min(t):9,.0f} {tokens / statistics.median(t):9,.0f} {flops:8.1f} {flops / ref:9.1%}")
            rows.append(
                {
                    "threads": threads,
                    "size": name,
                    "seq_len": args.seq_len,
                    "batch": args.batch,
                    "head": head,
                    "attn": attn,
                    "compile": comp,
                    "tokens_per_second": tokens / statistics.median(t),
                    "best_tokens_per_second": tokens / min(t),
                    "gflops": flops,
                    "matmul_gflops": ref,
                }
            )
    torch.set_num_threads(before)
    if args.json:
        args.json.write_text(json.dumps({"device": describe_device(torch.device("cpu")), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
