"""Notebook 02's claims (prismlib.probing.fig4_claims): each claim tests the right contrast
with the right sign and margin and carries its gates, on probes with known accuracies; a
failed gate makes a claim not testable, and a band at the majority class never wins one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.claims import Gate, Test
from prismlib.probing import (
    DC,
    DC_READING,
    MAJORITY,
    Features,
    ProbeComparison,
    ProbeRuns,
    best_band_claim,
    dc_claim,
    section3_claims,
    task_phrase,
)
from prismlib.stats import Interval

BANDS = ("LOW", "MID", "HIGH")
UNITS = 20  # test units of 5 rows each: above MIN_UNITS


def comparison(rates: dict[str, float], units: int = UNITS, task: str = "") -> ProbeComparison:
    """Probes whose conditions are right on a share ``rates[c]`` of the test rows; the rows
    right are nested (a condition with a lower rate is right on a subset of a higher one's),
    so two equal rates are the same rows and a difference is the rates' difference."""
    n = units * 5
    order = np.random.default_rng(0).permutation(n)
    correct = {c: (order < round(rate * n))[None] for c, rate in rates.items()}
    idx = torch.arange(n)
    test = Features({}, torch.zeros(n, dtype=torch.long), torch.ones(n), idx // 5, idx, idx % 5)
    return ProbeComparison(ProbeRuns(pd.DataFrame(), correct, 0), test, (idx // 5).numpy(), n_boot=300, task=task)


def summary(acc: dict[str, float], majority_high: float = 10.0) -> pd.DataFrame:
    rows = [{"condition": c, "accuracy": a, "ci_low": a - 1, "ci_high": a + 1} for c, a in acc.items()]
    return pd.DataFrame(rows + [{"condition": MAJORITY, "accuracy": majority_high - 1, "ci_low": 0.0, "ci_high": majority_high}])


def test_best_band_claim_beats_the_best_other_band_and_is_credited_only_above_the_majority_class():
    rates = {"ORIG": 0.9, MAJORITY: 0.3, "LOW": 0.8, "MID": 0.5, "HIGH": 0.35}
    cmp = comparison(rates)
    table = summary({c: 100 * r for c, r in rates.items() if c != MAJORITY})
    gate = Gate("ORIG probe beats the majority class", True)
    claim = best_band_claim(cmp, table, "LOW", BANDS, task="topic", paper="LOW best", min_effect=1.0, gate=gate)
    assert claim.verdict == "held" and claim.tests[0].label == "LOW - MID" and claim.tests[0].threshold == 1.0
    assert claim.claim == "LOW is the best band for topic (LOW 80.0 vs the best other band, MID 50.0; our best: LOW)"
    assert claim.gates[0] is gate and claim.unit == "points" and claim.notebook == "02"
    lost = best_band_claim(cmp, table, "HIGH", BANDS, task="topic", paper="HIGH best", min_effect=1.0, gate=gate)
    assert lost.verdict == "not held" and lost.tests[0].label == "HIGH - LOW"
    # when no band beats the majority class, which band is best is noise
    low_at_majority = comparison({"ORIG": 0.9, MAJORITY: 0.5, "LOW": 0.5, "MID": 0.1, "HIGH": 0.1})
    t2 = summary({"ORIG": 90, "LOW": 50, "MID": 10, "HIGH": 10}, majority_high=55)
    claim = best_band_claim(low_at_majority, t2, "LOW", BANDS, task="topic", paper="", min_effect=1.0, gate=gate)
    assert claim.verdict == "not testable" and "some band beats the majority class (none of LOW, MID, HIGH)" in claim.row()["gate"]
    assert [g.name for g in claim.win_gates] == ["LOW probe beats the majority class"] and not claim.win_gates[0].passed
    failed = best_band_claim(cmp, table, "LOW", BANDS, task="topic", paper="", min_effect=1.0, gate=Gate("ORIG", False))
    assert failed.verdict == "not testable"


PAPER_PATTERN = {  # task -> rates: every claim of the paper (and our DC control) holds
    "topic": {"ORIG": 0.5, "LOW": 0.9, DC: 0.6, "MID-LOW": 0.3, "MID": 0.25, "MID-HIGH": 0.2, "HIGH": 0.15, MAJORITY: 0.05},
    "pos": {"ORIG": 0.95, "LOW": 0.2, "MID-LOW": 0.3, "MID": 0.35, "MID-HIGH": 0.5, "HIGH": 0.8, MAJORITY: 0.1},
    "swda": {"ORIG": 0.6, "LOW": 0.3, DC: 0.2, "MID-LOW": 0.4, "MID": 0.6, "MID-HIGH": 0.45, "HIGH": 0.35, MAJORITY: 0.1},
    "mlm 1-500": {"ORIG": 0.7, "LOW": 0.2, "MID-LOW": 0.25, "MID": 0.3, "MID-HIGH": 0.35, "HIGH": 0.5, MAJORITY: 0.05},
}


def comparisons(rates: dict[str, dict[str, float]]) -> dict[str, ProbeComparison]:
    return {task: comparison(r, task=task) for task, r in rates.items()}


def table(compare: dict[str, ProbeComparison]) -> pd.DataFrame:
    """The probes' summary as notebook 02's ``fig4`` has it (the columns the claims read)."""
    return pd.DataFrame(
        [{"task": t, "condition": c, "accuracy": cmp.accuracy(c).effect} for t, cmp in compare.items() for c in cmp.runs.correct]
    )


def specialisation(effect: float = 0.6, margin: float = 0.25) -> tuple[Test, ...]:
    """Six tests as :func:`prismlib.probing.specialisation_tests` gives them (each band's own task minus another)."""
    pairs = [("HIGH", "pos", "swda"), ("HIGH", "pos", "topic"), ("MID", "swda", "pos"), ("MID", "swda", "topic"),
             ("LOW", "topic", "pos"), ("LOW", "topic", "swda")]  # fmt: skip
    iv = Interval(effect, effect - 0.1, effect + 0.1, UNITS)
    return tuple(Test.superiority(iv, margin, label=f"{b}: {own} - {other}") for b, own, other in pairs)


def claims_of(rates=PAPER_PATTERN, tests=None, **changes):
    compare = comparisons(rates | changes)
    return section3_claims(compare, table(compare), tests or specialisation(), min_effect=1.0, margin=5.0)


@pytest.fixture(scope="module")
def paper():
    return claims_of()


def test_every_claim_of_notebook_02_in_its_order(paper):
    assert [c.claim.split(" (")[0] for c in paper] == [
        "LOW is the best band for topic",
        "LOW beats ORIG for topic by at least 1 point",
        "LOW's advantage for topic survives the DC-only control: LOW beats the window mean alone by at least 1 point",
        "HIGH is the best band for part of speech",
        "HIGH stays below ORIG for POS by at least 1 point",
        "MID is the best band for dialog acts",
        "MID is comparable to ORIG for dialog acts, within ±5 points",
        "LOW's advantage for dialog acts survives the DC-only control: LOW beats the window mean alone by at least 1 point",
        "HIGH is the best band for masked LM, target ranks 1-500",
        "MLM is local like POS for targets of rank 1-500: HIGH beats LOW, and stays below ORIG, each by at least 1 point",
        "Each band does well on its own task and poorly on the others: on each task's scale",
    ]
    assert [[t.describe() for t in c.tests] for c in paper[:10]] == [
        ["LOW - MID-LOW > 1"], ["LOW - ORIG > 1"], ["LOW - DC > 1"], ["HIGH - MID-HIGH > 1"], ["HIGH - ORIG < -1"],
        ["MID - MID-HIGH > 1"], ["|MID - ORIG| < 5"], ["LOW - DC > 1"], ["HIGH - MID-HIGH > 1"], ["HIGH - LOW > 1", "HIGH - ORIG < -1"],
    ]  # fmt: skip
    assert all(c.notebook == "02" and c.unit == "points" for c in paper[:-1]) and paper[-1].unit == "x (ORIG - majority)"
    assert "LOW 90.0 vs ORIG 50.0" in paper[1].claim and "(LOW 30.0 vs DC 20.0, ORIG 60.0)" in paper[7].claim
    assert "(HIGH 50.0, LOW 20.0, ORIG 70.0)" in paper[9].claim
    # every MLM bucket adds its two rows, in the order of the comparisons
    two = claims_of(**{"mlm 501+": PAPER_PATTERN["mlm 1-500"]})
    assert len(two) == len(paper) + 2 and "for targets of rank 501+" in two[11].claim


def test_the_papers_pattern_holds_every_claim(paper):
    assert [c.verdict for c in paper] == ["held"] * len(paper)
    assert paper[1].control == f"DC-only 60.0: {DC_READING['held']} (row below)"


def test_a_task_whose_orig_probe_is_at_the_majority_class_makes_its_claims_not_testable(paper):
    pos = PAPER_PATTERN["pos"] | {MAJORITY: 0.95}
    claims = claims_of(pos=pos)
    verdicts = [c.verdict for c in claims]
    assert verdicts[3:5] == ["not testable"] * 2  # HIGH best, HIGH below ORIG: the pos rows
    assert verdicts[-1] == "not testable"  # the abstract's claim reads every task's scale
    assert "pos: ORIG probe beats the majority class" in claims[4].row()["gate"]
    assert verdicts[:3] + verdicts[5:-1] == ["held"] * 8  # the other tasks' rows are untouched
    assert [g.name for g in paper[-1].gates] == [f"{t}: ORIG probe beats the majority class" for t in ("pos", "swda", "topic")]


def test_a_band_at_the_majority_class_loses_but_never_wins():
    # topic's LOW at the majority class, far below DC and ORIG, but DC and ORIG below it too
    topic = {"ORIG": 0.5, "LOW": 0.3, DC: 0.1, "MID-LOW": 0.1, "MID": 0.1, "MID-HIGH": 0.1, "HIGH": 0.1, MAJORITY: 0.3}
    claims = claims_of(topic=topic)
    low_dc = claims[2]
    assert low_dc.tests[0].verdict == "held"  # LOW - DC = 20 points, clear of 1
    assert low_dc.verdict == "not testable" and [g.name for g in low_dc.win_gates] == ["topic: LOW probe beats the majority class"]
    assert claims[0].verdict == "not testable"  # no band beats the majority class: which is best is noise
    assert claims[1].verdict == "not held"  # but LOW can lose to ORIG


def test_the_dc_control_reads_the_dc_claims_verdict():
    same = PAPER_PATTERN["topic"] | {DC: 0.9}  # the window mean alone matches LOW
    claims = claims_of(topic=same)
    assert claims[2].verdict == "not held" and claims[1].verdict == "held"
    assert claims[1].control == "DC-only 90.0: the window mean alone matches or beats LOW (row below)"
    assert dc_claim(comparison(same, task="topic"), "topic", 1.0).row() == claims[2].row()
    missing = claims_of(topic=PAPER_PATTERN["topic"] | {MAJORITY: 0.6})  # topic's ORIG gate fails
    assert missing[1].control.endswith(": not testable (row below)")


def test_comparable_is_an_equivalence_test_and_below_orig_a_negative_superiority():
    claims = claims_of(swda=PAPER_PATTERN["swda"] | {"MID": 0.45})
    comparable = claims[6]
    assert comparable.tests[0].kind == "equivalence" and comparable.tests[0].threshold == 5.0
    assert comparable.verdict == "not held"  # 15 points apart
    above = claims_of(pos=PAPER_PATTERN["pos"] | {"HIGH": 0.95, "MID-HIGH": 0.9})[4]  # HIGH equals ORIG
    assert (above.tests[0].sign, above.tests[0].threshold) == (-1, -1.0) and above.verdict == "not held"


def test_mlm_is_local_only_when_high_beats_low_and_stays_below_orig():
    flat = claims_of(**{"mlm 1-500": PAPER_PATTERN["mlm 1-500"] | {"HIGH": 0.7, "MID-HIGH": 0.6}})[9]
    assert [t.verdict for t in flat.tests] == ["held", "not held"] and flat.verdict == "not held"
    assert [g.name for g in flat.win_gates] == ["mlm 1-500: HIGH probe beats the majority class"]


def test_the_abstracts_claim_carries_the_specialisation_tests_and_quotes_their_margin():
    tests = specialisation(effect=0.3, margin=0.1)
    claim = claims_of(tests=tests)[-1]
    assert claim.tests == tests and claim.verdict == "held"
    assert "score at least 0.1 higher on part of speech, dialog acts and topic respectively" in claim.claim
    assert [g.name for g in claim.win_gates] == [
        "pos: HIGH probe beats the majority class",
        "swda: MID probe beats the majority class",
        "topic: LOW probe beats the majority class",
    ]
    assert claims_of(tests=specialisation(effect=0.1))[-1].verdict == "not held"  # [0.0, 0.2] short of 0.25


def test_task_phrases():
    assert [task_phrase(t) for t in ("pos", "swda", "topic", "mlm 1-500", "mlm 501+")] == [
        "part of speech", "dialog acts", "topic", "masked LM, target ranks 1-500", "masked LM, target ranks 501+",
    ]  # fmt: skip
