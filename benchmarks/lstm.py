"""Benchmark: training tokens/s of prismlib's LSTM LM vs a plain torch.nn.LSTM LM, same run.

    python benchmarks/lstm.py                 # cpu-profile sizes (emb 64, hidden 128, 3 layers)
    python benchmarks/lstm.py --profile paper # 400 / 1150 / 1150 / 400 (use a GPU)
    python benchmarks/lstm.py --threads 1     # torch CPU threads

Every model does the same training step on the same random batch ``(batch, bptt)``:
forward, full-softmax cross-entropy, backward, gradient clipping, SGD step. The plain
model is embedding -> three ``nn.LSTM`` layers of the same widths -> tied decoder, no
regularisation. prismlib is timed with the profile's AWD regularisation (dropouts, weight
drop, AR/TAR), without it, and with fixed layer-wise biases; each row also says how many
fused ``aten::lstm`` calls one forward makes (one per layer = the fused kernel runs; a
per-timestep Python loop would show ``aten::lstm_cell`` instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import time

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from prismlib.encode import resolve_device
from prismlib.lstm import LSTMLM, RunSpec, build_model
from prismlib.profiles import get_profile

VOCAB = 10_000


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


def logits_of(model: nn.Module, x: Tensor) -> Tensor:
    out = model(x)
    return out.logits if isinstance(model, LSTMLM) else out


def tokens_per_second(model: nn.Module, batch: int, bptt: int, steps: int, device: torch.device) -> tuple[float, int]:
    """Training tokens/s over ``steps`` steps (after two warm-up steps) and ``aten::lstm`` calls per forward."""
    model.to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=1.0, weight_decay=1.2e-6)
    x = torch.randint(0, VOCAB, (batch, bptt + 1), device=device, generator=None)

    def step() -> None:
        logits = logits_of(model, x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    for _ in range(2):
        step()
    with torch.profiler.profile() as prof:
        logits_of(model, x[:, :-1])
    n_lstm = sum(e.name == "aten::lstm" for e in prof.events())
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return batch * bptt * steps / (time.perf_counter() - t0), n_lstm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", help="sizes of this profile's LSTM (smoke, cpu, paper)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    s = get_profile(args.profile).lstm
    device = resolve_device(args.device)
    sizes = [s.hidden] * (s.layers - 1) + [s.emb]
    print(f"torch {torch.__version__}, {device}, {torch.get_num_threads()} threads, {platform.processor() or platform.machine()}")
    print(f"sizes {sizes}, emb {s.emb}, vocab {VOCAB}, batch {s.batch_size} x {s.bptt} tokens, {args.steps} steps\n")
    no_reg = dataclasses.replace(s, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)
    models = {
        "plain nn.LSTM LM": lambda: PlainLM(s.emb, sizes),
        "prismlib LM, no regularisation": lambda: build_model(RunSpec(), VOCAB, no_reg),
        "prismlib LM, AWD regularisation": lambda: build_model(RunSpec(), VOCAB, s),
        "prismlib LM, AWD + fixed layer-wise biases": lambda: build_model(
            RunSpec("layerwise", 70.0, fixed=True), VOCAB, s
        ),
    }
    results = {}
    for name, make in models.items():
        torch.manual_seed(0)
        results[name] = tokens_per_second(make(), s.batch_size, s.bptt, args.steps, device)
    plain = results["plain nn.LSTM LM"][0]
    print(f"{'model':46s} {'tokens/s':>10s} {'vs plain':>9s} {'aten::lstm calls':>17s}")
    for name, (tps, n_lstm) in results.items():
        print(f"{name:46s} {tps:10.0f} {tps / plain:9.2f} {n_lstm:17d}")


if __name__ == "__main__":
    main()
