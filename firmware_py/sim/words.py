"""The simulator's words and colours, shared by the terminal and the browser simulator.

Pure and free of any UI library (strings and numbers in, strings out):

- :func:`caption` turns the OLED's :class:`~firmware_py.companion.model.Screen`
  into two short lines of plain text (the box's title and subtitle), so that the
  words on the OLED can also be read (and searched) as text; :func:`caption_parts`
  splits a long one into whole phrases;
- :func:`hint` says in one line what to do now (the terminal's keys);
- :func:`status_line` and :func:`link_text` describe the sensor link;
- :func:`display_rgb` lifts dim LED colours so that a screen shows them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..companion.model import Screen

def display_rgb(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """An LED colour as it looks on a board: dim LEDs (the income blue, the
    leather orange, a pulse at 25%) are lifted so that a screen shows them."""
    return tuple(round(255 * math.sqrt(c / 255)) for c in rgb)  # type: ignore[return-value]



# ------------------------------------------------------------------- the caption
def caption(screen: Screen | None) -> tuple[str, str]:
    """(title, subtitle): the OLED's words as plain text, e.g. ("Green to move
    @12", "pay 3 buttons, move to space 14") or ("CHECK THE BOARD", "green
    token back on 12")."""
    if screen is None:
        return "OLED", ""
    title, sub = _CAPTIONS.get(screen.kind, _cap_prompt)(screen)
    if screen.warning:
        title = f"{title} [{screen.warning}]"
    return title, sub


def caption_parts(text: str, width: int) -> list[str]:
    """``text`` in parts of at most ``width`` characters, shown in turn when the
    whole does not fit a frame's border line ([text] when it fits). Parts end
    after ";", ".", ",", "?" or before "(" where they can (a phrase longer
    than ``width`` is split at spaces), and a part that goes on with "Green:
    ..." starts with "Green:" again, so that every part says whose it is (unless
    it names its own subject: "BACK: the box's move again" stays as it is)."""
    if len(text) <= width:
        return [text]
    lead = re.match(r"(Green|Yellow): ", text)
    head = lead.group(0) if lead else ""
    parts: list[str] = []
    for phrase in re.split(r"(?<=[;.,?]) +| +(?=\()", text):
        if parts and len(parts[-1]) + 1 + len(phrase) <= width:
            parts[-1] += " " + phrase
        elif len(head + phrase) <= width:
            fresh = parts and head and not re.match(r"\S+: ", phrase)   # "BACK: ..." is not Green's
            parts.append(head + phrase if fresh else phrase)
        else:
            for word in phrase.split():
                if parts and len(parts[-1]) + 1 + len(word) <= width:
                    parts[-1] += " " + word
                else:
                    parts.append(word)
    return parts


def _cap_choose(s: Screen) -> tuple[str, str]:
    chosen = s.options[s.selected] if 0 <= s.selected < len(s.options) else ""
    return s.title, f"> {chosen}   ({s.footer})" if s.footer else f"> {chosen}"


def _cap_deal(s: Screen) -> tuple[str, str]:
    card = s.patches[0] if s.patches else None
    if card is None:
        return s.title, ""
    return (f"{s.title} {card.index}/{card.total}",
            f"cost {card.cost}, time {card.time}, income {card.income}   ({s.footer})")


def _cap_turn(s: Screen) -> tuple[str, str]:
    active = next((p for p in s.players if p.active), None)
    title = f"{active.name} to move @{active.position}" if active else s.title
    if s.notice:
        return title, s.notice
    chosen = next((c for c in s.patches if c.selected), None)
    if chosen is not None:
        which = f"{chosen.index} of {chosen.total}" if chosen.total else "chosen"
        grey = "" if chosen.buyable else " (can't buy)"
        return title, (f"{which}: cost {chosen.cost}, time {chosen.time}, "
                       f"income {chosen.income}{grey}")
    if not s.patches and s.lines:
        return title, " ".join(s.lines)
    players = "  ".join(f"{p.name} {p.buttons}b" for p in s.players)
    offer = " ".join(_price(c) for c in s.patches)
    return title, f"{players}  offer {offer}" if offer else players


def _price(card) -> str:
    """"2b/3t" (cost in buttons, time), "+1" for income; "(x)" when not buyable."""
    text = f"{card.cost}b/{card.time}t" + (f"+{card.income}" if card.income else "")
    return text if card.buyable else f"({text})"


def _cap_prompt(s: Screen) -> tuple[str, str]:
    parts = [" ".join(s.lines)] if s.lines else []
    if s.options:
        count = f" ({s.selected + 1} of {len(s.options)})" if len(s.options) > 1 else ""
        parts.append(f"> {s.options[s.selected]}{count}")
    if s.footer:
        parts.append(f"({s.footer})")
    return s.title, "  ".join(parts)


def _cap_mismatch(s: Screen) -> tuple[str, str]:
    return "CHECK THE BOARD", " ".join(s.lines)


