"""The row prints the test that decided it (prismlib.claims: Claim.deciding, agrees, disagreeing,
with_seeds) and a claim without a finite interval gets no verdict."""

from __future__ import annotations

import pandas as pd
import pytest

from prismlib.claims import Claim, Gate, Test, agrees, claims_frame, disagreeing, with_seeds
from prismlib.stats import Interval


def iv(low: float, high: float, units: int = 20) -> Interval:
    return Interval((low + high) / 2, low, high, units)


def test_a_not_held_row_prints_its_counterexample_not_a_wider_interval_inside_noise() -> None:
    wide = Test(iv(-5.0, 0.5), label="wide")  # inside noise, margin -5: the smallest
    counter = Test(iv(-2.0, -1.0), label="counter")  # not held, margin -2
    c = Claim("03", "c", "p", (wide, counter))
    assert c.weakest is wide and c.verdict == "not held" and c.deciding is counter
    row = c.row()
    assert (row["ci_low"], row["ci_high"]) == (-2.0, -1.0)
    assert row["test"] == "counter > 0 (20 units); the counterexample of 2 tests" and row["tests"] == 2
    assert agrees(row["verdict"], row["ci_low"], row["ci_high"], row["side"], row["threshold"])


def test_an_inside_noise_row_prints_an_interval_that_holds_its_threshold() -> None:
    held = Test(iv(-9.0, -8.0), -1, label="far")  # held, margin 8
    noisy = Test(iv(-0.5, 3.0), 1, label="noisy")  # inside noise
    c = Claim("05", "c", "p", (held, noisy))
    assert c.verdict == "inside noise" and c.deciding is noisy and c.row()["test"].endswith("a test inside noise of 2 tests")


def test_a_held_row_prints_its_weakest_test_and_an_equivalence_row_its_side() -> None:
    c = Claim("05", "c", "p", (Test.equivalence(iv(-1.0, 1.0), 2.0, "a"), Test.equivalence(iv(-1.9, 0.5), 2.0, "b")))
    row = c.row()
    assert c.verdict == "held" and (row["ci_low"], row["side"], row["threshold"]) == (-1.9, "within", 2.0)


@pytest.mark.parametrize(
    ("verdict", "low", "high", "side", "threshold", "expected"),
    [
        ("held", 1.0, 2.0, ">", 0.5, True),
        ("held", 0.2, 2.0, ">", 0.5, False),
        ("inside noise", 0.2, 2.0, ">", 0.5, True),
        ("not held", -2.0, -1.0, ">", 0.0, True),
        ("not held", -2.0, -1.0, "<", 0.0, False),
        ("held", -2.0, -1.0, "<", 0.0, True),
        ("held", -0.9, 0.9, "within", 1.0, True),
        ("not held", 1.1, 3.0, "within", 1.0, True),
        ("not held", 0.5, 3.0, "within", 1.0, False),
        ("inside noise", 0.5, 3.0, "within", 1.0, True),
    ],
)
def test_agrees_reads_a_verdict_from_the_printed_numbers(
    verdict: str, low: float, high: float, side: str, threshold: float, expected: bool
) -> None:
    assert agrees(verdict, low, high, side, threshold) is expected


def test_disagreeing_finds_a_row_whose_interval_contradicts_its_verdict() -> None:
    rows = claims_frame(
        [Claim("02", "ok", "p", (Test(iv(1.0, 2.0)),)), Claim("02", "gated", "p", (Test(iv(-1.0, 2.0)),), (Gate("g", False),))]
    )
    assert disagreeing(rows).empty  # a not-testable row is not checked
    bad = pd.concat([rows, rows.iloc[[0]].assign(claim="bad", verdict="not held")], ignore_index=True)
    assert list(disagreeing(bad)["claim"]) == ["bad"]
    assert list(disagreeing(rows.assign(side=""))["claim"]) == ["ok"]  # no side: not checkable


def test_a_non_finite_interval_gets_no_verdict_unless_a_gate_says_why() -> None:
    nan = Test(Interval(float("nan"), float("nan"), float("nan"), 20), label="ppl gap")
    with pytest.raises(ValueError, match=r"claim 05 'gap'.*ppl gap.*not finite"):
        Claim("05", "gap", "p", (nan,)).verdict  # noqa: B018
    assert Claim("05", "gap", "p", (nan,), (Gate("model learned", False, "no model"),)).verdict == "not testable"


def test_with_seeds_keeps_the_test_and_widens_it_by_the_seed_spread() -> None:
    unit = Test.superiority(Interval(1.5, 1.1, 1.9, 19), 1.0, label="prism - baseline")
    assert unit.verdict == "held"
    seeded = with_seeds(unit, [0.2, 1.5, 2.8])  # seeds that disagree: held no longer
    assert (seeded.sign, seeded.threshold, seeded.label, seeded.kind) == (1, 1.0, "prism - baseline", "directional")
    assert seeded.interval.low < unit.interval.low and seeded.verdict == "inside noise"
    assert seeded.interval.resampled == "units+seeds" and Claim("03", "c", "p", (seeded,)).row()["test"].endswith("(19 units x 3 seeds)")
    with pytest.raises(ValueError, match=r"prism - baseline > 1: .*at least two training seeds"):
        with_seeds(unit, [1.5])
