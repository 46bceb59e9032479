"""``steadybench history publish``: the static dashboard.

A store of 3 machines × 30 benchmarks × 50 commits (a real git repository of 50 commits, so the
pages show their messages), with HTML in benchmark names, parameters, branches and commit
messages. Checked: the files and their escaping; the site in headless Chromium from ``file://``
(the index lists 30 benchmarks and filters them, a benchmark page draws its lines and change
points, nothing is fetched from a network: every resource the pages load is a ``file:`` URL),
with screenshots checked for the plotted colours. Browser tests are skipped, with the reason,
without chromium.
"""

from __future__ import annotations

import html
import json
import math
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.history.git import GitInfo
from steadybench.history.publish.collect import collect, group_of
from steadybench.history.publish.site import MARKER, link_template, write_site
from steadybench.history.store import HistoryStore
from steadybench.history.thresholds import Thresholds

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not found (apt-get install -y chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

PAYLOAD = '<img src=x onerror="window.PWNED=1">'
MACHINES, BENCHMARKS, COMMITS = 3, 30, 50
SLOW = {0, 7, 14, 21, 28}  # benchmarks 20 % slower from commit STEP on
STEP = COMMITS // 2  # the middle: history regressions' noise model leaves the step out (#25)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(store, repository): 50 commits, each recorded on 3 machines with 30 benchmarks."""
    base = tmp_path_factory.mktemp("publish")
    repo = base / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shas = []
    for c in range(COMMITS):
        (repo / "f.txt").write_text(f"{c}\n")
        _git(repo, "add", "-A")
        message = f"commit {c}" + (f" {PAYLOAD}" if c == COMMITS - 1 else "")
        _git(repo, "commit", "-qm", message)
        shas.append(_git(repo, "rev-parse", "HEAD").strip())
    rng = random.Random(5)
    store_path = base / "history.sqlite"
    old = os.environ.get("STEADYBENCH_MACHINE")
    try:
        with HistoryStore.open(str(store_path)) as store:
            for c, sha in enumerate(shas):
                for m in range(MACHINES):
                    os.environ["STEADYBENCH_MACHINE"] = f"machine-{m}"
                    benches = []
                    for b in range(BENCHMARKS):
                        level = 1e-3 * (1 + b / 10) * (1.2 if b in SLOW and c >= STEP else 1.0)
                        ex = [level * math.exp(rng.gauss(0, 0.01)) for _ in range(4)]
                        name = f"g{b % 3}.py::bench_{b}" + (f" {PAYLOAD}" if b == 3 else "")
                        params = {"size": PAYLOAD} if b == 5 else {}
                        benches.append({"name": name, "params": params, "unit": "s",
                                        "estimate": {"value": sorted(ex)[2],
                                                     "ci_low": min(ex), "ci_high": max(ex)},
                                        "processes": [{"value": v} for v in ex]})
                    store.add({"benchmarks": benches, "environment": {}},
                              git=GitInfo(commit=sha, branch=f"main{PAYLOAD}", dirty=False),
                              created=f"2026-01-{1 + c // 24:02d}T{c % 24:02d}:00:00")
    finally:
        if old is None:
            os.environ.pop("STEADYBENCH_MACHINE", None)
        else:
            os.environ["STEADYBENCH_MACHINE"] = old
    return store_path, repo


@pytest.fixture(scope="module")
def site(history: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    store_path, repo = history
    out = tmp_path_factory.mktemp("site") / "site"
    with HistoryStore.open(str(store_path)) as store:
        board = collect(store, Thresholds(), repository=repo, workers=1)
    write_site(board, out, repository_url="https://example.org/o/r")
    return out


def test_the_site_has_every_page_and_its_data(site: Path):
    assert (site / MARKER).exists()
    pages = sorted((site / "b").glob("*.html"))
    assert len(pages) == BENCHMARKS
    assert len(list((site / "data").glob("b*.js"))) == BENCHMARKS
    for asset in ("uPlot.iife.min.js", "uPlot.LICENSE", "bench.js", "index.js"):
        assert (site / "assets" / asset).stat().st_size > 0
    assert "MIT" in (site / "assets" / "uPlot.LICENSE").read_text()
    index = (site / "index.html").read_text()
    assert index.count("<tr data-name=") == BENCHMARKS * MACHINES
    assert index.count('class="regressed"') == len(SLOW) * MACHINES
    regressions = (site / "regressions.html").read_text()
    assert regressions.count('<a href="b/') == len(SLOW) * MACHINES
    assert "+20." in regressions and "https://example.org/o/r/commit/" in regressions


def test_every_page_escapes_names_messages_and_parameters(site: Path):
    raw = re.compile(r"<img src=x", re.I)
    files = [p for p in site.rglob("*") if p.suffix in (".html", ".js")
             and p.parent.name != "assets"]
    assert len(files) == 2 * BENCHMARKS + 3
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not raw.search(text), path
    index = (site / "index.html").read_text()
    assert html.escape(PAYLOAD, quote=True) in index or "&lt;img src=x" in index
    data = (site / "data" / "commits.js").read_text()
    commits = json.loads(data[data.index("=") + 1:].rstrip().rstrip(";"))
    assert commits[-1][4].endswith(PAYLOAD) and commits[-1][3] == f"main{PAYLOAD}"


def test_nothing_on_a_page_points_at_a_network_but_commit_links(site: Path):
    for path in [*site.rglob("*.html"), *(site / "assets").glob("*.js")]:
        text = path.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", text):
            assert "http:" not in tag and "https:" not in tag and "//" not in tag, tag
        assert "fetch(" not in text and "XMLHttpRequest" not in text, path


def test_change_points_and_links_in_the_data(site: Path):
    for path in sorted((site / "data").glob("b*.js")):
        text = path.read_text()
        doc = json.loads(text[text.index("=") + 1:].rstrip().rstrip(";"))
        slow = int(re.search(r"bench_(\d+)", doc["name"]).group(1)) in SLOW
        assert len(doc["lines"]) == MACHINES
        assert all(len(line["v"]) == len(doc["xs"]) == COMMITS for line in doc["lines"])
        if slow:
            assert {c["at"] for c in doc["changes"]} == {STEP}
            assert all(c["direction"] == "slower" and 0.17 < c["magnitude"] < 0.23
                       for c in doc["changes"])
        assert doc["link"] == "https://example.org/o/r/commit/{commit}"


def test_groups_links_and_refusals(tmp_path: Path):
    assert group_of("tests/bench_io.py::test_read") == "tests/bench_io.py"
    assert group_of("suite.sort") == "suite" and group_of("plain") == ""
    assert link_template("https://github.com/o/r/") == "https://github.com/o/r/commit/{commit}"
    assert link_template("https://x.org/c?id={commit}") == "https://x.org/c?id={commit}"
    with pytest.raises(ConfigurationError):
        link_template("javascript:alert(1)//{commit}")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    assert main(["history", "publish", str(busy), "--history-url",
                 str(tmp_path / "empty.sqlite")]) == 2  # an empty store: nothing to publish


def test_publish_replaces_its_own_site_and_refuses_other_folders(history, tmp_path, capsys):
    store_path, _ = history
    out = tmp_path / "site"
    args = ["history", "publish", str(out), "--history-url", str(store_path), "-j", "2"]
    assert main(args) == 0
    assert "30 benchmarks, 90 series, 50 commits, 15 open regression(s)" in \
        capsys.readouterr().out
    (out / "b" / "stale.html").write_text("old")
    assert main(args) == 0
    assert not (out / "b" / "stale.html").exists()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(["history", "publish", str(other), "--history-url", str(store_path)]) == 2
    assert "not a steadybench site" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "mine"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file")
    assert main(["history", "publish", str(blocker / "site"), "--history-url",
                 str(store_path)]) == 2
    err = capsys.readouterr().err
    assert "cannot write the site" in err and "Traceback" not in err
    assert main(["history", "publish", str(out), "--history-url", str(store_path),
                 "--repo-url", "javascript:alert(1)"]) == 2
    assert "must start with https://" in capsys.readouterr().err


# ---------------------------------------------------------------- in a real browser
CHECKER = """(function () {
  var out = {};
  var rows = Array.prototype.slice.call(document.querySelectorAll("#index tbody tr"));
  if (rows.length) {
    var visible = function () { return rows.filter(function (r) { return !r.hidden; }); };
    out.rows = rows.length;
    out.benchmarks = new Set(rows.map(function (r) {
      return r.querySelector("a").getAttribute("href"); })).size;
    var machine = document.getElementById("f-machine");
    machine.value = "machine-0"; machine.dispatchEvent(new Event("change"));
    out.machine0 = visible().length;
    var regressed = document.getElementById("f-regressed");
    regressed.checked = true; regressed.dispatchEvent(new Event("change"));
    out.machine0Regressed = visible().length;
    machine.value = ""; machine.dispatchEvent(new Event("change"));
    var name = document.getElementById("f-name");
    name.value = "bench_2"; name.dispatchEvent(new Event("input"));
    out.nameAndRegressed = visible().length;
    out.shown = document.getElementById("shown").textContent;
  }
  var chart = document.getElementById("chart");
  if (chart) {
    out.canvases = chart.querySelectorAll("canvas").length;
    out.lines = window.SB_BENCH.lines.length;
    out.changes = window.SB_BENCH.changes.length;
    out.legend = Array.prototype.filter.call(chart.querySelectorAll(".u-legend .u-series"),
      function (r) { return r.style.display !== "none"; }).length;
    out.title = document.getElementById("bench-name").textContent;
    out.tipAtLoad = document.getElementById("tip").hidden ? null
      : document.getElementById("tip").textContent;
    // hover the middle of the chart: the tooltip names the commit
    var plot = window.SB_PLOT;
    plot.setCursor({left: plot.bbox.width / devicePixelRatio / 2, top: 10});
    var tip = document.getElementById("tip");
    out.tip = tip.textContent;
    out.tipShown = !tip.hidden;
  }
  out.images = document.images.length;
  out.pwned = window.PWNED === 1;
  out.rendered = document.body.getAttribute("data-rendered-ms");
  // what the page loads: resource timing (network fetches) and every element that loads
  out.fetched = performance.getEntriesByType("resource").map(function (e) { return e.name; });
  out.resources = Array.prototype.map.call(
    document.querySelectorAll("script[src], link[rel=stylesheet], img, iframe, object, embed"),
    function (e) { return e.src || e.href || e.data || ""; });
  var pre = document.createElement("pre");
  pre.id = "sb-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _probe(page: Path, profile: Path, fragment: str = "") -> dict:
    """What the browser made of ``page``: a copy beside it that also loads the checker (an
    external script: the pages' Content-Security-Policy forbids inline ones)."""
    checker = page.parent / "sb-checker.js"
    checker.write_text(CHECKER)
    copy = page.with_name(page.stem + "-probe.html")
    copy.write_text(page.read_text().replace("</body>",
                                             '<script src="sb-checker.js"></script></body>'))
    try:
        proc = _chromium(profile, "--window-size=1280,1000", "--dump-dom",
                         copy.as_uri() + fragment)
    finally:
        copy.unlink()
        checker.unlink()
    found = re.search(r'<pre id="sb-check">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"checker did not run: {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _shot(page: Path, path: Path, profile: Path) -> np.ndarray:
    from matplotlib import image as mpimg

    proc = _chromium(profile, "--window-size=1280,1000", f"--screenshot={path}", page.as_uri())
    assert path.exists(), proc.stderr[-2000:]
    return mpimg.imread(path)[..., :3]


def _near(pixels: np.ndarray, hex_colour: str, tolerance: float = 0.1) -> int:
    colour = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0
    return int((np.abs(pixels - colour).max(axis=2) < tolerance).sum())


def _shots_dir(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("STEADYBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


@needs_chromium
def test_the_index_lists_and_filters_every_benchmark_in_chromium(site: Path, tmp_path: Path):
    result = _probe(site / "index.html", tmp_path / "p1")
    assert result["rows"] == BENCHMARKS * MACHINES
    assert result["benchmarks"] == BENCHMARKS
    assert result["machine0"] == BENCHMARKS
    assert result["machine0Regressed"] == len(SLOW)
    assert result["nameAndRegressed"] == 3 * 2  # bench_21 and bench_28 on each machine
    assert result["images"] == 0 and result["pwned"] is False
    assert result["rendered"] is not None
    assert result["resources"] and all(r.startswith("file:") for r in result["resources"])
    assert result["fetched"] == []  # Chromium times every network fetch; none happened
    pixels = _shot(site / "index.html", _shots_dir(tmp_path) / "dashboard-index.png",
                   tmp_path / "p2")
    assert float(pixels.std()) > 0.05, "blank screenshot"
    assert _near(pixels, "#1f77b4") > 200, "no sparkline drawn"
    assert _near(pixels, "#b42318", 0.15) > 20, "no regressed badge"


@needs_chromium
def test_a_benchmark_page_draws_its_lines_and_change_points(site: Path, tmp_path: Path):
    page = next(p for p in sorted((site / "b").glob("*.html"))
                if "g0.py::bench_0<" in p.read_text())
    result = _probe(page, tmp_path / "p1")
    assert result["title"] == "g0.py::bench_0"
    assert result["canvases"] >= 1
    assert result["lines"] == MACHINES and result["legend"] == MACHINES + 1  # + the x value
    assert result["changes"] == MACHINES
    assert result["tipShown"] and "commit " in result["tip"]
    assert f"(main{PAYLOAD})" in result["tip"]  # the branch, as text
    assert "click: open the commit" in result["tip"] and "ms" in result["tip"]
    assert result["pwned"] is False and result["images"] == 0
    names = result["resources"]
    assert any(n.endswith("uPlot.iife.min.js") for n in names)
    assert all(n.startswith("file:") for n in names), names
    assert result["fetched"] == []
    pixels = _shot(page, _shots_dir(tmp_path) / "dashboard-benchmark.png", tmp_path / "p2")
    assert float(pixels.std()) > 0.05, "blank screenshot"
    for colour in ("#1f77b4", "#d62728", "#2ca02c"):  # the three machines' lines
        assert _near(pixels, colour) > 100, colour
    assert _near(pixels, "#d92d20", 0.08) > 30, "no change point drawn"


@needs_chromium
def test_names_with_html_stay_text_in_chromium(site: Path, tmp_path: Path):
    page = next(p for p in sorted((site / "b").glob("*.html")) if "bench_3 " in p.read_text())
    result = _probe(page, tmp_path / "p1")
    assert result["title"] == f"g0.py::bench_3 {PAYLOAD}"
    assert result["images"] == 0 and result["pwned"] is False
    result = _probe(site / "regressions.html", tmp_path / "p2")
    assert result["images"] == 0 and result["pwned"] is False


@needs_chromium
def test_a_regression_links_to_its_commit_on_the_chart(site: Path, tmp_path: Path):
    """The regressions page links each row to its benchmark page at the commit where the
    slowdown starts (``#commit=SHA``), and that page opens with the commit's details shown."""
    text = (site / "regressions.html").read_text()
    links = re.findall(r'href="b/(\d+)\.html#commit=([0-9a-f]{40})"', text)
    assert len(links) == len(SLOW) * MACHINES
    slug, sha = links[0]
    result = _probe(site / "b" / f"{slug}.html", tmp_path / "p1", f"#commit={sha[:12]}")
    assert result["tipAtLoad"] is not None and result["tipAtLoad"].startswith(sha)
    result = _probe(site / "b" / f"{slug}.html", tmp_path / "p2")
    assert result["tipAtLoad"] is None  # without a fragment, nothing is selected
