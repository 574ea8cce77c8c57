"""The slides' claims of notebooks 05-08 as tests (prismlib.lstm.slide_claims): each test
function on seed means with known perplexities (its sign, threshold, label and effect),
the claim assembled with its gates, and notebook 08's memory gates and controls on
synthetic cell-state changes with known decay rates: the claims built from them, their
gates, and the untrained control that keeps a claim from holding."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from prismlib.anneal import STOPPED_AT_CAP, STOPPED_BY_RULE
from prismlib.claims import Claim, Gate
from prismlib.lstm import (
    RARE_MARGIN,
    MemoryGates,
    SeedMeans,
    WorkBClaims,
    beats_baseline,
    bin_log_gap,
    control_note,
    controlled_effect,
    controlled_tests,
    decay_gate,
    equivalent,
    first_layer_worst,
    layer2_key,
    layer2_short,
    layer_slope,
    memory_claims,
    no_harm,
    pareto_best,
    perplexity,
    perplexity_claim,
    range_gap,
    rare_words,
    rises,
    run_name,
    seed_equivalent,
    slope_gap,
    slope_range,
    x70_worst,
)
from prismlib.lstm.ablation import slope_difference, slope_range_difference
from prismlib.stats import Interval

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


@dataclass(frozen=True)
class Spec:
    variant: str
    seed: int

    @property
    def label(self) -> str:
        return self.variant


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


def test_seed_equivalent_turns_each_welch_test_into_an_equivalence_test_with_the_margin():
    checks = _checks({"baseline": 100.0, "a": 100.3}, seeds=3)
    (t,) = seed_equivalent(checks, ["a"], 2.0)
    (welch,) = checks.seed_test("a")
    assert t.label == welch.label and t.interval == welch.interval
    assert t.threshold == 2.0 and t.kind == "equivalence" and t.verdict == "held"
    assert seed_equivalent(_checks({"baseline": 100.0, "a": 100.3}, seeds=1), ["a"], 2.0) == ()  # one seed: no Welch


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


def test_the_seed_level_test_of_the_rare_word_gain_is_welch_over_each_seeds_bin_gap():
    runs = {}
    for s, (rare, freq) in enumerate(((500.0, 49.0), (520.0, 48.0), (480.0, 50.0))):
        for v, nll in (("baseline", _nll(1000.0 + 10 * s, 50.0)), ("official", _nll(rare, freq))):
            runs[Spec(v, s)] = SimpleNamespace(
                spec=Spec(v, s), test_chunks=nll, curve=None, test_chunks_at_half=lambda: None, history=SimpleNamespace(seconds=60.0)
            )
    checks = WorkBClaims(runs, key=lambda sp: sp.variant, reference="baseline")
    gap = bin_log_gap(IDS, COUNTS)
    assert gap(_nll(1000.0, 50.0)) == pytest.approx(np.log(50.0) - np.log(1000.0), abs=1e-3)
    (t,) = checks.seed_test("official", sign=1, threshold=RARE_MARGIN, statistic=gap, name="bin gap")
    a = [gap(r.test_chunks) for sp, r in runs.items() if sp.variant == "official"]
    b = [gap(r.test_chunks) for sp, r in runs.items() if sp.variant == "baseline"]
    assert t.interval.effect == pytest.approx(np.mean(a) - np.mean(b)) and t.interval.resampled == "runs"
    assert t.label == "bin gap(official) - bin gap(baseline), Welch over seeds (3 vs 3)" and t.verdict == "held"
    (chunk,) = rare_words(IDS, COUNTS)(checks.end)  # the chunk test of the seed means measures the same effect
    assert chunk.interval.effect == pytest.approx(t.interval.effect)
    # the seeds rule reads the log ratio as a share: 0.68 is over 5%, a perplexity-scale reading would call it small
    assert checks.gates(["baseline", "official"], rare_words(IDS, COUNTS), relative=True)[2].detail.startswith("no effect under 5%")
    claim = perplexity_claim(
        "07", "t", "p", checks, ["baseline", "official"], rare_words(IDS, COUNTS), Gate("b", True), (t,), "log ratio", True
    )
    assert claim.unit == "log ratio" and claim.tests[-1] is t


def test_perplexity_claim_puts_the_bigram_gate_first_and_the_seed_level_tests_last():
    checks = _checks({"baseline": 150.0, "x": 120.0}, seeds=3)
    tests_of = beats_baseline("x")
    bigram = Gate("baseline below the bigram", True, "")
    seed_level = checks.seed_test("x")
    claim = perplexity_claim("07", "x beats the baseline", "slides: it does", checks, ["baseline", "x"], tests_of, bigram, seed_level)
    assert claim.notebook == "07" and claim.claim == "x beats the baseline" and claim.paper == "slides: it does"
    assert claim.unit == "ppl"
    assert claim.tests == tuple(tests_of(checks.end)) + seed_level and len(claim.tests) == 2
    assert claim.gates == (bigram, *checks.gates(["baseline", "x"], tests_of))
    assert perplexity_claim("07", "t", "p", checks, ["baseline", "x"], tests_of, bigram).tests == tuple(tests_of(checks.end))


def _run(stop: str):
    history = SimpleNamespace(anneal=SimpleNamespace(decayed_at=[1, 2]), stop_reason=stop, epochs=4, tokens=2e6, val_ppl=[200.0, 150.0])
    return SimpleNamespace(history=history, curve=None)


def test_memory_gates_are_bigram_converged_context_use_then_decays_for_the_models_read():
    bigram, decays = Gate("bigram", True, ""), Gate("decays", True, "")
    uses = {"a": Gate("a uses its context", True, ""), "b": Gate("b uses its context", False, "")}
    gates = MemoryGates(bigram, {"a": _run(STOPPED_BY_RULE), "b": _run(STOPPED_AT_CAP)}, uses, decays, 0.25, 0.01)
    only_a = gates(["a"])
    assert len(only_a) == 4 and only_a[0] is bigram and only_a[2] is uses["a"] and only_a[3] is decays
    assert only_a[1].passed  # a stopped by rule; b is not read
    both = gates(["a", "b"])
    assert not both[1].passed and both[2:4] == (uses["a"], uses["b"]) and both[-1] is decays


def _decaying(rates: list[float], contexts: int = 40, length: int = 30, seed: int = 0) -> np.ndarray:
    """``(contexts, layers, length)`` changes ``exp(rate * d)`` per layer, with context noise."""
    rng = np.random.default_rng(seed)
    d = np.arange(1, length + 1)
    return np.stack([[np.exp(r * d) * rng.lognormal(0, 0.05) for r in rates] for _ in range(contexts)])


def test_layer_slope_and_slope_gap_read_the_named_model_and_layer():
    fit = (2, 20)
    a, b = _decaying([-0.1, -0.3]), _decaying([-0.05, -0.2])
    assert layer_slope(a, 0, fit) == pytest.approx(-0.1, abs=1e-3) and layer_slope(a, 1, fit) == pytest.approx(-0.3, abs=1e-3)
    assert slope_gap(fit, (0, 0), (1, 0))([a, b]) == pytest.approx(-0.05, abs=1e-3)  # layer 1 of a minus layer 1 of b
    assert slope_gap(fit, (1, 0), (0, 1))([a, b]) == pytest.approx(0.25, abs=1e-3)  # layer 1 of b minus layer 2 of a


def test_controlled_tests_hold_only_where_the_trained_effect_exceeds_the_controls():
    fit = (2, 20)
    changes = {"long": _decaying([-0.05], seed=1), "short": _decaying([-0.3], seed=2)}
    same = {"long": _decaying([-0.05], seed=3), "short": _decaying([-0.3], seed=4)}  # the control shows the effect too
    flat = {"long": _decaying([-0.2], seed=3), "short": _decaying([-0.2], seed=4)}  # the control shows none
    stat = slope_gap(fit, (0, 0), (1, 0))
    beyond = controlled_effect(["long", "short"], changes, flat, stat)
    shown = controlled_effect(["long", "short"], changes, same, stat)
    assert beyond.trained == slope_difference(changes["long"], changes["short"], 0, fit)  # the same resampled contexts
    assert beyond.trained.effect == pytest.approx(0.25, abs=0.01) and shown.control.effect == pytest.approx(0.25, abs=0.01)
    assert not beyond.accounts() and shown.accounts()
    passed = Claim("08", "c", "p", controlled_tests({0: beyond}, "slope L1"))
    failed = Claim("08", "c", "p", controlled_tests({0: shown}, "slope L1"))
    assert passed.verdict == "held" and failed.verdict != "held"  # the trained effect alone is clear in both
    assert [t.label for t in passed.tests] == ["slope L1 (seed 0)", "slope L1: trained - untrained (seed 0)"]
    assert "does not account for it" in control_note({0: beyond}) and "accounts for the effect" in control_note({0: shown})


def test_controlled_tests_keep_every_seed_and_add_the_seed_level_tests():
    fit = (2, 20)
    effects = {}
    for seed in (0, 1, 2):
        changes = {"long": _decaying([-0.05], seed=10 + seed), "short": _decaying([-0.3], seed=20 + seed)}
        flat = {"long": _decaying([-0.2], seed=30 + seed), "short": _decaying([-0.2], seed=40 + seed)}
        effects[seed] = controlled_effect(["long", "short"], changes, flat, slope_gap(fit, (0, 0), (1, 0)))
    tests = controlled_tests(effects, "slope L1")
    assert len(tests) == 3 * 2 + 2 and [t.label for t in tests[-2:]] == [
        "slope L1, mean over 3 seeds",
        "slope L1: trained - untrained, mean over 3 seeds",
    ]
    assert tests[-1].interval.resampled == "runs" and tests[-1].interval.effect == pytest.approx(
        np.mean([e.excess.effect for e in effects.values()])
    )
    assert {t.label for t in tests[:6]} == {f"slope L1{w} (seed {s})" for s in (0, 1, 2) for w in ("", ": trained - untrained")}
    # one seed where the control shows the effect: the claim is not held, whatever the others say
    shown = {"long": _decaying([-0.05], seed=50), "short": _decaying([-0.3], seed=51)}
    effects[1] = controlled_effect(["long", "short"], {k: v for k, v in shown.items()}, shown, slope_gap(fit, (0, 0), (1, 0)))
    assert Claim("08", "c", "p", controlled_tests(effects, "slope L1")).verdict != "held"


def test_range_gap_is_the_statistic_of_slope_range_difference_and_run_name_carries_the_seed():
    fit = (2, 20)
    cs = [_decaying([-0.1, -0.2, -0.3], seed=1), _decaying([-0.3, -0.25, -0.3], seed=2)]
    assert range_gap(fit, 0, 2)(cs) == pytest.approx(slope_range_difference(cs, 0, 2, fit, n_boot=50).effect)
    assert range_gap(fit, 0, 2)(cs) == pytest.approx(0.2, abs=0.01)
    spec = SimpleNamespace(label="pareto (fixed)", seed=2)
    assert run_name(spec) == "pareto (fixed) seed 2" != run_name(SimpleNamespace(label="pareto (fixed)", seed=0))


def test_slope_range_is_max_minus_min_over_the_models_of_one_layer():
    slopes = {
        ("a", 0): Interval(-0.1, -0.2, 0.0, 40),
        ("b", 0): Interval(-0.4, -0.5, -0.3, 40),
        ("c", 0): Interval(-0.2, -0.3, -0.1, 40),
        ("a", 1): Interval(-1.0, -1.1, -0.9, 40),
    }
    assert slope_range(slopes, ["a", "b", "c"], 0) == pytest.approx(0.3)
    assert slope_range(slopes, ["a", "c"], 0) == pytest.approx(0.1)
    assert slope_range(slopes, ["a"], 1) == 0.0
    assert perplexity(np.log(100.0) + NOISE) == pytest.approx(100.0)  # the fixture's perplexities are exact


def test_decay_gate_passes_only_when_every_slope_is_clearly_negative():
    slopes = {
        ("a", 0): Interval(-0.1, -0.2, -0.05, 40),
        ("a", 1): Interval(-0.3, -0.4, -0.2, 40),
        ("b", 0): Interval(-0.02, -0.03, -0.01, 40),
    }
    gate = decay_gate(slopes, (2, 50))
    assert gate.passed and gate.name == "the cell-state change decays with distance (every slope over d = 2..50 < 0)"
    assert gate.detail == "3 slopes, -0.300 to -0.020 per word"
    rising = decay_gate(slopes | {("b", 2): Interval(-0.01, -0.03, 0.0, 40)}, (2, 50))
    assert not rising.passed and rising.detail == "4 slopes, -0.300 to -0.010 per word; not clearly negative: b L3"


def test_ablate_models_and_the_untrained_controls_read_every_spec_with_the_profiles_settings(monkeypatch):
    from prismlib.lstm import ablate_models, untrained_controls
    from prismlib.lstm import slide_claims as module

    calls = []
    monkeypatch.setattr(
        module,
        "untrained_model",
        lambda spec, settings, corpus, device: calls.append(("build", spec, device)) or f"untrained {spec.variant}",
    )
    monkeypatch.setattr(
        module, "cell_state_change", lambda model, *args, **kw: calls.append(("ablate", model, args, kw)) or np.zeros((1, 1, 1))
    )
    settings = SimpleNamespace(threads=1, memory_contexts=7, context=70, memory_warmup=100, memory_mode="remove")
    corpus = SimpleNamespace(test=np.arange(5), stoi={"<unk>": 3})
    specs = [Spec("layerwise", 0), Spec("inverse", 2)]
    controls = untrained_controls(specs, settings, corpus, "cpu")
    assert list(controls) == ["layerwise seed 0", "inverse seed 2"]
    assert [c[0] for c in calls] == ["build", "ablate", "build", "ablate"]  # one model at a time
    assert calls[1][1] == "untrained layerwise" and calls[2][1:] == (specs[1], "cpu")
    _, _, args, kw = calls[3]
    assert args[1:] == (7, 70, 3) and args[0] is corpus.test
    assert kw == {"seed": 2, "warmup": 100, "mode": "remove", "desc": "inverse seed 2 (untrained)"}
    calls.clear()
    trained = ablate_models(specs, lambda spec: f"trained {spec.variant}", settings, corpus)
    assert list(trained) == list(controls) and [c[1] for c in calls] == ["trained layerwise", "trained inverse"]
    assert calls[0][3]["desc"] == "layerwise seed 0" and calls[0][3]["seed"] == 0


FIT = (2, 50)
RATES = {  # per model, the decay rate of layers 1-3: every memory claim holds (layer 1 longest decays slowest, ...)
    "layerwise": [-0.05, -0.15, -0.1],
    "inverse": [-0.3, -0.15, -0.1],
    "baseline": [-0.2, -0.2, -0.1],
}
ASSIGNED_T = {"layerwise": [70.0, 20.0, 5.0], "inverse": [5.0, 20.0, 70.0], "baseline": [None] * 3}


def _memory(seeds=(0,), rates=RATES, control_rates=None, gates=lambda models: (Gate("bigram", True, ""),)):
    """memory_claims on changes decaying at ``rates`` (seed k: ``1 + k / 10`` times as fast); the
    controls at ``control_rates`` (default: every layer of every model at -0.2, no effect) or, with
    ``"same"``, the trained changes."""
    specs = [Spec(v, k) for v in rates for k in seeds]
    changes = {
        run_name(s): _decaying([r * (1 + s.seed / 10) for r in rates[s.variant]], contexts=30, length=60, seed=i)
        for i, s in enumerate(specs)
    }
    if control_rates == "same":
        controls = changes
    else:
        controls = {
            k: _decaying((control_rates or {}).get(k.split()[0], [-0.2] * 3), contexts=30, length=60, seed=i) for i, k in enumerate(changes)
        }
    assigned = {(run_name(s), layer): ASSIGNED_T[s.variant][layer] for s in specs for layer in range(3)}
    slopes = {(k, layer): Interval(layer_slope(c, layer, FIT), -1.0, -0.01, 30) for k, c in changes.items() for layer in range(3)}
    return memory_claims(specs, assigned, slopes, changes, controls, FIT, gates)


@pytest.fixture
def few_resamples(monkeypatch):
    """200 resamples per interval instead of 2000: the claims' logic, not the bootstrap, is under test."""
    from functools import partial

    from prismlib.lstm import ablation
    from prismlib.lstm import slide_claims as module

    monkeypatch.setattr(module, "control_excess", partial(ablation.control_excess, n_boot=200))


