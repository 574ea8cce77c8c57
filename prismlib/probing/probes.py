"""Softmax probes with the paper's training recipe (section 3.2).

A probe is a linear map from a token's (filtered) features to class logits, trained
with Adam at its default settings (lr 1e-3, betas 0.9/0.999) for at most 30 epochs (the
settings travel as one :class:`~prismlib.probing.ProbeRecipe`, built from the profile).
After an epoch whose validation loss does not decrease, the learning rate is halved;
after ``patience + 1`` such epochs in a row (patience 1: two), training stops and the
parameters of the epoch with the lowest validation loss are restored.  (The paper says
"early stopping with a patience of one, decaying the learning rate by a factor of 2
when successive epochs do not produce a decrease in validation loss"; this is our
reading of how the two rules combine.)

Loss and accuracy weigh each token by ``1/|N|`` of its gold label (App. C), over the
positions actually fed to the probe (:mod:`prismlib.probing.features` renormalises after
sampling).  Features are raw by default, as in the paper; ``standardize=True`` (of the recipe) scales
them with the training set's mean and standard deviation per hidden unit, a linear
reparametrisation that leaves the family of probes unchanged but changes what Adam's
step size means for the tiny LOW-band features (notebook 02 measures the difference).

A run cut off by its epoch cap keeps where it stood (:class:`FitState`, in
:attr:`ProbeResult.resume` and :attr:`ProbeRuns.resume`), so that a check with a higher cap
continues it instead of training it again from the start (``resume``): the continued run is
the run a higher cap would have trained, step for step.

Independent probe trainings run as parallel processes with one thread each
(``workers``): on a small CPU that is faster than threads inside one process.

Comparisons between conditions (:func:`compare_accuracy`) and the majority-class gate
(:func:`majority_gate`) go through :mod:`prismlib.stats`: a paired bootstrap over the
test set's independent units (posts, conversations, WSJ files or windows, articles).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from prismlib.claims import Gate
from prismlib.jobcache import run_pool
from prismlib.probing.features import Features
from prismlib.probing.recipe import ProbeRecipe
from prismlib.stats import N_BOOT, Interval, group_sums, ratio_difference

if TYPE_CHECKING:
    from prismlib.probing.states import States

MAJORITY = "majority"
"""Pseudo-condition of :class:`ProbeRuns`: always predict the training set's majority class."""


@dataclass
class FitState:
    """Where :func:`fit_with_halving` stood after the last epoch of a fit its cap cut off:
    all it needs to go on as if the cap had been higher (its ``start``).

    Attributes:
        model: the module's state dict after the last epoch.
        optimiser: the optimiser's state dict then (its moments and halved rates).
        best_loss, best_params, best_epoch: the lowest validation loss so far, the
            parameters that gave it and its epoch (1-based).
        bad: epochs in a row since then without a lower validation loss.
        history: per epoch so far: ``epoch, train_loss, val_loss, lr``.
        rng: the state of the generator that orders the batches (``None`` without one).
    """

    model: dict[str, Tensor]
    optimiser: dict[str, Any]
    best_loss: float
    best_params: dict[str, Tensor]
    best_epoch: int
    bad: int
    history: list[dict]
    rng: Tensor | None = None


@dataclass
class ProbeResult:
    """Outcome of one probe run.

    Attributes:
        accuracy: weighted accuracy on the test set (0-1).
        val_accuracy: weighted accuracy on the validation set at the best epoch.
        test_loss: weighted cross-entropy on the test set.
        best_epoch: epoch (1-based) whose parameters were kept.
        history: per epoch: ``epoch, train_loss, val_loss, lr``.
        test_pred: ``(n_test,)`` int64 predicted class of every test row.
        resume: where the run stood at its epoch cap (:class:`FitState`), to continue it
            with a higher one; ``None`` when its rule stopped it.
    """

    accuracy: float
    val_accuracy: float
    test_loss: float
    best_epoch: int
    history: list[dict] = field(default_factory=list)
    test_pred: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    resume: FitState | None = None

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


