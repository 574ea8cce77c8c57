"""One installment of a pretraining: as many steps as a wall-clock budget holds, then the run's
committed state, so that the next installment, on any machine, goes on from there.

A pretraining of the size the pilot chooses is many hours on two cores, more than a working
session, and no machine survives from one session to the next: between installments the run
lives in the repository as its committed state (:mod:`prismlib.pretrain.record`, under
``<records>/<key>/``, the key of its recipe, corpus and tokenizer). ``python -m prismlib train
--minutes M`` runs :func:`pretrain_installment` for a profile with
:class:`~prismlib.profiles.PretrainSettings` (:func:`pretrain_config` makes their recipe), which

- builds the inputs (the offline corpus, :func:`~prismlib.pretrain.offline_inputs`) and reads
  the committed state of the recipe's key: a state that fails its checks (a flipped byte,
  another recipe) stops the installment with its one line
  (:class:`~prismlib.records.BadRecord`), never a silent restart from step 0; a state that is
  done ends it at once, saying so; a *continuation* (``settings.base``, :func:`recipe_config`)
  with no committed state yet reads its base's, and trains the base while that is not done;
- refuses uncommitted code before any step (its committed state could never be read);
- trains (:func:`~prismlib.pretrain.pretrain`) from the local state in ``<state_dir>/<key>/``
  when it is at least as far as the committed one (the same machine: its AdamW moments go on),
  else from the committed state (a new machine: a boundary, part of the recipe), until the
  budget is spent or the schedule is done;
- writes the committed state of where it stopped (commit it with ``training.json``) and
  returns a :class:`PretrainOutcome`, after one line before the steps and one after.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from prismlib.artifacts import load_or_discard
from prismlib.devices import torch_threads
from prismlib.pretrain.model import BertSize
from prismlib.pretrain.recipe import PretrainConfig, recipe_key
from prismlib.pretrain.record import CommittedState, check_committed, read_state, write_state
from prismlib.pretrain.train import STATE, PretrainData, offline_inputs, pretrain
from prismlib.profiles import PretrainSettings

InputsFor = Callable[[PretrainConfig], PretrainData]
"""Makes a recipe's inputs at its lengths (:func:`recipe_inputs`; tests give generated text)."""


def pretrain_config(settings: PretrainSettings) -> PretrainConfig:
    """The recipe of ``settings``: their size (with their dropout), lengths, batch, rate,
    warm-up and seed, and a linear decay to 0 at their ``total_steps`` (a run with an end);
    AdamW's other settings, the masking and the attention are :class:`PretrainConfig`'s.

    Raises:
        ValueError: a size that does not parse, or a recipe :class:`PretrainConfig` refuses (a
            long phase longer than the positions, tokens per step that its length does not divide).
    """
    return PretrainConfig(
        BertSize.parse(settings.size, dropout=settings.dropout),
        seq_len=settings.seq_len,
        batch_size=settings.batch_size,
        lr=settings.lr,
        warmup_steps=settings.warmup_steps,
        schedule="linear",
        total_steps=settings.total_steps,
        seed=settings.seed,
        long_seq_len=settings.long_seq_len,
        long_share=settings.long_share,
    )


def recipe_config(settings: PretrainSettings, corpus_digest: str, tokenizer_digest: str) -> PretrainConfig:
    """:func:`pretrain_config` with a continuation's base resolved: ``base`` the key of the
    settings' ``base`` recipe on the same corpus and tokenizer (recursively), so the run's key
    (:func:`~prismlib.pretrain.recipe_key`) names the run it starts from."""
    config = pretrain_config(settings)
    if settings.base is None:
        return config
    base = recipe_config(settings.base, corpus_digest, tokenizer_digest)
    return replace(config, base=recipe_key(base, corpus_digest, tokenizer_digest))


def recipe_inputs(config: PretrainConfig, progress: bool = True) -> PretrainData:
    """The offline corpus packed at ``config``'s lengths (:func:`~prismlib.pretrain.offline_inputs`)."""
    return offline_inputs(config.seq_len, progress, config.long_seq_len)


