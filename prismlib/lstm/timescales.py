"""Timescales of LSTM units and the forget-gate biases that set them (work B).

A unit whose forget gate sits at a constant value ``f`` keeps a fraction ``f`` of its cell
state per step. Two conventions turn ``f`` into a *timescale* ``T`` (in words):

* ``"logit"`` (the slides and the chrono paper): ``T = 1 / (1 - f)``, the mean of the
  geometric "how long does a memory survive" distribution. With ``f = sigmoid(b)`` this is
  ``T = 1 + exp(b)``, i.e. ``b = log(T - 1)``: the slides' ``log(T - 1)``.
* ``"exp"`` (the published code of the ICLR 2021 version): ``f^t = exp(-t / T)``, i.e.
  ``T = -1 / log f`` and ``b = -log(exp(1 / T) - 1)``. It is defined for every
  ``T > 0`` (the published layer-2 timescales go below 1); for large ``T`` the two agree.

**Chrono** initialisation (Tallec & Ollivier 2018, as on the slides):
``b_f ~ log(U(1, T_max - 1))`` and ``b_i = -b_f``.

Variants (:func:`variant_forget_biases`; per layer, the forget bias of every unit, or
``None`` for a layer left at PyTorch's default):

========== ==========================================================================
baseline   nothing set
layerwise  chrono per layer with ``T_max`` = T, T/2, T/4 (L1 longest; slide "L1 log(T-1)")
inverse    the same, reversed: L1 T/4, L2 T/2, L3 T (last layer longest)
middle     L1 T/4, L2 T, L3 T/2 (middle layer longest, experiment 3)
gradient   every layer's units spread evenly: ``b = log(linspace(1, T - 1, n))``
layer2     layer 2 only, all units ``log(X - 1)`` (experiment 4, ``T`` is X)
mod5       layer 2: half the units a gradient of timescales 2..20, half at 70
mod8       layer 2: 80 % gradient 2..20, 20 % at 70
pareto     layer 2: timescales drawn from a Pareto density ~ 1/T^1.54 (T >= 1)
published  L1 half at T = 3, half at T = 4; L2 inverse-gamma(0.56, 1) quantiles of T;
           ``"exp"`` convention (the ICLR 2021 version); L3 untouched
official   the assignment of the official code of the ICLR 2021 version
           (HuthLab/multi-timescale-LSTM-LMs, ``model_mts.py``), exactly: as
           ``published``, but layer 2's timescales are ``invgamma.isf(linspace(0, 1,
           n + 1))[1:]``, whose last one is T = 0 (b_f = -inf: a unit with no memory),
           and :func:`apply_official` freezes *every* gate bias of layers 1-2
========== ==========================================================================

Decisions where the slides are ambiguous: "layer-wise" samples chrono values
(``log U(1, T_l - 1)``, as the slides' "Approach" page writes for T = 20) rather than a
single value per layer; "gradient" uses ``log(1 -> T - 1)`` (experiment 2's wording) for the
initialised and the fixed version alike.

**Where the value goes.** PyTorch's LSTM adds ``bias_ih`` and ``bias_hh``. For every
controlled unit :func:`apply_timescales` writes the whole value into ``bias_ih`` (input
gate ``-b_f``, forget gate ``b_f``; gate order i, f, g, o) and zero into the same entries of
``bias_hh``, so the effective bias is exactly the variant's value.

**What a fixed variant freezes** (``freeze``, :data:`FREEZE`; the rest of the layer trains):

============== ==========================================================================
input_forget   the input and forget entries of both bias tensors: ``b_f`` and
               ``b_i = -b_f`` (the project's behaviour before the conventions were named;
               the default, so the cache keys of earlier runs stay). A unit's input gate
               at zero pre-activation is then frozen at ``sigmoid(-log(T - 1)) = 1/T``.
forget         only the forget entries: ``b_f`` fixed, ``b_i`` initialised at ``-b_f``
               and trained (the slides' wording, "fixed forget gate biases").
all            every gate bias of the layer (i, f, g, o): the official code sets
               ``requires_grad = False`` on both bias tensors of its fixed layers; the
               ``g`` and ``o`` entries stay at their random initial values.
============== ==========================================================================

**Did training move the biases?** (:func:`bias_shift`, :func:`bias_override`): statistics
of a layer's forget biases before and after training, with intervals from a bootstrap
over the layer's hidden units (the units a layer's bias distribution is made of;
resampled with :func:`prismlib.stats.paired_bootstrap`, a unit's initial and trained
bias kept together).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import torch
from torch import Tensor, nn

from prismlib.stats import N_BOOT, Interval, paired_bootstrap

if TYPE_CHECKING:
    from prismlib.lstm.model import LSTMLayer

Convention = Literal["logit", "exp"]
CONVENTIONS: tuple[str, ...] = ("logit", "exp")

FREEZE: dict[str, str] = {
    "input_forget": "b_f and b_i = -b_f frozen (the default)",
    "forget": "only b_f frozen; b_i starts at -b_f and trains (the slides' wording)",
    "all": "every gate bias (i, f, g, o) of the layer frozen (the official code)",
}
"""What a *fixed* variant freezes in each layer it sets (see the module docstring)."""
DEFAULT_FREEZE = "input_forget"


def freeze_mask(hidden: int, freeze: str, device: torch.device | str | None = None) -> Tensor:
    """Which of a layer's ``4 * hidden`` bias entries (gate order i, f, g, o) ``freeze`` fixes, ``(4 * hidden,)`` bool."""
    if freeze not in FREEZE:
        raise ValueError(f"freeze must be one of {', '.join(FREEZE)}, got {freeze!r}")
    mask = torch.zeros(4 * hidden, dtype=torch.bool, device=device)
    start, stop = {"input_forget": (0, 2), "forget": (1, 2), "all": (0, 4)}[freeze]
    mask[start * hidden : stop * hidden] = True
    return mask


