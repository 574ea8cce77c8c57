"""The claims of section 3 (Figure 4 and the abstract) as tests, with their gates wired in
(notebook 02).

A section-3 claim compares two conditions of one task's probes on the same test rows: the
accuracy difference in points with its paired-bootstrap interval over the test units
(:meth:`prismlib.probing.ProbeComparison.diff`), tested as the paper states it and gated on
the task's ORIG probe beating the majority class (:meth:`~prismlib.probing.ProbeComparison.gate`);
the condition a claim would credit must beat it too (its win gate). :func:`best_band_claim` is
the claim "this band is the best band for the task", its rival (and our best band) chosen on
validation accuracy so that the test set decides only the claim. :func:`section3_claims`
builds notebook 02's claims in its order: topic (LOW best, LOW beats ORIG, LOW against the
DC-only control), part of speech (HIGH best, HIGH below ORIG), dialog acts (MID best, MID
comparable to ORIG, the DC-only control) and the abstract's "each band does well on its own
task and poorly on the others" (the tests of :mod:`prismlib.probing.specialisation`);
:func:`masked_lm_claims` the two rows of each MLM frequency bucket (HIGH best; MLM's band
profile nearest part of speech's).

The MLM rows (:func:`masked_lm_claims`) rest on the paper's premise that masked LM is the
representations' original task; each carries :func:`masked_lm_gate`, so they are ``not
testable`` on an encoder that was not pretrained with masked LM (all-MiniLM-L6-v2). Notebook
02 decides them on the ``paper`` profile's bert-base-cased, and on the ``cpu`` profile on the
small BERT pretrained here (section 4's encoder), its premise measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from prismlib.claims import Claim, Gate, Test
from prismlib.probing.features import CONDITIONS, DC
from prismlib.probing.probes import MAJORITY, ProbeComparison, best_on_validation
from prismlib.probing.specialisation import OWN_TASKS, nearer_profile, profile_distances

DC_TASKS = ("swda", "topic")
"""The tasks probed with the ``DC`` condition (DCT index 0 alone: the window mean) beside
LOW, and whose claims test LOW against it (a control of ours)."""

TASK_PHRASES = {"pos": "part of speech", "swda": "dialog acts", "topic": "topic"}
"""Each task's name in the claims' texts (an MLM bucket's: :func:`task_phrase`)."""

PROFILE_TASKS = ("pos", "swda", "topic")
"""The tasks whose band profiles MLM's is compared with; the paper's nearest is the first."""

PROFILE_GAP = 0.25
"""How much nearer (in score units: a quarter of one task's majority-to-ORIG gap, as a
Euclidean distance over the five bands) MLM's profile must be to part of speech's than to the
nearest other task's for "most similar" to hold: a prior fixed before the run (a sign test
alone would credit any difference, however small)."""

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


def masked_lm_gate(cmp: ProbeComparison, premise: Gate) -> Gate:
    """``premise`` (the gate on the paper's masked-LM premise: :func:`~prismlib.probing.masked_lm_premise`
    of a registered encoder, or :func:`prismlib.pretrain.pretrained_premise` measured on the BERT
    pretrained here) for an MLM bucket's claims, its detail with this run's own numbers: the
    bucket's ORIG masked-LM probe against the majority class (test accuracy, %)."""
    orig, majority = (cmp.accuracy(c).effect for c in ("ORIG", MAJORITY))
    where = f" ({task_phrase(cmp.task)})" if cmp.task else ""
    measured = f"measured: the ORIG masked-LM probe{where} {orig:.1f}% vs the majority class {majority:.1f}%"
    return Gate(premise.name, premise.passed, f"{premise.detail}; {measured}" if premise.detail else measured)


def best_band_claim(
    cmp: ProbeComparison,
    band: str,
    bands: Sequence[str],
    *,
    task: str,
    paper: str,
    min_effect: float,
    gates: Sequence[Gate],
) -> Claim:
    """The claim "``band`` is the best band for ``task``": ``band`` beats the best of the other
    ``bands`` by at least ``min_effect`` points, paired over the test units. The rival, and
    "our best" named beside it, are chosen by validation accuracy
    (:func:`~prismlib.probing.best_on_validation`), so the test set decides only the claim.
    Gated on ``gates`` (the task's ORIG probe, ...) and on some band beating the majority
    class; ``band`` must beat it to be credited."""
    rival = best_on_validation(cmp.runs, [b for b in bands if b != band])
    ours = best_on_validation(cmp.runs, bands)
    acc = {c: cmp.accuracy(c).effect for c in (band, rival)}
    text = (
        f"{band} is the best band for {task} ({band} {acc[band]:.1f} vs {rival} {acc[rival]:.1f}, the best other band on "
        f"validation; our best on validation: {ours})"
    )
    test = Test.superiority(cmp.diff(band, rival), min_effect, label=f"{band} - {rival}")
    return Claim("02", text, paper, (test,), (*gates, cmp.any_gate(bands)), "points", (cmp.gate(band),))


def dc_claim(cmp: ProbeComparison, task: str, min_effect: float) -> Claim:
    """The claim "LOW carries more than the window mean alone" on ``task`` (one of
    :data:`DC_TASKS`): LOW beats ``DC`` (DCT index 0 alone) by at least ``min_effect`` points;
    gated on the task's ORIG probe, LOW must beat the majority class to be credited."""
    acc = {c: cmp.accuracy(c).effect for c in ("LOW", DC, "ORIG")}
    return Claim(
        "02",
        f"LOW carries more than the window mean alone for {task_phrase(task)}: LOW beats DC (DCT index 0 alone) by at least "
        f"{min_effect:g} point (LOW {acc['LOW']:.1f} vs DC {acc[DC]:.1f}, ORIG {acc['ORIG']:.1f})",
        "(a control of ours) does LOW, DCT indices 0-1, carry more than DC, each unit's mean over the window?",
        (Test.superiority(cmp.diff("LOW", DC), min_effect, label="LOW - DC"),),
        (cmp.gate(),),
        "points",
        (cmp.gate("LOW"),),
    )


def profile_claim(compare: Mapping[str, ProbeComparison], bucket: str, gates: Sequence[Gate]) -> Claim:
    """The claim "MLM's probing results are most similar to part of speech's" for the MLM
    ``bucket`` of ``compare``: its band profile (the five bands' scores on the task's scale)
    is nearer part of speech's than dialog acts' and topic's
    (:func:`~prismlib.probing.nearer_profile` above :data:`PROFILE_GAP`), gated on ``gates`` and every
    :data:`PROFILE_TASKS` ORIG probe (a task without a scale has no profile)."""
    bands = CONDITIONS[1:]
    tasks = {t: compare[t] for t in PROFILE_TASKS}
    near, *others = PROFILE_TASKS
    d = profile_distances(compare[bucket], tasks, bands)
    label = f"min({', '.join(f'd(MLM, {t})' for t in others)}) - d(MLM, {near})"
    return Claim(
        "02",
        f"MLM's band profile is nearest {task_phrase(near)}'s for targets of rank {bucket.split(' ', 1)[1]}: on each task's scale, "
        f"its distance to {task_phrase(near)} ({d[near]:.2f}) is below its distances to "
        + " and to ".join(f"{task_phrase(t)} ({d[t]:.2f})" for t in others),
        "The probing results for masked language modeling are most similar to part of speech tagging, underscoring the degree "
        "to which MLM is a local task",
        (Test.superiority(nearer_profile(compare[bucket], tasks, near, bands), PROFILE_GAP, label=label),),
        (*gates, *(compare[t].gate() for t in PROFILE_TASKS)),
        "score distance",
    )


def section3_claims(
    compare: Mapping[str, ProbeComparison],
    specialisation: Sequence[Test],
    *,
    min_effect: float,
    margin: float,
    masked_lm: Sequence[Claim] = (),
) -> list[Claim]:
    """Every claim of notebook 02, in its order: topic, part of speech, dialog acts (each with
    the DC-only control where :data:`DC_TASKS` has one), the MLM rows ``masked_lm`` and the
    abstract's.

    Args:
        compare: task -> its probes' :class:`~prismlib.probing.ProbeComparison` (``task`` set,
            which names the gates): ``pos``, ``swda`` (with ``DC``) and ``topic`` (with ``DC``);
            other keys (MLM buckets) are not read.
        specialisation: :func:`~prismlib.probing.specialisation_tests` of ``pos``, ``swda``
            and ``topic``; the claim quotes their threshold (the midpoint of each task's
            majority-to-ORIG scale).
        min_effect: accuracy points a "beats" claim needs (the interval beyond it).
        margin: accuracy points within which "comparable" holds (an equivalence test).
        masked_lm: the MLM rows, :func:`masked_lm_claims` (of this encoder's probes, or of an
            encoder pretrained with masked LM where this one was not).
    """
    bands = CONDITIONS[1:]
    tasks = ("pos", "swda", "topic")
    acc = {name: {c: compare[name].accuracy(c).effect for c in ("ORIG", "LOW", "MID", "HIGH")} for name in tasks}
    gates = {name: compare[name].gate() for name in tasks}
    dc = {name: dc_claim(compare[name], name, min_effect) for name in DC_TASKS}

    def best_band(task: str, band: str, paper: str) -> Claim:
        return best_band_claim(compare[task], band, bands, task=task_phrase(task), min_effect=min_effect, gates=(gates[task],), paper=paper)

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
        *masked_lm,
    ]
    own = tuple(dict.fromkeys(OWN_TASKS.values()))
    midpoint = specialisation[0].threshold
    claims.append(
        Claim(
            "02",
            f"Each band does well on its own task and poorly on the others: on each task's scale (0 majority class, 1 ORIG), "
            f"{', '.join(OWN_TASKS)} score above {midpoint:g} (the scale's midpoint, a prior) on "
            f"{', '.join(task_phrase(t) for t in OWN_TASKS.values())} respectively, and below {midpoint:g} on each other task "
            f"(the weakest of {len(specialisation)} tests reported)",
            "filtered embeddings that perform well on part of speech tagging (word-level), dialog speech acts classification "
            "(utterance-level), or topic classification (document-level), while performing poorly on the other tasks (abstract)",
            tuple(specialisation),
            tuple(gates[name] for name in own),
            "score (0 majority, 1 ORIG)",
            tuple(compare[task].gate(band) for band, task in OWN_TASKS.items()),
        )
    )
    return claims


