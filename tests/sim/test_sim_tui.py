"""The interactive simulator (`patchwork-companion sim`).

Three layers: the pure drawing helpers; the textual app under textual's own
headless pilot (keys reach the mock pins, the board shows the tokens, the OLED
panel follows the screen); and the real program in a real terminal (tmux,
80x24), played the way a person would, reading only what the pane shows.
"""
from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import needs
from PIL import Image
from textual.widgets import Static

from firmware_py.companion import intents
from firmware_py.companion.journal import Journal
from firmware_py.companion.model import GREEN, YELLOW, PatchCard, PlayerLine, Screen
from table_helpers import TableRig
from firmware_py.config import validate
from firmware_py.rules import (ADVANCE, Buy, ButtonsEarned, IncomePaid, LeatherWon, PatchBought,
                               PlaceLeather, apply, legal_actions)
from firmware_py.sim import tui_hands
from firmware_py.sim.tui import BoardPanel, HelpScreen, OledPanel, SimApp, open_table
from firmware_py.sim.tui_hands import TokenHand
from firmware_py.sim.tui_render import (BoardView, HandView, board_shape, board_text, braille,
                                        caption, caption_parts, hint, quadrants, status_line)

FAST = {"buttons": {"hold_seconds": 0.5}, "sensor": {"stable_ms": 60, "guidance_seconds": 1.0},
        "sim": {"speed": 4.0}}
FAST_TOML = """
backend = "sim"
[buttons]
hold_seconds = 0.5
[sensor]
stable_ms = 60
guidance_seconds = 1.0
[sim]
speed = 4.0
"""


# ------------------------------------------------------------------ pure helpers
def test_braille_maps_each_pixel_to_its_dot():
    image = Image.new("1", (128, 64), 0)
    image.putpixel((0, 0), 1)
    image.putpixel((3, 7), 1)
    image.putpixel((127, 63), 1)
    rows = braille(image)
    assert len(rows) == 16 and all(len(r) == 64 for r in rows)
    assert rows[0][0] == "\u2801"                 # dot 1
    assert rows[1][1] == "\u2880"                 # dot 8: right column, bottom row
    assert rows[15][63] == "\u2880"
    assert set(rows[8]) == {"\u2800"}
    with pytest.raises(ValueError):
        braille(Image.new("1", (64, 32), 0))


def test_board_fits_80_columns_and_marks_tokens_income_and_leather():
    assert board_shape(54, 80, 4) == (14, 5, 1)
    per_row, cell_w, cell_h = board_shape(54, 120, 20)
    assert per_row * cell_w <= 120 and cell_h >= 2
    colours = tuple((0, 0, 0) for _ in range(54))
    view = BoardView(53, colours, income=frozenset({5}), leather=frozenset({20}),
                     tokens=((GREEN, 3), (YELLOW, 0)))
    text = board_text(view, 80, 4).plain
    lines = text.split("\n")
    assert len(lines) == 4 and max(len(line) for line in lines) <= 80
    assert " 3 G" in lines[0] and " 0  Y" in lines[0]
    assert " 5$" in lines[0] and "20L" in lines[1]
    held = BoardView(53, colours, tokens=((YELLOW, 0),), held=GREEN, cursor=7, hand=GREEN)
    assert " 7 g" in board_text(held, 80, 4).plain


def test_caption_repeats_the_oled_words():
    players = (PlayerLine("Green", GREEN, 4, 7, 1, 70, False, -133, True),
               PlayerLine("Yellow", YELLOW, 6, 3, 0, 81, False, -159))
    turn = Screen("turn", "Green's turn", players=players,
                  patches=(PatchCard(1, ("##",), 2, 3, 1),), notice="take 4 buttons")
    assert caption(turn) == ("Green to move @4", "take 4 buttons")
    quiet = Screen("turn", players=players, patches=(PatchCard(1, ("##",), 2, 3, 1),))
    assert caption(quiet)[1] == "Green 7b  Yellow 3b  offer 2b/3t+1"
    check = Screen("mismatch", "CHECK THE BOARD", lines=("green token back on 4",), warning="x")
    assert caption(check) == ("CHECK THE BOARD [x]", "green token back on 4")
    end = Screen("end", "Green wins", lines=("Game saved.",), players=players)
    assert caption(end) == ("Green wins",
                            "tally: Green 7-2x70=-133  Yellow 3-2x81=-159. Game saved.")


