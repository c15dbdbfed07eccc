// The dashboard page: the run's snapshot from server-sent events (/api/events), replays of
// self-play games (/api/game/ID) and games against checkpoints (/api/play...).
"use strict";
const TOKEN = new URLSearchParams(location.search).get("token");
function api(path) { return path + (TOKEN ? (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(TOKEN) : ""); }
async function call(method, path, body) {
  const r = await fetch(api(path), {method, headers: {"Content-Type": "application/json"}, body: body ? JSON.stringify(body) : undefined});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}
const $ = id => document.getElementById(id);
const fmt = (v, d) => v == null ? "-" : (typeof v === "number" ? v.toFixed(d || 0) : String(v));
const interval = t => t ? `${fmt(t[0])} (${isFinite(t[1]) && Math.abs(t[1]) < 1e4 ? fmt(t[1]) : "?"}..${isFinite(t[2]) && Math.abs(t[2]) < 1e4 ? fmt(t[2]) : "?"})` : "-";
let snapshot = null;

function renderStatus(s) {
  const st = s.status, items = [["games", st.games], ["moves/s", fmt(st.moves_per_s)], ["evals/s", fmt(st.evals_per_s)],
    ["batch fill", fmt(st.fill, 2)], ["step", st.step], ["loss", st.loss], ["checkpoint", st.checkpoint],
    ["restarts", Object.values(st.restarts || {}).reduce((a, b) => a + b, 0)],
    ["eval CPU", st.eval_cpu == null ? "-" : `${fmt(st.eval_cpu, 2)} / ${fmt(st.eval_budget, 2)}`],
    ["ends pass/cap/resign", endingsText(st.endings)],
    ["median margin", st.endings ? fmt(st.endings.median_margin, 1) : "-"]];
  const dl = $("status"); dl.textContent = "";
  for (const [k, v] of items) {
    const dt = document.createElement("dt"); dt.textContent = k; dl.appendChild(dt);
    const dd = document.createElement("dd"); dd.textContent = v == null ? "-" : v; dd.dataset.key = k; dl.appendChild(dd);
  }
  $("disk").textContent = (st.disk_warnings || []).join("; ");
  const ul = $("skipped"); ul.textContent = "";
  for (const g of st.skipped_anchors || []) {   // anchors this machine cannot play, and the command that adds each
    const li = document.createElement("li"); li.dataset.what = g.what;
    li.textContent = `${g.anchors.length} anchor${g.anchors.length > 1 ? "s" : ""} skipped (${g.anchors.join(", ")}): ${g.why}` +
      (g.command ? `; add ${g.anchors.length > 1 ? "them" : "it"} with: ${g.command}` : "");
    ul.appendChild(li);
  }
  const live = $("live");   // a run whose status files stopped changing has ended
  live.textContent = st.running ? "live" : st.updated ? "ended" : "waiting for the run";
  live.title = st.updated ? "last update " + new Date(st.updated * 1000).toLocaleString() : "";
  live.classList.toggle("on", !!st.running);
}

function renderStrength(s) {
  const str = s.strength, pts = str.points;
  $("scale-note").textContent = str.scale_note || "";
  const useCgos = str.scale === "cgos";
  const val = p => useCgos ? p.cgos : p.elo;
  const gain = (p, k) => {
    if (!p.gain || k === 0) return {};
    const before = val(pts[k - 1]);
    return before ? {glo: before[0] + p.gain[0], ghi: before[0] + p.gain[1]} : {};
  };
  const mk = key => pts.map((p, k) => Object.assign({x: key === "wall_s" ? +(p.wall_s / 60).toFixed(2) : p.games,
    y: val(p) ? val(p)[0] : null, lo: val(p) ? val(p)[1] : null, hi: val(p) ? val(p)[2] : null,
    id: p.player, label: `${p.player}: ${useCgos ? "CGOS" : "Elo"} ${interval(val(p))}`}, gain(p, k)));
  const label = useCgos ? "CGOS 9x9 scale" : "Elo over random";
  // the GNU Go levels the checkpoints played, as dashed lines across the curve
  const anchorColours = ["#d9822b", "#3fae5a", "#a33", "#7a4fc9"];
  const anchors = Object.keys(str.anchors).filter(n => n.startsWith("gnugo:") && (useCgos ? str.anchors[n].cgos : str.anchors[n].elo))
    .sort((a, b) => +a.slice(6) - +b.slice(6));
  const lines = points => {
    if (!points.length) return [];
    let x0 = Math.min(...points.map(p => p.x)), x1 = Math.max(...points.map(p => p.x));
    if (x0 === x1) { const d = Math.max(0.5, Math.abs(x0) * 0.05); x0 -= d; x1 += d; }  // one point: still a line
    return anchors.map((n, i) => { const y = (useCgos ? str.anchors[n].cgos : str.anchors[n].elo)[0];
      return {name: n, colour: anchorColours[i % anchorColours.length], dash: "5,3", dots: false, cls: "anchor", points: [{x: x0, y}, {x: x1, y}]}; });
  };
  const timePoints = mk("wall_s"), gamePoints = mk("games");
  lineChart($("curve-time"), [{name: label, colour: "#2a6fdb", points: timePoints}, ...lines(timePoints)]);
  lineChart($("curve-games"), [{name: label, colour: "#2a6fdb", points: gamePoints}, ...lines(gamePoints)]);
  const last = pts[pts.length - 1];
  $("strength-latest").textContent = last ? `${last.player}: ${last.cgos ? "CGOS " + interval(last.cgos) + ", " : ""}Elo over random ${interval(last.elo)}; ${pts.length} points` : "no rated checkpoint yet";
}

function renderLosses(s) {
  const cols = s.losses.columns, colours = ["#2a6fdb", "#d9822b", "#3fae5a", "#a33", "#7a4fc9", "#555"];
  const series = Object.keys(cols).map((name, i) => ({name, colour: colours[i % colours.length], dots: false,
    points: s.losses.step.map((x, k) => ({x, y: cols[name][k]}))}));
  lineChart($("losses"), series, {empty: "no training yet"});
}

// rated checkpoints in the table, newest first; the unrated ones folded below it
function renderCheckpoints(s) {
  const gnugo = {};
  for (const p of s.strength.points) gnugo[p.player] = p.gnugo;
  const rated = s.checkpoints.filter(c => c.elo), unrated = s.checkpoints.filter(c => !c.elo);
  const row = (c, cells) => {
    const tr = document.createElement("tr"); tr.dataset.name = c.name;
    for (const v of cells) { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); }
    const td = document.createElement("td"), b = document.createElement("button");
    b.textContent = "play"; b.onclick = () => { $("play-checkpoint").value = c.name; startGame(); };
    td.appendChild(b); tr.appendChild(td); return tr;
  };
  const tbody = $("checkpoints").querySelector("tbody"); tbody.textContent = "";
  for (const c of rated) {
    const g = (c.player && gnugo[c.player]) || {};
    const gtext = Object.keys(g).sort().map(k => `${k} ${g[k][0]}-${g[k][1]}`).join(", ");
    tbody.appendChild(row(c, [c.name, c.step < 0 ? "-" : c.step, interval(c.cgos), interval(c.elo), c.games == null ? "-" : c.games, gtext || "-"]));
  }
  const folded = $("unrated-checkpoints").querySelector("tbody"); folded.textContent = "";
  for (const c of unrated) folded.appendChild(row(c, [c.name, c.step < 0 ? "-" : c.step]));
  $("unrated").hidden = !unrated.length;
  $("unrated-summary").textContent = `${unrated.length} checkpoint${unrated.length === 1 ? "" : "s"} not rated`;
  const sel = $("play-checkpoint"), chosen = sel.value; sel.textContent = "";
  const names = [];
  for (const [label, items] of [["rated", rated], ["not rated", unrated], ["reference players", s.references || []]]) {
    if (!items.length) continue;
    const group = document.createElement("optgroup"); group.label = label;
    for (const c of items) {
      const o = document.createElement("option"); o.value = c.name; names.push(c.name);
      o.textContent = c.visits ? `${c.name} (${c.visits} visits a move)` : c.name; group.appendChild(o);
    }
    sel.appendChild(group);
  }
  if (chosen && names.includes(chosen)) sel.value = chosen;
}

