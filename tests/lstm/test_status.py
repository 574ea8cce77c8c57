"""How far a training job is (prismlib.lstm.status): ``status.json`` written after an epoch and read
back by the job; none before the first epoch or while the file is half written. A real run's
status: tests/lstm/test_training_curves.py and tests/runs/test_train.py."""

from __future__ import annotations

import json

from lstm_fixtures import tiny_lstm

from prismlib import lstm
from prismlib.jobcache import job_dir

TINY = tiny_lstm(epochs=10, converge_share=0.5, converge_tolerance=0.1)


def _history(points: int) -> lstm.TrainHistory:
    tokens = [100 * (i + 1) for i in range(points)]
    return lstm.TrainHistory(
        epochs=2,
        val_ppl=[300.0, 200.0],
        tokens=tokens[-1],
        seconds=12.34,
        curve_tokens=tokens,
        curve_ppl=[400.0 / (i + 1) ** 0.5 for i in range(points)],
    )


def test_the_status_of_an_epoch_is_read_back_by_its_job(tmp_path):
    job = lstm.Job(lstm.RunSpec(seed=3), TINY, "test")
    folder = job_dir(job, tmp_path)
    assert lstm.read_status(job, tmp_path) is None  # before the first epoch
    folder.mkdir(parents=True)
    hist = _history(8)
    lstm.write_status(folder, hist, TINY)
    status = lstm.read_status(job, tmp_path)
    assert status == json.loads((folder / lstm.STATUS).read_text()) and not list(folder.glob("*.tmp"))
    assert (status["epochs"], status["tokens"], status["seconds"]) == (2, 800, 12.3)
    assert status["valid_ppl"] == hist.curve_ppl[-1] and status["cap_tokens"] == 800 / 2 * TINY.epochs
    curve = hist.learning_curve()
    projected = lstm.fit_power_law(curve).budget(TINY.converge_share, TINY.converge_tolerance, start=curve.budget)
    assert status["projected_tokens"] == projected > 800  # the power law's budget for the model gate: far beyond
    assert "decays" not in status  # not an annealed run


def test_no_curve_gives_no_projection_and_a_broken_file_no_status(tmp_path):
    job = lstm.Job(lstm.RunSpec(seed=4), TINY, "test")
    folder = job_dir(job, tmp_path)
    folder.mkdir(parents=True)
    lstm.write_status(folder, lstm.TrainHistory(epochs=1, val_ppl=[500.0], tokens=50), TINY)
    status = lstm.read_status(job, tmp_path)
    assert status["valid_ppl"] is None and status["projected_tokens"] is None
    (folder / lstm.STATUS).write_text('{"epochs": 1, "tok')
    assert lstm.read_status(job, tmp_path) is None
