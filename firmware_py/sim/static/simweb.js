// The simulated table in the browser: draws /events' state, sends gestures to /act.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const ON = [223, 243, 255];
  let st = null;            // the latest state from the server
  let selected = "";        // the token chosen by a tap ("" none)
  let cols = 9;             // spaces per board row
  let built = "";           // the board's shape drawn (last_space/cols)
  let oledShown = null;
  let drag = null;          // {colour, from, x, y, id, moved}
  let queue = Promise.resolve();

  // ----- sending ---------------------------------------------------------------------
  function send(gesture) {
    queue = queue.then(() => fetch("/act", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(gesture),
    }).then((r) => r.json()).then((answer) => {
      if (answer.error) { say(answer.error); }
    })).catch(() => say("the simulator is not answering"));
  }

  let local = {text: "", until: 0};  // a line of the page's own (a refused gesture)

  function say(text) {
    local = {text: text, until: Date.now() + 4000};
    $("said").textContent = text;
  }

  // ----- drawing ---------------------------------------------------------------------
  const oled = $("oled").getContext("2d");
  const pixels = oled.createImageData(128, 64);

  function drawOled(b64) {
    if (b64 === oledShown) { return; }
    oledShown = b64;
    const bytes = atob(b64 || "");
    const d = pixels.data;
    for (let i = 0; i < 128 * 64; i++) {
      const lit = bytes.length && (bytes.charCodeAt(i >> 3) >> (7 - (i & 7))) & 1;
      d[i * 4] = lit ? ON[0] : 0;
      d[i * 4 + 1] = lit ? ON[1] : 0;
      d[i * 4 + 2] = lit ? ON[2] : 0;
      d[i * 4 + 3] = 255;
    }
    oled.putImageData(pixels, 0, 0);
  }

  function columns(spaces) {
    const width = $("board").clientWidth || 360;
    const fit = Math.max(6, Math.min(18, Math.floor(width / 42)));
    const rows = Math.ceil(spaces / fit);
    return Math.ceil(spaces / rows);
  }

  function buildBoard() {
    const spaces = st.last_space + 1;
    cols = columns(spaces);
    const shape = spaces + "/" + cols;
    if (shape === built) { return; }
    built = shape;
    const board = $("board");
    board.style.setProperty("--cols", cols);
    board.textContent = "";
    for (let s = 0; s < spaces; s++) {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.dataset.space = s;
      cell.innerHTML = '<span class="n">' + s + '</span><span class="m"></span><span class="chips"></span>';
      board.appendChild(cell);
    }
  }

  function ink(hex) {
    const v = parseInt(hex.slice(1), 16);
    const r = v >> 16, g = (v >> 8) & 255, b = v & 255;
    return 0.299 * r + 0.587 * g + 0.114 * b > 110 ? "#000" : "#eee";
  }

  function drawBoard() {
    buildBoard();
    const income = new Set(st.income), leather = new Set(st.leather);
    for (const cell of $("board").children) {
      const s = Number(cell.dataset.space);
      const colour = st.colours[s] || "#000000";
      const dark = colour === "#000000";
      cell.style.background = dark ? "" : colour;
      cell.style.color = dark ? "" : ink(colour);
      cell.classList.toggle("dark", dark);
      cell.querySelector(".m").textContent = income.has(s) ? "$" : leather.has(s) ? "L" : "";
    }
    for (const c of ["green", "yellow"]) { placeToken(c); }
  }

  // one element per token, moved from space to space (never redrawn under a finger)
  const tokenEls = {};

  function placeToken(c) {
    let el = tokenEls[c];
    if (!el) {
      el = tokenEls[c] = document.createElement("span");
      el.dataset.colour = c;
    }
    const air = st.held === c;
    const space = air ? st.cursor : st.tokens[c];
    const cell = space === null || space === undefined ? null
      : $("board").querySelector('.cell[data-space="' + space + '"] .chips');
    const cls = "tok " + c + (air ? " air" : "") + (selected === c ? " chosen" : "")
      + (!air && st.hand === c ? " hand" : "");
    if (el.className !== cls) { el.className = cls; }
    const letter = air ? c[0] : c[0].toUpperCase();
    if (el.textContent !== letter) { el.textContent = letter; }
    if (!cell) { el.remove(); return; }
    if (el.parentNode !== cell) { if (c === "green") { cell.prepend(el); } else { cell.appendChild(el); } }
  }

  function draw() {
    if (!st) { return; }
    drawOled(st.oled);
    $("title").textContent = st.title;
    $("words").textContent = st.words;
    $("hint").textContent = st.held ? "The " + st.held + " token is in the air: tap a space to set it down."
      : selected ? "The " + selected + " token is chosen: tap a space to move it there."
        : st.hint;
    $("said").textContent = st.said || (Date.now() < local.until ? local.text : "");
    for (const btn of document.querySelectorAll(".btn")) {
      btn.classList.toggle("down", st.down === btn.dataset.button);
    }
    document.querySelector('[data-tool="cable"]').textContent = st.plugged ? "Unplug" : "Replug";
    document.querySelector('[data-tool="lift"]').disabled = Boolean(st.held);
    const warn = st.warnings.length ? " \u2014 " + st.warnings.join(" / ") : "";
    $("status").textContent = "sensor " + st.link + " \u00b7 " + st.turns + " turns" + warn;
    document.body.dataset.mode = st.mode;
    drawBoard();
  }

  // ----- the buttons: a tap presses, a long press holds --------------------------------
  function wireButton(btn) {
    let timer = null;
    const name = btn.dataset.button;
    btn.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      btn.setPointerCapture(e.pointerId);
      btn.classList.add("pressing");
      timer = setTimeout(() => {
        timer = null;
        btn.classList.add("held");
        send({kind: "hold", arg: name});
      }, st ? st.hold_ms : 1000);
    });
    const release = () => {
      btn.classList.remove("pressing", "held");
      if (timer !== null) {
        clearTimeout(timer);
        timer = null;
        send({kind: "press", arg: name});
      }
    };
    btn.addEventListener("pointerup", release);
    btn.addEventListener("pointercancel", () => {
      clearTimeout(timer);
      timer = null;
      btn.classList.remove("pressing", "held");
    });
    btn.addEventListener("contextmenu", (e) => e.preventDefault());
  }

  // ----- the board: drag a token, or tap a token and then a space ----------------------
  function spaceAt(x, y) {
    const el = document.elementFromPoint(x, y);
    const cell = el && el.closest(".cell");
    return cell ? Number(cell.dataset.space) : null;
  }

  function tapSpace(space) {
    if (st.held) {
      send({kind: "place", arg: space});
    } else if (selected) {
      send({kind: "slide", arg: {colour: selected, to: space}});
      selected = "";
    }
    draw();
  }

  function boardDown(e) {
    const tok = e.target.closest(".tok");
    if (!tok || tok.classList.contains("air")) { return; }
    e.preventDefault();
    $("board").setPointerCapture(e.pointerId);
    drag = {colour: tok.dataset.colour, x: e.clientX, y: e.clientY, id: e.pointerId, moved: false,
            from: st.tokens[tok.dataset.colour]};
  }

  function boardMove(e) {
    if (!drag || e.pointerId !== drag.id) { return; }
    if (!drag.moved && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < 8) { return; }
    drag.moved = true;
    const ghost = $("ghost");
    ghost.hidden = false;
    ghost.className = "tok " + drag.colour;
    ghost.textContent = drag.colour[0].toUpperCase();
    ghost.style.left = e.clientX + "px";
    ghost.style.top = e.clientY + "px";
    const over = spaceAt(e.clientX, e.clientY);
    for (const cell of $("board").children) {
      cell.classList.toggle("over", Number(cell.dataset.space) === over);
    }
  }

  function boardUp(e) {
    const space = spaceAt(e.clientX, e.clientY);
    if (drag && e.pointerId === drag.id) {
      const d = drag;
      drag = null;
      $("ghost").hidden = true;
      for (const cell of $("board").children) { cell.classList.remove("over"); }
      if (d.moved) {
        selected = "";
        if (space !== null && space !== d.from) {
          send({kind: "slide", arg: {colour: d.colour, to: space}});
        }
      } else if ((st.held || (selected && selected !== d.colour)) && space !== null) {
        tapSpace(space);                      // onto the other token's space
      } else {
        selected = selected === d.colour ? "" : d.colour;
      }
      draw();
      return;
    }
    if (space !== null) { tapSpace(space); }
  }

  // ----- tools and keys ----------------------------------------------------------------
  function tool(name) {
    const colour = selected || (st && st.hand) || "green";
    if (name === "lift") { send({kind: "lift_token", arg: colour}); selected = ""; }
    else if (name === "knock") { send({kind: "knock", arg: colour}); selected = ""; }
    else if (name === "tidy") { send({kind: "tidy"}); selected = ""; }
    else if (name === "cable") { send({kind: "cable"}); }
    else if (name === "help") { showIntro(true); }
    draw();
  }

  const KEYS = {Enter: "enter", Backspace: "backspace", ArrowLeft: "left", ArrowRight: "right",
                Home: "home", End: "end", " ": "space"};

  function key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !st) { return; }
    if (!$("intro").hidden) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); showIntro(false); }
      return;
    }
    if (e.key === "?" || e.key === "h") { e.preventDefault(); showIntro(true); return; }
    if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      e.preventDefault();
      send({kind: "step", arg: e.key === "ArrowUp" ? -cols : cols});
      return;
    }
    const name = KEYS[e.key] || (/^[nobgyldrNOBU]$/.test(e.key) ? e.key : null);
    if (!name) { return; }
    e.preventDefault();
    selected = "";
    send({key: name});
  }

  function showIntro(shown) {
    $("intro").hidden = !shown;
    $("table").hidden = shown;
    if (!shown) { built = ""; draw(); }
  }

  // ----- start -------------------------------------------------------------------------
  function start() {
    for (const btn of document.querySelectorAll(".btn")) { wireButton(btn); }
    for (const btn of document.querySelectorAll("[data-tool]")) {
      btn.addEventListener("click", () => { btn.blur(); tool(btn.dataset.tool); });
    }
    const board = $("board");
    board.addEventListener("pointerdown", boardDown);
    board.addEventListener("pointermove", boardMove);
    board.addEventListener("pointerup", boardUp);
    board.addEventListener("pointercancel", () => { drag = null; $("ghost").hidden = true; });
    $("start").addEventListener("click", () => showIntro(false));
    document.addEventListener("keydown", key);
    window.addEventListener("resize", () => { built = ""; draw(); });
    const events = new EventSource("/events");
    events.addEventListener("state", (e) => { st = JSON.parse(e.data); draw(); });
    events.onerror = () => { $("status").textContent = "reconnecting to the simulator\u2026"; };
  }

  start();
})();
