"""Learning curves and the two convergence gates of work B: synthetic curves with known answers,
the curve and the half-budget snapshot recorded by training, and an open-ended run that resumes."""

from __future__ import annotations

import math
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from lstm_fixtures import VOCAB, tiny_lstm

from prismlib import jobcache as jobs
from prismlib import lstm, paths
from prismlib.claims import effect_stability_gate
from prismlib.lstm import convergence as cv
from prismlib.lstm import job as lstm_job
from prismlib.lstm import summaries, training, verdicts
from prismlib.profiles import PROFILES, until_converged
from prismlib.runs.train import projection
from prismlib.stats import Interval

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, epochs=2, steps_per_epoch=3, cutoffs=(10, 20), curve_every=1, curve_tokens=100)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _corpus() -> SimpleNamespace:
    rng = np.random.default_rng(0)
    return SimpleNamespace(
        vocab=[str(i) for i in range(VOCAB)],
        train=rng.integers(0, VOCAB, 600),
        valid=rng.integers(0, VOCAB, 200),
        test=rng.integers(0, VOCAB, 200),
    )


def _power(a: float, b: float, c: float, tokens: np.ndarray) -> cv.LearningCurve:
    return cv.LearningCurve(tokens, a + b * tokens ** (-c))


TOKENS = np.geomspace(1e4, 1e6, 40)


def test_model_gate_on_power_laws_with_known_improvement():
    # ppl = 100 + 1e4 * t^-0.5: over the last 25% of 1e6 tokens it falls from 100 + 1e4/sqrt(7.5e5) to 110
    curve = _power(100.0, 1e4, 0.5, TOKENS)
    first = 100 + 1e4 / math.sqrt(7.5e5)
    assert cv.improvement(curve, 0.25) == pytest.approx((first - 110) / first, rel=1e-2)  # about 1.4% (interpolated)
    fails, passes = cv.model_gate("m", curve, 0.25, 0.01), cv.model_gate("m", curve, 0.25, 0.02)
    assert not fails.passed and passes.passed
    assert "not converged" in fails.detail and "-1.4%" in fails.detail and "last 25% of 1M tokens" in fails.detail
    flat = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0))
    assert cv.model_gate("flat", flat).passed
    worse = cv.LearningCurve(TOKENS, np.linspace(80, 90, len(TOKENS)))  # overfitting: stopped improving
    assert cv.model_gate("worse", worse).passed


def test_model_gate_fails_without_a_curve_that_reaches_back():
    assert not cv.model_gate("m", None).passed
    short = cv.LearningCurve(np.array([9e5, 1e6]), np.array([100.0, 99.9]))
    gate = cv.model_gate("m", short, share=0.25)
    assert not gate.passed and "does not reach back" in gate.detail
    with pytest.raises(ValueError, match="increase strictly"):
        cv.LearningCurve(np.array([2.0, 1.0]), np.array([3.0, 2.0]))


def test_models_gate_names_the_models_that_still_move():
    ok, moving = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0)), _power(100.0, 1e4, 0.5, TOKENS)
    gate = cv.models_gate({"baseline seed 0": ok, "X=70 seed 0": moving})
    assert not gate.passed and "X=70 seed 0" in gate.detail and "baseline" not in gate.detail
    assert cv.models_gate({"a": ok, "b": ok}).passed


def test_power_law_fit_recovers_the_curve_and_its_budget():
    fit = cv.fit_power_law(_power(100.0, 1e4, 0.5, TOKENS), skip=0.0)
    assert fit.a == pytest.approx(100, rel=1e-3) and fit.c == pytest.approx(0.5, rel=1e-3)
    assert fit.b == pytest.approx(1e4, rel=1e-2) and fit.points == len(TOKENS)
    B = fit.budget(0.25, 0.01)
    assert fit.improvement(B) == pytest.approx(0.01, rel=1e-4)
    assert fit.improvement(0.9 * B) > 0.01 > fit.improvement(1.1 * B)  # the first budget that passes
    assert B > TOKENS[-1]  # the curve above fails at 1e6 tokens (test above): the budget lies beyond it
    assert fit.budget(0.25, 0.01, start=2 * B) == 2 * B
    with pytest.raises(ValueError, match="at least 4"):
        cv.fit_power_law(cv.LearningCurve(TOKENS[:3], np.array([3.0, 2.0, 1.5])))


