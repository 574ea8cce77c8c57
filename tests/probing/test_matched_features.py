"""Notebook 09's matched bands and energy twins as features (prismlib.probing.matched_features)."""

from __future__ import annotations

import pytest
import torch
from probing_fixtures import synthetic

from prismlib.probing import (
    ENERGY_TWIN_CONDITIONS,
    MATCHED_HAAR_CONDITIONS,
    MATCHED_SMOOTH_CONDITIONS,
    beyond_features,
    energy_twin_condition,
)
from prismlib.spectral import allocate_bands, band_pass, energy_twins, matched_bands


def test_beyond_features_add_the_matched_bands_to_the_states_conditions():
    states = synthetic(5, 0, "low")
    conditions = ("ORIG", "LOW", MATCHED_SMOOTH_CONDITIONS[2], MATCHED_HAAR_CONDITIONS[4], "smooth:MID")
    f = beyond_features(states, conditions)
    plain = states.features(("ORIG", "LOW", "smooth:MID"))
    assert list(f.x) == list(conditions)
    for c in ("ORIG", "LOW", "smooth:MID"):
        assert torch.equal(f.x[c], plain.x[c])
    assert torch.equal(f.labels, plain.labels) and torch.equal(f.window, plain.window)
    for c, (family, index) in ((MATCHED_SMOOTH_CONDITIONS[2], ("smooth", 2)), (MATCHED_HAAR_CONDITIONS[4], ("haar", 4))):
        want = torch.cat([matched_bands(len(h), family)[index](h.float())[p] for h, p in zip(states.hidden, states.picks())])
        assert f.x[c].dtype == torch.float16 and f.x[c].shape == (len(states), states.hidden_size)
        torch.testing.assert_close(f.x[c].float(), want, atol=2e-3, rtol=2e-3)
    only = beyond_features(states, MATCHED_HAAR_CONDITIONS[:1])
    assert list(only.x) == [MATCHED_HAAR_CONDITIONS[0]]
    assert MATCHED_SMOOTH_CONDITIONS[0] == "smooth-3dB:LOW" and MATCHED_HAAR_CONDITIONS[-1] == "haar-3dB:HIGH"


def test_beyond_features_add_the_energy_twins_each_over_its_window_s_length():
    states = synthetic(5, 1, "high")
    twin = ENERGY_TWIN_CONDITIONS[3]
    f = beyond_features(states, ("ORIG", twin))
    want = torch.cat([band_pass(h.float(), energy_twins(len(h))[3], dim=-2)[p] for h, p in zip(states.hidden, states.picks())])
    assert f.x[twin].dtype == torch.float16 and f.x[twin].shape == (len(states), states.hidden_size)
    torch.testing.assert_close(f.x[twin].float(), want, atol=2e-3, rtol=2e-3)
    assert ENERGY_TWIN_CONDITIONS[0] == "brick-twin:LOW" and len(ENERGY_TWIN_CONDITIONS) == len(MATCHED_SMOOTH_CONDITIONS)


def test_a_twin_that_is_its_brick_wall_band_at_every_length_is_probed_as_that_band():
    assert energy_twins(512)[4] != allocate_bands(512)[4]
    assert energy_twin_condition(MATCHED_SMOOTH_CONDITIONS[4], [300, 512]) == ENERGY_TWIN_CONDITIONS[4]
    lengths = range(5, 513)  # LOW's twin is LOW itself at every length the tasks use
    assert all(energy_twins(n)[0] == allocate_bands(n)[0] for n in lengths)
    assert energy_twin_condition(MATCHED_SMOOTH_CONDITIONS[0], lengths) == "LOW"
    with pytest.raises(ValueError, match="expected one of"):
        energy_twin_condition("LOW", [512])
    with pytest.raises(ValueError, match="window lengths"):
        energy_twin_condition(MATCHED_SMOOTH_CONDITIONS[0], [])
