"""Pretraining a small BERT with masked LM: the loop, its checkpoints and curve.

:func:`pretrain` trains :func:`~prismlib.pretrain.model.new_bert` on packed inputs
(:mod:`prismlib.pretrain.sequences`) as its recipe says (:mod:`prismlib.pretrain.recipe`) with
AdamW (no weight decay on biases and LayerNorm, as BERT), the recipe's learning rate
(:func:`~prismlib.pretrain.recipe.learning_rate`), gradient clipping, and BERT's masking drawn per step from
``(seed, step)`` (:func:`prismlib.prism.training_batch`; the dropout of step ``s`` is seeded
from ``(seed, s)`` too), so a run is a function of its recipe whatever the interruptions.

Runs outlive a sitting: the state (model, optimizer, step, curve, seconds, boundaries) goes to
``<state_dir>/state.pt`` every ``checkpoint_every`` steps, when the ``minutes`` budget is
spent, at the end and on Ctrl-C (written atomically, digest-checked on read); a second call
with the same state directory resumes where the last state left off and ends with the same
parameters as an uninterrupted run (tests/pretrain/test_train.py). A state written by another
recipe or another corpus is refused, never mixed.

Every ``eval_every`` steps the held-out masked-LM loss is measured against the unigram model on
the same masked positions (:mod:`prismlib.pretrain.evaluation`); the curve (tokens seen, input
length, held-out loss, unigram loss, gain in nats) is rewritten to ``<state_dir>/curve.csv`` at
every check, and ``run.json`` says what ran, in which phase, and why it stopped.

BERT's two phases: with ``long_seq_len`` the steps from ``long_from`` train on ``long_inputs``
(the same corpus packed to that length, the same tokens per step), so the positions section 4
reads are trained; their checks use a held-out set of that length (as many held-out tokens, the
same unigram model), and the check at ``long_from`` is made at both lengths, before any long
step, so the curve shows the jump (:func:`~prismlib.pretrain.recipe.check_lengths`).
``run.json``'s ``phase`` is that of the next step.

A pretraining spans sittings on different machines: between them it lives in the repository as
a committed state (:mod:`prismlib.pretrain.record`: the fp16 weights, not the optimizer).
Resuming from one (``start_from``, used when the local state is missing or behind it) is part of
the recipe: the weights round-trip through fp16, AdamW starts afresh and the rate re-warms; that
step is a *boundary*, listed in the state, ``run.json`` and the record. A run is a function of its
recipe and its boundaries: ``boundaries`` replays them from scratch and ends with the parameters
of the run resumed from records (tests/pretrain/test_record.py).

``python -m prismlib.pretrain.train --out DIR --size 4x256 --minutes 20`` runs it from the
command line (the pilot, ``benchmarks/pretrain_pilot.py``, runs one such process per size);
``--record DIR`` writes the committed state to ``DIR/<key>/`` at the end, ``--start-from`` resumes from one.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch

from prismlib.artifacts import load_or_discard, save_atomic
from prismlib.devices import torch_threads
from prismlib.pretrain.evaluation import HeldOut, heldout_loss, heldout_set, unigram_model
from prismlib.pretrain.model import BertSize, new_bert
from prismlib.pretrain.recipe import SCHEDULES, PretrainConfig, check_lengths, cross_boundary, learning_rate, recipe_key
from prismlib.pretrain.record import check_committed, read_state, write_state
from prismlib.pretrain.sequences import PretrainInputs
from prismlib.prism import derived_seed, mlm_loss, training_batch
from prismlib.progress import progress_bar

STATE = "state.pt"
CURVE = "curve.csv"
RUN = "run.json"
CURVE_COLUMNS = ("step", "tokens", "seq_len", "seconds", "lr", "train_loss", "heldout_loss", "unigram_loss", "gain")


def _optimizer(model: torch.nn.Module, config: PretrainConfig) -> torch.optim.AdamW:
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "LayerNorm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.lr, betas=config.betas, eps=config.eps)


@dataclass
class PretrainResult:
    """Where a run stands after a call of :func:`pretrain`.

    Attributes:
        model: the trained ``BertForMaskedLM`` (eval mode).
        key: :func:`~prismlib.pretrain.recipe.recipe_key`.
        steps: optimizer steps so far; tokens: training tokens seen (steps x batch x seq_len,
            the same in the long phase).
        seconds: wall time of every call so far; train_seconds: of the steps alone (no checks).
        curve: one dict per held-out check (:data:`CURVE_COLUMNS`).
        stop: why this call stopped (``"steps"``, ``"minutes"``, ``"done"``: nothing left to do).
        resumed_from: the step this call started from.
        boundaries: the steps where the run resumed from a committed state (or replays one).
    """

    model: Any
    key: str
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    train_seconds: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)
    stop: str = ""
    resumed_from: int = 0
    boundaries: list[int] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        """Training tokens per second of the steps (held-out checks left out)."""
        return self.tokens / self.train_seconds if self.train_seconds else 0.0


def write_curve(path: Path, curve: Sequence[dict[str, float]]) -> None:
    """The curve as CSV (:data:`CURVE_COLUMNS`), written through a temporary file."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CURVE_COLUMNS)
        w.writeheader()
        w.writerows(curve)
    tmp.replace(path)


