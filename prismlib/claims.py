"""The computed "which claims held" cells at the end of every notebook.

A claim is a sentence and a verdict computed from the notebook's own results.  When a
claim compares two measured means, :func:`compare` also says whether the difference
is inside the noise: no larger than the larger of the two standard deviations (over
probe runs or seeds), a rough rule that keeps a difference of a few runs from being
read as a finding.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """A claim of the paper and what our run says about it."""

    text: str
    held: bool
    inside_noise: bool = False

    @property
    def verdict(self) -> str:
        if self.inside_noise:
            return "held, inside the noise" if self.held else "did not hold, inside the noise"
        return "held" if self.held else "did not hold"


def compare(a: float, b: float, sd_a: float = 0.0, sd_b: float = 0.0) -> tuple[float, bool]:
    """``(a - b, inside_noise)`` where inside the noise means ``|a - b| <= max(sd_a, sd_b)``."""
    diff = a - b
    return diff, abs(diff) <= max(sd_a, sd_b)


def render(claims: list[Claim]) -> str:
    """Markdown bullet list, one line per claim, verdict in bold."""
    return "\n".join(f"- **{c.verdict}**: {c.text}" for c in claims)
