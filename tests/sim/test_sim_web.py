"""``patchwork-companion sim --web``: the simulated table on a web page.

Three layers: the page's server in-process (gestures reach the mock pins and the
simulated sensor, bad input is refused and changes nothing, the Host and Origin
checks, the first load's size); a whole Patchwork Express game played in the real
Chromium through the page on a 390 px phone with touch (drags, taps, lifts, holds,
a knocked token and "tidy"), ending with the same record as the same moves made
through the desk the terminal simulator uses, with a screenshot of each mode; and a
game against the box with the mouse and the terminal simulator's keys.
Screenshots go to ``test-screenshots/`` (``simweb-*.png``).
"""
from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from table_helpers import LiveView

from firmware_py.companion import intents
from firmware_py.config import validate
from firmware_py.rules import parse_record
from firmware_py.sim.desk import Desk
from firmware_py.sim.hands import DriveError, Hands
from firmware_py.sim.table import open_table
from firmware_py.sim.web import SIM, make_app, static_size
from firmware_py.web.hosts import HostGuard
from test_sim_tui import _policy
from web_helpers import ServerThread, chromium, screenshot

FAST = {"buttons": {"hold_seconds": 0.5}, "sensor": {"stable_ms": 60, "guidance_seconds": 1.0},
        "sim": {"speed": 4.0}}
HAS_CHROMIUM = bool(shutil.which("chromium") and shutil.which("chromedriver"))
needs_chromium = pytest.mark.skipif(not HAS_CHROMIUM,
                                    reason="needs Debian's chromium and chromium-driver")
LOOPBACK = HostGuard(frozenset({"127.0.0.1", "localhost"}))


@pytest.fixture
def table(tmp_path):
    table = open_table(validate(FAST), tmp_path / "journal", seed=3)
    yield table
    table.close()


