"""The web page's HTML, built on the server from plain values (every text escaped).

Pages: the live table (:func:`live_page`), the history with filters
(:func:`history_page`), one game with its replay viewer (:func:`game_page`),
statistics with SVG charts (:func:`stats_page`), downloads, and player names
(:func:`players_page`, editable with a PIN shown on the OLED). Scripts and the
stylesheet are the package's own files under ``/static/``: nothing comes from
the internet.
"""
from __future__ import annotations

import json
from html import escape
from urllib.parse import urlencode

from ..rules import load_spec
from . import svg

GAME_NAMES = {"patchwork": "Patchwork", "patchwork-express": "Patchwork Express"}
NAV = (("/", "Live"), ("/history", "History"), ("/stats", "Statistics"),
       ("/downloads", "Downloads"), ("/players", "Players"))
COLOURS = {"green": "#1aa31a", "yellow": "#e6a000"}
SERIES = ("#1aa31a", "#e6a000", "#3b6fd8", "#b5651d", "#8e44ad", "#555555")


def layout(title: str, here: str, body: str, scripts: tuple[str, ...] = ()) -> str:
    """A whole HTML page: header with the navigation, ``body`` (HTML), ``scripts`` (paths)."""
    nav = "".join(f'<a href="{href}"{" class=here" if href == here else ""}>{name}</a>'
                  for href, name in NAV)
    tags = "".join(f'<script src="{s}" defer></script>' for s in scripts)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{escape(title)} - Patchwork companion</title><link rel="icon" href="data:,">'
            f'<link rel="stylesheet" href="/static/style.css">{tags}</head><body>'
            f'<header><span class="brand">Patchwork companion</span>{nav}</header>'
            f'<main>{body}</main></body></html>')


def live_page() -> str:
    """The live table; ``/static/live.js`` fills it from ``/events``."""
    p, e = load_spec("patchwork", "2014"), load_spec("patchwork-express")
    boards = (svg.board_svg(p.last_space, p.income_spaces, (), "board-patchwork") +
              svg.board_svg(e.last_space, e.income_spaces, (), "board-express")
              .replace('class="board"', 'class="board" style="display:none"', 1))
    body = f"""
<h1><span id="to-move">waiting for the companion...</span> <small class="muted" id="turn"></small></h1>
<div class="grid">
 <section class="card live"><h2>Time board</h2>{boards}
  <p class="instruction" id="instruction"></p><p class="ok" id="winner"></p>
  <p class="error" id="warnings"></p></section>
 <section>
  <div class="card"><h2>Players</h2>
   <table class="players"><thead><tr><th>player</th><th class="num">space</th>
   <th class="num">buttons</th><th class="num">income</th><th class="num">empty</th>
   <th>tile</th><th class="num">score</th></tr></thead><tbody id="players-body"></tbody></table></div>
  <div class="card"><h2>On offer</h2><div class="offer" id="offer"></div></div>
  <div class="card"><h2>OLED</h2><img id="oled" class="oled" alt="the OLED screen">
   <pre id="oled-text" class="muted"></pre></div>
  <p class="muted">feed: <span id="link">connecting...</span>, snapshot <span id="seq">-</span></p>
 </section>
</div>"""
    return layout("Live table", "/", body, ("/static/live.js",))


def _when(row: dict) -> str:
    """The start of a game as the history shows it ("clock not set" when it was taken
    before the box's clock was set)."""
    from ..store.dates import shown
    return escape(shown(row.get("started")))


def _players_cell(row: dict) -> str:
    out = []
    for p in row["players"]:
        name = escape(p["name"])
        out.append(f"<b>{name}</b>" if p.get("winner") else name)
    return " vs ".join(out)


def _duration(seconds) -> str:
    if not seconds:
        return ""
    return f"{int(seconds) // 60} min"


