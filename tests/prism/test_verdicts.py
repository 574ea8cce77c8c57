"""Condition names of section 4's verdicts: the earlier checkpoint's sector conditions, each seed's conditions."""

from __future__ import annotations

import pytest

from prismlib.prism import EARLIER, arm_of, earlier, sector_condition, seeded, split_seed, trained_weights


@pytest.mark.parametrize("arm", ["prism", "prism_untrained", "baseline", "prism-every"])
@pytest.mark.parametrize("band", ["LOW", "HIGH"])
def test_a_sector_of_the_earlier_model_is_the_earlier_condition_of_the_sector(arm, band):
    # the stability gate looks up earlier("prism LOW sector"): the notebook must pool the
    # earlier model's sector under that name (a mismatch failed B.1's gates in a cpu run)
    assert sector_condition(earlier(arm), band) == earlier(sector_condition(arm, band))
    assert arm_of(sector_condition(earlier(arm), band)) == arm


def test_sector_condition_names():
    assert sector_condition("prism", "LOW") == "prism LOW sector"
    assert sector_condition("prism" + EARLIER, "HIGH") == "prism HIGH sector" + EARLIER
    assert earlier("prism_untrained LOW sector") == "prism_untrained LOW sector"  # never trained


@pytest.mark.parametrize("seed", [0, 2])
def test_a_seeded_condition_keeps_its_seed_last_through_sectors_and_the_earlier_checkpoint(seed):
    # notebook 03 names each seed's probes "prism LOW sector@previous#1"; the seed comparison
    # pools them under the name without the seed, the name the claims and the stability gate read
    model = seeded("prism", seed)
    assert earlier(model) == seeded("prism" + EARLIER, seed)
    assert sector_condition(earlier(model), "LOW") == earlier(sector_condition(model, "LOW")) == seeded("prism LOW sector" + EARLIER, seed)
    assert split_seed(sector_condition(earlier(model), "LOW"))[0] == earlier(sector_condition("prism", "LOW"))
    assert arm_of(sector_condition(earlier(model), "HIGH")) == "prism"
    assert trained_weights(seeded("baseline_prism_untrained", seed)) == "baseline" and trained_weights("prism_untrained") is None
