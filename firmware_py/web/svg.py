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


def _scale(values, top: int, plot_h: int):
    """(ticks, y of a value): round ticks (1, 2 or 5 times a power of ten apart) from
    below the lowest value to above the highest, zero always among them."""
    import math
    lo = min([0.0] + [float(v) for v in values])
    hi = max([0.0] + [float(v) for v in values])
    raw = max((hi - lo) / 5, 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if hi == lo:
        hi = lo + step
    ticks = [lo + k * step for k in range(int(round((hi - lo) / step)) + 1)]
    return ticks, lambda v: top + plot_h * (hi - v) / (hi - lo)


def _rules(parts: list, ticks: list, y, left: int, right: int) -> None:
    """A labelled grid rule at each tick and a darker rule at zero."""
    for value in ticks:
        parts.append(f'<line x1="{left}" x2="{right}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     f'class="rule"/><text x="{left - 4}" y="{y(value) + 4:.1f}" '
                     f'text-anchor="end" class="axis">{value:g}</text>')
    parts.append(f'<line x1="{left}" x2="{right}" y1="{y(0):.1f}" y2="{y(0):.1f}" class="zero"/>')


def bar_chart(title: str, labels: list[str], series: list[tuple[str, list[float], str]],
              width: int = 420, height: int = 240) -> str:
    """A grouped bar chart: ``series`` = [(name, values per label, CSS colour)]; values may
    be negative: the axis goes through zero and a bar grows up or down from it."""
    top, bottom, left = 26, 44, 40
    plot_h = height - top - bottom
    ticks, y = _scale([v for _, values, _ in series for v in values], top, plot_h)
    group_w = (width - left - 8) / max(1, len(labels))
    bar_w = max(2.0, group_w * 0.8 / max(1, len(series)))
    parts = [_svg_open(width, height, title)]
    _rules(parts, ticks, y, left, width - 4)
    for i, label in enumerate(labels):
        x0 = left + i * group_w + group_w * 0.1
        for j, (name, values, colour) in enumerate(series):
            v = values[i]
            y0, y1 = sorted((y(0), y(v)))
            parts.append(f'<rect x="{x0 + j * bar_w:.1f}" y="{y0:.1f}" width="{bar_w - 1:.1f}" '
                         f'height="{max(y1 - y0, 1):.1f}" fill="{colour}">'
                         f'<title>{escape(label)}, {escape(name)}: {v:g}</title></rect>')
        parts.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{height - bottom + 16}" '
                     f'text-anchor="middle" class="axis">{escape(label[:12])}</text>')
    parts.append(_legend(series, left, height - 10))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, series: list[tuple[str, list[float], str]], width: int = 420,
               height: int = 240) -> str:
    """Scores over the games (1, 2, ...): ``series`` = [(name, values, CSS colour)], a line
    with a dot per game (so a single game shows), the axis through zero."""
    top, bottom, left = 26, 34, 40
    plot_h, plot_w = height - top - bottom, width - left - 12
    ticks, y = _scale([v for _, values, _ in series for v in values], top, plot_h)
    n = max([len(values) for _, values, _ in series] + [1])
    x = (lambda i: left + 6 + plot_w * i / (n - 1)) if n > 1 else (lambda i: left + plot_w / 2)
    parts = [_svg_open(width, height, title)]
    _rules(parts, ticks, y, left, width - 4)
    for name, values, colour in series:
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        if len(values) > 1:
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                         f'stroke-width="2"><title>{escape(name)}</title></polyline>')
        parts += [f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                  f'<title>{escape(name)}, game {i + 1}: {v:g}</title></circle>'
                  for i, v in enumerate(values)]
    parts.append(f'<text x="{width - 4}" y="{height - bottom + 14}" text-anchor="end" '
                 f'class="axis">games, oldest first</text>')
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
