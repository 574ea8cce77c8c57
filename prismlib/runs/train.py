"""``python -m prismlib train``: train a profile's models into the job cache up front.

By default the LSTM grid of work B (:mod:`prismlib.lstm.grid`, notebooks 05-08); ``--section4``
adds the continued-MLM arms of section 4 (:mod:`prismlib.prism.arms`, notebooks 03-04),
``--only`` picks experiments. The jobs run on an executor of :mod:`prismlib.runs.jobs`:
``local`` worker processes, ``inline``, or ``slurm`` through submitit, one array task per
job (``--partition``, ``--gpus``, ``--timeout-min``). Notebooks then only read the cache.
Every run is appended to ``results/<profile>/training.json`` (the run manifest shows it).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from datetime import datetime, timezone

from prismlib.lstm.grid import EXPERIMENTS, all_specs, experiment
from prismlib.lstm.job import jobs_for
from prismlib.paths import cache_dir
from prismlib.profiles import PROFILES, get_profile
from prismlib.runs.jobs import EXECUTOR_ENV, EXECUTORS, is_done, pool_size, record_training, run_missing

SECTION4 = "section4"


def _section4(profile, executor: str | None, slurm: dict) -> int:
    """Train section 4's arms (the corpus is tokenised here, once); returns how many."""
    from prismlib.prism.arms import TRAINED, mlm_corpus, section4_models
    from prismlib.prism.mlm_training import load_mlm_tokenizer

    corpus = mlm_corpus(profile, load_mlm_tokenizer(profile.encoder))
    section4_models(profile, corpus, TRAINED, executor=executor, slurm=slurm)
    return len(TRAINED)


def main(argv: Sequence[str]) -> int:
    """``python -m prismlib train``: train a profile's models (or some experiments) into the cache."""
    parser = argparse.ArgumentParser(prog="python -m prismlib train", description=main.__doc__)
    parser.add_argument("--profile", choices=list(PROFILES), default=None, help="default: $PRISMLIB_PROFILE or cpu")
    parser.add_argument("--executor", choices=EXECUTORS, default=None, help=f"default: ${EXECUTOR_ENV} or local")
    parser.add_argument("--workers", type=int, default=None, help="local pool size (default: one per core)")
    parser.add_argument("--only", nargs="+", choices=(*EXPERIMENTS, SECTION4), help="train only these experiments")
    parser.add_argument("--section4", action="store_true", help="also train section 4's continued-MLM arms (notebooks 03-04)")
    parser.add_argument("--partition", default=None, help="slurm: partition")
    parser.add_argument("--gpus", type=int, default=None, help="slurm: GPUs per job")
    parser.add_argument("--timeout-min", type=int, default=None, help="slurm: time limit per job (minutes)")
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    lstm_experiments = [e for e in (args.only or EXPERIMENTS) if e != SECTION4]
    specs = list(dict.fromkeys(s for e in lstm_experiments for s in experiment(e, profile))) if args.only else all_specs(profile)
    jobs = jobs_for(specs, profile.lstm, profile.name)
    slurm = {
        k: v
        for k, v in (("slurm_partition", args.partition), ("gpus_per_node", args.gpus), ("timeout_min", args.timeout_min))
        if v is not None
    }
    done = sum(is_done(j) for j in jobs)
    print(f"profile {profile.name}: {len(jobs)} LSTM models, {done} already trained, cache {cache_dir() / 'jobs'}")
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    ran = run_missing(jobs, args.executor, args.workers, device=profile.device, slurm=slurm)
    arms = _section4(profile, args.executor, slurm) if args.section4 or SECTION4 in (args.only or ()) else 0
    seconds = round(time.perf_counter() - t0, 1)
    print(f"trained {len(ran)} LSTM model(s) in {seconds:.0f} s; all {len(jobs)} are in the cache" + (f", and {arms} section 4 arms" if arms else ""))
    record_training(profile.name, {
        "started": started, "seconds": seconds, "models": len(jobs), "trained": len(ran),
        "executor": args.executor or os.environ.get(EXECUTOR_ENV, "local"),
        "workers": pool_size(args.workers, profile.device), "experiments": args.only or "all",
        "section4_arms": arms,
    })  # fmt: skip
    return 0
