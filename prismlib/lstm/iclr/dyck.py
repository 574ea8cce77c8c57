"""The Dyck-2 long-range-dependency task of Mahto et al. (ICLR 2021): its data and its scoring.

Source: the official code, HuthLab/multi-timescale-LSTM-LMs at commit ``d27de33``:
``create_dyckn.py`` draws the data, ``datasets.py`` encodes it, ``experiments.py`` scores it,
``plot_dyckn_results.py`` bins the scores and ``README.md`` gives the paper's command lines. Each
constant names the file and line it comes from; the code here is written anew, not copied.

**Grammar.** One nonterminal ``S``, expanded leftmost-first, one uniform draw per expansion::

    S -> ( S )   0.25        S -> S S   0.25
    S -> [ S ]   0.25        S -> ""    0.25

A derivation is abandoned as soon as it has emitted more than :data:`MAX_LENGTH` symbols, and a
finished string shorter than :data:`MIN_LENGTH` (the empty one) is dropped, so the data are the
grammar's strings conditioned on ``2 <= length <= 200``. The grammar is critical (an ``S`` has one
``S`` child on average): it ends with probability one, with heavy-tailed lengths
(:func:`pair_probabilities` gives the exact law). The official set keeps *distinct* strings over
all three splits (a Python ``set``), so the splits are disjoint; :func:`build_dataset` does too.

**Vocabulary and targets.** Token ids as ``datasets.py``: the opener of type ``t`` is ``2t``, its
closer ``2t + 1`` (``( ) [ ]`` are 0 1 2 3); no start or end symbol exists. At position ``i`` the
model has read ``ids[:i + 1]`` and predicts, with one sigmoid per bracket type, which closer may
come next: the closer of the innermost open bracket, all zeros once every bracket is closed.
:func:`legal_next` gives the full multi-hot over the vocabulary plus an :data:`END` column (ours:
legal when nothing is open); the official targets are its closer columns (:func:`closer_targets`).
Nothing is lost: openers are always legal (the length limit is not encoded, as officially) and END
is legal exactly when no closer is. The official label is a binary string, most significant bit
first, so its column 0 is the *last* type; here column ``t`` is type ``t`` (a permutation of units).

**Distances.** At a closer at ``i``, ``i - j`` back to its opener ``j``; 0 at an opener (where the
official ``compute_timescales`` also writes 0). The official *timescale* of a closer is the span
``i - j + 1`` (``create_dyckn.py:101-122``), so its "max timescale in sequence" is the longest
distance + 1; :func:`official_edges` converts its bins.

**Scoring** (``experiments.py:7-14``). A sequence is correct when, at every position within its
length, every output ``> 0.5`` equals its 0/1 target. Accuracy is read against the longest bracket
distance of each sequence, in bins, with an interval over the bin's sequences
(:func:`accuracy_by_distance`); over the paper's 20 seeds, :func:`prismlib.stats.mean_interval` of
each bin's accuracies (the official figure draws their mean +/- one SD).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _scipy_stats

from prismlib.stats import N_BOOT, paired_bootstrap

P_OPEN = (0.25, 0.25)  # README.md:56 `-p 0.25 0.25`; S -> (S) per type, create_dyckn.py:55-60
P_SPLIT = 0.25  # README.md:56 `-q 0.25`; S -> SS, create_dyckn.py:61-62 (argparse default 0.4, :218, not used)
P_EMPTY = 1.0 - sum(P_OPEN) - P_SPLIT  # S -> epsilon, create_dyckn.py:63-68 (the remainder)
MAX_LENGTH = 200  # README.md:56 `--max_length 200`; rejected when longer, create_dyckn.py:71-72
MIN_LENGTH = 2  # create_dyckn.py:226 default; rejected when shorter, create_dyckn.py:34-35 / 73-74
N_TRAIN, N_VALIDATION, N_TEST = 10_000, 2_000, 5_000  # README.md:56; distinct, create_dyckn.py:125-137
SYMBOLS = "()[]{}|!AaBbCcDd"  # bracket pairs of create_dyckn.py:42-43; ids 2t / 2t + 1, datasets.py:17-18
N_TYPES = len(P_OPEN)
END = 2 * N_TYPES  # our extra column of legal_next (the official code has no end symbol)
PAD = -1  # token id of the padding of DyckSplit.tokens (the mask says what is real)
THRESHOLD = 0.5  # experiments.py:7 and :267; an output counts as 1 when > THRESHOLD (:11, :288)
N_EDGES = 10  # plot_dyckn_results.py:18, np.linspace(2, max_len, num=10): 9 bins of the max span


@dataclass(frozen=True)
class DyckRecipe:
    """The official Dyck-2 model and training settings (``README.md:65``, the paper's command, and
    ``run_dyckn.py`` / ``model_dyckn.py``), for wiring training: nothing here trains."""

    hidden: int = 256  # README.md:65 -u 256
    layers: int = 1  # README.md:65 -l 1 (MTSLSTMModel ignores num_layers: one layer, model_dyckn.py:31)
    epochs: int = 2000  # README.md:65 --epochs 2000
    batch_size: int = 32  # README.md:65
    lr: float = 1e-4  # README.md:65; Adam, run_dyckn.py:45
    bptt: int = 200  # README.md:65 -s 200: chunks of 200 steps (one chunk per sequence), experiments.py:187
    clip: float = 1.0  # run_dyckn.py:46, clip_grad_norm_ per chunk, experiments.py:207
    loss: str = "mse_sum"  # MSELoss(sum) of the sigmoids / (types * positions), experiments.py:70, :197-204
    stop_val_loss: float = 1e-4  # stop once validation loss < 1e-4, experiments.py:225
    invgamma_alpha: float = 1.5  # README.md:65 --alpha; MTS T = invgamma.isf(linspace(0,1,H+2))[1:-1], model_dyckn.py:67
    invgamma_scale: float = 1.0  # README.md:65 --scale
    mts_convention: str = "exp"  # b_f = -log(expm1(1/T)), b_i = -b_f, in bias_hh; bias_ih = 0, model_dyckn.py:35, :70-71
    mts_freeze: str = "all"  # requires_grad False on both bias tensors (g, o keep their random init), model_dyckn.py:38-39
    seeds: tuple[int, ...] = tuple(range(1, 21))  # README.md:69


OFFICIAL_RECIPE = DyckRecipe()


def encode(text: str) -> np.ndarray:
    """``(L,)`` int64 token ids of a bracket string (``"([])"`` -> ``[0, 2, 3, 1]``)."""
    try:
        return np.array([SYMBOLS.index(c) for c in text], dtype=np.int64)
    except ValueError:
        raise ValueError(f"{text!r} holds a symbol outside {SYMBOLS!r}") from None


def decode(ids: np.ndarray) -> str:
    """The bracket string of ``(L,)`` token ids (padding ignored)."""
    return "".join(SYMBOLS[int(i)] for i in np.asarray(ids) if i != PAD)


def production_probabilities(p_open: Sequence[float] = P_OPEN, p_split: float = P_SPLIT) -> np.ndarray:
    """``(n_types + 2,)``: P(S -> t S t') per type, then P(S -> S S), then P(S -> "")."""
    probs = np.array([*p_open, p_split, 1.0 - sum(p_open) - p_split])
    if len(p_open) < 1 or np.any(probs[:-1] <= 0) or probs[-1] <= 0 or 2 * len(p_open) > len(SYMBOLS):
        raise ValueError(f"need 1-8 positive bracket probabilities and a positive split and empty rule; got {p_open}, {p_split}")
    return probs  # create_dyckn.py:192 also refuses sum(p) + q >= 1


def derive(
    rng: np.random.Generator, p_open: Sequence[float] = P_OPEN, p_split: float = P_SPLIT, max_length: int = MAX_LENGTH
) -> tuple[np.ndarray | None, np.ndarray]:
    """One leftmost derivation from ``S``.

    Returns:
        ``(ids, counts)``: the ``(L,)`` int64 string (``None`` when it grew past ``max_length``
        and was abandoned) and the ``(n_types + 2,)`` counts of the productions drawn, in the
        order of :func:`production_probabilities`.
    """
    cum = np.cumsum(production_probabilities(p_open, p_split))
    n_types, last = len(p_open), len(cum) - 1
    counts = np.zeros(len(cum), dtype=np.int64)
    out: list[int] = []
    stack = [-1]  # what is left of the sentential form, reversed: -1 is S, k >= 0 a pending closer
    codes: list[int] = []
    terminals = 0  # symbols emitted or pending: the official `cp`
    while stack:
        top = stack.pop()
        if top >= 0:
            out.append(top)
            continue
        if not codes:  # draw uniforms in chunks; a production is where its uniform falls in cum
            codes = np.minimum(np.searchsorted(cum, rng.random(64), side="right"), last).tolist()[::-1]
        code = codes.pop()
        counts[code] += 1
        if code < n_types:
            terminals += 2
            if terminals > max_length:  # create_dyckn.py:71-72
                return None, counts
            out.append(2 * code)
            stack += [2 * code + 1, -1]
        elif code == n_types:
            stack += [-1, -1]
    return np.array(out, dtype=np.int64), counts


def sample_sequences(
    rng: np.random.Generator,
    n: int,
    *,
    unique: bool = True,
    p_open: Sequence[float] = P_OPEN,
    p_split: float = P_SPLIT,
    min_length: int = MIN_LENGTH,
    max_length: int = MAX_LENGTH,
) -> list[np.ndarray]:
    """``n`` strings ``(L_k,)`` of the grammar with ``min_length <= L_k <= max_length``, distinct when
    ``unique`` (as the official data set), in the order drawn."""
    found: dict[bytes, np.ndarray] = {}
    kept: list[np.ndarray] = []
    tries = 0
    while len(kept) < n:
        tries += 1
        if tries > 100 * n + 10_000:
            raise ValueError(f"only {len(kept)} of {n} strings after {tries - 1} derivations: too few distinct strings fit")
        ids, _ = derive(rng, p_open, p_split, max_length)
        if ids is None or len(ids) < min_length:
            continue
        key = ids.astype(np.int8).tobytes()
        if unique and key in found:
            continue
        found[key] = ids
        kept.append(ids)
    return kept


def pair_probabilities(max_pairs: int, p_open: Sequence[float] = P_OPEN, p_split: float = P_SPLIT) -> np.ndarray:
    """``(max_pairs + 1,)``: exact P(the grammar's string has ``k`` bracket pairs), before conditioning.

    From ``F(x) = P_EMPTY + p x F(x) + P_SPLIT F(x)^2`` (``p = sum(p_open)``): ``f_0`` is the
    smaller root of ``f = P_EMPTY + P_SPLIT f^2`` and ``f_k (1 - 2 P_SPLIT f_0) = p f_{k-1} +
    P_SPLIT sum_{i=1}^{k-1} f_i f_{k-i}``.
    """
    probs = production_probabilities(p_open, p_split)
    p, q, r = probs[:-2].sum(), probs[-2], probs[-1]
    f = np.zeros(max_pairs + 1)
    f[0] = (1 - np.sqrt(1 - 4 * q * r)) / (2 * q)
    for k in range(1, max_pairs + 1):
        f[k] = (p * f[k - 1] + q * np.dot(f[1:k], f[k - 1 : 0 : -1])) / (1 - 2 * q * f[0])
    return f


def _scan(ids: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Partner of each position (``-1`` for an opener still open) and the stack of open positions."""
    match = np.full(len(ids), -1, dtype=np.int64)
    stack: list[int] = []
    for i, t in enumerate(np.asarray(ids).tolist()):
        if t % 2 == 0:
            stack.append(i)
        elif not stack or ids[stack[-1]] != t - 1:
            raise ValueError(f"position {i}: closer {SYMBOLS[t]!r} matches no open bracket in {decode(ids)!r}")
        else:
            j = stack.pop()
            match[i], match[j] = j, i
    return match, stack


def match_indices(ids: np.ndarray) -> np.ndarray:
    """``(L,)`` int64: the position of each bracket's partner. Raises ``ValueError`` unless balanced."""
    match, stack = _scan(ids)
    if stack:
        raise ValueError(f"{decode(ids)!r} leaves {len(stack)} bracket(s) open")
    return match


def bracket_distances(ids: np.ndarray) -> np.ndarray:
    """``(L,)`` int64: ``i - j`` at a closer ``i`` whose opener is ``j``; 0 at an opener (balanced ``ids``)."""
    match = match_indices(ids)
    pos = np.arange(len(match))
    return np.where(np.asarray(ids) % 2 == 1, pos - match, 0)


def legal_next(ids: np.ndarray, n_types: int = N_TYPES) -> np.ndarray:
    """``(L, 2 n_types + 1)`` bool: row ``i`` marks the symbols legal after ``ids[:i + 1]``.

    Columns: the token ids, then :data:`END`. Every opener is legal, the closer of the innermost
    open bracket is, and END is when nothing is open. ``ids`` may be a prefix (left open).
    """
    ids = np.asarray(ids)
    _scan(ids)  # refuses unmatched closers
    out = np.zeros((len(ids), 2 * n_types + 1), dtype=bool)
    out[:, 0 : 2 * n_types : 2] = True
    stack: list[int] = []
    for i, t in enumerate(ids.tolist()):
        if t % 2 == 0:
            stack.append(t)
        else:
            stack.pop()
        out[i, stack[-1] + 1 if stack else 2 * n_types] = True
    return out


def closer_targets(legal: np.ndarray) -> np.ndarray:
    """``(..., n_types)`` float32 official targets: the closer columns of ``legal`` ``(..., 2 n_types + 1)``."""
    return np.asarray(legal)[..., 1:-1:2].astype(np.float32)


@dataclass(frozen=True)
class DyckSplit:
    """``n`` strings padded to the longest, ``T``.

    Attributes:
        tokens: ``(n, T)`` int64 ids, :data:`PAD` past each string's end.
        mask: ``(n, T)`` bool, True on real positions.
        legal: ``(n, T, 2 n_types + 1)`` bool, :func:`legal_next` per string (False on padding).
        distances: ``(n, T)`` int64, :func:`bracket_distances` per string (0 on padding).
    """

    tokens: np.ndarray
    mask: np.ndarray
    legal: np.ndarray
    distances: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """``(n,)`` string lengths."""
        return self.mask.sum(axis=1)

    @property
    def longest(self) -> np.ndarray:
        """``(n,)`` each string's longest bracket distance (the official max timescale minus one)."""
        return self.distances.max(axis=1)

    @property
    def targets(self) -> np.ndarray:
        """``(n, T, n_types)`` float32 official targets."""
        return closer_targets(self.legal)


def make_split(strings: Sequence[np.ndarray], n_types: int = N_TYPES) -> DyckSplit:
    """Pad balanced strings ``(L_k,)`` into a :class:`DyckSplit`."""
    n, width = len(strings), max((len(s) for s in strings), default=0)
    tokens = np.full((n, width), PAD, dtype=np.int64)
    legal = np.zeros((n, width, 2 * n_types + 1), dtype=bool)
    distances = np.zeros((n, width), dtype=np.int64)
    for k, s in enumerate(strings):
        tokens[k, : len(s)] = s
        legal[k, : len(s)] = legal_next(s, n_types)
        distances[k, : len(s)] = bracket_distances(s)
    return DyckSplit(tokens, tokens != PAD, legal, distances)


def build_dataset(
    rng: np.random.Generator,
    n_train: int = N_TRAIN,
    n_validation: int = N_VALIDATION,
    n_test: int = N_TEST,
    *,
    p_open: Sequence[float] = P_OPEN,
    p_split: float = P_SPLIT,
    min_length: int = MIN_LENGTH,
    max_length: int = MAX_LENGTH,
) -> dict[str, DyckSplit]:
    """``{"train", "validation", "test"}`` splits of distinct strings, as ``create_dyckn.py:196-202``:
    draw them all, shuffle, cut."""
    n = n_train + n_validation + n_test
    strings = sample_sequences(rng, n, p_open=p_open, p_split=p_split, min_length=min_length, max_length=max_length)
    order = rng.permutation(len(strings))
    cuts = {"train": order[:n_train], "validation": order[n_train : n_train + n_validation], "test": order[n_train + n_validation :]}
    return {name: make_split([strings[i] for i in idx], len(p_open)) for name, idx in cuts.items()}


def sequence_correct(
    outputs: np.ndarray, targets: np.ndarray, mask: np.ndarray, threshold: float = THRESHOLD, logits: bool = False
) -> np.ndarray:
    """``(n,)`` bool: every output of every real position right (``experiments.py:7-14``).

    Args:
        outputs: ``(n, T, K)`` sigmoid outputs, or logits with ``logits=True``.
        targets: ``(n, T, K)`` 0/1 targets (:func:`closer_targets`, or the full ``legal``).
        mask: ``(n, T)`` real positions; padded positions are not scored.
    """
    cut = np.log(threshold / (1 - threshold)) if logits else threshold
    right = ((np.asarray(outputs) > cut) == (np.asarray(targets) > 0.5)).all(axis=-1)
    return (right | ~np.asarray(mask, dtype=bool)).all(axis=-1)


def official_edges(max_length: int) -> np.ndarray:
    """``(10,)`` bin edges over the longest distance: the official ``linspace(2, max_len, 10)`` over
    spans (``max_len`` the longest test string), minus one."""
    return np.linspace(2, max_length, N_EDGES) - 1


def accuracy_by_distance(correct: np.ndarray, longest: np.ndarray, edges: np.ndarray, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Share of correct sequences per bin of the longest distance (one model, one test set).

    ``correct``: ``(n,)`` :func:`sequence_correct`; ``longest``: ``(n,)`` :attr:`DyckSplit.longest`;
    ``edges``: ``(B + 1,)`` increasing (:func:`official_edges`). One row per bin: ``low_edge, high_edge,
    sequences, correct, accuracy, low, high, interval``. The interval resamples the bin's sequences
    (:func:`prismlib.stats.paired_bootstrap`); where they are all right or all wrong, or only one, the
    bootstrap has no spread and the row holds the exact Clopper-Pearson interval (``interval ==
    "clopper-pearson"``); an empty bin is NaN.
    """
    correct, longest, edges = np.asarray(correct, dtype=bool), np.asarray(longest), np.asarray(edges, dtype=float)
    idx = np.searchsorted(edges, longest, side="right") - 1  # bins as np.histogram: the last one closed
    idx[longest == edges[-1]] = len(edges) - 2
    idx[(longest < edges[0]) | (longest > edges[-1])] = -1
    rows = []
    for b in range(len(edges) - 1):
        x = correct[idx == b]
        k, n = int(x.sum()), len(x)
        acc, low, high, how = (k / n if n else np.nan), np.nan, np.nan, "none"
        if 0 < k < n:
            iv = paired_bootstrap(lambda v, axis=-1: v.mean(axis), [x.astype(float)], n_boot=n_boot, seed=seed)
            low, high, how = iv.low, iv.high, "bootstrap"
        elif n:
            ci = _scipy_stats.binomtest(k, n).proportion_ci(method="exact")
            low, high, how = ci.low, ci.high, "clopper-pearson"
        rows.append((edges[b], edges[b + 1], n, k, acc, low, high, how))
    return pd.DataFrame(rows, columns=["low_edge", "high_edge", "sequences", "correct", "accuracy", "low", "high", "interval"])


def distance_distribution(distances: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values, counts)``: the distinct distances of the closers at real positions (odd numbers) and
    how many closers have each (``plot_dyckn_dist.py`` histograms their spans), from ``(n, T)``
    :attr:`DyckSplit.distances` and ``mask``."""
    d = np.asarray(distances)[np.asarray(mask, dtype=bool)]
    return np.unique(d[d > 0], return_counts=True)