def check_splits(splits: dict[str, tuple[Sized, Tensor, Tensor]], n_classes: int) -> None:
    """Reject an empty split, rows of unequal length or labels outside ``0..n_classes-1``.

    Args:
        splits: name -> ``(rows, labels, weights)``; ``rows`` is anything with a length
            (a feature matrix, or the row index of hidden states).

    Raises:
        ValueError: naming the split and what is wrong with it.
    """
    for name, (x, y, w) in splits.items():
        if len(x) == 0:
            raise ValueError(f"the {name} set of the probe is empty; use more windows in the profile")
        if not (len(x) == len(y) == len(w)):
            raise ValueError(f"{name}: features, labels and weights differ in length ({len(x)}, {len(y)}, {len(w)})")
        if int(y.min()) < 0 or int(y.max()) >= n_classes:
            raise ValueError(f"{name}: labels must lie in 0..{n_classes - 1}, got {int(y.min())}..{int(y.max())}")


def fit_with_halving(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    epoch_batches: Callable[[], Iterable[tuple[Tensor, Tensor, Tensor]]],
    val_loss: Callable[[], float],
    *,
    max_epochs: int,
    patience: int | None,
    start: FitState | None = None,
    generator: torch.Generator | None = None,
) -> tuple[list[dict], int, FitState | None]:
    """The paper's schedule around any probe: epochs of weighted-loss steps, the learning
    rate halved after an epoch whose validation loss does not decrease, a stop after
    ``patience + 1`` such epochs in a row, the best epoch's parameters restored.

    Args:
        model: the trained module (put in train mode for the steps, eval mode after).
        opt: its optimiser (every parameter group's rate is halved).
        epoch_batches: called once per epoch; yields ``(logits, labels, weights)`` per
            step, the logits computed with gradients (:func:`weighted_loss` of each is
            minimised).
        val_loss: the validation loss of the current parameters (called in eval mode).
        max_epochs: epoch limit.
        patience: see :class:`~prismlib.probing.ProbeRecipe`; ``None`` runs ``max_epochs``
            epochs and keeps the last parameters.
        start: the :class:`FitState` of a fit of the same module, optimiser and batches
            that an earlier cap cut off: the fit goes on from its next epoch, as if that
            cap had been ``max_epochs`` (``model``, ``opt`` and ``generator`` are set to
            where it stood).
        generator: the generator ``epoch_batches`` draws its order from; its state is
            saved in the returned :class:`FitState` and restored from ``start``.

    Returns:
        ``(history, best_epoch, state)``: per epoch ``epoch, train_loss, val_loss, lr``, the
        1-based epoch whose parameters ``model`` now holds (in eval mode), and where the fit
        stood after its last epoch when the cap cut it off (``None`` when the rule stopped it).

    Raises:
        ValueError: ``start`` ran more epochs than ``max_epochs``, or saved a generator
            state and none is given (or the reverse).
    """
    if start is None:
        best, history, bad = (float("inf"), copy.deepcopy(model.state_dict()), 0), [], 0
    else:
        if len(start.history) > max_epochs:
            raise ValueError(f"the fit to continue ran {len(start.history)} epochs; a cap of {max_epochs} cannot continue it")
        if (start.rng is None) != (generator is None):
            raise ValueError("continue a fit with the generator its batches were drawn from, and only then")
        model.load_state_dict(start.model)
        opt.load_state_dict(copy.deepcopy(start.optimiser))
        if generator is not None and start.rng is not None:
            generator.set_state(start.rng)
        best, history, bad = (start.best_loss, copy.deepcopy(start.best_params), start.best_epoch), list(start.history), start.bad
    stopped = False
    for epoch in range(len(history) + 1, max_epochs + 1):
        model.train()
        total, seen = 0.0, 0.0
        for logits, y, w in epoch_batches():
            loss = weighted_loss(logits, y, w)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * float(w.sum())
            seen += float(w.sum())
        model.eval()
        loss_val = val_loss()
        history.append({"epoch": epoch, "train_loss": total / max(seen, 1e-12), "val_loss": loss_val, "lr": opt.param_groups[0]["lr"]})
        if patience is None:
            best = (loss_val, model.state_dict(), epoch)
            continue
        if loss_val < best[0]:
            best, bad = (loss_val, copy.deepcopy(model.state_dict()), epoch), 0
        else:
            bad += 1
            if bad > patience:
                stopped = True
                break
            for group in opt.param_groups:
                group["lr"] /= 2
    state = None
    if not stopped:
        state = FitState(
            copy.deepcopy(model.state_dict()),
            copy.deepcopy(opt.state_dict()),
            best[0],
            copy.deepcopy(best[1]),
            best[2],
            bad,
            list(history),
            None if generator is None else generator.get_state(),
        )
    model.load_state_dict(best[1])
    model.eval()
    return history, best[2], state


