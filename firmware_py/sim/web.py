"""``patchwork-companion sim --web``: the simulated table on a web page (a phone or a laptop).

The real companion runs on the "sim" backend in this process (as in the terminal
simulator: the game service itself opens no network socket), and an aiohttp
server beside it serves one page that shows what a person at the table sees and
gives them hands:

- ``GET /``: the page (``static/simweb.html``, its script and stylesheet; no
  framework, nothing from another site);
- ``GET /state``: what the table shows now as JSON (see :func:`snapshot`);
- ``GET /events``: the same as server-sent events, one ``state`` event each time
  it changes (checked every :data:`REFRESH_S`);
- ``POST /act``: a gesture as JSON, ``{"kind": ..., "arg": ...}`` (see
  :data:`WEB_GESTURES` and :class:`~firmware_py.sim.desk.Desk`) or ``{"key": NAME}``
  (the terminal simulator's keys, :data:`~firmware_py.sim.desk.KEYMAP`); it answers
  ``{"said": text}``, or 400 with what was wrong.

Every gesture goes where the terminal simulator's keys go (:class:`Desk`: the
buttons' mock pins, the simulated sensor process's tokens). The ``Host`` and
``Origin`` of each request are checked (:mod:`firmware_py.web.hosts`).
"""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import sys
import time
from importlib import resources

from aiohttp import web

from ..web.hosts import HostGuard, host_middleware
from ..web.server import SECURITY_HEADERS
from .desk import KEYMAP, Desk, GestureError
from .words import HandView, caption, display_rgb, hint, link_text

LOG = logging.getLogger(__name__)

REFRESH_S = 1 / 10          #: how often the state is looked at (and sent when it changed)
KEEPALIVE_S = 15.0          #: a comment line this often keeps an idle event stream open
STATIC = {"simweb.js": "text/javascript", "simweb.css": "text/css"}
MAX_BODY = 4096             #: bytes of a gesture request
#: gestures of the page beyond the desk's own: kind -> what its ``arg`` is
WEB_GESTURES = {"slide": "{colour, to}", "lift_token": "colour", "place": "space",
                "knock": "colour"}

SIM = web.AppKey("sim", object)
REFRESHER = web.AppKey("refresher", asyncio.Task)


class WebTable:
    """The page's side of a running :class:`~firmware_py.sim.table.Table`: the desk
    (hands), the latest state as JSON with a version number, and a line said to the
    person. Used from the server's event loop thread only."""

    def __init__(self, table, clock=None):
        self.table = table
        self.clock = clock or time.monotonic
        self.desk = Desk(table.companion, self._error, self.clock)
        self.version = 0
        self.body = b"{}"
        self.message = ""
        self.message_until = 0.0
        self.changed = asyncio.Event()
        self.acts = 0               #: gestures carried out so far
        self._errors: list[str] = []

    def _error(self, text: str) -> None:
        """A hands worker failed (called from its thread): kept to be said."""
        self._errors.append(f"hands: {text}")

    def say(self, said) -> None:
        """Show ``said`` ((text, seconds) or None) for a while."""
        if said:
            self.message, seconds = said
            self.message_until = self.clock() + seconds

    def refresh(self) -> None:
        """Follow the game and rebuild the state; wake the event streams when it changed."""
        status = self.table.companion.service.status
        if status is None:
            return
        self.say(self.desk.follow(status))
        while self._errors:
            self.say((self._errors.pop(0), 6.0))
        body = json.dumps(snapshot(self, status), separators=(",", ":")).encode()
        if body != self.body:
            self.body = body
            self.version += 1
            self.changed.set()
            self.changed = asyncio.Event()

    def act(self, request: dict) -> str:
        """Carry out the gesture ``request`` (the JSON of ``POST /act``); returns what to
        say. Raises :class:`GestureError` for a bad request (nothing is done then)."""
        if not isinstance(request, dict):
            raise GestureError("a gesture is a JSON object")
        if "key" in request:
            kind, arg = _key(request["key"])
        else:
            kind, arg = request.get("kind"), request.get("arg")
        if kind not in WEB_GESTURES and kind not in self.desk.kinds():
            raise GestureError(f"no gesture {kind!r}; known: "
                               f"{', '.join(sorted([*WEB_GESTURES, *self.desk.kinds()]))}")
        said = self._web_gesture(kind, arg) if kind in WEB_GESTURES else self.desk.act(kind, arg)
        said = (page_words(said[0]), said[1]) if said else None
        self.acts += 1
        self.say(said)
        return said[0] if said else ""

    def _web_gesture(self, kind: str, arg):
        """The page's own gestures, each made of the desk's."""
        desk, hand = self.desk, self.desk.hand
        if kind == "slide":
            if not isinstance(arg, dict):
                raise GestureError("slide takes {colour, to}")
            return desk.slide(arg.get("colour"), _space(arg.get("to"), hand.last_space))
        if kind == "lift_token":
            return desk.pick(arg) or desk.lift()
        if kind == "place":
            space = _space(arg, hand.last_space)
            if not hand.held:
                return ("nothing in the air: lift a token first", 3.0)
            hand.aim(space)
            return desk.down()
        # knock: the token is bumped onto the next space (the previous one at the end)
        here = hand.pos.get(arg) if isinstance(arg, str) else None
        bump = 1 if here is None or here < hand.last_space else -1
        return (desk.slide(arg, (here or 0) + bump)
                or (f"the {arg} token was knocked onto the next space", 3.0))

    def close(self) -> None:
        """Let the hands finish."""
        self.desk.close()


