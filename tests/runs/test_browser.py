"""The report as a reader sees it, in a real headless browser (Debian's ``chromium``;
``.ci/run`` installs it): math drawn without network, and pages whose height is content,
not output streams.  Skipped, saying so, where chromium is absent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from prismlib.paths import OUTPUT_ENV
from prismlib.runs.browser import find_chromium, measure_page, screenshot
from prismlib.runs.report import build_report

pytestmark = [
    pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (`apt-get install -y chromium`; .ci/run installs it)"),
    pytest.mark.slow,  # `make test-fast` leaves these out
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("browser")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(OUTPUT_ENV, str(root / "out"))
        yield build_report("smoke", root / "site").parent


@pytest.mark.parametrize("name", ["01_spectral_filters", "02_probing_filtered", "index"])
def test_page_shows_no_raw_tex_and_is_mostly_content(site, name):
    page = site / f"{name}.html"
    m = measure_page(page)
    assert m.tex == (), f"{name}: raw TeX on the page: {m.tex}"
    assert m.height > 1000, f"{name}: page suspiciously short ({m.height} px)"
    assert m.stderr <= 0.05 * m.height, f"{name}: stderr streams take {m.stderr} of {m.height} px"
    assert m.streams <= 0.25 * m.height, f"{name}: output streams take {m.streams} of {m.height} px"


def test_screenshot_of_the_index(site, tmp_path):
    png = screenshot(site / "index.html", tmp_path / "index.png", height=800)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_a_page_wider_than_the_window_or_a_squeezed_claims_column_is_found(tmp_path):
    row = "<tr>" + "".join(f"<td>{'word ' * 40}</td>" for _ in range(6)) + "</tr>"
    squeezed = tmp_path / "squeezed.html"  # the claims table's layout with one column given 2% of the page
    squeezed.write_text(
        "<html><body><table class='claims' style='table-layout:fixed;width:100%'><colgroup><col style='width:2%'>"
        + "<col style='width:19.6%'>" * 5
        + "</colgroup><tr>"
        + "".join(f"<th>h{i}</th>" for i in range(6))
        + "</tr>"
        + row
        + "</table></body></html>"
    )
    m = measure_page(squeezed)
    assert [h for _, h in m.columns] == [f"h{i}" for i in range(6)] and m.width <= 1280
    assert m.problems("squeezed.html") == [f"squeezed.html: the claims column 'h0' is {m.columns[0][0]} px wide (< 60)"]
    wide = tmp_path / "wide.html"
    wide.write_text("<html><body><div style='width:3000px'>wide</div></body></html>")
    w = measure_page(wide)
    assert w.width >= 3000 and w.problems("wide.html") == [f"wide.html is {w.width} px wide in a 1280 px window"]


@pytest.mark.parametrize("width", [1000, 1400])
def test_the_smoke_pages_are_readable_and_never_scroll_sideways(site, width):
    for name in ("index", "03_prism_layer", "05_chrono_init"):  # issue 77: the index scrolled sideways at 1400 px
        m = measure_page(site / f"{name}.html", width=width)
        assert m.window == width and m.problems(name) == []


def _drawn(png: Path) -> float:
    """The share of a screenshot's pixels that are not white."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("L"))
    return float((pixels < 250).mean())


def test_a_link_to_a_fragment_shows_its_section(site, tmp_path):
    """Headless chromium paints a scrolled view blank (``index.html#claims`` was a white PNG):
    the section a link names is what its screenshot shows."""
    whole = _drawn(screenshot(site / "index.html", tmp_path / "index.png", height=800))
    claims = _drawn(screenshot(f"{site / 'index.html'}#claims", tmp_path / "claims.png", height=800))
    assert whole > 0.01 and claims > 0.01, (whole, claims)
    with pytest.raises(ValueError, match="has no element with id 'nowhere'"):
        screenshot(f"{site / 'index.html'}#nowhere", tmp_path / "x.png")
    assert sorted(p.name for p in site.glob(".shot-*")) == []