def test_stable_budget_and_extrapolation_sentence():
    a = cv.PowerLaw(100.0, 3e3, 0.5, 10, 0.0)
    b = cv.PowerLaw(100.0, 1e3, 0.5, 10, 0.0)
    # contrast 2e3 * t^-0.5 moves 2e3 * (sqrt(2) - 1) / sqrt(B) between B/2 and B; <= margin/2 from
    margin = 2.0
    exact = (2 * 2e3 * (math.sqrt(2) - 1) / margin) ** 2
    B = cv.stable_budget(a, b, margin)
    assert B == pytest.approx(exact, rel=1e-4)
    assert cv.stable_budget(a, a, margin) == 2.0  # no contrast: stable from the start
    note = cv.extrapolation([a, b], trained=1e5, stable=B)
    assert note.startswith("extrapolation by power-law fits") and "times the 100,000 trained" in note
    assert "too few curve points" in cv.extrapolation([a, None], trained=1e5)


def test_old_histories_load_without_curves():
    old = training.TrainHistory(epochs=2, val_ppl=[300.0, 200.0], tokens=10)
    for name in ("steps", "epoch_tokens", "curve_tokens", "curve_ppl", "snapshots", "curve_source"):
        del old.__dict__[name]  # as pickled before these fields existed
    back = pickle.loads(pickle.dumps(old))
    assert back.learning_curve() is None and back.snapshot_near(5) is None and back.steps == 0


def test_training_records_the_curve_and_the_half_budget_snapshot_without_changing_the_weights():
    corpus, s = _corpus(), TINY.updated(epochs=4, curve_every=2)
    spec = lstm.RunSpec("layer2", 5.0, fixed=True, seed=1)
    a = lstm.build_model(spec, VOCAB, s)
    hist = lstm.train_lm(a, corpus.train, corpus.valid, s, seed=1, progress=False, test_ids=corpus.test)
    assert hist.steps == 12 and len(hist.curve_tokens) == 6 and hist.curve_tokens[-1] == hist.tokens
    assert hist.epoch_tokens[-1] == hist.tokens and len(hist.epoch_tokens) == 4
    curve = hist.learning_curve()
    assert curve.source == "first 100 tokens of the validation split" and (curve.valid_ppl > 1).all()
    ((t_half, nll),) = hist.snapshots.items()
    assert t_half == hist.curve_tokens[2] and nll.dtype == np.float32 and nll.shape == corpus.test.shape
    assert hist.snapshot_near(hist.tokens / 2)[0] == t_half
    plain = s.updated(curve_every=None)
    b = lstm.build_model(spec, VOCAB, plain)
    lstm.train_lm(b, corpus.train, corpus.valid, plain, seed=1, progress=False)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


def test_the_long_twins():
    paper_long = until_converged(PROFILES["paper"])  # an NT-ASGD profile's twin trains until the model gate passes
    assert paper_long.name == "paper-long" and paper_long.lstm.until_converged and paper_long.lstm.average_last == 0
    assert paper_long.job_profile == "paper-long" and paper_long.lstm.seeds == PROFILES["paper"].lstm.seeds
    long = until_converged(PROFILES["cpu"])  # an annealed profile's twin adds seeds and shares the first seed's models
    assert long.name == "cpu-long" and not long.lstm.until_converged and long.lstm.all_seeds and long.job_profile == "cpu"
    assert PROFILES["cpu-long"].lstm == long.lstm and long.lstm.seeds == (0, 1, 2)
    assert long.lstm.updated(seeds=(0,), all_seeds=False) == PROFILES["cpu"].lstm
    with pytest.raises(ValueError, match="average_last=0"):
        TINY.updated(until_converged=True, average_last=1)


LONG = TINY.updated(
    epochs=12,
    steps_per_epoch=4,
    curve_every=2,
    until_converged=True,
    average_last=0,
    converge_share=0.5,
    converge_tolerance=0.1,
    optimizer="adam",
    lr=3e-2,
)


