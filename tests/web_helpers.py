"""Shared by the web tests and the web benchmark: a store of known games, the web
application served on a thread, and a headless Chromium driven by selenium."""
from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from firmware_py.rules import parse_record

TESTS = Path(__file__).parent
SCREENSHOTS = Path(os.environ.get("PWC_SCREENSHOTS", TESTS.parent / "test-screenshots"))
NAMES = ("Anna", "Ben", "Cleo", "Dora", "Emil")


def golden_records() -> list:
    """The 100 self-play records and the Express game."""
    lines = (TESTS / "data" / "engine-selfplay.jsonl").read_text().splitlines()
    records = [parse_record(line) for line in lines if line.strip()]
    records.append(parse_record((TESTS / "data" / "express-game.json").read_text()))
    return records


def fill_store(folder: Path, count: int) -> list[tuple[str, object]]:
    """File ``count`` finished games in the store at ``folder`` (golden records in turn,
    players from :data:`NAMES`, one game an hour from 2026-01-01); returns (id, record)."""
    from firmware_py.store import History
    history = History(folder)
    records = golden_records()
    start = datetime(2026, 1, 1, 18, 0, tzinfo=timezone(timedelta(hours=1)))
    filed = []
    for k in range(count):
        record = records[k % len(records)]
        names = (NAMES[k % len(NAMES)], NAMES[(k + 1 + k // len(NAMES)) % len(NAMES)])
        if names[0] == names[1]:
            names = (names[0], NAMES[(NAMES.index(names[1]) + 1) % len(NAMES)])
        began = start + timedelta(hours=k)
        meta = {"started": began.isoformat(), "ended": (began + timedelta(minutes=30)).isoformat(),
                "duration_s": 1800}
        game_id = f"{began:%Y%m%d-%H%M%S}-{k:06x}"
        history.file(game_id, replace(record, players=names, result=None, meta=meta))
        filed.append((game_id, record))
    return filed


class ServerThread:
    """An aiohttp application served on 127.0.0.1 (a free port) by its own loop thread."""

    def __init__(self, app):
        self.app = app
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._runner = None
        self._thread = threading.Thread(target=self.loop.run_forever, name="web-test", daemon=True)

    def __enter__(self) -> "ServerThread":
        from aiohttp import web
        self._thread.start()

        async def start():
            self._runner = web.AppRunner(self.app, shutdown_timeout=1.0)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            return site._server.sockets[0].getsockname()[1]
        self.port = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)
        return self

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


def chromium(*flags: str):
    """A headless Debian Chromium through chromedriver (selenium), fresh profile each time,
    with the command-line ``flags`` added. Returns (driver, profile folder to remove)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="pwc-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1200,1000",
                 *flags):
        options.add_argument(flag)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service), profile


@contextmanager
def open_browser(page_load_timeout: float = 30):
    """A fresh headless Chromium (:func:`chromium`) for a ``with`` block; quit and its
    profile removed afterwards."""
    driver, profile = chromium()
    driver.set_page_load_timeout(page_load_timeout)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver, name: str) -> Path:
    """Save the page as ``<SCREENSHOTS>/<name>.png``; returns the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
