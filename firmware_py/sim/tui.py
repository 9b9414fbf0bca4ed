"""``patchwork-companion sim``: play at a simulated table in a terminal.

The real companion service runs on the "sim" backend (the same code the Pi
runs: gpiozero mock pins, the neopixel driver on Blinka's OS-agnostic board, a
luma OLED device, the simulated token sensor over a pty). This textual program
shows what a person at the table sees and gives them hands:

- the OLED, drawn from the very 128x64 frames the display gets (braille dots;
  block quarters, twice as tall, from 100x40; its words repeated as text in the
  frame's title and subtitle); below 80x24 only "terminal too small" shows;
- the time board, each space in the colour of the LED under it, with income
  spaces ($), leather patches still on the board (L) and the two physical time
  tokens (G, Y);
- the NEXT/OK/BACK buttons as keys (pressed through the mock pins), holds as
  capitals; the tokens moved with the arrow keys (a slide) or lifted and set
  down;
- a hint line saying what to do now and a status line (sensor link, turns,
  journal folder); in a tall terminal, the turn history; ``?`` shows how to
  play; ``U`` pulls the sensor's USB cable out and plugs it back in.

The journal lives in ``--out`` (default: the state folder, where ``run`` keeps its
games too, so ``history``, ``web`` and ``backup`` find them); quitting and
starting again resumes the game from it.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from ..view.oled import PAGE_SECONDS
from .desk import KEYMAP, Desk
from .table import Table, open_table  # noqa: F401  (open_table: used by the tests)
from .tui_render import (HELP, BoardView, HandView, board_shape, board_text, braille, caption,
                         caption_parts, hint, history_entry, link_text, oled_text, status_line)

REFRESH_S = 1 / 12          #: how often the board and the OLED are redrawn
STATUS_S = 0.5              #: how often the link counters are read
MIN_SIZE = (80, 24)         #: the smallest terminal the simulator draws in
BIG_SIZE = (100, 40)        #: from here the OLED is drawn in block quarters, twice as tall
TOP_ROWS = {False: 18, True: 34}   #: height of the OLED row (braille / block quarters)
HISTORY_MIN_ROWS = 10       #: rows left under the OLED from which the turn history shows


# ------------------------------------------------------------------------- widgets
class OledPanel(Static):
    """The OLED: its 128x64 frame in braille; title and subtitle repeat its words.
    ``lines`` holds the braille rows shown (for tests)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.lines: list[str] = []


class BoardPanel(Widget):
    """The time board: one cell per space in its LED colour, tokens and marks."""

    view: BoardView | None = None

    def render(self):
        """Draw the current :class:`BoardView` into the widget's size."""
        if self.view is None:
            return Text("")
        return board_text(self.view, self.size.width, self.size.height)


KEYS_NARROW = (
    ("n", "NEXT"), ("o\u23ce", "OK"), ("b\u232b", "BACK"), ("O", "hold=menu"), ("B", "hold=undo"),
    ("g", "green G"), ("y", "yellow Y"), ("\u2190\u2192", "slide"), ("l", "lift"),
    ("d", "set down"), ("r", "tidy up"), ("U", "unplug"), ("q", "quit"), ("?", "help"),
    ("$", "income"), ("L", "leather"))
KEYS_WIDE = (
    ("n", "NEXT  (move the OLED cursor)"), ("o / Enter", "OK    (choose, confirm)"),
    ("b / Bksp", "BACK  (go back, cancel)"), ("O", "hold OK: the menu"),
    ("B", "hold BACK: undo the last turn"),
    ("g / y", "take the green / yellow token"), ("\u2190 \u2192 \u2191 \u2193", "slide it"),
    ("l / d", "lift it / set it down (Space)"), ("r", "tidy: tokens where the game says"),
    ("U", "unplug / replug the sensor cable"), ("q", "quit (the game is kept)"),
    ("?", "how to play"),
    ("$", "income space   L  leather patch"), ("G Y", "the time tokens"))
BUTTON_OF = {"NEXT": "next", "OK": "ok", "BACK": "back"}


class KeysPanel(Static):
    """The key legend; a button's name lights up while its pin is held low."""

    shown: tuple | None = None

    def show(self, down: str) -> None:
        """Redraw the legend with button ``down`` ("next"/"ok"/"back" or "") lit."""
        wide = self.size.width >= 40
        if self.shown == (down, wide):
            return
        self.shown = (down, wide)
        rows = KEYS_WIDE if wide else KEYS_NARROW
        text = Text(no_wrap=True, end="")
        for i, (key, what) in enumerate(rows):
            if i:
                text.append("\n")
            text.append(f"{key:<{10 if wide else 3}}", style="bold #87d7ff")
            name = what.split()[0] if what else ""
            lit = BUTTON_OF.get(name) == down and down
            text.append(what, style="reverse bold" if lit else "")
        self.update(text)


