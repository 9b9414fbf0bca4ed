"""``patchwork-companion club serve``: the club's live scoreboard page.

One process: a paho-mqtt subscriber (its own network thread) hands every
message under ``patchwork/<club>/+/+`` to the asyncio loop, where the
:class:`.board.Board` applies it; an aiohttp server shows the board and pushes
each change to every open page by server-sent events (at most one push per
``PUSH_S`` per page, always the newest board, encoded once for all pages; a
page that takes no data for ``WRITE_S`` seconds is dropped, so it holds at
most one board in memory and never slows the others). Verified finished games
are kept in the scoreboard's own store (:mod:`.results`, SQLite in the results
folder) before the box is told so on its ``ack`` topic, so neither a restarted
scoreboard nor a broker killed outright loses a game it had counted.

Routes: ``/`` the page, ``/api/board`` the board as JSON, ``/events`` the
server-sent events, ``/results.csv`` and ``/records.jsonl`` the results.
Everything is read-only; the page loads nothing from outside the scoreboard.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import socket
import time
from importlib import resources
from pathlib import Path

import paho.mqtt.client as mqtt
from aiohttp import web

from . import topics
from .board import Board, Finished
from .bridge import ClubError, ClubSettings
from .results import ResultStore, StoreError

LOG = logging.getLogger(__name__)
PUSH_S = 0.05           # seconds between two pushes to one page, at least
KEEPALIVE_S = 15.0      # a comment line after this long without a change
WRITE_S = 10.0          # a page that cannot take a push for this long is dropped
LOG_EVERY_S = 10.0      # refused messages are logged at most this often (with a count)


class Scoreboard:
    """The scoreboard of ``settings.club`` (its broker, TLS and login as a box's);
    ``results`` is the folder of finished records (created if missing).
    Raises :class:`.bridge.ClubError` when that folder cannot be created."""

    def __init__(self, settings: ClubSettings, results: str | Path):
        self.settings = settings
        self.board = Board(settings.club)
        self.results = Path(results).expanduser()
        try:
            self.store = ResultStore(self.results)
        except StoreError as exc:
            raise ClubError(f"club serve: {exc}") from None
        self.broker_error = ""
        self.broker_online = False
        self._changed: asyncio.Event | None = None     # set (and replaced) on each change
        self._encoded: tuple[tuple, bytes] = ((), b"")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._mqtt: mqtt.Client | None = None
        self._logged = (float("-inf"), 0)               # when a refusal was last logged, how many since
        for problem in self.store.load(self.board):
            LOG.warning("club serve: %s", problem)
        self._kept = self.store.keys()

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
        client.on_message = lambda c, u, msg: self._post(self._message, msg.topic, bytes(msg.payload),
                                                         bool(msg.retain))
        self._mqtt = client
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

    def _message(self, topic: str, payload: bytes, retained: bool = False) -> None:
        rejected = self.board.rejected
        if topic.endswith("/record") and not retained:
            changed = self._record(topic, payload)
        else:
            before = len(self.board.finished)
            changed = self.board.message(topic, payload, time.monotonic(), retained)
            if len(self.board.finished) < before:
                self._forget_taken_back()
        if self.board.rejected != rejected:
            self._log_refusal()
        if changed:
            self._notify()

    def _record(self, topic: str, payload: bytes) -> bool:
        """A live record: count it, keep it in the store, then ack it to its box (or
        ack the refusal of a record that will never count)."""
        try:
            table, _ = topics.split_topic(topic, self.settings.club)
            found = topics.parse_record(payload)
        except topics.PayloadError as exc:
            self.board.reject(f"{topic[:80]}: {exc}")
            return True
        try:
            game = self.board.take_record(table, found, time.monotonic())
        except topics.PayloadError as exc:
            self.board.reject(f"{topic[:80]}: {exc}")
            self._ack(table, found["game_id"], str(exc))
            return True
        if game is None:                           # counted and kept already: ack again
            self._ack(table, found["game_id"], "")
            return False
        self.board.version += 1
        if self._loop is None:
            self._kept_game(game, self._save(game))
        else:                                      # the commit's fsync never holds up the pages
            saving = self._loop.run_in_executor(None, self._save, game)
            saving.add_done_callback(lambda done: self._kept_game(game, done.result()))
        return True

    def _save(self, game: Finished) -> bool:
        """Commit ``game`` to the store (a worker thread); False when it cannot be kept."""
        try:
            self.store.save(game)
            return True
        except StoreError as exc:                  # a full store: counted now, not kept; no ack
            LOG.error("club serve: %s", exc)
            return False

    def _kept_game(self, game: Finished, saved: bool) -> None:
        """Back on the loop: ack a kept game to its box, unless an undo took it back
        meanwhile (then the store forgets it again)."""
        if not saved:
            return
        self._kept.add(game.key)
        if self.board.finished.get(game.key) is not game:
            self._forget_taken_back()
            return
        self._ack(game.table, game.game_id, "")

    def _ack(self, table: str, game_id: str, refused: str) -> None:
        if self._mqtt is not None:
            self._mqtt.publish(topics.topic(self.settings.club, table, "ack"),
                               topics.ack_payload(game_id, refused), qos=1)

    def _forget_taken_back(self) -> None:
        """Remove from the store the games an undo at their table took back."""
        for key in [k for k in self._kept if k not in self.board.finished]:
            self.store.remove(key)
            self._kept.discard(key)

    def _log_refusal(self) -> None:
        """Log what was refused, at most once per :data:`LOG_EVERY_S` with a count."""
        last, count = self._logged
        now = time.monotonic()
        if now - last < LOG_EVERY_S:
            self._logged = (last, count + 1)
            return
        more = f" (and {count} more refused since the last line)" if count else ""
        LOG.warning("club serve: refused %s%s", self.board.last_rejection, more)
        self._logged = (now, 0)

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def snapshot(self) -> dict:
        """The board plus the broker's status, JSON-ready."""
        return {**self.board.snapshot(time.monotonic()), "broker_online": self.broker_online,
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
        board.store.close()

    app = board.app()
    app.on_startup.append(start_mqtt)
    app.on_cleanup.append(stop_mqtt)
    banner = (f"club scoreboard of {settings.club!r}: http://{bind}:{port}/ "
              f"(broker {settings.host}:{settings.port})")
    # said once the port is bound, never before a "port in use" error
    web.run_app(app, host=bind, port=port, print=lambda _: print(banner, flush=True),
                handle_signals=True, shutdown_timeout=1.0)
    return 0
