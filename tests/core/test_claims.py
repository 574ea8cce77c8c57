"""Verdicts and the claims table (prismlib.claims)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from prismlib.claims import (
    COLUMNS,
    OUTCOMES,
    VERDICTS,
    Claim,
    Gate,
    Test,
    claim_margin,
    effect_parts,
    effect_stability_gate,
    read_claims,
    render,
    save_claims,
    stability_margin,
)
from prismlib.stats import Interval


def iv(low: float, high: float) -> Interval:
    return Interval((low + high) / 2, low, high, 20)


@pytest.mark.parametrize(
    ("low", "high", "sign", "threshold", "verdict"),
    [
        (1, 2, 1, 0, "held"),
        (-2, -1, 1, 0, "not held"),
        (-1, 2, 1, 0, "inside noise"),
        (-2, -1, -1, 0, "held"),
        (1, 2, -1, 0, "not held"),
        (-4, 1, 1, -5, "held"),  # "within 5 points below": A - B > -5
        (-7, -6, 1, -5, "not held"),
        (-6, -4, 1, -5, "inside noise"),
    ],
)
def test_test_verdicts(low, high, sign, threshold, verdict):
    assert Test(iv(low, high), sign, threshold).verdict == verdict


def test_claim_combines_tests_and_gates():
    held, noise, wrong = Test(iv(1, 2)), Test(iv(-1, 1)), Test(iv(-3, -2))
    assert Claim("02", "c", "p", (held, held)).verdict == "held"
    assert Claim("02", "c", "p", (held, noise)).verdict == "inside noise"
    assert Claim("02", "c", "p", (noise, wrong)).verdict == "not held"
    gated = Claim("02", "c", "p", (held,), (Gate("probe beats majority", False, "1% vs 5%"), Gate("other", True)))
    assert gated.verdict == "not testable"
    row = gated.row()
    assert row["gate"] == "failed: probe beats majority (1% vs 5%)" and row["verdict"] == "not testable"
    assert VERDICTS == ("held", "not held", "inside noise", "not testable")
    # the weakest test is the one reported
    c = Claim("02", "c", "p", (Test(iv(1, 2), label="a"), Test(iv(0.5, 3), label="b")))
    assert c.row()["test"].startswith("b > 0") and c.row()["ci_low"] == 0.5
    with pytest.raises(ValueError, match="no test"):
        Claim("02", "c", "p", ())
    with pytest.raises(ValueError, match="sign"):
        Test(iv(1, 2), sign=0)


def test_a_descriptive_row_reports_its_interval_and_carries_no_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    held = Test(iv(1, 2), label="X=70 - worst other X")
    gate = Gate("converged", False, "stopped at its cap")
    row = Claim("07", "X = 70 is the worst", "slides: 60.71", (held,), (gate,), "ppl", descriptive="inside the slides' seed spread").row()
    assert (
        row["verdict"] == "not testable" and OUTCOMES == VERDICTS and row["gate"].startswith("no verdict: inside the slides' seed spread")
    )
    assert (row["effect"], row["ci_low"], row["ci_high"]) == (1.5, 1, 2)  # the numbers are still reported
    assert row["gate"] == "no verdict: inside the slides' seed spread; gates failed: converged (stopped at its cap)"
    assert row["test"] == "reported: X=70 - worst other X"  # no threshold: nothing is claimed
    assert Claim("07", "c", "p", (held,), (gate,)).verdict == "not testable"  # without the reason: a verdict as before
    assert "| **not testable** |" in render([Claim("07", "c", "p", (held,), descriptive="why")])
    table = save_claims([Claim("07", "c", "p", (held,), descriptive="why"), Claim("07", "d", "p", (held,))], "smoke")
    assert list(table.verdict) == ["not testable", "held"]
    assert "1 held, 0 not held, 0 inside noise, 1 not testable (of 2)" in (tmp_path / "figures" / "smoke" / "claims.md").read_text()


def test_gate_from_interval():
    assert Gate.from_interval("g", iv(0.1, 1)).passed
    assert not Gate.from_interval("g", iv(-0.1, 1)).passed
    assert Gate.from_interval("g", iv(-2, -1), sign=-1).passed


def test_save_claims_merges_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    a = [Claim("03", "x", "px", (Test(iv(1, 2)),)), Claim("03", "y", "py", (Test(iv(-1, 2)),))]
    b = [Claim("02", "z", "pz", (Test(iv(-2, -1)),), (Gate("g", False),))]
    save_claims(a, "smoke")
    table = save_claims(b, "smoke")
    assert list(table["notebook"]) == ["02", "03", "03"]
    table = save_claims([Claim("03", "x2", "px", (Test(iv(1, 2)),))], "smoke")  # a re-run replaces 03's rows
    csv = pd.read_csv(tmp_path / "figures/smoke/claims.csv", dtype={"notebook": str}, keep_default_na=False)
    assert list(csv["claim"]) == ["z", "x2"] and list(csv["verdict"]) == ["not testable", "held"]
    assert {"notebook", "claim", "paper", "effect", "ci_low", "ci_high", "verdict", "gate"} <= set(csv.columns)
    md = (tmp_path / "figures/smoke/claims.md").read_text()
    assert "1 held" in md and "1 not testable" in md
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert len(rows) == 4 and not any(re.search(r"[^|\s] {2,}\||\| {2,}[^|\s]", r) for r in rows)  # no padding
    save_claims([Claim("04", "a | b\nc", "p", (Test(iv(1, 2)),))], "smoke")
    md = (tmp_path / "figures/smoke/claims.md").read_text()
    assert "| a \\| b c |" in md  # a pipe in a cell escaped, a line break a space


def test_render_is_a_markdown_table():
    text = render([Claim("02", "a | b", "p", (Test(iv(1, 2)),))])
    lines = text.splitlines()
    assert lines[0].startswith("| verdict |") and "**held**" in lines[2] and "a \\| b" in lines[2]


def test_gate_not_below():
    assert Gate.not_below("g", iv(-1, 1)).passed and Gate.not_below("g", iv(1, 2)).passed
    assert not Gate.not_below("g", iv(-2, -1)).passed


# -- exact rows, both signs, boundaries (issue 23: every mutant of prismlib.claims is killed) --


def test_a_row_reports_the_weakest_test_with_both_edges_and_an_exact_test_text():
    one = Claim("02", "c", "p", (Test(Interval(1.5, 1.0, 2.5, 20)),)).row()
    assert (one["effect"], one["ci_low"], one["ci_high"]) == (1.5, 1.0, 2.5)
    assert one["test"] == "effect > 0 (20 units)" and one["gate"] == "" and one["verdict"] == "held"
    assert (one["side"], one["threshold"], one["tests"]) == (">", 0.0, 1)
    three = Claim("02", "c", "p", (Test(iv(1, 2), label="a"), Test(iv(0.5, 3), label="b"), Test(iv(2, 4), label="c")))
    assert three.row()["test"] == "b > 0 (20 units); the weakest of 3 tests" and three.row()["tests"] == 3


def test_downward_tests_take_the_upper_edge_and_keep_their_sign_in_the_margin():
    # "A is below B": the edge that decides is the high one; margin = -(high - threshold)
    near = Test(Interval(-2.0, -2.8, -1.2, 20), -1, -1.0, "near")  # high -1.2 is 0.2 beyond -1
    far = Test(Interval(-2.0, -2.4, -1.6, 20), -1, -1.0, "far")  # high -1.6 is 0.6 beyond -1
    assert near.margin == pytest.approx(0.2) and far.margin == pytest.approx(0.6)
    assert Test(Interval(0.5, 0.2, 0.8, 20), -1).margin == pytest.approx(-0.8)  # not held: negative margin
    c = Claim("05", "c", "p", (far, near))
    assert c.weakest is near and c.row()["ci_high"] == -1.2 and c.row()["test"] == "near < -1 (20 units); the weakest of 2 tests"
    up = Test(Interval(2.0, 1.5, 3.0, 20), 1, 1.0)
    assert up.margin == pytest.approx(0.5)


def test_exact_tests_and_the_test_class_is_not_collected():
    t = Test.exact(1.0)
    assert (t.sign, t.threshold, t.interval.units, t.interval.resampled) == (1, 0.0, 0, "none")
    assert Test.__test__ is False  # pytest would try to collect a class named Test


def test_gate_details_default_to_the_interval():
    i = Interval(0.5, 0.25, 0.75, 20)
    assert Gate.from_interval("g", i).detail == str(i) == "+0.5 [+0.25, +0.75]"
    assert Gate.from_interval("g", i, detail="given").detail == "given"
    assert Gate.not_below("g", i).detail == str(i) and Gate.not_below("g", i, detail="d").detail == "d"
    assert str(Gate("g", True, "d")) == "g (d)" and str(Gate("g", True)) == "g"


def test_gate_not_below_passes_an_interval_ending_at_zero_and_any_positive_one():
    assert Gate.not_below("g", iv(-1, 0)).passed  # touching 0 is not "clearly worse"
    assert Gate.not_below("g", iv(0.2, 0.5)).passed
    assert not Gate.not_below("g", iv(-1, -0.01)).passed


def test_render_gives_the_exact_row():
    text = render([Claim("02", "a | b", "p", (Test(Interval(1.5, 1.0, 2.0, 20)),), unit="points")])
    assert text.splitlines() == [
        "| verdict | claim | effect [95% CI] | paper | gate |",
        "|---|---|---|---|---|",
        "| **held** | a \\| b | +1.50 [+1.00, +2.00] points<br>(effect > 0 (20 units)) | p |  |",
    ]
    assert render([Claim("02", "c", "p", (Test(Interval(1.5, 1.0, 2.0, 20)),))], digits=1).splitlines()[2] == (
        "| **held** | c | +1.5 [+1.0, +2.0]<br>(effect > 0 (20 units)) | p |  |"
    )
    both = render([Claim("02", "c", "p", (Test(iv(1, 2)),), model="m", control="k")]).splitlines()[2]
    assert both.startswith("| **held** | c<br>model: m<br>control: k | ")


def test_claims_frame_of_no_claims_has_the_columns():
    from prismlib.claims import COLUMNS, claims_frame

    assert list(claims_frame([]).columns) == list(COLUMNS)


def test_the_claims_files_keep_strings_columns_and_the_order_within_a_notebook(tmp_path, monkeypatch):
    from prismlib.claims import COLUMNS

    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    folder = tmp_path / "figures/smoke"
    folder.mkdir(parents=True)
    # a table written before the model and control columns existed, with empty gates
    old = {"notebook": "01", "claim": "old", "paper": "p", "effect": 1.0, "ci_low": 0.5, "ci_high": 1.5, "unit": ""}
    pd.DataFrame([{**old, "verdict": "held", "gate": "", "test": "effect > 0"}]).to_csv(folder / "claims.csv", index=False)
    many = [Claim("03" if i % 2 else "02", f"c{i:02d}", "p", (Test(iv(1, 2)),)) for i in range(40)]
    table = save_claims(many, "smoke")
    csv = pd.read_csv(folder / "claims.csv", dtype={"notebook": str}, keep_default_na=False)
    assert list(csv.columns) == list(COLUMNS) == list(table.columns)
    assert list(csv["claim"]) == ["old"] + [f"c{i:02d}" for i in range(0, 40, 2)] + [f"c{i:02d}" for i in range(1, 40, 2)]
    assert list(table.index) == list(range(41))
    assert csv.loc[0, "model"] == "" and csv.loc[0, "gate"] == ""
    md = (folder / "claims.md").read_text()
    assert "nan" not in md
    lines = md.splitlines()
    assert lines[2] == (
        "41 held, 0 not held, 0 inside noise, 0 not testable (of 41). Effects with their 95% "
        "intervals: over the test set's independent units, and over the training seeds too where trained models "
        "are compared (the `test` column says which); each row prints the test that decided it; see docs/claims.md."
    )
    assert lines[4].startswith("| notebook ") and any(line.startswith("| 02 ") for line in lines)
    assert any(line.startswith("| 01 ") and "| +1 [+0.5, +1.5] |" in line for line in lines)


def test_report_names_the_model_behind_claims_that_name_none(tmp_path, monkeypatch):
    pytest.importorskip("IPython")
    from prismlib.claims import report

    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    shown = report(
        [Claim("04", "own", "p", (Test(iv(1, 2)),), model="X"), Claim("04", "none", "p", (Test(iv(1, 2)),))], "smoke", model="MiniLM"
    )
    csv = pd.read_csv(tmp_path / "figures/smoke/claims.csv", dtype={"notebook": str}, keep_default_na=False)
    assert list(csv["model"]) == ["X", "MiniLM"]
    assert "own<br>model: X" in shown.data and "none<br>model: MiniLM" in shown.data


# ----------------------------------------------------------------------------- effect stability


def test_effect_stability_gate():
    later = Interval(-3.0, -4.0, -2.0, 800)
    assert effect_stability_gate("d", later, earlier=-3.4, margin=1.0).passed  # moved 0.4 <= 0.5
    assert effect_stability_gate("d", later, earlier=-2.2, margin=0.1).passed  # inside the final interval
    gate = effect_stability_gate("d", later, earlier=-6.0, margin=3.0)  # moved 3.0 > 1.5, outside
    assert not gate.passed and "moved +3.00" in gate.detail and "not converged" in gate.detail
    assert claim_margin(-3.0) == 3.0 and claim_margin(-3.0, threshold=1.0) == 4.0
    assert claim_margin(-3.0, stated=2.5) == 2.5


def test_effect_stability_gate_boundaries_and_detail():
    later = Interval(-3.0, -3.2, -2.8, 800)
    edge = effect_stability_gate("d", later, earlier=-3.5, margin=1.0)  # moved exactly half the margin
    assert edge.passed and edge.name == "stable: d moved <= half its margin since half the budget"
    assert edge.detail == (
        "contrast -3.50 at half the budget -> -3.00 [-3.20, -2.80] at the end: moved +0.50, allowed 0.50 "
        "(half the margin 1.00) or inside the final interval"
    )
    assert not effect_stability_gate("d", later, earlier=-3.6, margin=1.0).passed  # 0.6 > 0.5, outside
    assert not effect_stability_gate("d", later, earlier=-2.4, margin=1.0).passed  # moved -0.6, outside
    assert effect_stability_gate("d", later, earlier=-3.4, margin=1.0).passed  # small move, outside the interval
    assert effect_stability_gate("d", later, earlier=-3.0, margin=0.0).passed  # a margin of 0 is allowed
    assert effect_stability_gate("d", later, earlier=-3.1, margin=0.5).passed
    gate = effect_stability_gate("d", later, earlier=-3.4, margin=0.2, earlier_at="1.5M tokens")
    assert gate.detail == (
        "not converged: contrast -3.40 at 1.5M tokens -> -3.00 [-3.20, -2.80] at the end: moved +0.40, "
        "allowed 0.10 (half the margin 0.20) or inside the final interval"
    )
    for earlier, margin in ((np.inf, 1.0), (-3.0, np.nan), (-3.0, -0.1)):
        with pytest.raises(ValueError, match="finite"):
            effect_stability_gate("d", later, earlier, margin)
    assert claim_margin(1.0, stated=-2.5) == 2.5


def test_the_stability_margin_is_the_distance_to_the_threshold_or_the_stated_margin():
    iv = Interval(-3.0, -4.0, -2.0, 20)
    assert stability_margin(Test(iv, -1, 0.0)) == 3.0
    assert stability_margin(Test(iv, -1, 2.0)) == 5.0
    assert stability_margin(Test.equivalence(iv, 4.0)) == 4.0


def test_a_claim_without_an_effect_is_stored_empty_and_read_back_as_nan(tmp_path, monkeypatch):
    """A not-testable claim whose effect has no scale (NaN) must not break the merge of every
    later notebook's claims (its CSV cell is empty, which once came back as a string)."""
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    nan = Interval(float("nan"), float("nan"), float("nan"), 20)
    none = Claim("02", "no scale", "p", (Test(nan),), (Gate("ORIG probe beats the majority class", False),))
    assert none.verdict == "not testable" and "| —<br>" in render([none])
    save_claims([none], "smoke")
    table = save_claims([Claim("01", "exact", "p", (Test(iv(1, 2)),))], "smoke")  # another notebook merges after it
    assert list(table["notebook"]) == ["01", "02"] and np.isnan(table.loc[1, ["effect", "ci_low", "ci_high"]].astype(float)).all()
    assert table.loc[0, "effect"] == pytest.approx(iv(1, 2).effect)
    md = (tmp_path / "figures/smoke/claims.md").read_text()
    assert "| 02 | not testable | no scale | — |" in md and "nan" not in md
    again = save_claims([Claim("03", "x", "p", (Test(iv(1, 2)),))], "smoke")
    assert len(again) == 3 and np.isnan(float(again.loc[1, "effect"]))


def test_a_table_that_is_not_a_claims_table_is_refused_naming_the_file_and_the_fix(tmp_path):
    csv = tmp_path / "cpu" / "claims.csv"
    csv.parent.mkdir()
    csv.write_text("notebook,claim\n01,x\n")
    with pytest.raises(ValueError, match=r"claims.csv is not a claims table: it has no verdict column; .*PROFILE=cpu"):
        read_claims(csv)
    csv.write_text("notebook,claim,verdict\n01,x,held\n")  # an older table: the missing columns read empty
    table = read_claims(csv)
    assert list(table.columns) == list(COLUMNS) and np.isnan(table.loc[0, "effect"]) and table.loc[0, "gate"] == ""


def test_effect_parts_keep_what_a_claim_has():
    assert effect_parts(0.4, 0.1, 0.7, "ppl") == ("+0.4", "[+0.1, +0.7]", "ppl")
    assert effect_parts(0.4, float("nan"), float("nan"), "") == ("+0.4",)
    assert effect_parts(float("nan"), 0.1, 0.7, "ppl") == ("—",)
