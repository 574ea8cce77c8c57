"""The encoder's full hidden states of the probing windows, cached once per window.

One encoder pass per window stores every layer a notebook asks for as float16
``(n_i, hidden)`` tensors (:class:`States`), with the row index of the sampled positions
(in exactly the order :func:`prismlib.probing.encode_windows` gives for the same windows,
positions and seed). Every filtered condition is computed from them
(:meth:`States.features`), and the learned filter (:mod:`prismlib.probing.learned_filter`)
trains on them, so notebooks 02, 03 and 09 read one cache (``.cache/states``) instead of
encoding the same windows again. The filters run on the float16-rounded states (a
relative change of about 1e-3 against filtering the float32 output; the features are
stored as float16 either way). Memory: ``2 * tokens * hidden`` bytes per layer, e.g.
0.8 MB per 512-token window of bert-base.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from prismlib.artifacts import load_or_discard, move_aside, save_atomic
from prismlib.paths import cache_dir
from prismlib.probing.encoders import Encoder
from prismlib.probing.features import (
    SPECIALS,
    Features,
    features_digest,
    filter_conditions,
    placement,
    sample_positions,
    unit_weights,
)
from prismlib.spectral.energy import hidden_batches

STATES_VERSION = "states-v1"
"""Part of :func:`cached_states`' key: bump it when the stored layout changes."""


@dataclass
class States:
    """Full hidden states of windows and the row index of their sampled positions.

    Attributes:
        hidden: per window ``i``, float16 ``(n_i, hidden)``: the layer's states over the
            window's real length (``[CLS] .. [SEP]`` included with specials ``inside``,
            left out with ``outside``).
        labels: ``(rows,)`` int64 gold labels.
        weights: ``(rows,)`` float32 ``1/|N|`` weights (:func:`prismlib.probing.unit_weights`).
        window: ``(rows,)`` int64 window of each row, non-decreasing (rows are ordered by
            window, then position, as in :class:`prismlib.probing.Features`).
        unit: ``(rows,)`` int64 gold unit of each row.
        position: ``(rows,)`` int64 position of each row in its window.
        offset: ``hidden[window][position - offset]`` is a row's state (1 with specials
            ``outside``, where ``[CLS]`` is not part of ``hidden``).
    """

    hidden: list[Tensor]
    labels: Tensor
    weights: Tensor
    window: Tensor
    unit: Tensor
    position: Tensor
    offset: int = 0

    def __post_init__(self) -> None:
        n = len(self.labels)
        if not all(len(t) == n for t in (self.weights, self.window, self.unit, self.position)):
            raise ValueError("labels, weights, window, unit and position must have one entry per row")
        if not self.hidden:
            raise ValueError("States need at least one window")
        if len({int(h.shape[1]) for h in self.hidden}) != 1 or any(h.ndim != 2 for h in self.hidden):
            raise ValueError("every window's states must be (length, hidden) with one hidden size")
        if n and (
            bool((self.window[1:] < self.window[:-1]).any()) or int(self.window.min()) < 0 or int(self.window.max()) >= len(self.hidden)
        ):
            raise ValueError("row windows must be non-decreasing indices into hidden")
        idx = self.position - self.offset
        lengths = torch.tensor([len(h) for h in self.hidden])
        if n and (bool((idx < 0).any()) or bool((idx >= lengths[self.window]).any())):
            raise ValueError(f"a row's position - offset ({self.offset}) falls outside its window's states")

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def hidden_size(self) -> int:
        return int(self.hidden[0].shape[1])

    def row_slices(self) -> list[slice]:
        """Per window, the slice of its rows (empty for a window without sampled positions)."""
        bounds = np.searchsorted(self.window.numpy(), np.arange(len(self.hidden) + 1))
        return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]

    def picks(self) -> list[Tensor]:
        """Per window, ``(k_i,)`` int64 indices into ``hidden[i]`` of its rows."""
        idx = self.position - self.offset
        return [idx[s] for s in self.row_slices()]

    def features(self, conditions: Sequence[str] = ("ORIG",), batch_windows: int = 32) -> Features:
        """The sampled rows under each of ``conditions`` (any name
        :func:`prismlib.probing.filter_conditions` accepts: ``ORIG``, ``LOW``, ``smooth:LOW``,
        ``haar:LOW`` ..., optionally with a placement of the special tokens, ``LOW|outside``
        or ``LOW|inside``; see :data:`prismlib.probing.SPECIALS`), each window filtered over
        its own states, as :class:`~prismlib.probing.Features` (float16, rows in this
        order). States stored with the specials inside serve both placements: ``outside``
        filters ``hidden[i][1:-1]``. Windows are filtered ``batch_windows`` at a time.

        Raises:
            ValueError: a condition asks for the specials inside states stored without them.
        """
        default = "outside" if self.offset else "inside"
        where = {c: placement(c, default) for c in conditions}
        if self.offset and any(w == "inside" for _, w in where.values()):
            raise ValueError(
                "these states were stored without [CLS]/[SEP] (specials='outside'): they cannot be filtered "
                "with the specials inside; encode them with specials='inside'"
            )
        parts: dict[str, list[Tensor]] = {c: [] for c in conditions}
        picks = self.picks()
        for start in range(0, len(self.hidden), batch_windows):
            chunk = self.hidden[start : start + batch_windows]
            for side in SPECIALS:
                group = [c for c in conditions if where[c][1] == side]
                if not group:
                    continue
                cut = 1 if side == "outside" and not self.offset else 0  # drop [CLS] and [SEP] of inside states
                lengths = [len(h) - 2 * cut for h in chunk]
                padded = torch.zeros(len(chunk), max(lengths), self.hidden_size)
                for row, h in enumerate(chunk):
                    padded[row, : lengths[row]] = h[cut : len(h) - cut].float()
                filtered = filter_conditions(padded, lengths, tuple({where[c][0] for c in group}))
                for c in group:
                    h = filtered[where[c][0]]
                    parts[c].extend(h[row, picks[start + row] - cut].half() for row in range(len(chunk)))
        x = {c: torch.cat(rows) for c, rows in parts.items()}
        return Features(x, self.labels, self.weights, self.window, self.unit, self.position)

    def resample(self, windows: Sequence[int]) -> States:
        """The states of ``windows`` (indices into ``hidden``, repeats allowed: a bootstrap
        resample), each with its rows and their weights; a window drawn twice contributes
        its rows twice. Rows keep their unit ids (duplicated windows share them)."""
        idx = [int(i) for i in windows]
        if not idx or min(idx) < 0 or max(idx) >= len(self.hidden):
            raise ValueError(f"window indices must lie in 0..{len(self.hidden) - 1}, got {len(idx)} indices")
        slices = self.row_slices()
        rows = [torch.arange(slices[i].start, slices[i].stop) for i in idx]
        take = torch.cat(rows)
        window = torch.cat([torch.full((len(r),), j, dtype=torch.int64) for j, r in enumerate(rows)])
        return States(
            [self.hidden[i] for i in idx], self.labels[take], self.weights[take], window, self.unit[take], self.position[take], self.offset
        )

    def to_dict(self) -> dict[str, Tensor]:
        """Tensors only (for ``torch.save(..., weights_only=True)`` loading); see :meth:`from_dict`."""
        return {
            "hidden": torch.cat(self.hidden),
            "lengths": torch.tensor([len(h) for h in self.hidden]),
            "labels": self.labels,
            "weights": self.weights,
            "window": self.window,
            "unit": self.unit,
            "position": self.position,
            "offset": torch.tensor(self.offset),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Tensor]) -> States:
        hidden = list(torch.split(d["hidden"], d["lengths"].tolist()))
        rest = {k: d[k] for k in ("labels", "weights", "window", "unit", "position")}
        return cls(hidden, **rest, offset=int(d["offset"]))


