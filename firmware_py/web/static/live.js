// The live table: server-sent events from /events, each a full snapshot (patchwork-live/1).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
  let shownGame = null;

  function text(id, value) { const el = $(id); if (el) el.textContent = value; }

  function board(snap) {
    const express = snap.last_space <= 29;
    $("board-patchwork").style.display = express ? "none" : "";
    $("board-express").style.display = express ? "" : "none";
    const id = express ? "board-express" : "board-patchwork";
    (snap.leds || []).forEach((c, space) => {
      const cell = $(`${id}-s${space}`);
      if (cell) cell.setAttribute("fill", (c[0] + c[1] + c[2]) ? rgb(c) : "#111");
    });
    const where = {};
    (snap.players || []).forEach((p) => { where[p.colour] = p.position; });
    ["green", "yellow"].forEach((colour) => {
      const token = $(`${id}-${colour}`);
      const cell = $(`${id}-s${where[colour]}`);
      if (!token) return;
      token.style.display = cell ? "" : "none";
      if (!cell) return;
      token.setAttribute("cx", Number(cell.dataset.x) + Number(token.dataset.dx));
      token.setAttribute("cy", cell.dataset.y);
      token.classList.toggle("active", snap.to_move === colour);
    });
  }

  function players(snap) {
    const body = $("players-body");
    body.textContent = "";
    (snap.players || []).forEach((p) => {
      const tr = document.createElement("tr");
      tr.className = snap.to_move === p.colour ? "active" : "";
      tr.dataset.colour = p.colour;
      const cells = [p.name, p.position, p.buttons, p.income, p.empty, p.special ? "7x7" : "", p.score];
      cells.forEach((v, i) => {
        const td = document.createElement("td");
        td.textContent = v;
        if (i === 0) td.className = p.colour; else td.className = "num";
        td.dataset.field = ["name", "position", "buttons", "income", "empty", "special", "score"][i];
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function offer(snap) {
    const box = $("offer");
    const key = (snap.game || "") + ":" + (snap.offer || []).join(",");
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.textContent = "";
    (snap.offer || []).forEach((pid) => {
      const fig = document.createElement("figure");
      const img = document.createElement("img");
      img.src = `/patch/${snap.game}/${pid}.svg`;
      img.alt = `patch ${pid}`;
      const cap = document.createElement("figcaption");
      cap.textContent = `#${pid}`;
      fig.append(img, cap);
      box.appendChild(fig);
    });
  }

  function apply(snap) {
    board(snap);
    players(snap);
    offer(snap);
    const who = snap.players.find((p) => p.colour === snap.to_move);
    text("turn", snap.game_id ? `turn ${snap.turn}` : "setting up");
    text("to-move", snap.over ? "game over" : who ? `${who.name}'s turn` : snap.mode);
    text("instruction", snap.instruction || "");
    const winner = snap.players.find((p) => p.colour === snap.winner);
    text("winner", winner ? `${winner.name} wins ${snap.scores.join(" : ")}` : "");
    text("warnings", (snap.warnings || []).join(" / "));
    if (snap.oled && snap.oled.png) $("oled").src = "data:image/png;base64," + snap.oled.png;
    text("oled-text", (snap.oled && snap.oled.lines || []).join("\n"));
    text("seq", snap.seq);
    if (shownGame !== snap.game_id) shownGame = snap.game_id;
    document.body.dataset.seq = snap.seq;
  }

  // Reconnects with back-off whatever the failure: a browser gives up on an EventSource
  // for good after a non-200 answer (a proxy's 502 while the service restarts).
  let source = null, delay = 1000, lastAt = 0, timer = null;
  function age() {
    if (!lastAt) return "";
    const s = Math.round((Date.now() - lastAt) / 1000);
    return s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`;
  }
  function lost() {
    if (source) source.close();
    source = null;
    clearTimeout(timer);
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 30000);
    showLink();
  }
  function showLink() {
    if (source && source.readyState === EventSource.OPEN && lastAt) text("link", "live");
    else text("link", "reconnecting..." + (lastAt ? ` (this picture is ${age()} old)` : ""));
  }
  function connect() {
    source = new EventSource("/events");
    source.addEventListener("live", (e) => {
      apply(JSON.parse(e.data));
      lastAt = Date.now();
      delay = 1000;
      showLink();
    });
    source.onerror = lost;
  }
  setInterval(showLink, 1000);
  connect();
})();
