"""The Dyck-2 LSTMs of Mahto et al. (ICLR 2021): a baseline and a multi-timescale model.

Read from the official code (HuthLab/multi-timescale-LSTM-LMs, ``model_dyckn.py`` and
``run_dyckn.py``), written anew. Both models are one LSTM layer over a *frozen one-hot* input
(``nn.Embedding.from_pretrained(eye(V), freeze=True)``), a linear read-out to one output per
bracket type and a sigmoid: output ``t`` at position ``i`` says whether the closer of type
``t`` may come next (:func:`prismlib.lstm.iclr.dyck.closer_targets`).

**Multi-timescale** (``MTSLSTMModel`` with ``LSTMBiasInvGammaInitializer``): every unit gets a
timescale, the inverse-gamma (shape ``alpha``, scale ``scale``; the paper: 1.5, 1.0) quantiles
``invgamma.isf(linspace(0, 1, H + 2))[1:-1]``, i.e. the quantiles ``k / (H + 1)``, ``k = 1..H``,
in *decreasing* order (unit 0 has the longest timescale;
:func:`prismlib.lstm.inverse_gamma_timescales` reversed). Its forget bias is
``b_f = -log(exp(1/T) - 1)`` (the ``exp`` convention, :func:`prismlib.lstm.bias_from_timescale`)
and its input bias ``b_i = -b_f``, both written into ``bias_hh``; every entry of ``bias_ih`` is
zero (the g and o gates included) and the g and o entries of ``bias_hh`` keep PyTorch's random
initial values; then *both bias tensors are frozen* (``requires_grad = False``). Here the layer
is a :class:`prismlib.lstm.LSTMLayer` and the freezing is its fixed bias entries
(:func:`prismlib.lstm.apply_official`): exact under any optimiser.

The baseline is the same network with PyTorch's default initialisation and every bias trained.
Shapes: tokens ``(batch, length)`` int64 with :data:`prismlib.lstm.iclr.dyck.PAD` (-1) past each
string's end; outputs ``(batch, length, n_types)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from prismlib.lstm.iclr.dyck import N_TYPES, OFFICIAL_RECIPE
from prismlib.lstm.model import LSTMLayer
from prismlib.lstm.timescales import apply_official, bias_from_timescale, inverse_gamma_timescales

DYCK_MODELS = ("baseline", "mts")
"""The two models of the paper's Dyck-2 experiment (``--model Baseline`` / ``--model MTS``)."""


def dyck_timescales(hidden: int, alpha: float = OFFICIAL_RECIPE.invgamma_alpha, scale: float = OFFICIAL_RECIPE.invgamma_scale) -> Tensor:
    """``(hidden,)`` float64 timescales of the multi-timescale Dyck LSTM, longest first:
    ``invgamma.isf(linspace(0, 1, hidden + 2), alpha, scale=scale)[1:-1]``."""
    return inverse_gamma_timescales(hidden, alpha, scale).flip(0)


class DyckLSTM(nn.Module):
    """One-hot input -> one LSTM layer -> linear -> one logit per bracket type.

    Args:
        hidden: LSTM units (the paper: 256).
        n_types: bracket types (Dyck-2: 2); the vocabulary is ``2 * n_types`` symbols.
        timescales: ``None`` for the baseline; otherwise ``(hidden,)`` unit timescales
            (:func:`dyck_timescales`), set and frozen as the official multi-timescale model.

    Attributes:
        lstm: the :class:`prismlib.lstm.LSTMLayer` (``batch_first``).
        readout: ``nn.Linear(hidden, n_types)``.
        timescales: ``(hidden,)`` float64 buffer of the assigned timescales (NaN: baseline).
    """

    timescales: Tensor

    def __init__(self, hidden: int, n_types: int = N_TYPES, timescales: Tensor | None = None) -> None:
        super().__init__()
        if hidden < 1 or n_types < 1:
            raise ValueError(f"hidden and n_types must be positive, got {hidden} and {n_types}")
        self.vocab = 2 * n_types
        self.lstm = LSTMLayer(self.vocab, hidden)
        self.readout = nn.Linear(hidden, n_types)
        if timescales is None:
            self.register_buffer("timescales", torch.full((hidden,), float("nan"), dtype=torch.float64))
            return
        T = torch.as_tensor(timescales, dtype=torch.float64)
        if T.shape != (hidden,) or not bool((T > 0).all()):
            raise ValueError(f"timescales must be ({hidden},) and positive, got shape {tuple(T.shape)}")
        self.register_buffer("timescales", T.clone())
        with torch.no_grad():
            self.lstm.bias_ih_l0_raw.zero_()  # the official model zeroes all of bias_ih (g and o too)
        apply_official([self.lstm], [bias_from_timescale(T, "exp").float()])

    @property
    def multi_timescale(self) -> bool:
        """Whether the unit timescales are assigned and frozen."""
        return not bool(torch.isnan(self.timescales).all())

    def forward(self, tokens: Tensor, state: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``tokens (batch, length)`` (PAD allowed) -> ``(logits (batch, length, n_types), (h, c))``.

        Padding is read as symbol 0; it only ever follows a string's real positions, so the
        outputs at real positions do not depend on it (mask it out of every loss)."""
        x = F.one_hot(tokens.clamp(min=0), self.vocab).to(self.readout.weight.dtype)
        out, hc = self.lstm(x, state)
        return self.readout(out), hc


def build_dyck_model(
    kind: str,
    hidden: int,
    seed: int,
    n_types: int = N_TYPES,
    alpha: float = OFFICIAL_RECIPE.invgamma_alpha,
    scale: float = OFFICIAL_RECIPE.invgamma_scale,
) -> DyckLSTM:
    """A fresh ``"baseline"`` or ``"mts"`` :class:`DyckLSTM`, its random weights drawn from ``seed``
    (the global RNG is left as it was)."""
    if kind not in DYCK_MODELS:
        raise ValueError(f"kind must be one of {DYCK_MODELS}, got {kind!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return DyckLSTM(hidden, n_types, dyck_timescales(hidden, alpha, scale) if kind == "mts" else None)
