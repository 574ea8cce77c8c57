"""The rules every claim follows (prismlib.claims), on synthetic cases with known answers:
superiority needs the smallest effect that matters, absence is an equivalence test, a
condition that cannot win cannot be credited, and too few independent units are gated."""

from __future__ import annotations

import dataclasses

import pytest

from prismlib.claims import MIN_SEEDS, MIN_UNITS, Claim, Gate, Test, claims_frame, render
from prismlib.stats import Interval, welch_difference


def iv(effect: float, low: float, high: float, units: int = 40) -> Interval:
    return Interval(effect, low, high, units)


def claim(*tests: Test, gates=(), win_gates=(), **kw) -> Claim:
    return Claim("99", "a claim", "the paper", tests, gates, "points", win_gates, **kw)


@pytest.mark.parametrize(
    ("interval", "margin", "sign", "verdict"),
    [
        (iv(0.1, 0.04, 0.26), 1.0, 1, "not held"),  # clearly positive, far below what matters
        (iv(2.0, 1.2, 2.8), 1.0, 1, "held"),
        (iv(1.1, 0.6, 1.6), 1.0, 1, "inside noise"),
        (iv(1.5, 1.0, 2.0), 1.0, 1, "inside noise"),  # an edge exactly on the margin is not beyond it
        (iv(-2.0, -2.8, -1.2), 1.0, -1, "held"),  # "A is below B by at least 1"
        (iv(-0.3, -0.5, -0.1), 1.0, -1, "not held"),
        (iv(-2.0, -2.8, -1.2), 1.0, 1, "not held"),
    ],
)
def test_superiority_needs_the_smallest_effect_that_matters(interval, margin, sign, verdict):
    t = Test.superiority(interval, margin, sign, "A - B")
    assert t.verdict == verdict
    assert t.threshold == sign * margin
    assert t.describe() == f"A - B {'>' if sign > 0 else '<'} {sign * margin:g}"
    assert claim(t).verdict == verdict


def test_a_negative_smallest_effect_is_refused():
    with pytest.raises(ValueError, match="size >= 0"):
        Test.superiority(iv(1, 0, 2), -1.0)
    zero = Test.superiority(iv(1, 0.5, 2), 0.0)  # "A beats B" at all: a margin of 0 is allowed
    assert (zero.sign, zero.threshold, zero.verdict) == (1, 0.0, "held")
    half = Test.superiority(iv(1, 0.6, 2), 0.5)  # the sign defaults to +1
    assert (half.sign, half.threshold, half.verdict) == (1, 0.5, "held")
    assert Test.superiority(iv(-3, -4, -2.5), 2.0, -1).threshold == -2.0


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        (iv(-0.16, -0.28, -0.06), "held"),  # a small anti-dip inside a margin of 0.5 nats: absent
        (iv(-0.16, -0.28, -0.06, 40), "held"),
        (iv(-0.9, -1.2, -0.6), "not held"),  # a clear anti-dip is not "no dip"
        (iv(0.9, 0.6, 1.2), "not held"),
        (iv(0.1, -0.3, 0.7), "inside noise"),  # too wide to say
        (iv(0.0, -0.5, 0.5), "held"),  # edges exactly on the margin are inside
        (iv(-0.2, -0.6, 0.2), "inside noise"),  # the low edge outside, the high inside
        (iv(0.75, 0.5, 1.0), "inside noise"),  # an edge exactly on the margin, the rest outside
        (iv(-0.75, -1.0, -0.5), "inside noise"),
    ],
)
def test_absence_is_an_equivalence_test(interval, verdict):
    t = Test.equivalence(interval, 0.5, "dip")
    assert t.verdict == verdict and claim(t).verdict == verdict
    assert t.describe() == "|dip| < 0.5"
    assert t.margin == pytest.approx(0.5 - max(abs(interval.low), abs(interval.high)))


def test_a_one_sided_sign_test_would_have_called_an_anti_dip_absent_and_equivalence_does_not():
    anti_dip = iv(-0.9, -1.2, -0.6)
    assert Test(anti_dip, -1).verdict == "held"  # the old "dip < 0" reading
    assert Test.equivalence(anti_dip, 0.5).verdict == "not held"


