"""What a finished LSTM job keeps in its committed record (:mod:`prismlib.records`).

Every number notebooks 05-08 and 10 read from a trained model, computed once at the job's
end in the form the statistics need, never per token:

- the test NLL summed per 100-token chunk (:data:`~prismlib.lstm.evaluation.CHUNK`, the unit
  of every paired bootstrap), per 70-token block (the slides' bootstrap column) and per
  chunk and word-frequency bin (:data:`~prismlib.lstm.evaluation.FREQUENCY_BINS`), each
  with the count of predicted tokens it sums;
- the validation NLL per chunk of the best model at every decay and at the end (the
  effect-stability gate), and the test NLL per chunk at the snapshots training kept;
- each layer's mean forget-gate activation per unit on PTB test (notebook 07);
- in ``record.json``: the history (validation curve, learning-rate path, decays, why it
  stopped), the effective forget-gate biases before and after training, provenance;
- the weights (``float16`` parameters; the fixed biases are rebuilt exactly from the
  spec) only for the models an analysis must run again (:func:`keeps_weights`).

The readers (:func:`final_test_chunks`, :func:`snapshot_chunks`, :func:`stored_forget_means`,
:func:`history_from_summary`, :func:`biases_from_summary`) turn these back into what the
analyses read (:class:`~prismlib.lstm.TrainedRun`); a run loaded from a local checkpoint is
passed through the writers and the same readers (:func:`prismlib.lstm.load_run`), so a
record and the local run it was written from give the same numbers.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor

from prismlib.anneal import AnnealState
from prismlib.lstm.chunks import CHUNK, FREQUENCY_BINS, ChunkNLL
from prismlib.lstm.evaluation import frequency_bins
from prismlib.lstm.model import LSTMLM
from prismlib.lstm.training import TrainHistory
from prismlib.records import Writer

BLOCK = 70
"""Tokens per block of the slides' bootstrapped test perplexity (:func:`~prismlib.lstm.bootstrap_perplexity`)."""
WEIGHTS = "weights.pt"
ARRAYS = "outcome.npz"
WEIGHT_SEEDS = (0, 1)
"""Seeds whose weights are kept for the models an analysis reads again."""
WEIGHT_MODELS = (
    ("baseline", None, False),
    ("layerwise", 70.0, True),
    ("middle", 70.0, True),
    ("inverse", 70.0, True),
    ("pareto", None, True),
    ("official", None, True),
)
"""``(variant, T, fixed)`` of the models whose weights a record keeps: notebook 08's cell-state
ablation (:func:`prismlib.lstm.claims.grid.experiment` ``"memory"``: a test checks the two agree) and
notebook 10's routing (baseline, Pareto, official)."""


def keeps_weights(variant: str, T: float | None, fixed: bool, seed: int) -> bool:
    """Whether the record of this model keeps its weights (about 2.4 MB each at cpu size)."""
    return seed in WEIGHT_SEEDS and (variant, T, fixed) in WEIGHT_MODELS


