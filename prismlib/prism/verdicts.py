"""What every section-4 probing claim carries besides its test: the gates of Table 1 and App. B.

A claim of notebook 03 compares two probes on the same test rows: one interval per contrast,
the paired bootstrap over the test units of the seed-mean predictions
(:class:`prismlib.probing.ProbeComparison`) with the spread of the per-seed differences added
(:meth:`Section4Gates.with_seeds`). Whether that comparison says anything
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
  (:func:`prismlib.claims.effect_stability_gate`, the rule of work B);
* **seeds** (:meth:`Section4Gates.seeds`): every trained model behind the claim has
  :data:`prismlib.claims.MIN_SEEDS` training seeds. The claim's test itself is one interval
  per contrast with the seeds' spread and the test units' in it (:meth:`Section4Gates.with_seeds`,
  :mod:`prismlib.prism.seeds`).

The gates of a trained model (MLM sanity, converged, improved) hold for each of its seeds
(:func:`prismlib.prism.every_seed`). Conditions are named ``"<arm>"`` or ``"<arm> <BAND>
sector"`` (a sector's columns of that arm's features); the same condition of the models at the
earlier checkpoint carries the suffix :data:`EARLIER`, and a trained model's condition its seed
after that (:func:`prismlib.prism.seeded`: ``"prism LOW sector@previous#1"``). The claims read
the conditions without a seed: the seed-mean predictions.

Notebook 04's dip claims carry the same seeds and stability gates, once for each near-window
width (:func:`claim_at_every_width`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from prismlib.claims import Claim, Gate, Test, effect_stability_gate, stability_margin
from prismlib.prism.arms import TRAINED, UNTRAINED_PRISM_ON
from prismlib.prism.sanity import MLMSanity
from prismlib.prism.seeds import SeedComparison, every_seed, seeded, seeds_gate, seeds_test, split_seed
from prismlib.probing.probes import MAJORITY
from prismlib.stats import Interval

EARLIER = "@previous"
"""Suffix of a condition probed on the models at the earlier checkpoint."""


def _with_seed(condition: str, seed: int | None) -> str:
    return condition if seed is None else seeded(condition, seed)


def arm_of(condition: str) -> str:
    """The arm a condition's features come from (``"prism LOW sector@previous#1"`` -> ``prism``)."""
    return split_seed(condition)[0].removesuffix(EARLIER).split(" ", 1)[0]


def sector_condition(model: str, band: str) -> str:
    """The condition of ``band``'s sector of ``model``'s features, in the naming :func:`earlier`
    reads (``"prism@previous#1", "LOW"`` -> ``"prism LOW sector@previous#1"``)."""
    name, seed = split_seed(model)
    base = name.removesuffix(EARLIER)
    return _with_seed(f"{base} {band} sector" + (EARLIER if base != name else ""), seed)


def trained_weights(condition: str) -> str | None:
    """The trained arm whose weights a condition reads (``None``: the encoder before training)."""
    weights = UNTRAINED_PRISM_ON.get(arm_of(condition), arm_of(condition))
    return weights if weights in TRAINED else None


def earlier(condition: str) -> str:
    """The condition at the earlier checkpoint (itself for models that were not trained):
    ``"prism#1"`` -> ``"prism@previous#1"``."""
    name, seed = split_seed(condition)
    return _with_seed(name + EARLIER, seed) if trained_weights(condition) else condition


