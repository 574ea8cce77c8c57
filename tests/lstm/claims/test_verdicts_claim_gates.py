"""The model and stability gates a work-B claim carries (prismlib.lstm.claims.verdicts.claim_gates): on
synthetic runs with known answers, and on trained runs beside their learning-curve table."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from lstm_fixtures import uniform_corpus

from lstm.test_convergence import TOKENS, _power
from lstm.test_training_curves import TINY
from prismlib import lstm, paths
from prismlib.claims import effect_stability_gate
from prismlib.lstm import convergence as cv
from prismlib.lstm.claims import summaries, verdicts
from prismlib.stats import Interval

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_claim_gates_and_the_learning_curve_table(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ENV, str(tmp_path))
    corpus = uniform_corpus()
    specs = [lstm.RunSpec(seed=1), lstm.RunSpec("layer2", 5.0, fixed=True, seed=1)]
    runs = lstm.trained(specs, TINY.updated(epochs=4), "test", executor="inline", cache=tmp_path, corpus=corpus)
    end = lstm.seed_means(runs, lambda s: s.label, "baseline")
    half = lstm.seed_means(runs, lambda s: s.label, "baseline", at="half")
    key = specs[1].label
    later = end.delta(key)
    earlier = half.perplexity(key) - half.perplexity("baseline")
    model, stable = verdicts.claim_gates(
        {"baseline": [runs[specs[0]]], key: [runs[specs[1]]]},
        "d",
        later,
        earlier,
        margin=1e-6,
        pair=("baseline", key),
        share=0.25,
        tolerance=1e-9,
    )
    assert not model.passed and ("extrapolation" in model.detail or "no budget" in model.detail)
    assert stable.passed == (abs(later.effect - earlier) <= 5e-7 or later.contains(earlier))
    table = summaries.save_learning_curves(runs, "test")
    assert list(table.columns) == list(summaries.CURVE_COLUMNS) and set(table.model) == {s.label for s in specs}
    assert len(table) == sum(len(r.history.curve_tokens) for r in runs.values())
    again = summaries.save_learning_curves({specs[0]: runs[specs[0]]}, "test")  # replaces its own rows only
    assert again.equals(table)


def _run(label: str, seed: int, curve):
    return SimpleNamespace(spec=SimpleNamespace(label=label, seed=seed), curve=curve)


def test_claim_gates_on_synthetic_runs():
    short = np.geomspace(1e4, 5e5, 30)
    base = [_run("base", 0, _power(100.0, 1e4, 0.5, TOKENS))]
    x = [_run("x", 0, _power(90.0, 1e4, 0.5, short))]
    later = Interval(-10.0, -11.0, -9.0, 40)
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "ppl(x) - ppl(base)", later, -9.5, 20.0)
    fits = [cv.fit_power_law(r.curve) for r in (*base, *x)]
    note = cv.extrapolation(fits, 1e6)
    assert not model.passed and model.detail.endswith(f"; {note}") and "times the 1 million trained" in note
    assert stable.passed and stable.detail == effect_stability_gate("ppl(x) - ppl(base)", later, -9.5, 20.0).detail
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "d", later, -2.0, 1.0, pair=("base", "x"))
    both = cv.extrapolation(fits, 1e6, stable=cv.stable_budget(fits[0], fits[1], 1.0))
    assert "the model and effect-stability gates" in both and model.detail.endswith(f"; {both}")
    assert not stable.passed and stable.detail.endswith(f"; {both}")
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "d", later, None, 1.0)
    assert not stable.passed and stable.name == "stable: d moved <= half its margin since half the budget"
    assert stable.detail.startswith("not converged: no test NLL stored at half the budget")
    few = [_run("x", 0, cv.LearningCurve(TOKENS[:3], np.array([300.0, 200.0, 150.0])))]  # too few points to fit
    model, _ = verdicts.claim_gates({"base": base, "x": few}, "d", later, -10.0, 1.0, pair=("base", "x"))
    assert model.detail.endswith("; no budget extrapolated (a model has too few curve points for a fit)")
    none = [_run("x", 0, None)]
    model, stable = verdicts.claim_gates({"x": none}, "d", later, -10.0, 1.0)
    assert not model.passed and model.detail.endswith("no budget extrapolated (a model has too few curve points for a fit)")
    assert stable.passed