def _key(name) -> tuple[str, object]:
    action = KEYMAP.get(name) if isinstance(name, str) else None
    if action is None or action[0] in ("quit", "help"):
        raise GestureError(f"no key {name!r} here")
    return action


def _space(value, last_space: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= last_space:
        raise GestureError(f"a space is a whole number 0..{last_space}, got {value!r}")
    return value


def snapshot(sim: WebTable, status) -> dict:
    """What the page draws, as JSON-ready values: ``oled`` (the 128x64 frame, 1 bit a
    pixel, rows of 16 bytes, base64; "" before the first frame), ``title``/``words``
    (the OLED's words as text), ``mode``, ``kind``, ``last_space``, ``colours`` (the LED
    colour under each space, "#rrggbb", dim ones lifted), ``income``, ``leather``,
    ``targets``, ``tokens`` ({colour: space or null}, where the hand put them), ``held``,
    ``cursor``, ``hand``, ``active``, ``down`` (the button held low now), ``plugged`` (the
    sensor's cable), ``hint``,
    ``said``, ``link``, ``turns``, ``warnings``, ``hold_ms`` (how long a press is a hold)."""
    hand, tap = sim.desk.hand, sim.table.tap
    lights = status.lights
    now = sim.clock()
    title, words = caption(status.screen)
    oled = base64.b64encode(tap.oled.convert("1").tobytes()).decode() if tap.oled else ""
    link = sim.table.companion.link
    return {
        "oled": oled, "title": title, "words": words, "mode": status.mode,
        "kind": status.screen.kind, "last_space": lights.last_space,
        "colours": ["#{:02x}{:02x}{:02x}".format(*display_rgb(rgb))
                    for rgb in sim.table.space_colours(lights, now)],
        "income": sorted(lights.income), "leather": sorted(lights.leather),
        "targets": sorted(lights.targets), "tokens": dict(hand.pos), "held": hand.held,
        "cursor": hand.cursor, "hand": hand.hand, "active": lights.active,
        "down": sim.desk.fingers.down, "plugged": hand.plugged,
        "hint": web_hint(status, hand),
        "said": sim.message if now < sim.message_until else "",
        "link": link_text(link.stats() if link is not None else None),
        "turns": status.turns, "warnings": list(status.warnings),
        "hold_ms": round(sim.desk.service.cfg["buttons"]["hold_seconds"] * 1000),
    }


_WORDS = (("n", "NEXT"), ("o", "OK"), ("b", "BACK"), ("B (hold BACK)", "hold BACK"),
          ("o (Enter)", "OK"), ("arrows slide, l lifts", "drag it, or tap it and then a space"),
          ("arrows aim, d (or Space) sets it down", "tap a space to set it down"),
          ("  ? = help", ""), ("r tidies up", "Tidy puts them back"),
          ("hold with N, O (menu), B (undo)", "hold OK: the menu, hold BACK: undo"),
          ("down first (d)", "down first (tap a space)"), ("first (l)", "first (Lift)"),
          ("already in the air: d sets it down", "already in the air: tap a space to set it down"),
          ("l lifts the token in hand", "Lift takes a token off the board"),
          ("U plugs it back in", "Replug plugs it back in"))


def web_hint(status, hand) -> str:
    """The terminal simulator's hint line (:func:`~firmware_py.sim.words.hint`) in the
    page's words: NEXT/OK/BACK for n/o/b, dragging and tapping for the arrow keys; the
    token of the player to move is the one in hand (on the page any token is a tap away)."""
    active = status.lights.active
    text = hint(status.mode, status.screen.kind, active,      # any token is a tap away
                HandView(active or hand.hand, hand.held, hand.cursor),
                min(status.lights.targets, default=None))
    return page_words(text)


def page_words(text: str) -> str:
    """``text`` written for the terminal simulator's keys (a hint, or a line the desk says,
    e.g. "sensor cable pulled out: U plugs it back in") in the page's words ("Replug
    plugs it back in"): a person on a phone has no keys."""
    for said, shown in sorted(_WORDS, key=lambda pair: -len(pair[0])):
        text = _swap(text, said, shown)
    return text


def _swap(text: str, said: str, shown: str) -> str:
    """Replace ``said`` where it stands as a word of its own (one-letter keys)."""
    return re.sub(rf"(?<!\w){re.escape(said)}(?!\w)", shown, text)


# ----------------------------------------------------------------------------- handlers
async def page(request: web.Request) -> web.Response:
    """GET / : the page."""
    return web.Response(text=_static_text("simweb.html"), content_type="text/html",
                        headers={"Cache-Control": "no-store"})


async def static(request: web.Request) -> web.Response:
    """GET /static/{name} : the script and the stylesheet."""
    name = request.match_info["name"]
    if name not in STATIC:
        raise web.HTTPNotFound(reason="no such file")
    return web.Response(text=_static_text(name), content_type=STATIC[name],
                        headers={"Cache-Control": "no-cache"})


async def state(request: web.Request) -> web.Response:
    """GET /state : the newest state (JSON)."""
    return web.Response(body=request.app[SIM].body, content_type="application/json",
                        headers={"Cache-Control": "no-store"})


async def events(request: web.Request) -> web.StreamResponse:
    """GET /events : server-sent events, a ``state`` event on each change."""
    sim = request.app[SIM]
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store", **SECURITY_HEADERS})
    await response.prepare(request)
    seen = -1
    try:
        await response.write(b"retry: 1000\n\n")
        while True:
            if sim.version != seen:
                seen = sim.version
                await response.write(b"event: state\ndata: " + sim.body + b"\n\n")
            try:
                await asyncio.wait_for(sim.changed.wait(), KEEPALIVE_S)
            except asyncio.TimeoutError:
                await response.write(b": keep-alive\n\n")
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    return response


async def act(request: web.Request) -> web.Response:
    """POST /act : one gesture (JSON); 400 with the reason when it is not one."""
    sim = request.app[SIM]
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return web.json_response({"error": "the body must be a JSON gesture"}, status=400)
    try:
        said = sim.act(body)
    except GestureError as exc:
        return web.json_response({"error": str(exc)}, status=400)
    sim.refresh()
    return web.json_response({"said": said})


@web.middleware
async def headers(request: web.Request, handler):
    """The web page's security headers on every answer."""
    response = await handler(request)
    if not response.prepared:
        response.headers.update(SECURITY_HEADERS)
    return response


def _static_text(name: str) -> str:
    return resources.files("firmware_py.sim").joinpath("static", name).read_text("utf-8")


def make_app(table, guard: HostGuard) -> web.Application:
    """The page's aiohttp application over ``table`` (a started
    :class:`~firmware_py.sim.table.Table`), refusing what ``guard`` refuses. The desk is
    made, and the refresh task started, when the application starts."""
    app = web.Application(middlewares=[host_middleware(guard), headers],
                          client_max_size=MAX_BODY)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/state", state)
    app.router.add_get("/events", events)
    app.router.add_post("/act", act)

    async def start(app):
        """The desk on this loop; tokens where the game says; the refresh task."""
        sim = WebTable(table)
        app[SIM] = sim
        sim.desk.tidy_board()
        sim.refresh()
        app[REFRESHER] = asyncio.get_running_loop().create_task(_refresh_forever(sim))

    async def stop(app):
        """Stop refreshing, end the streams, let the hands finish."""
        app[REFRESHER].cancel()
        sim = app[SIM]
        sim.changed.set()
        await asyncio.get_running_loop().run_in_executor(None, sim.close)
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app


async def _refresh_forever(sim: WebTable) -> None:
    while True:
        try:
            sim.refresh()
        except Exception:  # noqa: BLE001  a drawing bug must not stop the page
            LOG.exception("sim page refresh failed")
        await asyncio.sleep(REFRESH_S)


def serve(table, address: str, port: int, announce=print) -> int:
    """Serve the page for ``table`` on ``address``:``port`` (0: a free port) until
    Ctrl-C/SIGTERM; ``announce(text)`` is told the address to open once it listens.
    Returns the exit status (1 when the address cannot be listened on)."""
    guard = HostGuard.for_address(address, port or None)
    app = make_app(table, guard)
    shown = page_names(address, guard.names)

    async def main():
        """Serve the page until Ctrl-C or SIGTERM, printing its address once it listens."""
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0, handle_signals=True)
        await runner.setup()
        try:
            site = web.TCPSite(runner, address, port)
            await site.start()
            real = site._server.sockets[0].getsockname()[1]
            urls = " or ".join(f"http://{name}:{real}/" for name in shown)
            announce(f"the simulated table: {urls}  (Ctrl-C stops; the game is kept)")
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, web.GracefulExit):
        pass
    except OSError as exc:
        LOG.error("cannot listen on %s port %s: %s", address, port, exc.strerror or exc)
        announce(f"cannot listen on {address} port {port}: {exc.strerror or exc}")
        return 1
    return 0


