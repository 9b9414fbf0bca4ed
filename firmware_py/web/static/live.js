// The live table: server-sent events from /events, each a full snapshot (patchwork-live/1).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
  const SETUP = { setup_game: "choosing the game", setup_board: "choosing the time board",
    setup_players: "choosing who plays", setup_first: "choosing who starts",
    setup_names: "choosing the players' names", setup_layout: "choosing how to lay out the patches",
    deal: "laying out the patches" };
  // before a game is dealt: both tokens on the start space, 5 buttons each (R2)
  const START = [{ colour: "green", name: "Green", position: 0, buttons: 5, income: 0, empty: 81, score: -157 },
    { colour: "yellow", name: "Yellow", position: 0, buttons: 5, income: 0, empty: 81, score: -157 }];
  const seats = (snap) => (snap.players && snap.players.length ? snap.players : START);
  let stoppedAt = null;   // the browser's time at which the box was last heard of, when it stopped

  function text(id, value) { const el = $(id); if (el) el.textContent = value; }

  // A player's name with a mark in their token's colour.
  function named(p, suffix) {
    const span = document.createElement("span");
    const mark = document.createElement("span");
    mark.className = `mark ${p.colour}`;
    mark.title = `${p.colour} time token`;
    span.append(mark, p.name + (suffix || ""));
    return span;
  }

  function place(id, colour, space, stacked) {
    const token = $(`${id}-${colour}`);
    const cell = $(`${id}-s${space}`);
    if (!token) return;
    token.style.display = cell ? "" : "none";
    if (!cell) return;
    // tokens on one space stack (the one on top drawn last, offset up)
    token.setAttribute("cx", Number(cell.dataset.x) + (stacked ? 0 : Number(token.dataset.dx)));
    token.setAttribute("cy", Number(cell.dataset.y) - (stacked === "top" ? 5 : 0) +
      (stacked === "under" ? 4 : 0));
  }

  function board(snap) {
    const express = snap.last_space <= 29;
    $("board-patchwork").hidden = express;
    $("board-express").hidden = !express;
    const id = express ? "board-express" : "board-patchwork";
    (snap.leds || []).forEach((c, space) => {
      const cell = $(`${id}-s${space}`);
      if (cell) cell.setAttribute("fill", (c[0] + c[1] + c[2]) ? rgb(c) : "#111");
    });
    const leather = new Set((snap.lights && snap.lights.leather) || []);
    document.querySelectorAll(`#${id} .leather`).forEach((mark) => {
      mark.classList.toggle("taken", !leather.has(Number(mark.id.split("-l")[1])));
    });
    const players = seats(snap);   // setting up or dealing: both tokens on the start space
    const shared = players.length === 2 && players[0].position === players[1].position;
    players.forEach((p, i) => {
      const top = snap.to_move ? p.colour === snap.to_move : i === 0;
      place(id, p.colour, p.position, shared ? (top ? "top" : "under") : "");
      const token = $(`${id}-${p.colour}`);
      if (token) {
        token.classList.toggle("active", snap.to_move === p.colour);
        if (top && token.parentNode) token.parentNode.appendChild(token);   // drawn on top
      }
    });
  }

  function players(snap) {
    const body = $("players-body");
    body.textContent = "";
    seats(snap).forEach((p) => {
      const tr = document.createElement("tr");
      tr.className = snap.to_move === p.colour ? "active" : "";
      tr.dataset.colour = p.colour;
      const fields = ["name", "position", "buttons", "income", "empty", "score"];
      fields.forEach((f, i) => {
        const td = document.createElement("td");
        if (i === 0) td.append(named(p, p.special ? " (7x7 tile)" : ""));
        else { td.textContent = p[f]; td.className = f === "position" ? "num wide" : "num"; }
        td.dataset.field = f;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function offer(snap) {
    const box = $("offer");
    const free = snap.layout === "free";
    const key = (snap.game || "") + ":" + snap.layout + ":" + snap.left + ":" + (snap.offer || []).join(",");
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.textContent = "";
    if (!snap.game) { text("offer-title", "On offer"); box.textContent = "the patches are being laid out"; return; }
    if (free) {
      text("offer-title", "Patches left");
      box.textContent = `free layout: any of the ${snap.left} left may be bought`;
      return;
    }
    text("offer-title", "On offer (the next three after the neutral token)");
    window.drawOffer(box, snap.game, snap.offer || []);
  }

  // Each quilt where known: the box's from the record's meta.box_quilt, else the count.
  function quilts(snap) {
    const size = snap.game === "patchwork-express" ? 7 : 9;
    const box = ((snap.record || {}).meta || {}).box_quilt;
    seats(snap).forEach((p, i) => {
      const name = $(`q-${i}-name`);
      name.textContent = "";
      name.append(named(p));
      let covered = null;
      if (box && box.player === i && Array.isArray(box.quilt)) {
        covered = [];
        box.quilt.forEach((row, r) => [...row].forEach((ch, c) => { if (ch === "#") covered.push([r, c]); }));
      }
      window.drawQuilt($(`q-${i}`), $(`q-${i}-note`),
        { rows: size, cols: size, count: size * size - p.empty, covered });
    });
  }

  function headline(snap) {
    const h = $("to-move");
    h.textContent = "";
    const who = (snap.players || []).find((p) => p.colour === snap.to_move);
    const winner = (snap.players || []).find((p) => p.colour === snap.winner);
    if (snap.over && winner) {
      const other = snap.players.find((p) => p !== winner);
      h.append(named(winner, ` wins ${winner.score} to ${other.score}`));
    } else if (snap.mode === "end") h.textContent = "Game ended early";
    else if (who) h.append(named(who, "'s turn"));
    else if (SETUP[snap.mode]) h.textContent = `Setting up: ${SETUP[snap.mode]}`;
    else h.textContent = snap.mode || "";
    text("turn", snap.game_id ? `turn ${snap.turn + 1}` : "");
  }

  function status() {
    if (stoppedAt === null) return;
    const minutes = Math.floor((Date.now() - stoppedAt) / 60000);
    text("link", minutes < 1 ? "the box stopped less than a minute ago: this is its last game"
      : `the box stopped ${minutes} min ago: this is its last game`);
  }

  function apply(snap) {
    $("waiting").hidden = true;
    $("table").hidden = false;
    board(snap);
    players(snap);
    offer(snap);
    quilts(snap);
    headline(snap);
    const said = snap.mode === "deal" ? "Lay the patches out one by one as the box's screen shows them."
      : snap.instruction || "";
    text("instruction", said === $("to-move").textContent ? "" : said);
    text("winner", "");
    text("warnings", snap.badge || (snap.warnings || []).join(" / "));   // the OLED's words
    $("warnings").title = (snap.warnings || []).join("\n");                 // the full texts
    const oled = $("oled");
    if (snap.oled && snap.oled.png) { oled.src = "data:image/png;base64," + snap.oled.png; oled.hidden = false; }
    text("oled-text", (snap.oled && snap.oled.lines || []).join("\n"));
    text("seq", snap.seq);
    if (typeof snap.stopped_s === "number") {
      stoppedAt = Date.now() - snap.stopped_s * 1000;
      document.body.classList.add("stopped");
      status();
    } else {
      stoppedAt = null;
      document.body.classList.remove("stopped");
      text("link", "live: updates as the game is played");
    }
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
    if (source && source.readyState === EventSource.OPEN && lastAt) {
      if (stoppedAt !== null) status();       // the page's link is up, the box is not
      else text("link", "live");
    }
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
