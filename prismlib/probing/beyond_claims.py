"""The claims of notebook 09 about one task's filters, with their gates and controls wired in.

Every claim compares conditions of one task's probes on the same test rows: the accuracy
difference in points with its paired-bootstrap interval over the test units
(:meth:`prismlib.probing.ProbeComparison.diff`), tested as "A beats B by at least
``min_effect`` points" (:meth:`prismlib.claims.Test.superiority`), the rivals chosen on
validation (:func:`prismlib.probing.best_on_validation`), gated on the unfiltered probe (or,
for the learned gate, its all-pass control) beating the majority class; the condition a
claim would credit must beat it too (its win gate).

:func:`matched_band_claim`
    the best smooth (or Haar) band matched at -3 dB beats the best brick-wall band; a smooth
    band must also beat its *energy twin*, the brick-wall band that passes what it passes
    (:mod:`prismlib.spectral.equal_energy`), reported in the control column.
:func:`pipeline_check`
    the all-pass control matches the unfiltered probe within a margin: a check of the control
    (the learned gate's training pipeline, with the filter removed, against the fixed
    filters'), not a claim of the paper.  It gates the rows that compare the learned gate
    with a condition trained the fixed filters' way (:func:`learned_gate_claims`).
:func:`learned_gate_claims`
    the learned gate beats the fixed filters (the better on validation of its all-pass
    control and the best brick-wall band), and, where that is a different comparison,
    filtering helps the probe (the learned gate beats its all-pass control): no verdict is
    given twice.
:func:`task_claims`
    the rows of one task in the notebook's order.
:func:`section_claims`
    every row of the notebook: the learned profiles' order of the tasks
    (:func:`prismlib.probing.profile_order_claim`), then each task's rows;
    :func:`section_claims_from_runs` the same from the probes' runs as trained (the notebook
    builds its rows twice: at the probes' epoch cap and with the cap doubled).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prismlib.claims import Claim, Gate, Test
from prismlib.probing.features import CONDITIONS, Features
from prismlib.probing.learned_filter import ALL_PASS, GATED, GatedRuns
from prismlib.probing.matched_features import ENERGY_TWIN_CONDITIONS, MATCHED_HAAR_CONDITIONS, MATCHED_SMOOTH_CONDITIONS
from prismlib.probing.probes import ProbeComparison, ProbeRuns, best_on_validation
from prismlib.probing.spectral_profiles import PROFILE_ORDER, profile_order_claim
from prismlib.spectral.bands import allocate_bands
from prismlib.spectral.equal_energy import energy_twins
from prismlib.spectral.matching import matched_bands
from prismlib.stats import Interval

__all__ = [
    "PipelineCheck",
    "learned_gate_claims",
    "matched_band_claim",
    "optimisation_gate",
    "pipeline_check",
    "section_claims",
    "section_claims_from_runs",
    "task_claims",
]

_BANDS = CONDITIONS[1:]
_FAMILY_PAPER = {
    "smooth": "future work in the paper: smooth filters",
    "Haar": "future work in the paper: other decompositions (wavelets)",
}
"""What the paper says of each matched family (its conclusion names them as open)."""


def _prefix(cmp: ProbeComparison) -> str:
    return f"{cmp.task}: " if cmp.task else ""


def _twin_note(twin: str, smooth: str, window: int) -> str:
    """The twin's DCT indices and energies at ``window`` tokens, e.g. ``"DCT 132-511 at N = 512
    (380 indices; the smooth band passes 380.2, the brick-wall band 382)"``."""
    index = MATCHED_SMOOTH_CONDITIONS.index(smooth)
    band, brick = energy_twins(window)[index], allocate_bands(window)[index]
    energy = float((matched_bands(window, "smooth")[index].gain() ** 2).sum())
    return (
        f"DCT {band.lo}-{band.last} at N = {window} ({band.width} indices; the smooth band passes {energy:.1f} indices' worth, "
        f"the brick-wall band {brick.lo}-{brick.last} {brick.width})"
    )


