"""The web page in a real headless Chromium (Debian's chromium + chromedriver, selenium):
the live table follows a game played on the sim backend, and the history and statistics
pages show a store of 200 games. Screenshots go to ``test-screenshots/``."""
from __future__ import annotations


import pytest

from conftest import needs

from firmware_py.service.assembly import start_companion
from firmware_py.companion.journal import Journal
from firmware_py.companion.session import Session
from firmware_py.sim.demo import demo_config
from firmware_py.rules import untracked_copy
from firmware_py.sim.hands import Hands
from firmware_py.sim.player import TablePlayer
from firmware_py.web.library import Library
from firmware_py.web.server import make_app
from table_helpers import groups
from web_helpers import ServerThread, fill_store, open_browser, screenshot

pytestmark = needs("chromium")


@pytest.fixture
def browser():
    with open_browser() as driver:
        yield driver


def _wait(driver, condition, what: str, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: condition(d), message=f"timed out waiting for {what}")


def _cell(driver, colour: str, field: str) -> str:
    from selenium.webdriver.common.by import By
    cells = driver.find_elements(By.CSS_SELECTOR, f'#players-body tr[data-colour="{colour}"] '
                                                  f'td[data-field="{field}"]')
    return cells[0].text if cells else ""


def _table_mid_game(folder, record, turns: int, feed):
    """A companion on the sim backend resumed ``turns`` turns into ``record``, publishing
    its live feed into ``feed``."""
    setup, turn_groups = groups(record, turns)
    journal = Journal(folder)
    journal.load()
    journal.append({"kind": "setup", "setup": setup.to_json()})
    session = Session(setup)
    for group in turn_groups:
        journal.append({"kind": "turn", "moves": session.group_to_json(group)})
        session.commit(group)
    companion = start_companion(demo_config(fast=True), folder=folder, feed=feed)
    return companion, len(session.record().moves)


