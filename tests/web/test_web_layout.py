"""Every page of the LAN page at phone and desktop widths, in a real headless Chromium:
no horizontal scroll at 360 and 390 px, and a screenshot of each page at 360, 390, 768
and 1280 px in ``test-screenshots/`` (looked at by a person, not compared by pixels).

Also the live page's honest states: waiting before anything was published (no broken
image, nothing hidden by an inline style the page's CSP would block), a stopped box
("the box stopped N min ago"), the deal, and a free layout ("any of the 15 left")."""
from __future__ import annotations

import os
import time

import pytest

from conftest import needs

from firmware_py.companion.screens import build_lights, build_screen
from table_helpers import TableRig
from firmware_py.service.feed import FeedPublisher, capture_view
from firmware_py.web.library import Library
from firmware_py.web.server import make_app
from table_helpers import ui_after
from test_faults_rig import GOLDEN_RECORDS
from web_helpers import ServerThread, fill_store, open_browser, screenshot

pytestmark = needs("chromium")

PHONES = (360, 390)
WIDTHS = (360, 390, 768, 1280)


@pytest.fixture(scope="module")
def browser():
    with open_browser() as driver:
        yield driver


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("store")
    fill_store(folder, 60)
    return folder


def _width(driver, width: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900 if width < 700 else 1000, "deviceScaleFactor": 1,
        "mobile": width < 700})


def _shot(driver, name: str, width: int) -> None:
    """A screenshot of the whole page (the window made as tall as the page)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": min(max(height, 600), 5000), "deviceScaleFactor": 1,
        "mobile": width < 700})
    screenshot(driver, name)


def _overflow(driver) -> int:
    """How many px the page is wider than the window (0: no horizontal scroll)."""
    return driver.execute_script(
        "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth")


def _ui_after(record, turns: int, free: bool = False) -> TableRig:
    return ui_after(record, turns, free=free)


def _publish(folder, ui, stop: bool = False) -> dict:
    """Publish ``ui``'s table into ``folder``; the publisher left running (holding the
    feed's lock until the test process ends) unless ``stop``."""
    publisher = FeedPublisher(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "feed").mkdir(exist_ok=True, mode=0o750)
    snap = publisher.publish(capture_view(ui.view(), ui.warnings, build_screen(ui.view(), ui.warnings.values()), build_lights(ui.view())))
    if stop:
        publisher.close()
    else:
        publisher._sock.close()
    return snap


def _wait(driver, condition, what: str, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: condition(d), message=f"timed out waiting for {what}")


def _pages(server, library) -> dict[str, str]:
    game_id = library.games(None, None, 1, 0)[0][0]["id"]
    return {"live": "/", "history": "/history", "replay": f"/game/{game_id}", "stats": "/stats",
            "downloads": "/downloads", "players": "/players"}


def test_every_page_fits_a_phone_and_reads_on_a_desktop(tmp_path, browser, store):
    feed = tmp_path / "feed"
    _publish(feed, _ui_after(GOLDEN_RECORDS[1], 12))
    library = Library(store)
    too_wide = []
    with ServerThread(make_app(feed, library, tmp_path / "names.json")) as server:
        for name, path in _pages(server, library).items():
            for width in WIDTHS:
                _width(browser, width)
                browser.get(server.url + path)
                if name == "live":
                    _wait(browser, lambda d: d.execute_script(
                        "return document.body.dataset.seq") is not None, "the snapshot")
                if width in PHONES and _overflow(browser) > 0:
                    too_wide.append(f"{name} at {width} px: {_overflow(browser)} px too wide")
                _shot(browser, f"{name}-{width}", width)
    assert not too_wide, too_wide


def test_the_live_page_waits_clearly_before_the_first_game(tmp_path, browser):
    from selenium.webdriver.common.by import By
    with ServerThread(make_app(tmp_path / "feed", None, tmp_path / "names.json")) as server:
        for width in (390, 1280):
            _width(browser, width)
            browser.get(server.url + "/")
            assert browser.find_element(By.ID, "waiting").is_displayed()
            assert not browser.find_element(By.ID, "oled").is_displayed()      # no broken image
            boards = [b for b in browser.find_elements(By.CSS_SELECTOR, "svg.board")
                      if b.is_displayed()]
            assert boards == []                                 # not two time boards at once
            screenshot(browser, f"live-waiting-{width}")
            logs = browser.get_log("browser") if hasattr(browser, "get_log") else []
            assert not [e for e in logs if "Content Security Policy" in e.get("message", "")]


def test_the_live_page_says_when_the_box_stopped(tmp_path, browser):
    from selenium.webdriver.common.by import By
    feed = tmp_path / "feed"
    _publish(feed, _ui_after(GOLDEN_RECORDS[1], 12), stop=True)
    old = time.time() - 7 * 60
    os.utime(feed / "live.json", (old, old))          # it stopped seven minutes ago
    with ServerThread(make_app(feed, None, tmp_path / "names.json")) as server:
        _width(browser, 390)
        browser.get(server.url + "/")
        _wait(browser, lambda d: "stopped" in d.find_element(By.ID, "status").text,
              "the stopped note")
        assert "the box stopped 7 min ago" in browser.find_element(By.ID, "status").text
        screenshot(browser, "live-stopped-390")


def test_the_live_page_during_the_deal_and_in_a_free_layout(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from firmware_py.companion.buttons import PRESS, Gesture
    from firmware_py.rules import deal, load_spec
    ui = TableRig(lambda body: 0, lambda game: deal(load_spec(game), 3), lambda s: "")
    for button in ("ok", "ok", "ok", "ok", "ok"):        # Patchwork, 2014, two players, green
        ui.gesture(Gesture(button, PRESS))
        if ui.mode == "deal":
            break
    feed = tmp_path / "feed"
    _publish(feed, ui)
    with ServerThread(make_app(feed, None, tmp_path / "names.json")) as server:
        _width(browser, 390)
        browser.get(server.url + "/")
        _wait(browser, lambda d: d.find_element(By.ID, "players-body").text, "the players")
        head = browser.find_element(By.ID, "to-move").text
        assert head.startswith("Setting up"), head
        assert "Green" in browser.find_element(By.ID, "players-body").text
        tokens = [t for t in browser.find_elements(By.CSS_SELECTOR, "svg.board .token")
                  if t.is_displayed()]
        assert len(tokens) == 2
        screenshot(browser, "live-setup-390")
    ui = _ui_after(GOLDEN_RECORDS[1], 10, free=True)
    feed2 = tmp_path / "feed2"
    snap = _publish(feed2, ui)
    with ServerThread(make_app(feed2, None, tmp_path / "names.json")) as server:
        browser.get(server.url + "/")
        _wait(browser, lambda d: "left" in d.find_element(By.ID, "offer").text, "the free offer")
        assert f"any of the {snap['left']} left" in browser.find_element(By.ID, "offer").text
        assert browser.find_elements(By.CSS_SELECTOR, "#offer img") == []
        screenshot(browser, "live-free-390")
