"""Work B's trained models as jobs.

:class:`RunSpec` says what to train (a timescale variant, initialised or fixed, and a
seed); :class:`Job` trains it on PTB with a profile's settings and is cached by
:mod:`prismlib.jobcache` under the hash of what changes the model (the spec, the recipe and
:data:`RECIPE_VERSION`, with :func:`recipe_code` the code a recipe version stands for); at its
end a job writes its committed run record (:meth:`Job.write_record`, :mod:`prismlib.records`).

Reading a finished job back, from its checkpoint or its record, is
:mod:`prismlib.lstm.trained_runs` (:func:`~prismlib.lstm.trained_runs.trained`); how far a
running job is, :mod:`prismlib.lstm.status`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from prismlib.artifacts import remove, save_atomic
from prismlib.devices import resolve_device, torch_threads
from prismlib.jobcache import job_key, with_recipe
from prismlib.lstm.bigram import bigram_nll, fit_bigram
from prismlib.lstm.evaluation import forget_gate_means, perplexity, token_nll
from prismlib.lstm.model import LSTMLM, frequency_rank
from prismlib.lstm.outcome import (
    ARRAYS,
    WEIGHTS,
    arrays_writer,
    biases_summary,
    history_summary,
    keeps_weights,
    outcome_arrays,
    weights_writer,
)
from prismlib.lstm.status import write_status
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
from prismlib.records import RUNS, BadRecord, device_name, find_record, loaded_commit, provenance, write_record


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
    other weights random), and the model a finished job's weights load into
    (:func:`~prismlib.lstm.trained_runs.load_run`). ``corpus``: as :meth:`Job.train`
    (``None``: PTB)."""
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
        ``status.json`` says how far training is (:func:`~prismlib.lstm.status.write_status`)."""
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


def jobs_for(specs: Sequence[RunSpec], settings: LSTMSettings, profile_name: str) -> list[Job]:
    """One :class:`Job` per spec (duplicates dropped, order kept), of the profile named
    ``profile_name`` (a profile's ``job_profile``, or any name a test or benchmark gives its jobs)."""
    return [Job(spec, settings, profile_name) for spec in dict.fromkeys(specs)]


def _ptb() -> Any:
    from prismlib.data.ptb import load_ptb_corpus

    return load_ptb_corpus()


def _rank(corpus: Any) -> torch.Tensor:
    return frequency_rank(np.bincount(corpus.train, minlength=len(corpus.vocab)))
