"""Which LSTM language models work B's notebooks train: the slides' experiment grid.

Each experiment is a list of :class:`~prismlib.lstm.RunSpec`; notebooks ask
:func:`prismlib.lstm.trained` for them, ``python -m prismlib train`` trains
:func:`all_specs` up front. The ``paper`` and ``cpu`` profiles (``lstm.grid = "slides"``)
train every model the slides tabulate; the ``smoke`` profile a subset that exercises each
claim. Seeds: with ``lstm.all_seeds`` (``cpu-long``) every model trains every seed of the
profile, paired (seed k of every model shares its data order and dropout masks);
otherwise the baseline and Pareto do, MOD5 and MOD8 too on the slides grid when the
profile has several seeds (the slides give them as 6-seed means), the others the first.

========== ===================================================================================
baseline   the AWD-LSTM baseline
exp1       chrono *initialised*: layer-wise, gradient, inverse (notebook 05)
exp2       *fixed* layer-wise and gradient (notebook 06)
exp3       *fixed* middle-longest and last-longest (inverse) (notebook 06)
exp4       layer 2 fixed at X, MOD5, MOD8, Pareto, the published variant (07)
official   the official code's assignment (ICLR 2021), for comparison with ``published``
memory     the models of the cell-state ablation (notebook 08): a subset of the above (where
           records are kept, the seeds whose records keep weights: `WEIGHT_SEEDS`)
========== ==================================================================================="""

from __future__ import annotations

from dataclasses import replace

from prismlib.lstm.job import RunSpec
from prismlib.lstm.outcome import WEIGHT_MODELS, WEIGHT_SEEDS
from prismlib.profiles import Profile

EXPERIMENTS = ("baseline", "exp1", "exp2", "exp3", "exp4", "official", "memory")
NOTEBOOK_EXPERIMENTS: dict[str, tuple[str, ...]] = {
    "05": ("baseline", "exp1"),
    "06": ("baseline", "exp2", "exp3"),
    "07": ("baseline", "exp4", "official"),
    "08": ("baseline", "memory"),
}
"""The experiments whose models each work-B notebook reads (``make reproduce ONLY=05`` trains those only)."""
DOUBLING_NOTEBOOKS = ("05", "06", "07")
"""The notebooks whose claims read the doubling check (:mod:`prismlib.lstm.claims.doubling`): training
for them trains its doubled-path twins too, where the profile's recipe has a fixed path."""

# (variant, T) per experiment; T is X for "layer2", None for variants without one.
_SLIDES: dict[str, tuple[tuple[str, float | None], ...]] = {
    "exp1": tuple((v, T) for v in ("layerwise", "gradient") for T in (20.0, 70.0, 200.0)) + (("inverse", 70.0),),
    "exp2": tuple((v, T) for v in ("layerwise", "gradient") for T in (20.0, 70.0, 200.0)),
    "exp3": tuple((v, T) for v in ("middle", "inverse") for T in (20.0, 70.0)),
    "exp4": tuple(("layer2", X) for X in (5.0, 10.0, 20.0, 30.0, 70.0)) + (("mod5", None), ("mod8", None)),
}
_CPU: dict[str, tuple[tuple[str, float | None], ...]] = {
    "exp1": (("layerwise", 20.0), ("layerwise", 70.0), ("gradient", 70.0), ("inverse", 70.0)),
    "exp2": _SLIDES["exp2"],
    "exp3": _SLIDES["exp3"],
    "exp4": _SLIDES["exp4"],
}


