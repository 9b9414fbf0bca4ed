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
from ..store.wording import duration_text, result_text, when_text
from . import svg

GAME_NAMES = {"patchwork": "Patchwork", "patchwork-express": "Patchwork Express"}
NAV = (("/", "Live"), ("/history", "History"), ("/stats", "Statistics"),
       ("/downloads", "Downloads"), ("/players", "Players"))
COLOURS = {"green": "#1aa31a", "yellow": "#e6b800"}
#: chart colours: none is near the tokens' green or yellow (a player called Green or
#: Yellow is drawn in that token's colour instead)
SERIES = ("#3b6fd8", "#8e44ad", "#b03a2e", "#555555", "#c2185b", "#0b3d91")


def player_colour(name: str, index: int) -> str:
    """The chart colour of a player: the token's colour for "Green"/"Yellow", else the
    ``index``-th of :data:`SERIES`."""
    return COLOURS.get(name.strip().lower(), SERIES[index % len(SERIES)])


def script_json(value) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: every ``<`` is written
    ``\\u003c``, so no text in it (``</script>``, ``<!--``) can end or bend the element."""
    return json.dumps(value).replace("<", "\\u003c")


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
    """The live table; ``/static/live.js`` fills it from ``/events``. Until the first
    snapshot it shows a waiting note (the boards and the OLED picture stay hidden)."""
    p, e = load_spec("patchwork", "2014"), load_spec("patchwork-express")
    quilts = "".join(f'<figure><figcaption id="q-{i}-name"></figcaption><div id="q-{i}"></div>'
                     f'<p class="small muted" id="q-{i}-note"></p></figure>' for i in (0, 1))
    boards = (svg.board_svg(p.last_space, p.income_spaces, range(p.last_space + 1),
                            "board-patchwork") +
              svg.board_svg(e.last_space, e.income_spaces, range(e.last_space + 1),
                            "board-express").replace('class="board"', 'class="board" hidden', 1))
    body = f"""
<h1><span id="to-move">Waiting for the box</span> <small class="muted" id="turn"></small></h1>
<p class="status" id="status"><span id="link">connecting...</span></p>
<section class="card" id="waiting"><h2>No game on the box yet</h2>
 <p>This page shows the game at the table as it is played. Nothing has come from the box
 yet: once the companion runs (<code>patchwork-companion run</code>) and a game is set up on
 the OLED, the time board and the players appear here by themselves.</p></section>
<div class="grid" id="table" hidden>
 <section class="card live"><h2>Time board</h2>{boards}
  <p class="instruction" id="instruction"></p><p class="ok" id="winner"></p>
  <p class="error" id="warnings"></p></section>
 <section>
  <div class="card"><h2>Players</h2>
   <table class="players"><thead><tr><th>player</th><th class="num wide">space</th>
   <th class="num">buttons</th><th class="num">income</th><th class="num">empty</th>
   <th class="num">score</th></tr></thead><tbody id="players-body"></tbody></table>
   <p class="muted small">score as it stands: buttons + 7 for the 7x7 tile - 2 per empty
   square of the quilt</p></div>
  <div class="card"><h2>Quilts</h2><div class="quilts">{quilts}</div></div>
  <div class="card"><h2 id="offer-title">On offer</h2><div class="offer" id="offer"></div>
   <p class="muted small">{svg.LEGEND}</p></div>
  <div class="card"><h2>The box's screen</h2><img id="oled" class="oled" alt="the OLED screen" hidden>
   <details><summary class="small">the screen as text</summary>
   <pre id="oled-text" class="muted small"></pre></details></div>
  <p class="muted small">snapshot <span id="seq">-</span></p>
 </section>
</div>"""
    return layout("Live table", "/", body, ("/static/pictures.js", "/static/live.js"))


def _when(row: dict) -> str:
    return escape(when_text(row.get("started"), row.get("ended")))


def _mark(colour: str) -> str:
    """A dot in a token's colour before a name (nothing for an unknown colour)."""
    return f'<span class="mark {colour}"></span>' if colour in COLOURS else ""


def _players_cell(row: dict) -> str:
    out = []
    for p in row["players"]:
        name = _mark(p.get("colour", "")) + escape(p["name"])
        out.append(f"<b>{name}</b>" if p.get("winner") else name)
    return " vs ".join(out)


def _result(row: dict) -> str:
    """"Ben wins 31 to 12" (the winner's score first), or both scores for a game ended early."""
    players = row["players"]
    winner = next((i for i, p in enumerate(players) if p.get("winner")), None)
    return escape(result_text([p["name"] for p in players], [p["score"] for p in players],
                              winner, bool(row.get("tie_break"))))


