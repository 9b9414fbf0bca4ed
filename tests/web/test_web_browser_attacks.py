"""The LAN page attacked in a real headless Chromium (Debian's chromium + chromedriver):
a foreign name resolving to the box (DNS rebinding, with Chromium's host-resolver
rules), a hostile player name in the replay viewer, and a live page whose event
stream answers 502 for a while (a reverse proxy during a restart)."""
from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from aiohttp import web

from firmware_py.store import History
from firmware_py.web.library import Library
from firmware_py.web.server import HUB, make_app
from web_helpers import ServerThread, chromium, fill_store, golden_records, screenshot

pytestmark = pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                                reason="needs Debian's chromium and chromium-driver")


def _wait(driver, condition, what: str, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(
        lambda d: condition(d), message=f"timed out waiting for {what}")


def _behind_a_flaky_proxy(app: web.Application) -> dict:
    """Put ``app`` behind a reverse proxy that answers ``/events`` with 502 while the
    returned dict's ``on`` is true (a service restarting behind it)."""
    failing = {"on": False}

    @web.middleware
    async def proxy(request, handler):
        """502 for the event stream while ``failing``, else the app's answer."""
        if failing["on"] and request.path == "/events":
            return web.Response(status=502, text="bad gateway")
        return await handler(request)
    app.middlewares.insert(0, proxy)
    return failing


@pytest.fixture
def browser_with():
    made = []

    def make(*flags):
        driver, profile = chromium(*flags)
        driver.set_page_load_timeout(30)
        made.append((driver, profile))
        return driver
    yield make
    for driver, profile in made:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_a_page_on_a_rebound_name_gets_nothing(tmp_path, browser_with):
    """evil.test resolves to the box (as a rebinding DNS answer would): the browser sends
    Host evil.test, and the page serves it nothing; the box's own address still works."""
    (tmp_path / "feed").mkdir()
    fill_store(tmp_path / "store", 3)
    app = make_app(tmp_path / "feed", Library(tmp_path / "store"), tmp_path / "names.json")
    with ServerThread(app) as server:
        driver = browser_with("--host-resolver-rules=MAP evil.test 127.0.0.1")
        driver.get(f"http://evil.test:{server.port}/history")
        body = driver.find_element("tag name", "body").text
        screenshot(driver, "web-rebinding-refused")
        assert "not served under the name" in body and "Anna" not in body
        driver.get(f"http://127.0.0.1:{server.port}/history")
        assert "Anna" in driver.find_element("tag name", "body").text


def test_a_hostile_name_does_not_break_the_replay_viewer(tmp_path, browser_with):
    record = golden_records()[0]
    History(tmp_path / "store").file("20260101-180000-000001",
                                     replace(record, players=("<!--<script>", "Ben"), result=None))
    (tmp_path / "feed").mkdir()
    app = make_app(tmp_path / "feed", Library(tmp_path / "store"), tmp_path / "names.json")
    with ServerThread(app) as server:
        driver = browser_with()
        driver.get(f"http://127.0.0.1:{server.port}/game/20260101-180000-000001")
        _wait(driver, lambda d: d.find_element("id", "step").text.startswith("0 / "),
              "the replay viewer")
        driver.find_element("id", "next").click()
        _wait(driver, lambda d: d.find_element("id", "step").text.startswith("1 / "), "a step")
        assert "<!--<script>" in driver.find_element("tag name", "body").text


def test_the_live_page_reconnects_after_a_502_and_says_how_old_its_picture_is(tmp_path,
                                                                               browser_with):
    (tmp_path / "feed").mkdir()
    app = make_app(tmp_path / "feed", None, tmp_path / "names.json")
    failing = _behind_a_flaky_proxy(app)
    with ServerThread(app) as server:
        hub = server.app[HUB]

        def publish(seq):
            server.loop.call_soon_threadsafe(hub.update, {
                "run": "r", "seq": seq, "mode": "turn", "players": [], "game_id": None,
                "last_space": 53, "leds": [], "warnings": [], "scores": []})
        publish(1)
        driver = browser_with()
        driver.get(f"http://127.0.0.1:{server.port}/")
        link = lambda d: d.find_element("id", "link").text          # noqa: E731
        _wait(driver, lambda d: link(d) == "live", "the first snapshot")
        failing["on"] = True
        for client in list(hub.clients):                             # the service restarts
            server.loop.call_soon_threadsafe(client.offer, b"")
        _wait(driver, lambda d: "this picture is" in link(d) and "old" in link(d),
              "the picture's age while the proxy answers 502")
        screenshot(driver, "web-live-reconnecting")
        failing["on"] = False
        publish(2)
        _wait(driver, lambda d: link(d) == "live" and d.find_element("id", "seq").text == "2",
              "the page live again after the 502s", timeout=60)


def test_the_scoreboard_page_reconnects_after_a_502(tmp_path, browser_with):
    import json

    from firmware_py.club.bridge import ClubSettings
    from firmware_py.club.serve import Scoreboard
    sb = Scoreboard(ClubSettings("127.0.0.1", 1, "c", "t"), tmp_path / "results")
    app = sb.app()
    failing = _behind_a_flaky_proxy(app)
    state = {"game_id": "g1", "turn": 3, "game": "patchwork", "over": False, "to_move": 0,
             "winner": None, "ts": 1.0, "players": [
                 {"name": n, "colour": c, "position": 0, "buttons": 5, "income": 0, "empty": 81,
                  "score": -157} for n, c in (("Ann", "green"), ("Bob", "yellow"))]}
    with ServerThread(app) as server:
        driver = browser_with()
        driver.get(f"http://127.0.0.1:{server.port}/")
        status = lambda d: d.find_element("id", "status").text      # noqa: E731
        _wait(driver, lambda d: status(d).startswith("broker unreachable"), "the first board")
        failing["on"] = True

        def drop_streams():
            for conn in server._runner.server.connections:
                conn.force_close()
        server.loop.call_soon_threadsafe(drop_streams)
        _wait(driver, lambda d: "this board is" in status(d), "the board's age during the 502s")
        failing["on"] = False
        server.loop.call_soon_threadsafe(sb._message, "patchwork/c/t7/state",
                                         json.dumps(state).encode())
        _wait(driver, lambda d: "t7" in d.find_element("id", "tables").text,
              "the board live again after the 502s", timeout=60)


def test_guessing_the_pin_in_the_browser_is_held_off_and_the_box_pin_still_works(tmp_path,
                                                                                   browser_with):
    """A stranger types wrong PINs: after the free tries the page says when to try again
    (even the right PIN waits); a PIN asked for on the box logs in at once."""
    from firmware_py.service.feed import ControlListener
    from firmware_py.web.server import GATE
    (tmp_path / "feed").mkdir()
    app = make_app(tmp_path / "feed", None, tmp_path / "names.json")
    shown = []
    listener = ControlListener(tmp_path / "feed", shown.append)
    try:
        with ServerThread(app) as server:
            driver = browser_with()
            driver.get(f"http://127.0.0.1:{server.port}/players")
            driver.find_element("css selector", 'form[action="/pin"] button').click()
            _wait(driver, lambda d: shown, "the PIN on the OLED")
            pin = shown[-1].pin
            wrong = "000000" if pin != "000000" else "111111"

            def login(value):
                from selenium.webdriver.support import expected_conditions as EC
                page = driver.find_element("tag name", "html")
                driver.find_element("name", "pin").send_keys(value)
                driver.find_element("css selector", 'form[action="/login"] button').click()
                _wait(driver, EC.staleness_of(page), "the answer to the PIN")
                return driver.find_element("tag name", "body").text
            for _ in range(4):
                text = login(wrong)
            assert "wrong PIN" in text
            text = login(pin)
            assert "too many wrong PINs: try again in" in text and "edit names" in text
            screenshot(driver, "web-pin-backoff")
            gate = server.app[GATE]
            server.loop.call_soon_threadsafe(gate.issue, True)       # Web PIN on the box
            _wait(driver, lambda d: len(shown) >= 2 and gate.pin is not None and gate.pin.at_box,
                  "the box's PIN")
            driver.get(f"http://127.0.0.1:{server.port}/players")
            login(shown[-1].pin)
            _wait(driver, lambda d: "save names" in d.find_element("tag name", "body").text,
                  "the names editor after the box's PIN")
    finally:
        listener.close()
