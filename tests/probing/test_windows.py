"""Windowing and label weights (prismlib.probing.windows)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.probing import IGNORE, Unit, pack_units

CLS, SEP = 101, 102


def unit_lengths_strategy():
    return st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=30), min_size=1, max_size=4)


def make_sources(lengths_per_source):
    uid, sources = 0, []
    for s, lengths in enumerate(lengths_per_source):
        units = []
        for n in lengths:
            units.append(Unit(list(range(1000 + uid, 1000 + uid + n)), label=uid % 7, unit_id=uid))
            uid += 1
        sources.append((f"doc{s}", units))
    return sources


@settings(max_examples=60, deadline=None)
@given(unit_lengths_strategy(), st.integers(5, 64), st.booleans())
def test_windows_fit_and_weights_of_each_label_sum_to_one(lengths, window, truncate):
    wins = pack_units(make_sources(lengths), CLS, SEP, window=window, truncate=truncate)
    per_unit = defaultdict(float)
    for w in wins:
        assert 3 <= len(w) <= window
        assert w.input_ids[0] == CLS and w.input_ids[-1] == SEP
        assert w.labels[0] == w.labels[-1] == IGNORE and w.weights[0] == w.weights[-1] == 0
        assert (w.labels[1:-1] >= 0).all()
        for u, wt in zip(w.unit_ids[1:-1], w.weights[1:-1]):
            per_unit[int(u)] += float(wt)
    assert per_unit and all(v == pytest.approx(1.0, abs=1e-5) for v in per_unit.values())
    if truncate:
        assert len(wins) == len(lengths)  # one window per source


def test_units_are_not_split_when_they_fit_and_order_is_kept():
    # window of 10 content pieces: units of 4, 4, 4 -> [4, 4] [4]
    sources = make_sources([[4, 4, 4]])
    wins = pack_units(sources, CLS, SEP, window=12)
    assert [len(w) - 2 for w in wins] == [8, 4]
    assert [list(w.unit_ids[1:-1]) for w in wins] == [[0] * 4 + [1] * 4, [2] * 4]
    pieces = np.concatenate([w.input_ids[1:-1] for w in wins])
    assert pieces.tolist() == [p for _, units in sources for u in units for p in u.pieces]


def test_long_unit_is_split_and_weighted_over_all_its_pieces():
    wins = pack_units(make_sources([[25]]), CLS, SEP, window=12)
    assert [len(w) - 2 for w in wins] == [10, 10, 5]
    assert all(np.allclose(w.weights[1:-1], 1 / 25) for w in wins)


def test_truncation_weights_only_the_kept_pieces():
    wins = pack_units(make_sources([[30], [5]]), CLS, SEP, window=12, truncate=True)
    assert [len(w) - 2 for w in wins] == [10, 5]
    assert np.allclose(wins[0].weights[1:-1], 1 / 10)  # the post's kept 10 pieces count once


def test_window_too_small_is_an_error():
    with pytest.raises(ValueError, match="window"):
        pack_units(make_sources([[3]]), CLS, SEP, window=2)
