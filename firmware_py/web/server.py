"""The LAN page: an aiohttp server in its own process (``patchwork-companion web``).

It reads the live feed the game service publishes (:mod:`firmware_py.service.feed`) and
the history of finished games (:mod:`firmware_py.store`), and changes nothing
in the game: every page is read-only; the one thing that can be edited is the
list of player names the box offers, and that needs a PIN shown on the OLED
(:mod:`.auth`), a session cookie, and an ``Origin`` header naming this page on
the POST. It listens on the one configured address (``web.address``,
``web.port``) and answers only to its own names (:mod:`.hosts`, against DNS
rebinding). Updates reach every open live page as server-sent events.

Slow and silent clients: a request's headers must arrive within
:data:`HEADER_S` of the connection (or of the previous answer), its body within
:data:`BODY_S`; a page that takes no event for :data:`WRITE_S` is dropped; one
address holds at most :data:`.hosts.PER_ADDRESS` connections.
"""
from __future__ import annotations

import asyncio
import sqlite3
import logging
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from ..companion.names import NamesError, load_names, save_names
from ..companion.journal import reason_of
from ..config import state_dir
from ..service.feed import feed_dir
from .feed import send_control
from ..rules import load_spec
from . import pages, review, svg
from .auth import COOKIE, AuthError, PinGate
from .hosts import HostGuard, HostRefused, LimitedRunner, allowed_names, local_address
from .live import LiveHub
from .stream import pieces

LOG = logging.getLogger(__name__)

PER_PAGE = 50
KEEPALIVE_SECONDS = 15.0
HEADER_S = 10.0          # a request's headers, from the connection or the previous answer
BODY_S = 10.0            # a request's body, once its headers are in
WRITE_S = 20.0           # a page that takes no event for this long is dropped
STATIC_TYPES = {".css": "text/css", ".js": "text/javascript"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
                               "form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

HUB = web.AppKey("hub", LiveHub)
GATE = web.AppKey("gate", PinGate)
LIBRARY = web.AppKey("library", object)
NAMES = web.AppKey("names", Path)
HOSTS = web.AppKey("hosts", HostGuard)


@web.middleware
async def guard(request: web.Request, handler):
    """Only this page's own names are served (421 otherwise); a path holding a NUL is
    no page (404); Origin checked on every POST; security headers on every answer;
    errors as short pages (never a traceback)."""
    try:
        _check_names(request)
        if "\x00" in request.path or "%00" in request.raw_path:
            raise web.HTTPNotFound(reason="no such page")
        response = await handler(request)
    except AuthError as exc:
        response = _html(pages.error_page(exc.status, str(exc)), exc.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = _html(pages.error_page(exc.status, exc.reason), exc.status)
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception:  # noqa: BLE001  a bug answers 500, never a traceback
        LOG.exception("web request %s %s failed", request.method, request.path)
        response = _html(pages.error_page(500, "internal error (see the log)"), 500)
    if not response.prepared:
        response.headers.update(SECURITY_HEADERS)
    return response


def _check_names(request: web.Request) -> None:
    """Raise AuthError unless the request names this page (421) and, on a change,
    comes from this very page (403): its Origin is ``http(s)://`` + its own Host."""
    guard, local = request.app[HOSTS], local_address(request)
    host = request.headers.get("Host", "")
    try:
        guard.check_host(host, local)
    except HostRefused:
        raise AuthError(f"this page is not served under the name {host[:80]!r} (its own names "
                        f"are; the box's owner may add this one to web.hostnames in the "
                        f"config)", 421) from None
    if request.method in ("GET", "HEAD"):
        return
    origin = request.headers.get("Origin")
    try:
        guard.check_origin(origin, True, local)
        if urlsplit(origin).netloc.lower() != host.lower():
            raise HostRefused("another port")
    except HostRefused:
        raise AuthError("refused: a change must come from this page"
                        + (f", not from {origin[:80]}" if origin else " (no Origin header)")) from None


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html")


async def _form(request: web.Request):
    """The POSTed form, read within :data:`BODY_S` (408 otherwise)."""
    try:
        return await asyncio.wait_for(request.post(), BODY_S)
    except asyncio.TimeoutError:
        raise web.HTTPRequestTimeout(reason=f"the form did not arrive within {BODY_S:.0f} s") from None


# ----- live ---------------------------------------------------------------------------------

async def live(request: web.Request) -> web.Response:
    """GET / : the live table."""
    return _html(pages.live_page())


async def live_json(request: web.Request) -> web.Response:
    """GET /api/live : the newest snapshot (404 when the companion has published none)."""
    snap = request.app[HUB].snapshot
    if snap is None:
        raise web.HTTPNotFound(reason="the companion has not published anything yet")
    return web.json_response(snap)


async def events(request: web.Request) -> web.StreamResponse:
    """GET /events : server-sent events, one ``live`` event per new snapshot."""
    hub = request.app[HUB]
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store",
                                           "X-Accel-Buffering": "no", **SECURITY_HEADERS})
    await response.prepare(request)
    client = hub.add()
    try:
        await asyncio.wait_for(response.write(b"retry: 2000\n\n"), WRITE_S)
        while True:
            event = await client.next_event(KEEPALIVE_SECONDS)
            if event == b"":                      # the server is shutting down
                break
            await asyncio.wait_for(response.write(event if event is not None
                                                  else b": keep-alive\n\n"), WRITE_S)
    except asyncio.TimeoutError:
        LOG.info("web: dropped a live page at %s that took no data for %.0f s",
                 request.remote, WRITE_S)
        request.transport.abort() if request.transport else None
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        hub.remove(client)
    return response


