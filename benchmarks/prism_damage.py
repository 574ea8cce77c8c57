"""Pilot: does continued MLM training damage the cpu stand-in on topic, and what lifts it?

    PRISMLIB_OUTPUT=/tmp/damage python benchmarks/prism_damage.py            # 1e-3 (the recipe), 3e-4, 1e-4
    python benchmarks/prism_damage.py --pretrained-lr 1e-3 1e-4 --seed 0

In the committed cpu run of notebook 03, continued training lowered MiniLM's topic probe
from 34.7% to 26.4% (test), so the no-damage gate made every topic row of section 4
`not testable`. Issue 46 (item 5) names two remedies to measure, chosen on validation,
never on test: a lower Adam rate for the pretrained top layers (the new MLM head keeps
the recipe's rate; a prism has no parameters), and notebook 02's larger topic probe
(1,200 / 300 / 600 posts instead of section 4's 160 / 40 / 80), which may show the drop
to be probe noise.

For every ``--pretrained-lr`` this trains the ``baseline`` arm of training seed
``--seed`` with the cpu profile's recipe and that rate (``MLMRecipe.pretrained_lr``; the
recipe's own rate runs as the profile, so its job is the one notebook 03 trains), one
single-thread process per rate, all at once. Then, for each topic probe size, it probes
the original encoder and every trained baseline (the profile's probe recipe and runs)
and prints, **on the validation posts only**, each model's accuracy and the damage:
baseline minus original in points, with a 95% interval from the paired bootstrap over
validation posts (the unit the notebook's gate resamples on test). Beside it: how each
run ended (the rule or the cap), its steps and minutes, and its held-out MLM loss before
and after (a rate that stops the damage by not training is no remedy).

The choice, stated before the run (docs/benchmarks.md, "Section 4 without damage"): the
probe size is chosen on cost and power, not on what it shows (notebook 02's size where
its encoding fits notebook 03's budget, since more posts narrow the gate's interval); the
rate is the highest one whose run stopped by its rule, lowered its held-out MLM loss,
and whose validation damage interval at that size is not entirely below 0. If none is,
the recipe stays and the topic rows stay `not testable`, with this measurement as the
reason. Caches go under ``$PRISMLIB_OUTPUT`` (set it to keep notebook 03's own cache
empty); the trained arm of the chosen rate can be copied from there.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor


def _updated(profile_name: str, lr: float):
    """The profile ``profile_name`` with its pretrained layers at ``lr`` (the recipe's own rate: the profile itself)."""
    import dataclasses

    from prismlib.profiles import get_profile

    P = get_profile(profile_name)
    return dataclasses.replace(P, prism=P.prism.updated(pretrained_lr=None if lr == P.prism.lr else lr))


def _train(profile_name: str, lr: float, seed: int) -> None:
    """Train the ``baseline`` arm of ``seed`` with the pretrained layers at ``lr``, on one thread, here."""
    import torch

    from prismlib.prism import load_mlm_tokenizer, mlm_corpus, section4_models

    torch.set_num_threads(1)
    P = _updated(profile_name, lr)
    section4_models(P, mlm_corpus(P, load_mlm_tokenizer(P.encoder)), ["baseline"], executor="inline", seeds=(seed,), progress=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pretrained-lr", type=float, nargs="+", default=[1e-3, 3e-4, 1e-4], help="rates of the pretrained layers")
    parser.add_argument("--seed", type=int, default=0, help="the training seed of every baseline arm")
    parser.add_argument(
        "--sizes", nargs="+", default=["160,40,80,32", "1200,300,600,16"], help="topic probe sizes: train,val,test,positions"
    )
    parser.add_argument("--profile", default="cpu")
    args = parser.parse_args()

    from validation_probe import orig_on_validation

    from prismlib.prism import load_mlm_tokenizer, mlm_corpus, probe_encoders, section4_data, section4_models
    from prismlib.probing import build_task
    from prismlib.profiles import TaskSize, get_profile

    P = get_profile(args.profile)
    S, Q = P.prism, P.probe
    if S.recipe != "staged":
        raise SystemExit(f"profile {P.name} trains with the {S.recipe} recipe; the pretrained layers' rate is a staged-recipe setting")
    profiles = {lr: _updated(P.name, lr) for lr in args.pretrained_lr}
    tokenizer = load_mlm_tokenizer(P.encoder)
    corpus = mlm_corpus(P, tokenizer)
    section4_data(P, corpus, tokenizer, seeds=(args.seed,))  # the frozen states once, before the runs read them at once

    t0 = time.perf_counter()
    with ProcessPoolExecutor(len(profiles), mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_train, [P.name] * len(profiles), profiles, [args.seed] * len(profiles)))
    trained = {lr: section4_models(p, corpus, ["baseline"], seeds=(args.seed,))[0] for lr, p in profiles.items()}  # cached now
    print(f"baseline arms of seed {args.seed} ready in {(time.perf_counter() - t0) / 60:.1f} min (0: cached)")
    models = {"original": section4_models(P, corpus, ["original"], seeds=(args.seed,))[0]["original"]}
    for lr, ms in trained.items():
        (m,) = ms.values()
        r = m.result
        first, last = r.heldout[0][1], min(loss for _, loss, _ in r.heldout)
        how = "stopped by its rule" if r.converged else f"ended ({r.anneal.stop if r.anneal else 'fixed budget'})"
        print(
            f"  pretrained lr {lr:g}: {how} after {r.steps} steps, kept step {r.best_step}, {r.seconds / 60:.1f} min; "
            f"held-out MLM loss {first:.3f} -> {last:.3f} nats ({math.exp(first):.1f} -> {math.exp(last):.1f} ppl)"
        )
        models[f"baseline lr {lr:g}"] = m
    encoders = probe_encoders(models, S)

    for spec in args.sizes:
        train, val, test, positions = (int(v) for v in spec.split(","))
        size = TaskSize(train=train, val=val, test=test, positions=positions)
        task = build_task("topic", tokenizer, size.windows(), profile_name=P.name, seed=P.seed, window=P.window, da_labels=Q.da_labels)
        v = orig_on_validation(encoders, task, P, positions)
        compare = v.compare
        print(
            f"\ntopic probe {train} / {val} / {test} posts, {positions} positions each: validation {v.units} posts; "
            f"encoding {len(encoders)} models {v.encode_seconds / 60:.1f} min, probes {v.probe_seconds / 60:.1f} min"
        )
        print(f"  majority class {compare.accuracy('majority').effect:.1f}%   original {compare.accuracy('original')}")
        for name in encoders:
            if name != "original":
                print(f"  {name}: {compare.accuracy(name)}; damage (baseline - original) {compare.diff(name, 'original')} points")


if __name__ == "__main__":
    main()
