"""The slides' perplexity claims of notebooks 05-07 as tests (prismlib.lstm.claims.slide_claims): each
test function on seed means with known perplexities (its sign, threshold, label and effect),
and the claim assembled with its gates (notebook 08's: tests/lstm/claims/test_ablation_claims.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from lstm_fixtures import Spec

from prismlib.claims import Gate
from prismlib.lstm import (
    RARE_MARGIN,
    SeedMeans,
    WorkBClaims,
    beats_baseline,
    beats_by,
    bin_log_gap,
    equivalent,
    first_layer_worse_by,
    first_layer_worst,
    layer2_key,
    layer2_short,
    no_harm,
    pareto_best,
    perplexity_claim,
    published_margin,
    rare_words,
    rises,
    x70_worst,
)
from prismlib.stats import combined_interval

N = 2000  # test tokens: 20 chunks of 100
NOISE = np.random.default_rng(0).normal(0, 0.3, N)
NOISE -= NOISE.mean()  # a model's perplexity is exactly the one asked for


def _means(ppl: dict, reference="baseline", seeds: int = 1) -> SeedMeans:
    """Seed means of models whose perplexity is ``ppl[key]`` on every chunk pattern alike."""
    nll = {}
    for key, p in ppl.items():
        one = np.log(p) + NOISE
        nll[key] = one if seeds == 1 else np.stack([one + 0.01 * s for s in range(seeds)])
    return SeedMeans(nll, reference)


def test_equivalent_is_one_equivalence_test_per_model_labelled_against_the_baseline():
    m = _means({"baseline": 100.0, "a": 100.5, "b": 110.0})
    tests = equivalent(["a", "b"], 2.0)(m)
    assert [t.label for t in tests] == ["ppl(a) - ppl(baseline)", "ppl(b) - ppl(baseline)"]
    assert tests[0].interval.effect == pytest.approx(0.5) and tests[1].interval.effect == pytest.approx(10.0)
    assert tests[0].verdict == "held"  # within ±2
    assert tests[1].verdict == "not held"  # 10 above


def _checks(ppl: dict[str, float], seeds: int) -> WorkBClaims:
    """WorkBClaims of runs with ``seeds`` seeds each (a seed moves the log-perplexity by about 0.0005)."""
    rng = np.random.default_rng(1)
    runs = {}
    for v, p in ppl.items():
        for s in range(seeds):
            nll = np.log(p) + NOISE + rng.normal(0, 0.0005)
            runs[Spec(v, s)] = SimpleNamespace(
                spec=Spec(v, s), test_chunks=nll, curve=None, test_chunks_at_half=lambda: None, history=SimpleNamespace(seconds=60.0)
            )
    return WorkBClaims(runs, key=lambda s: s.variant, reference="baseline")


def test_an_equivalence_claim_keeps_its_margin_on_the_interval_with_the_seeds():
    checks = _checks({"baseline": 100.0, "a": 100.3}, seeds=3)
    claim = perplexity_claim("05", "t", "p", checks, ["baseline", "a"], equivalent(["a"], 2.0), Gate("b", True), [("a", "baseline")])
    (unit,) = equivalent(["a"], 2.0)(checks.end)
    (t,) = claim.tests
    assert t.interval == combined_interval(unit.interval, checks.seed_perplexities("a"), checks.seed_perplexities("baseline"))
    assert t.label == unit.label and t.threshold == 2.0 and t.kind == "equivalence" and t.verdict == "held"
    one = _checks({"baseline": 100.0, "a": 100.3}, seeds=1)
    (alone,) = perplexity_claim("05", "t", "p", one, ["baseline", "a"], equivalent(["a"], 2.0), Gate("b", True), [("a", "baseline")]).tests
    assert alone == equivalent(["a"], 2.0)(one.end)[0] and alone.interval.resampled == "units"  # one seed: the chunks alone


def test_rises_tests_every_step_of_T_and_labels_it():
    m = _means({("layerwise", 20): 100.0, ("layerwise", 70): 104.0, ("layerwise", 200): 103.0})
    up, down = rises("layerwise")(m)
    assert up.label == "ppl(layerwise T=70) - ppl(T=20)" and down.label == "ppl(layerwise T=200) - ppl(T=70)"
    assert up.interval.effect == pytest.approx(4.0) and down.interval.effect == pytest.approx(-1.0)
    assert up.verdict == "held" and down.verdict == "not held"
    assert len(rises("layerwise", (20, 70))(m)) == 1


def test_first_layer_worst_compares_with_the_worse_of_middle_and_last_at_each_T():
    m = _means({("layerwise", 20): 105.0, ("middle", 20): 101.0, ("inverse", 20): 103.0,
                ("layerwise", 70): 100.0, ("middle", 70): 102.0, ("inverse", 70): 99.0})  # fmt: skip
    t20, t70 = first_layer_worst(m)
    assert t20.label == "ppl(first longest) - worse of (middle, last), T=20"
    assert t20.interval.effect == pytest.approx(2.0) and t20.verdict == "held"  # 105 - max(101, 103)
    assert t70.interval.effect == pytest.approx(-2.0) and t70.verdict == "not held"  # 100 - max(102, 99)
    assert len(first_layer_worst(m, (70,))) == 1


def test_no_harm_is_non_inferiority_with_the_margin():
    m = _means({"baseline": 100.0, ("layerwise", 20): 101.0})
    (t,) = no_harm(("layerwise", 20), 2.0, "ppl(layerwise T=20 fixed) - ppl(baseline)")(m)
    assert t.label == "ppl(layerwise T=20 fixed) - ppl(baseline)"
    assert t.sign == -1 and t.threshold == 2.0 and t.interval.effect == pytest.approx(1.0) and t.verdict == "held"
    (worse,) = no_harm(("layerwise", 20), 0.5, "x")(m)
    assert worse.verdict == "not held"


def test_layer2_keys_and_their_short_names():
    assert layer2_key(SimpleNamespace(variant="layer2", T=20.0)) == "layer2 X=20"
    assert layer2_key(SimpleNamespace(variant="layer2", T=5.0)) == "layer2 X=5"
    assert layer2_key(SimpleNamespace(variant="pareto", T=None)) == "pareto"
    assert layer2_short("layer2 X=70") == "X=70" and layer2_short("mod5") == "mod5"


def test_beats_baseline_is_one_superiority_test_per_model_with_the_short_name():
    m = _means({"baseline": 100.0, "layer2 X=5": 97.0, "mod5": 101.0})
    a, b = beats_baseline("layer2 X=5", "mod5")(m)
    assert a.label == "ppl(X=5) - ppl(baseline)" and b.label == "ppl(mod5) - ppl(baseline)"
    assert a.sign == -1 and a.threshold == 0.0
    assert a.interval.effect == pytest.approx(-3.0) and a.verdict == "held" and b.verdict == "not held"


def test_beats_by_and_first_layer_worse_by_use_the_published_effect_scaled_to_our_baseline_as_margin():
    # the slides' 2% gain (61.64 -> 60.40) at our baseline of 120: a margin of 2.4 ppl
    assert published_margin(61.64 - 60.40, 61.64, 120.0) == pytest.approx(1.24 / 61.64 * 120)
    assert published_margin(-1.0, 50.0, 100.0) == pytest.approx(2.0)  # the size, whatever the sign
    with pytest.raises(ValueError, match="positive"):
        published_margin(1.0, 0.0, 100.0)
    m = _means({"baseline": 100.0, "mod5": 97.0, "mod8": 99.0})
    a, b = beats_by({"mod5": 2.0, "mod8": 2.0})(m)
    assert a.label == "ppl(mod5) - ppl(baseline)" and a.sign == -1 and a.threshold == -2.0
    assert a.verdict == "held" and b.verdict == "not held"  # -3 beyond -2; -1 short of it (beats at all, not by 2)
    assert beats_baseline("mod8")(m)[0].verdict == "held"
    m = _means({("layerwise", 20): 105.0, ("middle", 20): 101.0, ("inverse", 20): 103.0})
    tests = first_layer_worse_by({("middle", 20): 3.0, ("inverse", 20): 3.0})(m)
    assert [t.label for t in tests] == ["ppl(first longest T=20) - ppl(middle T=20)", "ppl(first longest T=20) - ppl(inverse T=20)"]
    assert [t.interval.effect for t in tests] == pytest.approx([4.0, 2.0]) and [t.verdict for t in tests] == ["held", "not held"]
    assert all(t.sign == 1 and t.threshold == 3.0 for t in tests)


def test_pareto_best_takes_the_better_of_the_mixtures():
    m = _means({"pareto": 98.0, "mod5": 101.0, "mod8": 99.0})
    (t,) = pareto_best(m)
    assert t.label == "ppl(Pareto, seed mean) - better of (MOD5, MOD8)"
    assert t.interval.effect == pytest.approx(-1.0) and t.verdict == "held"  # 98 - min(101, 99)


def test_x70_worst_takes_the_worst_of_the_other_fixed_values_only():
    fixed = ["layer2 X=5", "layer2 X=20", "layer2 X=70"]
    m = _means({"layer2 X=5": 101.0, "layer2 X=20": 100.0, "layer2 X=70": 103.0, "pareto": 200.0})
    (t,) = x70_worst(fixed)(m)
    assert t.label == "ppl(X=70) - worst of the other X"
    assert t.sign == 1 and t.interval.effect == pytest.approx(2.0) and t.verdict == "held"  # 103 - 101, pareto not read
    (only20,) = x70_worst(["layer2 X=20", "layer2 X=70"])(m)
    assert only20.interval.effect == pytest.approx(3.0)


IDS = np.arange(N) % 10  # words 0-2 > 10k, 3-4 1k-10k, 5-6 100-1k, 7-9 rare
COUNTS = np.array([50_000] * 3 + [5_000] * 2 + [500] * 2 + [10] * 3)
RARE, FREQUENT = IDS >= 7, IDS <= 2


def _nll(rare: float, frequent: float, other: float = 100.0) -> np.ndarray:
    """Per-token NLL with the given perplexity on the rare, the frequent and the other bins."""
    return np.log(np.where(RARE, rare, np.where(FREQUENT, frequent, other))) + 0.05 * NOISE


def test_rare_words_tests_the_rare_bins_relative_gain_minus_the_frequent_bins():
    base = _nll(1000.0, 50.0)
    # 20% better on rare words and 20% better on frequent ones: the gain is not largest for rare words
    alike = SeedMeans({"baseline": base, "official": _nll(800.0, 40.0)}, "baseline")
    (t,) = rare_words(IDS, COUNTS)(alike)
    assert t.label == "gain(<100) - gain(>10k), gain = log(ppl(baseline) / ppl(official))"
    assert t.sign == 1 and t.threshold == RARE_MARGIN == 0.01
    assert t.interval.effect == pytest.approx(0.0, abs=1e-9) and t.verdict == "not held"  # a perplexity difference would call it held
    concentrated = SeedMeans({"baseline": base, "official": _nll(500.0, 49.0)}, "baseline")
    (c,) = rare_words(IDS, COUNTS)(concentrated)
    assert c.interval.effect == pytest.approx(np.log(2.0) - np.log(50 / 49)) and c.verdict == "held"
    worse = SeedMeans({"baseline": base, "official": _nll(1200.0, 45.0)}, "baseline")
    assert rare_words(IDS, COUNTS)(worse)[0].verdict == "not held"
    small = SeedMeans({"baseline": base, "official": _nll(995.0, 50.0)}, "baseline")  # 0.5% < the 1% margin
    assert rare_words(IDS, COUNTS)(small)[0].verdict != "held" and rare_words(IDS, COUNTS, margin=0.0)(small)[0].verdict == "held"
    (other,) = rare_words(IDS, COUNTS, model="mts", reference="base")(SeedMeans({"base": base, "mts": _nll(500.0, 49.0)}, "base"))
    assert other.label == "gain(<100) - gain(>10k), gain = log(ppl(base) / ppl(mts))"


def test_rare_words_bins_each_nll_by_the_stream_of_its_length():
    valid = IDS[:1000][::-1].copy()  # validation tokens: another stream, another length
    nll_valid = np.log(np.where(valid >= 7, 500.0, np.where(valid <= 2, 49.0, 100.0)))
    m = SeedMeans({"baseline": np.log(np.where(valid >= 7, 1000.0, np.where(valid <= 2, 50.0, 100.0))), "official": nll_valid}, "baseline")
    (t,) = rare_words([IDS, valid], COUNTS)(m)
    assert t.interval.effect == pytest.approx(np.log(2.0) - np.log(50 / 49))
    with pytest.raises(ValueError, match="no token stream of 1000 tokens"):
        rare_words(IDS, COUNTS)(m)
    with pytest.raises(ValueError, match="two different token streams"):
        rare_words([valid, valid[::-1].copy()], COUNTS)(m)


def test_the_rare_word_gain_takes_each_seeds_bin_gap_into_its_one_interval():
    runs = {}
    for s, (rare, freq) in enumerate(((500.0, 49.0), (520.0, 48.0), (480.0, 50.0))):
        for v, nll in (("baseline", _nll(1000.0 + 10 * s, 50.0)), ("official", _nll(rare, freq))):
            runs[Spec(v, s)] = SimpleNamespace(
                spec=Spec(v, s), test_chunks=nll, curve=None, test_chunks_at_half=lambda: None, history=SimpleNamespace(seconds=60.0)
            )
    checks = WorkBClaims(runs, key=lambda sp: sp.variant, reference="baseline")
    gap = bin_log_gap(IDS, COUNTS)
    assert gap(_nll(1000.0, 50.0)) == pytest.approx(np.log(50.0) - np.log(1000.0), abs=1e-3)
    a = [gap(r.test_chunks) for sp, r in runs.items() if sp.variant == "official"]
    b = [gap(r.test_chunks) for sp, r in runs.items() if sp.variant == "baseline"]
    (chunk,) = rare_words(IDS, COUNTS)(checks.end)  # gap(official) - gap(baseline) of the seed means: the same unit as the gaps
    assert chunk.interval.effect == pytest.approx(np.mean(a) - np.mean(b), abs=0.01)
    # the seeds rule reads the log ratio as a share: 0.68 is over 5%, a perplexity-scale reading would call it small
    assert checks.gates(["baseline", "official"], rare_words(IDS, COUNTS), relative=True)[2].detail.startswith("no effect under 5%")
    claim = perplexity_claim(
        "07",
        "t",
        "p",
        checks,
        ["baseline", "official"],
        rare_words(IDS, COUNTS),
        Gate("b", True),
        [("official", "baseline")],
        "log ratio",
        True,
        gap,
    )
    (t,) = claim.tests
    assert claim.unit == "log ratio" and t.interval == combined_interval(chunk.interval, a, b)
    assert t.interval.resampled == "units+seeds" and t.interval.high - t.interval.low > chunk.interval.high - chunk.interval.low
    assert (t.label, t.threshold, t.verdict) == (chunk.label, RARE_MARGIN, "held")
    # relative without a statistic: each seed's log perplexity (its mean NLL), the unit of a log ratio
    logs = perplexity_claim(
        "07",
        "t",
        "p",
        checks,
        ["baseline", "official"],
        beats_baseline("official"),
        Gate("b", True),
        [("official", "baseline")],
        relative=True,
    ).tests[0]
    seeds = [[float(np.log(p)) for p in checks.seed_perplexities(k)] for k in ("official", "baseline")]
    assert logs.interval == combined_interval(checks.end.delta("official"), *seeds)


def test_perplexity_claim_puts_the_bigram_gate_first_and_tests_each_contrast_once():
    checks = _checks({"baseline": 150.0, "x": 120.0}, seeds=3)
    tests_of = beats_baseline("x")
    bigram = Gate("baseline below the bigram", True, "")
    claim = perplexity_claim(
        "07", "x beats the baseline", "slides: it does", checks, ["baseline", "x"], tests_of, bigram, [("x", "baseline")]
    )
    assert claim.notebook == "07" and claim.claim == "x beats the baseline" and claim.paper == "slides: it does"
    assert claim.unit == "ppl"
    assert claim.tests == (checks.with_seeds(tests_of(checks.end)[0], "x"),) and claim.tests[0].interval.resampled == "units+seeds"
    assert claim.gates == (bigram, *checks.gates(["baseline", "x"], tests_of))
    assert perplexity_claim("07", "t", "p", checks, ["baseline", "x"], tests_of, bigram).tests == tuple(tests_of(checks.end))
    with pytest.raises(ValueError, match="2 arms for 1 tests"):
        perplexity_claim("07", "t", "p", checks, ["baseline", "x"], tests_of, bigram, [("x", "baseline")] * 2)
