"""Long twins (prismlib.profiles.cpu_long): ``cpu-long`` and any profile's ``-long`` twin
(:func:`~prismlib.profiles.until_converged`)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from lstm_fixtures import tiny_lstm

from prismlib.profiles import PROFILES, until_converged

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, epochs=2, steps_per_epoch=3, cutoffs=(10, 20), curve_every=1, curve_tokens=100)


def test_the_long_twins():
    paper_long = until_converged(PROFILES["paper"])  # an NT-ASGD profile's twin trains until the model gate passes
    assert paper_long.name == "paper-long" and paper_long.lstm.until_converged and paper_long.lstm.average_last == 0
    assert paper_long.job_profile == "paper-long" and paper_long.lstm.seeds == PROFILES["paper"].lstm.seeds
    one_seed = replace(PROFILES["cpu"], lstm=PROFILES["cpu"].lstm.updated(seeds=(0,), all_seeds=False))
    long = until_converged(one_seed)  # an annealed profile's twin adds seeds and shares the first seed's models
    assert long.name == "cpu-long" and not long.lstm.until_converged and long.lstm.all_seeds and long.job_profile == "cpu"
    assert long.lstm.seeds == (0, 1, 2) and long.lstm.updated(seeds=(0,), all_seeds=False) == one_seed.lstm
    # cpu has every seed since work B's grid was trained: cpu-long, the installments' name, is cpu's grid
    assert PROFILES["cpu-long"].lstm == long.lstm == PROFILES["cpu"].lstm
    with pytest.raises(ValueError, match="average_last=0"):
        TINY.updated(until_converged=True, average_last=1)
