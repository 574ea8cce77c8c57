"""How long notebooks take: a measured run from the committed manifest, the FLOP model
calibrated on the runs, a twin calibrated on the profile it extends, the training of work B's
models not trained yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from prismlib.jobcache import job_dir
from prismlib.lstm import jobs_for
from prismlib.paths import OUTPUT_ENV
from prismlib.profiles import PROFILES
from prismlib.runs import clock, costs
from prismlib.runs.installments import job_tokens
from prismlib.runs.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]


def _cpu_manifest() -> dict:
    return read_manifest(ROOT / "results" / "cpu" / "manifest.json")["notebooks"]


def test_a_notebook_without_a_run_is_calibrated_on_the_others(tmp_path):
    cpu = PROFILES["cpu"]
    runs = {nb: r for nb, r in _cpu_manifest().items() if nb != "04_long_range_mlm"}
    est = clock.estimates(cpu, runs, cache=tmp_path)
    e = est["04_long_range_mlm"]
    modelled_runs = {w.notebook for w in costs.works(cpu)} & runs.keys()  # a notebook the FLOP model has no work for cannot calibrate it
    assert e.basis == clock.CALIBRATED and e.source.startswith(f"calibrated on {len(modelled_runs)} measured runs")
    assert est["02_probing_filtered"].basis == clock.MEASURED
    # from the clock: twice the measured seconds, twice the estimate; the assumed throughputs' scale does not enter
    doubled = {nb: r | {k: 2 * r[k] for k in ("seconds", "cold_seconds") if k in r} for nb, r in runs.items()}
    slower = clock.estimates(cpu, doubled, cache=tmp_path)
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


def test_a_measured_run_that_reused_trained_models_counts_at_its_time_on_an_empty_cache(tmp_path):
    runs = {"03_prism_layer": {"seconds": 900.0, "reused_jobs": 9, "cold_seconds": 8000.0, "commit": "b7a69e8", "started": "2026-12-07"}}
    e = clock.estimates(PROFILES["cpu"], runs, cache=tmp_path)["03_prism_layer"]
    assert e.basis == clock.MEASURED and e.seconds == 8000.0
    assert e.source.endswith("reusing 9 trained models; on an empty cache its last such run")
    runs["03_prism_layer"].pop("cold_seconds")
    e = clock.estimates(PROFILES["cpu"], runs, cache=tmp_path)["03_prism_layer"]
    assert e.seconds == 900.0 and e.source.endswith("reusing 9 trained models (no run on an empty cache recorded)")
