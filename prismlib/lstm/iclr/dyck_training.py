"""Training the Dyck-2 LSTMs (:mod:`prismlib.lstm.iclr.dyck_model`) as cached, resumable, seeded jobs.

The official recipe (``experiments.py``, ``run_dyckn.py``): Adam, batches of 32 strings, one
truncated-BPTT chunk of 200 steps per string (every string fits in it), gradient-norm clip 1,
the loss ``MSELoss(sum)`` of the sigmoid outputs divided by the outputs' count (positions x
bracket types) of the batch; after every epoch the validation loss, and the run stops once it
is below ``1e-4`` (at most 2000 epochs). Here:

* **validation loss** is the mean squared error per output over the whole validation split
  (the official code averages the batches' means; the two agree up to the batches' sizes);
* **stopping**: by the official threshold (``DyckSettings.stop_val_loss``), and where
  ``DyckSettings.anneal`` is set also by the annealed rule of :mod:`prismlib.anneal` on the
  validation loss (the rate divided on a plateau; its guard: no decay before the loss beats
  the best *constant* output, the per-type share of legal closers in training). A run
  stopped by either is converged; a run at the cap ``epochs`` is not
  (:func:`dyck_converged_gate`). The weights kept are those of the best validation loss;
* **batches** are random (as officially) or, with ``DyckSettings.bucket``, strings of similar
  length (a seeded draw among equal lengths, batch order shuffled): the same strings and loss
  per epoch at a third of the padding (:func:`epoch_batches`).

:class:`DyckJob` is a :class:`prismlib.jobcache.Trainable`: its key hashes the model kind, the
seed, the profile and the recipe (:class:`prismlib.profiles.DyckRecipe`, every setting that
changes training) whole (with :data:`DYCK_RECIPE_VERSION`);
``partial.pt`` after every epoch holds the optimiser, the schedule and both RNG states, so an
interrupted run resumes exactly; ``done.pt`` holds the best weights, the history and the test
outputs' correctness per string. :func:`trained_dyck` returns every run of a profile, training
the missing ones first (:func:`prismlib.jobcache.run_missing`).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from prismlib.anneal import DID_NOT_LEARN, STOPPED_AT_CAP, STOPPED_BY_RULE, AnnealRule, AnnealSettings, AnnealState, anneal_check
from prismlib.artifacts import load_checkpoint, load_or_discard, remove, save_atomic
from prismlib.claims import Gate, Test, with_seeds
from prismlib.devices import resolve_device, torch_threads
from prismlib.jobcache import job_dir, job_key, run_missing, with_recipe
from prismlib.lstm.iclr.dyck import N_TYPES, DyckSplit, accuracy_by_distance, build_dataset, sequence_correct
from prismlib.lstm.iclr.dyck_model import DYCK_MODELS, DyckLSTM, build_dyck_model
from prismlib.profiles import DyckSettings
from prismlib.progress import progress_bar
from prismlib.stats import N_BOOT, Interval, mean_interval, paired_bootstrap

DYCK_RECIPE_VERSION = 1
"""Version of the code that trains a Dyck job (:func:`dyck_recipe_code`); it enters every key."""


def dyck_data(s: DyckSettings) -> dict[str, DyckSplit]:
    """The profile's ``train`` / ``validation`` / ``test`` splits: one draw from ``s.data_seed``
    (:func:`prismlib.lstm.iclr.dyck.build_dataset`, official grammar; distinct strings)."""
    return build_dataset(np.random.default_rng(s.data_seed), s.n_train, s.n_validation, s.n_test, max_length=s.max_length)


def epoch_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator, bucket: bool) -> list[np.ndarray]:
    """One epoch's batches: index arrays of at most ``batch_size`` strings covering ``(n,)`` ``lengths`` once.

    Random batches (the official ``DataLoader(shuffle=True)``), or with ``bucket`` strings sorted
    by length after a random permutation (so equal lengths are in random order), cut into
    batches, the batches in random order."""
    order = rng.permutation(len(lengths))
    if bucket:
        order = order[np.argsort(lengths[order], kind="stable")]
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if bucket:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def _tensors(split: DyckSplit, idx: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(tokens (b, T), targets (b, T, K), mask (b, T))`` of strings ``idx``, cut to their longest."""
    width = int(split.lengths[idx].max())
    tokens = torch.from_numpy(split.tokens[idx, :width]).to(device)
    targets = torch.from_numpy(split.targets[idx, :width]).to(device)
    mask = torch.from_numpy(split.mask[idx, :width]).to(device)
    return tokens, targets, mask