def _row_index(windows, picks: list[np.ndarray]) -> dict[str, Tensor]:
    """``labels, weights, window, unit, position`` of the sampled rows, window by window."""
    units = np.concatenate([w.unit_ids[p] for w, p in zip(windows, picks)])
    return {
        "labels": torch.from_numpy(np.concatenate([w.labels[p] for w, p in zip(windows, picks)]).astype(np.int64)),
        "weights": torch.from_numpy(unit_weights(units)),
        "window": torch.from_numpy(np.concatenate([np.full(len(p), i, dtype=np.int64) for i, p in enumerate(picks)])),
        "unit": torch.from_numpy(units.astype(np.int64)),
        "position": torch.from_numpy(np.concatenate(picks).astype(np.int64)),
    }


def encode_layer_states(
    encoder: Encoder,
    windows,
    layers: Sequence[int] = (-1,),
    positions: int = 0,
    seed: int = 0,
    batch_size: int = 8,
    *,
    specials: str = "inside",
    desc: str = "encoding",
    progress: bool = True,
) -> dict[int, States]:
    """Hidden states of every layer in ``layers`` for every window, from one encoder pass,
    and the sampled rows' index.

    The same batches (sorted by length), positions (:func:`~prismlib.probing.sample_positions`)
    and weights as :func:`prismlib.probing.encode_windows`, so row ``r`` here is row ``r``
    of its :class:`~prismlib.probing.Features` for the same arguments.

    Args:
        encoder: the encoder (eval mode).
        windows: :class:`prismlib.probing.Window` objects.
        layers: hidden-state indices (``-1`` last layer, ``0`` embeddings).
        positions: labelled positions kept per window (``<= 0``: all).
        seed: seed of the position sample.
        batch_size: windows per encoder call.
        specials: ``inside``: keep ``[CLS] .. [SEP]`` (length ``n``; such states serve
            both placements in :meth:`States.features`); ``outside``: keep only the real
            tokens (length ``n - 2``).
        desc, progress: the progress bar.

    Returns:
        layer -> :class:`States` (float16 states on the CPU).
    """
    if specials not in SPECIALS:
        raise ValueError(f"specials must be one of {SPECIALS}, got {specials!r}")
    if not len(windows):
        raise ValueError("no windows to encode")
    layers = list(dict.fromkeys(layers))
    cut = 1 if specials == "outside" else 0
    picks = sample_positions(windows, positions, seed)
    hidden: dict[int, list] = {layer: [None] * len(windows) for layer in layers}
    seqs = [w.input_ids for w in windows]
    for batch, hs, lengths in hidden_batches(
        encoder.model, seqs, layers, batch_size=batch_size, device=encoder.device, desc=desc, progress=progress
    ):
        for layer, h in zip(layers, hs):
            for row, i in enumerate(batch):
                hidden[layer][i] = h[row, cut : lengths[row] - cut].half().cpu()
    index = _row_index(windows, picks)
    return {layer: States(hidden[layer], **index, offset=cut) for layer in layers}


