"""Pretraining a small BERT with masked LM: the loop, its schedule, checkpoints and curve.

:func:`pretrain` trains :func:`~prismlib.pretrain.model.new_bert` on packed inputs
(:mod:`prismlib.pretrain.sequences`) with AdamW (no weight decay on biases and LayerNorm, as
BERT), a linear warm-up then a constant or linearly decaying learning rate
(:func:`learning_rate`), gradient clipping, and BERT's masking drawn per step from
``(seed, step)`` (:func:`prismlib.prism.training_batch`; the dropout of step ``s`` is seeded
from ``(seed, s)`` too), so a run is a function of its recipe whatever the interruptions.

Runs outlive a sitting: the state (model, optimizer, step, curve, seconds) goes to
``<state_dir>/state.pt`` every ``checkpoint_every`` steps, when the ``minutes`` budget is
spent, at the end and on Ctrl-C (written atomically, digest-checked on read); a second call
with the same state directory resumes where the last state left off and ends with the same
parameters as an uninterrupted run (tests/pretrain/test_train.py). A state written by another
recipe or another corpus is refused, never mixed.

Every ``eval_every`` steps the held-out masked-LM loss is measured against the unigram model on
the same masked positions (:mod:`prismlib.pretrain.evaluation`); the curve (tokens seen,
held-out loss, unigram loss, gain in nats) is rewritten to ``<state_dir>/curve.csv`` at every
check, and ``run.json`` says what ran and why it stopped.

``python -m prismlib.pretrain.train --out DIR --size 4x256 --minutes 20`` runs it from the
command line (the pilot, ``benchmarks/pretrain_pilot.py``, runs one such process per size).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from prismlib.artifacts import load_or_discard, save_atomic
from prismlib.devices import torch_threads
from prismlib.pretrain.evaluation import HeldOut, heldout_loss, heldout_set, unigram_model
from prismlib.pretrain.model import BertSize, new_bert
from prismlib.pretrain.sequences import PretrainInputs
from prismlib.prism import derived_seed, mlm_loss, training_batch
from prismlib.progress import progress_bar

SCHEDULES = ("constant", "linear")
RECIPE_VERSION = 1
"""Moves every pretraining key when the loop's meaning changes."""
STATE = "state.pt"
CURVE = "curve.csv"
RUN = "run.json"
CURVE_COLUMNS = ("step", "tokens", "seconds", "lr", "train_loss", "heldout_loss", "unigram_loss", "gain")


@dataclass(frozen=True)
class PretrainConfig:
    """A pretraining recipe: everything that decides the trained weights.

    Attributes:
        size: the architecture.
        seq_len: tokens per input (special tokens included); batch_size: inputs per step.
        lr: peak learning rate, reached after ``warmup_steps`` of linear warm-up.
        schedule: ``"constant"`` after the warm-up, or ``"linear"`` decay to 0 at ``total_steps``.
        total_steps: the schedule's length (required by ``"linear"``; ``None``: open-ended).
        weight_decay, betas, eps: AdamW's (decay not applied to biases and LayerNorm).
        clip: gradient-norm clipping (0: none).
        mask_prob: BERT's selection rate (80/10/10 of the selected).
        seed: initialisation, data order, masking and dropout.
        attn: ``transformers``' attention implementation (``"sdpa"`` or ``"eager"``).
    """

    size: BertSize
    seq_len: int = 128
    batch_size: int = 32
    lr: float = 1e-3
    warmup_steps: int = 500
    schedule: str = "constant"
    total_steps: int | None = None
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-6
    clip: float = 1.0
    mask_prob: float = 0.15
    seed: int = 0
    attn: str = "sdpa"

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.schedule == "linear" and not self.total_steps:
            raise ValueError("a linear decay needs total_steps")
        if self.seq_len > self.size.max_positions:
            raise ValueError(f"seq_len {self.seq_len} exceeds the model's {self.size.max_positions} positions")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.seq_len

    def describe(self) -> dict[str, Any]:
        """The recipe as a JSON-able dict (with :data:`RECIPE_VERSION`)."""
        d = asdict(self)
        d["betas"] = list(self.betas)
        return {"recipe_version": RECIPE_VERSION, **d}