VARIANTS: dict[str, str] = {
    "baseline": "PyTorch default initialisation",
    "layerwise": "chrono per layer, T_max = T, T/2, T/4",
    "inverse": "chrono per layer, T_max = T/4, T/2, T",
    "middle": "chrono per layer, T_max = T/4, T, T/2",
    "gradient": "every layer log(linspace(1, T-1))",
    "layer2": "layer 2 at log(X-1)",
    "mod5": "layer 2: 50% timescales 2..20, 50% at 70",
    "mod8": "layer 2: 80% timescales 2..20, 20% at 70",
    "pareto": "layer 2: timescales ~ Pareto, density 1/T^1.54",
    "published": "L1 T in {3, 4}, L2 inverse-gamma(0.56) (ICLR 2021)",
    "official": "the official code's assignment: L2 grid with T = 0, all biases of L1-2 frozen",
}
"""Every named variant and a one-line description."""

_NEEDS_T = {"layerwise", "inverse", "middle", "gradient", "layer2"}
PARETO_EXPONENT = 1.54
INVGAMMA_SHAPE = 0.56


def _check_convention(convention: str) -> None:
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")


def timescale_from_forget(f: Tensor | float, convention: Convention = "logit") -> Tensor:
    """Timescale ``T`` of a constant forget-gate value ``f`` in (0, 1).

    ``"logit"``: ``T = 1 / (1 - f)``; ``"exp"``: ``T = -1 / log f``. Any shape.
    """
    _check_convention(convention)
    f = torch.as_tensor(f, dtype=torch.get_default_dtype() if not torch.is_tensor(f) else None)
    if ((f <= 0) | (f >= 1)).any():
        raise ValueError("forget-gate values must lie strictly between 0 and 1")
    return 1 / (1 - f) if convention == "logit" else -1 / torch.log(f)


def forget_from_timescale(T: Tensor | float, convention: Convention = "logit") -> Tensor:
    """Forget-gate value for timescale ``T`` (inverse of :func:`timescale_from_forget`)."""
    _check_convention(convention)
    T = torch.as_tensor(T, dtype=torch.get_default_dtype() if not torch.is_tensor(T) else None)
    if convention == "logit":
        if (T <= 1).any():
            raise ValueError("with the 'logit' convention a timescale must exceed 1 (T = 1/(1-f) >= 1)")
        return 1 - 1 / T
    if (T <= 0).any():
        raise ValueError("timescales must be positive")
    return torch.exp(-1 / T)