def _cap_end(s: Screen) -> tuple[str, str]:
    rows = []
    for p in s.players:
        bonus = p.score - p.buttons + 2 * p.empty
        tile = f"+{bonus}" if bonus else ""
        rows.append(f"{p.name} {p.buttons}{tile}-2x{p.empty}={p.score}")
    said = "".join(f". {line.rstrip('.')}" for line in s.lines) + ("." if s.lines else "")
    return s.title, "tally: " + "  ".join(rows) + said


def _cap_box(s: Screen) -> tuple[str, str]:
    """The box's turn: what it takes and every step to carry out, e.g. ("Box: 2nd patch",
    "pay 3 buttons, Yellow to 14, +1 income; its quilt: see the OLED")."""
    said = s.notice or ", ".join(s.lines)
    if s.quilt is not None:
        said += "; its quilt: see the OLED"
    return s.title, said


_CAPTIONS = {"choose": _cap_choose, "deal": _cap_deal, "turn": _cap_turn, "prompt": _cap_prompt,
             "mismatch": _cap_mismatch, "end": _cap_end, "box": _cap_box}


# ------------------------------------------------------------ hint and status lines
@dataclass(frozen=True)
class HandView:
    """The hand as the hint line needs it: ``hand`` (the token the arrows move),
    ``held`` (the token in the air, or ""), ``cursor`` (where it hovers)."""

    hand: str
    held: str = ""
    cursor: int = 0


_SETUP_HINT = "Setup: n moves the OLED cursor, o (Enter) chooses, b goes back.  ? = help"
_MODE_HINTS = {
    "deal": "Lay out clockwise as shown: n next patch, b previous; on the last, o starts.",
    "confirm": "Which move did you make? o = yes, n = the other choice, b = no (move it back).",
    "leather": "Leather patch: o places it on your quilt, n sets it aside.",
    "menu": "Menu: n next entry, o does it, b closes the menu.",
    "claim": "Who completed a 7x7 square? n switches, o chooses, b cancels.",
    "correct_who": "Whose buttons to correct? n switches, o chooses, b cancels.",
    "correct_amount": "n adds a button, b takes one away, o sets the count.",
    "end_confirm": "End the game now? n switches, o chooses.",
    "end": "Game over: o starts a new game, B (hold BACK) undoes the last turn.",
    "box_review": "The box's last turn again: any button goes back.",
    "hint": "What the box would play: any button goes back.",
}


def hint(mode: str, kind: str, active: str, hand: HandView, target: int | None = None) -> str:
    """One line telling a newcomer what to do now (``mode``: the UI mode,
    ``kind``: the screen kind, ``active``: the colour to move or "",
    ``target``: the space lit white for the chosen move, if any)."""
    if hand.held:
        return (f"{hand.held.capitalize()} token in the air over {hand.cursor}: "
                "arrows aim, d (or Space) sets it down.")
    if kind == "mismatch":
        return "The board disagrees: put the tokens on the blinking white spaces (r tidies up)."
    if mode.startswith("setup"):
        return _SETUP_HINT
    if mode in _MODE_HINTS:
        return _MODE_HINTS[mode]
    if mode == "turn" and active:
        return _turn_hint(active, hand, target)
    if mode == "box" and active:
        return _box_hint(active, hand, target)
    return "n NEXT, o OK, b BACK; hold with N, O (menu), B (undo).  ? = help"


def _box_hint(active: str, hand: HandView, target: int | None) -> str:
    """The box's turn: you carry it out with its token (``active``'s colour)."""
    if target is None:
        return "The box is thinking; its move will show on the OLED."
    if hand.hand != active:
        return (f"Box's turn: do what the OLED says, then move its {active} token to {target} "
                f"(press {active[0]} to take it).")
    return (f"Box's turn: its patch and buttons as the OLED says, then its {active} token "
            f"to {target} (lit white).")


def _turn_hint(active: str, hand: HandView, target: int | None) -> str:
    mover = active.capitalize()
    if hand.hand != active:
        return (f"{mover} to move, but your hand holds the {hand.hand} token "
                f"(press {active[0]} to take {active}'s).")
    if target is not None:
        return f"{mover}: slide the {active} token to {target} (lit white); n: another choice."
    return f"{mover}: move the {active} token (arrows slide, l lifts) or choose with n, o."


def status_line(link: str, warnings: tuple[str, ...], turns: int, folder: str, width: int) -> str:
    """The bottom line: the sensor link, warnings, the journal folder and turn count,
    cut to ``width`` (the folder loses its start first)."""
    head = f"sensor {link}" + (f" ! {' / '.join(warnings)}" if warnings else "")
    tail = f" | {turns} turns | journal "
    room = max(8, width - len(head) - len(tail))
    shown = folder if len(folder) <= room else "\u2026" + folder[-(room - 1):]
    return (head + tail + shown)[:width]


def link_text(stats) -> str:
    """Short text for the sensor link's :class:`~firmware_py.hw.sensor_link.LinkStats`."""
    if stats is None:
        return "none"
    bad = stats.crc_errors + stats.malformed + stats.garbage_lines + stats.overlong
    return f"{stats.state} {stats.frames_ok} frames {bad} bad {stats.gaps} gaps"