def _long_job() -> lstm_job.Job:
    return lstm_job.Job(lstm.RunSpec(seed=5), LONG, "test")


def test_until_converged_stops_at_the_first_epoch_that_passes_the_model_gate(tmp_path):
    corpus, job = _corpus(), _long_job()
    jobs.run_job(job, tmp_path, "cpu", False, corpus)
    hist = torch.load(jobs.job_dir(job, tmp_path) / "done.pt", weights_only=False)["history"]
    assert 1 < hist.epochs < LONG.epochs
    assert cv.model_gate("m", hist.learning_curve(), 0.5, 0.1).passed
    n = hist.epochs * LONG.steps_per_epoch // LONG.curve_every  # the curve as it was one epoch earlier
    before = cv.LearningCurve(np.array(hist.curve_tokens[: n - 2]), np.array(hist.curve_ppl[: n - 2]))
    assert not cv.model_gate("m", before, 0.5, 0.1).passed
    assert set(hist.snapshots) == {t for e, t in enumerate(hist.epoch_tokens, 1) if e in (1, 2, 3, 4, 6, 8, 12)}
    status = lstm_job.read_status(job, tmp_path)
    assert status["tokens"] == hist.tokens and status["epochs"] == hist.epochs


@pytest.mark.slow
def test_a_resumed_until_converged_run_continues_its_curve(tmp_path, monkeypatch):
    corpus, job = _corpus(), _long_job()
    straight = jobs.run_job(job, tmp_path / "straight", "cpu", False, corpus)
    real_save, saves = training.save_atomic, []

    def save_then_die(path, **obj):  # dies right after the second epoch's checkpoint
        real_save(path, **obj)
        saves.append(path)
        if len(saves) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(training, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    monkeypatch.setattr(training, "save_atomic", real_save)
    folder = jobs.job_dir(job, tmp_path / "killed")
    partial = torch.load(folder / "partial.pt", weights_only=False)["history"]
    assert partial.epochs == 2 and len(partial.curve_tokens) == 4
    done_tokens, total, _ = projection([job], 1, tmp_path / "killed")  # status.json: written after each checkpoint
    assert 0 < done_tokens <= partial.tokens and total >= done_tokens
    jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    a = torch.load(f"{straight}/done.pt", weights_only=False)
    b = torch.load(folder / "done.pt", weights_only=False)
    assert b["history"].curve_tokens[:4] == partial.curve_tokens  # continued, not restarted
    assert b["history"].curve_tokens == a["history"].curve_tokens and b["history"].curve_ppl == a["history"].curve_ppl
    np.testing.assert_array_equal(b["test_nll"], a["test_nll"])


def test_claim_gates_and_the_learning_curve_table(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ENV, str(tmp_path))
    corpus = _corpus()
    specs = [lstm.RunSpec(seed=1), lstm.RunSpec("layer2", 5.0, fixed=True, seed=1)]
    runs = lstm.trained(specs, TINY.updated(epochs=4), "test", executor="inline", cache=tmp_path, corpus=corpus)
    end = lstm.seed_means(runs, lambda s: s.label, "baseline")
    half = lstm.seed_means(runs, lambda s: s.label, "baseline", at="half")
    key = specs[1].label
    later = end.delta(key)
    earlier = half.perplexity(key) - half.perplexity("baseline")
    model, stable = verdicts.claim_gates(
        {"baseline": [runs[specs[0]]], key: [runs[specs[1]]]},
        "d",
        later,
        earlier,
        margin=1e-6,
        pair=("baseline", key),
        share=0.25,
        tolerance=1e-9,
    )
    assert not model.passed and ("extrapolation" in model.detail or "no budget" in model.detail)
    assert stable.passed == (abs(later.effect - earlier) <= 5e-7 or later.contains(earlier))
    table = summaries.save_learning_curves(runs, "test")
    assert list(table.columns) == list(summaries.CURVE_COLUMNS) and set(table.model) == {s.label for s in specs}
    assert len(table) == sum(len(r.history.curve_tokens) for r in runs.values())
    again = summaries.save_learning_curves({specs[0]: runs[specs[0]]}, "test")  # replaces its own rows only
    assert again.equals(table)


def test_train_until_converged_runs_the_jobs_with_a_projection_bar(tmp_path):
    from prismlib.runs.train import train_until_converged

    corpus, job = _corpus(), _long_job()
    ran = train_until_converged([job], "inline", 1, "cpu", {}, cache=tmp_path, poll=0.05, data=corpus)
    assert ran == [job] and jobs.is_done(job, tmp_path)
    done_tokens, total, seconds = projection([job], 1, tmp_path)
    assert done_tokens == total == lstm_job.read_status(job, tmp_path)["tokens"] and seconds == 0
    with pytest.raises(ValueError, match="until_converged settings"):
        train_until_converged([lstm_job.Job(lstm.RunSpec(), TINY, "test")], "inline", 1, "cpu", {}, cache=tmp_path)


# -- exact gates, boundaries and details on synthetic curves (issue 23: the mutants of convergence are killed) --


def test_defaults_are_the_last_quarter_and_one_percent():
    assert (cv.SHARE, cv.TOLERANCE) == (0.25, 0.01)
    gate = cv.model_gate("m", cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0)))
    assert gate.name == "converged: m improved < 1% over the last 25% of its budget"
    assert gate.detail.startswith("valid ppl 80.0 -> 80.0 (") and gate.detail.endswith("over the last 25% of 1M tokens; allowed 1%")