async def patch_picture(request: web.Request) -> web.Response:
    """GET /patch/{game}/{id}.svg : a patch's picture."""
    game = request.match_info["game"]
    if game not in pages.GAME_NAMES:
        raise web.HTTPNotFound(reason=f"no game {game!r}")
    spec = load_spec(game)
    try:
        patch = spec.patches[int(request.match_info["pid"])]
    except (ValueError, IndexError):
        raise web.HTTPNotFound(reason=f"{game} has no patch {request.match_info['pid']}") from None
    return web.Response(text=svg.patch_svg(patch), content_type="image/svg+xml",
                        headers={"Cache-Control": "max-age=86400"})


async def static(request: web.Request) -> web.Response:
    """GET /static/{name} : the stylesheet and the scripts (package files)."""
    name = request.match_info["name"]
    suffix = Path(name).suffix
    if "/" in name or suffix not in STATIC_TYPES:
        raise web.HTTPNotFound(reason="no such file")
    try:
        text = resources.files("firmware_py.web").joinpath("static").joinpath(name).read_text("utf-8")
    except (FileNotFoundError, OSError):
        raise web.HTTPNotFound(reason="no such file") from None
    return web.Response(text=text, content_type=STATIC_TYPES[suffix],
                        headers={"Cache-Control": "max-age=300"})


# ----- history ----------------------------------------------------------------------------

def _library(request: web.Request):
    library = request.app[LIBRARY]
    if library is None:
        raise web.HTTPServiceUnavailable(reason="no game history here yet")
    return library


async def history(request: web.Request) -> web.Response:
    """GET /history?player=&game=&page= : finished games, newest first."""
    library = _library(request)
    q = request.query
    filters = {"player": q.get("player", "").strip(), "game": q.get("game", "").strip()}
    if filters["game"] and filters["game"] not in pages.GAME_NAMES:
        raise web.HTTPBadRequest(reason=f"game must be one of {', '.join(pages.GAME_NAMES)}")
    try:
        page = max(1, int(q.get("page", "1")))
    except ValueError:
        raise web.HTTPBadRequest(reason="page must be a whole number") from None
    rows, total = library.games(filters["player"] or None, filters["game"] or None,
                                PER_PAGE, (page - 1) * PER_PAGE)
    return _html(pages.history_page(rows, total, filters, library.player_names(), page, PER_PAGE))


async def game(request: web.Request) -> web.Response:
    """GET /game/{id} : one game's tally and its replay viewer."""
    library = _library(request)
    found = library.game(request.match_info["gid"])
    if found is None:
        raise web.HTTPNotFound(reason=f"no game {request.match_info['gid']!r} in the history")
    row, record = found
    editing = request.app[GATE].allowed(request.cookies.get(COOKIE))
    message = MESSAGES.get(request.query.get("msg", ""), "")
    return _html(pages.game_page(row, library.replay_steps(record), editing, message))


