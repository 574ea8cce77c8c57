"""How a probe trains (prismlib.probing.recipe): one typed recipe from the profile to the probe,
its defaults stated once. (That the cap reaches the schedule: test_study; the gated probe's:
test_learned_filter.)"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from prismlib.probing import (
    ProbeRecipe,
    gate_and_control_runs,
    gated_probe_runs,
    probe_conditions,
    probe_task,
    train_gated_probe,
    train_probe,
)
from prismlib.profiles import PROFILES

RECIPE_FIELDS = {f.name for f in dataclasses.fields(ProbeRecipe)}


@pytest.mark.parametrize("profile_name", sorted(PROFILES))
@pytest.mark.parametrize("task", ["pos", "swda", "topic", "mlm"])
def test_the_recipe_of_a_profile_s_task_carries_that_profile_s_settings(profile_name, task):
    settings = PROFILES[profile_name].probe
    recipe = ProbeRecipe.of(settings, task)
    assert recipe.max_epochs == settings.epochs_for(task) == (settings.mlm_epochs if task == "mlm" else settings.max_epochs)
    assert (recipe.patience, recipe.batch_size, recipe.standardize) == (settings.patience, settings.batch_size, settings.standardize)
    assert recipe.lr == ProbeRecipe(max_epochs=1).lr == 1e-3  # profiles do not set it: Adam's default, the paper's


def test_the_cap_has_no_default_and_with_cap_changes_the_cap_only():
    with pytest.raises(TypeError, match="max_epochs"):
        ProbeRecipe()  # type: ignore[call-arg]
    recipe = ProbeRecipe(max_epochs=3, patience=None, lr=0.02, batch_size=7, standardize=True)
    assert recipe.with_cap(6) == dataclasses.replace(recipe, max_epochs=6) and recipe.max_epochs == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        recipe.max_epochs = 6  # type: ignore[misc]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"max_epochs": 0}, "max_epochs must be at least 1, got 0"),
        ({"max_epochs": 3, "patience": -1}, "patience must be None or at least 0, got -1"),
        ({"max_epochs": 3, "batch_size": 0}, "batch_size must be at least 1, got 0"),
    ],
)
def test_a_recipe_that_cannot_train_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        ProbeRecipe(**fields)


PROBES = (train_probe, probe_conditions, train_gated_probe, gated_probe_runs, gate_and_control_runs, probe_task)
"""Every function that trains probes with a recipe."""


@pytest.mark.parametrize("function", PROBES, ids=lambda f: f.__name__)
def test_the_probes_take_the_recipe_and_restate_none_of_its_settings(function):
    """A default restated in a probe (``max_epochs=30`` beside the profile's cap) or settings
    passed on as ``**kwargs`` would bypass the recipe: neither may come back."""
    params = inspect.signature(function).parameters
    assert "recipe" in params
    assert not RECIPE_FIELDS & set(params), f"{function.__name__} restates {sorted(RECIPE_FIELDS & set(params))}"
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), f"{function.__name__} takes **kwargs"