def test_a_learning_curve_checks_its_points():
    for tokens, ppl in ((np.ones((2, 2)), np.ones((2, 2)) * 2), (np.arange(1.0, 4.0), np.full(2, 2.0))):
        with pytest.raises(ValueError, match="aligned"):
            cv.LearningCurve(tokens, ppl)
    for tokens in ([1.0, 2.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0]):
        with pytest.raises(ValueError, match="increase strictly"):
            cv.LearningCurve(np.array(tokens), np.full(4, 2.0))
    for ppl in ([2.0, np.inf, 2.0], [2.0, 0.5, 2.0], [np.nan, 2.0, 2.0]):
        with pytest.raises(ValueError, match="finite and >= 1"):
            cv.LearningCurve(np.arange(1.0, 4.0), np.array(ppl))
    perfect = cv.LearningCurve(np.arange(1.0, 4.0), np.array([1.5, 1.0, 1.0]))  # a perplexity of 1 is allowed
    assert perfect.budget == 3.0
    empty = cv.LearningCurve(np.array([]), np.array([]))
    assert empty.budget == 0.0
    with pytest.raises(ValueError, match=r"outside the curve \(no points\)"):
        empty.at(1.0)


def test_at_interpolates_in_log_tokens_between_the_end_points_inclusive():
    c = cv.LearningCurve(np.array([1e4, 1e5, 1e6]), np.array([300.0, 200.0, 150.0]))
    assert c.at(1e4) == 300.0 and c.at(1e6) == 150.0 and c.at(1e5) == 200.0
    assert c.at(10**5.5) == pytest.approx(175.0)
    for outside in (9e3, 1.1e6):
        with pytest.raises(ValueError, match=r"lie outside the curve \(1e\+04 to 1e\+06 tokens\)"):
            c.at(outside)


def test_improvement_and_the_model_gate_on_a_two_point_curve_at_the_boundary():
    c = cv.LearningCurve(np.array([1e5, 2e5]), np.array([100.0, 99.0]))
    assert cv.improvement(c, 0.5) == 0.01  # start exactly at the first point: allowed
    at_tolerance = cv.model_gate("m", c, 0.5, 0.01)  # improved exactly the tolerance: not < it
    assert not at_tolerance.passed
    assert at_tolerance.detail == "not converged: valid ppl 100.0 -> 99.0 (-1.0%) over the last 50% of 200k tokens; allowed 1%"
    assert at_tolerance.name == "converged: m improved < 1% over the last 50% of its budget"
    assert cv.model_gate("m", c, 0.5, 0.02).passed
    worse = cv.LearningCurve(np.array([1e5, 2e5]), np.array([99.0, 100.0]))
    assert cv.improvement(worse, 0.5) == pytest.approx(-1 / 99) and cv.model_gate("w", worse, 0.5).detail.startswith(
        "valid ppl 99.0 -> 100.0 (+1.0%)"
    )
    for share in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="share must be in"):
            cv.improvement(c, share)
    one = cv.LearningCurve(np.array([1e5]), np.array([100.0]))
    assert cv.model_gate("m", one).detail == "not converged: no learning curve recorded for m"
    assert cv.model_gate("m", None).detail == "not converged: no learning curve recorded for m"
    with pytest.raises(ValueError, match="does not reach back"):
        cv.improvement(one, 0.5)


