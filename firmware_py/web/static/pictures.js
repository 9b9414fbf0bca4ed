// Pictures shared by the live page and the replay viewer: a quilt board, the offer.
"use strict";
// q = {rows, cols, count, covered: [[row, col], ...] or null (where the patches lie is
// not known)}; box: the element to draw in; note: the element for the words under it.
window.drawQuilt = function (box, note, q) {
  const NS = "http://www.w3.org/2000/svg";
  const el = (tag, attrs) => {
    const node = document.createElementNS(NS, tag);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  };
  box.textContent = "";
  const size = 14;
  const total = q.rows * q.cols;
  const svg = el("svg", { viewBox: `0 0 ${q.cols * size} ${q.rows * size}`, role: "img",
    "aria-label": `quilt: ${q.count} of ${total} squares covered` });
  const covered = new Set((q.covered || []).map((c) => c[0] * q.cols + c[1]));
  for (let r = 0; r < q.rows; r++) {
    for (let c = 0; c < q.cols; c++) {
      svg.appendChild(el("rect", { x: c * size + 0.5, y: r * size + 0.5, width: size - 1,
        height: size - 1, fill: covered.has(r * q.cols + c) ? "#c27b3a" : "#f1ebe0",
        stroke: "#b9ad9a" }));
    }
  }
  box.appendChild(svg);
  note.textContent = q.covered ? `${q.count} of ${total} squares covered`
    : `${q.count} of ${total} squares covered (where the patches lie is not recorded)`;
};

// The patches on offer as pictures (the places counted from the neutral token).
window.drawOffer = function (box, game, ids) {
  box.textContent = "";
  ids.forEach((pid, i) => {
    const fig = document.createElement("figure");
    const img = document.createElement("img");
    img.src = `/patch/${game}/${pid}.svg`;
    img.alt = `patch ${pid}`;
    const cap = document.createElement("figcaption");
    cap.textContent = ["1st", "2nd", "3rd"][i];
    fig.append(img, cap);
    box.appendChild(fig);
  });
};
