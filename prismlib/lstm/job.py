"""Work B's trained models as jobs.

:class:`RunSpec` says what to train (a timescale variant, initialised or fixed, and a
seed); :class:`Job` trains it on PTB with a profile's settings and is cached by
:mod:`prismlib.jobcache` under the hash of what changes the model; :func:`trained`
returns the :class:`TrainedRun` of each spec, training the missing ones first.

A finished job is read from its local checkpoint (``.cache/jobs/<key>/done.pt``) where there
is one, else from its committed run record (:mod:`prismlib.records`, unless
``$PRISMLIB_FRESH`` is set): both give the same :class:`TrainedRun`, built by one function
from what a record keeps (:mod:`prismlib.lstm.outcome`: the NLL per 100-token chunk, the
history, the biases), so the analyses have one code path and a record gives the numbers of
the local run it was written from. Only the model itself differs: a record keeps weights
for a few models (:data:`~prismlib.lstm.outcome.WEIGHT_MODELS`), in ``float16``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from prismlib.artifacts import load_checkpoint, remove, save_atomic
from prismlib.devices import resolve_device, torch_threads
from prismlib.jobcache import job_dir, job_key, run_missing, with_recipe
from prismlib.lstm.bigram import bigram_nll, fit_bigram
from prismlib.lstm.chunks import ChunkNLL
from prismlib.lstm.convergence import LearningCurve, fit_power_law
from prismlib.lstm.evaluation import forget_gate_means, perplexity, token_nll
from prismlib.lstm.model import LSTMLM, frequency_rank
from prismlib.lstm.outcome import (
    ARRAYS,
    WEIGHT_MODELS,
    WEIGHT_SEEDS,
    WEIGHTS,
    arrays_writer,
    biases_from_summary,
    biases_summary,
    final_test_chunks,
    history_from_summary,
    history_summary,
    keeps_weights,
    load_arrays,
    load_weights,
    outcome_arrays,
    snapshot_chunks,
    stored_forget_means,
    weights_writer,
)
from prismlib.lstm.timescales import (
    DEFAULT_FREEZE,
    FREEZE,
    apply_official,
    apply_timescales,
    describe,
    forget_gate_biases,
    variant_forget_biases,
)
from prismlib.lstm.training import TrainHistory, train_lm
from prismlib.paths import results_dir
from prismlib.profiles import LSTMSettings
from prismlib.records import RUNS, BadRecord, device_name, find_record, loaded_commit, provenance, read_record, write_record


@dataclass(frozen=True)
class RunSpec:
    """One trained model: a timescale variant, initialised or fixed, and a seed.

    ``freeze`` says what a fixed variant freezes (:data:`~prismlib.lstm.FREEZE`:
    ``input_forget``, the default, ``forget`` or ``all``); it must stay the default for
    models that are not fixed and for ``official`` (which always freezes every bias).
    """

    variant: str = "baseline"
    T: float | None = None
    fixed: bool = False
    seed: int = 0
    freeze: str = DEFAULT_FREEZE

    def __post_init__(self) -> None:
        if self.freeze not in FREEZE:
            raise ValueError(f"freeze must be one of {', '.join(FREEZE)}, got {self.freeze!r}")
        if self.freeze != DEFAULT_FREEZE and (not self.fixed or self.variant == "official"):
            raise ValueError(
                f"freeze={self.freeze!r} applies to fixed variants other than 'official'; got {self.variant!r} with fixed={self.fixed}"
            )

    @property
    def label(self) -> str:
        """E.g. ``"layerwise T=20 (fixed)"`` or ``"layerwise T=20 (fixed: forget)"``."""
        return describe(self.variant, self.T, self.fixed, self.freeze)


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


def build_model(spec: RunSpec, vocab_size: int, s: LSTMSettings, rank: Tensor | None = None) -> LSTMLM:
    """A fresh model with ``spec``'s variant applied (seeded by ``spec.seed``).

    ``rank``: word id -> training-frequency rank (:func:`frequency_rank`), used by the
    adaptive softmax (``s.cutoffs``); without it the ids are taken as already ranked.
    """
    if s.emb > s.hidden and s.layers > 1:
        raise ValueError("the last (tied) layer should not be wider than the others: emb <= hidden")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = LSTMLM.from_settings(vocab_size, s, rank)
    gen = torch.Generator().manual_seed(10_000 + spec.seed)
    biases = variant_forget_biases(spec.variant, model.sizes, spec.T, gen)
    if spec.variant == "official":
        if not spec.fixed:
            raise ValueError("the official variant freezes its biases: use RunSpec('official', fixed=True)")
        apply_official(list(model.rnns), biases)
    else:
        apply_timescales(list(model.rnns), biases, fixed=spec.fixed, freeze=spec.freeze)
    return model


def untrained_model(spec: RunSpec, settings: LSTMSettings, corpus: Any = None, device: str = "cpu") -> LSTMLM:
    """The model of ``spec`` *before* training, in eval mode: the initialisation control of
    a memory claim (the same fixed biases, bit-identical to the trained model's start, the
    other weights random). ``corpus``: as :meth:`Job.train` (``None``: PTB)."""
    corpus = corpus if corpus is not None else _ptb()
    return build_model(spec, len(corpus.vocab), settings, _rank(corpus)).to(resolve_device(device)).eval()


RECIPE_VERSION = 3
"""Version of the code that trains an LSTM job (:func:`recipe_code`); it enters every key
from version 2 on, so a bump retrains the models of the old code. 1: the first cpu runs;
2: NT-ASGD's stall check in AWD-LSTM's order (one check later), the ``anneal`` schedule;
3: the key hashes the whole :class:`~prismlib.profiles.LSTMRecipe` (no profile name), the
fixed learning-rate path, the run record written at the job's end."""


