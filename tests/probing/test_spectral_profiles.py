"""Reading learned spectral profiles (prismlib.probing.spectral_profiles): band spread and
centre, the runs and spread gates, the octave-smoothed profile."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from prismlib.claims import Gate
from prismlib.probing import (
    MIN_GATE_RUNS,
    PROFILE_ORDER,
    band_spread,
    profile_order_claim,
    runs_gate,
    smoothed_profile,
    spectral_centre,
    spread_gate,
)

# --------------------------------------------------------------------------- band means


def test_band_spread_and_centre_read_the_shape_of_the_band_means():
    bands = ["LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"]
    means = pd.DataFrame([[0.9, 0.5, 0.5, 0.5, 0.1], [0.5] * 5, [0.2, 0.2, 0.2, 0.2, 1.0]], columns=bands)
    shuffled = means[bands[::-1]].assign(run=[0, 1, 2])  # columns are read by band name
    np.testing.assert_allclose(band_spread(shuffled), [0.8, 0.0, 0.8])
    centre = spectral_centre(shuffled)
    # above the least-passed band: weights (0.8, 0.4, 0.4, 0.4, 0) -> 2.4 / 2.0; a flat gate has none
    assert centre[0] == pytest.approx(1.2) and np.isnan(centre[1]) and centre[2] == pytest.approx(4.0)
    np.testing.assert_allclose(spectral_centre(means + 0.05)[[0, 2]], centre[[0, 2]])  # the level does not move it


# --------------------------------------------------------------------------- gates and figures


def test_runs_gate_asks_for_five_runs():
    assert MIN_GATE_RUNS == 5
    assert runs_gate(5).passed and runs_gate(7).passed
    failed = runs_gate(2)
    assert not failed.passed and "2 runs" in failed.detail and "3 more" in failed.detail and "at least 5 runs" in failed.name


def test_spread_gate_passes_only_a_spread_clearly_above_the_margin():
    assert spread_gate([0.6, 0.7, 0.65, 0.62, 0.68], 0.2, "topic").passed
    assert spread_gate([0.6, 0.7, 0.65, 0.62, 0.68], 0.2, "topic").name == "the topic gate prefers a band (band spread > 0.2)"
    assert not spread_gate([0.01, 0.9], 0.2).passed  # two runs that disagree: the interval reaches below the margin
    assert not spread_gate([0.1, 0.15, 0.12], 0.2).passed
    assert spread_gate([0.5, 0.5], 0.2).passed and "+0.5" in spread_gate([0.5, 0.5], 0.2).detail  # equal runs: the value
    assert not spread_gate([0.2], 0.2).passed  # at the margin is not above it
    with pytest.raises(ValueError, match="at least one run"):
        spread_gate([], 0.2)


def test_smoothed_profile_averages_octave_bins_and_keeps_frequency_zero():
    grid = np.arange(16) / 16
    gates = np.stack([np.linspace(0, 1, 16), np.linspace(0, 1, 16) ** 2])
    p = smoothed_profile(gates, grid, per_octave=1)
    assert p["frequency"].iloc[0] == 0 and p["points"].iloc[0] == 1
    assert p["mean"].iloc[0] == 0 and p["low"].iloc[0] == 0 and p["high"].iloc[0] == 0
    # octave bins of j / 16: j = 1 | 2-3 | 4-7 | 8-15
    assert p["points"].tolist() == [1, 1, 2, 4, 8]
    assert p["frequency"].tolist()[1:] == pytest.approx([2**-3.5, 2**-2.5, 2**-1.5, 2**-0.5])
    last = gates[:, 8:].mean(1)
    assert p["mean"].iloc[-1] == pytest.approx(last.mean())
    assert p["low"].iloc[-1] == pytest.approx(last.min()) and p["high"].iloc[-1] == pytest.approx(last.max())
    assert (p["low"] <= p["mean"]).all() and (p["mean"] <= p["high"]).all()
    assert len(smoothed_profile(gates, grid, per_octave=4)) > len(p)
    with pytest.raises(ValueError, match="grid"):
        smoothed_profile(gates, grid[:5])


def test_a_flat_gate_has_no_spread_and_no_centre():
    import numpy as np
    import pandas as pd

    from prismlib.probing import band_spread, spectral_centre

    bands = ["LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"]
    d = pd.DataFrame([[0.95, 0.97, 0.98, 0.99, 1.0], [0.5] * 5, [0.9, 0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2, 0.9]], columns=bands)
    spread, centre = band_spread(d), spectral_centre(d)
    np.testing.assert_allclose(spread, [0.05, 0.0, 0.7, 0.7])
    assert np.isnan(centre[1]) and centre[2] == pytest.approx(0.0) and centre[3] == pytest.approx(4.0)
    # an all-pass gate and an untrained one both fail a spread margin of 0.2; a low-pass one passes
    assert (spread > 0.2).tolist() == [False, False, True, True]


# --------------------------------------------------------------------------- the claim


def gates_peaking_at(band: int, runs: int, seed: int, flat: bool = False) -> pd.DataFrame:
    """``runs`` learned gates' band means peaking at band index ``band`` (0 LOW .. 4 HIGH)."""
    rng = np.random.default_rng(seed)
    peak = np.full(5, 0.5) if flat else 0.2 + 0.7 * (np.arange(5) == band)
    return pd.DataFrame(peak + rng.uniform(-0.02, 0.02, (runs, 5)), columns=["LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"])


def order_claim(peaks: dict[str, int], runs: int = 5, beats: bool = True, flat: str = ""):
    means = {n: gates_peaking_at(b, runs, i, flat=n == flat) for i, (n, b) in enumerate(peaks.items())}
    return profile_order_claim(means, [Gate(f"{n}: GATED beats the majority class", beats) for n in PROFILE_ORDER], runs=runs, margin=0.2)


def test_the_profiles_order_claim_tests_each_neighbouring_pair_of_centres_in_the_paper_s_order():
    assert PROFILE_ORDER == ("topic", "swda", "pos")
    held = order_claim({"topic": 0, "swda": 2, "pos": 4, "mlm": 3})
    assert held.verdict == "held", held.row()
    assert [t.label for t in held.tests] == ["centre(swda) - centre(topic)", "centre(pos) - centre(swda)"]
    assert re.search(
        r"spectral centres: topic 0\.\d\d, dialog acts [12]\.\d\d, POS [34]\.\d\d; MLM [23]\.\d\d; band spreads: topic", held.claim
    )
    assert "5 runs per task" in held.claim
    assert order_claim({"topic": 0, "swda": 4, "pos": 2}).verdict == "not held"  # dialog acts above POS
    assert order_claim({"topic": 0, "swda": 2, "pos": 4}, runs=3).verdict == "not testable"  # too few runs
    assert order_claim({"topic": 0, "swda": 2, "pos": 4}, beats=False).verdict == "not testable"
    flat = order_claim({"topic": 0, "swda": 2, "pos": 4}, flat="swda")  # a gate with no preference has no centre to order
    assert flat.verdict == "not testable" and "the swda gate prefers a band" in "; ".join(g.name for g in flat.gates if not g.passed)
