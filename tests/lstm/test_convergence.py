"""Learning curves, power-law budgets and the model gate of work B (prismlib.lstm.convergence):
synthetic curves with known answers. (What training records for them is tested in
``test_training_curves.py``, the gates a claim carries in ``test_verdicts_claim_gates.py``.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.lstm import convergence as cv

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def _power(a: float, b: float, c: float, tokens: np.ndarray) -> cv.LearningCurve:
    return cv.LearningCurve(tokens, a + b * tokens ** (-c))


TOKENS = np.geomspace(1e4, 1e6, 40)


def test_model_gate_on_power_laws_with_known_improvement():
    # ppl = 100 + 1e4 * t^-0.5: over the last 25% of 1e6 tokens it falls from 100 + 1e4/sqrt(7.5e5) to 110
    curve = _power(100.0, 1e4, 0.5, TOKENS)
    first = 100 + 1e4 / math.sqrt(7.5e5)
    assert cv.improvement(curve, 0.25) == pytest.approx((first - 110) / first, rel=1e-2)  # about 1.4% (interpolated)
    fails, passes = cv.model_gate("m", curve, 0.25, 0.01), cv.model_gate("m", curve, 0.25, 0.02)
    assert not fails.passed and passes.passed
    assert "not converged" in fails.detail and "-1.4%" in fails.detail and "last 25% of 1M tokens" in fails.detail
    flat = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0))
    assert cv.model_gate("flat", flat).passed
    worse = cv.LearningCurve(TOKENS, np.linspace(80, 90, len(TOKENS)))  # overfitting: stopped improving
    assert cv.model_gate("worse", worse).passed


def test_model_gate_fails_without_a_curve_that_reaches_back():
    assert not cv.model_gate("m", None).passed
    short = cv.LearningCurve(np.array([9e5, 1e6]), np.array([100.0, 99.9]))
    gate = cv.model_gate("m", short, share=0.25)
    assert not gate.passed and "does not reach back" in gate.detail
    with pytest.raises(ValueError, match="increase strictly"):
        cv.LearningCurve(np.array([2.0, 1.0]), np.array([3.0, 2.0]))


def test_models_gate_names_the_models_that_still_move():
    ok, moving = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0)), _power(100.0, 1e4, 0.5, TOKENS)
    gate = cv.models_gate({"baseline seed 0": ok, "X=70 seed 0": moving})
    assert not gate.passed and "X=70 seed 0" in gate.detail and "baseline" not in gate.detail
    assert cv.models_gate({"a": ok, "b": ok}).passed


def test_power_law_fit_recovers_the_curve_and_its_budget():
    fit = cv.fit_power_law(_power(100.0, 1e4, 0.5, TOKENS), skip=0.0)
    assert fit.a == pytest.approx(100, rel=1e-3) and fit.c == pytest.approx(0.5, rel=1e-3)
    assert fit.b == pytest.approx(1e4, rel=1e-2) and fit.points == len(TOKENS)
    B = fit.budget(0.25, 0.01)
    assert fit.improvement(B) == pytest.approx(0.01, rel=1e-4)
    assert fit.improvement(0.9 * B) > 0.01 > fit.improvement(1.1 * B)  # the first budget that passes
    assert B > TOKENS[-1]  # the curve above fails at 1e6 tokens (test above): the budget lies beyond it
    assert fit.budget(0.25, 0.01, start=2 * B) == 2 * B
    with pytest.raises(ValueError, match="at least 4"):
        cv.fit_power_law(cv.LearningCurve(TOKENS[:3], np.array([3.0, 2.0, 1.5])))


def test_stable_budget_and_extrapolation_sentence():
    a = cv.PowerLaw(100.0, 3e3, 0.5, 10, 0.0)
    b = cv.PowerLaw(100.0, 1e3, 0.5, 10, 0.0)
    # contrast 2e3 * t^-0.5 moves 2e3 * (sqrt(2) - 1) / sqrt(B) between B/2 and B; <= margin/2 from
    margin = 2.0
    exact = (2 * 2e3 * (math.sqrt(2) - 1) / margin) ** 2
    B = cv.stable_budget(a, b, margin)
    assert B == pytest.approx(exact, rel=1e-4)
    assert cv.stable_budget(a, a, margin) == 2.0  # no contrast: stable from the start
    note = cv.extrapolation([a, b], trained=1e5, stable=B)
    assert note.startswith("extrapolation by power-law fits") and "times the 100,000 trained" in note
    assert "too few curve points" in cv.extrapolation([a, None], trained=1e5)


# -- exact gates, boundaries and details on synthetic curves (issue 23: the mutants of convergence are killed) --


def test_defaults_are_the_last_quarter_and_one_percent():
    assert (cv.SHARE, cv.TOLERANCE) == (0.25, 0.01)
    gate = cv.model_gate("m", cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0)))
    assert gate.name == "converged: m improved < 1% over the last 25% of its budget"
    assert gate.detail.startswith("valid ppl 80.0 -> 80.0 (") and gate.detail.endswith("over the last 25% of 1M tokens; allowed 1%")


def test_a_learning_curve_checks_its_points():
    for tokens, ppl in ((np.ones((2, 2)), np.ones((2, 2)) * 2), (np.arange(1.0, 4.0), np.full(2, 2.0))):
        with pytest.raises(ValueError, match="aligned"):
            cv.LearningCurve(tokens, ppl)
    for tokens in ([1.0, 2.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0]):
        with pytest.raises(ValueError, match="increase strictly"):
            cv.LearningCurve(np.array(tokens), np.full(4, 2.0))
    for ppl in ([2.0, np.inf, 2.0], [2.0, 0.5, 2.0], [np.nan, 2.0, 2.0]):
        with pytest.raises(ValueError, match="finite and >= 1"):
            cv.LearningCurve(np.arange(1.0, 4.0), np.array(ppl))
    perfect = cv.LearningCurve(np.arange(1.0, 4.0), np.array([1.5, 1.0, 1.0]))  # a perplexity of 1 is allowed
    assert perfect.budget == 3.0
    empty = cv.LearningCurve(np.array([]), np.array([]))
    assert empty.budget == 0.0
    with pytest.raises(ValueError, match=r"outside the curve \(no points\)"):
        empty.at(1.0)


def test_at_interpolates_in_log_tokens_between_the_end_points_inclusive():
    c = cv.LearningCurve(np.array([1e4, 1e5, 1e6]), np.array([300.0, 200.0, 150.0]))
    assert c.at(1e4) == 300.0 and c.at(1e6) == 150.0 and c.at(1e5) == 200.0
    assert c.at(10**5.5) == pytest.approx(175.0)
    for outside in (9e3, 1.1e6):
        with pytest.raises(ValueError, match=r"lie outside the curve \(1e\+04 to 1e\+06 tokens\)"):
            c.at(outside)


def test_improvement_and_the_model_gate_on_a_two_point_curve_at_the_boundary():
    c = cv.LearningCurve(np.array([1e5, 2e5]), np.array([100.0, 99.0]))
    assert cv.improvement(c, 0.5) == 0.01  # start exactly at the first point: allowed
    at_tolerance = cv.model_gate("m", c, 0.5, 0.01)  # improved exactly the tolerance: not < it
    assert not at_tolerance.passed
    assert at_tolerance.detail == "not converged: valid ppl 100.0 -> 99.0 (-1.0%) over the last 50% of 200k tokens; allowed 1%"
    assert at_tolerance.name == "converged: m improved < 1% over the last 50% of its budget"
    assert cv.model_gate("m", c, 0.5, 0.02).passed
    worse = cv.LearningCurve(np.array([1e5, 2e5]), np.array([99.0, 100.0]))
    assert cv.improvement(worse, 0.5) == pytest.approx(-1 / 99) and cv.model_gate("w", worse, 0.5).detail.startswith(
        "valid ppl 99.0 -> 100.0 (+1.0%)"
    )
    for share in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="share must be in"):
            cv.improvement(c, share)
    one = cv.LearningCurve(np.array([1e5]), np.array([100.0]))
    assert cv.model_gate("m", one).detail == "not converged: no learning curve recorded for m"
    assert cv.model_gate("m", None).detail == "not converged: no learning curve recorded for m"
    with pytest.raises(ValueError, match="does not reach back"):
        cv.improvement(one, 0.5)


def test_power_law_values_and_improvement():
    law = cv.PowerLaw(100.0, 1e4, 0.5, 5, 0.0)
    assert law(1e4) == 200.0 and isinstance(law(1e4), float)
    np.testing.assert_allclose(law(np.array([1e4, 1e6])), [200.0, 110.0])
    assert law.improvement(1e6) == pytest.approx((law(7.5e5) - 110.0) / law(7.5e5), rel=1e-12)  # share 0.25
    assert law.improvement(1e6, 0.5) == pytest.approx((law(5e5) - 110.0) / law(5e5), rel=1e-12)
    assert str(law) == "100.0 + 1e+04 * tokens^-0.500"
    flat = cv.PowerLaw(100.0, 1e-9, 0.5, 5, 0.0)
    assert flat.budget() == 1.0  # passes from the first token
    B = law.budget(0.25, 0.01)
    assert law.budget(0.25, 0.01, start=0.8 * B) == pytest.approx(B, rel=1e-5)  # the root just above the start
    assert cv.PowerLaw(0.0, 1.0, 0.5, 5, 0.0).budget() == np.inf  # improves 13% per quarter forever


def test_power_law_fit_bounds_points_and_rmse():
    tokens = np.linspace(5e4, 1e6, 20)  # includes 1e5 = 10% of the budget
    curve = cv.LearningCurve(tokens, 1.5 + 300.0 * (tokens / 1e6) ** -0.7)  # an asymptote of 1.5
    fit = cv.fit_power_law(curve)
    assert fit.points == int((tokens >= 1e5).sum()) == 19 and fit.a == pytest.approx(1.5, abs=1e-3)
    assert cv.fit_power_law(curve, skip=0.5).points == int((tokens >= 5e5).sum())
    rng = np.random.default_rng(0)
    noisy = cv.LearningCurve(tokens, 150.0 + 3e3 * tokens**-0.4 + rng.normal(0, 0.5, 20))
    fit = cv.fit_power_law(noisy)
    keep = tokens >= 1e5
    assert fit.rmse == pytest.approx(np.sqrt(np.mean((fit(tokens[keep]) - noisy.valid_ppl[keep]) ** 2)), rel=1e-9)
    assert fit.rmse > 0.1
    rising = cv.LearningCurve(tokens, 80.0 + np.linspace(0, 5, 20))  # overfitting: no decay to fit
    assert cv.fit_power_law(rising).a <= rising.valid_ppl[keep].min() + 1e-9  # the asymptote is at most the best ppl
    small = cv.LearningCurve(tokens, 100.0 + 200.0 * tokens**-0.5)  # b = 0.2 on the fit's scale (tokens / 1e6)
    assert cv.fit_power_law(small).b == pytest.approx(200.0, rel=1e-2)
    steep = cv.LearningCurve(tokens, 100.0 + 5.0 * (tokens / 1e6) ** -8.0)
    assert cv.fit_power_law(steep).c <= 5.0  # the exponent is bounded
    four = cv.LearningCurve(np.array([1e5, 2e5, 3e5, 4e5]), np.array([200.0, 150.0, 130.0, 120.0]))
    assert cv.fit_power_law(four, skip=0.0).points == 4
    with pytest.raises(ValueError, match="did not converge"):  # the asymptote bound collapses at ppl 1
        cv.fit_power_law(cv.LearningCurve(tokens, np.linspace(3.0, 1.0, 20)))


def test_stable_budget_boundaries_and_both_orders():
    a = cv.PowerLaw(100.0, 3e3, 0.5, 10, 0.0)
    b = cv.PowerLaw(100.0, 1e3, 0.5, 10, 0.0)
    for margin in (2.0, 2.47, 0.5):
        exact = (2 * 2e3 * (math.sqrt(2) - 1) / margin) ** 2
        assert cv.stable_budget(a, b, margin) == pytest.approx(exact, rel=1e-4)
        assert cv.stable_budget(b, a, margin) == pytest.approx(exact, rel=1e-4)  # the contrast falls instead
    assert cv.stable_budget(a, a, 0.0) == math.inf and cv.stable_budget(a, b, -1.0) == math.inf
    assert cv.stable_budget(a, a, 1.0) == 2.0 and cv.stable_budget(a, a, 1.0, start=5.0) == 5.0
    assert cv.stable_budget(a, b, 2.0, start=1e7) == 1e7
    assert cv.stable_budget(cv.PowerLaw(0.0, 1.0, -0.5, 5, 0.0), b, 1.0) == math.inf  # grows without end


def test_extrapolation_sentences():
    fast, slow = cv.PowerLaw(100.0, 1e2, 0.5, 10, 0.0), cv.PowerLaw(100.0, 1e4, 0.5, 10, 0.0)
    need = slow.budget()
    assert fast.budget() < need
    assert cv.extrapolation([fast, slow], trained=1e5) == (
        f"extrapolation by power-law fits: the model gate would pass at about {cv.humane_number(need)} tokens, "
        f"{cv.humane_number(need / 1e5)} times the 100,000 trained"
    )
    assert cv.extrapolation([slow], trained=0.0).endswith(f", {cv.humane_number(need)} times the 0 trained")
    more = cv.extrapolation([fast, slow], trained=1e5, stable=10 * need)
    assert more.startswith(
        f"extrapolation by power-law fits: the model and effect-stability gates would pass at about {cv.humane_number(10 * need)} tokens"
    )
    less = cv.extrapolation([fast, slow], trained=1e5, stable=1.0)
    assert f"the model and effect-stability gates would pass at about {cv.humane_number(need)} tokens" in less
    assert cv.extrapolation([cv.PowerLaw(0.0, 1.0, 0.5, 5, 0.0)], 1e5) == (
        "extrapolation by power-law fits: the gates would not pass within a quadrillion (1e15) tokens, where the search stops"
    )
    for fits in ([], [None], [fast, None]):
        assert cv.extrapolation(fits, trained=1e5) == "no budget extrapolated (a model has too few curve points for a fit)"


def test_an_extrapolation_beyond_a_trillion_tokens_is_not_within_any_feasible_budget():
    """Notebook 07's gates read "would pass at about 1.22e+05G tokens (60224986.7x the 2.02M
    trained)" before issue 44: now the number in words, and no promise of a run."""
    fast = cv.PowerLaw(100.0, 1e2, 0.5, 10, 0.0)
    assert fast.budget() < cv.FEASIBLE_TOKENS
    assert cv.extrapolation([fast], trained=2.02e6, stable=1.22e14) == (
        "extrapolation by power-law fits: the model and effect-stability gates would not pass within any feasible budget "
        "(only at about 122 trillion tokens, 60.4 million times the 2.02 million trained; feasible: up to 1 trillion)"
    )
    at_the_limit = cv.extrapolation([fast], trained=2.02e6, stable=cv.FEASIBLE_TOKENS)
    assert at_the_limit.endswith("would pass at about 1 trillion tokens, 495,000 times the 2.02 million trained"), at_the_limit
    beyond = cv.extrapolation([fast], trained=2.02e6, stable=1.01 * cv.FEASIBLE_TOKENS)
    assert "would not pass within any feasible budget (only at about 1.01 trillion tokens" in beyond, beyond