def recipe_code() -> list[Any]:
    """The functions and classes whose code defines what an LSTM job trains (a test pins their
    :func:`~prismlib.jobcache.code_fingerprint` beside :data:`RECIPE_VERSION`)."""
    from prismlib import anneal
    from prismlib.lstm import evaluation, model, outcome, timescales, training

    return [
        training.train_lm, training.anneal_rule, training._make_optimizer, training._Averaged, training._converged,
        training._snapshot_epoch, anneal.anneal_check, anneal.AnnealSettings.rule, anneal.AnnealSettings.check_cap,
        model.LSTMLayer, model.LSTMLM, model.embedded_dropout,
        model.locked_dropout, model.batchify, evaluation.token_nll, timescales.variant_forget_biases,
        timescales.chrono_bias, timescales.gradient_bias, timescales.pareto_timescales, timescales.inverse_gamma_timescales,
        timescales._mixture, timescales.official_layer2_biases, timescales.bias_from_timescale,
        timescales.forget_from_timescale, timescales.freeze_mask, timescales._checked, timescales._bias_tensors,
        timescales.apply_timescales, timescales.apply_official, build_model, Job.train, bigram_valid_ppl,
        Job.write_record, outcome.outcome_arrays, outcome.chunked, outcome.history_summary, outcome.weights_writer,
        evaluation.forget_gate_means,
    ]  # fmt: skip


