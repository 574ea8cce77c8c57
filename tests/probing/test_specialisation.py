"""Bands x tasks on each task's scale (prismlib.probing.specialisation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.probing import (
    MAJORITY,
    OWN_TASKS,
    Features,
    ProbeComparison,
    ProbeRuns,
    relative_score,
    relative_sums,
    score_difference,
    score_grid,
    score_matrix,
    specialisation_table,
    specialisation_tests,
)
from prismlib.stats import independent_difference

UNITS = 20
ROWS = 5  # rows per unit


def comparison(rates: dict[str, float], *, seed: int = 0, task: str = "") -> ProbeComparison:
    """A task of UNITS x ROWS test rows (weight 1) where each condition is right on a share
    ``rates[c]`` of the rows, spread at random over the units."""
    rng = np.random.default_rng(seed)
    n = UNITS * ROWS
    correct = {}
    for c, rate in rates.items():
        row = np.zeros(n, dtype=bool)
        row[rng.choice(n, size=round(rate * n), replace=False)] = True
        correct[c] = row[None]
    idx = torch.arange(n)
    test = Features({}, torch.zeros(n, dtype=torch.long), torch.ones(n), idx // ROWS, idx, idx % ROWS)
    runs = ProbeRuns(pd.DataFrame(), correct, 0)
    return ProbeComparison(runs, test, (idx // ROWS).numpy(), seed=seed, n_boot=300, task=task)


def test_a_score_is_0_at_the_majority_class_and_1_at_orig():
    cmp = comparison({"ORIG": 0.8, MAJORITY: 0.2, "LOW": 0.5, "HIGH": 0.2, "MID": 0.9})
    assert relative_score(cmp, "LOW") == pytest.approx(0.5)
    assert relative_score(cmp, "HIGH") == pytest.approx(0.0)
    assert relative_score(cmp, "ORIG") == pytest.approx(1.0)
    assert relative_score(cmp, "MID") == pytest.approx(7 / 6)
    num, den = relative_sums(cmp, "LOW")
    assert num.shape == den.shape == (UNITS,) and num.sum() / den.sum() == pytest.approx(0.5)
    # no scale when ORIG does not beat the majority class
    assert np.isnan(relative_score(comparison({"ORIG": 0.2, MAJORITY: 0.3, "LOW": 0.5}), "LOW"))


def test_score_matrix_and_grid():
    cmps = {"pos": comparison({"ORIG": 0.8, MAJORITY: 0.2, "LOW": 0.5}), "topic": comparison({"ORIG": 0.6, MAJORITY: 0.1, "LOW": 0.6})}
    m = score_matrix(cmps, ["LOW", "ORIG"])
    assert list(m.columns) == ["task", "condition", "accuracy", "majority", "ORIG", "score"]
    row = m.set_index(["task", "condition"]).loc[("topic", "LOW")]
    assert row["accuracy"] == pytest.approx(60) and row["majority"] == pytest.approx(10) and row["score"] == pytest.approx(1.0)
    scores, labels = score_grid(m, ["ORIG", "LOW"], ["topic", "pos"])
    assert list(scores.index) == ["ORIG", "LOW"] and list(scores.columns) == ["topic", "pos"]
    assert scores.loc["LOW", "pos"] == pytest.approx(0.5) and labels.loc["LOW", "pos"] == "0.50\n50.0%"


def three_tasks(spread: float = 1.0) -> dict[str, ProbeComparison]:
    """Each band of OWN_TASKS at ORIG on its own task and at the majority class elsewhere
    (``spread`` < 1 shrinks the own-task score)."""
    base = {"ORIG": 0.8, MAJORITY: 0.2}
    out = {}
    for i, task in enumerate(("pos", "swda", "topic")):
        rates = {band: (0.2 + 0.6 * spread if own == task else 0.2) for band, own in OWN_TASKS.items()}
        out[task] = comparison(base | rates, seed=i + 1, task=task)
    return out


def test_specialisation_tests_pair_each_band_s_own_task_with_each_other_task():
    cmps = three_tasks()
    tests = specialisation_tests(cmps, 0.25)
    assert [t.label for t in tests] == [
        "HIGH: pos - swda",
        "HIGH: pos - topic",
        "MID: swda - pos",
        "MID: swda - topic",
        "LOW: topic - pos",
        "LOW: topic - swda",
    ]
    assert all(t.threshold == 0.25 and t.sign == 1 and t.kind == "directional" for t in tests)
    assert all(t.interval.effect == pytest.approx(1.0) and t.verdict == "held" for t in tests)
    # the interval is the independent bootstrap of the two tasks' scores, with the own task's seed
    iv = score_difference(cmps["pos"], cmps["swda"], "HIGH")
    assert tests[0].interval == iv
    ratio = lambda n, d, axis=-1: n.sum(axis) / d.sum(axis)  # noqa: E731
    ref = independent_difference(ratio, relative_sums(cmps["pos"], "HIGH"), ratio, relative_sums(cmps["swda"], "HIGH"), n_boot=300, seed=1)
    assert (iv.low, iv.high, iv.units) == pytest.approx((ref.low, ref.high, UNITS))
    # a band only a little better on its own task: not held against a margin it cannot clear
    weak = specialisation_tests(three_tasks(spread=0.1), 0.25)
    assert all(t.interval.effect == pytest.approx(0.1) for t in weak) and {t.verdict for t in weak} <= {"not held", "inside noise"}
    table = specialisation_table(tests)
    assert list(table.columns) == ["test", "effect", "ci_low", "ci_high", "verdict"] and table["test"][0] == "HIGH: pos - swda > 0.25"


def test_specialisation_needs_every_task_and_a_scale():
    cmps = three_tasks()
    with pytest.raises(ValueError, match="no probe results for tasks"):
        specialisation_tests({k: v for k, v in cmps.items() if k != "swda"}, 0.25)
    flat = dict(cmps, swda=comparison({"ORIG": 0.2, MAJORITY: 0.2, "HIGH": 0.2, "MID": 0.2, "LOW": 0.2}))
    iv = score_difference(flat["pos"], flat["swda"], "HIGH")
    assert np.isnan(iv.effect) and iv.units == UNITS
    table = specialisation_table(specialisation_tests(flat, 0.25))
    assert table["verdict"].tolist() == ["no scale", "held", "no scale", "no scale", "held", "no scale"]
    _, labels = score_grid(score_matrix(flat, ["MID"]), ["MID"], ["swda", "pos"])
    assert labels.loc["MID", "swda"] == "no scale\n20.0%"
    # a resample without a scale is an extreme draw, not an error
    shaky = dict(cmps, swda=comparison({"ORIG": 0.24, MAJORITY: 0.2, "HIGH": 0.2, "MID": 0.3, "LOW": 0.2}))
    assert np.isfinite(score_difference(shaky["swda"], shaky["pos"], "MID").low)