@dataclass(frozen=True)
class PretrainOutcome:
    """What an installment of a pretraining did (:func:`pretrain_installment`).

    Attributes:
        size: the architecture, as the settings name it (``"4x256"``); key: the run's key.
        steps_before: the step it started from (its local or committed state's; 0: none).
        steps: the step it stopped at; total_steps: the schedule's length.
        tokens: training tokens of the whole run so far.
        seconds: this installment's wall time (the inputs, the steps and the committed state).
        gain: the last held-out check's gain over the unigram model, in nats per masked token
            (``None``: no check yet); gain_seq_len: the input length of that check.
        done: the schedule is trained (the next installment trains nothing).
        trained: this installment ran the loop (``False``: the committed state was done already).
        stop: why the loop stopped (``"minutes"``, ``"steps"``, ``"done"``; ``""``: it did not run).
        record: the committed state's folder (``<records>/<key>``; ``None``: none written nor found).
    """

    size: str
    key: str
    steps_before: int
    steps: int
    total_steps: int
    tokens: int
    seconds: float
    gain: float | None
    gain_seq_len: int | None
    done: bool
    trained: bool
    stop: str
    record: Path | None

    def line(self) -> str:
        """The line said after the installment."""
        head = f"pretraining {self.size}: "
        if not self.trained:
            return head + f"done, step {self.steps} of {self.total_steps} in its committed state {self.record}; nothing to train"
        gain = "no held-out check yet" if self.gain is None else f"held-out gain {self.gain:+.3f} nats at {self.gain_seq_len} tokens"
        where = "done" if self.done else f"stopped by {self.stop}"
        return (
            head + f"step {self.steps} of {self.total_steps} ({where}; +{self.steps - self.steps_before} steps, "
            f"{self.tokens:,} tokens in all) in {self.seconds / 60:.1f} min, {gain}; "
            f"committed state {self.record}: commit it (the next installment goes on from it on any machine)"
        )


def _outcome(
    settings: PretrainSettings,
    key: str,
    before: int,
    steps: int,
    tokens: int,
    t0: float,
    curve: list[dict[str, float]],
    stop: str,
    folder: Path,
) -> PretrainOutcome:
    """The outcome of an installment that started at ``t0`` (its clock) and ran from step
    ``before`` to ``steps`` (``stop`` empty: it did not run)."""
    last = curve[-1] if curve else None
    return PretrainOutcome(
        size=settings.size,
        key=key,
        steps_before=before,
        steps=steps,
        total_steps=settings.total_steps,
        tokens=tokens,
        seconds=time.perf_counter() - t0,
        gain=None if last is None else float(last["gain"]),
        gain_seq_len=None if last is None else int(last["seq_len"]),
        done=steps >= settings.total_steps,
        trained=bool(stop),
        stop=stop,
        record=folder,
    )


def _say(line: str) -> None:
    print(line, flush=True)


def _start(local: Path, key: str, committed: CommittedState | None) -> tuple[int, float]:
    """``(step, seconds)`` of the state :func:`~prismlib.pretrain.pretrain` will start from:
    the local state when it is at least as far as the committed one, else the committed one."""
    stored = load_or_discard(local / STATE)
    mine = (int(stored["step"]), float(stored["seconds"])) if stored is not None and stored["key"] == key else (0, 0.0)
    if committed is not None and committed.step > mine[0]:
        return committed.step, committed.seconds
    return mine