def test_power_law_values_and_improvement():
    law = cv.PowerLaw(100.0, 1e4, 0.5, 5, 0.0)
    assert law(1e4) == 200.0 and isinstance(law(1e4), float)
    np.testing.assert_allclose(law(np.array([1e4, 1e6])), [200.0, 110.0])
    assert law.improvement(1e6) == pytest.approx((law(7.5e5) - 110.0) / law(7.5e5), rel=1e-12)  # share 0.25
    assert law.improvement(1e6, 0.5) == pytest.approx((law(5e5) - 110.0) / law(5e5), rel=1e-12)
    assert str(law) == "100.0 + 1e+04 * tokens^-0.500"
    flat = cv.PowerLaw(100.0, 1e-9, 0.5, 5, 0.0)
    assert flat.budget() == 1.0  # passes from the first token
    B = law.budget(0.25, 0.01)
    assert law.budget(0.25, 0.01, start=0.8 * B) == pytest.approx(B, rel=1e-5)  # the root just above the start
    assert cv.PowerLaw(0.0, 1.0, 0.5, 5, 0.0).budget() == np.inf  # improves 13% per quarter forever


def test_power_law_fit_bounds_points_and_rmse():
    tokens = np.linspace(5e4, 1e6, 20)  # includes 1e5 = 10% of the budget
    curve = cv.LearningCurve(tokens, 1.5 + 300.0 * (tokens / 1e6) ** -0.7)  # an asymptote of 1.5
    fit = cv.fit_power_law(curve)
    assert fit.points == int((tokens >= 1e5).sum()) == 19 and fit.a == pytest.approx(1.5, abs=1e-3)
    assert cv.fit_power_law(curve, skip=0.5).points == int((tokens >= 5e5).sum())
    rng = np.random.default_rng(0)
    noisy = cv.LearningCurve(tokens, 150.0 + 3e3 * tokens**-0.4 + rng.normal(0, 0.5, 20))
    fit = cv.fit_power_law(noisy)
    keep = tokens >= 1e5
    assert fit.rmse == pytest.approx(np.sqrt(np.mean((fit(tokens[keep]) - noisy.valid_ppl[keep]) ** 2)), rel=1e-9)
    assert fit.rmse > 0.1
    rising = cv.LearningCurve(tokens, 80.0 + np.linspace(0, 5, 20))  # overfitting: no decay to fit
    assert cv.fit_power_law(rising).a <= rising.valid_ppl[keep].min() + 1e-9  # the asymptote is at most the best ppl
    small = cv.LearningCurve(tokens, 100.0 + 200.0 * tokens**-0.5)  # b = 0.2 on the fit's scale (tokens / 1e6)
    assert cv.fit_power_law(small).b == pytest.approx(200.0, rel=1e-2)
    steep = cv.LearningCurve(tokens, 100.0 + 5.0 * (tokens / 1e6) ** -8.0)
    assert cv.fit_power_law(steep).c <= 5.0  # the exponent is bounded
    four = cv.LearningCurve(np.array([1e5, 2e5, 3e5, 4e5]), np.array([200.0, 150.0, 130.0, 120.0]))
    assert cv.fit_power_law(four, skip=0.0).points == 4
    with pytest.raises(ValueError, match="did not converge"):  # the asymptote bound collapses at ppl 1
        cv.fit_power_law(cv.LearningCurve(tokens, np.linspace(3.0, 1.0, 20)))


