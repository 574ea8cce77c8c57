"""The claims of section 3 (Figure 4 and the abstract) as tests, with their gates wired in
(notebook 02).

A section-3 claim compares two conditions of one task's probes on the same test rows: the
accuracy difference in points with its paired-bootstrap interval over the test units
(:meth:`prismlib.probing.ProbeComparison.diff`), tested as the paper states it and gated on
the task's ORIG probe beating the majority class (:meth:`~prismlib.probing.ProbeComparison.gate`);
the condition a claim would credit must beat it too (its win gate). :func:`best_band_claim` is
the claim "this band is the best band for the task"; :func:`section3_claims` builds every claim
of notebook 02 in its order: topic (LOW best, LOW beats ORIG, LOW beats the DC-only control),
part of speech (HIGH best, HIGH below ORIG), dialog acts (MID best, MID comparable to ORIG,
the DC-only control), each MLM frequency bucket (HIGH best, local like POS) and the abstract's
"each band does well on its own task" (the tests of :mod:`prismlib.probing.specialisation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from prismlib.claims import Claim, Gate, Test
from prismlib.probing.features import CONDITIONS, DC
from prismlib.probing.probes import ProbeComparison, ranking
from prismlib.probing.specialisation import OWN_TASKS

DC_TASKS = ("swda", "topic")
"""The tasks probed with the ``DC`` condition (DCT index 0 alone: the window mean) beside
LOW, and whose claims test LOW against it (a control of ours)."""

TASK_PHRASES = {"pos": "part of speech", "swda": "dialog acts", "topic": "topic"}
"""Each task's name in the claims' texts (an MLM bucket's: :func:`task_phrase`)."""

DC_READING = {
    "held": "LOW beats it: more than the window mean",
    "not held": "the window mean alone matches or beats LOW",
    "inside noise": "LOW and the window mean cannot be told apart",
    "not testable": "not testable",
}
"""The DC-only claim's verdict as the control column of "LOW beats ORIG for topic" reads it."""


def task_phrase(task: str) -> str:
    """``task``'s name in a claim: :data:`TASK_PHRASES`, or ``"masked LM, target ranks 1-500"``
    for the MLM bucket ``"mlm 1-500"``."""
    return TASK_PHRASES.get(task) or f"masked LM, target ranks {task.split(' ', 1)[1]}"


def best_band_claim(
    cmp: ProbeComparison,
    summary: pd.DataFrame,
    band: str,
    bands: Sequence[str],
    *,
    task: str,
    paper: str,
    min_effect: float,
    gate: Gate,
) -> Claim:
    """The claim "``band`` is the best band for ``task``": ``band`` beats the best of the other
    ``bands`` (by ``summary``'s accuracy) by at least ``min_effect`` points, paired over the
    test units. Gated on ``gate`` (the task's ORIG probe) and on some band beating the
    majority class; ``band`` must beat it to be credited."""
    order = ranking(summary, bands)
    rival = next(b for b in order if b != band)
    acc = {c: cmp.accuracy(c).effect for c in (band, rival)}
    text = (
        f"{band} is the best band for {task} ({band} {acc[band]:.1f} vs the best other band, {rival} {acc[rival]:.1f}; "
        f"our best: {order[0]})"
    )
    test = Test.superiority(cmp.diff(band, rival), min_effect, label=f"{band} - {rival}")
    return Claim("02", text, paper, (test,), (gate, cmp.any_gate(bands)), "points", (cmp.gate(band),))


def dc_claim(cmp: ProbeComparison, task: str, min_effect: float) -> Claim:
    """The claim "LOW's advantage survives the DC-only control" on ``task`` (one of
    :data:`DC_TASKS`): LOW beats the window mean alone (``DC``) by at least ``min_effect``
    points; gated on the task's ORIG probe, LOW must beat the majority class to be credited."""
    acc = {c: cmp.accuracy(c).effect for c in ("LOW", DC, "ORIG")}
    return Claim(
        "02",
        f"LOW's advantage for {task_phrase(task)} survives the DC-only control: LOW beats the window mean alone by at least "
        f"{min_effect:g} point (LOW {acc['LOW']:.1f} vs DC {acc[DC]:.1f}, ORIG {acc['ORIG']:.1f})",
        "(a control of ours) the encoder was trained on its mean-pooled output; the window mean alone is close to it",
        (Test.superiority(cmp.diff("LOW", DC), min_effect, label="LOW - DC"),),
        (cmp.gate(),),
        "points",
        (cmp.gate("LOW"),),
    )


def section3_claims(
    compare: Mapping[str, ProbeComparison],
    summary: pd.DataFrame,
    specialisation: Sequence[Test],
    *,
    min_effect: float,
    margin: float,
) -> list[Claim]:
    """Every claim of notebook 02, in its order: topic, part of speech, dialog acts (each with
    the DC-only control where :data:`DC_TASKS` has one), the MLM buckets, and the abstract's.

    Args:
        compare: task -> its probes' :class:`~prismlib.probing.ProbeComparison` (``task`` set,
            which names the gates): ``pos``, ``swda`` (with ``DC``), ``topic`` (with ``DC``) and
            every MLM frequency bucket (``"mlm 1-500"``, ...), whose claims follow in this
            mapping's order.
        summary: the probes' table, one row per task and condition (columns ``task``,
            ``condition``, ``accuracy``; :func:`~prismlib.probing.probe_task`'s rows): it
            ranks the bands of a "best band" claim.
        specialisation: :func:`~prismlib.probing.specialisation_tests` of ``pos``, ``swda``
            and ``topic``; the claim quotes their margin (a share of each task's
            majority-to-ORIG gap).
        min_effect: accuracy points a "beats" claim needs (the interval beyond it).
        margin: accuracy points within which "comparable" holds (an equivalence test).
    """
    bands = CONDITIONS[1:]
    buckets = [k for k in compare if k.startswith("mlm ")]
    tasks = ("pos", "swda", "topic", *buckets)
    acc = {name: {c: compare[name].accuracy(c).effect for c in ("ORIG", "LOW", "MID", "HIGH")} for name in tasks}
    gates = {name: compare[name].gate() for name in tasks}
    dc = {name: dc_claim(compare[name], name, min_effect) for name in DC_TASKS}

    def best_band(task: str, band: str, paper: str) -> Claim:
        rows = summary[summary["task"] == task]
        return best_band_claim(
            compare[task], rows, band, bands, task=task_phrase(task), min_effect=min_effect, gate=gates[task], paper=paper
        )

    dc_acc = compare["topic"].accuracy(DC).effect
    claims = [
        best_band("topic", "LOW", "topic classification performs best with information from the LOW band"),
        Claim(
            "02",
            f"LOW beats ORIG for topic by at least {min_effect:g} point (LOW {acc['topic']['LOW']:.1f} vs ORIG {acc['topic']['ORIG']:.1f})",
            "the accuracy for the LOW band is substantially higher than for the original representations",
            (Test.superiority(compare["topic"].diff("LOW", "ORIG"), min_effect, label="LOW - ORIG"),),
            (gates["topic"],),
            "points",
            (compare["topic"].gate("LOW"),),
            control=f"DC-only {dc_acc:.1f}: {DC_READING[dc['topic'].verdict]} (row below)",
        ),
        dc["topic"],
        best_band("pos", "HIGH", "the highest probing accuracy for part of speech tagging occurs when extracting the HIGH band"),
        Claim(
            "02",
            f"HIGH stays below ORIG for POS by at least {min_effect:g} point "
            f"(HIGH {acc['pos']['HIGH']:.1f} vs ORIG {acc['pos']['ORIG']:.1f})",
            "the highest frequency spectral band still performs worse than the original representations",
            (Test.superiority(compare["pos"].diff("HIGH", "ORIG"), min_effect, -1, "HIGH - ORIG"),),
            (gates["pos"],),
            "points",
        ),
        best_band("swda", "MID", "dialog speech acts ... most successful at the MID band"),
        Claim(
            "02",
            f"MID is comparable to ORIG for dialog acts, within ±{margin:g} points "
            f"(MID {acc['swda']['MID']:.1f} vs ORIG {acc['swda']['ORIG']:.1f})",
            "... with performance comparable to that of the original representations",
            (Test.equivalence(compare["swda"].diff("MID", "ORIG"), margin, "MID - ORIG"),),
            (gates["swda"],),
            "points",
            (compare["swda"].gate("MID"),),
        ),
        dc["swda"],
    ]
    for k in buckets:
        ranks = k.split(" ", 1)[1]
        claims += [
            best_band(
                k, "HIGH", "the probing results for masked language modeling are most similar to part of speech tagging (POS: HIGH best)"
            ),
            Claim(
                "02",
                f"MLM is local like POS for targets of rank {ranks}: HIGH beats LOW, and stays below ORIG, each by at least "
                f"{min_effect:g} point (HIGH {acc[k]['HIGH']:.1f}, LOW {acc[k]['LOW']:.1f}, ORIG {acc[k]['ORIG']:.1f})",
                "MLM is a local task, its probing results most similar to part of speech tagging (POS: HIGH best, below ORIG)",
                (
                    Test.superiority(compare[k].diff("HIGH", "LOW"), min_effect, label="HIGH - LOW"),
                    Test.superiority(compare[k].diff("HIGH", "ORIG"), min_effect, -1, "HIGH - ORIG"),
                ),
                (gates[k],),
                "points",
                (compare[k].gate("HIGH"),),
            ),
        ]
    own = tuple(dict.fromkeys(OWN_TASKS.values()))
    share = specialisation[0].threshold
    claims.append(
        Claim(
            "02",
            f"Each band does well on its own task and poorly on the others: on each task's scale (0 majority, 1 ORIG), HIGH, MID "
            f"and LOW score at least {share:g} higher on part of speech, dialog acts and topic respectively than on "
            "either other task (the weakest of six comparisons reported)",
            "filtered embeddings that perform well on part of speech tagging (word-level), dialog speech acts classification "
            "(utterance-level), or topic classification (document-level), while performing poorly on the other tasks (abstract)",
            tuple(specialisation),
            tuple(gates[name] for name in own),
            "x (ORIG - majority)",
            tuple(compare[task].gate(band) for band, task in OWN_TASKS.items()),
        )
    )
    return claims
