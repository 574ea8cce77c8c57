"""Benchmark: training tokens/s of prismlib's LSTM LM, full vs adaptive softmax, vs a plain torch.nn.LSTM LM.

    python benchmarks/lstm.py                         # cpu-profile sizes (3 layers 256/256/200)
    python benchmarks/lstm.py --profile paper --device cuda   # 400 / 1150 / 1150 / 400 on a GPU
    python benchmarks/lstm.py --threads 1             # torch CPU threads (the cpu profile trains with 1)
    python benchmarks/lstm.py --profile smoke --steps 2       # a quick check

Every model does the same training step on the same batch ``(batch, bptt)`` of word ids
drawn from a Zipf law over the 10k vocabulary (rank r with probability ~ 1/(r + 1), so
the adaptive softmax's clusters see PTB-like traffic: ~80% of targets in the 2000-word
head): forward, NLL, backward, gradient clipping, SGD step. The plain model is embedding
-> ``nn.LSTM`` layers of the same widths -> tied full-softmax decoder, no regularisation.
prismlib is timed with the full softmax and with the adaptive softmax (the profile's
cutoffs, or 2000/6000), without and with the profile's regularisation, and with fixed
biases (layer-wise, official). Each row also says how many fused ``aten::lstm`` calls one
forward makes (one per layer = the fused kernel runs; a per-timestep Python loop would
show ``aten::lstm_cell`` instead) and, on CUDA, how many of them ran cuDNN
(``aten::_cudnn_rnn``, one per layer: fixed biases keep the model on cuDNN), and the last
column the adaptive/full ratio of the same configuration. tokens/s is ``batch * bptt``
over the minimum step time of ``--steps`` timed steps after two warm-up steps (CUDA
events on a GPU).

Then, for the profile's model as it trains (adaptive softmax, regularisation): its training
FLOPs per token (the matrix products of the LSTM layers and the output layer, forward and
backward = 3 x forward), the FLOP/s it reaches at the measured tokens/s against the
same-run rate of a 1024 x 1024 matrix product on the same threads, where one training
step's time goes (torch profiler: LSTM kernels, matrix products, log-softmax, the rest),
and with PTB (``PRISMLIB_DATA``) what one round of the annealed schedule costs besides
training: a full validation pass and a checkpoint, as a share of the round.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from prismlib.lstm import LSTMLM, RunSpec, build_model
from prismlib.profiles import get_profile
from prismlib.timing import benchmark_device, best_time, describe_device

VOCAB = 10_000
FUSED = "aten::lstm"
CUDNN = "aten::_cudnn_rnn"


class PlainLM(nn.Module):
    """Embedding -> stacked ``nn.LSTM`` layers -> tied decoder (no regularisation)."""

    def __init__(self, emb: int, sizes: list[int]) -> None:
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, emb)
        inputs = [emb] + sizes[:-1]
        self.rnns = nn.ModuleList(nn.LSTM(i, h, batch_first=True) for i, h in zip(inputs, sizes))
        self.decoder = nn.Linear(emb, VOCAB)
        self.decoder.weight = self.encoder.weight

    def forward(self, x: Tensor) -> Tensor:
        h = self.encoder(x)
        for rnn in self.rnns:
            h, _ = rnn(h)
        return self.decoder(h)


def loss_of(model: nn.Module, x: Tensor) -> Tensor:
    if isinstance(model, LSTMLM):
        return model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean()
    return F.cross_entropy(model(x[:, :-1]).reshape(-1, VOCAB), x[:, 1:].reshape(-1))


def zipf_ids(shape: tuple[int, int], device: torch.device) -> Tensor:
    """Word ids ``shape`` with rank r drawn with probability ~ 1/(r + 1) (ids = ranks)."""
    p = 1.0 / torch.arange(1, VOCAB + 1, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    return torch.multinomial(p / p.sum(), shape[0] * shape[1], replacement=True, generator=gen).view(shape).to(device)


def tokens_per_second(model: nn.Module, batch: int, bptt: int, steps: int, device: torch.device) -> tuple[float, int, int]:
    """Training tokens/s (best of ``steps`` steps after two warm-up steps) and the
    ``aten::lstm`` and ``aten::_cudnn_rnn`` calls of one forward."""
    model.to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=1.0, weight_decay=1.2e-6)
    x = zipf_ids((batch, bptt + 1), device)

    def step() -> None:
        loss = loss_of(model, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    seconds = best_time(step, steps, device, warmup=2)
    with torch.profiler.profile() as prof:
        model(x[:, :-1])
    names = [e.name for e in prof.events()]
    return batch * bptt / seconds, names.count(FUSED), names.count(CUDNN)


def matmul_gflops(device: torch.device, n: int = 1024, repeats: int = 10) -> float:
    """GFLOP/s of an ``n x n`` float32 matrix product on ``device`` (best of ``repeats``)."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    return 2 * n**3 / best_time(lambda: a @ b, repeats, device, warmup=2) / 1e9


