"""The report's per-host part: one benchmark across hosts, as a figure and an HTML section.

For each case measured on several hosts (:func:`steadybench.fleet.hosts.breakdown`), the figure
shows every host on its own row: the host's per-execution values as dots, its value with its
interval as a bar, and the value across hosts with its t interval as a band behind them, so
the spread between hosts is seen next to the spread within each. :func:`host_section_html` is a
self-contained ``<section>`` (images embedded, every name escaped) for the HTML report;
:func:`write_hosts_page` writes it as a page of its own.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hosts import HostBreakdown, breakdown, host_loads

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..model.results import Results


def hosts_figure(item: HostBreakdown) -> Figure:
    """One case across hosts (module docstring)."""
    from ..output.plots import new_figure, time_scale

    values = [v for h in item.hosts for v in h.executions]
    values += [v for v in (item.value, item.ci_low, item.ci_high) if v is not None]
    factor, unit = time_scale(values)
    fig = new_figure(7.0, 1.2 + 0.45 * len(item.hosts))
    ax = fig.add_subplot()
    if item.ci_low is not None and item.ci_high is not None:
        ax.axvspan(item.ci_low * factor, item.ci_high * factor, color="#dbe8f5",
                   label=f"across hosts, {item.confidence:.0%} CI")
    if item.value is not None:
        ax.axvline(item.value * factor, color="#1f4e79", linewidth=1.2,
                   label="mean of the host means")
    for row, host in enumerate(item.hosts):
        ax.scatter([v * factor for v in host.executions], [row] * len(host.executions),
                   s=14, color="#555555", zorder=3,
                   label="executions" if row == 0 else None)
        if host.value is not None:
            low = host.ci_low if host.ci_low is not None else host.value
            high = host.ci_high if host.ci_high is not None else host.value
            ax.errorbar([host.value * factor], [row],
                        xerr=[[max(0.0, (host.value - low) * factor)],
                              [max(0.0, (high - host.value) * factor)]],
                        fmt="D", color="#c0504d", markersize=5, capsize=3, zorder=4,
                        label="host value, its CI" if row == 0 else None)
    ax.set_yticks(range(len(item.hosts)), [h.host for h in item.hosts])
    ax.set_ylim(-0.7, len(item.hosts) - 0.3)
    ax.invert_yaxis()
    ax.set_xlabel(f"time per call ({unit})")
    ax.set_title(f"{item.label} on {len(item.hosts)} hosts", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def report_section(fleet: Mapping[str, Any], image: Any, results: Results) -> dict[str, Any]:
    """The hook of :mod:`steadybench.output.report` (``CONTEXT_SECTIONS``): the per-host section
    of a results file run on a fleet, in the main report."""
    import markupsafe

    facts = ", ".join(f"{key} {markupsafe.escape(fleet[key])}"
                      for key in ("scheduler", "run_id", "wall_s") if key in fleet)
    html = (f"<p>{facts}</p>" if facts else "") + (
        host_section_html(results, heading=False) or "<p>No case records a host.</p>")
    return {"title": f"Hosts ({len(host_loads(results))})", "html": markupsafe.Markup(html)}


def host_section_html(results: Results, heading: bool = True) -> str:
    """The per-host ``<section>``: each host's load, then each case across hosts (figure and
    table). Empty when no case records a host."""
    from markupsafe import escape

    from ..output.format import format_seconds
    from ..output.plots import figure_bytes

    loads = host_loads(results)
    if not loads:
        return ""
    parts = ['<section class="hosts">' + ("<h2>Hosts</h2>" if heading else ""),
             "<table><thead><tr><th>host</th><th>cases</th><th>busy (s)</th>"
             "<th>lost attempts</th></tr></thead><tbody>"]
    for load in loads:
        parts.append(f"<tr><td>{escape(load.host)}</td><td>{load.cases}</td>"
                     f"<td>{load.busy_s:.2f}</td><td>{load.lost_attempts}</td></tr>")
    parts.append("</tbody></table>")
    for item in breakdown(results.cases):
        png = base64.b64encode(figure_bytes(hosts_figure(item), "png")).decode()
        between = f"{item.between_cov:.1%}" if item.between_cov is not None else "n/a"
        within = f"{item.within_cov:.1%}" if item.within_cov is not None else "n/a"
        parts.append(f"<h3>{escape(item.label)}</h3>"
                     f'<img alt="{escape(item.label)} across hosts" '
                     f'src="data:image/png;base64,{png}">'
                     f"<p>spread between hosts {between}, within a host {within}</p>"
                     "<table><thead><tr><th>host</th><th>value</th><th>executions</th>"
                     "</tr></thead><tbody>")
        for host in item.hosts:
            parts.append(f"<tr><td>{escape(host.host)}</td>"
                         f"<td>{escape(format_seconds(host.value))}</td>"
                         f"<td>{len(host.executions)}</td></tr>")
        parts.append("</tbody></table>")
    parts.append("</section>")
    return "".join(parts)


def write_hosts_page(results: Results, path: str | os.PathLike[str]) -> Path:
    """The per-host section as a page of its own (written atomically)."""
    from markupsafe import escape

    from ..fileio import atomic_write_text

    body = host_section_html(results) or "<p>No case records a host.</p>"
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>"
            f"{escape(results.suite)}: hosts</title></head><body>{body}</body></html>\n")
    atomic_write_text(path, page)
    return Path(path)