def chunked(nll: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Summed NLL ``(G,)`` and predicted-token count ``(G,)`` per ``size`` consecutive
    positions of ``nll`` ``(n,)`` (NaN: not predicted), ``G = ceil(n / size)``; a chunk
    without a prediction sums to 0 with count 0. Summed in float64; a record stores the sums
    as float32 (:func:`outcome_arrays`: about 3e-5 nats on a chunk of 100 tokens, far below
    any contrast a bootstrap resolves) to keep every record together under 40 MB."""
    x = np.asarray(nll, dtype=np.float64)
    if x.ndim != 1 or size < 1:
        raise ValueError(f"chunked needs (n,) NLL and size >= 1, got shape {x.shape}, size {size}")
    groups = np.arange(len(x)) // size
    ok = np.isfinite(x)
    g = math.ceil(len(x) / size)
    return np.bincount(groups, np.where(ok, x, 0.0), g), np.bincount(groups, ok, g).astype(np.int32)


def outcome_arrays(
    test_nll: np.ndarray,
    test_ids: np.ndarray,
    train_counts: np.ndarray,
    valid_snapshots: dict[int, np.ndarray],
    test_snapshots: dict[int, np.ndarray],
    forget_means: Sequence[np.ndarray],
) -> dict[str, np.ndarray]:
    """The arrays of a record (``outcome.npz``).

    Args:
        test_nll: per-token test NLL ``(n,)``; ``test_ids``: the test tokens ``(n,)``;
            ``train_counts``: ``(vocab,)`` counts in PTB train (the frequency bins).
        valid_snapshots: round -> per-token validation NLL ``(m,)`` of the best model then.
        test_snapshots: training tokens -> per-token test NLL ``(n,)`` then.
        forget_means: per layer, the mean forget-gate activation per unit ``(hidden_l,)``.

    Returns:
        (sums float32, counts int16) ``test_sums``/``test_counts`` ``(G,)`` per :data:`CHUNK`; ``test_block_sums``/
        ``test_block_counts`` per :data:`BLOCK`; ``test_bin_sums``/``test_bin_counts``
        ``(bins, G)`` in :data:`FREQUENCY_BINS` order; ``valid_round<r>_sums``/``_counts``
        and ``test_tokens<t>_sums``/``_counts`` per snapshot; ``forget_means_layer<l>``.
    """
    out: dict[str, np.ndarray] = {}
    out["test_sums"], out["test_counts"] = chunked(test_nll, CHUNK)
    out["test_block_sums"], out["test_block_counts"] = chunked(test_nll, BLOCK)
    bins = frequency_bins(test_ids[: len(test_nll)], train_counts)
    per_bin = [chunked(np.where(bins == label, test_nll, np.nan), CHUNK) for label, _, _ in FREQUENCY_BINS]
    out["test_bin_sums"] = np.stack([s for s, _ in per_bin])
    out["test_bin_counts"] = np.stack([c for _, c in per_bin])
    for r, nll in sorted(valid_snapshots.items()):
        out[f"valid_round{r}_sums"], out[f"valid_round{r}_counts"] = chunked(nll, CHUNK)
    for t, nll in sorted(test_snapshots.items()):
        out[f"test_tokens{t}_sums"], out[f"test_tokens{t}_counts"] = chunked(nll, CHUNK)
    for layer, m in enumerate(forget_means):
        out[f"forget_means_layer{layer}"] = np.asarray(m, dtype=np.float32)
    return {k: v.astype(np.float32) if k.endswith("_sums") else v.astype(np.int16) if k.endswith("_counts") else v for k, v in out.items()}


def history_summary(hist: Any) -> dict[str, Any]:
    """The JSON form of a :class:`~prismlib.lstm.TrainHistory` without its per-token snapshots."""
    anneal = hist.anneal
    return {
        "epochs": hist.epochs,
        "tokens": hist.tokens,
        "steps": hist.steps,
        "train_seconds": round(hist.seconds, 1),
        "val_ppl": [float(v) for v in hist.val_ppl],
        "epoch_tokens": list(hist.epoch_tokens or []),
        "lr_scale": [float(v) for v in hist.lr_scale or []],
        "asgd_from": hist.asgd_from,
        "curve_tokens": list(hist.curve_tokens or []),
        "curve_ppl": [float(v) for v in hist.curve_ppl or []],
        "curve_source": hist.curve_source,
        "stop": None if anneal is None else anneal.stop,
        "decayed_at": None if anneal is None else list(anneal.decayed_at),
        "anneal": None
        if anneal is None
        else {"rounds": anneal.rounds, "scale": anneal.scale, "best": anneal.best, "stalled": anneal.stalled},
    }


def biases_summary(biases: Sequence[Tensor]) -> list[list[float]]:
    """Effective forget-gate biases per layer as lists (``-inf`` where a unit never forgets is kept as ``-Infinity``)."""
    return [[float(v) for v in b.detach().double().cpu()] for b in biases]


def weights_writer(model: LSTMLM) -> Writer:
    """A :data:`~prismlib.records.Writer` of ``model``'s parameters in ``float16`` (buffers,
    the fixed biases among them, are rebuilt from the spec when the record is read)."""
    params = {name: p.detach().to(torch.float16).cpu().clone() for name, p in model.named_parameters()}

    def write(path: Path) -> None:
        buf = io.BytesIO()
        torch.save(params, buf)
        path.write_bytes(buf.getvalue())

    return write


def arrays_writer(arrays: dict[str, np.ndarray]) -> Writer:
    """A :data:`~prismlib.records.Writer` of ``arrays`` as one compressed ``.npz``."""

    def write(path: Path) -> None:
        with open(path, "wb") as f:
            cast(Any, np.savez_compressed)(f, **arrays)  # numpy's stubs take ** for allow_pickle

    return write


def load_arrays(folder: Path) -> dict[str, np.ndarray]:
    """The arrays of a verified record's ``outcome.npz``."""
    with np.load(Path(folder) / ARRAYS) as data:
        return {k: data[k] for k in data.files}


def load_weights(model: LSTMLM, folder: Path) -> LSTMLM:
    """``model`` (built from the record's spec) with the record's parameters; raises
    ``FileNotFoundError`` when the record keeps none."""
    path = Path(folder) / WEIGHTS
    if not path.exists():
        raise FileNotFoundError(f"{folder} keeps no weights (only {', '.join(f'{v} T={T}' for v, T, _ in WEIGHT_MODELS)} do)")
    params = torch.load(path, map_location="cpu", weights_only=True)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(params[name].to(p.dtype))
    return model


