"""AWD-style LSTM language model with per-layer control of its gate biases (work B).

The model follows Merity et al. (2017), "Regularizing and optimizing LSTM language
models", the slides' baseline: embedding dropout, locked (variational) dropout on the
input, between layers and on the output, DropConnect ("weight drop") on the
hidden-to-hidden weights, tied input/output embeddings (so the last layer is as wide as
the embedding), activation (AR) and temporal activation (TAR) regularisation,
variable-length BPTT and NT-ASGD (SGD that switches to averaged SGD when the validation
loss stops improving for ``nonmono`` evaluations). Adam is an option.

Every layer is an :class:`LSTMLayer`: a one-layer ``torch.nn.LSTM`` whose recurrent
weight and biases are computed from trainable tensors at every forward (DropConnect
mask; fixed bias entries via ``torch.where``) and handed to the fused kernel
(``aten::lstm``: cuDNN on GPU, the fused CPU kernel otherwise). Fixed entries are exact
under any optimiser and weight decay: they are buffers, and the gradient of the
trainable tensor at those entries is zero.

Evaluation: :func:`token_nll` gives the NLL of every PTB test token. Claims compare
models on the *same* tokens with a paired bootstrap over 100-token chunks of the test
stream (:func:`chunk_sums`, :func:`perplexity_contrast`, resampling by
:mod:`prismlib.stats`); :func:`bootstrap_perplexity` reproduces the slides' "mean +/- sd
over 70-word blocks" column for their tables only. Seed spread is reported, not tested.

Shapes: token ids ``(batch, length)``; layer outputs ``(batch, length, hidden)``; the
recurrent state per layer a pair ``(h, c)`` of ``(1, batch, hidden)``.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from scipy.stats import bootstrap as scipy_bootstrap
from torch import Tensor, nn
from tqdm.auto import tqdm

from prismlib.profiles import LSTMSettings
from prismlib.stats import N_BOOT, Interval, group_sums, paired_bootstrap, ratio_difference
from prismlib.timescales import apply_official, apply_timescales, describe, variant_forget_biases

State = list[tuple[Tensor, Tensor]]


class LSTMLayer(nn.LSTM):
    """One unidirectional LSTM layer (``batch_first``) with weight drop and fixable biases.

    The parameters ``weight_hh_l0``, ``bias_ih_l0`` and ``bias_hh_l0`` of ``nn.LSTM`` are
    replaced by ``*_raw`` parameters; at every forward the layer builds the tensors the
    kernel uses (DropConnect on ``weight_hh`` in training; fixed bias entries) and calls
    ``nn.LSTM.forward`` with them, so the fused kernel still runs.
    """

    _RAW = ("weight_hh_l0", "bias_ih_l0", "bias_hh_l0")

    def __init__(self, input_size: int, hidden_size: int, weight_drop: float = 0.0) -> None:
        super().__init__(input_size, hidden_size, num_layers=1, batch_first=True)
        if not 0 <= weight_drop < 1:
            raise ValueError(f"weight_drop must be in [0, 1), got {weight_drop}")
        self.weight_drop = weight_drop
        for name in self._RAW:
            param = self._parameters.pop(name)
            self.register_parameter(name + "_raw", param)
        self.register_buffer("fixed_mask", torch.zeros(4 * hidden_size, dtype=torch.bool))
        self.register_buffer("fixed_ih", torch.zeros(4 * hidden_size))
        self.register_buffer("fixed_hh", torch.zeros(4 * hidden_size))

    def fix_bias_entries(self, mask: Tensor, values_ih: Tensor, values_hh: Tensor) -> None:
        """Freeze the bias entries where ``mask`` (``(4 * hidden,)`` bool) is true at the given values."""
        with torch.no_grad():
            self.fixed_mask |= mask.to(self.fixed_mask.device)
            self.fixed_ih.copy_(torch.where(mask, values_ih, self.fixed_ih))
            self.fixed_hh.copy_(torch.where(mask, values_hh, self.fixed_hh))

    def effective_biases(self) -> tuple[Tensor, Tensor]:
        """``(bias_ih, bias_hh)`` as the kernel sees them, each ``(4 * hidden,)``."""
        if not bool(self.fixed_mask.any()):
            return self.bias_ih_l0_raw, self.bias_hh_l0_raw
        return (
            torch.where(self.fixed_mask, self.fixed_ih, self.bias_ih_l0_raw),
            torch.where(self.fixed_mask, self.fixed_hh, self.bias_hh_l0_raw),
        )

    def forward(  # type: ignore[override]
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``input (batch, length, input_size)`` -> ``(output (batch, length, hidden), (h, c))``."""
        w_hh = self.weight_hh_l0_raw
        if self.training and self.weight_drop > 0:
            w_hh = F.dropout(w_hh, p=self.weight_drop, training=True)
        b_ih, b_hh = self.effective_biases()
        # nn.LSTM reads these four tensors; the names are not attributes any more, so
        # nn.LSTM's "weights changed" check leaves the list alone and no re-flattening
        # happens (on CUDA cuDNN copies them into its buffer, with a warning).
        self._flat_weights = [self.weight_ih_l0, w_hh, b_ih, b_hh]
        return super().forward(input, hx)

    def _apply(self, fn, recurse=True):  # type: ignore[override]
        ret = super()._apply(fn, recurse)
        self._flat_weights = [self.weight_ih_l0, self.weight_hh_l0_raw, self.bias_ih_l0_raw, self.bias_hh_l0_raw]
        return ret