def _duration(seconds) -> str:
    return duration_text(seconds)


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
        gid = escape(str(r["id"]))
        lines.append(f'<tr data-id="{gid}"><td class="when">{_when(r)}</td>'
                     f'<td>{GAME_NAMES.get(r["game"], escape(r["game"]))}'
                     f'{_board_words(r)}</td><td>{_players_cell(r)}</td>'
                     f'<td>{_result(r)}</td><td class="num">{_duration(r.get("duration_s"))}</td>'
                     f'<td><a href="/game/{gid}">replay</a></td></tr>')
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
<table id="history"><thead><tr><th>started</th><th>game</th><th>players</th>
<th>result</th><th class="num">length</th><th></th></tr></thead>
<tbody>{"".join(lines) or '<tr><td colspan="6" class="muted">no games yet</td></tr>'}</tbody></table>
<div class="pager">{" ".join(pager)}</div>"""
    return layout("History", "/history", body)


def _board_words(row: dict) -> str:
    board = row.get("time_board") or ""
    return f' <span class="muted small">({escape(board)} time board)</span>' \
        if board and board != "standard" else ""


def game_page(row: dict, steps: list[dict], editing: bool = False, message: str = "") -> str:
    """One game: the replay viewer over ``steps`` (frames of ``Library.replay_steps``:
    the time board with its leather patches, the move in words with the patch's
    picture, both players and their quilts, the offer), the final tally, downloads;
    ``editing``: a form to correct the players' names (an editing session is open)."""
    spec = load_spec(row["game"], row.get("time_board") or None)
    box = row.get("box") or {}
    tally = "".join(
        f'<tr><td>{_mark(p.get("colour", ""))}{escape(p["name"])}{_level(box, i)}'
        f'{" (winner)" if p.get("winner") else ""}</td><td class="num">{p["buttons"]}</td>'
        f'<td class="num">{7 if p.get("special") else 0}</td>'
        f'<td class="num">{p["empty"]}</td><td class="num">{p["score"]}</td></tr>'
        for i, p in enumerate(row["players"]))
    rows = "".join(
        f'<tr><td>{_mark(p.get("colour", ""))}{escape(p["name"])}</td>'
        f'<td class="num wide" id="r-{i}-position"></td>'
        f'<td class="num" id="r-{i}-buttons"></td><td class="num" id="r-{i}-income"></td>'
        f'<td class="num" id="r-{i}-empty"></td><td class="num" id="r-{i}-score"></td></tr>'
        for i, p in enumerate(row["players"]))
    quilts = "".join(f'<figure><figcaption>{_mark(p.get("colour", ""))}{escape(p["name"])}'
                     f'</figcaption><div id="q-{i}"></div><p class="small muted" id="q-{i}-note">'
                     f'</p></figure>' for i, p in enumerate(row["players"]))
    gid = escape(str(row["id"]))
    data = script_json({"steps": steps, "game": row["game"],
                        "names": [p["name"] for p in row["players"]],
                        "colours": [p.get("colour", "") for p in row["players"]]})
    board = svg.board_svg(spec.last_space, spec.income_spaces, spec.leather_spaces, "replay-board")
    body = f"""<h1>{GAME_NAMES.get(row["game"], escape(row["game"]))}, {_when(row)}</h1>
<p>{_result(row)}{(", " + _duration(row.get("duration_s"))) if row.get("duration_s") else ""}</p>
<div class="grid"><section class="card"><h2>Replay</h2>
<div class="replay-controls"><button id="first" title="the start">|&lt;</button>
<button id="prev" title="back one move (left arrow)">&lt;</button>
<input type="range" id="slider" min="0" value="0" aria-label="move">
<button id="next" title="next move (right arrow)">&gt;</button>
<button id="last" title="the end">&gt;|</button> <span id="step"></span></div>
<div class="move"><img id="move-patch" alt="" hidden><p class="instruction" id="move"></p></div>
{board}<p class="small muted">Arrow keys step through the moves. {svg.LEGEND}</p></section>
<section><div class="card"><h2>After this move</h2><table class="players"><thead><tr><th>player</th>
<th class="num wide">space</th><th class="num">buttons</th><th class="num">income</th>
<th class="num">empty</th><th class="num">score</th></tr></thead><tbody>{rows}</tbody></table>
<h2>Quilts</h2><div class="quilts">{quilts}</div>
<h2>On offer</h2><div class="offer" id="r-offer"></div></div>
<div class="card"><h2>Final tally</h2><table><thead><tr><th>player</th><th class="num">buttons</th>
<th class="num">7x7 tile</th><th class="num">empty</th><th class="num">score</th></tr>
</thead><tbody>{tally}</tbody></table>
<p class="small muted">score = buttons + 7 for the 7x7 tile - {spec.empty_penalty} per empty square</p>
<p>time board: {escape(row.get("time_board") or "")}</p>
<p>download: <a href="/download/{gid}.json">game record</a></p>{_rename_form(row, editing, message)}
</div></section></div>
<section class="card" id="analysis" data-game="{gid}"><h2>Analysis</h2><p class="muted">loading</p></section>
<script type="application/json" id="replay-data">{data}</script>"""
    return layout(f"Game {row['id']}", "/history", body, ("/static/pictures.js", "/static/replay.js", "/static/analysis.js"))


def _level(box: dict, seat: int) -> str:
    """" (box, hard)" after the box's name in a game against the box."""
    if box.get("player") == seat and box.get("level"):
        return f' <span class="muted small">(the box, {escape(str(box["level"]))})</span>'
    return ""


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
            "<th class=num>7x7 tile</th><th class=num>average empty</th>"
            "<th class=num>average final income</th></tr>")
    rows = "".join(
        f'<tr><td>{escape(p["name"])}</td><td class="num">{p["games"]}</td>'
        f'<td class="num">{p["wins"]}</td><td class="num">{p["avg_score"]:.1f}</td>'
        f'<td class="num">{p["best_score"]}</td><td class="num">{p["bonus_rate"] * 100:.0f}%</td>'
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
                                [("games", [p["games"] for p in top], SERIES[0]),
                                 ("wins", [p["wins"] for p in top], SERIES[1])])
        charts += svg.bar_chart("Average and best score", labels,
                                [("average", [p["avg_score"] for p in top], SERIES[3]),
                                 ("best", [p["best_score"] for p in top], SERIES[2])])
        lines = [(name, values[-50:], player_colour(name, i))
                 for i, (name, values) in enumerate(list(stats["scores"].items())[:6]) if values]
        if lines:
            charts += svg.line_chart("Scores, last 50 games per player", lines)
    body = f"""<h1>Statistics</h1><table id="stats" class="stats-table">{head}{rows}</table>
<p class="small muted">On a phone the table shows the first five columns; a wider screen
shows the 7x7 tile rate, average empty squares and average final income too.</p>
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
