"""The probe's training recipe (prismlib.probe)."""

from __future__ import annotations

import pytest
import torch

from prismlib.encode import Features
from prismlib.probe import majority_baseline, probe_conditions, train_probe, weighted_accuracy, weighted_loss


def blobs(n: int, classes: int, seed: int, dim: int = 8):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=torch.Generator().manual_seed(99)) * 4
    y = torch.randint(classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, dim, generator=g)
    return x, y, torch.ones(n)


def test_learns_a_separable_problem():
    r = train_probe(blobs(600, 4, 0), blobs(200, 4, 1), blobs(200, 4, 2), 4, seed=0, batch_size=32)
    assert r.accuracy > 0.95 and r.val_accuracy > 0.95
    assert 1 <= r.best_epoch <= r.epochs <= 30


def test_early_stopping_patience_one_halves_lr_then_stops():
    train = blobs(600, 4, 0)
    x, y, w = blobs(200, 4, 1)
    val = (x, (y + 1) % 4, w)  # fitting the training labels makes validation worse every epoch
    r = train_probe(train, val, blobs(200, 4, 2), 4, seed=0, batch_size=32, max_epochs=30, patience=1)
    assert r.epochs == 3 and r.best_epoch == 1
    assert [h["lr"] for h in r.history] == [1e-3, 1e-3, 5e-4]
    assert r.history[1]["val_loss"] > r.history[0]["val_loss"]


def test_fixed_epochs_without_patience():
    r = train_probe(blobs(100, 3, 0), blobs(50, 3, 1), blobs(50, 3, 2), 3, seed=0, max_epochs=3, patience=None)
    assert r.epochs == 3 and r.best_epoch == 3


def test_weighted_metrics():
    logits = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]])
    labels = torch.tensor([0, 0, 0])
    weights = torch.tensor([0.5, 0.5, 1.0])
    assert weighted_accuracy(logits, labels, weights) == pytest.approx(1.5 / 2.0)
    ce = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    assert float(weighted_loss(logits, labels, weights)) == pytest.approx(float((ce * weights).sum() / 2.0))


def test_probe_conditions_and_majority_baseline():
    def feats(seed):
        x, y, w = blobs(120, 3, seed)
        return Features({"ORIG": x.half(), "LOW": torch.zeros_like(x).half()}, y, w, torch.zeros(len(y), dtype=torch.long))

    split = {"train": feats(0), "val": feats(1), "test": feats(2)}
    df = probe_conditions(split, 3, ("ORIG", "LOW"), runs=2, seed=0, batch_size=16)
    assert list(df["condition"]) == ["ORIG", "ORIG", "LOW", "LOW"]
    means = df.groupby("condition").accuracy.mean()
    assert means["ORIG"] > 0.9 and means["LOW"] < 0.6  # constant features carry no information
    base = majority_baseline(split["train"], split["test"])
    assert 0.2 < base < 0.6


def test_bad_inputs():
    good = blobs(20, 2, 0)
    with pytest.raises(ValueError, match="empty"):
        train_probe(good, (good[0][:0], good[1][:0], good[2][:0]), good, 2, seed=0)
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.1"):
        train_probe(good, good, (good[0], good[1] + 5, good[2]), 2, seed=0)
