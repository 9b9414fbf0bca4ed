"""The live feed: the game service publishes what the table shows, locally, for other processes.

The game service has no network (its unit keeps ``PrivateNetwork=yes``), so the
LAN page (``web/``) and a club bridge run as their own processes and read this
feed. Everything happens in one folder, the *feed folder* (``feed.dir`` in the
config; by default ``$RUNTIME_DIRECTORY``, i.e. ``/run/patchwork-companion``
under systemd, else ``$XDG_RUNTIME_DIR/patchwork-companion``, else
``<tmp>/patchwork-companion-<uid>``)::

    <feed folder>/live.json          the latest snapshot (written atomically)
    <feed folder>/live.lock          held (``flock``) by the publishing service while it runs
    <feed folder>/feed/<name>.sock   one AF_UNIX datagram socket per consumer

Publisher (in the game service): :class:`FeedPublisher` is an output part like
the OLED and the LED strip: the loop hands it a :class:`Capture` (immutable
values it already has, taken in a few microseconds) and goes on; the
publisher's own thread keeps only the latest capture, builds the snapshot
(JSON, the OLED picture as PNG), replaces ``live.json`` (write, rename) and
sends the snapshot as one datagram to every socket in ``feed/`` with
``MSG_DONTWAIT``: a consumer whose queue is full, that went away (a stale
socket file) or that never reads simply misses that datagram. Nothing the
consumers do can block or slow the game loop, and the loop never waits for
the publisher either (a slow disk only delays the feed). No network socket
is opened: AF_UNIX only. From its first snapshot to its end the publisher holds an
exclusive ``flock`` on ``live.lock``; the kernel lets it go when the process ends,
however it ends (a clean stop, a crash, SIGKILL), so a reader knows at once whether
the service still runs (``web.feed.service_running``) and the service never wakes
just to say so. A clean stop touches ``live.json`` first: its mtime is then the
moment the service stopped.

Consumer (web, club, sim: see :mod:`firmware_py.web.feed`): ``FeedSubscriber`` binds ``feed/<name>.sock`` and
reads snapshots; ``read_live`` reads ``live.json`` (to start from, or to
catch up when a datagram was missed: every snapshot carries ``seq``, and the
game's ``moves`` so far, so one snapshot is enough to rebuild the game).

The snapshot (``format`` = ``"patchwork-live/1"``), a JSON object:

- ``seq``: increases with every snapshot of one service run; ``run``: an id of
  the service run (``seq`` restarts with a new ``run``); ``at``: Unix time, s.
- ``mode``: the table's mode (``setup_game`` ... ``turn``, ``confirm``,
  ``leather``, ``menu``, ``end``); ``game_id``: 12 hex digits naming the game in
  progress (its setup), or null during setup; ``game``, ``time_board``,
  ``last_space``; ``turn``: turns accepted so far (0 before the first);
  ``to_move``: colour ("green"/"yellow") whose turn it is, or null.
- ``players``: two objects in turn order (who started first), each
  ``colour``, ``name``, ``position`` (time-board space), ``buttons``,
  ``income``, ``score`` (as it stands), ``empty`` (squares), ``special``
  (holds the 7x7 special tile).
- ``offer``: the ids of the (up to) three patches on offer (in a free layout
  the first three of those left: any may be bought); ``layout``: "dealt" or
  "free"; ``left``: how many patches are still on the table.
- ``oled``: ``{"lines": [text, ...], "png": base64 PNG of the 128x64 screen}``.
- ``leds``: one ``[r, g, b]`` per time-board space (the active token at full
  brightness), and ``lights``: the layers behind them (``tokens``, ``active``,
  ``targets``, ``expected``, ``wrong``, ``leather``, ``income``).
- ``instruction``: the last instruction or notice the OLED gave.
- ``over``, ``winner`` (colour or null), ``scores`` (final or as they stand),
  ``warnings`` (the full texts, as logged) and ``badge`` (the same in the
  players' words, as the OLED's corner shows them).
- ``moves``: the game's moves so far in the game-record format, and
  ``corrections`` (``{"player", "delta", "after_move"}``); ``record``: the
  whole game record so far (``patchwork-game-record/1``), which replays to
  this very state.
- ``pin_asked``: how often the box's menu asked for a web PIN in this run (the
  page shows a fresh PIN on the OLED when it goes up; the PIN itself is never
  on the feed).

Build snapshots with :func:`build_snapshot` (pure: capture in, dict out).
"""
from __future__ import annotations

import base64
import errno
import fcntl
import hashlib
import io
import json
import logging
import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..disk import write_in_ram