def matched_band_claim(
    cmp: ProbeComparison,
    *,
    family: str,
    title: str,
    min_effect: float,
    twin: str | None = None,
    window: int = 512,
) -> Claim:
    """The claim "the best ``family`` band matched at -3 dB beats the best brick-wall band"
    (``family``: ``"smooth"`` or ``"Haar"``), both chosen on validation.

    With ``twin`` (smooth only: the condition that probed the energy twin of the best smooth
    band, :func:`prismlib.probing.energy_twin_condition`) the smooth band must also beat its
    twin by ``min_effect``: two tests, the weaker reported; the control column gives the twin's
    comparison (and says when the twin is the brick-wall band itself, one test then).  Gated on
    the task's ORIG probe; the matched band must beat the majority class to be credited.

    Args:
        cmp: the task's probes (every brick-wall and matched band, ``twin`` and ``ORIG``).
        title: the task's name at the head of the claim (``"Part of speech (word)"``).
        min_effect: points a "beats" needs (the interval beyond it).
        window: the window length whose DCT indices the control column quotes.
    """
    if family not in _FAMILY_PAPER:
        raise ValueError(f"family must be one of {tuple(_FAMILY_PAPER)}, got {family!r}")
    if twin is not None and family != "smooth":
        raise ValueError("only a smooth band has an energy twin")
    conditions = MATCHED_SMOOTH_CONDITIONS if family == "smooth" else MATCHED_HAAR_CONDITIONS
    best, brick = best_on_validation(cmp.runs, conditions), best_on_validation(cmp.runs, _BANDS)
    acc = {c: cmp.accuracy(c).effect for c in {best, brick, *([twin] if twin else [])}}
    tests = [Test.superiority(cmp.diff(best, brick), min_effect, label=f"{best} - {brick}")]
    text = (
        f"{title}: the best {family} band matched at -3 dB ({best} {acc[best]:.1f}) beats the best brick-wall band "
        f"({brick} {acc[brick]:.1f})"
    )
    control = ""
    if twin is not None:
        index = MATCHED_SMOOTH_CONDITIONS.index(best)
        own = _BANDS[index]
        if twin not in (ENERGY_TWIN_CONDITIONS[index], own):
            raise ValueError(f"{twin!r} is not the energy twin of {best!r} (expected {ENERGY_TWIN_CONDITIONS[index]!r} or {own!r})")
        if twin != brick:
            tests.append(Test.superiority(cmp.diff(best, twin), min_effect, label=f"{best} - {twin}"))
            text += f" and its energy-matched brick-wall twin ({twin} {acc[twin]:.1f})"
        same = f"the brick-wall band {own} itself at every window length" if twin == own else _twin_note(twin, best, window)
        control = f"energy twin of {best}: {same}; {best} - {twin} {cmp.diff(best, twin)} points"
    text += f" by at least {min_effect:g} point (chosen on validation)"
    return Claim("09", text, _FAMILY_PAPER[family], tuple(tests), (cmp.gate(),), "points", (cmp.gate(best),), control=control)


@dataclass(frozen=True)
class PipelineCheck:
    """Whether the learned gate's training pipeline alone moves the probe: the all-pass control
    (that pipeline with the gate fixed at 1) against the unfiltered probe trained the fixed
    filters' way (:func:`pipeline_check`).

    Attributes:
        test: the equivalence test ``|all-pass - ORIG| < margin``.
        gate: passed when the test is ``held`` (the whole interval inside the margin).
    """

    test: Test
    gate: Gate

    @property
    def interval(self) -> Interval:
        return self.test.interval

    def role_in(self, claim: Claim) -> str:
        """How this check enters ``claim``, for the table of checks: ``"<its first test's
        label> (gate)"`` when it decides every verdict of the claim, ``"... (win gate)"`` when
        it can only take ``held`` away, ``""`` when the claim does not carry it."""
        role = "gate" if self.gate in claim.gates else "win gate" if self.gate in claim.win_gates else ""
        return f"{claim.tests[0].label} ({role})" if role else ""


def pipeline_check(cmp: ProbeComparison, margin: float) -> PipelineCheck:
    """The check of the all-pass control: it matches ORIG within ``margin`` points, an
    equivalence test over the test units, passed only when ``held`` (``inside noise`` does not
    establish it). The gate names the measured difference and whether it lies inside the margin."""
    test = Test.equivalence(cmp.diff(ALL_PASS, "ORIG"), margin, label="all-pass - ORIG")
    passed = test.verdict == "held"
    where = {"held": "inside", "not held": "outside", "inside noise": "not inside"}[test.verdict]
    gate = Gate(
        f"{_prefix(cmp)}the all-pass control matches ORIG within {margin:g} point (the learned gate's training pipeline alone "
        "does not move the probe)",
        passed,
        f"all-pass - ORIG {test.interval} points, {where} ±{margin:g}",
    )
    return PipelineCheck(test, gate)


