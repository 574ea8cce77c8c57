"""A pretraining recipe: what decides the trained weights, and the key that names a run.

:class:`PretrainConfig` is the recipe (size, lengths, batch, AdamW, schedule, masking, seed,
and BERT's second phase: the last ``long_share`` of the steps on ``long_seq_len``-token inputs,
:attr:`PretrainConfig.long_from`, the same tokens per step); :func:`recipe_key` hashes it with
the corpus and tokenizer digests (:func:`recipe_description`, also a committed state's
description; a *continuation* names the done run it starts from, :attr:`PretrainConfig.base`).
:func:`learning_rate` is the schedule: linear warm-up, then constant or linear
decay, and after each *boundary* (a step where the run resumed from a committed state, whose
fp16 weights :func:`cross_boundary` gives and whose AdamW moments restart) a re-warm-up over
:data:`REWARM_STEPS`. :func:`check_lengths` says at which lengths a held-out check is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from prismlib.jobcache import job_key
from prismlib.pretrain.model import BertSize, half_weights, load_half_weights

SCHEDULES = ("constant", "linear")
RECIPE_VERSION = 2
"""Moves every pretraining key when the loop's meaning changes (2: the long phase, boundaries)."""
REWARM_STEPS = 100
"""Steps of the linear re-warm-up of the rate after a boundary (a resume from a committed state,
whose AdamW moments restart at zero): step ``b + i`` runs at ``(i + 1) / REWARM_STEPS`` of the
scheduled rate, so the first updates of the fresh moments stay small."""


@dataclass(frozen=True)
class PretrainConfig:
    """A pretraining recipe: everything that decides the trained weights (with the run's
    boundaries, :func:`learning_rate`).

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
        long_seq_len: BERT's second phase: the steps from :attr:`long_from` train on inputs of
            this many tokens, :attr:`long_batch` of them (the tokens per step kept); ``None``: one
            phase. Needs ``total_steps``, more than ``seq_len`` and at most the model's
            positions, and ``batch_size * seq_len`` divisible by it.
        long_share: the share of ``total_steps`` in the long phase.
        base: a *continuation*: the key of the done committed state whose weights the run starts
            from instead of a new BERT (its AdamW fresh, its schedule this recipe's from step 0);
            ``None``: from scratch. Named in :meth:`describe` only when set, so the keys of
            runs from scratch stay as they were.
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
    long_seq_len: int | None = None
    long_share: float = 0.1
    base: str | None = None

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.schedule == "linear" and not self.total_steps:
            raise ValueError("a linear decay needs total_steps")
        if self.seq_len > self.size.max_positions:
            raise ValueError(f"seq_len {self.seq_len} exceeds the model's {self.size.max_positions} positions")
        if self.long_seq_len is not None:
            self._check_long_phase(self.long_seq_len)

    def _check_long_phase(self, long_seq_len: int) -> None:
        if not self.total_steps:
            raise ValueError("a long phase (long_seq_len) is a share of a bounded schedule: give total_steps (--total-steps)")
        if not self.seq_len < long_seq_len <= self.size.max_positions:
            raise ValueError(
                f"long_seq_len {long_seq_len} must exceed seq_len {self.seq_len} and fit the model's {self.size.max_positions} positions"
            )
        if self.tokens_per_step % long_seq_len:
            raise ValueError(
                f"the long phase keeps the {self.tokens_per_step} tokens per step (batch_size x seq_len), "
                f"which do not divide by long_seq_len {long_seq_len}: change the batch or the long length"
            )
        if not 0 < round(self.long_share * self.total_steps) <= self.total_steps:
            raise ValueError(
                f"long_share {self.long_share} of {self.total_steps} steps is no step or more than all: give a share in (0, 1]"
            )

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.seq_len

    @property
    def long_from(self) -> int | None:
        """The long phase's first step, ``total_steps - round(long_share * total_steps)``
        (``None``: one phase)."""
        if self.long_seq_len is None or self.total_steps is None:
            return None
        return self.total_steps - round(self.long_share * self.total_steps)

    @property
    def long_batch(self) -> int | None:
        """Inputs per step of the long phase: ``batch_size * seq_len // long_seq_len``."""
        return None if self.long_seq_len is None else self.tokens_per_step // self.long_seq_len

    def shape_at(self, step: int) -> tuple[int, int]:
        """``(inputs, tokens per input)`` of step ``step`` (0-based): the long phase's from :attr:`long_from`."""
        if self.long_from is not None and step >= self.long_from:
            assert self.long_batch is not None and self.long_seq_len is not None
            return self.long_batch, self.long_seq_len
        return self.batch_size, self.seq_len

    def describe(self) -> dict[str, Any]:
        """The recipe as a JSON-able dict (with :data:`RECIPE_VERSION`)."""
        d = asdict(self)
        d["betas"] = list(self.betas)
        if self.base is None:
            del d["base"]
        return {"recipe_version": RECIPE_VERSION, **d}


def recipe_description(config: PretrainConfig, corpus_digest: str, tokenizer_digest: str) -> dict[str, Any]:
    """What a run's key hashes: the recipe (:meth:`PretrainConfig.describe`), the corpus digest
    and the tokenizer digest (also a committed state's description, :mod:`prismlib.pretrain.record`)."""
    return {"config": config.describe(), "corpus": corpus_digest, "tokenizer": tokenizer_digest}


def recipe_key(config: PretrainConfig, corpus_digest: str, tokenizer_digest: str) -> str:
    """SHA-256 (16 hex) of :func:`recipe_description` (:func:`prismlib.jobcache.job_key`, as a
    record's key): a run's key."""
    return job_key(recipe_description(config, corpus_digest, tokenizer_digest))


def learning_rate(config: PretrainConfig, step: int, boundaries: Sequence[int] = ()) -> float:
    """The learning rate of step ``step`` (0-based): ``lr * (step + 1) / warmup_steps`` during
    the warm-up, then ``lr`` (constant) or ``lr`` decaying linearly to 0 at ``total_steps``;
    after a boundary ``b`` (the last one ``<= step``) times ``min(1, (step - b + 1) / REWARM_STEPS)``."""
    if step < config.warmup_steps:
        rate = config.lr * (step + 1) / config.warmup_steps
    elif config.schedule == "constant":
        rate = config.lr
    else:
        assert config.total_steps is not None
        span = max(config.total_steps - config.warmup_steps, 1)
        rate = config.lr * max(0.0, (config.total_steps - step) / span)
    last = max((b for b in boundaries if b <= step), default=None)
    return rate if last is None else rate * min(1.0, (step - last + 1) / REWARM_STEPS)


def check_lengths(config: PretrainConfig, steps: int) -> list[int]:
    """The input lengths of a held-out check after ``steps`` steps: that of the last step trained
    and that of the next, so both at :attr:`PretrainConfig.long_from` (the curve shows the jump)
    and one elsewhere (the first check: the first step's)."""
    last, nxt = config.shape_at(max(steps - 1, 0))[1], config.shape_at(steps)[1]
    return [last] if last == nxt else [last, nxt]


def cross_boundary(model: torch.nn.Module) -> None:
    """Round ``model``'s weights through float16 in place, as a committed state keeps them
    (:func:`~prismlib.pretrain.model.half_weights`): what a resume from one does to the weights
    (a second call changes nothing)."""
    load_half_weights(model, half_weights(model))
