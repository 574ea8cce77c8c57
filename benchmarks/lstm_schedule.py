"""Benchmark: how long work B's paired models must train before doubling the path moves no contrast.

    python benchmarks/lstm_schedule.py --model baseline --rounds 35 70 140 --out DIR
    python benchmarks/lstm_schedule.py --model "layerwise 200 fixed" --rounds 35 70 140 --out DIR
    python benchmarks/lstm_schedule.py --model baseline --rounds 2 4 --profile smoke --out DIR   # seconds

A *fixed path* is the cpu recipe's learning rate held at its start until round ``M`` (a
round is ``1 / checks_per_pass`` of a pass over PTB train), then divided by the recipe's
factor at each of the next ``decays`` rounds, then the end: the ``anneal`` rule with
tolerance 0.99 (every check fails), patience 1 and ``min_rounds = M``, so every model of a
comparison trains on the same learning-rate path. The paths for several ``M`` share their
first ``M`` rounds, so one run trains the longest path and branches the shorter ones off it:
at round ``M`` its checkpoint is copied, and the copy trains the ``M``-path's tail (the same
numbers as a run of that path from scratch: the checkpoint holds the weights, optimiser,
data cursor and random states). Each path's kept model (best validation) is scored on PTB
test; the script writes ``<out>/<model> seed <s>.json`` with every path's passes, test and
validation perplexity, seconds and tokens/s, and prints a table. Comparing the paths of two
models gives each contrast at ``M`` and ``2M``: the doubling check of issue 47.

One torch thread (the cpu recipe's); run two models as two processes on two cores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import torch

from prismlib.devices import torch_threads
from prismlib.lstm import RunSpec, build_model
from prismlib.lstm.evaluation import perplexity, token_nll
from prismlib.lstm.job import _ptb, _rank, bigram_valid_ppl
from prismlib.lstm.training import TrainHistory, train_lm
from prismlib.profiles import LSTMSettings, get_profile


def parse_model(text: str, seed: int) -> RunSpec:
    """``"baseline"``, ``"layerwise 200 fixed"``, ``"layer2 70 fixed"``, ``"pareto fixed"`` -> a spec."""
    words = text.split()
    fixed = "fixed" in words
    words = [w for w in words if w != "fixed"]
    T = float(words[1]) if len(words) > 1 else None
    return RunSpec(words[0], T, fixed=fixed, seed=seed)


def fixed_path(s: LSTMSettings, rounds: int) -> LSTMSettings:
    """``s`` on the fixed path of length ``rounds`` (then ``s.decays`` decays, one a round)."""
    return s.updated(fixed_path=True, min_rounds=rounds, epochs=rounds + s.decays + 2)


def run(spec: RunSpec, s: LSTMSettings, rounds: list[int], out: Path, progress: bool) -> dict:
    corpus = _ptb()
    guard = bigram_valid_ppl(corpus, s)
    work = out / f"{spec.label} seed {spec.seed}"
    work.mkdir(parents=True, exist_ok=True)
    longest, branches = max(rounds), sorted(set(rounds) - {max(rounds)})
    passes_per_round = 1 / s.checks_per_pass
    results: dict[int, dict] = {}

    def branch(hist: TrainHistory) -> None:
        if hist.epochs in branches:
            shutil.copy(work / "main.pt", work / f"branch{hist.epochs}.pt")

    def score(path_rounds: int, checkpoint: Path, on_epoch=None) -> None:
        model = build_model(spec, len(corpus.vocab), s, _rank(corpus))
        settings = fixed_path(s, path_rounds)
        t0 = time.perf_counter()
        hist = train_lm(model, corpus.train, corpus.valid, settings, spec.seed, checkpoint, desc=f"{spec.label} M={path_rounds}",
                        progress=progress, on_epoch=on_epoch, learn_below=guard)  # fmt: skip
        wall = time.perf_counter() - t0
        test = perplexity(token_nll(model.eval(), corpus.test, s.eval_batch, s.bptt))
        assert hist.anneal is not None
        results[path_rounds] = {
            "M": path_rounds,
            "rounds": hist.epochs,
            "passes": hist.epochs * passes_per_round,
            "stop": hist.anneal.stop,
            "decayed_at": list(hist.anneal.decayed_at),
            "valid_ppl": min(hist.val_ppl),
            "test_ppl": test,
            "train_seconds": hist.seconds,
            "tokens": hist.tokens,
            "tokens_per_s": hist.tokens / hist.seconds,
            "wall_seconds_this_process": wall,
        }
        print(json.dumps(results[path_rounds]), flush=True)

    with torch_threads(s.threads):
        score(longest, work / "main.pt", on_epoch=branch)
        for m in branches:
            score(m, work / f"branch{m}.pt")
    record = {"model": spec.label, "seed": spec.seed, "torch": torch.__version__, "paths": [results[m] for m in sorted(results)]}
    (out / f"{spec.label} seed {spec.seed}.json").write_text(json.dumps(record, indent=1))
    return record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="baseline", help='e.g. "baseline", "layerwise 200 fixed", "layer2 70 fixed"')
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, nargs="+", default=[35, 70, 140], help="path lengths M (rounds at the start rate)")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args()
    s = get_profile(a.profile).lstm
    record = run(parse_model(a.model, a.seed), s, a.rounds, a.out, not a.no_progress)
    print(f"{'M':>5} {'passes':>7} {'valid':>8} {'test':>8} {'tok/s':>8}")
    for p in record["paths"]:
        print(f"{p['M']:>5} {p['passes']:>7.2f} {p['valid_ppl']:>8.2f} {p['test_ppl']:>8.2f} {p['tokens_per_s']:>8.0f}")


if __name__ == "__main__":
    main()
