"""Verdicts and the claims table (prismlib.claims)."""

from __future__ import annotations

import pandas as pd
import pytest

from prismlib.claims import VERDICTS, Claim, Gate, Test, render, save_claims
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
    assert row["gate"] == "failed: probe beats majority (1% vs 5%)" and row["verdict"] in VERDICTS
    # the weakest test is the one reported
    c = Claim("02", "c", "p", (Test(iv(1, 2), label="a"), Test(iv(0.5, 3), label="b")))
    assert c.row()["test"].startswith("b > 0") and c.row()["ci_low"] == 0.5
    with pytest.raises(ValueError, match="no test"):
        Claim("02", "c", "p", ())
    with pytest.raises(ValueError, match="sign"):
        Test(iv(1, 2), sign=0)


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


def test_render_is_a_markdown_table():
    text = render([Claim("02", "a | b", "p", (Test(iv(1, 2)),))])
    lines = text.splitlines()
    assert lines[0].startswith("| verdict |") and "**held**" in lines[2] and "a \\| b" in lines[2]


def test_gate_not_below():
    assert Gate.not_below("g", iv(-1, 1)).passed and Gate.not_below("g", iv(1, 2)).passed
    assert not Gate.not_below("g", iv(-2, -1)).passed
