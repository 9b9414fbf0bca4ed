// The replay viewer: steps through the states embedded in the page (no requests).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const $ = (id) => document.getElementById(id);
  let at = 0;

  function token(p) {
    const cell = $(`replay-board-s${p.position}`);
    const t = $(`replay-board-${p.colour}`);
    return [cell, t];
  }

  function show(k) {
    at = Math.max(0, Math.min(data.steps.length - 1, k));
    const s = data.steps[at];
    $("step").textContent = `${at} / ${data.steps.length - 1}`;
    $("move").textContent = s.text;
    const pic = $("move-patch");
    if (s.patch !== null && s.patch !== undefined) {
      pic.src = `/patch/${data.game}/${s.patch}.svg`;
      pic.alt = `patch ${s.patch}`;
      pic.hidden = false;
    } else pic.hidden = true;
    $("slider").value = at;
    const shared = s.players[0].position === s.players[1].position;
    s.players.forEach((p, i) => {
      ["position", "buttons", "income", "empty", "score"].forEach((f) => {
        $(`r-${i}-${f}`).textContent = p[f];
      });
      const [cell, t] = token(p);
      if (cell && t) {
        const top = s.who === null ? i === 0 : i === s.who;   // the token landing goes on top (R4)
        if (shared && top) t.parentNode.appendChild(t);
        t.setAttribute("cx", Number(cell.dataset.x) + (shared ? 0 : Number(t.dataset.dx)));
        t.setAttribute("cy", Number(cell.dataset.y) + (shared ? (top ? -5 : 4) : 0));
        t.classList.toggle("active", i === s.who);
      }
      if (s.quilts) window.drawQuilt($(`q-${i}`), $(`q-${i}-note`), s.quilts[i]);
    });
    const left = new Set(s.leather || []);
    document.querySelectorAll("#replay-board .leather").forEach((m) => {
      m.classList.toggle("taken", !left.has(Number(m.id.split("-l")[1])));
    });
    window.drawOffer($("r-offer"), data.game, s.offer);
  }
  $("prev").onclick = () => show(at - 1);
  $("next").onclick = () => show(at + 1);
  $("first").onclick = () => show(0);
  $("last").onclick = () => show(data.steps.length - 1);
  $("slider").max = data.steps.length - 1;
  $("slider").oninput = (e) => show(Number(e.target.value));
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "range") return;
    if (e.key === "ArrowRight") { show(at + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft") { show(at - 1); e.preventDefault(); }
    if (e.key === "Home") show(0);
    if (e.key === "End") show(data.steps.length - 1);
  });
  show(0);
})();
