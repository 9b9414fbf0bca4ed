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
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from ..companion.model import GREEN, YELLOW
from ..view.leds import LedLayout, led_frame
from .tui_hands import Fingers, TokenHand
from ..view.oled import PAGE_SECONDS
from .tui_render import (HELP, BoardView, HandView, board_shape, board_text, braille, caption,
                         caption_parts, hint, history_entry, link_text, oled_text, status_line)

REFRESH_S = 1 / 12          #: how often the board and the OLED are redrawn
STATUS_S = 0.5              #: how often the link counters are read
MIN_SIZE = (80, 24)         #: the smallest terminal the simulator draws in
BIG_SIZE = (100, 40)        #: from here the OLED is drawn in block quarters, twice as tall
TOP_ROWS = {False: 18, True: 34}   #: height of the OLED row (braille / block quarters)
HISTORY_MIN_ROWS = 10       #: rows left under the OLED from which the turn history shows
FOLLOW_GRACE_S = 0.5        #: a token taken by key this recently is not swapped for the mover's


@dataclass
class FrameTap:
    """The latest frames the companion sent to the OLED and the LED strip
    (set by the service's loop thread through the parts' ``on_frame`` hooks)."""

    oled: object = None
    leds: list | None = None
    oled_count: int = 0

    def on_oled(self, image) -> None:
        """The OLED part's hook: keep a copy of the frame shown."""
        self.oled = image.copy()
        self.oled_count += 1

    def on_leds(self, frame) -> None:
        """The LED strip part's hook: keep the frame sent."""
        self.leds = list(frame)


@dataclass
class Table:
    """A running simulated table: the ``companion``, its frame ``tap`` and journal ``folder``."""

    companion: object
    tap: FrameTap
    folder: Path
    layouts: dict = field(default_factory=dict)

    def layout(self, last_space: int) -> LedLayout:
        """The LED layout of the board with ``last_space`` (from the config)."""
        if last_space not in self.layouts:
            leds = self.companion.service.cfg["leds"]
            spec = leds["map"] if last_space == 53 else leds["map_express"]
            self.layouts[last_space] = LedLayout.parse(spec, leds["count"], last_space)
        return self.layouts[last_space]

    def space_colours(self, lights, now: float) -> tuple:
        """The LED colour under each space: the strip's last frame, or (no strip) the renderer's."""
        layout = self.layout(lights.last_space)
        frame = self.tap.leds
        if frame is None or len(frame) != layout.count:
            frame = led_frame(lights, now, layout)
        return tuple(frame[led] for led in layout.leds)

    def close(self) -> None:
        """Stop the companion (loop, sensor link, parts)."""
        self.companion.close()


def open_table(cfg: dict, folder: str | Path, seed: int | None = None,
               feed: str | Path | None = None, names: str | Path | None = None) -> Table:
    """Start the companion on ``cfg`` (backend forced to "sim") with its journal in
    ``folder``; ``seed`` makes the dealt circle repeatable; ``feed``: publish the live
    feed there (for ``patchwork-companion web``), or None; ``names``: the file of player
    names offered at setup, or None."""
    from ..app import start_companion
    cfg = {**cfg, "": {**cfg[""], "backend": "sim"}}
    tap = FrameTap()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    companion = start_companion(cfg, folder=folder, deal=_seeded_deal(seed),
                                on_oled_frame=tap.on_oled, on_led_frame=tap.on_leds, feed=feed,
                                names=names)
    return Table(companion, tap, folder)


