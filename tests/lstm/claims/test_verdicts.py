"""The gates every work-B perplexity claim carries (prismlib.lstm.claims.verdicts): the model gate,
the effect-stability gate from the half-budget test NLL, the seeds rule and the one interval
with chunk and seed variance (WorkBClaims.with_seeds), on synthetic runs with known answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest
from lstm_fixtures import Spec

from prismlib.claims import Claim, Test
from prismlib.lstm import LearningCurve, WorkBClaims, perplexity
from prismlib.lstm.claims.verdicts import MIN_SEEDS, SMALL_EFFECT
from prismlib.stats import Interval, combined_interval

N = 2000  # test tokens: 20 chunks of 100
TOKENS = np.linspace(1e5, 2e6, 20)


@dataclass
class Run:
    spec: Spec
    test_chunks: np.ndarray
    half_nll: np.ndarray | None
    curve: LearningCurve | None
    history: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(seconds=600.0))  # 10 minutes of training

    def test_chunks_at_half(self):
        return None if self.half_nll is None else (int(TOKENS[-1] / 2), self.half_nll)


NOISE = np.random.default_rng(0).normal(0, 0.3, N)
NOISE -= NOISE.mean()  # so that a model's perplexity is exactly the one asked for


FLAT = LearningCurve(TOKENS, np.full(len(TOKENS), 150.0))
FALLING = LearningCurve(TOKENS, 100 + 5e4 * TOKENS**-0.5)  # still ~2% over the last quarter


def _runs(models: dict[str, tuple[float, float, int]], curve=FLAT, half: bool = True) -> dict:
    """variant -> (end ppl, half ppl, seeds): runs sharing one test-token noise (seeds differ by 0.001 nats)."""
    out = {}
    for variant, (end, mid, seeds) in models.items():
        for seed in range(seeds):
            spec = Spec(variant, seed)
            out[spec] = Run(spec, np.log(end) + NOISE + 0.001 * seed, (np.log(mid) + NOISE) if half else None, curve)
    return out


def _claims(runs) -> WorkBClaims:
    return WorkBClaims(runs, key=lambda s: s.variant, reference="base", share=0.25, tolerance=0.01)


def _beats(m) -> tuple[Test, ...]:
    return (Test(m.delta("x"), -1, 0.0, "ppl(x) - ppl(base)"),)


def test_a_contrast_that_stopped_moving_passes_and_one_that_moved_fails():
    stable = _claims(_runs({"base": (150, 150, 3), "x": (120, 121, 3)}))
    model, stability, seeds = stable.gates(["base", "x"], _beats)
    assert model.passed and stability.passed and seeds.passed
    # the contrast was -60 at half the budget and is -30 now: it moved 30, more than half the margin (30 / 2)
    moving = _claims(_runs({"base": (150, 180, 3), "x": (120, 120, 3)}))
    _, stability, _ = moving.gates(["base", "x"], _beats)
    assert not stability.passed
    assert stability.detail.startswith("not converged: 1 of 1 contrasts moved more; most: ppl(x) - ppl(base)")


def test_no_half_budget_snapshot_fails_the_stability_gate_and_says_retrain():
    c = _claims(_runs({"base": (150, 150, 3), "x": (120, 120, 3)}, half=False))
    assert c.half is None
    _, stability, _ = c.gates(["base", "x"], _beats)
    assert not stability.passed and "retrain" in stability.detail


def test_model_gate_names_the_run_that_moved_most_and_the_extrapolated_budget():
    runs = _runs({"base": (150, 150, 1), "x": (120, 120, 1)})
    steeper = LearningCurve(TOKENS, 100 + 2e5 * TOKENS**-0.5)
    runs[Spec("x", 0)].curve = steeper
    runs[Spec("base", 0)].curve = FALLING
    model, _, _ = _claims(runs).gates(["base", "x"], _beats)
    assert not model.passed
    assert model.detail.startswith("not converged: 2 of 2 runs still improving; most: x seed 0, valid ppl")
    assert "extrapolation by power-law fits" in model.detail
    # only the runs of the models named are read: the baseline alone (flat) passes
    runs[Spec("base", 0)].curve = FLAT
    alone, _, _ = _claims(runs).gates(["base"], lambda m: ())
    assert alone.passed and alone.detail.startswith("1 runs; most moved: base seed 0")


def test_a_missing_curve_fails_the_model_gate():
    runs = _runs({"base": (150, 150, 1), "x": (120, 120, 1)}, curve=None)
    model, _, _ = _claims(runs).gates(["base", "x"], _beats)
    assert not model.passed and "no learning curve recorded" in model.detail


def test_an_unknown_model_is_an_error_naming_the_models():
    c = _claims(_runs({"base": (150, 150, 1), "x": (120, 120, 1)}))
    with pytest.raises(ValueError, match=r"unknown model\(s\) \['y'\]"):
        c.gates(["base", "y"], _beats)


@pytest.mark.parametrize(
    ("x_ppl", "seeds", "passed"),
    [(149.0, 1, False), (149.0, MIN_SEEDS - 1, False), (149.0, MIN_SEEDS, True), (120.0, 1, True)],
)
def test_a_small_effect_needs_three_seeds_of_every_model(x_ppl, seeds, passed):
    c = _claims(_runs({"base": (150, 150, MIN_SEEDS), "x": (x_ppl, x_ppl, seeds)}))
    _, _, gate = c.gates(["base", "x"], _beats)
    assert gate.passed is passed
    if x_ppl == 120.0:  # 20% is not small: no seeds needed
        assert gate.detail.startswith(f"no effect under {SMALL_EFFECT:.0%}")


def test_the_small_effect_threshold_is_five_percent_of_the_reference():
    # 4.9% below the reference is small (needs seeds), 5.1% is not
    for x_ppl, passed in ((150 * (1 - 0.049), False), (150 * (1 - 0.051), True)):
        c = _claims(_runs({"base": (150, 150, MIN_SEEDS), "x": (x_ppl, x_ppl, 1)}))
        assert c.gates(["base", "x"], _beats)[2].passed is passed, x_ppl


def test_with_seeds_widens_the_chunk_test_by_each_seeds_perplexity():
    c = _claims(_runs({"base": (150, 150, 3), "x": (148, 148, 3)}))
    (unit,) = _beats(c.end)
    t = c.with_seeds(unit, "x")
    pa, pb = ([perplexity(r) for r in c.end.nll[k]] for k in ("x", "base"))
    expected = combined_interval(unit.interval, pa, pb)  # two arms trained independently, in perplexity
    assert (t.interval.effect, t.interval.low, t.interval.high) == pytest.approx((expected.effect, expected.low, expected.high))
    assert t.interval.resampled == "units+seeds" and t.interval.seeds == 3 and t.interval.effect == unit.interval.effect
    assert (t.sign, t.threshold, t.label, t.kind) == (unit.sign, unit.threshold, unit.label, unit.kind)
    assert c.seed_perplexities("x") == pytest.approx(pa)
    one = _claims(_runs({"base": (150, 150, 3), "x": (148, 148, 1)}))
    (unit1,) = _beats(one.end)
    assert one.with_seeds(unit1, "x") == unit1  # one seed of x: the chunk bootstrap alone


def test_seeds_that_disagree_widen_the_one_interval_past_a_clear_chunk_gain():
    # the chunk bootstrap sees a clear gain; the seeds spread far more than the gain
    runs = _runs({"base": (150, 150, 3), "x": (147, 147, 3)})
    for seed, shift in enumerate((-0.05, 0.0, 0.05)):
        runs[Spec("x", seed)].test_chunks = runs[Spec("x", seed)].test_chunks + shift
    c = _claims(runs)
    (chunk,) = _beats(c.end)
    combined = c.with_seeds(chunk, "x")
    assert chunk.verdict == "held" and combined.verdict == "inside noise"
    assert combined.interval.low < chunk.interval.low and combined.interval.high > chunk.interval.high
    assert combined.interval.contains(0.0) and not chunk.interval.contains(0.0)
    assert Claim("07", "x beats base", "", (combined,), ()).verdict == "inside noise"
    # the seeds agree: the one interval stays close to the chunk bootstrap and the gain holds
    (quiet,) = _beats(_claims(_runs({"base": (150, 150, 3), "x": (147, 147, 3)})).end)
    assert _claims(_runs({"base": (150, 150, 3), "x": (147, 147, 3)})).with_seeds(quiet, "x").verdict == "held"


# -- exact details, boundaries and the contrast that moved most (issue 23: the mutants of verdicts are killed) --


def test_the_constants_and_the_exact_seeds_detail():
    assert (SMALL_EFFECT, MIN_SEEDS) == (0.05, 3)
    c = _claims(_runs({"base": (150, 150, 3), "x": (149, 149, 1)}))
    _, _, gate = c.gates(["base", "x"], _beats)
    ref = c.end.perplexity("base")
    effect = c.end.delta("x").effect
    assert gate.name == "seeds: >= 3 per model where an effect is under 5% of the reference's perplexity"
    assert gate.detail == (
        f"ppl(x) - ppl(base) = {effect:+.2f} is under 5% ({0.05 * ref:.1f} ppl) with seeds base: 3, x: 1; "
        "2 more runs would test it (about 20 worker-minutes; the profile's -long twin trains them)"
    )
    few = _claims(_runs({"base": (150, 150, 1), "x": (149, 149, 2)})).gates(["base", "x"], _beats)[2]
    assert few.detail.endswith("; 3 more runs would test it (about 30 worker-minutes; the profile's -long twin trains them)")
    ok = _claims(_runs({"base": (150, 150, 3), "x": (149, 149, 3)})).gates(["base", "x"], _beats)[2]
    assert ok.passed and ok.detail == "seeds base: 3, x: 3"
    big = _claims(_runs({"base": (150, 150, 1), "x": (120, 120, 1)})).gates(["base", "x"], _beats)[2]
    assert big.detail == "no effect under 5% (7.5 ppl)"


def test_an_effect_of_exactly_five_percent_is_not_small():
    c = _claims(_runs({"base": (150, 150, 3), "x": (120, 120, 1)}))
    edge = 0.05 * c.end.perplexity("base")

    def tests_of(m):
        return (Test(Interval(-edge, -edge - 1, -edge + 1, 20), -1, 0.0, "edge"),)

    assert c.gates(["base", "x"], tests_of)[2].passed
    just = c.gates(["base", "x"], lambda m: (Test(Interval(-0.99 * edge, -edge - 1, -edge + 1, 20), -1, 0.0, "in"),))[2]
    assert not just.passed


def test_with_seeds_takes_the_reference_by_default_another_arm_and_a_statistic():
    c = _claims(_runs({"base": (150, 150, 2), "x": (148, 148, 2), "y": (140, 140, 2)}))
    unit = Test(c.end.delta("x"), -1, 0.0, "ppl(x) - ppl(base)")
    assert c.with_seeds(unit, "x") == c.with_seeds(unit, "x", "base")
    ppl_x, ppl_y = c.seed_perplexities("x"), c.seed_perplexities("y")
    vs_y = c.with_seeds(unit, "x", "y").interval
    assert vs_y == combined_interval(unit.interval, ppl_x, ppl_y) and vs_y.seeds == 2
    logs = c.with_seeds(unit, "x", statistic=lambda nll: float(np.log(perplexity(nll)))).interval
    assert logs == combined_interval(unit.interval, [np.log(p) for p in ppl_x], [np.log(p) for p in c.seed_perplexities("base")])
    few = _claims(_runs({"base": (150, 150, 1), "x": (148, 148, 3)}))
    assert few.with_seeds(unit, "x") is unit


def test_the_stability_gate_names_the_contrast_that_moved_most_for_its_margin():
    c = _claims(_runs({"base": (150, 150, 3), "x": (120, 110, 3), "y": (145, 147, 3)}))

    def two(m):  # "xx" moved 10 of a margin 30 (a third); "aa" moved 2 of a margin 5 (0.4): "aa" moved most
        return (Test(m.delta("x"), -1, 0.0, "xx"), Test(m.delta("y"), -1, 0.0, "aa"))

    _, stability, _ = c.gates(["base", "x", "y"], two)
    assert stability.passed and stability.detail.startswith("2 contrasts; most moved: aa: contrast")
    assert stability.name == "stable: every contrast moved <= half its margin since half the budget"

    def small_margin(m):  # the same moves, the "aa" margin made 0.25: it moved 2, more than half of it
        return (Test(m.delta("x"), -1, 0.0, "xx"), Test(m.delta("y"), -1, -4.75, "aa"))

    _, stability, _ = c.gates(["base", "x", "y"], small_margin)
    assert not stability.passed
    assert stability.detail.startswith("not converged: 1 of 2 contrasts moved more; most: aa: contrast")
    tie = c.gates(["base", "x"], lambda m: (Test(m.delta("x"), -1, 0.0, "a"), Test(m.delta("x"), -1, 0.0, "b")))[1]
    assert tie.detail.startswith("2 contrasts; most moved: a: contrast")  # the first of equals
    none = c.gates(["base"], lambda m: ())[1]
    assert none.passed and none.detail == "no contrast"


def test_the_model_gate_detail_reads_the_longest_budget_and_the_run_that_moved_most():
    runs = _runs({"base": (150, 150, 1), "x": (120, 120, 1)})
    runs[Spec("base", 0)].curve = LearningCurve(TOKENS[:10], FALLING.valid_ppl[:10])  # 4.9% over its last quarter
    runs[Spec("x", 0)].curve = FALLING  # 3.9% over its last quarter, of twice the budget
    model, _, _ = _claims(runs).gates(["base", "x"], _beats)
    assert not model.passed and "times the 2 million trained" in model.detail
    assert model.detail.startswith("not converged: 2 of 2 runs still improving; most: base seed 0, valid ppl 157.8 -> 150.0")
    assert model.name == "converged: every model improved < 1% over the last 25% of its budget"


def test_interval_row():
    from prismlib.lstm import interval_row

    assert interval_row(Interval(12.3, 10.1, 14.6, 20), 164.0) == "+12.3 [+10.1, +14.6] (+7.5%)"
    assert interval_row(None, 164.0) == ""


# ---------------------------------------------------------------- annealed runs (the cpu recipe)
from prismlib.anneal import DID_NOT_LEARN, STOPPED_AT_CAP, STOPPED_BY_RULE, AnnealState  # noqa: E402


@dataclass
class History:
    anneal: AnnealState
    val_ppl: list
    epochs: int = 30
    tokens: int = 7_000_000

    @property
    def stop_reason(self):
        return self.anneal.stop


@dataclass
class AnnealedRun:
    spec: Spec
    test_chunks: np.ndarray
    valid: dict  # "end" / "previous" -> validation NLL
    history: History

    def valid_chunks_at(self, which):
        return self.valid.get(which)

    def test_chunks_at_half(self):
        raise AssertionError("the stability gate of annealed runs must not read test")


def _annealed(models: dict[str, tuple[float, float, float, str]]) -> dict:
    """variant -> (test ppl, valid ppl at the end, valid ppl at the previous decay, stop reason), one seed each."""
    out = {}
    for variant, (test, v_end, v_prev, stop) in models.items():
        spec = Spec(variant, 0)
        valid = {"end": np.log(v_end) + NOISE, "previous": np.log(v_prev) + NOISE}
        out[spec] = AnnealedRun(spec, np.log(test) + NOISE, valid, History(AnnealState(rounds=30, stop=stop), [v_end]))
    return out


def _gates_of(runs, margin_test=lambda s: [Test(s.delta("b"), 1, 0.0, "ppl(b) - ppl(a)")]):
    checks = WorkBClaims(runs, key=lambda s: s.variant, reference="a")
    assert checks.annealed
    return checks.gates(["a", "b"], margin_test)


def test_annealed_runs_stopped_by_rule_whose_validation_contrast_held_still_pass_both_gates():
    model, stable, _ = _gates_of(_annealed({"a": (100, 110, 111, STOPPED_BY_RULE), "b": (120, 130, 131.5, STOPPED_BY_RULE)}))
    assert model.passed and "stopped by rule" in model.detail
    assert stable.passed and "validation" in stable.name


def test_an_annealed_run_stopped_at_its_cap_is_not_converged_and_one_that_never_learned_did_not_learn():
    model, _, _ = _gates_of(_annealed({"a": (100, 110, 111, STOPPED_BY_RULE), "b": (120, 130, 131, STOPPED_AT_CAP)}))
    assert not model.passed and model.detail.startswith("not converged: 1 of 2 runs stopped at their cap, e.g. b seed 0")
    model, _, _ = _gates_of(_annealed({"a": (100, 110, 111, STOPPED_BY_RULE), "b": (680, 690, 690, DID_NOT_LEARN)}))
    assert not model.passed and model.detail.startswith("did not learn: 1 of 2 runs never beat the bigram")


def test_a_validation_contrast_that_still_moved_over_the_last_decay_fails_stability_whatever_test_says():
    # test says b - a = +20 at the end; on validation the contrast went +40 -> +20 over the last phase
    _, stable, _ = _gates_of(_annealed({"a": (100, 110, 110, STOPPED_BY_RULE), "b": (120, 130, 150, STOPPED_BY_RULE)}))
    assert not stable.passed and "previous post-decay checkpoint" in stable.name


def test_annealed_runs_without_two_post_decay_checkpoints_fail_stability():
    runs = _annealed({"a": (100, 110, 111, STOPPED_BY_RULE), "b": (120, 130, 131, STOPPED_BY_RULE)})
    for r in runs.values():
        r.valid = {"end": r.valid["end"]}
    checks = WorkBClaims(runs, key=lambda s: s.variant, reference="a")
    _, stable, _ = checks.gates(["a", "b"], lambda s: [Test(s.delta("b"), 1, 0.0, "x")])
    assert not stable.passed and "fewer than two post-decay checkpoints" in stable.detail


def test_a_mix_of_annealed_and_constant_rate_runs_is_not_annealed():
    """One constant-rate run among annealed ones makes the claim's runs not annealed: its
    stability gate then reads the half-budget test NLL, which the annealed run lacks."""
    runs = _annealed({"a": (100, 110, 111, STOPPED_BY_RULE)})
    for r in runs.values():
        r.test_chunks_at_half = lambda: None  # type: ignore[method-assign]
        r.curve = FLAT  # type: ignore[attr-defined]
    runs.update(_runs({"b": (120, 120, 1)}))
    checks = WorkBClaims(runs, key=lambda s: s.variant, reference="a")
    assert not checks.annealed and checks.stable is None
    _, stable, _ = checks.gates(["a", "b"], lambda s: [Test(s.delta("b"), 1, 0.0, "x")])
    assert not stable.passed and "no test NLL stored at half the budget" in stable.detail


def test_the_annealed_stability_gate_compares_validation_not_test():
    """Test says b - a = +20 at the end, validation +40 at both post-decay checkpoints: the
    contrast the gate compares held still, whatever test says."""
    runs = _annealed({"a": (100, 110, 110, STOPPED_BY_RULE), "b": (120, 150, 150, STOPPED_BY_RULE)})
    _, stable, _ = _gates_of(runs)
    assert stable.passed


def test_tests_that_need_bins_the_snapshots_lack_cannot_check_stability():
    from prismlib.lstm.chunks import MissingBins

    c = _claims(_runs({"base": (150, 150, 3), "x": (120, 120, 3)}))

    def tests_of(m):
        if m is not c.end:
            raise MissingBins("no bins at half the budget")
        return _beats(m)

    _, stability, _ = c.gates(["base", "x"], tests_of)
    assert not stability.passed and stability.detail == "cannot be checked: no bins at half the budget"


def test_the_seed_cost_is_each_missing_run_at_its_own_models_mean_seconds():
    runs = _runs({"base": (150, 150, 3), "x": (149, 149, 1)})
    for s, r in runs.items():
        r.history = SimpleNamespace(seconds=600.0 if s.variant == "base" else 3000.0)
    gate = _claims(runs).gates(["base", "x"], _beats)[2]
    # x lacks 2 runs at its own 50 minutes: 100 worker-minutes (base's runs would say 20)
    assert gate.detail.endswith("; 2 more runs would test it (about 100 worker-minutes; the profile's -long twin trains them)")
    for r in runs.values():
        r.history = SimpleNamespace(seconds=15.0)
    half_minute = _claims(runs).gates(["base", "x"], _beats)[2]  # 2 x 15 s = 0.5 minutes, shown as 0
    assert "(about 0 worker-minutes;" in half_minute.detail
    for r in runs.values():
        r.history = SimpleNamespace()
    unknown = _claims(runs).gates(["base", "x"], _beats)[2]
    assert "(training time unknown;" in unknown.detail


def test_converged_gate_reads_the_rule_for_annealed_runs_and_the_curves_otherwise():
    from prismlib.lstm import converged_gate

    annealed = {f"{s.variant}": r for s, r in _annealed({"a": (100, 110, 111, STOPPED_BY_RULE)}).items()}
    assert converged_gate(annealed).name == "converged: every run stopped by its schedule's rule (not at its cap)"
    plain = {f"{s.variant}": r for s, r in _runs({"b": (120, 120, 1)}).items()}
    gate = converged_gate(plain, share=0.25, tolerance=0.01)
    assert gate.passed and gate.name == "converged: every model improved < 1% over the last 25% of its budget"
    for r in plain.values():
        r.history = SimpleNamespace(seconds=600.0, anneal=None)
    for r in annealed.values():
        r.curve = FLAT  # type: ignore[attr-defined]
    mixed = {**annealed, **plain}
    assert converged_gate(mixed, share=0.25, tolerance=0.01).name.startswith("converged: every model improved")
    with pytest.raises(ValueError, match="at least one model"):
        converged_gate({})


def test_stopped_by_rule_details_name_the_run_its_rounds_tokens_and_best_validation():
    from prismlib.lstm.claims.verdicts import stopped_by_rule

    with pytest.raises(ValueError, match="stopped_by_rule needs at least one run"):
        stopped_by_rule({})
    runs = {
        f"{s.variant} seed 0": r
        for s, r in _annealed(
            {"a": (100, 110, 111, STOPPED_BY_RULE), "b": (120, 130, 131, STOPPED_AT_CAP), "c": (680, 690, 690, DID_NOT_LEARN)}
        ).items()
    }
    runs["b seed 0"].history = History(AnnealState(rounds=30, stop=STOPPED_AT_CAP, decayed_at=(20, 25)), [140.0, 130.0], 30, 7_400_000)
    runs["c seed 0"].history = History(AnnealState(rounds=30, stop=DID_NOT_LEARN), [700.0, 650.5, 690.0])
    unlearned = stopped_by_rule(runs)
    assert unlearned.detail == (
        "did not learn: 1 of 3 runs never beat the bigram on validation within their cap, e.g. c seed 0 (best valid 650.5)"
    )
    del runs["c seed 0"]
    capped = stopped_by_rule(runs)
    assert capped.detail == "not converged: 1 of 2 runs stopped at their cap, e.g. b seed 0 after 30 rounds (7.4M tokens) (2 decays)"
    runs["b seed 0"].history = History(AnnealState(rounds=30, stop=STOPPED_BY_RULE), [140.0, 130.0])
    runs["a seed 0"].history = History(AnnealState(rounds=31, stop=STOPPED_BY_RULE), [150.0, 140.0, 110.0], 31, 7_300_000)
    done = stopped_by_rule(runs)  # "a" has the most validation checkpoints, "b" the larger name and fewer checkpoints
    assert done.passed and done.detail == "2 runs stopped by rule; longest: a seed 0 after 31 rounds (7.3M tokens)"
