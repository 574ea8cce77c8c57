"""The probe's training recipe (prismlib.probing.probes)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from prismlib.devices import torch_threads
from prismlib.probing import (
    MAJORITY,
    Features,
    ProbeComparison,
    ProbeRecipe,
    ProbeRuns,
    accuracy_sums,
    best_on_validation,
    compare_accuracy,
    majority_baseline,
    majority_gate,
    probe_conditions,
    summarise,
    train_probe,
    weighted_accuracy,
    weighted_loss,
)


def blobs(n: int, classes: int, seed: int, dim: int = 8):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=torch.Generator().manual_seed(99)) * 4
    y = torch.randint(classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, dim, generator=g)
    return x, y, torch.ones(n)


def test_learns_a_separable_problem():
    r = train_probe(blobs(600, 4, 0), blobs(200, 4, 1), blobs(200, 4, 2), 4, ProbeRecipe(max_epochs=30, batch_size=32), seed=0)
    assert r.accuracy > 0.95 and r.val_accuracy > 0.95
    assert 1 <= r.best_epoch <= r.epochs <= 30


def test_early_stopping_patience_one_halves_lr_then_stops():
    train = blobs(600, 4, 0)
    x, y, w = blobs(200, 4, 1)
    val = (x, (y + 1) % 4, w)  # fitting the training labels makes validation worse every epoch
    r = train_probe(train, val, blobs(200, 4, 2), 4, ProbeRecipe(max_epochs=30, patience=1, batch_size=32), seed=0)
    assert r.epochs == 3 and r.best_epoch == 1 and r.resume is None  # stopped by its rule: nothing to continue
    assert [h["lr"] for h in r.history] == [1e-3, 1e-3, 5e-4]
    assert r.history[1]["val_loss"] > r.history[0]["val_loss"]


def test_fixed_epochs_without_patience():
    r = train_probe(blobs(100, 3, 0), blobs(50, 3, 1), blobs(50, 3, 2), 3, ProbeRecipe(max_epochs=3, patience=None), seed=0)
    assert r.epochs == 3 and r.best_epoch == 3


@pytest.mark.parametrize("patience", [1, None])
def test_a_run_continued_past_its_cap_is_the_run_a_higher_cap_trains(patience):
    data = blobs(300, 4, 0), blobs(100, 4, 1), blobs(100, 4, 2)
    recipe = ProbeRecipe(max_epochs=3, patience=patience, batch_size=32)
    short = train_probe(*data, 4, recipe, seed=3)
    assert short.epochs == 3 and short.resume is not None and len(short.resume.history) == 3
    long = train_probe(*data, 4, recipe.with_cap(9), seed=3)
    for _ in range(2):  # the saved state is not consumed: continuing twice gives the same run
        went_on = train_probe(*data, 4, recipe.with_cap(9), seed=3, resume=short.resume)
        assert went_on.history == long.history and went_on.best_epoch == long.best_epoch
        assert went_on.accuracy == long.accuracy and went_on.test_loss == long.test_loss
        np.testing.assert_array_equal(went_on.test_pred, long.test_pred)
    assert short.history == long.history[:3]
    with pytest.raises(ValueError, match="ran 3 epochs; a cap of 2 cannot continue it"):
        train_probe(*data, 4, recipe.with_cap(2), seed=3, resume=short.resume)


def test_weighted_metrics():
    logits = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    labels = torch.tensor([0, 0, 0])
    weights = torch.tensor([0.5, 0.5, 1.0])
    assert weighted_accuracy(logits, labels, weights) == pytest.approx(1.5 / 2.0)
    ce = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    assert float(weighted_loss(logits, labels, weights)) == pytest.approx(float((ce * weights).sum() / 2.0))


def feats(seed, n=120):
    x, y, w = blobs(n, 3, seed)
    idx = torch.arange(n)
    return Features({"ORIG": x.half(), "LOW": torch.zeros_like(x).half()}, y, w, idx // 4, idx, idx % 4)


def test_probe_conditions_and_majority_baseline():
    split = {"train": feats(0), "val": feats(1), "test": feats(2)}
    runs = probe_conditions(split, 3, ("ORIG", "LOW"), runs=2, seed=0, recipe=ProbeRecipe(max_epochs=30, batch_size=16), progress=False)
    df = runs.table
    assert list(df["condition"]) == ["ORIG", "ORIG", "LOW", "LOW"]
    means = df.groupby("condition").accuracy.mean()
    assert means["ORIG"] > 0.9 and means["LOW"] < 0.6  # constant features carry no information
    base = majority_baseline(split["train"], split["test"])
    assert 0.2 < base < 0.6
    # per-row predictions reproduce the accuracies, and the majority pseudo-condition the baseline
    assert runs.correct["ORIG"].shape == (2, 120) and runs.correct[MAJORITY].shape == (1, 120)
    groups = (split["test"].window.numpy() % 10).astype(str)  # 10 independent units
    num, den = accuracy_sums(runs.correct["ORIG"], split["test"], groups)
    assert num.sum() / den.sum() == pytest.approx(means["ORIG"], abs=1e-6)
    num, den = accuracy_sums(runs.correct[MAJORITY], split["test"], groups)
    assert num.sum() / den.sum() == pytest.approx(base, abs=1e-6)
    iv = compare_accuracy(runs, split["test"], groups, "ORIG", "LOW")
    assert iv.effect == pytest.approx(100 * (means["ORIG"] - means["LOW"]), abs=1e-4) and iv.low > 0 and iv.units == 10
    assert majority_gate(runs, split["test"], groups).passed
    assert not majority_gate(runs, split["test"], groups, "LOW").passed
    table = summarise(runs, split["test"], groups, n_boot=200)
    assert list(table["condition"]) == ["ORIG", "LOW", MAJORITY]
    assert (table["ci_low"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_high"]).all()


@pytest.mark.slow
def test_worker_processes_give_the_same_probes():
    """The same predictions: each worker process trains with one torch thread, and so does
    the in-process run here, so both are the same computation."""
    split = {"train": feats(0, 60), "val": feats(1, 30), "test": feats(2, 30)}
    with torch_threads(1):
        one = probe_conditions(split, 3, ("ORIG",), runs=2, seed=0, recipe=ProbeRecipe(max_epochs=30, batch_size=16), progress=False)
    two = probe_conditions(split, 3, ("ORIG",), runs=2, seed=0, recipe=ProbeRecipe(max_epochs=30, batch_size=16), progress=False, workers=2)
    assert np.array_equal(one.correct["ORIG"], two.correct["ORIG"])
    assert np.allclose(one.table["test_loss"], two.table["test_loss"], atol=1e-5)


def test_standardize_scales_by_the_training_statistics_and_raw_is_the_default():
    train, val, test = blobs(200, 3, 0), blobs(80, 3, 1), blobs(80, 3, 2)
    shift = lambda s: (s[0] * 0.01 + 5, s[1], s[2])  # noqa: E731  tiny, offset features
    train, val, test = shift(train), shift(val), shift(test)
    mean, std = train[0].mean(0), train[0].std(0)
    by_hand = [((x - mean) / std, y, w) for x, y, w in (train, val, test)]
    recipe = ProbeRecipe(max_epochs=4, batch_size=16)
    assert recipe.standardize is False
    a = train_probe(train, val, test, 3, replace(recipe, standardize=True), seed=0)
    b = train_probe(*by_hand, 3, recipe, seed=0)
    assert np.array_equal(a.test_pred, b.test_pred) and a.test_loss == pytest.approx(b.test_loss, rel=1e-4)
    raw = train_probe(train, val, test, 3, recipe, seed=0)
    assert raw.test_loss != pytest.approx(a.test_loss, rel=1e-3)  # raw features are not rescaled


def test_bad_inputs():
    good = blobs(20, 2, 0)
    with pytest.raises(ValueError, match="empty"):
        train_probe(good, (good[0][:0], good[1][:0], good[2][:0]), good, 2, ProbeRecipe(max_epochs=30), seed=0)
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.1"):
        train_probe(good, good, (good[0], good[1] + 5, good[2]), 2, ProbeRecipe(max_epochs=30), seed=0)


def test_probe_comparison_is_the_task_s_accuracies_differences_and_gates():
    split = {"train": feats(0), "val": feats(1), "test": feats(2)}
    runs = probe_conditions(split, 3, ("ORIG", "LOW"), runs=2, seed=0, recipe=ProbeRecipe(max_epochs=30, batch_size=16), progress=False)
    groups = (split["test"].window.numpy() % 10).astype(str)
    cmp = ProbeComparison(runs, split["test"], groups, seed=3, n_boot=300)
    assert cmp.units == 10
    assert cmp.diff("ORIG", "LOW") == compare_accuracy(runs, split["test"], groups, "ORIG", "LOW", n_boot=300, seed=3)
    assert cmp.diff("ORIG", "LOW") != compare_accuracy(runs, split["test"], groups, "ORIG", "LOW", n_boot=300, seed=4)
    assert cmp.accuracy("ORIG").effect == pytest.approx(100 * runs.table.query("condition == 'ORIG'").accuracy.mean(), abs=1e-4)
    assert cmp.accuracy(MAJORITY).effect == pytest.approx(100 * majority_baseline(split["train"], split["test"]), abs=1e-4)
    assert cmp.gate().passed and cmp.gate().name == "ORIG probe beats the majority class"
    assert not cmp.gate("LOW").passed and cmp.gate("LOW").name == "LOW probe beats the majority class"
    # one test unit: no interval exists; the effect alone, zero width, for a gated-out claim
    single = ProbeComparison(runs, split["test"], np.zeros(len(groups), dtype=int))
    iv = single.diff("ORIG", "LOW")
    assert single.units == 1 and iv.low == iv.effect == iv.high and iv.units == 1
    assert iv.effect == pytest.approx(cmp.diff("ORIG", "LOW").effect)
    named = ProbeComparison(runs, split["test"], groups, task="pos")
    assert named.gate("LOW").name == "pos: LOW probe beats the majority class" and not named.gate("LOW").passed
    some = named.any_gate(["LOW", "ORIG"])
    assert some.passed and some.name == "pos: some band beats the majority class" and some.detail == "ORIG"
    none = cmp.any_gate(["LOW"])
    assert not none.passed and none.detail == "none of LOW"


def test_the_best_condition_is_chosen_on_validation_not_test():
    import pandas as pd

    table = pd.DataFrame(
        [
            {"condition": "LOW", "run": 0, "accuracy": 0.9, "val_accuracy": 0.25},  # best on test, mean 0.5 on validation
            {"condition": "LOW", "run": 1, "accuracy": 0.9, "val_accuracy": 0.75},
            {"condition": "MID", "run": 0, "accuracy": 0.1, "val_accuracy": 0.625},  # best on validation: mean 0.59375
            {"condition": "MID", "run": 1, "accuracy": 0.1, "val_accuracy": 0.5625},
            {"condition": "HIGH", "run": 0, "accuracy": 0.5, "val_accuracy": 0.59375},
        ]
    )
    runs = ProbeRuns(table, {}, 0)
    assert best_on_validation(runs, ["LOW", "MID"]) == "MID"  # the run mean, not the best run
    assert best_on_validation(runs, ["HIGH", "MID"]) == "HIGH"  # a tie goes to the first listed
    assert best_on_validation(runs, ["LOW"]) == "LOW"
    with pytest.raises(ValueError, match="without runs"):
        best_on_validation(runs, ["LOW", "ORIG"])
    with pytest.raises(ValueError, match="need conditions"):
        best_on_validation(runs, [])