def masked_lm_claims(compare: Mapping[str, ProbeComparison], *, min_effect: float, premise: Gate, model: str = "") -> list[Claim]:
    """Notebook 02's MLM rows, two per MLM frequency bucket of ``compare`` (in its order):
    HIGH is the best band (:func:`best_band_claim`), and MLM's band profile is nearest part of
    speech's (:func:`profile_claim`). Both rest on the paper's premise that masked LM is the
    representations' original task and carry ``premise`` with the bucket's own numbers
    (:func:`masked_lm_gate`).

    Args:
        compare: task -> :class:`~prismlib.probing.ProbeComparison` of one encoder: every MLM
            bucket (``"mlm 1-500"``, ...) and :data:`PROFILE_TASKS`, whose profiles the rows
            compare with.
        min_effect: accuracy points the best band needs over the best other band.
        premise: the masked-LM premise of that encoder: ``masked_lm_premise(encoder)`` for a
            registered one, :func:`prismlib.pretrain.pretrained_premise` for the BERT pretrained
            here (section 4's encoder on the ``cpu`` profile).
        model: the encoder the rows were measured on, when it is not the notebook's (e.g.
            ``"BERT 4x256 pretrained here (MLM)"`` beside MiniLM's other rows).
    """
    bands = CONDITIONS[1:]
    claims = []
    for k in (k for k in compare if k.startswith("mlm ")):
        gates = (compare[k].gate(), masked_lm_gate(compare[k], premise))
        paper = "the probing results for masked language modeling are most similar to part of speech tagging (POS: HIGH best)"
        claims += [
            best_band_claim(compare[k], "HIGH", bands, task=task_phrase(k), min_effect=min_effect, gates=gates, paper=paper),
            profile_claim(compare, k, gates),
        ]
    return [replace(c, model=model) for c in claims] if model else claims
