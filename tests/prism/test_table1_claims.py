"""Notebook 03's claims (prismlib.prism.table1_claims): each claim tests the right
contrast with the right sign and margin on one interval over test units and training seeds,
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
from prismlib.stats import Interval, combined_interval

TASKS = ("topic", "swda", "pos")
ACC = {  # condition -> accuracy (%), the same on every task (distinct, so each contrast has its own effect)
    MAJORITY: 10.0, "original": 40.0, "prism_untrained": 43.0, "baseline": 45.0, "baseline_prism_untrained": 47.5,
    "prism": 52.0, "prism-every": 44.25, "prism LOW sector": 30.5, "prism HIGH sector": 21.0,
    "prism_untrained LOW sector": 26.0, "prism_untrained HIGH sector": 18.0,
}  # fmt: skip
HALF_WIDTH = 2.0
SEED_SD = 0.5


@dataclass
class FakeComparison:
    """What the claims read of a SeedComparison: accuracies, paired differences of the
    seed-mean predictions (the effect +- HALF_WIDTH over 20 units) and of each seed's models
    (the effect spread evenly over +- ``seed_sd``, ``n_seeds`` of every trained condition),
    majority-class gates."""

    acc: dict[str, float]
    units: int = 20
    n_seeds: int = 3
    seed_sd: float = SEED_SD
    runs: Any = field(init=False)

    def __post_init__(self) -> None:
        self.runs = type("Runs", (), {"correct": dict.fromkeys(self.acc)})()

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.n_seeds))

    @property
    def counts(self) -> dict[str, int]:
        return {c: self.n_seeds if trained_weights(c) else 0 for c in self.acc}

    def seed_values(self, a: str, b: str) -> dict[int, float]:
        d = self.acc[a] - self.acc[b]
        spread = [0.0] if self.n_seeds == 1 else [self.seed_sd * (2 * s / (self.n_seeds - 1) - 1) for s in self.seeds]
        return {s: d + x for s, x in zip(self.seeds, spread, strict=True)}

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
    assert [len(c.tests) for c in claims] == [1] * 3 + [3] + [1] * 5 + [2] * 2 + [1] * 8
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
        # continued training (the same untrained filter) + training with the prism, each on its interval with the seeds
        both = combined_interval(Interval(4.5, 2.5, 6.5, 20), [4.0, 4.5, 5.0])
        assert f"= continued training {both} + training with the prism {both} points" in c.claim
        assert c.row()["gate"].startswith("no verdict: a decomposition, not a claim")
    # the untrained prism on the original encoder reads no trained weights: only BERT + Prism's gates
    names = [g.name for g in mixed[0].gates]
    assert "BERT + Prism converged" in names and not any(n.startswith("BERT converged") for n in names)


def test_comparably_or_better_is_non_inferiority_on_every_task(claims):
    row = claims[3]
    assert [(t.sign, t.threshold, t.interval.effect) for t in row.tests] == [(1, -3.0, 7.0)] * 3
    assert [t.label for t in row.tests] == [f"prism - baseline on {t}" for t in TASKS]
    assert row.paper.startswith("Table 1's caption: 'perform comparably or better than BERT across different tasks'")
    assert row.verdict == "held"
    g = gates()
    g.compare["swda"].acc = g.compare["swda"].acc | {"prism": 39.0, "prism" + EARLIER: 39.0}  # 6 +- 2.2 points below BERT
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[3].verdict == "not held"
    g.compare["swda"].acc = g.compare["swda"].acc | {"prism": 43.0, "prism" + EARLIER: 43.0}  # -2 +- 2.2 holds -3
    assert section4_claims(g, SETTINGS, 1.0, 2.0)[3].verdict == "inside noise"


def damaged_topic(pos_prism: float) -> Section4Gates:
    """Gates where continued training clearly lowered topic (baseline - original -6 +- 2.2: its
    damage gate fails) and BERT + Prism scores ``pos_prism`` on POS (BERT 45.0)."""
    g = gates()
    g.compare["topic"].acc = g.compare["topic"].acc | {"original": 51.0}
    g.compare["pos"].acc = g.compare["pos"].acc | {"prism": pos_prism, "prism" + EARLIER: pos_prism}
    return g


def test_a_counterexample_with_its_own_gates_refutes_every_task_when_another_task_is_not_testable():
    # POS 39 vs 45: -6 +- 2.2 points, more than 3 below BERT, with its own gates passing: not held,
    # though topic's part fails its damage gate; topic's part and gates are left out and named
    row = section4_claims(damaged_topic(39.0), SETTINGS, 1.0, 2.0)[3]
    assert row.verdict == "not held" and not row.failed_gates
    assert [t.label for t in row.tests] == ["prism - baseline on swda", "prism - baseline on pos"]
    assert row.deciding.label == "prism - baseline on pos"
    assert row.control.startswith("decided by its counterexample on pos (its own gates pass)")
    assert "not testable and left out: topic (continued training did not damage the encoder on topic" in row.control
    assert "the paper's BERT + Prism minus BERT: topic +18.8, swda +6.9, pos -1.5 points" in row.paper
    # no counterexample: the untestable part keeps the row not testable, its gate named
    keeps = section4_claims(damaged_topic(52.0), SETTINGS, 1.0, 2.0)[3]
    assert keeps.verdict == "not testable" and len(keeps.tests) == 3 and keeps.control == ""
    assert any(g.name.startswith("continued training did not damage the encoder on topic") for g in keeps.failed_gates)


def test_b1_largely_but_not_entirely_against_half_the_gain_and_the_full_model(claims):
    low, high = rows(claims, "B.1:")
    for c, band in ((low, "LOW"), (high, "HIGH")):
        largely, entirely = c.tests
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
    # not sentences of the paper: descriptive rows that report their effect, out of the verdict counts
    assert all(c.descriptive.startswith("not a sentence of the paper: App. B.1 reports the") for c in (topic, pos))
    assert topic.verdict == pos.verdict == "not testable" and topic.row()["gate"].startswith("no verdict: not a sentence")
    assert "(5.3% on topic)" in topic.descriptive and topic.row()["effect"] == ACC["prism HIGH sector"] - ACC["prism_untrained HIGH sector"]


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
    # an encoder whose premise is measured (the BERT pretrained here) carries the gate it is given, passed or not
    for passed in (True, False):
        measured_gate = Gate(MASKED_LM_PREMISE, passed, "the 4x256 BERT gains +1.9 nats over the unigram model, gate 1.50")
        pretrained = rows(section4_claims(gates(), SETTINGS, 1.0, 2.0, encoder="pretrained-0123", premise=measured_gate), "B.2:")
        assert all([g for g in c.gates if g.name == MASKED_LM_PREMISE] == [measured_gate] for c in pretrained)
        assert all((c.verdict == "not testable") is not passed for c in pretrained)


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
    # the staged recipe with every layer trained puts a prism after each one: B.3 itself
    every = section4_claims(gates(), SETTINGS, 1.0, 2.0, n_layers=SETTINGS.train_layers)[-1].claim
    assert every.startswith("B.3: a prism layer after every layer") and "variant" not in every
    top = section4_claims(gates(), SETTINGS, 1.0, 2.0, n_layers=SETTINGS.train_layers + 1)[-1].claim
    assert top.startswith(f"B.3, variant (prisms after the top {SETTINGS.train_layers} trained layers only;")


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


def test_every_contrast_is_one_interval_over_units_and_seeds_with_the_seeds_gate(claims):
    for c in claims:
        for t in c.tests:
            assert t.interval.resampled == "units+seeds" and t.interval.seeds == 3 and t.interval.units == 20
            # centred on the seed means' effect, wider than the unit bootstrap's +- 2
            assert t.interval.effect == pytest.approx((t.interval.low + t.interval.high) / 2)
            assert t.interval.high - t.interval.effect > HALF_WIDTH
        seeds = [g for g in c.gates if g.name.startswith("seeds: ")]
        stable = [g for g in c.gates if g.name.startswith("stable: ")]
        assert seeds and all(g.passed for g in seeds) and len(stable) == len(c.tests)  # a stability gate per test
    topic = claims[0]
    assert topic.tests[0].interval == combined_interval(Interval(7.0, 5.0, 9.0, 20), [6.5, 7.0, 7.5])
    assert [g for g in topic.gates if g.name.startswith("seeds: ")][0].detail == "prism: 3, baseline: 3"
    b1 = rows(claims, "B.1:")[0]
    assert [g for g in b1.gates if g.name.startswith("seeds: ")][0].detail == "prism: 3, prism LOW sector: 3"


def test_fewer_than_three_seeds_make_every_claim_not_testable():
    two = section4_claims(gates(n_seeds=2), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert all(c.verdict == "not testable" for c in two)
    assert all(any(g.name.startswith("seeds: ") and "too few seeds" in g.detail for g in c.failed_gates) for c in two)
    one = section4_claims(gates(n_seeds=1), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert [len(c.tests) for c in one] == [len(c.tests) for c in two] and all(c.verdict == "not testable" for c in one)
    # one seed: no interval with the seeds exists; the unit test stays and the seeds gate fails it
    assert all(t.interval.resampled == "units" for c in one for t in c.tests)


def test_seeds_that_disagree_widely_widen_a_held_contrast_to_inside_noise(claims):
    # prism - baseline = 7 +- 2 over units holds "beats by 1"; seeds at 1, 7 and 13 (sd 6) put 1 inside
    # the one interval: the claim rests on the seeds' variance as well as the units'
    assert claims[0].verdict == "held"
    wide = section4_claims(gates(seed_sd=6.0), SETTINGS, min_effect=1.0, no_harm=2.0)
    t = wide[0].tests[0]
    assert len(wide[0].tests) == 1 and t.interval.low < 1.0 < t.interval.high and wide[0].verdict == "inside noise"
    assert t.interval == combined_interval(Interval(7.0, 5.0, 9.0, 20), [1.0, 7.0, 13.0])
    assert wide[0].row()["ci_low"] == t.interval.low < 5.0  # wider than the unit bootstrap's [5, 9]
    assert "20 units x 3 seeds" in wide[0].row()["test"]


def test_a_trained_models_gates_hold_for_each_of_its_seeds():
    claims = section4_claims(
        gates(sanity=FakeSanity(capped=(seeded("prism", 2),))), SETTINGS, min_effect=1.0, no_harm=2.0, encoder="bert-base-cased"
    )
    topic = claims[0]
    converged = [g for g in topic.gates if g.name == "BERT + Prism converged"]
    assert len(converged) == 1 and not converged[0].passed and converged[0].detail == "1 of 3 seeds failed: seed 2: cap"
    assert [g.name for g in topic.failed_gates] == ["BERT + Prism converged"] and topic.verdict == "not testable"
    assert rows(claims, "B.2:")[0].verdict != "not testable"  # reads no prism weights


def test_the_damage_gate_reads_one_interval_over_units_and_seeds():
    g = gates()
    g.compare["topic"].acc = g.compare["topic"].acc | {"baseline": 36.0}  # 4 points below the original
    damage = g.damage("topic")
    assert damage.passed is False and "-4 [" in damage.detail and damage.detail.endswith("points over 20 units x 3 seeds")
    g = gates(seed_sd=6.0)  # the seeds disagree widely: the one interval holds 0
    g.compare["topic"].acc = g.compare["topic"].acc | {"baseline": 36.0}
    assert g.damage("topic").passed
    assert g.interval("topic", "baseline", "original") == combined_interval(Interval(-4.0, -6.0, -2.0, 20), [-10.0, -4.0, 2.0])


def test_a_test_set_of_too_few_units_makes_every_claim_not_testable_with_the_seeds_in_its_interval():
    # the one interval over units and seeds still rests on the test set's units: MIN_UNITS gates it
    few = section4_claims(gates(units=10), SETTINGS, min_effect=1.0, no_harm=2.0)
    assert all(t.interval.resampled == "units+seeds" and t.interval.units == 10 for c in few for t in c.tests)
    assert all(c.verdict == "not testable" for c in few)
    assert all(any(g.name.startswith("at least 15 independent test units") for g in c.failed_gates) for c in few)