async def rename_game(request: web.Request) -> web.Response:
    """POST /game/{id}/names (first=, second=) : correct the players' names of a game
    (needs an editing session); the record is rewritten, then its index row."""
    if not request.app[GATE].allowed(request.cookies.get(COOKIE)):
        raise AuthError("changing names needs the PIN shown on the OLED (Players page)")
    library = _library(request)
    gid = request.match_info["gid"]
    form = await _form(request)
    try:
        await asyncio.get_running_loop().run_in_executor(
            None, library.rename, gid, (str(form.get("first", "")), str(form.get("second", ""))))
    except KeyError:
        raise web.HTTPNotFound(reason=f"no game {gid!r} in the history") from None
    except NamesError as exc:
        raise web.HTTPBadRequest(reason=str(exc)) from None
    except sqlite3.OperationalError:
        raise web.HTTPServiceUnavailable(reason="the history is busy (another program holds "
                                         "its index): nothing was changed; try again in a "
                                         "minute") from None
    except OSError as exc:                  # the record's write refused: it is as it was
        raise web.HTTPServiceUnavailable(reason=_not_written("the game's record", exc)) from None
    raise web.HTTPSeeOther(f"/game/{gid}?msg=renamed")


def _not_written(what: str, exc: OSError) -> str:
    """The page's words for a write the box's disk refused (disk full, read-only card)."""
    return (f"{what} could not be written ({reason_of(exc)}): nothing was changed; "
            f"free some space on the box's card, then try again")


async def download_record(request: web.Request) -> web.Response:
    """GET /download/{id}.json : the game's record as saved."""
    library = _library(request)
    text = library.record_text(request.match_info["gid"])
    if text is None:
        raise web.HTTPNotFound(reason=f"no game {request.match_info['gid']!r} in the history")
    return web.Response(text=text, content_type="application/json", headers={
        "Content-Disposition": f'attachment; filename="game-{request.match_info["gid"]}.json"'})


async def export(request: web.Request) -> web.Response:
    """GET /export/games.csv | games.jsonl | bgstats.json : every game."""
    library = _library(request)
    kind = request.match_info["kind"]
    makers = {"games.csv": ("csv", "text/csv"), "games.jsonl": ("jsonl", "application/x-ndjson"),
              "bgstats.json": ("bgstats", "application/json")}
    if kind not in makers:
        raise web.HTTPNotFound(reason="no such export")
    fmt, ctype = makers[kind]
    response = web.StreamResponse(headers={
        "Content-Type": f"{ctype}; charset=utf-8", **SECURITY_HEADERS,
        "Content-Disposition": f'attachment; filename="patchwork-{kind}"'})
    await response.prepare(request)
    try:
        async for piece in pieces(lambda: library.export_chunks(fmt)):
            await response.write(piece)
    except OSError as exc:                 # a record unreadable half-way: the file ends short
        LOG.error("export %s stopped: %s", kind, exc)
        return response
    await response.write_eof()
    return response


async def stats(request: web.Request) -> web.Response:
    """GET /stats : statistics per player name and per game, with charts."""
    return _html(pages.stats_page(_library(request).stats()))


async def downloads(request: web.Request) -> web.Response:
    """GET /downloads : the download links."""
    library = request.app[LIBRARY]
    return _html(pages.downloads_page(library.count() if library is not None else 0))


# ----- names (PIN) -------------------------------------------------------------------------

MESSAGES = {"edit": "You may edit the names now.", "saved": "Names saved.",
            "renamed": "The players' names of this game are corrected."}


async def players(request: web.Request) -> web.Response:
    """GET /players[?msg=edit|saved] : the known names; an edit form with a valid session."""
    editing = request.app[GATE].allowed(request.cookies.get(COOKIE))
    return _html(pages.players_page(load_names(request.app[NAMES]), editing,
                                    MESSAGES.get(request.query.get("msg", ""), "")))


async def pin(request: web.Request) -> web.Response:
    """POST /pin : show a new PIN on the OLED."""
    request.app[GATE].issue()
    return _html(pages.players_page(load_names(request.app[NAMES]), False,
                                    "A PIN is on the OLED now: type it below."))


async def login(request: web.Request) -> web.Response:
    """POST /login (pin=) : a right PIN starts an editing session (cookie)."""
    form = await _form(request)
    gate = request.app[GATE]
    try:
        token = gate.login(str(form.get("pin", "")), request.remote or "?")
    except AuthError as exc:
        return _html(pages.players_page(load_names(request.app[NAMES]), False, error=str(exc)),
                     exc.status)
    response = web.HTTPSeeOther("/players?msg=edit")
    response.set_cookie(COOKIE, token, max_age=gate.seconds, httponly=True, samesite="Strict",
                        path="/")
    raise response


async def save_players(request: web.Request) -> web.Response:
    """POST /players (names=) : store the names (needs an editing session)."""
    if not request.app[GATE].allowed(request.cookies.get(COOKIE)):
        raise AuthError("editing names needs the PIN shown on the OLED")
    form = await _form(request)
    try:
        save_names(request.app[NAMES], str(form.get("names", "")).splitlines())
    except NamesError as exc:
        return _html(pages.players_page(load_names(request.app[NAMES]), True, error=str(exc)), 400)
    except OSError as exc:
        return _html(pages.players_page(load_names(request.app[NAMES]), True,
                                        error=_not_written("the names", exc)), 503)
    raise web.HTTPSeeOther("/players?msg=saved")


