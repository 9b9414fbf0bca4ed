"""The page's side of the post-game analysis: its JSON answer and the background worker.

``GET /api/analysis/{id}`` answers ``{"state", "message", "progress", "players",
"colours", "analysis"}``: ``state`` is ``done`` (``analysis`` holds the points and the
decisions), ``analysing`` (``progress`` = ``{"done", "total"}`` decisions),
``paused`` (a game is being played), ``waiting`` or ``error``.

:class:`Worker` runs the analysis in a child process
(``python -m firmware_py.analysis.worker``; this room does not import the
analysis), which lowers its own priority. While the live feed says a game is
in progress, the worker is asked to pause (SIGUSR1: it stops itself with
SIGSTOP after the decision it is on, never inside a database write); when the
game is over it is resumed (SIGUSR2 cancels a pause not taken yet, then
SIGCONT). New games are noticed every :data:`POLL_SECONDS`.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import sqlite3
import sys
import time
from pathlib import Path

from aiohttp import web

from ..store import History
from ..store import analyses as stored
from .library import seat_colours

LOG = logging.getLogger(__name__)

POLL_SECONDS = 10.0
"""How often the worker's keeper looks at the live feed and for unanalysed games."""
STALE_SECONDS = 1800.0
"""A live snapshot older than this does not count as a game in progress (service stopped)."""
ANALYSIS_VERSION = 1
"""The analysis JSON version this page draws (``firmware_py.analysis.VERSION``)."""


def playing(snapshot: dict | None, now: float) -> bool:
    """True when the live feed's ``snapshot`` shows a game in progress: a game is set up,
    not over, not on its end screen, and the snapshot is fresh (``now``: Unix time, s)."""
    if not snapshot or not snapshot.get("game_id") or snapshot.get("over"):
        return False
    if snapshot.get("mode") == "end":
        return False
    at = snapshot.get("at")
    return isinstance(at, (int, float)) and now - at < STALE_SECONDS


class Worker:
    """Keeps one analysis child process going while there is work and no game is played.

    ``folder``: the store; ``snapshot``: a function giving the newest live snapshot
    (or None); ``command``: the child's argv (default: this Python running the
    analysis worker on ``folder``).
    """

    def __init__(self, folder: str | Path, snapshot, command: list[str] | None = None):
        self.history = History(folder)
        self.snapshot = snapshot
        self.command = command or [sys.executable, "-m", "firmware_py.analysis.worker",
                                   "--store", str(folder)]
        self.proc: asyncio.subprocess.Process | None = None
        self.paused = False
        self.started = 0            # child processes started so far
        self._task: asyncio.Task | None = None
        self._first = True          # look for stale analyses once after start

    async def start(self) -> None:
        """Begin watching (inside the running loop)."""
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            try:
                await self.check()
            except (OSError, sqlite3.Error) as exc:
                LOG.warning("analysis worker: %s", exc)
            await asyncio.sleep(POLL_SECONDS)

    async def check(self) -> None:
        """One look: pause or resume the child, or start one when there is work."""
        busy = playing(self.snapshot(), time.time())
        if self.proc is not None and self.proc.returncode is not None:
            self.proc, self.paused = None, False
        if self.proc is not None:
            if busy and not self.paused:
                self.proc.send_signal(signal.SIGUSR1)
                self.paused = True
            elif not busy and self.paused:
                self.proc.send_signal(signal.SIGUSR2)
                self.proc.send_signal(signal.SIGCONT)
                self.paused = False
            return
        if busy or not self.history.db_path.exists():
            return
        loop = asyncio.get_running_loop()
        if self._first or await loop.run_in_executor(None, stored.unanalysed, self.history):
            self._first = False
            self.proc = await asyncio.create_subprocess_exec(*self.command,
                                                             stdin=asyncio.subprocess.DEVNULL)
            self.started += 1

    async def close(self) -> None:
        """Stop watching and end the child (it may be stopped: continued first)."""
        if self._task is not None:
            self._task.cancel()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 5.0)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


WORKER = web.AppKey("analysis_worker", object)


def answer(history: History, game_id: str, paused: bool) -> dict:
    """The JSON answer for game ``game_id`` (see the module docstring); raises KeyError
    for a game not in the history."""
    with history.index() as index:
        rows = index.db.execute("SELECT name FROM players WHERE game_id = ? ORDER BY seat",
                                (game_id,)).fetchall()
    if len(rows) != 2:
        raise KeyError(game_id)
    names = tuple(r["name"] for r in rows)
    out = {"players": list(names), "colours": list(seat_colours(names)), "progress": None,
           "analysis": None}
    found = stored.load(history, game_id, ANALYSIS_VERSION)
    if found is not None and "error" in found:
        return {**out, "state": "error", "message": f"This game could not be analysed: {found['error']}"}
    if found is not None:
        return {**out, "state": "done", "message": "", "analysis": found}
    now = stored.progress(history, game_id)
    if now is not None:
        note = " (paused while a game is played)" if paused else ""
        return {**out, "state": "paused" if paused else "analysing",
                "progress": {"done": now["done"], "total": now["total"]},
                "message": f"analysing: move {now['done']} of {now['total']}{note}"}
    note = "waiting: the analysis runs when no game is being played" if paused else \
        "waiting to be analysed (in the background, after the game is saved)"
    return {**out, "state": "paused" if paused else "waiting", "message": note}


def setup(app: web.Application, folder: str | Path | None, snapshot, run_worker: bool) -> None:
    """Add ``GET /api/analysis/{gid}`` to ``app`` (answered from the store ``folder``;
    None: no history) and, when ``run_worker``, the background worker (started and
    ended with the app). ``snapshot()`` gives the newest live snapshot or None."""
    worker = Worker(folder, snapshot) if folder is not None else None
    app[WORKER] = worker

    async def analysis_json(request: web.Request) -> web.Response:
        """GET /api/analysis/{gid} : the analysis of one game, or how far it is."""
        if worker is None:
            raise web.HTTPServiceUnavailable(reason="no game history here yet")
        gid = request.match_info["gid"]
        try:
            body = await asyncio.get_running_loop().run_in_executor(
                None, answer, worker.history, gid, worker.paused or playing(snapshot(), time.time()))
        except KeyError:
            raise web.HTTPNotFound(reason=f"no game {gid!r} in the history") from None
        return web.json_response(body, headers={"Cache-Control": "no-store"})

    async def on_startup(app):
        """Start the worker's keeper."""
        if worker is not None and run_worker:
            await worker.start()

    async def on_cleanup(app):
        """End the worker."""
        if worker is not None:
            await worker.close()
    app.router.add_get("/api/analysis/{gid}", analysis_json)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