def bias_from_timescale(T: Tensor | float, convention: Convention = "logit") -> Tensor:
    """Forget-gate bias ``b`` with ``sigmoid(b)`` the forget value of timescale ``T``.

    ``"logit"``: ``b = log(T - 1)`` (needs ``T > 1``); ``"exp"``:
    ``b = -log(exp(1/T) - 1)`` (any ``T > 0``; the published code's form). Any shape.
    """
    _check_convention(convention)
    T = torch.as_tensor(T, dtype=torch.get_default_dtype() if not torch.is_tensor(T) else None)
    if convention == "logit":
        if (T <= 1).any():
            raise ValueError("with the 'logit' convention a timescale must exceed 1 (b = log(T - 1))")
        return torch.log(T - 1)
    if (T <= 0).any():
        raise ValueError("timescales must be positive")
    return -torch.log(torch.expm1(1 / T))


def timescale_from_bias(b: Tensor | float, convention: Convention = "logit") -> Tensor:
    """Timescale of forget-gate bias ``b`` (inverse of :func:`bias_from_timescale`).

    ``"logit"``: ``T = 1 + exp(b)``; ``"exp"``: ``T = 1 / softplus(-b)``.
    """
    _check_convention(convention)
    b = torch.as_tensor(b, dtype=torch.get_default_dtype() if not torch.is_tensor(b) else None)
    return 1 + torch.exp(b) if convention == "logit" else 1 / nn.functional.softplus(-b)


def chrono_bias(n: int, t_max: float, generator: torch.Generator) -> Tensor:
    """Chrono forget biases ``b_f ~ log(U(1, t_max - 1))``, shape ``(n,)``; ``b_i = -b_f``."""
    if t_max <= 2:
        raise ValueError(f"chrono needs t_max > 2 (U(1, t_max - 1) must be an interval), got {t_max}")
    u = torch.rand(n, generator=generator, dtype=torch.float64)
    return torch.log(1 + u * (t_max - 2)).float()


def gradient_bias(n: int, t_max: float) -> Tensor:
    """Evenly spread biases ``log(linspace(1, t_max - 1, n))``: timescales 2 .. t_max, ``(n,)``."""
    if t_max <= 2:
        raise ValueError(f"a timescale gradient needs t_max > 2, got {t_max}")
    return torch.log(torch.linspace(1, t_max - 1, n, dtype=torch.float64)).float()


def pareto_timescales(n: int, generator: torch.Generator, exponent: float = PARETO_EXPONENT) -> Tensor:
    """``n`` timescales drawn from the density ``~ T^-exponent`` on ``T >= 1``, shape ``(n,)``.

    (A Pareto law with ``x_m = 1`` and index ``exponent - 1``; inverse-CDF sampling.)
    """
    if exponent <= 1:
        raise ValueError(f"a Pareto density T^-a is normalisable only for a > 1, got {exponent}")
    u = torch.rand(n, generator=generator, dtype=torch.float64).clamp(1e-7, 1 - 1e-7)
    return (1 - u) ** (-1 / (exponent - 1))


def inverse_gamma_timescales(n: int, shape: float = INVGAMMA_SHAPE, scale: float = 1.0) -> Tensor:
    """Quantiles ``k / (n + 1)``, k = 1..n, of an inverse-gamma law, shape ``(n,)`` float64."""
    from scipy.stats import invgamma

    q = np.arange(1, n + 1) / (n + 1)
    return torch.from_numpy(invgamma.ppf(q, shape, scale=scale))


def _mixture(n: int, short_fraction: float, t_short: float = 20, t_long: float = 70) -> Tensor:
    n_short = round(n * short_fraction)
    return torch.cat([gradient_bias(n_short, t_short), bias_from_timescale(torch.full((n - n_short,), float(t_long)))])


