"""The report's flame graphs in a real headless browser (Debian's chromium), from ``file://``:
the graphs are drawn by the report's own script under its Content-Security-Policy (no network,
no other script), with the user's function names on the frames, visible in the screenshot.

Skipped, with the reason shown, only when no chromium can be found.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from steadybench.profiles.model import SAMPLES, Frame, Profile
from steadybench.profiles.pair import compare_profiles

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not found (apt-get install "
                                "-y chromium; .ci/run installs it)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
USER = ("convert_orders_to_rows", "clean_every_text_value", "write_csv_file")


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=90, check=False)


def _profiles() -> dict:
    top = Frame(USER[0], "/home/u/convert_b.py", 60)
    clean = Frame(USER[1], "/home/u/convert_b.py", 40)
    write = Frame(USER[2], "/home/u/convert_b.py", 20)
    a = Profile(SAMPLES, "s", "test", (((top,), 100.0), ((top, write), 300.0)), 10, 0.04,
                sample_count=400)
    b = Profile(SAMPLES, "s", "test", (((top,), 100.0), ((top, write), 300.0),
                                       ((top, clean), 400.0)), 10, 0.08, sample_count=800)
    return compare_profiles({"A": a, "B": b}).to_dict()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from steadybench.output.report import write_report
    from test_plots_support import ab_document

    doc = ab_document()
    doc["profiles"] = _profiles()
    out = tmp_path_factory.mktemp("profile-report") / "report.html"
    write_report([], out, ab=[doc])
    return out


@pytest.mark.slow
def test_flame_graphs_render_from_file_url(report: Path, tmp_path: Path) -> None:
    page = report.read_text(encoding="utf-8")
    # nothing to fetch: no URL in any src/href, a policy that forbids fetching and lets the
    # flame graphs' script (by its hash) run and no other
    assert not re.search(r'\s(?:src|href)="(?!data:|#)', page)
    assert "default-src 'none'" in html.unescape(page)
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", html.unescape(page))
    assert "script-src 'unsafe-inline'" not in html.unescape(page)
    # 1. the DOM after load, the page exactly as written: frames drawn by the report's script
    proc = _chromium(tmp_path / "p1", "--virtual-time-budget=5000", "--dump-dom",
                     report.resolve().as_uri())
    frames = re.findall(r'<div class="sb-frame"[^>]*title="([^"]*)"[^>]*>([^<]*)</div>',
                        proc.stdout)
    assert frames, f"no flame graph frame drawn: {proc.stderr[-2000:]}"
    labels = " ".join(html.unescape(text) for _, text in frames)
    for name in USER:
        assert name in labels, name
    tips = [html.unescape(t) for t, _ in frames]
    # hover text: function, file:line, share of the benchmark
    assert any(t.startswith(f"{USER[1]}  convert_b.py:40\n50.0 % of the benchmark")
               for t in tips), tips[:6]
    # the differential graph: B's new function is drawn as grown from A
    assert any(t.startswith(USER[1]) and "A 0 → B 40.0 ms (+40.0 ms)" in t for t in tips), tips
    # 2. the screenshot: the flame colours are on the page (not blank, not unstyled)
    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path / "p2", "--window-size=1280,2600", "--virtual-time-budget=5000",
                     f"--screenshot={shot}", report.resolve().as_uri())
    assert shot.exists(), proc.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    red = np.array([230, 35, 35]) / 255.0  # a frame new in B: hsl(0, 80 %, 52 %)
    near_red = (np.abs(pixels - red).max(axis=2) < 0.06).sum()
    assert near_red > 2000, "no differential flame graph visible in the screenshot"
    # 3. the names are visible: a probe copy measures each named frame's drawn box
    probe = report.with_name("probe.html")
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page,
                            count=1).replace("</body>", CHECK + "</body>"), encoding="utf-8")
    proc = _chromium(tmp_path / "p3", "--window-size=1280,1600", "--virtual-time-budget=5000",
                     "--dump-dom", probe.resolve().as_uri())
    found = re.search(r'<pre id="sb-check">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    boxes = json.loads(html.unescape(found.group(1)))
    for name in USER:
        widths = [w for text, w, h in boxes if text.startswith(name) and h > 10]
        assert widths and max(widths) > 150, (name, boxes)


CHECK = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "sb-check";
  out.textContent = JSON.stringify(Array.from(document.querySelectorAll(".sb-frame")).map(
    d => [d.textContent, d.getBoundingClientRect().width, d.getBoundingClientRect().height]));
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.slow
def test_two_profiled_results_files_get_the_difference(tmp_path: Path) -> None:
    from steadybench.model.results import Results
    from steadybench.output.report import write_report
    from test_plots_support import make_case

    pair = _profiles()["profiles"]
    files = []
    for side in ("A", "B"):
        case = make_case("convert")
        files.append(Results(suite=f"run {side}", cases=[case],
                             context={"profiles": {case.label: pair[side]}}))
    out = write_report(files, tmp_path / "r.html")
    page = out.read_text(encoding="utf-8")
    # the comparison section: the ranked change and the differential graph; each input its own
    assert page.count("Differential flame graph") == 1
    assert page.count('class="sb-flame"') == 5
    assert f"<td>{USER[1]}</td>" in page