@dataclass
class Section4Gates:
    """The gates of section 4's probing claims for one run of notebook 03.

    Args:
        compare: task -> its :class:`~prismlib.prism.SeedComparison` (final and
            earlier-checkpoint conditions of every seed, every probe on the same test rows).
        sanity: the MLM sanity of the trained models, by seeded name (``"prism#1"``,
            :func:`prismlib.prism.mlm_sanity`).
        names: arm -> the model's name in a gate's text.
        units: task -> what its independent test units are (for a gate's detail).
    """

    compare: Mapping[str, SeedComparison]
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
        """Continued training did not damage the encoder on ``task``: baseline - original is not
        clearly below 0 on its one interval over test units and training seeds
        (:meth:`with_seeds`; entirely below 0 fails it)."""
        c = self.compare[task]
        iv = self.interval(task, "baseline", "original")
        over = f"over {iv.units} units x {iv.seeds} seeds" if iv.resampled == "units+seeds" else f"over {iv.units} units"
        return Gate(
            f"continued training did not damage the encoder on {task} (baseline - original not clearly below 0)",
            not iv.high < 0,
            f"baseline {c.accuracy('baseline').effect:.1f}% vs original {c.accuracy('original').effect:.1f}%, {iv} points {over}",
        )

    def gates(self, task: str, conditions: tuple[str, ...], damage: bool = True, informative: tuple[str, ...] | None = None) -> list[Gate]:
        """The majority-class gate of each probe of ``informative`` (default: every one of
        ``conditions``; a condition the claim expects near chance, e.g. B.1's off-task sector,
        is left out); the MLM sanity, converged and improved gates of every trained model
        behind ``conditions``, each over its seeds; and (``damage``) the no-damage gate."""
        c = self.compare[task]
        if c.units < 2:
            return [Gate(f"{task} test set has at least two independent units", False, f"{c.units} ({self.units[task]})")]
        out = [c.gate(x) for x in (conditions if informative is None else informative)]
        for weights in dict.fromkeys(w for x in conditions if (w := trained_weights(x))):
            name, models = self.names[weights], {s: seeded(weights, s) for s in c.seeds}
            if models and all(m in self.sanity.intervals for m in models.values()):
                out.append(every_seed({s: self.sanity.gate(m, name) for s, m in models.items()}))
            if not models:
                out.append(Gate(f"{name} was trained and probed", False, "no seed of it was probed"))
                continue
            for check in (self.sanity.converged_gate, self.sanity.improved_gate):
                out.append(every_seed({s: check(m, name) for s, m in models.items()}))
        return out + [self.damage(task)] if damage else out

    def seeds(self, task: str, conditions: tuple[str, ...]) -> Gate:
        """The seeds gate (:func:`prismlib.prism.seeds_gate`) of the trained conditions among ``conditions``."""
        c = self.compare[task]
        return seeds_gate({x: c.counts.get(x, 0) for x in conditions if trained_weights(x)})

    def with_seeds(self, task: str, test: Test, a: str, b: str) -> Test:
        """``test`` (of ``a - b`` on ``task``, on the unit bootstrap of the seed-mean predictions)
        on the one interval that adds the spread of the per-seed differences (points, paired by
        seed: :func:`prismlib.prism.seeds_test`). ``test`` unchanged when neither condition reads
        a trained model, or when fewer than two seeds have both (the seeds gate then fails the
        claim)."""
        if not (trained_weights(a) or trained_weights(b)):
            return test
        return seeds_test(test, list(self.compare[task].seed_values(a, b).values()))

    def interval(self, task: str, a: str, b: str) -> Interval:
        """``a - b`` on ``task`` in points with the interval its tests use (:meth:`with_seeds`)."""
        return self.with_seeds(task, Test(self.compare[task].diff(a, b)), a, b).interval

    def verdict(self, task: str, test: Test, a: str, b: str) -> str:
        """The verdict of ``test`` on its one interval with the seeds (:meth:`with_seeds`), without gates."""
        return Claim("03", "", "", (self.with_seeds(task, test, a, b),)).verdict

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


Fig5Key = tuple[str, str]
"""A number of Fig. 5: ``(model, quantity)``, e.g. ``("prism - baseline", "dip")`` (:func:`prismlib.prism.fig5_summary`)."""


def claim_at_every_width(
    notebook: str,
    text: str,
    paper: str,
    make: Callable[[Interval, int], Test],
    key: Fig5Key,
    by_width: Mapping[int, tuple[Mapping[Fig5Key, Interval], Mapping[Fig5Key, Sequence[float]], Mapping[Fig5Key, Interval]]],
    gates: Sequence[Gate],
    *,
    unit: str = "nats",
    missing: str = "a trained model",
) -> Claim:
    """A Fig. 5 dip claim that must hold at every near-window width (notebook 04; the rule of
    :data:`prismlib.prism.DIP_WIDTHS`, fixed before the run): one test per width, all needed,
    each on the interval over articles and training seeds, each with its stability gate.

    Args:
        notebook, text, paper, unit: the :class:`~prismlib.claims.Claim`'s.
        make: (the seed means' interval over articles, the width) -> the width's
            :class:`~prismlib.claims.Test` (its label names the width).
        key: the number of Fig. 5 the claim reads.
        by_width: width -> ``(pooled, per_seed, earlier)``: :func:`~prismlib.prism.fig5_summary`
            of the seed means, each number's per-seed effects
            (:func:`~prismlib.prism.seed_effects`) and the summary of the models at the earlier
            checkpoint (empty when there is none: the stability gate then fails).
        gates: the claim's gates before the stability gates (its models' sanity, near or
            span gates, the seeds gate).
        missing: what has no earlier checkpoint, named in a failed stability gate.

    Returns:
        The claim: tests in ``by_width``'s order (each width's test widened by the seeds'
        spread: :func:`~prismlib.prism.seeds_test`), gates ``gates`` then the widths'
        :func:`stable_since_decay`.
    """
    tests, stable = [], []
    for w, (pooled, per_seed, early) in by_width.items():
        t = seeds_test(make(pooled[key], w), per_seed[key])
        tests.append(t)
        stable.append(stable_since_decay(t, early[key].effect if early else None, t.label, missing))
    return Claim(notebook, text, paper, tuple(tests), (*gates, *stable), unit)