def test_the_live_page_follows_a_game_on_the_sim_backend(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from test_faults_rig import GOLDEN_RECORDS
    record = GOLDEN_RECORDS[1]
    feed = tmp_path / "feed"
    companion, done = _table_mid_game(tmp_path / "journal", record, 9, feed)
    try:
        hands = Hands(companion, timeout=15)
        state = companion.service.call(lambda: companion.service.view.state)
        hands.place_tokens([p.position for p in state.players])
        hands.await_board({p.position for p in state.players})
        with ServerThread(make_app(feed, None, tmp_path / "names.json")) as server:
            browser.get(server.url + "/")
            colours = companion.service.view.session.setup.colours
            mover = colours[state.to_move]
            _wait(browser, lambda d: _cell(d, mover, "score") != "", "the players' table")
            before = {c: (_cell(browser, c, "score"), _cell(browser, c, "position")) for c in colours}
            turn_before = browser.find_element(By.ID, "turn").text
            assert turn_before == f"turn {len(companion.service.view.session.groups) + 1}"   # the one being played
            assert browser.find_element(By.ID, "to-move").text == f"{mover.capitalize()}'s turn"
            offer = browser.find_elements(By.CSS_SELECTOR, "#offer img")
            assert [i.get_attribute("alt") for i in offer] == [f"patch {p}" for p in state.offer[:3]]
            assert browser.find_element(By.ID, "oled").get_attribute("src").startswith(
                "data:image/png;base64,")
            screenshot(browser, "live-before-move")

            plan = untracked_copy(record).moves
            player = TablePlayer(hands, record)
            player.step(done, plan[done])                      # the next move, by hand
            after_state = companion.service.call(lambda: companion.service.view.state)
            want_turn = f"turn {len(companion.service.view.session.groups) + 1}"   # the one being played
            _wait(browser, lambda d: d.find_element(By.ID, "turn").text == want_turn,
                  "the turn number to change")
            score = str(after_state.players[state.to_move].buttons
                        - 2 * after_state.players[state.to_move].empty
                        + (7 if after_state.special == state.to_move else 0))
            _wait(browser, lambda d: _cell(d, mover, "score") == score, "the new score")
            assert (_cell(browser, mover, "score"), _cell(browser, mover, "position")) != before[mover]
            assert _cell(browser, mover, "position") == \
                str(after_state.players[state.to_move].position)
            token = browser.find_element(By.ID, f"board-patchwork-{mover}")
            cell = browser.find_element(By.ID, "board-patchwork-s"
                                        f"{after_state.players[state.to_move].position}")
            assert float(token.get_attribute("cy")) == float(cell.get_attribute("data-y"))
            screenshot(browser, "live-after-move")
    finally:
        companion.close()


@pytest.fixture(scope="module")
def store200(tmp_path_factory):
    folder = tmp_path_factory.mktemp("store200")
    fill_store(folder, 200)
    return folder


def test_history_page_with_200_games(tmp_path, browser, store200):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    library = Library(store200)
    with ServerThread(make_app(tmp_path, library, tmp_path / "names.json")) as server:
        browser.get(server.url + "/history")
        rows = browser.find_elements(By.CSS_SELECTOR, "#history tbody tr")
        assert len(rows) == 50
        newest, _ = library.games(None, None, 1, 0)
        assert rows[0].get_attribute("data-id") == newest[0]["id"]
        assert "page 1 of 4 (200 games)" in browser.find_element(By.CLASS_NAME, "pager").text
        screenshot(browser, "history-200")
        Select(browser.find_element(By.NAME, "player")).select_by_visible_text("Cleo")
        Select(browser.find_element(By.NAME, "game")).select_by_value("patchwork")
        browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
        _wait(browser, lambda d: "player=Cleo" in d.current_url, "the filtered page")
        _, total = library.games("Cleo", "patchwork", 1, 0)
        rows = browser.find_elements(By.CSS_SELECTOR, "#history tbody tr")
        assert len(rows) == min(total, 50) and 50 < total < 200
        assert f"({total} games)" in browser.find_element(By.CLASS_NAME, "pager").text
        assert all("Cleo" in r.text and "Patchwork" in r.text and "Express" not in r.text
                   for r in rows)
        screenshot(browser, "history-filtered")
        rows[0].find_element(By.LINK_TEXT, "replay").click()
        _wait(browser, lambda d: "/game/" in d.current_url, "the replay page")
        assert browser.find_element(By.ID, "step").text.startswith("0 / ")
        browser.find_element(By.ID, "next").click()
        assert browser.find_element(By.ID, "step").text.startswith("1 / ")
        assert browser.find_element(By.ID, "move").text.startswith("move 1: ")
        browser.find_element(By.ID, "last").click()
        last = browser.find_element(By.ID, "step").text.split(" / ")
        assert last[0] == last[1]
        screenshot(browser, "replay-last")


def test_stats_page_with_200_games(tmp_path, browser, store200):
    from selenium.webdriver.common.by import By
    library = Library(store200)
    stats = library.stats()
    with ServerThread(make_app(tmp_path, library, tmp_path / "names.json")) as server:
        browser.get(server.url + "/stats")
        rows = browser.find_elements(By.CSS_SELECTOR, "#stats tr")[1:]
        assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == \
            [p["name"] for p in stats["players"]]
        first = rows[0].find_elements(By.TAG_NAME, "td")
        p = stats["players"][0]
        assert [c.text for c in first[1:5]] == [str(p["games"]), str(p["wins"]),
                                                f"{p['avg_score']:.1f}", str(p["best_score"])]
        assert sum(s["games"] for s in stats["games"]) == 200
        charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
        assert len(charts) == 3
        bars = browser.find_elements(By.CSS_SELECTOR, "svg.chart rect[fill]")
        assert len(bars) >= 2 * len(rows)
        screenshot(browser, "stats-200")


def test_replay_page_shows_the_analysis(tmp_path, browser):
    """The win-chance graph and the costliest decisions: a click on a point jumps the replay."""
    from selenium.webdriver.common.by import By

    from firmware_py.analysis import Settings
    from firmware_py.analysis.worker import analyse_game
    from firmware_py.store import History
    filed = fill_store(tmp_path / "store", 2)
    (done_id, record), (waiting_id, _) = filed
    result = analyse_game(History(tmp_path / "store"), done_id, Settings(iterations=60, playouts=40))
    library = Library(tmp_path / "store")
    with ServerThread(make_app(tmp_path, library, tmp_path / "names.json")) as server:
        browser.get(f"{server.url}/game/{done_id}")
        _wait(browser, lambda d: d.find_elements(By.ID, "wingraph"), "the win-chance graph")
        points = browser.find_elements(By.CSS_SELECTOR, "#wingraph circle.point")
        assert len(points) == len(result["decisions"]) + 1
        assert browser.find_elements(By.CSS_SELECTOR, "#wingraph polyline.curve")
        worst = [d for d in result["decisions"] if d["player"] == 0 and d["cost"] > 0]
        items = browser.find_elements(By.CSS_SELECTOR, "#costly-0 li")
        assert len(items) == min(3, len(worst)) and "win chance, about" in items[0].text
        assert "+/-" in items[0].text
        target = points[5]
        frame = target.get_attribute("data-frame")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", target)
        target.click()
        assert browser.find_element(By.ID, "step").text.startswith(f"{frame} / ")
        button = browser.find_element(By.CSS_SELECTOR, "#costly-1 li button")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
        button.click()
        assert browser.find_element(By.ID, "step").text.startswith(
            f"{button.get_attribute('data-frame')} / ")
        browser.execute_script("document.getElementById('analysis').scrollIntoView();")
        screenshot(browser, "replay-analysis")
        browser.get(f"{server.url}/game/{waiting_id}")
        _wait(browser, lambda d: "waiting to be analysed" in d.find_element(
            By.ID, "analysis-status").text, "the waiting note")
        assert not browser.find_elements(By.ID, "wingraph")
