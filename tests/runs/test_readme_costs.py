"""The README's "Three ways in" times come from the committed manifest and run records: the
committed README agrees with them, and the numbers are the sums they say."""

from __future__ import annotations

import json

from prismlib.paths import OUTPUT_ENV, project_root
from prismlib.runs import readme_costs
from prismlib.timing import format_duration


def test_the_readme_shows_the_committed_run_times(monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(project_root()))
    readme = (project_root() / "README.md").read_text()
    start, end = readme_costs.COSTS_MARKERS
    assert readme.split(start, 1)[1].split(end, 1)[0].strip() == readme_costs.costs_markdown("cpu"), (
        "README.md's 'Three ways in' differs from results/cpu: `python -m prismlib report --profile cpu --readme` rewrites it"
    )


def test_the_times_are_the_manifests_notebooks_by_work_and_the_records_worker_hours(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    out = tmp_path / "results" / "cpu"
    out.mkdir(parents=True)
    runs = {"01_a": 600.0, "09_b": 1200.0, "05_c": 60.0, "10_d": 120.0, "11_new": 5.0}
    (out / "manifest.json").write_text(json.dumps({"notebooks": {k: {"seconds": v} for k, v in runs.items()} | {"02_x": {}}}))
    records = [{"provenance": {"wall_seconds": 3600.0}}, {"provenance": {"wall_seconds": 1800.0}}]
    monkeypatch.setattr(readme_costs, "scan", lambda folder: [type("S", (), {"problem": None, "record": r})() for r in records])
    costs = readme_costs.run_costs("cpu")
    assert costs.work_seconds("A") == 1800.0 and costs.work_seconds("B") == 180.0  # 11_new belongs to no work yet
    assert costs.records == 2 and costs.worker_seconds == 5400.0
    row = readme_costs.costs_markdown("cpu").splitlines()[-1]
    assert f"about {format_duration(1985.0)} of notebooks" in row and f"work A's (01-04, 09) {format_duration(1800.0)}" in row
    assert "work B's 2 LSTM runs" in row and "1.5 worker-hours (about 1 h on 2 cores" in row


def test_the_results_page_shows_each_notebooks_last_run(monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(project_root()))
    page = (project_root() / "docs" / "results.md").read_text()
    start, end = readme_costs.TIMES_MARKERS
    assert page.split(start, 1)[1].split(end, 1)[0].strip() == readme_costs.run_times_markdown("cpu")


def test_the_readers_rows_are_the_committed_measurement_or_the_reviews_until_there_is_one(tmp_path):
    assert readme_costs.reader_rows(tmp_path / "none.json") == (readme_costs.REPORT_ROW, readme_costs.SMOKE_ROW)
    path = tmp_path / "reader_paths.json"
    measured = {"commit": "0123456789abcdef", "day": "2026-12-07", "cores": 2}
    path.write_text(json.dumps(measured | {"install_seconds": 250.0, "report_seconds": 21.4, "smoke_seconds": 660.0}))
    report, smoke = readme_costs.reader_rows(path)
    where = "measured from a fresh clone at `0123456`, 2026-12-07: `results/reader_paths.json`"
    assert report == (*readme_costs.REPORT_ROW[:2], f"21 s (the first `make` also installs `.venv`: 4.2 min; {where})")
    assert smoke == (*readme_costs.SMOKE_ROW[:2], f"11 min, 15 min with the first install ({where})")


def test_a_run_that_reused_trained_models_counts_at_its_time_on_an_empty_cache(tmp_path, monkeypatch):
    """03 re-run from its cached arms in 900 s counts at the 8,000 s of its last cold run; a
    run that reused models with no cold run recorded counts at its own time, and says so."""
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    out = tmp_path / "results" / "cpu"
    out.mkdir(parents=True)
    runs = {
        "01_a": {"seconds": 600.0},  # recorded before reuse was counted: its own time
        "03_b": {"seconds": 900.0, "reused_jobs": 9, "cold_seconds": 8000.0},
        "04_c": {"seconds": 300.0, "reused_jobs": 0, "cold_seconds": 300.0},
    }
    (out / "manifest.json").write_text(json.dumps({"notebooks": runs}))
    monkeypatch.setattr(readme_costs, "scan", lambda folder: [])
    costs = readme_costs.run_costs("cpu")
    assert costs.notebook_seconds == {"01_a": 600.0, "03_b": 8000.0, "04_c": 300.0} and costs.warm == ()
    assert "a fresh clone takes longer" not in readme_costs.costs_markdown("cpu")
    times = readme_costs.run_times_markdown("cpu").splitlines()
    assert times[2].endswith("| 10.0 |") and times[4].endswith("| 5.0 |")  # 01 and 04: their own time
    assert times[3].startswith("| 03_b | 15.0 |") and times[3].endswith("| 133.3 (this run reused 9 trained models) |")
    runs["09_d"] = {"seconds": 100.0, "reused_jobs": 2}
    (out / "manifest.json").write_text(json.dumps({"notebooks": runs}))
    assert readme_costs.run_costs("cpu").warm == ("09_d",)
    assert readme_costs.run_times_markdown("cpu").endswith("| not recorded (this run reused 2 trained models) |")
    assert readme_costs.costs_markdown("cpu").endswith("(a fresh clone takes longer for 09: its last run reused trained models) |")