@dataclass(frozen=True)
class Job:
    """One LSTM LM to train: ``spec`` with the training ``settings`` of ``profile``.

    ``twin``: the job is a doubled-path twin of the doubling check
    (:func:`prismlib.lstm.doubling_jobs`); its record keeps no weights, since no analysis
    reads a twin's model. Not part of the key (the recipe says which path it trains)."""

    spec: RunSpec
    settings: LSTMSettings
    profile: str
    twin: bool = False

    def describe(self) -> dict[str, Any]:
        """What the key hashes: the spec and the training recipe, each whole, and the
        recipe code's version. Nothing else: the profile's name and its analysis settings
        (seeds to report, bootstrap sizes, memory settings, the grid) never enter it, so two
        profiles with one recipe share their models, and any change to the recipe (a new
        field included) gives new keys. The recipe is hashed flat
        (:meth:`~prismlib.profiles.Nested.flat`: its anneal ``schedule``'s fields beside its
        own, as before the schedule was grouped, so the keys stayed)."""
        return with_recipe({"spec": asdict(self.spec), "training": self.settings.recipe.flat()}, RECIPE_VERSION)

    @property
    def key(self) -> str:
        """16 hex digits of the SHA-256 of :meth:`describe` (the job's cache folder)."""
        return job_key(self.describe())

    @property
    def label(self) -> str:
        """E.g. ``"layerwise T=70 (fixed) seed 0"``."""
        return f"{self.spec.label} seed {self.spec.seed}"

    def train(self, folder: Path, device: torch.device, progress: bool, corpus: Any) -> None:
        """Train on PTB train (validation on PTB valid after every epoch, best epoch kept),
        resuming from ``partial.pt``, then score PTB test and write ``done.pt``: the
        weights, the history, the per-token test NLL and the effective forget-gate
        biases before and after training. ``corpus``: an object with ``train``, ``valid``,
        ``test`` id arrays and ``vocab`` (``None``: PTB, loaded here). The history holds the
        learning curve and the test NLL at half the budget; after every epoch
        ``status.json`` says how far training is (:func:`write_status`)."""
        t0 = time.perf_counter()
        loaded_commit()  # the code this process runs, fixed before a long training (its record names it)
        corpus, s = corpus if corpus is not None else _ptb(), self.settings
        model = build_model(self.spec, len(corpus.vocab), s, _rank(corpus)).to(device)
        init = forget_gate_biases(list(model.rnns))
        test = corpus.test if s.test_tokens is None else corpus.test[: s.test_tokens]
        learn_below = bigram_valid_ppl(corpus, s) if s.optimizer == "anneal" else None
        with torch_threads(s.threads):
            hist = train_lm(
                model,
                corpus.train,
                corpus.valid,
                s,
                self.spec.seed,
                folder / "partial.pt",
                desc=self.label,
                progress=progress,
                test_ids=test,
                on_epoch=lambda h: write_status(folder, h, s),
                learn_below=learn_below,
            )
            nll = token_nll(model, test, s.eval_batch, s.bptt)
            means = forget_gate_means(model.eval(), test, s.eval_batch, s.bptt) if s.records else []
        final = forget_gate_biases(list(model.rnns))
        save_atomic(folder / "done.pt", model=model.state_dict(), history=hist, test_nll=nll, biases_init=init, biases_final=final)
        remove(folder / "partial.pt")
        if s.records:
            self.write_record(model, hist, nll, init, final, means, corpus, time.perf_counter() - t0, device)

    @property
    def runs(self) -> Path:
        """Where this job's committed record lives: ``results/<profile>/runs/``."""
        return results_dir(self.profile) / RUNS

    def committed(self) -> Path | None:
        """The folder of this job's usable committed record (``None`` when there is none, the
        profile keeps none, or ``$PRISMLIB_FRESH`` is set: ``make reproduce FRESH=1``); a
        record that must not be used is named on stderr in one line
        (:class:`~prismlib.records.BadRecord`) and counts as none."""
        if not self.settings.records or os.environ.get(FRESH_ENV):
            return None
        try:
            return find_record(self.runs, self.key, self.describe())
        except BadRecord as err:
            print(err, file=sys.stderr)
            return None

    def write_record(
        self, model: LSTMLM, hist: TrainHistory, nll: np.ndarray, init: list[Tensor], final: list[Tensor],
        means: list[np.ndarray], corpus: Any, seconds: float, device: torch.device | str = "cpu",
    ) -> Path | None:  # fmt: skip
        """Write this finished job's record (:mod:`prismlib.lstm.outcome`) under :attr:`runs`;
        not from uncommitted code (such a record could never be used): then one line says so."""
        prov = provenance(
            seconds, self.settings.threads, device=device_name(device), resumed=hist.seconds > seconds, stop_reason=hist.stop_reason
        )
        if prov["dirty"]:
            print(f"{self.label}: trained from uncommitted code ({prov['commit']}): no run record written", file=sys.stderr)
            return None
        s = self.settings
        test = corpus.test if s.test_tokens is None else corpus.test[: s.test_tokens]
        arrays = outcome_arrays(
            nll, test, np.bincount(corpus.train, minlength=len(corpus.vocab)), hist.val_snapshots or {}, hist.snapshots or {}, means
        )
        files = {ARRAYS: arrays_writer(arrays)}
        if not self.twin and keeps_weights(self.spec.variant, self.spec.T, self.spec.fixed, self.spec.seed):
            files[WEIGHTS] = weights_writer(model)
        summary = {
            "label": self.label,
            "provenance": prov,
            "history": history_summary(hist),
            "test_ppl": perplexity(nll),
            "val_ppl": min(hist.val_ppl),
            "biases_init": biases_summary(init),
            "biases_final": biases_summary(final),
        }
        return write_record(self.runs / self.key, self.key, self.describe(), summary, files)


