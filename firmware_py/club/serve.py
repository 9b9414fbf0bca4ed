"""``patchwork-companion club serve``: the club's live scoreboard page.

One process: a paho-mqtt subscriber (its own network thread) hands every
message under ``patchwork/<club>/+/+`` to the asyncio loop, where the
:class:`.board.Board` applies it; an aiohttp server shows the board and pushes
each change to every open page by server-sent events (at most one push per
``PUSH_S`` per page, always the newest board, encoded once for all pages; a
page that takes no data for ``WRITE_S`` seconds is dropped, so it holds at
most one board in memory and never slows the others). Finished games are kept as
record files in the results folder, so a restarted scoreboard keeps its
standings.

Routes: ``/`` the page, ``/api/board`` the board as JSON, ``/events`` the
server-sent events, ``/results.csv`` and ``/records.jsonl`` the results.
Everything is read-only; the page loads nothing from outside the scoreboard.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import socket
import time
from importlib import resources
from pathlib import Path

import paho.mqtt.client as mqtt
from aiohttp import web

from ..disk import write_durably
from . import topics
from .board import Board, Finished
from .bridge import ClubError, ClubSettings

LOG = logging.getLogger(__name__)
PUSH_S = 0.05           # seconds between two pushes to one page, at least
KEEPALIVE_S = 15.0      # a comment line after this long without a change
WRITE_S = 10.0          # a page that cannot take a push for this long is dropped


class Scoreboard:
    """The scoreboard of ``settings.club`` (its broker, TLS and login as a box's);
    ``results`` is the folder of finished records (created if missing).
    Raises :class:`.bridge.ClubError` when that folder cannot be created."""

    def __init__(self, settings: ClubSettings, results: str | Path):
        self.settings = settings
        self.board = Board(settings.club)
        self.results = Path(results).expanduser()
        try:
            self.results.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ClubError(f"club serve: cannot keep the results in {self.results}: "
                            f"{exc.strerror or exc}") from None
        self.broker_error = ""
        self.broker_online = False
        self._changed: asyncio.Event | None = None     # set (and replaced) on each change
        self._encoded: tuple[tuple, bytes] = ((), b"")
        self._saved: dict[str, tuple[Path, dict]] = {}   # game id -> its file, the record in it
        self._loop: asyncio.AbstractEventLoop | None = None
        self._load_results()

    def _load_results(self) -> None:
        for problem in load_results(self.board, self.results):
            LOG.warning("club serve: %s", problem)
        for game in self.board.finished.values():
            self._saved[game.game_id] = (self.results / result_name(game.table, game.game_id),
                                         game.record)

    # ----- MQTT side ------------------------------------------------------------------
    def client(self) -> mqtt.Client:
        """A paho client subscribed to the club, posting into the running loop."""
        s = self.settings
        # a persistent session: a broker that keeps sessions (Mosquitto's persistence)
        # holds the events published while the scoreboard was away
        # the id is the same for the same machine and results folder (so a restart finds
        # its session) and differs otherwise (two scoreboards must not take turns
        # throwing each other off the broker)
        where = f"{socket.gethostname()}:{self.results.resolve()}".encode("utf-8", "surrogatepass")
        client_id = f"patchwork-scoreboard-{s.club}-{hashlib.sha256(where).hexdigest()[:10]}"
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                             clean_session=False)
        s.login(client)
        client.reconnect_delay_set(1, 5)

        def on_connect(c, userdata, flags, rc, props):
            """paho's thread: subscribe to the club, or hand the refusal to the loop."""
            if rc.is_failure:
                self._post(self._broker, False, f"the broker at {s.host}:{s.port} refused the "
                                                f"scoreboard: {rc}")
                return
            # a box that died while the broker was away left no last will: every table is
            # offline until the broker's retained status (sent again on subscribing) says online
            self._post(self._reconnected)
            c.subscribe(topics.club_filter(s.club), qos=1)
            self._post(self._broker, True, "")

        client.on_connect = on_connect
        client.on_disconnect = lambda c, u, f, rc, p: self._post(self._lost, f"lost the broker: {rc}")
        client.on_connect_fail = lambda c, u: self._post(self._broker, False, s.unreachable())
        client.on_message = lambda c, u, msg: self._post(self._message, msg.topic, bytes(msg.payload))
        return client

    def _post(self, fn, *args) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(fn, *args)

    def _broker(self, online: bool, error: str) -> None:
        if error and error != self.broker_error:
            LOG.warning("club serve: %s", error)
        self.broker_online, self.broker_error = online, error
        self._notify()

    def _lost(self, words: str) -> None:
        if self.broker_online:               # after a refusal, the refusal stays the reason
            self._broker(False, words)

    def _reconnected(self) -> None:
        self.board.all_offline()
        self._notify()

    def _message(self, topic: str, payload: bytes) -> None:
        before = len(self.board.finished)
        if self.board.message(topic, payload, time.monotonic()):
            if len(self.board.finished) != before or topic.endswith("/record"):
                self._save_finished()
            self._notify()

    def _save_finished(self) -> None:
        """Keep the results folder in step with the finished games: write each new or
        changed record, remove the file of a game an undo took back."""
        for game_id in [g for g in self._saved if g not in self.board.finished]:
            path, _ = self._saved.pop(game_id)
            path.unlink(missing_ok=True)
        for game in self.board.finished.values():
            if game.record is None or self._saved.get(game.game_id, (None, None))[1] is game.record:
                continue
            path = self.results / result_name(game.table, game.game_id)
            try:
                write_durably(path, json.dumps(game.record).encode("utf-8"))
            except OSError as exc:
                LOG.error("club serve: cannot save %s: %s", path, exc.strerror or exc)
                continue
            self._saved[game.game_id] = (path, game.record)

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def snapshot(self) -> dict:
        """The board plus the broker's status, JSON-ready."""
        return {**self.board.snapshot(), "broker_online": self.broker_online,
                "broker_error": self.broker_error}

    # ----- HTTP side ------------------------------------------------------------------
    def app(self) -> web.Application:
        """The aiohttp application (read-only routes)."""
        app = web.Application()
        app.router.add_get("/", self._page)
        app.router.add_get("/api/board", self._api_board)
        app.router.add_get("/events", self._events)
        app.router.add_get("/results.csv", self._results_csv)
        app.router.add_get("/records.jsonl", self._records_jsonl)
        app.on_startup.append(self._on_startup)
        return app

    async def _on_startup(self, app) -> None:
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()

    async def _api_board(self, request) -> web.Response:
        return web.json_response(self.snapshot())

    async def _results_csv(self, request) -> web.Response:
        return web.Response(text=self.board.results_csv(), content_type="text/csv",
                            headers={"Content-Disposition": "attachment; filename=club-results.csv"})

    async def _records_jsonl(self, request) -> web.Response:
        return web.Response(text=self.board.records_jsonl(), content_type="application/x-ndjson",
                            headers={"Content-Disposition": "attachment; filename=club-records.jsonl"})

    async def _page(self, request) -> web.Response:
        html = resources.files("firmware_py.club").joinpath("scoreboard.html").read_text("utf-8")
        return web.Response(text=html, content_type="text/html")

    def _event_data(self) -> tuple[tuple, bytes]:
        """``(key, bytes)`` of the newest board as one server-sent event, encoded once
        per change however many pages are open."""
        key = (self.board.version, self.broker_online, self.broker_error)
        if key != self._encoded[0]:
            self._encoded = (key, f"data: {json.dumps(self.snapshot())}\n\n".encode())
        return self._encoded

    async def _events(self, request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache"})
        await response.prepare(request)
        sent: tuple = ()
        try:
            while True:
                changed = self._changed            # taken first: a later change sets it
                key, data = self._event_data()
                if key != sent:
                    await asyncio.wait_for(response.write(data), WRITE_S)
                    sent = key
                    await asyncio.sleep(PUSH_S)
                    continue
                try:
                    await asyncio.wait_for(changed.wait(), KEEPALIVE_S)
                    continue
                except asyncio.TimeoutError:
                    pass
                await asyncio.wait_for(response.write(b": keep-alive\n\n"), WRITE_S)
        except asyncio.TimeoutError:
            LOG.info("club serve: dropped a page at %s that took no data for %.0f s",
                     request.remote, WRITE_S)
        except ConnectionError:
            pass                                   # the page was closed
        return response


def result_name(table: str, game_id: str) -> str:
    """The file name of a finished game's record: ``<table>--<game id>.json``, the game
    id's characters other than ``A-Z a-z 0-9 _ . -`` replaced by ``_`` and then a
    short hash added, so a hostile game id never leaves the folder or collides."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", game_id)[:64]
    if safe != game_id:
        safe += "-" + hashlib.sha256(game_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{table}--{safe}.json"


def load_results(board: Board, folder: str | Path) -> list[str]:
    """Add the finished records kept in ``folder`` (``<table>--<game id>.json``) to
    ``board``; returns a line per file skipped (unreadable or not a finished record)."""
    problems = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            found = topics.parse_record(path.read_bytes())
        except (OSError, topics.PayloadError) as exc:
            problems.append(f"skipped {path}: {exc}")
            continue
        table = path.stem.split("--", 1)[0]
        board.finished[found["game_id"]] = Finished(
            table, found["game_id"], found["game"], tuple(found["players"]),
            tuple(found["scores"]), found["winner"], found["record"])
    return problems


def serve(settings: ClubSettings, results: str | Path, bind: str, port: int) -> int:
    """Run the scoreboard until interrupted; returns the exit status (0).

    Raises ``OSError`` when ``bind``:``port`` cannot be bound (e.g. in use) and
    :class:`.bridge.ClubError` when the results folder cannot be created."""
    board = Scoreboard(settings, results)
    client = board.client()

    async def start_mqtt(app):
        """Connect to the broker in the background once the page serves (paho retries)."""
        client.connect_async(settings.host, settings.port, 5)
        client.loop_start()

    async def stop_mqtt(app):
        """Leave the broker and stop paho's network thread when the page stops."""
        client.disconnect()
        client.loop_stop()

    app = board.app()
    app.on_startup.append(start_mqtt)
    app.on_cleanup.append(stop_mqtt)
    banner = (f"club scoreboard of {settings.club!r}: http://{bind}:{port}/ "
              f"(broker {settings.host}:{settings.port})")
    # said once the port is bound, never before a "port in use" error
    web.run_app(app, host=bind, port=port, print=lambda _: print(banner, flush=True),
                handle_signals=True, shutdown_timeout=1.0)
    return 0
