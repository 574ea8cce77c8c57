"""The committed cpu claims table: every decided row's printed interval gives its verdict
(issue 75: a reader checks every verdict from the numbers printed beside it)."""

from __future__ import annotations

from pathlib import Path

from prismlib.claims import disagreeing, read_claims

CSV = Path(__file__).resolve().parents[2] / "figures" / "cpu" / "claims.csv"


def test_every_decided_row_of_the_committed_table_agrees_with_its_printed_interval() -> None:
    checked = read_claims(CSV)
    decided = checked[checked["verdict"].isin(["held", "not held", "inside noise"])]
    assert len(decided) >= 30  # the committed run decides most rows; an empty table checks nothing
    assert (decided["side"] != "").all(), "a decided row without its deciding test's side: re-run its notebook"
    bad = disagreeing(checked)
    assert bad.empty, "rows whose printed interval contradicts their verdict:\n" + "\n".join(
        f"{r.notebook} {r.verdict}: {r.claim[:80]} [{r.ci_low:+.3g}, {r.ci_high:+.3g}] {r.side} {r.threshold}" for r in bad.itertuples()
    )
