"""Write the dashboard: a static site that works from ``file://`` and from any static host.

Layout of the output directory::

    index.html          every series: latest value, change vs previous and baseline, sparkline
    regressions.html    open change points, newest first
    b/NNNN.html         one page per benchmark (its chart, change points and lines)
    data/commits.js     the commits of the x axis (loaded by <script>: no fetch, so file:// works)
    data/bNNNN.js       one benchmark's lines and change points
    assets/             uPlot (MIT, vendored with its licence), the style sheet and two scripts

Pages are rendered by Jinja2 with autoescaping, and the data files are JSON (ASCII, with ``<``,
``>`` and ``&`` escaped) assigned to a global, so a name, message or parameter holding HTML
shows as text. Every page forbids network access by its Content-Security-Policy (scripts and
styles from the site itself only). The site is written to a temporary directory beside the
destination and moved into place, so an interrupted publish leaves the previous site whole.
"""

from __future__ import annotations

import html
import json
import math
import os
import shutil
import tempfile
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...output.format import format_value
from .collect import Dashboard, Page, Series

#: marks a directory as a steadybench site (only such a directory is ever replaced)
MARKER = ".steadybench-site"
ASSETS = ("uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE", "dashboard.css", "index.js",
          "bench.js")
#: points in an index sparkline (the newest)
SPARK_POINTS = 60


def commit_link(template: str | None, sha: str | None) -> str | None:
    """The address of a commit: ``template`` with ``{commit}`` replaced, or a repository URL
    followed by ``/commit/SHA`` (GitHub, GitLab, Gitea, Bitbucket's layout)."""
    if not template or not sha:
        return None
    return template.replace("{commit}", sha)


def link_template(repository_url: str | None) -> str | None:
    """A checked link template from ``--repo-url`` (http or https only)."""
    if not repository_url:
        return None
    url = repository_url.strip()
    if not url.lower().startswith(("https://", "http://")):
        raise ConfigurationError(f"repository URL {repository_url!r}: must start with https:// "
                                 "or http://")
    return url if "{commit}" in url else url.rstrip("/") + "/commit/{commit}"


def _scale(values: list[float], unit: str) -> tuple[float, str]:
    if unit != "s" or not values:
        return 1.0, unit
    top = max(values)
    return next(((f, s) for f, s in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")) if top * f < 1000),
                (1.0, "s"))


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1%}"


def _direction(value: float | None) -> str:
    if value is None or abs(value) < 0.005:
        return ""
    return "up" if value > 0 else "down"


def sparkline_svg(values: list[float], width: int = 120, height: int = 24) -> str:
    """A small inline SVG polyline of ``values`` (numbers only: nothing to escape)."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = width / max(1, len(values) - 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (v - low) / span * (height - 4):.1f}"
                      for i, v in enumerate(values))
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} '
            f'{height}" role="img" aria-label="trend"><polyline fill="none" stroke="#1f77b4" '
            f'stroke-width="1.2" points="{points}"/></svg>')


def _js(name: str, data: Any) -> str:
    """``window.NAME = <JSON>;`` safe in any context (no raw <, >, & or line separators)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"window.{name} = {text};\n"


