"""Big downloads streamed: a generator of text pieces run on its own thread, its
pieces handed to the event loop a few at a time, so neither the web process's memory
nor its loop waits on the whole export (the history may hold 10,000 games)."""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator

LOG = logging.getLogger(__name__)

AHEAD = 8                    #: pieces made ahead of the network at most
_DONE = object()


async def pieces(make: Callable[[], Iterator[str]]) -> AsyncIterator[bytes]:
    """The pieces of ``make()`` (called on a worker thread, which owns whatever the
    generator opens, e.g. an SQLite connection) as UTF-8 bytes. An error raised by
    the generator is raised here; leaving the loop early stops the worker."""
    box: queue.Queue = queue.Queue(AHEAD)
    stop = threading.Event()

    def work() -> None:
        """On a worker thread: make the pieces and hand them over, a few ahead at most,
        until they are all made or the reader has gone."""
        try:
            for piece in make():
                while not stop.is_set():
                    try:
                        box.put(piece.encode(), timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put(_DONE)
        except Exception as exc:  # noqa: BLE001  handed to the reader, which raises it
            box.put(exc)

    thread = threading.Thread(target=work, name="web-export", daemon=True)
    thread.start()
    loop = asyncio.get_running_loop()
    try:
        while True:
            item = await loop.run_in_executor(None, box.get)
            if item is _DONE:
                return
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        stop.set()
