"""Condition names of section 4's verdicts: the earlier checkpoint's sector conditions, each seed's conditions;
a Fig. 5 claim tested at every near-window width."""

from __future__ import annotations

import pytest

from prismlib.claims import Gate, Test
from prismlib.prism import EARLIER, arm_of, claim_at_every_width, earlier, sector_condition, seeded, split_seed, trained_weights
from prismlib.stats import Interval


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


def _widths(effects: dict[int, float], seeds: list[float], earlier_at: dict[int, float]) -> dict:
    """``by_width`` of one number, ``("prism", "dip")``: at each width the seed means' interval
    ``effect ± 0.05`` over 20 articles, the seeds' values, and the earlier checkpoint's effect
    (a width missing from ``earlier_at`` has no earlier checkpoint)."""
    key = ("prism", "dip")
    return {
        w: (
            {key: Interval(e, e - 0.05, e + 0.05, 20)},
            {key: seeds},
            {key: Interval(earlier_at[w], 0.0, 0.0, 20)} if w in earlier_at else {},
        )
        for w, e in effects.items()
    }


SANITY = Gate("sanity", True, "ok")


def _dip_claim(by_width: dict):
    return claim_at_every_width(
        "04",
        "prism dips",
        "Sec. 4.3",
        lambda x, w: Test.superiority(x, 0.05, label=f"dip, near {w}"),
        ("prism", "dip"),
        by_width,
        (SANITY,),
        missing="BERT + Prism",
    )


def test_a_claim_at_every_width_needs_each_width_s_test_and_stability():
    claim = _dip_claim(_widths({1: 0.3, 5: 0.4, 10: 0.5}, [0.29, 0.3, 0.31], {1: 0.3, 5: 0.4, 10: 0.5}))
    assert [t.label for t in claim.tests] == ["dip, near 1", "dip, near 5", "dip, near 10"]
    # each test is on the interval over articles and seeds (the seeds' spread added)
    assert all(t.interval.resampled == "units+seeds" and t.interval.seeds == 3 for t in claim.tests)
    assert [t.interval.effect for t in claim.tests] == pytest.approx([0.3, 0.4, 0.5])
    assert [g.name for g in claim.gates][0] == "sanity" and len(claim.gates) == 1 + 3  # the gates given, then one stability gate per width
    assert all(g.name.startswith("stable: dip, near ") and g.passed for g in claim.gates[1:]) and claim.unit == "nats"
    assert claim.verdict == "held" and claim.notebook == "04"
    # one width below the margin: every width is needed
    assert _dip_claim(_widths({1: 0.3, 5: 0.0, 10: 0.5}, [0.0, 0.0, 0.0], {1: 0.3, 5: 0.0, 10: 0.5})).verdict != "held"
    # one width without an earlier checkpoint: its stability gate fails, naming what lacks it
    lacking = _dip_claim(_widths({1: 0.3, 5: 0.4, 10: 0.5}, [0.29, 0.3, 0.31], {1: 0.3, 10: 0.5}))
    assert lacking.verdict == "not testable" and [g.name for g in lacking.failed_gates] == [
        "stable: dip, near 5 moved <= half its margin since the last decay"
    ]
    assert "no earlier checkpoint for BERT + Prism" in lacking.failed_gates[0].detail
    # seeds that disagree widely: the width's test is inside noise
    assert _dip_claim(_widths({1: 0.3}, [-1.0, 0.3, 1.6], {1: 0.3})).verdict == "inside noise"
