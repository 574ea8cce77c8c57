"""Long twins (prismlib.profiles.cpu_long): ``cpu-long`` and any profile's ``-long`` twin
(:func:`~prismlib.profiles.until_converged`)."""

from __future__ import annotations

import pytest
from lstm_fixtures import tiny_lstm

from prismlib.profiles import PROFILES, until_converged

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, epochs=2, steps_per_epoch=3, cutoffs=(10, 20), curve_every=1, curve_tokens=100)


def test_the_long_twins():
    paper_long = until_converged(PROFILES["paper"])  # an NT-ASGD profile's twin trains until the model gate passes
    assert paper_long.name == "paper-long" and paper_long.lstm.until_converged and paper_long.lstm.average_last == 0
    assert paper_long.job_profile == "paper-long" and paper_long.lstm.seeds == PROFILES["paper"].lstm.seeds
    long = until_converged(PROFILES["cpu"])  # an annealed profile's twin adds seeds and shares the first seed's models
    assert long.name == "cpu-long" and not long.lstm.until_converged and long.lstm.all_seeds and long.job_profile == "cpu"
    assert PROFILES["cpu-long"].lstm == long.lstm and long.lstm.seeds == (0, 1, 2)
    assert long.lstm.updated(seeds=(0,), all_seeds=False) == PROFILES["cpu"].lstm
    with pytest.raises(ValueError, match="average_last=0"):
        TINY.updated(until_converged=True, average_last=1)
