"""The doubling check (prismlib.lstm.doubling): how far doubling a fixed learning-rate path
moves a slow learner's contrast with the baseline, and the gate it gives every claim, on
synthetic test NLL with known perplexities."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from prismlib.claims import Test
from prismlib.lstm import DoublingCheck, RunSpec, WorkBClaims, claim_twin_specs, doubling_jobs, mean_nll, perplexity
from prismlib.profiles import get_profile
from prismlib.stats import Interval

NOISE = np.random.default_rng(0).normal(0, 0.3, 2000)
NOISE -= NOISE.mean()  # a stream's perplexity is exactly the one asked for

BASE, SLOW = RunSpec("baseline", seed=0), RunSpec("layerwise", 200.0, fixed=True, seed=0)
BASE1, SLOW1 = RunSpec("baseline", seed=1), RunSpec("layerwise", 200.0, fixed=True, seed=1)


def _nll(ppl: float) -> np.ndarray:
    return math.log(ppl) + NOISE


def _check(regular: dict, doubled: dict, specs=(BASE, SLOW)) -> DoublingCheck:
    """spec -> perplexity on each path (a spec left out has not been trained on that path)."""
    return DoublingCheck({s: _nll(p) for s, p in regular.items()}, {s: _nll(p) for s, p in doubled.items()}, tuple(specs), (140, 280))


def _test(effect: float, low: float, high: float, threshold: float = 0.0) -> Test:
    return Test(Interval(effect, low, high, 20), -1, threshold, "ppl(x) - ppl(base)")


def test_moved_is_the_shift_of_each_slow_learners_contrast_in_the_statistics_unit():
    # contrast +20 on the regular path (140 vs 120), +8 on the doubled one (118 vs 110): moved -12
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})
    assert check.moved() == {SLOW.label: [pytest.approx(-12.0)]}
    shift = math.log(118 / 110) - math.log(140 / 120)
    assert check.moved(mean_nll) == {SLOW.label: [pytest.approx(shift)]}


def test_the_shift_is_averaged_over_the_seeds_that_have_all_four_runs():
    specs = (BASE, SLOW, BASE1, SLOW1)
    check = _check({BASE: 120, SLOW: 140, BASE1: 120, SLOW1: 130}, {BASE: 110, SLOW: 118, BASE1: 110, SLOW1: 124}, specs)
    assert check.moved()[SLOW.label] == [pytest.approx(-12.0), pytest.approx(4.0)]
    gate = check.gate([_test(-20.0, -22.0, -18.0)])  # mean shift -4: within half the margin (10)
    assert gate.passed and "moved -4" in gate.detail


def test_a_contrast_that_doubling_moves_by_more_than_half_the_margin_fails_the_gate():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})  # moved -12
    passed = check.gate([_test(-30.0, -32.0, -28.0)])  # margin 30: allows 15
    assert passed.passed and passed.name.startswith("stable: doubling the path (140 -> 280 rounds)")
    failed = check.gate([_test(-20.0, -22.0, -18.0)])  # margin 20: allows 10
    assert not failed.passed and failed.detail.startswith("not converged: ")
    assert "moved -12" in failed.detail and "1 of 1 tests moved more" in failed.detail


def test_a_shift_inside_half_the_interval_width_passes_a_claim_whose_effect_is_near_its_threshold():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 118, SLOW: 135})  # moved -3
    assert check.gate([_test(1.0, -4.0, 6.0)]).passed  # margin 1, but half the width is 5
    assert not check.gate([_test(1.0, -1.0, 3.0)]).passed  # margin 1, half the width 2


def test_the_gate_reads_the_shift_in_the_claims_unit():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})
    log_ratio = Test(Interval(0.3, 0.28, 0.32, 20), 1, 0.0, "log ratio")  # allows 0.15 in log units
    assert check.gate([log_ratio], mean_nll).passed  # moved about -0.085 nats
    assert not check.gate([log_ratio], perplexity).passed  # the same runs read as -12 ppl


def test_a_missing_run_fails_the_gate_and_names_it():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110})
    assert check.missing == [f"{SLOW.label} seed 0, doubled path"]
    gate = check.gate([_test(-30.0, -32.0, -28.0)])
    assert not gate.passed and "cannot be checked yet: 1 of 4 runs" in gate.detail and "doubled path" in gate.detail
    with pytest.raises(ValueError, match="no seed of layerwise T=200"):
        check.moved()


def test_the_table_gives_each_path_and_the_contrast_shift():
    table = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118}).table()
    assert list(table["model"]) == [BASE.label, SLOW.label]
    assert table["change"].tolist() == [pytest.approx(-10.0), pytest.approx(-22.0)]
    assert math.isnan(table["contrast shift"].iloc[0]) and table["contrast shift"].iloc[1] == pytest.approx(-12.0)


@dataclass
class _Run:
    spec: RunSpec
    test_chunks: np.ndarray
    curve: None = None
    history: None = None

    def test_chunks_at_half(self) -> None:
        return None


def test_work_b_claims_with_a_doubling_check_use_it_as_their_stability_gate():
    runs = {spec: _Run(spec, _nll(ppl)) for spec, ppl in ((RunSpec("baseline"), 120.0), (RunSpec("layer2", 70.0, fixed=True), 100.0))}
    key = lambda s: s.variant  # noqa: E731
    tests = lambda m: (Test(m.delta("layer2"), -1, 0.0, "ppl(layer2) - ppl(baseline)"),)  # noqa: E731
    moved = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})  # -12 against the margin 20: allows 10
    _, stability, _ = WorkBClaims(runs, key=key, reference="baseline", doubling=moved).gates(["baseline", "layer2"], tests)
    assert not stability.passed and stability.name.startswith("stable: doubling the path")
    still = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 128})  # moved -2
    _, stability, _ = WorkBClaims(runs, key=key, reference="baseline", doubling=still).gates(["baseline", "layer2"], tests)
    assert stability.passed


def test_the_cpu_recipe_doubles_its_path_for_the_baseline_and_the_slowest_learners():
    regular, doubled = doubling_jobs(get_profile("cpu"), claims=False)
    assert [j.spec for j in regular] == [j.spec for j in doubled]
    assert {j.spec.variant for j in regular} == {"baseline", "layerwise", "layer2"}
    every = doubling_jobs(get_profile("cpu"))[1]  # with the claims' own models (installments train them)
    assert [j.spec for j in every] == [j.spec for j in doubled] + claim_twin_specs(get_profile("cpu"))
    assert all(d.settings.min_rounds == 2 * r.settings.min_rounds for r, d in zip(regular, doubled))
    assert len({j.key for j in regular + doubled}) == 2 * len(regular)
    assert doubling_jobs(get_profile("smoke")) == ([], [])