def test_numbers_are_written_as_a_reader_says_them():
    cases = {
        1.22e14: "122 trillion",
        60224986.7: "60.2 million",
        2.02e6: "2.02 million",
        1e6: "1 million",
        999_999.0: "1 million",  # rounded before the word is chosen
        999_499.0: "999,000",
        12_345.0: "12,300",
        -12_345.0: "-12,300",
        1000.0: "1,000",
        999.5: "1,000",
        131.1: "131",
        0.5: "0.5",
        0.0: "0",
        -2.5e9: "-2.5 billion",
        1e15: "1 quadrillion",
        9.99e17: "999 quadrillion",
        1.22e18: "1.22e+18",
        1e18: "1e+18",
        -1.22e18: "-1.22e+18",
        math.inf: "inf",
    }
    assert {n: cv.humane_number(n) for n in cases} == cases
    assert cv.humane_number(math.nan) == "nan"


def _read_back(text: str) -> float:
    number, _, word = text.partition(" ")
    return float(number.replace(",", "")) * dict(cv.SCALES).get(word, 1.0)


@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_a_humane_number_reads_back_to_within_its_three_digits(n):
    text = cv.humane_number(n)
    assert len(text.split(" ")) <= 2 and text.split(" ")[-1] in (*dict(cv.SCALES), text.split(" ")[0])
    assert _read_back(text) == pytest.approx(n, rel=5e-3, abs=1e-300)


