"""The claims of Table 1 and App. B as tests, with their gates wired in (notebook 03).

A section-4 claim compares two probes on the same test rows: the accuracy difference in
points of the seed-mean predictions with its paired-bootstrap interval over the test units
(:meth:`prismlib.prism.SeedComparison.diff`) and, beside it, the same test on Student's t
interval over the training seeds (:meth:`~prismlib.prism.Section4Gates.seed_tests`: ``held``
needs both), tested as the paper states it, and gated by :class:`~prismlib.prism.Section4Gates`
(majority class, MLM sanity, converged, improved, no damage, seeds, effect stability).
:func:`section4_claims` builds every claim of notebook 03 in its order: Table 1 (topic and
dialog acts "beat", POS "roughly keeps"), the two control claims beyond the paper, B.1 (a
sector against the full model), B.2 (non-inferiority of continued training) and B.3 (a prism
after every layer against one after the last, with a margin never above the paper's own
effect). The paper's numbers come from :mod:`prismlib.data.published`;
:data:`TABLE1_PAPER` and :data:`APPENDIX_B_PAPER` are the views of them that notebook 03's
tables print, and :data:`TASK_NAMES`, :data:`MODEL_NAMES` and :data:`UNIT_NAMES` the names its
tables, figures and gates use.
"""

from __future__ import annotations

from prismlib.claims import Claim, Test
from prismlib.data.published import APP_B1, APP_B2, APP_B3, TABLE_1
from prismlib.prism.verdicts import Section4Gates
from prismlib.profiles import PrismSettings

TASK_NAMES = {"topic": "Topic classification", "swda": "Dialog speech acts", "pos": "Part of speech"}
"""Each task's title in notebook 03's tables, figures and claims."""

MODEL_NAMES = {
    "original": "BERT before continued training", "prism_untrained": "BERT + Prism, untrained",
    "baseline": "BERT", "baseline_prism_untrained": "BERT, then an untrained Prism added",
    "prism": "BERT + Prism", "prism-every": "prism after every (trained) layer",
}  # fmt: skip
"""Each arm's name in the tables and in the gates' texts."""

UNIT_NAMES = {"topic": "posts", "swda": "conversations", "pos": "WSJ files or windows"}
"""What each task's independent test units are."""

TABLE1_PAPER: dict[tuple[str, str], float] = TABLE_1 | {(task, "original"): acc for task, acc in APP_B2.items()}
"""(task, arm) -> the paper's accuracy (%): Table 1's BERT and BERT + Prism, App. B.2's
original encoder (the paper has no untrained prism)."""

APPENDIX_B_PAPER: dict[tuple[str, str, str], float | None] = (
    {("B.1", f"prism {sector} sector", task): acc for (sector, task), acc in APP_B1.items()}
    | {("B.2", "original", task): acc for task, acc in APP_B2.items()}
    | {("B.3", "prism-every", task): acc for task, acc in APP_B3.items()}
)
"""(section, condition, task) -> App. B's accuracy (%) (``None``: not reported), in the
order of the notebook's App. B table."""


def published_b2(task: str) -> tuple[float, float]:
    """App. B.2's comparison on ``task``: (original BERT, continued-trained BERT), the latter
    Table 1's BERT at one decimal."""
    return APP_B2[task], round(TABLE_1[(task, "baseline")], 1)


def published_b3(task: str) -> tuple[float, float]:
    """App. B.3's comparison on ``task``: (prism after every layer, after the last), the latter
    Table 1's BERT + Prism at one decimal."""
    return APP_B3[task], round(TABLE_1[(task, "prism")], 1)


def b3_margin(task: str, min_effect: float) -> float:
    """B.3's margin on ``task``: ``min_effect``, but never more than the paper's own effect
    (after the last minus after every layer, at one decimal; POS: 0.4 points)."""
    every, last = published_b3(task)
    return min(min_effect, round(last - every, 1))


def probing_claim(
    gates: Section4Gates, task: str, text: str, paper: str, test: Test, a: str, b: str, damage: bool = True, control: str = ""
) -> Claim:
    """A claim of notebook 03 on ``task`` whose test compares conditions ``a`` and ``b``: the
    test and its seed-level twin (:meth:`Section4Gates.seed_tests`), with every gate:
    :meth:`Section4Gates.gates` of both (``damage``: with the no-damage gate), the seeds gate
    and :meth:`Section4Gates.stable` of the test."""
    checks = (*gates.gates(task, (a, b), damage), gates.seeds(task, (a, b)), gates.stable(task, test, a, b))
    return Claim("03", text, paper, (test, *gates.seed_tests(task, test, a, b)), checks, "points", control=control)