def test_stable_budget_boundaries_and_both_orders():
    a = cv.PowerLaw(100.0, 3e3, 0.5, 10, 0.0)
    b = cv.PowerLaw(100.0, 1e3, 0.5, 10, 0.0)
    for margin in (2.0, 2.47, 0.5):
        exact = (2 * 2e3 * (math.sqrt(2) - 1) / margin) ** 2
        assert cv.stable_budget(a, b, margin) == pytest.approx(exact, rel=1e-4)
        assert cv.stable_budget(b, a, margin) == pytest.approx(exact, rel=1e-4)  # the contrast falls instead
    assert cv.stable_budget(a, a, 0.0) == math.inf and cv.stable_budget(a, b, -1.0) == math.inf
    assert cv.stable_budget(a, a, 1.0) == 2.0 and cv.stable_budget(a, a, 1.0, start=5.0) == 5.0
    assert cv.stable_budget(a, b, 2.0, start=1e7) == 1e7
    assert cv.stable_budget(cv.PowerLaw(0.0, 1.0, -0.5, 5, 0.0), b, 1.0) == math.inf  # grows without end


def test_extrapolation_sentences():
    fast, slow = cv.PowerLaw(100.0, 1e2, 0.5, 10, 0.0), cv.PowerLaw(100.0, 1e4, 0.5, 10, 0.0)
    need = slow.budget()
    assert fast.budget() < need
    assert cv.extrapolation([fast, slow], trained=1e5) == (
        f"extrapolation by power-law fits: the model gate would pass at about {cv.humane_number(need)} tokens, "
        f"{cv.humane_number(need / 1e5)} times the 100,000 trained"
    )
    assert cv.extrapolation([slow], trained=0.0).endswith(f", {cv.humane_number(need)} times the 0 trained")
    more = cv.extrapolation([fast, slow], trained=1e5, stable=10 * need)
    assert more.startswith(
        f"extrapolation by power-law fits: the model and effect-stability gates would pass at about {cv.humane_number(10 * need)} tokens"
    )
    less = cv.extrapolation([fast, slow], trained=1e5, stable=1.0)
    assert f"the model and effect-stability gates would pass at about {cv.humane_number(need)} tokens" in less
    assert cv.extrapolation([cv.PowerLaw(0.0, 1.0, 0.5, 5, 0.0)], 1e5) == (
        "extrapolation by power-law fits: the gates would not pass within a quadrillion (1e15) tokens, where the search stops"
    )
    for fits in ([], [None], [fast, None]):
        assert cv.extrapolation(fits, trained=1e5) == "no budget extrapolated (a model has too few curve points for a fit)"


def test_an_extrapolation_beyond_a_trillion_tokens_is_not_within_any_feasible_budget():
    """Notebook 07's gates read "would pass at about 1.22e+05G tokens (60224986.7x the 2.02M
    trained)" before issue 44: now the number in words, and no promise of a run."""
    fast = cv.PowerLaw(100.0, 1e2, 0.5, 10, 0.0)
    assert fast.budget() < cv.FEASIBLE_TOKENS
    assert cv.extrapolation([fast], trained=2.02e6, stable=1.22e14) == (
        "extrapolation by power-law fits: the model and effect-stability gates would not pass within any feasible budget "
        "(only at about 122 trillion tokens, 60.4 million times the 2.02 million trained; feasible: up to 1 trillion)"
    )
    at_the_limit = cv.extrapolation([fast], trained=2.02e6, stable=cv.FEASIBLE_TOKENS)
    assert at_the_limit.endswith("would pass at about 1 trillion tokens, 495,000 times the 2.02 million trained"), at_the_limit
    beyond = cv.extrapolation([fast], trained=2.02e6, stable=1.01 * cv.FEASIBLE_TOKENS)
    assert "would not pass within any feasible budget (only at about 1.01 trillion tokens" in beyond, beyond


def test_numbers_are_written_as_a_reader_says_them():
    cases = {
        1.22e14: "122 trillion",
        60224986.7: "60.2 million",
        2.02e6: "2.02 million",
        1e6: "1 million",
        999_999.0: "1 million",  # rounded before the word is chosen
        999_499.0: "999,000",
        12_345.0: "12,300",
        -12_345.0: "-12,300",
        1000.0: "1,000",
        999.5: "1,000",
        131.1: "131",
        0.5: "0.5",
        0.0: "0",
        -2.5e9: "-2.5 billion",
        1e15: "1 quadrillion",
        9.99e17: "999 quadrillion",
        1.22e18: "1.22e+18",
        1e18: "1e+18",
        -1.22e18: "-1.22e+18",
        math.inf: "inf",
    }
    assert {n: cv.humane_number(n) for n in cases} == cases
    assert cv.humane_number(math.nan) == "nan"