LOG = logging.getLogger(__name__)

FORMAT = "patchwork-live/1"
LIVE_FILE = "live.json"
LOCK_FILE = "live.lock"     #: flock-ed by the publishing service for as long as it runs
SOCKETS = "feed"
MAX_DATAGRAM = 200_000      #: larger snapshots are announced only (read live.json)
LOCK_TRIES = 100            #: 10 ms apart: a reader's test holds the lock for microseconds


def feed_dir(cfg: dict | None = None) -> Path:
    """The feed folder: ``feed.dir`` from ``cfg``, else ``$RUNTIME_DIRECTORY`` (systemd),
    ``$XDG_RUNTIME_DIR/patchwork-companion``, or ``<tmp>/patchwork-companion-<uid>``."""
    configured = (cfg or {}).get("feed", {}).get("dir", "")
    if configured:
        return Path(configured).expanduser()
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    if runtime:
        return Path(runtime)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "patchwork-companion"
    return Path(tempfile.gettempdir()) / f"patchwork-companion-{os.getuid()}"


@dataclass(frozen=True)
class Capture:
    """What the loop hands the publisher: immutable values only, taken in microseconds.

    ``mode``, ``notice``: the UI's; ``setup``: the session's Setup or None;
    ``groups``: the accepted turn groups (a tuple of tuples of engine actions or
    corrections); ``state``: the engine state or None; ``screen``, ``lights``:
    what the OLED and the LEDs show; ``warnings``: texts; ``names``: the two
    players' names in turn order (None: their colours); ``boxes``: per group, the
    box's move in a game against the box (else None), for the record's
    ``meta.box_quilt``; ``pin_asked``: how often the menu asked for a web PIN.
    """

    mode: str
    notice: str
    setup: object
    groups: tuple
    state: object
    screen: object
    lights: object
    warnings: tuple[str, ...]
    names: tuple[str, str] | None = None
    boxes: tuple = ()
    pin_asked: int = 0


PIN_WARNING = "web PIN"     #: the UI warning key of a PIN shown for the web page


def capture_view(view, warnings: dict, screen, lights) -> Capture:
    """A :class:`Capture` of the table's ``view`` (a ``companion.view.TableView``) with the
    loop's ``warnings`` (key -> text) and what the OLED and the LEDs show.

    A web PIN on the OLED is left out of the capture (its warnings, its screen):
    the feed is read by every open page, the PIN only by someone at the table."""
    game = view.session
    names = game.setup.seat_names() if game is not None else None
    shown = tuple(v for k, v in warnings.items() if k != PIN_WARNING)
    if PIN_WARNING in warnings and screen is not None:
        from ..companion.badges import badge
        screen = replace(screen, warning=badge(shown))
    return Capture(str(view.mode), view.notice, game.setup if game else None,
                   game.groups if game else (), view.state, screen, lights,
                   shown, tuple(names) if names else None,
                   game.boxes if game else (), view.pin_asked)