def _request(url: str, body: dict | None = None, headers: dict | None = None):
    """(status, text) of a GET, or of a JSON POST when ``body`` is given."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={
        **({"Content-Type": "application/json"} if data else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _until(predicate, what: str, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


# --------------------------------------------------------------------- the server alone
def test_gestures_reach_the_buttons_and_bad_ones_change_nothing(table):
    service = table.companion.service
    with ServerThread(make_app(table, LOOPBACK)) as server:
        post = {"Origin": server.url}
        status, text = _request(server.url + "/")
        assert status == 200 and "Move the lit player's token by dragging it" in text
        _until(lambda: json.loads(_request(server.url + "/state")[1]).get("oled"), "a frame")
        state = json.loads(_request(server.url + "/state")[1])
        assert state["mode"] == "setup_game" and len(state["colours"]) == 54
        assert state["tokens"] == {"green": 0, "yellow": 0} and state["hold_ms"] == 500
        assert len(state["oled"]) == 1368                        # 1024 bytes in base64
        for bad in ({"kind": "press", "arg": "menu"}, {"kind": "fly"}, {"key": "q"},
                    {"kind": "slide", "arg": {"colour": "red", "to": 3}},
                    {"kind": "slide", "arg": {"colour": "green", "to": 54}},
                    {"kind": "step", "arg": "far"}, ["press"]):
            status, text = _request(server.url + "/act", bad, post)
            assert status == 400 and json.loads(text)["error"], (bad, text)
        time.sleep(0.3)
        assert service.status.mode == "setup_game"              # nothing happened
        assert server.app[SIM].acts == 0
        assert _request(server.url + "/act", {"key": "o"}, post)[0] == 200   # the "o" key
        _until(lambda: service.status.mode == "setup_board", "OK to be pressed")
        assert _request(server.url + "/act", {"kind": "press", "arg": "next"}, post)[0] == 200
        _until(lambda: service.status.screen.selected == 1, "NEXT to move the cursor")
        status, text = _request(server.url + "/act", {"kind": "slide",
                                                      "arg": {"colour": "yellow", "to": 4}}, post)
        assert status == 200
        _until(lambda: table.companion.parts.sim_sensor.status()["tokens"] == [0, 4],
               "the sensor to see yellow on 4")


def test_host_and_origin_are_checked(table):
    with ServerThread(make_app(table, LOOPBACK)) as server:
        assert _request(server.url + "/state", headers={"Host": "evil.example"})[0] == 421
        assert _request(server.url + "/state", headers={"Host": "localhost"})[0] == 200
        gesture = {"kind": "press", "arg": "ok"}
        assert _request(server.url + "/act", gesture)[0] == 403                # no Origin
        assert _request(server.url + "/act", gesture,
                        {"Origin": "http://evil.example"})[0] == 403
        assert _request(server.url + "/state", headers={"Origin": "http://evil.example"})[0] == 403
        time.sleep(0.3)
        assert table.companion.service.status.mode == "setup_game"
        assert server.app[SIM].acts == 0


KEY_WORDS = re.compile(r"\((d|l|r|U)\)|(?<!\w)(d|l|U|n|o|b) (sets|lifts|plugs)")


def test_what_the_page_says_names_no_keys(table):
    """A phone has no keys: the lines a gesture answers with say what to tap."""
    with ServerThread(make_app(table, LOOPBACK)) as server:
        post = {"Origin": server.url}

        def said(gesture) -> str:
            status, text = _request(server.url + "/act", gesture, post)
            assert status == 200, text
            return json.loads(text)["said"]
        _until(lambda: json.loads(_request(server.url + "/state")[1]).get("oled"), "a frame")
        lines = [said({"kind": "cable"}), said({"kind": "cable"})]
        assert lines[0] == "sensor cable pulled out: Replug plugs it back in"
        assert said({"kind": "lift_token", "arg": "green"}) == ""
        lines += [said({"kind": "lift_token", "arg": "yellow"}), said({"kind": "lift"}),
                  said({"kind": "slide", "arg": {"colour": "yellow", "to": 3}}),
                  said({"kind": "knock", "arg": "yellow"})]
        assert lines[2] == "set the green token down first (tap a space)"
        lines += [said({"kind": "place", "arg": 0}), said({"kind": "down"}),
                  said({"kind": "jump", "arg": "end"})]
        assert lines[-2] == "nothing in the air: Lift takes a token off the board"
        assert [line for line in lines if KEY_WORDS.search(line)] == []


def test_the_first_load_is_small_and_self_contained():
    assert static_size() < 150_000
    from importlib import resources
    folder = resources.files("firmware_py.sim").joinpath("static")
    for name in ("simweb.html", "simweb.js", "simweb.css"):
        text = folder.joinpath(name).read_text()
        assert not re.search(r"(src|href)=\"(https?:)?//", text), name      # no CDN
    intro = re.search(r'<section id="intro".*?</section>', folder.joinpath("simweb.html")
                      .read_text(), re.S).group(0)
    assert intro.count("<p>") == 3                                         # three lines


# -------------------------------------------------------------- one game, two ways to play
class DeskHands:
    """The moves made through :class:`Desk`, as the terminal simulator's keys make them."""

    def __init__(self, table):
        self.desk = Desk(table.companion)
        self.hands = Hands(table.companion)
        self.log: list[tuple] = []
        self.desk.tidy_board()

    def _idle(self) -> None:
        _until(lambda: self.desk.fingers.pending() == 0 and not self.desk.hand.busy(), "hands")
        self.hands.settle()

    def button(self, kind: str, name: str) -> None:
        """Press or hold ``name``."""
        self.log.append((kind, name))
        self.desk.act(kind, name)
        self._idle()

    def move(self, colour: str, start: int, to: int, how: str) -> None:
        """Move the ``colour`` token from ``start`` to ``to``: slide, or lift and set down."""
        self.log.append(("move", colour, start, to, how))
        hand = self.desk.hand
        hand.last_space = self.hands.status().lights.last_space
        if how == "lift":
            self.desk.pick(colour)
            self.desk.lift()
            hand.aim(to)
            self.desk.down()
        else:
            assert hand.pos[colour] == start
            self.desk.slide(colour, to)
        self._idle()

    def knock(self, colour: str) -> None:
        """Bump ``colour``'s token onto the next space."""
        self.log.append(("knock", colour))
        self.desk.slide(colour, self.desk.hand.pos[colour] + 1)
        self._idle()

    def tidy(self) -> None:
        """Tokens where the game says."""
        self.log.append(("tidy",))
        self.desk.act("tidy")
        self._idle()

    def seen(self, name: str) -> None:
        """Nothing to look at here."""

    def close(self) -> None:
        """Let the hands finish."""
        self.desk.close()