def _read_back(text: str) -> float:
    number, _, word = text.partition(" ")
    return float(number.replace(",", "")) * dict(cv.SCALES).get(word, 1.0)


@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_a_humane_number_reads_back_to_within_its_three_digits(n):
    text = cv.humane_number(n)
    assert len(text.split(" ")) <= 2 and text.split(" ")[-1] in (*dict(cv.SCALES), text.split(" ")[0])
    assert _read_back(text) == pytest.approx(n, rel=5e-3, abs=1e-300)


def test_models_gate_details():
    ok = cv.LearningCurve(TOKENS, np.full(len(TOKENS), 80.0))
    moving = _power(100.0, 1e4, 0.5, TOKENS)
    gate = cv.models_gate({"a": ok, "b": ok})
    assert gate.passed and gate.detail == "; ".join(f"{k}: {cv.model_gate(k, ok).detail}" for k in "ab")
    assert gate.name == "converged: every model improved < 1% over the last 25% of its budget"
    failed = cv.models_gate({"a": ok, "b": moving})
    assert not failed.passed
    assert failed.detail == "not converged: b: " + cv.model_gate("b", moving).detail.removeprefix("not converged: ")
    with pytest.raises(ValueError, match="at least one"):
        cv.models_gate({})


def _run(label: str, seed: int, curve):
    return SimpleNamespace(spec=SimpleNamespace(label=label, seed=seed), curve=curve)


def test_claim_gates_on_synthetic_runs():
    short = np.geomspace(1e4, 5e5, 30)
    base = [_run("base", 0, _power(100.0, 1e4, 0.5, TOKENS))]
    x = [_run("x", 0, _power(90.0, 1e4, 0.5, short))]
    later = Interval(-10.0, -11.0, -9.0, 40)
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "ppl(x) - ppl(base)", later, -9.5, 20.0)
    fits = [cv.fit_power_law(r.curve) for r in (*base, *x)]
    note = cv.extrapolation(fits, 1e6)
    assert not model.passed and model.detail.endswith(f"; {note}") and "times the 1 million trained" in note
    assert stable.passed and stable.detail == effect_stability_gate("ppl(x) - ppl(base)", later, -9.5, 20.0).detail
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "d", later, -2.0, 1.0, pair=("base", "x"))
    both = cv.extrapolation(fits, 1e6, stable=cv.stable_budget(fits[0], fits[1], 1.0))
    assert "the model and effect-stability gates" in both and model.detail.endswith(f"; {both}")
    assert not stable.passed and stable.detail.endswith(f"; {both}")
    model, stable = verdicts.claim_gates({"base": base, "x": x}, "d", later, None, 1.0)
    assert not stable.passed and stable.name == "stable: d moved <= half its margin since half the budget"
    assert stable.detail.startswith("not converged: no test NLL stored at half the budget")
    few = [_run("x", 0, cv.LearningCurve(TOKENS[:3], np.array([300.0, 200.0, 150.0])))]  # too few points to fit
    model, _ = verdicts.claim_gates({"base": base, "x": few}, "d", later, -10.0, 1.0, pair=("base", "x"))
    assert model.detail.endswith("; no budget extrapolated (a model has too few curve points for a fit)")
    none = [_run("x", 0, None)]
    model, stable = verdicts.claim_gates({"x": none}, "d", later, -10.0, 1.0)
    assert not model.passed and model.detail.endswith("no budget extrapolated (a model has too few curve points for a fit)")
    assert stable.passed


