"""The one interval of a contrast between trained models (prismlib.stats.combined_interval):
its coverage, simulated with known seed and unit variances, and its bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.stats import Interval, combined_interval, paired_bootstrap

TRUE = 1.0
"""The contrast the simulated seeds and units are drawn around."""


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x.mean(axis)


def coverage(seeds: int, units: int, sd_seed: float, sd_unit: float, reps: int, combined: bool = True) -> float:
    """Share of ``reps`` simulated experiments whose 95% interval holds the true contrast: ``seeds``
    per-seed contrasts (seed effect ~ N(0, sd_seed)) measured on one test set of ``units`` units
    (unit effect ~ N(0, sd_unit)), the unit bootstrap taken on the seed-mean contrast as the
    notebooks take it."""
    rng = np.random.default_rng(seeds * 1000 + units)
    hits = 0
    for rep in range(reps):
        y = TRUE + rng.normal(0, sd_seed, (seeds, 1)) + rng.normal(0, sd_unit, (1, units))
        unit = paired_bootstrap(_mean, [y.mean(0)], n_boot=1000, seed=rep)
        iv = combined_interval(unit, y.mean(1)) if combined else unit
        hits += iv.low <= TRUE <= iv.high
    return hits / reps


@pytest.mark.parametrize(("seeds", "sd_seed", "sd_unit"), [(3, 0.1, 2.0), (3, 0.3, 1.0), (6, 0.1, 2.0), (6, 0.3, 1.0)])
def test_the_combined_interval_covers_the_true_contrast_95_percent_of_the_time(seeds: int, sd_seed: float, sd_unit: float) -> None:
    # 300 units; the seed spread about equal to (0.1) or 5x (0.3) the unit spread of the mean (2 / sqrt(300) = 0.12)
    assert 0.93 <= coverage(seeds, 300, sd_seed, sd_unit, reps=1500) <= 0.97


def test_either_partial_interval_alone_covers_far_less() -> None:
    # the guard's counterpart: the unit bootstrap alone (the training runs held fixed) under-covers
    assert coverage(3, 300, 0.3, 1.0, reps=300, combined=False) < 0.6


def test_it_is_centred_on_the_unit_effect_and_wider_than_both_parts() -> None:
    unit = Interval(1.0, 0.8, 1.2, 300)
    iv = combined_interval(unit, [0.5, 1.0, 1.5])
    assert iv.effect == 1.0 and iv.resampled == "units+seeds" and (iv.units, iv.seeds) == (300, 3)
    assert iv.high - 1.0 == pytest.approx(1.0 - iv.low)
    # the seeds' own t interval: t(2) * 0.5 / sqrt(3) = 1.242 (Satterthwaite's df = 2.5 would give 1.09)
    assert iv.high - 1.0 == pytest.approx(4.303 * 0.5 / 3**0.5, abs=1e-3)
    many = combined_interval(Interval(1.0, 0.0, 2.0, 300), [0.9, 1.0, 1.1])  # units dominate: t(df) near z
    assert 1.0 < many.high - 1.0 < 1.05
    two_arms = combined_interval(unit, [10.0, 11.0, 12.0], [9.0, 9.5, 10.0])
    assert two_arms.seeds == 3 and two_arms.high - two_arms.effect > combined_interval(unit, [1.0, 1.5, 2.0]).high - 1.0


@given(st.floats(0.01, 10), st.integers(20, 2000))
@settings(max_examples=50, deadline=None)
def test_seeds_that_agree_leave_the_unit_interval_but_for_t(half: float, units: int) -> None:
    iv = combined_interval(Interval(0.0, -half, half, units), [0.3, 0.3, 0.3])
    assert half <= iv.high <= half * 1.02 * (1 + 3 / units)


def test_bad_input_is_refused_in_one_line() -> None:
    unit = Interval(1.0, 0.8, 1.2, 300)
    with pytest.raises(ValueError, match="at least two training seeds"):
        combined_interval(unit, [1.0])
    with pytest.raises(ValueError, match="at least two training seeds"):
        combined_interval(unit, [1.0, 2.0], [3.0])
    with pytest.raises(ValueError, match="finite"):
        combined_interval(unit, [1.0, float("nan")])
    with pytest.raises(ValueError, match="finite"):
        combined_interval(Interval(1.0, float("nan"), 1.2, 300), [1.0, 2.0])
    with pytest.raises(ValueError, match="bootstrap over test units"):
        combined_interval(Interval(1.0, 0.8, 1.2, 3, resampled="runs"), [1.0, 2.0])
