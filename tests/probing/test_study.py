"""Notebook 02's procedures (prismlib.probing.study); its claims: test_fig4_claims."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from prismlib.probing import (
    MAJORITY,
    Features,
    ProbeRecipe,
    ProbeRuns,
    TaskData,
    Window,
    choice_changes,
    choice_row,
    choice_table,
    probe_task,
    task_comparison,
)
from prismlib.probing import probes as probes_module
from prismlib.probing import study as study_module
from prismlib.profiles import PROFILES, get_profile

BANDS = ("LOW", "MID", "HIGH")


def summary(acc: dict[str, float], majority_high: float = 10.0) -> pd.DataFrame:
    rows = [{"condition": c, "accuracy": a, "ci_low": a - 1, "ci_high": a + 1} for c, a in acc.items()]
    return pd.DataFrame(rows + [{"condition": MAJORITY, "accuracy": majority_high - 1, "ci_low": 0.0, "ci_high": majority_high}])


def test_choice_rows_rank_the_bands_and_leave_those_at_the_majority_class_out_of_the_compared_ranking():
    row = choice_row("features", "raw", "pos", summary({"ORIG": 80, "LOW": 9.5, "MID": 30, "HIGH": 60}), BANDS)
    assert row["ranking"] == "HIGH > MID > LOW" and row["best band"] == "HIGH"
    assert row["ranking above majority"] == "HIGH > MID"  # LOW is inside the majority class's interval
    assert row["ORIG"] == 80 and row["best band acc"] == 60
    none = choice_row("features", "raw", "pos", summary({"ORIG": 80, "LOW": 5, "MID": 6, "HIGH": 7}), BANDS)
    assert none["ranking above majority"] == "(none)"
    table = choice_table(
        [
            row,
            choice_row("features", "standardised", "pos", summary({"ORIG": 80, "LOW": 5, "MID": 70, "HIGH": 60}), BANDS),
            choice_row("features", "raw", "topic", summary({"ORIG": 50, "LOW": 70, "MID": 20, "HIGH": 30}), BANDS),
            choice_row("features", "standardised", "topic", summary({"ORIG": 50, "LOW": 71, "MID": 20, "HIGH": 30}), BANDS),
        ]
    )
    assert table["same best band"].tolist() == [False, False, True, True]
    assert table["same ranking"].tolist() == [False, False, True, True]
    text = choice_changes(table)
    assert text == "The best band depends on: features (pos). Rankings of the bands above the majority class that change: features (pos)."
    assert choice_changes(table[table["task"] == "topic"]).startswith("No choice changes any task's best band.")
    assert choice_changes(table[table["task"] == "topic"]).endswith("that change: none.")


def tiny_features(seed: int, n: int = 60) -> Features:
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(3, (n,), generator=g)
    x = torch.nn.functional.one_hot(y, 3).float() * 3 + torch.randn(n, 3, generator=g)
    idx = torch.arange(n)
    return Features({"ORIG": x.half(), "LOW|outside": torch.zeros(n, 3).half()}, y, torch.ones(n), idx // 6, idx, idx % 6)


def tiny_task(name: str) -> TaskData:
    win = Window(np.zeros(6, np.int64), np.zeros(6, np.int64), np.ones(6, np.float32), np.arange(6), "src")
    return TaskData(name, ["a", "b", "c"], {"train": [], "val": [], "test": [replace(win, source=f"s{i}") for i in range(10)]})


def test_a_task_comparison_resamples_the_task_s_units_and_names_the_task_in_its_gates():
    feats = {"train": tiny_features(0), "val": tiny_features(1), "test": tiny_features(2)}  # 60 test rows, windows of 6
    rows = np.arange(60)
    correct = {"ORIG": (rows < 30)[None], MAJORITY: (rows < 6)[None]}  # right on 50% and on 10% of the rows
    runs = ProbeRuns(pd.DataFrame({"condition": ["ORIG"], "run": [0], "accuracy": [0.5]}), correct, 0)
    cmp = task_comparison(runs, feats, tiny_task("pos"), seed=3)
    assert cmp.units == 10 and cmp.seed == 3 and cmp.test is feats["test"]  # one unit per test window (its source)
    assert cmp.groups.tolist() == [f"s{w}" for w in rows // 6]
    assert cmp.accuracy("ORIG").effect == pytest.approx(50.0) and cmp.diff("ORIG", MAJORITY).effect == pytest.approx(40.0)
    assert cmp.gate().name == "pos: ORIG probe beats the majority class"
    # windows cut from one source are one unit; an MLM bucket is named by its key
    pairs = tiny_task("mlm")
    pairs.windows["test"] = [replace(w, source=f"s{i // 2}") for i, w in enumerate(pairs.windows["test"])]
    bucket = task_comparison(runs, feats, replace(pairs, ranks=(1, 50)), seed=3)
    assert bucket.units == 5 and bucket.groups.tolist() == [f"s{w}" for w in rows // 12]
    assert bucket.gate().name.startswith("mlm 1-50: ")


@pytest.mark.parametrize(("name", "epochs"), [("pos", 4), ("mlm", 2)])
def test_probe_task_takes_the_profile_s_settings_and_names_conditions_without_placement(name, epochs, monkeypatch):
    settings = replace(get_profile("smoke").probe, max_epochs=4, mlm_epochs=2, runs=2, batch_size=16, standardize=False)
    seen = {}
    real = study_module.probe_conditions

    def spy(*args, **kwargs):
        seen.update(kwargs, runs=args[3], seed=args[4], classes=args[1], recipe=args[5])
        return real(*args, **kwargs)

    monkeypatch.setattr(study_module, "probe_conditions", spy)
    feats = {"train": tiny_features(0), "val": tiny_features(1), "test": tiny_features(2)}
    runs, table = probe_task(feats, tiny_task(name), settings, ("ORIG", "LOW|outside"), seed=7)
    assert seen["recipe"] == ProbeRecipe(max_epochs=epochs, patience=settings.patience, batch_size=16, standardize=False)
    assert (seen["runs"], seen["seed"], seen["classes"]) == (2, 7, 3)
    assert list(table["condition"]) == ["ORIG", "LOW", MAJORITY] and set(runs.correct) == {"ORIG", "LOW|outside", MAJORITY}
    assert table["n_test_units"].iloc[0] == 10  # the task's windows are the units
    standardised = replace(ProbeRecipe.of(settings, name), standardize=True)
    probe_task(feats, tiny_task(name), settings, ("ORIG",), seed=7, runs=1, recipe=standardised)
    assert seen["runs"] == 1 and seen["recipe"] is standardised


@pytest.mark.parametrize("profile_name", sorted(PROFILES))
def test_each_profile_s_epoch_cap_reaches_the_probe_s_schedule(profile_name, monkeypatch):
    """No restated default between the profile and the probe: the cap and patience that
    :func:`fit_with_halving` runs with are the profile's, the MLM probe's ``mlm_epochs`` too."""
    settings = replace(PROFILES[profile_name].probe, workers=1)  # in this process, where the spy is
    seen = []
    real = probes_module.fit_with_halving

    def spy(*args, **kwargs):
        seen.append((kwargs["max_epochs"], kwargs["patience"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(probes_module, "fit_with_halving", spy)
    feats = {"train": tiny_features(0), "val": tiny_features(1), "test": tiny_features(2)}
    for name in ("pos", "mlm"):
        seen.clear()
        probe_task(feats, tiny_task(name), settings, ("ORIG",), seed=0, runs=1)
        assert seen == [(settings.epochs_for(name), settings.patience)], name
        seen.clear()
        probe_task(feats, tiny_task(name), settings, ("ORIG",), seed=0, runs=1, recipe=ProbeRecipe.of(settings, name).with_cap(7))
        assert seen == [(7, settings.patience)], name
    # a profile where the two caps differ, so that a cap from anywhere but the task's own shows
    assert any(p.probe.epochs_for("mlm") != p.probe.epochs_for("pos") for p in PROFILES.values())


def test_a_probe_study_probes_every_task_and_probes_only_the_capped_conditions_again_at_twice_the_cap(monkeypatch):
    """pos at a cap of 1 epoch: every run reaches it, so both conditions are probed again at 2;
    mlm at a cap of 50, its validation labels shifted: its run stops by its rule first, so
    nothing is probed again and the comparisons with the cap doubled are those at the cap."""
    settings = replace(get_profile("smoke").probe, max_epochs=1, mlm_epochs=50, runs=1, batch_size=16, standardize=False, workers=1)
    calls = []
    real = study_module.probe_task

    def spy(feats, task, settings, conditions, **kwargs):
        calls.append((task.name, tuple(conditions), kwargs["recipe"].max_epochs))
        return real(feats, task, settings, conditions, **kwargs)

    monkeypatch.setattr(study_module, "probe_task", spy)
    feats = {"train": tiny_features(0), "val": tiny_features(1), "test": tiny_features(2)}
    misled = feats | {"val": replace(feats["val"], labels=(feats["val"].labels + 1) % 3)}  # validation loss rises at once
    tasks = {"pos": tiny_task("pos"), "mlm 1-3": replace(tiny_task("mlm"), ranks=(1, 3))}
    study = study_module.probe_study(
        {"pos": feats, "mlm 1-3": misled}, tasks, settings, {"pos": ("ORIG", "LOW|outside"), "mlm 1-3": ("ORIG",)}, seed=5
    )
    assert calls == [("pos", ("ORIG", "LOW|outside"), 1), ("mlm", ("ORIG",), 50), ("pos", ("ORIG", "LOW|outside"), 2)]
    assert [r.max_epochs for r in study.recipes.values()] == [1, 50]
    assert list(dict.fromkeys(study.table["task"])) == ["pos", "mlm 1-3"]
    assert study.compare["mlm 1-3"].task == "mlm 1-3" and study.doubled["mlm 1-3"] is study.compare["mlm 1-3"]
    assert study.doubled["pos"] is not study.compare["pos"]
    assert study.capped[["task", "condition", "cap"]].values.tolist() == [["pos", "ORIG", 1], ["pos", "LOW|outside", 1]]
    assert (study.capped["epochs"] == 1).all() and (study.capped["epochs, cap doubled"] > 1).all()
    assert study.probe_seconds > 0 and study.cap_seconds > 0