class PageHands:
    """The same moves made on the page in Chromium with a finger (touch pointer events)."""

    def __init__(self, driver, server, table):
        self.driver = driver
        self.sim = server.app[SIM]
        self.hands = Hands(table.companion)
        self.log: list[tuple] = []
        self.shots: dict[str, Path] = {}

    def _touch(self):
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        from selenium.webdriver.common.actions.pointer_input import PointerInput
        return ActionBuilder(self.driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))

    def _el(self, css: str):
        from selenium.webdriver.common.by import By
        return _until(lambda: (self.driver.find_elements(By.CSS_SELECTOR, css) or [None])[0], css)

    def _perform(self, build) -> None:
        """Perform the touch action ``build(action)`` makes; made again when the page
        redrew an element it names meanwhile (a refused action did nothing)."""
        from selenium.common.exceptions import StaleElementReferenceException
        for attempt in range(5):
            action = self._touch()
            try:
                build(action.pointer_action)
                action.perform()
                return
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
                time.sleep(0.1)

    def tap(self, css: str, seconds: float = 0.05) -> None:
        """A finger on the element ``css`` for ``seconds``."""
        self._perform(lambda finger: finger.move_to(self._el(css)).pointer_down()
                      .pause(seconds).pointer_up())

    def _acted(self, before: int) -> None:
        _until(lambda: self.sim.acts > before, "the page's gesture to arrive")
        _until(lambda: self.sim.desk.fingers.pending() == 0 and not self.sim.desk.hand.busy(),
               "the hands")
        self.hands.settle()

    def button(self, kind: str, name: str) -> None:
        """Tap (press) or long-press (hold) the button ``name``."""
        self.log.append((kind, name))
        before = self.sim.acts
        hold = self.hands.service.cfg["buttons"]["hold_seconds"] + 0.3
        self.tap(f'.btn[data-button="{name}"]', hold if kind == "hold" else 0.05)
        self._acted(before)

    def _token(self, colour: str, space: int) -> str:
        return f'.cell[data-space="{space}"] .tok.{colour}:not(.air)'

    def move(self, colour: str, start: int, to: int, how: str) -> None:
        """Drag the token along the spaces between, tap it and then the space, or tap it,
        Lift and then the space."""
        self.log.append(("move", colour, start, to, how))
        before = self.sim.acts
        token = self._token(colour, start)
        if how == "slide":                          # a drag through every space between
            def drag(finger):
                finger.move_to(self._el(token)).pointer_down()
                step = 1 if to > start else -1
                for space in range(start + step, to + step, step):
                    finger.move_to(self._el(f'.cell[data-space="{space}"]'))
                finger.pointer_up()
            self._perform(drag)
        else:
            self.tap(token)
            self._el(token.replace(":not(.air)", ".chosen"))
            if how == "lift":
                self.tap('[data-tool="lift"]')
                _until(lambda: self.sim.acts > before, "the lift")
                self._el(f'.tok.air.{colour}')
            self.tap(f'.cell[data-space="{to}"]')
        self._acted(before + (1 if how == "lift" else 0))

    def knock(self, colour: str) -> None:
        """Choose the token, then Knock."""
        self.log.append(("knock", colour))
        before = self.sim.acts
        start = self.hands.status().lights
        space = dict(start.tokens)[colour]
        self.tap(self._token(colour, space))
        self.tap('[data-tool="knock"]')
        self._acted(before)

    def tidy(self) -> None:
        """Tap Tidy."""
        self.log.append(("tidy",))
        before = self.sim.acts
        self.tap('[data-tool="tidy"]')
        self._acted(before)

    def seen(self, name: str) -> None:
        """The first time ``name`` shows, wait for the page to show it too and keep a
        screenshot."""
        if name in self.shots:
            return
        mode = self.hands.status().mode
        _until(lambda: self.driver.execute_script("return document.body.dataset.mode") == mode,
               f"the page to show {mode}")
        time.sleep(0.3)                              # the OLED frame and the LEDs follow
        self.shots[name] = screenshot(self.driver, f"simweb-phone-{name}")

    def close(self) -> None:
        """Nothing to stop: the server's desk is closed with the server."""


