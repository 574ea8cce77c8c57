"""The experiment grid (prismlib.lstm.claims.grid): which models each profile trains, that every one can
be built, and the order they train in."""

from __future__ import annotations

from dataclasses import replace

import pytest

from prismlib import lstm
from prismlib.lstm.claims import grid
from prismlib.lstm.claims.grid import in_priority
from prismlib.profiles import get_profile


@pytest.mark.parametrize("name", ["smoke", "cpu", "paper"])
def test_every_model_of_the_grid_builds_at_its_profile_sizes(name):
    P = get_profile(name)
    specs = grid.all_specs(P)
    assert len(specs) == len(set(specs))
    for spec in specs:
        model = lstm.build_model(spec, 10_000 if name != "paper" else 100, P.lstm if name != "paper" else _small(P))
        assert model.sizes[0] > 0


def _small(P):  # the paper's grid at toy sizes (its 1150-unit models are slow to build in a test)

    return P.lstm.updated(emb=8, hidden=12)


def test_the_cpu_grid_is_every_row_of_the_slides_once_and_cpu_long_adds_paired_seeds():
    cpu = get_profile("cpu")
    P = replace(cpu, lstm=cpu.lstm.updated(seeds=(0,), all_seeds=False))  # the slides' grid with one seed
    labels = lambda e: [s.label for s in grid.experiment(e, P)]  # noqa: E731
    assert labels("exp1") == [f"{v} T={T}" for v in ("layerwise", "gradient") for T in (20, 70, 200)] + ["inverse T=70"]
    assert len(labels("exp2")) == 6 and len(labels("exp3")) == 4
    assert [s.label for s in grid.experiment("exp4", P) if s.variant == "layer2"] == [
        f"layer2 X={x} (fixed)"
        for x in (5, 10, 20, 30, 70)  # every X of the slides (issue 21)
    ]
    specs = grid.all_specs(P)
    assert len(specs) == 28 and {s.seed for s in specs} == set(P.lstm.seeds) == {0}  # 7 + 6 + 4 + 9 + official + baseline
    memory = set(grid.experiment("memory", P))  # the ablation reads models the experiments train anyway
    assert memory <= set(s for e in ("baseline", "exp2", "exp3", "exp4") for s in grid.experiment(e, P))
    with pytest.raises(ValueError, match="unknown experiment"):
        grid.experiment("exp9", P)

    long = get_profile("cpu-long")
    seeded = grid.all_specs(long)
    assert long.lstm.all_seeds and long.lstm.seeds == (0, 1, 2)
    assert grid.all_specs(cpu) == seeded  # cpu itself has every seed since the grid was trained (issue 47)
    assert len(seeded) == 3 * len(specs) - 2  # every model, every seed, but published (one seed: a description)
    assert {replace(s, seed=0) for s in seeded} == set(specs)
    assert {s.seed for s in seeded if s.variant == "published"} == {0}
    for e in grid.EXPERIMENTS:  # memory: the seeds whose records keep weights (below)
        assert {s.seed for s in grid.experiment(e, long)} == ({0, 1} if e == "memory" else {0, 1, 2}), e
    # the first seed's models are cpu's own: cpu-long trains only the seeds it adds
    cpu_keys = {j.key for j in lstm.jobs_for(specs, P.lstm, P.job_profile)}
    long_keys = {j.key for j in lstm.jobs_for(seeded, long.lstm, long.job_profile)}
    assert cpu_keys < long_keys and len(long_keys - cpu_keys) == 2 * len(specs) - 2


def test_without_all_seeds_only_the_seeded_models_train_every_seed():
    P = get_profile("smoke")
    assert not P.lstm.all_seeds and len(P.lstm.seeds) == 2
    seeds = {s.variant: {x.seed for x in grid.all_specs(P) if x.variant == s.variant} for s in grid.all_specs(P)}
    assert seeds["baseline"] == seeds["pareto"] == {0, 1}
    assert all(v == {0} for k, v in seeds.items() if k not in ("baseline", "pareto")), seeds


