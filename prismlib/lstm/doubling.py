"""The doubling check: whether one fixed learning-rate path is long enough for a claim.

Every model of a paired comparison trains on the same fixed path (``fixed_path``: the rate
stays at ``lr`` for ``min_rounds`` rounds, then a few divisions and a stop), so "stopped by
its rule" says nothing about convergence: every run stops where the path ends. Whether
the path is long enough is measured instead. The baseline and the slowest learners
(:data:`~prismlib.lstm.grid.DOUBLING`, first :data:`~prismlib.lstm.grid.DOUBLING_SEEDS`
seeds) train a second time on the path doubled
(:meth:`~prismlib.profiles.LSTMRecipe.doubled`), and a claim is trusted where doubling
moves the contrast of each slow learner against the baseline by at most half the claim's
margin, in the claim's own unit (a perplexity, a log ratio, a gap between frequency bins:
``statistic``), or by less than half its interval's width (the claim could not tell the
two apart). The contrast of the slowest learners bounds that of any pair of models that
learn faster; the gate therefore speaks for every claim of notebooks 05-07.

:class:`DoublingCheck` holds the test NLL of those runs; :func:`doubling_check` reads them
for a profile (training what is missing, as :func:`~prismlib.lstm.trained` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from prismlib.claims import Gate, Test, stability_margin
from prismlib.jobcache import run_missing
from prismlib.lstm.chunks import NLL
from prismlib.lstm.evaluation import perplexity
from prismlib.lstm.grid import DOUBLING, claim_twin_specs, doubling_specs
from prismlib.lstm.job import Job, RunSpec, load_run
from prismlib.profiles import Profile

Statistic = Callable[[NLL], float]
"""One run's test NLL -> the number whose contrast a claim tests (e.g. its perplexity)."""


@dataclass(frozen=True)
class DoublingCheck:
    """The runs of the doubling check: each model of :data:`~prismlib.lstm.grid.DOUBLING` per
    seed, on the profile's path and on the doubled one.

    Attributes:
        regular, doubled: spec -> its test NLL (a run's ``test_chunks``) on each path; a spec
            missing from either has not been trained on it.
        specs: every spec the check needs (each on both paths).
        rounds: the rounds at the start rate of the two paths, e.g. ``(140, 280)``.
        reference: the variant the slow learners are contrasted with (``"baseline"``).
    """

    regular: Mapping[RunSpec, NLL]
    doubled: Mapping[RunSpec, NLL]
    specs: tuple[RunSpec, ...]
    rounds: tuple[int, int]
    reference: str = "baseline"

    @property
    def missing(self) -> list[str]:
        """Labels of the runs the check still needs, e.g. ``"layer2 X=70 (fixed) seed 1, doubled path"``."""
        return [
            f"{s.label} seed {s.seed}" + (", doubled path" if doubled else "")
            for doubled, have in ((False, self.regular), (True, self.doubled))
            for s in self.specs
            if s not in have
        ]

    def _slow(self) -> list[RunSpec]:
        return [s for s in self.specs if s.variant != self.reference]

    def _base(self, seed: int) -> RunSpec:
        found = [s for s in self.specs if s.variant == self.reference and s.seed == seed]
        if not found:
            raise ValueError(f"the doubling check has no {self.reference} run of seed {seed}")
        return found[0]

    def moved(self, statistic: Statistic = perplexity) -> dict[str, list[float]]:
        """Per slow learner (its label), per seed: how far doubling the path moved its contrast
        with the reference, ``[stat(slow) - stat(ref)]`` on the doubled path minus the same on
        the regular path (in ``statistic``'s unit). Only seeds with all four runs count.

        Raises:
            ValueError: a slow learner has no seed with all four runs (see :attr:`missing`).
        """
        out: dict[str, list[float]] = {}
        for slow in self._slow():
            base = self._base(slow.seed)
            runs = (self.regular, self.doubled)
            if not all(s in r for s in (slow, base) for r in runs):
                continue
            regular, doubled = ((statistic(r[slow]) - statistic(r[base])) for r in runs)
            out.setdefault(slow.label, []).append(doubled - regular)
        lacking = sorted({s.label for s in self._slow()} - set(out))
        if lacking:
            raise ValueError(f"no seed of {', '.join(lacking)} has both paths with its {self.reference}: missing {', '.join(self.missing)}")
        return out

    @property
    def name(self) -> str:
        return f"stable: doubling the path ({self.rounds[0]} -> {self.rounds[1]} rounds) moves every contrast <= half its margin"

    def gate(self, tests: Sequence[Test], statistic: Statistic = perplexity) -> Gate:
        """The convergence gate of a claim whose chunk-bootstrap ``tests`` contrast ``statistic``:
        passed when, for every test, the largest seed-mean shift of a slow learner's contrast
        (:meth:`moved`) is at most half the test's margin
        (:func:`~prismlib.claims.stability_margin`) or half its interval's width. Fails while a
        run of the check is missing (the detail names them).

        The shift is a point estimate on purpose: a gate passed unless the shift's interval
        excluded the allowance would pass the more easily the noisier the check; more seeds
        (:data:`~prismlib.lstm.grid.DOUBLING_SEEDS`) are the remedy for a noisy shift."""
        if self.missing:
            return Gate(
                self.name,
                False,
                f"not converged: cannot be checked yet: {len(self.missing)} of {2 * len(self.specs)} runs of the doubling check "
                f"are not trained ({', '.join(self.missing[:3])}{', ...' if len(self.missing) > 3 else ''}); "
                "`python -m prismlib train --profile cpu-long --minutes 140` trains them",
            )
        shifts = {label: float(np.mean(v)) for label, v in self.moved(statistic).items()}
        worst = max(shifts, key=lambda k: abs(shifts[k]))
        shift = shifts[worst]
        if not tests:
            return Gate(self.name, True, f"no contrast; largest shift {worst}: {shift:+.3g}")
        allowed = [(t, max(stability_margin(t), t.interval.high - t.interval.low) / 2) for t in tests]
        failed = [(t, a) for t, a in allowed if abs(shift) > a]
        t, a = min(failed or allowed, key=lambda ta: ta[1])  # the test that allows least
        detail = (
            f"{worst}'s contrast with the {self.reference} moved {shift:+.3g} (seed mean; the largest shift) "
            f"against {a:.3g} allowed for {t.label} (half its margin {stability_margin(t):.3g} or half its interval's width)"
        )
        if failed:
            return Gate(self.name, False, f"not converged: {detail}; {len(failed)} of {len(tests)} tests moved more")
        return Gate(self.name, True, detail)

    def table(self, statistic: Statistic = perplexity, unit: str = "ppl") -> pd.DataFrame:
        """One row per model and seed of the check: ``statistic`` on each path and the change,
        and for slow learners the shift of their contrast with the reference (``unit`` names it)."""
        rows = []
        for s in self.specs:
            r, d = self.regular.get(s), self.doubled.get(s)
            a = statistic(r) if r is not None else math.nan
            b = statistic(d) if d is not None else math.nan
            row: dict[str, Any] = {"model": s.label, "seed": s.seed, f"{unit} ({self.rounds[0]})": a}
            row[f"{unit} ({self.rounds[1]})"] = b
            row["change"] = b - a
            if s.variant != self.reference and all(x is not None for x in (r, d)):
                base = self._base(s.seed)
                if base in self.regular and base in self.doubled:
                    row["contrast shift"] = (b - statistic(self.doubled[base])) - (a - statistic(self.regular[base]))
            rows.append(row)
        return pd.DataFrame(rows)


