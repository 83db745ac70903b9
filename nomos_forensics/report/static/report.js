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
  // the chart's own box (a block: its parent's content width, padding excluded)
  function widthOf(el) { return Math.max(240, Math.floor(el.getBoundingClientRect().width) || 900); }
  function pct(v) { return v == null ? "" : v.toFixed(1) + "%"; }
  function yRange(u, min, max) { return [0, max > 0 ? max * 1.12 : 1]; }

  // ------------------------------------------------------------ rates over time
  // A real time axis: every period from the first to the last, those without sessions as gaps
  // (null: uPlot breaks the line there). Each point is drawn with an area for the sessions it
  // is out of, over its 95% interval (shaded); the strip under the chart counts the sessions.
  var HALF = { day: 43200, week: 302400, month: 1314000 };
  var AXIS = 56;  // the y axis' width: the same on every time chart, so that their x axes line up

  function label(t, v) {
    if (v == null) return "";
    var iso = new Date(v * 1000).toISOString();
    return t.unit === "month" ? iso.slice(0, 7) : t.unit === "week" ? "week of " + iso.slice(0, 10) : iso.slice(0, 10);
  }
  function xRange(t) { var pad = HALF[t.unit] || 43200; return [t.x[0] - pad, t.x[t.x.length - 1] + pad]; }
  // a point's area grows with its sessions, up to what the gap to the next period leaves
  function radius(u, t, n) {
    var most = Math.max.apply(null, t.sessions.concat([1]));
    var step = t.x.length > 1 ? Math.abs(u.valToPos(t.x[1], "x") - u.valToPos(t.x[0], "x")) : 40;
    var largest = Math.max(2.5, Math.min(8, step * 0.45));
    return n ? 1.5 + (largest - 1.5) * Math.sqrt(n / most) : 0;
  }

  function bands(t, rules) {
    return function (u) {
      var ctx = u.ctx, px = window.devicePixelRatio || 1;
      ctx.save();
      for (var i = 1; i < u.series.length; i++) {
        if (!u.series[i].show) continue;
        var s = t.series[rules[i - 1]], run = [];
        ctx.fillStyle = u.series[i]._nfColour + "2e";
        ctx.strokeStyle = u.series[i]._nfColour + "66";
        ctx.lineWidth = px;
        var flush = function () {
          if (run.length === 1) {  // a period between two gaps: its interval as a whisker
            var x = u.valToPos(t.x[run[0]], "x", true);
            ctx.beginPath();
            ctx.moveTo(x, u.valToPos(s.lo[run[0]], "y", true)); ctx.lineTo(x, u.valToPos(s.hi[run[0]], "y", true));
            ctx.stroke();
          } else if (run.length > 1) {
            ctx.beginPath();
            run.forEach(function (j, k) {
              var x = u.valToPos(t.x[j], "x", true), y = u.valToPos(s.hi[j], "y", true);
              if (k) ctx.lineTo(x, y); else ctx.moveTo(x, y);
            });
            run.slice().reverse().forEach(function (j) { ctx.lineTo(u.valToPos(t.x[j], "x", true), u.valToPos(s.lo[j], "y", true)); });
            ctx.closePath();
            ctx.fill();
          }
          run = [];
        };
        for (var j = 0; j < t.x.length; j++) { if (s.rates[j] == null) flush(); else run.push(j); }
        flush();
      }
      ctx.restore();
    };
  }

  function weightedPoints(t, rules) {
    return function (u) {
      var ctx = u.ctx, px = window.devicePixelRatio || 1;
      ctx.save();
      for (var i = 1; i < u.series.length; i++) {
        if (!u.series[i].show) continue;
        var s = t.series[rules[i - 1]];
        ctx.fillStyle = u.series[i]._nfColour;
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = px;
        for (var j = 0; j < t.x.length; j++) {
          if (s.rates[j] == null) continue;
          ctx.beginPath();
          ctx.arc(u.valToPos(t.x[j], "x", true), u.valToPos(s.rates[j], "y", true), radius(u, t, t.sessions[j]) * px, 0, 2 * Math.PI);
          ctx.fill();
          ctx.stroke();
        }
      }
      ctx.restore();
    };
  }

  function rateChart(el, t, rules, height) {
    var series = [{ label: t.unit, value: function (u, v) { return label(t, v); } }];
    var top = 0;
    rules.forEach(function (r) { t.series[r].hi.forEach(function (h) { if (h != null) top = Math.max(top, h); }); });
    rules.forEach(function (r) {
      var s = t.series[r], c = colour(r);
      var entry = { label: s.rule, stroke: c, width: 1.6, spanGaps: false, points: { show: false },
                    value: function (u, v, si, idx) {
                      if (idx == null) return "";
                      if (!t.sessions[idx]) return "no sessions";
                      return pct(v) + " (" + s.sessions[idx] + " of " + t.sessions[idx] + ")";
                    } };
      entry._nfColour = c;
      series.push(entry);
    });
    var u = new uPlot({
      width: widthOf(el), height: height, series: series, 
      scales: { x: { time: true, range: function () { return xRange(t); } },
                y: { range: function () { return [0, top > 0 ? Math.min(100, top * 1.08) : 1]; } } },
      axes: [{}, { size: AXIS, values: function (u, vals) { return vals.map(function (v) { return v + "%"; }); } }],
      cursor: { sync: { key: "nf-time" }, focus: { prox: 24 } }, focus: { alpha: 0.35 }, padding: [12, 18, null, null],
      hooks: { drawAxes: [bands(t, rules)], draw: [weightedPoints(t, rules)] }
    }, [t.x].concat(rules.map(function (r) { return t.series[r].rates; })), el);
    u.series.forEach(function (s, i) { if (i) s._nfColour = colour(rules[i - 1]); });
    u.over.addEventListener("click", function () {
      var idx = u.cursor.idx, best = null, bestDist = Infinity;
      if (idx == null || !t.sessions[idx]) return;
      for (var i = 1; i < u.series.length; i++) {
        var v = u.data[i][idx];
        if (!u.series[i].show || v == null) continue;
        var dist = Math.abs(u.valToPos(v, "y") - u.cursor.top);
        if (dist < bestDist) { bestDist = dist; best = i; }
      }
      if (best != null) pick({ rule: u.series[best].label, bucket: t.buckets[idx] });
    });
    return u;
  }

  // each bar's count over it, where the bars are wide enough: a bar of 3 beside one of 300 is
  // too short to read
  function counts(t) {
    return function (u) {
      var ctx = u.ctx, px = window.devicePixelRatio || 1;
      var step = t.x.length > 1 ? Math.abs(u.valToPos(t.x[1], "x") - u.valToPos(t.x[0], "x")) : 40;
      if (step < 18) return;
      ctx.save();
      ctx.fillStyle = "#5d6675";
      ctx.font = 10 * px + "px system-ui, sans-serif";
      ctx.textAlign = "center";
      for (var j = 0; j < t.x.length; j++) {
        if (!t.sessions[j]) continue;
        var y = Math.max(u.valToPos(t.sessions[j], "y", true) - 2 * px, u.bbox.top + 9 * px);
        ctx.fillText(String(t.sessions[j]), u.valToPos(t.x[j], "x", true), y);
      }
      ctx.restore();
    };
  }

  function weightStrip(t) {
    var el = document.getElementById("chart-weight");
    if (!el || !t.x.length) return;
    charts.weight = new uPlot({
      width: widthOf(el), height: t.multiples ? 150 : 90, legend: { show: false },
      series: [{ value: function (u, v) { return label(t, v); } },
               { label: "sessions", stroke: "#8a93a3", fill: "#8a93a366",
                 paths: uPlot.paths.bars({ size: [0.85, 48] }), points: { show: false } }],
      scales: { x: { time: true, range: function () { return xRange(t); } },
                y: { range: function (u, min, max) { return [0, Math.max(1, max)]; } } },
      axes: [{ show: false }, { size: AXIS, ticks: { show: false },
                                 values: function (u, vals) { return vals.map(function (v) { return v === Math.round(v) ? v : ""; }); } }],
      cursor: { sync: { key: "nf-time" }, y: false, points: { show: false } }, padding: [12, 18, null, null],
      hooks: { draw: [counts(t)] }
    }, [t.x, t.sessions], el);
  }

  function timeCharts(t) {
    if (!t || !t.series.length || !t.x.length) return;
    var all = t.series.map(function (_, i) { return i; });
    if (t.multiples) {
      all.forEach(function (r) {
        var el = document.getElementById("chart-time-" + r);
        if (el) charts["time:" + t.series[r].rule] = rateChart(el, t, [r], 170);
      });
    } else {
      var el = document.getElementById("chart-time");
      if (el) charts.time = rateChart(el, t, all, 280);
    }
    weightStrip(t);
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
      hooks: { draw: [whiskers] }, padding: [null, R > 6 ? 70 : null, null, null]
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
    timeCharts(d.time);
    modelChart(d.models);
    window.addEventListener("resize", function () {
      Object.keys(charts).forEach(function (k) {
        var el = charts[k].root.parentNode;
        charts[k].root.style.display = "none";  // measure the box, not the chart in it
        var width = widthOf(el);
        charts[k].root.style.display = "";
        charts[k].setSize({ width: width, height: charts[k].height });
      });
    });
  }
  window.nfReady = true;
})();