def _round(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def _range_html(series: Series, change: Any, template: str | None) -> str:
    """The change's commit range ``before..after``, each a link when a repository is known;
    escaped here (the templates mark it safe)."""
    parts = []
    for sha, record in ((change.before_commit, change.before_record),
                        (change.after_commit, change.after_record)):
        text = html.escape(sha[:10] if sha else f"#{record}")
        url = commit_link(template, sha)
        parts.append(f'<a href="{html.escape(url)}"><code>{text}</code></a>' if url
                     else f"<code>{text}</code>")
    return "..".join(parts)


def _line_label(series: Series) -> str:
    return " · ".join(x for x in (series.params, series.machine) if x)


def bench_data(page: Page, template: str | None) -> dict[str, Any]:
    """The data file of a benchmark page: lines aligned on the commits they share."""
    xs = sorted({x for s in page.series for x in s.positions})
    where = {x: i for i, x in enumerate(xs)}
    values = [p.value for s in page.series for p in s.points]
    unit = page.series[0].unit
    scale, suffix = _scale(values, unit)
    lines, changes = [], []
    for n, s in enumerate(page.series):
        v: list[float | None] = [None] * len(xs)
        lo: list[float | None] = [None] * len(xs)
        hi: list[float | None] = [None] * len(xs)
        for p, x in zip(s.points, s.positions, strict=True):
            i = where[x]
            v[i] = p.value
            lo[i] = p.ci_low if p.ci_low is not None else p.value
            hi[i] = p.ci_high if p.ci_high is not None else p.value
        lines.append({"label": _line_label(s) or s.label, "machine": s.machine,
                      "params": s.params, "v": v, "lo": lo, "hi": hi})
        for c in s.changes:
            changes.append({"line": n, "at": s.positions[c.index],
                            "before": s.positions[c.index - 1] if c.index > 0 else None,
                            "magnitude": _round(c.magnitude), "confidence": _round(c.confidence),
                            "direction": c.direction})
    return {"name": page.name, "unit": unit, "measure": page.series[0].measure,
            "scale": scale, "suffix": suffix, "link": template, "xs": xs, "lines": lines,
            "changes": changes}


class SiteWriter:
    """Renders the pages of a :class:`~steadybench.history.publish.collect.Dashboard`."""

    def __init__(self, board: Dashboard, template: str | None, baseline: str | None) -> None:
        import jinja2

        self.board = board
        self.template = template
        self.baseline = baseline
        folder = resources.files("steadybench.history.publish") / "templates"
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)),
                                      autoescape=True, trim_blocks=False)
        self.open = [(page, s) for page in board.pages for s in page.series if s.open_change]
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.meta = (f"{len(board.pages)} benchmarks, {len(board.series)} series, "
                     f"{len(board.commits)} commits · generated {when} by steadybench "
                     "history publish")

    def _render(self, name: str, root: str, **context: Any) -> str:
        return self.env.get_template(name).render(root=root, meta=self.meta,
                                                  open_count=len(self.open),
                                                  confidence=f"{self.board.confidence:.0%}",
                                                  **context)

    def write(self, out: Path, workers: int = 1) -> None:
        """Every file of the site into ``out`` (the pages in ``workers`` processes)."""
        (out / "b").mkdir(parents=True)
        (out / "data").mkdir()
        (out / "assets").mkdir()
        assets = resources.files("steadybench.history.publish") / "assets"
        for name in ASSETS:
            (out / "assets" / name).write_bytes((assets / name).read_bytes())
        (out / MARKER).write_text("written by steadybench history publish; the whole "
                                  "directory is replaced on the next publish\n")
        (out / "data" / "commits.js").write_text(_js("SB_COMMITS", [
            [c.key, c.sha, c.date, c.branch, c.message] for c in self.board.commits]),
            encoding="ascii")
        from .pool import fork_map

        fork_map(lambda i: self._write_page(out, self.board.pages[i]), len(self.board.pages),
                 workers)
        (out / "index.html").write_text(self._index(), encoding="utf-8")
        (out / "regressions.html").write_text(self._regressions(), encoding="utf-8")

    def _write_page(self, out: Path, page: Page) -> None:
        (out / "data" / f"b{page.slug}.js").write_text(
            _js("SB_BENCH", bench_data(page, self.template)), encoding="ascii")
        (out / "b" / f"{page.slug}.html").write_text(self._page(page), encoding="utf-8")

    def _value(self, s: Series) -> str:
        return format_value(s.latest.value, s.unit)

    def _index(self) -> str:
        rows = []
        for page in self.board.pages:
            for s in page.series:
                prev, base = s.vs_previous, s.vs_baseline
                c = s.open_change
                rows.append({
                    "slug": page.slug, "page": page.name, "params": s.params,
                    "machine": s.machine, "group": s.group, "measure": s.measure,
                    "search": f"{page.name} {s.params}".lower(),
                    "latest": self._value(s), "prev": _percent(prev),
                    "prev_class": _direction(prev), "base": _percent(base),
                    "base_class": _direction(base),
                    "spark": sparkline_svg([p.value for p in s.points[-SPARK_POINTS:]]),
                    "regressed": f"{c.magnitude:+.1%}" if c else ""})
        groups = sorted({s.group for s in self.board.series})
        machines = sorted({s.machine for s in self.board.series})
        baseline_text = (f"the latest record saved as {self.baseline!r} before it"
                         if self.baseline else "the series' first record")
        return self._render("index.html.j2", "", rows=rows, groups=groups, machines=machines,
                            baseline_text=baseline_text)

    def _page(self, page: Page) -> str:
        from ..changes import confidence_text

        changes = []
        for s in page.series:
            for c in s.changes:
                changes.append({
                    "line": _line_label(s) or s.label, "direction": c.direction,
                    "range": _range_html(s, c, self.template),
                    "magnitude": f"{c.magnitude:+.1%}",
                    "confidence": confidence_text(c.confidence),
                    "medians": f"{format_value(c.before_median, s.unit)} → "
                               f"{format_value(c.after_median, s.unit)}",
                    "threshold": s.threshold})
        lines = [{"params": s.params, "machine": s.machine, "count": len(s.points),
                  "latest": self._value(s), "prev": _percent(s.vs_previous),
                  "base": _percent(s.vs_baseline), "threshold": s.threshold, "note": s.note}
                 for s in page.series]
        return self._render("bench.html.j2", "../", page=page, changes=changes, lines=lines)

    def _regressions(self) -> str:
        from ..changes import confidence_text

        commits = {c.key: c for c in self.board.commits}
        found = sorted(self.open, key=lambda ps: ps[1].open_change.after_record, reverse=True)
        rows = []
        for page, s in found:
            c = s.open_change
            after = commits.get(c.after_commit or f"#{c.after_record}")
            rows.append({"slug": page.slug, "page": page.name, "params": s.params,
                         "commit": c.after_commit or f"#{c.after_record}",
                         "machine": s.machine, "range": _range_html(s, c, self.template),
                         "date": after.date[:19] if after else "",
                         "magnitude": f"{c.magnitude:+.1%}",
                         "confidence": confidence_text(c.confidence),
                         "threshold": s.threshold})
        return self._render("regressions.html.j2", "", rows=rows)


