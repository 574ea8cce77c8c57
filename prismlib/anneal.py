"""An annealed learning-rate schedule and its stopping rule: what "converged" means for the
models this project trains to a stop (work B's LSTMs, section 4's continued MLM training).

The learning rate is divided by ``factor`` whenever a held-out perplexity (work B: full
validation; section 4: held-out masked tokens), checked after every round (a fixed amount
of training), has failed to improve on the best so far by ``tolerance`` (a fraction) for
``patience`` checks in a row. The run stops, *by its rule*, at the first such stall after
``decays`` decays. Two guards keep the rule from firing on a model that has not started learning:

- no decay before ``min_rounds`` rounds;
- no decay while the best validation perplexity is not below ``learn_below`` (work B: the
  Kneser-Ney bigram of PTB train, :func:`prismlib.lstm.bigram.ptb_references`): a model on
  the unigram plateau keeps its learning rate.

A run that reaches its cap before stopping by rule ends ``cap`` if it beat ``learn_below``
and ``did not learn`` otherwise; neither is converged.

:func:`anneal_check` is pure (a state and a validation perplexity in, the next state and
what to do out), so the rule is tested on synthetic curves without training anything.

:class:`AnnealSettings` are the schedule's knobs as a profile sets them, once for every trainer
that anneals (work B's LSTM LMs, notebook 10's Dyck LSTMs, section 4's arms): their checks, and
:meth:`AnnealSettings.rule`, which adds a run's cap and guard to make the :class:`AnnealRule`
that :func:`anneal_check` reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

STOPPED_BY_RULE = "rule"
STOPPED_AT_CAP = "cap"
DID_NOT_LEARN = "did not learn"
STOP_REASONS = (STOPPED_BY_RULE, STOPPED_AT_CAP, DID_NOT_LEARN)
"""Why an annealed run ended; only ``rule`` is a converged run."""

Action = Literal["continue", "decay", "stop"]


@dataclass(frozen=True)
class AnnealRule:
    """The schedule as :func:`anneal_check` reads it: a profile's :class:`AnnealSettings` with
    the run's cap and guard (:meth:`AnnealSettings.rule`, which refuses a schedule that cannot
    stop).

    Attributes:
        factor: the learning rate is divided by this at every decay (> 1).
        tolerance: an improvement smaller than this fraction of the best validation
            perplexity counts as none (> 0).
        decays: decays before the next failure stops the run (>= 1).
        min_rounds: rounds before the first decay may happen (>= 0).
        cap: rounds at most (> ``min_rounds``).
        learn_below: validation perplexity a model must beat before any decay (``None``:
            no such guard).
        patience: checks in a row without improvement that make a stall (>= 1; 1: every
            failed check decays or stops).
    """

    factor: float
    tolerance: float
    decays: int
    min_rounds: int
    cap: int
    learn_below: float | None = None
    patience: int = 1


@dataclass(frozen=True)
class AnnealSettings:
    """The annealed schedule's knobs, as a profile sets them for a trainer that anneals (the
    LSTM recipe, the Dyck settings, section 4's recipe); each refuses a value that cannot work.

    The names are those the trainers' settings had before this class grouped them: a job's
    key hashes them flat, beside the trainer's other fields (:meth:`prismlib.profiles.Nested.flat`).

    Attributes:
        decay_factor: the learning rate is divided by this at every decay (> 1).
        decay_tolerance: an improvement smaller than this fraction of the best so far counts
            as none (> 0).
        decays: decays before the next stall stops the run (>= 1).
        min_rounds: rounds before the first decay may happen (>= 0).
        decay_patience: failed checks in a row that make a stall (>= 1; 1: every failed
            check decays or stops).
    """

    decay_factor: float
    decay_tolerance: float
    decays: int
    min_rounds: int
    decay_patience: int

    def __post_init__(self) -> None:
        if not self.decay_factor > 1:
            raise ValueError(f"decay_factor must be > 1 (the rate must fall), got {self.decay_factor}")
        if not self.decay_tolerance > 0:
            raise ValueError(f"decay_tolerance must be > 0, or the anneal schedule may never stop; got {self.decay_tolerance}")
        if self.decays < 1:
            raise ValueError(f"decays must be >= 1, or the anneal schedule never stops by its rule; got {self.decays}")
        if self.min_rounds < 0:
            raise ValueError(f"min_rounds must be >= 0 (rounds before the first decay), got {self.min_rounds}")
        if self.decay_patience < 1:
            raise ValueError(f"decay_patience must be >= 1 (failed checks before a decay), got {self.decay_patience}")

    def check_cap(self, cap: int, fixed_path: bool = False, cap_name: str = "cap") -> None:
        """Refuse a cap (rounds at most) under which this schedule cannot work: one that does not
        exceed ``min_rounds`` (no decay could happen) or, on a fixed path, ``min_rounds + decays``
        (the path ends one round after its last decay). ``cap_name``: the setting that gives the
        cap, named in the error (``"epochs"``)."""
        if cap <= self.min_rounds:
            raise ValueError(
                f"the anneal schedule's cap ({cap_name} = {cap} rounds) must exceed min_rounds ({self.min_rounds}), "
                f"or it can never decay: raise {cap_name} or lower min_rounds"
            )
        if fixed_path and cap <= self.min_rounds + self.decays:
            raise ValueError(
                f"on a fixed path the cap ({cap_name} = {cap} rounds) must exceed min_rounds + decays "
                f"({self.min_rounds} + {self.decays}): the path ends one round after its last decay; raise {cap_name}"
            )

    def rule(self, cap: int, learn_below: float | None, fixed_path: bool = False) -> AnnealRule:
        """The :class:`AnnealRule` of a run capped at ``cap`` rounds, with the guard
        ``learn_below`` (``None``: none), after :meth:`check_cap`.

        On a fixed path no check counts as an improvement (an infinite tolerance) and one failed
        check makes a stall (patience 1), so the rate falls after each of the ``decays`` rounds
        that follow ``min_rounds`` and the run stops one round later, whatever validation says
        (once the model beats the guard); ``decay_tolerance`` and ``decay_patience`` go unused."""
        self.check_cap(cap, fixed_path)
        if fixed_path:
            return AnnealRule(self.decay_factor, math.inf, self.decays, self.min_rounds, cap, learn_below, 1)
        return AnnealRule(self.decay_factor, self.decay_tolerance, self.decays, self.min_rounds, cap, learn_below, self.decay_patience)


@dataclass(frozen=True)
class AnnealState:
    """Where the schedule stands after some rounds.

    Attributes:
        rounds: rounds checked so far.
        scale: current learning rate over the initial one (``factor ** -decays_done``).
        best: best validation perplexity so far (``inf`` before the first check).
        decayed_at: the round (1-based) of each decay so far.
        stop: why the run ended (one of :data:`STOP_REASONS`), ``None`` while it runs.
        stalled: checks in a row without improvement (counted where a decay may happen),
            since the last improvement or decay.
    """

    rounds: int = 0
    scale: float = 1.0
    best: float = math.inf
    decayed_at: tuple[int, ...] = field(default_factory=tuple)
    stop: str | None = None
    stalled: int = 0

    def __setstate__(self, state: dict) -> None:  # a state pickled before ``stalled`` existed had none
        object.__setattr__(self, "__dict__", {"stalled": 0, **state})

    @property
    def converged(self) -> bool:
        """Whether the run stopped by its rule (the only converged ending)."""
        return self.stop == STOPPED_BY_RULE


def anneal_check(state: AnnealState, val_ppl: float, rule: AnnealRule) -> tuple[AnnealState, Action]:
    """The schedule's decision after one more round whose validation perplexity is ``val_ppl``.

    Returns:
        ``(next_state, action)``: ``decay`` (divide the rate by ``rule.factor``), ``stop``
        (``next_state.stop`` says why) or ``continue``. A non-finite ``val_ppl`` counts as no
        improvement.
    """
    if state.stop is not None:
        raise ValueError(f"the run already stopped ({state.stop}); nothing more to check")
    rounds = state.rounds + 1
    improved = math.isfinite(val_ppl) and val_ppl < state.best * (1 - rule.tolerance)
    best = min(state.best, val_ppl) if math.isfinite(val_ppl) else state.best
    nxt = replace(state, rounds=rounds, best=best)
    learned = rule.learn_below is None or best < rule.learn_below
    eligible = not improved and learned and rounds > rule.min_rounds
    nxt = replace(nxt, stalled=state.stalled + 1 if eligible else 0)
    if nxt.stalled >= rule.patience:
        if len(state.decayed_at) >= rule.decays:
            return replace(nxt, stop=STOPPED_BY_RULE), "stop"
        nxt = replace(nxt, scale=state.scale / rule.factor, decayed_at=(*state.decayed_at, rounds), stalled=0)
        action: Action = "decay"
    else:
        action = "continue"
    if rounds >= rule.cap:
        return replace(nxt, stop=STOPPED_AT_CAP if learned else DID_NOT_LEARN), "stop"
    return nxt, action