def page_names(address: str, names: frozenset[str]) -> list[str]:
    """The names to open the page by, as a URL's host part: ``address`` itself; for a
    wildcard (0.0.0.0, ::), the ``.local`` name and the IPv4 addresses of ``names`` that
    are not loopback (a phone without mDNS needs the address), or "localhost"."""
    if address not in ("0.0.0.0", "::"):
        return [f"[{address}]" if ":" in address else address]
    local = sorted(n for n in names if n.endswith(".local"))
    ips = sorted(n for n in names if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", n)
                 and not n.startswith("127."))
    return (local + ips) or ["localhost"]


def static_size() -> int:
    """Bytes of the page's first load (the HTML, its script and its stylesheet)."""
    return sum(len(_static_text(name).encode()) for name in ("simweb.html", *STATIC))


def main(cfg: dict, out: str | None, seed: int | None, address: str, port: int) -> int:
    """``sim --web``: start the companion on the sim backend (journal in ``out``, default
    ``<state dir>/sim``, resumed when a game is kept there; ``seed`` deals the circle)
    and serve its page on ``address``:``port`` until Ctrl-C; returns the exit status."""
    from pathlib import Path

    from ..service.assembly import names_path
    from ..config import state_dir
    from ..service.feed import feed_dir
    from .table import open_table
    folder = Path(out) if out else state_dir(cfg) / "sim"
    folder.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=folder / "sim.log", level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        HostGuard.for_address(address)
    except ValueError as exc:
        print(f"sim --web: {exc}", file=sys.stderr)
        return 2
    table = open_table(cfg, folder, seed, feed_dir(cfg), names_path(cfg))
    try:
        status = serve(table, address, port, lambda text: print(text, flush=True))
    finally:
        table.close()
    print(f"journal kept in {folder}; run again to resume")
    return status