def pretrain_installment(
    settings: PretrainSettings,
    minutes: float,
    records: Path,
    state_dir: Path,
    data: InputsFor | None = None,
    progress: bool = True,
    say: Callable[[str], None] = _say,
) -> PretrainOutcome:
    """Pretrain ``settings``' recipe for at most ``minutes`` more, from where its committed
    state or this machine's local state left off, and write its committed state.

    Args:
        settings: the recipe and how it runs (:func:`pretrain_config`; threads, checks).
        minutes: this installment's budget, building the inputs included: the loop gets what is
            left (at least one step) and stops after the step that spends it, then checks the
            held-out loss and writes the states (a minute or so more).
        records: the folder of committed states (``results/<profile>/runs/pretrain``); this run's is
            ``<records>/<key>``.
        state_dir: the local states' folder (git-ignored; this run's is ``<state_dir>/<key>``).
        data: makes a recipe's inputs (default :func:`recipe_inputs`, the offline corpus at the
            recipe's lengths; tests give :func:`~prismlib.pretrain.synthetic_inputs`).
        progress: the loop's progress bar.
        say: where the line before the steps and the one after go (printed).

    A continuation (``settings.base``) whose base is not done trains the base instead (this
    installment is one of the base's; the outcome is the base's), and starts from the base's
    committed weights once it is.

    Returns:
        a :class:`PretrainOutcome`.

    Raises:
        prismlib.records.BadRecord: the committed state (or a continuation's base's) exists and
            must not be used (one line: the file and the fix); nothing is trained.
        ValueError: the code is uncommitted (before any step), a budget that is not a positive
            number of minutes, settings whose recipe is refused.
    """
    if not (math.isfinite(minutes) and minutes > 0):
        raise ValueError(f"a pretraining installment needs a positive number of minutes, got {minutes}")
    t0 = time.perf_counter()
    config = pretrain_config(settings)
    with torch_threads(settings.threads):
        prepared = data(config) if data is not None else recipe_inputs(config, progress)
    inputs = prepared.inputs
    config = recipe_config(settings, inputs.corpus_digest, inputs.tokenizer_digest)
    key = recipe_key(config, inputs.corpus_digest, inputs.tokenizer_digest)
    folder = Path(records) / key
    init = None
    if settings.base is not None and config.base is not None and not folder.exists():  # a continuation's first installment
        base_config = recipe_config(settings.base, inputs.corpus_digest, inputs.tokenizer_digest)
        base_folder = Path(records) / config.base
        base = read_state(base_folder, base_config, inputs.corpus_digest, inputs.tokenizer_digest) if base_folder.exists() else None
        if base is None or not base.done:
            say(f"pretraining {settings.size}: the continuation's base {config.base} is not done; this installment trains it")
            left = max(minutes - (time.perf_counter() - t0) / 60, 1e-3)
            return pretrain_installment(settings.base, left, records, state_dir, data, progress, say)
        init = base.model
    committed = read_state(folder, config, inputs.corpus_digest, inputs.tokenizer_digest) if folder.exists() else None
    if committed is not None and committed.done:
        outcome = _outcome(settings, key, committed.step, committed.step, committed.tokens, t0, committed.curve, "", folder)
        say(outcome.line())
        return outcome
    check_committed()  # before the steps, not after them
    local = Path(state_dir) / key
    step, seconds = _start(local, key, committed)
    left = max(minutes - (time.perf_counter() - t0) / 60, 0.0)
    about = min(left, (settings.total_steps - step) * seconds / step / 60) if step and seconds else left
    say(f"pretraining {settings.size}: step {step} of {settings.total_steps}, about {about:.0f} minutes this installment")
    result = pretrain(
        config,
        inputs,
        local,
        mask_id=prepared.mask_id,
        special=prepared.special,
        long_inputs=prepared.long_inputs,
        start_from=folder if committed is not None else None,
        init=init,
        minutes=left,
        eval_every=settings.eval_every,
        checkpoint_every=settings.checkpoint_every,
        heldout_inputs=settings.heldout_inputs,
        threads=settings.threads,
        progress=progress,
    )
    if committed is None or result.steps > committed.step:
        write_state(folder, config, result, inputs.corpus_digest, inputs.tokenizer_digest, settings.threads)
    outcome = _outcome(settings, key, result.resumed_from, result.steps, result.tokens, t0, result.curve, result.stop, folder)
    say(outcome.line())
    return outcome
