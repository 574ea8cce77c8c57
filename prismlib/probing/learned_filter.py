"""A learnable spectral probe: a learned per-frequency filter in front of the paper's softmax probe.

The paper probes five fixed brick-wall bands (:mod:`prismlib.probing.features`).  Here the filter
is learned instead (cf. "Spectral Probing", Müller-Eberstein, van der Goot & Plank,
EMNLP 2022): :class:`SpectralGate` multiplies each DCT coefficient of a window's
hidden states, along the tokens and over the window's real length, by a gate in
(0, 1); a linear softmax probe reads the filtered state of each sampled position; both
are trained together with the paper's recipe (:func:`prismlib.probing.fit_with_halving`:
Adam, at most 30 epochs, learning rate halved when the validation loss does not
decrease, early stopping with patience 1, best epoch restored, ``1/|N|`` weights), the
token probe's :class:`~prismlib.probing.ProbeRecipe` (its cap, patience and rate) with the
gate's own settings beside it (:class:`GateRecipe`).
The learned gate is the task's *spectral profile*: which timescales the probe needs
(read by :mod:`prismlib.probing.spectral_profiles`).

Frequencies.  Index ``k`` of an ``n``-point DCT-II oscillates at ``k / (2n)`` cycles per
token (period ``2n / k`` tokens); the gate places it at the *relative frequency*
``u = k / n`` (the fraction of the Nyquist frequency, 1/2 cycle per token), so one
grid point means the same period in every window whatever its length.  The gate has
``G`` parameters on the grid ``u_j = j / G`` (``j = 0 .. G-1``); for a window of
length ``n`` they are interpolated linearly to ``u = k / n`` (held at the last value
above ``(G-1)/G``) and passed through a sigmoid.  With ``G = n`` (default 512, the
paper's window) each DCT index of a full window has its own parameter, as in Spectral
Probing, and the paper's narrow LOW/MID-LOW bands are resolved.

Initialisation.  Every parameter starts at ``logit(init)``, ``init = 0.5`` by default:
a gate of 0.5 at every frequency turns the window into ``0.5 h``, the unfiltered
features up to a factor the linear probe absorbs, so training starts from the ORIG
probe's family with no band favoured, at the sigmoid's steepest point (a gate near 1
would start in the sigmoid's flat tail and move slowly).  The gate is identifiable
only up to that factor's trade with the probe's weights (bounded by the sigmoid):
read the profile's *shape*, low versus high.

Control.  The *all-pass gate* (``all_pass=True``, condition :data:`ALL_PASS`) is the same
pipeline with the filter removed: a gate fixed at 1 (no parameters), trained with the
same resampled windows, window batches, seeds, learning rate and stopping rule.  A
learned gate's gain over the fixed filters is credited to the filter only against it.

Notebook 09's matched smooth and Haar bands and the energy twins are fixed filters, computed
from the same states: :mod:`prismlib.probing.matched_features`.

Data.  The gate needs each window's full hidden states, not just the sampled rows:
:class:`prismlib.probing.States` (:mod:`prismlib.probing.states`, cached once per window
and shared with the fixed filters' features), whose rows pair with the brick-wall
probes' (:func:`combine_runs`, :func:`prismlib.probing.compare_accuracy`,
:func:`prismlib.probing.summarise`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from prismlib.jobcache import run_pool
from prismlib.probing.probes import (
    FitState,
    ProbeResult,
    ProbeRuns,
    check_splits,
    collect_runs,
    fit_with_halving,
    majority_class,
    weighted_accuracy,
    weighted_loss,
)
from prismlib.probing.recipe import ProbeRecipe
from prismlib.probing.states import States
from prismlib.spectral.bands import allocate_bands
from prismlib.spectral.transform import dct, dct_matrix, idct

__all__ = [
    "ALL_PASS",
    "GATED",
    "GateRecipe",
    "GatedProbe",
    "GatedProbeResult",
    "GatedRuns",
    "SpectralGate",
    "combine_runs",
    "gate_and_control_runs",
    "gated_probe_runs",
    "matched_windows",
    "train_gated_probe",
]

GATED = "GATED"
"""Default condition name of the gated probe in :class:`GatedRuns` (next to ORIG, LOW, ...)."""

ALL_PASS = "ALL-PASS"
"""Condition name of the learned gate's control: the same pipeline with the gate fixed at 1."""

