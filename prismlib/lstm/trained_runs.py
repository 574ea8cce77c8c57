"""A finished LSTM job as the notebooks read it: a :class:`TrainedRun`.

A finished job is read from its local checkpoint (``.cache/jobs/<key>/done.pt``) where there
is one, else from its committed run record (:mod:`prismlib.records`, unless
``$PRISMLIB_FRESH`` is set): both give the same :class:`TrainedRun`, built by one function
from what a record keeps (:mod:`prismlib.lstm.outcome`: the NLL per 100-token chunk, the
history, the biases), so the analyses have one code path and a record gives the numbers of
the local run it was written from. Only the model itself differs: a record keeps weights
for a few models (:data:`~prismlib.lstm.outcome.WEIGHT_MODELS`), in ``float16``.
:func:`trained` returns the :class:`TrainedRun` of each spec, training the missing jobs
(:mod:`prismlib.lstm.job`) first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch import Tensor

from prismlib.artifacts import load_checkpoint
from prismlib.data.ptb import load_ptb_corpus
from prismlib.devices import resolve_device, torch_threads
from prismlib.jobcache import job_dir, run_missing
from prismlib.lstm.chunks import ChunkNLL
from prismlib.lstm.convergence import LearningCurve
from prismlib.lstm.evaluation import forget_gate_means
from prismlib.lstm.job import Job, RunSpec, jobs_for, untrained_model
from prismlib.lstm.model import LSTMLM
from prismlib.lstm.outcome import (
    WEIGHT_MODELS,
    WEIGHT_SEEDS,
    WEIGHTS,
    biases_from_summary,
    biases_summary,
    final_test_chunks,
    history_from_summary,
    history_summary,
    load_arrays,
    load_weights,
    outcome_arrays,
    snapshot_chunks,
    stored_forget_means,
)
from prismlib.lstm.training import TrainHistory
from prismlib.profiles import LSTMSettings
from prismlib.records import read_record


class NoWeights(FileNotFoundError):
    """An analysis asked for the model of a run read from a committed record that keeps no weights."""


@dataclass(eq=False)
class TrainedRun:
    """A trained model as the notebooks read it, from its local checkpoint or its committed
    record alike (:func:`load_run`, :func:`run_from_outcome`).

    Attributes:
        spec: what was trained.
        history: the training record (:class:`~prismlib.lstm.TrainHistory` as a record keeps
            it, :func:`~prismlib.lstm.outcome.history_from_summary`: curves, learning-rate path,
            decays, why it stopped; no per-token snapshots).
        test_chunks: the NLL on PTB test per 100-token chunk, per frequency bin and per
            70-token block (:class:`~prismlib.lstm.ChunkNLL`): what every comparison reads.
        biases_init, biases_final: effective forget-gate biases per layer, ``(hidden_l,)``.
        arrays: the record's arrays (:func:`~prismlib.lstm.outcome.outcome_arrays`; for a local
            checkpoint computed from it when loaded).
        source: ``"checkpoint"`` or ``"record"``; ``folder``: where it was read from.
        provenance: the record's provenance (commit, date, ...); ``None`` for a checkpoint.
    """

    spec: RunSpec
    history: TrainHistory
    test_chunks: ChunkNLL
    biases_init: list[Tensor]
    biases_final: list[Tensor]
    arrays: dict[str, np.ndarray]
    source: str
    folder: Path
    provenance: dict[str, Any] | None = None
    load_model: Callable[[], LSTMLM] | None = field(default=None, repr=False)
    """Builds the model (``None``: the record keeps no weights); :attr:`model` calls it once."""
    no_model: str = ""
    """Why there is no model (the :class:`NoWeights` message)."""
    measure_forget: Callable[[LSTMLM], list[np.ndarray]] | None = field(default=None, repr=False)
    """Measures the mean forget gates of the model where the arrays keep none."""
    _model: LSTMLM | None = field(default=None, init=False, repr=False)

    @property
    def model(self) -> LSTMLM:
        """The model (best validation weights), in eval mode; read from the record's ``float16``
        weights for a record.

        Raises:
            NoWeights: the run comes from a record that keeps no weights.
        """
        if self._model is None:
            if self.load_model is None:
                raise NoWeights(self.no_model or f"{self.spec.label} seed {self.spec.seed}: no model to load")
            self._model = self.load_model()
        return self._model

    @property
    def has_model(self) -> bool:
        """Whether :attr:`model` can be read (a checkpoint, or a record that keeps its weights)."""
        return self._model is not None or self.load_model is not None

    @property
    def test_ppl(self) -> float:
        """Test perplexity."""
        return self.test_chunks.perplexity()

    @property
    def val_ppl(self) -> float:
        """Best validation perplexity."""
        return min(self.history.val_ppl)

    @property
    def curve(self) -> LearningCurve | None:
        """The learning curve (:meth:`TrainHistory.learning_curve`; ``None`` for runs trained
        before curves were kept)."""
        return self.history.learning_curve()

    def valid_chunks_at(self, which: str) -> ChunkNLL | None:
        """Validation NLL per chunk of an annealed run's best model at its last (``"end"``) or
        second-to-last (``"previous"``) post-decay checkpoint (``None`` when the run has fewer
        than two: not annealed, or stopped before a decay). No per-bin sums: a record keeps none."""
        if which not in ("end", "previous"):
            raise ValueError(f"which must be 'end' or 'previous', got {which!r}")
        snaps = snapshot_chunks(self.arrays, "valid_round")
        rounds = sorted(snaps)
        if len(rounds) < 2:
            return None
        return snaps[rounds[-1] if which == "end" else rounds[-2]]

    def test_chunks_at_half(self) -> tuple[int, ChunkNLL] | None:
        """``(tokens, chunk sums)``: the stored test NLL snapshot nearest to half the training
        tokens on a log scale (as :meth:`TrainHistory.snapshot_near`; ``None`` when none was stored)."""
        snaps = snapshot_chunks(self.arrays, "test_tokens")
        if not snaps:
            return None
        half = max(self.history.tokens / 2, 1)
        t = min(snaps, key=lambda k: abs(math.log(k / half)))
        return t, snaps[t]

    def forget_means(self) -> list[np.ndarray]:
        """Each layer's mean forget-gate activation per unit on the scored PTB test tokens,
        ``(hidden_l,)`` (:func:`~prismlib.lstm.forget_gate_means`; stored in ``float32`` by a
        record, measured on the model and rounded alike where the arrays keep none)."""
        stored = stored_forget_means(self.arrays)
        if stored is None:
            if self.measure_forget is None:
                raise ValueError(f"{self.spec.label} seed {self.spec.seed}: no forget-gate means stored and no way to measure them")
            stored = [np.asarray(m, dtype=np.float32).astype(np.float64) for m in self.measure_forget(self.model)]
            self.arrays |= {f"forget_means_layer{layer}": m.astype(np.float32) for layer, m in enumerate(stored)}
        return stored


def _test_ids(corpus: Any, s: LSTMSettings) -> np.ndarray:
    return corpus.test if s.test_tokens is None else corpus.test[: s.test_tokens]


def run_from_outcome(
    job: Job,
    arrays: dict[str, np.ndarray],
    summary: Mapping[str, Any],
    corpus: Any,
    source: str,
    folder: Path,
    model: LSTMLM | Callable[[], LSTMLM] | None,
) -> TrainedRun:
    """The :class:`TrainedRun` of ``job`` from what its record keeps: ``arrays``
    (:func:`~prismlib.lstm.outcome.outcome_arrays`) and ``summary`` (``record.json``'s
    ``history``, ``biases_init``, ``biases_final``, ``provenance``). The one constructor of both
    paths (:func:`load_run`).

    Args:
        model: the loaded model, a function that loads it, or ``None`` (the record keeps no
            weights: :attr:`TrainedRun.model` raises :class:`NoWeights`, naming why).
    """
    s = job.settings
    test = _test_ids(corpus, s)
    no_model = ""
    if model is None:
        kept = ", ".join(f"{v}{'' if T is None else f' T={T:g}'}{' (fixed)' if fixed else ''}" for v, T, fixed in WEIGHT_MODELS)
        no_model = (
            f"{job.label} ({job.key}) was read from its committed record {folder}, which keeps no weights (records keep "
            f"them only for {kept} at seeds {', '.join(map(str, WEIGHT_SEEDS))}: prismlib.lstm.outcome.WEIGHT_MODELS), and "
            "this analysis runs the model itself; retrain it here with FRESH=1 (make reproduce FRESH=1 retrains every job)"
        )

    def measure(m: LSTMLM) -> list[np.ndarray]:
        with torch_threads(s.threads):
            return forget_gate_means(m, test, s.eval_batch, s.bptt)

    run = TrainedRun(
        job.spec,
        history_from_summary(summary["history"]),
        final_test_chunks(arrays, len(test)),
        biases_from_summary(summary["biases_init"]),
        biases_from_summary(summary["biases_final"]),
        arrays,
        source,
        folder,
        summary.get("provenance"),
        load_model=None if model is None or isinstance(model, LSTMLM) else model,
        no_model=no_model,
        measure_forget=measure,
    )
    if isinstance(model, LSTMLM):
        run._model = model
    return run


def checkpoint_outcome(done: Mapping[str, Any], corpus: Any, s: LSTMSettings) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """What a record of this finished checkpoint (``done.pt``'s contents) would keep: the arrays and
    the summary's history and biases, computed as :meth:`~prismlib.lstm.job.Job.write_record`
    computes them (the forget-gate means aside: measured on demand, :meth:`TrainedRun.forget_means`)."""
    hist = done["history"]
    arrays = outcome_arrays(
        done["test_nll"],
        _test_ids(corpus, s),
        np.bincount(corpus.train, minlength=len(corpus.vocab)),
        hist.val_snapshots or {},
        hist.snapshots or {},
        [],
    )
    summary = {
        "history": history_summary(hist),
        "biases_init": biases_summary(done["biases_init"]),
        "biases_final": biases_summary(done["biases_final"]),
    }
    return arrays, summary


def load_run(job: Job, cache: Path | None = None, device: str = "auto", corpus: Any = None) -> TrainedRun:
    """The finished ``job`` as a :class:`TrainedRun`: from its local checkpoint where there is one,
    else from its committed record (:meth:`~prismlib.lstm.job.Job.committed`: none when
    ``$PRISMLIB_FRESH`` is set), both through :func:`run_from_outcome`. A record's model is read
    (``float16`` weights, eval mode) only when an analysis asks for it."""
    path = job_dir(job, cache) / "done.pt"
    corpus = corpus if corpus is not None else load_ptb_corpus()
    dev = resolve_device(device)
    if path.exists():
        done = load_checkpoint(path, map_location=dev)
        model = untrained_model(job.spec, job.settings, corpus, device)
        model.load_state_dict(done["model"])
        arrays, summary = checkpoint_outcome(done, corpus, job.settings)
        return run_from_outcome(job, arrays, summary, corpus, "checkpoint", path.parent, model)
    folder = job.committed()
    if folder is None:
        raise FileNotFoundError(f"job {job.label} ({job.key}) has not been trained; run it with prismlib.jobcache.run_missing")
    record = read_record(folder, job.describe())
    loader = None
    if (folder / WEIGHTS).exists():

        def loader() -> LSTMLM:
            return load_weights(untrained_model(job.spec, job.settings, corpus), folder).to(dev).eval()

    return run_from_outcome(job, load_arrays(folder), record, corpus, "record", folder, loader)


def sources_line(runs: Mapping[Any, TrainedRun]) -> str:
    """One line saying where ``runs`` were read from: how many from committed records, trained at
    which commit(s) on which date(s), and how many from local checkpoints."""
    records = [r for r in runs.values() if r.source == "record"]
    local = len(runs) - len(records)
    parts = []
    if records:
        by: dict[tuple[str, str], int] = {}
        for r in records:
            prov = r.provenance or {}
            when = (str(prov.get("commit") or "?")[:10], str(prov.get("date") or "?")[:10])
            by[when] = by.get(when, 0) + 1
        order = sorted(by.items(), key=lambda x: x[0][1])
        trained_at = "; ".join(f"trained at commit {c} on {d}, {n} job{'s' * (n != 1)}" for (c, d), n in order)
        parts.append(f"{len(records)} from committed run records ({trained_at})")
    if local:
        parts.append(f"{local} from local checkpoints")
    return f"{len(runs)} trained models: " + ", ".join(parts) if parts else "no trained models"


def trained(
    specs: Sequence[RunSpec],
    settings: LSTMSettings,
    profile_name: str,
    executor: str | None = None,
    workers: int | None = None,
    device: str = "auto",
    cache: Path | None = None,
    corpus: Any = None,
) -> dict[RunSpec, TrainedRun]:
    """The trained models of ``specs``: jobs with neither a local checkpoint nor a usable committed
    record run first (:func:`run_missing`; with ``$PRISMLIB_FRESH`` set records do not count), then
    each is read from its checkpoint or its record (:func:`load_run`)."""
    jobs = jobs_for(specs, settings, profile_name)
    run_missing(jobs, executor, workers, cache, device, data=corpus)
    corpus = corpus if corpus is not None else load_ptb_corpus()
    return {job.spec: load_run(job, cache, device, corpus) for job in jobs}
