"""Notebook 08's memory claims (prismlib.lstm.claims.ablation_claims): the gates, the controlled tests, the
pooled seed contrast and the claims on simulated cell-state changes with known decay rates."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from lstm_fixtures import Spec
from scipy.stats import t as t_dist

from prismlib.anneal import STOPPED_AT_CAP, STOPPED_BY_RULE
from prismlib.claims import Claim, Gate
from prismlib.lstm import (
    L3_SIMILAR,
    MemoryGates,
    control_note,
    controlled_effect,
    controlled_tests,
    decay_gate,
    layer_slope,
    memory_claims,
    perplexity,
    range_gap,
    run_name,
    slope_gap,
    slope_range,
)
from prismlib.lstm.ablation import pooled_seed_contrast, slope_difference, slope_range_difference
from prismlib.stats import Interval, mean_interval

N = 2000  # test tokens: 20 chunks of 100
NOISE = np.random.default_rng(0).normal(0, 0.3, N)
NOISE -= NOISE.mean()  # a model's perplexity is exactly the one asked for


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
    assert [t.label for t in passed.tests] == [
        "slope L1 (seed 0 alone: contexts only)",
        "slope L1: trained - untrained (seed 0 alone: contexts only)",
    ]
    assert "does not account for it" in control_note({0: beyond}) and "accounts for the effect" in control_note({0: shown})


def test_controlled_tests_over_seeds_are_one_t_interval_per_contrast():
    fit = (2, 20)
    effects = {}
    for seed in (0, 1, 2):
        changes = {"long": _decaying([-0.05], seed=10 + seed), "short": _decaying([-0.3], seed=20 + seed)}
        flat = {"long": _decaying([-0.2], seed=30 + seed), "short": _decaying([-0.2], seed=40 + seed)}
        effects[seed] = controlled_effect(["long", "short"], changes, flat, slope_gap(fit, (0, 0), (1, 0)))
    tests = controlled_tests(effects, "slope L1")
    assert [t.label for t in tests] == [
        "slope L1, t over 3 seeds (each on its own contexts)",
        "slope L1: trained - untrained, t over 3 seeds (each on its own contexts)",
    ]
    assert tests[-1].interval.resampled == "runs" and tests[-1].interval.effect == pytest.approx(
        np.mean([e.excess.effect for e in effects.values()])
    )
    assert Claim("08", "c", "p", tests).verdict == "held"
    # one seed where the control shows the effect: the seeds disagree, the t interval widens past 0
    shown = {"long": _decaying([-0.05], seed=50), "short": _decaying([-0.3], seed=51)}
    effects[1] = controlled_effect(["long", "short"], {k: v for k, v in shown.items()}, shown, slope_gap(fit, (0, 0), (1, 0)))
    excess = controlled_tests(effects, "slope L1")[1]
    assert excess.interval.contains(0.0) and Claim("08", "c", "p", controlled_tests(effects, "slope L1")).verdict != "held"


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
    from prismlib.lstm.claims import ablation_claims as module

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
    """memory_claims on changes decaying at ``rates`` (seed k: about ``1 + k / 10`` times as fast, the
    i-th model ``1 + k (1 + i / 10) / 10``: models differ a little from seed to seed); the
    controls at ``control_rates`` (default: every layer of every model at -0.2, no effect) or, with
    ``"same"``, the trained changes."""
    specs = [Spec(v, k) for v in rates for k in seeds]
    changes = {
        run_name(s): _decaying(
            [r * (1 + s.seed * (1 + list(rates).index(s.variant) / 10) / 10) for r in rates[s.variant]], contexts=30, length=60, seed=i
        )
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
    from prismlib.lstm.claims import ablation_claims as module

    monkeypatch.setattr(module, "control_excess", partial(ablation.control_excess, n_boot=200))
    monkeypatch.setattr(module, "context_interval", partial(ablation.context_interval, n_boot=200))


def test_memory_claims_hold_where_training_moved_the_slopes_the_claimed_way(few_resamples):
    # untrained controls whose layer 3 follows the fixed biases (layer-wise shorter, inverse longer), layer 1 alike
    claims, accounts = _memory(control_rates={"layerwise": [-0.2, -0.2, -0.22], "inverse": [-0.2, -0.1, -0.12]})
    assert [c.verdict for c in claims] == ["held"] * 4 and not any(accounts.values())
    assert list(accounts) == ["layer 1", "layer 3", "layer order"]
    l1, control, similar, order = claims
    # layer 1 is decided on the trained slopes alone; the control is a row of its own
    assert [t.label for t in l1.tests] == ["slope L1 (first longest) - slope L1 (last longest) (seed 0 alone: contexts only)"]
    assert [t.label for t in control.tests] == [
        "slope L1 (first longest) - slope L1 (last longest): trained - untrained (seed 0 alone: contexts only)"
    ]
    assert l1.tests[0].interval.effect == pytest.approx(0.25, abs=0.01) and all(t.sign == 1 and t.threshold == 0 for t in l1.tests)
    assert "'layerwise seed 0' (layer 1 median assigned T 70.0) decays more slowly than 'inverse seed 0' (5.0)" in l1.claim
    assert "tau 20.0 vs 3.3 words" in l1.claim and l1.claim.endswith("; seed 0)")
    assert "'Layer 1 - small timescale most effective - intuitive ..??'" in l1.paper and control.paper.startswith("No slide states it")
    # layer 3: every two models' log timescales within ln(1.5), all 3 pairs
    assert [t.label for t in similar.tests] == [
        "ln tau L3 (layerwise) - ln tau L3 (inverse) (seed 0 alone: contexts only)",
        "ln tau L3 (layerwise) - ln tau L3 (baseline) (seed 0 alone: contexts only)",
        "ln tau L3 (inverse) - ln tau L3 (baseline) (seed 0 alone: contexts only)",
    ]
    assert all(t.kind == "equivalence" and t.threshold == pytest.approx(np.log(L3_SIMILAR)) for t in similar.tests)
    assert similar.unit == "log ratio" and "within a factor 1.5" in similar.claim and "across" not in similar.claim
    assert similar.paper == "'Layer 3 - all model has similar slope - irrespective of fixed bias values - task-dependency ?'"
    assert "training made them alike" in similar.control and "seed 0: 0.61 (trained 0.00)" in similar.control
    assert "the fixed biases alone already keep them within it" in _memory()[0][2].control  # controls alike at -0.2
    claims, accounts = _memory(control_rates={"baseline": [-0.2, -0.2, 0.05]})  # an untrained layer 3 that does not decay
    assert "no decay in layer 3 of baseline seed 0 untrained" in claims[2].control and not accounts["layer 3"]
    assert "training made them alike" in claims[2].control and claims[2].verdict == "held"
    # the layer order: each fully fixed model's longest layer against each other layer; the baseline has none
    assert [t.label for t in order.tests[::2]] == [
        "slope L1 - slope L2 (layerwise) (seed 0 alone: contexts only)", "slope L1 - slope L3 (layerwise) (seed 0 alone: contexts only)",
        "slope L3 - slope L1 (inverse) (seed 0 alone: contexts only)", "slope L3 - slope L2 (inverse) (seed 0 alone: contexts only)",
    ]  # fmt: skip
    assert "layerwise seed 0: L1; slopes -0.050 / -0.150 / -0.100" in order.claim and "baseline" not in order.claim
    assert [c.unit for c in claims] == ["1/word", "1/word", "log ratio", "1/word"] and all(c.notebook == "08" for c in claims)
    assert l1.control.startswith("untrained model with the same fixed biases: seed 0: control ")


def test_layer_3_is_not_similar_where_one_model_keeps_another_timescale(few_resamples):
    rates = RATES | {"inverse": [-0.3, -0.15, -0.2]}  # its layer 3 at twice the others' rate: ln 2 > ln 1.5
    claims, _ = _memory(rates=rates)
    similar = claims[2]
    assert similar.verdict == "not held" and similar.deciding.label.startswith("ln tau L3 (layerwise) - ln tau L3 (inverse)")
    assert abs(similar.deciding.interval.effect) == pytest.approx(np.log(2), abs=0.02)
    claims, _ = _memory(rates=RATES | {"inverse": [-0.3, -0.15, -0.12]})  # ln 1.2 < ln 1.5
    assert claims[2].verdict == "held"


@pytest.mark.parametrize("seeds", [(0,), (0, 1)])
def test_a_layer_3_that_does_not_decay_has_no_timescale_and_its_row_no_verdict(few_resamples, seeds):
    # the smoke profile's barely trained models: layer 3 of one model flat (rate 0) gives no ln tau
    flat = RATES | {"baseline": [-0.2, -0.2, 0.0]}
    decays = Gate("the cell-state change decays with distance", False, "not clearly negative: baseline L3")
    claims, _ = _memory(seeds=seeds, rates=flat, gates=lambda models: (decays,))
    similar = claims[2]
    assert similar.verdict == "not testable" and "no timescale" in similar.deciding.label
    with pytest.raises(ValueError, match="not finite"):  # and no verdict from it should the gates pass
        _memory(seeds=seeds, rates=flat)[0][2].verdict  # noqa: B018


def test_an_untrained_control_that_shows_the_effect_is_the_control_rows_verdict(few_resamples):
    claims, accounts = _memory(control_rates="same")
    l1, control, similar, order = claims
    assert l1.verdict == "held" and control.verdict != "held" and order.verdict != "held"  # the trained slopes still differ
    assert all(accounts.values()) and "the fixed biases alone already keep them within it" in similar.control
    assert "accounts for the effect" in l1.control and "accounts for the effect" in control.control
    # untrained controls that show layer 1's effect (each model's layers alike): the control row alone is not held
    claims, accounts = _memory(control_rates={"layerwise": [-0.05] * 3, "inverse": [-0.3] * 3})
    assert claims[0].verdict == "held" and claims[1].verdict != "held" and [c.verdict for c in claims[2:]] == ["held", "held"]
    assert accounts == {"layer 1": True, "layer 3": False, "layer order": False}


def test_each_memory_claim_reads_the_gates_of_its_own_models(few_resamples):
    read = []

    def gates(models):
        read.append(list(models))
        return (Gate("uses its context", "baseline seed 0" not in models, ""),)

    claims, _ = _memory(gates=gates)
    l1 = ["layerwise seed 0", "inverse seed 0"]
    assert read == [l1, l1, ["layerwise seed 0", "inverse seed 0", "baseline seed 0"], l1]
    assert [c.verdict for c in claims] == ["held", "held", "not testable", "held"]


def test_memory_claims_over_seeds_pool_the_seed_variance_over_the_models(few_resamples):
    claims, _ = _memory(seeds=(0, 1))
    l1, control, similar, _ = claims
    assert [t.label for t in l1.tests] == [
        "slope L1 (first longest) - slope L1 (last longest), mean over 2 seeds; t with the seed variance pooled over the 2 "
        "models with layer 1 fixed (layerwise, inverse)"
    ]
    assert [t.label for t in control.tests] == [
        "slope L1 (first longest) - slope L1 (last longest): trained - untrained, t over 2 seeds (each on its own contexts)"
    ]
    assert similar.tests[0].label == (
        "ln tau L3 (layerwise) - ln tau L3 (inverse), mean over 2 seeds; t with the seed variance pooled over the 3 models"
    )
    assert all(t.interval.resampled == "runs" and t.interval.units == 2 for c in claims[:3] for t in c.tests)
    assert l1.claim.endswith("; seed 0 of 2; tested over the 2 seeds)")
    assert [c.verdict for c in claims] == ["held"] * 4
    # the seed mean of the per-seed slope differences (seed 1: layer-wise 1.1, inverse 1.11 times as fast)
    per_seed = [0.25, 0.3 * 1.11 - 0.05 * 1.1]
    assert l1.tests[0].interval.effect == pytest.approx(np.mean(per_seed), abs=0.01)


def test_pooled_seed_contrast_is_paired_t_for_two_models_and_borrows_the_spread_of_more():
    a, b, c = [1.0, 1.4, 1.1], [0.2, 0.3, 0.5], [0.0, 0.5, 0.1]
    two = pooled_seed_contrast({"a": a, "b": b}, "a", "b")
    paired = mean_interval(np.subtract(a, b))
    assert (two.effect, two.low, two.high) == pytest.approx((paired.effect, paired.low, paired.high))
    assert two.resampled == "runs" and two.units == 3 and two.seeds == 3
    three = pooled_seed_contrast({"a": a, "b": b, "c": c}, "a", "b")
    assert three.effect == pytest.approx(two.effect)
    # by hand: the two-way residuals, (3 - 1)(3 - 1) = 4 degrees of freedom
    x = np.array([a, b, c])
    r = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    half = t_dist.ppf(0.975, 4) * np.sqrt(2 * (r**2).sum() / 4 / 3)
    assert three.high - three.effect == pytest.approx(half)
    # two seeds: t(M - 1), not t(1)
    wide = pooled_seed_contrast({"a": a[:2], "b": b[:2]}, "a", "b")
    narrow = pooled_seed_contrast({"a": a[:2], "b": b[:2], "c": c[:2], "d": [0.3, 0.2]}, "a", "b")
    assert narrow.high - narrow.low < wide.high - wide.low
    with pytest.raises(ValueError, match="at least two|>= 2"):
        pooled_seed_contrast({"a": [1.0], "b": [2.0]}, "a", "b")
    with pytest.raises(ValueError, match="finite"):
        pooled_seed_contrast({"a": [1.0, np.nan], "b": [2.0, 1.0]}, "a", "b")
