"""The training loop of the LSTM language models (AWD-LSTM's recipe).

:func:`train_lm` trains in place: variable-length BPTT, activation (AR) and temporal
activation (TAR) regularisation, gradient clipping, and NT-ASGD (SGD that switches to
averaged SGD when the validation loss stops improving for ``nonmono`` evaluations), the
annealed SGD of :mod:`prismlib.anneal` (which stops by its own rule) or Adam.
After every epoch (round) the validation perplexity is recorded and a checkpoint
written; a second call with the same checkpoint resumes exactly (the RNG states and the
schedule's state are in it).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from prismlib.anneal import STOPPED_BY_RULE, AnnealRule, AnnealState, anneal_check
from prismlib.artifacts import load_or_discard, save_atomic
from prismlib.lstm.convergence import LearningCurve, model_gate
from prismlib.lstm.evaluation import perplexity, token_nll
from prismlib.lstm.model import LSTMLM, batchify, detach_state
from prismlib.profiles import LSTMSettings
from prismlib.progress import progress_bar


@dataclass
class TrainHistory:
    """Record of :func:`train_lm`: per epoch, and the learning curve between epochs.

    Attributes:
        epochs: completed epochs; ``val_ppl`` one entry per epoch; ``asgd_from`` the epoch
            at which NT-ASGD switched to averaging (``None`` if it never did);
            ``tokens`` training tokens seen; ``seconds`` training time.
        steps: BPTT steps taken.
        epoch_tokens: training tokens at the end of each epoch (aligned with ``val_ppl``).
        curve_tokens, curve_ppl: the learning curve: training tokens and perplexity on the
            fixed validation subset (``LSTMSettings.curve_tokens``) every
            ``LSTMSettings.curve_every`` steps.
        snapshots: training tokens -> per-token test NLL ``(n,)`` float32 of the model as
            evaluated then (averaged weights once NT-ASGD switched): at half the budget
            (fixed budgets) or after epochs 1, 2, 3, 4, 6, 8, 12, ... (``until_converged``).
        anneal: the ``anneal`` schedule's state (decays, why the run stopped; ``None`` for
            the other optimizers).
        lr_scale: per epoch (round), the learning rate it trained at over the initial one.
        val_snapshots: ``anneal`` only: round -> per-token validation NLL ``(n,)`` float32 of
            the best-validation model so far, at every decay and when the run stops (the
            effect-stability gate compares a claim's contrast between the last two).

    Fields added after the first cpu runs default to ``None`` at class level, so histories
    pickled before them load (they read as empty).
    """

    epochs: int = 0
    val_ppl: list[float] = field(default_factory=list)
    asgd_from: int | None = None
    tokens: int = 0
    seconds: float = 0.0
    steps: int = 0
    epoch_tokens: list[int] | None = None
    curve_tokens: list[int] | None = None
    curve_ppl: list[float] | None = None
    snapshots: dict[int, np.ndarray] | None = None
    curve_source: str | None = None
    anneal: AnnealState | None = None
    lr_scale: list[float] | None = None
    val_snapshots: dict[int, np.ndarray] | None = None

    @property
    def stop_reason(self) -> str | None:
        """Why an ``anneal`` run ended (:data:`prismlib.anneal.STOP_REASONS`), ``None``
        while it runs and for the other optimizers."""
        return None if self.anneal is None else self.anneal.stop

    def learning_curve(self) -> LearningCurve | None:
        """The validation curve: the subset points if any were recorded, else the per-epoch
        validation perplexities (``None`` when neither has a token count: histories written
        before the curves were kept)."""
        if self.curve_tokens:
            return LearningCurve(np.array(self.curve_tokens), np.array(self.curve_ppl), self.curve_source or "")
        if self.epoch_tokens:
            return LearningCurve(np.array(self.epoch_tokens), np.array(self.val_ppl), "validation after every epoch")
        return None

    def snapshot_near(self, tokens: float) -> tuple[int, np.ndarray] | None:
        """The stored test NLL snapshot ``(tokens, (n,) float64)`` nearest to ``tokens`` on a log
        scale (``None`` if none was stored)."""
        if not self.snapshots:
            return None
        t = min(self.snapshots, key=lambda k: abs(math.log(k / max(tokens, 1))))
        return t, self.snapshots[t].astype(np.float64)


def _make_optimizer(model: nn.Module, s: LSTMSettings, asgd: bool) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if s.optimizer == "adam":
        return torch.optim.Adam(params, lr=s.lr, weight_decay=s.wdecay)
    if asgd:
        return torch.optim.ASGD(params, lr=s.lr, t0=0, lambd=0.0, weight_decay=s.wdecay)
    return torch.optim.SGD(params, lr=s.lr, weight_decay=s.wdecay, foreach=True)  # one fused call per step, the same numbers


class _Averaged:
    """Context: swap ASGD's averaged parameters in (evaluation, saving), then back."""

    saved: list[tuple[torch.Tensor, torch.Tensor]]  # (parameter, its own values) while swapped

    def __init__(self, opt: torch.optim.Optimizer) -> None:
        self.opt, self.saved = opt, []

    def __enter__(self) -> None:
        if isinstance(self.opt, torch.optim.ASGD):
            for group in self.opt.param_groups:
                for p in group["params"]:
                    if "ax" in self.opt.state[p]:
                        self.saved.append((p, p.data.clone()))
                        p.data.copy_(self.opt.state[p]["ax"])

    def __exit__(self, *exc: object) -> None:
        for p, data in self.saved:
            p.data.copy_(data)
        self.saved = []


def recipe_summary(s: LSTMSettings) -> str:
    """One line a notebook prints: the model of ``s`` and how it is trained."""
    sizes = [s.hidden] * (s.layers - 1) + [s.emb]
    output = f"adaptive softmax, cutoffs {s.cutoffs}" if s.cutoffs else "full softmax"
    round_ = f"{s.steps_per_epoch} steps" if s.steps_per_epoch else f"1/{s.checks_per_pass} pass" if s.checks_per_pass > 1 else "a pass"
    if s.optimizer == "anneal" and s.fixed_path:
        how = (
            f"SGD at lr {s.lr:g} for {s.min_rounds} rounds of {round_}, then divided by {s.decay_factor:g} after each of "
            f"the next {s.decays} rounds, stopped one round later (a fixed path, the same for every model)"
        )
    elif s.optimizer == "anneal":
        row = f" for {s.decay_patience} checks in a row" if s.decay_patience > 1 else ""
        how = (
            f"SGD at lr {s.lr:g}, divided by {s.decay_factor:g} when full validation improves by less than "
            f"{s.decay_tolerance:.1%}{row} (checked every {round_}), stopped by that rule after {s.decays} decays "
            f"(cap {s.epochs} rounds)"
        )
    else:
        name = "NT-ASGD" if s.optimizer == "ntasgd" else s.optimizer
        how = f"{name} at lr {s.lr:g}, {s.epochs} epochs of {round_}"
    return f"{s.layers} layers {sizes}, emb {s.emb} (tied; {output}); {how}; batch {s.batch_size} x ~{s.bptt} tokens"


def anneal_rule(s: LSTMSettings, learn_below: float | None) -> AnnealRule:
    """The ``anneal`` schedule of ``s`` (cap: ``s.epochs`` rounds), with the bigram guard ``learn_below``.

    On a fixed path (``s.fixed_path``) no check counts as an improvement (an infinite
    tolerance) and one failed check makes a stall, so the rate falls after each of the
    ``s.decays`` rounds that follow ``s.min_rounds`` and the run stops one round later,
    whatever validation says (once the model beats the bigram guard):
    :meth:`prismlib.anneal.AnnealSettings.rule` of ``s.schedule``."""
    return s.schedule.rule(s.epochs, learn_below, fixed_path=s.fixed_path)


def train_lm(
    model: LSTMLM,
    train_ids: np.ndarray,
    valid_ids: np.ndarray,
    s: LSTMSettings,
    seed: int,
    checkpoint: Path | None = None,
    desc: str = "train",
    progress: bool = True,
    test_ids: np.ndarray | None = None,
    on_epoch: Callable[[TrainHistory], None] | None = None,
    learn_below: float | None = None,
) -> TrainHistory:
    """Train ``model`` in place (AWD-LSTM recipe), keep the weights of the best validation epoch.

    An *epoch* is a full pass over ``train_ids`` or, if ``s.steps_per_epoch`` is set, that
    many BPTT steps (the data cursor carries on where the last epoch stopped), or
    ``1 / s.checks_per_pass`` of a pass. After each
    epoch the validation perplexity is computed (on the averaged weights once NT-ASGD has
    switched) and a checkpoint is written; calling again with the same ``checkpoint``
    resumes. All randomness comes from ``seed`` (the global RNG is restored afterwards).
    ``progress=False`` hides the per-step bar (worker processes of :mod:`prismlib.jobcache`).

    The learning curve: every ``s.curve_every`` steps the perplexity of the first
    ``s.curve_tokens`` tokens of ``valid_ids`` is recorded (evaluation draws no random
    numbers, so the curve does not change the trained weights). With ``test_ids`` the
    per-token test NLL is stored at half the budget (``s.until_converged``: after epochs
    1, 2, 3, 4, 6, 8, 12, ...), for the effect-stability gate. With ``s.until_converged``
    ``s.epochs`` is a cap: training stops after the first epoch at which the model gate
    (:func:`prismlib.lstm.model_gate` with ``s.converge_share``, ``s.converge_tolerance``)
    passes on the curve. With ``s.optimizer == "anneal"`` the schedule of
    :func:`anneal_rule` decides after every epoch (round), on the full validation
    perplexity, whether to divide the rate or stop; ``learn_below`` is its bigram guard
    (the PTB bigram's validation perplexity). ``on_epoch(history)`` is called after every
    epoch's checkpoint.

    Returns:
        The history; the model holds the best-validation weights on return.
    """
    device = next(model.parameters()).device
    data = batchify(train_ids, s.batch_size).to(device)
    valid = valid_ids if s.valid_tokens is None else valid_ids[: s.valid_tokens]
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        hist, opt, cursor, state = TrainHistory(), _make_optimizer(model, s, asgd=False), 0, None
        best: tuple[Any, ...] | None = None  # (val ppl, state dict[, val NLL (n,)])
        ck = None if checkpoint is None else load_or_discard(checkpoint, map_location=device)  # a corrupt one: start over
        if ck is not None:
            model.load_state_dict(ck["model"])
            hist = ck["history"]
            opt = _make_optimizer(model, s, asgd=hist.asgd_from is not None)
            opt.load_state_dict(ck["optimizer"])
            cursor, best, state = ck["cursor"], ck["best"], ck["state"]
            rng.bit_generator.state = ck["numpy_rng"]
            # RNG states are CPU byte tensors whatever the device (map_location moved them there)
            torch.set_rng_state(ck["torch_rng"].cpu())
            if device.type == "cuda" and ck.get("cuda_rng") is not None:
                torch.cuda.set_rng_state(ck["cuda_rng"].cpu(), device)
        rule = anneal_rule(s, learn_below) if s.optimizer == "anneal" else None
        if rule is not None and hist.anneal is None:
            hist.anneal = AnnealState()
        elif rule is not None and hist.anneal is not None and hist.anneal.stop != STOPPED_BY_RULE and hist.epochs < s.epochs:
            hist.anneal = replace(hist.anneal, stop=None)  # a run that ended at a smaller cap goes on
        steps = s.steps_per_epoch or math.ceil((data.size(1) - 1) / s.bptt / s.checks_per_pass)
        carry = s.steps_per_epoch is not None or s.checks_per_pass > 1  # the cursor runs on between epochs
        half_step = None if s.until_converged or rule is not None else max(1, s.epochs * steps // 2)
        curve_valid = valid_ids[: s.curve_tokens]
        if hist.steps == 0 and hist.epochs > 0:  # a history pickled before steps were counted
            hist.steps = hist.epochs * steps
        bar = progress_bar(total=s.epochs * steps, initial=hist.epochs * steps, desc=desc, leave=False, mininterval=2, disable=not progress)

        def evaluate(ids: np.ndarray) -> np.ndarray:
            with _Averaged(opt):
                return token_nll(model, ids, s.eval_batch, s.bptt)

        def snapshot() -> None:
            if test_ids is not None:
                hist.snapshots = {**(hist.snapshots or {}), hist.tokens: evaluate(test_ids).astype(np.float32)}

        def stopped() -> bool:
            return (hist.anneal is not None and hist.anneal.stop is not None) or (s.until_converged and _converged(hist, s))

        while hist.epochs < s.epochs and not stopped():
            scale = 1.0 if hist.anneal is None else hist.anneal.scale
            model.train()
            t0 = time.perf_counter()
            for _ in range(steps):
                if cursor >= data.size(1) - 2:
                    cursor, state = 0, None
                    if not carry:
                        break
                bptt = s.bptt if rng.random() < 0.95 else s.bptt / 2
                seq = min(max(5, int(rng.normal(bptt, 5))), s.bptt + 20, data.size(1) - 1 - cursor)
                for group in opt.param_groups:
                    group["lr"] = s.lr * scale * seq / s.bptt if s.optimizer != "adam" else s.lr
                x, y = data[:, cursor : cursor + seq], data[:, cursor + 1 : cursor + 1 + seq]
                state = None if state is None else detach_state(state)
                out = model(x, state)
                state = out.state
                loss = model.nll(out.last_dropped, y).mean()
                if s.alpha:  # AR and TAR only where they weigh: a zero-weight term adds nothing but its cost
                    loss = loss + s.alpha * out.last_dropped.pow(2).mean()
                if s.beta:
                    loss = loss + s.beta * (out.last_raw[:, 1:] - out.last_raw[:, :-1]).pow(2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if s.clip > 0:
                    nn.utils.clip_grad_norm_(model.parameters(), s.clip)
                opt.step()
                cursor += seq
                hist.tokens += seq * s.batch_size
                hist.steps += 1
                bar.update(1)
                if s.curve_every and hist.steps % s.curve_every == 0:
                    hist.curve_tokens = [*(hist.curve_tokens or []), hist.tokens]
                    hist.curve_ppl = [*(hist.curve_ppl or []), perplexity(evaluate(curve_valid))]
                    hist.curve_source = f"first {len(curve_valid)} tokens of the validation split"
                    model.train()
                if hist.steps == half_step:
                    snapshot()
                    model.train()
            if not carry:
                cursor, state = 0, None
            hist.seconds += time.perf_counter() - t0
            with _Averaged(opt):
                val_nll = token_nll(model, valid, s.eval_batch, s.bptt)
                val = perplexity(val_nll)
                if best is None or val < best[0]:
                    best = (val, copy.deepcopy(model.state_dict()), val_nll.astype(np.float32))
            hist.val_ppl.append(val)
            hist.lr_scale = [*(hist.lr_scale or []), scale]
            hist.epoch_tokens = [*(hist.epoch_tokens or []), hist.tokens]
            hist.epochs += 1
            if s.until_converged and _snapshot_epoch(hist.epochs):
                snapshot()
            bar.set_postfix(val_ppl=f"{val:.1f}")
            if rule is not None and hist.anneal is not None:
                hist.anneal, action = anneal_check(hist.anneal, val, rule)
                if action != "continue":  # a decay or the end: the best model so far on validation
                    hist.val_snapshots = {**(hist.val_snapshots or {}), hist.epochs: best[2]}
            # AWD-LSTM's trigger: the new loss against the losses before it, older than nonmono checks
            losses = [math.log(v) for v in hist.val_ppl]
            before = losses[:-1]
            stalled = len(before) > s.nonmono and losses[-1] > min(before[: -s.nonmono])
            last_ones = 0 < s.average_last == s.epochs - hist.epochs  # switch for the last average_last epochs
            if s.optimizer == "ntasgd" and hist.asgd_from is None and (stalled or last_ones):
                hist.asgd_from = hist.epochs
                opt = _make_optimizer(model, s, asgd=True)
            if checkpoint is not None:
                save_atomic(
                    checkpoint,
                    model=model.state_dict(),
                    optimizer=opt.state_dict(),
                    history=hist,
                    cursor=cursor,
                    state=None if state is None else detach_state(state),
                    best=best,
                    numpy_rng=rng.bit_generator.state,
                    torch_rng=torch.get_rng_state(),
                    cuda_rng=torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                )
            if on_epoch is not None:
                on_epoch(hist)
        bar.close()
    if best is not None:
        model.load_state_dict(best[1])
    return hist


def _snapshot_epoch(epoch: int) -> bool:
    """Epochs 1, 2, 3, 4, 6, 8, 12, 16, ... (``2^k`` and ``3 * 2^k``): the test NLL snapshots of an
    open-ended run, so that one lies within a factor 4/3 of half of any later budget."""
    while epoch % 2 == 0:
        epoch //= 2
    return epoch in (1, 3)


def _converged(hist: TrainHistory, s: LSTMSettings) -> bool:
    """Whether the model gate passes on ``hist``'s curve (the stop rule of ``until_converged``)."""
    return model_gate("model", hist.learning_curve(), s.converge_share, s.converge_tolerance).passed