def experiment(name: str, profile: Profile) -> list[RunSpec]:
    """The models of experiment ``name`` (a key of :data:`EXPERIMENTS`) on ``profile``."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}")
    seeds = profile.lstm.seeds
    every = profile.lstm.all_seeds
    first = seeds if every else seeds[:1]
    table = _SLIDES if profile.lstm.grid == "slides" else _CPU
    if name == "baseline":
        return [RunSpec("baseline", seed=s) for s in seeds]
    if name == "exp1":
        return [RunSpec(v, T, fixed=False, seed=s) for v, T in table["exp1"] for s in first]
    if name in ("exp2", "exp3"):
        return [RunSpec(v, T, fixed=True, seed=s) for v, T in table[name] for s in first]
    if name == "exp4":  # the slides give MOD5 and MOD8 as 6-seed means: the slides grid trains every seed
        seeded = ("mod5", "mod8") if profile.lstm.grid == "slides" else ()
        specs = [RunSpec(v, T, fixed=True, seed=s) for v, T in table["exp4"] for s in (seeds if v in seeded else first)]
        # the published variant is compared with the official one only, as a description: one seed
        return specs + [RunSpec("pareto", fixed=True, seed=s) for s in seeds] + [RunSpec("published", fixed=True, seed=seeds[0])]
    if name == "official":
        return [RunSpec("official", fixed=True, seed=s) for s in first]
    # memory: the baseline, layer 1 / middle / last layer longest, the Pareto layer 2
    memory = [RunSpec("baseline"), *(RunSpec(v, 70.0, fixed=True) for v in ("layerwise", "middle", "inverse"))]
    memory.append(RunSpec("pareto", fixed=True))
    if profile.lstm.records:  # the ablation reads weights: a committed record keeps them for WEIGHT_SEEDS only
        first = tuple(s for s in first if s in WEIGHT_SEEDS)
    return [replace(m, seed=s) for m in memory for s in first]


def all_specs(profile: Profile) -> list[RunSpec]:
    """Every model of every experiment on ``profile``, each once."""
    return list(dict.fromkeys(s for name in EXPERIMENTS for s in experiment(name, profile)))


DOUBLING: tuple[tuple[str, float | None, bool], ...] = (("baseline", None, False), ("layerwise", 200.0, True), ("layer2", 70.0, True))
"""``(variant, T, fixed)`` of the models trained on the doubled path too (the baseline and the
slowest learners): the convergence gate compares each contrast between the two lengths."""
CLAIM_TWINS: tuple[tuple[str, float | None, bool], ...] = (
    ("official", None, True),
    ("pareto", None, True),
    ("mod5", None, True),
    ("mod8", None, True),
    *((v, T, True) for T in (20.0, 70.0) for v in ("layerwise", "middle", "inverse")),
)
"""``(variant, T, fixed)`` of the models whose claims the slow learners' bound could not clear
(issue 47, after the doubling check's third seed): notebook 07's multi-timescale (official),
Pareto, MOD5 and MOD8 rows against the baseline, and notebook 06's layer placement (first-,
middle- and last-layer-longest at T = 20 and T = 70). On the slides grid with a fixed path they
train on the doubled path too, claim by claim (every seed of one model before the next, in
this order), after the rest of the grid: a test between two models that both have their
doubled twins on every seed of the check is then gated by its own shift
(:meth:`~prismlib.lstm.claims.doubling.DoublingCheck.gate`), with the same allowance. Only
``python -m prismlib train`` trains them (an installment each, about 80 worker-minutes a
twin); a notebook reads the ones committed and never trains them."""

DOUBLING_SEEDS = 3
"""The doubling check's models train this many seeds (the first ones) on the doubled path.
Three since issue 47's grid: with two, the shift of fixed layer-wise T = 200's contrast
(+0.01 and -1.78 ppl) was as noisy as it was large; the gate's rule (the seed mean of the
shift, :meth:`~prismlib.lstm.claims.doubling.DoublingCheck.gate`) was kept as stated before the runs."""


def doubling_specs(profile: Profile) -> list[RunSpec]:
    """The models of the doubling check on ``profile`` (:data:`DOUBLING`, first seeds), then
    on the slides grid the claims' own models (:func:`claim_twin_specs`); their jobs use
    :meth:`~prismlib.profiles.LSTMRecipe.doubled`. None where the recipe has no fixed path."""
    if not profile.lstm.fixed_path:
        return []
    return [RunSpec(v, T, fixed=f, seed=s) for s in profile.lstm.seeds[:DOUBLING_SEEDS] for v, T, f in DOUBLING] + claim_twin_specs(profile)


def claim_twin_specs(profile: Profile) -> list[RunSpec]:
    """The models of :data:`CLAIM_TWINS` on ``profile``, model by model (first
    :data:`DOUBLING_SEEDS` seeds each): on the slides grid with a fixed path, else none."""
    if not profile.lstm.fixed_path or profile.lstm.grid != "slides":
        return []
    return [RunSpec(v, T, fixed=f, seed=s) for v, T, f in CLAIM_TWINS for s in profile.lstm.seeds[:DOUBLING_SEEDS]]


def in_priority(specs: list[RunSpec]) -> list[RunSpec]:
    """``specs`` in the order installments train them: every model's first seed, then the
    second seed of every model, then the third; within a seed the doubling check's models
    (:data:`DOUBLING`) first (the check that says whether the path is long enough comes
    before the models it speaks for), then the models whose weights an analysis reads again
    (:data:`~prismlib.lstm.outcome.WEIGHT_MODELS`: notebook 10 needs only their first seed,
    so it can be answered long before the grid is), then the grid's order."""
    return sorted(specs, key=lambda s: (s.seed, (s.variant, s.T, s.fixed) not in DOUBLING, (s.variant, s.T, s.fixed) not in WEIGHT_MODELS))