def test_quadrants_draw_each_pixel_as_a_quarter_block():
    image = Image.new("1", (128, 64), 0)
    image.putpixel((0, 0), 1)                     # top-left quarter of the first cell
    image.putpixel((3, 1), 1)                     # bottom-right quarter of the second
    for x in (126, 127):
        for y in (62, 63):
            image.putpixel((x, y), 1)             # a full block at the end
    rows = quadrants(image)
    assert len(rows) == 32 and all(len(r) == 64 for r in rows)
    assert rows[0][:3] == "\u2598\u2597 " and rows[31][63] == "\u2588"
    assert set(rows[10]) == {" "}
    with pytest.raises(ValueError):
        quadrants(Image.new("1", (64, 32), 0))


def test_long_captions_show_in_whole_phrases():
    text = "Yellow: take 2 buttons back, return the patch, leather back on 44; token back to 41"
    parts = caption_parts(text, 60)
    assert parts == ["Yellow: take 2 buttons back, return the patch,",
                     "Yellow: leather back on 44; token back to 41"]   # whose, on each part
    assert caption_parts("short", 60) == ["short"]
    box = "Yellow: pay 6, take leather, +2 income. BACK: the box's move again"
    assert caption_parts(box, 40) == ["Yellow: pay 6, take leather, +2 income.",
                                      "BACK: the box's move again"]    # not Yellow's to do
    confirm = "Token on 14: > cost 3, income 1 (1 of 2) (OK:YES NEXT:OTHER BACK:NO)"
    assert caption_parts(confirm, 60) == ["Token on 14: > cost 3, income 1 (1 of 2)",
                                          "(OK:YES NEXT:OTHER BACK:NO)"]
    assert all(len(p) <= 20 for p in caption_parts(text, 20))


def test_hint_and_status_lines_fit_and_guide():
    assert "d (or Space) sets it down" in hint("turn", "turn", GREEN, HandView(GREEN, GREEN, 9))
    assert "press g" in hint("turn", "turn", GREEN, HandView(YELLOW))
    assert "to 14 (lit white)" in hint("turn", "turn", GREEN, HandView(GREEN), 14)
    assert "blinking white" in hint("turn", "mismatch", GREEN, HandView(GREEN))
    assert hint("setup_game", "choose", "", HandView(GREEN)).startswith("Setup")
    line = status_line("online 9 frames 0 bad 0 gaps", (), 3, "/very/long/" + "x" * 90, 80)
    assert len(line) == 80 and line.startswith("sensor online") and "3 turns" in line


class _FakeSensor:
    def __init__(self):
        self.sent = []

    def command(self, op, **fields):
        self.sent.append((op, fields))
        return {"ok": True}


def test_arrow_steps_become_one_slide_once_the_keys_pause():
    sensor, now = _FakeSensor(), [0.0]
    hand = TokenHand(sensor, clock=lambda: now[0])
    hand.reset(0, 0)
    for _ in range(3):
        hand.step(1)
        now[0] += 0.1
        hand.tick()
    assert hand.pos[GREEN] == 3 and hand.busy()
    now[0] += tui_hands.SLIDE_IDLE_S
    hand.tick()
    hand.pick(YELLOW)
    assert hand.lift() and hand.pos[YELLOW] is None
    hand.step(-1)                                  # aims, clamped at 0
    hand.aim(12)
    assert hand.set_down() and hand.pos[YELLOW] == 12
    hand.close()
    assert [op for op, _ in sensor.sent] == ["reset", "move", "lift", "place"]
    assert sensor.sent[1][1] == {"token": 0, "to": 3, "style": "slide"}
    assert sensor.sent[3][1] == {"token": 1, "space": 12}


