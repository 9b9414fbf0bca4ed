"""SVG pictures for the web page: the time board, patches and simple charts.

All functions return SVG text (no external files, fonts or scripts), so the page
needs nothing from the internet. Text inside is escaped.
"""
from __future__ import annotations

from html import escape

CELL = 40            #: px per time-board space
LEGEND = ("Under each patch: its price in buttons (blue button), the spaces it costs on "
          "the time board (hourglass) and, as +N, the buttons it adds to income.")
GAP = 4              #: px between spaces


def spiral(cols: int, rows: int) -> list[tuple[int, int]]:
    """Grid cells (col, row) of a clockwise square spiral from the top-left corner
    inwards, like the time board's track; ``cols`` x ``rows`` cells in all."""
    out, seen = [], set()
    c, r, dc, dr = 0, 0, 1, 0
    for _ in range(cols * rows):
        out.append((c, r))
        seen.add((c, r))
        nc, nr = c + dc, r + dr
        if not (0 <= nc < cols and 0 <= nr < rows) or (nc, nr) in seen:
            dc, dr = -dr, dc                      # turn right
            nc, nr = c + dc, r + dr
        c, r = nc, nr
    return out


def board_cells(last_space: int) -> list[tuple[int, int]]:
    """The grid cell of each space 0..``last_space`` (Patchwork 8 x 7, Express 6 x 5)."""
    cols, rows = (8, 7) if last_space > 29 else (6, 5)
    cells = spiral(cols, rows)
    if last_space + 1 > len(cells):
        raise ValueError(f"a board of {last_space + 1} spaces does not fit {cols} x {rows}")
    return cells[:last_space + 1]


