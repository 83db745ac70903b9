/* nomos-forensics report: charts (uPlot), and the worst-sessions table's filters and sorting.
   Everything shown here comes from the page itself; text goes in as textContent, never as HTML. */
(function () {
  "use strict";
  var PALETTE = ["#c62828", "#1f5fbf", "#2e7d32", "#e08a00", "#6a1b9a", "#00838f", "#ad1457",
                 "#5d4037", "#546e7a", "#9e9d24", "#3949ab", "#d84315", "#00695c", "#8e24aa"];
  var holder = document.getElementById("nf-data");
  var d = holder ? JSON.parse(holder.textContent || "{}") : {};
  var charts = {};
  window.nfCharts = charts;

  function colour(i) { return PALETTE[i % PALETTE.length]; }
  function widthOf(el) { return Math.max(320, (el.parentNode.clientWidth || 900) - 8); }
  function day(v) { return v == null ? "" : new Date(v * 1000).toISOString().slice(0, 10); }
  function pct(v) { return v == null ? "" : v.toFixed(1) + "%"; }
  function yRange(u, min, max) { return [0, max > 0 ? max * 1.12 : 1]; }

  function timeChart(t) {
    var el = document.getElementById("chart-time");
    if (!el || !t || !t.series.length || !t.x.length) return;
    var series = [{ label: t.unit, value: function (u, v) { return day(v); } }];
    t.series.forEach(function (s, i) {
      series.push({ label: s.rule, stroke: colour(i), width: 1.6, value: function (u, v) { return pct(v); },
                    points: { show: t.x.length <= 60, size: 5 } });
    });
    var u = new uPlot({
      width: widthOf(el), height: 280, series: series,
      scales: { x: { time: true, range: t.x.length === 1 ? function () { return [t.x[0] - 86400, t.x[0] + 86400]; } : null },
                y: { range: yRange } },
      axes: [{}, { size: 56, values: function (u, vals) { return vals.map(function (v) { return v + "%"; }); } }],
      cursor: { focus: { prox: 24 } }, focus: { alpha: 0.35 }
    }, [t.x].concat(t.series.map(function (s) { return s.rates; })), el);
    u.over.addEventListener("click", function () {
      var idx = u.cursor.idx, top = u.cursor.top, best = null, bestDist = Infinity;
      if (idx == null) return;
      for (var i = 1; i < u.series.length; i++) {
        var v = u.data[i][idx];
        if (!u.series[i].show || v == null) continue;
        var dist = Math.abs(u.valToPos(v, "y") - top);
        if (dist < bestDist) { bestDist = dist; best = i; }
      }
      if (best != null) pick({ rule: u.series[best].label, bucket: t.buckets[idx] });
    });
    charts.time = u;
  }

  function modelChart(m) {
    var el = document.getElementById("chart-models");
    if (!el || !m || !m.rules.length || !m.models.length) return;
    var R = m.rules.length, M = m.models.length, step = Math.min(0.7 / M, 0.2);
    var xs = [], cols = m.models.map(function () { return []; });
    for (var r = 0; r < R; r++) {
      for (var j = 0; j < M; j++) {
        xs.push(r + (j - (M - 1) / 2) * step);
        for (var k = 0; k < M; k++) cols[k].push(k === j ? m.models[k].rates[r] : null);
      }
    }
    var series = [{ label: "signature", value: function (u, v) { return v == null ? "" : m.rules[Math.round(v)] || ""; } }];
    m.models.forEach(function (mod, j) {
      series.push({ label: mod.model + " (" + mod.sessions + ")", stroke: colour(j), fill: colour(j),
                    paths: function () { return null; }, points: { show: true, size: 8, fill: colour(j) },
                    value: function (u, v) { return pct(v); } });
    });
    function whiskers(u) {
      var ctx = u.ctx, px = window.devicePixelRatio || 1;
      ctx.save();
      ctx.lineWidth = 1.5 * px;
      for (var j = 1; j < u.series.length; j++) {
        if (!u.series[j].show) continue;
        var mod = m.models[j - 1];
        ctx.strokeStyle = colour(j - 1);
        ctx.beginPath();
        for (var r = 0; r < R; r++) {
          var x = u.valToPos(xs[r * M + j - 1], "x", true);
          var lo = u.valToPos(mod.lo[r], "y", true), hi = u.valToPos(mod.hi[r], "y", true);
          ctx.moveTo(x, lo); ctx.lineTo(x, hi);
          ctx.moveTo(x - 3 * px, lo); ctx.lineTo(x + 3 * px, lo);
          ctx.moveTo(x - 3 * px, hi); ctx.lineTo(x + 3 * px, hi);
        }
        ctx.stroke();
      }
      ctx.restore();
    }
    charts.models = new uPlot({
      width: widthOf(el), height: 300, series: series,
      scales: { x: { time: false, range: function () { return [-0.5, R - 0.5]; } },
                y: { range: function (u, min, max) {
                  var top = 0;
                  m.models.forEach(function (mod) { mod.hi.forEach(function (h) { top = Math.max(top, h); }); });
                  return [0, top > 0 ? top * 1.08 : 1];
                } } },
      axes: [{ splits: function () { return m.rules.map(function (_, i) { return i; }); },
               values: function (u, vals) { return vals.map(function (v) { return m.rules[v] || ""; }); },
               rotate: R > 6 ? -25 : 0, size: R > 6 ? 90 : 40, grid: { show: false } },
             { size: 56, values: function (u, vals) { return vals.map(function (v) { return v + "%"; }); } }],
      hooks: { draw: [whiskers] }
    }, [xs].concat(cols), el);
  }

  // ------------------------------------------------------------ worst sessions table
  var table = document.getElementById("table-worst");
  var rows = table ? Array.prototype.slice.call(table.querySelectorAll("tbody tr[data-id]")) : [];
  var state = { rule: "", severity: "", outcome: "", model: "", q: "", bucket: "" };
  function byId(id) { return document.getElementById(id); }

  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var ds = row.dataset;
      var ok = (!state.rule || ds.rules.indexOf(" " + state.rule + " ") >= 0) &&
        (!state.severity || ds.severity === state.severity) && (!state.outcome || ds.outcome === state.outcome) &&
        (!state.model || ds.model === state.model) && (!state.q || ds.title.indexOf(state.q) >= 0) &&
        (!state.bucket || ds.bucket === state.bucket);
      row.hidden = !ok;
      if (ok) shown++;
    });
    var count = byId("f-count");
    if (count) count.textContent = shown + " of " + rows.length + " sessions" +
      (shown === 0 ? " (the table lists the worst sessions only: see --sessions)" : "");
    var wrap = byId("f-bucket-wrap");
    if (wrap) { wrap.hidden = !state.bucket; byId("f-bucket").textContent = state.bucket; }
  }

  function pick(what) {
    if ("rule" in what) { state.rule = what.rule; byId("f-rule").value = what.rule; }
    if ("bucket" in what) state.bucket = what.bucket;
    apply();
    byId("worst").scrollIntoView();
  }
  window.nfPick = pick;

  function sortBy(th) {
    var key = th.dataset.key, num = th.dataset.type === "num";
    var attr = "sort" + key.charAt(0).toUpperCase() + key.slice(1);
    var desc = !th.classList.contains("desc");
    table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(desc ? "desc" : "asc");
    var body = table.tBodies[0];
    rows.slice().sort(function (a, b) {
      var x = a.dataset[attr], y = b.dataset[attr];
      var c = num ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
      return desc ? -c : c;
    }).forEach(function (row) { body.appendChild(row); });
  }

  if (table && rows.length) {
    byId("filters").hidden = false;
    [["f-rule", "rule"], ["f-severity", "severity"], ["f-outcome", "outcome"], ["f-model", "model"]].forEach(function (p) {
      byId(p[0]).addEventListener("change", function (e) { state[p[1]] = e.target.value; apply(); });
    });
    byId("f-search").addEventListener("input", function (e) { state.q = e.target.value.trim().toLowerCase(); apply(); });
    byId("f-bucket-clear").addEventListener("click", function () { state.bucket = ""; apply(); });
    table.querySelectorAll("th[data-key]").forEach(function (th) {
      th.addEventListener("click", function () { sortBy(th); });
    });
    apply();
  }
  document.querySelectorAll(".pick-rule").forEach(function (a) {
    a.addEventListener("click", function (e) { e.preventDefault(); pick({ rule: a.dataset.rule, bucket: "" }); });
  });

  if (window.uPlot) {
    timeChart(d.time);
    modelChart(d.models);
    window.addEventListener("resize", function () {
      Object.keys(charts).forEach(function (k) {
        var el = charts[k].root.parentNode;
        charts[k].setSize({ width: widthOf(el), height: charts[k].height });
      });
    });
  }
  window.nfReady = true;
})();
