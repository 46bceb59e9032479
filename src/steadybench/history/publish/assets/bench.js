// A benchmark page's chart: one line per parameter set and machine over commit order, each
// value's interval shaded, change points dashed; hovering (or #commit=SHA) shows the commit.
// Data come from data/commits.js (SB_COMMITS) and data/bNNNN.js (SB_BENCH), loaded by <script>
// tags so the page
// works from file:// and from any static host. Text is only ever set with textContent.
(function () {
  "use strict";
  var B = window.SB_BENCH, C = window.SB_COMMITS;
  var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22"];
  function rgba(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }
  // a number as people write it: 4 significant digits, never an exponent
  function num(x, digits) {
    if (Math.abs(x) >= Math.pow(10, digits)) return x.toFixed(0);
    var text = x.toPrecision(digits);
    return text.indexOf(".") >= 0 ? text.replace(/\.?0+$/, "") : text;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "—";
    return num(v * B.scale, 4) + " " + B.suffix;
  }
  function short(i) {
    var c = C[i];
    return c ? (c[1] ? c[1].slice(0, 7) : c[0]) : "";
  }
  function link(sha) {
    return B.link && sha ? B.link.replace("{commit}", sha) : null;
  }
  var el = document.getElementById("chart");
  var tip = document.getElementById("tip");
  var data = [B.xs];
  var series = [{label: "commit", value: function (u, x) { return x === null ? "—" : short(x); }}];
  var bands = [];
  B.lines.forEach(function (line, i) {
    var colour = COLOURS[i % COLOURS.length];
    var base = data.length;
    data.push(line.v, line.hi, line.lo);
    series.push({label: line.label, stroke: colour, width: 1.5, spanGaps: true,
                 points: {show: B.xs.length <= 200, size: 4},
                 value: function (u, v) { return fmt(v); }});
    series.push({label: line.label + " (high)", stroke: "transparent", spanGaps: true,
                 points: {show: false}});
    series.push({label: line.label + " (low)", stroke: "transparent", spanGaps: true,
                 points: {show: false}});
    bands.push({series: [base + 1, base + 2], fill: rgba(colour, 0.15)});
  });
  function drawChanges(u) {
    var ctx = u.ctx;
    ctx.save();
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.font = (11 * devicePixelRatio) + "px system-ui, sans-serif";
    B.changes.forEach(function (c) {
      var x = Math.round(u.valToPos(c.at - 0.5, "x", true));
      ctx.strokeStyle = c.direction === "slower" ? "#d92d20" : "#12b76a";
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillText((c.magnitude >= 0 ? "+" : "") + (c.magnitude * 100).toFixed(1) + "%",
                   x + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
    });
    ctx.restore();
  }
  function showTip(u) {
    var idx = u.cursor.idx;
    if (idx === null || idx === undefined || u.cursor.left < 0) { tip.hidden = true; return; }
    var rank = B.xs[idx], c = C[rank] || [];
    var lines = [(c[1] || c[0] || "") + (c[3] ? "  (" + c[3] + ")" : ""), c[2] || "", c[4] || ""];
    B.lines.forEach(function (line, i) {
      if (line.v[idx] !== null) lines.push(line.label + ": " + fmt(line.v[idx]));
    });
    if (link(c[1])) lines.push("click: open the commit");
    tip.textContent = lines.filter(function (s) { return s !== ""; }).join("\n");
    var box = el.getBoundingClientRect();
    tip.style.left = Math.min(box.left + u.cursor.left + 16, window.innerWidth - 320) + "px";
    tip.style.top = (box.top + u.cursor.top + 16) + "px";
    tip.hidden = false;
  }
  var opts = {
    width: Math.max(600, el.clientWidth || 1000), height: 420,
    series: series, bands: bands,
    scales: {x: {time: false}},
    axes: [
      {values: function (u, splits) { return splits.map(function (x) { return Number.isInteger(x) ? short(x) : ""; }); },
       rotate: -30, size: 60},
      {values: function (u, splits) { return splits.map(function (v) { return num(v * B.scale, 3); }); },
       label: B.measure === "time" ? "time (" + B.suffix + ")" : B.suffix, size: 70}
    ],
    cursor: {drag: {x: true, y: false}},
    // ready: once the scales are set (uPlot finishes its set-up after the constructor)
    hooks: {draw: [drawChanges], setCursor: [showTip], ready: [fromHash]}
  };
  var plot = new uPlot(opts, data, el);
  // the interval bounds are drawn as bands only: their legend entries are hidden
  Array.prototype.forEach.call(el.querySelectorAll(".u-legend .u-series"), function (row, i) {
    if (i > 0 && i % 3 !== 1) row.style.display = "none";
  });
  el.addEventListener("mouseleave", function () { tip.hidden = true; });
  el.addEventListener("click", function () {
    var idx = plot.cursor.idx;
    if (idx === null || idx === undefined) return;
    var c = C[B.xs[idx]] || [];
    var url = link(c[1]);
    if (url) window.open(url, "_blank", "noopener");
  });
  window.addEventListener("resize", function () {
    plot.setSize({width: Math.max(600, el.clientWidth || 1000), height: 420});
  });
  // #commit=SHA (or a prefix; #commit=%2312 for record #12) selects that commit and shows its
  // details, so a regression can be linked to the point where it starts
  function fromHash(u) {  // u: the plot (from its ready hook) or a hashchange event
    var plot = u && u.setCursor ? u : window.SB_PLOT;
    var want = new URLSearchParams(location.hash.slice(1)).get("commit");
    if (!want) return;
    for (var idx = 0; idx < B.xs.length; idx++) {
      var c = C[B.xs[idx]] || [];
      if (c[0] === want || (c[1] && want.length >= 4 && c[1].indexOf(want) === 0)) {
        var value = null;
        B.lines.forEach(function (line) { if (value === null) value = line.v[idx]; });
        plot.setCursor({left: plot.valToPos(B.xs[idx], "x"),
                        top: value === null ? 10 : plot.valToPos(value, "y")});
        return;
      }
    }
  }
  window.addEventListener("hashchange", fromHash);
  window.SB_PLOT = plot;
  document.body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
})();
