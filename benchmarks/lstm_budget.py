"""Where work B's cpu budget goes: training tokens/s against batch size, and the frozen-bias conventions.

    python benchmarks/lstm_budget.py batch                 # tokens/s of the cpu model vs batch size, one thread
    python benchmarks/lstm_budget.py batch --quality 560000  # + validation ppl after the same tokens at each batch
    python benchmarks/lstm_budget.py freeze --steps 500    # layer-wise T=70 and layer-2 X=70 under each convention
    python benchmarks/lstm_budget.py study                 # the annealed recipe: sizes x batches, until it stops by rule
    python benchmarks/lstm_budget.py study --table         # the table of what has finished so far

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

``study`` chooses work B's cpu recipe by measurement: for each model size
(``hidden/emb``, three layers) and batch size it trains the baseline and the slowest
learner of the grid (fixed layer-wise T = 200) with the ``anneal`` schedule
(:mod:`prismlib.anneal`: SGD at lr 20, the rate divided by 4 when the full
validation perplexity, checked four times a pass, fails to improve by 0.2%; stop at the
first failure after four decays; no decay in the first pass nor before the model beats
the PTB bigram) until it stops by that rule or reaches ``--cap-passes``. Two
single-thread worker processes train at once (the grid's real condition). Each run
writes ``<out>/<run>.json`` (tokens/s of the training loop, wall seconds with
validation and checkpoints, passes, why it stopped, best validation and test
perplexity, the validation curve and the decays) and checkpoints every round under
``<cache>``, so a stopped study resumes where it was. ``--table`` prints the markdown
table of the finished runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch

from prismlib.lstm import FREEZE, RunSpec, build_model, frequency_rank, perplexity, perplexity_difference, train_lm, trained
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
    print(
        f"{'batch':>6s} {'steps':>6s} {'tokens':>9s} {'train s':>8s} {'tokens/s':>9s}"
        + (f" {'valid ppl @ ' + str(quality):>20s}" if quality else "")
    )
    for b in batches:
        n = steps if quality is None else max(1, round(quality / (b * s0.bptt)))
        s = s0.updated(
            optimizer="ntasgd", batch_size=b, epochs=1, steps_per_epoch=n, average_last=0, valid_tokens=None if quality else 2000
        )
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
    s = get_profile("cpu").lstm.updated(optimizer="ntasgd", batch_size=batch, epochs=1, steps_per_epoch=steps, average_last=0)
    specs = [RunSpec(seed=seed)] + [
        RunSpec(v, T, fixed=True, seed=seed, freeze=f) for v, T in (("layerwise", 70.0), ("layer2", 70.0)) for f in conventions
    ]
    print(
        f"cpu model, batch {batch} x {s.bptt}, {steps} steps ({steps * batch * s.bptt:,} tokens, "
        f"{steps * batch * s.bptt / len(corpus.train):.2f} passes), seed {seed}, one thread, cache {cache}"
    )
    t0 = time.perf_counter()
    runs = trained(specs, s, "bench-freeze", executor="inline", cache=cache, corpus=corpus)
    base = runs[specs[0]]
    print(f"trained {len(specs)} models in {time.perf_counter() - t0:.0f} s\n")
    print(f"{'model':40s} {'valid':>7s} {'test':>7s} {'test - baseline [95% CI]':>28s} {'mean i-gate L1/L2 at 0':>24s}")
    for spec in specs:
        r = runs[spec]
        d = "" if spec == specs[0] else str(perplexity_difference(r.test_chunks, base.test_chunks))
        gates = "/".join(f"{input_gate_at_zero(r.model, layer):.3f}" for layer in (0, 1))
        print(f"{spec.label:40s} {r.val_ppl:7.1f} {r.test_ppl:7.1f} {d:>28s} {gates:>24s}", flush=True)


STUDY_SIZES = ("128/128", "192/160", "256/200")
"""Model sizes of the recipe study, ``hidden/emb`` (three layers; the last is ``emb`` wide, tied)."""
STUDY_MODELS = {
    "baseline": RunSpec(seed=0),
    "layerwise T=200 (fixed)": RunSpec("layerwise", 200.0, fixed=True, seed=0),
    "layerwise T=20 (init)": RunSpec("layerwise", 20.0, fixed=False, seed=0),
}
"""The grid's fastest and slowest learners (the slowest: issue 31's measurement, and the
cpu grid's learning curves, where fixed layer-wise T = 200 ends last), and the chrono model
whose end, under the one-check rule, differed most from the baseline's."""
_SLUG = {"baseline": "baseline", "layerwise T=200 (fixed)": "layerwise-T200", "layerwise T=20 (init)": "layerwise-T20init"}