def variant_forget_biases(
    name: str,
    sizes: Sequence[int],
    T: float | None = None,
    generator: torch.Generator | None = None,
) -> list[Tensor | None]:
    """The forget-gate biases of variant ``name`` for layers with ``sizes`` units.

    Args:
        name: a key of :data:`VARIANTS`.
        sizes: hidden units per layer, e.g. ``(1150, 1150, 400)``.
        T: the variant's timescale (``T_max`` for chrono variants, X for ``layer2``).
        generator: seeded generator for the sampled variants (layerwise, inverse,
            middle, pareto); required by them.

    Returns:
        One entry per layer: a float32 tensor ``(sizes[l],)`` of biases ``b_f``, or ``None``
        where the layer keeps its default initialisation.
    """
    if name not in VARIANTS:
        raise ValueError(f"unknown timescale variant {name!r}; choose one of {', '.join(VARIANTS)}")
    if name in _NEEDS_T and T is None:
        raise ValueError(f"variant {name!r} needs a timescale: pass T=...")
    if name not in _NEEDS_T and T is not None:
        raise ValueError(f"variant {name!r} takes no timescale; drop T={T}")
    if name in {"layerwise", "inverse", "middle", "pareto"} and generator is None:
        raise ValueError(f"variant {name!r} is sampled: pass generator=torch.Generator().manual_seed(seed)")
    n_layers = len(sizes)
    if name in {"middle", "layer2", "mod5", "mod8", "pareto", "published", "official"} and n_layers < 2:
        raise ValueError(f"variant {name!r} sets layer 2; the model has {n_layers} layer(s)")
    if name == "middle" and n_layers != 3:
        raise ValueError(f"variant 'middle' is defined for 3 layers, the model has {n_layers}")
    out: list[Tensor | None] = [None] * n_layers
    if name == "baseline":
        return out
    if name in {"layerwise", "inverse", "middle"}:
        t_layer = [T / 2**layer for layer in range(n_layers)]
        if name == "inverse":
            t_layer = t_layer[::-1]
        elif name == "middle":
            t_layer = [T / 4, T, T / 2]  # type: ignore[operator]
        return [chrono_bias(n, t, generator) for n, t in zip(sizes, t_layer)]  # type: ignore[arg-type]
    if name == "gradient":
        return [gradient_bias(n, T) for n in sizes]  # type: ignore[arg-type]
    if name == "layer2":
        out[1] = bias_from_timescale(torch.full((sizes[1],), float(T))).float()  # type: ignore[arg-type]
    elif name in {"mod5", "mod8"}:
        out[1] = _mixture(sizes[1], 0.5 if name == "mod5" else 0.8).float()
    elif name == "pareto":
        out[1] = bias_from_timescale(pareto_timescales(sizes[1], generator)).float()  # type: ignore[arg-type]
    elif name in ("published", "official"):
        # layer 1 alike: half the units at T = 3, half at T = 4 with b = -log(exp(1/T) - 1),
        # i.e. b = 0.927 and 1.259, as the released code (model_mts.py) sets them; the log the
        # official code ships ("l1_3_4") may have used ln 2 and ln 3 (T = 3, 4 under the logit
        # convention): `official` follows the released code
        half = sizes[0] // 2
        t1 = torch.cat([torch.full((half,), 3.0), torch.full((sizes[0] - half,), 4.0)]).double()
        out[0] = bias_from_timescale(t1, "exp").float()
        if name == "published":
            out[1] = bias_from_timescale(inverse_gamma_timescales(sizes[1]), "exp").float()
        else:
            out[1] = official_layer2_biases(sizes[1])
    return out


def official_layer2_biases(n: int, shape: float = INVGAMMA_SHAPE) -> Tensor:
    """Layer 2's forget biases in the official code, ``(n,)`` float32, the last one ``-inf``.

    ``T = invgamma.isf(linspace(0, 1, n + 1), shape)[1:]`` (inverse survival function, so
    the timescales decrease from about 3.6e5 to exactly 0) and ``b = -log(exp(1/T) - 1)``
    (:func:`bias_from_timescale`, ``"exp"``), with ``T = 0`` giving ``b = -inf``: a unit
    whose forget gate is 0 and input gate 1.
    """
    from scipy.stats import invgamma

    T = invgamma.isf(np.linspace(0, 1, n + 1), shape, scale=1.0)[1:]
    b = np.full(n, -np.inf)
    b[T > 0] = bias_from_timescale(torch.from_numpy(T[T > 0]), "exp").numpy()
    return torch.from_numpy(b).float()