def encode_states(encoder: Encoder, windows, layer: int = -1, positions: int = 0, seed: int = 0, batch_size: int = 8, **kwargs) -> States:
    """:func:`encode_layer_states` of one layer."""
    return encode_layer_states(encoder, windows, (layer,), positions, seed, batch_size, **kwargs)[layer]


def cached_layer_states(
    encoder: Encoder,
    windows,
    layers: Sequence[int] = (-1,),
    *,
    task: str,
    split: str,
    profile_name: str,
    positions: int,
    seed: int,
    batch_size: int = 8,
    specials: str = "inside",
    cache: Path | None = None,
) -> dict[int, States]:
    """:func:`encode_layer_states` with an on-disk cache (float16), one file per layer:
    ``<cache>/<model>/<task>/<split>/layer<L>-<profile>-<digest>.pt`` under
    ``.cache/states`` by default, the digest covering the windows' ids, labels and units,
    the position sample, the specials and :data:`STATES_VERSION`. ``L`` is the layer's
    non-negative index (``-1`` and ``encoder.num_layers`` are one file: notebook 02 asks
    for the last layer by number, 09 by ``-1``). Layers found are loaded; the others come
    from one encoder pass."""
    count = encoder.num_layers + 1  # hidden states: the embeddings and each layer's output
    bad = [layer for layer in layers if not -count <= layer < count]
    if bad:
        raise ValueError(f"layers {bad} out of range: {encoder.name} has hidden states 0..{count - 1} (-1 the last)")
    index = {layer: layer % count for layer in layers}
    cache_root = cache.parent if cache else cache_dir()
    root = (cache or cache_root / "states") / encoder.name.replace("/", "--") / task / split
    digest = features_digest(windows, positions, seed, (STATES_VERSION,), specials)
    paths = {i: root / f"layer{i}-{profile_name}-{digest}.pt" for i in dict.fromkeys(index.values())}
    found = {}
    for i, path in paths.items():
        stored = load_or_discard(path, weights_only=True, cache=cache_root)  # None: absent, or corrupt and moved aside
        meta = {"encoder": encoder.name, "layer": i, "digest": digest}
        if stored is not None and stored.get("meta", meta) != meta:  # files written before the meta: trusted by path
            move_aside(path, f"holds the states of {stored['meta']}, not of {meta}", cache=cache_root)
        elif stored is not None:
            found[i] = States.from_dict(stored)
    missing = [i for i in paths if i not in found]
    if missing:
        fresh = encode_layer_states(encoder, windows, missing, positions, seed, batch_size, specials=specials, desc=f"{task}/{split}")
        for i, states in fresh.items():
            save_atomic(paths[i], **states.to_dict(), meta={"encoder": encoder.name, "layer": i, "digest": digest})
        found.update(fresh)
    return {layer: found[index[layer]] for layer in layers}


def cached_states(encoder: Encoder, windows, layer: int = -1, **kwargs) -> States:
    """:func:`cached_layer_states` of one layer."""
    return cached_layer_states(encoder, windows, (layer,), **kwargs)[layer]


def encode_splits(
    encoder: Encoder,
    windows: dict[str, list],
    layers: dict[int, tuple[str, ...]],
    *,
    task: str,
    profile_name: str,
    positions: int,
    seed: int,
    batch_size: int = 8,
    specials: str = "inside",
) -> dict[int, dict[str, Features]]:
    """The features of every split of a task under each layer's conditions, filtered from
    the cached states (:func:`cached_layer_states`, stored with the specials inside so that
    one encoder pass per window serves every notebook, layer and placement; ``specials``
    is the placement of conditions named without one, see :data:`SPECIALS`).

    Returns:
        layer -> split -> :class:`Features`.
    """
    if specials not in SPECIALS:
        raise ValueError(f"specials must be one of {SPECIALS}, got {specials!r}")
    out: dict[int, dict[str, Features]] = {layer: {} for layer in layers}
    for split, wins in windows.items():
        states = cached_layer_states(
            encoder,
            wins,
            tuple(layers),
            task=task,
            split=split,
            profile_name=profile_name,
            positions=positions,
            seed=seed,
            batch_size=batch_size,
        )
        for layer, conds in layers.items():
            named = [c if "|" in c else f"{c}|{specials}" for c in conds]
            feats = states[layer].features(list(dict.fromkeys(named)))
            out[layer][split] = Features(
                dict(zip(conds, (feats.x[c] for c in named))), feats.labels, feats.weights, feats.window, feats.unit, feats.position
            )
    return out