def learned_gate_claims(cmp: ProbeComparison, check: PipelineCheck, *, title: str, runs: int, min_effect: float) -> list[Claim]:
    """The learned gate's rows of one task, no verdict given twice.

    The first row: the learned gate beats the fixed filters, i.e. the better on validation of
    its all-pass control and the best brick-wall band (chosen on validation), by at least
    ``min_effect``; the control column gives the comparison with the other one.  ``check``
    (:func:`pipeline_check`) decides where the row compares conditions trained two ways: with
    the brick-wall band as the rival every verdict does (a gate); with the all-pass control as
    the rival the test compares conditions trained alike and only a ``held`` verdict leans on
    the ranking of the all-pass control over the brick-wall band across the two pipelines (a
    win gate). Both rows are gated on the learned gate not scoring clearly below the best
    brick-wall band, which it can represent (:func:`optimisation_gate`), except where the row
    holds: a failed optimiser can lose a comparison, not win one.

    The second row, "filtering helps the probe" (the learned gate beats its all-pass control,
    trained alike, so the check does not decide it), only where it is a different comparison
    from the first row's (the brick-wall band was the rival) or where the check took the first
    row's verdict away; otherwise the first row is that test and says so.
    """
    brick = best_on_validation(cmp.runs, _BANDS)
    rival = best_on_validation(cmp.runs, (ALL_PASS, brick))
    other = brick if rival == ALL_PASS else ALL_PASS
    acc = {c: cmp.accuracy(c).effect for c in (GATED, ALL_PASS, brick)}
    majority = (cmp.gate(ALL_PASS),)
    credited = (cmp.gate(GATED),)
    failure = optimisation_gate(cmp, brick)

    def optimised(test: Test) -> tuple[Gate, ...]:
        # a failed optimiser can lose a comparison but not win one: the gate takes away every verdict but held
        return () if test.verdict == "held" else (failure,)

    same = rival == ALL_PASS
    test_first = Test.superiority(cmp.diff(GATED, rival), min_effect, label=f"learned - {rival}")
    test_filter = Test.superiority(cmp.diff(GATED, ALL_PASS), min_effect, label="learned - all-pass")
    paper = "learned filters (Spectral Probing, EMNLP 2022) over fixed bands"
    if same:
        paper += "; with the all-pass control the rival, also the test of 'filtering helps the probe' (beyond the paper)"
    first = Claim(
        "09",
        f"{title}: the learned gate ({acc[GATED]:.1f}) beats the fixed filters: the better on validation ({rival}) of its all-pass "
        f"control ({acc[ALL_PASS]:.1f}) and the best brick-wall band ({brick} {acc[brick]:.1f}), by at least {min_effect:g} point",
        paper,
        (test_first,),
        (*majority, *optimised(test_first)) if same else (*majority, check.gate, *optimised(test_first)),
        "points",
        (*credited, check.gate) if same else credited,
        control=(
            f"against the other, {other}: learned - {other} {cmp.diff(GATED, other)} points"
            + (" (trained the fixed filters' way)" if same else " (trained alike: the filter alone, next row)")
            + f"; the all-pass control's check: all-pass - ORIG {check.interval} points"
        ),
    )
    claims = [first]
    if not same or check.gate in first.deciding_gates:
        claims.append(
            Claim(
                "09",
                f"{title}: filtering helps the probe: the learned gate ({acc[GATED]:.1f}) beats its all-pass control "
                f"({acc[ALL_PASS]:.1f}; the same resamples, batches, learning rate and {runs} runs, the gate fixed at 1) "
                f"by at least {min_effect:g} point",
                "beyond the paper: filtering can help a probe",
                (test_filter,),
                (*majority, *optimised(test_filter)),
                "points",
                credited,
                control="the all-pass gate is the learned gate's pipeline with the filter removed, trained alike "
                f"(its check against ORIG does not decide this row: all-pass - ORIG {check.interval} points)",
            )
        )
    return claims


def optimisation_gate(cmp: ProbeComparison, band: str) -> Gate:
    """Gate: the learned gate is not clearly below the brick-wall ``band``, a filter it can
    represent (the gate set to 1 on the band's DCT indices, 0 elsewhere): an interval of
    ``learned - band`` entirely below 0 is an optimisation failure, and a comparison of the
    learned gate with the fixed filters then measures the optimiser, not the filter."""
    iv = cmp.diff(GATED, band)
    return Gate(
        f"{_prefix(cmp)}the learned gate is not clearly below {band}, a band it can represent (else: an optimisation failure)",
        not iv.high < 0,
        f"learned - {band} {iv} points",
    )