def _seeded_deal(seed: int | None):
    if seed is None:
        return None
    from ..rules import deal, load_spec
    return lambda game: deal(load_spec(game), seed)


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
        self._last_mode = ""
        self._turns_seen: int | None = None
        self.history: list[str] = []
        self._oled_seen = -1
        self.big = False                # the OLED drawn in block quarters (a big terminal)
        self._caption: tuple[str, str] | None = None
        self._lines: tuple[str, str] | None = None
        self._link = "connecting"
        self._next_status = 0.0
        cfg = self.service.cfg
        parts = table.companion.parts
        self.fingers = Fingers(parts.buttons.pins, parts.pin_factory,
                               cfg["buttons"]["hold_seconds"], self._error)
        self.hand = TokenHand(parts.sim_sensor, on_error=self._error)

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
        self.hand.close()
        self.fingers.close()

    # ----- keys --------------------------------------------------------------------
    def on_key(self, event) -> None:
        """Dispatch a key: buttons, holds, token moves, tidy, quit."""
        action = KEYMAP.get(event.key)
        if action is None:
            return
        event.stop()
        event.prevent_default()
        kind, arg = action
        getattr(self, f"key_{kind}")(arg)

    def key_press(self, button: str) -> None:
        """A short press of ``button`` on its mock pin."""
        self.hand.let_go()
        if not self.fingers.press(button):
            self.say("too many key presses queued")

    def key_hold(self, button: str) -> None:
        """A hold of ``button`` (longer than the configured hold time)."""
        self.hand.let_go()
        self.fingers.hold(button)

    def key_pick(self, colour: str) -> None:
        """Take the ``colour`` token in hand."""
        if not self.hand.pick(colour):
            self.say(f"set the {self.hand.held} token down first (d)")

    def key_step(self, delta) -> None:
        """Slide the token in hand (or aim the one in the air)."""
        if delta in ("up", "down"):
            per_row = self._per_row()
            delta = -per_row if delta == "up" else per_row
        self.hand.step(delta)

    def key_jump(self, where: str) -> None:
        """Home/End: aim the token in the air at the first or last space."""
        if not self.hand.held:
            self.say("lift the token first (l)")
            return
        self.hand.aim(0 if where == "home" else self.hand.last_space)

    def key_lift(self, _arg) -> None:
        """Lift the token in hand."""
        if not self.hand.lift():
            self.say("already in the air: d sets it down")

    def key_down(self, _arg) -> None:
        """Set the token in the air down on the cursor."""
        if not self.hand.set_down():
            self.say("nothing in the air: l lifts the token in hand")

    def key_toggle(self, _arg) -> None:
        """Space: lift the token in hand, or set the one in the air down."""
        if self.hand.held:
            self.hand.set_down()
        else:
            self.hand.lift()

    def key_tidy(self, _arg) -> None:
        """Stand both tokens where the game says (or on 0 before a game)."""
        self.tidy()
        self.say("tokens put where the game says")

    def key_cable(self, _arg) -> None:
        """Unplug or replug the sensor's USB cable (to see the companion cope)."""
        self.hand.cable(not self.hand.plugged)
        self.say("sensor cable plugged back in" if self.hand.plugged
                 else "sensor cable pulled out: U plugs it back in", 4.0)

    def key_help(self, _arg) -> None:
        """Show how to play."""
        self.push_screen(HelpScreen())

    def key_quit(self, _arg) -> None:
        """Quit (the journal keeps the game)."""
        self.exit()

    # ----- helpers -------------------------------------------------------------------
    def tidy(self) -> None:
        """Put both physical tokens where the companion says they stand."""
        status = self.service.status
        where = dict(status.lights.tokens) if status is not None else {}
        self.hand.reset(where.get(GREEN, 0), where.get(YELLOW, 0))

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
        self.hand.last_space = status.lights.last_space
        self.hand.tick()
        self._note_turns(status)
        self._follow_turn(status)
        self._draw_oled(status)
        self._draw_board(status)
        self.query_one(KeysPanel).show(self.fingers.down)
        self._draw_lines(status)

    def _follow_turn(self, status) -> None:
        """When the turn passes, the hand goes to the token of the player to move;
        when a finished game gives way to a new one, the tokens go back to the start."""
        if self._last_mode == "end" and status.mode.startswith("setup"):
            self.hand.reset(0, 0)
            self.say("new game: both tokens are back on the start space")
        self._last_mode = status.mode
        active = status.lights.active
        fresh_pick = time.monotonic() - self.hand.picked_at < FOLLOW_GRACE_S
        if active and active != self._last_active and not self.hand.held and not fresh_pick:
            self.hand.pick(active, by_key=False)
        self._last_active = active

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


KEYMAP = {
    "n": ("press", "next"), "o": ("press", "ok"), "enter": ("press", "ok"),
    "b": ("press", "back"), "backspace": ("press", "back"),
    "N": ("hold", "next"), "shift+n": ("hold", "next"), "O": ("hold", "ok"),
    "shift+o": ("hold", "ok"), "B": ("hold", "back"), "shift+b": ("hold", "back"),
    "g": ("pick", GREEN), "y": ("pick", YELLOW),
    "left": ("step", -1), "right": ("step", 1), "up": ("step", "up"), "down": ("step", "down"),
    "home": ("jump", "home"), "end": ("jump", "end"),
    "l": ("lift", None), "d": ("down", None), "space": ("toggle", None),
    "r": ("tidy", None), "q": ("quit", None), "ctrl+c": ("quit", None),
    "question_mark": ("help", None), "h": ("help", None), "f1": ("help", None),
    "U": ("cable", None), "shift+u": ("cable", None),
}


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
    from ..app import names_path
    from ..feed import feed_dir
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
