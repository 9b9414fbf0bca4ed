"""The box's side of club mode: publish the table to the club's MQTT broker.

Runs in the networked process (never in the game service, which keeps no
network). It is offered the game as it stands (:class:`.progress.Offer`) and
publishes under ``patchwork/<club>/<table>/`` (see :mod:`.topics`):

- ``status``: ``online`` (retained) once connected; the broker publishes the
  last will ``offline`` (retained) when the box goes silent (keep-alive 5 s),
  and a clean stop says ``offline`` itself;
- ``state``: the latest state, retained, QoS 1, on each change and on every
  reconnect (a restarted broker has it again within the reconnect delay);
- ``event`` and ``record``: through the on-disk :class:`.outbox.Outbox`, in
  order, QoS 1, removed only when the broker acknowledged them; a finished
  record is published again (on each reconnect, and every :data:`RESEND_S`
  once the queue is empty) until the scoreboard's ``ack`` names its game.

Client library: paho-mqtt 2.x with callback API version 2. One worker thread
owns the bridge; paho's network thread only posts what it saw (connected,
refused, acknowledged) to the worker's queue, so no lock is ever held across a
paho call.
"""
from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt

from ..rules import dumps_record
from . import topics
from .outbox import Outbox
from .progress import Offer, new_events, state_of

LOG = logging.getLogger(__name__)
WINDOW = 100             # queued messages handed to paho and not yet acknowledged, at most
SHORT_S = 10.0           # a connection the broker closes sooner than this was short
THROWN_OFF = 3           # this many short ones in a row: another box is likely using our name
RESEND_S = 120.0         # a record the scoreboard has not confirmed goes again this often


class ClubError(ValueError):
    """A club setting that cannot work (unreadable password file, bad name)."""


