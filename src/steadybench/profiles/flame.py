"""Flame graphs in the HTML report, self-contained: the data inline as JSON, drawn by a short
inline script of our own (no library, no network), readable from ``file://``. The report's
Content-Security-Policy lets this one script run by its hash (:data:`CSP_SOURCE`) and nothing
else: no other script, nothing fetched.

The graph is an icicle (callers above callees, width = share of the benchmark's cost per call);
hovering a frame shows its function, file:line, share and cost per call; clicking zooms into it,
clicking the top bar zooms out. The differential graph (``ab``, ``compare``) has B's shape and
colours each frame by how its inclusive cost moved from A (red: grew, blue: shrank; the colour
saturates at ±50 %), the reading of Gregg's differential flame graphs.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping
from typing import Any

from .model import Frame, Profile

MAX_DEPTH = 40
#: frames narrower than this share of the root are merged into their parent's self cost
MIN_SHARE = 0.001


def _tree(profile: Profile, rename: Mapping[str, str] | None = None) -> dict[str, Any]:
    scale = profile.per_weight()
    root: dict[str, Any] = {"n": "all", "f": "", "v": 0.0, "c": {}}
    for stack, weight in profile.stacks:
        node = root
        node["v"] += weight * scale
        for frame in stack[:MAX_DEPTH]:
            key = _key(frame, rename)
            child = node["c"].get(key)
            if child is None:
                child = node["c"][key] = {"n": frame.function, "f": frame.where, "v": 0.0,
                                          "c": {}}
            child["v"] += weight * scale
            node = child
    return root


def _key(frame: Frame, rename: Mapping[str, str] | None) -> str:
    name, base = frame.key
    if rename:
        base = rename.get(base, base)
    return f"{name}\0{base}"


def _finish(node: dict[str, Any], total: float, other: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"n": node["n"], "f": node["f"], "v": node["v"]}
    if other is not None:
        out["a"] = other["v"]
    children = []
    for key, child in sorted(node["c"].items(), key=lambda kv: -kv[1]["v"]):
        if total > 0 and child["v"] / total < MIN_SHARE:
            continue
        # a frame A does not have gets no "a": drawn as new (full red)
        children.append(_finish(child, total, other["c"].get(key) if other else None))
    if children:
        out["c"] = children
    return out


def flame_data(profile: Profile, before: Profile | None = None,
               rename: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The nested frames the script draws (``before``: A, for a differential graph)."""
    tree = _tree(profile)
    other = _tree(before, rename) if before is not None else None
    data = _finish(tree, tree["v"], other)
    data["unit"] = profile.unit
    data["diff"] = before is not None
    return data