def embedded_dropout(weight: Tensor, words: Tensor, p: float, training: bool) -> Tensor:
    """Lookup in ``weight (vocab, emb)`` with whole word types dropped (rate ``p``): ``(batch, length, emb)``."""
    if training and p > 0:
        mask = weight.new_empty(weight.size(0), 1).bernoulli_(1 - p) / (1 - p)
        weight = weight * mask
    return F.embedding(words, weight)


def locked_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """Variational dropout: one mask per sequence, shared over time. ``x (batch, length, d)``."""
    if not training or p == 0:
        return x
    mask = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1 - p) / (1 - p)
    return x * mask


@dataclass
class LMOutput:
    """Result of :meth:`LSTMLM.forward`.

    Attributes:
        state: per layer ``(h, c)``, each ``(1, batch, hidden_l)``.
        last_raw: last layer's output before dropout ``(batch, length, emb)`` (for TAR).
        last_dropped: the same after locked dropout (for AR), the input of the output
            layer: :meth:`LSTMLM.nll` and :meth:`LSTMLM.log_probs` read it.
    """

    state: State
    last_raw: Tensor
    last_dropped: Tensor


def frequency_rank(counts: np.ndarray) -> Tensor:
    """Rank of every word id by training frequency (0 = most frequent; ties by id), ``(vocab,)``.

    ``nn.AdaptiveLogSoftmaxWithLoss`` needs targets sorted by frequency (its clusters are
    id ranges); PTB's ids are in order of first occurrence, so the output layer maps ids
    to ranks.
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or len(counts) < 2 or (counts < 0).any():
        raise ValueError(f"counts must be non-negative word counts of shape (vocab,), got shape {counts.shape}")
    order = np.argsort(-counts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return torch.as_tensor(rank, dtype=torch.long)


class LSTMLM(nn.Module):
    """AWD-LSTM language model: embedding -> ``layers`` LSTMs -> output layer.

    Layer widths are ``hidden`` except the last, which is ``emb`` (paper: 400 / 1150 /
    1150 / 400). The output layer is either

    * the **full softmax**, a decoder tied to the embedding (AWD-LSTM; ``cutoffs=()``), or
    * an **adaptive softmax** (Grave et al. 2017, ``torch.nn.AdaptiveLogSoftmaxWithLoss``)
      with ``cutoffs``, e.g. ``(2000, 6000)``: the 2000 most frequent words in the head,
      the rest in two tail clusters (each behind an ``emb x emb`` projection). Its
      probabilities are exact and normalised over the whole vocabulary, so its
      perplexities compare with the full softmax's; a training step of the cpu profile's
      model is about twice as fast with it (``benchmarks/lstm.py``). It is
      tied too: the input embedding of a word is its output row (head or cluster), so
      there is no separate embedding matrix. ``rank`` (word id -> frequency rank, from
      :func:`frequency_rank` of the training counts) orders the words for it.
    """

    def __init__(
        self,
        vocab_size: int,
        emb: int,
        hidden: int,
        layers: int,
        dropout: float = 0.4,
        dropouth: float = 0.25,
        dropouti: float = 0.4,
        dropoute: float = 0.1,
        wdrop: float = 0.5,
        cutoffs: Sequence[int] = (),
        rank: Tensor | None = None,
    ) -> None:
        super().__init__()
        if layers < 1:
            raise ValueError(f"an LSTM LM needs at least one layer, got {layers}")
        self.encoder = nn.Embedding(vocab_size, emb)
        sizes = [hidden] * (layers - 1) + [emb]
        inputs = [emb] + sizes[:-1]
        self.rnns = nn.ModuleList(LSTMLayer(i, h, wdrop) for i, h in zip(inputs, sizes))
        self.dropout, self.dropouth, self.dropouti, self.dropoute = dropout, dropouth, dropouti, dropoute
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        self.vocab_size = vocab_size
        self.cutoffs = tuple(int(c) for c in cutoffs)
        if self.cutoffs:
            if list(self.cutoffs) != sorted(set(self.cutoffs)) or self.cutoffs[0] < 1 or self.cutoffs[-1] >= vocab_size:
                raise ValueError(f"cutoffs must increase strictly within (0, {vocab_size}), got {self.cutoffs}")
            # div_value 1: every cluster's output weights are emb wide, so together with the
            # head's word rows they form the (rank-ordered) embedding matrix: tied, as AWD's.
            self.adaptive = nn.AdaptiveLogSoftmaxWithLoss(emb, vocab_size, list(self.cutoffs), div_value=1.0)
            del self.encoder
            for w in self._output_rows():
                nn.init.uniform_(w, -0.1, 0.1)
            if rank is None:
                rank = torch.arange(vocab_size)
            if rank.shape != (vocab_size,) or not torch.equal(rank.sort().values, torch.arange(vocab_size)):
                raise ValueError(f"rank must be a permutation of the {vocab_size} word ids (see frequency_rank)")
            self.register_buffer("rank", rank.long().clone())
        else:
            self.decoder = nn.Linear(emb, vocab_size)
            self.decoder.weight = self.encoder.weight
            nn.init.zeros_(self.decoder.bias)

    @classmethod
    def from_settings(cls, vocab_size: int, s: LSTMSettings, rank: Tensor | None = None) -> LSTMLM:
        """A model sized and regularised as ``s`` says (``rank``: see :func:`frequency_rank`)."""
        return cls(
            vocab_size, s.emb, s.hidden, s.layers, s.dropout, s.dropouth, s.dropouti, s.dropoute, s.wdrop,
            s.cutoffs, rank if s.cutoffs else None,
        )  # fmt: skip

    @property
    def sizes(self) -> list[int]:
        """Hidden units per layer."""
        return [r.hidden_size for r in self.rnns]

    def _output_rows(self) -> list[Tensor]:
        """The adaptive softmax's word rows in rank order: head ``(cutoffs[0], emb)``, then each cluster's."""
        c0 = self.cutoffs[0]
        return [self.adaptive.head.weight[:c0]] + [tail[1].weight for tail in self.adaptive.tail]

    def embedding_matrix(self) -> Tensor:
        """Input embeddings ``(vocab, emb)`` in id order: the decoder's (full softmax) or the adaptive softmax's rows."""
        if not self.cutoffs:
            return self.encoder.weight
        return torch.cat(self._output_rows())[self.rank]

    def run_layers(self, tokens: Tensor, state: State | None = None) -> tuple[Tensor, Tensor, State]:
        """The LSTM stack without the output layer.

        Returns:
            ``(last_raw, last_dropped, state)``: the last layer's output ``(batch, length, emb)``
            before and after its dropout, and per layer ``(h, c)`` of ``(1, batch, hidden_l)``.
        """
        x = embedded_dropout(self.embedding_matrix(), tokens, self.dropoute, self.training)
        x = locked_dropout(x, self.dropouti, self.training)
        new_state: State = []
        raw = x
        for layer, rnn in enumerate(self.rnns):
            raw, hc = rnn(x, None if state is None else state[layer])
            new_state.append(hc)
            last = layer == len(self.rnns) - 1
            x = locked_dropout(raw, self.dropout if last else self.dropouth, self.training)
        return raw, x, new_state

    def forward(self, tokens: Tensor, state: State | None = None) -> LMOutput:
        """``tokens (batch, length)`` int64 -> the last layer's output and the new state."""
        raw, dropped, new_state = self.run_layers(tokens, state)
        return LMOutput(new_state, raw, dropped)

    def nll(self, hidden: Tensor, targets: Tensor) -> Tensor:
        """``-log p(target)`` in nats: ``hidden (batch, length, emb)``, ``targets (batch, length)`` -> ``(batch, length)``."""
        flat = hidden.reshape(-1, hidden.size(-1))
        if self.cutoffs:
            out = self.adaptive(flat, self.rank[targets.reshape(-1)]).output
            return (-out).view(targets.shape)
        return F.cross_entropy(self.decoder(flat), targets.reshape(-1), reduction="none").view(targets.shape)

    def log_probs(self, hidden: Tensor) -> Tensor:
        """Log-probabilities of every word (ids in vocabulary order): ``(..., emb)`` -> ``(..., vocab)``."""
        flat = hidden.reshape(-1, hidden.size(-1))
        if self.cutoffs:
            logp = self.adaptive.log_prob(flat)[:, self.rank]
        else:
            logp = F.log_softmax(self.decoder(flat), dim=-1)
        return logp.view(*hidden.shape[:-1], -1)


def detach_state(state: State) -> State:
    """The state cut from the graph (truncated BPTT)."""
    return [(h.detach(), c.detach()) for h, c in state]


def batchify(ids: np.ndarray | Tensor, batch_size: int) -> Tensor:
    """Split a token stream ``(n,)`` into ``batch_size`` contiguous streams ``(batch_size, n // batch_size)``."""
    ids = torch.as_tensor(ids, dtype=torch.long)
    n = ids.numel() // batch_size
    if n < 2:
        raise ValueError(f"{ids.numel()} tokens are too few for {batch_size} streams; use a smaller batch size")
    return ids[: n * batch_size].view(batch_size, n)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch CPU threads (``None``: leave as is), then restore."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@torch.no_grad()
def token_nll(model: LSTMLM, ids: np.ndarray | Tensor, batch_size: int = 10, bptt: int = 70) -> np.ndarray:
    """Negative log-likelihood (nats) of every token given its prefix, shape ``(n,)``.

    The stream is cut into ``batch_size`` contiguous streams, read in chunks of ``bptt``
    with the state carried over (as in AWD-LSTM's evaluation). Entry ``t`` is
    ``-log p(ids[t] | ids[<t])`` within its stream; the first token of every stream and
    the tail that does not fill a stream are NaN (:func:`predicted_mask` says which).
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    data = batchify(ids, batch_size).to(device)
    n_per = data.size(1)
    out = torch.full((batch_size, n_per), float("nan"), dtype=torch.float64)
    state = None
    for i in range(0, n_per - 1, bptt):
        seq = min(bptt, n_per - 1 - i)
        res = model(data[:, i : i + seq], state)
        state = res.state
        nll = model.nll(res.last_dropped, data[:, i + 1 : i + 1 + seq])
        out[:, i + 1 : i + 1 + seq] = nll.double().cpu()
    model.train(was_training)
    full = np.full(len(ids), np.nan)
    full[: batch_size * n_per] = out.reshape(-1).numpy()
    return full


def perplexity(nll: np.ndarray) -> float:
    """``exp`` of the mean NLL over the predicted (non-NaN) tokens of ``nll`` ``(n,)``."""
    return float(np.exp(np.nanmean(nll)))


N_BOOT_PTB = 10_000
"""Resamples of every paired bootstrap over PTB test chunks (the official evaluation's 10,000)."""

CHUNK = 100
"""Tokens per independent unit of PTB test in every paired comparison (DESIGN: "a 100-word
chunk of PTB"): consecutive positions ``[k * CHUNK, (k + 1) * CHUNK)`` of the test stream."""


def predicted_mask(n: int, batch_size: int) -> np.ndarray:
    """Positions :func:`token_nll` predicts for a stream of ``n`` tokens, ``(n,)`` bool.

    The stream is cut into ``batch_size`` streams of ``n // batch_size`` tokens; the first
    token of each stream and the tail that fills no stream are not predicted.
    """
    n_per = n // batch_size if batch_size > 0 else 0
    if n_per < 2:
        raise ValueError(f"{n} tokens are too few for {batch_size} streams; use a smaller batch size")
    mask = np.zeros(n, dtype=bool)
    mask[: batch_size * n_per] = True
    mask[: batch_size * n_per : n_per] = False
    return mask


def seed_mean_nll(nll: np.ndarray) -> np.ndarray:
    """Per-token NLL of one model ``(n,)``, or the mean over seeds of ``(seeds, n)`` -> ``(n,)``.

    The seeds must predict the same positions (NaN in the same places); the mean makes
    every chunk's NLL sum the mean of the seeds' sums, and ``exp`` of its mean per token is
    the geometric mean of the seeds' perplexities.
    """
    x = np.asarray(nll, dtype=np.float64)
    if x.ndim == 1:
        return x
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"per-token NLL must be (n,) or (seeds, n), got shape {x.shape}")
    finite = np.isfinite(x)
    if not (finite == finite[:1]).all():
        raise ValueError("the seeds' per-token NLLs are predicted at different positions; evaluate them alike")
    return x.mean(axis=0)


