"""The ICLR timescale claims (prismlib.lstm.iclr.timescale_fit) on timescales of known law."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from prismlib.lstm.iclr import timescale_fit as tf


def _draw(family: str, seed: int, n: int = 600) -> np.ndarray:
    dist = {"invgamma": sps.invgamma(0.5, scale=3.0), "lognorm": sps.lognorm(0.6, scale=3.0)}[family]
    return dist.rvs(n, random_state=seed)


def test_inverse_gamma_timescales_beat_the_rivals_and_log_normal_ones_do_not():
    ig = tf.invgamma_test([_draw("invgamma", s) for s in range(3)], "ig", n_boot=300)
    assert ig.verdict == "held" and ig.interval.resampled == "units+seeds" and ig.interval.seeds == 3
    ln = tf.invgamma_test([_draw("lognorm", s) for s in range(3)], "ln", n_boot=300)
    assert ln.interval.effect < 0 and ln.verdict == "not held"


def test_the_advantage_is_against_the_better_rival_per_unit():
    T = _draw("invgamma", 0)
    adv = tf.invgamma_advantage(T)
    _, ll_ig = tf.fitted_loglik(T, "invgamma")
    best = max(tf.fitted_loglik(T, r)[1].sum() for r in tf.RIVALS)
    assert adv.shape == T.shape and adv.sum() == pytest.approx(ll_ig.sum() - best)
    with pytest.raises(ValueError, match="positive"):
        tf.fitted_loglik(np.array([1.0, -2.0, 3.0]), "gamma")


def test_the_fit_table_has_every_seed_and_family():
    table = tf.timescale_fits({0: _draw("invgamma", 0), 1: _draw("invgamma", 1)})
    assert len(table) == 6 and set(table.family) == {"invgamma", *tf.RIVALS}
    best = table.loc[table.groupby("seed")["loglik"].idxmax()]
    assert (best.family == "invgamma").all() and (table.KS >= 0).all()


def test_shown_timescales_invert_the_exp_convention():
    T = np.array([0.5, 2.0, 40.0])
    np.testing.assert_allclose(tf.shown_timescales(np.exp(-1 / T)), T)
    assert np.isinf(tf.shown_timescales(np.array([1.0]))[0])


def test_units_keep_their_timescales_only_within_the_factor():
    assigned = np.geomspace(0.5, 500, 60)
    rng = np.random.default_rng(0)
    close = [assigned * np.exp(rng.normal(0, 0.1, 60)) for _ in range(3)]
    kept = tf.timescale_drift(np.r_[assigned, 0.0], [np.r_[c, 1.0] for c in close], "kept", n_boot=300)  # the T = 0 unit is left out
    assert kept.verdict == "held" and kept.interval.units == 60 and kept.interval.resampled == "units+seeds"
    shortened = tf.timescale_drift(assigned, [assigned / 5 * np.exp(rng.normal(0, 0.1, 60)) for _ in range(3)], "short", n_boot=300)
    assert shortened.verdict == "not held" and shortened.interval.effect == pytest.approx(np.log10(5), abs=0.05)
    assert tf.rank_agreement(assigned, close[0]) > 0.95
