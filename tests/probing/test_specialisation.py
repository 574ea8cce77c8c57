"""Bands x tasks on each task's scale, and band profiles (prismlib.probing.specialisation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.probing import (
    CONDITIONS,
    MAJORITY,
    MIDPOINT,
    OWN_TASKS,
    Features,
    ProbeComparison,
    ProbeRuns,
    nearer_profile,
    profile_distances,
    relative_score,
    relative_sums,
    score_grid,
    score_interval,
    score_matrix,
    specialisation_table,
    specialisation_tests,
)
from prismlib.stats import bootstrap_distribution, paired_bootstrap

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


def three_tasks(own: float = 0.8, other: float = 0.2) -> dict[str, ProbeComparison]:
    """ORIG 0.8 and majority 0.2 on every task; each band of OWN_TASKS right on a share ``own``
    of its own task's rows and ``other`` of the other tasks' (the defaults: score 1 at home,
    0 elsewhere)."""
    base = {"ORIG": 0.8, MAJORITY: 0.2}
    out = {}
    for i, task in enumerate(("pos", "swda", "topic")):
        rates = {band: (own if home == task else other) for band, home in OWN_TASKS.items()}
        out[task] = comparison(base | rates, seed=i + 1, task=task)
    return out


def test_specialisation_tests_ask_each_band_above_the_midpoint_at_home_and_below_it_elsewhere():
    cmps = three_tasks()
    tests = specialisation_tests(cmps)
    assert MIDPOINT == 0.5
    assert [t.describe() for t in tests] == [
        "HIGH on pos > 0.5",
        "HIGH on swda < 0.5",
        "HIGH on topic < 0.5",
        "MID on swda > 0.5",
        "MID on pos < 0.5",
        "MID on topic < 0.5",
        "LOW on topic > 0.5",
        "LOW on pos < 0.5",
        "LOW on swda < 0.5",
    ]
    assert all(t.kind == "directional" and t.threshold == 0.5 for t in tests)
    assert [t.interval.effect for t in tests] == pytest.approx([1, 0, 0] * 3)
    assert {t.verdict for t in tests} == {"held"}
    # each score's interval is the paired bootstrap over its own task's units, with that task's seed
    ratio = lambda n, d, axis=-1: n.sum(axis) / d.sum(axis)  # noqa: E731
    ref = paired_bootstrap(ratio, relative_sums(cmps["swda"], "HIGH"), n_boot=300, seed=2)
    assert tests[1].interval == score_interval(cmps["swda"], "HIGH")
    assert (tests[1].interval.low, tests[1].interval.high, tests[1].interval.units) == pytest.approx((ref.low, ref.high, UNITS))
    table = specialisation_table(tests)
    assert list(table.columns) == ["test", "effect", "ci_low", "ci_high", "verdict"] and table["test"][1] == "HIGH on swda < 0.5"


def test_a_band_short_of_the_midpoint_at_home_or_above_it_elsewhere_fails():
    weak = specialisation_tests(three_tasks(own=0.3))  # score 1/6 at home
    assert [t.verdict for t in weak[::3]] == ["not held"] * 3 and [t.verdict for t in weak if t.sign < 0] == ["held"] * 6
    everywhere = specialisation_tests(three_tasks(other=0.7))  # score 5/6 on the other tasks too
    assert [t.verdict for t in everywhere[::3]] == ["held"] * 3 and {t.verdict for t in everywhere if t.sign < 0} == {"not held"}
    assert [t.verdict for t in specialisation_tests(three_tasks(own=0.5), midpoint=0.9)[::3]] == ["not held"] * 3  # the midpoint is read


def test_specialisation_needs_every_task_and_a_scale():
    cmps = three_tasks()
    with pytest.raises(ValueError, match="no probe results for tasks"):
        specialisation_tests({k: v for k, v in cmps.items() if k != "swda"})
    flat = dict(cmps, swda=comparison({"ORIG": 0.2, MAJORITY: 0.2, "HIGH": 0.2, "MID": 0.2, "LOW": 0.2}))
    iv = score_interval(flat["swda"], "HIGH")
    assert np.isnan(iv.effect) and iv.units == UNITS
    table = specialisation_table(specialisation_tests(flat))
    assert table["verdict"].tolist() == ["held", "no scale", "held", "no scale", "held", "held", "held", "held", "no scale"]
    _, labels = score_grid(score_matrix(flat, ["MID"]), ["MID"], ["swda", "pos"])
    assert labels.loc["MID", "swda"] == "no scale\n20.0%"
    # a resample without a scale is an extreme draw, not an error
    shaky = comparison({"ORIG": 0.24, MAJORITY: 0.2, "MID": 0.3})
    assert np.isfinite(score_interval(shaky, "MID").low)


BANDS = CONDITIONS[1:]
PROFILES = {  # five bands' rates; ORIG 0.8, majority 0.2 everywhere: score = (rate - 0.2) / 0.6
    "pos": (0.2, 0.25, 0.3, 0.45, 0.7),
    "swda": (0.4, 0.5, 0.7, 0.5, 0.3),
    "topic": (0.9, 0.3, 0.25, 0.2, 0.2),
}


def profile_tasks(**mlm: tuple[float, ...]) -> tuple[ProbeComparison, dict[str, ProbeComparison]]:
    """An MLM task with the band rates of ``mlm["rates"]`` and the three tasks of PROFILES."""
    base = {"ORIG": 0.8, MAJORITY: 0.2}
    tasks = {t: comparison(base | dict(zip(BANDS, r)), seed=i, task=t) for i, (t, r) in enumerate(PROFILES.items(), start=1)}
    return comparison(base | dict(zip(BANDS, mlm["rates"])), seed=7, task="mlm 1-500"), tasks


def test_mlm_with_the_profile_of_part_of_speech_is_clearly_nearest_it():
    mlm, tasks = profile_tasks(rates=PROFILES["pos"])
    d = profile_distances(mlm, tasks, BANDS)
    assert d["pos"] == pytest.approx(0.0) and d["topic"] > d["swda"] > 0.5
    iv = nearer_profile(mlm, tasks, "pos", BANDS)
    assert iv.effect == pytest.approx(d["swda"]) and iv.low > 0.2 and iv.units == UNITS


def test_mlm_with_the_profile_of_topic_is_not_nearest_part_of_speech():
    mlm, tasks = profile_tasks(rates=PROFILES["topic"])
    d = profile_distances(mlm, tasks, BANDS)
    iv = nearer_profile(mlm, tasks, "pos", BANDS)
    assert iv.effect == pytest.approx(-d["pos"]) and iv.high < -0.2
    # which task is "near" is the caller's: the same profile is clearly nearest topic
    assert nearer_profile(mlm, tasks, "topic", BANDS).low > 0.2


def test_a_profile_pairs_its_bands_and_resamples_each_task_on_its_own():
    mlm, tasks = profile_tasks(rates=PROFILES["swda"])
    iv = nearer_profile(mlm, tasks, "pos", BANDS)

    # reference: each band's own bootstrap with its task's seed (the target's 7, the tasks' 8, 9, 10) draws the same
    # resamples for every band of a task; the statistic over the joint draws
    def draws(cmp: ProbeComparison, seed: int) -> np.ndarray:
        ratio = lambda n, d, axis=-1: n.sum(axis) / d.sum(axis)  # noqa: E731
        return np.stack([bootstrap_distribution(ratio, relative_sums(cmp, b), n_boot=300, seed=seed) for b in BANDS])

    mine = draws(mlm, 7)
    d = {name: np.linalg.norm(mine - draws(cmp, 7 + i), axis=0) for i, (name, cmp) in enumerate(tasks.items(), start=1)}
    low, high = np.quantile(np.minimum(d["swda"], d["topic"]) - d["pos"], [0.025, 0.975])
    assert (iv.low, iv.high) == pytest.approx((low, high))
    # the same data as target and as "pos", drawn on their own: their distance is not 0 in every draw
    same = nearer_profile(tasks["pos"], tasks, "pos", BANDS)
    assert same.low < same.effect == pytest.approx(profile_distances(tasks["pos"], tasks, BANDS)["swda"])


def test_a_profile_needs_a_scale_and_a_rival():
    mlm, tasks = profile_tasks(rates=PROFILES["pos"])
    flat = dict(tasks, swda=comparison({"ORIG": 0.2, MAJORITY: 0.2} | dict.fromkeys(BANDS, 0.2)))
    iv = nearer_profile(mlm, flat, "pos", BANDS)
    assert np.isnan(iv.effect) and np.isnan(iv.low) and iv.units == UNITS
    with pytest.raises(ValueError, match="at least one other task"):
        nearer_profile(mlm, {"pos": tasks["pos"]}, "pos", BANDS)
    with pytest.raises(ValueError, match="'pos'"):
        nearer_profile(mlm, {"swda": tasks["swda"], "topic": tasks["topic"]}, "pos", BANDS)
