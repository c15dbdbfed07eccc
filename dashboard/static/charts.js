// SVG charts drawn by the page itself (no library, no network): lineChart draws series of
// points with optional error bars on linear axes.
"use strict";
const SVGNS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, parent) {
  const el = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function niceTicks(lo, hi, count) {
  const span = hi - lo || 1, raw = span / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw);
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(+t.toFixed(digits));
  return out;
}

// series: [{name, colour, points: [{x, y, lo?, hi?, glo?, ghi?, label?, id?}], cls?}]
function lineChart(svg, series, opts) {
  opts = opts || {};
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const box = svg.getBoundingClientRect();
  const W = Math.max(box.width, 300), H = Math.max(box.height, 150);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const L = 48, R = 10, T = 10, B = 24;
  const xs = [], ys = [];
  for (const s of series) for (const p of s.points) {
    if (p.y == null || !isFinite(p.y)) continue;
    xs.push(p.x); ys.push(p.y);
  }
  if (!xs.length) { svgEl("text", {x: W / 2, y: H / 2, "text-anchor": "middle"}, svg).textContent = opts.empty || "no points yet"; return; }
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  // a tenth of the range around the points; one point (or a flat line): 5% of its value, at least 1
  const ypad = opts.ypad != null ? opts.ypad : Math.max((y1 - y0) * 0.1, Math.abs(y1) * 0.05, 1);
  y0 -= ypad; y1 += ypad; if (x1 === x0) { x0 -= 1; x1 += 1; }
  const X = x => L + (x - x0) / (x1 - x0) * (W - L - R), Y = y => T + (y1 - y) / (y1 - y0) * (H - T - B);
  const clampY = y => Math.max(T, Math.min(H - B, Y(y)));
  for (const t of niceTicks(y0, y1, 5)) {
    svgEl("line", {x1: L, x2: W - R, y1: Y(t), y2: Y(t), stroke: "#e3e3e3"}, svg);
    svgEl("text", {x: L - 4, y: Y(t) + 3, "text-anchor": "end"}, svg).textContent = t;
  }
  for (const t of niceTicks(x0, x1, 6)) {
    svgEl("text", {x: X(t), y: H - 8, "text-anchor": "middle"}, svg).textContent = t;
  }
  for (const s of series) {
    const pts = s.points.filter(p => p.y != null && isFinite(p.y));
    if (pts.length > 1 && !s.noLine) svgEl("polyline", {points: pts.map(p => `${X(p.x)},${Y(p.y)}`).join(" "), fill: "none", stroke: s.colour, "stroke-width": 1.5, "stroke-dasharray": s.dash || ""}, svg);
    for (const p of pts) {
      if (p.glo != null) svgEl("line", {x1: X(p.x), x2: X(p.x), y1: clampY(p.glo), y2: clampY(p.ghi), stroke: s.colour, "stroke-width": 5, opacity: 0.3}, svg);
      if (p.lo != null) svgEl("line", {x1: X(p.x), x2: X(p.x), y1: clampY(p.lo), y2: clampY(p.hi), stroke: s.colour, "stroke-width": 1}, svg);
      if (s.dots !== false) {
        const c = svgEl("circle", {cx: X(p.x), cy: Y(p.y), r: 3, fill: s.colour, class: s.cls || "point"}, svg);
        if (p.id) c.setAttribute("data-player", p.id);
        if (p.label) svgEl("title", {}, c).textContent = p.label;
      }
    }
  }
  if (opts.legend !== false) {
    let lx = L + 6;
    for (const s of series) {
      if (!s.name) continue;
      svgEl("rect", {x: lx, y: T + 2, width: 8, height: 8, fill: s.colour}, svg);
      const t = svgEl("text", {x: lx + 11, y: T + 10}, svg); t.textContent = s.name;
      lx += 16 + 6 * s.name.length;
    }
  }
}
