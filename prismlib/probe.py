"""Softmax probes with the paper's training recipe (section 3.2).

A probe is a linear map from a token's (filtered) features to class logits, trained
with Adam at its default settings (lr 1e-3, betas 0.9/0.999) for at most 30 epochs.
After an epoch whose validation loss does not decrease, the learning rate is halved;
after ``patience + 1`` such epochs in a row (patience 1: two), training stops and the
parameters of the epoch with the lowest validation loss are restored.  (The paper says
"early stopping with a patience of one, decaying the learning rate by a factor of 2
when successive epochs do not produce a decrease in validation loss"; this is our
reading of how the two rules combine.)

Loss and accuracy weigh each token by ``1/|N|`` of its gold label (App. C).  Features
are standardised with the training set's mean and standard deviation per unit, a
linear reparametrisation that leaves the family of probes unchanged but makes Adam's
step size mean the same for the tiny LOW-band features and the large original ones.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pandas as pd
import torch
from torch import Tensor, nn

from prismlib.encode import Features


@dataclass
class ProbeResult:
    """Outcome of one probe run.

    Attributes:
        accuracy: weighted accuracy on the test set (0-1).
        val_accuracy: weighted accuracy on the validation set at the best epoch.
        test_loss: weighted cross-entropy on the test set.
        best_epoch: epoch (1-based) whose parameters were kept.
        history: per epoch: ``epoch, train_loss, val_loss, lr``.
    """

    accuracy: float
    val_accuracy: float
    test_loss: float
    best_epoch: int
    history: list[dict] = field(default_factory=list)

    @property
    def epochs(self) -> int:
        return len(self.history)


def weighted_loss(logits: Tensor, labels: Tensor, weights: Tensor) -> Tensor:
    """``sum_i w_i CE_i / sum_i w_i`` for ``(n, classes)`` logits and ``(n,)`` labels/weights."""
    ce = nn.functional.cross_entropy(logits, labels, reduction="none")
    return (ce * weights).sum() / weights.sum().clamp_min(1e-12)


def weighted_accuracy(logits: Tensor, labels: Tensor, weights: Tensor) -> float:
    """``sum_i w_i [argmax logits_i == y_i] / sum_i w_i``."""
    correct = (logits.argmax(-1) == labels).float()
    return float((correct * weights).sum() / weights.sum().clamp_min(1e-12))


@torch.no_grad()
def _evaluate(model: nn.Module, x: Tensor, y: Tensor, w: Tensor, batch: int) -> tuple[float, float]:
    logits = torch.cat([model(x[i : i + batch]) for i in range(0, len(x), batch)])
    return float(weighted_loss(logits, y, w)), weighted_accuracy(logits, y, w)


def train_probe(
    train: tuple[Tensor, Tensor, Tensor],
    val: tuple[Tensor, Tensor, Tensor],
    test: tuple[Tensor, Tensor, Tensor],
    n_classes: int,
    *,
    seed: int,
    max_epochs: int = 30,
    patience: int | None = 1,
    lr: float = 1e-3,
    batch_size: int = 512,
    device: str | torch.device = "cpu",
) -> ProbeResult:
    """Train one softmax probe and evaluate it.

    Args:
        train, val, test: ``(x, labels, weights)`` with ``x`` of shape ``(n, hidden)``,
            ``labels`` int64 ``(n,)`` in ``0 .. n_classes-1`` and weights ``(n,)``.
        n_classes: number of classes.
        seed: seeds the initialisation and the order of minibatches.
        max_epochs: epoch limit (30 in the paper; 3 for the MLM probe).
        patience: epochs without improvement tolerated (after each one the learning
            rate is halved); ``None`` trains exactly ``max_epochs`` epochs and keeps the
            last parameters (the MLM probe).
        lr: Adam's initial learning rate (its default, 1e-3).
        batch_size: tokens per step.
        device: where to train.

    Returns:
        A :class:`ProbeResult`.
    """
    for name, (x, y, w) in {"train": train, "val": val, "test": test}.items():
        if len(x) == 0:
            raise ValueError(f"the {name} set of the probe is empty; use more windows in the profile")
        if not (len(x) == len(y) == len(w)):
            raise ValueError(f"{name}: features, labels and weights differ in length ({len(x)}, {len(y)}, {len(w)})")
        if int(y.min()) < 0 or int(y.max()) >= n_classes:
            raise ValueError(f"{name}: labels must lie in 0..{n_classes - 1}, got {int(y.min())}..{int(y.max())}")
    device = torch.device(device)
    mean = train[0].float().mean(0)
    std = train[0].float().std(0).clamp_min(1e-6)

    def prep(split: tuple[Tensor, Tensor, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        x, y, w = split
        return ((x.float() - mean) / std).to(device), y.to(device), w.float().to(device)

    (xt, yt, wt), (xv, yv, wv), (xs, ys, ws) = prep(train), prep(val), prep(test)
    gen = torch.Generator().manual_seed(seed)
    model = nn.Linear(xt.shape[1], n_classes)
    bound = 1 / xt.shape[1] ** 0.5
    with torch.no_grad():
        model.weight.uniform_(-bound, bound, generator=gen)
        model.bias.uniform_(-bound, bound, generator=gen)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best = (float("inf"), copy.deepcopy(model.state_dict()), 0)
    history, bad = [], 0
    for epoch in range(1, max_epochs + 1):
        model.train()
        order = torch.randperm(len(xt), generator=gen).to(device)
        total, seen = 0.0, 0.0
        for i in range(0, len(order), batch_size):
            idx = order[i : i + batch_size]
            loss = weighted_loss(model(xt[idx]), yt[idx], wt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * float(wt[idx].sum())
            seen += float(wt[idx].sum())
        model.eval()
        val_loss, _ = _evaluate(model, xv, yv, wv, 8192)
        history.append({"epoch": epoch, "train_loss": total / max(seen, 1e-12), "val_loss": val_loss, "lr": opt.param_groups[0]["lr"]})
        if patience is None:
            best = (val_loss, model.state_dict(), epoch)
            continue
        if val_loss < best[0]:
            best, bad = (val_loss, copy.deepcopy(model.state_dict()), epoch), 0
        else:
            bad += 1
            if bad > patience:
                break
            for group in opt.param_groups:
                group["lr"] /= 2
    model.load_state_dict(best[1])
    model.eval()
    _, val_acc = _evaluate(model, xv, yv, wv, 8192)
    test_loss, test_acc = _evaluate(model, xs, ys, ws, 8192)
    return ProbeResult(test_acc, val_acc, test_loss, best[2], history)


def probe_conditions(
    feats: dict[str, Features],
    n_classes: int,
    conditions: tuple[str, ...],
    runs: int,
    seed: int,
    **probe_kwargs,
) -> pd.DataFrame:
    """Probe every condition ``runs`` times (seeds ``seed, seed+1, ...``).

    Args:
        feats: split (``train``/``val``/``test``) -> :class:`Features` holding the conditions.
        n_classes: number of classes.
        conditions: which feature matrices to probe.
        runs: probe runs per condition (the paper: 3).
        seed: base seed.
        **probe_kwargs: passed to :func:`train_probe`.

    Returns:
        One row per (condition, run): ``condition, run, accuracy, val_accuracy,
        test_loss, best_epoch, epochs``.
    """
    rows = []
    for cond in conditions:
        split = {s: (f.x[cond], f.labels, f.weights) for s, f in feats.items()}
        for run in range(runs):
            r = train_probe(split["train"], split["val"], split["test"], n_classes, seed=seed + run, **probe_kwargs)
            rows.append(
                {
                    "condition": cond,
                    "run": run,
                    "accuracy": r.accuracy,
                    "val_accuracy": r.val_accuracy,
                    "test_loss": r.test_loss,
                    "best_epoch": r.best_epoch,
                    "epochs": r.epochs,
                }
            )
    return pd.DataFrame(rows)


def majority_baseline(train: Features, test: Features) -> float:
    """Weighted test accuracy of always predicting the training set's (weighted) majority class."""
    classes = int(max(train.labels.max(), test.labels.max())) + 1
    mass = torch.zeros(classes).index_add_(0, train.labels, train.weights.float())
    majority = int(mass.argmax())
    w = test.weights.float()
    return float(w[test.labels == majority].sum() / w.sum())
