"""Reports in a real headless browser (Debian's chromium): the demo's report renders its
summary table and every image; a report of every kind of result (run, exec, iters, sweep,
compare, ab) shows its summary and relative comparison near the top, with no broken image and
no error. Screenshots are kept in ``$STEADYBENCH_SCREENSHOTS`` when it is set (to look at
them), else in the test's temporary folder.

Skipped, with the reason shown, only when no chromium can be found (``.ci/run`` installs it).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from steadybench.cli import main

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not found (apt-get install -y chromium; .ci/run installs it)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

# Run after load in a copy of the report: record what the browser made of the page.
CHECKER = """
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const result = {
    images: imgs.length,
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt),
    summaryRows: document.querySelectorAll("table.summary tbody tr").length,
    summaryVisible: (document.querySelector("table.summary") || {offsetHeight: 0}).offsetHeight,
  };
  const card = document.getElementById("summary");
  if (card) {
    const box = card.getBoundingClientRect();
    result.cardTop = box.top;
    result.cardHeight = box.height;
    result.cardText = card.innerText;
  }
  result.envOpen = (document.getElementById("environment") || {open: null}).open;
  result.bodyText = document.body.innerText;
  const out = document.createElement("pre");
  out.id = "sb-check";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
"""


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=90, check=False)


def _load(report: Path, profile: Path, shot: Path, height: int) -> dict:
    """One chromium start: a screenshot of a copy of ``report`` with :data:`CHECKER` added,
    and what the checker found. The copy keeps the report's Content-Security-Policy (every
    fetch forbidden, images from ``data:`` only) and allows the checker by its hash, so the
    screenshot and the broken-image count are of the page as the policy lets it load."""
    page = report.read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(CHECKER.encode()).digest()).decode()
    page, allowed = re.subn(r"script-src ", f"script-src 'sha256-{digest}' ", page, count=1)
    assert allowed == 1, "the report has no script-src in its Content-Security-Policy"
    page = page.replace("</body>", f"<script>{CHECKER}</script></body>")
    probe = report.with_name(report.stem + "-probe.html")
    probe.write_text(page, encoding="utf-8")
    proc = _chromium(profile, f"--window-size=1280,{height}", f"--screenshot={shot}",
                     "--virtual-time-budget=10000", "--dump-dom", probe.resolve().as_uri())
    os.unlink(probe)
    assert shot.exists(), proc.stderr[-2000:]
    found = re.search(r'<pre id="sb-check">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"checker did not run: {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "steadybench-demo"
    # the shortest budget of test_cli_run's demo: the same 10 cases and 13 figures (the
    # figures draw every run, so fewer runs only make them lighter)
    assert main(["demo", "--out", str(out), "--max-time", "0.1", "-p", "2"]) == 0
    report = out / "report.html"
    assert report.exists(), "steadybench demo did not write report.html"
    return report


@pytest.mark.slow
def test_demo_report_renders_in_chromium(demo_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = _load(demo_report, tmp_path / "profile", shot, 2400)
    # the screenshot is not blank and shows plot colours
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[0] == 2400 and pixels.shape[1] == 1280
    assert float(pixels.std()) > 0.05, "blank screenshot"
    blue = np.array([0x1F, 0x77, 0xB4]) / 255.0  # the colour of the plotted runs
    near_blue = (np.abs(pixels - blue).max(axis=2) < 0.08).sum()
    assert near_blue > 500, "no plot visible in the screenshot"
    # every image loaded, one at least per case, and the summary table is there
    results = json.loads((demo_report.parent / "results.json").read_text())
    cases = len(results["benchmarks"])
    assert result["broken"] == []
    assert result["images"] >= cases + 1  # at least one per case and the overview
    assert result["summaryRows"] == cases and result["summaryVisible"] > 50


# ---------------------------------------------------------------- a report of every kind
@pytest.mark.parametrize("kind", ["run", "exec", "iters", "sweep", "compare", "ab"])
@pytest.mark.slow
def test_every_kind_of_report_answers_at_the_top(kind: str, tmp_path: Path) -> None:
    from steadybench.output.report import write_report
    from steadybench.output.results_io import results_to_json
    from test_plots_support import kind_inputs

    spec = kind_inputs()[kind]
    comparison = None
    if spec.get("compare"):
        from steadybench.compare import CompareOptions, compare_files

        for name, res in zip(("base.json", "new.json"), spec["results"]):
            (tmp_path / name).write_text(results_to_json(res))
        comparison, _, _ = compare_files(str(tmp_path / "base.json"),
                                         str(tmp_path / "new.json"),
                                         CompareOptions(resamples=200))
    report = write_report(spec["results"], tmp_path / f"{kind}.html", comparison=comparison,
                          ab=spec.get("ab"))
    shots = Path(os.environ.get("STEADYBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f"report-{kind}.png"
    result = _load(report, tmp_path / "profile", shot, 1600)
    pixels = mpimg.imread(shot)[..., :3]
    assert float(pixels.std()) > 0.05, "blank screenshot"

    assert result["broken"] == []
    # the answer first: the summary card starts near the top and holds the comparison
    assert 0 <= result["cardTop"] < 300 and result["cardHeight"] > 40
    assert spec["phrase"] in result["cardText"], result["cardText"]
    assert result["envOpen"] is False  # the environment is collapsed
    for bad in ("Traceback", "internal error", "p = 0 ", "undefined"):
        assert bad not in result["bodyText"], bad
