"""Notebook 03's claims (prismlib.prism.table1_claims): each claim tests the right
contrast with the right sign and margin, beside it the same test over the training seeds,
carries its gates (the seeds gate among them), and quotes the paper's numbers as the notebook
printed them; the paper's numbers as the notebook's tables read them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from prismlib.claims import Gate
from prismlib.prism import EARLIER, Section4Gates, seeded, trained_weights
from prismlib.prism.table1_claims import (
    APPENDIX_B_PAPER,
    MODEL_NAMES,
    TABLE1_PAPER,
    UNIT_NAMES,
    b3_margin,
    published_b2,
    published_b3,
    section4_claims,
)
from prismlib.probing import MAJORITY
from prismlib.profiles import get_profile
from prismlib.stats import Interval

TASKS = ("topic", "swda", "pos")
ACC = {  # condition -> accuracy (%), the same on every task (distinct, so each contrast has its own effect)
    MAJORITY: 10.0, "original": 40.0, "prism_untrained": 43.0, "baseline": 45.0, "baseline_prism_untrained": 47.5,
    "prism": 52.0, "prism-every": 44.25, "prism LOW sector": 30.5, "prism HIGH sector": 21.0,
    "prism_untrained LOW sector": 26.0, "prism_untrained HIGH sector": 18.0,
}  # fmt: skip
HALF_WIDTH = 2.0
SEED_HALF_WIDTH = 0.5


@dataclass
class FakeComparison:
    """What the claims read of a SeedComparison: accuracies, paired differences of the
    seed-mean predictions (the effect +- HALF_WIDTH over 20 units) and over the seeds (+-
    ``seed_half``, ``n_seeds`` of every trained condition), majority-class gates."""

    acc: dict[str, float]
    units: int = 20
    n_seeds: int = 3
    seed_half: float = SEED_HALF_WIDTH
    runs: Any = field(init=False)

    def __post_init__(self) -> None:
        self.runs = type("Runs", (), {"correct": dict.fromkeys(self.acc)})()

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.n_seeds))

    @property
    def counts(self) -> dict[str, int]:
        return {c: self.n_seeds if trained_weights(c) else 0 for c in self.acc}

    def seed_diff(self, a: str, b: str) -> Interval | None:
        d = self.acc[a] - self.acc[b]
        return Interval(d, d - self.seed_half, d + self.seed_half, self.n_seeds, resampled="runs") if self.n_seeds > 1 else None

    def accuracy(self, c: str) -> Interval:
        return Interval(self.acc[c], self.acc[c] - 1, self.acc[c] + 1, self.units)

    def diff(self, a: str, b: str) -> Interval:
        d = self.acc[a] - self.acc[b]
        return Interval(d, d - HALF_WIDTH, d + HALF_WIDTH, self.units)

    def gate(self, c: str) -> Gate:
        return Gate(f"{c} probe beats the majority class", self.acc[c] > self.acc[MAJORITY])

    def with_mean(self, name: str, parts: tuple[str, ...]) -> FakeComparison:
        if not all(p in self.acc for p in parts):
            return self
        return replace(self, acc=self.acc | {name: sum(self.acc[p] for p in parts) / len(parts)})


@dataclass
class FakeSanity:
    intervals: dict[str, Interval] = field(
        default_factory=lambda: {seeded(a, s): Interval(1.0, 0.5, 1.5, 30) for a in ("baseline", "prism", "prism-every") for s in range(3)}
    )
    capped: tuple[str, ...] = ()

    def gate(self, arm: str, model: str) -> Gate:
        return Gate(f"{model}'s MLM head beats a unigram model", True)

    def converged_gate(self, arm: str, model: str) -> Gate:
        return Gate(f"{model} converged", arm not in self.capped, "cap" if arm in self.capped else "rule")

    def improved_gate(self, arm: str, model: str) -> Gate:
        return Gate(f"{model} improved", True)


def accuracies(earlier: bool = True) -> dict[str, float]:
    """ACC, with every trained condition at the earlier checkpoint 0.25 points lower."""
    trained = [c for c in ACC if c.split(" ")[0] in ("baseline", "prism", "prism-every", "baseline_prism_untrained")]
    return ACC | ({c + EARLIER: ACC[c] - 0.25 for c in trained} if earlier else {})


def gates(earlier: bool = True, sanity: FakeSanity | None = None, **seeds: Any) -> Section4Gates:
    compare = {t: FakeComparison(accuracies(earlier), **seeds) for t in TASKS}
    return Section4Gates(compare, sanity or FakeSanity(), MODEL_NAMES, UNIT_NAMES)  # type: ignore[arg-type]


SETTINGS = get_profile("cpu").prism.updated(every_layer=True, recipe="staged", train_layers=2)


@pytest.fixture(scope="module")
def claims():
    return section4_claims(gates(), SETTINGS, min_effect=1.0, no_harm=2.0, encoder="bert-base-cased")


def rows(claims, prefix):
    return [c for c in claims if c.claim.startswith(prefix)]


def test_every_claim_in_the_notebooks_order(claims):
    kinds = [c.claim.split(" ")[0] for c in claims]
    assert kinds == (
        ["BERT"] * 4 + ["control:"] * 3 + ["decomposition"] * 2 + ["B.1:"] * 2 + ["B.1"] * 2 + ["B.2:"] * 3 + ["B.3,"] * 3
    )  # fmt: skip
    assert [c.tests[0].label for c in claims] == (
        ["prism - baseline"] * 3 + ["prism - baseline on topic"] + ["prism - baseline_prism_untrained"] * 3
        + ["prism - prism_untrained"] * 2 + ["LOW sector - (full + majority) / 2", "HIGH sector - (full + majority) / 2"]
        + ["HIGH sector - untrained HIGH sector", "LOW sector - untrained LOW sector"]
        + ["baseline - original"] * 3 + ["every - last"] * 3
    )  # fmt: skip
    assert all(c.notebook == "03" and c.unit == "points" for c in claims)
    assert [len(c.tests) for c in claims] == [2] * 3 + [6] + [2] * 5 + [4] * 2 + [2] * 8
    no_b3 = section4_claims(gates(), replace(SETTINGS, every_layer=False), min_effect=1.0, no_harm=2.0)
    assert [c.claim for c in no_b3] == [c.claim for c in claims[:-3]]


def test_table_1_beats_and_roughly_keeps(claims):
    topic, swda, pos = claims[:3]
    for c in (topic, swda):
        t = c.tests[0]
        assert (t.sign, t.threshold, t.kind, t.interval.effect) == (1, 1.0, "directional", ACC["prism"] - ACC["baseline"])
        assert "by at least 1 point (ours 52.0% vs 45.0%)" in c.claim
        # 47.5 - 45.0 = 2.5 +- 2 holds the 1-point margin (prism - baseline, 7 +- 2, would hold)
        assert c.control.startswith("the filter alone on the same BERT: inside noise (47.5% with an untrained prism added vs 45.0%)")
    assert topic.paper == "Table 1: topic 51.01 (BERT + Prism) vs 32.21 (BERT), +18.8 points; 3 trials"
    assert swda.paper == "Table 1: dialog acts 54.02 (BERT + Prism) vs 47.09 (BERT), +6.9 points; 3 trials"
    t = pos.tests[0]
    assert (t.sign, t.threshold) == (1, -3.0) and t.interval.effect == ACC["prism"] - ACC["baseline"]
    assert pos.paper == "Table 1: POS 94.41 (BERT + Prism) vs 95.86 (BERT), -1.5 points ('maintaining high accuracy')"
    assert pos.claim == "BERT + Prism roughly keeps POS: at most 3 points below BERT (ours 52.0% vs 45.0%)"


def test_the_control_rows_isolate_training_with_the_prism_on_every_task(claims):
    controls = rows(claims, "control:")
    assert [c.gates[0].name for c in controls] == ["prism probe beats the majority class"] * 3
    for c in controls:
        t = c.tests[0]
        assert (t.sign, t.threshold, t.interval.effect) == (1, 1.0, ACC["prism"] - ACC["baseline_prism_untrained"])
        assert c.gates[1].name == "baseline_prism_untrained probe beats the majority class"
        assert "(ours 52.0% vs 47.5%)" in c.claim and not c.descriptive
        assert c.paper.startswith("not in the paper: isolates training *with* the prism")
        assert any(g.name.startswith("BERT converged") for g in c.gates)  # reads the baseline's weights
    assert "on part of speech" in controls[2].claim and "what training with the prism does there" in controls[2].paper


def test_the_mixed_control_is_a_decomposition_out_of_the_counts(claims):
    mixed = rows(claims, "decomposition")
    assert len(mixed) == 2 and all(c.descriptive and c.verdict == "not testable" for c in mixed)
    for c in mixed:
        t = c.tests[0]
        assert t.interval.effect == ACC["prism"] - ACC["prism_untrained"]  # 9.0 = 4.5 + 4.5
        # continued training (the same untrained filter) + training with the prism
        assert "= continued training +4.5 [+2.5, +6.5] + training with the prism +4.5 [+2.5, +6.5] points" in c.claim
        assert c.row()["gate"].startswith("no verdict: a decomposition, not a claim")
    # the untrained prism on the original encoder reads no trained weights: only BERT + Prism's gates
    names = [g.name for g in mixed[0].gates]
    assert "BERT + Prism converged" in names and not any(n.startswith("BERT converged") for n in names)


def test_comparably_or_better_is_non_inferiority_on_every_task(claims):
    row = claims[3]
    assert [(t.sign, t.threshold, t.interval.effect) for t in row.tests[::2]] == [(1, -3.0, 7.0)] * 3
    assert [t.label for t in row.tests[::2]] == [f"prism - baseline on {t}" for t in TASKS]
    assert row.paper.startswith("Table 1's caption: 'perform comparably or better than BERT across different tasks'")
    assert row.verdict == "held"
    g = gates()
    g.compare["swda"].acc = g.compare["swda"].acc | {"prism": 40.0, "prism" + EARLIER: 40.0}  # 5 +- 2 points below BERT
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[3].verdict == "not held"
    g.compare["swda"].acc = g.compare["swda"].acc | {"prism": 43.0, "prism" + EARLIER: 43.0}  # -2 +- 2 holds -3
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[3].verdict == "inside noise"


def test_b1_largely_but_not_entirely_against_half_the_gain_and_the_full_model(claims):
    low, high = rows(claims, "B.1:")
    for c, band in ((low, "LOW"), (high, "HIGH")):
        largely, _, entirely, _ = c.tests
        sector = ACC[f"prism {band} sector"]
        assert (largely.sign, largely.threshold) == (1, 0.0)
        assert largely.interval.effect == sector - (ACC["prism"] + ACC[MAJORITY]) / 2
        assert (entirely.sign, entirely.threshold, entirely.interval.effect) == (1, 1.0, ACC["prism"] - sector)
        assert [g.name for g in c.gates[:2]] == [
            "prism probe beats the majority class",
            f"prism {band} sector probe beats the majority class",
        ]
        assert sum(g.name.startswith("stable: ") for g in c.gates) == 2
    assert low.paper == (
        "App. B.1: topic, LOW sector 45.1 of the full model's 51.0 (HIGH sector 5.3): 'largely but not entirely responsible'"
    )
    assert high.paper.startswith("App. B.1: POS, HIGH sector 84.1 of the full model's 94.4 (LOW sector 16.8)")
    # LOW keeps 20.5 / 42 = 49% of the gain: 30.5 - 31 = -0.5 +- 2 is inside noise; HIGH keeps 26%: not held
    assert "it keeps 49% of the gain" in low.claim and low.verdict == "inside noise" and high.verdict == "not held"
    assert low.control.startswith("untrained prism: its LOW sector keeps 48% (26.0% of 43.0%); training adds to the sector")
    g = gates()
    g.compare["topic"].acc = g.compare["topic"].acc | {"prism LOW sector": 40.0, "prism LOW sector" + EARLIER: 40.0}
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[9].verdict == "held"  # 40 - 31 = 9 > 0 and 52 - 40 = 12 > 1
    g.compare["topic"].acc = g.compare["topic"].acc | {"prism LOW sector": 51.5, "prism LOW sector" + EARLIER: 51.5}
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[9].verdict == "inside noise"  # "entirely": 0.5 +- 2 holds 1


def test_b1_dissociation_tests_the_off_sector_against_the_untrained_prisms(claims):
    topic, pos = rows(claims, "B.1 dissociation:")
    for c, off, on in ((topic, "HIGH", "LOW"), (pos, "LOW", "HIGH")):
        t = c.tests[0]
        assert (t.sign, t.threshold) == (-1, 1.0)  # at most 1 point above the untrained prism's sector
        assert t.interval.effect == ACC[f"prism {off} sector"] - ACC[f"prism_untrained {off} sector"]
        # the off sector is expected near chance: only the full model is gated on the majority class
        majority = [g.name for g in c.gates if g.name.endswith("beats the majority class")]
        assert majority == ["prism probe beats the majority class"]
        assert c.control.startswith(f"the filter alone separates the sectors: untrained prism's {on} minus {off} sector")
    assert (
        topic.paper
        == "App. B.1: topic, HIGH sector 5.3 against the LOW sector's 45.1 (the double dissociation; the paper has no untrained prism)"
    )
    # 21 - 18 = 3 +- 2 (HIGH) and 30.5 - 26 = 4.5 +- 2 (LOW): training put information there
    assert topic.verdict == "not held" and pos.verdict == "not held"
    g = gates()
    for t in ("topic", "pos"):
        g.compare[t].acc = g.compare[t].acc | {
            f"prism {b} sector{e}": ACC[f"prism_untrained {b} sector"] for b in ("LOW", "HIGH") for e in ("", EARLIER)
        }
    assert [c.verdict for c in rows(section4_claims(g, SETTINGS, 1.0, 2.0), "B.1 dissociation:")] == ["inside noise"] * 2


PREMISE = "a masked-LM pretrained BERT trained further with masked LM)"


def test_b2_is_non_inferiority_without_the_damage_gate(claims):
    b2 = rows(claims, "B.2:")
    assert [c.paper for c in b2] == [
        "App. B.2: original BERT 28.9 vs continued-trained BERT 32.2 ('does not harm BERT', " + PREMISE,
        "App. B.2: original BERT 41.8 vs continued-trained BERT 47.1 ('does not harm BERT', " + PREMISE,
        "App. B.2: original BERT 94.6 vs continued-trained BERT 95.9 ('does not harm BERT', " + PREMISE,
    ]
    for c in b2:
        t = c.tests[0]
        assert (t.sign, t.threshold, t.interval.effect) == (1, -2.0, ACC["baseline"] - ACC["original"])
        assert not any("did not damage" in g.name for g in c.gates)
    others = [c for c in claims if not c.claim.startswith("B.2:")]
    assert all(any("did not damage" in g.name for g in c.gates) for c in others)


def test_b2_rests_on_the_masked_lm_premise_of_the_encoder():
    from prismlib.probing import MASKED_LM_PREMISE

    measured = "the original encoder's masked-LM head (after its warm-up) minus a unigram model: 0.50 nats"
    minilm = rows(section4_claims(gates(), SETTINGS, 1.0, 2.0, encoder="minilm", premise_measured=measured), "B.2:")
    for c in minilm:
        premise = [g for g in c.gates if g.name == MASKED_LM_PREMISE]
        assert len(premise) == 1 and not premise[0].passed and c.verdict == "not testable"
        assert "contrastive" in premise[0].detail and premise[0].detail.endswith("measured: " + measured)
    bert = section4_claims(gates(), SETTINGS, 1.0, 2.0, encoder="bert-base-cased")
    assert all(c.verdict != "not testable" for c in rows(bert, "B.2:"))
    # only B.2 rests on the premise
    assert not any(g.name == MASKED_LM_PREMISE for c in bert if not c.claim.startswith("B.2:") for g in c.gates)


def test_b3_margin_is_never_above_the_papers_own_effect(claims):
    b3 = rows(claims, "B.3, variant (prisms after the top 2 trained layers only; the paper puts one after each BERT layer):")
    for c, name in zip(b3, TASKS, strict=True):
        every, last = published_b3(name)
        t = c.tests[0]
        assert t.sign == -1 and t.interval.effect == ACC["prism-every"] - ACC["prism"]
        assert 0 < -t.threshold <= round(last - every, 1) and -t.threshold <= 1.0
        assert "after each of the top 2 trained layers only is worse" in c.claim
    assert [c.tests[0].threshold for c in b3] == [-1.0, -1.0, -0.4]
    assert "by at least 0.4 point (the paper's own effect is 0.4 points: the margin is that effect)" in b3[2].claim
    assert b3[0].paper == "App. B.3: topic classification, prism after every layer 45.2 vs after the last 51.0 (-5.8)"
    assert b3[2].paper == "App. B.3: part of speech, prism after every layer 94.0 vs after the last 94.4 (-0.4)"
    assert [b3_margin(t, 3.0) for t in TASKS] == [3.0, 2.2, 0.4]
    paper = section4_claims(gates(), get_profile("paper").prism, 1.0, 2.0)[-1].claim
    assert paper.startswith("B.3: a prism layer after every layer") and "variant" not in paper


def test_every_claim_ends_with_its_stability_gate(claims):
    assert all(c.gates[-1].name.startswith("stable: ") and c.gates[-1].passed for c in claims)
    assert claims[0].gates[-1].name.startswith("stable: prism - baseline on topic")
    no_earlier = section4_claims(gates(earlier=False), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert not no_earlier[0].gates[-1].passed and no_earlier[0].verdict == "not testable"
    assert all(c.verdict != "not testable" for c in claims if not c.descriptive)


def test_the_papers_numbers_as_the_notebooks_tables_read_them():
    assert TABLE1_PAPER == {
        ("topic", "baseline"): 32.21, ("topic", "prism"): 51.01, ("topic", "original"): 28.9,
        ("swda", "baseline"): 47.09, ("swda", "prism"): 54.02, ("swda", "original"): 41.8,
        ("pos", "baseline"): 95.86, ("pos", "prism"): 94.41, ("pos", "original"): 94.6,
    }  # fmt: skip
    assert list(APPENDIX_B_PAPER.items()) == [
        (("B.1", "prism LOW sector", "topic"), 45.1), (("B.1", "prism HIGH sector", "topic"), 5.3),
        (("B.1", "prism HIGH sector", "pos"), 84.1), (("B.1", "prism LOW sector", "pos"), 16.8),
        (("B.1", "prism LOW sector", "swda"), None), (("B.1", "prism HIGH sector", "swda"), None),
        (("B.2", "original", "pos"), 94.6), (("B.2", "original", "swda"), 41.8), (("B.2", "original", "topic"), 28.9),
        (("B.3", "prism-every", "topic"), 45.2), (("B.3", "prism-every", "swda"), 51.8), (("B.3", "prism-every", "pos"), 94.0),
    ]  # fmt: skip
    assert [published_b2(t) for t in TASKS] == [(28.9, 32.2), (41.8, 47.1), (94.6, 95.9)]
    assert [published_b3(t) for t in TASKS] == [(45.2, 51.0), (51.8, 54.0), (94.0, 94.4)]


def test_every_claim_carries_its_seed_level_twin_and_the_seeds_gate(claims):
    for c in claims:
        assert len(c.tests) % 2 == 0
        for unit, over_seeds in zip(c.tests[::2], c.tests[1::2], strict=True):  # every test is followed by its twin
            assert (over_seeds.sign, over_seeds.threshold, over_seeds.kind) == (unit.sign, unit.threshold, unit.kind)
            assert over_seeds.label == f"{unit.label}, t over 3 seeds" and over_seeds.interval.resampled == "runs"
            assert over_seeds.interval.effect == unit.interval.effect
            assert over_seeds.interval.high - over_seeds.interval.effect == SEED_HALF_WIDTH
        seeds = [g for g in c.gates if g.name.startswith("seeds: ")]
        stable = [g for g in c.gates if g.name.startswith("stable: ")]
        assert seeds and all(g.passed for g in seeds) and len(stable) == len(c.tests) // 2  # a stability gate per test
    topic = claims[0]
    assert [g for g in topic.gates if g.name.startswith("seeds: ")][0].detail == "prism: 3, baseline: 3"
    b1 = rows(claims, "B.1:")[0]
    assert [g for g in b1.gates if g.name.startswith("seeds: ")][0].detail == "prism: 3, prism LOW sector: 3"


def test_fewer_than_three_seeds_make_every_claim_not_testable():
    two = section4_claims(gates(n_seeds=2), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert all(c.verdict == "not testable" for c in two)
    assert all(any(g.name.startswith("seeds: ") and "too few seeds" in g.detail for g in c.failed_gates) for c in two)
    one = section4_claims(gates(n_seeds=1), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert all(len(c.tests) == n // 2 and c.verdict == "not testable" for c, n in zip(one, (len(c.tests) for c in two), strict=True))


def test_a_wide_seed_interval_keeps_a_claim_the_unit_test_holds_inside_noise(claims):
    # prism - baseline = 7 +- 2 over units holds "beats by 1"; +- 6.5 over seeds holds 1: inside noise
    assert claims[0].verdict == "held"
    wide = section4_claims(gates(seed_half=6.5), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert wide[0].verdict == "inside noise" and wide[0].weakest is wide[0].tests[1]
    assert wide[0].row()["ci_low"] == 7.0 - 6.5


def test_a_trained_models_gates_hold_for_each_of_its_seeds():
    claims = section4_claims(
        gates(sanity=FakeSanity(capped=(seeded("prism", 2),))), SETTINGS, min_effect=1.0, no_harm=2.0, encoder="bert-base-cased"
    )
    topic = claims[0]
    converged = [g for g in topic.gates if g.name == "BERT + Prism converged"]
    assert len(converged) == 1 and not converged[0].passed and converged[0].detail == "1 of 3 seeds failed: seed 2: cap"
    assert [g.name for g in topic.failed_gates] == ["BERT + Prism converged"] and topic.verdict == "not testable"
    assert rows(claims, "B.2:")[0].verdict != "not testable"  # reads no prism weights


def test_the_damage_gate_fails_when_the_seeds_show_damage_the_units_do_not():
    g = gates()
    g.compare["topic"].acc = g.compare["topic"].acc | {"baseline": 39.0}  # 1 point below the original
    assert g.damage("topic").passed is False  # over seeds -1 +- 0.5: entirely below 0
    g = gates(seed_half=1.5)
    g.compare["topic"].acc = g.compare["topic"].acc | {"baseline": 39.0}
    assert g.damage("topic").passed and "over 3 seeds" in g.damage("topic").detail