def _choose(player, index: int) -> None:
    for _ in range(index):
        player.button("press", "next")
    player.button("press", "ok")


def _set_up_express(player) -> None:
    h = player.hands
    h.wait(lambda s: s.mode == "setup_game", "the game question")
    player.seen("setup")
    _choose(player, 1)                                       # Patchwork Express
    h.wait(lambda s: s.mode == "setup_players", "who plays")
    _choose(player, 0)                                       # two players
    h.wait(lambda s: s.mode == "setup_first", "who starts")
    _choose(player, 0)                                       # Green
    h.wait(lambda s: s.mode == "setup_layout", "the circle question")
    _choose(player, 0)                                       # deal it
    status = h.wait(lambda s: s.mode == "deal", "the deal")
    player.seen("deal")
    for _ in range(status.screen.patches[0].total - 1):
        player.button("press", "next")
    player.button("press", "ok")
    h.wait(lambda s: s.mode == "turn", "the first turn")


def _confirm(player, action) -> None:
    ui = LiveView(player.hands.service)
    candidates, cursor = player.hands.service.call(lambda: (list(ui.candidates), ui.cursor))
    for _ in range((candidates.index(action) - cursor) % len(candidates)):
        player.button("press", "next")
    player.button("press", "ok")


def _turn(player, index: int, undo: bool) -> bool:
    """One turn: the patch chosen with NEXT/OK, the token moved (slide, tap or lift by
    turn), the question answered; with ``undo``, a turn that ends with the next player to
    move is undone with a hold of BACK and the token put back. True when undone."""
    h = player.hands
    service = h.service
    state = service.call(lambda: service.view.state)
    colour = service.view.session.setup.colours[state.to_move]
    action = _policy(state)
    start, target = state.players[state.to_move].position, intents.target_of(state, action)
    _choose(player, intents.turn_options(state).index(action) + 1)
    h.wait(lambda s: target in s.lights.targets, "the target to light")
    player.seen("turn")
    player.move(colour, start, target, ("slide", "tap", "lift")[index % 3])
    turns = h.status().turns
    status = h.wait(lambda s: s.turns > turns or s.mode in ("confirm", "leather", "end"),
                    "the move to be taken")
    if status.mode == "confirm":
        player.seen("confirm")
        _confirm(player, action)
    status = h.wait(lambda s: s.turns > turns or s.mode in ("leather", "end"), "the move")
    leather = status.mode == "leather"
    if leather:
        player.seen("leather")
        player.button("press", "ok")                         # place it on the quilt
        h.wait(lambda s: s.mode != "leather", "the leather patch placed")
    if undo and not leather and h.status().mode == "turn":
        now = h.status().turns
        player.button("hold", "back")
        h.wait(lambda s: s.turns < now and dict(s.lights.tokens)[colour] == start, "the undo")
        player.seen("undone")
        player.move(colour, target, start, "slide")
        other = state.players[1 - state.to_move].position
        h.await_board({start, other})
        return True
    return False


def _knock_and_tidy(player) -> None:
    """Knock the waiting player's token off its space; the box asks to check the board;
    Tidy puts it back."""
    h = player.hands
    state = h.service.call(lambda: h.service.view.state)
    waiting = h.service.view.session.setup.colours[1 - state.to_move]
    player.knock(waiting)
    h.wait(lambda s: s.screen.kind == "mismatch", "CHECK THE BOARD")
    player.seen("mismatch")
    player.tidy()
    h.wait(lambda s: s.screen.kind == "turn", "the board to agree again")