def final_test_chunks(arrays: Mapping[str, np.ndarray], tokens: int) -> ChunkNLL:
    """The final test NLL of a record's arrays (:func:`outcome_arrays`) as
    :class:`~prismlib.lstm.ChunkNLL`: per :data:`CHUNK`, per frequency bin, per :data:`BLOCK`;
    ``tokens``: the length of the test stream it scored.

    Raises:
        ValueError: the arrays do not cut a stream of ``tokens`` tokens into chunks (another test split).
    """
    sums, counts = arrays["test_sums"], arrays["test_counts"]
    if len(sums) != math.ceil(tokens / CHUNK) or len(arrays["test_block_sums"]) != math.ceil(tokens / BLOCK):
        raise ValueError(
            f"the record's test NLL covers {len(sums)} chunks of {CHUNK}, not the {math.ceil(tokens / CHUNK)} of the "
            f"{tokens} test tokens scored here (another test split or profile)"
        )
    return ChunkNLL(
        sums.astype(np.float64),
        counts.astype(np.int64),
        arrays["test_bin_sums"].astype(np.float64),
        arrays["test_bin_counts"].astype(np.int64),
        arrays["test_block_sums"].astype(np.float64),
        arrays["test_block_counts"].astype(np.int64),
        chunk=CHUNK,
        block=BLOCK,
        tokens=tokens,
    )


SNAPSHOTS = ("valid_round", "test_tokens")
"""Prefixes of the snapshot arrays of a record: validation NLL per round, test NLL per training tokens."""


def snapshot_chunks(arrays: Mapping[str, np.ndarray], prefix: str) -> dict[int, ChunkNLL]:
    """The snapshots ``prefix<k>_sums`` / ``_counts`` of a record's arrays as ``k`` ->
    :class:`~prismlib.lstm.ChunkNLL` (``prefix``: ``"valid_round"``, rounds of the best model's
    validation NLL; ``"test_tokens"``, test NLL at training tokens). Per-bin sums where the arrays
    hold ``prefix<k>_bin_sums`` / ``_bin_counts`` (no record of recipe 3 does)."""
    if prefix not in SNAPSHOTS:
        raise ValueError(f"prefix must be one of {SNAPSHOTS}, got {prefix!r}")
    out = {}
    for name in arrays:
        m = re.fullmatch(rf"{prefix}(\d+)_sums", name)
        if m is None:
            continue
        k = int(m.group(1))
        bins, bin_counts = arrays.get(f"{prefix}{k}_bin_sums"), arrays.get(f"{prefix}{k}_bin_counts")
        out[k] = ChunkNLL(
            arrays[name].astype(np.float64),
            arrays[f"{prefix}{k}_counts"].astype(np.int64),
            None if bins is None else bins.astype(np.float64),
            None if bin_counts is None else bin_counts.astype(np.int64),
            chunk=CHUNK,
        )
    return dict(sorted(out.items()))


def stored_forget_means(arrays: Mapping[str, np.ndarray]) -> list[np.ndarray] | None:
    """Each layer's mean forget-gate activation per unit ``(hidden_l,)`` (float64 of the stored
    float32), ``None`` when the arrays keep none."""
    layers = sorted(int(k.removeprefix("forget_means_layer")) for k in arrays if re.fullmatch(r"forget_means_layer\d+", k))
    if not layers:
        return None
    if layers != list(range(len(layers))):
        raise ValueError(f"the forget-gate means skip a layer: {layers}")
    return [np.asarray(arrays[f"forget_means_layer{layer}"], dtype=np.float32).astype(np.float64) for layer in layers]


def history_from_summary(summary: Mapping[str, Any]) -> TrainHistory:
    """The :class:`~prismlib.lstm.TrainHistory` of :func:`history_summary` (a record's ``history``):
    every field but the per-token snapshots, which a record keeps as chunk sums instead."""
    anneal = summary.get("anneal")
    state = None
    if anneal is not None:
        state = AnnealState(
            rounds=anneal["rounds"],
            scale=anneal["scale"],
            best=anneal["best"],
            decayed_at=tuple(summary["decayed_at"] or ()),
            stop=summary["stop"],
            stalled=anneal["stalled"],
        )
    return TrainHistory(
        epochs=summary["epochs"],
        val_ppl=list(summary["val_ppl"]),
        asgd_from=summary["asgd_from"],
        tokens=summary["tokens"],
        seconds=summary["train_seconds"],
        steps=summary["steps"],
        epoch_tokens=list(summary["epoch_tokens"]),
        curve_tokens=list(summary["curve_tokens"]),
        curve_ppl=list(summary["curve_ppl"]),
        curve_source=summary["curve_source"],
        anneal=state,
        lr_scale=list(summary["lr_scale"]),
    )


def biases_from_summary(biases: Sequence[Sequence[float]]) -> list[Tensor]:
    """The forget-gate biases of :func:`biases_summary`, ``(hidden_l,)`` float32 per layer (exact:
    the summary keeps every float32 value as a double)."""
    return [torch.tensor([float(v) for v in layer], dtype=torch.float32) for layer in biases]
