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

pytestmark = pytest.mark.skipif(
    find_chromium() is None, reason="chromium is not installed (`apt-get install -y chromium`; .ci/run installs it)"
)


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