# ------------------------------------------------------------- the headless pilot
@pytest.fixture
def table(tmp_path):
    table = open_table(validate(FAST), tmp_path / "journal", seed=3)
    yield table
    table.close()


async def _until(pilot, predicate, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_keys_press_the_mock_buttons_and_the_oled_follows(table):
    service = table.companion.service

    async def run():
        app = SimApp(table)
        async with app.run_test(size=(80, 24)) as pilot:
            oled = app.query_one(OledPanel)
            await _until(pilot, lambda: oled.lines, "the first OLED frame")
            first = list(oled.lines)
            await pilot.press("o")                    # OK: Patchwork
            await _until(pilot, lambda: service.status.mode == "setup_board", "the board question")
            await _until(pilot, lambda: oled.lines != first, "the OLED to change")
            await pilot.press("n")                    # NEXT: revised board
            await _until(pilot, lambda: service.status.screen.selected == 1, "the cursor to move")
            await _until(pilot, lambda: "revised" in str(oled.border_subtitle), "the caption")
            await pilot.press("backspace")            # BACK: the game question again
            await _until(pilot, lambda: service.status.mode == "setup_game", "BACK")
            await _until(pilot, lambda: oled.border_title == "Which game?", "the title")
            await pilot.press("question_mark")        # the help, closed by any key
            await _until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            await pilot.press("o")
            await _until(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help to close")
            await pilot.pause(0.4)
            assert service.status.mode == "setup_game"    # the key only closed the help

    asyncio.run(run())


def test_the_layout_follows_the_terminal_size(table):
    """80x24: braille OLED, every legend row whole; 120x40: the OLED in block
    quarters, twice as tall; below 80x24: only "terminal too small"."""
    from firmware_py.sim.tui import KEYS_NARROW, KeysPanel

    async def run():
        app = SimApp(table)
        async with app.run_test(size=(80, 24)) as pilot:
            oled = app.query_one(OledPanel)
            await _until(pilot, lambda: oled.lines, "the first OLED frame")
            assert not app.big and oled.size.height == 16
            keys = app.query_one(KeysPanel)
            assert keys.size.height >= len(KEYS_NARROW)
            assert all(3 + len(what) <= keys.size.width for _, what in KEYS_NARROW)
            await pilot.resize_terminal(120, 40)
            await _until(pilot, lambda: app.big and oled.size.height == 32, "the big OLED")
            await _until(pilot, lambda: "\u2588" in str(oled.render()), "block quarters")
            assert app.query_one(BoardPanel).size.height >= 3
            await pilot.resize_terminal(70, 20)
            small = app.query_one("#small", Static)
            await _until(pilot, lambda: small.display, "the small-terminal notice")
            assert "terminal too small" in str(small.render())
            assert not app.query_one("#top").display and not app.query_one(BoardPanel).display

    asyncio.run(run())


def test_every_table_key_is_in_the_legend_and_whole_at_80x24(table):
    """Each thing a key does at the table (pick up, lift, set down, tidy, unplug the sensor,
    quit, help) is in both legends under one of its keys; at 80x24 every narrow legend row
    shows whole (nothing cut, nothing scrolled away)."""
    from firmware_py.sim.tui import KEYMAP, KEYS_NARROW, KEYS_WIDE, KeysPanel

    for rows in (KEYS_NARROW, KEYS_WIDE):
        shown = "".join(key for key, _ in rows)
        for kind in ("pick", "lift", "down", "tidy", "cable", "quit", "help"):
            keys = [k if k != "question_mark" else "?" for k, (what, _) in KEYMAP.items()
                    if what == kind]
            assert any(len(k) == 1 and k in shown for k in keys), (kind, keys, rows)

    async def run():
        app = SimApp(table)
        async with app.run_test(size=(80, 24)) as pilot:
            keys = app.query_one(KeysPanel)
            await _until(pilot, lambda: keys.shown is not None, "the key legend")
            lines = str(keys.render()).split("\n")
            assert len(lines) == len(KEYS_NARROW) <= keys.size.height
            assert all(len(line) <= keys.size.width for line in lines), (keys.size, lines)
            assert "U  unplug" in lines

    asyncio.run(run())


def test_board_shows_tokens_moved_with_keys_and_a_hold_undoes(table):
    service = table.companion.service

    async def run():
        app = SimApp(table)
        async with app.run_test(size=(80, 24)) as pilot:
            for key, mode in (("o", "setup_board"), ("o", "setup_players"), ("o", "setup_first"),
                              ("o", "setup_layout")):
                await pilot.press(key)
                await _until(pilot, lambda m=mode: service.status.mode == m, mode)
            await pilot.press("n", "o")               # free layout: straight to the first turn
            await _until(pilot, lambda: service.status.mode == "turn", "the first turn")
            board = app.query_one(BoardPanel)
            assert dict(board.view.tokens) == {GREEN: 0, YELLOW: 0}
            await pilot.press("g", "right")           # green (to move) steps onto 1: advance
            await _until(pilot, lambda: dict(board.view.tokens)[GREEN] == 1, "the token on 1")
            assert " 1 G" in board.render().plain
            await _until(pilot, lambda: service.status.turns == 1 or service.status.mode == "confirm",
                         "the move to be seen")
            if service.status.mode == "confirm":      # a patch with time 1 also ends there
                await pilot.press("o")
            await _until(pilot, lambda: service.status.turns == 1, "the move to be accepted")
            assert service.status.state.players[0].position == 1
            await pilot.press("B")                    # hold BACK: undo
            await _until(pilot, lambda: service.status.turns == 0, "the undo")
            await pilot.press("left")                 # and the token goes back
            await _until(pilot, lambda: service.status.screen.kind == "turn"
                         and not service.status.lights.expected, "the board to match again")

    asyncio.run(run())


# ------------------------------------------------------------ a real terminal (tmux)
TMUX = shutil.which("tmux")


class Pane:
    """The simulator running in a private tmux server, driven by keys, read as text."""

    def __init__(self, socket: str, cmd: list[str], width: int = 80, height: int = 24):
        self.socket = socket
        self.cmd = cmd
        self.size = (width, height)

    def tmux(self, *args) -> str:
        """Run a tmux command on the private server; returns its stdout."""
        out = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                             timeout=10)
        return out.stdout

    def start(self) -> None:
        """Start the program in a fresh detached session of the given size."""
        width, height = self.size
        self.tmux("new-session", "-d", "-s", "sim", "-x", str(width), "-y", str(height),
                  shlex.join(self.cmd))

    def alive(self) -> bool:
        """True while the session (the program) runs."""
        return subprocess.run([TMUX, "-L", self.socket, "has-session", "-t", "sim"],
                              capture_output=True).returncode == 0

    def text(self) -> str:
        """The pane as a person reads it."""
        return self.tmux("capture-pane", "-p", "-t", "sim")

    def keys(self, *keys: str) -> None:
        """Type ``keys`` (tmux key names)."""
        self.tmux("send-keys", "-t", "sim", *keys)

    def wait(self, pattern: str, timeout: float = 15.0) -> re.Match:
        """Poll the pane until ``pattern`` (a regex) shows; fail with the pane."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.text())
            if match:
                return match
            time.sleep(0.05)
        raise AssertionError(f"never saw {pattern!r}; the pane shows:\n{self.text()}")

    def close(self) -> None:
        """Quit the program (q), then stop the private tmux server."""
        if self.alive():
            self.keys("q")
            deadline = time.monotonic() + 5
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
        self.tmux("kill-server")


def _sim_command(out: Path, config: Path) -> list[str]:
    from firmware_py import cli
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    wired = "sim" in sub.choices
    module = ["-m", "firmware_py.cli", "sim"] if wired else ["-m", "firmware_py.sim.tui"]
    return [sys.executable, *module, "--config", str(config), "--out", str(out), "--seed", "5"]


def _table(folder: Path) -> TableRig:
    """The game as the journal holds it (read from the side, never written)."""
    ui = TableRig(lambda _body: None, None, lambda _session: "")
    ui.resume(Journal(folder).load().entries)
    return ui


def _policy(state):
    """Buy the affordable patch that moves furthest; else advance."""
    legal = set(legal_actions(state))
    buys = [a for a in intents.turn_options(state) if isinstance(a, Buy) and a in legal]
    if buys:
        return max(buys, key=lambda a: state.spec.patches[a.patch].time)
    return ADVANCE


def _expected_words(state, action) -> list[str]:
    """What the OLED must say after ``action``: buttons taken, income, leather patch."""
    after, events = apply(state, action)
    while after.owed and after.spec.bonus_square:
        after, more = apply(after, PlaceLeather())
        events += more
    words, income = [], 0
    for event in events if not after.over else ():    # the tally replaces the notice
        if isinstance(event, PatchBought):
            words.append(f"pay {event.cost}" if event.cost else "take the patch")
        elif isinstance(event, ButtonsEarned) and event.buttons:
            words.append(f"take {event.buttons} button" + ("s" if event.buttons > 1 else ""))
        elif isinstance(event, IncomePaid) and event.buttons:
            income += event.buttons
        elif isinstance(event, LeatherWon):
            words.append("take leather")
    if income:
        words.append(f"+{income} income")
    return words


def _title(colour: str, space: int) -> str:
    return rf"{colour.capitalize()} to move @{space}\b"


def _play(pane: Pane, folder: Path, action=None, check_words: bool = True) -> list[str]:
    """Make one turn at the table the way a person would; returns the words seen after it."""
    ui = _table(folder)
    state, colours = ui.state, ui.session.setup.colours
    mover, turns = state.to_move, len(ui.session.groups)
    me, other = state.players[mover].position, state.players[1 - mover].position
    pane.wait(_title(colours[mover], me))
    action = action or _policy(state)
    target = intents.target_of(state, action)
    pane.keys(*["n"] * (intents.turn_options(state).index(action) + 1), "o")
    pane.wait(rf"move to space {target}\b")           # the OLED's instruction
    pane.keys(colours[mover][0], *["Right"] * (target - me))
    words = _expected_words(state, action)
    deadline = time.monotonic() + 15
    while len(_table(folder).session.groups) == turns:
        assert time.monotonic() < deadline, pane.text()
        if target == other and re.search(r"Which move|Token on", pane.text()):
            pane.keys("o")                             # onto the opponent: confirm with OK
            time.sleep(0.3)
        time.sleep(0.05)
    if words and check_words:                          # addressed to the mover
        pane.wait(re.escape(f"{colours[mover].capitalize()}: {words[0]}"))
    for word in words if check_words else ():
        pane.wait(re.escape(word))
    return words


def _mistake(pane: Pane, folder: Path) -> None:
    """Move the wrong token on purpose; the OLED guides; put it back."""
    ui = _table(folder)
    state, colours = ui.state, ui.session.setup.colours
    mover = state.to_move
    wrong = colours[1 - mover]
    assert state.players[0].position != state.players[1].position
    pane.wait(_title(colours[mover], state.players[mover].position))
    pane.keys(wrong[0], "Right")
    pane.wait("CHECK THE BOARD")
    pane.wait("blinking white")                        # the hint line says what to do
    pane.keys("Left")
    pane.wait(_title(colours[mover], state.players[mover].position))
    pane.keys(colours[mover][0])


def _undo(pane: Pane, folder: Path) -> None:
    """Hold BACK to undo the last turn, then put the token back where the game says."""
    before = _table(folder)
    turns = len(before.session.groups)
    state = before.state
    pane.keys("B")
    pane.wait("token back to|CHECK THE BOARD")       # what to give back, or the board
    after = _table(folder)
    assert len(after.session.groups) == turns - 1
    undone = after.state
    mover = undone.to_move
    colour = after.session.setup.colours[mover]
    steps = state.players[mover].position - undone.players[mover].position
    pane.keys(colour[0], *["Left"] * steps)
    title = _title(colour, undone.players[mover].position)
    settled, deadline = None, time.monotonic() + 15
    while True:                                        # the board agrees, and stays agreed
        text = pane.text()                             # past the guidance delay (1 s)
        agreed = re.search(title, text) and "CHECK THE BOARD" not in text
        settled = (settled or time.monotonic()) if agreed else None
        if settled and time.monotonic() - settled > 1.5:
            break
        assert time.monotonic() < deadline, f"the board never settled:\n{text}"
        time.sleep(0.05)


def _end_from_menu(pane: Pane) -> str:
    pane.keys("O")                                     # hold OK: the menu
    pane.wait("Menu")
    for _ in range(8):
        if "> End game" in pane.text():
            break
        pane.keys("n")
        time.sleep(0.25)
    pane.keys("o")
    pane.wait("End the game now")
    pane.keys("n")
    pane.wait("> Yes")
    pane.keys("o")
    return pane.wait(r"tally: .*").group(0)


@needs("tmux")
def test_a_short_game_in_a_real_80x24_terminal(tmp_path):
    config = tmp_path / "fast.toml"
    config.write_text(FAST_TOML)
    folder = tmp_path / "journal"
    pane = Pane(f"pw-sim-{time.monotonic_ns()}", _sim_command(folder, config))
    pane.start()
    try:
        pane.wait("Which game")
        assert "n  NEXT" in pane.text() and "hold=undo" in pane.text()   # the legend
        pane.keys("o")                                  # Patchwork
        pane.wait("Time board")
        pane.keys("o")                                  # 2014
        pane.wait("Who plays")
        pane.keys("o")                                  # two players
        pane.wait("Who starts")
        pane.keys("o")                                  # Green
        pane.wait("Patch circle")
        pane.keys("o")                                  # deal it
        pane.wait(r"After spool 1/33")
        pane.keys(*["n"] * 32)
        pane.wait(r"33/33")
        pane.keys("o")
        pane.wait(r"Green to move @0")
        assert re.search(r" 0 GY", pane.text())         # both tokens on the start space
        seen: list[str] = []
        seen += _play(pane, folder)                     # a buy
        _mistake(pane, folder)
        seen += _play(pane, folder)
        _undo(pane, folder)
        pane.close()                                    # quit mid-game ...
        pane.start()                                    # ... and the journal resumes it
        ui = _table(folder)
        mover = ui.state.to_move
        pane.wait(_title(ui.session.setup.colours[mover], ui.state.players[mover].position))
        kinds = set()
        while "take leather" not in seen:
            state = _table(folder).state
            action = _policy(state)
            kinds.add(type(action).__name__)
            seen += _play(pane, folder, action)
        assert {"Buy", "Advance"} <= kinds
        assert any(w.startswith("take ") and w.endswith(" buttons") for w in seen)
        assert any(w.endswith(" income") for w in seen)
        tally = _end_from_menu(pane)
        assert re.search(r"tally: Green -?\d+-2x\d+=-?\d+  Yellow -?\d+-2x\d+=-?\d+", tally)
        assert re.search(r"ended early|wins", pane.text())
        assert "Game over: o starts a new game" in pane.text()
    finally:
        pane.close()
