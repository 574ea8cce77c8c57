"""The staged recipe of continued MLM training: what a CPU can do without damaging the encoder.

Training every parameter of a pretrained encoder for a few dozen steps at Adam's
default rate, with a freshly initialised MLM head, damages it (measured: the cpu
baseline then probed topic below the majority class). Instead:

1. the embeddings and the lower encoder layers ``0 .. start-1`` are frozen (eval mode,
   no autograd) and their output for every training input, masked with BERT's 80/10/10
   recipe (``versions`` seeded maskings per input), is computed once and cached on disk
   (:func:`build_state_cache`, resumable; memory-mapped by the readers);
2. the MLM head is warmed up with the whole encoder frozen, on the top layers' output at
   the masked positions, computed once (:func:`head_features`, :func:`warm_up_head`);
3. the top layers ``start ..`` and the head train from the cached states
   (:func:`train_top`): Adam, linear warm-up then linear decay, gradient clipping,
   seeded and resumable.

The decoder weight of the head is tied to the (frozen) input embeddings and stays
frozen throughout. Prism hooks on the top layers (:func:`prismlib.prism.attach_prism`)
act as in the full model: :func:`top_states` of :func:`lower_states` equals the
encoder's ``last_hidden_state`` for full-length inputs. :mod:`prismlib.prism.arms` runs
the arms of section 4 with this recipe.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor, nn

from prismlib.anneal import AnnealRule, AnnealState, anneal_check
from prismlib.artifacts import CorruptArtifact, check, load_or_discard, move_aside, save_atomic, write_digest
from prismlib.prism.layer import encoder_layers
from prismlib.prism.mlm_training import TrainResult, batch_indices, derived_seed, mlm_head
from prismlib.probing.masking import LOSS_IGNORE, mask_batch
from prismlib.progress import progress_bar

# =========================================================================== frozen and trained layers


def first_trained(model: nn.Module, train_layers: int) -> int:
    """Index of the first trained encoder layer when the top ``train_layers`` are trained."""
    n = len(encoder_layers(model))
    if not 1 <= train_layers <= n:
        raise ValueError(f"train_layers must be in 1..{n} for this {n}-layer encoder, got {train_layers}")
    return n - train_layers


def _hidden(out: Any) -> Tensor:
    return out[0] if isinstance(out, tuple) else out


@torch.no_grad()
def lower_states(model: nn.Module, input_ids: Tensor, start: int) -> Tensor:
    """The output of the frozen part: embeddings and encoder layers ``0 .. start-1`` (eval mode).

    Args:
        input_ids: ``(batch, length)`` full-length inputs (no padding: every position attends).

    Returns:
        ``(batch, length, hidden)`` float32.
    """
    # torch types a module's attributes as Tensor | Module: a Hugging Face model's are neither
    base = model.base_model
    was = base.training  # type: ignore[union-attr]
    base.eval()  # type: ignore[union-attr]
    h = base.embeddings(input_ids=input_ids)  # type: ignore[union-attr, operator]
    for layer in encoder_layers(model)[:start]:
        h = _hidden(layer(h))
    base.train(was)  # type: ignore[union-attr]
    return h


def top_states(model: nn.Module, states: Tensor, start: int) -> Tensor:
    """Encoder layers ``start ..`` applied to ``states`` (prism hooks included): the
    ``last_hidden_state`` of full-length inputs whose frozen part gave ``states``.

    Shapes: ``(batch, length, hidden) -> (batch, length, hidden)``.
    """
    h = states
    for layer in encoder_layers(model)[start:]:
        h = _hidden(layer(h))
    return h


def tied_weight(model: nn.Module) -> nn.Parameter:
    """The decoder weight of the MLM head, which is the input embedding matrix."""
    return cast(Any, model).get_output_embeddings().weight


def head_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The MLM head's own parameters (transform and output bias), without the tied decoder weight."""
    tied, seen, out = tied_weight(model), set(), []
    for p in mlm_head(model).parameters():
        if p is not tied and id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