def test_memory_claims_hold_where_training_moved_the_slopes_the_claimed_way(few_resamples):
    claims, accounts = _memory()
    assert [c.verdict for c in claims] == ["held"] * 3 and not any(accounts.values())
    assert list(accounts) == ["layer 1", "layer 3's range", "layer order"]
    l1, spread, order = claims
    assert [t.label for t in l1.tests] == [
        "slope L1 (first longest) - slope L1 (last longest) (seed 0)",
        "slope L1 (first longest) - slope L1 (last longest): trained - untrained (seed 0)",
    ]
    assert l1.tests[0].interval.effect == pytest.approx(0.25, abs=0.01) and all(t.sign == 1 and t.threshold == 0 for t in l1.tests)
    assert "'layerwise seed 0' (layer 1 median assigned T 70.0) decays more slowly than 'inverse seed 0' (5.0)" in l1.claim
    assert "tau 20.0 vs 3.3 words" in l1.claim and l1.claim.endswith("; seed 0)")
    assert spread.tests[0].label == "range of L1 slopes - range of L3 slopes (seed 0)" and "across the 3 models" in spread.claim
    assert spread.tests[0].interval.effect == pytest.approx(0.25, abs=0.01)
    # the layer order: each fully fixed model's longest layer against each other layer; the baseline has none
    assert [t.label for t in order.tests[::2]] == [
        "slope L1 - slope L2 (layerwise) (seed 0)", "slope L1 - slope L3 (layerwise) (seed 0)",
        "slope L3 - slope L1 (inverse) (seed 0)", "slope L3 - slope L2 (inverse) (seed 0)",
    ]  # fmt: skip
    assert "layerwise seed 0: L1; slopes -0.050 / -0.150 / -0.100" in order.claim and "baseline" not in order.claim
    assert all(c.unit == "1/word" and c.notebook == "08" for c in claims)
    assert l1.control.startswith("untrained model with the same fixed biases: seed 0: control ")


