"""Projecting a pilot curve to a budget: the log-linear gain and the power law agree with the
curves they were made from."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prismlib.pretrain import fit_log_linear, project


def test_a_constant_gain_per_doubling_is_recovered():
    t = np.geomspace(1e5, 4e6, 12)
    gain = -2.0 + 0.25 / math.log(2) * np.log(t)
    fit = fit_log_linear(t, gain)
    assert fit.per_doubling == pytest.approx(0.25) and fit(8e6) == pytest.approx(fit(4e6) + 0.25)
    with pytest.raises(ValueError, match="at least 3"):
        fit_log_linear(t[:2], gain[:2])


def test_both_projections_read_a_power_law_curve_and_the_cautious_one_is_the_smaller():
    t = np.geomspace(2e5, 4e6, 15)
    unigram = 6.9
    loss = np.log(150.0 + 3e4 * t**-0.45)  # perplexity = floor + power law
    p = project(t, loss, unigram, budget_tokens=3e7)
    truth = unigram - math.log(150.0 + 3e4 * 3e7**-0.45)
    assert p.power_law == pytest.approx(truth, abs=0.02)
    assert p.log_linear > p.power_law and p.cautious == p.power_law  # a log-linear fit runs ahead of a saturating curve
    assert p.measured == (pytest.approx(unigram - loss[-1]), t[-1])