def set_trainable(model: nn.Module, start: int | None) -> list[nn.Parameter]:
    """Freeze every parameter except the head's own and (``start`` not ``None``) those of
    encoder layers ``start ..``; returns the trainable ones."""
    for p in model.parameters():
        p.requires_grad_(False)
    params = head_parameters(model)
    if start is not None:
        params = [p for layer in encoder_layers(model)[start:] for p in layer.parameters()] + params
    for p in params:
        p.requires_grad_(True)
    return params


def set_attention_dropout(model: nn.Module, start: int, p: float) -> None:
    """Set the dropout on the attention probabilities of encoder layers ``start ..`` to ``p``
    (their hidden dropout unchanged). With ``p = 0`` a CPU step can use PyTorch's fused
    attention kernel, which has no dropout.

    Raises:
        TypeError: a layer without ``attention.self.dropout`` (not a BERT-style layer).
    """
    for i, layer in enumerate(encoder_layers(model)[start:], start):
        dropout = getattr(getattr(getattr(layer, "attention", None), "self", None), "dropout", None)
        if not isinstance(dropout, nn.Dropout):
            raise TypeError(f"encoder layer {i} ({type(layer).__name__}) has no attention.self.dropout to set")
        dropout.p = float(p)


# =========================================================================== cached frozen states


@dataclass
class StateCache:
    """The frozen part's output for every training input and masking, on disk.

    Attributes:
        folder: where ``states.npy`` and ``labels.npy`` live.
        states: ``(versions, n, length, hidden)`` float32 (memory-mapped, read-only).
        labels: ``(versions, n, length)`` int64: the original token at the selected
            positions, :data:`prismlib.probing.masking.LOSS_IGNORE` elsewhere.
    """

    folder: Path
    states: np.ndarray
    labels: np.ndarray

    @property
    def versions(self) -> int:
        return self.states.shape[0]

    def __len__(self) -> int:
        return self.states.shape[1]


def mask_version(sequences: Tensor, version: int, seed: int, special_ids, mask_id: int, vocab_size: int) -> tuple[Tensor, Tensor]:
    """Masking ``version`` of every training input (BERT's 80/10/10), a function of ``(seed, version)``.

    Returns:
        ``(corrupted, labels)``, both ``(n, length)`` int64.
    """
    gen = torch.Generator().manual_seed(derived_seed(seed, version, 2))
    special = torch.isin(sequences, torch.as_tensor(list(special_ids), dtype=sequences.dtype))
    return mask_batch(sequences, special, mask_id, vocab_size, gen)


def build_state_cache(
    model: nn.Module,
    sequences: Tensor,
    start: int,
    versions: int,
    seed: int,
    special_ids,
    mask_id: int,
    vocab_size: int,
    folder: Path,
    batch_size: int = 8,
    progress: bool = True,
) -> StateCache:
    """Compute (or finish, after an interruption) the cache of :func:`lower_states` for
    ``versions`` maskings of ``sequences`` into ``folder``; the rows done are recorded
    after every batch, so a restart continues where it stopped."""

    _discard_if_corrupt(folder)
    folder.mkdir(parents=True, exist_ok=True)
    n, length = sequences.shape
    hidden = int(model.config.hidden_size)  # type: ignore[union-attr, arg-type]
    done_file = folder / "rows_done.json"
    states_path, labels_path = folder / "states.npy", folder / "labels.npy"
    done = json.loads(done_file.read_text()) if done_file.exists() and states_path.exists() else [0] * versions
    mode = "r+" if states_path.exists() and done_file.exists() else "w+"
    states = np.lib.format.open_memmap(states_path, mode=mode, dtype=np.float32, shape=(versions, n, length, hidden))
    labels = np.lib.format.open_memmap(labels_path, mode=mode, dtype=np.int64, shape=(versions, n, length))
    device = next(model.parameters()).device
    total = versions * n
    with progress_bar(total=total, initial=sum(done), desc="frozen layers (cached)", unit="input", disable=not progress) as bar:
        for v in range(versions):
            corrupted, lab = mask_version(sequences, v, seed, special_ids, mask_id, vocab_size)
            labels[v] = lab.numpy()
            for lo in range(done[v], n, batch_size):
                hi = min(lo + batch_size, n)
                states[v, lo:hi] = lower_states(model, corrupted[lo:hi].to(device), start).cpu().numpy()
                states.flush()
                done[v] = hi
                done_file.write_text(json.dumps(done))
                bar.update(hi - lo)
    labels.flush()
    del states, labels
    for path in (states_path, labels_path):
        if check(path) is not None:
            write_digest(path)
    return open_state_cache(folder)


