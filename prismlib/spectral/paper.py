"""Two of the paper's own forms, as printed: Table 3a's period column and Figure 3b's snippet.

:func:`period_range` writes a band's range of periods the way Table 3a prints them
(``"32–256"``, ``"256–∞"``), for any period formula (:func:`~prismlib.spectral.paper_period`,
the paper's ``N/(2k)``, or :func:`~prismlib.spectral.true_period`, the DCT-II's ``2N/k``).
:func:`fig3b_low_pass` is the three-line low-pass of Figure 3b, run as written (one DCT of
the whole matrix, indices from ``k`` on zeroed, the inverse); notebook 01 checks it
against :func:`~prismlib.spectral.low_pass`.

Imported from the package (``from prismlib.spectral import ...``), not from the module
that defines them, so a reorganisation of the filters leaves this module as it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from torch import Tensor

from prismlib.spectral import Band, dct, idct


def _fmt(v: float) -> str:
    return "∞" if math.isinf(v) else f"{v:.0f}" if v >= 10 else f"{v:.2g}"


def period_range(band: Band, n: int, period: Callable[[int, int], float]) -> str:
    """``"shortest–longest"`` period of ``band`` in a window of ``n`` tokens: ``period`` of its
    last index, then of its first (``∞`` for index 0); whole numbers from 10 on, two
    significant digits below."""
    return f"{_fmt(period(band.last, n))}–{_fmt(period(band.lo, n))}"


def fig3b_low_pass(H: Tensor, k: int) -> Tensor:
    """Figure 3b as written: ``H`` of shape ``(tokens, hidden)`` low-passed at DCT index ``k``
    (indices ``k`` and above zeroed, orthonormal DCT-II across tokens); returns the same shape."""
    H_dct = dct(H.T)
    H_dct[:, k:] = 0
    return idct(H_dct).T