def study_settings(size: str, batch: int, cap_passes: int, patience: int = 1):
    """The cpu profile's LSTM settings with the annealed recipe at ``size`` (``hidden/emb``) and
    ``batch``, decaying after ``patience`` failed checks in a row."""
    hidden, emb = (int(x) for x in size.split("/"))
    return get_profile("cpu").lstm.updated(
        hidden=hidden,
        emb=emb,
        batch_size=batch,
        dropout=0.25,
        dropouth=0.25,
        dropouti=0.25,
        optimizer="anneal",
        steps_per_epoch=None,
        checks_per_pass=4,
        epochs=4 * cap_passes,
        average_last=0,
        curve_every=None,
        valid_tokens=None,
        test_tokens=None,
        eval_batch=10,  # the study's runs validated on 10 streams
        decay_patience=patience,
    )


def _run_name(size: str, batch: int, model: str, seed: int = 0, patience: int = 1) -> str:
    extra = (f"-s{seed}" if seed else "") + (f"-p{patience}" if patience != 1 else "")
    return f"{size.replace('/', 'x')}-b{batch}-{_SLUG[model]}{extra}"


def study_run(size: str, batch: int, model: str, cap_passes: int, out: Path, cache: Path, seed: int = 0, patience: int = 1) -> dict:
    """Train one model of the study (resuming from ``cache``) and write ``out/<run>.json``."""
    from prismlib.lstm import token_nll
    from prismlib.lstm.job import bigram_valid_ppl

    torch.set_num_threads(1)
    name = _run_name(size, batch, model, seed, patience)
    corpus = _corpus()
    s = study_settings(size, batch, cap_passes, patience)
    spec = dataclasses.replace(STUDY_MODELS[model], seed=seed)
    rank = frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))
    net = build_model(spec, len(corpus.vocab), s, rank)
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    learn_below = bigram_valid_ppl(corpus, s)
    hist = train_lm(net, corpus.train, corpus.valid, s, spec.seed, cache / f"{name}.pt", desc=name, progress=False, learn_below=learn_below)
    test_ppl = perplexity(token_nll(net, corpus.test, s.eval_batch, s.bptt))
    wall = time.perf_counter() - t0
    row = {
        "run": name,
        "size": size,
        "batch": batch,
        "model": model,
        "seed": seed,
        "patience": patience,
        "cap_passes": cap_passes,
        "stop": hist.stop_reason,
        "rounds": hist.epochs,
        "passes": hist.tokens / len(corpus.train),
        "tokens": hist.tokens,
        "train_seconds": hist.seconds,
        "tokens_per_s": hist.tokens / hist.seconds,
        "wall_seconds_this_call": wall,
        "best_valid_ppl": min(hist.val_ppl),
        "test_ppl": test_ppl,
        "bigram_valid_ppl": learn_below,
        "decayed_at": list(hist.anneal.decayed_at),
        "valid_ppl": hist.val_ppl,
        "load_before": load0,
        "load_after": os.getloadavg()[0],
        "finished": time.strftime("%Y-%m-%d %H:%M"),
        "torch": torch.__version__,
    }
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"{name}.json.tmp"
    tmp.write_text(json.dumps(row, indent=1))
    tmp.replace(out / f"{name}.json")
    return row