def _pin_for_the_box(gate: PinGate) -> None:
    """The box's menu asked for a PIN: show a new one (never held up by guessing)."""
    try:
        gate.issue(at_box=True)
        LOG.info("web: a PIN was asked for on the box and is shown on the OLED")
    except AuthError as exc:
        LOG.warning("web: the box asked for a PIN, but %s", exc)


# ----- the application ---------------------------------------------------------------------

def make_app(feed: str | Path, library=None, names_file: str | Path | None = None,
             pin_minutes: int = 5, hosts: frozenset[str] | None = None,
             analysis_worker: bool = False) -> web.Application:
    """The aiohttp application: ``feed`` folder, ``library`` (a store reader or None),
    ``names_file`` (known player names), ``pin_minutes`` (PIN and session lifetime),
    ``hosts`` (the names it answers to, :func:`.hosts.allowed_names`; default: those
    of 127.0.0.1 on this machine); ``analysis_worker``: analyse saved games in the
    background (:mod:`.review`)."""
    app = web.Application(middlewares=[guard], client_max_size=64 * 1024)
    app[HUB] = LiveHub(feed)
    app[GATE] = PinGate(lambda value, seconds: send_control(feed, value, seconds), pin_minutes)
    app[LIBRARY] = library
    app[NAMES] = Path(names_file) if names_file else Path(feed) / "names.json"
    app[HOSTS] = HostGuard(hosts if hosts is not None else allowed_names("127.0.0.1"))
    app[HUB].on_pin_asked = lambda: _pin_for_the_box(app[GATE])
    app.router.add_get("/", live)
    app.router.add_get("/api/live", live_json)
    app.router.add_get("/events", events)
    app.router.add_get("/patch/{game}/{pid}.svg", patch_picture)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/history", history)
    app.router.add_get("/game/{gid}", game)
    app.router.add_get("/download/{gid}.json", download_record)
    app.router.add_get("/export/{kind}", export)
    app.router.add_get("/stats", stats)
    app.router.add_get("/downloads", downloads)
    app.router.add_get("/players", players)
    app.router.add_post("/pin", pin)
    app.router.add_post("/login", login)
    app.router.add_post("/players", save_players)
    app.router.add_post("/game/{gid}/names", rename_game)
    review.setup(app, getattr(getattr(library, "history", None), "folder", None),
                 lambda: app[HUB].snapshot, analysis_worker)

    async def on_startup(app):
        """Bind the live-feed socket once the loop runs."""
        await app[HUB].start()

    async def on_cleanup(app):
        """Close the live-feed socket and remove its file."""
        await app[HUB].close()

    async def on_shutdown(app):
        """End the open event streams so that the server stops at once."""
        for client in list(app[HUB].clients):      # end open event streams at once
            client.offer(b"")
    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    return app


def serve(cfg: dict, address: str | None = None, port: int | None = None,
          store: str | Path | None = None) -> int:
    """The ``web`` command: serve until SIGTERM/SIGINT; returns the exit status.
    ``store``: the folder of finished games (default: the config's journal folder)."""
    from .library import Library
    host = address or cfg["web"]["address"]
    port = port or cfg["web"]["port"]
    folder = feed_dir(cfg)
    app = make_app(folder, Library(Path(store).expanduser() if store else state_dir(cfg)),
                   state_dir(cfg) / "names.json", cfg["web"]["pin_minutes"],
                   allowed_names(host, extra=tuple(cfg["web"]["hostnames"])), analysis_worker=True)
    LOG.info("web page on http://%s:%s/ (live feed in %s)", host, port, folder)
    try:
        asyncio.run(_run(app, host, port))
    except OSError as exc:
        LOG.error("cannot listen on %s port %s: %s", host, port, exc.strerror or exc)
        return 1
    return 0


async def _run(app: web.Application, host: str, port: int) -> None:
    """Serve ``app`` on ``host``:``port`` until SIGTERM or SIGINT (connections capped per
    address; headers read within :data:`HEADER_S`)."""
    import signal
    runner = LimitedRunner(app, access_log=None, keepalive_timeout=HEADER_S,
                           shutdown_timeout=2.0)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await web.TCPSite(runner, host, port).start()
        await stop.wait()
    finally:
        await runner.cleanup()