def recipe_key(config: PretrainConfig, corpus_digest: str, tokenizer_digest: str) -> str:
    """SHA-256 (16 hex) of the recipe, the corpus digest and the tokenizer digest: a run's key."""
    text = json.dumps({"config": config.describe(), "corpus": corpus_digest, "tokenizer": tokenizer_digest}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def learning_rate(config: PretrainConfig, step: int) -> float:
    """The learning rate of step ``step`` (0-based): ``lr * (step + 1) / warmup_steps`` during
    the warm-up, then ``lr`` (constant) or ``lr`` decaying linearly to 0 at ``total_steps``."""
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    if config.schedule == "constant":
        return config.lr
    assert config.total_steps is not None
    span = max(config.total_steps - config.warmup_steps, 1)
    return config.lr * max(0.0, (config.total_steps - step) / span)


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
        key: :func:`recipe_key`.
        steps: optimizer steps so far; tokens: training tokens seen (steps x batch x seq_len).
        seconds: wall time of every call so far; train_seconds: of the steps alone (no checks).
        curve: one dict per held-out check (:data:`CURVE_COLUMNS`).
        stop: why this call stopped (``"steps"``, ``"minutes"``, ``"done"``: nothing left to do).
        resumed_from: the step this call started from.
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


def pretrain(
    config: PretrainConfig,
    inputs: PretrainInputs,
    state_dir: Path,
    *,
    mask_id: int,
    special: Sequence[int],
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
        minutes: this call's time budget (``None``: none); it stops cleanly after the step
            that spends it, checks the held-out loss and saves the state.
        max_steps: stop at this step (default ``config.total_steps``; one of the two, or
            ``minutes``, must bound the run).
        eval_every: steps between held-out checks (and one before the first step).
        checkpoint_every: steps between saved states.
        heldout_inputs: held-out inputs scored at each check (the first ones; ``None``: all).
        threads: torch threads for this call (``None``: as set; one by default: on a small
            shared CPU one thread per process is the fastest use of the cores).
        progress: a tqdm bar (on stderr, or the headless log: :func:`prismlib.progress.progress_bar`).

    Returns:
        a :class:`PretrainResult`.

    Raises:
        ValueError: inputs of another length, no bound on the run, or a state in
            ``state_dir`` written by another recipe or corpus.
    """
    if inputs.seq_len != config.seq_len:
        raise ValueError(f"inputs have {inputs.seq_len} tokens, the recipe {config.seq_len}")
    limit = max_steps if max_steps is not None else config.total_steps
    if limit is None and minutes is None:
        raise ValueError("nothing bounds the run: give max_steps, config.total_steps or minutes")
    key = recipe_key(config, inputs.corpus_digest, inputs.tokenizer_digest)
    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    vocab = config.size.vocab_size
    unigram = unigram_model(inputs.train, vocab, special)
    held = heldout_set(inputs.heldout, unigram, mask_id, special, derived_seed(config.seed, 2), heldout_inputs)
    special_t = torch.tensor(sorted(set(int(i) for i in special)))

    with torch_threads(threads), torch.random.fork_rng(devices=[]):
        model = new_bert(config.size, config.seed, config.attn)
        opt = _optimizer(model, config)
        result = PretrainResult(model, key)
        stored = load_or_discard(state_dir / STATE)
        if stored is not None:
            if stored["key"] != key:
                raise ValueError(
                    f"{state_dir / STATE} holds run {stored['key']} ({stored['config']}), not {key} ({config.describe()}): "
                    "another recipe or corpus; give another --out folder or delete that one"
                )
            model.load_state_dict(stored["model"])
            opt.load_state_dict(stored["optimizer"])
            result.steps = result.resumed_from = int(stored["step"])
            result.seconds, result.train_seconds = float(stored["seconds"]), float(stored["train_seconds"])
            result.curve = list(stored["curve"])
        result.tokens = result.steps * config.tokens_per_step

        def check(train_loss: float) -> None:
            loss = heldout_loss(model, held)
            row = {
                "step": result.steps,
                "tokens": result.tokens,
                "seconds": round(result.seconds, 2),
                "lr": learning_rate(config, max(result.steps - 1, 0)) if result.steps else 0.0,
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
            }
            save_atomic(state_dir / STATE, **state)
            _write_run(state_dir / RUN, config, inputs, held, result, threads, limit)

        if not result.curve:
            check(math.nan)
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
                for group in opt.param_groups:
                    group["lr"] = learning_rate(config, step)
                x, y = training_batch(inputs.train, step, config.batch_size, config.seed, special_t, mask_id, vocab, config.mask_prob)
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
                if result.steps % eval_every == 0 or result.stop:
                    check(sum(losses) / len(losses))
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
            _write_run(state_dir / RUN, config, inputs, held, result, threads, limit)
    model.eval()
    return result


def _write_run(
    path: Path,
    config: PretrainConfig,
    inputs: PretrainInputs,
    held: HeldOut,
    result: PretrainResult,
    threads: int | None,
    limit: int | None,
) -> None:
    info = {
        "key": result.key,
        "config": config.describe(),
        "corpus_digest": inputs.corpus_digest,
        "tokenizer_digest": inputs.tokenizer_digest,
        "train_inputs": len(inputs.train),
        "heldout_inputs": len(held.inputs),
        "heldout_masked": held.masked,
        "unigram_loss": held.unigram_loss,
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


def offline_inputs(seq_len: int, progress: bool = True) -> tuple[PretrainInputs, int, list[int]]:
    """The offline corpus (:func:`prismlib.pretrain.corpus.build_corpus`: refuses an overlap with
    an evaluated split) as packed inputs, with the ``[MASK]`` id and the special ids."""
    from prismlib.pretrain.corpus import build_corpus
    from prismlib.pretrain.model import pretraining_tokenizer, special_ids
    from prismlib.pretrain.sequences import pretraining_inputs

    tokenizer = pretraining_tokenizer()
    corpus = build_corpus()
    return pretraining_inputs(corpus, tokenizer, seq_len, progress=progress), int(tokenizer.mask_token_id), special_ids(tokenizer)


def synthetic_inputs(seq_len: int, n_docs: int = 400, seed: int = 0) -> tuple[PretrainInputs, int, list[int]]:
    """Generated text (:func:`prismlib.pretrain.corpus.synthetic_documents`) as packed inputs,
    every 50th document held out: for tests and smoke runs, never the real corpus."""
    from prismlib.pretrain.corpus import corpus_digest, split_heldout, synthetic_documents
    from prismlib.pretrain.model import pretraining_tokenizer, special_ids
    from prismlib.pretrain.sequences import pack_sequences, tokenize_documents, tokenizer_digest

    tok = pretraining_tokenizer()
    train, heldout = split_heldout(synthetic_documents(n_docs, seed), every=10)
    packed = [pack_sequences(tokenize_documents(tok, d), seq_len, tok.cls_token_id, tok.sep_token_id) for d in (train, heldout)]
    inputs = PretrainInputs(packed[0], packed[1], corpus_digest(train, heldout), tokenizer_digest(tok))
    return inputs, int(tok.mask_token_id), special_ids(tok)


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
    )
    with torch_threads(args.threads):
        inputs, mask_id, special = (
            offline_inputs(args.seq_len, not args.no_progress) if args.corpus == "offline" else synthetic_inputs(args.seq_len)
        )
    max_steps = None if args.max_tokens is None else math.ceil(args.max_tokens / config.tokens_per_step)
    result = pretrain(
        config,
        inputs,
        args.out,
        mask_id=mask_id,
        special=special,
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
        f"held-out {last['heldout_loss']:.3f} vs unigram {last['unigram_loss']:.3f} nats (gain {last['gain']:+.3f}), stop: {result.stop}"
    )
    return result


if __name__ == "__main__":
    main()