@torch.no_grad()
def _evaluate(model: nn.Module, x: Tensor, y: Tensor, w: Tensor, batch: int) -> tuple[float, float, Tensor]:
    logits = torch.cat([model(x[i : i + batch]) for i in range(0, len(x), batch)])
    return float(weighted_loss(logits, y, w)), weighted_accuracy(logits, y, w), logits.argmax(-1)


def train_probe(
    train: tuple[Tensor, Tensor, Tensor],
    val: tuple[Tensor, Tensor, Tensor],
    test: tuple[Tensor, Tensor, Tensor],
    n_classes: int,
    recipe: ProbeRecipe,
    *,
    seed: int,
    device: str | torch.device = "cpu",
    resume: FitState | None = None,
) -> ProbeResult:
    """Train one softmax probe and evaluate it.

    Args:
        train, val, test: ``(x, labels, weights)`` with ``x`` of shape ``(n, hidden)``,
            ``labels`` int64 ``(n,)`` in ``0 .. n_classes-1`` and weights ``(n,)``.
        n_classes: number of classes.
        recipe: the epoch cap, patience, learning rate, rows per step and standardisation
            (:class:`~prismlib.probing.ProbeRecipe`; from a profile:
            :meth:`~prismlib.probing.ProbeRecipe.of`).
        seed: seeds the initialisation and the order of minibatches.
        device: where to train.
        resume: the :attr:`ProbeResult.resume` of this probe (the same data, seed and
            recipe but for a lower cap) cut off by that cap: it trains on to
            ``recipe.max_epochs`` from there, the same run as one trained with this cap
            from the start.

    Returns:
        A :class:`ProbeResult`.
    """
    check_splits({"train": train, "val": val, "test": test}, n_classes)
    device = torch.device(device)
    if recipe.standardize:
        mean, std = train[0].float().mean(0), train[0].float().std(0).clamp_min(1e-6)
    else:
        mean, std = torch.zeros(train[0].shape[1]), torch.ones(train[0].shape[1])

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
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr)

    def epoch_batches():
        order = torch.randperm(len(xt), generator=gen).to(device)
        for i in range(0, len(order), recipe.batch_size):
            idx = order[i : i + recipe.batch_size]
            yield model(xt[idx]), yt[idx], wt[idx]

    history, best_epoch, state = fit_with_halving(
        model,
        opt,
        epoch_batches,
        lambda: _evaluate(model, xv, yv, wv, 8192)[0],
        max_epochs=recipe.max_epochs,
        patience=recipe.patience,
        start=resume,
        generator=gen,
    )
    _, val_acc, _ = _evaluate(model, xv, yv, wv, 8192)
    test_loss, test_acc, pred = _evaluate(model, xs, ys, ws, 8192)
    return ProbeResult(test_acc, val_acc, test_loss, best_epoch, history, pred.cpu().numpy(), state)


