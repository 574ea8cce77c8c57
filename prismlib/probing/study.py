"""Notebook 02's procedures: probe a task with a profile's settings and tabulate the
measured choices (its claims: :mod:`prismlib.probing.fig4_claims`).

:func:`probe_task` trains and summarises every condition of one task (with the task's
:class:`~prismlib.probing.ProbeRecipe`: the MLM probe with its own epoch limit);
:func:`task_comparison` sets its runs against the test rows and their units, for the claims;
:func:`probe_study` does both for every task of one encoder and checks the epoch cap (the
capped conditions probed again with the cap doubled, :mod:`prismlib.probing.cap_check`), so
that notebook 02 runs the same study on MiniLM and on the BERT pretrained here;
:func:`choice_row` and :func:`choice_table` compare the band ranking under two values of a
choice the paper leaves open.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from prismlib.probing.cap_check import capped_conditions, capped_table, with_runs
from prismlib.probing.features import Features
from prismlib.probing.probes import MAJORITY, ProbeComparison, ProbeRuns, probe_conditions, ranking, summarise
from prismlib.probing.recipe import ProbeRecipe
from prismlib.probing.tasks import TaskData
from prismlib.profiles import ProbeSettings


def probe_task(
    feats: dict[str, Features],
    task: TaskData,
    settings: ProbeSettings,
    conditions: Sequence[str],
    *,
    seed: int,
    device: str | torch.device = "cpu",
    runs: int | None = None,
    recipe: ProbeRecipe | None = None,
) -> tuple[ProbeRuns, pd.DataFrame]:
    """Probe ``conditions`` of one task with ``settings`` (``runs`` and ``workers``) and the
    task's recipe.

    Args:
        feats: split -> :class:`~prismlib.probing.Features` of the task's windows.
        runs: probe runs per condition (default ``settings.runs``).
        recipe: how each probe trains (default ``ProbeRecipe.of(settings, task.name)``: the
            task's epoch cap, :meth:`~prismlib.profiles.ProbeSettings.epochs_for`, and the
            profile's patience, rows per step and standardisation); a measured choice or the
            cap check passes its own, e.g. ``ProbeRecipe.of(settings, task.name).with_cap(...)``.

    Returns:
        The runs and their :func:`~prismlib.probing.summarise` table, conditions named
        without their ``|placement`` suffix.
    """
    r = probe_conditions(
        feats,
        len(task.label_names),
        conditions,
        runs or settings.runs,
        seed,
        ProbeRecipe.of(settings, task.name) if recipe is None else recipe,
        workers=settings.workers,
        device=device,
    )
    table = summarise(r, *_test_rows(feats, task), seed=seed)
    return r, table.assign(condition=table["condition"].str.split("|").str[0])


def _test_rows(feats: Mapping[str, Features], task: TaskData) -> tuple[Features, np.ndarray]:
    """The test split's features and the independent unit of each of its rows."""
    test = feats["test"]
    return test, task.row_groups("test", test.window)


def task_comparison(runs: ProbeRuns, feats: Mapping[str, Features], task: TaskData, *, seed: int) -> ProbeComparison:
    """The paired comparisons of one task's probe runs over its test units: what its gates and
    claims read (:class:`~prismlib.probing.ProbeComparison`), the task named in its gates by
    its key (``"pos"``, an MLM bucket ``"mlm 1-500"``: :attr:`~prismlib.probing.TaskData.key`).

    Args:
        runs: the task's probe runs (e.g. :func:`probe_task`'s), every condition and the
            majority class.
        feats: split -> the task's :class:`~prismlib.probing.Features` the runs were scored on
            (its ``"test"`` split is read).
        task: the task, whose windows give each test row its independent unit (post,
            conversation, WSJ file or window: :meth:`~prismlib.probing.TaskData.row_groups`),
            the bootstrap's unit.
        seed: of every bootstrap.
    """
    test, groups = _test_rows(feats, task)
    return ProbeComparison(runs, test, groups, seed=seed, task=task.key)


@dataclass(frozen=True)
class ProbeStudy:
    """One encoder's probes of notebook 02's tasks (:func:`probe_study`), each task keyed as
    in the features it was given (``"pos"``, ``"mlm 1-500"``, ...).

    Attributes:
        recipes: task -> its probe recipe (the task's epoch cap: ``mlm_epochs`` for MLM).
        probes: task -> its probe runs at the cap.
        table: every task's :func:`~prismlib.probing.summarise` rows, a ``task`` column added.
        compare: task -> :func:`task_comparison` of the runs at the cap.
        doubled: task -> the same with every capped condition probed again at twice the cap
            (:func:`~prismlib.probing.with_runs`; tasks with none capped: as ``compare``).
        capped: :func:`~prismlib.probing.capped_table`, the capped conditions before and after.
        probe_seconds, cap_seconds: wall time of the probes at the cap and of the doubled cap.
    """

    recipes: dict[str, ProbeRecipe]
    probes: dict[str, ProbeRuns]
    table: pd.DataFrame
    compare: dict[str, ProbeComparison]
    doubled: dict[str, ProbeComparison]
    capped: pd.DataFrame
    probe_seconds: float
    cap_seconds: float


def probe_study(
    features: Mapping[str, dict[str, Features]],
    tasks: Mapping[str, TaskData],
    settings: ProbeSettings,
    conditions: Mapping[str, Sequence[str]],
    *,
    seed: int,
    device: str | torch.device = "cpu",
) -> ProbeStudy:
    """Notebook 02's probes for one encoder: every task of ``conditions`` probed
    (:func:`probe_task`, the task's recipe), compared over its test units, and every
    condition with a run at its task's epoch cap probed again with the cap doubled, the same
    seeds (the runs that stopped before the cap would repeat exactly, so they are kept).

    Args:
        features: task -> split -> its :class:`~prismlib.probing.Features` (one layer).
        tasks: task -> :class:`~prismlib.probing.TaskData` (an MLM bucket's key, e.g.
            ``"mlm 1-500"``, maps to the bucket).
        settings: the profile's probe settings (runs, workers, epoch caps).
        conditions: task -> the conditions to probe, in the order of the tables; its keys are
            the tasks studied.
        seed: of the probes and every bootstrap.
    """
    t0 = time.perf_counter()
    recipes = {name: ProbeRecipe.of(settings, tasks[name].name) for name in conditions}
    probes, tables = {}, []
    for name, conds in conditions.items():
        probes[name], table = probe_task(features[name], tasks[name], settings, conds, seed=seed, device=device, recipe=recipes[name])
        tables.append(table.assign(task=name))
    compare = {name: task_comparison(probes[name], features[name], tasks[name], seed=seed) for name in conditions}
    t1 = time.perf_counter()
    caps = {name: recipes[name].max_epochs for name in conditions}
    longer = dict(probes)
    for name in conditions:
        capped = capped_conditions(probes[name], caps[name])
        if capped:
            again, _ = probe_task(
                features[name], tasks[name], settings, capped, seed=seed, device=device, recipe=recipes[name].with_cap(2 * caps[name])
            )
            longer[name] = with_runs(probes[name], again)
    doubled = {
        name: task_comparison(longer[name], features[name], tasks[name], seed=seed) if longer[name] is not probes[name] else compare[name]
        for name in conditions
    }
    return ProbeStudy(
        recipes,
        probes,
        pd.concat(tables, ignore_index=True),
        compare,
        doubled,
        capped_table(probes, longer, caps),
        t1 - t0,
        time.perf_counter() - t1,
    )


def choice_row(choice: str, value: str, task: str, summary: pd.DataFrame, bands: Sequence[str]) -> dict:
    """One row of the choices table: the band ranking of ``summary`` under one value of a
    choice. Bands inside the majority class's interval are left out of the ranking that is
    compared (``ranking above majority``): their order is noise."""
    order = ranking(summary, bands)
    acc = dict(zip(summary["condition"], summary["accuracy"].astype(float)))
    ci_high = dict(zip(summary["condition"], summary["ci_high"].astype(float)))
    informative = [b for b in order if acc[b] > ci_high[MAJORITY]]
    return {
        "choice": choice,
        "value": value,
        "task": task,
        "ranking": " > ".join(order),
        "best band": order[0],
        "ranking above majority": " > ".join(informative) or "(none)",
        "ORIG": acc["ORIG"],
        "best band acc": acc[order[0]],
    }


def choice_table(rows: Sequence[dict]) -> pd.DataFrame:
    """The rows of :func:`choice_row` with, per choice and task, whether every value gives
    the ``same best band`` and the ``same ranking`` (above the majority class)."""
    options = pd.DataFrame(list(rows))
    groups = options.groupby(["choice", "task"])
    options["same best band"] = groups["best band"].transform(lambda b: b.nunique() == 1)
    options["same ranking"] = groups["ranking above majority"].transform(lambda b: b.nunique() == 1)
    return options


def choice_changes(options: pd.DataFrame) -> str:
    """Two sentences: which choices change a task's best band, and which its ranking."""
    changed = options.loc[~options["same best band"], ["choice", "task"]].drop_duplicates()
    reordered = options.loc[~options["same ranking"], ["choice", "task"]].drop_duplicates()
    first = (
        "No choice changes any task's best band."
        if changed.empty
        else "The best band depends on: " + "; ".join(f"{c} ({t})" for c, t in changed.itertuples(index=False)) + "."
    )
    listed = "; ".join(f"{c} ({t})" for c, t in reordered.itertuples(index=False)) or "none"
    return f"{first} Rankings of the bands above the majority class that change: {listed}."
