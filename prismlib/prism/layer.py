"""The prism layer of "Language Through a Prism" (section 4.1, App. B.3).

A prism layer splits the hidden units of a layer's output into five contiguous
*sectors* and band-passes each sector along the tokens with its own band of Table 3a
(LOW for the first sector, ..., HIGH for the last), over each sequence's real length:

    h (batch, length, hidden) -> [band_pass(h[..., sector_j], band_j)]_j concatenated

The units are divided evenly; the ``hidden mod 5`` remaining units go to the first
sectors (paper footnote 7: 768 -> 154, 154, 154, 153, 153; MiniLM's 384 -> 77, 77, 77,
77, 76).  It has no parameters, is differentiable (thin DCT matrix products, see
:func:`prismlib.spectral.band_pass`) and runs on CPU and GPU.

:func:`attach_prism` puts a prism layer after the last encoder layer (the paper's
BERT + Prism) or after every encoder layer (App. B.3) of a Hugging Face BERT-style
model, by forward hooks: the library's modelling code is neither copied nor changed.
Everything computed from a layer's output afterwards sees the filtered output: the
next layer, ``last_hidden_state``, ``hidden_states`` and the MLM head.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from torch import Tensor, nn

from prismlib.spectral.bands import BAND_NAMES, Band, allocate_bands, bands_for_lengths
from prismlib.spectral.checks import all_finite
from prismlib.spectral.filters import band_pass, sector_band_pass

__all__ = ["PrismHandle", "PrismLayer", "attach_prism", "encoder_layers", "sector_sizes", "sector_slices"]


def sector_sizes(hidden: int, k: int = 5) -> list[int]:
    """Units per sector: ``hidden // k`` each, the remainder one each to the first sectors.

    >>> sector_sizes(768)
    [154, 154, 154, 153, 153]
    """
    if k < 1:
        raise ValueError(f"need at least one sector, got k={k}")
    if hidden < k:
        raise ValueError(f"cannot split {hidden} hidden units into {k} non-empty sectors")
    base, extra = divmod(hidden, k)
    return [base + (1 if j < extra else 0) for j in range(k)]


def sector_slices(hidden: int, k: int = 5) -> list[slice]:
    """The contiguous unit ranges of :func:`sector_sizes`, first sector first."""
    out, lo = [], 0
    for size in sector_sizes(hidden, k):
        out.append(slice(lo, lo + size))
        lo += size
    return out


def _lengths_from_mask(attention_mask: Tensor, length: int) -> list[int] | None:
    """Real lengths of a right-padded ``(batch, length)`` mask; ``None`` when every row is full."""
    if attention_mask.ndim != 2 or attention_mask.shape[1] != length:
        raise ValueError(
            f"the prism layer needs a (batch, length) attention mask with length {length}, got shape {tuple(attention_mask.shape)}"
        )
    mask = attention_mask != 0
    lengths = mask.sum(-1)
    if bool((lengths == length).all()):
        return None
    prefix = torch.arange(length, device=mask.device)[None, :] < lengths[:, None]
    if not bool((prefix == mask).all()):
        raise ValueError(
            "the prism layer filters each row over its real length and needs right padding "
            "(ones then zeros in every row of the attention mask); got a mask with holes or left padding"
        )
    if bool((lengths == 0).any()):
        raise ValueError("a row of the attention mask is all zeros; every input needs at least one token")
    return lengths.tolist()


class PrismLayer(nn.Module):
    """Band-pass five contiguous sectors of the hidden units, each with its own band.

    Args:
        hidden_size: number of hidden units (the last axis of the input).
        bands: band name of each sector, lowest units first (default the paper's
            LOW, MID-LOW, MID, MID-HIGH, HIGH); the bands for a sequence of length ``N``
            are those of ``allocate_bands(N)`` (Table 3a for ``N = 512``).
        base: growth factor of the band allocation (App. A; 4 in the paper).

    Shapes: ``forward(h (batch, length, hidden), attention_mask (batch, length) | None)``
    -> ``(batch, length, hidden)``.  Rows are filtered over their real length (the
    number of ones of a right-padded mask); padding positions come out zero.
    """

    def __init__(self, hidden_size: int, bands: Sequence[str] = BAND_NAMES, base: int = 4) -> None:
        super().__init__()
        bands = tuple(bands)
        unknown = [b for b in bands if b not in BAND_NAMES]
        if unknown:
            raise ValueError(f"unknown band(s) {unknown}; choose from {BAND_NAMES}")
        self.hidden_size = int(hidden_size)
        self.bands = bands
        self.base = int(base)
        self.sizes = sector_sizes(self.hidden_size, len(bands))
        self.slices = sector_slices(self.hidden_size, len(bands))

    def extra_repr(self) -> str:
        return f"hidden_size={self.hidden_size}, sectors={self.sizes}, bands={list(self.bands)}"

    def sector(self, band: str) -> slice:
        """The unit range filtered with ``band`` (e.g. ``"LOW"``)."""
        return self.slices[self.bands.index(band)]

    def forward(self, h: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        if h.ndim != 3 or h.shape[-1] != self.hidden_size:
            raise ValueError(f"expected (batch, length, {self.hidden_size}) hidden states, got {tuple(h.shape)}")
        n = h.shape[1]
        lengths = None if attention_mask is None else _lengths_from_mask(attention_mask, n)
        if not all_finite(h):
            bad = (~torch.isfinite(h)).nonzero()[0].tolist()
            raise ValueError(
                f"hidden states contain NaN or infinite values (first at batch {bad[0]}, position {bad[1]}, unit "
                f"{bad[2]}); the prism layer's DCT would spread them over every position of the unit. The layers "
                "before it diverged: lower the learning rate or check the inputs (torch.nan_to_num hides it)"
            )
        dtype = h.dtype
        # under autocast the DCT products would run in half precision; the filter is
        # cheap, so keep it in float32 for bands that stay clean
        if torch.is_autocast_enabled(h.device.type) or dtype in (torch.float16, torch.bfloat16):
            with torch.autocast(h.device.type, enabled=False):
                return self._filter(h.float(), n, lengths).to(dtype)
        return self._filter(h, n, lengths)

    def _filter_full(self, x: Tensor) -> Tensor:
        """Filter rows that are all of real length ``x.shape[1]``: one thin product there and
        back per sector (:func:`~prismlib.spectral.sector_band_pass`)."""
        bands = _bands(x.shape[1], len(self.bands), self.base)
        return sector_band_pass(x, [bands[name] for name in self.bands], self.slices, check_finite=False)

    def _filter(self, h: Tensor, n: int, lengths: list[int] | None) -> Tensor:
        if lengths is None:
            return self._filter_full(h)
        k = len(self.bands)
        return torch.cat(
            [
                band_pass(h[..., sl], bands_for_lengths(lengths, name, k, self.base), lengths=lengths, check_finite=False)
                for name, sl in zip(self.bands, self.slices)
            ],
            dim=-1,
        )


@lru_cache(maxsize=1024)
def _bands(n: int, k: int, base: int) -> dict[str, Band]:
    return {b.name: b for b in allocate_bands(n, k, base)}


def encoder_layers(model: nn.Module) -> nn.ModuleList:
    """The transformer layers of a BERT-style Hugging Face model (``<base>.encoder.layer``).

    Works for a bare encoder (``BertModel``) and for a model with a head
    (``BertForMaskedLM``; its ``base_model`` is the encoder).
    """
    base = getattr(model, "base_model", model)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if not isinstance(layers, nn.ModuleList):
        raise TypeError(
            f"{type(model).__name__} has no `<base>.encoder.layer` list; attach_prism supports BERT-style "
            "Hugging Face encoders (BertModel, BertForMaskedLM, RoBERTa, ...)"
        )
    return layers


@dataclass
class PrismHandle:
    """What :func:`attach_prism` attached; :meth:`detach` removes it again.

    Attributes:
        prism: the :class:`PrismLayer` applied (one module, shared by every position).
        layer_indices: 0-based indices of the encoder layers whose output is filtered.
    """

    prism: PrismLayer
    layer_indices: list[int]
    _hooks: list = field(default_factory=list, repr=False)
    _state: dict = field(default_factory=dict, repr=False)

    @property
    def attached(self) -> bool:
        return bool(self._hooks)

    def detach(self) -> None:
        """Remove every hook; the model computes as before :func:`attach_prism`."""
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
        self._state.clear()


def attach_prism(model: nn.Module, where: str | Sequence[int] = "last", bands: Sequence[str] = BAND_NAMES, base: int = 4) -> PrismHandle:
    """Insert a prism layer into a Hugging Face BERT-style model, by hooks.

    Args:
        model: ``BertForMaskedLM``, ``BertModel`` or a similar encoder whose layers are
            ``model.base_model.encoder.layer``.
        where: ``"last"`` (after the last encoder layer, the paper's BERT + Prism),
            ``"every"`` (after every encoder layer, App. B.3) or explicit 0-based layer
            indices.
        bands: band of each sector (see :class:`PrismLayer`).
        base: band allocation growth factor.

    Returns:
        A :class:`PrismHandle`; ``handle.detach()`` restores the plain model.

    How: a forward pre-hook on the encoder (``model.base_model``) keeps the
    ``attention_mask`` of the current call, and a forward hook on each chosen layer
    returns the filtered output.  Those hooks are *prepended*, so they run before any
    hook the library registers on the same layers (``output_hidden_states`` is recorded
    by such hooks in transformers 5): ``hidden_states`` and ``last_hidden_state`` hold
    the prism output, and the next layer and the MLM head are computed from it.  Call
    the model with a right-padded ``attention_mask`` (or none, for full-length rows).
    The kept mask is dropped when the encoder's call ends, so a layer called on its own
    (:func:`prismlib.prism.top_states`) filters full-length rows.
    """
    layers = encoder_layers(model)
    n_layers = len(layers)
    if where == "last":
        indices = [n_layers - 1]
    elif where == "every":
        indices = list(range(n_layers))
    elif isinstance(where, str):
        raise ValueError(f"where must be 'last', 'every' or a list of layer indices, got {where!r}")
    else:
        indices = sorted({int(i) % n_layers for i in where})
    base_model = getattr(model, "base_model", model)
    prism = PrismLayer(int(base_model.config.hidden_size), bands=bands, base=base)  # type: ignore[union-attr, arg-type]
    handle = PrismHandle(prism, indices)
    state = handle._state

    def keep_mask(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        if mask is None and len(args) > 1:
            mask = args[1]
        state["attention_mask"] = mask
        return None

    def filter_output(module, args, output):
        if isinstance(output, tuple):
            return (prism(output[0], state.get("attention_mask")), *output[1:])
        return prism(output, state.get("attention_mask"))

    def forget_mask(module, args, output):
        state.pop("attention_mask", None)  # a layer called on its own then filters full-length rows

    handle._hooks.append(base_model.register_forward_pre_hook(keep_mask, with_kwargs=True, prepend=True))
    handle._hooks.append(base_model.register_forward_hook(forget_mask, always_call=True))
    for i in indices:
        handle._hooks.append(layers[i].register_forward_hook(filter_output, prepend=True))
    return handle
