"""Training seeds of section 4 (prismlib.prism.seeds): seeded condition names, the one interval
of a contrast over test units and training seeds, the seeds gate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.claims import MIN_SEEDS, Claim, Gate, Test, with_seeds
from prismlib.prism import (
    SeedComparison,
    accuracy_columns,
    every_seed,
    seed_effects,
    seed_means,
    seeded,
    seeds_gate,
    seeds_interval,
    seeds_test,
    split_seed,
    spread_row,
)
from prismlib.probing import MAJORITY, Features, ProbeRuns
from prismlib.stats import Interval, combined_interval

UNITS = 20  # test units of 5 rows each


def test_a_seeded_condition_splits_back_into_its_name_and_seed():
    assert seeded("prism LOW sector@previous", 2) == "prism LOW sector@previous#2"
    assert split_seed("prism LOW sector@previous#2") == ("prism LOW sector@previous", 2)
    assert split_seed("original") == ("original", None) and split_seed(MAJORITY) == (MAJORITY, None)
    with pytest.raises(ValueError, match="already names a seed"):
        seeded("prism#1", 2)


def test_one_interval_adds_the_seeds_spread_to_the_unit_bootstrap():
    unit = Interval(2.0, 1.0, 3.0, 20)
    values = [1.0, 2.0, 4.0]
    iv = seeds_interval(unit, values)
    assert iv == combined_interval(unit, values) and iv.resampled == "units+seeds" and iv.seeds == 3
    assert iv.effect == 2.0 and iv.low < unit.low and iv.high > unit.high  # centred on the seed means' effect, wider
    assert seeds_interval(unit, [1.0]) is None and seeds_interval(unit, []) is None  # one seed: no such interval


def test_the_seeds_test_keeps_the_tests_direction_threshold_kind_and_label():
    unit = Test.superiority(Interval(2.0, 1.0, 3.0, 20), 1.0, -1, "every - last")
    t = seeds_test(unit, [1.5, 2.0, 2.5])
    assert t == with_seeds(unit, [1.5, 2.0, 2.5])
    assert (t.sign, t.threshold, t.kind, t.label) == (-1, -1.0, "directional", "every - last")
    assert t.interval.resampled == "units+seeds" and t.noise() == "20 units x 3 seeds"
    eq = seeds_test(Test.equivalence(Interval(0.0, -0.05, 0.05, 20), 0.1, "dip"), [0.0, 0.01, -0.01])
    assert (eq.kind, eq.threshold) == ("equivalence", 0.1)
    assert seeds_test(unit, [2.0]) is unit  # one seed: the unit test as it is (the seeds gate fails the claim)


def test_seeds_that_disagree_widely_turn_a_held_unit_test_inside_noise():
    # prism - baseline = 3 [2, 4] over units holds "beats by 1"; seeds at -3, 3 and 9 do not
    unit = Test.superiority(Interval(3.0, 2.0, 4.0, 20), 1.0, label="prism - baseline")
    assert Claim("03", "c", "p", (unit,)).verdict == "held"
    wide = seeds_test(unit, [-3.0, 3.0, 9.0])
    assert wide.interval.low < 1.0 < wide.interval.high and Claim("03", "c", "p", (wide,)).verdict == "inside noise"
    close = seeds_test(unit, [2.9, 3.0, 3.1])
    assert Claim("03", "c", "p", (close,)).verdict == "held"


def test_the_seeds_gate_needs_min_seeds_of_every_trained_model():
    assert MIN_SEEDS == 3
    assert seeds_gate({"prism": 3, "baseline": 3}).passed
    few = seeds_gate({"prism": 3, "baseline": MIN_SEEDS - 1})
    assert not few.passed and "prism: 3, baseline: 2" in few.detail and few.name.startswith("seeds: >= 3")
    assert seeds_gate({}).passed and seeds_gate({}).detail == "no trained model"


def test_a_gate_over_seeds_fails_when_one_seed_fails_and_names_it():
    ok = every_seed({0: Gate("converged", True, "rule"), 1: Gate("converged", True, "rule")})
    assert ok.passed and ok.name == "converged" and ok.detail == "seed 0: rule; seed 1: rule"
    bad = every_seed({0: Gate("converged", True, "rule"), 2: Gate("converged", False, "cap")})
    assert not bad.passed and bad.detail == "1 of 2 seeds failed: seed 2: cap"
    with pytest.raises(ValueError):
        every_seed({})


def test_seed_means_average_each_trained_condition_and_keep_the_untrained_ones():
    out = seed_means({"prism#0": np.array([1.0, 3.0]), "prism#1": np.array([3.0, 5.0]), "original": np.array([7.0, 7.0])})
    assert set(out) == {"prism", "original"}
    assert out["prism"].tolist() == [2.0, 4.0] and out["original"].tolist() == [7.0, 7.0]


def test_seed_effects_and_the_spread_row():
    per_seed = {s: {("prism", "dip"): Interval(v, v - 1, v + 1, 20)} for s, v in ((0, 1.0), (1, 2.0), (2, 4.0))}
    per_seed[2][("baseline", "dip")] = Interval(0.0, -1.0, 1.0, 20)  # a key the first seed lacks is not read
    assert seed_effects(per_seed) == {("prism", "dip"): [1.0, 2.0, 4.0]}
    row = spread_row({0: 1.0, 1: 2.0, 2: 4.0})
    assert list(row) == ["seed 0", "seed 1", "seed 2", "mean", "sd"]
    assert row["mean"] == pytest.approx(7 / 3) and row["sd"] == pytest.approx(np.std([1, 2, 4], ddof=1))
    assert np.isnan(spread_row({0: 1.0})["sd"])


def _comparison() -> tuple[SeedComparison, dict[str, float]]:
    """Probes of 100 test rows (20 units of 5): the untrained ``original`` (2 probe runs) and,
    for seeds 0-2, ``baseline`` and ``prism`` (2 runs each) right on a known share of the rows;
    ``prism@previous`` was probed for seeds 0 and 1 only."""
    n = UNITS * 5
    order = np.random.default_rng(0).permutation(n)

    def right(rate: float, runs: int = 2) -> np.ndarray:
        return np.repeat((order < round(rate * n))[None], runs, axis=0)

    rates = {"original": 0.40, MAJORITY: 0.10}
    rates |= {seeded("baseline", s): r for s, r in ((0, 0.50), (1, 0.55), (2, 0.45))}
    rates |= {seeded("prism", s): r for s, r in ((0, 0.60), (1, 0.70), (2, 0.62))}
    rates |= {seeded("prism@previous", s): r for s, r in ((0, 0.58), (1, 0.66))}
    correct = {c: right(r, 1 if c == MAJORITY else 2) for c, r in rates.items()}
    table = pd.DataFrame([{"condition": c, "run": r, "accuracy": rates[c]} for c in correct if c != MAJORITY for r in range(2)])
    idx = torch.arange(n)
    test = Features({}, torch.zeros(n, dtype=torch.long), torch.ones(n), idx // 5, idx, idx % 5)
    return SeedComparison.from_runs(ProbeRuns(table, correct, 0), test, (idx // 5).numpy(), n_boot=300), rates


def test_a_seed_comparison_pools_the_seeds_predictions_and_pairs_their_differences():
    c, rates = _comparison()
    assert c.seeds == (0, 1, 2) and c.units == UNITS
    assert c.counts == {"original": 0, MAJORITY: 0, "baseline": 3, "prism": 3, "prism@previous": 2}
    # the unit test reads the seed-mean predictions: the mean of the seeds' accuracies
    assert c.accuracy("prism").effect == pytest.approx(100 * np.mean([0.60, 0.70, 0.62]))
    assert c.diff("prism", "baseline").effect == pytest.approx(100 * (np.mean([0.60, 0.70, 0.62]) - 0.50))
    # a condition some seed lacks is not pooled (the stability gate then names it missing)
    assert "prism@previous" not in c.runs.correct and "prism@previous" in c.per_seed[1].runs.correct
    # each seed's contrast between its own models; an untrained arm's one model in every seed
    assert c.seed_values("prism", "baseline") == pytest.approx({0: 10.0, 1: 15.0, 2: 17.0})
    assert c.seed_values("prism", "original") == pytest.approx({0: 20.0, 1: 30.0, 2: 22.0})
    assert len(c.seed_values("prism@previous", "baseline")) == 2  # the seeds that have both
    assert c.seed_accuracy("original") == pytest.approx({0: 40.0, 1: 40.0, 2: 40.0})
    assert c.gate("prism").passed and c.gate("prism").name == "prism probe beats the majority class"
    # the runs' table names conditions without their seed and keeps the seed beside them
    t = c.per_seed[2].runs.table
    assert set(t["condition"]) == {"original", "baseline", "prism"} and set(t["seed"].dropna()) == {2}
    assert set(c.runs.table["condition"]) == {"original", "baseline", "prism"}


def test_a_mean_condition_is_a_linear_contrast_on_the_seed_means_and_on_each_seed():
    c, _ = _comparison()
    half = c.with_mean("prism half-gain", ("prism", MAJORITY))
    mid = (np.mean([0.60, 0.70, 0.62]) + 0.10) / 2
    assert half.accuracy("prism half-gain").effect == pytest.approx(100 * mid)
    # baseline - (prism + majority) / 2: the paired bootstrap of the seed-mean predictions
    d = half.diff("baseline", "prism half-gain")
    assert d.effect == pytest.approx(100 * (0.50 - mid)) and d.low < d.effect < d.high and d.units == UNITS
    # each seed's own models: seed 1 is (0.55 - (0.70 + 0.10) / 2)
    assert half.seed_values("baseline", "prism half-gain") == pytest.approx({0: 15.0, 1: 15.0, 2: 9.0})
    assert half.counts["prism half-gain"] == 3 and "prism half-gain" not in c.runs.correct  # the original is unchanged
    # a part that some seed lacks: only the seeds that have it get the condition; not pooled
    prev = c.with_mean("prism half-gain@previous", ("prism@previous", MAJORITY))
    assert "prism half-gain@previous" in prev.per_seed[0].runs.correct and "prism half-gain@previous" not in prev.per_seed[2].runs.correct
    assert "prism half-gain@previous" not in prev.runs.correct
    with pytest.raises(ValueError, match="already a condition"):
        half.with_mean("prism", ("baseline",))


def test_accuracy_columns_give_a_table1_row_over_units_and_over_units_and_seeds():
    c, _ = _comparison()
    row = accuracy_columns(c, "prism", sd_runs=1.5)
    assert list(row) == ["mean", "ci_low", "ci_high", "seeds", "seeds_ci_low", "seeds_ci_high", "sd_seeds", "sd_runs"]
    # the seed-mean predictions: seeds at 60, 70 and 62 % -> 64 %, SD sqrt((16 + 36 + 4) / 2)
    assert row["mean"] == pytest.approx(64.0) and row["seeds"] == 3 and row["sd_runs"] == 1.5
    assert row["sd_seeds"] == pytest.approx(np.sqrt(28.0))
    unit = c.accuracy("prism")
    assert (row["ci_low"], row["ci_high"]) == (unit.low, unit.high) and unit.low < 64.0 < unit.high
    both = combined_interval(unit, [60.0, 70.0, 62.0])
    assert (row["seeds_ci_low"], row["seeds_ci_high"]) == pytest.approx((both.low, both.high))
    assert row["seeds_ci_low"] < row["ci_low"] and row["seeds_ci_high"] > row["ci_high"]  # the seeds widen it
    # an untrained model: one model, no seeds, so no interval over seeds and no seed spread
    orig = accuracy_columns(c, "original")
    assert orig["mean"] == pytest.approx(40.0) and orig["seeds"] == 0
    assert all(np.isnan(orig[k]) for k in ("seeds_ci_low", "seeds_ci_high", "sd_seeds", "sd_runs"))
