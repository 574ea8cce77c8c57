"""``python -m prismlib plan``: a row per notebook that counts every job, the committed
manifest's clock in the table, the printed table's shape and notes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from prismlib.jobcache import pool_size
from prismlib.lstm import all_specs
from prismlib.prism import TRAINED
from prismlib.profiles import PROFILES
from prismlib.runs import clock, costs, plan
from prismlib.runs.manifest import read_manifest, run_seconds
from prismlib.timing import format_duration

ROOT = Path(__file__).resolve().parents[2]
ZERO = re.compile(r"(?<![\d.,])0(\.0+)? ?(s|min|h)\b")
"""A duration that reads as nothing: ``0.0 h``, ``0 s``, ``0.0 min``."""


@pytest.mark.parametrize("name", ["paper", "cpu", "dryrun"])
def test_plan_has_a_row_per_notebook_and_counts_every_job(name, tmp_path):
    profile = PROFILES[name]
    table = plan.plan_table(profile, runs={}, cache=tmp_path)
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert list(table["notebook"]) == [*notebooks, "total"]
    total = table.set_index("notebook").loc["total"]
    dyck = 2 * len(profile.iclr.dyck.seeds)
    assert total["jobs"] == len(all_specs(profile)) + len(TRAINED) * len(profile.prism.seeds) + dyck
    assert (table["run_seconds"] >= 0).all() and total["run_seconds"] > 0
    # training time left exactly where a model has neither a committed record nor a cached run
    # (the cpu grid's seed 0 is all committed: nothing left; paper and dryrun have no records)
    to_train = sum(e.models_to_train for e in clock.estimates(profile, {}, None, tmp_path).values())
    assert (total["training_seconds"] > 0) == (to_train > 0) and (to_train > 0 or name == "cpu")
    faster = plan.plan_table(profile, {k: 10 * v for k, v in costs.ASSUMED_TFLOPS.items()}, runs={}, cache=tmp_path)
    # without a measured run, the FLOP model: 10x the throughput, a tenth of the time; the cpu
    # recipe's LSTMs train at the installments' measured default rate, whatever the FLOP model says
    assert faster.iloc[-1]["run_seconds"] == pytest.approx(total["run_seconds"] / 10)
    scale = 1 if profile.job_profile == "cpu" else 10
    assert faster.iloc[-1]["training_seconds"] == pytest.approx(total["training_seconds"] / scale)


def test_cli_prints_the_table(capsys):
    assert plan.main(["--profile", "paper"]) == 0
    out = capsys.readouterr().out
    assert "assumed" in out and "05_chrono_init" in out and "| total" in out
    assert "FLOP model" in out and "the GPU's memory one job needs" in out
    table = plan.plan_table(PROFILES["paper"]).set_index("notebook")
    total = table.loc["total"]
    one = total["run_seconds"] + total["training_seconds"] / pool_size(None, PROFILES["paper"].device)
    assert f"wall clock on 1 GPU: about {format_duration(one)}" in out
    assert f"wall clock on 8 GPUs: about {format_duration(max(one / 8, total['longest_seconds']))}" in out
    assert "features of every window" in table.loc["02_probing_filtered", "disk_for"]  # why 02 needs its disk
    assert table.loc["04_long_range_mlm", "disk_for"] == "" and table.loc["total", "disk_for"] == ""
    assert out.startswith("profile paper: encoder bert-base-cased, data full;")
    assert plan.main(["--profile", "cpu"]) == 0  # section 4 on the BERT pretrained here, named in the head
    assert capsys.readouterr().out.startswith("profile cpu: encoder minilm (03-04: the 4x256 BERT pretrained here), data offline;")


def test_cpu_plan_agrees_with_the_committed_manifest():
    """Issue 44: the plan said 0.1 h (assumed throughputs) where the notebooks took 2.5 h."""
    measured = read_manifest(ROOT / "results" / "cpu" / "manifest.json")["notebooks"]
    table = plan.plan_table(PROFILES["cpu"]).set_index("notebook")
    estimates = clock.notebook_estimates("cpu")
    compared = [nb for nb in measured if nb in table.index]
    assert len(compared) >= 6  # 01-09 ran on cpu
    for nb in compared:
        seconds, record = table.loc[nb, "run_seconds"], measured[nb]
        cold = run_seconds(record)  # its time on an empty cache, as from a fresh clone (03 re-ran from its cached arms)
        assert cold / 1.5 <= seconds <= 1.5 * cold, nb
        assert table.loc[nb, "run_from"] == f"run {record['started'][:10]}"
        assert estimates[nb].basis == clock.MEASURED and estimates[nb].seconds == seconds
        assert record["device"] in estimates[nb].source and record["started"][:10] in estimates[nb].source


@pytest.mark.parametrize("name", ["cpu", "paper", "smoke"])
def test_cli_fits_in_100_columns_and_no_duration_reads_zero(name, capsys, monkeypatch):
    monkeypatch.setattr(clock, "_trained", lambda job, cache: True)  # a checkout whose models are all trained: no "0 s of training"
    assert plan.main(["--profile", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if ZERO.search(line)] == []
    monkeypatch.setattr(clock, "_trained", lambda job, cache: False)
    assert plan.main(["--profile", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert plan.PLAN_WIDTH <= 100 and max(map(len, lines)) <= plan.PLAN_WIDTH
    assert [line for line in lines if ZERO.search(line)] == []  # the issue: 4 and 8 devices read "0.0 h"
    walls = [line for line in lines if line.startswith("wall clock on ")]
    if name == "paper":  # its GPU cluster, wherever it is planned
        assert [w.split(":")[0] for w in walls] == ["wall clock on 1 GPU", "wall clock on 4 GPUs", "wall clock on 8 GPUs"]
    elif not torch.cuda.is_available():  # issue 77: no "4 devices" on a CPU-only machine
        assert len(walls) == 1 and walls[0].startswith("wall clock on this machine (")


def test_measure_feeds_the_flop_model_and_says_so(capsys, monkeypatch):
    timed = {k: 2 * v for k, v in costs.ASSUMED_TFLOPS.items()}
    monkeypatch.setattr(plan, "measure", lambda profile, device: timed)
    assert plan.main(["--profile", "paper", "--measure", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "sustained TFLOP/s timed on cpu: transformer 200, lstm 10, probe 40" in out and "assumed" not in out
