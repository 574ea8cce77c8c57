"""Committed states of a pretraining: the run between sittings, kept small in the repository.

A pretraining spans sittings on different machines, so between them its state lives in git as a
run record (:mod:`prismlib.records`) written by :func:`write_state` into ``<records>/<key>/``:
``weights.pt``, the parameters in float16 (2 bytes each; the MLM decoder, tied to the word
embeddings, stored once; no AdamW moments, which would triple it), and ``record.json``, whose
description is the recipe with the corpus and tokenizer digests
(:func:`~prismlib.pretrain.recipe.recipe_description`, so the folder's name is the run's key)
and whose summary holds the step, tokens, seconds, curve, boundaries and whether the schedule is
done. Only committed code writes one (a record of uncommitted code could never be read).

:func:`read_state` gives the fp32 model (a new BERT with the stored weights), step, curve and
boundaries; a flipped byte, a truncated weights file, or another recipe, corpus or tokenizer than
the current one is refused with :class:`~prismlib.records.BadRecord` (one line naming the file and
the fix), never used. Resuming from a committed state is part of the recipe
(:func:`prismlib.pretrain.pretrain`'s ``start_from``: a fresh AdamW and a re-warm-up from a
boundary at its step).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch

from prismlib.jobcache import job_key
from prismlib.pretrain.model import half_weights, load_half_weights, new_bert
from prismlib.pretrain.recipe import PretrainConfig, recipe_description
from prismlib.records import BadRecord, provenance, read_record, write_record


class RunSoFar(Protocol):
    """What :func:`write_state` reads of a run: a :class:`~prismlib.pretrain.train.PretrainResult`
    (named by its fields, so that this module and the loop's need not import each other)."""

    model: Any
    key: str
    steps: int
    tokens: int
    seconds: float
    train_seconds: float
    curve: list[dict[str, float]]
    boundaries: list[int]
    stop: str


WEIGHTS = "weights.pt"
"""The record's float16 weights (:func:`~prismlib.pretrain.model.half_weights`)."""
RETIRED = "retired"
"""The summary field of a done state whose weights left the tree once a continuation of it was
done (:func:`retire_weights`): the continuation's key. Its curve and counts stay readable."""


@dataclass
class CommittedState:
    """A pretraining as its committed state keeps it (:func:`read_state`).

    Attributes:
        model: the ``BertForMaskedLM`` with the stored weights in float32, eval mode (``None``:
            read without its weights, :func:`read_state`'s ``weights=False``).
        step: optimizer steps done; tokens: training tokens seen.
        seconds: wall time of every sitting; train_seconds: of the steps alone.
        curve: the held-out checks so far (:data:`~prismlib.pretrain.train.CURVE_COLUMNS`).
        boundaries: the steps where the run resumed from a committed state.
        done: the schedule's ``total_steps`` are trained.
        record: the verified ``record.json``; folder: where it was read.
    """

    model: Any
    step: int
    tokens: int
    seconds: float
    train_seconds: float
    curve: list[dict[str, float]]
    boundaries: list[int]
    done: bool
    record: dict[str, Any]
    folder: Path


def _fix(path: Path) -> str:
    return (
        f"restore it with `git checkout -- {path}`, or start from a committed state of the current recipe and corpus "
        "(--start-from <records>/<key>, the key run.json names) or from none"
    )


def check_committed() -> dict[str, Any]:
    """The provenance of a state written now (:func:`prismlib.records.provenance`); raises
    ``ValueError`` when the code this process loaded is uncommitted (its record could never be read)."""
    prov = provenance(0.0, None)
    if prov["dirty"]:
        raise ValueError(
            f"the code is uncommitted (commit {prov['commit']}), and a committed state written by it could never be read: "
            "commit it, then run again (a finished local state is not trained again, its record is written)"
        )
    return prov


def write_state(
    folder: Path, config: PretrainConfig, result: RunSoFar, corpus_digest: str, tokenizer_digest: str, threads: int | None = None
) -> Path:
    """Write the committed state of ``result`` (a :func:`~prismlib.pretrain.pretrain` of ``config``
    on the corpus and tokenizer of these digests) into ``folder``, ``<records>/<key>/``, whole or
    not at all (:func:`prismlib.records.write_record`, replacing an older state of the run).

    Raises:
        ValueError: the code is uncommitted (:func:`check_committed`), the folder is not named by
            the run's key, or ``result`` is of another recipe or corpus.
    """
    description = recipe_description(config, corpus_digest, tokenizer_digest)
    key = job_key(description)
    if result.key != key:
        raise ValueError(f"the result is of run {result.key}, not of this recipe and corpus ({key}): write it with its own config")
    check_committed()
    weights = half_weights(result.model)
    summary = {
        "provenance": provenance(result.seconds, threads, stop=result.stop),
        "step": result.steps,
        "tokens": result.tokens,
        "seconds": round(result.seconds, 2),
        "train_seconds": round(result.train_seconds, 2),
        "curve": result.curve,
        "boundaries": result.boundaries,
        "done": config.total_steps is not None and result.steps >= config.total_steps,
    }
    return write_record(Path(folder), key, description, summary, {WEIGHTS: lambda path: torch.save(weights, path)})


def read_state(folder: Path, config: PretrainConfig, corpus_digest: str, tokenizer_digest: str, weights: bool = True) -> CommittedState:
    """The committed state in ``folder`` (:func:`write_state`) of ``config`` on the corpus and
    tokenizer of these digests; ``weights=False``: its counts and curve only (``model`` ``None``;
    a retired state, :func:`retire_weights`, reads so).

    Raises:
        prismlib.records.BadRecord: a file's bytes do not match the record's sums (flipped,
            truncated, missing), the record is of another recipe, corpus or tokenizer, was
            written from uncommitted code, or its weights are not this architecture's or were
            retired (when ``weights``).
    """
    folder = Path(folder)
    try:
        record = read_record(folder, recipe_description(config, corpus_digest, tokenizer_digest))
    except BadRecord as err:
        raise BadRecord(err.path, err.problem, _fix(err.path)) from None
    path = folder / WEIGHTS
    if not weights:
        return _state(None, record, folder)
    if record.get(RETIRED):
        raise BadRecord(
            path,
            f"retired from the tree once its continuation {record[RETIRED]} was done",
            f"restore the folder from the commit before the one that retired them (`git log -- {folder}` names it): "
            f"`git checkout <that commit>^ -- {folder}`",
        )
    try:
        stored = torch.load(path, map_location="cpu", weights_only=True)
        model = load_half_weights(new_bert(config.size, config.seed, config.attn), stored).eval()
    except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError, AttributeError, TypeError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise BadRecord(path, f"unreadable as this recipe's weights ({reason})", _fix(path)) from None
    return _state(model, record, folder)


def _state(model: Any, record: dict[str, Any], folder: Path) -> CommittedState:
    return CommittedState(
        model,
        int(record["step"]),
        int(record["tokens"]),
        float(record["seconds"]),
        float(record["train_seconds"]),
        list(record["curve"]),
        [int(b) for b in record["boundaries"]],
        bool(record["done"]),
        record,
        folder,
    )


def retire_weights(folder: Path, config: PretrainConfig, corpus_digest: str, tokenizer_digest: str, by: str) -> Path:
    """Rewrite the done committed state in ``folder`` without its weights, once ``by`` (the key
    of a done continuation of it) holds everything that is read of it: its curve, counts and
    provenance stay, verified as before, with :data:`RETIRED` naming ``by``; the weights stay
    in git's history. Keeps the committed records under their cap (tests/test_layout.py).

    Raises:
        prismlib.records.BadRecord: the state is not usable (:func:`read_state`).
        ValueError: the state is not done.
    """
    state = read_state(folder, config, corpus_digest, tokenizer_digest)
    if not state.done:
        raise ValueError(f"{folder}: a state whose schedule is not done keeps its weights (its installments go on from them)")
    summary = {k: v for k, v in state.record.items() if k not in ("format", "key", "description")}
    summary[RETIRED] = by
    return write_record(Path(folder), Path(folder).name, state.record["description"], summary, {})