def test_models_gate_details():
    ok = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0))
    moving = _power(100.0, 1e4, 0.5, TOKENS)
    gate = cv.models_gate({"a": ok, "b": ok})
    assert gate.passed and gate.detail == "; ".join(f"{k}: {cv.model_gate(k, ok).detail}" for k in "ab")
    assert gate.name == "converged: every model improved < 1% over the last 25% of its budget"
    failed = cv.models_gate({"a": ok, "b": moving})
    assert not failed.passed
    assert failed.detail == "not converged: b: " + cv.model_gate("b", moving).detail.removeprefix("not converged: ")
    with pytest.raises(ValueError, match="at least one"):
        cv.models_gate({})


def test_token_counts_are_written_short():
    cases = {
        None: "None",
        math.inf: "inf",
        1.5e9: "1.5G",
        1e9: "1G",
        2.5e6: "2.5M",
        1e6: "1M",
        1e3: "1k",
        999.0: "999",
        -2e6: "-2M",
        5e8: "500M",
    }
    assert {n: cv.format_tokens(n) for n in cases} == cases


def test_budgets_found_near_the_start_of_the_search():
    # improvement(t) = 0.01 at t = 1.5 tokens: between the first token and the first doubling
    b = 1 / (0.1547005 / math.sqrt(1.5) - 0.01 * (0.75 * 1.5) ** -0.5)
    law = cv.PowerLaw(100.0, b, 0.5, 5, 0.0)
    assert law.improvement(1.0) > 0.01 > law.improvement(2.0)
    assert law.budget() == pytest.approx(1.5, rel=1e-4)
    # a contrast 2 t^-0.5 moves 0.59 between 1 and 2 tokens: more than half a margin of 0.5, by less than 1
    a, c = cv.PowerLaw(100.0, 3.0, 0.5, 5, 0.0), cv.PowerLaw(100.0, 1.0, 0.5, 5, 0.0)
    assert cv.stable_budget(a, c, 0.5) == pytest.approx((2 * 2 * (math.sqrt(2) - 1) / 0.5) ** 2, rel=1e-4)