def read_curve(path: Path) -> list[dict[str, float]]:
    """The rows of a ``curve.csv`` (:func:`write_curve`), numbers as floats."""
    with open(path, newline="") as fh:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def _check_long_inputs(config: PretrainConfig, inputs: PretrainInputs, long_inputs: PretrainInputs | None, limit: int | None) -> None:
    if long_inputs is None:
        if config.long_from is not None and limit is not None and limit >= config.long_from:
            raise ValueError(
                f"the run reaches its long phase at step {config.long_from} but has no inputs of {config.long_seq_len} tokens: "
                f"pass long_inputs (--long-seq-len {config.long_seq_len} builds them), or stop before (max_steps)"
            )
        return
    if config.long_seq_len is None:
        raise ValueError("long inputs were given to a recipe without a long phase: set long_seq_len (--long-seq-len)")
    if long_inputs.seq_len != config.long_seq_len:
        raise ValueError(f"long inputs have {long_inputs.seq_len} tokens, the recipe's long phase {config.long_seq_len}")
    if (long_inputs.corpus_digest, long_inputs.tokenizer_digest) != (inputs.corpus_digest, inputs.tokenizer_digest):
        raise ValueError("the long inputs come from another corpus or tokenizer than the inputs: pack both from one corpus")


def _boundaries(crossed: Sequence[int], replay: Sequence[int], step: int) -> list[int]:
    """The run's boundaries: those its state crossed and those replayed; a replayed one before
    ``step`` must be among the crossed (a resumed state cannot cross a boundary in its past)."""
    if any(b < 0 for b in replay):
        raise ValueError(f"boundaries are steps >= 0, got {sorted(replay)}")
    missing = sorted(b for b in set(replay) - set(crossed) if b < step)
    if missing:
        raise ValueError(
            f"boundaries {missing} lie before step {step}, where this run resumes, and it did not cross them: "
            "replay them in another state folder (--out), from scratch"
        )
    return sorted(set(crossed) | set(replay))


