"""What every section-4 probing claim carries besides its test: the gates of Table 1 and App. B.

A claim of notebook 03 compares two probes on the same test rows (a paired bootstrap over the
test units, :class:`prismlib.probing.ProbeComparison`). Whether that comparison says anything
about the paper's claim depends on the models behind the probes; :class:`Section4Gates`
gives, for a task and the conditions a claim reads:

* **majority class**: each probe beats the majority class (a probe at chance tests nothing);
* for every continued-trained model among them (the weights behind ``prism``,
  ``baseline``, ``prism-every`` and ``baseline_prism_untrained``):
  **MLM sanity** (its head beats a unigram model on held-out text), **converged** (trained
  until the annealed rule of :mod:`prismlib.anneal` stopped it, not at its cap) and
  **improved** (its held-out MLM loss is below the encoder's before training);
* **no damage**: continued training did not leave the baseline's probe clearly below the
  encoder it started from (App. B.2 is that comparison as a claim, so it does not carry it);
* **effect stability** (:meth:`Section4Gates.stable`): the claim's contrast computed again
  on the models at the earlier checkpoint (the best held-out weights at the last decay)
  moved by at most half the claim's margin, or lies inside the final interval
  (:func:`prismlib.claims.effect_stability_gate`, the rule of work B).

Conditions are named ``"<arm>"`` or ``"<arm> <BAND> sector"`` (a sector's columns of that
arm's features); the same condition of the models at the earlier checkpoint carries the
suffix :data:`EARLIER`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from prismlib.claims import Gate, Test, effect_stability_gate, stability_margin
from prismlib.prism.arms import TRAINED, UNTRAINED_PRISM_ON
from prismlib.prism.sanity import MLMSanity
from prismlib.probing.probes import MAJORITY, ProbeComparison

EARLIER = "@previous"
"""Suffix of a condition probed on the models at the earlier checkpoint."""


def arm_of(condition: str) -> str:
    """The arm a condition's features come from (``"prism LOW sector@previous"`` -> ``prism``)."""
    return condition.removesuffix(EARLIER).split(" ", 1)[0]


def sector_condition(model: str, band: str) -> str:
    """The condition of ``band``'s sector of ``model``'s features, in the naming :func:`earlier`
    reads (``"prism@previous", "LOW"`` -> ``"prism LOW sector@previous"``)."""
    base = model.removesuffix(EARLIER)
    return f"{base} {band} sector" + (EARLIER if base != model else "")


def trained_weights(condition: str) -> str | None:
    """The trained arm whose weights a condition reads (``None``: the encoder before training)."""
    weights = UNTRAINED_PRISM_ON.get(arm_of(condition), arm_of(condition))
    return weights if weights in TRAINED else None


def earlier(condition: str) -> str:
    """The condition at the earlier checkpoint (itself for models that were not trained)."""
    return condition + EARLIER if trained_weights(condition) else condition


@dataclass
class Section4Gates:
    """The gates of section 4's probing claims for one run of notebook 03.

    Args:
        compare: task -> its :class:`ProbeComparison` (final and earlier-checkpoint
            conditions, every probe on the same test rows).
        sanity: the MLM sanity of the trained arms (:func:`prismlib.prism.mlm_sanity`).
        names: arm -> the model's name in a gate's text.
        units: task -> what its independent test units are (for a gate's detail).
    """

    compare: Mapping[str, ProbeComparison]
    sanity: MLMSanity
    names: Mapping[str, str]
    units: Mapping[str, str]

    def share(self, task: str, part: str, whole: str) -> float:
        """The share of ``whole``'s accuracy gain over the majority class that ``part`` keeps
        (e.g. a prism sector probed alone against the full model; point estimates)."""
        c = self.compare[task]
        base = c.accuracy(MAJORITY).effect
        return (c.accuracy(part).effect - base) / max(c.accuracy(whole).effect - base, 1e-9)

    def damage(self, task: str) -> Gate:
        """Continued training did not damage the encoder on ``task`` (baseline - original not clearly below 0)."""
        c = self.compare[task]
        iv = c.diff("baseline", "original")
        return Gate.not_below(
            f"continued training did not damage the encoder on {task} (baseline - original not clearly below 0)", iv,
            f"baseline {c.accuracy('baseline').effect:.1f}% vs original {c.accuracy('original').effect:.1f}%, {iv} points",
        )  # fmt: skip

    def gates(self, task: str, conditions: tuple[str, ...], damage: bool = True) -> list[Gate]:
        """The majority-class gate of each probe of ``conditions``; the MLM sanity, converged
        and improved gates of every trained model behind them; and (``damage``) the no-damage gate."""
        c = self.compare[task]
        if c.units < 2:
            return [Gate(f"{task} test set has at least two independent units", False, f"{c.units} ({self.units[task]})")]
        out = [c.gate(x) for x in conditions]
        for weights in dict.fromkeys(w for x in conditions if (w := trained_weights(x))):
            name = self.names[weights]
            if weights in self.sanity.intervals:
                out.append(self.sanity.gate(weights, name))
            out += [self.sanity.converged_gate(weights, name), self.sanity.improved_gate(weights, name)]
        return out + [self.damage(task)] if damage else out

    def stable(self, task: str, test: Test, a: str, b: str) -> Gate:
        """The effect-stability gate of ``test`` (a test of ``a - b`` on ``task``): the same
        contrast on the models at the earlier checkpoint."""
        name = f"{test.label or f'{a} - {b}'} on {task}"
        c = self.compare[task]
        ea, eb = earlier(a), earlier(b)
        if ea == a and eb == b:
            return Gate(f"stable: {name} (no trained model)", True, "no trained model: nothing to move")
        missing = [x for x in (ea, eb) if x not in c.runs.correct]
        return stable_since_decay(test, None if missing else c.diff(ea, eb).effect, name, ", ".join(missing))


def stable_since_decay(test: Test, earlier: float | None, name: str, missing: str = "a trained model") -> Gate:
    """The effect-stability gate of ``test`` against the same contrast (``earlier``) on the
    models at the earlier checkpoint; ``None``: there is none (``missing`` says for what)."""
    if earlier is None:
        return Gate(
            f"stable: {name} moved <= half its margin since the last decay", False,
            f"not converged: no earlier checkpoint for {missing} (a run that never decayed, or a fixed budget)",
        )  # fmt: skip
    return effect_stability_gate(name, test.interval, earlier, stability_margin(test), "the last decay")
