"""``patchwork-companion demo``: play a whole game record through the running companion.

The companion runs on the "sim" backend exactly as on a Pi; simulated hands
press the mock buttons and move the tokens on the simulated sensor, as two
people at the table would. Afterwards the output folder holds every OLED frame
(PNG and an animated GIF), every LED frame (JSON lines), the journal and the
saved game record; the printed tally must equal the record's result.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from importlib import resources
from pathlib import Path

from ..service.assembly import start_companion
from ..companion.journal import Journal
from ..config import validate
from ..store.replay import tally_json
from ..rules import GameRecord, RecordError, parse_record, replay, tally
from ..service.capture import Capture
from .hands import DriveError, Hands
from .player import TablePlayer
from ..view.oled import PAGE_SECONDS, page_count, render

DEMO_RECORD = "demo-game.json"


class DemoError(RuntimeError):
    """The companion could not follow the record; the message names the move."""


def bundled_record() -> str:
    """The JSON text of the game bundled for the demo (a real self-play game)."""
    return resources.files("firmware_py").joinpath("data", DEMO_RECORD).read_text("utf-8")


def demo_config(fast: bool) -> dict:
    """The default (simulated) config, quicker in ``fast`` mode (used by tests)."""
    overrides = {"backend": "sim", "sim": {"speed": 3.0 if fast else 1.0}}
    if fast:
        overrides["buttons"] = {"hold_seconds": 0.4}
        overrides["sensor"] = {"stable_ms": 60, "guidance_seconds": 1.0}
    return validate(overrides, "demo")


def run_demo(record_path: str | None = None, out: str | Path = "demo-out", as_json: bool = False,
             fast: bool = False, stream=None) -> int:
    """Play the record; print the tally; return 0 (tally equals the result), 1, or 2 (error)."""
    stream = stream or sys.stdout
    try:
        text = Path(record_path).read_text("utf-8") if record_path else bundled_record()
        record = parse_record(text)
        _, expected = replay(record)
    except (OSError, RecordError) as exc:
        print(f"demo: {record_path or DEMO_RECORD}: {exc}", file=sys.stderr)
        return 2
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fresh_journal(out / "journal", record)
    capture = Capture(out)
    companion = start_companion(demo_config(fast), folder=out / "journal",
                                deal=lambda game: (record.circle, record.blue or ()),
                                on_oled_frame=capture.oled, on_led_frame=capture.leds)
    try:
        player = TablePlayer(Hands(companion), record)
        player.play()
        status = companion.service.status
        await_pages(capture, status.screen)
    except (DriveError, RecordError) as exc:
        print(f"demo: the companion could not follow the record: {exc}", file=sys.stderr)
        return 2
    finally:
        companion.close()
        capture.close()
    return _report(record, expected, status, out, as_json, stream)


def await_pages(capture: Capture, screen, slack: float = 2.0) -> bool:
    """Wait until ``capture`` holds every page of ``screen`` (the final tally can
    need two, shown in turn every ``PAGE_SECONDS``), so the frames end with all of
    it. Gives up after one round of pages plus ``slack`` seconds; True when all came."""
    pages = {render(screen, page).tobytes() for page in range(page_count(screen))}
    deadline = time.monotonic() + len(pages) * PAGE_SECONDS + slack
    while time.monotonic() < deadline:
        recent = capture.frames[-2 * len(pages):]
        if pages <= {frame.tobytes() for _, frame in recent}:
            return True
        time.sleep(0.05)
    return False


def fresh_journal(folder: Path, record: GameRecord) -> None:
    """Keep a journal only if it holds this record's unfinished game (to resume after a
    power cut); otherwise clear it so the demo plays the game from the start."""
    loaded = Journal(folder).load()
    entries = loaded.entries
    same = (entries and entries[0].get("kind") == "setup"
            and entries[0]["setup"].get("circle") == list(record.circle)
            and entries[-1].get("kind") != "end")
    if not same and folder.exists():
        shutil.rmtree(folder)


def tally_lines(screen) -> str:
    """The end screen as text: title, one row per player, then the outcome lines."""
    rows = [screen.title]
    for p in screen.players:
        special = p.score - p.buttons + 2 * p.empty
        rows.append(f"{p.name:7s} {p.buttons:3d} buttons + {special} special tile "
                    f"- 2 x {p.empty} empty = {p.score}")
    return "\n".join(rows + list(screen.lines))


def _report(record: GameRecord, expected, status, out: Path, as_json: bool, stream) -> int:
    saved = Path(status.saved_to) if status.saved_to else None
    if saved is not None:
        shutil.copy(saved, out / "game-record.json")
    state = status.state
    result = tally(state)
    if as_json:
        print(json.dumps(tally_json(record, state, result)), file=stream)
    else:
        print(tally_lines(status.screen), file=stream)
        print(f"frames: {out / 'oled'} ({out / 'oled.gif'}), LEDs: {out / 'leds.jsonl'}, "
              f"journal: {out / 'journal'}, record: {out / 'game-record.json'}", file=stream)
    if result.scores != expected.scores or result.winner != expected.winner:
        print(f"demo: tally {result.scores} (winner {result.winner}) differs from the record's "
              f"{expected.scores} (winner {expected.winner})", file=sys.stderr)
        return 1
    return 0