def _discard_if_corrupt(folder: Path) -> None:
    """Move a finished state cache whose arrays no longer match their digests aside (it is rebuilt)."""
    for name in ("states.npy", "labels.npy"):
        problem = check(folder / name)
        if problem not in (None, "missing", "no digest"):
            move_aside(folder, f"{name}: {problem}")
            return


def open_state_cache(folder: str | Path) -> StateCache:
    """The finished cache of :func:`build_state_cache` in ``folder`` (memory-mapped, read-only)."""
    folder = Path(folder)
    for name in ("states.npy", "labels.npy"):
        problem = check(folder / name)
        if problem not in (None, "no digest"):
            raise CorruptArtifact(folder / name, f"{problem}; run `python -m prismlib train --profile P --section4` to rebuild it")
    states = np.load(folder / "states.npy", mmap_mode="r")
    done = json.loads((folder / "rows_done.json").read_text())
    if done != [states.shape[1]] * states.shape[0]:
        raise RuntimeError(f"the state cache {folder} is incomplete ({done} of {states.shape[1]} rows per version)")
    return StateCache(folder, states, np.load(folder / "labels.npy", mmap_mode="r"))


# =========================================================================== encoding with a shared frozen part


class FrozenPart:
    """:func:`lower_states` of token sequences, computed once and shared by every model whose
    frozen part (embeddings and layers ``0 .. start-1``) has the same weights: the staged
    recipe's arms differ only above it, so a window's frozen states serve all of them.

    The first model seen fixes the weights' fingerprint; :class:`StagedEncoder` refuses a
    model whose frozen part differs. States are kept in memory (float32), one per distinct
    sequence: ``(length, hidden)``.
    """

    def __init__(self, start: int) -> None:
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        self.start = start
        self.fingerprint: str | None = None
        self._states: dict[bytes, Tensor] = {}

    def __len__(self) -> int:
        return len(self._states)

    def admit(self, model: nn.Module) -> None:
        """Check that ``model``'s frozen part is the one this memo holds the states of."""
        import hashlib

        base = cast(Any, model).base_model
        digest = hashlib.sha1(str(self.start).encode())
        for module in (base.embeddings, *encoder_layers(model)[: self.start]):
            for name, tensor in sorted(module.state_dict().items()):
                digest.update(name.encode())
                digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        if self.fingerprint is None:
            self.fingerprint = digest.hexdigest()
        elif digest.hexdigest() != self.fingerprint:
            raise ValueError(
                "this model's frozen part (embeddings and the layers below the trained ones) differs from the one whose "
                "states are shared; encode it with its own FrozenPart (or without one)"
            )

    def states(self, model: nn.Module, ids: Tensor) -> Tensor:
        """The frozen part's output for one sequence ``ids (length,)`` -> ``(length, hidden)``."""
        key = ids.cpu().numpy().astype(np.int64).tobytes()
        if key not in self._states:
            self._states[key] = lower_states(model, ids[None], self.start)[0]
        return self._states[key]