@dataclass
class ProbeRuns:
    """Every probe run of :func:`probe_conditions`.

    Attributes:
        table: one row per (condition, run): ``condition, run, accuracy, val_accuracy,
            test_loss, best_epoch, epochs`` (accuracy 0-1).
        correct: condition -> ``(runs, n_test)`` bool, whether each test row was
            predicted right; :data:`MAJORITY` holds the majority-class predictor ``(1, n_test)``.
        majority_class: the training set's weighted majority class.
        resume: condition -> per run, where it stood at its epoch cap
            (:attr:`ProbeResult.resume`; ``None`` for a run its rule stopped): pass these
            runs as ``resume`` to probe them again with a higher cap.
    """

    table: pd.DataFrame
    correct: dict[str, np.ndarray]
    majority_class: int
    resume: dict[str, list[FitState | None]] = field(default_factory=dict)

    def resume_states(self, condition: str, runs: int) -> list[FitState | None]:
        """The :attr:`resume` states of ``condition``'s ``runs`` runs (run 0 first).

        Raises:
            ValueError: these runs hold no such condition, or another number of its runs
                (continue them with the seeds and runs they were probed with).
        """
        states = self.resume.get(condition)
        if states is None or len(states) != runs:
            held = "none" if states is None else f"{len(states)} runs"
            raise ValueError(f"cannot continue {runs} runs of {condition!r}: the runs to resume hold {held} of it")
        return states


def _probe_job(args: tuple) -> ProbeResult:
    """One probe training: ``(split, n_classes, recipe, seed, device, resume)`` (:func:`train_probe`'s)."""
    split, n_classes, recipe, seed, device, resume = args
    return train_probe(split["train"], split["val"], split["test"], n_classes, recipe, seed=seed, device=device, resume=resume)


def majority_class(train: Features | States) -> int:
    """The class with the largest total weight in the training set."""
    mass = torch.zeros(int(train.labels.max()) + 1).index_add_(0, train.labels, train.weights.float())
    return int(mass.argmax())


def probe_conditions(
    feats: dict[str, Features],
    n_classes: int,
    conditions: Sequence[str],
    runs: int,
    seed: int,
    recipe: ProbeRecipe,
    *,
    device: str | torch.device = "cpu",
    workers: int = 1,
    progress: bool = True,
    resume: ProbeRuns | None = None,
) -> ProbeRuns:
    """Probe every condition ``runs`` times (seeds ``seed, seed+1, ...``).

    Args:
        feats: split (``train``/``val``/``test``) -> :class:`Features` holding the conditions.
        n_classes: number of classes.
        conditions: which feature matrices to probe.
        runs: probe runs per condition (the paper: 3).
        seed: base seed (run ``r`` of every condition uses ``seed + r``).
        recipe: how every probe trains (:func:`train_probe`'s ``recipe``).
        device: where to train.
        workers: parallel processes, one torch thread each (1: in this process). The
            results do not depend on it.
        progress: show a progress bar over the probes.
        resume: these conditions' runs probed before with the same features, seed and
            recipe but a lower cap (:meth:`~prismlib.probing.ProbeRecipe.with_cap`): each run
            its cap cut off goes on from where it stood (:attr:`ProbeRuns.resume`), each run
            its rule stopped trains again (and repeats). The result is the same as probing
            with this cap from the start.

    Returns:
        :class:`ProbeRuns`.
    """
    jobs: list[tuple[Any, ...]] = []
    for cond in conditions:
        split = {s: (f.x[cond], f.labels, f.weights) for s, f in feats.items()}
        starts = [None] * runs if resume is None else resume.resume_states(cond, runs)
        jobs.extend((split, n_classes, recipe, seed + run, device, starts[run]) for run in range(runs))
    done = run_pool(_probe_job, jobs, workers, progress=progress, desc="probes", unit="probe")
    results: dict[str, Sequence[ProbeResult]] = {cond: done[i * runs : (i + 1) * runs] for i, cond in enumerate(conditions)}
    return collect_runs(results, feats["test"].labels, majority_class(feats["train"]))