def test_the_doubling_check_trains_the_baseline_and_the_slowest_learners_on_a_path_twice_as_long():
    cpu, long = get_profile("cpu"), get_profile("cpu-long")
    slow = len(grid.DOUBLING) * grid.DOUBLING_SEEDS
    assert [(s.variant, s.T, s.fixed) for s in grid.doubling_specs(cpu)[:slow] if s.seed == 0] == list(grid.DOUBLING)
    assert {s.seed for s in grid.doubling_specs(long)} == {0, 1, 2} and len(grid.doubling_specs(long)) == 9 + 30
    assert grid.doubling_specs(long)[slow:] == grid.claim_twin_specs(long)  # the slow learners first, then the claims' models
    first = [(s.variant, s.seed) for s in grid.claim_twin_specs(long)[:4]]
    assert first == [("official", 0), ("official", 1), ("official", 2), ("pareto", 0)]
    one_seed = replace(cpu, lstm=cpu.lstm.updated(seeds=(0,), all_seeds=False))
    models = (*grid.DOUBLING, *grid.CLAIM_TWINS)
    assert [(s.variant, s.T, s.fixed, s.seed) for s in grid.doubling_specs(one_seed)] == [(*m, 0) for m in models]
    assert grid.claim_twin_specs(replace(cpu, lstm=cpu.lstm.updated(grid="cpu"))) == []  # the slides grid's claims only
    assert grid.doubling_specs(get_profile("smoke")) == []  # no fixed path, no doubled twin
    r, d = cpu.lstm.recipe, cpu.lstm.recipe.doubled()
    assert d.min_rounds == 2 * r.min_rounds and d.epochs - d.min_rounds == r.epochs - r.min_rounds and d.decays == r.decays
    with pytest.raises(ValueError, match="fixed learning-rate path"):
        get_profile("smoke").lstm.recipe.doubled()
    ordered = grid.in_priority(grid.all_specs(long))
    assert [s.seed for s in ordered] == sorted(s.seed for s in ordered)  # each seed of the whole grid before the next
    assert {(s.variant, s.T, s.fixed) for s in ordered[:3]} == set(grid.DOUBLING) and ordered[0].seed == 0


def test_the_memory_models_are_the_seeds_whose_records_keep_weights():
    from prismlib.lstm.outcome import WEIGHT_SEEDS

    long = get_profile("cpu-long")
    assert len(long.lstm.seeds) > len(WEIGHT_SEEDS)  # else the test shows nothing
    assert sorted({s.seed for s in grid.experiment("memory", long)}) == list(WEIGHT_SEEDS)
    without = replace(long, lstm=long.lstm.updated(records=False))  # local checkpoints keep every model's weights
    assert sorted({s.seed for s in grid.experiment("memory", without)}) == list(long.lstm.seeds)


def test_every_first_seed_comes_before_any_second_one():
    specs = [lstm.RunSpec("mod5", fixed=True, seed=1), lstm.RunSpec("pareto", fixed=True, seed=0), lstm.RunSpec("mod5", fixed=True, seed=0)]
    assert [(s.variant, s.seed) for s in in_priority(specs)] == [("pareto", 0), ("mod5", 0), ("mod5", 1)]  # seeds, then the grid's order
    specs.append(lstm.RunSpec("baseline", seed=0))  # a model of the doubling check comes first in its seed
    assert [(s.variant, s.seed) for s in in_priority(specs)][:2] == [("baseline", 0), ("pareto", 0)]
    specs.append(lstm.RunSpec("official", fixed=True, seed=0))  # a model whose weights an analysis reads: before mod5
    assert [(s.variant, s.seed) for s in in_priority(specs)][:4] == [("baseline", 0), ("pareto", 0), ("official", 0), ("mod5", 0)]
