"""Tables of trained runs (prismlib.lstm.claims.summaries): the learning-curve table, on synthetic runs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from prismlib import paths
from prismlib.lstm import convergence as cv
from prismlib.lstm.claims import summaries


def _run(label: str, seed: int, curve):
    return SimpleNamespace(spec=SimpleNamespace(label=label, seed=seed), curve=curve)


def test_curves_frame_and_save_learning_curves_on_synthetic_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ENV, str(tmp_path))
    c1 = cv.LearningCurve(np.array([10.0, 20.0]), np.array([5.0, 4.0]))
    runs = {1: _run("b", 0, c1), 2: _run("a", 1, cv.LearningCurve(np.array([10.0]), np.array([6.0]))), 3: _run("c", 0, None)}
    frame = summaries.curves_frame(runs)
    assert frame.to_dict("records") == [
        {"model": "b", "seed": 0, "tokens": 10, "valid_ppl": 5.0},
        {"model": "b", "seed": 0, "tokens": 20, "valid_ppl": 4.0},
        {"model": "a", "seed": 1, "tokens": 10, "valid_ppl": 6.0},
    ]
    assert list(summaries.curves_frame({}).columns) == list(summaries.CURVE_COLUMNS)
    table = summaries.save_learning_curves(runs, "test")
    assert list(table["model"]) == ["a", "b", "b"] and list(table.index) == [0, 1, 2]
    again = summaries.save_learning_curves({1: _run("b", 0, cv.LearningCurve(np.array([30.0]), np.array([3.0])))}, "test")
    csv = paths.figure_dir("test") / f"{summaries.CURVES_TABLE}.csv"
    import pandas as pd

    stored = pd.read_csv(csv)
    assert list(stored.columns) == list(summaries.CURVE_COLUMNS)
    assert (
        stored.to_dict("records")
        == again.to_dict("records")
        == [{"model": "a", "seed": 1, "tokens": 10, "valid_ppl": 6.0}, {"model": "b", "seed": 0, "tokens": 30, "valid_ppl": 3.0}]
    )
