"""A simulated table: the real companion on the "sim" backend, and the frames it shows.

Shared by the terminal simulator (:mod:`.tui`) and the browser simulator
(:mod:`.web`): :func:`open_table` starts the companion with the backend forced
to "sim" and keeps the latest OLED and LED frames in a :class:`FrameTap`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..view.leds import LedLayout, led_frame


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
               feed: str | Path | None = None, names: str | Path | None = None,
               planner=None) -> Table:
    """Start the companion on ``cfg`` (backend forced to "sim") with its journal in
    ``folder``; ``seed`` makes the dealt circle repeatable; ``feed``: publish the live
    feed there (for ``patchwork-companion web``), or None; ``names``: the file of player
    names offered at setup, or None; ``planner``: the box's search (None: the default)."""
    from ..service.assembly import start_companion
    cfg = {**cfg, "": {**cfg[""], "backend": "sim"}}
    tap = FrameTap()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    companion = start_companion(cfg, folder=folder, deal=_seeded_deal(seed),
                                on_oled_frame=tap.on_oled, on_led_frame=tap.on_leds, feed=feed,
                                names=names, planner=planner)
    return Table(companion, tap, folder)


def _seeded_deal(seed: int | None):
    if seed is None:
        return None
    from ..rules import deal, load_spec
    return lambda game: deal(load_spec(game), seed)
