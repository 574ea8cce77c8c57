"""How long notebooks take: the plan against the committed manifest's clock, the calibrated
model, the training of work B's models, the printed table's shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prismlib.jobcache import job_dir
from prismlib.lstm import all_specs, jobs_for
from prismlib.paths import OUTPUT_ENV
from prismlib.prism import TRAINED
from prismlib.profiles import PROFILES
from prismlib.runs import clock, costs
from prismlib.runs.installments import job_tokens
from prismlib.runs.manifest import read_manifest
from prismlib.timing import format_duration

ROOT = Path(__file__).resolve().parents[2]
ZERO = re.compile(r"(?<![\d.,])0(\.0+)? ?(s|min|h)\b")
"""A duration that reads as nothing: ``0.0 h``, ``0 s``, ``0.0 min``."""


@pytest.mark.parametrize("name", ["paper", "cpu", "dryrun"])
def test_plan_has_a_row_per_notebook_and_counts_every_job(name, tmp_path):
    profile = PROFILES[name]
    table = clock.plan(profile, runs={}, cache=tmp_path)
    assert list(table["notebook"])[-1] == "total" and len(table) == 10
    total = table.set_index("notebook").loc["total"]
    assert total["jobs"] == len(all_specs(profile)) + len(TRAINED)
    assert (table["run_seconds"] >= 0).all() and total["run_seconds"] > 0 and total["training_seconds"] > 0
    faster = clock.plan(profile, {k: 10 * v for k, v in costs.ASSUMED_TFLOPS.items()}, runs={}, cache=tmp_path)
    # without a measured run, the FLOP model: 10x the throughput, a tenth of the time; the cpu
    # recipe's LSTMs train at the installments' measured default rate, whatever the FLOP model says
    assert faster.iloc[-1]["run_seconds"] == pytest.approx(total["run_seconds"] / 10)
    scale = 1 if profile.job_profile == "cpu" else 10
    assert faster.iloc[-1]["training_seconds"] == pytest.approx(total["training_seconds"] / scale)


def test_cli_prints_the_table(capsys):
    assert clock.main(["--profile", "paper"]) == 0
    out = capsys.readouterr().out
    assert "assumed" in out and "05_chrono_init" in out and "| total" in out
    assert "FLOP model" in out and "the GPU's memory one job needs" in out
    table = clock.plan(PROFILES["paper"]).set_index("notebook")
    total = table.loc["total"]
    one = total["run_seconds"] + total["training_seconds"] / clock.pool_size(None, PROFILES["paper"].device)
    assert f"wall clock on 1 GPU: about {format_duration(one)}" in out
    assert f"wall clock on 8 GPUs: about {format_duration(max(one / 8, total['longest_seconds']))}" in out
    assert "features of every window" in table.loc["02_probing_filtered", "disk_for"]  # why 02 needs its disk
    assert table.loc["04_long_range_mlm", "disk_for"] == "" and table.loc["total", "disk_for"] == ""


def _cpu_manifest() -> dict:
    return read_manifest(ROOT / "results" / "cpu" / "manifest.json")["notebooks"]


def test_cpu_plan_agrees_with_the_committed_manifest():
    """Issue 44: the plan said 0.1 h (assumed throughputs) where the notebooks took 2.5 h."""
    measured = _cpu_manifest()
    table = clock.plan(PROFILES["cpu"]).set_index("notebook")
    estimates = clock.notebook_estimates("cpu")
    compared = [nb for nb in measured if nb in table.index]
    assert len(compared) >= 6  # 01-09 ran on cpu
    for nb in compared:
        seconds, record = table.loc[nb, "run_seconds"], measured[nb]
        assert record["seconds"] / 1.5 <= seconds <= 1.5 * record["seconds"], nb
        assert table.loc[nb, "run_from"] == f"run {record['started'][:10]}"
        assert estimates[nb].basis == clock.MEASURED and estimates[nb].seconds == seconds
        assert record["device"] in estimates[nb].source and record["started"][:10] in estimates[nb].source


@pytest.mark.parametrize("name", ["cpu", "paper", "smoke"])
def test_cli_fits_in_100_columns_and_no_duration_reads_zero(name, capsys, monkeypatch):
    monkeypatch.setattr(clock, "_trained", lambda job, cache: True)  # a checkout whose models are all trained: no "0 s of training"
    assert clock.main(["--profile", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if ZERO.search(line)] == []
    monkeypatch.setattr(clock, "_trained", lambda job, cache: False)
    assert clock.main(["--profile", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert clock.PLAN_WIDTH <= 100 and max(map(len, lines)) <= clock.PLAN_WIDTH
    assert [line for line in lines if ZERO.search(line)] == []  # the issue: 4 and 8 devices read "0.0 h"
    assert any(line.startswith("wall clock on 8 ") for line in lines)


def test_a_notebook_without_a_run_is_calibrated_on_the_others(tmp_path):
    cpu = PROFILES["cpu"]
    runs = {nb: r for nb, r in _cpu_manifest().items() if nb != "04_long_range_mlm"}
    est = clock.estimates(cpu, runs, cache=tmp_path)
    e = est["04_long_range_mlm"]
    assert e.basis == clock.CALIBRATED and e.source.startswith(f"calibrated on {len(runs)} measured runs")
    assert est["02_probing_filtered"].basis == clock.MEASURED
    # from the clock: twice the measured seconds, twice the estimate; the assumed throughputs' scale does not enter
    slower = clock.estimates(cpu, {nb: r | {"seconds": 2 * r["seconds"]} for nb, r in runs.items()}, cache=tmp_path)
    assert slower["04_long_range_mlm"].seconds == pytest.approx(2 * e.seconds)
    faster = {k: 10 * v for k, v in costs.ASSUMED_TFLOPS.items()}
    assert clock.estimates(cpu, runs, faster, cache=tmp_path)["04_long_range_mlm"].seconds == pytest.approx(e.seconds)
    # no run at all: the FLOP model, and it says so
    modelled = clock.estimates(cpu, {}, cache=tmp_path)["04_long_range_mlm"]
    assert modelled.basis == clock.MODELLED and "FLOP model at assumed TFLOP/s" in modelled.source


def test_calibration_shares_a_run_among_its_kinds_of_work():
    work = [
        costs.Work("a", "", "transformer", 1e12),
        costs.Work("b", "", "transformer", 3e12),
        costs.Work("b", "", "probe", 1e12),
    ]
    fit = clock.calibrate(work, {"a": 10.0, "b": 50.0}, {"transformer": 1.0, "probe": 1.0})
    # overhead 10 s (the shortest run, a's); b's other 40 s shared 3:1 by its FLOP-model times
    assert fit.overhead == 10.0 and fit.runs == 2
    assert fit.tflops["transformer"] == pytest.approx((1e12 + 3e12) / 30 / 1e12)
    assert fit.tflops["probe"] == pytest.approx(1e12 / 10 / 1e12)


def test_a_twin_without_runs_is_calibrated_on_the_profile_it_extends(tmp_path):
    est = clock.estimates(PROFILES["cpu-long"], {}, cache=tmp_path)
    assert all(e.basis == clock.CALIBRATED and e.source.endswith("of profile cpu") for e in est.values())


def test_training_counts_only_the_models_not_trained_yet(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))  # no committed record: the checkout's results/cpu/runs/ fills up
    cpu = PROFILES["cpu"]
    before = clock.estimates(cpu, {}, cache=tmp_path)["05_chrono_init"]
    assert before.models_to_train == before.models > 0 and before.training_seconds > 0
    assert "10,000 tokens/s per worker, the installments' default" in before.training_source
    jobs = jobs_for([s for w in costs.works(cpu) if w.notebook == "05_chrono_init" for s in w.specs], cpu.lstm, cpu.job_profile)
    for job in jobs[:3]:
        job_dir(job, tmp_path).mkdir(parents=True)
        (job_dir(job, tmp_path) / "done.pt").touch()
    after = clock.estimates(cpu, {}, cache=tmp_path)["05_chrono_init"]
    assert after.models_to_train == before.models - 3
    assert after.training_seconds == pytest.approx(before.training_seconds * after.models_to_train / before.models)


def test_training_at_the_rate_the_committed_records_measured(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    (tmp_path / "results" / "cpu" / "runs").mkdir(parents=True)
    monkeypatch.setattr(clock, "measured_rate", lambda jobs: (12_000.0, 3))
    monkeypatch.setattr(clock, "committed", lambda job: False)
    cpu = PROFILES["cpu"]
    e = clock.estimates(cpu, {}, cache=tmp_path)["05_chrono_init"]
    jobs = jobs_for([s for w in costs.works(cpu) if w.notebook == "05_chrono_init" for s in w.specs], cpu.lstm, cpu.job_profile)
    assert e.training_seconds == pytest.approx(sum(job_tokens(j, costs.PTB_TRAIN) for j in jobs) / 12_000)
    assert "12,000 tokens/s per worker, the median of 3 committed records" in e.training_source


def test_a_broken_manifest_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    (tmp_path / "results" / "cpu").mkdir(parents=True)
    (tmp_path / "results" / "cpu" / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"manifest.json is not valid JSON .*restore it"):
        clock.measured_runs("cpu")


def test_measure_feeds_the_flop_model_and_says_so(capsys, monkeypatch):
    timed = {k: 2 * v for k, v in costs.ASSUMED_TFLOPS.items()}
    monkeypatch.setattr(clock, "measure", lambda profile, device: timed)
    assert clock.main(["--profile", "paper", "--measure", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "sustained TFLOP/s timed on cpu: transformer 200, lstm 10, probe 40" in out and "assumed" not in out
