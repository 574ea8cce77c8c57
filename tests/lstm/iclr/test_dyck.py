"""The Dyck-2 task (prismlib.lstm.iclr.dyck): matching, legal next symbols, the grammar's law, scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.lstm.iclr import dyck

N_DERIVATIONS = 6000


def _reduce(text: str) -> str:
    """Delete matched pairs until none is left: the oracle of balance and of legal continuations."""
    while "()" in text or "[]" in text:
        text = text.replace("()", "").replace("[]", "")
    return text


def _within(count: float, n: int, p: float, sds: float = 4.0) -> bool:
    return abs(count - n * p) <= sds * np.sqrt(n * p * (1 - p))


@st.composite
def dyck_words(draw: st.DrawFn) -> str:
    """Any Dyck-2 word: open or close at random, close what is left at the end."""
    out, stack = [], []
    for opening, kind in draw(st.lists(st.tuples(st.booleans(), st.sampled_from("([")), max_size=60)):
        if opening or not stack:
            out.append(kind)
            stack.append(kind)
        else:
            out.append(")" if stack.pop() == "(" else "]")
    return "".join(out) + "".join(")" if k == "(" else "]" for k in reversed(stack))


@pytest.fixture(scope="module")
def derivations() -> list[tuple[np.ndarray | None, np.ndarray]]:
    rng = np.random.default_rng(2021)
    return [dyck.derive(rng) for _ in range(N_DERIVATIONS)]


def test_ids_follow_the_official_vocabulary():
    np.testing.assert_array_equal(dyck.encode("([])"), [0, 2, 3, 1])
    assert dyck.decode(np.array([0, 2, 3, 1, dyck.PAD, dyck.PAD])) == "([])"
    with pytest.raises(ValueError, match="outside"):
        dyck.encode("(x)")


@pytest.mark.parametrize(
    ("text", "match", "distance"),
    [
        ("()", [1, 0], [0, 1]),
        ("([])[]", [3, 2, 1, 0, 5, 4], [0, 0, 1, 3, 0, 1]),
        ("(()[[]])", [7, 2, 1, 6, 5, 4, 3, 0], [0, 0, 1, 0, 0, 1, 3, 7]),
    ],
)
def test_matching_and_distances_of_hand_made_strings(text, match, distance):
    ids = dyck.encode(text)
    np.testing.assert_array_equal(dyck.match_indices(ids), match)
    np.testing.assert_array_equal(dyck.bracket_distances(ids), distance)
    split = dyck.make_split([ids])
    assert split.longest[0] == max(distance) and split.lengths[0] == len(text)


@pytest.mark.parametrize("text", ["(]", "(()", "())", ")(", "([)]"])
def test_unbalanced_strings_are_refused(text):
    with pytest.raises(ValueError):
        dyck.match_indices(dyck.encode(text))


def test_legal_next_symbols_of_hand_made_prefixes():
    # columns: ( ) [ ] END
    np.testing.assert_array_equal(dyck.legal_next(dyck.encode("([")), [[1, 1, 1, 0, 0], [1, 0, 1, 1, 0]])
    np.testing.assert_array_equal(dyck.legal_next(dyck.encode("()")), [[1, 1, 1, 0, 0], [1, 0, 1, 0, 1]])
    legal = dyck.legal_next(dyck.encode("([])"))
    np.testing.assert_array_equal(dyck.closer_targets(legal), [[1, 0], [0, 1], [1, 0], [0, 0]])
    with pytest.raises(ValueError, match="matches no open bracket"):
        dyck.legal_next(dyck.encode("(]"))


@settings(max_examples=80, deadline=None)
@given(dyck_words())
def test_matching_distances_and_legal_symbols_agree_with_naive_oracles(text):
    ids = dyck.encode(text)
    distances, legal = dyck.bracket_distances(ids), dyck.legal_next(ids)
    for i, c in enumerate(text):
        if c in ")]":  # walk back to the opener at depth zero
            depth, j = 0, i
            while depth >= 0:
                j -= 1
                depth += 1 if text[j] in ")]" else -1
            assert distances[i] == i - j and text[j] + c in ("()", "[]")
        else:
            assert distances[i] == 0
        prefix = text[: i + 1]
        expected = [set(_reduce(prefix + s)) <= set("([") for s in "()[]"] + [_reduce(prefix) == ""]
        assert legal[i].tolist() == expected


def test_productions_are_drawn_with_the_grammars_probabilities():
    p_open, p_split = (0.3, 0.1), 0.2  # every rule a different probability (the empty rule 0.4)
    rng = np.random.default_rng(7)
    results = [dyck.derive(rng, p_open, p_split) for _ in range(8000)]
    probs = dyck.production_probabilities(p_open, p_split)
    np.testing.assert_allclose(probs, [0.3, 0.1, 0.2, 0.4])
    counts = sum(c for _, c in results)
    n = int(counts.sum())
    assert n > 30_000
    for k, p in zip(counts, probs):
        assert _within(k, n, p), (counts, n * probs)
    strings = [ids for ids, _ in results if ids is not None]
    openers = np.concatenate(strings)[np.concatenate(strings) % 2 == 0]
    assert _within(np.sum(openers == 0), len(openers), 0.3 / 0.4)  # a pair's type is drawn apart from the tree
    f = dyck.pair_probabilities(3, p_open, p_split)
    for k in range(4):  # and the productions build the grammar's strings
        assert _within(sum(len(ids) == 2 * k for ids in strings), len(results), f[k]), k


def test_pair_probabilities_solve_the_generating_function():
    f = dyck.pair_probabilities(300)
    assert f[0] == pytest.approx(2 - np.sqrt(3))  # smaller root of f = 1/4 + f^2 / 4
    assert f[1] == pytest.approx(0.5 * f[0] / (1 - 0.5 * f[0]))
    x = 0.5 ** np.arange(301)
    big_f = float(f @ x)  # F(x) at x = 1/2
    assert big_f == pytest.approx(0.25 + 0.5 * 0.5 * big_f + 0.25 * big_f**2, abs=1e-12)


def test_lengths_and_rejections_follow_the_conditioned_grammar(derivations):
    f = dyck.pair_probabilities(dyck.MAX_LENGTH // 2)
    n = len(derivations)
    done = [ids for ids, _ in derivations if ids is not None]
    assert _within(n - len(done), n, 1 - f.sum())  # abandoned past 200 symbols
    assert _within(sum(len(ids) == 0 for ids in done), n, f[0])
    lengths = np.array([len(ids) for ids in done if len(ids) >= dyck.MIN_LENGTH])
    assert lengths.max() <= dyck.MAX_LENGTH and np.all(lengths % 2 == 0)
    law = f[1:] / f[1:].sum()  # P(k pairs | 1 <= k <= 100)
    for lo, hi in [(1, 1), (2, 2), (3, 3), (4, 5), (6, 10), (11, 30), (31, 100)]:
        count = np.sum((lengths >= 2 * lo) & (lengths <= 2 * hi))
        assert _within(count, len(lengths), law[lo - 1 : hi].sum()), (lo, hi, count / len(lengths))


def test_the_length_limit_is_inclusive_and_cuts_the_rest():
    rng = np.random.default_rng(3)
    results = [dyck.derive(rng, max_length=6)[0] for _ in range(4000)]
    lengths = np.array([len(r) for r in results if r is not None])
    f = dyck.pair_probabilities(3)
    assert lengths.max() == 6 and _within(np.sum(lengths == 6), 4000, f[3])
    assert _within(sum(r is None for r in results), 4000, 1 - f.sum())


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_generated_string_is_balanced_and_within_the_limits(seed):
    for ids in dyck.sample_sequences(np.random.default_rng(seed), 40, unique=False):
        assert dyck.MIN_LENGTH <= len(ids) <= dyck.MAX_LENGTH
        dyck.match_indices(ids)  # raises unless balanced
        assert _reduce(dyck.decode(ids)) == ""


def test_the_generator_is_deterministic_for_a_seed():
    a = dyck.sample_sequences(np.random.default_rng(11), 50)
    b = dyck.sample_sequences(np.random.default_rng(11), 50)
    c = dyck.sample_sequences(np.random.default_rng(12), 50)
    assert [s.tolist() for s in a] == [s.tolist() for s in b] != [s.tolist() for s in c]


def test_dataset_splits_are_distinct_padded_and_reproducible():
    sizes = {"train": 60, "validation": 20, "test": 30}
    data = dyck.build_dataset(np.random.default_rng(5), *sizes.values())
    again = dyck.build_dataset(np.random.default_rng(5), *sizes.values())
    seen: set[str] = set()
    for name, split in data.items():
        n, width = split.tokens.shape
        assert n == sizes[name] and width == split.lengths.max()
        assert split.legal.shape == (n, width, 5) and split.targets.shape == (n, width, 2)
        np.testing.assert_array_equal(split.tokens, again[name].tokens)
        assert np.all(split.tokens[~split.mask] == dyck.PAD) and not split.legal[~split.mask].any()
        for k in range(n):
            ids = split.tokens[k, : split.lengths[k]]
            assert dyck.MIN_LENGTH <= len(ids) <= dyck.MAX_LENGTH
            np.testing.assert_array_equal(split.legal[k, : len(ids)], dyck.legal_next(ids))
            np.testing.assert_array_equal(split.distances[k, : len(ids)], dyck.bracket_distances(ids))
            seen.add(dyck.decode(ids))
    assert len(seen) == sum(sizes.values())  # distinct within and across splits


def test_one_wrong_position_makes_its_sequence_wrong():
    split = dyck.make_split([dyck.encode(t) for t in ["()", "([])", "[[]]()"]])
    targets, mask = split.targets, split.mask
    good = np.where(targets > 0, 0.9, 0.1)
    good[~mask] = 0.99  # padding is never scored
    np.testing.assert_array_equal(dyck.sequence_correct(good, targets, mask), [True, True, True])
    bad = good.copy()
    bad[1, 2, 0] = 0.2  # "([]" should predict ")"
    np.testing.assert_array_equal(dyck.sequence_correct(bad, targets, mask), [True, False, True])
    bad = good.copy()
    bad[2, 5, 1] = 0.6  # after the last symbol nothing is open
    np.testing.assert_array_equal(dyck.sequence_correct(bad, targets, mask), [True, True, False])
    bad = good.copy()
    bad[0, 0, 0] = 0.5  # exactly 0.5 is a 0 (official: > threshold)
    np.testing.assert_array_equal(dyck.sequence_correct(bad, targets, mask), [False, True, True])
    logits = np.where(targets > 0, 3.0, -3.0)
    logits[2, 0, 0] = 0.1  # sigmoid(0.1) > 0.5, but "[" should not predict ")"
    np.testing.assert_array_equal(dyck.sequence_correct(logits, targets, mask, logits=True), [True, True, False])
    full = np.where(split.legal, 0.9, 0.1)
    np.testing.assert_array_equal(dyck.sequence_correct(full, split.legal, mask), [True, True, True])


def test_accuracy_by_distance_bins_and_intervals():
    longest = np.array([1, 1, 3, 3, 3, 7, 7, 9, 11])
    correct = np.array([1, 1, 1, 0, 1, 0, 0, 0, 1], dtype=bool)
    table = dyck.accuracy_by_distance(correct, longest, np.array([1.0, 3.0, 5.0, 9.0]), n_boot=500)
    assert table["sequences"].tolist() == [2, 3, 3]  # 9 falls in the closed last bin; 11 outside
    assert table["correct"].tolist() == [2, 2, 0]
    np.testing.assert_allclose(table["accuracy"], [1.0, 2 / 3, 0.0])
    assert table["interval"].tolist() == ["clopper-pearson", "bootstrap", "clopper-pearson"]
    assert table.loc[0, "low"] == pytest.approx(0.025**0.5) and table.loc[0, "high"] == 1.0
    assert table.loc[2, "low"] == 0.0 and table.loc[2, "high"] == pytest.approx(1 - 0.025 ** (1 / 3))
    assert table.loc[1, "low"] < 2 / 3 < table.loc[1, "high"]
    empty = dyck.accuracy_by_distance(correct, longest, np.array([20.0, 30.0]))
    assert empty.loc[0, "sequences"] == 0 and np.isnan(empty.loc[0, "accuracy"])
    np.testing.assert_allclose(dyck.official_edges(200), np.linspace(2, 200, 10) - 1)


def test_distance_distribution_counts_closers_of_real_positions():
    split = dyck.make_split([dyck.encode("([])"), dyck.encode("()")])
    values, counts = dyck.distance_distribution(split.distances, split.mask)
    assert values.tolist() == [1, 3] and counts.tolist() == [2, 1]
    distances = split.distances.copy()
    distances[1, 3] = 5  # on padding: not counted
    assert dyck.distance_distribution(distances, split.mask)[0].tolist() == [1, 3]