def test_an_equivalence_margin_must_be_positive_and_kinds_are_checked():
    with pytest.raises(ValueError, match="margin must be > 0"):
        Test.equivalence(iv(0, -1, 1), 0.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        Test(iv(0, -1, 1), kind="both")


def test_the_weakest_of_mixed_tests_is_the_one_nearest_failing():
    inside = Test.equivalence(iv(0.0, -0.2, 0.2), 1.0, "a")  # margin 0.8
    above = Test.superiority(iv(3.0, 2.5, 3.5), 2.0, 1, "b")  # margin 0.5
    c = claim(inside, above)
    assert c.weakest is above and c.verdict == "held"
    assert c.row()["test"] == "b > 2 (40 units); the weakest of 2 tests"


def test_a_condition_that_cannot_win_is_not_credited_but_can_lose():
    at_majority = Gate("HIGH probe beats the majority class", False, "HIGH 14.1% vs majority 14.1%")
    wins = claim(Test(iv(3.0, 1.0, 5.0)), win_gates=(at_majority,))
    assert wins.verdict == "not testable"
    assert wins.row()["gate"] == "failed: HIGH probe beats the majority class (HIGH 14.1% vs majority 14.1%)"
    loses = claim(Test(iv(-3.0, -5.0, -1.0)), win_gates=(at_majority,))
    assert loses.verdict == "not held"
    assert "not deciding" in loses.row()["gate"]
    unclear = claim(Test(iv(0.5, -1.0, 2.0)), win_gates=(at_majority,))
    assert unclear.verdict == "inside noise"
    only_gates = claim(Test(iv(3.0, 1.0, 5.0)), gates=(Gate("ORIG probe beats the majority class", True),))
    assert only_gates.row()["gate"] == "passed: ORIG probe beats the majority class"
    only_wins = claim(Test(iv(3.0, 1.0, 5.0)), win_gates=(Gate("HIGH probe beats the majority class", True),))
    assert only_wins.row()["gate"] == "passed: HIGH probe beats the majority class"
    assert loses.row()["gate"] == (
        "passed: ; failed, not deciding (a win gate takes away only a held verdict): HIGH probe beats "
        "the majority class (HIGH 14.1% vs majority 14.1%)"
    )
    passed = claim(
        Test(iv(3.0, 1.0, 5.0)),
        gates=(Gate("ORIG probe beats the majority class", True),),
        win_gates=(Gate("HIGH probe beats the majority class", True),),
    )
    assert passed.verdict == "held"
    assert passed.row()["gate"] == "passed: ORIG probe beats the majority class; HIGH probe beats the majority class"


def test_too_few_independent_units_make_a_claim_not_testable_with_the_count_named():
    ten = claim(Test(iv(20.0, 15.0, 25.0, units=10), label="prism - baseline"))
    assert ten.verdict == "not testable" and MIN_UNITS == 15
    assert ten.row()["gate"] == "failed: at least 15 independent test units (prism - baseline: 10)"
    assert not ten.failed_gates[0].passed
    unnamed = claim(Test(iv(20.0, 15.0, 25.0, units=14)))
    assert unnamed.row()["gate"] == "failed: at least 15 independent test units (effect: 14)"
    assert claim(Test(iv(20.0, 15.0, 25.0, units=15))).verdict == "held"
    enough = claim(Test(iv(20.0, 15.0, 25.0, units=19)))  # SWDA's 19 test conversations
    assert MIN_UNITS <= 19 and enough.verdict == "held"
    edge = claim(Test(iv(20.0, 15.0, 25.0, units=MIN_UNITS)))
    assert edge.verdict == "held"
    below = claim(Test(iv(20.0, 15.0, 25.0, units=MIN_UNITS - 1)))
    assert below.verdict == "not testable"


def test_training_variance_needs_three_seeds_of_a_trained_model():
    # an interval over two seeds has one degree of freedom (t = 12.7): work B's small effects and
    # every contrast between section 4's trained arms need three
    assert MIN_SEEDS == 3


def test_intervals_over_runs_and_exact_values_are_not_counted_as_test_units():
    runs = welch_difference([0.42, 0.41, 0.43], [0.0, 0.01, 0.02])
    assert runs.resampled == "runs" and runs.units == 3
    assert claim(Test(runs)).verdict == "held"
    assert claim(Test.exact(1.0)).verdict == "held"
    assert Test.exact(1.0).interval.resampled == "none"


def test_rows_name_the_model_and_the_control_and_replace_keeps_one_units_gate():
    c = claim(
        Test(iv(0.5, 0.2, 0.8, units=5)),
        model="all-MiniLM-L6-v2",
        control="the untrained prism matches it (46.0 vs 46.5): the filter, not the training",
    )
    row = c.row()
    assert row["model"] == "all-MiniLM-L6-v2" and row["control"].startswith("the untrained prism")
    again = dataclasses.replace(c, model="other")
    assert len(again.failed_gates) == 1 and again.row()["model"] == "other"
    assert "failed_gates" not in repr(c)
    frame = claims_frame([c])
    assert list(frame.columns)[-2:] == ["model", "control"]
    md = render([c])
    assert "<br>model: all-MiniLM-L6-v2" in md and "<br>control: the untrained prism" in md