def write_site(board: Dashboard, directory: str | os.PathLike[str], *,
               repository_url: str | None = None, baseline: str | None = None,
               workers: int = 1) -> Path:
    """Write the site into ``directory``, replacing a site published there before (a
    directory that is neither empty nor a steadybench site is refused, never overwritten)."""
    dest = Path(directory)
    if dest.exists():
        if not dest.is_dir():
            raise ConfigurationError(f"{dest}: exists and is not a directory")
        if any(dest.iterdir()) and not (dest / MARKER).exists():
            raise ConfigurationError(f"{dest}: not empty and not a steadybench site; choose "
                                     "an empty or new directory")
    template = link_template(repository_url)
    parent = dest.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.new-", dir=parent))
    except OSError as exc:
        raise ConfigurationError(f"{dest}: cannot write the site there: "
                                 f"{exc.strerror or exc}") from None
    try:
        site = work / "site"
        SiteWriter(board, template, baseline).write(site, workers)
        for path in (site, *site.rglob("*")):  # readable by a web server, as a site must be
            path.chmod(0o755 if path.is_dir() else 0o644)
        old = work / "old"
        if dest.exists():
            os.replace(dest, old)
        try:
            os.replace(site, dest)
        except BaseException:
            if old.exists():  # put the previous site back
                os.replace(old, dest)
            raise
    except OSError as exc:  # a full disk, a read-only folder: one line, the old site kept
        raise ConfigurationError(f"{dest}: cannot write the site: {exc.strerror or exc}") \
            from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest
