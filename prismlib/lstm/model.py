"""AWD-style LSTM language model with per-layer control of its gate biases (work B).

The model follows Merity et al. (2017), "Regularizing and optimizing LSTM language
models", the slides' baseline: embedding dropout, locked (variational) dropout on the
input, between layers and on the output, DropConnect ("weight drop") on the
hidden-to-hidden weights, tied input/output embeddings (so the last layer is as wide as
the embedding), and a full softmax or an adaptive softmax tied the same way. The training
recipe (AR/TAR, variable-length BPTT, NT-ASGD) is :mod:`prismlib.lstm.training`; the
evaluation :mod:`prismlib.lstm.evaluation`.

Every layer is an :class:`LSTMLayer`: a one-layer ``torch.nn.LSTM`` whose recurrent
weight and biases are computed from trainable tensors at every forward (DropConnect
mask; fixed bias entries via ``torch.where``) and handed to the fused kernel
(``aten::lstm``: cuDNN on GPU, the fused CPU kernel otherwise). Fixed entries are exact
under any optimiser and weight decay: they are buffers, and the gradient of the
trainable tensor at those entries is zero.

Shapes: token ids ``(batch, length)``; layer outputs ``(batch, length, hidden)``; the
recurrent state per layer a pair ``(h, c)`` of ``(1, batch, hidden)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from prismlib.profiles import LSTMSettings

State = list[tuple[Tensor, Tensor]]


class LSTMLayer(nn.LSTM):
    """One unidirectional LSTM layer (``batch_first``) with weight drop and fixable biases.

    The parameters ``weight_hh_l0``, ``bias_ih_l0`` and ``bias_hh_l0`` of ``nn.LSTM`` are
    replaced by ``*_raw`` parameters; at every forward the layer builds the tensors the
    kernel uses (DropConnect on ``weight_hh`` in training; fixed bias entries) and calls
    ``nn.LSTM.forward`` with them, so the fused kernel still runs.
    """

    _RAW = ("weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
    # for the type checker: the parameters and buffers registered by name in __init__
    weight_ih_l0: Tensor
    weight_hh_l0_raw: Tensor
    bias_ih_l0_raw: Tensor
    bias_hh_l0_raw: Tensor
    fixed_mask: Tensor
    fixed_ih: Tensor
    fixed_hh: Tensor

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
        try:
            return super().forward(input, hx)
        finally:  # the parameters again: a computed tensor left here cannot be deep-copied (copy.deepcopy of the model)
            self._flat_weights = [self.weight_ih_l0, self.weight_hh_l0_raw, self.bias_ih_l0_raw, self.bias_hh_l0_raw]

    def _apply(self, fn, recurse=True):
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

    rank: Tensor  # the buffer registered by __init__ with an adaptive softmax

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
        # torch's ModuleList is not generic: typed as what it holds (a ModuleList of LSTMLayer)
        self.rnns: Sequence[LSTMLayer] = nn.ModuleList(LSTMLayer(i, h, wdrop) for i, h in zip(inputs, sizes))  # type: ignore[assignment]
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
            vocab_size,
            s.emb,
            s.hidden,
            s.layers,
            s.dropout,
            s.dropouth,
            s.dropouti,
            s.dropoute,
            s.wdrop,
            s.cutoffs,
            rank if s.cutoffs else None,
        )

    @property
    def sizes(self) -> list[int]:
        """Hidden units per layer."""
        return [r.hidden_size for r in self.rnns]

    def _output_rows(self) -> list[Tensor]:
        """The adaptive softmax's word rows in rank order: head ``(cutoffs[0], emb)``, then each cluster's."""
        c0 = self.cutoffs[0]
        return [self.adaptive.head.weight[:c0]] + [tail[1].weight for tail in self.adaptive.tail]  # type: ignore[index]

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
