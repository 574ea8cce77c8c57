"""Notebook 09's claims (prismlib.probing.beyond_claims) on probes with known accuracies: the
rivals are chosen on validation, a smooth band must beat its energy twin too, the all-pass
control's check is a gate (never a row) exactly where a row compares conditions trained two
ways, and no comparison is decided in two rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.probing import (
    ALL_PASS,
    CONDITIONS,
    ENERGY_TWIN_CONDITIONS,
    GATED,
    MAJORITY,
    MATCHED_HAAR_CONDITIONS,
    MATCHED_SMOOTH_CONDITIONS,
    Features,
    GatedRuns,
    ProbeComparison,
    ProbeRuns,
    learned_gate_claims,
    matched_band_claim,
    pipeline_check,
    section_claims,
    section_claims_from_runs,
    task_claims,
)

UNITS = 20  # test units of 5 rows each: above MIN_UNITS
BANDS = CONDITIONS[1:]
TWIN_HIGH = ENERGY_TWIN_CONDITIONS[4]
SMOOTH_HIGH = MATCHED_SMOOTH_CONDITIONS[4]


def comparison(rates: dict[str, float], val: dict[str, float] | None = None, default: float = 0.3) -> ProbeComparison:
    """Probes right on a share ``rates[c]`` of the test rows (nested: equal rates are the same
    rows, so their difference is exactly 0) with validation accuracies ``val`` (default: the
    test rates); every condition not given sits at ``default``, the majority class at 0.1."""
    names = ("ORIG", *BANDS, *MATCHED_SMOOTH_CONDITIONS, *MATCHED_HAAR_CONDITIONS, GATED, ALL_PASS, TWIN_HIGH)
    full = dict.fromkeys(names, default)
    full |= {MAJORITY: 0.1} | rates
    n = UNITS * 5
    order = np.random.default_rng(0).permutation(n)
    correct = {c: (order < round(rate * n))[None] for c, rate in full.items()}
    seen = full | (val or {})
    table = pd.DataFrame([{"condition": c, "run": 0, "val_accuracy": v} for c, v in seen.items() if c != MAJORITY])
    idx = torch.arange(n)
    test = Features({}, torch.zeros(n, dtype=torch.long), torch.ones(n), idx // 5, idx, idx % 5)
    return ProbeComparison(ProbeRuns(table, correct, 0), test, (idx // 5).numpy(), n_boot=300, task="pos")


# ------------------------------------------------------------------ matched bands and the twin


def test_a_smooth_band_must_beat_the_best_brick_wall_band_and_its_energy_twin():
    rates = {"ORIG": 0.9, "HIGH": 0.6, SMOOTH_HIGH: 0.8, TWIN_HIGH: 0.6}
    held = matched_band_claim(comparison(rates), family="smooth", title="POS", min_effect=1.0, twin=TWIN_HIGH)
    assert held.verdict == "held"
    assert [t.label for t in held.tests] == [f"{SMOOTH_HIGH} - HIGH", f"{SMOOTH_HIGH} - {TWIN_HIGH}"]
    assert all(t.threshold == 1.0 for t in held.tests)
    assert "and its energy-matched brick-wall twin (brick-twin:HIGH 60.0)" in held.claim
    assert held.control.startswith("energy twin of smooth-3dB:HIGH: DCT 132-511 at N = 512 (380 indices;")
    # the twin passes as much as the smooth band and does as well: the smooth band's edge over
    # the brick-wall band is not held, and the twin's comparison is the one reported
    lost = matched_band_claim(comparison(rates | {TWIN_HIGH: 0.8}), family="smooth", title="POS", min_effect=1.0, twin=TWIN_HIGH)
    assert lost.verdict == "not held" and lost.row()["test"].startswith(f"{SMOOTH_HIGH} - {TWIN_HIGH} > 1")
    assert lost.row()["effect"] == 0.0


def test_the_rivals_are_chosen_on_validation_not_test():
    rates = {"ORIG": 0.9, "HIGH": 0.6, "MID": 0.7, SMOOTH_HIGH: 0.8, MATCHED_SMOOTH_CONDITIONS[2]: 0.5}
    val = {"HIGH": 0.65, "MID": 0.6, SMOOTH_HIGH: 0.7, MATCHED_SMOOTH_CONDITIONS[2]: 0.9}
    claim = matched_band_claim(comparison(rates, val), family="smooth", title="POS", min_effect=1.0, twin="MID")
    assert [t.label for t in claim.tests] == ["smooth-3dB:MID - HIGH", "smooth-3dB:MID - MID"]
    assert claim.verdict == "not held"
    with pytest.raises(ValueError, match="not the energy twin"):
        matched_band_claim(comparison(rates, val), family="smooth", title="POS", min_effect=1.0, twin=TWIN_HIGH)


def test_a_twin_that_is_the_best_brick_wall_band_is_one_test_and_haar_has_none():
    rates = {"ORIG": 0.5, "LOW": 0.7, MATCHED_SMOOTH_CONDITIONS[0]: 0.8, MATCHED_HAAR_CONDITIONS[0]: 0.69}
    cmp = comparison(rates)
    smooth = matched_band_claim(cmp, family="smooth", title="Topic", min_effect=1.0, twin="LOW")
    assert [t.label for t in smooth.tests] == ["smooth-3dB:LOW - LOW"] and smooth.verdict == "held"
    assert "the brick-wall band LOW itself at every window length" in smooth.control
    haar = matched_band_claim(cmp, family="Haar", title="Topic", min_effect=1.0)
    assert [t.label for t in haar.tests] == ["haar-3dB:LOW - LOW"] and haar.control == "" and haar.verdict == "not held"
    with pytest.raises(ValueError, match="only a smooth band"):
        matched_band_claim(cmp, family="Haar", title="Topic", min_effect=1.0, twin="LOW")
    # a band at the majority class never wins
    at_majority = comparison({"ORIG": 0.9, "LOW": 0.3, MATCHED_SMOOTH_CONDITIONS[0]: 0.5, MAJORITY: 0.5}, default=0.05)
    assert matched_band_claim(at_majority, family="smooth", title="Topic", min_effect=1.0, twin="LOW").verdict == "not testable"


# ------------------------------------------------------------------ the all-pass control's check


def test_the_all_pass_check_is_an_equivalence_that_must_be_held():
    same = pipeline_check(comparison({"ORIG": 0.8, ALL_PASS: 0.8}), 1.0)
    assert same.test.kind == "equivalence" and same.test.verdict == "held" and same.gate.passed
    assert same.gate.name.startswith("pos: the all-pass control matches ORIG within 1 point")
    below = pipeline_check(comparison({"ORIG": 0.8, ALL_PASS: 0.7}), 1.0)
    assert below.test.verdict == "not held" and not below.gate.passed
    assert below.gate.detail.startswith("all-pass - ORIG -10 [") and below.gate.detail.endswith("] points, outside ±1")


def test_the_check_s_role_in_a_row_is_a_gate_a_win_gate_or_none():
    cmp = comparison(BRICK_RIVAL | {"ORIG": 0.5, GATED: 0.7, SMOOTH_HIGH: 0.65})
    claims, check = task_claims(cmp, title="POS", twin=TWIN_HIGH, window=512, gate_runs=5, min_effect=1.0)
    # the brick-wall rival is trained the fixed filters' way: the check decides that row; the
    # matched bands and the filter against its own control (trained alike) do not carry it
    assert [check.role_in(c) for c in claims] == ["", "", "learned - HIGH (gate)", ""]
    cmp = comparison(ALL_PASS_RIVAL | {"ORIG": 0.8, GATED: 0.9})
    won = learned_gate_claims(cmp, check := pipeline_check(cmp, 1.0), title="POS", runs=5, min_effect=1.0)
    assert [check.role_in(c) for c in won] == [f"learned - {ALL_PASS} (win gate)"]


# ------------------------------------------------------------------ the learned gate's rows

ALL_PASS_RIVAL = {ALL_PASS: 0.8, "HIGH": 0.6}  # the all-pass control is the better on validation
BRICK_RIVAL = {ALL_PASS: 0.5, "HIGH": 0.6}


def rows(rates: dict[str, float]) -> list:
    cmp = comparison(rates)
    return learned_gate_claims(cmp, pipeline_check(cmp, 1.0), title="POS", runs=5, min_effect=1.0)


def decided(claims) -> list[str]:
    """The comparisons the rows decide (``learned - ALL-PASS`` and ``learned - all-pass`` are one)."""
    return [c.tests[0].label.lower() for c in claims if c.verdict != "not testable"]


def test_with_the_all_pass_rival_one_row_is_both_claims_and_the_check_gates_only_a_win():
    passed = rows(ALL_PASS_RIVAL | {"ORIG": 0.8, GATED: 0.9})
    assert len(passed) == 1 and passed[0].tests[0].label == f"learned - {ALL_PASS}" and passed[0].verdict == "held"
    assert "also the test of 'filtering helps the probe'" in passed[0].paper
    assert passed[0].control.startswith("against the other, HIGH: learned - HIGH +30")
    # the check failed and the gate did not beat its control: not held stands, in one row
    lost = rows(ALL_PASS_RIVAL | {"ORIG": 0.9, GATED: 0.8})
    assert len(lost) == 1 and lost[0].verdict == "not held" and "not deciding" in lost[0].row()["gate"]
    # the check failed and the gate beat its control: the win over the brick-wall band is not
    # credited, and the filter's own test (trained alike) is the second row
    won = rows(ALL_PASS_RIVAL | {"ORIG": 0.9, GATED: 0.95})
    assert [c.verdict for c in won] == ["not testable", "held"]
    assert "all-pass control matches ORIG" in won[0].row()["gate"] and won[1].claim.startswith("POS: filtering helps the probe")
    assert won[1].tests[0].label == "learned - all-pass"


def test_with_the_brick_wall_rival_the_check_decides_and_the_filter_has_its_own_row():
    passed = rows(BRICK_RIVAL | {"ORIG": 0.5, GATED: 0.7})
    assert [c.tests[0].label for c in passed] == ["learned - HIGH", "learned - all-pass"]
    assert [c.verdict for c in passed] == ["held", "held"]
    failed = rows(BRICK_RIVAL | {"ORIG": 0.7, GATED: 0.55})
    assert [c.verdict for c in failed] == ["not testable", "held"]
    assert failed[0].row()["gate"].startswith("failed: pos: the all-pass control matches ORIG within 1 point")
    assert "(all-pass - ORIG -20 [" in failed[0].row()["gate"] and "] points, outside ±1)" in failed[0].row()["gate"]
    assert "its check against ORIG does not decide this row" in failed[1].control


@pytest.mark.parametrize("rival", [ALL_PASS_RIVAL, BRICK_RIVAL])
@pytest.mark.parametrize("orig", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("gated", [0.5, 0.8, 0.9])
def test_no_comparison_is_decided_in_two_rows(rival, orig, gated):
    claims = rows(rival | {"ORIG": orig, GATED: gated})
    labels = decided(claims)
    assert len(labels) == len(set(labels)) and len(claims) in (1, 2)
    # every probe here beats the majority class, so the filter's own comparison (trained alike)
    # is decided in some row, whatever the check says, unless the learned gate scored clearly
    # below HIGH, a band it can represent: an optimisation failure decides nothing
    failed = gated < 0.6
    assert ("learned - all-pass" in labels) != failed, [c.row() for c in claims]


def test_a_learned_gate_clearly_below_a_band_it_can_represent_is_an_optimisation_failure():
    lost = rows(ALL_PASS_RIVAL | {"ORIG": 0.8, GATED: 0.5})  # 0.5 < HIGH 0.6, the interval below 0
    assert [c.verdict for c in lost] == ["not testable"]
    assert "the learned gate is not clearly below HIGH, a band it can represent" in lost[0].row()["gate"]
    level = rows(ALL_PASS_RIVAL | {"ORIG": 0.8, GATED: 0.6})  # level with HIGH: no failure
    assert level[0].verdict == "not held" and "clearly below HIGH" in level[0].row()["gate"]
    # a failed optimiser can still win: the learned gate beats its all-pass control while below HIGH
    won = rows(BRICK_RIVAL | {"ORIG": 0.5, GATED: 0.56})
    assert [c.verdict for c in won] == ["not testable", "held"] and "clearly below HIGH" in won[0].row()["gate"]


def test_task_claims_are_the_rows_in_order_and_the_check_is_no_row():
    rates = BRICK_RIVAL | {"ORIG": 0.5, GATED: 0.7, SMOOTH_HIGH: 0.65}
    claims, check = task_claims(comparison(rates), title="POS", twin=TWIN_HIGH, window=512, gate_runs=5, min_effect=1.0)
    assert [c.claim.split(":")[1].strip().split(" ")[:3] for c in claims] == [
        ["the", "best", "smooth"],
        ["the", "best", "Haar"],
        ["the", "learned", "gate"],
        ["filtering", "helps", "the"],
    ]
    assert check.test.label == "all-pass - ORIG" and not any(c.tests[0].label == "all-pass - ORIG" for c in claims)


def test_section_claims_are_the_profiles_order_then_each_task_s_rows():
    rates = BRICK_RIVAL | {"ORIG": 0.5, GATED: 0.7, SMOOTH_HIGH: 0.65}
    peaks = {"topic": 0, "swda": 2, "pos": 4}
    compare = {n: comparison(rates) for n in ("pos", "swda", "topic")}
    for n, cmp in compare.items():
        cmp.task = n
    noise = np.random.default_rng(0).uniform(-0.02, 0.02, (5, 5))
    means = {n: pd.DataFrame(0.2 + 0.7 * (np.arange(5) == b) + noise, columns=BANDS) for n, b in peaks.items()}
    claims, rows, checks = section_claims(
        compare,
        means,
        dict.fromkeys(compare, TWIN_HIGH),
        titles=dict.fromkeys(compare, "T"),
        window=512,
        gate_runs=5,
        min_effect=1.0,
        spread_margin=0.2,
    )
    assert claims[0].claim.startswith("The learned profiles order the tasks") and claims[0].verdict == "held", claims[0].row()
    assert [g.name for g in claims[0].gates[1:4]] == [f"{n}: GATED probe beats the majority class" for n in ("topic", "swda", "pos")]
    assert list(rows) == list(checks) == ["pos", "swda", "topic"]
    assert claims[1:] == [c for n in ("pos", "swda", "topic") for c in rows[n]]
    assert [c.claim for c in rows["swda"]] == [
        c.claim for c in task_claims(compare["swda"], title="T", twin=TWIN_HIGH, window=512, gate_runs=5, min_effect=1.0)[0]
    ]


def test_section_claims_from_runs_set_each_task_s_runs_against_its_own_test_rows():
    peaks = {"topic": 0, "swda": 2, "pos": 4}
    noise = np.random.default_rng(0).uniform(-0.02, 0.02, (5, 5))
    means = {n: pd.DataFrame(0.2 + 0.7 * (np.arange(5) == b) + noise, columns=BANDS) for n, b in peaks.items()}
    base = BRICK_RIVAL | {"ORIG": 0.5, SMOOTH_HIGH: 0.65}
    made = {"topic": comparison(base | {GATED: 0.7}), "pos": comparison(base | {GATED: 0.8}), "swda": comparison(base | {GATED: 0.9})}
    claims, rows, checks = section_claims_from_runs(
        {n: c.runs for n, c in made.items()},
        {n: GatedRuns(pd.DataFrame(), {}, 0, band_means=means[n]) for n in made},
        dict.fromkeys(made, TWIN_HIGH),
        {n: c.test for n, c in made.items()},
        {n: c.groups for n, c in made.items()},
        seed=0,
        titles={"topic": "Topic", "pos": "POS", "swda": "DA"},
        window=512,
        gate_runs=5,
        min_effect=1.0,
        spread_margin=0.2,
    )
    # the learned profiles' order first (read from the gated runs' band means), then each task's rows in the runs' order
    assert claims[0].claim.startswith("The learned profiles order the tasks") and claims[0].verdict == "held", claims[0].row()
    assert list(rows) == list(checks) == ["topic", "pos", "swda"] and claims[1:] == [c for n in rows for c in rows[n]]
    # each task's own probes, named by the task: the learned gate beats HIGH (60 %) by 10, 20 and 30 points
    learned = {n: next(c for c in rows[n] if c.tests[0].label == "learned - HIGH") for n in rows}
    assert {n: c.tests[0].interval.effect for n, c in learned.items()} == pytest.approx({"topic": 10.0, "pos": 20.0, "swda": 30.0})
    assert rows["pos"][0].claim.startswith("POS: ") and checks["swda"].gate.name.startswith("swda: the all-pass control")
    assert all(c.tests[0].interval.units == UNITS for c in learned.values())  # the groups given: 20 units of 5 rows