def section4_claims(gates: Section4Gates, settings: PrismSettings, min_effect: float, no_harm: float) -> list[Claim]:
    """Every claim of notebook 03, in its order: Table 1, the controls, B.1, B.2 and (when
    ``settings.every_layer`` trained the ``prism-every`` arm) B.3.

    Args:
        gates: the run's gates; its ``compare`` holds, per task (``topic``, ``swda``, ``pos``,
            in the order of B.2's and B.3's rows), every condition's probes: the arms, the
            ``"<arm> <BAND> sector"`` conditions of B.1, the earlier checkpoint's.
        settings: the profile's prism settings (the recipe and its trained layers name
            where B.3's prism sits).
        min_effect: accuracy points a "beats" claim needs (the interval above it).
        no_harm: B.2's non-inferiority margin in points (baseline at most this below the original).
    """
    compare = gates.compare
    acc = {name: {x: comparison.accuracy(x).effect for x in comparison.runs.correct} for name, comparison in compare.items()}

    def claim(name: str, text: str, paper: str, test: Test, a: str, b: str, damage: bool = True, control: str = "") -> Claim:
        return probing_claim(gates, name, text, paper, test, a, b, damage, control)

    claims = []
    for name, label in (("topic", "topic"), ("swda", "dialog acts")):
        prism, base = TABLE_1[(name, "prism")], TABLE_1[(name, "baseline")]
        paper = f"Table 1: {label} {prism} (BERT + Prism) vs {base} (BERT), {prism - base:+.1f} points; 3 trials"
        own = gates.verdict(
            name, Test.superiority(compare[name].diff("baseline_prism_untrained", "baseline"), min_effect),
            "baseline_prism_untrained", "baseline",
        )  # fmt: skip
        claims.append(claim(
            name, f"BERT + Prism beats BERT on {TASK_NAMES[name].lower()} by at least {min_effect:g} point "
            f"(ours {acc[name]['prism']:.1f}% vs {acc[name]['baseline']:.1f}%)", paper,
            Test.superiority(compare[name].diff("prism", "baseline"), min_effect, label="prism - baseline"), "prism", "baseline",
            control=f"the filter alone on the same BERT: {own} ({acc[name]['baseline_prism_untrained']:.1f}% with an untrained "
            f"prism added vs {acc[name]['baseline']:.1f}%); see the two control rows",
        ))  # fmt: skip
    prism, base = TABLE_1[("pos", "prism")], TABLE_1[("pos", "baseline")]
    claims.append(claim(
        "pos", f"BERT + Prism roughly keeps POS: at most 3 points below BERT "
        f"(ours {acc['pos']['prism']:.1f}% vs {acc['pos']['baseline']:.1f}%)",
        f"Table 1: POS {prism} (BERT + Prism) vs {base} (BERT), {prism - base:+.1f} points ('maintaining high accuracy')",
        Test(compare["pos"].diff("prism", "baseline"), +1, -3, "prism - baseline"), "prism", "baseline",
    ))  # fmt: skip
    for name in ("topic", "swda"):
        for other, what in (("baseline_prism_untrained", "the continued-trained BERT with an untrained prism added afterwards"),
                            ("prism_untrained", "the untrained prism on the encoder before continued training")):  # fmt: skip
            claims.append(claim(
                name, f"control: training with the prism beats {what} on {TASK_NAMES[name].lower()} by at least {min_effect:g} "
                f"point (ours {acc[name]['prism']:.1f}% vs {acc[name][other]:.1f}%)",
                "not in the paper: " + ("isolates training *with* the prism (same continued training, same filter)"
                                        if other.startswith("baseline") else "a second control: filter plus continued training together"),
                Test.superiority(compare[name].diff("prism", other), min_effect, label=f"prism - {other}"), "prism", other,
            ))  # fmt: skip
    for name, label, band, rest in (("topic", "topic", "LOW", "HIGH"), ("pos", "POS", "HIGH", "LOW")):
        full = round(TABLE_1[(name, "prism")], 1)
        paper = f"App. B.1: {label}, {band} sector {APP_B1[(band, name)]} of the full model's {full} ({rest} sector {APP_B1[(rest, name)]})"
        sector, untrained = f"prism {band} sector", f"prism_untrained {band} sector"
        claims.append(claim(
            name, f"B.1: BERT + Prism's {band} sector carries most but not all of its {TASK_NAMES[name].lower()} accuracy: "
            f"the sector alone is at least {min_effect:g} point below the full model (ours {acc[name][sector]:.1f}% vs "
            f"{acc[name]['prism']:.1f}%; it keeps {gates.share(name, sector, 'prism'):.0%} of the gain over the majority class)",
            paper, Test.superiority(compare[name].diff("prism", sector), min_effect, label=f"full - {band} sector"), "prism", sector,
            control=f"untrained prism: its {band} sector keeps {gates.share(name, untrained, 'prism_untrained'):.0%} "
            f"({acc[name][untrained]:.1f}% of {acc[name]['prism_untrained']:.1f}%)",
        ))  # fmt: skip
    for name in compare:
        orig, base = published_b2(name)
        claims.append(claim(
            name, f"B.2: continued training does not harm the encoder on {TASK_NAMES[name].lower()}: the continued-trained "
            f"BERT at most {no_harm:g} points below the encoder before it "
            f"(ours {acc[name]['baseline']:.1f}% vs {acc[name]['original']:.1f}%)",
            f"App. B.2: original BERT {orig} vs continued-trained BERT {base} ('does not harm BERT')",
            Test(compare[name].diff("baseline", "original"), +1, -no_harm, "baseline - original"), "baseline", "original", damage=False,
        ))  # fmt: skip
    if settings.every_layer:
        where = "every layer" if settings.recipe != "staged" else f"each of the top {settings.train_layers} trained layers"
        for name in compare:
            every, last = published_b3(name)
            margin = b3_margin(name, min_effect)
            power = "" if margin == min_effect else f" (the paper's own effect is {last - every:.1f} points: the margin is that effect)"
            claims.append(claim(
                name, f"B.3: a prism layer after {where} is worse than one after the last on {TASK_NAMES[name].lower()}, "
                f"by at least {margin:g} point{power} (ours {acc[name]['prism-every']:.1f}% vs {acc[name]['prism']:.1f}%)",
                f"App. B.3: {TASK_NAMES[name].lower()}, prism after every layer {every} vs after the last {last} ({every - last:+.1f})",
                Test.superiority(compare[name].diff("prism-every", "prism"), margin, -1, "every - last"), "prism-every", "prism",
            ))  # fmt: skip
    return claims