def history_page(rows: list[dict], total: int, filters: dict, names: list[str],
                 page: int, per_page: int) -> str:
    """The history: newest first, filters by player and game, ``per_page`` rows a page."""
    game_opts = "".join(f'<option value="{k}"{" selected" if filters.get("game") == k else ""}>'
                        f'{v}</option>' for k, v in [("", "any game")] + list(GAME_NAMES.items()))
    player_opts = '<option value="">any player</option>' + "".join(
        f'<option{" selected" if filters.get("player") == n else ""}>{escape(n)}</option>'
        for n in names)
    lines = []
    for r in rows:
        scores = " : ".join(str(p["score"]) for p in r["players"])
        winner = next((p["name"] for p in r["players"] if p.get("winner")), "")
        lines.append(f'<tr data-id="{escape(str(r["id"]))}"><td>{_when(r)}</td>'
                     f'<td>{GAME_NAMES.get(r["game"], escape(r["game"]))}</td>'
                     f'<td>{escape(r.get("time_board") or "")}</td><td>{_players_cell(r)}</td>'
                     f'<td class="num">{scores}</td><td>{escape(winner)}</td>'
                     f'<td class="num">{_duration(r.get("duration_s"))}</td>'
                     f'<td><a href="/game/{escape(str(r["id"]))}">replay</a></td></tr>')
    pages = max(1, -(-total // per_page))
    query = {k: v for k, v in filters.items() if v}
    pager = []
    if page > 1:
        pager.append(f'<a href="/history?{urlencode({**query, "page": page - 1})}">newer</a>')
    pager.append(f"page {page} of {pages} ({total} games)")
    if page < pages:
        pager.append(f'<a href="/history?{urlencode({**query, "page": page + 1})}">older</a>')
    body = f"""<h1>History</h1>
<form class="filters" method="get" action="/history">
 <label>player<select name="player">{player_opts}</select></label>
 <label>game<select name="game">{game_opts}</select></label><button>show</button></form>
<table id="history"><thead><tr><th>started</th><th>game</th><th>time board</th><th>players</th>
<th class="num">scores</th><th>winner</th><th class="num">duration</th><th></th></tr></thead>
<tbody>{"".join(lines) or '<tr><td colspan="8" class="muted">no games yet</td></tr>'}</tbody></table>
<div class="pager">{" ".join(pager)}</div>"""
    return layout("History", "/history", body)


def game_page(row: dict, steps: list[dict], editing: bool = False, message: str = "") -> str:
    """One game: the tally, downloads, and the replay viewer over ``steps``
    (each ``{"text", "offer", "players": [{colour, position, buttons, income, empty, score}]}``);
    ``editing``: a form to correct the players' names (an editing session is open)."""
    spec = load_spec(row["game"], row.get("time_board") or None)
    tally = "".join(
        f'<tr><td class="{p.get("colour", "")}">{escape(p["name"])}{" (winner)" if p.get("winner") else ""}'
        f'</td><td class="num">{p["buttons"]}</td><td class="num">{p["income"]}</td>'
        f'<td class="num">{p["empty"]}</td><td>{"7x7" if p.get("special") else ""}</td>'
        f'<td class="num">{p["score"]}</td></tr>' for p in row["players"])
    rows = "".join(
        f'<tr><td>{escape(p["name"])}</td><td class="num" id="r-{i}-position"></td>'
        f'<td class="num" id="r-{i}-buttons"></td><td class="num" id="r-{i}-income"></td>'
        f'<td class="num" id="r-{i}-empty"></td><td class="num" id="r-{i}-score"></td></tr>'
        for i, p in enumerate(row["players"]))
    gid = escape(str(row["id"]))
    data = json.dumps({"steps": steps}).replace("</", "<\\/")
    board = svg.board_svg(spec.last_space, spec.income_spaces, spec.leather_spaces, "replay-board")
    body = f"""<h1>{GAME_NAMES.get(row["game"], escape(row["game"]))}, {_when(row)}</h1>
<div class="grid"><section class="card"><h2>Replay</h2>{board}
<div class="replay-controls"><button id="first">|&lt;</button><button id="prev">&lt; back</button>
<input type="range" id="slider" min="0" value="0"><button id="next">next &gt;</button>
<button id="last">&gt;|</button> <span id="step"></span></div>
<p class="instruction" id="move"></p></section>
<section><div class="card"><h2>After this move</h2><table><thead><tr><th>player</th>
<th class="num">space</th><th class="num">buttons</th><th class="num">income</th>
<th class="num">empty</th><th class="num">score</th></tr></thead><tbody>{rows}</tbody></table>
<p>on offer: <span id="r-offer"></span></p></div>
<div class="card"><h2>Final tally</h2><table><thead><tr><th>player</th><th class="num">buttons</th>
<th class="num">income</th><th class="num">empty</th><th>tile</th><th class="num">score</th></tr>
</thead><tbody>{tally}</tbody></table>
<p>time board: {escape(row.get("time_board") or "")}, {_duration(row.get("duration_s"))}</p>
<p>download: <a href="/download/{gid}.json">game record</a></p>{_rename_form(row, editing, message)}
</div></section></div>
<script type="application/json" id="replay-data">{data}</script>"""
    return layout(f"Game {row['id']}", "/history", body, ("/static/replay.js",))


def _rename_form(row: dict, editing: bool, message: str) -> str:
    note = f'<p class="ok">{escape(message)}</p>' if message else ""
    if not editing:
        return note + ('<p class="muted">Wrong names? With the PIN from the OLED (Players page) '
                       'they can be corrected here.</p>')
    first, second = (escape(p["name"]) for p in row["players"])
    return (f'{note}<form method="post" action="/game/{escape(str(row["id"]))}/names">'
            f'<label>first player<input name="first" value="{first}" maxlength="24"></label> '
            f'<label>second player<input name="second" value="{second}" maxlength="24"></label> '
            f'<button>correct the names</button></form>')


def stats_page(stats: dict) -> str:
    """Statistics per player name and per game kind, with SVG charts.

    ``stats``: ``{"players": [{name, games, wins, avg_score, best_score, bonus_rate,
    avg_empty, avg_income}], "games": [{game, games, avg_score, best_score}],
    "scores": {name: [score per game, oldest first]}}``."""
    players = stats["players"]
    head = ("<tr><th>player</th><th class=num>games</th><th class=num>wins</th>"
            "<th class=num>average score</th><th class=num>best score</th>"
            "<th class=num>7x7 rate</th><th class=num>average empty</th>"
            "<th class=num>average final income</th></tr>")
    rows = "".join(
        f'<tr><td>{escape(p["name"])}</td><td class="num">{p["games"]}</td>'
        f'<td class="num">{p["wins"]}</td><td class="num">{p["avg_score"]:.1f}</td>'
        f'<td class="num">{p["best_score"]}</td><td class="num">{p["bonus_rate"] * 100:.0f} %</td>'
        f'<td class="num">{p["avg_empty"]:.1f}</td><td class="num">{p["avg_income"]:.1f}</td></tr>'
        for p in players)
    kinds = "".join(
        f'<tr><td>{GAME_NAMES.get(g["game"], escape(g["game"]))}</td><td class="num">{g["games"]}</td>'
        f'<td class="num">{g["avg_score"]:.1f}</td><td class="num">{g["best_score"]}</td></tr>'
        for g in stats["games"])
    top = players[:6]
    labels = [p["name"] for p in top]
    charts = ""
    if top:
        charts += svg.bar_chart("Games and wins", labels,
                                [("games", [p["games"] for p in top], SERIES[2]),
                                 ("wins", [p["wins"] for p in top], SERIES[0])])
        charts += svg.bar_chart("Average and best score", labels,
                                [("average", [max(0.0, p["avg_score"]) for p in top], SERIES[1]),
                                 ("best", [max(0, p["best_score"]) for p in top], SERIES[3])])
        lines = [(name, values[-50:], SERIES[i % len(SERIES)])
                 for i, (name, values) in enumerate(list(stats["scores"].items())[:6]) if values]
        if lines:
            charts += svg.line_chart("Scores, last 50 games per player", lines)
    body = f"""<h1>Statistics</h1><table id="stats">{head}{rows}</table>
<h2>Per game</h2><table id="stats-games"><tr><th>game</th><th class="num">games</th>
<th class="num">average score</th><th class="num">best score</th></tr>{kinds}</table>
<div class="charts">{charts}</div>"""
    return layout("Statistics", "/stats", body)


def downloads_page(total: int) -> str:
    """Links to every download."""
    body = f"""<h1>Downloads</h1><p>{total} games in the history.</p><ul>
<li><a href="/export/games.csv">all games as CSV</a> (one row per game)</li>
<li><a href="/export/games.jsonl">all game records as JSON Lines</a></li>
<li><a href="/export/bgstats.json">BG Stats import file</a> (plays with BoardGameGeek ids)</li>
</ul><p>Each game's record is on its replay page.</p>"""
    return layout("Downloads", "/downloads", body)


def players_page(names: list[str], editing: bool, message: str = "", error: str = "") -> str:
    """The known player names; editing needs a PIN shown on the OLED."""
    items = "".join(f"<li>{escape(n)}</li>" for n in names) or "<li class=muted>none yet</li>"
    note = (f'<p class="error">{escape(error)}</p>' if error else "") + \
        (f'<p class="ok">{escape(message)}</p>' if message else "")
    if editing:
        text = escape("\n".join(names))
        form = f"""<form method="post" action="/players"><label>one name a line (at most 24
characters; Green and Yellow are always offered)<textarea name="names" rows="8" cols="30">{text}</textarea>
</label><button>save names</button></form>"""
    else:
        form = """<form method="post" action="/pin"><button>show a PIN on the OLED</button></form>
<form method="post" action="/login"><label>PIN<input name="pin" inputmode="numeric"
autocomplete="off" maxlength="6"></label><button>edit names</button></form>
<p class="muted">Anyone on this network can look; changing names needs the PIN the box shows.</p>"""
    body = f"""<h1>Players</h1><p>The names the box offers at the start of a game:</p>
<ul id="names">{items}</ul>{note}{form}"""
    return layout("Players", "/players", body)


def error_page(status: int, message: str) -> str:
    """A short page for a refused or failed request."""
    return layout(f"Error {status}", "", f'<h1>{status}</h1><p class="error">{escape(message)}</p>')
