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
    MASKED_LM_PREMISE,
    PROFILE_GAP,
    Features,
    ProbeComparison,
    ProbeRuns,
    best_band_claim,
    dc_claim,
    masked_lm_claims,
    masked_lm_gate,
    masked_lm_premise,
    profile_distances,
    section3_claims,
    task_phrase,
)
from prismlib.stats import Interval

BANDS = ("LOW", "MID", "HIGH")
BANDS5 = ("LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
UNITS = 20  # test units of 5 rows each: above MIN_UNITS


def comparison(rates: dict[str, float], units: int = UNITS, task: str = "", val: dict[str, float] | None = None) -> ProbeComparison:
    """Probes whose conditions are right on a share ``rates[c]`` of the test rows; the rows
    right are nested (a condition with a lower rate is right on a subset of a higher one's),
    so two equal rates are the same rows and a difference is the rates' difference. Each
    condition's validation accuracy is ``val[c]`` (default: its test rate)."""
    n = units * 5
    order = np.random.default_rng(0).permutation(n)
    correct = {c: (order < round(rate * n))[None] for c, rate in rates.items()}
    val = rates | (val or {})
    table = pd.DataFrame([{"condition": c, "run": 0, "accuracy": r, "val_accuracy": val[c]} for c, r in rates.items() if c != MAJORITY])
    idx = torch.arange(n)
    test = Features({}, torch.zeros(n, dtype=torch.long), torch.ones(n), idx // 5, idx, idx % 5)
    return ProbeComparison(ProbeRuns(table, correct, 0), test, (idx // 5).numpy(), n_boot=300, task=task)


def test_best_band_claim_beats_the_best_other_band_and_is_credited_only_above_the_majority_class():
    rates = {"ORIG": 0.9, MAJORITY: 0.3, "LOW": 0.8, "MID": 0.5, "HIGH": 0.35}
    cmp = comparison(rates)
    gate = Gate("ORIG probe beats the majority class", True)
    claim = best_band_claim(cmp, "LOW", BANDS, task="topic", paper="LOW best", min_effect=1.0, gates=(gate,))
    assert claim.verdict == "held" and claim.tests[0].label == "LOW - MID" and claim.tests[0].threshold == 1.0
    assert (
        claim.claim
        == "LOW is the best band for topic (LOW 80.0 vs MID 50.0, the best other band on validation; our best on validation: LOW)"
    )
    assert claim.gates[0] is gate and claim.unit == "points" and claim.notebook == "02"
    lost = best_band_claim(cmp, "HIGH", BANDS, task="topic", paper="HIGH best", min_effect=1.0, gates=(gate,))
    assert lost.verdict == "not held" and lost.tests[0].label == "HIGH - LOW"
    # when no band beats the majority class, which band is best is noise
    low_at_majority = comparison({"ORIG": 0.9, MAJORITY: 0.5, "LOW": 0.5, "MID": 0.1, "HIGH": 0.1})
    claim = best_band_claim(low_at_majority, "LOW", BANDS, task="topic", paper="", min_effect=1.0, gates=(gate,))
    assert claim.verdict == "not testable" and "some band beats the majority class (none of LOW, MID, HIGH)" in claim.row()["gate"]
    assert [g.name for g in claim.win_gates] == ["LOW probe beats the majority class"] and not claim.win_gates[0].passed
    failed = best_band_claim(cmp, "LOW", BANDS, task="topic", paper="", min_effect=1.0, gates=(Gate("ORIG", False),))
    assert failed.verdict == "not testable"


def test_the_best_bands_rival_and_ours_are_chosen_on_validation_and_the_test_set_decides_only_the_claim():
    # on test MID (50) is the best other band, on validation HIGH; our best on validation is HIGH too
    cmp = comparison({"ORIG": 0.9, MAJORITY: 0.1, "LOW": 0.8, "MID": 0.5, "HIGH": 0.35}, val={"LOW": 0.6, "MID": 0.3, "HIGH": 0.7})
    claim = best_band_claim(cmp, "LOW", BANDS, task="topic", paper="", min_effect=1.0, gates=())
    assert claim.tests[0].label == "LOW - HIGH" and claim.tests[0].interval.effect == pytest.approx(45.0)
    assert (
        claim.claim
        == "LOW is the best band for topic (LOW 80.0 vs HIGH 35.0, the best other band on validation; our best on validation: HIGH)"
    )
    assert claim.verdict == "held"  # chosen on validation, LOW still beats it on test


PAPER_PATTERN = {  # task -> rates: every claim of the paper (and our DC control) holds
    "topic": {"ORIG": 0.5, "LOW": 0.9, DC: 0.6, "MID-LOW": 0.3, "MID": 0.25, "MID-HIGH": 0.2, "HIGH": 0.15, MAJORITY: 0.05},
    "pos": {"ORIG": 0.95, "LOW": 0.2, "MID-LOW": 0.3, "MID": 0.35, "MID-HIGH": 0.5, "HIGH": 0.8, MAJORITY: 0.1},
    "swda": {"ORIG": 0.6, "LOW": 0.3, DC: 0.2, "MID-LOW": 0.4, "MID": 0.6, "MID-HIGH": 0.45, "HIGH": 0.35, MAJORITY: 0.1},
    "mlm 1-500": {"ORIG": 0.7, "LOW": 0.12, "MID-LOW": 0.2, "MID": 0.25, "MID-HIGH": 0.35, "HIGH": 0.55, MAJORITY: 0.05},
}


def comparisons(rates: dict[str, dict[str, float]]) -> dict[str, ProbeComparison]:
    return {task: comparison(r, task=task) for task, r in rates.items()}


def specialisation(score: float = 0.8, midpoint: float = 0.5) -> tuple[Test, ...]:
    """Nine tests as :func:`prismlib.probing.specialisation_tests` gives them: each band's score at
    home ``score``, elsewhere ``1 - score``, each interval +-0.1."""
    tests = []
    for band, home in (("HIGH", "pos"), ("MID", "swda"), ("LOW", "topic")):
        for task in [home, *(t for t in ("pos", "swda", "topic") if t != home)]:
            effect = score if task == home else 1 - score
            tests.append(
                Test(Interval(effect, effect - 0.1, effect + 0.1, UNITS), 1 if task == home else -1, midpoint, f"{band} on {task}")
            )
    return tuple(tests)


def claims_of(rates=PAPER_PATTERN, tests=None, encoder="bert-base-cased", **changes):
    compare = comparisons(rates | changes)
    mlm = masked_lm_claims(compare, min_effect=1.0, premise=masked_lm_premise(encoder))
    return section3_claims(compare, tests or specialisation(), min_effect=1.0, margin=5.0, masked_lm=mlm)


@pytest.fixture(scope="module")
def paper():
    return claims_of()


PROFILE_LABEL = "min(d(MLM, swda), d(MLM, topic)) - d(MLM, pos)"


def test_every_claim_of_notebook_02_in_its_order(paper):
    assert [c.claim.split(" (")[0] for c in paper] == [
        "LOW is the best band for topic",
        "LOW beats ORIG for topic by at least 1 point",
        "LOW carries more than the window mean alone for topic: LOW beats DC",
        "HIGH is the best band for part of speech",
        "HIGH stays below ORIG for POS by at least 1 point",
        "MID is the best band for dialog acts",
        "MID is comparable to ORIG for dialog acts, within ±5 points",
        "LOW carries more than the window mean alone for dialog acts: LOW beats DC",
        "HIGH is the best band for masked LM, target ranks 1-500",
        "MLM's band profile is nearest part of speech's for targets of rank 1-500: on each task's scale, its distance to part of speech",
        "Each band does well on its own task and poorly on the others: on each task's scale",
    ]
    assert [[t.describe() for t in c.tests] for c in paper[:10]] == [
        ["LOW - MID-LOW > 1"], ["LOW - ORIG > 1"], ["LOW - DC > 1"], ["HIGH - MID-HIGH > 1"], ["HIGH - ORIG < -1"],
        ["MID - MID-HIGH > 1"], ["|MID - ORIG| < 5"], ["LOW - DC > 1"], ["HIGH - MID-HIGH > 1"], [f"{PROFILE_LABEL} > {PROFILE_GAP:g}"],
    ]  # fmt: skip
    assert all(c.notebook == "02" and c.unit == "points" for c in paper[:9]) and paper[9].unit == "score distance"
    assert paper[-1].unit == "score (0 majority, 1 ORIG)"
    assert "LOW 90.0 vs ORIG 50.0" in paper[1].claim and "(LOW 30.0 vs DC 20.0, ORIG 60.0)" in paper[7].claim
    # the profile row quotes the distances it compares, computed from the probes
    d = profile_distances(
        comparison(PAPER_PATTERN["mlm 1-500"]), comparisons({t: PAPER_PATTERN[t] for t in ("pos", "swda", "topic")}), BANDS5
    )
    assert paper[9].claim.endswith(
        f"part of speech ({d['pos']:.2f}) is below its distances to dialog acts ({d['swda']:.2f}) and to topic ({d['topic']:.2f})"
    )
    assert paper[9].paper.startswith("The probing results for masked language modeling are most similar to part of speech tagging")
    # the DC rows say what they test, not why the encoder might make the mean suffice
    assert "mean-pooled" not in paper[2].row()["paper"] + paper[2].claim and "carry more than DC" in paper[2].paper
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
    assert verdicts[9:] == ["not testable"] * 2  # MLM's profile against POS's, and the abstract's claim read POS's scale
    assert "pos: ORIG probe beats the majority class" in claims[4].row()["gate"]
    assert "pos: ORIG probe beats the majority class" in claims[9].row()["gate"]
    assert verdicts[:3] + verdicts[5:9] == ["held"] * 7  # the other tasks' rows are untouched
    assert [g.name for g in paper[-1].gates] == [f"{t}: ORIG probe beats the majority class" for t in ("pos", "swda", "topic")]
    assert [g.name for g in paper[9].gates] == [
        "mlm 1-500: ORIG probe beats the majority class",
        MASKED_LM_PREMISE,
        *(f"{t}: ORIG probe beats the majority class" for t in ("pos", "swda", "topic")),
    ]


def test_the_mlm_rows_rest_on_masked_lm_pretraining_not_testable_on_minilm(paper):
    minilm = claims_of(encoder="minilm")
    mlm_rows = [8, 9]
    assert [c.verdict for c in minilm] == ["not testable" if i in mlm_rows else "held" for i in range(len(minilm))]
    for i in mlm_rows:
        gate = minilm[i].row()["gate"]
        assert gate.startswith(f"failed: {MASKED_LM_PREMISE} (all-MiniLM-L6-v2 is a 6-layer sentence encoder")
        # the run's own numbers, from the bucket's probes: ORIG 70%, majority class 5%
        assert gate.endswith("measured: the ORIG masked-LM probe (masked LM, target ranks 1-500) 70.0% vs the majority class 5.0%)")
        assert minilm[i].tests == paper[i].tests  # the measurement stands; only the verdict is gated
    assert all(MASKED_LM_PREMISE in c.row()["gate"] for c in paper[8:10])  # passed on bert-base-cased, and named
    gate = masked_lm_gate(comparison(PAPER_PATTERN["mlm 1-500"] | {"ORIG": 0.3}), masked_lm_premise("minilm"))
    assert not gate.passed and gate.detail.endswith("measured: the ORIG masked-LM probe 30.0% vs the majority class 5.0%")


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


def test_mlm_with_topics_band_profile_is_not_nearest_part_of_speech():
    like_topic = claims_of(**{"mlm 1-500": PAPER_PATTERN["topic"]})[9]
    assert like_topic.tests[0].interval.high < 0 and like_topic.verdict == "not held"
    like_pos = claims_of(**{"mlm 1-500": PAPER_PATTERN["pos"]})[9]
    assert like_pos.tests[0].interval.low > PROFILE_GAP and like_pos.verdict == "held"
    assert like_pos.tests[0].threshold == PROFILE_GAP > 0  # "most similar" needs a stated gap, not just the sign
    assert like_pos.win_gates == ()  # no band is credited: the profile as a whole is compared


def test_the_abstracts_claim_carries_the_nine_specialisation_tests_and_quotes_their_midpoint():
    tests = specialisation(midpoint=0.6)
    claim = claims_of(tests=tests)[-1]
    assert claim.tests == tests and claim.verdict == "held"
    assert (
        "HIGH, MID, LOW score above 0.6 (the scale's midpoint, a prior) on part of speech, dialog acts, topic respectively, "
        "and below 0.6 on each other task (the weakest of 9 tests reported)" in claim.claim
    )
    assert [g.name for g in claim.win_gates] == [
        "pos: HIGH probe beats the majority class",
        "swda: MID probe beats the majority class",
        "topic: LOW probe beats the majority class",
    ]
    assert claims_of(tests=specialisation(score=0.55))[-1].verdict == "inside noise"  # [0.35, 0.55] and [0.45, 0.65] hold 0.5
    assert claims_of(tests=specialisation(score=0.3))[-1].verdict == "not held"  # at home [0.2, 0.4], short of 0.5


def test_task_phrases():
    assert [task_phrase(t) for t in ("pos", "swda", "topic", "mlm 1-500", "mlm 501+")] == [
        "part of speech", "dialog acts", "topic", "masked LM, target ranks 1-500", "masked LM, target ranks 501+",
    ]  # fmt: skip


def test_the_mlm_rows_of_another_encoder_carry_its_measured_premise_and_name_it(paper):
    """The cpu profile: MiniLM's rows, the MLM rows from the BERT pretrained here, its premise
    measured (a gate passed or failed by its gain over unigram), the rows named by that model."""
    compare = comparisons(PAPER_PATTERN)
    measured = Gate(MASKED_LM_PREMISE, True, "the 4x256 BERT pretrained here gains +2.291 nats per masked token over the unigram model")
    mlm = masked_lm_claims(compare, min_effect=1.0, premise=measured, model="BERT 4x256 pretrained here (MLM)")
    assert [c.model for c in mlm] == ["BERT 4x256 pretrained here (MLM)"] * 2 and [c.verdict for c in mlm] == ["held"] * 2
    premise = next(g for g in mlm[0].gates if g.name == MASKED_LM_PREMISE)
    assert premise.passed and premise.detail == measured.detail + (
        "; measured: the ORIG masked-LM probe (masked LM, target ranks 1-500) 70.0% vs the majority class 5.0%"
    )
    assert [c.tests for c in mlm] == [c.tests for c in paper[8:10]]
    short = Gate(MASKED_LM_PREMISE, False, "gains +1.2 nats, gate 1.50")
    assert [c.verdict for c in masked_lm_claims(compare, min_effect=1.0, premise=short)] == ["not testable"] * 2
    assert [c.model for c in masked_lm_claims(compare, min_effect=1.0, premise=short)] == ["", ""]  # the notebook's model
    # MiniLM's study without buckets: no MLM rows of its own; the given rows stand before the abstract's
    without = {t: compare[t] for t in ("pos", "swda", "topic")}
    rows = section3_claims(without, specialisation(), min_effect=1.0, margin=5.0, masked_lm=mlm)
    assert [c.claim for c in rows] == [c.claim for c in paper] and rows[8:10] == mlm
    assert len(section3_claims(without, specialisation(), min_effect=1.0, margin=5.0)) == len(paper) - 2
