"""The training loop of the LSTM language models (AWD-LSTM's recipe).

:func:`train_lm` trains in place: variable-length BPTT, activation (AR) and temporal
activation (TAR) regularisation, gradient clipping, and NT-ASGD (SGD that switches to
averaged SGD when the validation loss stops improving for ``nonmono`` evaluations) or
Adam. After every epoch the validation perplexity is recorded and a checkpoint written;
a second call with the same checkpoint resumes exactly (the RNG states are in it).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from prismlib.lstm.evaluation import perplexity, token_nll
from prismlib.lstm.model import LSTMLM, batchify, detach_state
from prismlib.paths import load_checkpoint, save_atomic
from prismlib.profiles import LSTMSettings
from prismlib.workers import progress_bar


@dataclass
class TrainHistory:
    """Per-epoch record of :func:`train_lm`.

    Attributes:
        epochs: completed epochs; ``val_ppl`` one entry per epoch; ``asgd_from`` the epoch
            at which NT-ASGD switched to averaging (``None`` if it never did);
            ``tokens`` training tokens seen; ``seconds`` training time.
    """

    epochs: int = 0
    val_ppl: list[float] = field(default_factory=list)
    asgd_from: int | None = None
    tokens: int = 0
    seconds: float = 0.0


def _make_optimizer(model: nn.Module, s: LSTMSettings, asgd: bool) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if s.optimizer == "adam":
        return torch.optim.Adam(params, lr=s.lr, weight_decay=s.wdecay)
    if asgd:
        return torch.optim.ASGD(params, lr=s.lr, t0=0, lambd=0.0, weight_decay=s.wdecay)
    return torch.optim.SGD(params, lr=s.lr, weight_decay=s.wdecay)


class _Averaged:
    """Context: swap ASGD's averaged parameters in (evaluation, saving), then back."""

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


def train_lm(
    model: LSTMLM,
    train_ids: np.ndarray,
    valid_ids: np.ndarray,
    s: LSTMSettings,
    seed: int,
    checkpoint: Path | None = None,
    desc: str = "train",
    progress: bool = True,
) -> TrainHistory:
    """Train ``model`` in place (AWD-LSTM recipe), keep the weights of the best validation epoch.

    An *epoch* is a full pass over ``train_ids`` or, if ``s.steps_per_epoch`` is set, that
    many BPTT steps (the data cursor carries on where the last epoch stopped). After each
    epoch the validation perplexity is computed (on the averaged weights once NT-ASGD has
    switched) and a checkpoint is written; calling again with the same ``checkpoint``
    resumes. All randomness comes from ``seed`` (the global RNG is restored afterwards).
    ``progress=False`` hides the per-step bar (worker processes of :mod:`prismlib.runs.jobs`).

    Returns:
        The history; the model holds the best-validation weights on return.
    """
    if s.optimizer not in ("ntasgd", "adam"):
        raise ValueError(f"optimizer must be 'ntasgd' or 'adam', got {s.optimizer!r}")
    device = next(model.parameters()).device
    data = batchify(train_ids, s.batch_size).to(device)
    valid = valid_ids if s.valid_tokens is None else valid_ids[: s.valid_tokens]
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        hist, opt, cursor, state = TrainHistory(), _make_optimizer(model, s, asgd=False), 0, None
        best: tuple[float, dict] | None = None
        if checkpoint is not None and checkpoint.exists():
            ck = load_checkpoint(checkpoint, map_location=device)
            model.load_state_dict(ck["model"])
            hist = ck["history"]
            opt = _make_optimizer(model, s, asgd=hist.asgd_from is not None)
            opt.load_state_dict(ck["optimizer"])
            cursor, best, state = ck["cursor"], ck["best"], ck["state"]
            rng.bit_generator.state = ck["numpy_rng"]
            torch.set_rng_state(ck["torch_rng"])
            if device.type == "cuda" and ck.get("cuda_rng") is not None:
                torch.cuda.set_rng_state(ck["cuda_rng"], device)
        steps = s.steps_per_epoch or math.ceil((data.size(1) - 1) / s.bptt)
        bar = progress_bar(total=s.epochs * steps, initial=hist.epochs * steps, desc=desc, leave=False, mininterval=2, disable=not progress)
        while hist.epochs < s.epochs:
            model.train()
            t0 = time.perf_counter()
            for _ in range(steps):
                if cursor >= data.size(1) - 2:
                    cursor, state = 0, None
                    if s.steps_per_epoch is None:
                        break
                bptt = s.bptt if rng.random() < 0.95 else s.bptt / 2
                seq = min(max(5, int(rng.normal(bptt, 5))), s.bptt + 20, data.size(1) - 1 - cursor)
                for group in opt.param_groups:
                    group["lr"] = s.lr * seq / s.bptt if s.optimizer == "ntasgd" else s.lr
                x, y = data[:, cursor : cursor + seq], data[:, cursor + 1 : cursor + 1 + seq]
                state = None if state is None else detach_state(state)
                out = model(x, state)
                state = out.state
                loss = model.nll(out.last_dropped, y).mean()
                loss = loss + s.alpha * out.last_dropped.pow(2).mean()
                loss = loss + s.beta * (out.last_raw[:, 1:] - out.last_raw[:, :-1]).pow(2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if s.clip > 0:
                    nn.utils.clip_grad_norm_(model.parameters(), s.clip)
                opt.step()
                cursor += seq
                hist.tokens += seq * s.batch_size
                bar.update(1)
            if s.steps_per_epoch is None:
                cursor, state = 0, None
            hist.seconds += time.perf_counter() - t0
            with _Averaged(opt):
                val = perplexity(token_nll(model, valid, s.eval_batch, s.bptt))
                if best is None or val < best[0]:
                    best = (val, copy.deepcopy(model.state_dict()))
            hist.val_ppl.append(val)
            hist.epochs += 1
            bar.set_postfix(val_ppl=f"{val:.1f}")
            losses = [math.log(v) for v in hist.val_ppl]
            stalled = len(losses) > s.nonmono and losses[-1] > min(losses[: -s.nonmono])
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
        bar.close()
    if best is not None:
        model.load_state_dict(best[1])
    return hist