class StagedEncoder(nn.Module):
    """A BERT-style model computed as its frozen part (from a shared :class:`FrozenPart`)
    and its top layers ``start ..`` (prism hooks included), each sequence at its real
    length: the encoder :func:`prismlib.spectral.hidden_batches` calls, for probing many
    staged models of one encoder (the frozen part runs once per window, not once per model).

    ``forward(input_ids (batch, length), attention_mask (batch, length) right-padded)``
    returns an object whose ``hidden_states`` has the model's ``num_layers + 1`` entries;
    those of the frozen layers below ``start`` are not kept (asking for one raises).
    Padding positions of the output are zero.
    """

    def __init__(self, model: nn.Module, frozen: FrozenPart) -> None:
        super().__init__()
        frozen.admit(model)
        self.model, self.frozen = model, frozen
        self.config = cast(Any, model).config

    @torch.no_grad()
    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None, output_hidden_states: bool = True) -> Any:
        from types import SimpleNamespace

        lengths = [input_ids.shape[1]] * len(input_ids) if attention_mask is None else attention_mask.sum(1).tolist()
        start, n_layers = self.frozen.start, len(encoder_layers(self.model))
        out = [torch.zeros(*input_ids.shape, int(self.config.hidden_size), device=input_ids.device) for _ in range(n_layers + 1 - start)]
        for length in sorted(set(lengths)):  # rows of one length: one full-length call of the top layers
            rows = [r for r, n in enumerate(lengths) if n == length]
            h = torch.stack([self.frozen.states(self.model, input_ids[r, :length]) for r in rows])
            out[0][rows, :length] = h
            for i, layer in enumerate(encoder_layers(self.model)[start:], 1):
                h = _hidden(layer(h))
                out[i][rows, :length] = h
        skipped = tuple(_FrozenLayer(i) for i in range(start))
        return SimpleNamespace(hidden_states=skipped + tuple(out), last_hidden_state=out[-1])


class _FrozenLayer:
    """Stands for a hidden state of the frozen part that :class:`StagedEncoder` does not keep."""

    def __init__(self, index: int) -> None:
        self.index = index

    def float(self) -> Tensor:
        raise ValueError(
            f"hidden state {self.index} lies in the shared frozen part, which StagedEncoder does not keep; encode with the model itself"
        )


# =========================================================================== the staged recipe


@torch.no_grad()
def head_features(model: nn.Module, cache: StateCache, start: int, batch_size: int = 8, progress: bool = True) -> tuple[Tensor, Tensor]:
    """The head's input at every masked position of every cached masking, encoder frozen.

    Returns:
        ``(features (M, hidden) float32, targets (M,) int64)``: the top layers' output
        (after the arm's prism, if attached) at the ``M`` selected positions.
    """

    model.eval()
    device = next(model.parameters()).device
    feats, targets = [], []
    bar = progress_bar(total=cache.versions * len(cache), desc="head features", unit="input", disable=not progress, leave=False)
    for v in range(cache.versions):
        for lo in range(0, len(cache), batch_size):
            labels = torch.from_numpy(np.array(cache.labels[v, lo : lo + batch_size]))
            h = top_states(model, torch.from_numpy(np.array(cache.states[v, lo : lo + batch_size])).to(device), start)
            selected = labels != LOSS_IGNORE
            feats.append(h[selected.to(device)].cpu())
            targets.append(labels[selected])
            bar.update(len(labels))
    bar.close()
    return torch.cat(feats), torch.cat(targets)


def warm_up_head(
    model: nn.Module, features: Tensor, targets: Tensor, epochs: int, lr: float, batch_size: int, seed: int, progress: bool = True
) -> list[float]:
    """Fit the MLM head's transform and output bias to fixed ``features`` (encoder frozen).

    Adam at ``lr``; every epoch visits the ``(M, hidden)`` features once in a seeded
    order, ``batch_size`` positions per step. Nothing but :func:`head_parameters` changes.

    Returns:
        The mean training loss (nats) of every epoch.
    """

    params = set_trainable(model, None)
    head = mlm_head(model).train()
    opt = torch.optim.Adam(params, lr=lr)
    gen = torch.Generator().manual_seed(derived_seed(seed, 3))
    device = next(model.parameters()).device
    out = []
    steps = (len(features) + batch_size - 1) // batch_size
    with progress_bar(total=epochs * steps, desc="head warm-up", disable=not progress, leave=False) as bar:
        for _ in range(epochs):
            order, total = torch.randperm(len(features), generator=gen), 0.0
            for lo in range(0, len(features), batch_size):
                idx = order[lo : lo + batch_size]
                logits = head(features[idx].to(device))
                loss = nn.functional.cross_entropy(logits.float(), targets[idx].to(device))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
                bar.update(1)
            out.append(total / len(features))
            bar.set_postfix(loss=f"{out[-1]:.3f}")
    head.eval()
    return out