function endingsText(e) {
  if (!e || !e.games) return "-";
  return [e.passes, e.move_cap, e.resign].map(v => Math.round(100 * v)).join("/") + "%";
}

function renderGames(s) {
  const ul = $("games"), chosen = ul.dataset.chosen; ul.textContent = "";
  for (const g of s.games) {
    const li = document.createElement("li"); li.dataset.id = g.id;
    li.textContent = `${g.winner}${g.score != null ? "+" + Math.abs(g.score) : ""} (${g.end}), ${g.moves} moves, v${g.version}` + (g.time ? ", " + new Date(g.time * 1000).toLocaleTimeString() : "");
    if (g.id === chosen) li.classList.add("chosen");
    li.onclick = () => loadGame(g.id);
    ul.appendChild(li);
  }
}

function render(s) {
  snapshot = s;
  $("run-name").textContent = s.run;
  renderStatus(s); renderStrength(s); renderLosses(s); renderCheckpoints(s); renderGames(s);
  document.body.dataset.version = s.version;
}

// --- replay ---
let replay = null;
async function loadGame(id) {
  replay = await call("GET", "/api/game/" + encodeURIComponent(id));
  $("games").dataset.chosen = id;
  for (const li of $("games").children) li.classList.toggle("chosen", li.dataset.id === id);
  const r = $("replay-move"); r.max = replay.moves.length; r.value = 0; showMove(0);
}
function showMove(k) {
  if (!replay) return;
  k = Math.max(0, Math.min(replay.moves.length, k)); $("replay-move").value = k;
  drawBoard($("replay-board"), replay.size, replay.boards[k], {last: k ? replay.moves[k - 1] : null});
  let text = `move ${k} of ${replay.moves.length}`;
  if (k) {
    const i = k - 1, v = replay.visits[i], t = replay.total_visits[i];
    text += `: ${i % 2 ? "W" : "B"} ${vertex(replay.moves[i], replay.size)}, value ${fmt(replay.values[i], 3)} (side to move)` + (t ? `, visits ${fmt(v)} of ${fmt(t)}` : "");
  } else text += `; result ${replay.winner}${replay.score != null ? "+" + Math.abs(replay.score) : ""} (${replay.end})`;
  $("replay-info").textContent = text;
  $("replay-info").dataset.move = k;
}
$("replay-move").oninput = e => showMove(+e.target.value);
$("replay-prev").onclick = () => showMove(+$("replay-move").value - 1);
$("replay-next").onclick = () => showMove(+$("replay-move").value + 1);