def apply_official(layers: Sequence[nn.LSTM], forget_biases: Sequence[Tensor | None]) -> None:
    """Set the layers as the official code does and freeze *all* their gate biases, in place.

    For every layer with biases: ``bias_ih``'s input and forget entries zeroed,
    ``bias_hh``'s input entries ``-b_f`` and forget entries ``b_f`` (infinite values
    allowed); then every entry of both bias tensors (i, f, g, o) is fixed, the ``g`` and
    ``o`` ones at their random initial values (the official code sets ``requires_grad =
    False`` on the whole tensors). Layers need to be :class:`prismlib.lstm.LSTMLayer`.
    """
    for layer, b, b_ih, b_hh in _checked(layers, forget_biases, finite=False):
        h = layer.hidden_size
        if not hasattr(layer, "fix_bias_entries"):
            raise ValueError("apply_official needs prismlib.lstm.LSTMLayer modules")
        with torch.no_grad():
            b_ih[: 2 * h] = 0
            b_hh[:h] = -b
            b_hh[h : 2 * h] = b
        mask = torch.ones(4 * h, dtype=torch.bool, device=b_ih.device)
        layer.fix_bias_entries(mask, b_ih.detach().clone(), b_hh.detach().clone())  # type: ignore[operator]


def _checked(
    layers: Sequence[nn.LSTM], forget_biases: Sequence[Tensor | None], finite: bool
) -> Iterator[tuple[nn.LSTM, Tensor, Tensor, Tensor]]:
    """``(layer, b_f, bias_ih, bias_hh)`` for every layer given biases, after checking them.

    ``b_f`` must be ``(hidden,)``, never NaN, and finite if ``finite`` (the official
    assignment's T = 0 unit has ``-inf``); it comes back on the bias tensors' device.
    """
    if len(layers) != len(forget_biases):
        raise ValueError(f"got {len(forget_biases)} bias vectors for {len(layers)} layers")
    for layer, b in zip(layers, forget_biases):
        if b is None:
            continue
        h = layer.hidden_size
        if b.shape != (h,):
            raise ValueError(f"forget biases for a layer with {h} units must have shape ({h},), got {tuple(b.shape)}")
        if torch.isnan(b).any() or (finite and not torch.isfinite(b).all()):
            raise ValueError("forget biases must be finite (a 'logit' timescale of exactly 1 gives -inf)")
        b_ih, b_hh = _bias_tensors(layer)
        yield layer, b.to(b_ih), b_ih, b_hh


def _bias_tensors(layer: nn.LSTM) -> tuple[Tensor, Tensor]:
    """The trainable ``(bias_ih, bias_hh)`` of a single-layer LSTM (raw tensors for prismlib's)."""
    if layer.num_layers != 1 or layer.bidirectional or not layer.bias:
        raise ValueError("apply_timescales needs single-layer, unidirectional nn.LSTM modules with biases")
    if hasattr(layer, "bias_ih_l0_raw"):
        return layer.bias_ih_l0_raw, layer.bias_hh_l0_raw  # type: ignore[return-value]
    return layer.bias_ih_l0, layer.bias_hh_l0  # type: ignore[return-value]


def apply_timescales(
    layers: Sequence[nn.LSTM], forget_biases: Sequence[Tensor | None], fixed: bool = False, freeze: str = DEFAULT_FREEZE
) -> None:
    """Write forget biases ``b_f`` and input biases ``-b_f`` into LSTM layers, in place.

    Args:
        layers: single-layer ``nn.LSTM`` modules, one per entry of ``forget_biases``
            (for ``fixed=True`` they must be :class:`prismlib.lstm.LSTMLayer`).
        forget_biases: per layer a tensor ``(hidden,)`` or ``None`` (layer untouched).
        fixed: if true, the entries ``freeze`` names never change in training (the layer
            computes its biases as ``where(fixed_mask, fixed_value, trainable)`` at every
            forward, so the fused kernel still runs).
        freeze: a key of :data:`FREEZE`: ``input_forget`` (b_i and b_f), ``forget`` (b_f
            only) or ``all`` (every gate bias of the layer, at its current value).
    """
    if freeze not in FREEZE:
        raise ValueError(f"freeze must be one of {', '.join(FREEZE)}, got {freeze!r}")
    for layer, b, b_ih, b_hh in _checked(layers, forget_biases, finite=True):
        h = layer.hidden_size
        with torch.no_grad():
            b_ih[:h] = -b
            b_ih[h : 2 * h] = b
            b_hh[: 2 * h] = 0
        if fixed:
            if not hasattr(layer, "fix_bias_entries"):
                raise ValueError("fixed biases need prismlib.lstm.LSTMLayer modules (plain nn.LSTM can only be initialised)")
            layer.fix_bias_entries(  # type: ignore[operator]
                freeze_mask(h, freeze, b_ih.device), b_ih.detach().clone(), b_hh.detach().clone()
            )


