"""A real headless browser (Debian's ``chromium``) looking at the report's pages.

:func:`measure_page` opens a page as a reader would and returns its height in CSS pixels
and the part of it taken by output streams (stdout / stderr boxes of nbconvert's
template); :func:`screenshot` keeps a PNG of a page (a CI artefact).  Both run chromium
offline (no network, no first-run or background services) with a throwaway profile.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)
WIDTH = 1280

# runs in the page after load: the document's height, the streams' (stdout / stderr) and
# the raw TeX left in the visible text, written into an attribute that --dump-dom prints
_PROBE = """<script>
window.addEventListener('load', () => setTimeout(() => {
  const streams = document.querySelectorAll(
    '[data-mime-type="application/vnd.jupyter.stderr"], [data-mime-type="application/vnd.jupyter.stdout"]');
  let s = 0, e = 0;
  streams.forEach(n => { const h = n.getBoundingClientRect().height;
    s += h; if (n.dataset.mimeType.endsWith('stderr')) e += h; });
  const text = document.body.cloneNode(true);
  text.querySelectorAll('pre, code, script, style, .jp-InputArea-editor').forEach(n => n.remove());
  const m = text.textContent.match(/\\$[^$]{1,80}\\$/g) || [];
  const cols = [...document.querySelectorAll('table.claims th')].map(
    n => [Math.round(n.getBoundingClientRect().width), n.textContent.trim()]);
  document.body.setAttribute('data-probe', JSON.stringify({
    height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
    streams: s, stderr: e, tex: m.slice(0, 5), columns: cols}));
}, 200));
</script>"""


MIN_COLUMN = 60
"""CSS px below which a column of the claims table is too narrow to read."""


@dataclass(frozen=True)
class PageMetrics:
    """What a reader sees of a page: its height, width and the output streams' share, in CSS
    px at a window ``window`` px wide (default :data:`WIDTH`), up to five snippets of raw
    ``$...$`` TeX, and the claims table's columns ``(width, header)``."""

    height: int
    streams: int
    stderr: int
    tex: tuple[str, ...]
    width: int = WIDTH
    columns: tuple[tuple[int, str], ...] = ()
    window: int = WIDTH

    def problems(self, name: str) -> list[str]:
        """What makes the page hard to read: wider than the window, a squeezed claims column."""
        out = [f"{name} is {self.width} px wide in a {self.window} px window"] if self.width > self.window else []
        out += [f"{name}: the claims column '{h}' is {w} px wide (< {MIN_COLUMN})" for w, h in self.columns if w < MIN_COLUMN]
        return out


def find_chromium() -> str | None:
    """The path of ``chromium`` (or ``chromium-browser``, ``google-chrome``), else ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args: list[str], timeout: float) -> str:
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("chromium is not installed: `apt-get install -y chromium` (Debian)")
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


def measure_page(page: str | Path, timeout: float = 120, width: int = WIDTH) -> PageMetrics:
    """Open ``page`` (a local HTML file) in headless chromium ``width`` px wide and measure it."""
    import json

    page = Path(page).resolve()
    probe = page.with_name(f".probe-{page.name}")
    html = page.read_text(encoding="utf-8")
    probe.write_text(html.replace("</body>", _PROBE + "</body>", 1) if "</body>" in html else html + _PROBE)
    try:
        dom = _run([f"--window-size={width},900", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], timeout)
    finally:
        probe.unlink(missing_ok=True)
    found = re.search(r"data-probe=\"([^\"]*)\"", dom)
    if not found:
        raise RuntimeError(f"chromium did not run the measuring script on {page.name}")
    values = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    columns = tuple((int(w), str(h)) for w, h in values.get("columns", []))
    return PageMetrics(
        int(values["height"]), int(values["streams"]), int(values["stderr"]), tuple(values["tex"]), int(values["width"]), columns, width
    )


FULL_PAGE_MAX = 16_000
"""The tallest screenshot taken (px): a whole page up to this height."""


# headless chromium paints nothing for a scrolled view (``page.html#id`` or a script's
# scrollIntoView gives a blank PNG, even of a plain page): a fragment is shown instead by
# hiding what comes before its element, so that the element opens the view
_SHOW_FRAGMENT = """<script>
(() => { const t = document.getElementById(%s);
  for (let n = t; n && n !== document.body; n = n.parentElement)
    for (let s = n.previousElementSibling; s; s = s.previousElementSibling) s.style.display = 'none';
})();
</script>"""


def screenshot(page: str | Path, png: str | Path, height: int = 2400, timeout: float = 120) -> Path:
    """A PNG of the top ``height`` px of ``page`` at :data:`WIDTH` px wide (the whole page:
    its measured height, at most :data:`FULL_PAGE_MAX`); for ``page.html#id``, the view a
    reader opening that link sees, the element ``id`` at the top.

    Raises:
        ValueError: ``page`` has no element with that ``id``.
    """
    import json

    png = Path(png).resolve()
    png.parent.mkdir(parents=True, exist_ok=True)
    path, _, fragment = str(page).partition("#")
    target = Path(path).resolve()
    probe = None
    if fragment:
        text = target.read_text(encoding="utf-8")
        if not re.search(rf"""\bid=["']?{re.escape(fragment)}["'\s>]""", text):
            raise ValueError(f"{target.name} has no element with id '{fragment}': link to one of its ids")
        probe = target.with_name(f".shot-{target.name}")
        script = _SHOW_FRAGMENT % json.dumps(fragment)
        probe.write_text(text.replace("</body>", script + "</body>", 1) if "</body>" in text else text + script)
        target = probe
    try:
        _run([f"--window-size={WIDTH},{height}", "--virtual-time-budget=10000", f"--screenshot={png}", target.as_uri()], timeout)
    finally:
        if probe is not None:
            probe.unlink(missing_ok=True)
    return png