def test_curves_frame_and_save_learning_curves_on_synthetic_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ENV, str(tmp_path))
    c1 = cv.LearningCurve(np.array([10.0, 20.0]), np.array([5.0, 4.0]))
    runs = {1: _run("b", 0, c1), 2: _run("a", 1, cv.LearningCurve(np.array([10.0]), np.array([6.0]))), 3: _run("c", 0, None)}
    frame = summaries.curves_frame(runs)
    assert frame.to_dict("records") == [
        {"model": "b", "seed": 0, "tokens": 10, "valid_ppl": 5.0},
        {"model": "b", "seed": 0, "tokens": 20, "valid_ppl": 4.0},
        {"model": "a", "seed": 1, "tokens": 10, "valid_ppl": 6.0},
    ]
    assert list(summaries.curves_frame({}).columns) == list(summaries.CURVE_COLUMNS)
    table = summaries.save_learning_curves(runs, "test")
    assert list(table["model"]) == ["a", "b", "b"] and list(table.index) == [0, 1, 2]
    again = summaries.save_learning_curves({1: _run("b", 0, cv.LearningCurve(np.array([30.0]), np.array([3.0])))}, "test")
    csv = paths.figure_dir("test") / f"{summaries.CURVES_TABLE}.csv"
    import pandas as pd

    stored = pd.read_csv(csv)
    assert list(stored.columns) == list(summaries.CURVE_COLUMNS)
    assert (
        stored.to_dict("records")
        == again.to_dict("records")
        == [{"model": "a", "seed": 1, "tokens": 10, "valid_ppl": 6.0}, {"model": "b", "seed": 0, "tokens": 30, "valid_ppl": 3.0}]
    )


def test_token_counts_are_written_short():
    cases = {
        None: "None",
        math.inf: "inf",
        1.5e9: "1.5G",
        1e9: "1G",
        2.5e6: "2.5M",
        1e6: "1M",
        1e3: "1k",
        999.0: "999",
        -2e6: "-2M",
        5e8: "500M",
    }
    assert {n: cv.format_tokens(n) for n in cases} == cases


def test_budgets_found_near_the_start_of_the_search():
    # improvement(t) = 0.01 at t = 1.5 tokens: between the first token and the first doubling
    b = 1 / (0.1547005 / math.sqrt(1.5) - 0.01 * (0.75 * 1.5) ** -0.5)
    law = cv.PowerLaw(100.0, b, 0.5, 5, 0.0)
    assert law.improvement(1.0) > 0.01 > law.improvement(2.0)
    assert law.budget() == pytest.approx(1.5, rel=1e-4)
    # a contrast 2 t^-0.5 moves 0.59 between 1 and 2 tokens: more than half a margin of 0.5, by less than 1
    a, c = cv.PowerLaw(100.0, 3.0, 0.5, 5, 0.0), cv.PowerLaw(100.0, 1.0, 0.5, 5, 0.0)
    assert cv.stable_budget(a, c, 0.5) == pytest.approx((2 * 2 * (math.sqrt(2) - 1) / 0.5) ** 2, rel=1e-4)


def test_the_searches_give_up_beyond_1e15_tokens_and_not_before():
    def law_passing_at(R):  # improvement(R) = 1%: 0.1547 u / (100 + 1.1547 u) = 0.01 with u = b R^-0.5
        u = 0.01 * 100 / ((0.75**-0.5 - 1) - 0.01 * 0.75**-0.5)
        return cv.PowerLaw(100.0, u * math.sqrt(R), 0.5, 5, 0.0)

    beyond, within = law_passing_at(1.05e15), law_passing_at(8e14)
    assert beyond.improvement(1.05e15) == pytest.approx(0.01) and within.improvement(8e14) == pytest.approx(0.01)
    assert beyond.budget() == math.inf
    assert within.budget(start=2.5e14) == pytest.approx(8e14, rel=1e-5)  # the search reaches 1e15 exactly

    def contrast_stable_at(R, margin=1.0):  # moved(B) = k B^-0.5 (sqrt 2 - 1) - margin / 2
        return cv.PowerLaw(100.0, margin / 2 * math.sqrt(R) / (math.sqrt(2) - 1), 0.5, 5, 0.0), cv.PowerLaw(100.0, 0.0, 0.5, 5, 0.0)

    assert cv.stable_budget(*contrast_stable_at(1.05e15), 1.0) == math.inf
    assert cv.stable_budget(*contrast_stable_at(8e14), 1.0, start=2.5e14) == pytest.approx(8e14, rel=1e-5)