def forget_gate_biases(layers: Sequence[nn.LSTM]) -> list[Tensor]:
    """Effective forget-gate biases ``bias_ih + bias_hh`` (what the kernel uses), ``(hidden,)`` per layer."""
    out = []
    for layer in layers:
        if hasattr(layer, "effective_biases"):
            b_ih, b_hh = cast("LSTMLayer", layer).effective_biases()
        else:
            b_ih, b_hh = _bias_tensors(layer)
        h = layer.hidden_size
        out.append((b_ih[h : 2 * h] + b_hh[h : 2 * h]).detach().cpu().clone())
    return out


def describe(name: str, T: float | None = None, fixed: bool = False, freeze: str = DEFAULT_FREEZE) -> str:
    """A short human-readable label, e.g. ``"layerwise T=20 (fixed)"``, or with a convention
    other than the default ``"layerwise T=20 (fixed: forget)"``."""
    t = "" if T is None else f" {'X' if name == 'layer2' else 'T'}={T:g}"
    if not fixed:
        return f"{name}{t}"
    return f"{name}{t} (fixed{'' if freeze == DEFAULT_FREEZE else ': ' + freeze})"


def _unit_array(b: Tensor | np.ndarray, what: str) -> np.ndarray:
    x = b.detach().cpu().double().numpy() if torch.is_tensor(b) else np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or len(x) < 2 or not np.isfinite(x).all():
        raise ValueError(f"{what} must be finite per-unit biases of shape (hidden,) with hidden >= 2, got shape {x.shape}")
    return x


def bias_shift(init: Tensor | np.ndarray, final: Tensor | np.ndarray, n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """Mean over units of ``|b_final - b_init|`` for one layer, with a bootstrap interval over its units.

    Args:
        init, final: ``(hidden,)`` forget biases of the same layer before and after training.
    """
    a, b = _unit_array(init, "init"), _unit_array(final, "final")
    if a.shape != b.shape:
        raise ValueError(f"init and final must be the same layer: shapes {a.shape} and {b.shape}")

    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.abs(y - x).mean(axis)

    return paired_bootstrap(stat, (a, b), n_boot=n_boot, seed=seed)


def bias_override(
    init: Tensor | np.ndarray,
    final: Tensor | np.ndarray,
    reference_final: Tensor | np.ndarray,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Interval:
    """``|mean(final) - mean(init)| - |mean(final) - mean(reference_final)|`` of one layer.

    Positive: training took the layer's mean forget bias nearer to where a reference model
    (the baseline, same layer) ended than to where it started: "training overrides the
    initial values". The units of the two models are resampled with the same indices
    (unit ``i`` of the reference has nothing to do with unit ``i`` of the model, so this
    only keeps one resampling scheme; the means are what is compared).

    Args:
        init, final: ``(hidden,)`` forget biases of the model's layer before and after training.
        reference_final: ``(hidden,)`` trained forget biases of the reference model's same layer.
    """
    a, b, r = _unit_array(init, "init"), _unit_array(final, "final"), _unit_array(reference_final, "reference_final")
    if not a.shape == b.shape == r.shape:
        raise ValueError(f"the three bias vectors must have one shape, got {a.shape}, {b.shape}, {r.shape}")

    def stat(x: np.ndarray, y: np.ndarray, z: np.ndarray, axis: int = -1) -> np.ndarray:
        m = y.mean(axis)
        return np.abs(m - x.mean(axis)) - np.abs(m - z.mean(axis))

    return paired_bootstrap(stat, (a, b, r), n_boot=n_boot, seed=seed)
