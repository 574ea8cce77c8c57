"""The ``cpu-long`` profile: the ``cpu`` profile (:mod:`prismlib.profiles.cpu`) with three
paired seeds of every LSTM, and the rule that makes any profile's ``-long`` twin
(:func:`until_converged`, ``python -m prismlib train --until-converged``).

Since work B's grid was trained (issue 47), ``cpu`` itself has every seed, so ``cpu-long``'s
LSTM settings are ``cpu``'s: the name stays, as the one the installments were trained under
(``python -m prismlib train --profile cpu-long --minutes 110``), and the twin rule stays for
any profile with fewer seeds.
"""

from __future__ import annotations

from dataclasses import replace

from prismlib.profiles import cpu
from prismlib.profiles.schema import Profile

LONG_CAP_EPOCHS = 300
"""Epoch cap of the ``-long`` twin of an NT-ASGD profile (300 rounds; the official
multi-timescale model, whose training log the official code ships, came within 2% of its
final validation perplexity near epoch 270)."""
LONG_SEEDS = (0, 1, 2)
"""Seeds of every model in the ``-long`` twin of an annealed profile (``cpu-long``): the
claims about effects under 5% need three (:data:`prismlib.claims.MIN_SEEDS`)."""


def until_converged(profile: Profile, cap_epochs: int = LONG_CAP_EPOCHS) -> Profile:
    """``profile``'s ``<name>-long`` twin.

    An annealed profile (``cpu``) already trains every model until it stops by its rule: its
    twin trains the same models with every seed of :data:`LONG_SEEDS` (paired), sharing the
    first seed's models with ``profile`` (``jobs_as``). An NT-ASGD profile's twin trains each
    model until it passes the model gate (``until_converged``; at most ``cap_epochs``
    epochs), switching to averaging by AWD's own rule (``average_last=0``), with a learning
    curve every 250 steps where the profile records none."""
    s = profile.lstm
    if s.optimizer == "anneal":
        lstm = replace(s, seeds=tuple(dict.fromkeys(s.seeds + LONG_SEEDS)), all_seeds=True)
        return replace(profile, name=f"{profile.name}-long", lstm=lstm, jobs_as=profile.job_profile)
    lstm = s.updated(epochs=cap_epochs, until_converged=True, average_last=0, curve_every=s.curve_every or 250)
    return replace(profile, name=f"{profile.name}-long", lstm=lstm)


def get_config() -> Profile:
    """The ``cpu-long`` profile: ``cpu``'s models with every seed of :data:`LONG_SEEDS`, the
    first seed's shared with ``cpu``, and ``cpu``'s pretraining of the small BERT (issue 76),
    whose installments run under this name."""
    return until_converged(cpu.get_config())