def test_an_untrained_control_that_shows_the_effect_leaves_no_claim_held(few_resamples):
    claims, accounts = _memory(control_rates="same")
    assert all(c.verdict != "held" for c in claims) and all(accounts.values())
    assert all(t.verdict == "held" for c in claims for t in c.tests[::2])  # the trained effects alone would hold
    assert all("accounts for the effect" in c.control for c in claims)
    # untrained controls that show layer 1's effect (each model's layers alike): that claim alone is not held
    claims, accounts = _memory(control_rates={"layerwise": [-0.05] * 3, "inverse": [-0.3] * 3})
    assert claims[0].verdict != "held" and [c.verdict for c in claims[1:]] == ["held"] * 2
    assert accounts == {"layer 1": True, "layer 3's range": False, "layer order": False}


def test_each_memory_claim_reads_the_gates_of_its_own_models(few_resamples):
    read = []

    def gates(models):
        read.append(list(models))
        return (Gate("uses its context", "baseline seed 0" not in models, ""),)

    claims, _ = _memory(gates=gates)
    assert read == [["layerwise seed 0", "inverse seed 0"], ["layerwise seed 0", "inverse seed 0", "baseline seed 0"],
                    ["layerwise seed 0", "inverse seed 0"]]  # fmt: skip
    assert [c.verdict for c in claims] == ["held", "not testable", "held"]


def test_memory_claims_test_every_seed_within_the_seed(few_resamples):
    claims, _ = _memory(seeds=(0, 1))
    l1 = claims[0]
    assert [t.label for t in l1.tests][-2:] == [
        "slope L1 (first longest) - slope L1 (last longest), mean over 2 seeds",
        "slope L1 (first longest) - slope L1 (last longest): trained - untrained, mean over 2 seeds",
    ]
    assert len(l1.tests) == 2 * 2 + 2 and l1.claim.endswith("; seed 0 of 2, every seed tested)")
    assert "across the 3 models" in claims[1].claim  # the models of one seed
    assert [c.verdict for c in claims] == ["held"] * 3