// --- play ---
let game = null;
function showGame(g, note) {
  game = g;
  const a = g.analysis || {};
  const ownership = $("show-ownership").checked && a.ownership ? a.ownership : null;
  const policy = $("show-policy").checked && a.policy ? a.policy : null;
  drawBoard($("play-board"), g.size, g.board, {last: g.moves.length ? g.moves[g.moves.length - 1] : null,
    ownership, policy, moves: a.moves, onClick: v => playMove(v)});
  const last = g.moves.length ? vertex(g.moves[g.moves.length - 1], g.size) : "-";
  $("play-info").textContent = (note ? note + " " : "") + `${g.checkpoint}; you play ${g.human}; ${g.moves.length} moves, last ${last}; ` +
    (g.over ? `game over: ${g.result}` : `${g.to_move} to move`) + (a.winrate != null ? `; Black's win rate ${fmt(100 * a.winrate)}%` : "") +
    (a.scoreLead != null ? `, Black's lead ${fmt(a.scoreLead, 1)}` : "");
  $("play-info").dataset.moves = g.moves.length;
  const tbody = $("play-moves").querySelector("tbody"); tbody.textContent = "";
  for (const m of a.moves || []) {
    const tr = document.createElement("tr");
    for (const v of [m.move, m.visits, fmt(100 * m.winrate, 1) + "%", m.scoreLead == null ? "-" : fmt(m.scoreLead, 1)]) {
      const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  $("play-sgf").href = api(`/api/play/${g.id}/sgf`);
}
async function guarded(fn) {
  try { await fn(); } catch (e) { $("play-info").textContent = "error: " + e.message; }
}
async function startGame() {
  await guarded(async () => {
    if (game) { try { await call("DELETE", "/api/play/" + game.id); } catch (e) {} game = null; }
    const amount = +$("play-amount").value, body = {checkpoint: $("play-checkpoint").value, color: $("play-color").value};
    if ($("play-limit").value === "seconds") body.seconds = amount; else body.visits = Math.round(amount);
    $("play-info").textContent = "starting the network...";
    showGame(await call("POST", "/api/play", body));
  });
}
async function playMove(v) {
  if (!game) return;
  await guarded(async () => { $("play-info").textContent = "thinking..."; showGame(await call("POST", `/api/play/${game.id}/move`, {move: v})); });
}
$("play-start").onclick = startGame;
$("play-pass").onclick = () => playMove("pass");
$("play-undo").onclick = () => game && guarded(async () => showGame(await call("POST", `/api/play/${game.id}/undo`)));
$("show-ownership").onchange = $("show-policy").onchange = () => game && showGame(game);

// --- live updates ---
function connect() {
  const es = new EventSource(api("/api/events"));
  es.addEventListener("snapshot", e => render(JSON.parse(e.data)));
  es.onerror = () => { $("live").textContent = "reconnecting"; $("live").classList.remove("on"); };
}
connect();
window.addEventListener("resize", () => snapshot && render(snapshot));
