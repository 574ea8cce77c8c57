"""The annealed schedule of work B's cpu recipe (prismlib.anneal): synthetic validation curves
with known decisions, the settings that cannot stop are refused, and every trainer anneals by
the rule its settings build. (A real annealed run, killed mid-way and resumed, is in
``tests/lstm/test_training.py``.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from prismlib.anneal import DID_NOT_LEARN, STOPPED_AT_CAP, STOPPED_BY_RULE, AnnealRule, AnnealSettings, AnnealState, anneal_check
from prismlib.profiles import get_profile

RULE = AnnealRule(factor=4.0, tolerance=0.002, decays=2, min_rounds=2, cap=30, learn_below=300.0)


def _replay(curve: list[float], rule: AnnealRule = RULE) -> tuple[AnnealState, list[str]]:
    """Feed ``curve`` to the rule until it stops; the final state and the actions taken."""
    state, actions = AnnealState(), []
    for v in curve:
        state, action = anneal_check(state, v, rule)
        actions.append(action)
        if action == "stop":
            break
    return state, actions


def test_an_annealed_curve_that_flattens_after_its_decays_stops_by_rule():
    # falls, stalls (decay), falls a little, stalls (decay), stalls again: stop
    curve = [600, 250, 200, 201, 190, 190.5, 186, 186.1]
    state, actions = _replay(curve)
    assert actions == ["continue", "continue", "continue", "decay", "continue", "decay", "continue", "stop"]
    assert state.stop == STOPPED_BY_RULE and state.converged
    assert state.decayed_at == (4, 6) and state.scale == pytest.approx(1 / 16)
    assert state.best == 186


def test_an_improvement_smaller_than_the_tolerance_counts_as_none():
    # 0.1% better than the best is a failure at tolerance 0.2%; 0.3% better is not
    _, actions = _replay([600, 250, 200, 199.8])
    assert actions[-1] == "decay"
    _, actions = _replay([600, 250, 200, 199.4])
    assert actions[-1] == "continue"


def test_a_still_falling_curve_never_stops_by_rule():
    curve = list(np.geomspace(700, 150, 30))
    state, actions = _replay(curve)
    assert "decay" not in actions
    assert state.stop == STOPPED_AT_CAP and not state.converged and state.rounds == 30


def test_a_plateau_at_the_unigram_level_does_not_decay_and_learning_afterwards_is_kept():
    # sits near the unigram's 685 (above the bigram guard 300) for 10 rounds, then learns
    curve = [700, 690, 688, 689, 690, 688, 689, 690, 689, 688, 500, 290, 250, 240, 241, 235, 236, 234.9]
    state, actions = _replay(curve)
    assert actions[:11] == ["continue"] * 11
    assert state.decayed_at[0] > 11  # the first decay only once below the bigram
    assert state.stop == STOPPED_BY_RULE


def test_a_plateau_that_never_leaves_the_unigram_level_did_not_learn():
    state, actions = _replay([700, 690] + [688.0] * 28)
    assert "decay" not in actions
    assert state.stop == DID_NOT_LEARN and not state.converged


def test_a_run_stopped_at_its_cap_is_not_converged_even_after_decays():
    rule = dataclasses.replace(RULE, cap=6)
    state, actions = _replay([600, 250, 200, 201, 190, 190.5], rule)
    assert actions[-1] == "stop" and state.decayed_at == (4, 6)
    assert state.stop == STOPPED_AT_CAP and not state.converged


def test_no_decay_before_min_rounds():
    _, actions = _replay([250, 251, 252, 253], dataclasses.replace(RULE, min_rounds=3))
    assert actions == ["continue", "continue", "continue", "decay"]


def test_a_non_finite_validation_counts_as_no_improvement_and_a_stopped_run_takes_no_more_checks():
    state, actions = _replay([250, 240, 230, float("nan")])
    assert actions[-1] == "decay" and state.best == 230
    done, _ = _replay([600, 250, 200, 201, 190, 190.5, 186, 186.1])
    with pytest.raises(ValueError, match="already stopped"):
        anneal_check(done, 180.0, RULE)


SETTINGS = AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=2, min_rounds=2, decay_patience=1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"decay_factor": 1.0}, r"decay_factor must be > 1 \(the rate must fall\), got 1.0"),
        ({"decay_tolerance": 0.0}, "decay_tolerance must be > 0, or the anneal schedule may never stop; got 0.0"),
        ({"decays": 0}, "decays must be >= 1, or the anneal schedule never stops by its rule; got 0"),
        ({"min_rounds": -1}, r"min_rounds must be >= 0 \(rounds before the first decay\), got -1"),
        ({"decay_patience": 0}, r"decay_patience must be >= 1 \(failed checks before a decay\), got 0"),
    ],
)
def test_anneal_settings_refuse_each_knob_that_cannot_work_naming_it(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SETTINGS, **change)


def test_a_cap_the_schedule_cannot_work_under_is_refused_naming_the_setting_that_gives_it():
    SETTINGS.check_cap(3, cap_name="epochs")  # one round past min_rounds: a decay can happen
    with pytest.raises(ValueError, match=r"cap \(epochs = 2 rounds\) must exceed min_rounds \(2\).*raise epochs or lower min_rounds"):
        SETTINGS.check_cap(2, cap_name="epochs")
    SETTINGS.check_cap(5, fixed_path=True)  # min_rounds + decays + 1: the path's last round
    with pytest.raises(ValueError, match=r"on a fixed path the cap \(cap = 4 rounds\) must exceed min_rounds \+ decays \(2 \+ 2\)"):
        SETTINGS.check_cap(4, fixed_path=True)
    with pytest.raises(ValueError, match="must exceed min_rounds"):
        SETTINGS.rule(2, None)


def test_the_settings_build_the_rule_with_the_runs_cap_and_guard():
    s = AnnealSettings(decay_factor=10.0, decay_tolerance=0.01, decays=3, min_rounds=1, decay_patience=2)
    assert s.rule(40, 300.0) == AnnealRule(factor=10.0, tolerance=0.01, decays=3, min_rounds=1, cap=40, learn_below=300.0, patience=2)
    assert s.rule(40, None).learn_below is None


def test_on_a_fixed_path_the_rule_decays_after_each_round_past_min_rounds_and_stops_one_round_later():
    s = AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=2, min_rounds=3, decay_patience=5)
    curve = list(np.geomspace(250, 100, 10))  # falls 10% a round: the plateau rule never decays
    assert "decay" not in _replay(curve, s.rule(10, 300.0))[1]
    rule = s.rule(10, 300.0, fixed_path=True)
    assert rule.tolerance == float("inf") and rule.patience == 1  # tolerance and patience go unused
    state, actions = _replay(curve, rule)
    assert actions == ["continue"] * 3 + ["decay", "decay", "stop"]
    assert state.decayed_at == (4, 5) and state.stop == STOPPED_BY_RULE and state.scale == pytest.approx(1 / 16)


def test_the_boundaries_exactly_at_the_tolerance_and_at_the_bigram_count_as_failures():
    # an improvement of exactly the tolerance is not enough; a best exactly at the bigram has not beaten it
    _, actions = _replay([600, 250, 200, 200 * (1 - RULE.tolerance)])
    assert actions[-1] == "decay"
    _, actions = _replay([700, 650, 300.0, 300.0])
    assert actions[-1] == "continue"


def test_with_patience_a_single_failed_check_does_not_decay_and_an_improvement_resets_the_count():
    rule = dataclasses.replace(RULE, patience=2)
    # 201 fails once (no decay), 190 improves (count reset), then 190.5 and 190.4 fail twice in a row: decay
    state, actions = _replay([600, 250, 200, 201, 190, 190.5, 190.4, 185, 185.1, 185.2, 185.3, 185.0], rule)
    assert actions[:7] == ["continue"] * 6 + ["decay"] and state.decayed_at[0] == 7
    # 185.1, 185.2 (decay 2), 185.3, 185.0 (two failures after the last decay): stop
    assert state.decayed_at == (7, 10) and state.stop == STOPPED_BY_RULE and state.rounds == 12
    same, _ = _replay([600, 250, 200, 201, 190, 190.5, 186, 186.1])  # patience 1 is the rule without patience
    assert same.decayed_at == (4, 6) and same.stop == STOPPED_BY_RULE and same.rounds == 8


def test_failures_before_min_rounds_or_above_the_bigram_do_not_count_towards_patience():
    rule = dataclasses.replace(RULE, patience=2, learn_below=200.0)
    state, actions = _replay([600, 610, 620, 205, 206, 199, 199.5, 199.6], rule)
    # 610, 620: before min_rounds; 206: not yet below the bigram; 199.5 then 199.6: two counted failures
    assert actions == ["continue"] * 7 + ["decay"] and state.decayed_at == (8,)


def test_a_state_pickled_before_patience_existed_loads_with_no_stall():
    import pickle

    state = AnnealState(rounds=3, best=200.0)
    old = pickle.dumps(state).replace(b"stalled", b"zzzzzzz")  # as if the field had not existed
    loaded = pickle.loads(old)
    assert loaded.stalled == 0 and dataclasses.replace(loaded, rounds=4).rounds == 4


def test_a_fresh_state_has_no_stall_so_patience_counts_from_the_first_check():
    rule = AnnealRule(factor=4.0, tolerance=0.002, decays=2, min_rounds=0, cap=30, learn_below=None, patience=2)
    state, first = anneal_check(AnnealState(), float("nan"), rule)  # one failed check: not yet a stall
    assert first == "continue" and state.stalled == 1
    assert anneal_check(state, float("nan"), rule)[1] == "decay"


@pytest.mark.parametrize("name", ["smoke", "cpu", "paper", "dryrun", "cpu-long"])
def test_every_trainer_anneals_by_the_rule_its_settings_build(name):
    """The LSTM's, the section-4 arms' and the Dyck models' rules are the one
    :meth:`AnnealSettings.rule` builds from each profile's schedule."""
    from prismlib.lstm import training
    from prismlib.lstm.iclr import dyck_training
    from prismlib.prism import arms

    p = get_profile(name)
    other = p.lstm.updated(fixed_path=not p.lstm.fixed_path, optimizer="anneal", average_last=0, epochs=p.lstm.min_rounds + 9)
    for s in [s for s in (p.lstm, other) if s.optimizer == "anneal"]:  # the profile's own if it anneals, and on (off) a fixed path
        assert training.anneal_rule(s, 123.0) == s.schedule.rule(s.epochs, 123.0, fixed_path=s.fixed_path)
    S = p.prism.updated(recipe="staged", train_layers=2, stop_articles=1, round_steps=2, steps=2 * (p.prism.min_rounds + 9))
    assert arms.stop_rule(S, None).rule == S.schedule.rule(S.min_rounds + 9, None)  # type: ignore[arg-type]
    d = p.iclr.dyck.updated(anneal=True, epochs=p.iclr.dyck.min_rounds + 9)
    assert dyck_training._rule(d, 0.5) == d.schedule.rule(d.epochs, 0.5)
