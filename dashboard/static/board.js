// The Go board in SVG: stones from a string of '.', 'B', 'W' (row 0 at the top), GTP
// coordinates, a marker on the last move, and optional layers (ownership, policy, top moves).
"use strict";
const COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ";

function vertex(point, size) {
  if (point < 0) return "pass";
  return COLUMNS[point % size] + (size - Math.floor(point / size));
}

// opts: {last, ownership: [size*size, black's view -1..1], policy: [..], moves: [{point, winrate, visits, order}], onClick(vertex)}
function drawBoard(svg, size, stones, opts) {
  opts = opts || {};
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const cell = 40, pad = 30, W = pad * 2 + cell * (size - 1);
  svg.setAttribute("viewBox", `0 0 ${W} ${W}`);
  svgEl("rect", {x: 0, y: 0, width: W, height: W, fill: "#dcb35c"}, svg);
  const P = i => pad + i * cell;
  for (let i = 0; i < size; i++) {
    svgEl("line", {x1: P(0), x2: P(size - 1), y1: P(i), y2: P(i), stroke: "#333"}, svg);
    svgEl("line", {y1: P(0), y2: P(size - 1), x1: P(i), x2: P(i), stroke: "#333"}, svg);
    svgEl("text", {x: P(i), y: 14, "text-anchor": "middle", "font-size": 11}, svg).textContent = COLUMNS[i];
    svgEl("text", {x: 10, y: P(i) + 4, "text-anchor": "middle", "font-size": 11}, svg).textContent = size - i;
  }
  for (let p = 0; p < size * size; p++) {
    const x = P(p % size), y = P(Math.floor(p / size));
    if (opts.ownership) {
      const o = opts.ownership[p];
      if (Math.abs(o) > 0.05) svgEl("rect", {x: x - cell / 2, y: y - cell / 2, width: cell, height: cell, class: "own", fill: o > 0 ? "#000" : "#fff", opacity: Math.min(0.55, Math.abs(o) * 0.55)}, svg);
    }
    if (opts.policy && stones[p] === "." && opts.policy[p] > 0.01) {
      svgEl("circle", {cx: x, cy: y, r: 4 + 12 * Math.sqrt(opts.policy[p]), fill: "#2a6fdb", opacity: 0.45, class: "policy"}, svg);
    }
    if (stones[p] !== ".") {
      svgEl("circle", {cx: x, cy: y, r: cell * 0.47, fill: stones[p] === "B" ? "#111" : "#f4f4f4", stroke: "#222", class: "stone", "data-vertex": vertex(p, size), "data-colour": stones[p]}, svg);
    }
  }
  if (opts.moves) {
    for (const m of opts.moves) {
      if (m.point < 0 || stones[m.point] !== ".") continue;
      const x = P(m.point % size), y = P(Math.floor(m.point / size));
      svgEl("circle", {cx: x, cy: y, r: cell * 0.42, fill: m.order === 0 ? "#3fae5a" : "#7fb7e8", opacity: 0.85, class: "overlay-move", "data-vertex": vertex(m.point, size)}, svg);
      const t = svgEl("text", {x: x, y: y + 4, "text-anchor": "middle", "font-size": 11, "pointer-events": "none"}, svg);
      t.textContent = Math.round(100 * m.winrate);
    }
  }
  if (opts.last != null && opts.last >= 0) {
    const x = P(opts.last % size), y = P(Math.floor(opts.last / size));
    svgEl("circle", {cx: x, cy: y, r: 6, fill: "none", stroke: "#d33", "stroke-width": 2.5, class: "last"}, svg);
  }
  if (opts.onClick) {
    for (let p = 0; p < size * size; p++) {
      const r = svgEl("rect", {x: P(p % size) - cell / 2, y: P(Math.floor(p / size)) - cell / 2, width: cell, height: cell, fill: "transparent", class: "point", "data-vertex": vertex(p, size)}, svg);
      r.addEventListener("click", () => opts.onClick(vertex(p, size)));
    }
  }
}
