"""Evaluation of the LSTM language models.

:func:`token_nll` gives the NLL of every PTB test token. Claims compare models on the
*same* tokens with a paired bootstrap over 100-token chunks of the test stream
(:func:`perplexity_contrast`, resampling by :mod:`prismlib.stats`); what they read is a
model's NLL summed per chunk (:class:`ChunkNLL`, per frequency bin and per 70-token block
too): a committed run record keeps exactly that, and a local run is chunked alike when it
is loaded (:func:`prismlib.lstm.load_run`), so both give the same numbers. Every function
here that takes a model's NLL takes a :class:`ChunkNLL` or the per-token NLL it is chunked
from (:func:`as_chunks`). :func:`seed_means` stacks a model's seeds so that its perplexity
is the seed mean. :func:`perplexity_by_frequency` splits perplexity by word-frequency bin
and :func:`forget_gate_means` measures the gates. :func:`bootstrap_perplexity` reproduces
the slides' "mean +/- sd over 70-word blocks" column for their tables only. Seed spread is
reported, not tested.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from prismlib.claims import Gate
from prismlib.lstm.chunks import CHUNK, FREQUENCY_BINS, NLL, ChunkNLL, as_chunks, paired_chunks
from prismlib.lstm.model import LSTMLM, State, batchify
from prismlib.stats import Interval, bootstrap_distribution, group_sums, paired_bootstrap, ratio_difference


@torch.no_grad()
def token_nll(model: LSTMLM, ids: np.ndarray | Tensor, batch_size: int = 10, bptt: int = 70, reset_every: int | None = None) -> np.ndarray:
    """Negative log-likelihood (nats) of every token given its prefix, shape ``(n,)``.

    The stream is cut into ``batch_size`` contiguous streams, read in chunks of ``bptt``
    with the state carried over (as in AWD-LSTM's evaluation). Entry ``t`` is
    ``-log p(ids[t] | ids[<t])`` within its stream; the first token of every stream and
    the tail that does not fill a stream are NaN (:func:`predicted_mask` says which).
    ``reset_every=k`` instead reads chunks of ``k`` words from a zero state (each token
    sees at most the ``k - 1`` words before it in its chunk); the same positions are
    predicted, so the two are paired (:func:`context_use`).
    """
    if reset_every is not None and reset_every < 1:
        raise ValueError(f"reset_every must be a positive number of words, got {reset_every}")
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    data = batchify(ids, batch_size).to(device)
    n_per = data.size(1)
    out = torch.full((batch_size, n_per), float("nan"), dtype=torch.float64)
    state = None
    step = bptt if reset_every is None else reset_every
    for i in range(0, n_per - 1, step):
        seq = min(step, n_per - 1 - i)
        res = model(data[:, i : i + seq], state if reset_every is None else None)
        state = res.state
        nll = model.nll(res.last_dropped, data[:, i + 1 : i + 1 + seq])
        out[:, i + 1 : i + 1 + seq] = nll.double().cpu()
    model.train(was_training)
    full = np.full(len(ids), np.nan)
    full[: batch_size * n_per] = out.reshape(-1).numpy()
    return full


def perplexity(nll: NLL) -> float:
    """``exp`` of the mean NLL over the predicted (non-NaN) tokens of ``nll`` ``(n,)`` (of a
    :class:`ChunkNLL`: over its chunks, the seed mean where it stacks seeds)."""
    if isinstance(nll, ChunkNLL):
        return nll.perplexity()
    return float(np.exp(np.nanmean(nll)))


def mean_nll(nll: NLL) -> float:
    """The mean NLL per predicted token of ``nll`` (``log`` of :func:`perplexity`): the
    statistic whose contrast between two models is the log ratio of their perplexities."""
    return math.log(perplexity(nll))


N_BOOT_PTB = 10_000
"""Resamples of every paired bootstrap over PTB test chunks (the official evaluation's 10,000)."""


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
            "evaluation batch (the bigram: prismlib.lstm.bigram_nll(..., batch_size=eval_batch))"
        )
    groups = np.arange(x.shape[-1]) // chunk
    _, sums = group_sums(np.where(finite, x, 0.0), groups)
    _, counts = group_sums(mask.astype(np.float64), groups)
    keep = counts > 0
    if keep.sum() < 2:
        raise ValueError(f"fewer than two chunks of {chunk} tokens hold a prediction; evaluate more test tokens")
    return sums[..., keep], counts[keep]


def model_perplexity(nll: NLL) -> float:
    """Perplexity of one model ``(n,)`` or of the seed mean of ``(seeds, n)`` (:func:`seed_mean_nll`;
    of a :class:`ChunkNLL`, :meth:`ChunkNLL.perplexity`)."""
    return as_chunks(nll).perplexity() if isinstance(nll, ChunkNLL) else perplexity(seed_mean_nll(nll))


def perplexity_contrast(
    target: NLL,
    others: Sequence[NLL],
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
            all predicted at the same positions, or their :class:`ChunkNLL` (:func:`paired_chunks`).
        against: ``"best"`` (e.g. "Pareto beats the better of MOD5 and MOD8": claimed < 0)
            or ``"worst"`` (e.g. "X = 70 is worse than every other X": claimed > 0).

    Returns:
        The :class:`~prismlib.stats.Interval` of the difference, in perplexity points.
    """
    if against not in ("best", "worst"):
        raise ValueError(f"against must be 'best' or 'worst', got {against!r}")
    if len(others) < 1:
        raise ValueError("perplexity_contrast needs at least one other model")
    sums, counts = paired_chunks([target, *others], chunk)
    if len(others) == 1:
        return ratio_difference(sums[0], sums[1], counts, transform=np.exp, n_boot=n_boot, seed=seed)
    pick = np.min if against == "best" else np.max

    def stat(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        den = xs[-1].sum(axis)
        ppl = np.stack([np.exp(x.sum(axis) / den) for x in xs[:-1]])
        return ppl[0] - pick(ppl[1:], axis=0)

    return paired_bootstrap(stat, (*sums, counts), n_boot=n_boot, seed=seed)


def perplexity_difference(a: NLL, b: NLL, chunk: int = CHUNK, n_boot: int = N_BOOT_PTB, seed: int = 0) -> Interval:
    """``ppl(a) - ppl(b)`` with a paired bootstrap over chunks (see :func:`perplexity_contrast`)."""
    return perplexity_contrast(a, [b], chunk=chunk, n_boot=n_boot, seed=seed)


def context_use(
    model: LSTMLM, ids: np.ndarray, reset_every: int = 5, batch_size: int = 10, bptt: int = 70, n_boot: int = N_BOOT_PTB, seed: int = 0
) -> Interval:
    """Perplexity with the full context minus perplexity with the state reset every
    ``reset_every`` words, on the same tokens ``ids (n,)``: a paired bootstrap over
    100-token chunks (:func:`perplexity_difference`). Clearly below 0: the model uses
    context beyond the last few words."""
    full = token_nll(model, ids, batch_size, bptt)
    reset = token_nll(model, ids, batch_size, bptt, reset_every=reset_every)
    return perplexity_difference(full, reset, n_boot=n_boot, seed=seed)


def context_use_gate(name: str, interval: Interval, reset_every: int = 5) -> Gate:
    """Passed when ``interval`` (:func:`context_use`) lies entirely below 0: ``name``'s
    perplexity with its full context is clearly below its perplexity with the state reset
    every ``reset_every`` words. A memory claim about a model that does not use its
    context measures nothing the model relies on."""
    return Gate(
        f"{name} uses its context: ppl(full context) < ppl(state reset every {reset_every} words)",
        interval.high < 0,
        f"ppl(full) - ppl(reset every {reset_every}) {interval}",
    )


def frequency_bins(ids: np.ndarray, train_counts: np.ndarray) -> np.ndarray:
    """Label of :data:`FREQUENCY_BINS` for every token of ``ids`` ``(n,)`` by its training count."""
    counts = np.asarray(train_counts)[np.asarray(ids)]
    out = np.empty(len(counts), dtype=object)
    for label, low, high in FREQUENCY_BINS:
        out[(counts >= low) & (counts < high)] = label
    return out


def perplexity_by_frequency(
    nlls: dict[str, NLL], ids: np.ndarray, train_counts: np.ndarray, reference: str, n_boot: int = N_BOOT_PTB, seed: int = 0
) -> pd.DataFrame:
    """Perplexity per word-frequency bin of every model, and its difference from ``reference``.

    Each bin's perplexity is ``exp`` of the mean NLL of the test tokens whose *target*
    word is in the bin (the ICLR version's ``high_low_freq_bin_evaluation``); the
    difference is a paired bootstrap over 100-token chunks of the test stream, counting
    only the bin's tokens in each chunk.

    Args:
        nlls: model name -> per-token test NLL ``(n,)`` or ``(seeds, n)``, all predicted at
            the same positions, or its :class:`ChunkNLL` with per-bin sums (a run's
            ``test_chunks``); must contain ``reference``.
        ids: the test tokens ``(n,)``; ``train_counts``: ``(vocab,)`` counts in PTB train: they
            bin the per-token NLLs (a :class:`ChunkNLL` carries its bins).

    Returns:
        One row per model and bin: ``model``, ``bin``, ``tokens``, ``ppl``, ``delta``
        (:class:`~prismlib.stats.Interval` against ``reference``; ``None`` for it).
    """
    if reference not in nlls:
        raise ValueError(f"reference {reference!r} is not among the models {list(nlls)}")
    bins = None if all(isinstance(x, ChunkNLL) for x in nlls.values()) else frequency_bins(ids, train_counts)
    chunks = {name: as_chunks(x, bins).mean() for name, x in nlls.items()}
    rows = []
    for label, _, _ in FREQUENCY_BINS:
        binned = {name: c.bin(label) for name, c in chunks.items()}
        for name, x in binned.items():
            delta = None if name == reference else perplexity_difference(x, binned[reference], n_boot=n_boot, seed=seed)
            rows.append({"model": name, "bin": label, "tokens": int(x.counts.sum()), "ppl": x.perplexity(), "delta": delta})
    return pd.DataFrame(rows)


def bin_log_ratio_contrast(
    model: ChunkNLL, reference: ChunkNLL, bin_a: str, bin_b: str, n_boot: int = N_BOOT_PTB, seed: int = 0
) -> Interval:
    """``log ratio(bin_a) - log ratio(bin_b)`` of ``model`` against ``reference``, a bin's log ratio
    being ``log(ppl_model / ppl_reference)`` over the tokens of that :data:`FREQUENCY_BINS` bin
    (its mean NLL difference), paired over the same resampled chunks (the chunks that hold a
    prediction): > 0 when ``model`` is relatively worse on ``bin_a``'s words. The statistic and
    its resampling are :func:`prismlib.lstm.iclr.routing.log_ratio_contrast`'s on the per-token NLL.

    Args:
        model, reference: chunk sums with per-bin sums (seed means are taken), the same positions predicted.
    """
    a, b = model.mean(), reference.mean()
    if not np.array_equal(a.counts, b.counts):
        raise ValueError("the two models are not predicted at the same positions; evaluate them alike")
    used = a.counts > 0
    data = [x.bin(label).sums for label in (bin_a, bin_b) for x in (a, b)]
    data += [a.bin(label).counts.astype(np.float64) for label in (bin_a, bin_b)]

    def stat(aa: np.ndarray, ai: np.ndarray, ba: np.ndarray, bi: np.ndarray, na: np.ndarray, nb: np.ndarray, axis: int = -1) -> np.ndarray:
        return (aa.sum(axis) - ai.sum(axis)) / na.sum(axis) - (ba.sum(axis) - bi.sum(axis)) / nb.sum(axis)

    return paired_bootstrap(stat, [d[used] for d in data], n_boot=n_boot, seed=seed)


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


def bootstrap_perplexity(nll: NLL, block: int = 70, samples: int = 1000, seed: int = 0) -> Bootstrap:
    """The slides' "bootstrapped samples performance": perplexity over resamples of ``block``-token pieces.

    The slides bootstrap PTB test as 1177 sequences of 70 words and print the mean +/- sd
    of the resampled perplexities, reproduced here for their table. Each resample draws as
    many blocks as there are, with replacement, and its perplexity is ``exp(sum nll /
    tokens)``. The resampling is ``scipy.stats.bootstrap``'s (as in :mod:`prismlib.stats`,
    which gives the verdicts); only its distribution's mean and sd are kept. This sd is
    not a test: the claims compare models with :func:`perplexity_contrast`.

    Args:
        nll: per-token NLL ``(n,)``, NaN for unpredicted tokens (see :func:`token_nll`), or one
            model's :class:`ChunkNLL` with its block sums (a run's ``test_chunks``): the same
            whole blocks are resampled.
    """
    if block < 1 or samples < 2:
        raise ValueError("bootstrap needs block >= 1 and samples >= 2")
    if isinstance(nll, ChunkNLL):
        if nll.block_sums is None or nll.block_counts is None or nll.tokens is None or nll.sums.ndim != 1:
            raise ValueError("a bootstrap over blocks needs one model's block sums and its stream length (a run's test_chunks)")
        if block != nll.block:
            raise ValueError(f"these NLL sums are per {nll.block}-token block, not per {block}")
        n_tokens, point = nll.tokens, nll.perplexity()
    else:
        n_tokens, point = len(nll), perplexity(nll)
    n_blocks = n_tokens // block
    if n_blocks < 2:
        raise ValueError(f"{n_tokens} tokens give fewer than two blocks of {block}; use a smaller block")
    if isinstance(nll, ChunkNLL):
        sums = nll.block_sums[:n_blocks].astype(np.float64)  # type: ignore[index]
        counts = nll.block_counts[:n_blocks].astype(np.float64)  # type: ignore[index]
    else:
        x = np.asarray(nll[: n_blocks * block], dtype=np.float64).reshape(n_blocks, block)
        sums = np.nansum(x, axis=1)
        counts = np.isfinite(x).sum(axis=1).astype(np.float64)

    def ppl(s: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.exp(s.sum(axis) / c.sum(axis))

    dist = bootstrap_distribution(ppl, (sums, counts), n_boot=samples, seed=seed)
    return Bootstrap(point, float(dist.mean()), float(dist.std(ddof=1)), samples, n_blocks)


def seed_spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value) of per-seed perplexities."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


@dataclass
class SeedMeans:
    """Trained models grouped by model, seeds stacked: one perplexity per model (the
    seed mean), the seed spread beside it, and paired contrasts against a reference.

    Attributes:
        nll: model key -> its test NLL: a :class:`ChunkNLL` (a run's ``test_chunks``, seeds
            stacked) or per-token, ``(seeds, n)`` for a model of several seeds and ``(n,)`` for
            one (NaN where not predicted).
        reference: the key contrasts are taken against (e.g. ``"baseline"``).
    """

    nll: dict[Any, NLL]
    reference: Any

    def perplexity(self, key: Any) -> float:
        """Perplexity of the seed mean (:func:`model_perplexity`)."""
        return model_perplexity(self.nll[key])

    def seed_sd(self, key: Any) -> float:
        """Sample SD of the seeds' own perplexities (0 for one seed); reported, not a test."""
        return seed_spread([perplexity(row) for row in seed_rows(self.nll[key])])[1] if self.seeds(key) > 1 else 0.0

    def seeds(self, key: Any) -> int:
        """How many seeds model ``key`` has."""
        return len(seed_rows(self.nll[key]))

    def delta(self, key: Any) -> Interval:
        """Perplexity of ``key`` minus the reference's, paired bootstrap over 100-token
        chunks (:func:`perplexity_difference` of the seed means)."""
        return perplexity_difference(self.nll[key], self.nll[self.reference])


def seed_rows(nll: NLL) -> list[NLL]:
    """Each seed's own NLL of a model (``[nll]`` for one seed): rows of ``(seeds, n)`` or :meth:`ChunkNLL.rows`."""
    if isinstance(nll, ChunkNLL):
        return list(nll.rows())
    return list(nll) if np.ndim(nll) == 2 else [nll]


def seed_means(runs: dict[Any, Any], key: Callable[[Any], Any], reference: Any, at: str = "end") -> SeedMeans:
    """:class:`SeedMeans` of ``runs`` (spec -> :class:`~prismlib.lstm.trained_runs.TrainedRun`),
    grouped by ``key(spec)`` (e.g. ``lambda s: s.label``; every seed of a model shares
    its key), in the order the keys first appear.

    A run gives its test NLL as ``run.test_chunks`` (:class:`ChunkNLL`; per-token NLL is
    taken too). ``at="half"`` stacks the test NLL stored at half of each run's budget instead
    (:meth:`~prismlib.lstm.trained_runs.TrainedRun.test_chunks_at_half`): the same contrasts then give
    the earlier value of the effect-stability gate (:func:`prismlib.lstm.claim_gates`).
    ``at="valid_end"`` / ``"valid_previous"`` stack an annealed run's *validation* NLL at its
    last two post-decay checkpoints (:meth:`~prismlib.lstm.trained_runs.TrainedRun.valid_chunks_at`):
    the stability gate of annealed runs, which never reads test.

    Raises:
        ValueError: a run has no such snapshot (trained before they were kept, or not annealed).
    """
    if at not in ("end", "half", "valid_end", "valid_previous"):
        raise ValueError(f"at must be 'end', 'half', 'valid_end' or 'valid_previous', got {at!r}")
    stacked: dict[Any, NLL] = {}
    for spec, run in runs.items():
        nll: NLL | None
        if at.startswith("valid_"):
            nll = run.valid_chunks_at(at.removeprefix("valid_"))
            if nll is None:
                raise ValueError(f"{run.spec.label} seed {run.spec.seed} has fewer than two post-decay validation checkpoints")
        elif at == "half":
            snap = run.test_chunks_at_half()
            if snap is None:
                raise ValueError(f"{run.spec.label} seed {run.spec.seed} has no test NLL stored at half its budget; retrain it")
            nll = snap[1]
        else:
            nll = run.test_chunks
        stacked[spec] = nll
    return grouped_means(stacked, key, reference)


def grouped_means(nll: Mapping[Any, NLL], key: Callable[[Any], Any], reference: Any) -> SeedMeans:
    """:class:`SeedMeans` of runs' test NLL (spec -> its :class:`ChunkNLL` or per-token NLL),
    grouped by ``key(spec)`` in the order the keys first appear, seeds stacked in the order given.

    Raises:
        ValueError: no run of ``reference``.
    """
    groups: dict[Any, list[NLL]] = {}
    for spec, x in nll.items():
        groups.setdefault(key(spec), []).append(x)
    if reference not in groups:
        raise ValueError(f"reference {reference!r} is not among the models {list(groups)}")
    return SeedMeans({k: _stacked(v) for k, v in groups.items()}, reference)


def _stacked(seeds: Sequence[NLL]) -> NLL:
    """One model's seeds as one NLL: a :class:`ChunkNLL` stack, or ``(seeds, n)`` per-token NLL."""
    if any(isinstance(x, ChunkNLL) for x in seeds):
        return seeds[0] if len(seeds) == 1 else ChunkNLL.stack([as_chunks(x) for x in seeds])
    per_token = cast("list[np.ndarray]", list(seeds))
    return np.stack(per_token) if len(per_token) > 1 else np.asarray(per_token[0])