# --------------------------------------------------------------------------- gate


class SpectralGate(nn.Module):
    """A learned per-frequency gate applied along the tokens of each sequence.

    ``filtered = idct(gate(n) * dct(h))`` with orthonormal transforms over each
    sequence's real length ``n``; ``gate(n)[k] = sigmoid(interp(logits)(k / n))``
    (module docstring: grid, relative frequency, initialisation).

    Args:
        grid_size: ``G``, parameters on the grid ``j / G``, ``j = 0 .. G-1``.
        init: the gate's initial value at every frequency, in (0, 1); with ``learn=False``
            the gate's fixed value, in (0, 1] (1: the all-pass gate, which leaves every
            window as it is).
        learn: whether the gate is trained (``False``: no parameters, the gate stays at ``init``).

    Attributes:
        logits: ``(G,)`` parameters (a buffer when the gate is fixed).
        grid: ``(G,)`` buffer, the relative frequency of each parameter.
    """

    grid: Tensor  # the buffer registered by __init__

    def __init__(self, grid_size: int = 512, init: float = 0.5, learn: bool = True) -> None:
        super().__init__()
        if grid_size < 1:
            raise ValueError(f"grid_size must be at least 1, got {grid_size}")
        if not (0 < init < 1 or (init == 1 and not learn)):
            raise ValueError(f"init is a gate value and must lie in (0, 1) (1 only for a fixed gate), got {init}")
        self.learn, self.init = learn, float(init)
        logits = torch.full((grid_size,), math.log(init / (1 - init)) if init < 1 else math.inf)
        if learn:
            self.logits = nn.Parameter(logits)
        else:
            self.register_buffer("logits", logits)
        self.register_buffer("grid", torch.arange(grid_size, dtype=torch.float32) / grid_size)

    @property
    def grid_size(self) -> int:
        return len(self.logits)

    @property
    def all_pass(self) -> bool:
        """Fixed at 1: the filter is the identity."""
        return not self.learn and self.init == 1

    def profile(self) -> Tensor:
        """``(G,)`` the gate at the grid points (detached): the spectral profile."""
        return torch.sigmoid(self.logits.detach())

    def gate(self, n: int) -> Tensor:
        """``(n,)`` gate of the DCT indices ``0 .. n-1`` of an ``n``-point sequence (differentiable)."""
        if n < 1:
            raise ValueError(f"a sequence needs at least one token, got length {n}")
        if not self.learn:
            return torch.full((n,), self.init, device=self.logits.device)
        g = self.grid_size
        pos = torch.arange(n, dtype=torch.float32, device=self.logits.device) * (g / n)
        lo = pos.floor().long().clamp(max=g - 1)
        hi = (lo + 1).clamp(max=g - 1)
        frac = (pos - lo).clamp(0, 1)
        return torch.sigmoid(self.logits[lo] * (1 - frac) + self.logits[hi] * frac)

    def band_means(self, n: int = 512) -> pd.Series:
        """Mean gate over the DCT indices of each of the paper's five bands at length ``n``."""
        g = self.gate(n).detach().cpu()
        bands = allocate_bands(n)
        return pd.Series([float(g[b.lo : b.hi].mean()) for b in bands], index=pd.Index([b.name for b in bands], name="band"))

    def forward(self, h: Tensor, lengths: Sequence[int] | Tensor | None = None) -> Tensor:
        """Filter a padded batch, each row over its own real length.

        Args:
            h: ``(batch, length, hidden)`` (or one ``(length, hidden)`` sequence).
            lengths: ``(batch,)`` real lengths (default: all ``length``).

        Returns:
            The filtered states, same shape and dtype; padding positions are zero and
            never influence the real ones.
        """
        if h.ndim == 2:
            return self.forward(h[None], None if lengths is None else lengths)[0]
        if h.ndim != 3:
            raise ValueError(f"expected (batch, length, hidden) states, got shape {tuple(h.shape)}")
        batch, length, _ = h.shape
        lengths = [length] * batch if lengths is None else [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
        if len(lengths) != batch or not all(1 <= v <= length for v in lengths):
            raise ValueError(f"need {batch} lengths in 1..{length}, got {lengths[:8]}")
        out = h.new_zeros(h.shape)
        for n in sorted(set(lengths)):
            rows = [i for i, v in enumerate(lengths) if v == n]
            x = h[rows, :n]
            out[rows, :n] = idct(self.gate(n).to(h.dtype)[:, None] * dct(x, dim=-2), dim=-2)
        return out

    def filter_rows(self, hidden: Sequence[Tensor], picks: Sequence[Tensor]) -> Tensor:
        """The filtered states of chosen positions only: ``idct(gate * dct(h_i))[picks_i]``.

        Computed as ``(C[:, p]^T diag(g) C) h`` (``C`` the orthonormal DCT matrix), which
        costs ``k n (n + hidden)`` instead of two full transforms when ``k`` positions of
        an ``n``-token window are needed.

        Args:
            hidden: per window ``(n_i, hidden)`` states (any float dtype; computed in float32).
            picks: per window ``(k_i,)`` int64 positions.

        Returns:
            ``(sum k_i, hidden)`` float32, window by window.
        """
        device = self.logits.device
        if self.all_pass:  # the identity: the chosen rows as they are
            rows = [h.to(device=device, dtype=torch.float32)[p.to(device)] for h, p in zip(hidden, picks)]
            return torch.cat(rows) if rows else torch.zeros(0, hidden[0].shape[1] if hidden else 0, device=device)
        mats: dict[int, tuple[Tensor, Tensor]] = {}
        out = []
        for h, p in zip(hidden, picks):
            n = h.shape[0]
            if n not in mats:
                c = dct_matrix(n, dtype=torch.float32, device=device)
                mats[n] = (c, self.gate(n)[:, None] * c)
            c, gc = mats[n]
            h = h.to(device=device, dtype=torch.float32)
            back = c[:, p.to(device)].T
            out.append((back @ gc) @ h if len(p) < h.shape[1] else back @ (gc @ h))
        if not out:
            return torch.zeros(0, hidden[0].shape[1] if hidden else 0, device=device)
        return torch.cat(out)


class GatedProbe(nn.Module):
    """:class:`SpectralGate` followed by a linear softmax probe.

    Args:
        hidden_size, n_classes: the probe's input and output sizes.
        grid_size, init, learn: see :class:`SpectralGate`.
    """

    def __init__(self, hidden_size: int, n_classes: int, grid_size: int = 512, init: float = 0.5, learn: bool = True) -> None:
        super().__init__()
        self.gate = SpectralGate(grid_size, init, learn)
        self.probe = nn.Linear(hidden_size, n_classes)

    def forward(self, hidden: Sequence[Tensor], picks: Sequence[Tensor]) -> Tensor:
        """``(sum k_i, n_classes)`` logits of the chosen positions of each window."""
        return self.probe(self.gate.filter_rows(hidden, picks))


# --------------------------------------------------------------------------- training


@dataclass(frozen=True)
class GateRecipe:
    """What the gated probe sets beside the :class:`~prismlib.probing.ProbeRecipe` it shares
    with the token probe (whose cap, patience and rate it reads).

    Attributes:
        gate_lr: Adam's learning rate for the gate's logits (``None``: the recipe's ``lr``).
            A step moves a logit by about the rate, so a few thousand steps are needed to
            move the gate far from 0.5 at 1e-3; with few windows raise it (e.g. 1e-2 to
            5e-2). Both rates are halved together by the schedule.
        batch_windows: windows per step (all their sampled rows; the loss is weighted by
            ``1/|N|`` over those rows, as the token batches of
            :func:`~prismlib.probing.train_probe`); :func:`matched_windows` gives as many
            steps per epoch as a token probe's ``batch_size``.
        grid_size, init: see :class:`SpectralGate`.
    """

    gate_lr: float | None = None
    batch_windows: int = 8
    grid_size: int = 512
    init: float = 0.5


def _raw_states_only(recipe: ProbeRecipe) -> None:
    """The gated probe reads the raw states: a recipe that standardises cannot be honoured."""
    if recipe.standardize:
        raise ValueError("the gated probe reads raw states; it cannot standardise them (give it a recipe with standardize=False)")


@dataclass
class GatedProbeResult(ProbeResult):
    """A :class:`~prismlib.probing.ProbeResult` plus the learned gate.

    Attributes:
        gate: ``(G,)`` the gate at the grid points of the best epoch (the spectral profile).
        grid: ``(G,)`` their relative frequencies ``j / G`` (``k / n`` of an ``n``-point DCT).
        band_means: the mean gate over each of the paper's bands at length 512.
    """

    gate: np.ndarray = field(default_factory=lambda: np.zeros(0))
    grid: np.ndarray = field(default_factory=lambda: np.zeros(0))
    band_means: pd.Series = field(default_factory=pd.Series)


def matched_windows(states: States, rows: int) -> int:
    """Windows per step of the gated probe whose sampled rows number ``rows`` on average,
    so that it takes about as many steps per epoch as a probe on ``rows`` rows per step
    (:func:`~prismlib.probing.train_probe`'s ``batch_size``).

    Returns:
        ``max(1, round(rows * W / R))`` for ``W`` windows with sampled rows holding ``R``
        rows in all.

    Raises:
        ValueError: ``rows < 1``, or no window has a sampled row.
    """
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    with_rows = sum(s.stop > s.start for s in states.row_slices())
    if not with_rows:
        raise ValueError("no window has a sampled row")
    return max(1, round(rows * with_rows / len(states)))


def _window_batches(states: States, order: Sequence[int], batch_windows: int) -> Iterator[tuple[list[Tensor], list[Tensor], Tensor]]:
    """``(hidden, picks, rows)`` for chunks of ``batch_windows`` windows in ``order`` (windows
    without sampled rows skipped); ``rows`` indexes the states' row arrays in logit order."""
    slices, picks = states.row_slices(), states.picks()
    order = [i for i in order if slices[i].stop > slices[i].start]
    for start in range(0, len(order), batch_windows):
        chunk = order[start : start + batch_windows]
        rows = torch.cat([torch.arange(slices[i].start, slices[i].stop) for i in chunk])
        yield [states.hidden[i] for i in chunk], [picks[i] for i in chunk], rows


@torch.no_grad()
def _evaluate_states(model: GatedProbe, states: States, batch_windows: int, device: torch.device) -> tuple[float, float, Tensor]:
    """Weighted loss, weighted accuracy and ``(rows,)`` predictions, in row order."""
    logits = torch.cat([model(h, p) for h, p, _ in _window_batches(states, range(len(states.hidden)), batch_windows)])
    y, w = states.labels.to(device), states.weights.float().to(device)
    return float(weighted_loss(logits, y, w)), weighted_accuracy(logits, y, w), logits.argmax(-1)


def train_gated_probe(
    train: States,
    val: States,
    test: States,
    n_classes: int,
    recipe: ProbeRecipe,
    *,
    seed: int,
    gate: GateRecipe | None = None,
    all_pass: bool = False,
    device: str | torch.device = "cpu",
    resume: FitState | None = None,
) -> GatedProbeResult:
    """Train a gate and a softmax probe jointly with the paper's recipe, and evaluate.

    Args:
        train, val, test: :class:`States` of one layer (same hidden size).
        n_classes: number of classes.
        recipe: the epoch cap, patience and the probe's learning rate
            (:class:`~prismlib.probing.ProbeRecipe`, as :func:`~prismlib.probing.train_probe`'s;
            its ``batch_size`` is the token probe's: this one steps over windows,
            ``gate.batch_windows``).
        seed: seeds the probe's initialisation (as :func:`~prismlib.probing.train_probe`)
            and the order of the windows.
        gate: the gate's rate, windows per step, grid and initial value (default
            :class:`GateRecipe`'s).
        all_pass: train the control instead: the gate fixed at 1 (the identity; ``init``
            and ``gate_lr`` unused), everything else as for the learned gate (the same
            windows, batches, seed, probe initialisation and learning rate).
        device: where to train.
        resume: continue this run from where a lower cap cut it off (as
            :func:`~prismlib.probing.train_probe`'s ``resume``).

    Returns:
        :class:`GatedProbeResult`; ``test_pred`` is aligned with ``test``'s rows.

    Raises:
        ValueError: the splits do not fit ``n_classes`` or differ in hidden size, or
            ``recipe`` standardises (the gate reads raw states).
    """
    _raw_states_only(recipe)
    gate = GateRecipe() if gate is None else gate
    check_splits({s: (x.labels, x.labels, x.weights) for s, x in {"train": train, "val": val, "test": test}.items()}, n_classes)
    if len({train.hidden_size, val.hidden_size, test.hidden_size}) != 1:
        raise ValueError(f"train, val and test have different hidden sizes ({train.hidden_size}, {val.hidden_size}, {test.hidden_size})")
    device = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    model = GatedProbe(train.hidden_size, n_classes, gate.grid_size, 1.0 if all_pass else gate.init, learn=not all_pass)
    bound = 1 / train.hidden_size**0.5
    with torch.no_grad():
        model.probe.weight.uniform_(-bound, bound, generator=gen)
        model.probe.bias.uniform_(-bound, bound, generator=gen)
    model.to(device)
    groups = [{"params": list(model.probe.parameters()), "lr": recipe.lr}]
    if not all_pass:
        groups.append({"params": list(model.gate.parameters()), "lr": recipe.lr if gate.gate_lr is None else gate.gate_lr})
    opt = torch.optim.Adam(groups)
    yt, wt = train.labels.to(device), train.weights.float().to(device)

    def epoch_batches():
        order = torch.randperm(len(train.hidden), generator=gen).tolist()
        for h, p, rows in _window_batches(train, order, gate.batch_windows):
            rows = rows.to(device)
            yield model(h, p), yt[rows], wt[rows]

    history, best_epoch, state = fit_with_halving(
        model,
        opt,
        epoch_batches,
        lambda: _evaluate_states(model, val, 64, device)[0],
        max_epochs=recipe.max_epochs,
        patience=recipe.patience,
        start=resume,
        generator=gen,
    )
    _, val_acc, _ = _evaluate_states(model, val, 64, device)
    test_loss, test_acc, pred = _evaluate_states(model, test, 64, device)
    return GatedProbeResult(
        test_acc,
        val_acc,
        test_loss,
        best_epoch,
        history,
        pred.cpu().numpy(),
        resume=state,
        gate=model.gate.profile().cpu().numpy(),
        grid=model.gate.grid.cpu().numpy(),
        band_means=model.gate.band_means(512),
    )


@dataclass
class GatedRuns(ProbeRuns):
    """:class:`~prismlib.probing.ProbeRuns` of the gated probe (one condition), plus the gates.

    Attributes:
        gates: ``(runs, G)`` the learned gate of every run at the grid points.
        grid: ``(G,)`` relative frequencies of the grid.
        band_means: one row per run: the mean gate per paper band at length 512.
    """

    gates: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    grid: np.ndarray = field(default_factory=lambda: np.zeros(0))
    band_means: pd.DataFrame = field(default_factory=pd.DataFrame)


def _gated_job(args: tuple) -> GatedProbeResult:
    """One gated probe training: ``(states, n_classes, recipe, gate, seed, resample, all_pass,
    device, resume)``; with ``resample`` the training windows are a bootstrap resample drawn
    from ``seed``."""
    states, n_classes, recipe, gate, seed, resample, all_pass, device, resume = args
    train = states["train"]
    if resample:
        train = train.resample(np.random.default_rng([seed, 1]).integers(0, len(train.hidden), len(train.hidden)))
    return train_gated_probe(
        train, states["val"], states["test"], n_classes, recipe, seed=seed, gate=gate, all_pass=all_pass, device=device, resume=resume
    )


def gated_probe_runs(
    states: dict[str, States],
    n_classes: int,
    runs: int,
    seed: int,
    recipe: ProbeRecipe,
    *,
    gate: GateRecipe | None = None,
    condition: str = GATED,
    all_pass: bool = False,
    resample: bool = False,
    device: str | torch.device = "cpu",
    workers: int = 1,
    progress: bool = True,
    resume: ProbeRuns | None = None,
) -> GatedRuns:
    """Train the gated probe ``runs`` times (seeds ``seed, seed+1, ...``), like
    :func:`prismlib.probing.probe_conditions` for one condition.

    Args:
        states: split (``train``/``val``/``test``) -> :class:`States`.
        n_classes: number of classes.
        runs: probe runs (the paper: 3).
        seed: base seed.
        recipe, gate: how each run trains (:func:`train_gated_probe`'s).
        condition: the name of the runs in the table and in ``correct`` (e.g. :data:`ALL_PASS`
            for the control, with ``all_pass=True``).
        all_pass: train the all-pass control (:func:`train_gated_probe`'s ``all_pass``).
        resample: train each run on its own bootstrap resample of the training windows
            (drawn from the run's seed), so that the spread over runs of a learned
            quantity (the gate's profile) covers the sampling of the training data, not
            only the seed.
        device: where to train.
        workers: parallel processes, one torch thread each (1: in this process); the
            results do not depend on it.  Each worker receives its own copy of the states.
        progress: show a progress bar.
        resume: runs of ``condition`` trained before alike but with a lower cap
            (as :func:`~prismlib.probing.probe_conditions`' ``resume``).

    Returns:
        :class:`GatedRuns`; merge with the brick-wall probes' runs by :func:`combine_runs`.
    """
    _raw_states_only(recipe)
    starts = [None] * runs if resume is None else resume.resume_states(condition, runs)
    jobs = [(states, n_classes, recipe, gate, seed + run, resample, all_pass, device, starts[run]) for run in range(runs)]
    results = run_pool(_gated_job, jobs, workers, progress=progress, desc="gated probes", unit="probe")
    return _gated_runs(results, states, condition)


def _gated_runs(results: Sequence[GatedProbeResult], states: dict[str, States], condition: str) -> GatedRuns:
    """:class:`GatedRuns` of finished runs of one condition."""
    base = collect_runs({condition: results}, states["test"].labels, majority_class(states["train"]))
    return GatedRuns(
        base.table,
        base.correct,
        base.majority_class,
        base.resume,
        gates=np.stack([r.gate for r in results]),
        grid=results[0].grid,
        band_means=pd.DataFrame([r.band_means for r in results]).rename_axis("run").reset_index(drop=True),
    )


def gate_and_control_runs(
    states: dict[str, States],
    n_classes: int,
    runs: int,
    seed: int,
    recipe: ProbeRecipe,
    *,
    gate: GateRecipe | None = None,
    resample: bool = False,
    device: str | torch.device = "cpu",
    workers: int = 1,
    progress: bool = True,
    resume: ProbeRuns | None = None,
) -> tuple[GatedRuns, GatedRuns]:
    """The learned gate (:data:`GATED`) and its all-pass control (:data:`ALL_PASS`), ``runs``
    runs each, trained exactly alike: run ``r`` of both has seed ``seed + r``, the same
    bootstrap resample of the windows (with ``resample``), the same ``recipe`` and ``gate``
    (window batches, learning rates: :func:`train_gated_probe`'s); only the control's gate
    is fixed at 1.  Both sets of runs share one pool of ``workers`` processes.
    ``resume``: runs holding both conditions trained before alike with a lower cap,
    continued from where their cap cut them off (as in :func:`gated_probe_runs`).

    Returns:
        ``(learned, control)``, each what :func:`gated_probe_runs` returns for it.
    """
    _raw_states_only(recipe)
    starts = {c: [None] * runs if resume is None else resume.resume_states(c, runs) for c in (GATED, ALL_PASS)}
    jobs = [
        (states, n_classes, recipe, gate, seed + run, resample, control, device, starts[ALL_PASS if control else GATED][run])
        for control in (False, True)
        for run in range(runs)
    ]
    results = run_pool(_gated_job, jobs, workers, progress=progress, desc="gated probes and controls", unit="probe")
    return _gated_runs(results[:runs], states, GATED), _gated_runs(results[runs:], states, ALL_PASS)


def combine_runs(*runs: ProbeRuns) -> ProbeRuns:
    """One :class:`~prismlib.probing.ProbeRuns` holding the conditions of several (e.g.
    :func:`~prismlib.probing.probe_conditions`' bands and :func:`gated_probe_runs`), so that
    :func:`~prismlib.probing.compare_accuracy` and :func:`~prismlib.probing.summarise` pair them.

    Raises:
        ValueError: the runs were not made on the same test rows and training set (their
            test sizes or majority classes differ) or share a condition name.
    """
    if not runs:
        raise ValueError("nothing to combine")
    sizes = {c.shape[-1] for r in runs for c in r.correct.values()}
    if len(sizes) != 1 or len({r.majority_class for r in runs}) != 1:
        raise ValueError("these runs were made on different test rows or training sets; they cannot be paired")
    names = [c for r in runs for c in r.table["condition"].unique()]
    if len(names) != len(set(names)):
        raise ValueError(f"conditions appear in more than one of the runs: {sorted({c for c in names if names.count(c) > 1})}")
    correct, resume = {}, {}
    for r in runs:
        correct.update({c: v for c, v in r.correct.items() if c not in correct})
        resume.update(r.resume)
    return ProbeRuns(pd.concat([r.table for r in runs], ignore_index=True), correct, runs[0].majority_class, resume)