def task_claims(
    cmp: ProbeComparison, *, title: str, twin: str, window: int, gate_runs: int, min_effect: float
) -> tuple[list[Claim], PipelineCheck]:
    """One task's rows in notebook 09's order: the best matched smooth band (against the best
    brick-wall band and its energy twin ``twin``), the best matched Haar band, the learned gate
    (:func:`learned_gate_claims`); and the all-pass control's check (:func:`pipeline_check`,
    margin ``min_effect``), which is a gate of those rows, not a row."""
    check = pipeline_check(cmp, min_effect)
    claims = [
        matched_band_claim(cmp, family="smooth", title=title, min_effect=min_effect, twin=twin, window=window),
        matched_band_claim(cmp, family="Haar", title=title, min_effect=min_effect),
        *learned_gate_claims(cmp, check, title=title, runs=gate_runs, min_effect=min_effect),
    ]
    return claims, check


def section_claims(
    compare: Mapping[str, ProbeComparison],
    band_means: Mapping[str, pd.DataFrame],
    twins: Mapping[str, str],
    *,
    titles: Mapping[str, str],
    window: int,
    gate_runs: int,
    min_effect: float,
    spread_margin: float,
) -> tuple[list[Claim], dict[str, list[Claim]], dict[str, PipelineCheck]]:
    """Every row of notebook 09: the learned profiles' order of the tasks
    (:func:`~prismlib.probing.profile_order_claim`, gated on each ordered task's learned gate
    beating the majority class), then each task's :func:`task_claims`.

    Args:
        compare: task -> its probes on its test rows (every condition, the learned gate
            and its all-pass control), with ``task`` set.
        band_means: task -> its learned gates' band means (``GatedRuns.band_means``).
        twins: task -> the energy twin's condition of its best smooth band.
        titles: task -> its title in the rows.
        window, gate_runs, min_effect: see :func:`task_claims`.
        spread_margin: the band spread a task's learned gate must clearly exceed.

    Returns:
        ``(claims, rows, checks)``: every row in order, each task's rows, each task's
        all-pass check.
    """
    order = profile_order_claim(band_means, [compare[n].gate(GATED) for n in PROFILE_ORDER], runs=gate_runs, margin=spread_margin)
    claims, rows, checks = [order], {}, {}
    for name, cmp in compare.items():
        rows[name], checks[name] = task_claims(
            cmp, title=titles[name], twin=twins[name], window=window, gate_runs=gate_runs, min_effect=min_effect
        )
        claims += rows[name]
    return claims, rows, checks


def section_claims_from_runs(
    runs: Mapping[str, ProbeRuns],
    gated: Mapping[str, GatedRuns],
    twins: Mapping[str, str],
    test: Mapping[str, Features],
    groups: Mapping[str, np.ndarray],
    *,
    seed: int,
    titles: Mapping[str, str],
    window: int,
    gate_runs: int,
    min_effect: float,
    spread_margin: float,
) -> tuple[list[Claim], dict[str, list[Claim]], dict[str, PipelineCheck]]:
    """:func:`section_claims` from each task's probe runs as trained: every task's runs set
    against its test rows (a :class:`~prismlib.probing.ProbeComparison` named by the task),
    its learned gates read for their band means.

    Args:
        runs: task -> every probe run of the task (the fixed filters, the energy twin, the
            learned gate and its all-pass control: ``combine_runs``), in the rows' task order.
        gated: task -> the learned gate's runs (:class:`~prismlib.probing.GatedRuns`).
        twins: task -> the energy twin's condition of its best smooth band.
        test: task -> the test :class:`~prismlib.probing.Features` the runs were scored on.
        groups: task -> ``(n_test,)`` the independent unit of each test row (``TaskData.row_groups``).
        seed: of every bootstrap.
        titles, window, gate_runs, min_effect, spread_margin: see :func:`section_claims`.

    Returns:
        :func:`section_claims`'s ``(claims, rows, checks)``.
    """
    compare = {n: ProbeComparison(r, test[n], groups[n], seed=seed, task=n) for n, r in runs.items()}
    return section_claims(
        compare,
        {n: gated[n].band_means for n in runs},
        twins,
        titles=titles,
        window=window,
        gate_runs=gate_runs,
        min_effect=min_effect,
        spread_margin=spread_margin,
    )