def chunk_sums(nll: np.ndarray, chunk: int = CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """Summed NLL and predicted-token count per ``chunk`` consecutive positions.

    Args:
        nll: ``(n,)`` per-token NLL, or ``(m, n)`` of ``m`` models evaluated on the same
            tokens; NaN where not predicted (the same positions in every row).
        chunk: tokens per chunk (the unit a paired bootstrap resamples).

    Returns:
        ``(sums, counts)``: ``(G,)`` or ``(m, G)`` summed NLL and ``(G,)`` predicted tokens of
        the ``G`` chunks that hold at least one predicted token.
    """
    x = np.asarray(nll, dtype=np.float64)
    if x.ndim not in (1, 2) or chunk < 1:
        raise ValueError(f"chunk_sums needs (n,) or (models, n) NLL and chunk >= 1, got shape {x.shape}, chunk {chunk}")
    finite = np.isfinite(x)
    mask = finite if x.ndim == 1 else finite[0]
    if x.ndim == 2 and not (finite == mask).all():
        raise ValueError(
            "models are not predicted at the same positions; evaluate them on the same test tokens with the same "
            "evaluation batch (the bigram: prismlib.bigram.token_nll(..., batch_size=eval_batch))"
        )
    groups = np.arange(x.shape[-1]) // chunk
    _, sums = group_sums(np.where(finite, x, 0.0), groups)
    _, counts = group_sums(mask.astype(np.float64), groups)
    keep = counts > 0
    if keep.sum() < 2:
        raise ValueError(f"fewer than two chunks of {chunk} tokens hold a prediction; evaluate more test tokens")
    return sums[..., keep], counts[keep]


def model_perplexity(nll: np.ndarray) -> float:
    """Perplexity of one model ``(n,)`` or of the seed mean of ``(seeds, n)`` (:func:`seed_mean_nll`)."""
    return perplexity(seed_mean_nll(nll))


def perplexity_contrast(
    target: np.ndarray,
    others: Sequence[np.ndarray],
    against: str = "best",
    chunk: int = CHUNK,
    n_boot: int = N_BOOT_PTB,
    seed: int = 0,
) -> Interval:
    """Perplexity of ``target`` minus the best (lowest) or worst (highest) of ``others``.

    Paired bootstrap over ``chunk``-token chunks of the test stream (the same resampled
    chunks for every model; each resample takes its own best or worst). With one other
    model this is :func:`prismlib.stats.ratio_difference` of the chunks' NLL sums with
    ``transform=np.exp``.

    Args:
        target, others: per-token NLL ``(n,)`` of one model or ``(seeds, n)`` of a seed mean,
            all predicted at the same positions.
        against: ``"best"`` (e.g. "Pareto beats the better of MOD5 and MOD8": claimed < 0)
            or ``"worst"`` (e.g. "X = 70 is worse than every other X": claimed > 0).

    Returns:
        The :class:`~prismlib.stats.Interval` of the difference, in perplexity points.
    """
    if against not in ("best", "worst"):
        raise ValueError(f"against must be 'best' or 'worst', got {against!r}")
    if len(others) < 1:
        raise ValueError("perplexity_contrast needs at least one other model")
    sums, counts = chunk_sums(np.stack([seed_mean_nll(x) for x in (target, *others)]), chunk)
    if len(others) == 1:
        return ratio_difference(sums[0], sums[1], counts, transform=np.exp, n_boot=n_boot, seed=seed)
    pick = np.min if against == "best" else np.max

    def stat(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        den = xs[-1].sum(axis)
        ppl = np.stack([np.exp(x.sum(axis) / den) for x in xs[:-1]])
        return ppl[0] - pick(ppl[1:], axis=0)

    return paired_bootstrap(stat, (*sums, counts), n_boot=n_boot, seed=seed)


def perplexity_difference(a: np.ndarray, b: np.ndarray, chunk: int = CHUNK, n_boot: int = N_BOOT_PTB, seed: int = 0) -> Interval:
    """``ppl(a) - ppl(b)`` with a paired bootstrap over chunks (see :func:`perplexity_contrast`)."""
    return perplexity_contrast(a, [b], chunk=chunk, n_boot=n_boot, seed=seed)


FREQUENCY_BINS: tuple[tuple[str, float, float], ...] = (
    (">10k", 10_000, math.inf),
    ("1k-10k", 1_000, 10_000),
    ("100-1k", 100, 1_000),
    ("<100", 0, 100),
)
"""Word-frequency bins of the ICLR 2021 version: ``(label, low, high)``, a word is in a bin
when ``low <= (its count in PTB train) < high``."""


def frequency_bins(ids: np.ndarray, train_counts: np.ndarray) -> np.ndarray:
    """Label of :data:`FREQUENCY_BINS` for every token of ``ids`` ``(n,)`` by its training count."""
    counts = np.asarray(train_counts)[np.asarray(ids)]
    out = np.empty(len(counts), dtype=object)
    for label, low, high in FREQUENCY_BINS:
        out[(counts >= low) & (counts < high)] = label
    return out


def perplexity_by_frequency(
    nlls: dict[str, np.ndarray], ids: np.ndarray, train_counts: np.ndarray, reference: str, n_boot: int = N_BOOT_PTB, seed: int = 0
) -> pd.DataFrame:
    """Perplexity per word-frequency bin of every model, and its difference from ``reference``.

    Each bin's perplexity is ``exp`` of the mean NLL of the test tokens whose *target*
    word is in the bin (the ICLR version's ``high_low_freq_bin_evaluation``); the
    difference is a paired bootstrap over 100-token chunks of the test stream, counting
    only the bin's tokens in each chunk.

    Args:
        nlls: model name -> per-token test NLL ``(n,)`` or ``(seeds, n)``, all predicted at
            the same positions; must contain ``reference``.
        ids: the test tokens ``(n,)``; ``train_counts``: ``(vocab,)`` counts in PTB train.

    Returns:
        One row per model and bin: ``model``, ``bin``, ``tokens``, ``ppl``, ``delta``
        (:class:`~prismlib.stats.Interval` against ``reference``; ``None`` for it).
    """
    if reference not in nlls:
        raise ValueError(f"reference {reference!r} is not among the models {list(nlls)}")
    bins = frequency_bins(ids, train_counts)
    rows = []
    for label, _, _ in FREQUENCY_BINS:
        keep = bins == label
        masked = {name: np.where(keep, seed_mean_nll(x), np.nan) for name, x in nlls.items()}
        for name, x in masked.items():
            delta = None if name == reference else perplexity_difference(x, masked[reference], n_boot=n_boot, seed=seed)
            rows.append({"model": name, "bin": label, "tokens": int(np.isfinite(x).sum()), "ppl": perplexity(x), "delta": delta})
    return pd.DataFrame(rows)


@torch.no_grad()
def forget_gate_means(model: LSTMLM, ids: np.ndarray | Tensor, batch_size: int = 10, bptt: int = 70) -> list[np.ndarray]:
    """Mean forget-gate activation of every unit over a token stream, per layer ``(hidden_l,)``.

    The model reads ``ids`` as :func:`token_nll` does (eval mode, ``batch_size`` streams,
    state carried over ``bptt`` chunks). The fused kernel does not return its gates, so
    each layer's forget gate is recomputed from its input ``x_t`` and its previous output
    ``h_{t-1}``: ``f_t = sigmoid(W_if x_t + W_hf h_{t-1} + b_f)``; the mean is over every
    token (the official code averages per 70-token chunk of one stream, then over chunks).
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    data = batchify(ids, batch_size).to(device)
    sums = [torch.zeros(n, dtype=torch.float64) for n in model.sizes]
    count = 0
    state: State | None = None
    for i in range(0, data.size(1), bptt):
        x = F.embedding(data[:, i : i + bptt], model.embedding_matrix())
        new_state: State = []
        for layer, rnn in enumerate(model.rnns):
            h_size = rnn.hidden_size
            h0 = torch.zeros(1, x.size(0), h_size, device=device) if state is None else state[layer][0]
            out, hc = rnn(x, None if state is None else state[layer])
            new_state.append(hc)
            h_prev = torch.cat([h0[0][:, None], out[:, :-1]], dim=1)
            b_ih, b_hh = rnn.effective_biases()
            sl = slice(h_size, 2 * h_size)
            gate = x @ rnn.weight_ih_l0[sl].T + h_prev @ rnn.weight_hh_l0_raw[sl].T + b_ih[sl] + b_hh[sl]
            sums[layer] += torch.sigmoid(gate).double().sum(dim=(0, 1)).cpu()
            x = out
        count += x.size(0) * x.size(1)
        state = new_state
    model.train(was_training)
    return [(s / count).numpy() for s in sums]


@dataclass(frozen=True)
class Bootstrap:
    """Bootstrapped perplexity: ``mean`` and ``sd`` over ``samples`` resamples of blocks."""

    point: float
    mean: float
    sd: float
    samples: int
    blocks: int


def bootstrap_perplexity(nll: np.ndarray, block: int = 70, samples: int = 1000, seed: int = 0) -> Bootstrap:
    """The slides' "bootstrapped samples performance": perplexity over resamples of ``block``-token pieces.

    The slides bootstrap PTB test as 1177 sequences of 70 words and print the mean +/- sd
    of the resampled perplexities, reproduced here for their table. Each resample draws as
    many blocks as there are, with replacement, and its perplexity is ``exp(sum nll /
    tokens)``. The resampling is ``scipy.stats.bootstrap``'s (as in :mod:`prismlib.stats`,
    which gives the verdicts); only its distribution's mean and sd are kept. This sd is
    not a test: the claims compare models with :func:`perplexity_contrast`.

    Args:
        nll: per-token NLL ``(n,)``, NaN for unpredicted tokens (see :func:`token_nll`).
    """
    if block < 1 or samples < 2:
        raise ValueError("bootstrap needs block >= 1 and samples >= 2")
    n_blocks = len(nll) // block
    if n_blocks < 2:
        raise ValueError(f"{len(nll)} tokens give fewer than two blocks of {block}; use a smaller block")
    x = np.asarray(nll[: n_blocks * block], dtype=np.float64).reshape(n_blocks, block)
    sums = np.nansum(x, axis=1)
    counts = np.isfinite(x).sum(axis=1).astype(np.float64)

    def ppl(s: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.exp(s.sum(axis) / c.sum(axis))

    with warnings.catch_warnings():  # identical blocks: a degenerate (zero-width) distribution is fine here
        warnings.simplefilter("ignore")
        res = scipy_bootstrap(
            (sums, counts), ppl, n_resamples=samples, paired=True, vectorized=True,
            method="percentile", rng=np.random.default_rng(seed),
        )  # fmt: skip
    dist = res.bootstrap_distribution
    return Bootstrap(perplexity(nll), float(dist.mean()), float(dist.std(ddof=1)), samples, n_blocks)


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
    ``progress=False`` hides the per-step bar (worker processes of :mod:`prismlib.jobs`).

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
            ck = torch.load(checkpoint, map_location=device, weights_only=False)
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
        bar = tqdm(total=s.epochs * steps, initial=hist.epochs * steps, desc=desc, leave=False, mininterval=2, disable=not progress)
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
                _save(
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


def _save(path: Path, **obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


@dataclass(frozen=True)
class RunSpec:
    """One trained model: a timescale variant, initialised or fixed, and a seed."""

    variant: str = "baseline"
    T: float | None = None
    fixed: bool = False
    seed: int = 0

    @property
    def label(self) -> str:
        """E.g. ``"layerwise T=20 (fixed)"``."""
        return describe(self.variant, self.T, self.fixed)


@dataclass
class TrainedRun:
    """A trained model and what the notebooks report about it.

    Attributes:
        spec: what was trained.
        model: the model (best validation weights), in eval mode.
        history: training record.
        test_nll: per-token NLL on PTB test ``(n,)`` (NaN where not predicted).
        biases_init, biases_final: effective forget-gate biases per layer, ``(hidden_l,)``.
    """

    spec: RunSpec
    model: LSTMLM
    history: TrainHistory
    test_nll: np.ndarray
    biases_init: list[Tensor]
    biases_final: list[Tensor]

    @property
    def test_ppl(self) -> float:
        """Test perplexity."""
        return perplexity(self.test_nll)

    @property
    def val_ppl(self) -> float:
        """Best validation perplexity."""
        return min(self.history.val_ppl)


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
        apply_timescales(list(model.rnns), biases, fixed=spec.fixed)
    return model


def runs_table(runs: Sequence[TrainedRun], bootstrap_samples: int = 1000) -> pd.DataFrame:
    """One row per run: variant, T, fixed, seed, val/test perplexity, bootstrapped test mean and sd."""
    rows = []
    for r in runs:
        b = bootstrap_perplexity(r.test_nll, samples=bootstrap_samples, seed=r.spec.seed)
        rows.append(
            {
                "model": r.spec.label,
                "variant": r.spec.variant,
                "T": r.spec.T,
                "fixed": r.spec.fixed,
                "seed": r.spec.seed,
                "val ppl": r.val_ppl,
                "test ppl": r.test_ppl,
                "bootstrap mean": b.mean,
                "bootstrap sd": b.sd,
                "train tokens": r.history.tokens,
                "train s": r.history.seconds,
            }
        )
    return pd.DataFrame(rows)


def seed_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value) of per-seed perplexities."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0
