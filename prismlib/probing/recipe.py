"""How a probe trains: one typed recipe from the profile to the probe.

:class:`ProbeRecipe` holds the settings of the paper's softmax probe (section 3.2) that
:func:`~prismlib.probing.train_probe` and :func:`~prismlib.probing.train_gated_probe` read:
the epoch cap, the patience of the halving rule, Adam's rate, the rows per step and whether
the features are standardised. It is built from a profile's
:class:`~prismlib.profiles.ProbeSettings` for one task (:meth:`ProbeRecipe.of`, the MLM probe
with its own cap), and the cap check raises the cap explicitly (:meth:`ProbeRecipe.with_cap`).
Its defaults (the paper's) are stated here and nowhere else; the cap has none: it comes
from the profile or from the caller.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prismlib.profiles import ProbeSettings


@dataclass(frozen=True)
class ProbeRecipe:
    """The training recipe of one probe (what :func:`~prismlib.probing.fit_with_halving`'s
    schedule and the probe's batches need), from a profile by :meth:`of`.

    Attributes:
        max_epochs: the epoch cap: a run stops here if its rule has not stopped it (the
            paper: 30; its MLM probe: 3). No default: a profile's
            :meth:`~prismlib.profiles.ProbeSettings.epochs_for` gives it (:meth:`of`).
        patience: epochs in a row without a lower validation loss that are tolerated, the
            learning rate halved after each (the paper: 1, a stop after the second);
            ``None`` trains exactly ``max_epochs`` epochs and keeps the last parameters.
        lr: Adam's initial learning rate (its default, the paper's: 1e-3); the gated probe's
            gate may have its own (:class:`~prismlib.probing.GateRecipe`).
        batch_size: rows (tokens) per step of :func:`~prismlib.probing.train_probe` (the
            gated probe steps over windows instead: :class:`~prismlib.probing.GateRecipe`).
        standardize: scale the features by the training set's mean and SD per hidden unit
            (default raw, as in the paper); the gated probe reads raw states only.
    """

    max_epochs: int
    patience: int | None = 1
    lr: float = 1e-3
    batch_size: int = 512
    standardize: bool = False

    def __post_init__(self) -> None:
        if self.max_epochs < 1:
            raise ValueError(f"max_epochs must be at least 1, got {self.max_epochs}")
        if self.patience is not None and self.patience < 0:
            raise ValueError(f"patience must be None or at least 0, got {self.patience}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")

    @classmethod
    def of(cls, settings: ProbeSettings, task: str) -> ProbeRecipe:
        """The recipe of a probe on ``task`` (a task's name: ``pos``, ``swda``, ``topic``,
        ``mlm``) under a profile's ``settings``: its cap
        (:meth:`~prismlib.profiles.ProbeSettings.epochs_for`: ``mlm_epochs`` for the MLM
        probe, else ``max_epochs``), patience, rows per step and standardisation; Adam's
        rate is the default (profiles do not set it)."""
        return cls(
            max_epochs=settings.epochs_for(task),
            patience=settings.patience,
            batch_size=settings.batch_size,
            standardize=settings.standardize,
        )

    def with_cap(self, max_epochs: int) -> ProbeRecipe:
        """This recipe with the epoch cap ``max_epochs`` and nothing else changed (the cap
        check: ``recipe.with_cap(2 * recipe.max_epochs)``; runs its lower cap cut off go on
        with ``resume``)."""
        return dataclasses.replace(self, max_epochs=max_epochs)