@dataclass(frozen=True)
class ClubSettings:
    """Where and as whom a box publishes: broker ``host`` and ``port`` (1..65535),
    ``tls`` (bool; ``ca_file`` optional, '' = the system's CAs), ``username``
    ('' = anonymous) with ``password_file`` (its first line is the password),
    ``club`` and ``table`` (1-32 of ``A-Z a-z 0-9 _ -``), ``keepalive`` in seconds."""

    host: str
    port: int
    club: str
    table: str
    tls: bool = False
    username: str = ""
    password_file: str = ""
    ca_file: str = ""
    keepalive: int = 5

    @classmethod
    def from_config(cls, cfg: dict) -> "ClubSettings":
        """The settings of a validated config's ``[club]`` section."""
        c = cfg["club"]
        return cls(c["host"], c["port"], c["club"], c["table"], c["tls"], c["username"],
                   c["password_file"], c["ca_file"], c["keepalive"])

    def password(self) -> str | None:
        """The password from ``password_file`` (None without a user name).

        Raises :class:`ClubError` naming the file when it cannot be read or is empty."""
        if not self.username:
            return None
        if not self.password_file:
            raise ClubError("club.password_file: a user name needs a password file")
        try:
            line = Path(self.password_file).expanduser().read_text("utf-8").splitlines()[:1]
        except (OSError, UnicodeDecodeError) as exc:
            raise ClubError(f"club.password_file: cannot read {self.password_file}: "
                            f"{exc.strerror if isinstance(exc, OSError) else exc}") from None
        if not line or not line[0]:
            raise ClubError(f"club.password_file: {self.password_file} is empty")
        return line[0]

    def login(self, client: mqtt.Client) -> None:
        """Give ``client`` the user name, password and TLS settings.

        Raises :class:`ClubError` for an unreadable password file or a CA file that
        cannot be loaded."""
        if self.username:
            client.username_pw_set(self.username, self.password())
        if self.tls:
            ca_file = str(Path(self.ca_file).expanduser()) if self.ca_file else None
            try:
                client.tls_set(ca_certs=ca_file)     # paho's default: the certificate is checked
            except (OSError, ValueError) as exc:        # ssl.SSLError is an OSError
                raise ClubError(f"club.ca_file: cannot load {self.ca_file or 'the system CAs'}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None

    def unreachable(self) -> str:
        """The words for a broker that does not answer at all."""
        return (f"cannot reach the broker at {self.host}:{self.port} (is it running, and are "
                f"club.host and club.port right?); retrying")


class ClubBridge:
    """Publishes one box's table; ``outbox`` is the path of its on-disk queue.

    ``start()`` returns at once (the broker may be away: paho retries every 1-5 s);
    ``offer()`` may be called from any thread; ``stop()`` says ``offline`` and
    disconnects. ``error`` holds, in words, why the broker is not reached (a wrong
    password, nothing listening at host:port, another box thrown off with the same
    table name), '' once connected; ``connected`` whether the broker is reachable now.
    Raises :class:`ClubError` at construction for an unreadable password file or an
    outbox that cannot be created or written (a read-only folder, a full disk).
    """

    def __init__(self, settings: ClubSettings, outbox: str | Path, client_id: str | None = None):
        self.settings = settings
        try:
            self.outbox = Outbox(outbox)
        except (OSError, sqlite3.Error) as exc:
            raise ClubError(f"club outbox: cannot keep the queue of unsent turns in {outbox}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
        self.connected = False
        self.error = ""
        self.published = 0
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._state: bytes | None = None
        self._handed = 0                      # highest outbox seq handed to paho
        self._in_flight: dict[int, int] = {}  # paho mid -> outbox seq
        self._worker: threading.Thread | None = None
        self._stopping = False
        self._since = 0.0                     # when the current connection came up (monotonic)
        self._service = True                  # the game service runs (its feed is alive)
        self._short = 0                       # short connections in a row
        self.client = self._client(client_id or f"patchwork-{settings.club}-{settings.table}")

    def _topic(self, kind: str) -> str:
        return topics.topic(self.settings.club, self.settings.table, kind)

    def _client(self, client_id: str) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        s.login(client)
        client.will_set(self._topic("status"), b"offline", qos=1, retain=True)
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.max_queued_messages_set(0)
        client.on_connect = lambda c, u, flags, rc, props: self._jobs.put(("connect", rc))
        client.on_disconnect = lambda c, u, flags, rc, props: self._jobs.put(("disconnect", rc))
        client.on_connect_fail = lambda c, u: self._jobs.put(("unreachable", None))
        client.on_publish = lambda c, u, mid, rc, props: self._jobs.put(("ack", mid))
        client.on_message = lambda c, u, msg: self._jobs.put(("confirm", bytes(msg.payload)))
        return client

    # ----- life cycle ----------------------------------------------------------------
    def start(self) -> "ClubBridge":
        """Start the worker and paho's network thread; connect in the background."""
        self._worker = threading.Thread(target=self._run, name="club-bridge", daemon=True)
        self._worker.start()
        self.client.connect_async(self.settings.host, self.settings.port, self.settings.keepalive)
        self.client.loop_start()
        return self

    def stop(self, timeout: float = 3.0) -> None:
        """Say ``offline`` (retained), disconnect and stop both threads; the outbox keeps
        whatever the broker has not acknowledged."""
        self._stopping = True
        if self.connected:
            info = self.client.publish(self._topic("status"), b"offline", qos=1, retain=True)
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
        self._jobs.put(("stop", None))
        if self._worker:
            self._worker.join(timeout)
        self.outbox.close()

    def offer(self, offer: Offer) -> None:
        """Publish the game as it stands (thread-safe, returns at once)."""
        self._jobs.put(("offer", offer))

    def service_running(self, running: bool) -> None:
        """The box's game service runs (True) or has stopped (False): the table's
        retained ``status`` says ``online`` or ``offline`` (thread-safe)."""
        self._jobs.put(("service", running))

    def _on_service(self, running: bool) -> None:
        self._service = running
        if self.connected:
            self.client.publish(self._topic("status"), self._status(), qos=1, retain=True)

    def _status(self) -> bytes:
        return b"online" if self._service else b"offline"

    # ----- the worker ----------------------------------------------------------------
    def _run(self) -> None:
        handlers = {"connect": self._on_connect, "unreachable": self._on_unreachable,
                    "disconnect": self._on_disconnect, "ack": self._on_ack,
                    "offer": self._on_offer, "resend": self._on_resend,
                    "confirm": self._on_confirm, "service": self._on_service}
        due = time.monotonic() + RESEND_S
        while True:
            try:
                kind, value = self._jobs.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                kind, value = "resend", None
            if kind == "resend":
                due = time.monotonic() + RESEND_S
            if kind == "stop":
                return
            try:
                handlers[kind](value)
            except ValueError as exc:              # a record that does not replay (RecordError)
                LOG.error("club bridge: skipped a game state that does not replay: %s", exc)
            except Exception:                      # noqa: BLE001 -- a bad job must not end the bridge
                LOG.exception("club bridge: %s failed", kind)

    def _on_connect(self, rc) -> None:
        if rc.is_failure:
            self.connected = False
            words = f"the broker at {self.settings.host}:{self.settings.port} refused the connection: {rc}"
            if words != self.error:
                LOG.error("club: %s", words)
            self.error = words
            return
        self.connected, self._since = True, time.monotonic()
        if self._short < THROWN_OFF:
            self.error = ""
        LOG.info("club: connected to %s:%s as table %s of club %s", self.settings.host,
                 self.settings.port, self.settings.table, self.settings.club)
        self.client.publish(self._topic("status"), self._status(), qos=1, retain=True)
        self.client.subscribe(self._topic("ack"), qos=1)
        if self._state is not None:
            self.client.publish(self._topic("state"), self._state, qos=1, retain=True)
        self._pump()
        self._on_resend(None)

    def _on_resend(self, _) -> None:
        """Publish again each finished record the scoreboard has not confirmed, once
        the queue is empty (so they never overtake their own game's events)."""
        if not self.connected or len(self.outbox):
            return
        for topic, payload in self.outbox.unconfirmed():
            self.client.publish(topic, payload, qos=1)

    def _on_confirm(self, payload: bytes) -> None:
        try:
            ack = topics.parse_ack(payload)
        except topics.PayloadError as exc:
            LOG.warning("club: ignored an ack that does not parse: %s", exc)
            return
        if self.outbox.confirmed(ack["game_id"]) and ack["refused"]:
            LOG.error("club: the scoreboard refused game %s: %s", ack["game_id"], ack["refused"])

    def _on_unreachable(self, _) -> None:
        words = self.settings.unreachable()
        if words != self.error:
            LOG.error("club: %s", words)
        self.connected, self.error = False, words

    def _on_disconnect(self, rc) -> None:
        if self.connected and not self._stopping:
            short = time.monotonic() - self._since < SHORT_S
            self._short = self._short + 1 if short else 0
            if self._short >= THROWN_OFF:
                words = (f"the broker keeps closing this box's connection within seconds: is "
                         f"another box also table {self.settings.table!r} of club "
                         f"{self.settings.club!r}? (club.table must differ on every box)")
                if words != self.error:
                    LOG.error("club: %s", words)
                self.error = words
            elif not short:
                LOG.warning("club: lost the broker (%s); events wait on disk", rc)
        self.connected = False

    def _on_ack(self, mid: int) -> None:
        if self._short and time.monotonic() - self._since >= SHORT_S:
            self._short, self.error = 0, ""        # the connection holds again
        seq = self._in_flight.pop(mid, None)
        if seq is not None:
            self.outbox.done(seq)
            self.published += 1
        self._pump()

    def _on_offer(self, offer: Offer) -> None:
        state = state_of(offer)
        seq, sent, ended = self.outbox.progress(offer.game_id)
        events = new_events(offer, seq, sent, ended)
        if events:
            messages = [(self._topic("event"), topics.event_payload(e)) for e in events]
            record = None
            if events[-1]["kind"] == "end":
                record = (self._topic("record"), self._record(offer).encode())
                messages.append(record)
            try:
                self.outbox.add(offer.game_id, events[-1]["seq"], list(offer.record.moves),
                                state["over"], messages, record)
            except (sqlite3.Error, OSError) as exc:   # a full disk: the state still goes out
                LOG.error("club: cannot queue the turns of game %s in %s (%s); they are queued "
                          "with the next move", offer.game_id, self.outbox.path, exc)
        state["seq"] = events[-1]["seq"] if events else seq     # orders the states of a game
        self._state = topics.state_payload(state)
        if self.connected:
            self.client.publish(self._topic("state"), self._state, qos=1, retain=True)
            self._pump()

    @staticmethod
    def _record(offer: Offer) -> str:
        record = offer.record
        meta = dict(record.meta or {})
        meta["game_id"] = offer.game_id
        return dumps_record(type(record)(record.game, record.time_board, record.players,
                                         record.circle, record.moves, record.blue,
                                         record.result, meta))

    def _pump(self) -> None:
        if not self.connected:
            return
        room = WINDOW - len(self._in_flight)
        if room <= 0:
            return
        for seq, topic, payload in self.outbox.pending(self._handed, room):
            info = self.client.publish(topic, payload, qos=1)
            if info.rc != mqtt.MQTT_ERR_SUCCESS and info.rc != mqtt.MQTT_ERR_NO_CONN:
                LOG.warning("club: publish on %s failed: %s", topic, mqtt.error_string(info.rc))
                return
            self._in_flight[info.mid] = seq
            self._handed = seq