def doubling_jobs(profile: Profile, claims: bool = True) -> tuple[list[Job], list[Job]]:
    """The jobs of ``profile``'s doubling check: each model on the profile's path and its twin
    on the doubled one (``([], [])`` where the recipe has no fixed path); without ``claims``
    only the slow learners' (:data:`~prismlib.lstm.grid.DOUBLING`), not the claims' own
    models (:func:`~prismlib.lstm.grid.claim_twin_specs`, which only installments train)."""
    own = set(claim_twin_specs(profile)) if not claims else set()
    specs = [s for s in doubling_specs(profile) if s not in own]
    if not specs:
        return [], []
    doubled = replace(profile.lstm, recipe=profile.lstm.recipe.doubled())
    return [Job(s, profile.lstm, profile.job_profile) for s in specs], [Job(s, doubled, profile.job_profile, twin=True) for s in specs]


def doubling_check(profile: Profile, executor: str | None = None, train: bool = True, corpus: Any = None) -> DoublingCheck | None:
    """The doubling check of ``profile`` (``None`` where its recipe has no fixed path): the
    runs read from local checkpoints or committed records, the missing ones trained first on
    ``executor`` unless ``train`` is false (then they stay missing, and the gate says so)."""
    regular, doubled = doubling_jobs(profile, claims=False)
    if not regular:
        return None
    if train:
        run_missing(regular + doubled, executor, device=profile.device, data=corpus)
    nll: list[dict[RunSpec, NLL]] = [{}, {}]
    for path, jobs in enumerate((regular, doubled)):
        for job in jobs:
            try:
                nll[path][job.spec] = load_run(job, device=profile.device, corpus=corpus).test_chunks
            except FileNotFoundError:
                continue
    rounds = (regular[0].settings.min_rounds, doubled[0].settings.min_rounds)
    return DoublingCheck(nll[0], nll[1], tuple(j.spec for j in regular), rounds, DOUBLING[0][0])
