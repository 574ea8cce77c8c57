"""Routing by timescale: zeroing blocks of units ordered by timescale, and forget-gate trajectories.

**Unit ablation** (the ICLR 2021 version's "information routing", read from the official
``util/model_ablation.py`` and ``util/model_evaluation.py``, written anew). The official code
orders layer 2's 1150 units by assigned timescale, longest first (its grid is decreasing), and
for block ``i`` of 50 units sets those units of layer 2's *output* to zero where it enters layer
3 (``current_input[:, :, (i-1)*50:i*50] = 0``; layer 2's own recurrence keeps them), scores PTB
test and divides each word-frequency bin's perplexity by the intact model's
(:data:`prismlib.lstm.FREQUENCY_BINS`). Here :func:`timescale_order` sorts any layer's units by
the timescale of their forget bias, :func:`unit_blocks` cuts the order into the profile's number
of blocks, :func:`ablated_token_nll` scores a stream with one block zeroed (a forward hook on the
layer, the rest of :func:`prismlib.lstm.token_nll` unchanged) and :func:`routing_ratios` gives
each block's perplexity ratio per bin with a paired bootstrap over 100-token chunks of the test
stream (:data:`prismlib.lstm.CHUNK`), the independent units of every PTB claim.
:func:`log_ratio_contrast` asks whether a block hurts rare words relatively more than frequent
ones, alone or against a reference model's blocks (the baseline's units in random order: what
the timescale ordering adds over zeroing any block of a trained LSTM). :func:`routing_test` is
the claim as the paper shows it, over the seeds whose weights are kept: across the blocks (the
longest-timescale third against the shortest third, :func:`third_weights`) and against random
blocks of the same size of the same model, on one interval with the chunks' and the seeds'
variance (:func:`routing_contrast`).

**Forget-gate trajectories** (:func:`forget_gate_trajectories`): the forget gate of every unit
at every word of one passage, read as :func:`prismlib.lstm.forget_gate_means` reads them (the
fused kernel returns no gates, so they are recomputed from each layer's input and previous
output), to draw units sorted by assigned timescale, fixed against free.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor

from prismlib.claims import Test, with_seeds
from prismlib.lstm.chunks import CHUNK, FREQUENCY_BINS
from prismlib.lstm.evaluation import N_BOOT_PTB, chunk_sums, frequency_bins, token_nll
from prismlib.lstm.model import LSTMLM
from prismlib.lstm.timescales import Convention, timescale_from_bias
from prismlib.stats import Interval, paired_bootstrap


def timescale_order(forget_biases: Tensor | np.ndarray, convention: Convention = "exp") -> np.ndarray:
    """``(hidden,)`` unit indices, longest timescale first (ties by index), from ``(hidden,)``
    forget biases (``-inf``, a unit with no memory, sorts last)."""
    T = timescale_from_bias(torch.as_tensor(np.asarray(forget_biases, dtype=np.float64)), convention).numpy()
    return np.argsort(-T, kind="stable")


def unit_blocks(order: np.ndarray, n_blocks: int) -> list[np.ndarray]:
    """``order`` cut into ``n_blocks`` consecutive blocks of (nearly) equal size (``np.array_split``)."""
    if not 1 <= n_blocks <= len(order):
        raise ValueError(f"n_blocks must be in [1, {len(order)}] (the units), got {n_blocks}")
    return [np.asarray(b) for b in np.array_split(np.asarray(order), n_blocks)]


@torch.no_grad()
def ablated_token_nll(model: LSTMLM, ids: np.ndarray, layer: int, units: np.ndarray, batch_size: int = 10, bptt: int = 70) -> np.ndarray:
    """:func:`prismlib.lstm.token_nll` ``(n,)`` with ``units`` of layer ``layer`` (0-based) zeroed in
    that layer's output, i.e. in the input of the next layer (or of the output layer for the last).

    The layer's own recurrent state keeps the units (as the official ablation, which zeroes the
    next layer's input). ``units``: indices into the layer's hidden units (may be empty)."""
    if not 0 <= layer < len(model.rnns):
        raise ValueError(f"layer must be in [0, {len(model.rnns)}), got {layer}")
    idx = torch.as_tensor(np.asarray(units, dtype=np.int64))

    def zero(_module: torch.nn.Module, _inputs: object, output: tuple[Tensor, object]) -> tuple[Tensor, object]:
        out, state = output
        out = out.clone()
        out[..., idx.to(out.device)] = 0
        return out, state

    handle = model.rnns[layer].register_forward_hook(zero)
    try:
        return token_nll(model, ids, batch_size, bptt)
    finally:
        handle.remove()


def bin_ratio(ablated: np.ndarray, intact: np.ndarray, keep: np.ndarray, n_boot: int = N_BOOT_PTB, seed: int = 0) -> Interval:
    """``ppl(ablated) / ppl(intact)`` over the tokens where ``keep`` ``(n,)`` (a frequency bin), with a
    paired bootstrap over :data:`~prismlib.lstm.CHUNK`-token chunks; ``ablated``, ``intact``: ``(n,)`` NLL."""
    masked = np.stack([np.where(keep, ablated, np.nan), np.where(keep, intact, np.nan)])
    sums, counts = chunk_sums(masked, CHUNK)

    def stat(a: np.ndarray, b: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.exp((a.sum(axis) - b.sum(axis)) / n.sum(axis))

    return paired_bootstrap(stat, (sums[0], sums[1], counts), n_boot=n_boot, seed=seed)


def routing_ratios(
    intact: np.ndarray,
    ablated: np.ndarray,
    ids: np.ndarray,
    train_counts: np.ndarray,
    block_timescales: np.ndarray,
    n_boot: int = N_BOOT_PTB,
    seed: int = 0,
) -> pd.DataFrame:
    """Each block's perplexity ratio (ablated / intact) per word-frequency bin.

    Args:
        intact: ``(n,)`` per-token NLL of the intact model; ``ablated``: ``(B, n)`` with block
            ``b`` zeroed (:func:`ablated_token_nll`), the same positions predicted.
        ids: the scored tokens ``(n,)``; ``train_counts``: ``(vocab,)`` counts in training.
        block_timescales: ``(B,)`` a block's mean assigned timescale (for the table).

    Returns:
        One row per block and bin (:data:`~prismlib.lstm.FREQUENCY_BINS`, then ``all``): ``block``
        (1 = longest timescales), ``mean_T``, ``bin``, ``tokens``, ``ratio``, ``low``, ``high``.
    """
    ablated = np.atleast_2d(np.asarray(ablated, dtype=np.float64))
    if ablated.shape[1] != len(intact) or len(block_timescales) != len(ablated):
        raise ValueError(f"ablated must be (blocks, {len(intact)}) with one timescale per block, got {ablated.shape}")
    bins = frequency_bins(ids, train_counts)
    masks = {label: bins == label for label, _, _ in FREQUENCY_BINS} | {"all": np.ones(len(ids), dtype=bool)}
    rows = []
    for b, nll in enumerate(ablated):
        for label, keep in masks.items():
            keep = keep & np.isfinite(intact)
            if keep.sum() == 0:
                continue
            iv = bin_ratio(nll, intact, keep, n_boot, seed)
            rows.append(
                {
                    "block": b + 1,
                    "mean_T": float(block_timescales[b]),
                    "bin": label,
                    "tokens": int(keep.sum()),
                    "ratio": iv.effect,
                    "low": iv.low,
                    "high": iv.high,
                }
            )
    return pd.DataFrame(rows)


def log_ratio_contrast(
    ablated: np.ndarray,
    intact: np.ndarray,
    keep_a: np.ndarray,
    keep_b: np.ndarray,
    n_boot: int = N_BOOT_PTB,
    seed: int = 0,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
) -> Interval:
    """``log ratio(bin a) - log ratio(bin b)`` of one ablation (each ratio as :func:`bin_ratio`), paired
    over the same resampled chunks: > 0 when the ablation hurts bin ``a``'s words relatively more.

    With ``reference = (ref_ablated, ref_intact)`` (``(R, n)`` and ``(n,)``: another model's
    ablations of the same stream, e.g. the baseline's unit blocks in random order) the effect is
    this contrast minus the mean of the same contrast over the ``R`` reference ablations, all
    resampled over the same chunks: > 0 when this ablation singles out bin ``a`` more than a
    typical reference block does.

    ``ablated``, ``intact``: ``(n,)`` NLL; ``keep_a``, ``keep_b``: ``(n,)`` bool, the two bins."""
    pairs = [(np.asarray(ablated, dtype=np.float64), np.asarray(intact, dtype=np.float64))]
    if reference is not None:
        ref_ablated, ref_intact = np.atleast_2d(np.asarray(reference[0], dtype=np.float64)), np.asarray(reference[1], dtype=np.float64)
        if ref_ablated.shape[1:] != pairs[0][1].shape or ref_intact.shape != pairs[0][1].shape:
            n = len(intact)
            raise ValueError(f"reference must be ((R, {n}), ({n},)) NLL of the same stream, got {ref_ablated.shape}, {ref_intact.shape}")
        pairs += [(row, ref_intact) for row in ref_ablated]
    valid = np.logical_and.reduce([np.isfinite(x) for pair in pairs for x in pair])
    groups = np.arange(len(intact)) // CHUNK
    n_groups = int(groups[-1]) + 1

    def per_chunk(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return np.bincount(groups, weights=np.where(keep & valid, values, 0.0), minlength=n_groups)

    data = [per_chunk(np.ones(len(intact)), k) for k in (keep_a, keep_b)]
    data += [per_chunk(x, k) for abl, itc in pairs for k in (keep_a, keep_b) for x in (abl, itc)]
    used = np.bincount(groups, weights=valid.astype(np.float64), minlength=n_groups) > 0

    def stat(na: np.ndarray, nb: np.ndarray, *sums: np.ndarray, axis: int = -1) -> np.ndarray:
        a, b = na.sum(axis), nb.sum(axis)
        contrasts = [(aa.sum(axis) - ai.sum(axis)) / a - (ba.sum(axis) - bi.sum(axis)) / b for aa, ai, ba, bi in zip(*[iter(sums)] * 4)]
        return contrasts[0] - np.mean(contrasts[1:], axis=0) if len(contrasts) > 1 else contrasts[0]

    return paired_bootstrap(stat, [d[used] for d in data], n_boot=n_boot, seed=seed)


@torch.no_grad()
def forget_gate_trajectories(model: LSTMLM, ids: np.ndarray | Tensor) -> list[np.ndarray]:
    """Forget-gate activation of every unit at every word of one passage, per layer ``(length, hidden_l)``.

    The model reads ``ids`` ``(length,)`` as one stream from a zero state in eval mode; row ``t``
    is ``f_t = sigmoid(W_if x_t + W_hf h_{t-1} + b_f)`` after reading word ``t`` (the gate that
    decides how much of the cell state survives that step)."""
    was = model.training
    model.eval()
    device = next(model.parameters()).device
    tokens = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=device)[None]
    x = F.embedding(tokens, model.embedding_matrix())
    out_gates = []
    for rnn in model.rnns:
        h = rnn.hidden_size
        out, _ = rnn(x)
        h_prev = torch.cat([torch.zeros(1, 1, h, device=device, dtype=out.dtype), out[:, :-1]], dim=1)
        b_ih, b_hh = rnn.effective_biases()
        sl = slice(h, 2 * h)
        gate = x @ rnn.weight_ih_l0[sl].T + h_prev @ rnn.weight_hh_l0_raw[sl].T + b_ih[sl] + b_hh[sl]
        out_gates.append(torch.sigmoid(gate)[0].double().cpu().numpy())
        x = out
    model.train(was)
    return out_gates


ROUTING_MARGIN = 0.005
"""The smallest routing contrast that matters (log perplexity ratio, rare minus frequent words:
half a percent of perplexity), fixed before the run: the paper's figure reads the ratios by eye,
so this prior stands in for a stated size."""


def third_weights(n_blocks: int, n_random: int, against: str) -> np.ndarray:
    """Weights ``(n_blocks + n_random,)`` of the routing statistics over blocks ordered longest
    timescale first, then ``n_random`` random blocks of the same size.

    ``against="short"``: the mean over the longest-timescale third of the blocks minus the mean
    over the shortest third (the random blocks weigh 0); ``against="random"``: the longest third's
    mean minus the mean over the random blocks. A third is ``max(1, n_blocks // 3)`` blocks."""
    if n_blocks < 2 or n_random < 0:
        raise ValueError(f"needs at least 2 timescale blocks and no negative count of random blocks, got {n_blocks}, {n_random}")
    k = max(1, n_blocks // 3)
    w = np.zeros(n_blocks + n_random)
    w[:k] = 1 / k
    if against == "short":
        w[n_blocks - k : n_blocks] = -1 / k
    elif against == "random":
        if n_random < 1:
            raise ValueError("against='random' needs at least one random block")
        w[n_blocks:] = -1 / n_random
    else:
        raise ValueError(f"against must be 'short' or 'random', got {against!r}")
    return w


def routing_contrast(
    ablated: np.ndarray,
    intact: np.ndarray,
    keep_a: np.ndarray,
    keep_b: np.ndarray,
    weights: np.ndarray,
    n_boot: int = N_BOOT_PTB,
    seed: int = 0,
) -> tuple[Interval, list[float]]:
    """A weighted sum over ablations of ``log ratio(bin a) - log ratio(bin b)`` (each as
    :func:`log_ratio_contrast`), averaged over training seeds, with a paired bootstrap over the
    :data:`~prismlib.lstm.CHUNK`-token chunks shared by every seed and ablation.

    Args:
        ablated: ``(S, K, n)`` NLL of seed ``s`` with ablation ``k`` (e.g. the timescale blocks,
            longest first, then random blocks of the same size); ``intact``: ``(S, n)``.
        keep_a, keep_b: ``(n,)`` bool, the two word bins (e.g. rare and frequent words).
        weights: ``(K,)`` the combination (:func:`third_weights`).

    Returns:
        The seed-mean statistic's interval over chunks, and the statistic of each seed (for
        :func:`prismlib.claims.with_seeds`). The statistic is linear in the per-chunk sums, so
        seeds and ablations fold into one summed contrast per chunk before resampling.
    """
    abl = np.asarray(ablated, dtype=np.float64)
    itc = np.asarray(intact, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if abl.ndim != 3 or itc.shape != (abl.shape[0], abl.shape[2]) or w.shape != (abl.shape[1],):
        raise ValueError(f"ablated must be (S, K, n), intact (S, n), weights (K,); got {abl.shape}, {itc.shape}, {w.shape}")
    n = abl.shape[2]
    valid = np.isfinite(abl).all(axis=(0, 1)) & np.isfinite(itc).all(axis=0)
    groups = np.arange(n) // CHUNK
    n_groups = int(groups[-1]) + 1
    used = np.bincount(groups, weights=valid.astype(np.float64), minlength=n_groups) > 0
    delta = np.where(valid, np.einsum("k,skn->sn", w, abl - itc[:, None, :]), 0.0)  # (S, n): weighted change per token

    def per_chunk(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return np.bincount(groups, weights=np.where(keep & valid, values, 0.0), minlength=n_groups)[used]

    na, nb = (per_chunk(np.ones(n), k) for k in (keep_a, keep_b))
    if na.sum() == 0 or nb.sum() == 0:
        raise ValueError("both word bins need scored tokens")
    da = np.stack([per_chunk(d, keep_a) for d in delta])  # (S, G)
    db = np.stack([per_chunk(d, keep_b) for d in delta])
    per_seed = [float(a.sum() / na.sum() - b.sum() / nb.sum()) for a, b in zip(da, db)]

    def stat(ca: np.ndarray, cb: np.ndarray, sa: np.ndarray, sb: np.ndarray, axis: int = -1) -> np.ndarray:
        return sa.sum(axis) / ca.sum(axis) - sb.sum(axis) / cb.sum(axis)

    iv = paired_bootstrap(stat, [na, nb, da.mean(axis=0), db.mean(axis=0)], n_boot=n_boot, seed=seed)
    return iv, per_seed


def routing_test(
    ablated: np.ndarray,
    intact: np.ndarray,
    keep_a: np.ndarray,
    keep_b: np.ndarray,
    weights: np.ndarray,
    label: str,
    margin: float = ROUTING_MARGIN,
    n_boot: int = N_BOOT_PTB,
    seed: int = 0,
) -> Test:
    """``routing_contrast`` > ``margin``, on the one interval with both sources of variance (the
    chunks' bootstrap and the spread of the seeds' own statistics, paired by seed:
    :func:`prismlib.claims.with_seeds`); the chunks' bootstrap alone with one seed."""
    iv, per_seed = routing_contrast(ablated, intact, keep_a, keep_b, weights, n_boot, seed)
    test = Test.superiority(iv, margin, label=label)
    return with_seeds(test, per_seed) if len(per_seed) >= 2 else test