def collect_runs(results: dict[str, Sequence[ProbeResult]], test_labels: Tensor, majority: int) -> ProbeRuns:
    """:class:`ProbeRuns` of finished probes.

    Args:
        results: condition -> its runs' :class:`ProbeResult` (run 0 first).
        test_labels: ``(n_test,)`` gold labels the ``test_pred`` are scored against.
        majority: the training set's majority class (:func:`majority_class`).
    """
    rows, correct, resume = [], {}, {}
    labels = np.asarray(test_labels)
    for cond, done in results.items():
        correct[cond] = np.stack([r.test_pred == labels for r in done])
        resume[cond] = [r.resume for r in done]
        for run, r in enumerate(done):
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
    correct[MAJORITY] = (labels == majority)[None]
    return ProbeRuns(pd.DataFrame(rows), correct, majority, resume)


def majority_baseline(train: Features, test: Features) -> float:
    """Weighted test accuracy of always predicting the training set's (weighted) majority class."""
    majority = majority_class(train)
    w = test.weights.float()
    return float(w[test.labels == majority].sum() / w.sum())


def accuracy_sums(correct: np.ndarray, test: Features, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit weighted correct and weight: the sums behind a weighted accuracy.

    Args:
        correct: ``(runs, n)`` or ``(n,)`` bool; runs are averaged (the accuracy of the
            mean over runs equals the mean of the runs' accuracies).
        test: the test :class:`Features` (their 1/|N| weights).
        groups: ``(n,)`` independent unit of each test row (see ``TaskData.row_groups``).

    Returns:
        ``(num, den)``, each ``(G,)``: accuracy = ``num.sum() / den.sum()``.
    """
    score = np.atleast_2d(np.asarray(correct, dtype=np.float64)).mean(0)
    w = test.weights.double().numpy()
    _, sums = group_sums(np.stack([score * w, w]), groups)
    return sums[0], sums[1]


def compare_accuracy(
    runs: ProbeRuns, test: Features, groups: np.ndarray, a: str, b: str, *, n_boot: int = N_BOOT, seed: int = 0
) -> Interval:
    """Accuracy of condition ``a`` minus ``b`` in percentage points, with its paired
    bootstrap interval over the test set's independent units (``b`` may be :data:`MAJORITY`)."""
    num_a, den = accuracy_sums(runs.correct[a], test, groups)
    num_b, _ = accuracy_sums(runs.correct[b], test, groups)
    return ratio_difference(num_a, num_b, den, n_boot=n_boot, seed=seed).scaled(100)


def majority_gate(
    runs: ProbeRuns, test: Features, groups: np.ndarray, condition: str = "ORIG", *, n_boot: int = N_BOOT, seed: int = 0
) -> Gate:
    """Gate: the ``condition`` probe beats the majority class outside the test-set noise."""
    iv = compare_accuracy(runs, test, groups, condition, MAJORITY, n_boot=n_boot, seed=seed)
    num, den = accuracy_sums(runs.correct[condition], test, groups)
    acc = 100 * num.sum() / den.sum()
    return Gate.from_interval(
        f"{condition} probe beats the majority class", iv, detail=f"{condition} {acc:.1f}% vs majority {acc - iv.effect:.1f}%, {iv}"
    )


def accuracy_interval(correct: np.ndarray, test: Features, groups: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """Weighted accuracy (in %) of ``correct`` (``(runs, n)``, runs averaged) and its
    bootstrap interval over the test set's independent units."""
    num, den = accuracy_sums(correct, test, groups)
    return ratio_difference(num, np.zeros_like(num), den, n_boot=n_boot, seed=seed).scaled(100)


def summarise(runs: ProbeRuns, test: Features, groups: np.ndarray, *, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """One row per condition (and the majority class): accuracy % (mean over runs), its
    95% interval over the test set's units, the SD over probe runs, and the epochs run.

    Columns: ``condition, accuracy, ci_low, ci_high, sd_runs, epochs, n_test_rows, n_test_units``.
    """
    rows = []
    for cond, correct in runs.correct.items():
        iv = accuracy_interval(correct, test, groups, n_boot=n_boot, seed=seed)
        per_run = runs.table.loc[runs.table["condition"] == cond]
        rows.append(
            {
                "condition": cond,
                "accuracy": iv.effect,
                "ci_low": iv.low,
                "ci_high": iv.high,
                "sd_runs": 100 * per_run["accuracy"].std() if len(per_run) > 1 else float("nan"),
                "epochs": per_run["epochs"].mean() if len(per_run) else float("nan"),
                "n_test_rows": len(test),
                "n_test_units": iv.units,
            }
        )
    return pd.DataFrame(rows)


def ranking(summary: pd.DataFrame, conditions: Sequence[str]) -> list[str]:
    """``conditions`` sorted by accuracy in ``summary`` (best first)."""
    acc = summary.set_index("condition")["accuracy"]
    return sorted(conditions, key=lambda c: -acc[c])


def best_on_validation(runs: ProbeRuns, conditions: Sequence[str]) -> str:
    """The condition of ``conditions`` with the highest validation accuracy (mean over its
    runs; the first listed on a tie): a choice that leaves the test set for the claim.

    Raises:
        ValueError: no condition given, or one without runs in ``runs``.
    """
    val = runs.table.groupby("condition")["val_accuracy"].mean()
    missing = [c for c in conditions if c not in val.index]
    if not conditions or missing:
        raise ValueError(f"need conditions with runs; got {list(conditions)} (without runs: {missing})")
    return max(conditions, key=lambda c: val[c])


@dataclass
class ProbeComparison:
    """One task's probe results with its test rows and their independent units: the
    accuracies, differences and majority-class gates every probing claim is made of.

    Attributes:
        runs: the task's :class:`ProbeRuns` (every condition, and :data:`MAJORITY`).
        test: the test :class:`Features` the runs were scored on (their 1/|N| weights).
        groups: ``(n_test,)`` independent unit of each test row (``TaskData.row_groups``).
        seed, n_boot: of every bootstrap.
        task: named in the gates (``"pos: ORIG probe beats the majority class"``) where a
            claim rests on several tasks.
    """

    runs: ProbeRuns
    test: Features
    groups: np.ndarray
    seed: int = 0
    n_boot: int = N_BOOT
    task: str = ""

    @property
    def units(self) -> int:
        """Independent test units (posts, conversations, WSJ files or windows)."""
        return len(np.unique(self.groups))

    def accuracy(self, condition: str) -> Interval:
        """Weighted test accuracy (%) of ``condition`` (runs averaged) and its interval."""
        return accuracy_interval(self.runs.correct[condition], self.test, self.groups, n_boot=self.n_boot, seed=self.seed)

    def diff(self, a: str, b: str) -> Interval:
        """Accuracy of ``a`` minus ``b`` in points, paired bootstrap over the test units
        (``b`` may be :data:`MAJORITY`). With a single test unit no interval exists: the
        effect alone, as a zero-width interval (a claim on it must be gated out)."""
        if self.units < 2:
            num_a, den = accuracy_sums(self.runs.correct[a], self.test, self.groups)
            num_b, _ = accuracy_sums(self.runs.correct[b], self.test, self.groups)
            effect = float(100 * (num_a.sum() - num_b.sum()) / den.sum())
            return Interval(effect, effect, effect, self.units)
        return compare_accuracy(self.runs, self.test, self.groups, a, b, n_boot=self.n_boot, seed=self.seed)

    def gate(self, condition: str = "ORIG") -> Gate:
        """:func:`majority_gate` of ``condition`` (its name prefixed by ``task`` when set)."""
        g = majority_gate(self.runs, self.test, self.groups, condition, n_boot=self.n_boot, seed=self.seed)
        return Gate(f"{self.task}: {g.name}", g.passed, g.detail) if self.task else g

    def any_gate(self, conditions: Sequence[str], what: str = "band") -> Gate:
        """Passed when at least one of ``conditions`` beats the majority class (outside the
        noise): a claim about which of them is best is ``not testable`` when none does."""
        passed = [c for c in conditions if self.gate(c).passed]
        prefix = f"{self.task}: " if self.task else ""
        return Gate(f"{prefix}some {what} beats the majority class", bool(passed), ", ".join(passed) or "none of " + ", ".join(conditions))