def study_table(out: Path) -> str:
    """Markdown table of the finished runs under ``out``."""
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    lines = [
        "| size hidden/emb | batch | model | stop | passes | decays at pass | tokens/s | train min "
        "| best valid | test | bigram valid | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (int(r["size"].split("/")[0]), r["batch"], r.get("patience", 1), r["model"], r.get("seed", 0))):
        decays = ", ".join(f"{d / 4:.2f}" for d in r["decayed_at"]) or "-"
        extra = ", ".join(f"{k} {r[k]}" for k, default in (("seed", 0), ("patience", 1)) if r.get(k, default) != default)
        model = f"{r['model']} ({extra})" if extra else r["model"]
        lines.append(
            f"| {r['size']} | {r['batch']} | {model} | {r['stop']} | {r['passes']:.2f} | {decays} | {r['tokens_per_s']:,.0f} "
            f"| {r['train_seconds'] / 60:.1f} | {r['best_valid_ppl']:.1f} | {r['test_ppl']:.1f} | {r['bigram_valid_ppl']:.1f} "
            f"| {r['load_before']:.1f} / {r['load_after']:.1f} |"
        )
    return "\n".join(lines)


def study(
    sizes: list[str],
    batches: list[int],
    models: list[str],
    cap_passes: int,
    out: Path,
    cache: Path,
    workers: int,
    seeds: list[int] = (0,),
    patiences: list[int] = (1,),
) -> None:
    todo = [
        (z, b, m, s, p)
        for z in sizes
        for b in batches
        for m in models
        for s in seeds
        for p in patiences
        if not (out / f"{_run_name(z, b, m, s, p)}.json").exists()
    ]
    cache.mkdir(parents=True, exist_ok=True)
    print(f"{len(todo)} runs to train, {workers} single-thread workers; results in {out}", flush=True)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(study_run, z, b, m, cap_passes, out, cache, s, p): (z, b, m) for z, b, m, s, p in todo}
        for f in futures:
            r = f.result()
            print(
                f"{r['run']}: {r['stop']} after {r['passes']:.2f} passes, valid {r['best_valid_ppl']:.1f}, "
                f"test {r['test_ppl']:.1f}, {r['tokens_per_s']:,.0f} tokens/s",
                flush=True,
            )
    print(study_table(out))


def _nll_at(net: torch.nn.Module, corpus, s) -> dict[str, np.ndarray]:
    from prismlib.lstm import token_nll

    return {"valid": token_nll(net, corpus.valid, s.eval_batch, s.bptt), "test": token_nll(net, corpus.test, s.eval_batch, s.bptt)}


def doubled_run(size: str, batch: int, model: str, cap_passes: int, cache: Path, patience: int = 1) -> dict:
    """One model of the study at its stop and trained on to twice as many rounds under the same
    schedule (the rate divided again at every further failure, no stop before the doubled
    cap; the best-validation checkpoint kept). Returns the per-token validation and test NLL
    at both points and the rounds."""
    from prismlib.artifacts import load_checkpoint, save_atomic
    from prismlib.lstm.job import bigram_valid_ppl

    torch.set_num_threads(1)
    name = _run_name(size, batch, model, patience=patience)
    corpus, s, spec = _corpus(), study_settings(size, batch, cap_passes, patience), STUDY_MODELS[model]
    rank = frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))
    learn_below = bigram_valid_ppl(corpus, s)
    net = build_model(spec, len(corpus.vocab), s, rank)
    hist = train_lm(net, corpus.train, corpus.valid, s, spec.seed, cache / f"{name}.pt", progress=False, learn_below=learn_below)
    if hist.stop_reason != "rule":
        raise SystemExit(f"{name} ended {hist.stop_reason!r}, not by its rule: nothing to double")
    at_stop = _nll_at(net, corpus, s)
    longer = cache / f"{name}-doubled.pt"
    if not longer.exists():  # the stopped run, reopened: the same schedule goes on to twice its rounds
        ck = load_checkpoint(cache / f"{name}.pt")
        ck["history"].anneal = dataclasses.replace(ck["history"].anneal, stop=None)
        save_atomic(longer, **ck)
    s2 = s.updated(epochs=2 * hist.epochs, decays=10**6)
    net = build_model(spec, len(corpus.vocab), s2, rank)
    hist2 = train_lm(net, corpus.train, corpus.valid, s2, spec.seed, longer, progress=False, learn_below=learn_below)
    return {
        "run": name,
        "rounds": (hist.epochs, hist2.epochs),
        "decays": (len(hist.anneal.decayed_at), len(hist2.anneal.decayed_at)),
        "best_valid": (min(hist.val_ppl), min(hist2.val_ppl)),
        "at_stop": at_stop,
        "doubled": _nll_at(net, corpus, s2),
    }