_SCRIPT = r"""
(function () {
  if (window.sbFlame) { return; }  // the same script in several sections: defined once
  function fmt(v, unit) {
    if (unit !== "s") { return Math.round(v).toLocaleString("en") + " " + unit; }
    var a = Math.abs(v);
    if (a === 0) { return "0"; }
    if (a >= 1) { return v.toPrecision(3) + " s"; }
    if (a >= 1e-3) { return (v * 1e3).toPrecision(3) + " ms"; }
    if (a >= 1e-6) { return (v * 1e6).toPrecision(3) + " \u00b5s"; }
    return (v * 1e9).toPrecision(3) + " ns";
  }
  function hue(node, diff) {
    if (!diff) {
      var h = 0;
      for (var i = 0; i < node.n.length; i++) { h = (h * 31 + node.n.charCodeAt(i)) % 997; }
      return "hsl(" + (20 + h % 35) + ",85%," + (58 + h % 12) + "%)";
    }
    var a = node.a || 0, r = a > 0 ? (node.v - a) / a : 1;
    var s = Math.max(-1, Math.min(1, r / 0.5));
    if (s >= 0) { return "hsl(0,80%," + (92 - 40 * s) + "%)"; }
    return "hsl(215,80%," + (92 + 40 * s) + "%)";
  }
  function draw(box, data, focus) {
    var host = box.querySelector(".sb-flame-bars");
    host.textContent = "";
    var total = focus.v || 1, rowH = 18, rows = 0;
    function place(node, depth, x, w) {
      if (w < 0.002) { return; }
      rows = Math.max(rows, depth + 1);
      var d = document.createElement("div");
      d.className = "sb-frame";
      d.style.left = (x * 100) + "%";
      d.style.width = (w * 100) + "%";
      d.style.top = (depth * rowH) + "px";
      d.style.background = hue(node, data.diff);
      var share = node.v / data.v;
      var tip = node.n + (node.f ? "  " + node.f : "") + "\n" + (share * 100).toFixed(1) +
        " % of the benchmark, " + fmt(node.v, data.unit) + " per call";
      if (data.diff) {
        var a = node.a || 0;
        tip += "\nA " + fmt(a, data.unit) + " \u2192 B " + fmt(node.v, data.unit) +
          " (" + (node.v >= a ? "+" : "") + fmt(node.v - a, data.unit) + ")";
      }
      d.title = tip;
      d.textContent = node.n + (node.f ? " (" + node.f + ")" : "");
      d.onclick = function () { draw(box, data, node === focus ? (focus.parent || data) : node); };
      host.appendChild(d);
      var cx = x;
      (node.c || []).forEach(function (c) {
        c.parent = node;
        var cw = w * c.v / (node.v || 1);
        place(c, depth + 1, cx, cw);
        cx += cw;
      });
    }
    place(focus, 0, 0, 1);
    host.style.height = (rows * rowH) + "px";
  }
  window.sbFlame = function (box) {
    var data = JSON.parse(box.querySelector("script[type='application/json']").textContent);
    (function link(n) { (n.c || []).forEach(function (c) { c.parent = n; link(c); }); })(data);
    box.setAttribute("data-drawn", "1");
    draw(box, data, data);
  };
})();
document.querySelectorAll("figure.sb-flame:not([data-drawn])").forEach(window.sbFlame);
"""

#: the report's Content-Security-Policy source for this script and no other: its hash
CSP_SOURCE = "'sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode() + "'"

_STYLE = """<style>
.sb-flame { margin: 0.6em 0 1.2em; }
.sb-flame-bars { position: relative; width: 100%; font: 12px/18px system-ui, sans-serif; }
.sb-frame { position: absolute; height: 17px; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; padding: 0 3px; box-sizing: border-box; cursor: pointer;
  border-right: 1px solid #fff; color: #222; }
.sb-frame:hover { outline: 1px solid #000; z-index: 1; }
.sb-flame-legend { font-size: 0.85em; color: #555; }
</style>"""


def _json_for_script(data: Any) -> str:
    # inside <script>: "<" escaped so that no "</script>" or "<!--" can end or open anything
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def flame_html(element_id: str, data: Mapping[str, Any], caption: str) -> str:
    """One flame graph: a caption, the bars, the data and the call that draws them."""
    legend = ("width: share of the benchmark's cost per call; hover a frame for function, "
              "file:line and share; click to zoom in, click it again to zoom out")
    if data.get("diff"):
        legend += "; colour: change from A (red grew, blue shrank, white unchanged)"
    return (f'<figure class="sb-flame" id="{html.escape(element_id)}">'
            f"<figcaption>{html.escape(caption)}</figcaption>"
            f'<div class="sb-flame-bars"></div>'
            f'<p class="sb-flame-legend">{html.escape(legend)}</p>'
            f'<script type="application/json">{_json_for_script(data)}</script></figure>')