def play_express(player) -> str:
    """A whole Express game (setup, the deal, every turn to the end); returns the path
    of the saved record."""
    _set_up_express(player)
    h = player.hands
    undone = False
    for index in range(200):
        status = h.wait(lambda s: s.mode in ("turn", "end", "leather"), "a turn")
        if status.mode == "end":
            player.seen("end")
            return status.saved_to
        if status.mode == "leather":                          # won a moment after the move
            player.seen("leather")
            player.button("press", "ok")
            h.wait(lambda s: s.mode != "leather", "the leather patch placed")
        if index == 4:
            _knock_and_tidy(player)
        if index == 6:
            hold = h.service.cfg["buttons"]["hold_seconds"]
            assert hold < 1.0
            player.button("hold", "ok")                      # the menu, closed with BACK
            h.wait(lambda s: s.mode == "menu", "the menu")
            player.seen("menu")
            player.button("press", "back")
            h.wait(lambda s: s.mode == "turn", "the menu closed")
        undone = _turn(player, index, undo=index >= 3 and not undone) or undone
    raise DriveError("no end after 200 turns")


def _record(path: str) -> dict:
    data = parse_record(Path(path).read_text()).to_json()
    data.pop("meta", None)
    return data


def _in_history(folder: Path, saved: str) -> None:
    """The game saved at ``saved`` is in the history of ``folder`` (its index too)."""
    from firmware_py.store import History
    index = History(folder).index()
    try:
        assert index.has(Path(saved).stem) and index.count() == 1
    finally:
        index.close()


@pytest.fixture
def phone():
    driver, profile = chromium()
    driver.set_page_load_timeout(30)
    driver.set_window_size(390, 844)
    # a touch screen, as Chromium's device mode makes one: pointer coarse, no hover
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True,
                                                                  "maxTouchPoints": 5})
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@contextlib.contextmanager
def _phone_page(phone, folder: Path, seed: int, box: bool = False):
    """A table in ``folder`` (``seed`` deals; ``box``: a quick search for the box), its page
    open on ``phone`` past the first screen; yields its :class:`PageHands`. A failure
    leaves ``simweb-phone-failure.png`` and what the hands and the page last did."""
    from firmware_py.ai.table import planner
    table = open_table(validate(FAST), folder, seed=seed,
                       planner=planner(iterations=40) if box else None)
    try:
        with ServerThread(make_app(table, LOOPBACK)) as server:
            phone.get(server.url + "/")
            page = PageHands(phone, server, table)
            page._el("#start")
            screenshot(phone, "simweb-phone-intro")
            page.tap("#start")
            try:
                yield page
            except (AssertionError, DriveError):
                screenshot(phone, "simweb-phone-failure")
                print(page.log[-10:], page.hands.status().lights, page.sim.desk.hand.pos,
                      phone.get_log("browser"))
                raise
    finally:
        table.close()


@pytest.mark.slow
@needs_chromium
def test_a_whole_game_on_a_phone_ends_as_through_the_terminal_simulators_hands(tmp_path, phone):
    with _phone_page(phone, tmp_path / "page", 7) as page:
        assert phone.execute_script("return window.innerWidth") == 390
        page_saved = play_express(page)
        width = phone.execute_script("return document.documentElement.scrollWidth")
        errors = [e for e in phone.get_log("browser") if e["level"] == "SEVERE"]
    assert width <= 390 and errors == []
    assert {"setup", "deal", "turn", "mismatch", "menu", "undone", "end"} <= set(page.shots)
    desk_table = open_table(validate(FAST), tmp_path / "desk", seed=7)
    desk = DeskHands(desk_table)
    try:
        desk_saved = play_express(desk)
    finally:
        desk.close()
        desk_table.close()
    assert page.log == desk.log                     # the same moves, gesture by gesture
    assert any(g[0] == "hold" for g in page.log)
    assert {g[4] for g in page.log if g[0] == "move"} == {"slide", "tap", "lift"}
    page_record, desk_record = _record(page_saved), _record(desk_saved)
    assert page_record["game"] == "patchwork-express" and page_record["result"]
    assert page_record == desk_record
    _in_history(tmp_path / "page", page_saved)


def _keys(driver, text: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).send_keys(text).perform()