def game_id(setup) -> str:
    """12 hex digits naming a game by its setup (game, time board, first player, circle)."""
    text = json.dumps(setup.to_json(), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def build_snapshot(cap: Capture, seq: int, run: str, now: float | None = None) -> dict:
    """The snapshot dict (see the module docstring) of ``cap``; pure but for the PNG encoding."""
    from ..rules import score, tally
    snap: dict = {"format": FORMAT, "seq": seq, "run": run,
                  "at": round(time.time() if now is None else now, 3),
                  "mode": cap.mode, "game_id": None, "game": None, "time_board": None,
                  "last_space": cap.lights.last_space if cap.lights else 53, "turn": 0,
                  "to_move": None, "players": [], "offer": [], "over": False, "winner": None,
                  "scores": [], "moves": [], "corrections": [], "warnings": list(cap.warnings),
                  "pin_asked": cap.pin_asked}
    snap["oled"] = {"lines": oled_lines(cap.screen), "png": oled_png(cap.screen)}
    snap["instruction"] = instruction(cap.screen, cap.notice)
    snap["badge"] = cap.screen.warning if cap.screen is not None else ""
    if cap.lights is not None:
        # the active token at full brightness: half-way through a pulse (view.leds.pulse)
        snap["leds"] = space_colours(cap.lights)
        snap["lights"] = lights_json(cap.lights)
    state, setup = cap.state, cap.setup
    if state is None or setup is None:
        return snap
    colours = setup.colours
    names = cap.names or tuple(c.capitalize() for c in colours)
    result = tally(state)
    snap.update(game_id=game_id(setup), game=setup.game, time_board=setup.time_board,
                turn=len(cap.groups), over=state.over,
                to_move=colours[state.to_move] if state.to_move is not None and cap.mode != "end"
                else None,
                winner=colours[result.winner] if result.winner is not None else None,
                scores=result.scores, offer=list(state.offer[:3]),
                layout="free" if state.free else "dealt", left=len(state.circle))
    snap["players"] = [{"colour": colours[i], "name": names[i], "position": p.position,
                        "buttons": p.buttons, "income": p.income, "score": score(state, i),
                        "empty": p.empty, "special": state.special == i}
                       for i, p in enumerate(state.players)]
    snap["moves"], snap["corrections"] = moves_of(state.spec, cap.groups)
    snap["record"] = record_of(cap)
    return snap


def record_of(cap: Capture) -> dict:
    """The game record (``patchwork-game-record/1``, JSON form) of the moves so far, as the
    service would save it now (players' names, corrections in ``meta``)."""
    from ..companion.session import Session
    session = Session.restored(cap.setup, cap.groups, cap.state, cap.boxes)
    return session.record(players=cap.names).to_json()


def moves_of(spec, groups) -> tuple[list, list]:
    """(record moves, corrections) of the turn groups, as ``Session.record`` writes them."""
    from ..companion.session import Correction
    from ..rules import action_to_move
    moves, corrections = [], []
    for group in groups:
        for item in group:
            if isinstance(item, Correction):
                corrections.append({"player": item.player, "delta": item.delta,
                                    "after_move": len(moves)})
                item = item.adjust()          # in the record, an "adjust" move where it was made
            move = action_to_move(spec, item)
            if move is not None:
                moves.append(move)
    return moves, corrections


def space_colours(lights) -> list[list[int]]:
    """One [r, g, b] (0..255) per time-board space, as the strip shows it, but steady (a
    page shows whose turn it is itself): the active token at full brightness, no
    celebration chase, and both the spaces a token must go to (white) and those it
    must leave (red) lit at once."""
    from ..view.leds import RED, LedLayout, led_frame
    last = lights.last_space
    layout = LedLayout.parse(f"0-{last}", last + 1, last)
    steady = replace(lights, active="", celebrate="")    # no pulse: every token at full
    colours = [list(c) for c in led_frame(steady, 0.0, layout)]
    for space in lights.wrong:
        colours[space] = list(RED)
    return colours


def lights_json(lights) -> dict:
    """The LED layers of a ``Lights`` value as plain JSON (spaces sorted)."""
    return {"tokens": [[c, s] for c, s in lights.tokens], "active": lights.active,
            "targets": sorted(lights.targets), "expected": sorted(lights.expected),
            "wrong": sorted(lights.wrong), "leather": sorted(lights.leather),
            "income": sorted(lights.income), "celebrate": lights.celebrate}


def oled_lines(screen) -> list[str]:
    """The OLED screen as text lines: title, body, options (``>`` marks the cursor),
    player rows, notice, warning, footer."""
    if screen is None:
        return []
    out = [screen.title] if screen.title else []
    out += list(screen.lines)
    out += [(">" if i == screen.selected else " ") + " " + o for i, o in enumerate(screen.options)]
    for p in screen.players:
        out.append(f"{'*' if p.active else ' '}{p.name}: {p.buttons} buttons, income {p.income}, "
                   f"score {p.score}")
    if screen.patches and screen.kind in ("turn", "deal", "box"):
        out.append("patches: " + ", ".join(f"#{c.id} {c.cost}b/{c.time}t/{c.income}i"
                                           for c in screen.patches))
    if screen.quilt is not None:            # the box's quilt: "#" before, "P" now, "L" leather
        q = screen.quilt
        out += ["".join("L" if q.leather >> b & 1 else "P" if q.patch >> b & 1
                        else "#" if q.before >> b & 1 else "." for b in range(r * q.cols,
                                                                             (r + 1) * q.cols))
                for r in range(q.rows)]
    out += [t for t in (screen.notice, screen.warning, screen.footer) if t]
    return out


def instruction(screen, notice: str) -> str:
    """The last instruction the table gave: the UI's notice, else what a prompt or a
    mismatch screen asks, else the screen's title."""
    if notice:
        return notice
    if screen is None:
        return ""
    if screen.notice:
        return screen.notice
    if screen.kind in ("prompt", "mismatch") and screen.lines:
        return " ".join(screen.lines)
    if screen.kind == "box":
        return f"{screen.title}: {', '.join(screen.lines)}"
    return screen.title


def oled_png(screen) -> str:
    """The OLED image of ``screen`` as base64 PNG text ("" when there is no screen)."""
    if screen is None:
        return ""
    from ..view.oled import render
    buf = io.BytesIO()
    render(screen).save(buf, format="PNG", optimize=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def ensure_folder(path: Path, shared: bool = False) -> Path:
    """Create ``path`` (mode 0750; with ``shared``, the group may also write where the
    folder it is in lets the group write, as systemd's RuntimeDirectory of mode 0770
    does, so the web page's user can bind its socket) if missing, and check that it is
    ours or our group's: a folder another user made first (e.g. under /tmp) could feed
    us false states or read the feed. Raises PermissionError (an OSError) when it
    belongs to another user and not to a group of ours, or others may write it."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o750)
        if shared and path.stat().st_uid == os.getuid():
            os.chmod(path, 0o750 | (path.parent.stat().st_mode & 0o020))
    st = path.stat()
    ours = st.st_uid == os.getuid()
    group = st.st_gid in (os.getgid(), *os.getgroups()) and not st.st_mode & 0o002
    if not (ours or group):
        raise PermissionError(f"{path} belongs to user {st.st_uid}, not to us ({os.getuid()}) "
                              f"nor to a group of ours: not using it for the live feed")
    return path


class FeedPublisher:
    """Publishes snapshots from its own thread; :meth:`submit` never blocks.

    ``folder``: the feed folder (created, with ``feed/``, mode 0750). Only the
    latest capture waiting is kept. ``sent``/``dropped`` count datagrams
    delivered and not delivered (full, absent or stale consumer). A capture equal to
    the last one published is skipped (the loop rebuilds after every input, also
    when nothing a reader sees changed).
    """

    name = "live feed"

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.sockets = self.folder / SOCKETS
        self.run = hashlib.sha1(f"{os.getpid()}-{time.time()}".encode()).hexdigest()[:8]
        self.seq = 0
        self.sent = 0
        self.dropped = 0
        self.failed = ""
        self._cond = threading.Condition()
        self._pending: Capture | None = None
        self._closing = False
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._thread: threading.Thread | None = None
        self.published = 0        # snapshots written so far (for tests and tools)
        self._last: Capture | None = None   # the last capture published (equal ones are skipped)
        self._lock_fd: int | None = None    # live.lock, held from the first snapshot on

    def submit(self, cap: Capture) -> None:
        """Hand the latest capture to the publisher thread (never blocks, never raises)."""
        with self._cond:
            if self._closing:
                return
            self._pending = cap
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="output-feed", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        try:
            ensure_folder(self.folder)
            ensure_folder(self.sockets, shared=True)
        except OSError as exc:
            self._fail(exc)
            return                      # publish nothing into a folder that is not ours
        while True:
            with self._cond:
                while self._pending is None and not self._closing:
                    self._cond.wait()           # nothing to do until a capture comes
                if self._pending is None:
                    return
                cap, self._pending = self._pending, None
            if cap == self._last:       # nothing a reader sees changed (e.g. a button's press edge)
                continue
            try:
                self.publish(cap)
                self._last = cap
            except Exception as exc:  # noqa: BLE001  the feed must never take the game down
                self._fail(exc)

    def _hold_lock(self) -> None:
        """Take ``live.lock`` (exclusive ``flock``, kept until :meth:`close` or the
        process's end): readers test it to know the service runs. A reader's test holds
        it for microseconds, so a busy lock is tried again :data:`LOCK_TRIES` times; one
        held for longer means another service publishes into this folder (said in the
        log, and the feed goes on). Never raises: an error is said as the feed's failure."""
        if self._lock_fd is not None:
            return
        try:
            fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        except OSError as exc:
            self._fail(exc)
            return
        self._lock_fd = fd
        try:
            os.fchmod(fd, 0o640)        # the web page's user (the group) tests it, whatever the umask
        except OSError:
            pass                        # another user's file that we may still lock
        for _ in range(LOCK_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.01)
            except OSError as exc:
                self._fail(exc)
                return
        LOG.warning("live feed in %s: another game service holds %s: the page may call this "
                    "box stopped when that one stops", self.folder, LOCK_FILE)

    def _let_go(self) -> None:
        """A clean stop: touch ``live.json`` (its mtime says when the service stopped),
        then let ``live.lock`` go."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is None:
            return
        try:
            os.utime(self.folder / LIVE_FILE)
        except OSError:
            pass                         # removed by hand: nothing to date
        os.close(fd)

    def _fail(self, exc: BaseException) -> None:
        if not self.failed:
            LOG.warning("live feed in %s: %s: %s", self.folder, type(exc).__name__, exc)
        self.failed = f"{type(exc).__name__}: {exc}"

    def publish(self, cap: Capture) -> dict:
        """Build, write and send one snapshot now (on the calling thread); returns it.
        The first one takes ``live.lock`` (see :meth:`_hold_lock`)."""
        self._hold_lock()
        self.seq += 1
        snap = build_snapshot(cap, self.seq, self.run)
        data = json.dumps(snap, separators=(",", ":")).encode()
        # the feed folder lives in RAM; 0640: the web page's user reads it (group)
        write_in_ram(self.folder / LIVE_FILE, data, 0o640)
        if len(data) > MAX_DATAGRAM:
            data = json.dumps({"format": FORMAT, "seq": self.seq, "run": self.run,
                               "file": LIVE_FILE}).encode()
        self.send(data)
        self.published += 1
        return snap

    def send(self, data: bytes) -> None:
        """Send ``data`` to every consumer socket in ``feed/`` without waiting."""
        try:
            names = [e.path for e in os.scandir(self.sockets) if e.name.endswith(".sock")]
        except OSError:
            return
        for path in names:
            try:
                self._sock.sendto(data, socket.MSG_DONTWAIT, path)
                self.sent += 1
            except OSError as exc:      # EAGAIN: full; ECONNREFUSED/ENOENT: nobody there
                self.dropped += 1
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ECONNREFUSED,
                                     errno.ENOENT, errno.ENOBUFS, errno.EPERM, errno.EACCES):
                    LOG.debug("live feed: %s: %s", path, exc)

    def close(self, timeout: float = 1.0) -> None:
        """Publish what is pending, then stop the thread (waits at most ``timeout`` s)
        and let ``live.lock`` go: readers see the service stopped."""
        with self._cond:
            self._closing = True
            thread = self._thread
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)
        self._sock.close()
        if thread is None or not thread.is_alive():
            self._let_go()


def bind_datagram(path: Path, receive_buffer: int | None = None) -> socket.socket:
    """An AF_UNIX datagram socket bound at ``path`` (its folder made private first, a stale
    socket file there replaced); ``receive_buffer`` in bytes, or the system's default.
    Raises OSError when the folder cannot be made or the socket not bound."""
    ensure_folder(path.parent, shared=path.parent.name == SOCKETS)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.bind(str(path))
    os.chmod(path, 0o660)                      # the other side (its group) may send to it
    return sock


# ----- the one thing a reader may ask of the service: show a PIN on the OLED -----------------

CONTROL = "control.sock"


@dataclass(frozen=True)
class ShowPin:
    """Show ``pin`` (6 digits) on the OLED for ``seconds`` (60..3600); the web page asks
    this so that only someone at the table can read the PIN. It changes nothing in the game."""

    pin: str
    seconds: int


def parse_control(data: bytes) -> ShowPin:
    """A control datagram ``{"show_pin": "123456", "seconds": 300}`` -> :class:`ShowPin`;
    raises ValueError saying what is wrong for anything else."""
    try:
        msg = json.loads(data)
    except ValueError:
        raise ValueError("control message is not JSON") from None
    if not isinstance(msg, dict) or set(msg) != {"show_pin", "seconds"}:
        raise ValueError("control message must be {\"show_pin\": \"NNNNNN\", \"seconds\": N}")
    pin, seconds = msg["show_pin"], msg["seconds"]
    if not (isinstance(pin, str) and len(pin) == 6 and pin.isdigit()):
        raise ValueError(f"show_pin must be 6 digits, got {pin!r}")
    if type(seconds) is not int or not 60 <= seconds <= 3600:
        raise ValueError(f"seconds must be an integer 60..3600, got {seconds!r}")
    return ShowPin(pin, seconds)


class ControlListener:
    """The service's control socket ``<folder>/control.sock``: a thread that turns each
    valid datagram into a :class:`ShowPin` for ``post`` (the loop's queue) and logs and
    drops anything else. Raises OSError when the socket cannot be bound."""

    def __init__(self, folder: str | Path, post):
        self.path = Path(folder) / CONTROL
        self.post = post
        self.sock = bind_datagram(self.path)
        self._thread = threading.Thread(target=self._run, name="feed-control", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                return                   # closed
            if not data:
                continue
            try:
                self.post(parse_control(data))
            except ValueError as exc:
                LOG.warning("control socket %s: %s; ignored", self.path, exc)

    def close(self) -> None:
        """Stop listening and remove the socket file."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(1.0)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
