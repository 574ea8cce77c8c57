"""Probe features: the encoder's hidden states filtered into the probing conditions.

A window's hidden states are filtered into every requested condition (the six
brick-wall ones of Fig. 4, their smooth and Haar versions, and the ``DC`` control: the
window mean alone), with ``[CLS]``/``[SEP]``
inside or outside the filtered sequence; the positions fed to the probe are sampled per
window and weighted 1/|N| over the positions actually sampled (App. C).
:func:`encode_windows` does it in one encoder pass without a cache (the reference the
tests hold the cached path to); the notebooks read their features from the states cache
of :mod:`prismlib.probing.states`, keyed by :func:`features_digest`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from prismlib.probing.encoders import Encoder
from prismlib.progress import progress_bar
from prismlib.spectral.smooth import SMOOTH_WIDTH as _SPECTRAL_SMOOTH_WIDTH
from prismlib.spectral.smooth import SmoothShape

CONDITIONS: tuple[str, ...] = ("ORIG", "LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
"""The six probing conditions of Fig. 4: the unfiltered features and the five bands."""


DC = "DC"
"""The DC-only control condition: DCT index 0 alone, i.e. each hidden unit's mean over the
window at every position. LOW is DC plus one (up to a few) slow cosines; a sentence encoder
trained on its mean-pooled output (all-MiniLM-L6-v2) was trained on exactly this mean, so
``DC`` beside ``LOW`` separates "the window mean" from "the slow variation" (notebook 02)."""


SMOOTH_CONDITIONS: tuple[str, ...] = tuple(f"smooth:{band}" for band in CONDITIONS[1:])
"""The five bands with smooth edges (:func:`prismlib.spectral.smooth_band_pass`, edges of
:data:`SMOOTH_WIDTH` octaves shaped :data:`SMOOTH_SHAPE`); they sum back to ``ORIG``."""


HAAR_CONDITIONS: tuple[str, ...] = tuple(f"haar:{band}" for band in CONDITIONS[1:])
"""The Haar wavelet levels grouped into the five bands (:func:`prismlib.spectral.haar_bands`)."""


SMOOTH_WIDTH: float = _SPECTRAL_SMOOTH_WIDTH
"""Edge width (octaves of DCT index) of the ``smooth:`` conditions."""


SMOOTH_SHAPE: SmoothShape = "gaussian"
"""Edge shape of the ``smooth:`` conditions (``gaussian`` or ``butterworth``)."""


def parse_condition(name: str) -> tuple[str, str]:
    """``"ORIG"`` -> ``("orig", "ORIG")``, ``"DC"`` -> ``("dc", "DC")``, ``"MID"`` -> ``("brick", "MID")``,
    ``"smooth:MID"`` -> ``("smooth", "MID")``, ``"haar:MID"`` -> ``("haar", "MID")``.

    Takes a name without its ``|inside`` / ``|outside`` placement (see :func:`placement`).

    Raises:
        ValueError: an unknown name, listing the accepted forms.
    """
    family, _, band = name.rpartition(":")
    if name == "ORIG":
        return "orig", name
    if name == DC:
        return "dc", name
    if family in ("", "smooth", "haar") and band in CONDITIONS[1:]:
        return family or "brick", band
    raise ValueError(
        f"unknown condition {name!r}; accepted: 'ORIG', 'DC' (the window mean), a band {CONDITIONS[1:]} (brick-wall), "
        "'smooth:<band>' (smooth edges, e.g. 'smooth:LOW') or 'haar:<band>' (Haar wavelet levels, "
        "e.g. 'haar:LOW'), each optionally followed by '|inside' or '|outside'"
    )


@dataclass
class Features:
    """Token features of sampled positions, one matrix per condition.

    Attributes:
        x: condition -> ``(n, hidden)`` float16 features (filtered over each window).
        labels: ``(n,)`` int64 gold labels.
        weights: ``(n,)`` float32 ``1/|N|`` label weights over the rows kept: the
            weights of each gold unit sum to 1 (:func:`unit_weights`).
        window: ``(n,)`` int64 index of the window each row came from.
        unit: ``(n,)`` int64 gold unit (word, utterance, post, masked token) of each row.
        position: ``(n,)`` int64 position of each row in its window.
    """

    x: dict[str, Tensor]
    labels: Tensor
    weights: Tensor
    window: Tensor
    unit: Tensor
    position: Tensor

    def __len__(self) -> int:
        return len(self.labels)

    def relabelled(self, windows) -> Features:
        """The same rows with the labels of ``windows`` (the windows these features were
        encoded from, labelled with another label set: same tokens, same labelled positions).

        Raises:
            ValueError: a row's position is unlabelled in ``windows`` (they differ).
        """
        labels = np.array([windows[w].labels[p] for w, p in zip(self.window.tolist(), self.position.tolist())], dtype=np.int64)
        if (labels < 0).any():
            raise ValueError("the windows do not label every row of these features: relabel only with windows of the same tokens")
        return Features(self.x, torch.from_numpy(labels), self.weights, self.window, self.unit, self.position)

    def label_range(self, lo: int, hi: int) -> Features:
        """The rows whose label lies in ``lo .. hi-1``, relabelled ``0 .. hi-lo-1``, with
        their ``1/|N|`` weights renormalised over the rows kept (:func:`unit_weights`).

        For the MLM task, whose label ``k`` is the ``k+1``-th most frequent training target
        (:func:`prismlib.probing.build_task`), this is a frequency bucket.

        Raises:
            ValueError: ``0 <= lo < hi`` does not hold.
        """
        if not 0 <= lo < hi:
            raise ValueError(f"a label range needs 0 <= lo < hi, got [{lo}, {hi})")
        keep = (self.labels >= lo) & (self.labels < hi)
        unit = self.unit[keep]
        weights = torch.from_numpy(unit_weights(unit.numpy())) if len(unit) else torch.zeros(0, dtype=torch.float32)
        return Features(
            {c: x[keep] for c, x in self.x.items()}, self.labels[keep] - lo, weights, self.window[keep], unit, self.position[keep]
        )


def pool_features(
    models: Mapping[str, Mapping[str, Features]], columns: Mapping[str, tuple[str, slice]] | None = None, condition: str = "ORIG"
) -> dict[str, Features]:
    """Several models' features of one task as the conditions of one :class:`Features` per split.

    Args:
        models: model -> split -> its features (every model on the same rows).
        columns: extra conditions: name -> ``(model, columns)``, e.g. a prism sector's units.
        condition: the condition of each model's features that is pooled.

    Returns:
        split -> :class:`Features` whose conditions are the models (and ``columns``).

    Raises:
        RuntimeError: two models' features are not on the same rows.
    """
    first = next(iter(models))
    out = {}
    for split, ref in models[first].items():
        x = {}
        for name, feats in models.items():
            f = feats[split]
            if not all(torch.equal(getattr(f, k), getattr(ref, k)) for k in ("labels", "weights", "window")):
                raise RuntimeError(f"{split}: the features of {name} are not on the same rows as those of {first}")
            x[name] = f.x[condition]
        x |= {name: models[model][split].x[condition][:, cols] for name, (model, cols) in (columns or {}).items()}
        out[split] = dataclasses.replace(ref, x=x)
    return out


SPECIALS: tuple[str, ...] = ("inside", "outside")
"""Where ``[CLS]``/``[SEP]`` stand when a window is filtered: ``inside`` the filtered
sequence (the encoder's whole output, length N) or ``outside`` it (only the real
tokens are filtered, length N - 2).  The paper does not say; notebook 02 measures it."""


def placement(condition: str, default: str = "inside") -> tuple[str, str]:
    """``"LOW|outside"`` -> ``("LOW", "outside")``; a name without ``|`` takes ``default``.

    Raises:
        ValueError: the placement is not one of :data:`SPECIALS`.
    """
    base, _, where = condition.partition("|")
    where = where or default
    if where not in SPECIALS:
        raise ValueError(f"specials must be one of {SPECIALS}, got {where!r} (in condition {condition!r})")
    return base, where


def filter_conditions(h: Tensor, lengths: list[int], conditions: tuple[str, ...]) -> dict[str, Tensor]:
    """Apply each condition to a padded batch, each row over its own real length.

    Args:
        h: ``(batch, length, hidden)`` hidden states.
        lengths: real length of each row (the bands of ``allocate_bands(length)``).
        conditions: names from :data:`CONDITIONS`, :data:`SMOOTH_CONDITIONS`,
            :data:`HAAR_CONDITIONS` or :data:`DC` (see :func:`parse_condition`).

    Returns:
        condition -> ``(batch, length, hidden)``; padding positions are zero for the bands
        and ``DC`` (each row's mean over its real length, at each real position).
    """
    from prismlib.spectral.bands import BAND_NAMES, Band, bands_for_lengths
    from prismlib.spectral.filters import band_decomposition, band_pass
    from prismlib.spectral.smooth import smooth_band_pass
    from prismlib.spectral.wavelets import haar_band_pass, haar_bands_for_lengths

    parsed = {name: parse_condition(name) for name in conditions}
    bricks = {band for family, band in parsed.values() if family == "brick"}
    if len(bricks) > 1:  # several brick-wall bands: one shared decomposition
        brick = dict(zip(BAND_NAMES, band_decomposition(h, lengths=lengths, check_finite=False)))
    else:
        brick = {b: band_pass(h, bands_for_lengths(lengths, b), lengths=lengths, check_finite=False) for b in bricks}
    out = {}
    for name, (family, band) in parsed.items():
        if family == "orig":
            out[name] = h
        elif family == "dc":
            out[name] = band_pass(h, [Band(DC, 0, 1)] * len(lengths), lengths=lengths, check_finite=False)
        elif family == "brick":
            out[name] = brick[band]
        elif family == "smooth":
            out[name] = smooth_band_pass(
                h,
                bands_for_lengths(lengths, band),
                lengths=lengths,
                width=SMOOTH_WIDTH,
                shape=SMOOTH_SHAPE,
                check_finite=False,
            )
        else:
            out[name] = haar_band_pass(h, haar_bands_for_lengths(lengths, band), lengths=lengths, check_finite=False)
    return out


def sample_positions(windows, positions: int, seed: int) -> list[np.ndarray]:
    """For each window, up to ``positions`` labelled positions (all when ``positions <= 0``),
    drawn without replacement with a generator seeded by ``(seed, window index)``."""
    out = []
    for i, w in enumerate(windows):
        labelled = np.flatnonzero(w.labels >= 0)
        if 0 < positions < len(labelled):
            rng = np.random.default_rng([seed, i])
            labelled = np.sort(rng.choice(labelled, size=positions, replace=False))
        out.append(labelled)
    return out


def unit_weights(units: np.ndarray) -> np.ndarray:
    """``1/|N|`` weights over the rows actually kept (paper App. C after sampling).

    Args:
        units: ``(n,)`` gold unit of each row fed to the probe (unique within a split).

    Returns:
        ``(n,)`` float32: ``1 / (rows of the same unit)``, so every unit's weights sum
        to 1 however many of its wordpieces the position sample kept.  (Weights set
        before sampling would give a post of length L a total weight of min(k, L)/L.)
    """
    _, inverse, counts = np.unique(np.asarray(units), return_inverse=True, return_counts=True)
    return (1.0 / counts[inverse]).astype(np.float32)


@torch.no_grad()
def encode_windows(
    encoder: Encoder,
    windows,
    layers: dict[int, tuple[str, ...]],
    positions: int,
    seed: int,
    batch_size: int = 8,
    desc: str = "encoding",
    specials: str = "inside",
) -> dict[int, Features]:
    """One encoder pass per window for every layer and condition asked for.

    Each window is filtered over its real length first, then ``positions`` labelled
    positions are sampled (:func:`sample_positions`; the same positions for every
    layer and condition) and weighted by :func:`unit_weights`.

    Args:
        windows: :class:`prismlib.probing.Window` objects.
        layers: hidden-state index (``-1`` last layer, ``0`` embeddings) -> conditions.
        positions: labelled positions kept per window (``<= 0``: all).
        seed: seed of the position sample.
        batch_size: windows per encoder call (sorted by length to limit padding).
        specials: ``inside``: filter the whole output ``[CLS] ... [SEP]`` (length N);
            ``outside``: filter only the real tokens (length N - 2). See :data:`SPECIALS`.
            A condition named ``"LOW|outside"`` (or ``"|inside"``) overrides it for that
            condition, so one encoder pass serves both placements.

    Returns:
        layer -> :class:`Features`, rows ordered by window then position.
    """

    placements = {c: placement(c, specials) for conds in layers.values() for c in conds}
    for base, _ in placements.values():
        parse_condition(base)  # an unknown name fails before the encoder runs
    picks = sample_positions(windows, positions, seed)
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    parts: dict[int, dict[str, list]] = {layer: {c: [] for c in conds} for layer, conds in layers.items()}
    index: list[tuple[int, np.ndarray]] = []
    for start in progress_bar(range(0, len(order), batch_size), desc=desc, unit="batch", leave=False):
        batch = order[start : start + batch_size]
        lengths = [len(windows[i]) for i in batch]
        ids = torch.zeros(len(batch), max(lengths), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, i in enumerate(batch):
            ids[row, : lengths[row]] = torch.from_numpy(windows[i].input_ids)
            mask[row, : lengths[row]] = 1
        out = encoder.model(input_ids=ids.to(encoder.device), attention_mask=mask.to(encoder.device), output_hidden_states=True)
        for layer, conds in layers.items():
            for where in SPECIALS:
                group = [c for c in conds if placements[c][1] == where]
                if not group:
                    continue
                cut = 1 if where == "outside" else 0
                # outside: drop [CLS]; [SEP] falls beyond each row's new length, as padding
                hidden = out.hidden_states[layer].float()[:, cut:]
                filtered = filter_conditions(hidden, [n - 2 * cut for n in lengths], tuple({placements[c][0] for c in group}))
                for c in group:
                    h = filtered[placements[c][0]]
                    parts[layer][c].extend(h[row, picks[i] - cut].half().cpu() for row, i in enumerate(batch))
        index.extend((i, picks[i]) for i in batch)
    # restore window order
    rank = np.argsort([i for i, _ in index], kind="stable")
    labels = torch.from_numpy(np.concatenate([windows[index[r][0]].labels[index[r][1]] for r in rank]))
    units = np.concatenate([windows[index[r][0]].unit_ids[index[r][1]] for r in rank])
    win = torch.from_numpy(np.concatenate([np.full(len(index[r][1]), index[r][0]) for r in rank]))
    pos = torch.from_numpy(np.concatenate([index[r][1] for r in rank]).astype(np.int64))
    weights, unit = torch.from_numpy(unit_weights(units)), torch.from_numpy(units)
    return {
        layer: Features({c: torch.cat([rows[r] for r in rank]) for c, rows in conds.items()}, labels, weights, win, unit, pos)
        for layer, conds in parts.items()
    }


_FEATURES_VERSION = "v2"  # v2: weights renormalised after sampling, unit ids, positions, specials option


def features_digest(windows, positions: int, seed: int, conditions: tuple[str, ...], specials: str = "inside") -> str:
    """16 hex digits of a cache key: the windows' ids, labels and units, the position
    sample, the conditions (or a version tag) and the specials' placement."""
    key = f"{_FEATURES_VERSION}|{positions}|{seed}|{specials}|{','.join(conditions)}"
    h = hashlib.sha256(key.encode())
    for w in windows:
        h.update(w.input_ids.tobytes())
        h.update(w.labels.tobytes())
        h.update(w.unit_ids.tobytes())
    return h.hexdigest()[:16]