def board_svg(last_space: int, income=(), leather=(), element_id: str = "board") -> str:
    """The time board as SVG, drawn as the game's spiral: a track through the
    spaces from 0 (outside, top left) inwards to the last, one ``<rect
    id="{element_id}-s{N}">`` per space (the live page fills them with the LED
    colours), the space number, a button on each income space, a leather
    patch ``{element_id}-l{N}`` on each leather space (class ``taken`` hides
    it), and two token circles ``{element_id}-green``/``-yellow`` (moved by
    setting ``cx``/``cy``). Each rect carries ``data-x``/``data-y``, the centre
    of its space. Raises ValueError when the spaces do not fit the grid."""
    cells = board_cells(last_space)
    cols = max(c for c, _ in cells) + 1
    rows = max(r for _, r in cells) + 1
    pitch = CELL + GAP
    w, h = cols * pitch + GAP, rows * pitch + GAP
    centres = [(GAP + c * pitch + CELL / 2, GAP + r * pitch + CELL / 2) for c, r in cells]
    parts = [f'<svg id="{element_id}" class="board" viewBox="0 0 {w} {h}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="time board">'
             f'<rect width="{w}" height="{h}" rx="8" fill="#5b4630"/>',
             '<polyline class="track" points="'
             + " ".join(f"{x:g},{y:g}" for x, y in centres) + '"/>']
    for space, (x, y) in enumerate(centres):
        x0, y0 = x - CELL / 2, y - CELL / 2
        parts.append(f'<rect id="{element_id}-s{space}" class="space" x="{x0:g}" y="{y0:g}" '
                     f'width="{CELL}" height="{CELL}" rx="5" fill="#111" data-x="{x:g}" '
                     f'data-y="{y:g}"><title>space {space}</title></rect>')
        parts.append(f'<text x="{x0 + 3:g}" y="{y0 + 11:g}" class="num">{space}</text>')
        if space in income:
            parts.append(f'<circle cx="{x0 + CELL - 9:g}" cy="{y0 + CELL - 9:g}" r="6" '
                         f'class="income"><title>income: a button</title></circle>')
        if space in leather:
            parts.append(f'<rect x="{x0 + 4:g}" y="{y0 + CELL - 13:g}" width="9" height="9" '
                         f'class="leather" id="{element_id}-l{space}">'
                         f'<title>leather patch</title></rect>')
    for colour, dx in (("green", -7), ("yellow", 7)):
        cx, cy = centres[0][0] + dx, centres[0][1]
        parts.append(f'<circle id="{element_id}-{colour}" class="token {colour}" cx="{cx:g}" '
                     f'cy="{cy:g}" r="8" data-dx="{dx}"><title>{colour.capitalize()} time token'
                     f'</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def patch_svg(patch, size: int = 14) -> str:
    """A patch (``shape`` rows '#' covered, 'O' covered with a button, '.' empty) as SVG,
    with its price in buttons (a button), its time (an hourglass) and its income
    ("+1") under it, as printed on the patch (see :data:`LEGEND`)."""
    rows, cols = len(patch.shape), len(patch.shape[0])
    w, h = max(cols * size, 64) + 4, rows * size + 24
    left = (w - cols * size) // 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w * 2}" '
             f'height="{h * 2}" role="img" aria-label="patch {patch.id}">'
             f'<title>patch {patch.id}: price {patch.cost} buttons, time {patch.time}, '
             f'income {patch.income}</title>']
    for r, line in enumerate(patch.shape):
        for c, ch in enumerate(line):
            if ch == ".":
                continue
            x, y = left + c * size, 2 + r * size
            parts.append(f'<rect x="{x}" y="{y}" width="{size - 1}" height="{size - 1}" '
                         f'fill="#c27b3a" stroke="#5a2d0c"/>')
            if ch == "O":
                parts.append(f'<circle cx="{x + size / 2 - 0.5}" cy="{y + size / 2 - 0.5}" '
                             f'r="{size / 4}" fill="#2f6fd0"/>')
    y = h - 10
    parts.append(f'<circle cx="8" cy="{y}" r="6" fill="#2f6fd0"/>'
                 f'<text x="17" y="{y + 4}" font-size="12" font-family="sans-serif">{patch.cost}'
                 f'</text><path d="M{w / 2 - 6} {y - 6}h10l-10 12h10z" fill="#5a2d0c"/>'
                 f'<text x="{w / 2 + 7}" y="{y + 4}" font-size="12" font-family="sans-serif">'
                 f'{patch.time}</text>')
    if patch.income:
        parts.append(f'<text x="{w - 2}" y="{y + 4}" text-anchor="end" font-size="12" '
                     f'font-family="sans-serif" fill="#2f6fd0">+{patch.income}</text>')
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(title: str, labels: list[str], series: list[tuple[str, list[float], str]],
              width: int = 560, height: int = 220) -> str:
    """A grouped bar chart: ``series`` = [(name, values per label, CSS colour)], values >= 0."""
    top, bottom, left = 24, 40, 36
    plot_h = height - top - bottom
    biggest = max([v for _, values, _ in series for v in values] + [1])
    group_w = (width - left - 8) / max(1, len(labels))
    bar_w = max(2.0, group_w * 0.8 / max(1, len(series)))
    parts = [_svg_open(width, height, title)]
    for k in range(5):
        value = biggest * k / 4
        y = top + plot_h - plot_h * k / 4
        parts.append(f'<line x1="{left}" x2="{width - 4}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" class="axis">'
                     f'{value:.3g}</text>')
    for i, label in enumerate(labels):
        x0 = left + i * group_w + group_w * 0.1
        for j, (name, values, colour) in enumerate(series):
            v = values[i]
            bh = plot_h * v / biggest
            parts.append(f'<rect x="{x0 + j * bar_w:.1f}" y="{top + plot_h - bh:.1f}" '
                         f'width="{bar_w - 1:.1f}" height="{bh:.1f}" fill="{colour}">'
                         f'<title>{escape(label)}, {escape(name)}: {v:g}</title></rect>')
        parts.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{height - bottom + 14}" '
                     f'text-anchor="middle" class="axis">{escape(label[:12])}</text>')
    parts.append(_legend(series, left, height - 12))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, series: list[tuple[str, list[float], str]], width: int = 560,
               height: int = 220) -> str:
    """Lines over the game number (1, 2, ...): ``series`` = [(name, values, CSS colour)]."""
    top, bottom, left = 24, 30, 36
    plot_h, plot_w = height - top - bottom, width - left - 8
    values_all = [v for _, values, _ in series for v in values]
    lo, hi = min(values_all + [0]), max(values_all + [1])
    span = (hi - lo) or 1
    n = max([len(values) for _, values, _ in series] + [2])
    parts = [_svg_open(width, height, title)]
    for k in range(5):
        value = lo + span * k / 4
        y = top + plot_h - plot_h * k / 4
        parts.append(f'<line x1="{left}" x2="{width - 4}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" class="axis">'
                     f'{value:.3g}</text>')
    for name, values, colour in series:
        points = " ".join(f"{left + plot_w * i / (n - 1):.1f},"
                          f"{top + plot_h - plot_h * (v - lo) / span:.1f}" for i, v in enumerate(values))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2">'
                     f'<title>{escape(name)}</title></polyline>')
    parts.append(_legend(series, left, height - 8))
    parts.append("</svg>")
    return "".join(parts)


def _svg_open(width: int, height: int, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
            f'<text x="{width / 2}" y="15" text-anchor="middle" class="title">{escape(title)}</text>')


def _legend(series, x: int, y: int) -> str:
    out = []
    for name, _, colour in series:
        out.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{x + 14}" y="{y}" class="axis">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return "".join(out)
