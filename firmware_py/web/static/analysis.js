// The post-game analysis on a game's page: a win-chance graph (click a point to jump the
// replay there) and each player's three costliest decisions, from /api/analysis/<id>.
"use strict";
(function () {
  const box = document.getElementById("analysis");
  if (!box) return;
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = "/static/analysis.css";
  document.head.appendChild(css);
  const NS = "http://www.w3.org/2000/svg";
  const W = 720, H = 220, L = 40, R = 10, T = 12, B = 28;
  const pct = (x) => `${x >= 0 ? "+" : ""}${Math.round(x * 100)}%`;

  function el(tag, attrs, parent, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function jump(frame) {
    const slider = document.getElementById("slider");
    if (!slider) return;
    slider.value = frame;
    slider.dispatchEvent(new Event("input"));
  }

  function graph(data, frames, costly) {
    const pts = data.analysis.points;
    const x = (f) => L + (W - L - R) * f / Math.max(frames, 1);
    const y = (p) => T + (H - T - B) * (1 - p);
    const svg = el("svg:svg", {viewBox: `0 0 ${W} ${H}`, class: "wingraph", id: "wingraph",
                               role: "img"});
    el("svg:title", {}, svg, `Chance that ${data.players[0]} wins, after each decision`);
    el("svg:rect", {x: L, y: T, width: W - L - R, height: H - T - B, class: "frame"}, svg);
    el("svg:line", {x1: L, x2: W - R, y1: y(0.5), y2: y(0.5), class: "even"}, svg);
    [0, 0.5, 1].forEach((p) => el("svg:text", {x: 4, y: y(p) + 4}, svg, `${p * 100}%`));
    el("svg:text", {x: L, y: H - 8}, svg, "start");
    el("svg:text", {x: W - R - 60, y: H - 8}, svg, `move ${frames}`);
    const colour = data.colours[0] === "yellow" ? "yellow" : "green";
    const upper = pts.map((p) => `${x(p.frame)},${y(Math.min(1, p.chance + p.pm))}`);
    const lower = pts.slice().reverse().map((p) => `${x(p.frame)},${y(Math.max(0, p.chance - p.pm))}`);
    el("svg:polygon", {points: upper.concat(lower).join(" "), class: `band ${colour}`}, svg);
    el("svg:polyline", {points: pts.map((p) => `${x(p.frame)},${y(p.chance)}`).join(" "),
                        class: `curve ${colour}`}, svg);
    const cursor = el("svg:line", {x1: x(0), x2: x(0), y1: T, y2: H - B, class: "cursor"}, svg);
    pts.forEach((p) => {
      const c = el("svg:circle", {cx: x(p.frame), cy: y(p.chance), r: 4, "data-frame": p.frame,
                                  class: "point" + (costly.has(p.frame) ? " costly" : "")}, svg);
      el("svg:title", {}, c, `move ${p.frame}: ${Math.round(p.chance * 100)}% +/- ` +
                              `${Math.round(p.pm * 100)}% that ${data.players[0]} wins`);
      c.addEventListener("click", () => jump(p.frame));
    });
    const slider = document.getElementById("slider");
    if (slider) {
      slider.addEventListener("input", () => {
        const f = Number(slider.value);
        cursor.setAttribute("x1", x(f));
        cursor.setAttribute("x2", x(f));
      });
    }
    return svg;
  }

  function worst(decisions, seat) {
    return decisions.filter((d) => d.player === seat && d.cost > 0)
      .sort((a, b) => b.cost - a.cost || a.move - b.move).slice(0, 3);
  }

  function lists(data, parent) {
    [0, 1].forEach((seat) => {
      el("h3", {}, parent, `${data.players[seat]}: the costliest decisions`);
      const items = worst(data.analysis.decisions, seat);
      const ol = el("ol", {class: "costly-list", id: `costly-${seat}`}, parent);
      if (!items.length) el("li", {}, ol, "none: the box agrees with every decision");
      items.forEach((d) => {
        const li = el("li", {}, ol);
        const b = el("button", {type: "button", "data-frame": d.frame}, li, `move ${d.frame}`);
        b.addEventListener("click", () => jump(d.frame));
        el("span", {}, li, `Turn ${d.turn}: you chose ${d.played}; ${d.best} was worth `);
        el("span", {class: "cost"}, li, `${pct(d.cost)} +/- ${Math.round(d.pm * 100)}%`);
        el("span", {}, li, ` win chance, about ${d.points >= 0 ? "+" : ""}${Math.round(d.points)} points`);
      });
    });
  }

  function draw(data) {
    box.replaceChildren();
    el("h2", {}, box, "Analysis");
    const status = el("p", {id: "analysis-status", class: "muted"}, box, data.message);
    if (data.state !== "done") return false;
    status.textContent = `Chance that ${data.players[0]} wins after each decision ` +
      "(the band: 95% sure). Click a point to see that move.";
    const frames = Number(document.getElementById("slider").max) || data.analysis.points.length;
    const costly = new Set();
    [0, 1].forEach((s) => worst(data.analysis.decisions, s).forEach((d) => costly.add(d.frame)));
    box.appendChild(graph(data, frames, costly));
    lists(data, box);
    const notes = el("ul", {class: "analysis-notes"}, box);
    data.analysis.notes.forEach((n) => el("li", {}, notes, n));
    el("p", {class: "analysis-notes"}, box,
       `By the box's searcher: ${data.analysis.settings.iterations} search iterations and ` +
       `${data.analysis.settings.playouts} playouts per decision.`);
    return true;
  }

  function load() {
    fetch(`/api/analysis/${encodeURIComponent(box.dataset.game)}`, {cache: "no-store"})
      .then((r) => r.ok ? r.json() : Promise.reject(new Error(r.statusText)))
      .then((data) => { if (!draw(data) && data.state !== "error") setTimeout(load, 3000); })
      .catch(() => setTimeout(load, 10000));
  }
  load();
})();
