"""The doubling check: whether one fixed learning-rate path is long enough for a claim.

Every model of a paired comparison trains on the same fixed path (``fixed_path``: the rate
stays at ``lr`` for ``min_rounds`` rounds, then a few divisions and a stop), so "stopped by
its rule" says nothing about convergence: every run stops where the path ends. Whether
the path is long enough is measured instead. The baseline and the slowest learners
(:data:`~prismlib.lstm.claims.grid.DOUBLING`, first :data:`~prismlib.lstm.claims.grid.DOUBLING_SEEDS`
seeds) train a second time on the path doubled
(:meth:`~prismlib.profiles.LSTMRecipe.doubled`), and a claim is trusted where doubling
moves the contrast of each slow learner against the baseline by at most half the claim's
margin, in the claim's own unit (a perplexity, a log ratio, a gap between frequency bins:
``statistic``), or by less than half its interval's width (the claim could not tell the
two apart). The contrast of the slowest learners bounds that of any pair of models that
learn faster; the gate therefore speaks for every claim of notebooks 05-07.

Where that bound is too loose for a claim (issue 47: fixed layer-wise T = 200's contrast moved
-1.13 ppl, more than five rows of 06-07 allow), the claim's own models train on the doubled
path too (:data:`~prismlib.lstm.claims.grid.CLAIM_TWINS`, by installments): a test whose models all
have both paths on every seed of the check is gated by its *own* shift, the test's effect
computed on the doubled runs minus the same on the regular ones, with the same allowance
(rule stated before any of those twins trained). And, as every gate, it covers what decides
the verdict: where a test says ``not held`` (a counterexample), the claim is ``not held``
whatever the others say, so one such test that doubling does not move past its allowance
passes the gate (added after the third seed, once seen that the bound failed 07's "every
layer-2 value beats the baseline" only through X = 5, whose test decides nothing there).

:class:`DoublingCheck` holds the test NLL of those runs; :func:`doubling_check` reads them
for a profile (training what is missing, as :func:`~prismlib.lstm.trained` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from prismlib.claims import Gate, Test, stability_margin
from prismlib.jobcache import run_missing
from prismlib.lstm.chunks import NLL
from prismlib.lstm.claims.grid import DOUBLING, claim_twin_specs, doubling_specs
from prismlib.lstm.evaluation import SeedMeans, grouped_means, perplexity
from prismlib.lstm.job import Job, RunSpec
from prismlib.lstm.trained_runs import load_run
from prismlib.profiles import Profile

Statistic = Callable[[NLL], float]
"""One run's test NLL -> the number whose contrast a claim tests (e.g. its perplexity)."""