def lr_factor(step: int, warmup: int, steps: int, annealed: bool = False) -> float:
    """Learning-rate multiplier at 0-based ``step``: linear warm-up over ``warmup`` steps,
    then linear decay to 0 at ``steps`` (``warmup = 0``: constant 1). ``annealed``: after
    the warm-up the rate stays constant (the schedule's decays scale it)."""
    if warmup <= 0:
        return 1.0
    if step < warmup:
        return (step + 1) / warmup
    if annealed:
        return 1.0
    return max(0.0, (steps - step) / max(1, steps - warmup))


@torch.no_grad()
def cached_loss(model: nn.Module, cache: StateCache, start: int, batch_size: int = 8) -> float:
    """Mean MLM loss (nats per masked token) of the model on masking 0 of ``cache`` (the
    top layers and head in eval mode: no dropout). The caller restores train mode."""
    model.eval()
    device = next(model.parameters()).device
    head, total, count = mlm_head(model), 0.0, 0
    for lo in range(0, len(cache), batch_size):
        labels = torch.from_numpy(np.array(cache.labels[0, lo : lo + batch_size])).to(device)
        hidden = top_states(model, torch.from_numpy(np.array(cache.states[0, lo : lo + batch_size])).to(device), start)
        selected = labels != LOSS_IGNORE
        logits = head(hidden[selected]).float()
        total += float(nn.functional.cross_entropy(logits, labels[selected], reduction="sum"))
        count += int(selected.sum())
    if count == 0:
        raise ValueError(f"the stopping text's cache {cache.folder} has no masked token")
    return total / count


@dataclass(frozen=True)
class StopRule:
    """Train to a stop (:func:`train_top`): every ``round_steps`` steps the held-out MLM
    perplexity on ``heldout`` (the frozen part's states of the stopping text, one masking)
    goes to :func:`prismlib.anneal.anneal_check` under ``rule``; the rate falls on a stall
    and training ends by the rule (or at ``rule.cap`` rounds), keeping the best weights.
    ``rule.learn_below`` is filled in by :func:`train_top`: the perplexity of the model
    before training (after the head warm-up), so no decay happens before training helped."""

    heldout: StateCache
    rule: AnnealRule
    round_steps: int

    def __post_init__(self) -> None:
        if self.round_steps < 1:
            raise ValueError(f"round_steps must be >= 1, got {self.round_steps}")


def _trained_state(model: nn.Module, params: list[nn.Parameter]) -> dict[str, Tensor]:
    """Copies of the trained parameters (what differs between checkpoints of one run)."""
    ids = {id(p) for p in params}
    return {name: p.detach().clone() for name, p in model.named_parameters() if id(p) in ids}


