"""Condition names of section 4's verdicts: the earlier checkpoint's sector conditions."""

from __future__ import annotations

import pytest

from prismlib.prism import EARLIER, arm_of, earlier, sector_condition


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
