// The replay viewer: steps through the states embedded in the page (no requests).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const $ = (id) => document.getElementById(id);
  let at = 0;
  function show(k) {
    at = Math.max(0, Math.min(data.steps.length - 1, k));
    const s = data.steps[at];
    $("step").textContent = `${at} / ${data.steps.length - 1}`;
    $("move").textContent = s.text;
    $("slider").value = at;
    s.players.forEach((p, i) => {
      ["position", "buttons", "income", "empty", "score"].forEach((f) => {
        $(`r-${i}-${f}`).textContent = p[f];
      });
      const cell = $(`replay-board-s${p.position}`);
      const token = $(`replay-board-${p.colour}`);
      if (cell && token) {
        token.setAttribute("cx", Number(cell.dataset.x) + Number(token.dataset.dx));
        token.setAttribute("cy", cell.dataset.y);
      }
    });
    $("r-offer").textContent = s.offer.map((id) => "#" + id).join("  ");
  }
  $("prev").onclick = () => show(at - 1);
  $("next").onclick = () => show(at + 1);
  $("first").onclick = () => show(0);
  $("last").onclick = () => show(data.steps.length - 1);
  $("slider").max = data.steps.length - 1;
  $("slider").oninput = (e) => show(Number(e.target.value));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") show(at + 1);
    if (e.key === "ArrowLeft") show(at - 1);
  });
  show(0);
})();