def train_top(
    model: nn.Module,
    cache: StateCache,
    start: int,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    warmup: int,
    clip: float,
    seed: int,
    checkpoint: Path | None = None,
    checkpoint_every: int = 50,
    progress: bool = True,
    desc: str = "top layers",
    stop: StopRule | None = None,
    pretrained_lr: float | None = None,
) -> tuple[TrainResult, dict[str, Tensor] | None]:
    """Train encoder layers ``start ..`` and the MLM head from the cached frozen states.

    Step ``s`` reads the rows :func:`prismlib.prism.batch_indices` gives (epoch ``e`` of
    the data uses masking ``e mod versions``), runs the top layers in train mode
    (dropout seeded from ``(seed, s)``) and takes one Adam step at ``lr * lr_factor(s)``
    (the encoder layers at ``pretrained_lr * lr_factor(s)`` where given) with the
    gradient norm clipped to ``clip`` (0: no clipping). Checkpoints (model,
    optimizer, losses, the schedule) every ``checkpoint_every`` steps (with ``stop``: after
    every round's check); a run resumed from one ends with the same weights as an
    uninterrupted run.

    Without ``stop`` the rate decays linearly to 0 at ``steps`` (a fixed budget). With
    ``stop`` (:class:`StopRule`) the rate is constant after the warm-up, scaled by the
    schedule's decays; ``steps`` is the cap (``stop.rule.cap`` rounds at most); the model
    ends with the weights of the best held-out check.

    Returns:
        ``(result, previous)``: a :class:`prismlib.prism.TrainResult` and, with ``stop``,
        the trained parameters of the best check at the last decay (``None`` without
        ``stop`` or without a decay), the earlier checkpoint of the stability gates.
    """

    params = set_trainable(model, start)
    own = {id(p) for p in head_parameters(model)}  # the pretrained layers at pretrained_lr, the head's own at lr
    groups = [{"params": [p for p in params if id(p) not in own], "rate": pretrained_lr or lr}]
    opt = torch.optim.Adam([*groups, {"params": [p for p in params if id(p) in own], "rate": lr}], lr=lr)
    result = TrainResult()
    rule = state = best = previous = None
    if stop is not None:
        if stop.rule.cap * stop.round_steps != steps:
            raise ValueError(f"the rule's cap ({stop.rule.cap} rounds of {stop.round_steps} steps) must equal steps ({steps})")
        result.heldout, state = [], AnnealState()
    ck = None if checkpoint is None else load_or_discard(checkpoint, map_location=next(model.parameters()).device)
    if ck is not None:  # (a corrupt checkpoint was moved aside: start over)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        result.losses, result.steps = list(ck["losses"]), int(ck["step"])
        result.resumed_from = result.steps
        if stop is not None:
            state, best, previous = ck["anneal"], ck["best"], ck["previous"]
            result.heldout, result.best_step, result.previous_step = list(ck["heldout"]), ck["best_step"], ck["previous_step"]
            rule = ck["rule"]
    device = next(model.parameters()).device
    n, head = len(cache), mlm_head(model)
    if stop is not None and rule is None:  # the model before training: the guard and the first point
        before = cached_loss(model, stop.heldout, start)
        rule = replace(stop.rule, learn_below=math.exp(before))
        result.heldout = [(0, before, 1.0)]
        result.best_step, best = 0, _trained_state(model, params)
    model.eval()
    for layer in encoder_layers(model)[start:]:
        layer.train()

    def save() -> None:
        if checkpoint is not None:
            save_atomic(
                checkpoint,
                model=model.state_dict(),
                optimizer=opt.state_dict(),
                losses=result.losses,
                step=result.steps,
                anneal=state,
                best=best,
                previous=previous,
                heldout=result.heldout,
                best_step=result.best_step,
                previous_step=result.previous_step,
                rule=rule,
            )

    t0 = time.perf_counter()
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        bar = progress_bar(
            range(result.steps, steps), desc=desc, unit="step", initial=result.steps, total=steps, disable=not progress, leave=False
        )
        for step in bar:
            if state is not None and state.stop is not None:
                break
            rows = batch_indices(step, batch_size, n, seed).numpy()
            version = (np.arange(step * batch_size, (step + 1) * batch_size) // n) % cache.versions
            states = torch.from_numpy(np.array(cache.states[version, rows])).to(device)
            labels = torch.from_numpy(np.array(cache.labels[version, rows])).to(device)
            torch.manual_seed(derived_seed(seed, step, 1))
            scale = 1.0 if state is None else state.scale
            for group in opt.param_groups:
                group["lr"] = group["rate"] * scale * lr_factor(step, warmup, steps, annealed=stop is not None)
            hidden = top_states(model, states, start)
            selected = labels != LOSS_IGNORE
            loss = nn.functional.cross_entropy(head(hidden[selected]).float(), labels[selected])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if clip > 0:
                nn.utils.clip_grad_norm_(params, clip)
            opt.step()
            result.losses.append(float(loss.detach()))
            result.steps = step + 1
            bar.set_postfix(loss=f"{result.losses[-1]:.3f}")
            if stop is not None and state is not None and rule is not None and result.steps % stop.round_steps == 0:
                value = cached_loss(model, stop.heldout, start)
                for layer in encoder_layers(model)[start:]:
                    layer.train()
                improved = math.exp(value) < state.best
                state, action = anneal_check(state, math.exp(value), rule)
                assert result.heldout is not None
                result.heldout.append((result.steps, value, state.scale))
                if improved or best is None:
                    result.best_step, best = result.steps, _trained_state(model, params)
                if action == "decay":
                    result.previous_step, previous = result.best_step, best
                save()
            elif stop is None and checkpoint is not None and result.steps < steps and result.steps % checkpoint_every == 0:
                save()
    result.seconds = time.perf_counter() - t0
    result.anneal = state
    if best is not None:
        model.load_state_dict(best, strict=False)
    model.eval()
    return result, previous
