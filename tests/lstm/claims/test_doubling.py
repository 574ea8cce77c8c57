"""The doubling check (prismlib.lstm.claims.doubling): how far doubling a fixed learning-rate path
moves a slow learner's contrast with the baseline, and the gate it gives every claim, on
synthetic test NLL with known perplexities."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from prismlib.claims import Gate, Test
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
    check = _check({BASE: 120, SLOW: 140, BASE1: 125, SLOW1: 130}, {BASE: 110, SLOW: 118, BASE1: 112, SLOW1: 124}, specs)
    assert check.moved()[SLOW.label] == [pytest.approx(-12.0), pytest.approx(7.0)]  # each seed against its own baseline
    gate = check.gate([_test(-20.0, -22.0, -18.0)])  # mean shift -2.5: within half the margin (10)
    assert gate.passed and "moved -2.5" in gate.detail
    with pytest.raises(ValueError, match="no baseline run of seed 1"):
        _check({BASE: 120, SLOW: 140, SLOW1: 130}, {BASE: 110, SLOW: 118, SLOW1: 124}, (BASE, SLOW, SLOW1)).moved()


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
    assert _check({BASE: 120}, {BASE: 110, SLOW: 118}).missing == [f"{SLOW.label} seed 0"]  # on the regular path
    many = _check({}, {}, (BASE, SLOW, BASE1)).gate([_test(-30.0, -32.0, -28.0)])
    assert "6 of 6 runs" in many.detail and f"({BASE.label} seed 0, {SLOW.label} seed 0, {BASE1.label} seed 1, ...)" in many.detail
    three = _check({BASE: 120, SLOW: 140, BASE1: 120}, {}, (BASE, SLOW, BASE1)).gate([])
    assert f"{BASE1.label} seed 1, doubled path)" in three.detail  # three named, no "..."
    four = _check({BASE: 120, SLOW: 140}, {}, (BASE, SLOW, BASE1)).gate([])
    assert "4 of 6 runs" in four.detail and four.detail.count(", ...)") == 1
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110})
    assert check.missing == [f"{SLOW.label} seed 0, doubled path"]
    gate = check.gate([_test(-30.0, -32.0, -28.0)])
    assert not gate.passed and "cannot be checked yet: 1 of 4 runs" in gate.detail and "doubled path" in gate.detail
    with pytest.raises(ValueError, match="no seed of layerwise T=200"):
        check.moved()


def test_the_table_gives_each_path_and_the_contrast_shift():
    table = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118}).table()
    assert list(table["model"]) == [BASE.label, SLOW.label]
    assert list(table.columns[2:4]) == ["ppl (140)", "ppl (280)"]
    assert table["change"].tolist() == [pytest.approx(-10.0), pytest.approx(-22.0)]
    assert math.isnan(table["contrast shift"].iloc[0]) and table["contrast shift"].iloc[1] == pytest.approx(-12.0)
    specs = (BASE, SLOW, BASE1, SLOW1)
    part = _check({BASE: 120, SLOW: 140, BASE1: 120, SLOW1: 130}, {BASE: 110, BASE1: 112, SLOW1: 124}, specs).table()
    assert math.isnan(part["contrast shift"].iloc[1]) and part["contrast shift"].iloc[3] == pytest.approx(2.0)  # SLOW: no twin
    part = _check({BASE: 120, SLOW: 140, BASE1: 120, SLOW1: 130}, {BASE: 110, SLOW: 118, SLOW1: 124}, specs).table()
    assert part["contrast shift"].iloc[1] == pytest.approx(-12.0) and math.isnan(part["contrast shift"].iloc[3])  # BASE1 lacks one


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


def test_the_bound_is_the_slow_learner_whose_contrast_moved_most_either_way():
    X70 = RunSpec("layer2", 70.0, fixed=True, seed=0)
    specs = (BASE, SLOW, X70)
    check = _check({BASE: 120, SLOW: 140, X70: 130}, {BASE: 110, SLOW: 118, X70: 124}, specs)  # -12 and +4
    gate = check.gate([_test(-30.0, -32.0, -28.0)])
    assert gate.passed and gate.detail.startswith(f"{SLOW.label}'s contrast with the baseline moved -12")
    up = _check({BASE: 120, SLOW: 140, X70: 130}, {BASE: 110, SLOW: 126, X70: 110}, specs)  # -4 and +-10
    assert f"{X70.label}'s contrast" in up.gate([_test(-30.0, -32.0, -28.0)]).detail
    name = "stable: doubling the path (140 -> 280 rounds) moves every contrast <= half its margin"
    assert check.gate([]) == Gate(name, True, f"no contrast; largest shift {SLOW.label}: -12")


def test_the_gate_names_the_test_that_allows_least_and_passes_a_shift_equal_to_its_allowance():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})  # the bound: moved -12
    both = check.gate([_test(-4.0, -5.0, -3.0), _test(-2.0, -3.0, -1.0)])  # allow 2 and 1: both fail
    assert "against 1 allowed" in both.detail and "2 of 2 tests moved more" in both.detail
    assert check.gate([_test(-2.0, -3.0, -1.0)], own=[1.0]).passed  # exactly half the margin 2: allowed


def test_a_counterexample_that_stays_decides_and_one_that_moves_past_its_allowance_does_not():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})  # the bound: moved -12
    close = _test(-1.0, -2.0, 0.5)  # inside noise, allows 1.25: fails the bound alone
    assert not check.gate([close]).passed
    gate = check.gate([close, _test(30.0, 28.0, 32.0)])  # not held by 30: allows 15, so the verdict stands
    assert gate.passed and "1 of 2 tests say not held and decide the verdict" in gate.detail
    assert not check.gate([close, _test(20.0, 18.0, 22.0)]).passed  # a counterexample that allows 10
    two = check.gate([close, _test(30.0, 28.0, 32.0), _test(40.0, 38.0, 42.0), _test(20.0, 18.0, 22.0)])
    assert two.passed and "against 20 allowed" in two.detail and "3 of 4 tests say not held" in two.detail  # the most room
    own = check.gate([close, _test(30.0, 28.0, 32.0), _test(40.0, 38.0, 42.0)], own=[0.0, 1.0, -19.0])
    assert own.passed and "against 15 allowed" in own.detail  # 14 to spare against 1
    none = check.gate([close, _test(22.0, 20.0, 24.0), _test(23.0, 21.0, 25.0)])  # allow 11 and 11.5: -12 passes neither
    assert not none.passed and "against 11.5 allowed" in none.detail and "2 of 2 tests moved more" in none.detail


def test_a_tests_own_shift_replaces_the_bound():
    check = _check({BASE: 120, SLOW: 140}, {BASE: 110, SLOW: 118})  # the bound: moved -12
    tests = [_test(-2.0, -3.0, -1.0), _test(-4.0, -5.0, -3.0)]  # allow 1 and 2
    own = check.gate(tests, own=[0.5, -1.5])
    assert own.passed and "on its own models' doubled twins" in own.detail
    assert not check.gate(tests, own=[0.5, -2.5]).passed and not check.gate(tests).passed
    with pytest.raises(ValueError, match="own gives 1 shifts for 2 tests"):
        check.gate(tests, own=[0.5])


OWN, OWN1 = RunSpec("official", fixed=True, seed=0), RunSpec("official", fixed=True, seed=1)


def test_both_paths_gives_the_seed_means_only_where_every_model_has_every_seed_on_both():
    specs = (BASE, SLOW, BASE1, SLOW1)
    regular = {BASE: 120, SLOW: 140, BASE1: 120, SLOW1: 130, OWN: 118, OWN1: 116}
    doubled = {BASE: 110, SLOW: 118, BASE1: 110, SLOW1: 124, OWN: 109}
    nll = [{s: _nll(p) for s, p in path.items()} for path in (regular, doubled)]
    check = DoublingCheck(nll[0], nll[1], specs, (140, 280), own=(OWN, OWN1))
    key = lambda s: s.variant  # noqa: E731
    claim = [BASE, BASE1, OWN, OWN1]  # the runs a claim reads
    assert check.both_paths(claim, key, "baseline") is None  # official seed 1 has no twin
    nll[1][OWN1] = _nll(107)
    check = DoublingCheck(nll[0], nll[1], specs, (140, 280), own=(OWN, OWN1))
    assert check.both_paths([BASE, BASE1, OWN], key, "baseline") is None  # official has one seed of the check's two
    assert check.both_paths([*claim, RunSpec("official", fixed=True, seed=5)], key, "baseline") is not None  # a seed beyond the check
    later, earlier = check.both_paths(claim, key, "baseline")
    assert later.seeds("official") == earlier.seeds("official") == 2
    assert later.perplexity("official") == pytest.approx(math.sqrt(109 * 107))
    assert earlier.perplexity("baseline") == pytest.approx(120)
    assert list(check.table()["model"]).count(OWN.label) == 2  # the claims' twins join the table


def test_work_b_claims_gate_a_claim_whose_models_have_their_own_twins_by_their_own_shift():
    runs = {s: _Run(s, _nll(p)) for s, p in ((BASE, 120.0), (BASE1, 120.0), (OWN, 118.0), (OWN1, 118.0))}
    key = lambda s: {"baseline": "baseline", "official": "official"}[s.variant]  # noqa: E731  (a notebook's key knows its own models only)
    tests = lambda m: (Test(m.delta("official"), -1, 0.0, "ppl(official) - ppl(baseline)"),)  # noqa: E731
    specs = (BASE, SLOW, BASE1, SLOW1)
    regular = {BASE: 120, SLOW: 140, BASE1: 120, SLOW1: 140, OWN: 118, OWN1: 118}

    def stability(doubled: dict) -> object:
        nll = [{s: _nll(p) for s, p in path.items()} for path in (regular, doubled)]
        check = DoublingCheck(nll[0], nll[1], specs, (140, 280), own=(OWN, OWN1))
        return WorkBClaims(runs, key=key, reference="baseline", doubling=check).gates(["baseline", "official"], tests)[1]

    slow = {BASE: 110, SLOW: 118, BASE1: 110, SLOW1: 118}  # the bound: -12 against the margin 2
    assert not stability(slow).passed
    kept = stability({**slow, OWN: 108.1, OWN1: 108.1})  # its own contrast -2 -> -1.9
    assert kept.passed and "own models' doubled twins" in kept.detail
    assert not stability({**slow, OWN: 112.0, OWN1: 112.0}).passed  # -2 -> +2


def test_a_notebook_never_trains_the_claims_own_twins(monkeypatch):
    import prismlib.lstm.claims.doubling as doubling

    trained: list = []
    corpus = object()
    seen: list = []

    def load_run(job, **kwargs):
        seen.append(kwargs["corpus"])
        if job.twin and job.spec in claim_twin_specs(get_profile("cpu")):
            raise FileNotFoundError(job.key)  # the claims' own twins: not trained yet
        return _Run(job.spec, _nll(110.0 if job.twin else 120.0))

    monkeypatch.setattr(doubling, "run_missing", lambda jobs, *a, **k: trained.extend(jobs) or seen.append(k["data"]))
    monkeypatch.setattr(doubling, "load_run", load_run)
    cpu = get_profile("cpu")
    check = doubling.doubling_check(cpu, corpus=corpus)  # trains by default
    assert check is not None and check.own == tuple(claim_twin_specs(cpu)) and not set(check.specs) & set(check.own)
    assert trained and not {j.spec for j in trained if j.twin} & set(check.own)
    assert check.rounds == (140, 280) and check.reference == "baseline" and set(seen) == {corpus}
    assert {round(perplexity(x)) for x in check.regular.values()} == {120} and len(check.regular) == len(check.specs) + len(check.own)
    assert {round(perplexity(x)) for x in check.doubled.values()} == {110} and set(check.doubled) == set(check.specs)
    assert all(j.twin == (j.settings.min_rounds == 280) for j in trained) and any(j.twin for j in trained)