@needs_chromium
def test_against_the_box_with_mouse_and_keys(tmp_path):
    """Keys set up a game against the box; the person's token is dragged with the mouse;
    the box's turn is carried out with the keys (y, arrows), as in the terminal."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from firmware_py.ai.table import planner
    from firmware_py.companion.table_setup import PLAYERS
    table = open_table(validate(FAST), tmp_path / "box", seed=11, planner=planner(iterations=40))
    driver, profile = chromium()
    try:
        with ServerThread(make_app(table, LOOPBACK)) as server:
            hands = Hands(table.companion)
            sim = server.app[SIM]
            driver.get(server.url + "/")
            _until(lambda: driver.find_element(By.ID, "start").is_displayed(), "the intro")
            _keys(driver, Keys.ENTER)                          # Start
            _until(lambda: driver.find_element(By.ID, "oled").is_displayed(), "the table")
            screenshot(driver, "simweb-laptop-setup")
            assert driver.find_element(By.ID, "keys").is_displayed()     # a keyboard here
            assert driver.find_element(By.CSS_SELECTOR, ".btn small").is_displayed()

            def keys(text: str, mode: str | None = None):
                for char in text:
                    before = sim.acts
                    _keys(driver, char)
                    _until(lambda: sim.acts > before, f"the key {char!r}")
                    _until(lambda: sim.desk.fingers.pending() == 0, "the fingers")
                    hands.settle()
                if mode:
                    hands.wait(lambda s: s.mode == mode, mode)
            keys("oo", "setup_players")                         # Patchwork, 2014 board
            keys("n" * [level for level, _ in PLAYERS].index("easy") + "o", "setup_first")
            keys("oo", "deal")                                  # you (green) start; deal
            while hands.status().mode == "deal":
                keys("o")
            hands.wait(lambda s: s.mode == "turn", "your first turn")
            cards = hands.status().screen.patches
            buyable = [i for i, card in enumerate(cards) if card.buyable]
            keys("n" * ((buyable[0] if buyable else len(cards)) + 1) + "o")   # a patch, or A
            lit = hands.wait(lambda s: len(s.lights.targets) == 1, "the lit space").lights
            target = next(iter(lit.targets))
            here = dict(lit.tokens)["green"]
            token = driver.find_element(By.CSS_SELECTOR, f'.cell[data-space="{here}"] .tok.green')
            chain = ActionChains(driver).click_and_hold(token)
            for space in range(here + 1, target + 1):
                chain.move_to_element(driver.find_element(By.CSS_SELECTOR,
                                                          f'.cell[data-space="{space}"]'))
            chain.release().perform()
            box = hands.wait(lambda s: s.mode == "box" and s.screen.kind == "box",
                             "the box's move", timeout=30)
            driver.set_window_size(390, 844)
            _until(lambda: driver.execute_script("return document.body.dataset.mode") == "box",
                   "the page to show the box's move")
            time.sleep(0.3)
            screenshot(driver, "simweb-phone-box")
            found = [re.match(r"^Yellow to (\d+)$", line) for line in box.screen.lines]
            goal = int(next(m for m in found if m).group(1))
            turns = box.turns
            keys("y" + "\ue014" * goal)                         # y, then the right arrow
            hands.wait(lambda s: s.turns > turns, "the box's move carried out", timeout=20)
            assert dict(hands.status().lights.tokens)["yellow"] == goal
            assert hands.status().state.players[1].position == goal
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        table.close()


def test_hosts_allow_list_and_checks():
    from firmware_py.web.hosts import HostRefused, allowed_names
    names = allowed_names("0.0.0.0", hostname="tablebox",
                          addresses=frozenset({"192.168.1.20", "fe80::1"}))
    assert names == {"localhost", "127.0.0.1", "::1", "tablebox", "tablebox.local",
                     "192.168.1.20", "fe80::1"}
    guard = HostGuard(names, 8090)
    for host in ("tablebox.local:8090", "192.168.1.20:8090", "[::1]:8090", "LOCALHOST:8090",
                 "[fe80::0001]:8090"):
        guard.check_host(host)
    for host in ("evil.example:8090", "tablebox.local:8080", "tablebox.local", None, "",
                 "[::1:8090", "192.168.1.20:99999", "192.168.1.21:8090"):
        with pytest.raises(HostRefused) as caught:
            guard.check_host(host)
        assert caught.value.status == 421
    guard.check("POST", "tablebox.local:8090", "http://tablebox.local:8090")
    guard.check("GET", "tablebox.local:8090", None)
    for origin in (None, "http://evil.example:8090", "http://tablebox.local:8080",
                   "ftp://tablebox.local:8090", "null"):
        with pytest.raises(HostRefused) as caught:
            guard.check("POST", "tablebox.local:8090", origin)
        assert caught.value.status == 403
    with pytest.raises(HostRefused):
        guard.check("GET", "tablebox.local:8090", "http://evil.example")
    with pytest.raises(ValueError):
        HostGuard.for_address("evil.example/x")


def test_sim_web_cli_refuses_address_without_web(capsys):
    from firmware_py.cli import main
    assert main(["sim", "--address", "0.0.0.0"]) == 2
    assert "--address and --port go with --web" in capsys.readouterr().err



def test_the_command_serves_the_page_without_textual_and_stops_on_ctrl_c(tmp_path):
    """``sim --web`` as a person runs it, with textual and rich missing: it prints the
    address, serves the table, and Ctrl-C stops it in order (the journal kept)."""
    import os
    import signal
    import subprocess
    import sys
    config = tmp_path / "fast.toml"
    config.write_text('backend = "sim"\n[buttons]\nhold_seconds = 0.5\n')
    code = ("import sys; sys.modules['textual'] = None; sys.modules['rich'] = None\n"
            "from firmware_py.cli import main\n"
            f"sys.exit(main(['sim', '--web', '--port', '0', '--config', {str(config)!r}, "
            f"'--out', {str(tmp_path / 'journal')!r}]))\n")
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(repo),
                                 "XDG_STATE_HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(tmp_path)})
    try:
        line = ""
        deadline = time.monotonic() + 60
        while "http://" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, proc.stderr.read()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        state = _until(lambda: json.loads(_request(url + "state")[1]).get("oled") and
                       json.loads(_request(url + "state")[1]), "the first frame")
        assert state["mode"] == "setup_game"
        assert _request(url + "state", headers={"Host": "evil.example"})[0] == 421
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "journal kept in" in out and "Traceback" not in err


@needs_chromium
def test_the_other_screens_on_a_phone(tmp_path, phone):
    """The setup questions, a move made first and confirmed, and the menu's screens
    (7x7 tile, correct buttons, end the game, ask the box), each looked at on a
    390 px phone and left with the buttons."""
    with _phone_page(phone, tmp_path / "journal", 5, box=True) as page:
        h = page.hands
        for mode, index in (("setup_game", 0), ("setup_board", 1), ("setup_players", 0),
                            ("setup_first", 1), ("setup_layout", 1)):
            h.wait(lambda s, m=mode: s.mode == m, mode)
            page.seen(mode)
            _choose(page, index)               # Patchwork, revised, two, Yellow, free
        h.wait(lambda s: s.mode == "turn", "the first turn")
        assert not page._el(".btn small").is_displayed()           # no key letters on a phone
        assert not page._el("#keys").is_displayed()
        page.move("yellow", 0, 1, "slide")     # moved first: the box asks which move
        status = h.wait(lambda s: s.mode == "confirm" or s.turns > 0, "the move")
        if status.mode == "confirm":
            page.seen("confirm")
            page.button("press", "ok")
        h.wait(lambda s: s.mode == "turn" and s.turns == 1, "green's turn")

        def from_menu(item: str, mode: str) -> None:
            page.button("hold", "ok")
            h.wait(lambda s: s.mode == "menu", "the menu")
            _choose(page, h.service.call(lambda: h.service.view.menu).index(item))
            h.wait(lambda s: s.mode == mode, mode, timeout=30)
            page.seen(mode)
        from_menu("Claim 7x7 tile", "claim")
        page.button("press", "back")
        h.wait(lambda s: s.mode == "turn", "the claim cancelled")
        from_menu("Correct buttons", "correct_who")
        page.button("press", "ok")
        h.wait(lambda s: s.mode == "correct_amount", "the amount")
        page.seen("correct_amount")
        page.button("press", "ok")             # the count as it was
        h.wait(lambda s: s.mode == "turn", "the count kept")
        from_menu("End game now", "end_confirm")
        page.button("press", "ok")             # No (the cursor starts there)
        h.wait(lambda s: s.mode == "turn", "the game going on")
        from_menu("Ask the box", "hint")
        page.button("press", "back")
        h.wait(lambda s: s.mode == "turn", "back from the box's advice")
        errors = [e for e in phone.get_log("browser") if e["level"] == "SEVERE"]
        tokens = dict(page.hands.status().lights.tokens)
    assert errors == []
    assert {"setup_board", "setup_players", "setup_first", "setup_layout", "claim",
            "correct_who", "correct_amount", "end_confirm", "hint"} <= set(page.shots)
    assert tokens["yellow"] == 1


def _box_game(page) -> str:
    """Express against the box (easy), the person green and first: the person's turns
    chosen with NEXT/OK and the token tapped to its space, the box's carried out by
    dragging its yellow token to the space its screen names. Returns the record's path."""
    from firmware_py.companion.table_setup import PLAYERS
    h = page.hands
    h.wait(lambda s: s.mode == "setup_game", "the game question")
    _choose(page, 1)                                         # Express
    h.wait(lambda s: s.mode == "setup_players", "who plays")
    _choose(page, [level for level, _ in PLAYERS].index("easy"))
    _choose(page, 0)                                         # you (green) start
    h.wait(lambda s: s.mode == "setup_layout", "the circle question")
    _choose(page, 0)
    while h.wait(lambda s: s.mode in ("deal", "turn"), "the deal").mode == "deal":
        page.button("press", "ok")
    for _ in range(200):
        status = h.wait(lambda s: s.mode in ("turn", "end", "leather")
                        or (s.mode == "box" and s.screen.kind == "box"), "a turn", timeout=60)
        turns, tokens = status.turns, dict(status.lights.tokens)
        if status.mode == "end":
            return status.saved_to
        if status.mode == "leather":
            page.button("press", "ok")
            h.wait(lambda s: s.mode != "leather", "the leather patch placed")
            continue
        if status.mode == "box":
            page.seen("box")
            goal = next(int(m.group(1)) for m in (re.match(r"^Yellow to (\d+)$", line)
                                                  for line in status.screen.lines) if m)
            if goal == tokens["yellow"]:
                page.button("press", "ok")                   # on its space already: DONE
            else:
                page.move("yellow", tokens["yellow"], goal, "slide")
        else:
            cards = status.screen.patches
            buyable = [i for i, card in enumerate(cards) if card.buyable]
            _choose(page, (buyable[-1] if buyable else len(cards)) + 1)
            lit = h.wait(lambda s: len(s.lights.targets) == 1, "the lit space").lights
            page.move("green", tokens["green"], next(iter(lit.targets)), "tap")
        h.wait(lambda s: s.turns > turns or s.mode == "end", "the move to be taken")
    raise DriveError("no end after 200 turns")


@pytest.mark.slow
@needs_chromium
def test_a_whole_game_against_the_box_on_a_phone(tmp_path, phone):
    with _phone_page(phone, tmp_path / "journal", 2, box=True) as page:
        saved = _box_game(page)
    record = parse_record(Path(saved).read_text())
    assert record.game == "patchwork-express" and record.result is not None
    assert "Box" in record.players and record.meta["box_quilt"]["level"] == "easy"
    _in_history(tmp_path / "journal", saved)
    assert "box" in page.shots


def test_the_page_is_announced_by_names_a_phone_can_open():
    from firmware_py.sim.web import page_names
    names = frozenset({"localhost", "127.0.0.1", "::1", "tablebox", "tablebox.local",
                       "192.168.1.20", "127.0.1.1", "fe80::1"})
    assert page_names("0.0.0.0", names) == ["tablebox.local", "192.168.1.20"]
    assert page_names("192.168.1.20", names) == ["192.168.1.20"]
    assert page_names("::1", names) == ["[::1]"]
    assert page_names("::", frozenset({"localhost", "::1"})) == ["localhost"]