def pretrain(
    config: PretrainConfig,
    inputs: PretrainInputs,
    state_dir: Path,
    *,
    mask_id: int,
    special: Sequence[int],
    long_inputs: PretrainInputs | None = None,
    start_from: Path | None = None,
    init: torch.nn.Module | None = None,
    boundaries: Sequence[int] = (),
    minutes: float | None = None,
    max_steps: int | None = None,
    eval_every: int = 200,
    checkpoint_every: int = 200,
    heldout_inputs: int | None = 256,
    threads: int | None = 1,
    progress: bool = True,
) -> PretrainResult:
    """Pretrain (or resume pretraining) a small BERT with masked LM.

    Args:
        config: the recipe.
        inputs: packed training and held-out inputs of ``config.seq_len`` tokens.
        state_dir: where the state, the curve and ``run.json`` go; an existing state of the
            same recipe and corpus is resumed.
        mask_id: the ``[MASK]`` id; special: ids never masked nor targets
            (:func:`prismlib.pretrain.model.special_ids`).
        long_inputs: the same corpus packed into ``config.long_seq_len`` tokens; needed when the
            run reaches :attr:`PretrainConfig.long_from`.
        start_from: a committed state's folder (:func:`prismlib.pretrain.record.write_state`),
            used when ``state_dir`` holds no state or one at an earlier step: its fp16 weights, a
            fresh AdamW, its step, curve, seconds and boundaries, and its step a new boundary.
        init: a continuation's start (``config.base`` set, and only then): the model of its base,
            the done committed state the caller read and verified, needed when no state of this
            run exists (a copy; the run's own states take over from its first one).
        boundaries: steps at which to cross a boundary as that resume does (weights through fp16,
            a fresh AdamW, :data:`~prismlib.pretrain.recipe.REWARM_STEPS` of re-warm-up): a run from scratch with a resumed
            run's boundaries is that run.
        minutes: this call's time budget (``None``: none); it stops cleanly after the step
            that spends it, checks the held-out loss and saves the state.
        max_steps: stop at this step (default ``config.total_steps``; one of the two, or
            ``minutes``, must bound the run).
        eval_every: steps between held-out checks (and one before the first step, and at
            ``long_from`` at both lengths: :func:`~prismlib.pretrain.recipe.check_lengths`).
        checkpoint_every: steps between saved states.
        heldout_inputs: held-out inputs scored at each check (the first ones; ``None``: all);
            the long phase's check scores as many tokens in ``heldout_inputs * seq_len //
            long_seq_len`` inputs.
        threads: torch threads for this call (``None``: as set; one by default: on a small
            shared CPU one thread per process is the fastest use of the cores).
        progress: a tqdm bar (on stderr, or the headless log: :func:`prismlib.progress.progress_bar`).

    Returns:
        a :class:`PretrainResult`.

    Raises:
        ValueError: inputs of another length, no bound on the run, long inputs missing or of
            another corpus, a state in ``state_dir`` written by another recipe or corpus.
        prismlib.records.BadRecord: ``start_from`` is not a usable committed state of this recipe and corpus.
    """
    if inputs.seq_len != config.seq_len:
        raise ValueError(f"inputs have {inputs.seq_len} tokens, the recipe {config.seq_len}")
    limit = max_steps if max_steps is not None else config.total_steps
    if limit is None and minutes is None:
        raise ValueError("nothing bounds the run: give max_steps, config.total_steps or minutes")
    _check_long_inputs(config, inputs, long_inputs, limit)
    if init is not None and config.base is None:
        raise ValueError("init is a continuation's start: a run from scratch (config.base None) starts from a new BERT")
    key = recipe_key(config, inputs.corpus_digest, inputs.tokenizer_digest)
    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    vocab = config.size.vocab_size
    unigram = unigram_model(inputs.train, vocab, special)
    held_seed = derived_seed(config.seed, 2)
    helds = {config.seq_len: heldout_set(inputs.heldout, unigram, mask_id, special, held_seed, heldout_inputs)}
    trains = {config.seq_len: inputs.train}
    if long_inputs is not None:
        n_long = None if heldout_inputs is None else max(1, heldout_inputs * config.seq_len // long_inputs.seq_len)
        helds[long_inputs.seq_len] = heldout_set(long_inputs.heldout, unigram, mask_id, special, held_seed, n_long)
        trains[long_inputs.seq_len] = long_inputs.train
    special_t = torch.tensor(sorted(set(int(i) for i in special)))

    with torch_threads(threads), torch.random.fork_rng(devices=[]):
        result, opt_state = _start(config, key, state_dir, start_from, inputs, init)
        result.boundaries = _boundaries(result.boundaries, boundaries, result.steps)
        model = result.model.train()
        opt = _optimizer(model, config)
        if opt_state is not None:
            opt.load_state_dict(opt_state)
        result.tokens = result.steps * config.tokens_per_step

        def check(train_loss: float, seq_len: int) -> None:
            held = helds[seq_len]
            loss = heldout_loss(model, held)
            row = {
                "step": result.steps,
                "tokens": result.tokens,
                "seq_len": seq_len,
                "seconds": round(result.seconds, 2),
                "lr": learning_rate(config, max(result.steps - 1, 0), result.boundaries) if result.steps else 0.0,
                "train_loss": train_loss,
                "heldout_loss": loss,
                "unigram_loss": held.unigram_loss,
                "gain": held.unigram_loss - loss,
            }
            result.curve.append(row)
            write_curve(state_dir / CURVE, result.curve)

        def save() -> None:
            state = {
                "key": key,
                "config": config.describe(),
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "step": result.steps,
                "seconds": result.seconds,
                "train_seconds": result.train_seconds,
                "curve": result.curve,
                "boundaries": result.boundaries,
            }
            save_atomic(state_dir / STATE, **state)
            _write_run(state_dir / RUN, config, inputs, helds, result, threads, limit)

        if not result.curve:
            for n in check_lengths(config, result.steps):
                check(math.nan, n)
        start = time.perf_counter()
        last_mark = start
        losses: list[float] = []
        total = limit if limit is not None else result.steps + 10**9
        bar = progress_bar(
            total=None if limit is None else total,
            initial=result.steps,
            desc=f"pretrain {config.size.name}",
            unit="step",
            leave=False,
            disable=not progress,
        )
        result.stop = "done" if result.steps >= total else ""
        try:
            while result.steps < total:
                step = result.steps
                t0 = time.perf_counter()
                if step in result.boundaries:
                    cross_boundary(model)
                    opt = _optimizer(model, config)
                for group in opt.param_groups:
                    group["lr"] = learning_rate(config, step, result.boundaries)
                batch, seq_len = config.shape_at(step)
                x, y = training_batch(trains[seq_len], step, batch, config.seed, special_t, mask_id, vocab, config.mask_prob)
                torch.manual_seed(derived_seed(config.seed, step, 1))  # dropout of this step
                loss = mlm_loss(model, x, torch.ones_like(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if config.clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
                opt.step()
                losses.append(float(loss.detach()))
                result.train_seconds += time.perf_counter() - t0
                result.steps += 1
                result.tokens = result.steps * config.tokens_per_step
                bar.update(1)
                now = time.perf_counter()
                result.seconds += now - last_mark
                last_mark = now
                out_of_time = minutes is not None and now - start >= 60 * minutes
                if result.steps >= total:
                    result.stop = "steps"
                elif out_of_time:
                    result.stop = "minutes"
                if result.steps % eval_every == 0 or result.stop or result.steps == config.long_from:
                    for i, n in enumerate(check_lengths(config, result.steps)):
                        check(sum(losses) / len(losses) if i == 0 else math.nan, n)  # the second length: no step trained at it yet
                    losses = []
                    bar.set_postfix(gain=f"{result.curve[-1]['gain']:+.3f}")
                    now = time.perf_counter()
                    result.seconds += now - last_mark
                    last_mark = now
                if result.steps % checkpoint_every == 0 or result.stop:
                    save()
                if result.stop:
                    break
        except KeyboardInterrupt:
            result.stop = "interrupted"
            save()
            raise
        finally:
            bar.close()
        if result.stop == "done":
            _write_run(state_dir / RUN, config, inputs, helds, result, threads, limit)
    model.eval()
    return result


def _start(
    config: PretrainConfig,
    key: str,
    state_dir: Path,
    start_from: Path | None,
    inputs: PretrainInputs,
    init: torch.nn.Module | None = None,
) -> tuple[PretrainResult, dict[str, Any] | None]:
    """Where a call starts: the local state, the committed state ``start_from`` when the local
    one is missing or behind it (its step a new boundary), or a new model (a copy of ``init``,
    a continuation's base, when given); and the optimizer's state to load (``None``: a fresh AdamW)."""
    stored = load_or_discard(state_dir / STATE)
    if stored is not None and stored["key"] != key:
        raise ValueError(
            f"{state_dir / STATE} holds run {stored['key']} ({stored['config']}), not {key} ({config.describe()}): "
            "another recipe or corpus; give another --out folder or delete that one"
        )
    committed = None
    if start_from is not None:
        committed = read_state(start_from, config, inputs.corpus_digest, inputs.tokenizer_digest)
    if committed is not None and (stored is None or int(stored["step"]) < committed.step):
        result = PretrainResult(committed.model, key, steps=committed.step, resumed_from=committed.step)
        result.seconds, result.train_seconds = committed.seconds, committed.train_seconds
        result.curve, result.boundaries = list(committed.curve), sorted({*committed.boundaries, committed.step})
        return result, None
    result = PretrainResult(new_bert(config.size, config.seed, config.attn), key)
    if init is not None:
        result.model.load_state_dict(init.state_dict())
    elif config.base is not None and stored is None:
        raise ValueError(f"a continuation (of {config.base}) with no state of its own starts from its base's model: give init")
    if stored is None:
        return result, None
    result.model.load_state_dict(stored["model"])
    result.steps = result.resumed_from = int(stored["step"])
    result.seconds, result.train_seconds = float(stored["seconds"]), float(stored["train_seconds"])
    result.curve, result.boundaries = list(stored["curve"]), list(stored["boundaries"])
    return result, stored["optimizer"]


def _write_run(
    path: Path,
    config: PretrainConfig,
    inputs: PretrainInputs,
    helds: dict[int, HeldOut],
    result: PretrainResult,
    threads: int | None,
    limit: int | None,
) -> None:
    held, long_held = helds[config.seq_len], helds.get(config.long_seq_len or 0)
    info = {
        "key": result.key,
        "config": config.describe(),
        "corpus_digest": inputs.corpus_digest,
        "tokenizer_digest": inputs.tokenizer_digest,
        "train_inputs": len(inputs.train),
        "heldout_inputs": len(held.inputs),
        "heldout_masked": held.masked,
        "unigram_loss": held.unigram_loss,
        "long_heldout_inputs": None if long_held is None else len(long_held.inputs),
        "long_heldout_masked": None if long_held is None else long_held.masked,
        "long_unigram_loss": None if long_held is None else long_held.unigram_loss,
        "phase": 2 if config.long_from is not None and result.steps >= config.long_from else 1,
        "seq_len": config.shape_at(result.steps)[1],
        "long_from": config.long_from,
        "boundaries": result.boundaries,
        "steps": result.steps,
        "max_steps": limit,
        "tokens": result.tokens,
        "seconds": round(result.seconds, 2),
        "train_seconds": round(result.train_seconds, 2),
        "tokens_per_second": round(result.tokens_per_second, 1),
        "threads": threads if threads is not None else torch.get_num_threads(),
        "stop": result.stop,
        "last": result.curve[-1] if result.curve else None,
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=1))
    tmp.replace(path)


# =========================================================================== command line


class PretrainData(NamedTuple):
    """What :func:`pretrain` reads of a corpus: the packed inputs, the ``[MASK]`` id, the special
    ids, and the same corpus packed into the long phase's length (``None`` unless asked)."""

    inputs: PretrainInputs
    mask_id: int
    special: list[int]
    long_inputs: PretrainInputs | None = None


def offline_inputs(seq_len: int, progress: bool = True, long_seq_len: int | None = None) -> PretrainData:
    """The offline corpus (:func:`prismlib.pretrain.corpus.build_corpus`: refuses an overlap with
    an evaluated split) as packed inputs of ``seq_len`` tokens (and of ``long_seq_len``, when
    given: the ids are cached, so the second packing skips the tokenizer)."""
    from prismlib.pretrain.corpus import build_corpus
    from prismlib.pretrain.model import pretraining_tokenizer, special_ids
    from prismlib.pretrain.sequences import pretraining_inputs

    tokenizer = pretraining_tokenizer()
    corpus = build_corpus()
    inputs = pretraining_inputs(corpus, tokenizer, seq_len, progress=progress)
    long_inputs = None if long_seq_len is None else pretraining_inputs(corpus, tokenizer, long_seq_len, progress=progress)
    return PretrainData(inputs, int(tokenizer.mask_token_id), special_ids(tokenizer), long_inputs)


def synthetic_inputs(seq_len: int, n_docs: int = 400, seed: int = 0, long_seq_len: int | None = None) -> PretrainData:
    """Generated text (:func:`prismlib.pretrain.corpus.synthetic_documents`) as packed inputs
    (and of ``long_seq_len`` tokens, when given), every 10th document held out: for tests and
    smoke runs, never the real corpus."""
    from prismlib.pretrain.corpus import corpus_digest, split_heldout, synthetic_documents
    from prismlib.pretrain.model import pretraining_tokenizer, special_ids
    from prismlib.pretrain.sequences import pack_sequences, tokenize_documents, tokenizer_digest

    tok = pretraining_tokenizer()
    train, heldout = split_heldout(synthetic_documents(n_docs, seed), every=10)
    ids = [tokenize_documents(tok, d) for d in (train, heldout)]
    digests = corpus_digest(train, heldout), tokenizer_digest(tok)

    def packed(n: int) -> PretrainInputs:
        train_ids, heldout_ids = (pack_sequences(x, n, tok.cls_token_id, tok.sep_token_id) for x in ids)
        return PretrainInputs(train_ids, heldout_ids, *digests)

    return PretrainData(packed(seq_len), int(tok.mask_token_id), special_ids(tok), None if long_seq_len is None else packed(long_seq_len))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m prismlib.pretrain.train", description="Pretrain a small BERT with masked LM (resumable).")
    p.add_argument("--out", type=Path, required=True, help="state directory (resumed when it holds a state of the same recipe)")
    p.add_argument("--size", default="4x256", help="LAYERSxHIDDEN[hHEADS], e.g. 2x128, 4x256, 4x384h6")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=500, help="warm-up steps")
    p.add_argument("--schedule", choices=SCHEDULES, default="constant")
    p.add_argument("--total-steps", type=int, default=None, help="the schedule's length (needed by --schedule linear)")
    p.add_argument("--long-seq-len", type=int, default=None, help="BERT's second phase: its steps train on inputs this long")
    p.add_argument("--long-share", type=float, default=0.1, help="the share of --total-steps in the long phase")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--attn", choices=("sdpa", "eager"), default="sdpa")
    p.add_argument("--minutes", type=float, default=None, help="this call's time budget")
    p.add_argument("--max-tokens", type=float, default=None, help="stop after this many training tokens")
    p.add_argument("--eval-every", type=int, default=200, help="steps between held-out checks")
    p.add_argument("--checkpoint-every", type=int, default=200)
    p.add_argument("--heldout-inputs", type=int, default=256, help="held-out inputs scored at each check")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--corpus", choices=("offline", "synthetic"), default="offline", help="synthetic: generated text, for smoke runs")
    p.add_argument("--start-from", type=Path, default=None, help="a committed state's folder, used when --out holds none or an older one")
    p.add_argument("--record", type=Path, default=None, help="write the committed state to RECORD/<key>/ at the end (from committed code)")
    p.add_argument("--boundaries", default="", help="replay a resumed run's boundaries from scratch, e.g. 2000,4000")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> PretrainResult:
    args = parser().parse_args(argv)
    size = BertSize.parse(args.size, dropout=args.dropout)
    config = PretrainConfig(
        size,
        seq_len=args.seq_len,
        batch_size=args.batch,
        lr=args.lr,
        warmup_steps=args.warmup,
        schedule=args.schedule,
        total_steps=args.total_steps,
        seed=args.seed,
        attn=args.attn,
        long_seq_len=args.long_seq_len,
        long_share=args.long_share,
    )
    if args.record is not None:
        check_committed()  # before the sitting, not after it
    with torch_threads(args.threads):
        if args.corpus == "offline":
            data = offline_inputs(args.seq_len, not args.no_progress, args.long_seq_len)
        else:
            data = synthetic_inputs(args.seq_len, long_seq_len=args.long_seq_len)
    max_steps = None if args.max_tokens is None else math.ceil(args.max_tokens / config.tokens_per_step)
    result = pretrain(
        config,
        data.inputs,
        args.out,
        mask_id=data.mask_id,
        special=data.special,
        long_inputs=data.long_inputs,
        start_from=args.start_from,
        boundaries=[int(b) for b in args.boundaries.split(",") if b.strip()],
        minutes=args.minutes,
        max_steps=max_steps,
        eval_every=args.eval_every,
        checkpoint_every=args.checkpoint_every,
        heldout_inputs=args.heldout_inputs,
        threads=args.threads,
        progress=not args.no_progress,
    )
    last = result.curve[-1]
    print(
        f"{config.size.name}: {result.steps} steps, {result.tokens:,} tokens, {result.tokens_per_second:,.0f} tokens/s, "
        f"held-out {last['heldout_loss']:.3f} vs unigram {last['unigram_loss']:.3f} nats at {last['seq_len']:.0f} tokens "
        f"(gain {last['gain']:+.3f}), stop: {result.stop}"
    )
    if args.record is not None:
        folder = write_state(
            args.record / result.key, config, result, data.inputs.corpus_digest, data.inputs.tokenizer_digest, args.threads
        )
        print(f"committed state of step {result.steps}: {folder} (commit it; resume elsewhere with --start-from {folder})")
    return result


if __name__ == "__main__":
    main()