class HelpScreen(ModalScreen):
    """How to play at the simulated table; any key closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: auto; max-width: 100%; height: auto; border: round #ffd787;
                          background: #1c1c1c; color: #e4e4e4; }
    """

    def compose(self) -> ComposeResult:
        """The help text in a frame."""
        yield Static(Text(HELP, no_wrap=True))

    def on_key(self, event) -> None:
        """Any key closes the help."""
        event.stop()
        self.dismiss()


# ----------------------------------------------------------------------------- app
class SimApp(App):
    """The simulated table in a terminal (see the module docstring)."""

    TITLE = "patchwork-companion sim"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { layout: vertical; background: #121212; }
    #top { height: 18; }
    #oled { width: 66; height: 18; border: round #5f87af; border-title-color: #ffffff;
            border-subtitle-color: #ffd787; background: #000000; }
    #keys { width: 1fr; height: 18; border: round #585858; border-title-color: #bcbcbc;
            padding: 0; }
    #board { height: 2fr; }
    #history { height: 1fr; color: #bcbcbc; display: none; }
    #hint { height: 1; color: #ffd787; }
    #status { height: 1; color: #9e9e9e; }
    #small { height: 1fr; content-align: center middle; color: #ffd787; display: none; }
    """

    def __init__(self, table: Table):
        super().__init__()
        self.table = table
        self.service = table.companion.service
        self.message = ""
        self._message_until = 0.0
        self._last_active = ""
        self._turns_seen: int | None = None
        self.history: list[str] = []
        self._oled_seen = -1
        self.big = False                # the OLED drawn in block quarters (a big terminal)
        self._caption: tuple[str, str] | None = None
        self._lines: tuple[str, str] | None = None
        self._link = "connecting"
        self._next_status = 0.0
        self.desk = Desk(table.companion, self._error)
        self.fingers = self.desk.fingers
        self.hand = self.desk.hand

    def compose(self) -> ComposeResult:
        """Top: the OLED and the keys; then the board, the hint and the status line."""
        with Horizontal(id="top"):
            yield OledPanel(id="oled")
            yield KeysPanel(id="keys")
        yield BoardPanel(id="board")
        yield Static(id="history")
        yield Static(id="hint")
        yield Static(id="status")
        yield Static(id="small")

    def on_mount(self) -> None:
        """Stand the tokens where the game says and start the redraw timer."""
        self.query_one("#keys").border_title = "keys"
        self._fit(self.size.width, self.size.height)
        self.tidy()
        self._refresh()
        self.set_interval(REFRESH_S, self._refresh)

    def on_resize(self, event) -> None:
        """Lay the table out for the terminal's new size."""
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        """Below 80x24 only "terminal too small" shows; from 100x40 the OLED is
        drawn twice as tall; the turn history shows when rows are left for it."""
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        for part in ("#top", "#board", "#hint", "#status"):
            self.query_one(part).display = not small
        notice = self.query_one("#small", Static)
        notice.display = small
        notice.update(Text(f"terminal too small: {width}x{height}; "
                           f"the simulator needs at least {MIN_SIZE[0]}x{MIN_SIZE[1]}"))
        big = width >= BIG_SIZE[0] and height >= BIG_SIZE[1]
        rows = TOP_ROWS[big]
        for part in ("#top", "#oled", "#keys"):
            self.query_one(part).styles.height = rows
        if big != self.big:
            self.big = big
            self._oled_seen = -1             # redraw the frame at the new size
        self.query_one("#history").display = not small and height - rows - 2 >= HISTORY_MIN_ROWS

    def on_unmount(self) -> None:
        """Let the hands finish what they were doing."""
        self.desk.close()

    # ----- keys --------------------------------------------------------------------
    def on_key(self, event) -> None:
        """Dispatch a key: quit, help, or a gesture of the hands (buttons, holds, token
        moves, tidy, the sensor cable)."""
        action = KEYMAP.get(event.key)
        if action is None:
            return
        event.stop()
        event.prevent_default()
        kind, arg = action
        if kind == "quit":
            self.exit()
        elif kind == "help":
            self.push_screen(HelpScreen())
        else:
            if arg in ("up", "down"):             # a row of the board up or down
                arg = self._per_row() * (-1 if arg == "up" else 1)
            said = self.desk.act(kind, arg)
            if said:
                self.say(*said)

    # ----- helpers -------------------------------------------------------------------
    def tidy(self) -> None:
        """Put both physical tokens where the companion says they stand."""
        self.desk.tidy_board()

    def say(self, message: str, seconds: float = 3.0) -> None:
        """Show ``message`` on the hint line for a while."""
        self.message = message
        self._message_until = time.monotonic() + seconds

    def _error(self, message: str) -> None:
        """A hands worker failed (called from its thread): say so on the hint line."""
        try:
            self.call_from_thread(self.say, f"hands: {message}", 6.0)
        except RuntimeError:        # the app is no longer running
            pass

    def _per_row(self) -> int:
        board = self.query_one(BoardPanel)
        return board_shape(self.hand.last_space + 1, board.size.width, board.size.height)[0]

    # ----- redraw --------------------------------------------------------------------
    def _refresh(self) -> None:
        status = self.service.status
        if status is None or not self.query(OledPanel):
            return                      # not started yet, or closing: the widgets are gone
        self._note_turns(status)
        self._follow_turn(status)
        self._draw_oled(status)
        self._draw_board(status)
        self.query_one(KeysPanel).show(self.fingers.down)
        self._draw_lines(status)

    def _follow_turn(self, status) -> None:
        """The hand follows the turn (see :meth:`Desk.follow`); its news goes to the hint."""
        said = self.desk.follow(status)
        if said:
            self.say(*said)
        self._last_active = status.lights.active

    def _note_turns(self, status) -> None:
        """Add a line to the turn history when the turn count changes."""
        before, self._turns_seen = self._turns_seen, status.turns
        if before is None or before == status.turns:
            return
        if status.mode.startswith(("setup", "deal")):
            self.history.append("     new game")
        else:
            self.history.append(history_entry(status.turns, before, self._last_active,
                                              status.screen))
        del self.history[:-50]
        panel = self.query_one("#history", Static)
        panel.update(Text("\n".join(self.history[-max(1, panel.size.height):]), no_wrap=True))

    def _draw_oled(self, status) -> None:
        panel = self.query_one(OledPanel)
        title, sub = caption(status.screen)
        room = max(10, panel.size.width - 6)
        titles, subs = caption_parts(title, room), caption_parts(sub, room)
        turn = int(time.monotonic() // PAGE_SECONDS)      # a long caption shows in parts
        words = (titles[turn % len(titles)], subs[turn % len(subs)])
        if words != self._caption:
            self._caption = words
            panel.border_title = Text(words[0])
            panel.border_subtitle = Text(words[1])
        tap = self.table.tap
        if tap.oled_count != self._oled_seen:
            self._oled_seen = tap.oled_count
            panel.lines = braille(tap.oled) if tap.oled is not None else []
            panel.update(oled_text(tap.oled, self.big) if tap.oled is not None
                         else Text("no OLED frame (display.driver = none?)"))

    def _draw_board(self, status) -> None:
        lights = status.lights
        board = self.query_one(BoardPanel)
        view = BoardView(lights.last_space, self.table.space_colours(lights, time.monotonic()),
                         lights.income, lights.leather, self.hand.tokens(), self.hand.held,
                         self.hand.cursor, self.hand.hand)
        if view != board.view:
            board.view = view
            board.refresh()

    def _draw_lines(self, status) -> None:
        now = time.monotonic()
        if now >= self._next_status:
            self._next_status = now + STATUS_S
            link = self.table.companion.link
            self._link = link_text(link.stats() if link is not None else None)
        text = self.message if now < self._message_until else hint(
            status.mode, status.screen.kind, status.lights.active,
            HandView(self.hand.hand, self.hand.held, self.hand.cursor),
            min(status.lights.targets, default=None))
        width = self.size.width
        line = status_line(self._link, status.warnings, status.turns, str(self.table.folder), width)
        if (text, line) != self._lines:
            self._lines = (text, line)
            self.query_one("#hint", Static).update(Text(text[:width], no_wrap=True))
            self.query_one("#status", Static).update(Text(line, no_wrap=True))


# ----------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    """The command line of ``patchwork-companion sim``."""
    parser = argparse.ArgumentParser(prog="patchwork-companion sim",
                                     description="Play at a simulated table in the terminal.")
    parser.add_argument("--config", help="TOML config file (the backend is forced to sim)")
    parser.add_argument("--out", help="journal folder (default: the state folder that run, "
                        "history and web use); starting again resumes the game kept there")
    parser.add_argument("--seed", type=int, help="deal the patch circle from this seed "
                        "(repeatable games)")
    return parser


def sim_folder(cfg: dict, out: str | None = None) -> Path:
    """The simulator's journal and store folder: ``out``, else the state folder of
    ``cfg`` (``journal.dir``), the one ``run``, ``history``, ``web`` and ``backup`` use."""
    from ..config import state_dir
    return Path(out).expanduser() if out else state_dir(cfg)


def main(argv: list[str] | None = None) -> int:
    """Run the simulator until q; returns the exit status (2 for a bad config)."""
    from ..config import load_or_report
    args = build_parser().parse_args(argv)
    cfg = load_or_report(args.config)
    if cfg is None:
        return 2
    folder = sim_folder(cfg, args.out)
    folder.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=folder / "sim.log", level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from ..service.assembly import names_path
    from ..service.feed import feed_dir
    table = _quietly(lambda: open_table(cfg, folder, args.seed, feed_dir(cfg), names_path(cfg)),
                     folder / "sim.log")
    try:
        SimApp(table).run()
    finally:
        table.close()
    print(f"games and journal kept in {folder} (history, web and backup read them there); "
          "run again to resume")
    return 0


def _quietly(start, log: Path):
    """Run ``start()`` with file descriptor 2 pointing at ``log``, so that child
    processes (the simulated sensor) never write over the terminal UI."""
    saved = os.dup(2)
    with open(log, "ab") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            return start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)


if __name__ == "__main__":
    sys.exit(main())