def test_the_searches_give_up_beyond_1e15_tokens_and_not_before():
    def law_passing_at(R):  # improvement(R) = 1%: 0.1547 u / (100 + 1.1547 u) = 0.01 with u = b R^-0.5
        u = 0.01 * 100 / ((0.75**-0.5 - 1) - 0.01 * 0.75**-0.5)
        return cv.PowerLaw(100.0, u * math.sqrt(R), 0.5, 5, 0.0)

    beyond, within = law_passing_at(1.05e15), law_passing_at(8e14)
    assert beyond.improvement(1.05e15) == pytest.approx(0.01) and within.improvement(8e14) == pytest.approx(0.01)
    assert beyond.budget() == math.inf
    assert within.budget(start=2.5e14) == pytest.approx(8e14, rel=1e-5)  # the search reaches 1e15 exactly

    def contrast_stable_at(R, margin=1.0):  # moved(B) = k B^-0.5 (sqrt 2 - 1) - margin / 2
        return cv.PowerLaw(100.0, margin / 2 * math.sqrt(R) / (math.sqrt(2) - 1), 0.5, 5, 0.0), cv.PowerLaw(100.0, 0.0, 0.5, 5, 0.0)

    assert cv.stable_budget(*contrast_stable_at(1.05e15), 1.0) == math.inf
    assert cv.stable_budget(*contrast_stable_at(8e14), 1.0, start=2.5e14) == pytest.approx(8e14, rel=1e-5)