def _changes_table(difference: Mapping[str, Any], top: int = 10) -> str:
    from .console import amount

    unit = difference.get("unit", "s")
    rows = []
    for row in (difference.get("ranked") or [])[:top]:
        share = row.get("share")
        where = (str(row.get("file", "")).rsplit("/", 1)[-1] + f":{row.get('line', 0)}"
                 if row.get("file") else "")
        rows.append("<tr><td>{}</td><td>{}</td><td class='num'>{}</td><td class='num'>{}</td>"
                    "<td class='num'>{}</td><td class='num'>{}</td></tr>".format(
                        html.escape(str(row.get("function"))), html.escape(where),
                        "—" if row.get("only_in") == "B" else
                        html.escape(amount(row.get("before", 0.0), unit)),
                        "—" if row.get("only_in") == "A" else
                        html.escape(amount(row.get("after", 0.0), unit)),
                        html.escape(amount(row.get("difference", 0.0), unit, True)),
                        f"{share:.0%}" if isinstance(share, int | float) else "—"))
    if not rows:
        return "<p>No function's change exceeds its sampling error.</p>"
    within = len(difference.get("within_error") or [])
    what = ("unchanged" if difference.get("exact") else
            "changed by less than their sampling error (not ranked)")
    note = f"<p class='meta'>{within} other functions {what}.</p>" if within else ""
    return ("<table class='summary'><thead><tr><th>function</th><th>file:line</th><th>A</th>"
            "<th>B</th><th>change</th><th>share of the change</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>" + note)


def pair_section(data: Mapping[str, Any], prefix: str) -> str:
    """The report's view of ``ab --profile``/``compare``'s profiles (a ``PairProfiles``
    dict): the changes ranked, the differential graph, then A's and B's graphs."""
    profiles = {}
    for label, raw in (data.get("profiles") or {}).items():
        try:
            profiles[label] = Profile.from_dict(raw)
        except ValueError:
            continue
    parts = [_STYLE, "<h3>Profiles</h3>"]
    for label, message in (data.get("failures") or {}).items():
        parts.append(f"<p class='warnings'>{html.escape(str(label))}: "
                     f"{html.escape(str(message))}</p>")
    difference = data.get("difference")
    if isinstance(difference, Mapping):
        parts.append("<h4>Where the cost changed (self cost per call)</h4>")
        parts.append(_changes_table(difference))
    if "A" in profiles and "B" in profiles and profiles["A"].unit == profiles["B"].unit:
        rename = data.get("rename") if isinstance(data.get("rename"), Mapping) else None
        parts.append(flame_html(f"{prefix}-diff",
                                flame_data(profiles["B"], profiles["A"], rename),
                                "Differential flame graph: B's frames, coloured by their "
                                "change from A"))
    for label, profile in profiles.items():
        parts.append(flame_html(f"{prefix}-{label}", flame_data(profile),
                                f"{label}: {_caption(profile)}"))
    parts.append(f"<script>{_SCRIPT}</script>")
    return "".join(parts)


def _caption(profile: Profile) -> str:
    if profile.exact:
        return f"{profile.profiler}, {profile.total_per_call:,.0f} instructions per run"
    return f"{profile.profiler}, {profile.samples:,} samples over {profile.calls:,} calls"


def report_section(data: Mapping[str, Any], image: Any, results: Any) -> dict[str, Any]:
    """The hook of :mod:`steadybench.output.report` (``CONTEXT_SECTIONS["profiles"]``): a
    results file's profiles by case (``run``/``timeit``/``exec --profile``), one graph each."""
    import markupsafe

    parts = [_STYLE]
    for i, (name, raw) in enumerate(sorted(data.items()), start=1):
        if isinstance(raw, Mapping) and "message" in raw and "frames" not in raw:
            parts.append(f"<p class='warnings'>{html.escape(str(name))}: "
                         f"{html.escape(str(raw['message']))}</p>")
            continue
        try:
            profile = Profile.from_dict(raw)
        except ValueError:
            continue
        parts.append(flame_html(f"sb-profile-{i}", flame_data(profile),
                                f"{name}: {_caption(profile)}"))
    parts.append(f"<script>{_SCRIPT}</script>")
    return {"title": "Profiles", "html": markupsafe.Markup("".join(parts))}
