"""Grouped settings (prismlib.profiles.nested): a grouped field reads through and changes by
its name at any depth, flat fields, pickle and copy."""

from __future__ import annotations

import dataclasses

import pytest

from prismlib.profiles import get_profile


def test_a_grouped_field_reads_through_and_changes_by_its_name_at_any_depth():
    s = get_profile("smoke").lstm
    assert s.decays == s.recipe.decays == s.recipe.schedule.decays == 2 and s.bptt == s.recipe.bptt
    changed = s.updated(decays=3, lr=1.0, seeds=(5,))
    assert (changed.recipe.schedule.decays, changed.recipe.lr, changed.seeds) == (3, 1.0, (5,))
    assert changed.updated(decays=2, lr=s.lr, seeds=s.seeds) == s  # nothing else moved
    whole = s.updated(schedule=dataclasses.replace(s.schedule, min_rounds=1))
    assert whole.min_rounds == 1 and whole.decays == 2
    with pytest.raises(ValueError, match="decays must be >= 1"):  # every level's checks run
        s.updated(decays=0)


def test_a_change_to_no_setting_or_to_a_group_both_ways_is_refused_naming_it():
    s = get_profile("smoke").lstm
    with pytest.raises(TypeError, match="no LSTMSettings setting named decay, lrate"):
        s.updated(decay=3, lrate=1.0)
    with pytest.raises(TypeError, match=r"change schedule whole or some of its settings \(decays\), not both"):
        s.updated(schedule=s.schedule, decays=3)
    with pytest.raises(AttributeError, match="LSTMSettings has no setting 'no_such'"):
        s.no_such  # noqa: B018


def test_flat_gives_every_field_once_and_refuses_a_name_at_two_levels():
    from prismlib.profiles import Nested

    p = get_profile("cpu")
    flat = p.prism.training.flat()
    assert "schedule" not in flat and flat["decays"] == p.prism.decays and flat["steps"] == p.prism.steps
    assert len(flat) == len(dataclasses.fields(p.prism.training)) - 1 + len(dataclasses.fields(p.prism.schedule))

    @dataclasses.dataclass(frozen=True)
    class Clash(Nested):
        decays: int
        schedule: object

    with pytest.raises(TypeError, match="Clash: decays named at two levels"):
        Clash(decays=1, schedule=p.prism.schedule).flat()


@pytest.mark.parametrize("group", ["lstm", "prism", "dyck"])
def test_nested_settings_survive_pickle_and_copy(group):
    import copy
    import pickle

    p = get_profile("cpu")
    s = p.iclr.dyck if group == "dyck" else getattr(p, group)
    for again in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        assert again == s and again.decays == s.decays