@dataclass(frozen=True)
class DoublingCheck:
    """The runs of the doubling check: each model of :data:`~prismlib.lstm.claims.grid.DOUBLING` per
    seed, on the profile's path and on the doubled one.

    Attributes:
        regular, doubled: spec -> its test NLL (a run's ``test_chunks``) on each path; a spec
            missing from either has not been trained on it.
        specs: every spec the check needs (each on both paths).
        rounds: the rounds at the start rate of the two paths, e.g. ``(140, 280)``.
        reference: the variant the slow learners are contrasted with (``"baseline"``).
        own: the claims' own models with doubled twins (:data:`~prismlib.lstm.claims.grid.CLAIM_TWINS`);
            their runs in ``regular`` and ``doubled`` where trained, never required.
    """

    regular: Mapping[RunSpec, NLL]
    doubled: Mapping[RunSpec, NLL]
    specs: tuple[RunSpec, ...]
    rounds: tuple[int, int]
    reference: str = "baseline"
    own: tuple[RunSpec, ...] = ()

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

    def both_paths(
        self, specs: Sequence[RunSpec], key: Callable[[RunSpec], Hashable], reference: Hashable
    ) -> tuple[SeedMeans, SeedMeans] | None:
        """``(doubled, regular)``: :class:`~prismlib.lstm.SeedMeans` of the runs ``specs`` (every
        seed of each model a claim reads, grouped by ``key``; ``reference``'s among them) on the
        seeds of the check, on each path, where each of those models has both paths on every
        one of those seeds (its own twins, or the slow learners' and the baseline's); else ``None``."""
        seeds = sorted({s.seed for s in self.specs})
        runs = [s for s in specs if s.seed in seeds]
        models = {key(s) for s in specs}
        if not seeds or any(s not in self.regular or s not in self.doubled for s in runs):
            return None
        if {(key(s), s.seed) for s in runs} != {(m, seed) for m in models for seed in seeds}:
            return None
        doubled, regular = (grouped_means({s: path[s] for s in runs}, key, reference) for path in (self.doubled, self.regular))
        return doubled, regular

    @property
    def name(self) -> str:
        return f"stable: doubling the path ({self.rounds[0]} -> {self.rounds[1]} rounds) moves every contrast <= half its margin"

    def gate(self, tests: Sequence[Test], statistic: Statistic = perplexity, own: Sequence[float] | None = None) -> Gate:
        """The convergence gate of a claim whose chunk-bootstrap ``tests`` contrast ``statistic``:
        passed when, for every test, its shift is at most its allowance: half the test's
        margin (:func:`~prismlib.claims.stability_margin`) or half its interval's width. The
        shift is the test's own where ``own`` gives it (``own[i]``: the effect of ``tests[i]``
        computed on the doubled runs minus the same on the regular ones, :meth:`both_paths`), else the largest
        seed-mean shift of a slow learner's contrast (:meth:`moved`), a bound. Where some
        tests say ``not held``, only they decide the verdict, and one of them within its
        allowance passes the gate. Fails while a run of the slow learners is missing (the
        detail names them).

        The shift is a point estimate on purpose: a gate passed unless the shift's interval
        excluded the allowance would pass the more easily the noisier the check; more seeds
        (:data:`~prismlib.lstm.claims.grid.DOUBLING_SEEDS`) are the remedy for a noisy shift."""
        if self.missing:
            return Gate(
                self.name,
                False,
                f"not converged: cannot be checked yet: {len(self.missing)} of {2 * len(self.specs)} runs of the doubling check "
                f"are not trained ({', '.join(self.missing[:3])}{', ...' if len(self.missing) > 3 else ''}); "
                "`python -m prismlib train --profile cpu-long --minutes 110` trains them",
            )
        shifts = {label: float(np.mean(v)) for label, v in self.moved(statistic).items()}
        worst = max(shifts, key=lambda k: abs(shifts[k]))
        if not tests:
            return Gate(self.name, True, f"no contrast; largest shift {worst}: {shifts[worst]:+.3g}")
        if own is not None and len(own) != len(tests):
            raise ValueError(f"own gives {len(own)} shifts for {len(tests)} tests")
        moved = list(own) if own is not None else [shifts[worst]] * len(tests)
        rows = [(t, m, max(stability_margin(t), t.interval.high - t.interval.low) / 2) for t, m in zip(tests, moved)]
        against = [r for r in rows if r[0].verdict == "not held"]
        if against:  # a counterexample decides: one that stays passes
            rows = against
        failed = [r for r in rows if abs(r[1]) > r[2]]
        if against:
            passed = len(failed) < len(rows)
            t, m, a = max([r for r in rows if r not in failed] if passed else rows, key=lambda r: r[2] - abs(r[1]))  # most room
        else:
            passed = not failed
            t, m, a = min(failed or rows, key=lambda r: r[2])  # the test that allows least
        whose = (
            f"{t.label} moved {m:+.3g} on its own models' doubled twins ({len({s.seed for s in self.specs})} seeds)"
            if own is not None
            else f"{worst}'s contrast with the {self.reference} moved {m:+.3g} (seed mean; the largest shift)"
        )
        detail = f"{whose} against {a:.3g} allowed for {t.label} (half its margin {stability_margin(t):.3g} or half its interval's width)"
        if against:
            detail += f"; {len(against)} of {len(tests)} tests say not held and decide the verdict"
        if not passed:
            return Gate(self.name, False, f"not converged: {detail}; {len(failed)} of {len(rows)} tests moved more")
        return Gate(self.name, True, detail)

    def table(self, statistic: Statistic = perplexity, unit: str = "ppl") -> pd.DataFrame:
        """One row per model and seed of the check (then of the claims' own models with a
        doubled twin): ``statistic`` on each path and the change, and for the models other
        than the reference the shift of their contrast with it (``unit`` names it)."""
        rows = []
        for s in (*self.specs, *(s for s in self.own if s in self.doubled)):
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
    only the slow learners' (:data:`~prismlib.lstm.claims.grid.DOUBLING`), not the claims' own
    models (:func:`~prismlib.lstm.claims.grid.claim_twin_specs`, which only installments train)."""
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
    regular, doubled = doubling_jobs(profile)
    if not regular:
        return None
    own = claim_twin_specs(profile)
    if train:  # the slow learners only: the claims' own twins train in installments
        run_missing([j for j in regular + doubled if j.spec not in own], executor, device=profile.device, data=corpus)
    nll: list[dict[RunSpec, NLL]] = [{}, {}]
    for path, jobs in enumerate((regular, doubled)):
        for job in jobs:
            try:
                nll[path][job.spec] = load_run(job, device=profile.device, corpus=corpus).test_chunks
            except FileNotFoundError:
                continue
    rounds = (regular[0].settings.min_rounds, doubled[0].settings.min_rounds)
    slow = tuple(j.spec for j in regular if j.spec not in own)
    return DoublingCheck(nll[0], nll[1], slow, rounds, DOUBLING[0][0], tuple(own))
