"""The epoch-cap check of the probes (prismlib.probing.cap_check): which conditions reached the
cap, their runs replaced by longer ones, and the gate on a claim whose verdict the cap decides."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from probing_fixtures import zeroed

from prismlib.claims import Claim, Test
from prismlib.probing import (
    CAP_GATE,
    MAJORITY,
    Features,
    ProbeRecipe,
    ProbeRuns,
    cap_table,
    capped_conditions,
    capped_table,
    probe_conditions,
    twins,
    with_cap_gates,
    with_runs,
)
from prismlib.stats import Interval


def runs_of(epochs: dict[str, list[int]], correct: dict[str, list[bool]], majority: int = 0) -> ProbeRuns:
    rows = [{"condition": c, "run": r, "accuracy": 0.5, "epochs": e} for c, es in epochs.items() for r, e in enumerate(es)]
    right = {c: np.array([v] * len(epochs[c])) for c, v in correct.items()} | {MAJORITY: np.array([[True, False]])}
    return ProbeRuns(pd.DataFrame(rows), right, majority)


def test_a_condition_is_capped_when_any_of_its_runs_trained_to_the_cap():
    runs = runs_of({"ORIG": [12, 30], "LOW": [9, 11], "HIGH": [30, 30]}, {c: [True, False] for c in ("ORIG", "LOW", "HIGH")})
    assert capped_conditions(runs, 30) == ["ORIG", "HIGH"]
    assert capped_conditions(runs, 31) == [] and capped_conditions(runs, 11) == ["ORIG", "LOW", "HIGH"]


def test_longer_runs_replace_only_their_conditions_in_place():
    before = runs_of({"ORIG": [30, 30], "LOW": [9, 11]}, {"ORIG": [True, False], "LOW": [False, False]})
    longer = runs_of({"ORIG": [41, 52]}, {"ORIG": [True, True]})
    merged = with_runs(before, longer)
    shown = capped_table({"pos": before}, {"pos": merged}, {"pos": 30})
    assert shown[["condition", "epochs", "epochs, cap doubled"]].values.tolist() == [["ORIG", 30.0, 46.5]]
    assert merged.table["condition"].tolist() == ["ORIG", "ORIG", "LOW", "LOW"]
    assert merged.table["epochs"].tolist() == [41, 52, 9, 11]
    assert merged.correct["ORIG"].all() and not merged.correct["LOW"].any()
    np.testing.assert_array_equal(merged.correct[MAJORITY], before.correct[MAJORITY])
    with pytest.raises(ValueError, match="not the same training set"):
        with_runs(before, runs_of({"ORIG": [41]}, {"ORIG": [True]}, majority=2))
    with pytest.raises(ValueError, match=r"conditions \['MID'\] were not probed before"):
        with_runs(before, runs_of({"MID": [41]}, {"MID": [True]}))


def features(seed: int, n: int = 90) -> Features:
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(3, (n,), generator=g)
    easy = torch.nn.functional.one_hot(y, 3).float() * 4 + torch.randn(n, 3, generator=g)
    noise = torch.randn(n, 8, generator=g)  # nothing to learn: validation loss soon stops falling
    idx = torch.arange(n)
    return Features({"easy": easy, "noise": noise}, y, torch.ones(n), idx // 6, idx, idx % 6)


def test_a_run_its_rule_stopped_before_the_cap_repeats_exactly_with_the_cap_doubled():
    """What lets the check re-probe only the capped conditions (probes are seeded)."""
    feats = {"train": features(0), "val": features(1), "test": features(2)}
    recipe = ProbeRecipe(max_epochs=8, patience=1, batch_size=16, standardize=False)
    at_cap = probe_conditions(feats, 3, ("easy", "noise"), 2, 0, recipe, progress=False)
    doubled = probe_conditions(feats, 3, ("easy", "noise"), 2, 0, recipe.with_cap(16), progress=False)
    a, b = at_cap.table, doubled.table
    stopped = a.index[a["epochs"] < 8]
    assert len(stopped), "no run stopped before the cap: the data do not exercise the check"
    pd.testing.assert_frame_equal(a.loc[stopped], b.loc[stopped])
    for i in stopped:
        c, r = a.loc[i, "condition"], a.loc[i, "run"]
        np.testing.assert_array_equal(at_cap.correct[c][r], doubled.correct[c][r])
    assert (b.loc[a.index[a["epochs"] == 8], "epochs"] > 8).any()  # and a capped one went on


def claim(effect: float, paper: str = "p") -> Claim:
    return Claim("02", f"A beats B ({effect:+.1f})", paper, (Test(Interval(effect, effect - 1, effect + 1, 20)),))


def test_a_claim_whose_verdict_the_cap_decides_is_not_testable_and_the_others_keep_theirs():
    at_cap = [claim(3.0, "a"), claim(0.5, "b"), claim(-3.0, "c")]  # held, inside noise, not held
    doubled = [claim(3.5, "a"), claim(2.0, "b"), claim(-2.5, "c")]  # held, held, not held
    gated = with_cap_gates(at_cap, doubled)
    assert [c.verdict for c in gated] == ["held", "not testable", "not held"]
    gate = gated[1].gates[-1]
    assert gate.name == CAP_GATE == "the verdict stands with the probes' epoch cap doubled" and not gate.passed
    assert "at the cap: inside noise" in gate.detail and "cap doubled: held" in gate.detail
    table = cap_table(at_cap, doubled)
    assert table["moved"].tolist() == [False, True, False] and table["effect, cap doubled"].tolist() == [3.5, 2.0, -2.5]


def test_rows_are_matched_by_their_paper_sentence_in_order_and_a_row_the_doubled_cap_does_not_build_fails():
    at_cap = [claim(3.0, "a"), claim(3.0, "x"), claim(4.0, "x"), claim(5.0, "only at the cap")]
    doubled = [claim(3.2, "x"), claim(-3.0, "x"), claim(3.1, "a"), claim(1.0, "only doubled")]
    assert [d.tests[0].interval.effect if d else None for d in twins(at_cap, doubled)] == [3.1, 3.2, -3.0, None]
    gated = with_cap_gates(at_cap, doubled)
    assert [c.verdict for c in gated] == ["held", "held", "not testable", "not testable"]
    assert "no such row" in gated[3].gates[-1].detail
    table = cap_table(at_cap, doubled)
    assert table["verdict, cap doubled"].tolist() == ["held", "held", "not held", "(no such row)"]
    assert table["moved"].tolist() == [False, False, True, True]


def test_runs_continued_from_the_cap_are_the_runs_the_doubled_cap_trains():
    """The check continues each capped run from where it stood (``resume``) instead of training
    it again: every number, run by run, is what probing with the doubled cap from the start gives."""
    feats = {"train": features(0), "val": features(1), "test": features(2)}
    recipe = ProbeRecipe(max_epochs=8, patience=1, batch_size=16, standardize=False)
    doubled_cap, kw = recipe.with_cap(16), dict(progress=False)
    at_cap = probe_conditions(feats, 3, ("easy", "noise"), 2, 0, recipe, **kw)
    assert any(s is not None for s in at_cap.resume["easy"]) and any(s is None for states in at_cap.resume.values() for s in states)
    doubled = probe_conditions(feats, 3, ("easy", "noise"), 2, 0, doubled_cap, **kw)
    continued = probe_conditions(feats, 3, ("easy", "noise"), 2, 0, doubled_cap, resume=at_cap, **kw)
    pd.testing.assert_frame_equal(continued.table, doubled.table)
    for c in doubled.correct:
        np.testing.assert_array_equal(continued.correct[c], doubled.correct[c])
    # the states were not consumed: the same continuation again gives the same runs
    again = probe_conditions(feats, 3, ("easy",), 2, 0, doubled_cap, resume=at_cap, **kw)
    pd.testing.assert_frame_equal(again.table, doubled.table[doubled.table["condition"] == "easy"])
    # and the states are what it goes on from (training again from epoch 0 would give the same runs):
    # from other parameters the same call gives other runs
    other = probe_conditions(feats, 3, ("easy",), 2, 0, doubled_cap, resume=zeroed(at_cap), **kw)
    assert not np.allclose(other.table["test_loss"], again.table["test_loss"])
    with pytest.raises(ValueError, match="cannot continue 3 runs of 'easy'"):
        probe_conditions(feats, 3, ("easy",), 3, 0, doubled_cap, resume=at_cap, **kw)
    with pytest.raises(ValueError, match="'ORIG': the runs to resume hold none of it"):
        at_cap.resume_states("ORIG", 2)


def test_longer_runs_bring_their_resume_states_with_them():
    before = runs_of({"ORIG": [30, 30], "LOW": [9, 11]}, {"ORIG": [True, False], "LOW": [False, False]})
    before.resume = {"ORIG": ["at 30", "at 30"], "LOW": [None, None]}
    longer = runs_of({"ORIG": [41, 60]}, {"ORIG": [True, True]})
    longer.resume = {"ORIG": [None, "at 60"]}
    assert with_runs(before, longer).resume == {"LOW": [None, None], "ORIG": [None, "at 60"]}
