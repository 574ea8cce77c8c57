"""The experiment grid: which models each profile trains, and that every one can be built."""

from __future__ import annotations

import pytest

from prismlib import lstm
from prismlib.lstm import grid
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
    import dataclasses

    return dataclasses.replace(P.lstm, emb=8, hidden=12)


def test_cpu_grid_is_the_issue_grid():
    P = get_profile("cpu")
    labels = lambda e: [s.label for s in grid.experiment(e, P)]  # noqa: E731
    assert labels("exp1") == ["layerwise T=20", "layerwise T=70", "gradient T=70", "inverse T=70"]
    assert len(labels("exp2")) == 6 and len(labels("exp3")) == 4
    assert [s.label for s in grid.experiment("exp4", P) if s.variant == "layer2"] == [
        f"layer2 X={x} (fixed)" for x in (5, 10, 20, 30, 70)  # every X of the slides (issue 21)
    ]
    seeds = P.lstm.seeds
    assert [s.seed for s in grid.experiment("exp4", P) if s.variant == "pareto"] == list(seeds)
    assert [s.seed for s in grid.experiment("baseline", P)] == list(seeds)
    memory = set(grid.experiment("memory", P))  # the ablation reads models the experiments train anyway
    assert memory <= set(s for e in ("baseline", "exp2", "exp3", "exp4") for s in grid.experiment(e, P))
    with pytest.raises(ValueError, match="unknown experiment"):
        grid.experiment("exp9", P)