def squared_error(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sum of squared errors of the sigmoid outputs at real positions, outputs counted)``:
    ``logits`` and ``targets`` ``(b, T, K)``, ``mask`` ``(b, T)``; their ratio is the official loss."""
    err = ((torch.sigmoid(logits) - targets) ** 2).sum(-1) * mask
    return err.sum(), mask.sum() * targets.size(-1)


@torch.no_grad()
def dyck_outputs(model: DyckLSTM, split: DyckSplit, batch_size: int = 256) -> np.ndarray:
    """``(n, T, K)`` float32 logits of every string of ``split`` (each read from a zero state;
    entries past a string's end are meaningless: mask them)."""
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    n, width = split.tokens.shape
    out = np.zeros((n, width, split.legal.shape[-1] // 2), dtype=np.float32)
    order = np.argsort(split.lengths, kind="stable")  # batches of similar lengths: little padding
    for i in range(0, n, batch_size):
        idx = order[i : i + batch_size]
        tokens, _, _ = _tensors(split, idx, device)
        out[idx, : tokens.size(1)] = model(tokens)[0].float().cpu().numpy()
    model.train(was)
    return out


def validation_loss(logits: np.ndarray, split: DyckSplit) -> float:
    """Mean squared error per output over every real position of ``split`` (the stopping metric),
    from the ``(n, T, K)`` logits of :func:`dyck_outputs`."""
    total, count = squared_error(torch.from_numpy(logits), torch.from_numpy(split.targets), torch.from_numpy(split.mask))
    return float(total / count)


def constant_loss(train: DyckSplit, valid: DyckSplit) -> float:
    """Validation loss of the best constant output (each type's share of legal closers in
    training): what a model must beat before the annealed rule may decay."""
    share = train.targets[train.mask].mean(axis=0)  # (K,)
    err = ((valid.targets - share) ** 2).sum(-1)[valid.mask]
    return float(err.sum() / (valid.mask.sum() * valid.targets.shape[-1]))


@dataclass
class DyckHistory:
    """Record of :func:`train_dyck`, one entry per epoch.

    Attributes:
        epochs: completed epochs; ``steps``: optimiser steps; ``seconds``: training time.
        train_loss, val_loss: mean loss per output on the epoch's batches and on validation.
        val_accuracy: share of validation strings entirely right (:func:`~prismlib.lstm.iclr.dyck.sequence_correct`).
        lr_scale: the rate of each epoch over the initial one.
        anneal: the annealed rule's state (``None`` without it).
        stop: why the run ended: ``rule`` (threshold or annealed rule), ``cap``, ``did not learn``
            (at the cap without beating the constant output); ``None`` while it runs.
        stopped_by: ``"threshold"`` or ``"anneal"`` for a run stopped by rule.
    """

    epochs: int = 0
    steps: int = 0
    seconds: float = 0.0
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)
    lr_scale: list[float] = field(default_factory=list)
    anneal: AnnealState | None = None
    stop: str | None = None
    stopped_by: str | None = None

    @property
    def converged(self) -> bool:
        """Whether the run stopped by its rule (never at its cap)."""
        return self.stop == STOPPED_BY_RULE

    @property
    def best_val_loss(self) -> float:
        return min(self.val_loss) if self.val_loss else math.inf


def _rule(s: DyckSettings, learn_below: float | None) -> AnnealRule:
    return s.schedule.rule(s.epochs, learn_below)


def train_dyck(
    model: DyckLSTM,
    train: DyckSplit,
    valid: DyckSplit,
    s: DyckSettings,
    seed: int,
    checkpoint: Path | None = None,
    desc: str = "dyck",
    progress: bool = True,
) -> DyckHistory:
    """Train ``model`` in place until its rule stops it or ``s.epochs``; keep the best validation weights.

    All randomness (batch order) comes from ``seed``; with ``checkpoint`` the state after every
    epoch is saved there and a second call resumes exactly (a corrupt one is set aside and the
    run starts over).

    Returns:
        The :class:`DyckHistory`; the model holds the best-validation weights on return.
    """
    device = next(model.parameters()).device
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=s.lr)
    rng = np.random.default_rng(seed)
    hist = DyckHistory(anneal=AnnealState() if s.anneal else None)
    best: tuple[float, dict[str, Any]] | None = None
    ck = None if checkpoint is None else load_or_discard(checkpoint, map_location=device)
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        hist, best = ck["history"], ck["best"]
        rng.bit_generator.state = ck["numpy_rng"]
        if hist.stop in (STOPPED_AT_CAP, DID_NOT_LEARN) and hist.epochs < s.epochs:  # ended at a smaller cap: go on
            hist.stop = None
            if hist.anneal is not None:
                hist.anneal = replace(hist.anneal, stop=None)
    rule = _rule(s, constant_loss(train, valid)) if s.anneal else None
    lengths = train.lengths
    steps_per_epoch = math.ceil(len(lengths) / s.batch_size)
    bar = progress_bar(
        total=s.epochs * steps_per_epoch, initial=hist.epochs * steps_per_epoch, desc=desc, leave=False, mininterval=2, disable=not progress
    )
    while hist.stop is None and hist.epochs < s.epochs:
        scale = 1.0 if hist.anneal is None else hist.anneal.scale
        for group in opt.param_groups:
            group["lr"] = s.lr * scale
        model.train()
        t0, total, count = time.perf_counter(), 0.0, 0.0
        for idx in epoch_batches(lengths, s.batch_size, rng, s.bucket):
            tokens, targets, mask = _tensors(train, idx, device)
            err, n = squared_error(model(tokens)[0], targets, mask)
            loss = err / n
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if s.clip > 0:
                nn.utils.clip_grad_norm_(params, s.clip)
            opt.step()
            total, count = total + err.item(), count + n.item()
            hist.steps += 1
            bar.update(1)
        hist.seconds += time.perf_counter() - t0
        logits = dyck_outputs(model, valid, s.eval_batch)
        val = validation_loss(logits, valid)
        correct = sequence_correct(logits, valid.targets, valid.mask, logits=True)
        if best is None or val < best[0]:
            best = (val, copy.deepcopy(model.state_dict()))
        hist.epochs += 1
        hist.train_loss.append(total / count)
        hist.val_loss.append(val)
        hist.val_accuracy.append(float(correct.mean()))
        hist.lr_scale.append(scale)
        bar.set_postfix(val_loss=f"{val:.2e}", val_acc=f"{correct.mean():.2f}")
        if val < s.stop_val_loss:
            hist.stop, hist.stopped_by = STOPPED_BY_RULE, "threshold"
        elif rule is not None and hist.anneal is not None:
            hist.anneal, _ = anneal_check(hist.anneal, val, rule)
            if hist.anneal.stop is not None:
                hist.stop = hist.anneal.stop
                hist.stopped_by = "anneal" if hist.stop == STOPPED_BY_RULE else None
        if hist.stop is None and hist.epochs >= s.epochs:
            learned = rule is None or rule.learn_below is None or hist.best_val_loss < rule.learn_below
            hist.stop = STOPPED_AT_CAP if learned else DID_NOT_LEARN
        if checkpoint is not None:
            save_atomic(
                checkpoint, model=model.state_dict(), optimizer=opt.state_dict(), history=hist, best=best, numpy_rng=rng.bit_generator.state
            )
    bar.close()
    if best is not None:
        model.load_state_dict(best[1])
    return hist


@dataclass(frozen=True)
class DyckJob:
    """One Dyck-2 model to train: ``kind`` (``baseline`` or ``mts``) and ``seed`` with ``settings``."""

    kind: str
    seed: int
    settings: DyckSettings
    profile: str

    def __post_init__(self) -> None:
        if self.kind not in DYCK_MODELS:
            raise ValueError(f"kind must be one of {DYCK_MODELS}, got {self.kind!r}")

    def describe(self) -> dict[str, Any]:
        """What the key hashes: the kind, seed, profile and the recipe whole, flat
        (:meth:`~prismlib.profiles.Nested.flat`: the anneal ``schedule``'s fields beside the
        recipe's own, as before the schedule and the recipe were grouped, so the keys stayed);
        the seeds to train, the evaluation batch and the threads never enter it."""
        s = self.settings.recipe.flat()
        described = {"kind": "dyck", "model": self.kind, "seed": self.seed, "profile": self.profile, "settings": s}
        return with_recipe(described, DYCK_RECIPE_VERSION)

    @property
    def key(self) -> str:
        """16 hex digits of the SHA-256 of :meth:`describe` (the job's cache folder)."""
        return job_key(self.describe())

    @property
    def label(self) -> str:
        """E.g. ``"Dyck-2 mts seed 1"``."""
        return f"Dyck-2 {self.kind} seed {self.seed}"

    def model(self) -> DyckLSTM:
        """The model before training (its seeded initialisation)."""
        return build_dyck_model(self.kind, self.settings.hidden, self.seed)

    def train(self, folder: Path, device: torch.device, progress: bool, data: dict[str, DyckSplit] | None) -> None:
        """Train on ``data`` (``None``: :func:`dyck_data` of the settings), resuming from
        ``partial.pt``, then write ``done.pt``: the best weights, the history and ``test_correct``
        ``(n_test,)`` bool (every output of the string right)."""
        s = self.settings
        data = data if data is not None else dyck_data(s)
        model = self.model().to(device)
        with torch_threads(s.threads):
            hist = train_dyck(model, data["train"], data["validation"], s, self.seed, folder / "partial.pt", self.label, progress)
            test = data["test"]
            correct = sequence_correct(dyck_outputs(model, test, s.eval_batch), test.targets, test.mask, logits=True)
        save_atomic(folder / "done.pt", model=model.state_dict(), history=hist, test_correct=correct)
        remove(folder / "partial.pt")


def dyck_recipe_code() -> list[Any]:
    """The code that defines what a Dyck job trains (pinned beside :data:`DYCK_RECIPE_VERSION`)."""
    from prismlib.lstm import timescales
    from prismlib.lstm.iclr import dyck, dyck_model

    return [
        dyck.derive, dyck.sample_sequences, dyck.build_dataset, dyck.make_split, dyck.legal_next, dyck_model.DyckLSTM,
        dyck_model.build_dyck_model, dyck_model.dyck_timescales, timescales.apply_official, timescales.inverse_gamma_timescales,
        timescales.bias_from_timescale, dyck_data, epoch_batches, squared_error, constant_loss, validation_loss, train_dyck,
        DyckJob.train, _rule, AnnealSettings.rule, AnnealSettings.check_cap, anneal_check,
    ]  # fmt: skip


@dataclass
class DyckRun:
    """A trained Dyck-2 model: its job, the model (best validation weights, eval mode), the
    history and ``test_correct`` ``(n_test,)`` bool."""

    job: DyckJob
    model: DyckLSTM
    history: DyckHistory
    test_correct: np.ndarray

    @property
    def label(self) -> str:
        return self.job.label


def dyck_jobs(s: DyckSettings, profile_name: str, kinds: Sequence[str] = DYCK_MODELS) -> list[DyckJob]:
    """One job per model kind and seed of ``s`` (kind-major), of the profile named ``profile_name``."""
    return [DyckJob(kind, seed, s, profile_name) for kind in kinds for seed in s.seeds]


def load_dyck_run(job: DyckJob, cache: Path | None = None, device: str = "auto") -> DyckRun:
    """The finished ``job`` as a :class:`DyckRun`."""
    path = job_dir(job, cache) / "done.pt"
    if not path.exists():
        raise FileNotFoundError(f"job {job.label} ({job.key}) has not been trained; run it with prismlib.jobcache.run_missing")
    dev = resolve_device(device)
    done = load_checkpoint(path, map_location=dev)
    model = job.model().to(dev)
    model.load_state_dict(done["model"])
    return DyckRun(job, model.eval(), done["history"], np.asarray(done["test_correct"], dtype=bool))


def trained_dyck(
    s: DyckSettings,
    profile_name: str,
    executor: str | None = None,
    workers: int | None = None,
    device: str = "auto",
    cache: Path | None = None,
    data: dict[str, DyckSplit] | None = None,
    kinds: Sequence[str] = DYCK_MODELS,
) -> dict[tuple[str, int], DyckRun]:
    """``(kind, seed) -> DyckRun`` of every job of ``s``: missing ones train first (``data``:
    :func:`dyck_data` of ``s``, passed to every job; built by each job when ``None``)."""
    jobs = dyck_jobs(s, profile_name, kinds)
    run_missing(jobs, executor, workers, cache, device, data=data)
    return {(j.kind, j.seed): load_dyck_run(j, cache, device) for j in jobs}


def dyck_converged_gate(runs: Sequence[DyckRun]) -> Gate:
    """Passed when every run stopped by its rule (threshold or annealed), none at its cap."""
    name = "converged: every Dyck run stopped by its rule (validation loss below the threshold or the annealed rule), not at its cap"
    if not runs:
        raise ValueError("dyck_converged_gate needs at least one run")
    capped = [r for r in runs if not r.history.converged]
    if capped:
        r = capped[0]
        return Gate(
            name,
            False,
            f"not converged: {len(capped)} of {len(runs)} runs ended '{r.history.stop}', e.g. {r.label} "
            f"after {r.history.epochs} epochs (best validation loss {r.history.best_val_loss:.2e})",
        )
    longest = max(runs, key=lambda r: r.history.epochs)
    how = ", ".join(f"{sum(r.history.stopped_by == w for r in runs)} by {w}" for w in ("threshold", "anneal"))
    return Gate(name, True, f"{len(runs)} runs stopped by rule ({how}); longest {longest.label}, {longest.history.epochs} epochs")


# ------------------------------------------------------------------ accuracy by distance, the claim's tests

DYCK_MARGIN = 0.05
"""The smallest accuracy difference that matters in the Dyck-2 claim (5 points of strings right)."""
LEARNED_SHORT = 0.5
"""A model whose seed-mean accuracy on the shortest-distance bin is below this has not learnt the
task: where its accuracy falls off with distance says nothing (the gate of the Dyck claim)."""


def correct_matrix(runs: Mapping[tuple[str, int], DyckRun], kind: str) -> np.ndarray:
    """``(seeds, n_test)`` bool: each seed's ``test_correct`` of model ``kind`` (seeds in order)."""
    rows = [runs[k].test_correct for k in sorted(runs) if k[0] == kind]
    if not rows:
        raise ValueError(f"no run of model {kind!r} among {sorted(runs)}")
    return np.stack(rows)


def dyck_accuracy_table(
    runs: Mapping[tuple[str, int], DyckRun], longest: np.ndarray, edges: np.ndarray, n_boot: int = N_BOOT
) -> pd.DataFrame:
    """Accuracy by longest distance of every run (:func:`prismlib.lstm.iclr.accuracy_by_distance`: an
    interval over the bin's strings), one row per run and bin, with ``model`` and ``seed``."""
    frames = [
        accuracy_by_distance(r.test_correct, longest, edges, n_boot).assign(model=kind, seed=seed) for (kind, seed), r in runs.items()
    ]
    return pd.concat(frames, ignore_index=True)


def seed_accuracy(table: pd.DataFrame) -> pd.DataFrame:
    """Per model and bin of :func:`dyck_accuracy_table`: the mean accuracy over seeds and Student's
    interval over them (:func:`prismlib.stats.mean_interval`; NaN with one seed or no spread, as the
    paper's figure draws the mean +/- one SD of 20 seeds), ``seeds`` and ``sequences`` per seed."""
    rows = []
    for (model, low, high), g in table.groupby(["model", "low_edge", "high_edge"], sort=False):
        acc = g.accuracy.dropna().to_numpy()
        lo = hi = np.nan
        if len(acc) >= 2 and np.ptp(acc) > 0:
            iv = mean_interval(acc.tolist())
            lo, hi = iv.low, iv.high
        rows.append(
            {
                "model": model,
                "low_edge": low,
                "high_edge": high,
                "sequences": int(g.sequences.iloc[0]),
                "seeds": len(acc),
                "accuracy": float(acc.mean()) if len(acc) else np.nan,
                "low": lo,
                "high": hi,
                "sd": float(acc.std(ddof=1)) if len(acc) > 1 else np.nan,
            }
        )
    return pd.DataFrame(rows)


def long_range_difference(
    correct_a: np.ndarray, correct_b: np.ndarray, longest: np.ndarray, d_min: int, n_boot: int = N_BOOT, seed: int = 0
) -> Interval:
    """Seed-mean accuracy of ``a`` minus ``b`` on the test strings whose longest distance is at least
    ``d_min``, paired bootstrap over those strings (each string's correctness averaged over a model's
    seeds). ``correct_a``, ``correct_b``: ``(seeds, n)`` or ``(n,)`` bool; ``longest``: ``(n,)``."""
    keep = np.asarray(longest) >= d_min
    a = np.atleast_2d(correct_a).astype(np.float64).mean(axis=0)[keep]
    b = np.atleast_2d(correct_b).astype(np.float64).mean(axis=0)[keep]

    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.mean(axis) - y.mean(axis)

    if keep.sum() >= 2 and np.array_equal(a, b):  # no difference on any string: no spread to resample
        return Interval(0.0, 0.0, 0.0, int(keep.sum()))
    return paired_bootstrap(stat, (a, b), n_boot=n_boot, seed=seed)


def long_range_test(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    longest: np.ndarray,
    d_min: int,
    margin: float,
    label: str,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Test:
    """``a`` beats ``b`` by more than ``margin`` in accuracy on the strings with longest distance
    >= ``d_min`` (``(seeds, n)`` bool each): a superiority test of :func:`long_range_difference`
    on one interval with both sources of variance, the strings' bootstrap widened by the spread
    of each seed's own accuracy on those strings (:func:`prismlib.claims.with_seeds`, the models
    trained independently); the strings' bootstrap alone when a model has fewer than two seeds."""
    test = Test.superiority(long_range_difference(correct_a, correct_b, longest, d_min, n_boot, seed), margin, label=label)
    keep = np.asarray(longest) >= d_min
    pa, pb = (np.atleast_2d(c)[:, keep].astype(np.float64).mean(axis=1) for c in (correct_a, correct_b))
    if len(pa) < 2 or len(pb) < 2:
        return test
    return with_seeds(test, pa.tolist(), pb.tolist())


def dyck_learned_gate(seed_table: pd.DataFrame) -> Gate:
    """Passed when every model's seed-mean accuracy on the first (shortest-distance) bin of
    :func:`seed_accuracy` is at least :data:`LEARNED_SHORT`."""
    first = seed_table[seed_table.low_edge == seed_table.low_edge.min()]
    short = dict(zip(first.model, first.accuracy))
    low = {m: a for m, a in short.items() if not a >= LEARNED_SHORT}
    detail = ", ".join(f"{m} {a:.2f}" for m, a in short.items())
    name = f"learned: every model gets at least {LEARNED_SHORT:.0%} of the shortest-distance strings right (seed mean)"
    return Gate(
        name, not low, ("" if not low else "not learned: ") + f"first bin {first.low_edge.iloc[0]:g}-{first.high_edge.iloc[0]:g}: {detail}"
    )


def memory_floor(split: DyckSplit, horizon: int, n_types: int = N_TYPES) -> np.ndarray:
    """``(n,)`` the expected share of each string a reader with no memory past ``horizon`` gets
    entirely right: the floor of the long-range claim.

    The reader is right at every position whose innermost open bracket was opened fewer than
    ``horizon`` symbols before the symbol to come (a closer there would be at distance <
    ``horizon``: :func:`~prismlib.lstm.iclr.dyck.bracket_distances`); for an older innermost
    opener it guesses the type, once per opener (a fair guess among ``n_types``, kept while that
    opener stays innermost), so a string is right with probability ``n_types ** -k``, ``k`` the
    openers it had to guess. On strings whose longest distance is at least ``horizon`` a model
    below this floor shows no memory at those distances."""
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    out = np.empty(len(split.tokens))
    for i, (ids, real) in enumerate(zip(split.tokens, split.mask)):
        stack: list[int] = []
        guessed: set[int] = set()
        for t, tok in enumerate(ids[real].tolist()):
            if tok % 2 == 0:
                stack.append(t)
            else:
                stack.pop()
            if stack and t + 1 - stack[-1] >= horizon:
                guessed.add(stack[-1])
        out[i] = float(n_types) ** -len(guessed)
    return out


def long_range_floor_gate(
    correct_a: np.ndarray, correct_b: np.ndarray, longest: np.ndarray, d_min: int, floor: np.ndarray, margin: float = DYCK_MARGIN
) -> Gate:
    """Passed when at least one model's seed-mean accuracy on the strings with longest distance >=
    ``d_min`` is above their :func:`memory_floor` (with ``horizon = d_min``) by more than
    ``margin``: where both models sit at or below what a reader with no memory at those distances
    gets, the long strings test no long-range memory, and the claim is not testable there (a model
    at the floor while the other leaves it is what the claim predicts, so one model above suffices)."""
    keep = np.asarray(longest) >= d_min
    if not keep.any():
        return Gate(
            "long-range memory: a model leaves the memory floor on the long strings", False, f"no string with longest distance >= {d_min}"
        )
    acc = {name: float(np.atleast_2d(c)[:, keep].mean()) for name, c in (("a", correct_a), ("b", correct_b))}
    bar = float(np.asarray(floor)[keep].mean())
    best = max(acc.values())
    return Gate(
        f"long-range memory: a model beats, by more than {margin:.0%}, a reader with no memory {d_min} or more symbols back "
        f"(right on the long strings with probability {bar:.2f}; it guesses the type of every older open bracket)",
        best > bar + margin,
        f"accuracy on the {int(keep.sum())} long strings {acc['a']:.2f} and {acc['b']:.2f} (seed means) against the floor {bar:.2f}"
        + ("" if best > bar + margin else ": both models at the floor, the long strings test no long-range memory"),
    )