def bigram_valid_ppl(corpus: Any, s: LSTMSettings) -> float:
    """The Kneser-Ney bigram of ``corpus.train`` on the validation tokens a run is checked on
    (the ``anneal`` schedule's guard: no decay before a model beats it)."""
    valid = corpus.valid if s.valid_tokens is None else corpus.valid[: s.valid_tokens]
    return perplexity(bigram_nll(fit_bigram(corpus.train, len(corpus.vocab)), valid))


FRESH_ENV = "PRISMLIB_FRESH"
"""Set (to anything but empty): committed run records are not used, every job trains again
(and rewrites its record): ``make reproduce FRESH=1``."""

STATUS = "status.json"
"""Per job folder: how far training is, rewritten after every epoch (:func:`write_status`)."""


def write_status(folder: Path, hist: TrainHistory, s: LSTMSettings) -> None:
    """Write ``<folder>/status.json``: tokens and seconds so far, the last curve point, and
    the budget at which the model gate would pass by a power-law fit of the curve
    (``projected_tokens``, ``null`` while the curve is too short to fit)."""
    curve = hist.learning_curve()
    projected = None
    if curve is not None:
        try:
            projected = fit_power_law(curve).budget(s.converge_share, s.converge_tolerance, start=curve.budget)
        except ValueError:
            projected = None
    status: dict[str, Any] = {
        "epochs": hist.epochs,
        "tokens": hist.tokens,
        "seconds": round(hist.seconds, 1),
        "valid_ppl": None if curve is None else float(curve.valid_ppl[-1]),
        "projected_tokens": projected if projected is None or math.isfinite(projected) else None,
        "cap_tokens": round(hist.tokens / max(hist.epochs, 1) * s.epochs),
    }
    if hist.anneal is not None:
        status |= {"decays": len(hist.anneal.decayed_at), "lr_scale": hist.anneal.scale, "stop": hist.anneal.stop}
    tmp = folder / (STATUS + ".tmp")
    tmp.write_text(json.dumps(status))
    tmp.replace(folder / STATUS)


def read_status(job: Job, cache: Path | None = None) -> dict[str, Any] | None:
    """The job's ``status.json`` (``None`` before its first epoch)."""
    path = job_dir(job, cache) / STATUS
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def jobs_for(specs: Sequence[RunSpec], settings: LSTMSettings, profile_name: str) -> list[Job]:
    """One :class:`Job` per spec (duplicates dropped, order kept), of the profile named
    ``profile_name`` (a profile's ``job_profile``, or any name a test or benchmark gives its jobs)."""
    return [Job(spec, settings, profile_name) for spec in dict.fromkeys(specs)]


def _ptb() -> Any:
    from prismlib.data.ptb import load_ptb_corpus

    return load_ptb_corpus()


def _rank(corpus: Any) -> torch.Tensor:
    return frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))


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
    the summary's history and biases, computed as :meth:`Job.write_record` computes them (the
    forget-gate means aside: measured on demand, :meth:`TrainedRun.forget_means`)."""
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
    else from its committed record (:meth:`Job.committed`: none when ``$PRISMLIB_FRESH`` is set),
    both through :func:`run_from_outcome`. A record's model is read (``float16`` weights, eval
    mode) only when an analysis asks for it."""
    path = job_dir(job, cache) / "done.pt"
    corpus = corpus if corpus is not None else _ptb()
    dev = resolve_device(device)
    if path.exists():
        done = load_checkpoint(path, map_location=dev)
        model = build_model(job.spec, len(corpus.vocab), job.settings, _rank(corpus)).to(dev)
        model.load_state_dict(done["model"])
        model.eval()
        arrays, summary = checkpoint_outcome(done, corpus, job.settings)
        return run_from_outcome(job, arrays, summary, corpus, "checkpoint", path.parent, model)
    folder = job.committed()
    if folder is None:
        raise FileNotFoundError(f"job {job.label} ({job.key}) has not been trained; run it with prismlib.jobcache.run_missing")
    record = read_record(folder, job.describe())
    loader = None
    if (folder / WEIGHTS).exists():

        def loader() -> LSTMLM:
            model = build_model(job.spec, len(corpus.vocab), job.settings, _rank(corpus))
            return load_weights(model, folder).to(dev).eval()

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
    corpus = corpus if corpus is not None else _ptb()
    return {job.spec: load_run(job, cache, device, corpus) for job in jobs}