def flops_per_token(sizes: list[int], emb: int, cutoffs: tuple[int, ...], targets: Tensor) -> float:
    """Training FLOPs per token of an LSTM LM's matrix products (forward x 3): the layers
    (``4h x (in + h)`` per layer) and the output layer (full softmax, or the adaptive
    softmax's head plus each tail cluster, ``emb x emb`` then ``emb x size``, for the share
    of ``targets`` (frequency ranks) that falls in it)."""
    inputs = [emb] + sizes[:-1]
    layers = sum(2 * 4 * h * (i + h) for i, h in zip(inputs, sizes))
    if not cutoffs:
        out = 2.0 * emb * VOCAB
    else:
        bounds = [*cutoffs, VOCAB]
        out = 2.0 * emb * (cutoffs[0] + len(cutoffs))
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            share = float(((targets >= lo) & (targets < hi)).float().mean())
            out += share * (2 * emb * emb + 2 * emb * (hi - lo))
    return 3.0 * (layers + out)


def step_breakdown(model: nn.Module, x: Tensor, steps: int = 5) -> dict[str, float]:
    """Share of one training step's CPU time in LSTM kernels, matrix products, log-softmax and the rest."""
    opt = torch.optim.SGD(model.parameters(), lr=1.0)

    def step() -> None:
        loss = loss_of(model, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    step()
    with torch.profiler.profile() as prof:
        for _ in range(steps):
            step()
    groups = {"LSTM kernels": 0.0, "matrix products": 0.0, "log-softmax": 0.0, "the rest": 0.0}
    for e in prof.key_averages():
        name = e.key.lower()
        if "rnn" in name or "lstm" in name:
            group = "LSTM kernels"
        elif name in ("aten::mm", "aten::addmm", "aten::bmm"):
            group = "matrix products"
        else:
            group = "log-softmax" if "log_softmax" in name else "the rest"
        groups[group] += e.self_cpu_time_total
    total = sum(groups.values())
    return {k: v / total for k, v in groups.items()}


def round_overhead(model: LSTMLM, s, tokens_per_s: float) -> str:
    """One round of the annealed schedule on PTB: training time at ``tokens_per_s``, a full
    validation pass and a checkpoint, and their share of the round (needs the PTB data)."""
    import tempfile
    import time
    from pathlib import Path

    import numpy as np

    from prismlib.artifacts import save_atomic
    from prismlib.data.ptb import load_ptb_corpus
    from prismlib.lstm import token_nll

    try:
        corpus = load_ptb_corpus()
    except (FileNotFoundError, OSError) as err:
        return f"round overhead: not measured ({err})"
    rank = torch.as_tensor(np.argsort(np.argsort(-np.bincount(corpus.train, minlength=VOCAB), kind="stable")))
    model.rank.copy_(rank)  # ids are PTB's now
    train_s = len(corpus.train) / s.checks_per_pass / tokens_per_s
    t0 = time.perf_counter()
    token_nll(model, corpus.valid, s.eval_batch, s.bptt)
    valid_s = time.perf_counter() - t0
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        save_atomic(Path(tmp) / "partial.pt", model=model.state_dict(), optimizer=opt.state_dict())
        save_s = time.perf_counter() - t0
    share = (valid_s + save_s) / (train_s + valid_s + save_s)
    return (
        f"one round (1/{s.checks_per_pass} pass, {len(corpus.train) // s.checks_per_pass:,} tokens): training "
        f"{train_s:.1f} s at {tokens_per_s:,.0f} tokens/s, full validation ({len(corpus.valid):,} tokens, batch "
        f"{s.eval_batch}) {valid_s:.1f} s, checkpoint {save_s:.2f} s: evaluation and checkpointing {share:.0%} of the round"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", help="sizes of this profile's LSTM (smoke, cpu, paper)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (the fastest counts)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="auto", help="auto, cuda or cpu (no CUDA device: the CPU, said so)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    s = get_profile(args.profile).lstm
    device = benchmark_device(args.device)
    on_cuda = device.type == "cuda"
    sizes = [s.hidden] * (s.layers - 1) + [s.emb]
    print(describe_device(device) + (f", cuDNN {torch.backends.cudnn.version()}" if on_cuda else ""))
    print(f"sizes {sizes}, emb {s.emb}, vocab {VOCAB}, batch {s.batch_size} x {s.bptt} tokens, best of {args.steps} steps\n")
    cutoffs = s.cutoffs or (2000, 6000)
    variants = {
        "no regularisation": (RunSpec(), s.updated(dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)),
        "profile regularisation": (RunSpec(), s),
        "+ fixed layer-wise biases": (RunSpec("layerwise", 70.0, fixed=True), s),
        "+ official biases (all frozen)": (RunSpec("official", fixed=True), s),
    }
    results = {}
    torch.manual_seed(0)
    results["plain nn.LSTM LM (full softmax)"] = tokens_per_second(PlainLM(s.emb, sizes), s.batch_size, s.bptt, args.steps, device)
    for name, (spec, settings) in variants.items():
        for output, cut in (("full", ()), ("adaptive", cutoffs)):
            torch.manual_seed(0)
            model = build_model(spec, VOCAB, settings.updated(cutoffs=cut))  # ids are ranks already
            results[f"prismlib, {name}, {output}"] = tokens_per_second(model, s.batch_size, s.bptt, args.steps, device)
    plain = results["plain nn.LSTM LM (full softmax)"][0]
    print(f"adaptive softmax cutoffs {cutoffs}\n")
    print(f"{'model':56s} {'tokens/s':>10s} {'vs plain':>9s} {FUSED:>11s} {'cuDNN':>6s} {'adaptive/full':>14s}")
    for name, (tps, n_lstm, n_cudnn) in results.items():
        full = results.get(name.replace(", adaptive", ", full"))
        ratio = f"{tps / full[0]:14.2f}" if name.endswith("adaptive") and full else ""
        print(f"{name:56s} {tps:10.0f} {tps / plain:9.2f} {n_lstm:11d} {n_cudnn if on_cuda else '-':>6} {ratio}")
    bad = [name for name, (_, n, _) in results.items() if n != len(sizes)]
    if bad:
        raise SystemExit(f"not every layer ran the fused {FUSED} kernel in: {bad}")
    print(f"\nevery model: {len(sizes)} fused {FUSED} calls per forward (one per layer)")
    if not on_cuda:
        torch.manual_seed(0)
        model = build_model(RunSpec(), VOCAB, s.updated(cutoffs=cutoffs))
        x = zipf_ids((s.batch_size, s.bptt + 1), device)
        tps = results["prismlib, profile regularisation, adaptive"][0]
        flops = flops_per_token(sizes, s.emb, cutoffs, x[:, 1:])
        peak = matmul_gflops(device)
        print(
            f"\nthe profile's model as it trains (adaptive softmax, regularisation): {flops / 1e6:.2f} MFLOP per training token "
            f"(matrix products, forward + backward); at {tps:,.0f} tokens/s that is {tps * flops / 1e9:.1f} GFLOP/s, "
            f"{tps * flops / 1e9 / peak:.0%} of a 1024 x 1024 matrix product on the same threads ({peak:.1f} GFLOP/s)"
        )
        shares = step_breakdown(model, x)
        print("one training step's CPU time: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()))
        print(round_overhead(model, s, tps))
    if on_cuda:
        off = [name for name, (_, _, n) in results.items() if n != len(sizes)]
        if off:
            raise SystemExit(f"not every layer ran cuDNN ({CUDNN}) in: {off}")
        print(f"every model, fixed biases included: {len(sizes)} cuDNN calls ({CUDNN}) per forward")


if __name__ == "__main__":
    main()