def doubled(size: str, batch: int, cap_passes: int, out: Path, cache: Path, workers: int, patience: int = 1) -> None:
    """Issue 31's check of the stopping rule: the baseline and the slowest learner (fixed
    layer-wise T = 200) trained on to twice their rounds; their contrast on validation and
    test at the stop and after, and how far it moved against its margin."""
    from prismlib.claims import claim_margin

    models = list(STUDY_MODELS)[:2]
    cache.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = dict(zip(models, pool.map(doubled_run, *zip(*[(size, batch, m, cap_passes, cache, patience) for m in models]))))
    base, slow = (rows[m] for m in models)
    report = {"size": size, "batch": batch, "patience": patience, "finished": time.strftime("%Y-%m-%d %H:%M"), "runs": {}, "contrast": {}}
    for m, r in rows.items():
        report["runs"][m] = {
            "rounds at stop / doubled": r["rounds"],
            "decays": r["decays"],
            "best valid": r["best_valid"],
            "test ppl": [perplexity(r[k]["test"]) for k in ("at_stop", "doubled")],
        }
    for split in ("valid", "test"):
        before = perplexity_difference(slow["at_stop"][split], base["at_stop"][split])
        after = perplexity_difference(slow["doubled"][split], base["doubled"][split])
        margin = claim_margin(before.effect)
        report["contrast"][split] = {
            "at stop": str(before),
            "doubled": str(after),
            "moved": after.effect - before.effect,
            "margin": margin,
            "moved less than the margin": abs(after.effect - before.effect) < margin,
            "moved less than half the margin": abs(after.effect - before.effect) < margin / 2,
        }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"doubled-{size.replace('/', 'x')}-b{batch}{f'-p{patience}' if patience != 1 else ''}.json"
    path.write_text(json.dumps(report, indent=1, default=float) + "\n")
    print(json.dumps(report, indent=1, default=float))
    print(f"written to {path}")


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
    st = sub.add_parser("study")
    st.add_argument("--sizes", nargs="+", default=list(STUDY_SIZES), help="hidden/emb, e.g. 128/128")
    st.add_argument("--batches", type=int, nargs="+", default=[20, 40])
    st.add_argument("--models", nargs="+", choices=list(STUDY_MODELS), default=list(STUDY_MODELS)[:2])
    st.add_argument("--seeds", type=int, nargs="+", default=[0])
    st.add_argument("--patience", type=int, nargs="+", default=[1], help="failed checks in a row before a decay")
    st.add_argument("--cap-passes", type=int, default=20)
    st.add_argument("--out", type=Path, default=Path("results/cpu/recipe_study"))
    st.add_argument("--cache", type=Path, default=Path(".cache/recipe_study"))
    st.add_argument("--workers", type=int, default=2)
    st.add_argument("--table", action="store_true", help="print the table of the finished runs and exit")
    d = sub.add_parser("doubled", help="the baseline and fixed T = 200 of the study trained on to twice their rounds")
    d.add_argument("--size", default="96/96")
    d.add_argument("--batch", type=int, default=20)
    d.add_argument("--cap-passes", type=int, default=20)
    d.add_argument("--out", type=Path, default=Path("results/cpu/recipe_study"))
    d.add_argument("--cache", type=Path, default=Path(".cache/recipe_study"))
    d.add_argument("--workers", type=int, default=2)
    d.add_argument("--patience", type=int, default=2, help="the rule's failed checks in a row (the cpu recipe's: 2)")
    args = parser.parse_args()
    if args.what == "doubled":
        doubled(args.size, args.batch, args.cap_passes, args.out, args.cache, args.workers, args.patience)
    elif args.what == "study":
        if args.table:
            print(study_table(args.out))
        else:
            study(args.sizes, args.batches, args.models, args.cap_passes, args.out, args.cache, args.workers, args.seeds, args.patience)
    elif args.what == "batch":
        batch_sweep(args.batches, args.steps, args.quality, args.seed)
    else:
        torch.set_num_threads(1)
        freeze_sweep(args.steps, args.batch, args.seed, args.cache or Path(tempfile.mkdtemp(prefix="freeze-")), args.conventions)


if __name__ == "__main__":
    main()
